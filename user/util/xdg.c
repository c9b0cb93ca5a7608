/*
 * Per-user file locations (see xdg.h).
 */
#include "user/util/xdg.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int xdg__path(char *buf, size_t len, const char *env, const char *dotdir, const char *file)
{
	const char *xdg = getenv(env), *home = getenv("HOME");
	int n;

	/* XDG: a relative directory is invalid and ignored. */
	if (xdg && xdg[0] == '/') {
		n = snprintf(buf, len, "%s/edgeprof/%s", xdg, file);
	} else {
		if (!home || home[0] != '/') {
			struct passwd *pw = getpwuid(getuid());

			home = pw ? pw->pw_dir : NULL;
		}
		if (!home || home[0] != '/')
			return -ENOENT;
		n = snprintf(buf, len, "%s/%s/edgeprof/%s", home, dotdir, file);
	}
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
