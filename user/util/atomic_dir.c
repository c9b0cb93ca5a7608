/*
 * A directory of files put in place at once (see atomic_dir.h).
 */
#include "user/util/atomic_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user/profile/profile_dest.h"
#include "user/util/log.h"

/* Whether directory PATH is empty or holds ATOMIC_DIR_MARKER; -errno when it cannot be read. */
static int replaceable(const char *path)
{
	DIR *dir = opendir(path);
	struct dirent *de;
	bool empty = true, marker = false;

	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		empty = false;
		marker |= !strcmp(de->d_name, ATOMIC_DIR_MARKER);
	}
	closedir(dir);
	return empty || marker;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path) ? -1 : 0;
}

static void remove_tree(const char *path)
{
	if (nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS))
		pr_warn("'%s': cannot remove it all: %s", path, strerror(errno));
}

static void sync_path(const char *path, int flags)
{
	int fd = open(path, flags | O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int atomic_dir__begin(struct atomic_dir *d, const char *dest)
{
	char parent[PATH_MAX], *slash;
	struct stat st;
	size_t len = strlen(dest);
	mode_t mask;
	FILE *f;
	int r;

	memset(d, 0, sizeof(*d));
	if (!len || len >= sizeof(d->dest))
		return pr_err("'%s': not a usable directory name", dest), -EINVAL;
	memcpy(d->dest, dest, len + 1);
	while (len > 1 && d->dest[len - 1] == '/')
		d->dest[--len] = '\0';
	if (!lstat(d->dest, &st) && S_ISLNK(st.st_mode) && !realpath(dest, d->dest))
		return pr_err("'%s': %s", dest, strerror(errno)), -errno;
	if (!stat(d->dest, &st)) {
		if (!S_ISDIR(st.st_mode))
			return pr_err("'%s': exists and is not a directory", dest), -ENOTDIR;
		r = replaceable(d->dest);
		if (r < 0)
			return pr_err("'%s': cannot read it: %s", dest, strerror(-r)), r;
		if (!r)
			return pr_err("'%s': holds files that are not an edgeprof HTML report; give a "
				      "new or empty directory", dest), -EEXIST;
	} else if (errno != ENOENT) {
		return pr_err("'%s': %s", dest, strerror(errno)), -errno;
	}
	memcpy(parent, d->dest, sizeof(parent));
	slash = strrchr(parent, '/');
	if (slash == parent)
		parent[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		strcpy(parent, ".");
	if (snprintf(d->tmp, sizeof(d->tmp), "%s/.%s.tmp-XXXXXX", parent,
		     slash ? slash + 1 : d->dest) >= (int)sizeof(d->tmp))
		return pr_err("'%s': name too long", dest), -ENAMETOOLONG;
	if (!mkdtemp(d->tmp)) {
		r = -errno;
		d->tmp[0] = '\0';
		return pr_err("'%s': cannot make a directory in '%s': %s", dest, parent,
			      strerror(-r)), r;
	}
	mask = umask(0);
	umask(mask);
	chmod(d->tmp, 0777 & ~mask);
	f = fopen(atomic_dir__path(d, ATOMIC_DIR_MARKER, parent, sizeof(parent)), "w");
	if (!f || fputs("an HTML report of edgeprof: `edgeprof report --html` replaces this "
			"directory\n", f) < 0 || fclose(f)) {
		r = -errno;
		atomic_dir__abort(d);
		return pr_err("'%s': cannot write in its temporary directory: %s", dest,
			      strerror(-r)), r;
	}
	return 0;
}

const char *atomic_dir__path(const struct atomic_dir *d, const char *name, char *buf,
			     size_t size)
{
	return snprintf(buf, size, "%s/%s", d->tmp, name) < (int)size ? buf : NULL;
}

/* Gives every file of the temporary directory to the user under sudo and syncs it. */
static int settle_files(struct atomic_dir *d)
{
	DIR *dir = opendir(d->tmp);
	struct dirent *de;
	char path[PATH_MAX];
	unsigned uid;
	long gid;
	bool sudo = profile_dest__sudo_owner(&uid, &gid);

	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.' && strcmp(de->d_name, ATOMIC_DIR_MARKER))
			continue;
		if (!atomic_dir__path(d, de->d_name, path, sizeof(path)))
			continue;
		if (sudo)
			lchown(path, (uid_t)uid, gid < 0 ? (gid_t)-1 : (gid_t)gid);
		sync_path(path, 0);
	}
	closedir(dir);
	if (sudo)
		lchown(d->tmp, (uid_t)uid, gid < 0 ? (gid_t)-1 : (gid_t)gid);
	sync_path(d->tmp, O_DIRECTORY);
	return 0;
}

int atomic_dir__commit(struct atomic_dir *d)
{
	char old[PATH_MAX + 8], parent[PATH_MAX], *slash;
	struct stat st;
	int err = settle_files(d);

	if (err) {
		atomic_dir__abort(d);
		return pr_err("'%s': %s", d->dest, strerror(-err)), err;
	}
	if (lstat(d->dest, &st)) {
		if (rename(d->tmp, d->dest))
			goto fail;
	} else if (!renameat2(AT_FDCWD, d->tmp, AT_FDCWD, d->dest, RENAME_EXCHANGE)) {
		remove_tree(d->tmp); /* now the previous set */
	} else {
		/* No exchange on this file system: the previous set out of the way first. */
		if (errno != EINVAL && errno != ENOSYS)
			goto fail;
		snprintf(old, sizeof(old), "%s.old", d->tmp);
		if (rename(d->dest, old))
			goto fail;
		if (rename(d->tmp, d->dest)) {
			err = -errno;
			rename(old, d->dest);
			errno = -err;
			goto fail;
		}
		remove_tree(old);
	}
	d->tmp[0] = '\0';
	memcpy(parent, d->dest, sizeof(parent));
	slash = strrchr(parent, '/');
	if (slash)
		slash[slash == parent] = '\0';
	sync_path(slash ? parent : ".", O_DIRECTORY);
	return 0;
fail:
	err = -errno;
	atomic_dir__abort(d);
	return pr_err("'%s': cannot put the report in place: %s", d->dest, strerror(-err)), err;
}

void atomic_dir__abort(struct atomic_dir *d)
{
	if (d->tmp[0])
		remove_tree(d->tmp);
	d->tmp[0] = '\0';
}
