/*
 * 64-bit address sorting (see sort.h): insertion sort for short arrays, else a least
 * significant digit radix sort on the bytes up to the highest one where the least and the
 * greatest value differ (addresses of one binary differ in their low three or four bytes
 * only), skipping any byte position where all values agree; and a qsort that returns at once
 * on sorted input.
 */
#include "sort.h"

#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void insertion(uint64_t *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		uint64_t x = v[i];
		size_t j = i;

		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

void sort__u64(uint64_t *v, size_t n)
{
	uint64_t *tmp, *src = v, *dst, lo, hi;
	unsigned bytes = 0;

	if (n < 32) {
		insertion(v, n);
		return;
	}
	lo = hi = v[0];
	for (size_t i = 1; i < n; i++) {
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	/* Every value shares the bytes above the highest one where LO and HI differ. */
	for (uint64_t x = lo ^ hi; x; x >>= 8)
		bytes++;
	if (!bytes)
		return; /* all equal */
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp) {
		qsort(v, n, sizeof(*v), cmp_u64);
		return;
	}
	dst = tmp;
	for (unsigned d = 0; d < bytes; d++) {
		size_t count[256] = { 0 }, sum = 0;
		unsigned shift = 8 * d;

		for (size_t i = 0; i < n; i++)
			count[(src[i] >> shift) & 0xff]++;
		if (count[(lo >> shift) & 0xff] == n)
			continue; /* every value has the same byte here */
		for (unsigned k = 0; k < 256; k++) {
			size_t c = count[k];

			count[k] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i] >> shift) & 0xff]++] = src[i];
		src = dst;
		dst = src == v ? tmp : v;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
}

/* At most this many elements are sorted by insertion (by swapping, SIZE bytes at a time). */
#define KEYED_INSERTION_MAX 16

void sort__keyed(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	char *v = base, tmp[64];
	size_t i = 1;

	while (i < n && cmp(v + (i - 1) * size, v + i * size) <= 0)
		i++;
	if (i >= n)
		return; /* in order already */
	if (n > KEYED_INSERTION_MAX || size > sizeof(tmp)) {
		qsort(base, n, size, cmp);
		return;
	}
	for (; i < n; i++) {
		size_t j = i;

		memcpy(tmp, v + i * size, size);
		for (; j > 0 && cmp(v + (j - 1) * size, tmp) > 0; j--)
			memcpy(v + j * size, v + (j - 1) * size, size);
		memcpy(v + j * size, tmp, size);
	}
}

/* Stable LSD radix sort of the N pairs KV (key, index) on the bytes where the keys differ;
 * TMP holds N pairs. Returns the sorted array: KV or TMP. */
static uint64_t *radix_pairs(uint64_t *kv, uint64_t *tmp, size_t n)
{
	uint64_t lo = kv[0], hi = kv[0], *src = kv, *dst = tmp;

	for (size_t i = 1; i < n; i++) {
		lo = kv[2 * i] < lo ? kv[2 * i] : lo;
		hi = kv[2 * i] > hi ? kv[2 * i] : hi;
	}
	for (unsigned shift = 0; shift < 64 && (lo ^ hi) >> shift; shift += 8) {
		size_t count[256] = { 0 }, sum = 0;

		for (size_t i = 0; i < n; i++)
			count[(src[2 * i] >> shift) & 0xff]++;
		if (count[(lo >> shift) & 0xff] == n)
			continue;
		for (unsigned k = 0; k < 256; k++) {
			size_t c = count[k];

			count[k] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++) {
			size_t at = count[(src[2 * i] >> shift) & 0xff]++;

			dst[2 * at] = src[2 * i];
			dst[2 * at + 1] = src[2 * i + 1];
		}
		src = dst;
		dst = src == kv ? tmp : kv;
	}
	return src;
}

static uint64_t key_at(const char *v, size_t i, size_t size, size_t key_off)
{
	uint64_t k;

	memcpy(&k, v + i * size + key_off, sizeof(k));
	return k;
}

void sort__by_key_u64(void *base, size_t n, size_t size, size_t key_off, bool desc)
{
	char *v = base, *moved;
	uint64_t *kv, *tmp, *sorted, flip = desc ? UINT64_MAX : 0;
	size_t i = 1;

	while (i < n && (key_at(v, i - 1, size, key_off) ^ flip) <= (key_at(v, i, size, key_off) ^ flip))
		i++;
	if (i >= n)
		return; /* in order already */
	kv = malloc(4 * n * sizeof(*kv));
	moved = malloc(n * size);
	if (!kv || !moved) {
		free(kv);
		free(moved);
		for (; i < n; i++) /* insertion by swaps, stable */
			for (size_t j = i; j > 0 && (key_at(v, j - 1, size, key_off) ^ flip) >
							(key_at(v, j, size, key_off) ^ flip); j--)
				for (size_t b = 0; b < size; b++) {
					char c = v[(j - 1) * size + b];

					v[(j - 1) * size + b] = v[j * size + b];
					v[j * size + b] = c;
				}
		return;
	}
	tmp = kv + 2 * n;
	for (i = 0; i < n; i++) {
		kv[2 * i] = key_at(v, i, size, key_off) ^ flip;
		kv[2 * i + 1] = i;
	}
	sorted = radix_pairs(kv, tmp, n);
	for (i = 0; i < n; i++)
		memcpy(moved + i * size, v + sorted[2 * i + 1] * size, size);
	memcpy(v, moved, n * size);
	free(kv);
	free(moved);
}

size_t sort__lower_bound_u64(const uint64_t *v, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool sort__any_in_u64(const uint64_t *v, size_t n, uint64_t lo, uint64_t hi)
{
	size_t k;

	if (!v || !n || hi <= lo)
		return false;
	k = sort__lower_bound_u64(v, n, lo);
	return k < n && v[k] < hi;
}
