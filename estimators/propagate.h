/*
 * From counters to every edge and block of a function (Ball and Larus, Figure 6 generalised):
 * each vertex's flow equation (in = out, and = the block's count when a block counter measured
 * it) is solved for its one remaining unknown edge until nothing changes; with spanning-tree
 * chords this always completes. Virtual edges carry flow the CFG does not: v->EXIT for a frame
 * that never returned (exit deep in the stack, a fatal signal), EXIT->v for a frame entered
 * without a call (a forked child resuming inside its parent's call blocks, attaching mid-run);
 * EXIT->v entries from another function's code (CFG_FUNC_FOREIGN_ENTRY) are unknowns;
 * a block's count is the number of times its first instruction ran. A plan's longjmp
 * pseudo-edges (abandon b->EXIT, resume EXIT->b entering after b's instructions) are unknowns
 * like tree edges, derived the same way. Afterwards flow
 * conservation is checked at every vertex and every violation is reported, never hidden.
 */
#ifndef EDGEPROF_ESTIMATORS_PROPAGATE_H
#define EDGEPROF_ESTIMATORS_PROPAGATE_H

#include <stdint.h>

#include "cfg/cfg.h"
#include "placement.h"

#define COUNT_UNKNOWN INT64_MIN

/* Flow the CFG does not show, measured by process control (unwinding). */
struct virtual_edge {
	uint32_t func;  /* index into prog->funcs */
	uint32_t from;  /* block id, or nblocks for EXIT */
	uint32_t to;    /* block id, or nblocks for EXIT */
	uint64_t count;
	/* For a frame stopped inside a block (a fatal signal, an exit syscall): the address it
	 * stopped at, 0 otherwise. A block counter on a later instruction of that block missed
	 * this entry, and propagation adds it back. */
	uint64_t stopped_at;
	/* With stopped_at: the instruction there had not started either (the thread was
	 * interrupted before it, to detach), so a block counter AT stopped_at missed this entry
	 * too; 0 when it had started (a fault), and its probe fired. */
	uint8_t stopped_before;
	/* For a frame entered inside a block rather than at its start (a forked child resumes
	 * after the call that ends the block, an attach stops a thread mid-block): the address it
	 * resumes at, 0 for an entry at the block's start. Such flow leaves the block but never
	 * ran its first instruction, so the block's count does not include it; a block counter at
	 * or after that address does count it, and propagation takes it back out. */
	uint64_t resumed_at;
};

struct func_counts {
	int64_t *edges;   /* [nedges + 1 + npseudo + nforeign]: edge counts, [nedges] =
			   * EXIT->root = invocations, [nedges + 1 + j] = pseudo-edge j,
			   * [nedges + 1 + npseudo + j] = foreign entry j (both derived);
			   * COUNT_UNKNOWN where not determinable (naive placements) */
	int64_t *blocks;  /* [nblocks]: executions, COUNT_UNKNOWN where not determinable */
	bool *measured;   /* [nedges + 1]: counted by a probe rather than derived */
	uint32_t nviolations;  /* vertices (EXIT included) where conservation fails, or a
				* derived count is negative */
	uint32_t *violations;  /* their ids (nblocks = EXIT) */
	uint64_t virtual_in, virtual_out; /* flow added by virtual edges */
	const struct cfg_pseudo *pseudo;  /* the plan's longjmp pseudo-edges (not owned) */
	uint32_t npseudo;
	const uint32_t *foreign; /* the blocks another function's code runs into (cfg_func.
				  * foreign, not owned): EXIT->block entries, derived */
	uint32_t nforeign;
};

/* Computes F's counts from the plan FP, the counter values COUNTERS (indexed like
 * pl->counters) and the virtual edges VE[0..NVE) of this function. Returns 0 or -ENOMEM. */
int propagate__func(const struct cfg_func *f, size_t func, const struct placement *pl,
		    const uint64_t *counters, const struct virtual_edge *ve, size_t nve,
		    struct func_counts *out);

void func_counts__release(struct func_counts *fc);

#endif
