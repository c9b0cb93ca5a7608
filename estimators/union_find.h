/*
 * A disjoint-set forest over dense ids, for Kruskal's spanning trees (placement, and the best
 * chords that Sarkar's counters are compared with).
 */
#ifndef EDGEPROF_ESTIMATORS_UNION_FIND_H
#define EDGEPROF_ESTIMATORS_UNION_FIND_H

#include <stdint.h>

/* The representative of X's set in the forest PARENT (parent[r] == r for a root), halving
 * the path on the way. */
static inline uint32_t uf_find(uint32_t *parent, uint32_t x)
{
	while (parent[x] != x) {
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

#endif
