/*
 * Loops of one function: back edges (edges whose target dominates their source), natural
 * loops merged per header, their nesting, their exit edges, and reducibility: a retreating
 * edge of a depth-first search whose target does not dominate its source marks an
 * irreducible region, which is reported rather than treated as a loop.
 */
#ifndef EDGEPROF_CFG_LOOPS_H
#define EDGEPROF_CFG_LOOPS_H

#include "cfg.h"
#include "dominators.h"

struct cfg_loop {
	uint32_t header;     /* block id */
	int32_t parent;      /* enclosing loop index, -1 for outermost */
	uint32_t depth;      /* 1 for an outermost loop */
	uint32_t *blocks;    /* body, header included, ascending block ids */
	uint32_t nblocks;
	uint32_t *back_edges; /* edge ids latch -> header */
	uint32_t nback;
	uint32_t *exits;     /* edge ids from the body to outside it (EXIT included) */
	uint32_t nexits;
};

struct cfg_loops {
	struct cfg_loop *loops; /* outer loops before the loops they contain */
	uint32_t nloops;
	int32_t *innermost;     /* per block: innermost loop index or -1 */
	bool *is_back_edge;     /* per edge */
	bool reducible;
	uint32_t *irreducible_edges; /* retreating edges whose target does not dominate source */
	uint32_t nirreducible;
};

/* Finds the loops of F given its dominator tree DOM. Returns 0, -ENOMEM, or -EINVAL when DOM
 * is a post-dominator tree or does not belong to F. */
int cfg_loops__compute(struct cfg_loops *lp, const struct cfg_func *f,
		       const struct cfg_domtree *dom);

/* The retreating edges of F: an iterative depth-first search from the entry block, successors
 * in order, marks in RETREATING[nedges] (every entry set) each edge whose target is on its
 * stack; cutting them leaves the reached blocks acyclic. POST (NULL, or room for nblocks)
 * gets the reached blocks in postorder, *NPOST (may be NULL) their count. Nothing is reached
 * when the entry block is invalid. Returns 0 or -ENOMEM. */
int cfg_loops__retreating(const struct cfg_func *f, bool *retreating, uint32_t *post,
			  uint32_t *npost);

/* True when block B belongs to loop L's body. */
bool cfg_loops__contains(const struct cfg_loops *lp, uint32_t l, uint32_t b);

void cfg_loops__free(struct cfg_loops *lp);

#endif
