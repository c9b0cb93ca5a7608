/*
 * Where a profile goes (`-o FILE` of `run` and `record`): the name is resolved once before
 * the program starts (or the process is attached) and again when the profile is written,
 * with the same rules. A regular file or a new name is written atomically in its directory
 * (a temporary file there, renamed over the name); a symbolic link resolves to its target,
 * except one in a sticky world-writable directory that neither the caller nor the
 * directory's owner owns (the kernel's fs.protected_symlinks rule); a character device or a
 * FIFO is written in place, and so are "-" (standard output) and the names of open
 * descriptors (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N), through that
 * descriptor as a shell redirection would. A directory, a socket, a block device, a missing
 * or unwritable directory are refused.
 */
#ifndef EDGEPROF_USER_PROFILE_DEST_H
#define EDGEPROF_USER_PROFILE_DEST_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum profile_dest_kind {
	PROFILE_DEST_FILE = 0, /* atomic: a temporary file in DIR renamed to DIR/NAME */
	PROFILE_DEST_STREAM,   /* in place: PATH opened for writing (a character device, a FIFO) */
	PROFILE_DEST_FD,       /* in place: a copy of descriptor FD */
};

struct profile_dest {
	enum profile_dest_kind kind;
	char dir[PATH_MAX];  /* FILE: the real path of the directory */
	char name[NAME_MAX + 1]; /* FILE: the entry in it (new or a regular file) */
	bool exists;         /* FILE: NAME is there already */
	char path[PATH_MAX]; /* STREAM: the real path of the device or FIFO */
	int fd;              /* FD: the descriptor */
};

/* Resolves PATH (as given to -o) into *D by the rules above. Returns 0, or a negative errno
 * after one pr_err line naming PATH and why it is refused. Touches nothing. */
int profile_dest__resolve(const char *path, struct profile_dest *d);

/* profile_dest__resolve, then checks that the profile could be written there now: for a
 * file, by creating (and removing) a temporary file in its directory; for a device or FIFO,
 * by its write permission; for a descriptor, that it is open for writing. Called before the
 * program starts. Returns 0, or a negative errno after one pr_err line naming PATH. */
int profile_dest__check(const char *path);

/* Under sudo (running as root with SUDO_UID set): the invoking user's uid and gid (-1 when
 * SUDO_GID is unset) into *UID and *GID, true; false otherwise. A file edgeprof creates for
 * the user is given to them. */
bool profile_dest__sudo_owner(unsigned *uid, long *gid);

/* Fills OUT (open for writing) with the document; returns 0, or a negative errno with a
 * message (no newline) in MSG of SIZE bytes. Write errors of OUT itself are found later. */
typedef int (*profile_dest_fill_fn)(FILE *out, void *ctx, char *msg, size_t size);

/* Writes a document to PATH, resolved as it is at this moment by profile_dest__resolve:
 * a file atomically (a temporary file in its directory, filled by FILL, flushed and
 * fsync'ed, given to the invoking user under sudo, renamed over the name, the directory
 * fsync'ed), a device, FIFO or descriptor in place. On failure a temporary file is removed,
 * the file is left as it was, one line "'PATH': cannot write WHAT: why" is reported with
 * pr_err (WHAT names the document: "the profile") and a negative errno is returned; 0 on
 * success. */
int profile_dest__write(const char *path, const char *what, profile_dest_fill_fn fill,
			void *ctx);

#endif
