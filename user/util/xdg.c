/*
 * Per-user file locations (see xdg.h).
 */
#include "user/util/xdg.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int xdg__path(char *buf, size_t len, const char *env, const char *dotdir, const char *file)
{
	const char *xdg = getenv(env), *home = getenv("HOME");
	struct stat st;
	int n;

	/* XDG: a relative directory is invalid and ignored. */
	if (xdg && xdg[0] == '/') {
		n = snprintf(buf, len, "%s/edgeprof/%s", xdg, file);
	} else {
		if (!home || home[0] != '/') {
			struct passwd *pw = getpwuid(getuid());

			home = pw ? pw->pw_dir : NULL;
		}
		/* A home that does not exist (HOME=/nonexistent, the home of system users) is
		 * no place to keep files: edgeprof never creates it. */
		if (!home || home[0] != '/' || stat(home, &st) || !S_ISDIR(st.st_mode))
			return -ENOENT;
		n = snprintf(buf, len, "%s/%s/edgeprof/%s", home, dotdir, file);
	}
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
