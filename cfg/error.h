/*
 * Error reporting for the cfg and estimators libraries. The libraries never print: a failing
 * call records one human-readable line (lowercase, what failed, the quoted subject) in a
 * thread-local buffer and returns a negative errno; the caller decides how to show it.
 */
#ifndef EDGEPROF_CFG_ERROR_H
#define EDGEPROF_CFG_ERROR_H

/* Records a formatted message as the last error of this thread; returns -err (err > 0),
 * so `return cfg_error(EINVAL, "bad thing '%s'", x);` both records and fails. */
int cfg_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The last error message recorded on this thread ("" when none). Valid until the next
 * cfg_error call on the same thread. */
const char *cfg_strerror(void);

#endif
