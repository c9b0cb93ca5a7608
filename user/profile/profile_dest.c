/*
 * Resolution of a profile's destination (see profile_dest.h): a walk over the name's
 * components, as the kernel's path lookup does, following symbolic links (at most 40, with
 * the protected_symlinks rule for each), so that the directory and the entry the atomic
 * rename acts on are known, and so that a descriptor's name (/dev/stdout ends in
 * /proc/self/fd/1, whose link text is no path) is recognised as the descriptor.
 */
#include "user/profile/profile_dest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user/util/log.h"

#define MAX_LINKS 40

/* Whether RESOLVED (a path without links) names a descriptor of this process:
 * /proc/self/fd/N, /proc/thread-self/fd/N, /proc/PID/fd/N or /proc/PID/task/TID/fd/N with
 * PID ours. Sets *FD. */
static bool fd_name(const char *resolved, int *fd)
{
	char self[64];
	const char *rest = NULL, *prefixes[3];
	long n;
	char *end;

	snprintf(self, sizeof(self), "/proc/%d/fd/", (int)getpid());
	prefixes[0] = "/proc/self/fd/";
	prefixes[1] = "/proc/thread-self/fd/";
	prefixes[2] = self;
	for (int i = 0; i < 3 && !rest; i++)
		if (!strncmp(resolved, prefixes[i], strlen(prefixes[i])))
			rest = resolved + strlen(prefixes[i]);
	/* /proc/thread-self resolves to /proc/PID/task/TID */
	if (!rest) {
		char task[64];
		int len;

		len = snprintf(task, sizeof(task), "/proc/%d/task/", (int)getpid());
		if (!strncmp(resolved, task, (size_t)len)) {
			const char *p = resolved + len;

			p += strspn(p, "0123456789");
			if (!strncmp(p, "/fd/", 4))
				rest = p + 4;
		}
	}
	if (!rest || !*rest || strspn(rest, "0123456789") != strlen(rest))
		return false;
	errno = 0;
	n = strtol(rest, &end, 10);
	if (errno || n < 0 || n > INT_MAX)
		return false;
	*fd = (int)n;
	return true;
}

/* Appends component C (length N) to the link-free path R. Returns false when too long. */
static bool push_comp(char *r, const char *c, size_t n)
{
	size_t len = strlen(r);

	if (len + 1 + n + 1 > PATH_MAX)
		return false;
	if (len > 1 || r[0] != '/')
		r[len++] = '/';
	memcpy(r + len, c, n);
	r[len + n] = '\0';
	return true;
}

/* Drops the last component of R ("/" stays "/"). */
static void pop_comp(char *r)
{
	char *s = strrchr(r, '/');

	if (s == r)
		r[1] = '\0';
	else if (s)
		*s = '\0';
}

/* The fs.protected_symlinks rule for link ST (lstat) in the directory DIR: refused when DIR is
 * sticky and world-writable and the link's owner is neither the caller (euid) nor DIR's
 * owner. Returns 0 or -EACCES. */
static int protected_link(const char *dir, const struct stat *st)
{
	struct stat ds;

	if (stat(dir, &ds))
		return 0; /* lstat just found the link in it */
	if ((ds.st_mode & (S_ISVTX | S_IWOTH)) != (S_ISVTX | S_IWOTH))
		return 0;
	if (st->st_uid == geteuid() || st->st_uid == ds.st_uid)
		return 0;
	return -EACCES;
}

static const char *kind_name(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISBLK(m))
		return "a block device";
	return "not a regular file, character device or FIFO";
}

/* Reports "'PATH': cannot write the profile there: WHY" (FMT with WHAT) and returns ERR. */
static int refuse(const char *path, int err, const char *fmt, const char *what)
{
	char why[2 * PATH_MAX + 512];

	snprintf(why, sizeof(why), fmt, what);
	pr_err("'%s': cannot write the profile there: %s", path, why);
	return err;
}

int profile_dest__resolve(const char *path, struct profile_dest *d)
{
	char *todo = NULL, *next = NULL, *r = NULL;
	const char *p;
	struct stat st;
	size_t plen;
	int links = 0, err = 0;
	bool last;

	memset(d, 0, sizeof(*d));
	d->fd = -1;
	if (!path || !*path)
		return refuse("", -EINVAL, "%s", "an empty name");
	if (!strcmp(path, "-")) {
		d->kind = PROFILE_DEST_FD;
		d->fd = STDOUT_FILENO;
		return 0;
	}
	plen = strlen(path);
	/* A name ending in "/", "/." or "/.." names a directory. */
	if (path[plen - 1] == '/' || !strcmp(path, ".") || !strcmp(path, "..") ||
	    (plen >= 2 && !strcmp(path + plen - 2, "/.")) ||
	    (plen >= 3 && !strcmp(path + plen - 3, "/..")))
		return refuse(path, -EISDIR, "%s", "it names a directory");
	todo = strdup(path);
	r = malloc(PATH_MAX);
	if (!todo || !r) {
		err = -ENOMEM;
		pr_err("out of memory");
		goto out;
	}
	if (path[0] == '/') {
		strcpy(r, "/");
	} else if (!getcwd(r, PATH_MAX)) {
		err = -errno;
		refuse(path, err, "the working directory: %s", strerror(errno));
		goto out;
	}
	p = todo;
	for (;;) {
		const char *c;
		size_t n;
		char cand[PATH_MAX];

		while (*p == '/')
			p++;
		if (!*p)
			break;
		c = p;
		n = strcspn(c, "/");
		p = c + n;
		last = !p[strspn(p, "/")];
		if (n == 1 && c[0] == '.')
			continue;
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			pop_comp(r);
			continue;
		}
		strcpy(cand, r);
		if (!push_comp(cand, c, n)) {
			err = refuse(path, -ENAMETOOLONG, "%s", strerror(ENAMETOOLONG));
			goto out;
		}
		if (lstat(cand, &st)) {
			int e = errno, fd;

			if (e == ENOENT && last && fd_name(cand, &fd)) {
				d->kind = PROFILE_DEST_FD; /* not open: profile_dest__check says so */
				d->fd = fd;
				goto out;
			}
			if (e == ENOENT && last) {
				if (n > NAME_MAX) {
					err = refuse(path, -ENAMETOOLONG, "%s",
						     strerror(ENAMETOOLONG));
					goto out;
				}
				d->kind = PROFILE_DEST_FILE;
				strcpy(d->dir, r);
				memcpy(d->name, c, n);
				d->name[n] = '\0';
				d->exists = false;
				goto out;
			}
			if (e == ENOENT)
				err = refuse(path, -ENOENT, "directory '%s' does not exist", cand);
			else
				err = refuse(path, -e, "%s", strerror(e));
			goto out;
		}
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t tl;
			int fd;

			if (last && fd_name(cand, &fd)) {
				d->kind = PROFILE_DEST_FD;
				d->fd = fd;
				goto out;
			}
			if (++links > MAX_LINKS) {
				err = refuse(path, -ELOOP, "%s", strerror(ELOOP));
				goto out;
			}
			if (protected_link(r, &st)) {
				char why[PATH_MAX + 32];

				snprintf(why, sizeof(why), "'%s' is", cand);
				err = refuse(path, -EACCES,
					     "%s a symbolic link in a sticky world-writable directory, owned by neither you nor the directory's owner: not followed (as fs.protected_symlinks)",
					     why);
				goto out;
			}
			tl = readlink(cand, target, sizeof(target) - 1);
			if (tl < 0) {
				err = refuse(path, -errno, "%s", strerror(errno));
				goto out;
			}
			target[tl] = '\0';
			/* The rest of the name follows the link's text. */
			if (asprintf(&next, "%s/%s", target, p) < 0) {
				next = NULL;
				err = -ENOMEM;
				pr_err("out of memory");
				goto out;
			}
			if (strlen(next) >= PATH_MAX) {
				err = refuse(path, -ENAMETOOLONG, "%s", strerror(ENAMETOOLONG));
				goto out;
			}
			free(todo);
			todo = next;
			next = NULL;
			p = todo;
			if (target[0] == '/')
				strcpy(r, "/");
			continue;
		}
		if (!last && !S_ISDIR(st.st_mode)) {
			err = refuse(path, -ENOTDIR, "'%s' is not a directory", cand);
			goto out;
		}
		strcpy(r, cand);
		if (!last)
			continue;
		if (S_ISREG(st.st_mode)) {
			char *slash = strrchr(r, '/');

			d->kind = PROFILE_DEST_FILE;
			d->exists = true;
			snprintf(d->name, sizeof(d->name), "%s", slash + 1);
			*slash = '\0';
			if (!*r)
				strcpy(r, "/");
			strcpy(d->dir, r);
		} else if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
			d->kind = PROFILE_DEST_STREAM;
			strcpy(d->path, r);
		} else {
			err = refuse(path, S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL, "it is %s",
				     kind_name(st.st_mode));
		}
		goto out;
	}
	/* Only "/" and "." components (e.g. "/"): a directory. */
	err = refuse(path, -EISDIR, "%s", "it names a directory");
out:
	free(todo);
	free(next);
	free(r);
	return err;
}

int profile_dest__check(const char *path)
{
	struct profile_dest d;
	char *tmp = NULL;
	struct stat st;
	int err = profile_dest__resolve(path, &d), fd, fl;

	if (err)
		return err;
	switch (d.kind) {
	case PROFILE_DEST_FD:
		fl = fcntl(d.fd, F_GETFL);
		if (fl < 0 || fstat(d.fd, &st)) {
			char why[64];

			snprintf(why, sizeof(why), "descriptor %d is not open", d.fd);
			return refuse(path, -EBADF, "%s", why);
		}
		if (S_ISDIR(st.st_mode))
			return refuse(path, -EISDIR, "its descriptor is %s", "a directory");
		if ((fl & O_ACCMODE) == O_RDONLY)
			return refuse(path, -EBADF, "its descriptor is %s", "open for reading only");
		return 0;
	case PROFILE_DEST_STREAM:
		if (faccessat(AT_FDCWD, d.path, W_OK, AT_EACCESS))
			return refuse(path, -errno, "%s", strerror(errno));
		return 0;
	case PROFILE_DEST_FILE:
		break;
	}
	if (asprintf(&tmp, "%s%s%s.tmp.XXXXXX", d.dir, strcmp(d.dir, "/") ? "/" : "", d.name) < 0) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		char why[PATH_MAX + 64];

		err = -errno;
		snprintf(why, sizeof(why), "cannot create a file in '%s': %s", d.dir,
			 strerror(errno));
		free(tmp);
		return refuse(path, err, "%s", why);
	}
	close(fd);
	unlink(tmp);
	free(tmp);
	return 0;
}

bool profile_dest__sudo_owner(unsigned *uid, long *gid)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	unsigned long u, g;
	char *end;

	if (geteuid() != 0 || !su || !*su)
		return false;
	errno = 0;
	u = strtoul(su, &end, 10);
	if (errno || *end || u > 0xfffffffeUL || su[0] == '-')
		return false;
	*uid = (unsigned)u;
	*gid = -1;
	if (sg && *sg && sg[0] != '-') {
		errno = 0;
		g = strtoul(sg, &end, 10);
		if (!errno && !*end && g <= 0xfffffffeUL)
			*gid = (long)g;
	}
	return true;
}

static void sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* The first failure of a write: its negative errno and message. */
struct dest_err {
	int err;
	char msg[256];
};

static void dfail(struct dest_err *e, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void dfail(struct dest_err *e, int err, const char *fmt, ...)
{
	va_list ap;

	if (e->err)
		return;
	e->err = err;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
}

/* Fills OUT through FILL and flushes it; records the first failure in E. */
static void fill_out(FILE *out, profile_dest_fill_fn fill, void *ctx, struct dest_err *e)
{
	char msg[256] = "";
	int err;

	errno = 0;
	err = fill(out, ctx, msg, sizeof(msg));
	if (err)
		dfail(e, err, "%s", msg[0] ? msg : strerror(-err));
	else if (fflush(out) || ferror(out))
		dfail(e, errno ? -errno : -EIO, "write error: %s", strerror(errno ? errno : EIO));
}

/* In place, through descriptor FD (owned): a device, a FIFO, or a descriptor of ours. */
static void write_in_place(int fd, profile_dest_fill_fn fill, void *ctx, struct dest_err *e)
{
	FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!out) {
		dfail(e, -errno, "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	fill_out(out, fill, ctx, e);
	/* A regular file behind a descriptor is synced; a device or pipe cannot be. */
	if (!e->err && fsync(fileno(out)) && errno != EINVAL && errno != EROFS &&
	    errno != ENOTSUP)
		dfail(e, -errno, "fsync: %s", strerror(errno));
	if (fclose(out) && !e->err)
		dfail(e, errno ? -errno : -EIO, "write error: %s", strerror(errno ? errno : EIO));
}

int profile_dest__write(const char *path, const char *what, profile_dest_fill_fn fill,
			void *ctx)
{
	struct dest_err e = { 0 };
	struct profile_dest d;
	char *tmp = NULL, *final = NULL;
	FILE *out = NULL;
	unsigned uid;
	long gid;
	mode_t mask;
	int fd;

	/* Resolved now, as it is at this moment (reported in one line). */
	if ((fd = profile_dest__resolve(path, &d)) != 0)
		return fd;
	if (d.kind == PROFILE_DEST_FD || d.kind == PROFILE_DEST_STREAM) {
		/* A FIFO blocks until it has a reader, as a shell redirection does. */
		fd = d.kind == PROFILE_DEST_FD ? fcntl(d.fd, F_DUPFD_CLOEXEC, 3)
					       : open(d.path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
		if (fd < 0 && d.kind == PROFILE_DEST_FD)
			dfail(&e, -errno, "descriptor %d: %s", d.fd, strerror(errno));
		else if (fd < 0)
			dfail(&e, -errno, "%s", strerror(errno));
		else
			write_in_place(fd, fill, ctx, &e);
		goto done;
	}
	if (asprintf(&final, "%s%s%s", d.dir, strcmp(d.dir, "/") ? "/" : "", d.name) < 0 ||
	    asprintf(&tmp, "%s.tmp.XXXXXX", final) < 0) {
		tmp = NULL;
		dfail(&e, -ENOMEM, "out of memory");
		goto done;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		dfail(&e, -errno, "cannot create a temporary file: %s", strerror(errno));
		free(tmp);
		tmp = NULL;
		goto done;
	}
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask)) {
		dfail(&e, -errno, "%s", strerror(errno));
		close(fd);
		goto done;
	}
	/* Under sudo the file is the invoking user's, as if they had written it. */
	if (profile_dest__sudo_owner(&uid, &gid) &&
	    fchown(fd, (uid_t)uid, gid < 0 ? (gid_t)-1 : (gid_t)gid))
		pr_warn("'%s': cannot give %s to user %u (SUDO_UID): %s", path, what, uid,
			strerror(errno));
	out = fdopen(fd, "w");
	if (!out) {
		dfail(&e, -errno, "%s", strerror(errno));
		close(fd);
		goto done;
	}
	fill_out(out, fill, ctx, &e);
	if (!e.err && fsync(fileno(out)))
		dfail(&e, -errno, "fsync: %s", strerror(errno));
	if (fclose(out) && !e.err)
		dfail(&e, errno ? -errno : -EIO, "write error: %s", strerror(errno ? errno : EIO));
	if (!e.err && rename(tmp, final))
		dfail(&e, -errno, "cannot replace the file: %s", strerror(errno));
	if (!e.err)
		sync_dir(d.dir);
done:
	if (e.err && tmp)
		unlink(tmp);
	free(tmp);
	free(final);
	if (e.err)
		pr_err("'%s': cannot write %s: %s", path, what, e.msg);
	return e.err;
}
