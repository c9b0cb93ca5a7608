/*
 * The one place edgeprof writes diagnostics: formats "edgeprof: ..." lines on stderr, filtered
 * by the verbosity level, and turns library errors (cfg_strerror) into such lines.
 */
#include "user/util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cfg/error.h"
#include "user/util/clock.h"
#include "user/util/progress.h"

static int verbosity;
static double started; /* now_seconds() of the first log__set_verbosity() */

void log__set_verbosity(int level)
{
	if (!started)
		started = now_seconds();
	verbosity = level;
}

int log__verbosity(void)
{
	return verbosity;
}

void log__apply_option(int opt)
{
	if (opt == 'q')
		verbosity = -1;
	else if (opt == 'v')
		verbosity = verbosity < 0 ? 1 : verbosity + 1;
}

static void vlog(enum log_level level, const char *tag, const char *fmt, va_list ap)
{
	char buf[1024];
	size_t len;

	if ((int)level > verbosity)
		return;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	len = strlen(buf);
	while (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	/* One diagnostic is one line: fold embedded newlines from library messages. */
	for (char *p = buf; *p; p++)
		if (*p == '\n')
			*p = ' ';
	/* A progress line on the terminal goes first (it comes back at its next update). */
	progress__hide();
	/* Debugging output says when: phases can be timed with -vv. */
	if (verbosity >= LOG_DEBUG)
		fprintf(stderr, "edgeprof: [%7.3f] %s%s\n", now_seconds() - started, tag, buf);
	else
		fprintf(stderr, "edgeprof: %s%s\n", tag, buf);
	fflush(stderr);
	progress__unhide();
}

void log__printf(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, "", fmt, ap);
	va_end(ap);
}

int pr_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_ERR, "", fmt, ap);
	va_end(ap);
	return -1;
}

void pr_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_WARN, "warning: ", fmt, ap);
	va_end(ap);
}

void pr_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_INFO, "", fmt, ap);
	va_end(ap);
}

void pr_debug(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_DEBUG, "debug: ", fmt, ap);
	va_end(ap);
}

int pr_lib_err(const char *subject, const char *what)
{
	const char *msg = cfg_strerror();

	if (!msg || !*msg)
		return pr_err("'%s': %s", subject, what);
	if (subject && !strstr(msg, subject))
		return pr_err("'%s': %s", subject, msg);
	return pr_err("%s", msg);
}
