/*
 * Static against dynamic: a profile's true counts matched to the CFG (by addresses and edge
 * kinds), Wall's matching scores of a static profile for the six analyses of Wu and Larus,
 * each heuristic's measured hit rate, and what a probe placement would have cost on the
 * profile's true counts. Used by `edgeprof compare` and `edgeprof calibrate-heuristics`.
 *
 * The six analyses and their items:
 *   LBK  blocks of functions that ran: local frequency vs count / invocations
 *   LBR  edges of functions that ran, the same way
 *   FI   functions: invocation frequency vs invocations
 *   FC   caller -> callee pairs (direct calls and tail calls): global call frequency vs the
 *        executions of the call sites (the calling block, or the tail-call edge)
 *   GBK  blocks of every profiled function: global frequency vs count
 *   GBR  edges of every profiled function, the same way
 * Items whose count is unknown (a function with block counts only, excluded ones) are left
 * out. LBK and LBR are also given per function (struct score_table.fn).
 */
#ifndef EDGEPROF_USER_STATIC_EVAL_H
#define EDGEPROF_USER_STATIC_EVAL_H

#include <stdbool.h>
#include <stdint.h>

#include "cfg/cfg.h"
#include "estimators/matching_score.h"
#include "estimators/placement.h"
#include "estimators/static_profile.h"
#include "user/profile/profile.h"

/* True counts of one CFG function (-1: unknown). */
struct dyn_func {
	int64_t invocations;
	int64_t *block; /* [nblocks] */
	int64_t *edge;  /* [nedges] */
};

struct dyn_profile {
	struct dyn_func *funcs; /* indexed like prog->funcs */
	size_t nfuncs;
};

/* Matches profile P to PROG (same build). Returns 0 or -1 (out of memory, reported). */
int dyn_profile__match(struct dyn_profile *dp, const struct profile *p,
		       const struct cfg_program *prog);

void dyn_profile__free(struct dyn_profile *dp);

/* Where the branch probabilities of a static profile come from, for decomposing its error:
 * the heuristics (Dempster-Shafer, the static estimate itself); the profile's measured
 * probabilities (what remains is the error of the propagation: caps, irreducible regions,
 * recursion, calls through pointers); or the heuristics' probabilities turned to the edge the
 * profile took more often (what remains is the error of their magnitudes); or the heuristics'
 * except on loop branches (a back edge, or an edge leaving the branch's loop), which get the
 * profile's: what knowing every loop's trip count would give. */
enum probs_source { PROBS_HEURISTICS, PROBS_PROFILE, PROBS_DIRECTION, PROBS_LOOPS };

/* "heuristics", "profile", "direction", "loops". */
const char *static_eval__probs_name(enum probs_source source);

/* The source named NAME into *OUT. Returns 0, or -1 for an unknown name. */
int static_eval__probs_lookup(const char *name, enum probs_source *out);

struct probs_ctx {
	const struct dyn_profile *dp;
	enum probs_source source;
};

/* sp_probs_fn for static_profile__compute_with: CTX is a struct probs_ctx. PROBS_PROFILE:
 * every block whose out-edges were all counted and ran gets their measured shares; the others
 * keep theirs. PROBS_DIRECTION: every two-way branch that ran and took one edge more often
 * than the other gets max(p, 1 - p) on that edge. PROBS_LOOPS: every two-way branch that ran and
 * where LBH or LEH applies (a back edge; an edge leaving its innermost loop while no successor
 * is a loop header) gets its measured shares. Returns true when it replaced some
 * probabilities by measured ones (PROBS_PROFILE, PROBS_LOOPS): no caps then. */
bool static_eval__probs(void *ctx, size_t i, const struct cfg_func *f, const struct bh_func *bf,
			double *prob);

enum score_kind { SC_LBK, SC_LBR, SC_FI, SC_FC, SC_GBK, SC_GBR, SC_COUNT };
#define SC_NPCT 5 /* top 10, 20, 30, 40, 50 % */

struct score_table {
	struct match_score s[SC_COUNT][SC_NPCT];
	size_t nitems[SC_COUNT]; /* 0: no items, scores undefined */
	/* LBK and LBR per function (index 0 blocks, 1 edges): each function that ran scored
	 * against its own blocks (edges) only, averaged with weights its dynamic block (edge)
	 * executions; u and w only. A reading of "local" that the paper leaves open. */
	struct match_score fn[2][SC_NPCT];
	size_t nfuncs[2]; /* functions averaged; 0: undefined */
};

/* "LBK", ... */
const char *score__name(unsigned k);

/* The paper's SPEC92 geometric means (Tables 2-7) for analysis K at top (PCT_INDEX+1)*10 %:
 * unweighted in *U, weighted in *W. */
void score__paper(unsigned k, unsigned pct_index, double *u, double *w);

/* Scores SP against DP for the six analyses. Returns 0 or -1 (out of memory, reported). */
int static_eval__scores(const struct static_profile *sp, const struct dyn_profile *dp,
			const struct cfg_program *prog, struct score_table *t);

/* One heuristic's record: static branches where it applied, those that ran, the executions
 * of its predicted edge over the executions of those branches (HITS / TOTAL: the dynamic hit
 * rate, dominated by the hottest branches), and the sum over those branches of the fraction
 * of each one's executions that took the predicted edge (FRAC / EXECUTED: the mean per
 * branch, which is what a branch probability estimates for a branch not yet seen). */
struct heur_rate {
	uint64_t applied, executed;
	double hits, total, frac;
};

struct heur_stats {
	struct heur_rate h[BH_COUNT];      /* per heuristic */
	struct heur_rate oh[BH_OH_NRULES]; /* OH's, per rule (enum bh_oh_rule) */
};

/* Prints R as one table row without a newline: NAME, branches, those that ran, the dynamic
 * and the per-branch hit rate ("-" when none ran). */
void heur_rate__print(const char *name, const struct heur_rate *r);

/* Adds SP's heuristic predictions measured on DP to HS (not zeroed). */
void static_eval__heuristics(const struct static_profile *sp, const struct dyn_profile *dp,
			     struct heur_stats *hs);

/* What a placement costs on true counts. */
struct plan_cost {
	double ns;      /* sum over sites of executions x the cost of the site's class */
	uint64_t hits;
	size_t nsites;
	double est_cost; /* the plan's own estimate (placement.est_cost) */
	double *func_ns; /* if not NULL (set by the caller, prog->nfuncs entries): ns per
			  * function, added to */
};

/* Plans the probes of PROG in MODE (PLACEMENT_CHORDS or PLACEMENT_NAIVE) with COSTS and
 * weights FN/CTX (NULL: Ball-Larus heuristic; chords only) and prices the plan on DP's counts
 * (a site executes as often as its block). Returns 0 or -1 (out of memory, reported). */
int static_eval__plan_cost(const struct cfg_program *prog, const struct dyn_profile *dp,
			   enum placement_mode mode, const struct site_costs *costs,
			   placement_weights_fn fn, void *ctx, struct plan_cost *out);

/* Prices the sites the profile P actually used on DP's counts (the same way). */
void static_eval__profile_cost(const struct profile *p, const struct cfg_program *prog,
			       const struct dyn_profile *dp, struct plan_cost *out);

/* placement_weights_fn over a static profile (CTX): local edge frequencies (EXIT->root 1),
 * with a small floor so never-predicted edges stay ordered by site cost. */
bool static_eval__weights(void *ctx, size_t func, const struct cfg_func *f, double *w);

#endif
