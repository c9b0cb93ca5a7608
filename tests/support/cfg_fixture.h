/*
 * Hand-built CFGs for unit tests: a function from a block count, an entry block and an edge
 * list, with fake addresses (block i covers [CFG_FIXTURE_BASE + 16 i, +16)) and one fake
 * instruction per block, indexed with cfg_func__index_edges.
 */
#ifndef EDGEPROF_TESTS_CFG_FIXTURE_H
#define EDGEPROF_TESTS_CFG_FIXTURE_H

#include <stdint.h>

#include "cfg/cfg.h"

#define CFG_FIXTURE_BASE 0x401000u
#define CFG_FIXTURE_BLOCK_SIZE 16u

/* One edge of a fixture; TO == nblocks means EXIT. */
struct fx_edge {
	uint32_t from, to;
	enum cfg_edge_kind kind;
};

/* Builds a function named NAME with NBLOCKS blocks, entry block ENTRY and the NEDGES edges
 * EDGES (edge i of the function is EDGES[i]). Returns it (free with cfg_fixture__free), or
 * NULL on allocation failure or when an edge names a vertex outside 0..nblocks or leaves
 * EXIT. */
struct cfg_func *cfg_fixture__func(const char *name, uint32_t nblocks, uint32_t entry,
				   const struct fx_edge *edges, uint32_t nedges);

/* Releases a function made by cfg_fixture__func (NULL is fine). */
void cfg_fixture__free(struct cfg_func *f);

/* cfg_fixture__func for an array literal of struct fx_edge. */
#define CFG_FIXTURE(name, nblocks, entry, edges_array)                                    \
	cfg_fixture__func((name), (nblocks), (entry), (edges_array),                         \
			  (uint32_t)(sizeof(edges_array) / sizeof((edges_array)[0])))

#endif
