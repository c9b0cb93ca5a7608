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

/* The index of the first element of sorted V[0, N) that is >= A (N when none is). */
size_t sort__lower_bound_u64(const uint64_t *v, size_t n, uint64_t a);

/* Whether any element of sorted V[0, N) lies in [LO, HI) (false when V is NULL or N 0). */
bool sort__any_in_u64(const uint64_t *v, size_t n, uint64_t lo, uint64_t hi);

#endif
