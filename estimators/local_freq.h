/*
 * Local (per invocation) block and edge frequencies from branch probabilities (Wu and Larus,
 * Algorithm 2): innermost loops first, each loop's cyclic probability (the probability of
 * coming back to its header) found by propagating from its header through its body, then
 * the function from its entry, where a loop header's frequency is its entering frequency over
 * 1 - its cyclic probability. Retreating edges of irreducible regions are ignored by the
 * elimination (as in the paper, where the estimate is then less accurate); for irreducible
 * functions, repeated final passes bring their flow in.
 */
#ifndef EDGEPROF_ESTIMATORS_LOCAL_FREQ_H
#define EDGEPROF_ESTIMATORS_LOCAL_FREQ_H

#include "cfg/cfg.h"
#include "cfg/loops.h"

/* Cyclic probabilities are capped at 1 - LF_EPSILON (a loop that appears not to terminate
 * iterates at most 1 / LF_EPSILON times per entry). */
#define LF_EPSILON 1e-3

/* No block is estimated to run more than LF_MAX_FREQ times per invocation (beyond the
 * paper): deep loop nests, such as gcc makes of a recursive function by inlining it into
 * itself, would otherwise multiply 8 iterations per level into millions. */
#define LF_MAX_FREQ 1000.0

/* Irreducible functions: the final pass of Algorithm 2 is repeated this many times, the flow
 * that the previous pass sent along retreating edges that are no loop's back edges entering
 * their targets (beyond the paper, which leaves that flow out). */
#define LF_IRREDUCIBLE_PASSES 20

/* The caps above, for estimates; probabilities measured on a run need none (a loop of a
 * million iterations is what they say). */
struct lf_limits {
	double epsilon, max_freq;
};

#define LF_LIMITS_ESTIMATE ((struct lf_limits){ LF_EPSILON, LF_MAX_FREQ })
#define LF_LIMITS_MEASURED ((struct lf_limits){ 1e-12, 1e300 })

/* Fills BFREQ[0 .. nblocks] (EXIT included) and EFREQ[0 .. nedges-1] with F's frequencies
 * per invocation (the entry's incoming frequency is 1), given its loops LP and the edge
 * probabilities PROB[nedges]. Blocks not reached from the entry get 0. Returns 0 or
 * -ENOMEM. */
int local_freq__compute(const struct cfg_func *f, const struct cfg_loops *lp, const double *prob,
			double *bfreq, double *efreq);

/* local_freq__compute with caps LIM instead of LF_LIMITS_ESTIMATE. */
int local_freq__compute_limited(const struct cfg_func *f, const struct cfg_loops *lp,
				const double *prob, double *bfreq, double *efreq,
				struct lf_limits lim);

#endif
