/*
 * A byte stream for saving analyses and reading them back in a later run (the session's
 * analysis cache): records and arrays written as they are in memory, read back into memory
 * of their own, every read bounds-checked. The first failure sticks: later calls do
 * nothing and the stream reports it at the end.
 */
#ifndef EDGEPROF_CFG_SNAPSHOT_H
#define EDGEPROF_CFG_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct snap_out {
	uint8_t *buf;
	size_t len, cap;
	int err; /* 0, or -ENOMEM (nothing is written after it) */
};

/* Appends N bytes at P (8-byte aligned: the stream pads every item to a multiple of 8). */
void snap_put(struct snap_out *o, const void *p, size_t n);

/* Appends V. */
void snap_put_u64(struct snap_out *o, uint64_t v);

/* Appends the string S (NULL too). */
void snap_put_str(struct snap_out *o, const char *s);

/* Appends the array P of N elements of SIZE bytes, with N (P may be NULL when N is 0). */
void snap_put_array(struct snap_out *o, const void *p, size_t n, size_t size);

/* Appends the array P of N elements of SIZE bytes that may be absent (NULL): whether it is
 * there, then the array. */
void snap_put_opt(struct snap_out *o, const void *p, size_t n, size_t size);

struct snap_in {
	const uint8_t *p;
	size_t len, pos;
	int err; /* 0, or -EINVAL (the stream ended or disagreed) or -ENOMEM */
};

/* Reads N bytes into P; false (and err set, P zeroed) when the stream has fewer or has
 * failed already. */
bool snap_get(struct snap_in *in, void *p, size_t n);

/* Reads a value snap_put_u64 wrote (0 after a failure). */
uint64_t snap_get_u64(struct snap_in *in);

/* Reads a string snap_put_str wrote into memory of its own (free), or NULL: NULL written, or
 * a failure (then err is set). */
char *snap_get_str(struct snap_in *in);

/* Reads an array snap_put_array wrote, which must have N elements of SIZE bytes, into memory
 * of its own (at least one element's room, zeroed when N is 0: free). NULL on a failure
 * (err set), a count other than N included. */
void *snap_get_array(struct snap_in *in, size_t n, size_t size);

/* Reads an array snap_put_opt wrote, of N elements of SIZE bytes when there: as
 * snap_get_array, or NULL when it was absent (err unset) or on a failure (err set). */
void *snap_get_opt(struct snap_in *in, size_t n, size_t size);

/* Fails IN with -EINVAL unless OK (a loader's consistency check); returns OK. */
bool snap_check(struct snap_in *in, bool ok);

#endif
