/*
 * Sarkar's frequency, time and variance computations over an FCDG (see sarkar.h): one
 * top-down pass for FREQ and NODE_FREQ, one bottom-up pass for TIME, E[T^2] and VAR.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sarkar.h"

static double count_or_zero(const int64_t *a, uint32_t i)
{
	return a && a[i] > 0 ? (double)a[i] : 0.0;
}

double sarkar__total_freq(const struct sarkar_input *in, uint32_t c)
{
	const struct fcdg *g = in->g;
	const struct fcdg_ecfg_edge *ee = &g->ecfg_edges[c];
	const struct fcdg_node *nu = &g->nodes[ee->from];

	switch (ee->label) {
	case FCDG_LABEL_Z:
		return 0.0;
	case FCDG_LABEL_CFG:
		return count_or_zero(in->edge_count, ee->cfg_edge);
	default:
		break;
	}
	switch (nu->type) {
	case FCDG_START:
		return in->calls;
	case FCDG_PREHEADER:
		return count_or_zero(in->block_count, ee->to);
	case FCDG_POSTEXIT:
	case FCDG_TAILCALL:
		return count_or_zero(in->edge_count, nu->edge);
	default:
		return 0.0;
	}
}

void sarkar__release(struct sarkar_result *r)
{
	free(r->total_freq);
	free(r->freq);
	free(r->node_freq);
	free(r->time);
	free(r->et2);
	free(r->var);
	free(r->freq_var);
	memset(r, 0, sizeof(*r));
}

double sarkar__std_dev(const struct sarkar_result *r, uint32_t u)
{
	return r->var[u] > 0 ? sqrt(r->var[u]) : 0.0;
}

/* VAR(FREQ) of loop L's preheader from measured trip count moments, or 0. */
static double loop_freq_var(const struct sarkar_input *in, int32_t l, bool *measured)
{
	const struct loop_moments *m;
	double mean, v;

	*measured = false;
	if (!in->moments || l < 0)
		return 0.0;
	m = &in->moments[l];
	if (!m->entries)
		return 0.0;
	*measured = true;
	mean = m->sum / (double)m->entries;
	v = m->sumsq / (double)m->entries - mean * mean;
	return v > 0 ? v : 0.0;
}

int sarkar__compute(struct sarkar_result *r, const struct sarkar_input *in)
{
	const struct fcdg *g = in->g;
	uint32_t n = g->nnodes, ne = g->necfg_edges, k, i;
	uint32_t nloops = g->lp->nloops;

	memset(r, 0, sizeof(*r));
	r->nnodes = n;
	r->nconds = ne;
	r->total_freq = calloc(ne + 1, sizeof(double));
	r->freq = calloc(ne + 1, sizeof(double));
	r->node_freq = calloc(n, sizeof(double));
	r->time = calloc(n, sizeof(double));
	r->et2 = calloc(n, sizeof(double));
	r->var = calloc(n, sizeof(double));
	r->freq_var = calloc(nloops + 1, sizeof(double));
	if (!r->total_freq || !r->freq || !r->node_freq || !r->time || !r->et2 || !r->var ||
	    !r->freq_var) {
		sarkar__release(r);
		return -ENOMEM;
	}
	for (i = 0; i < ne; i++)
		r->total_freq[i] = sarkar__total_freq(in, i);

	/* Top-down: NODE_FREQ(START) = 1; FREQ(u,l) = TOTAL_FREQ(u,l) / (calls NODE_FREQ(u));
	 * NODE_FREQ(v) = sum over FCDG parents NODE_FREQ(u) FREQ(u,l). */
	for (k = 0; k < g->norder; k++) {
		uint32_t u = g->order[k];
		const struct fcdg_node *nu = &g->nodes[u];
		double denom;

		if (u == fcdg__start(g))
			r->node_freq[u] = 1.0;
		denom = in->calls * r->node_freq[u];
		for (i = 0; i < nu->nout; i++) {
			uint32_t c = nu->first_out + i;

			r->freq[c] = denom > 0 ? r->total_freq[c] / denom : 0.0;
		}
		for (i = 0; i < nu->nchild; i++) {
			const struct fcdg_edge *fe = &g->edges[nu->first_child + i];

			r->node_freq[fe->to] += r->node_freq[u] * r->freq[fe->cond];
		}
	}

	/* Bottom-up. Children of one condition are contiguous in g->edges. */
	for (k = g->norder; k-- > 0;) {
		uint32_t u = g->order[k];
		const struct fcdg_node *nu = &g->nodes[u];
		double cost = in->cost ? in->cost[u] : 0.0;
		double cvar = in->cost_var ? in->cost_var[u] : 0.0;
		double tc = 0, etc2 = 0, var;
		uint32_t j = 0;

		while (j < nu->nchild) {
			uint32_t c = g->edges[nu->first_child + j].cond;
			double st = 0, sv = 0, f = r->freq[c];

			for (; j < nu->nchild && g->edges[nu->first_child + j].cond == c; j++) {
				uint32_t v = g->edges[nu->first_child + j].to;

				st += r->time[v];
				sv += r->var[v];
			}
			if (nu->type == FCDG_PREHEADER && g->ecfg_edges[c].label == FCDG_LABEL_U) {
				/* Case 1: a loop; VAR(F x S) of independent F and S. */
				bool measured;
				double vf = loop_freq_var(in, nu->loop, &measured);

				r->freq_var[nu->loop] = vf;
				r->loops_with_moments += measured;
				tc += f * st;
				if (in->iid_iterations)
					etc2 += f * sv + (vf + f * f) * st * st;
				else
					etc2 +=
					    f * f * sv + vf * st * st + vf * sv + f * f * st * st;
				continue;
			}
			/* Case 2: a branch taken with probability f. */
			tc += f * st;
			etc2 += f * (sv + st * st);
		}
		var = etc2 - tc * tc;
		if (var < 1e-12 * etc2) /* cancellation */
			var = 0;
		r->time[u] = cost + tc;
		r->var[u] = cvar + var;
		r->et2[u] = r->var[u] + r->time[u] * r->time[u];
	}
	return 0;
}
