/*
 * Static against dynamic profiles (see static_eval.h).
 */
#include "user/report/static_eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/util/log.h"

static const char *const score_names[SC_COUNT] = { "LBK", "LBR", "FI", "FC", "GBK", "GBR" };

/* Wu and Larus, Tables 2-7, geometric means over SPECint92: {U, W} at 10..50 %. */
static const double paper[SC_COUNT][SC_NPCT][2] = {
	{ { .79, .80 }, { .79, .82 }, { .81, .84 }, { .83, .84 }, { .84, .88 } },
	{ { .58, .62 }, { .64, .69 }, { .68, .73 }, { .72, .78 }, { .76, .82 } },
	{ { .51, .67 }, { .52, .85 }, { .69, .91 }, { .67, .94 }, { .73, .96 } },
	{ { .38, .57 }, { .39, .72 }, { .47, .81 }, { .52, .85 }, { .63, .91 } },
	{ { .48, .51 }, { .56, .77 }, { .57, .88 }, { .64, .94 }, { .68, .97 } },
	{ { .42, .50 }, { .49, .78 }, { .56, .89 }, { .62, .94 }, { .72, .97 } },
};

const char *score__name(unsigned k)
{
	return k < SC_COUNT ? score_names[k] : "?";
}

void score__paper(unsigned k, unsigned pct_index, double *u, double *w)
{
	*u = k < SC_COUNT && pct_index < SC_NPCT ? paper[k][pct_index][0] : NAN;
	*w = k < SC_COUNT && pct_index < SC_NPCT ? paper[k][pct_index][1] : NAN;
}

void dyn_profile__free(struct dyn_profile *dp)
{
	for (size_t i = 0; dp->funcs && i < dp->nfuncs; i++) {
		free(dp->funcs[i].block);
		free(dp->funcs[i].edge);
	}
	free(dp->funcs);
	memset(dp, 0, sizeof(*dp));
}

int dyn_profile__match(struct dyn_profile *dp, const struct profile *p,
		       const struct cfg_program *prog)
{
	memset(dp, 0, sizeof(*dp));
	dp->nfuncs = prog->nfuncs;
	dp->funcs = calloc(prog->nfuncs ? prog->nfuncs : 1, sizeof(*dp->funcs));
	if (!dp->funcs)
		goto oom;
	for (size_t i = 0; i < prog->nfuncs; i++) {
		const struct cfg_func *f = &prog->funcs[i];
		const struct profile_func *pf = profile__func_at(p, f->entry);
		struct dyn_func *df = &dp->funcs[i];

		df->block = malloc((f->nblocks + 1) * sizeof(int64_t));
		df->edge = malloc((f->nedges + 1) * sizeof(int64_t));
		if (!df->block || !df->edge)
			goto oom;
		df->invocations = -1;
		for (uint32_t b = 0; b < f->nblocks; b++)
			df->block[b] = -1;
		for (uint32_t e = 0; e < f->nedges; e++)
			df->edge[e] = -1;
		if (!pf || pf->status == PLAN_EXCLUDED)
			continue;
		df->invocations = pf->count == COUNT_UNKNOWN ? -1 : pf->count;
		for (uint32_t b = 0; b < f->nblocks; b++) {
			int pb = profile_func__block_at(pf, f->blocks[b].start);

			if (pb >= 0 && pf->blocks[pb].end == f->blocks[b].end &&
			    pf->blocks[pb].count != COUNT_UNKNOWN)
				df->block[b] = pf->blocks[pb].count;
		}
		for (uint32_t k = 0; k < pf->nedges; k++) {
			const struct profile_edge *pe = &pf->edges[k];
			int b;

			if (pe->count == COUNT_UNKNOWN || pe->from >= pf->nblocks)
				continue;
			b = cfg_func__block_at(f, pf->blocks[pe->from].addr);
			if (b < 0)
				continue;
			for (uint32_t s = 0; s < f->blocks[b].nsucc; s++) {
				uint32_t e = f->succ[f->blocks[b].first_succ + s];
				const struct cfg_edge *ce = &f->edges[e];
				bool to_exit = pe->to >= pf->nblocks;

				if (ce->kind != pe->kind || to_exit != (ce->to == f->nblocks) ||
				    (!to_exit &&
				     pf->blocks[pe->to].addr != f->blocks[ce->to].start))
					continue;
				df->edge[e] = pe->count;
				break;
			}
		}
	}
	return 0;
oom:
	dyn_profile__free(dp);
	return pr_err("out of memory matching the profile to the binary");
}

static const char *const probs_names[] = { "heuristics", "profile", "direction", "loops" };

const char *static_eval__probs_name(enum probs_source source)
{
	return (unsigned)source < sizeof(probs_names) / sizeof(probs_names[0]) ?
		probs_names[source] : "?";
}

int static_eval__probs_lookup(const char *name, enum probs_source *out)
{
	for (unsigned k = 0; k < sizeof(probs_names) / sizeof(probs_names[0]); k++)
		if (!strcmp(name, probs_names[k])) {
			*out = (enum probs_source)k;
			return 0;
		}
	return -1;
}

/* Gives block B's out-edges their measured shares of DF's counts when every one was counted
 * and they ran. Returns whether it did. */
static bool measured_shares(const struct cfg_func *f, const struct dyn_func *df, uint32_t b,
			    double *prob)
{
	const struct cfg_block *cb = &f->blocks[b];
	double sum = 0;
	uint32_t k;

	for (k = 0; k < cb->nsucc; k++) {
		int64_t n = df->edge[f->succ[cb->first_succ + k]];

		if (n < 0)
			return false;
		sum += (double)n;
	}
	if (!(sum > 0))
		return false;
	for (k = 0; k < cb->nsucc; k++) {
		uint32_t e = f->succ[cb->first_succ + k];

		prob[e] = (double)df->edge[e] / sum;
	}
	return true;
}

bool static_eval__probs(void *ctx, size_t i, const struct cfg_func *f, const struct bh_func *bf,
			double *prob)
{
	const uint16_t loop_heuristics = (1u << BH_LBH) | (1u << BH_LEH);
	const struct probs_ctx *pc = ctx;
	const struct dyn_func *df;
	bool measured = false;

	if (i >= pc->dp->nfuncs || pc->source == PROBS_HEURISTICS)
		return false;
	df = &pc->dp->funcs[i];
	if (pc->source == PROBS_LOOPS) {
		for (uint32_t j = 0; j < bf->nbranches; j++)
			if (bf->branches[j].applies & loop_heuristics)
				measured |= measured_shares(f, df, bf->branches[j].block, prob);
		return measured;
	}
	if (pc->source == PROBS_DIRECTION) {
		for (uint32_t j = 0; j < bf->nbranches; j++) {
			const struct bh_branch *br = &bf->branches[j];
			int64_t c0 = df->edge[br->edge[0]], c1 = df->edge[br->edge[1]];
			double p = fmax(prob[br->edge[0]], prob[br->edge[1]]);

			if (c0 < 0 || c1 < 0 || c0 == c1)
				continue;
			prob[br->edge[0]] = c0 > c1 ? p : 1 - p;
			prob[br->edge[1]] = c0 > c1 ? 1 - p : p;
		}
		return false;
	}
	for (uint32_t b = 0; b < f->nblocks; b++)
		measured |= measured_shares(f, df, b, prob);
	return measured;
}

/* Item lists of one analysis. */
struct items {
	double *s, *d;
	size_t n, cap;
};

static int push(struct items *it, double s, double d)
{
	if (it->n == it->cap) {
		size_t cap = it->cap ? 2 * it->cap : 1024;
		double *ns = realloc(it->s, cap * sizeof(double));

		if (!ns)
			return -1;
		it->s = ns;
		double *nd = realloc(it->d, cap * sizeof(double));

		if (!nd)
			return -1;
		it->d = nd;
		it->cap = cap;
	}
	it->s[it->n] = s;
	it->d[it->n++] = d;
	return 0;
}

/* Dynamic executions of the calls from function I to the function at TARGET. */
static int64_t dyn_calls(const struct cfg_func *f, const struct dyn_func *df, uint64_t target,
			 bool *unknown)
{
	int64_t n = 0;

	for (uint32_t c = 0; c < f->ncalls; c++) {
		const struct cfg_call *cl = &f->calls[c];

		if (cl->indirect || cl->target != target || cl->block >= f->nblocks)
			continue;
		if (cl->tail) {
			const struct cfg_block *cb = &f->blocks[cl->block];

			for (uint32_t k = 0; k < cb->nsucc; k++) {
				uint32_t e = f->succ[cb->first_succ + k];

				if (f->edges[e].kind != EDGE_TAIL_CALL ||
				    f->edges[e].target != target)
					continue;
				if (df->edge[e] < 0)
					*unknown = true;
				else
					n += df->edge[e];
			}
		} else if (df->block[cl->block] < 0) {
			*unknown = true;
		} else {
			n += df->block[cl->block];
		}
	}
	return n;
}

/* Adds function-local items IT (dynamic total WEIGHT) to the per-function scores FN. */
static int add_func_scores(struct match_score *fn, double *wsum, const struct items *it,
			   double weight)
{
	if (!it->n || !(weight > 0))
		return 0;
	for (unsigned p = 0; p < SC_NPCT; p++) {
		struct match_score s;

		if (matching_score__compute(it->s, it->d, it->n, 10.0 * (p + 1), &s))
			return -1;
		fn[p].u += weight * s.u;
		fn[p].w += weight * (isnan(s.w) ? s.u : s.w);
	}
	*wsum += weight;
	return 0;
}

int static_eval__scores(const struct static_profile *sp, const struct dyn_profile *dp,
			const struct cfg_program *prog, struct score_table *t)
{
	struct items it[SC_COUNT] = { 0 }, local[2] = { 0 };
	double wsum[2] = { 0, 0 };
	int ret = -1;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < prog->nfuncs; i++) {
		const struct cfg_func *f = &prog->funcs[i];
		const struct dyn_func *df = &dp->funcs[i];
		const struct sp_func *sf = &sp->funcs[i];
		double inv = (double)df->invocations;

		if (df->invocations < 0)
			continue;
		if (push(&it[SC_FI], sf->invocations, inv))
			goto out;
		double wb = 0, we = 0;

		local[0].n = local[1].n = 0;
		for (uint32_t b = 0; b < f->nblocks; b++) {
			if (df->block[b] < 0)
				continue;
			double n = (double)df->block[b];

			if (push(&it[SC_GBK], static_profile__gblock(sp, i, b), n) ||
			    (inv > 0 && push(&it[SC_LBK], sf->bfreq[b], n / inv)) ||
			    (inv > 0 && push(&local[0], sf->bfreq[b], n)))
				goto out;
			wb += n;
		}
		for (uint32_t e = 0; e < f->nedges; e++) {
			if (df->edge[e] < 0)
				continue;
			double n = (double)df->edge[e];

			if (push(&it[SC_GBR], static_profile__gedge(sp, i, e), n) ||
			    (inv > 0 && push(&it[SC_LBR], sf->efreq[e], n / inv)) ||
			    (inv > 0 && push(&local[1], sf->efreq[e], n)))
				goto out;
			we += n;
		}
		if (inv > 0) {
			if (add_func_scores(t->fn[0], &wsum[0], &local[0], wb) ||
			    add_func_scores(t->fn[1], &wsum[1], &local[1], we))
				goto out;
			t->nfuncs[0] += local[0].n && wb > 0;
			t->nfuncs[1] += local[1].n && we > 0;
		}
	}
	for (uint32_t c = 0; c < sp->ncalls; c++) {
		const struct sp_call *sc = &sp->calls[c];
		const struct dyn_func *df = &dp->funcs[sc->from];
		bool unknown = false;
		int64_t n;

		if (df->invocations < 0)
			continue;
		n = dyn_calls(&prog->funcs[sc->from], df, prog->funcs[sc->to].entry, &unknown);
		if (!unknown && push(&it[SC_FC], sc->gfreq, (double)n))
			goto out;
	}
	for (unsigned k = 0; k < SC_COUNT; k++) {
		t->nitems[k] = it[k].n;
		for (unsigned p = 0; p < SC_NPCT && it[k].n; p++)
			if (matching_score__compute(it[k].s, it[k].d, it[k].n, 10.0 * (p + 1),
						    &t->s[k][p]))
				goto out;
	}
	for (unsigned k = 0; k < 2; k++)
		for (unsigned p = 0; p < SC_NPCT && wsum[k] > 0; p++) {
			t->fn[k][p].u /= wsum[k];
			t->fn[k][p].w /= wsum[k];
		}
	ret = 0;
out:
	for (unsigned k = 0; k < SC_COUNT; k++) {
		free(it[k].s);
		free(it[k].d);
	}
	for (unsigned k = 0; k < 2; k++) {
		free(local[k].s);
		free(local[k].d);
	}
	if (ret)
		pr_err("out of memory computing matching scores");
	return ret;
}

/* Counts one branch where R's heuristic applied: RAN, HIT of its TOTAL executions taking the
 * predicted edge. */
static void heur_rate__add(struct heur_rate *r, bool ran, double hit, double total)
{
	r->applied++;
	if (!ran)
		return;
	r->executed++;
	r->total += total;
	r->hits += hit;
	r->frac += hit / total;
}

void heur_rate__print(const char *name, const struct heur_rate *r)
{
	printf("%-10s %8llu %9llu", name, (unsigned long long)r->applied,
	       (unsigned long long)r->executed);
	if (r->total > 0)
		printf("    %.3f       %.3f", r->hits / r->total, r->frac / (double)r->executed);
	else
		printf("        -           -");
}

void static_eval__heuristics(const struct static_profile *sp, const struct dyn_profile *dp,
			     struct heur_stats *hs)
{
	for (size_t i = 0; i < sp->nfuncs && i < dp->nfuncs; i++) {
		const struct bh_func *bf = &sp->funcs[i].bh;
		const struct dyn_func *df = &dp->funcs[i];

		for (uint32_t j = 0; j < bf->nbranches; j++) {
			const struct bh_branch *br = &bf->branches[j];
			int64_t c0 = df->edge[br->edge[0]], c1 = df->edge[br->edge[1]];

			bool ran = c0 >= 0 && c1 >= 0 && c0 + c1 > 0;

			for (unsigned k = 0; k < BH_COUNT; k++) {
				if (!(br->applies & (1u << k)))
					continue;
				double hit = (double)((br->predicts & (1u << k)) ? c1 : c0);

				heur_rate__add(&hs->h[k], ran, hit, (double)(c0 + c1));
				if (k == BH_OH && br->oh_rule < BH_OH_NRULES)
					heur_rate__add(&hs->oh[br->oh_rule], ran, hit,
						       (double)(c0 + c1));
			}
		}
	}
}

/* Executions of the instruction at ADDR of function FUNC: its block's count. */
static uint64_t site_execs(const struct cfg_program *prog, const struct dyn_profile *dp,
			   uint32_t func, uint64_t addr)
{
	const struct cfg_func *f;
	int b;

	if (func >= prog->nfuncs)
		return 0;
	f = &prog->funcs[func];
	b = cfg_func__block_containing(f, addr);
	if (b < 0 || dp->funcs[func].block[b] < 0)
		return 0;
	return (uint64_t)dp->funcs[func].block[b];
}

int static_eval__plan_cost(const struct cfg_program *prog, const struct dyn_profile *dp,
			   enum placement_mode mode, const struct site_costs *costs,
			   placement_weights_fn fn, void *ctx, struct plan_cost *out)
{
	struct placement_options opt = { .mode = mode, .costs = *costs,
					 .weights = fn, .weights_ctx = ctx };
	struct placement pl;
	double *func_ns = out->func_ns;

	memset(out, 0, sizeof(*out));
	out->func_ns = func_ns;
	if (placement__plan(&pl, prog, &opt))
		return pr_err("out of memory planning probes");
	for (size_t s = 0; s < pl.nsites; s++) {
		uint64_t n = site_execs(prog, dp, pl.sites[s].func, pl.sites[s].addr);
		double ns = (double)n * site_costs__of(costs, pl.sites[s].probe_class);

		out->hits += n;
		out->ns += ns;
		if (func_ns && pl.sites[s].func < prog->nfuncs)
			func_ns[pl.sites[s].func] += ns;
	}
	out->nsites = pl.nsites;
	out->est_cost = pl.est_cost;
	placement__free(&pl);
	return 0;
}

void static_eval__profile_cost(const struct profile *p, const struct cfg_program *prog,
			       const struct dyn_profile *dp, struct plan_cost *out)
{
	double *func_ns = out->func_ns;

	memset(out, 0, sizeof(*out));
	out->func_ns = func_ns;
	for (size_t s = 0; s < p->nsites; s++) {
		const struct profile_site *ps = &p->sites[s];
		const struct profile_func *pf = ps->func < p->nfuncs ? &p->funcs[ps->func] : NULL;
		const struct cfg_func *f = pf ? cfg_program__func_at(prog, pf->addr) : NULL;
		uint64_t n;
		double ns;

		if (!f)
			continue;
		n = site_execs(prog, dp, (uint32_t)(f - prog->funcs), ps->addr);
		ns = (double)n * site_costs__of(&p->costs, ps->probe_class);
		out->hits += n;
		out->ns += ns;
		if (func_ns)
			func_ns[f - prog->funcs] += ns;
	}
	out->nsites = p->nsites;
	out->est_cost = p->est_cost_ns;
}

bool static_eval__weights(void *ctx, size_t func, const struct cfg_func *f, double *w)
{
	const struct static_profile *sp = ctx;
	const struct sp_func *sf;

	if (func >= sp->nfuncs || !sp->funcs[func].efreq)
		return false;
	sf = &sp->funcs[func];
	for (uint32_t e = 0; e < f->nedges; e++)
		w[e] = sf->efreq[e] + 1e-6;
	w[f->nedges] = 1.0 + 1e-6;
	return true;
}
