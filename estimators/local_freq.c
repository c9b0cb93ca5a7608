/*
 * Algorithm 2 of Wu and Larus (see local_freq.h), with a worklist instead of the paper's
 * recursion (a block is processed once all its non-back in-edges from the region are), so
 * that large functions do not exhaust the stack.
 */
#include "local_freq.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct lf {
	const struct cfg_func *f;
	const double *prob;
	double *bfreq, *efreq;
	double *back_prob; /* per edge */
	bool *latch;       /* per edge: a loop's back edge */
	bool *skip;        /* per edge: back edge or irreducible retreating edge */
	bool *in_region;   /* per vertex */
	double *inject;    /* per vertex: flow entering along irreducible retreating edges */
	uint32_t *indeg, *queue;
	struct lf_limits lim;
};

static void preds(const struct cfg_func *f, uint32_t v, const uint32_t **p, uint32_t *n)
{
	if (v == f->nblocks) {
		*p = f->pred + f->exit_first_pred;
		*n = f->exit_npred;
	} else {
		*p = f->pred + f->blocks[v].first_pred;
		*n = f->blocks[v].npred;
	}
}

/* Propagates from HEAD through the vertices in the region; FINAL: the whole function. Returns
 * how many vertices were processed; s->queue holds them in processing order. */
static uint32_t propagate(struct lf *s, uint32_t head, bool final)
{
	const struct cfg_func *f = s->f;
	uint32_t nv = f->nblocks + 1, qh = 0, qt = 0;

	for (uint32_t v = 0; v < nv; v++) {
		const uint32_t *p;
		uint32_t np;

		s->indeg[v] = 0;
		if (!s->in_region[v])
			continue;
		preds(f, v, &p, &np);
		for (uint32_t k = 0; k < np; k++)
			if (!s->skip[p[k]] && s->in_region[f->edges[p[k]].from])
				s->indeg[v]++;
	}
	s->queue[qt++] = head;
	while (qh < qt) {
		uint32_t v = s->queue[qh++], np;
		const uint32_t *p;
		double freq = v == head ? 1.0 : 0.0, cp = 0;

		if (final)
			freq += s->inject[v];
		preds(f, v, &p, &np);
		for (uint32_t k = 0; k < np; k++) {
			uint32_t e = p[k];

			if (s->latch[e]) {
				if (v != head || final)
					cp += s->back_prob[e];
			} else if (v != head && !s->skip[e] && s->in_region[f->edges[e].from]) {
				freq += s->efreq[e];
			}
		}
		if (cp > 1 - s->lim.epsilon)
			cp = 1 - s->lim.epsilon;
		s->bfreq[v] = freq / (1 - cp);
		if (s->bfreq[v] > s->lim.max_freq)
			s->bfreq[v] = s->lim.max_freq;
		if (v == f->nblocks)
			continue;
		for (uint32_t k = 0; k < f->blocks[v].nsucc; k++) {
			uint32_t e = f->succ[f->blocks[v].first_succ + k], t = f->edges[e].to;

			s->efreq[e] = s->prob[e] * s->bfreq[v];
			if (t == head && !final)
				s->back_prob[e] = s->efreq[e];
			if (!s->skip[e] && s->in_region[t] && t != head && --s->indeg[t] == 0)
				s->queue[qt++] = t;
		}
	}
	return qt;
}

int local_freq__compute(const struct cfg_func *f, const struct cfg_loops *lp, const double *prob,
			double *bfreq, double *efreq)
{
	return local_freq__compute_limited(f, lp, prob, bfreq, efreq, LF_LIMITS_ESTIMATE);
}

int local_freq__compute_limited(const struct cfg_func *f, const struct cfg_loops *lp,
				const double *prob, double *bfreq, double *efreq,
				struct lf_limits lim)
{
	struct lf s = { .f = f, .prob = prob, .bfreq = bfreq, .efreq = efreq, .lim = lim };
	uint32_t nv = f->nblocks + 1, ne = f->nedges ? f->nedges : 1;
	int err = -ENOMEM;

	s.back_prob = malloc(ne * sizeof(double));
	s.latch = calloc(ne, sizeof(bool));
	s.skip = calloc(ne, sizeof(bool));
	s.in_region = calloc(nv, sizeof(bool));
	s.inject = calloc(nv, sizeof(double));
	s.indeg = calloc(nv, sizeof(uint32_t));
	s.queue = malloc(nv * sizeof(uint32_t));
	if (!s.back_prob || !s.latch || !s.skip || !s.in_region || !s.indeg || !s.queue ||
	    !s.inject)
		goto out;
	for (uint32_t v = 0; v < nv; v++)
		bfreq[v] = 0;
	for (uint32_t e = 0; e < f->nedges; e++) {
		efreq[e] = 0;
		s.back_prob[e] = prob[e];
		s.latch[e] = s.skip[e] = lp->is_back_edge && lp->is_back_edge[e];
	}
	for (uint32_t i = 0; i < lp->nirreducible; i++)
		s.skip[lp->irreducible_edges[i]] = true;
	err = 0;
	if (!f->nblocks || f->entry_block >= f->nblocks)
		goto out;
	/* Inner loops first: loops.h lists outer loops before the loops they contain. */
	for (uint32_t l = lp->nloops; l-- > 0;) {
		const struct cfg_loop *L = &lp->loops[l];

		memset(s.in_region, 0, nv * sizeof(bool));
		for (uint32_t k = 0; k < L->nblocks; k++)
			s.in_region[L->blocks[k]] = true;
		propagate(&s, L->header, false);
	}
	/* The whole function: every vertex reached from the entry. */
	{
		uint32_t qh = 0, qt = 0;

		memset(s.in_region, 0, nv * sizeof(bool));
		s.in_region[f->entry_block] = true;
		s.queue[qt++] = f->entry_block;
		while (qh < qt) {
			uint32_t v = s.queue[qh++];

			if (v == f->nblocks)
				continue;
			for (uint32_t k = 0; k < f->blocks[v].nsucc; k++) {
				uint32_t t = f->edges[f->succ[f->blocks[v].first_succ + k]].to;

				if (!s.in_region[t]) {
					s.in_region[t] = true;
					s.queue[qt++] = t;
				}
			}
		}
		for (uint32_t v = 0; v < nv; v++)
			bfreq[v] = 0;
		for (uint32_t e = 0; e < f->nedges; e++)
			efreq[e] = 0;
		propagate(&s, f->entry_block, true);
	}
	/* Irreducible: the flow along retreating edges that are no loop's back edges enters
	 * their targets in the next pass, a few times over. */
	for (unsigned pass = 0; lp->nirreducible && pass < LF_IRREDUCIBLE_PASSES; pass++) {
		for (uint32_t i = 0; i < lp->nirreducible; i++) {
			uint32_t e = lp->irreducible_edges[i];

			if (!s.latch[e])
				s.inject[f->edges[e].to] = 0;
		}
		for (uint32_t i = 0; i < lp->nirreducible; i++) {
			uint32_t e = lp->irreducible_edges[i];

			if (!s.latch[e])
				s.inject[f->edges[e].to] += efreq[e];
		}
		for (uint32_t v = 0; v < nv; v++)
			bfreq[v] = 0;
		for (uint32_t e = 0; e < f->nedges; e++)
			efreq[e] = 0;
		propagate(&s, f->entry_block, true);
	}
out:
	free(s.back_prob);
	free(s.latch);
	free(s.skip);
	free(s.in_region);
	free(s.inject);
	free(s.indeg);
	free(s.queue);
	return err;
}
