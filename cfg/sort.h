/*
 * Sorting arrays of 64-bit addresses without qsort's per-comparison indirect call: the CFG
 * build sorts each function's instructions and the patch analysis its entry set, hundreds
 * of thousands of addresses, where glibc's merge sort was a tenth of the analysis.
 */
#ifndef EDGEPROF_CFG_SORT_H
#define EDGEPROF_CFG_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Sorts V[0, N) ascending (the same order qsort with a numeric comparison gives: equal values
 * are indistinguishable). Never fails: without memory for its buffer it falls back to qsort. */
void sort__u64(uint64_t *v, size_t n);

/* Sorts BASE[0, N) (elements of SIZE bytes) as qsort would with the total order CMP, in
 * O(N) when they already are in that order and by insertion when N is small: the build and
 * the patcher sort arrays that mostly come sorted (sites in address order) or are a
 * function's few edges, where glibc's merge sort spent its time in calls to CMP. Stable. */
void sort__keyed(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* Sorts BASE[0, N) (elements of SIZE bytes) stably by the uint64_t each holds at byte offset
 * KEY_OFF, ascending, with DESC descending: the order qsort's merge sort gives with a numeric
 * comparison of that key (a radix sort on the key and the elements' indices, then one move of
 * each element). Never fails: without memory for its buffers it falls back to insertion. */
void sort__by_key_u64(void *base, size_t n, size_t size, size_t key_off, bool desc);

/* The index of the first element of sorted V[0, N) that is >= A (N when none is). */
size_t sort__lower_bound_u64(const uint64_t *v, size_t n, uint64_t a);

/* Whether any element of sorted V[0, N) lies in [LO, HI) (false when V is NULL or N 0). */
bool sort__any_in_u64(const uint64_t *v, size_t n, uint64_t lo, uint64_t hi);

#endif
