/*
 * Sarkar's program representation (PLDI 1989, section 2) for one function: the interval
 * structure (loop headers, HDR, HDR_PARENT, HDR_LCA, from cfg/loops.h), the extended CFG
 * (ECFG) with a START node, the EXIT vertex as STOP, one PREHEADER per loop header, one
 * POSTEXIT per loop left by an exit edge and the pseudo edges PREHEADER -> POSTEXIT and
 * START -> STOP, the control dependences of the ECFG (Ferrante, Ottenstein and Warren, from
 * post-dominators) and the forward control dependence graph (FCDG: the control dependences
 * without their back edges).
 *
 * ECFG node ids: 0 .. nblocks-1 are the function's blocks, nblocks is STOP (the CFG's EXIT),
 * nblocks+1 is START, then the preheaders, postexit nodes and tail-call nodes, then the loop
 * ends. A tail call
 * edge u -> EXIT becomes u -> TAILCALL -> STOP so that the callee's time can be charged to
 * that edge only. An exit edge that leaves k nested loops gets one postexit node, in the
 * interval it goes to, with a pseudo edge from each of the k loops' preheaders (the paper
 * adds one from the innermost only; then an outer loop left only through an inner one would
 * have a preheader without pseudo edges, and no node would be control dependent on it).
 *
 * Back edges (to a loop's header from inside the loop) go to a LOOPEND node of that loop
 * instead, with pseudo edges to the loop's postexits: the ECFG is then acyclic, all its control
 * dependences are forward ones, and a block of the loop body is control dependent on what
 * decides it within one iteration. (With the back edges kept, a block that every exit passes
 * but that an early `continue` skips post-dominates the header, so it would get the header's
 * frequency; Sarkar's paper leaves this case out.)
 *
 * A control condition (u, l) is identified by the ECFG edge leaving u with label l (labels
 * are the CFG edge ids of a block's out-edges, U for the single out-edge of a START,
 * PREHEADER, POSTEXIT or TAILCALL node, Z for pseudo edges). Irreducible functions are not
 * supported (-ENOTSUP: see cfg/dispatch.h to make them reducible); nor are functions with a
 * block that cannot reach EXIT (with back edges ending at loop ends, only a block without
 * out-edges could).
 */
#ifndef EDGEPROF_CFG_FCDG_H
#define EDGEPROF_CFG_FCDG_H

#include <stdbool.h>
#include <stdint.h>

#include "cfg.h"
#include "loops.h"

#define FCDG_NONE UINT32_MAX
#define FCDG_ROOT_INTERVAL (-1) /* HDR of a node outside every loop */

enum fcdg_node_type {
	FCDG_OTHER = 0, /* a block of the CFG */
	FCDG_STOP,	/* the CFG's EXIT */
	FCDG_START,
	FCDG_PREHEADER, /* of loop `loop` */
	FCDG_POSTEXIT,	/* leaving loops `loop` .. `outer` along CFG edge `edge` */
	FCDG_TAILCALL,	/* CFG tail-call edge `edge` */
	FCDG_LOOPEND,	/* where the back edges of loop `loop` go (see below) */
};

enum fcdg_label_kind {
	FCDG_LABEL_CFG = 0, /* a CFG out-edge of a block (cfg_edge holds its id) */
	FCDG_LABEL_U,	    /* the unconditional out-edge of an added node */
	FCDG_LABEL_Z,	    /* a pseudo edge: never taken */
};

struct fcdg_node {
	uint8_t type;		  /* enum fcdg_node_type */
	int32_t hdr;		  /* HDR: innermost loop (cfg_loops index) containing the node, or
				   * FCDG_ROOT_INTERVAL */
	int32_t loop;		  /* PREHEADER: its loop; POSTEXIT: the innermost loop it leaves; a
				   * block that heads a loop: that loop; else -1 */
	int32_t outer;		  /* POSTEXIT: the outermost loop it leaves; else as `loop` */
	uint32_t block;		  /* OTHER: the block id; else FCDG_NONE */
	uint32_t edge;		  /* POSTEXIT / TAILCALL: the CFG edge; else FCDG_NONE */
	uint32_t first_out, nout; /* ECFG out-edges: ecfg_edges[first_out .. +nout) */
	uint32_t first_child, nchild; /* FCDG out-edges: fcdg_edges[first_child .. +nchild),
				       * grouped by condition */
	uint32_t ipdom;		      /* immediate post-dominator in the ECFG (STOP: itself) */
	uint32_t topo;		      /* position in `order` */
};

struct fcdg_ecfg_edge {
	uint32_t from, to;
	uint8_t label;	   /* enum fcdg_label_kind */
	bool back;	   /* a back edge of the CFG (redirected to its loop's LOOPEND) */
	uint32_t cfg_edge; /* FCDG_LABEL_CFG: the edge id; else FCDG_NONE */
};

/* A forward control dependence: node `to` runs when `from` takes ECFG edge `cond`. */
struct fcdg_edge {
	uint32_t from, to;
	uint32_t cond; /* ECFG edge id, leaving `from` */
};

struct fcdg {
	const struct cfg_func *f;
	const struct cfg_loops *lp; /* not owned */
	struct fcdg_node *nodes;
	uint32_t nnodes;
	uint32_t nblocks;		   /* f->nblocks; STOP = nblocks, START = nblocks + 1 */
	uint32_t *preheader;		   /* per loop: its PREHEADER node */
	struct fcdg_ecfg_edge *ecfg_edges; /* grouped by source node */
	uint32_t necfg_edges;
	struct fcdg_edge *edges; /* FCDG edges grouped by source, then by condition */
	uint32_t nedges;
	uint32_t *order; /* nodes reached from START, topologically (parents first
			  * in the FCDG); nodes not reached are left out */
	uint32_t norder;
};

/* START's node id. */
static inline uint32_t fcdg__start(const struct fcdg *g)
{
	return g->nblocks + 1;
}

/* STOP's node id (the CFG's EXIT). */
static inline uint32_t fcdg__stop(const struct fcdg *g)
{
	return g->nblocks;
}

/* Builds the ECFG, its post-dominators and the FCDG of F with loops LP (computed from F's
 * dominator tree; kept by reference). Returns 0; -ENOTSUP when F is irreducible, has no
 * blocks, or has a block that cannot reach EXIT; -ENOMEM. G needs fcdg__free either way. */
int fcdg__build(struct fcdg *g, const struct cfg_func *f, const struct cfg_loops *lp);

void fcdg__free(struct fcdg *g);

/* HDR_LCA of two intervals (loop indices or FCDG_ROOT_INTERVAL) in the HDR_PARENT tree. */
int32_t fcdg__hdr_lca(const struct cfg_loops *lp, int32_t a, int32_t b);

/* HDR_PARENT of loop L (FCDG_ROOT_INTERVAL for an outermost loop). */
static inline int32_t fcdg__hdr_parent(const struct cfg_loops *lp, int32_t l)
{
	return l < 0 ? FCDG_ROOT_INTERVAL : lp->loops[l].parent;
}

/* "start", "stop", "preheader", "postexit", "tailcall" or "block". */
const char *fcdg_node_type__name(unsigned type);

#endif
