/*
 * Dominator and post-dominator trees of one function's CFG (Cooper, Harvey and Kennedy's
 * iterative algorithm over reverse post-order). Vertices are the block ids plus EXIT
 * (id nblocks). Dominators are rooted at the entry block, post-dominators at EXIT over the
 * reversed edges.
 */
#ifndef EDGEPROF_CFG_DOMINATORS_H
#define EDGEPROF_CFG_DOMINATORS_H

#include "cfg.h"

#define CFG_NO_VERTEX UINT32_MAX

struct cfg_domtree {
	uint32_t n;      /* vertices: nblocks + 1 */
	uint32_t root;   /* entry block (dominators) or EXIT (post-dominators) */
	bool post;
	uint32_t *idom;  /* idom[v]; idom[root] == root; CFG_NO_VERTEX when v is not reached
			  * from the root (unreachable, or for post-dominators a block that
			  * cannot reach EXIT, e.g. inside an infinite loop) */
	uint32_t *pre, *post_order; /* DFS numbering of the tree, for O(1) dominates() */
	uint32_t *rpo;   /* vertices reached from the root in reverse post-order */
	uint32_t nrpo;
};

/* Computes the dominator tree of F rooted at its entry block (empty when F has no blocks or
 * an invalid entry). Returns 0 or -ENOMEM. */
int cfg_dom__compute(struct cfg_domtree *dt, const struct cfg_func *f);

/* Computes the post-dominator tree of F rooted at EXIT. Returns 0 or -ENOMEM. */
int cfg_postdom__compute(struct cfg_domtree *dt, const struct cfg_func *f);

/* True when A (post-)dominates B (reflexive). False when either is not in the tree. */
bool cfg_dom__dominates(const struct cfg_domtree *dt, uint32_t a, uint32_t b);

void cfg_dom__free(struct cfg_domtree *dt);

#endif
