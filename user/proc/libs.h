/*
 * `--lib NAME|PATH`: which shared objects to profile besides the main binary. A PATH (it has
 * a '/') names the file itself; a NAME matches a library by the start of its file name
 * ("libc" matches libc.so.6, "libz.so.1" itself). For a running process the candidates are
 * the files it maps (/proc/PID/maps); for a program about to run, the libraries its dynamic
 * loader would load (the loader's --list, like ldd, without running the program).
 */
#ifndef EDGEPROF_USER_LIBS_H
#define EDGEPROF_USER_LIBS_H

#include <stdbool.h>
#include <stddef.h>

/* Whether the file name of PATH starts with NAME (which has no '/') followed by its end, '.'
 * or '-': "libc" matches libc.so.6 and libc-2.36.so, not libcrypt.so.1. */
bool libs__name_matches(const char *name, const char *path);

/* Resolves the N names NAMES against the objects process PID maps: fills PATHS[0 .. N) with
 * malloc'd real paths. Returns 0, or -1 with one line reported (a name that matches nothing,
 * or the main executable). */
int libs__resolve_mapped(int pid, char *const *names, size_t n, char **paths);

/* The same for the program at PROG (a real path) before it runs: against the libraries its
 * dynamic loader (PT_INTERP) lists for it. */
int libs__resolve_needed(const char *prog, char *const *names, size_t n, char **paths);

/* Every shared object process PID maps (PID > 0; files only, the executable left out), or
 * for PID 0 the libraries the dynamic loader lists for PROG: *PATHS (malloc'd array of
 * malloc'd real paths, the caller frees both) and *N. Returns 0 or -1 (reported). */
int libs__list(int pid, const char *prog, char ***paths, size_t *n);

#endif
