/*
 * Branch probabilities from heuristic predictions (Wu and Larus, Algorithm 1): every applying
 * heuristic's hit rate is a basic probability assignment, combined with Dempster and Shafer's
 * rule; branches with a back edge and an exit use the loop branch heuristic alone; multiway
 * branches (jump tables) and blocks without a prediction split evenly.
 */
#ifndef EDGEPROF_ESTIMATORS_DEMPSTER_SHAFER_H
#define EDGEPROF_ESTIMATORS_DEMPSTER_SHAFER_H

#include "branch_heuristics.h"

/* Probability given to an EXCEPTION edge (a call throwing to its landing pad); the block's
 * other out-edges share the rest. */
#define DS_EXCEPTION_PROB 1e-3

/* Probability given to the successor of a two-way branch that inevitably calls a no-return
 * function (Algorithm 1's "b calls exit()": flow never comes back from it), when the other
 * successor does not; the heuristics are then not consulted. */
#define DS_NORETURN_PROB 1e-3

/* Dempster-Shafer combination of two basic probabilities P and Q that the same outcome of a
 * two-way branch happens: P Q / (P Q + (1 - P)(1 - Q)). Returns P when the evidence is in
 * total conflict (P Q + (1 - P)(1 - Q) == 0). */
double ds__combine(double p, double q);

/* Algorithm 1 on F: fills PROB[0 .. nedges-1] with each edge's branch probability (the
 * out-edges of every block with successors sum to 1). LP gives the back edges (irreducible
 * retreating edges count as back edges), BF the heuristics that apply to the two-way branches
 * (may be NULL: none), RATES[BH_COUNT] their hit rates (NULL: Table 1). Returns 0. */
int ds__branch_probs(const struct cfg_func *f, const struct cfg_loops *lp,
		     const struct bh_func *bf, const double *rates, double *prob);

#endif
