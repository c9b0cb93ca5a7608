/*
 * Sorting arrays of 64-bit addresses without qsort's per-comparison indirect call: the CFG
 * build sorts each function's instructions and the patch analysis its entry set, hundreds
 * of thousands of addresses, where glibc's merge sort was a tenth of the analysis.
 */
#ifndef EDGEPROF_CFG_SORT_H
#define EDGEPROF_CFG_SORT_H

#include <stddef.h>
#include <stdint.h>

/* Sorts V[0, N) ascending (the same order qsort with a numeric comparison gives: equal values
 * are indistinguishable). Never fails: without memory for its buffer it falls back to qsort. */
void sort__u64(uint64_t *v, size_t n);

#endif
