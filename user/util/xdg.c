/*
 * Per-user file locations (see xdg.h).
 */
#include "user/util/xdg.h"

#include "user/util/log.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int xdg__make_parents(const char *path, bool say)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", path);
	for (char *s = strchr(dir + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(dir, 0755) && errno != EEXIST) {
			int err = -errno;

			if (say)
				pr_err("cannot create directory '%s': %s", dir, strerror(-err));
			else
				pr_debug("cannot create directory '%s': %s", dir, strerror(-err));
			return err;
		}
		*s = '/';
	}
	return 0;
}
