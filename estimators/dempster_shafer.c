/*
 * Algorithm 1 of Wu and Larus (see dempster_shafer.h).
 */
#include "dempster_shafer.h"

#include <stdbool.h>

double ds__combine(double p, double q)
{
	double d = p * q + (1 - p) * (1 - q);

	return d > 0 ? p * q / d : p;
}

static bool is_back(const struct cfg_loops *lp, uint32_t e)
{
	if (lp && lp->is_back_edge && lp->is_back_edge[e])
		return true;
	for (uint32_t i = 0; lp && i < lp->nirreducible; i++)
		if (lp->irreducible_edges[i] == e)
			return true;
	return false;
}

int ds__branch_probs(const struct cfg_func *f, const struct cfg_loops *lp,
		     const struct bh_func *bf, const double *rates, double *prob)
{
	double def[BH_COUNT];
	uint32_t nb = 0;

	if (!rates) {
		bh__default_rates(def);
		rates = def;
	}
	for (uint32_t e = 0; e < f->nedges; e++)
		prob[e] = 0;
	for (uint32_t b = 0; b < f->nblocks; b++) {
		const struct cfg_block *cb = &f->blocks[b];
		uint32_t n = 0, m = 0, nx = 0, k;
		double share = 1.0;

		if (!cb->nsucc)
			continue;
		for (k = 0; k < cb->nsucc; k++) {
			uint32_t e = f->succ[cb->first_succ + k];

			if (f->edges[e].kind == EDGE_EXCEPTION) {
				nx++;
				continue;
			}
			n++;
			m += is_back(lp, e);
		}
		if (nx && n)
			share = 1.0 - DS_EXCEPTION_PROB;
		for (k = 0; k < cb->nsucc; k++) {
			uint32_t e = f->succ[cb->first_succ + k];

			if (f->edges[e].kind == EDGE_EXCEPTION)
				prob[e] = (n ? DS_EXCEPTION_PROB : 1.0) / nx;
			else if (m > 0 && m < n)
				prob[e] = share * (is_back(lp, e) ? rates[BH_LBH] / m :
					  (1.0 - rates[BH_LBH]) / (n - m));
			else
				prob[e] = share / n;
		}
		/* A two-way conditional branch: combine every applying heuristic. */
		while (bf && nb < bf->nbranches && bf->branches[nb].block < b)
			nb++;
		if (bf && nb < bf->nbranches && bf->branches[nb].block == b && m == 0 && n == 2 &&
		    !nx) {
			const struct bh_branch *br = &bf->branches[nb];
			double p0 = 0.5;

			if (br->noreturn == 1 || br->noreturn == 2) {
				prob[br->edge[0]] = br->noreturn == 1 ? DS_NORETURN_PROB :
					1 - DS_NORETURN_PROB;
				prob[br->edge[1]] = 1 - prob[br->edge[0]];
				continue;
			}
			for (k = 0; k < BH_COUNT; k++) {
				if (!(br->applies & (1u << k)))
					continue;
				/* Probability that edge[0] is taken by heuristic k's evidence. */
				p0 = ds__combine(p0, (br->predicts & (1u << k)) ? 1.0 - rates[k] :
						 rates[k]);
			}
			prob[br->edge[0]] = p0;
			prob[br->edge[1]] = 1.0 - p0;
		}
	}
	return 0;
}
