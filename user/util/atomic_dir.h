/*
 * A directory of files written all at once: the files go into a temporary directory next to
 * the destination, which is then renamed onto it (swapped with a previous one, which is then
 * removed), so a reader sees the old set or the new one, never half of one. A directory that
 * exists is replaced only when it is empty or holds the marker file a previous set left
 * (ATOMIC_DIR_MARKER): never a directory of someone else's files.
 */
#ifndef EDGEPROF_USER_UTIL_ATOMIC_DIR_H
#define EDGEPROF_USER_UTIL_ATOMIC_DIR_H

#include <limits.h>
#include <stddef.h>

#define ATOMIC_DIR_MARKER ".edgeprof-html"

struct atomic_dir {
	char dest[PATH_MAX]; /* the destination (a symbolic link to a directory: its target) */
	char tmp[PATH_MAX];  /* the temporary directory being filled */
};

/* Checks that DEST can be written (a new name in an existing directory, or an existing
 * directory that is empty or holds ATOMIC_DIR_MARKER) and makes the temporary directory next
 * to it, with the mode a new directory gets (0777 & ~umask) and the marker file in it.
 * Returns 0, or a negative errno after one pr_err line naming DEST. */
int atomic_dir__begin(struct atomic_dir *d, const char *dest);

/* The path of file NAME in the temporary directory, into BUF of SIZE bytes; NULL when it does
 * not fit. */
const char *atomic_dir__path(const struct atomic_dir *d, const char *name, char *buf,
			     size_t size);

/* Gives the files to the invoking user under sudo, syncs them and puts the temporary
 * directory in DEST's place (a previous set there is removed). Returns 0, or a negative errno
 * after one pr_err line (the temporary directory is then removed, DEST left as it was). */
int atomic_dir__commit(struct atomic_dir *d);

/* Removes the temporary directory and everything in it (after a failure). */
void atomic_dir__abort(struct atomic_dir *d);

#endif
