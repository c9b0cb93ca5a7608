/*
 * Where edgeprof keeps per-user files, after the XDG base directory specification.
 */
#ifndef EDGEPROF_USER_XDG_H
#define EDGEPROF_USER_XDG_H

#include <stdbool.h>
#include <stddef.h>

/* Writes "$ENV/edgeprof/FILE" into BUF, or "$HOME/DOTDIR/edgeprof/FILE" when ENV (e.g.
 * "XDG_CACHE_HOME") is unset or not absolute (DOTDIR e.g. ".cache"; HOME from the password
 * database when unset). Returns 0, -ENOENT without a home directory (or one that does not
 * exist: it is never created), or -ENAMETOOLONG. */
int xdg__path(char *buf, size_t len, const char *env, const char *dotdir, const char *file);

/* Creates the missing directories leading to the file PATH (mode 0755). Returns 0, or a
 * negative errno, said in one line on stderr naming the directory when SAY (at -vv else). */
int xdg__make_parents(const char *path, bool say);

#endif
