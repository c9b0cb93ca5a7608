/*
 * Edge weights for placement: Ball and Larus's structural heuristic (section 5 of "Optimally
 * profiling and tracing programs": loops iterate LOOP_MULTIPLIER times, branches are equally
 * likely, loop-exit edges share the loop entry's weight), or exact counts of a previous run.
 */
#ifndef EDGEPROF_ESTIMATORS_WEIGHTS_H
#define EDGEPROF_ESTIMATORS_WEIGHTS_H

#include "cfg/cfg.h"
#include "cfg/loops.h"

#define LOOP_MULTIPLIER 10.0

/* Fills W[0 .. nedges] (W[nedges] is EXIT->root, fixed at 1) with the heuristic weighting of
 * F, whose loops are LP. Retreating edges of irreducible regions count as back edges.
 * Returns 0 or -ENOMEM. */
int weights__ball_larus(const struct cfg_func *f, const struct cfg_loops *lp, double *w);

#endif
