/*
 * Sarkar's counter placement (PLDI 1989, section 3), counted rather than instrumented: one
 * counter per control condition of the FCDG (optimization 1: identically control dependent
 * blocks share one), minus one counter per independent linear relation of optimization 2:
 * at a block whose every branch label is a control condition, the labels' totals add up to
 * the block's total; at a loop, the exits add up to the preheader's total, and the back edges
 * to the header's total less the preheader's. The number of counters saved is the rank of
 * these relations (exact sparse elimination modulo a prime); the counters left are the
 * conditions that are not pivots, pivots being chosen among the most frequent conditions, so
 * the dynamic increments on a profile are the totals of the counted conditions. Optimization 3
 * (adding a DO loop's constant trip count once) needs the loop's bounds and is not modelled.
 */
#ifndef EDGEPROF_ESTIMATORS_SARKAR_COUNTERS_H
#define EDGEPROF_ESTIMATORS_SARKAR_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>

#include "cfg/fcdg.h"

struct sarkar_counters {
	uint32_t conditions; /* control conditions (pseudo ones left out), START's included */
	uint32_t relations;  /* independent relations of optimization 2 */
	uint32_t counters;   /* conditions - relations */
	double increments;   /* sum of TOTAL_FREQ over the counted conditions */
	bool truncated;	     /* the elimination hit its work bound: relations is a lower bound */
};

/* Plans the counters of G. TOTAL_FREQ (per ECFG edge, may be NULL) gives the pivot preference
 * and the increments. COUNTED (per ECFG edge, may be NULL) is set for the conditions that
 * keep a counter. Returns 0 or -ENOMEM. */
int sarkar_counters__plan(struct sarkar_counters *sc, const struct fcdg *g,
			  const double *total_freq, bool *counted);

/* For comparison, Ball and Larus's edge counters with the best possible spanning tree for
 * this profile: the chords of a maximum spanning tree of F's CFG plus EXIT and EXIT -> entry
 * (weighted by EDGE_COUNT, per CFG edge, and CALLS for EXIT -> entry), |E| - |V| + 1 of
 * them. Sets *COUNTERS and *INCREMENTS (the chords' total count). Returns 0 or -ENOMEM. */
int chords__optimal(const struct cfg_func *f, const int64_t *edge_count, int64_t calls,
		    uint32_t *counters, double *increments);

#endif
