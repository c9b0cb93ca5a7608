/*
 * The one place where library errors become text: see error.h.
 */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[512];

int cfg_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return err > 0 ? -err : err;
}

const char *cfg_strerror(void)
{
	return last_error;
}
