/*
 * Growable arrays: the one helper every builder of a malloc'd array of records uses to make
 * room (doubling, so that appending N records costs O(N) copies in all).
 */
#ifndef EDGEPROF_CFG_ARRAY_H
#define EDGEPROF_CFG_ARRAY_H

#include <stddef.h>

/* Makes room for NEED elements of SIZE bytes in *V, which has room for *CAP: when NEED is
 * more, *V is reallocated to a capacity doubled from *CAP (from FIRST when *CAP is 0) until
 * NEED fits, and *CAP updated. Returns 0, or -ENOMEM with *V and *CAP unchanged. */
int array_grow(void **v, size_t *cap, size_t need, size_t size, size_t first);

#endif
