/*
 * Wall's matching scores ("Predicting program behavior using real or estimated profiles",
 * PLDI 1991), as Wu and Larus use them to compare a static profile with a dynamic one. Of N
 * items (blocks, edges, functions, calls), take the top m = ceil(N x pct / 100) by static
 * estimate and the top m by dynamic count; k of the static top m are in the dynamic top m.
 * The unweighted score is k / m. The weighted score is the sum of the DYNAMIC counts of those
 * k items over the sum of the dynamic counts of the dynamic top m. (Wu and Larus's text says
 * "the sum of the static frequencies of these k blocks", but their own worked example, Table
 * 12: 0.89 for the top 20%, and Wall's definition use the dynamic counts; so does this.)
 * Ties. Items with equal dynamic counts are interchangeable: when the m-th dynamic count is
 * shared by items inside and outside the dynamic top m, a static pick with that count matches
 * as long as slots for it remain (which of them a sort would put inside is arbitrary; breaking
 * the tie by item index made a perfect estimate score below 1). Items with equal static
 * estimates at the static cut-off are taken in item order, as the paper's Table 12 does (two
 * items estimated 15.0 at its top 20 %: the first listed is taken, hence its 0.89).
 */
#ifndef EDGEPROF_ESTIMATORS_MATCHING_SCORE_H
#define EDGEPROF_ESTIMATORS_MATCHING_SCORE_H

#include <stddef.h>

struct match_score {
	double u, w;  /* unweighted and weighted; w is NaN when the dynamic top m sums to 0 */
	size_t m, k;
};

/* Scores the static estimates STAT against the dynamic counts DYN (N items each) for the top
 * PCT percent (0 < PCT <= 100). Returns 0, -EINVAL (N == 0 or PCT out of range) or -ENOMEM. */
int matching_score__compute(const double *stat, const double *dyn, size_t n, double pct,
			    struct match_score *out);

#endif
