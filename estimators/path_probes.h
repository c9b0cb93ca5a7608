/*
 * Where to probe to count Ball-Larus acyclic paths (`edgeprof run --paths`, issue 16), as plain
 * data: per function, its path numbering with event-counting increments (bl_paths.h) and the
 * probe sites that carry them out at run time on a path register r kept per thread and frame.
 *
 * A site is an instruction (proven by the CFG, of a known stack depth, never PROBE_NEVER) and
 * a list of actions run in order on each hit; a branch site (a block's conditional jump) has
 * one more list per outcome. The actions on an edge e = u->v sit where a probe sees exactly
 * the executions of e:
 *   - u's conditional jump, in the list of e's outcome;
 *   - else, u having one out-edge, the last probeable instruction of u (after u's calls, so a
 *     frame a call leaves early has not taken e);
 *   - else, v having one in-edge (and not being the entry block), the first probeable
 *     instruction of v.
 * The function's entry instruction starts a frame (PATH_OP_START). Edges into the entry block
 * are back edges (the depth-first search always has the entry on its stack), so a back edge
 * into it marks the frame (to_entry) and the next PATH_OP_START continues the frame instead.
 * Event counting's spanning tree holds the edges no probe can see (weighted so), so that only
 * chords carry increments; a function where one of those would need an increment, or a back
 * edge or an exit no probe can see, is not path-profiled (skip says why).
 *
 * Run-time recipe per hit, frame = rsp + depth: PATH_OP_START r = a (a new frame; with the
 * frame marked, clear the mark instead); PATH_OP_ADD r += a; PATH_OP_BACK count[r + a], r = b
 * and mark the frame when to_entry; PATH_OP_EXIT count[r + a] and the frame is over.
 */
#ifndef EDGEPROF_ESTIMATORS_PATH_PROBES_H
#define EDGEPROF_ESTIMATORS_PATH_PROBES_H

#include <stddef.h>
#include <stdint.h>

#include "cfg/cfg.h"
#include "estimators/bl_paths.h"
#include "estimators/placement.h"

enum path_op {
	PATH_OP_START = 0,
	PATH_OP_ADD = 1,
	PATH_OP_BACK = 2,
	PATH_OP_EXIT = 3,
};

struct path_action {
	uint8_t op;	  /* enum path_op */
	uint8_t to_entry; /* PATH_OP_BACK: the back edge enters the entry block */
	uint32_t edge;	  /* the CFG edge it carries out (PATH_OP_START: UINT32_MAX) */
	int64_t a, b;
};

/* The most actions one site holds: start, one in-edge and one out-edge in the common list,
 * and a conditional jump's two out-edges in its outcome lists. */
#define PATH_PROBES_MAX_ACTIONS 5

struct path_probe_site {
	uint64_t addr;	     /* ELF vaddr of the probed instruction */
	uint32_t func;	     /* index into prog->funcs */
	uint32_t depth;	     /* rsp at the function's entry - rsp before this instruction */
	uint8_t branch;	     /* a conditional jump whose outcome selects a list */
	uint8_t cc;	     /* branch: struct cfg_insn.cc */
	uint8_t probe_class; /* enum insn_probe_class */
	/* actions[0, ncommon) on every hit, then (branch) ntaken for the jump taken, then
	 * nnot for it not taken */
	uint8_t ncommon, ntaken, nnot;
	struct path_action actions[PATH_PROBES_MAX_ACTIONS];
};

struct path_probe_func {
	struct bl_paths bp;	     /* numbering and event increments (empty when skipped) */
	const char *skip;	     /* NULL: paths counted; else why not (static string) */
	uint32_t first_site, nsites; /* its sites in path_probe_plan.sites, by address */
};

struct path_probe_plan {
	struct path_probe_func *funcs; /* [nfuncs], indexed like prog->funcs */
	size_t nfuncs;
	struct path_probe_site *sites; /* grouped by function, ascending addresses in each */
	size_t nsites;
	uint32_t ncounted; /* functions whose paths are counted */
};

/* The most paths a function may have (a count's key holds the number in 40 bits). */
#define PATH_PROBES_MAX_PATHS (1ULL << 40)

/* The stack depth a site may have (bytes; larger ones make the function skipped). */
#define PATH_PROBES_MAX_DEPTH 0xffffffu

/* Plans function FI (F) into PLAN (whose funcs array has room for it): HEIGHT[i] is the stack
 * height before F's instruction i (cfg/stack_height.h: 0 at entry, negative below, or
 * STACK_HEIGHT_UNKNOWN); LIMIT bounds the number of paths. Sets the function's skip reason
 * when it cannot be profiled. Returns 0 or -ENOMEM. */
int path_probes__plan_func(struct path_probe_plan *plan, size_t *cap, const struct cfg_func *f,
			   uint32_t fi, const int64_t *height, uint64_t limit);

/* Plans every function of PROG that PL profiles with chords (others are skipped with the
 * reason). Returns 0, -ENOMEM or another negative errno from the decoder (PLAN is then empty;
 * release it in any case). */
int path_probes__plan(struct path_probe_plan *plan, const struct cfg_program *prog,
		      const struct placement *pl);

/* Frees PLAN's arrays and zeroes it. Safe on a zeroed plan. */
void path_probes__free(struct path_probe_plan *plan);

#endif
