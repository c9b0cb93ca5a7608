/*
 * Making an irreducible CFG reducible without duplicating code, for Sarkar's interval-based
 * analyses (cfg/fcdg.h): each irreducible region (a strongly connected component of the CFG
 * without its natural back edges) gets a DISPATCH block, an empty block that every edge into
 * any of the region's entry blocks is redirected to and that branches to each entry. The
 * region plus its dispatch block is then a natural loop headed by the dispatch block. Counts
 * stay exact: a dispatch edge to entry E carries the counts of the edges that went to E.
 * Repeated while the graph stays irreducible (nested regions), up to a bound.
 */
#ifndef EDGEPROF_CFG_DISPATCH_H
#define EDGEPROF_CFG_DISPATCH_H

#include <stdint.h>

#include "cfg.h"

#define CFG_DISPATCH_CALLS UINT32_MAX /* a contribution of the function's invocations */

/* count(edge) += count(src) (or += invocations when src is CFG_DISPATCH_CALLS). */
struct cfg_dispatch_contrib {
	uint32_t edge, src;
};

struct cfg_dispatch {
	struct cfg_func f; /* the reducible graph: F's blocks (same ids), then the dispatch
			    * blocks (no instructions, start = end = their first entry's start;
			    * EXIT, which is nblocks, moves up accordingly);
			    * F's edges (same ids, some retargeted to a dispatch block), then the
			    * dispatch blocks' out-edges (EDGE_SWITCH). Owns blocks, edges, succ,
			    * pred; name, insns and calls are F's (borrowed). */
	uint32_t norig_blocks, norig_edges;
	struct cfg_dispatch_contrib *contrib; /* in order of creation */
	uint32_t ncontrib;
	uint32_t rounds;
};

/* Builds D from F (F itself is not changed). Returns 0 (D.f is reducible; when F already is,
 * D.f is a copy with no dispatch block), -ENOTSUP when still irreducible after MAX_ROUNDS
 * rounds, -ENOMEM. D needs cfg_dispatch__free either way. */
int cfg_dispatch__build(struct cfg_dispatch *d, const struct cfg_func *f, uint32_t max_rounds);

/* Fills the counts of D's dispatch edges and blocks: EDGE_COUNT has D->f.nedges entries and
 * BLOCK_COUNT D->f.nblocks, of which the first norig_edges / norig_blocks are F's (negative
 * = unknown, taken as 0); CALLS is F's invocations. */
void cfg_dispatch__counts(const struct cfg_dispatch *d, int64_t *edge_count, int64_t *block_count,
			  int64_t calls);

void cfg_dispatch__free(struct cfg_dispatch *d);

#endif
