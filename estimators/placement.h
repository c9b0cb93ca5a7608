/*
 * Where to put counters (Ball and Larus, Eprof(Ecnt)): per function, a maximum spanning tree
 * of the CFG plus EXIT and EXIT->root (seeded with EXIT->root), counters on the chords, so
 * |E| - |V| + 1 counters. An edge's weight is its estimated frequency times the cost of the
 * cheapest probe site that can measure it on this machine, so the tree keeps the edges that
 * are expensive to measure. Sites:
 *   branch site  a block's conditional jump: the BPF program reads the flags (rcx for
 *                jrcxz/loop) and counts the out-edge about to be taken, so one probe
 *                measures every out-edge of that block;
 *   block site   any instruction of a block with a single out-edge: counts the block, whose
 *                one out-edge is then known (its count minus any early terminations);
 *   entry site   the first instruction of a block with a single in-edge: counts the block,
 *                hence that in-edge;
 *   indirect site  an indirect jump through a resolved table: recomputes the target from the
 *                registers and counts every out-edge (single-stepped, so only worth it where
 *                nothing cheaper can measure the case edges).
 * Block and entry sites count the block rather than "its edge" so that virtual edges (frames
 * left or entered without call/return) keep every count exact.
 * Longjmp pseudo-edges (cfg/longjmp.h) cannot be measured: a block b with one is split into
 * b_in -> b_out (the "block edge", whose flow is b's count, measured by a block counter on
 * b), b's CFG out-edges and its abandon edge leave b_out, its resume edge enters b_out; the
 * pseudo-edges (a star at EXIT) are the first tree edges, so each adds exactly one chord.
 * A block site on b then counts the block edge, never one of b's out-edges.
 * Chords sharing a site share one probe. A plan is plain data: the sites with what each
 * counter measures; the BPF side only interprets cookies, propagation reads counters through
 * the same plan. The naive placement (one probe on the first instruction of every block)
 * measures blocks instead of edges.
 */
#ifndef EDGEPROF_ESTIMATORS_PLACEMENT_H
#define EDGEPROF_ESTIMATORS_PLACEMENT_H

#include <stdbool.h>
#include <stdint.h>

#include "cfg/cfg.h"
#include "cfg/induction.h"
#include "cfg/longjmp.h"
#include "site_costs.h"

#define PLACEMENT_NO_COUNTER UINT32_MAX

enum site_kind {
	SITE_COUNT = 0,    /* counter += 1 on every hit */
	SITE_BRANCH = 1,   /* counter (jump taken) or counter2 (not taken) += 1 */
	SITE_INDIRECT = 2, /* an indirect jump through a resolved table: the target is recomputed
			    * from the registers; counters counter .. counter + counter2 - 1
			    * measure the block's out-edges in successor order */
};

/* One probe: an instruction start proven by the CFG, and how a hit is counted. */
struct probe_site {
	uint64_t addr;       /* ELF virtual address */
	uint32_t func;       /* index into prog->funcs */
	uint8_t kind;        /* enum site_kind */
	uint8_t cc;          /* SITE_BRANCH: struct cfg_insn.cc of the jump */
	uint8_t probe_class; /* enum insn_probe_class of the instruction */
	uint32_t counter;    /* SITE_COUNT: the counter; SITE_BRANCH: taken; SITE_INDIRECT: first */
	uint32_t counter2;   /* SITE_BRANCH: not taken; SITE_INDIRECT: how many;
			      * PLACEMENT_NO_COUNTER otherwise */
	/* SITE_INDIRECT: its ordinal among indirect sites, and the jump's operand (see
	 * struct cfg_jump_table). */
	uint32_t ordinal;
	uint8_t mem, scale_log2;
	int8_t base, index;
	int32_t disp;
};

enum counter_what {
	COUNTS_EDGE = 0,  /* executions of edge id (branch sites) */
	COUNTS_BLOCK = 1, /* executions of block id (block, entry and naive sites) */
};

/* What a counter measures. */
struct counter_def {
	uint32_t func; /* index into prog->funcs */
	uint8_t what;  /* enum counter_what */
	uint32_t id;   /* edge id or block id */
	uint32_t site; /* index into sites */
};

enum func_plan_status {
	PLAN_CHORDS = 0,   /* exact edge profile from spanning-tree chords */
	PLAN_NAIVE = 1,    /* block counters (by request, or the fallback below) */
	PLAN_EXCLUDED = 2, /* not profiled at all */
};

struct func_plan {
	uint8_t status;     /* enum func_plan_status */
	const char *reason; /* why not PLAN_CHORDS (static string), NULL otherwise */
	bool *in_tree;      /* PLAN_CHORDS: per edge id, plus [nedges] = EXIT->root */
	uint32_t nchords;   /* |E| - |V| + 1 edges off the tree (EXIT and EXIT->root counted) */
	uint32_t *edge_counter;  /* [nedges + 1]: counter measuring the edge, or
				  * PLACEMENT_NO_COUNTER */
	uint32_t *block_counter; /* [nblocks]: counter measuring the block, or
				  * PLACEMENT_NO_COUNTER */
	double est_cost;    /* estimated probe cost per invocation, ns (weights x site costs) */
	double est_cost_iv; /* the part of it its counted loops' accumulator sites cost */
	/* The function's longjmp pseudo-edges (abandon b -> EXIT, resume EXIT -> b, see
	 * cfg/longjmp.h), a pointer into placement_options.longjmp, derived by propagation:
	 * PLAN_CHORDS keeps them in the spanning tree (each adds one chord), PLAN_NAIVE has
	 * them as unknowns only, PLAN_EXCLUDED none. */
	const struct cfg_pseudo *pseudo;
	uint32_t npseudo;
	double *weights; /* PLAN_CHORDS: the edge weights [nedges + 1] it was planned with (kept
			  * for placement__replan), else NULL or those of a plan given up */
	/* PLAN_CHORDS with loops counted by induction: per block, the index into
	 * placement.ivs of the loop whose step measures it, or PLACEMENT_NO_COUNTER; NULL
	 * when none does. */
	uint32_t *block_iv;
};

/* A loop counted by induction (cfg/induction.h) whose step's block is a chord: the block's
 * count (the step's executions, as a block counter at step_addr would count them) is
 * (counter acc_out - counter acc_in) / step, in wrap-around arithmetic. */
struct plan_iv {
	const struct cfg_iv *iv; /* in placement_options.induction: function, step's block,
				  * step_addr, step, register */
	uint32_t acc_in, acc_out; /* counter indices, after every counter_def: the values are
				   * sums of register values, not counts */
};

/* An "accumulator += register" site of a plan_iv (struct cfg_iv_action): always a uprobe. */
struct accum_site {
	uint64_t addr;
	uint32_t func;
	uint8_t kind;        /* enum iv_action_kind */
	uint8_t cc;          /* IV_JCC_*: the jump's condition */
	int8_t reg;          /* x86 register number */
	uint8_t probe_class; /* the instruction's uprobe class */
	uint32_t counter;    /* the accumulator */
	uint32_t block;      /* the block holding the instruction */
};

enum placement_mode {
	PLACEMENT_CHORDS = 0,
	PLACEMENT_NAIVE = 1,
};

/* Per-function edge weights from outside (e.g. a previous profile): fills W[0..nedges] and
 * returns true, or returns false to fall back to the heuristic for that function. */
typedef bool (*placement_weights_fn)(void *ctx, size_t func, const struct cfg_func *f,
				     double *w);

struct placement_options {
	enum placement_mode mode;
	struct site_costs costs;
	placement_weights_fn weights; /* NULL: Ball-Larus heuristic everywhere */
	void *weights_ctx;
	/* Functions to profile: NULL means all of them. */
	const bool *select;
	/* Longjmp pseudo-edges to plan with (NULL: none); must outlive the plan. */
	const struct cfg_longjmp *longjmp;
	/* Loops that may be counted by induction (NULL: none); must outlive the plan. The
	 * spanning tree gets each step's block as an edge (b_in -> b_out, as for a longjmp
	 * pseudo-edge's block) that its accumulator sites measure, at their cost. */
	const struct cfg_induction *induction;
	/* Count every loop of INDUCTION by it whatever its sites cost (each still needs its
	 * step's block edge to close a cycle, which it always does). */
	bool induction_always;
};

struct placement {
	enum placement_mode mode;
	struct probe_site *sites; /* sorted by addr, unique addresses */
	size_t nsites;
	struct counter_def *counters;
	uint32_t ncounters;
	struct func_plan *funcs; /* indexed like prog->funcs */
	size_t nfuncs;
	double est_cost;         /* sum over functions, per invocation of each */
	uint32_t nchord_funcs, nnaive_funcs, nexcluded_funcs;
	uint32_t npseudo; /* pseudo-edges planned (in PLAN_CHORDS functions): as many chords */
	struct plan_iv *ivs; /* loops counted by induction */
	const struct cfg_induction *ind; /* placement_options.induction, where they are */
	uint32_t nivs;
	struct accum_site *accums; /* their sites, sorted by address (an address may repeat,
				    * and may also hold a probe_site) */
	size_t naccums;
	/* Counters in all: ncounters, then the accumulators (2 per loop counted by
	 * induction). */
	uint32_t ncounters_all;
};

/* Plans the probes for every (selected) function of PROG. Functions with an unresolved
 * indirect jump or undecodable code get block counters (PLAN_NAIVE) since their edges are not
 * known; so do functions that run off their end or that another function runs into
 * (CFG_FUNC_FOREIGN_ENTRY), and a function whose unmeasurable edges close a cycle. Functions
 * whose code overlaps one already planned are PLAN_EXCLUDED. Returns 0 or -ENOMEM. */
int placement__plan(struct placement *pl, const struct cfg_program *prog,
		    const struct placement_options *opt);

/* Plans again after some instructions' classes changed: PL, made by placement__plan (or
 * this) with the same PROG and OPT before the change, becomes the plan placement__plan would
 * make now, with the same numbering of counters and ordinals. Only the functions that need it
 * are planned again: those with REDO[fi] (some of their instructions' classes changed), those
 * one of whose sites a function planned again before them now takes, and those excluded for
 * sharing code; the others keep their plans, their counters and ordinals renumbered. Returns
 * 0, or -ENOMEM (PL unchanged). */
int placement__replan(struct placement *pl, const struct cfg_program *prog,
		      const struct placement_options *opt, const bool *redo);

void placement__free(struct placement *pl);

/* The index of REASON among the texts a plan gives func_plan.reason (-1 for NULL, -2 for a
 * text no plan gives), and the text of INDEX (NULL for -1 or an unknown index): a saved plan
 * keeps the index. */
int placement__reason_index(const char *reason);
const char *placement__reason_text(int index);

struct snap_out;
struct snap_in;

/* Saves PL, planned for PROG with the longjmp pseudo-edges LJ (placement_snapshot.c).
 * Returns 0, or -EINVAL when a function's reason is none a plan gives. */
int placement__save(const struct placement *pl, const struct cfg_program *prog,
		   const struct cfg_longjmp *lj, struct snap_out *o);

/* Reads into *PL a plan placement__save saved for PROG (loaded the same way) and LJ. Returns
 * 0, or -EINVAL / -ENOMEM with *PL released. */
int placement__load(struct placement *pl, const struct cfg_program *prog,
		    const struct cfg_longjmp *lj, struct snap_in *in);

#endif
