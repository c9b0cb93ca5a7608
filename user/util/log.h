/*
 * Diagnostics for the edgeprof command: the only code that writes to stderr. Every line is
 * prefixed "edgeprof: " so it can be told apart from the target's output; reports go to stdout
 * through the commands themselves. A verbosity level decides which messages are shown:
 * errors and warnings always (unless quiet), information with -v, debug with -vv (each line
 * then with the seconds since edgeprof started, to time its phases).
 */
#ifndef EDGEPROF_USER_LOG_H
#define EDGEPROF_USER_LOG_H

enum log_level {
	LOG_ERR = -1,   /* always shown */
	LOG_WARN = 0,   /* shown unless quiet */
	LOG_INFO = 1,   /* -v */
	LOG_DEBUG = 2,  /* -vv */
};

/* Sets the verbosity: -1 quiet (errors only), 0 default, 1 info, 2 debug. The first call
 * starts the clock of the debug lines. */
void log__set_verbosity(int level);

/* The current verbosity (see log__set_verbosity). */
int log__verbosity(void);

/* Applies a command's -v (OPT 'v': one level more, from quiet to info) or -q ('q': quiet). */
void log__apply_option(int opt);

/* Writes one diagnostic line "edgeprof: FMT\n" to stderr when LEVEL is enabled. A trailing
 * newline in FMT is not doubled. */
void log__printf(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reports an error; always returns -1 so `return pr_err(...)` both reports and fails. */
int pr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Reports a warning ("edgeprof: warning: ..."), shown unless quiet. */
void pr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Progress and details, shown with -v. */
void pr_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Debugging details, shown with -vv. */
void pr_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Reports a failed library call: the last cfg_strerror() message, prefixed with 'SUBJECT':
 * unless the message already names SUBJECT, or WHAT when the library left no message.
 * Returns -1. */
int pr_lib_err(const char *subject, const char *what);

#endif
