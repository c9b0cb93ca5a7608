/*
 * The whole-program static profile (see static_profile.h): per-function analyses, then the
 * call graph with its virtual root, then Algorithm 3.
 */
#include "static_profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/dominators.h"
#include "cfg/loops.h"
#include "dempster_shafer.h"
#include "global_freq.h"
#include "local_freq.h"

static int analyse_func(struct sp_func *sf, struct bh_decoder *d, const struct cfg_func *f,
			size_t i, const double *rates, sp_probs_fn probs_fn, void *ctx)
{
	struct cfg_domtree dom = { 0 }, pdom = { 0 };
	struct cfg_loops lp = { 0 };
	int err = -ENOMEM;

	sf->prob = calloc(f->nedges + 1, sizeof(double));
	sf->efreq = calloc(f->nedges + 1, sizeof(double));
	sf->bfreq = calloc(f->nblocks + 1, sizeof(double));
	if (!sf->prob || !sf->efreq || !sf->bfreq)
		return -ENOMEM;
	if (!f->nblocks)
		return 0;
	if (cfg_dom__compute(&dom, f) || cfg_postdom__compute(&pdom, f) ||
	    cfg_loops__compute(&lp, f, &dom))
		goto out;
	if ((err = branch_heuristics__func(&sf->bh, d, f, &lp, &pdom)) ||
	    (err = ds__branch_probs(f, &lp, &sf->bh, rates, sf->prob)))
		goto out;
	if ((err = local_freq__compute_limited(f, &lp, sf->prob, sf->bfreq, sf->efreq,
					       probs_fn && probs_fn(ctx, i, f, &sf->bh, sf->prob) ?
					       LF_LIMITS_MEASURED : LF_LIMITS_ESTIMATE)))
		goto out;
	err = 0;
out:
	cfg_loops__free(&lp);
	cfg_dom__free(&dom);
	cfg_dom__free(&pdom);
	return err;
}

static int cmp_call(const void *a, const void *b)
{
	const struct sp_call *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

/* Local frequency of call site CL of F: its block's, or its tail-call edge's. */
static double call_freq(const struct cfg_func *f, const struct sp_func *sf,
			const struct cfg_call *cl)
{
	const struct cfg_block *cb = &f->blocks[cl->block];
	double lf = 0;

	if (!cl->tail)
		return sf->bfreq[cl->block];
	for (uint32_t k = 0; k < cb->nsucc; k++) {
		uint32_t e = f->succ[cb->first_succ + k];
		const struct cfg_edge *ce = &f->edges[e];

		if (ce->kind == EDGE_TAIL_CALL &&
		    (cl->indirect ? (ce->flags & CFG_EDGE_INDIRECT) != 0 :
				    ce->target == cl->target))
			lf += sf->efreq[e];
	}
	return lf;
}

/* The C runtime's functions that no direct call reaches but no pointer in the program
 * calls either. */
static bool startup_func(const char *name)
{
	static const char *const names[] = {
		"_start", "_init", "_fini", "frame_dummy", "register_tm_clones",
		"deregister_tm_clones", "__do_global_dtors_aux", "__libc_csu_init",
		"__libc_csu_fini", "_dl_relocate_static_pie",
	};

	for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

/* Collects the call-graph edges of PROG into SP->calls, merged per (caller, callee). */
static int collect_calls(struct static_profile *sp, const struct cfg_program *prog)
{
	size_t cap = 0, n = 0;

	for (size_t i = 0; i < prog->nfuncs; i++)
		cap += prog->funcs[i].ncalls;
	sp->calls = calloc(cap ? cap : 1, sizeof(*sp->calls));
	if (!sp->calls)
		return -ENOMEM;
	for (size_t i = 0; i < prog->nfuncs; i++) {
		const struct cfg_func *f = &prog->funcs[i];
		const struct sp_func *sf = &sp->funcs[i];

		for (uint32_t c = 0; c < f->ncalls; c++) {
			const struct cfg_call *cl = &f->calls[c];
			const struct cfg_func *g;
			double lf = 0;

			if (cl->block >= f->nblocks)
				continue;
			if (cl->indirect && !cl->external) {
				sp->funcs[i].indirect += call_freq(f, sf, cl);
				continue;
			}
			if (cl->indirect || !cl->target)
				continue;
			g = cfg_program__func_at(prog, cl->target);
			if (!g)
				continue;
			lf = call_freq(f, sf, cl);
			sp->calls[n++] = (struct sp_call){ .from = (uint32_t)i,
							   .to = (uint32_t)(g - prog->funcs),
							   .lfreq = lf };
		}
	}
	qsort(sp->calls, n, sizeof(*sp->calls), cmp_call);
	/* Merge duplicates. */
	size_t w = 0;

	for (size_t r = 0; r < n; r++) {
		if (w && sp->calls[w - 1].from == sp->calls[r].from &&
		    sp->calls[w - 1].to == sp->calls[r].to)
			sp->calls[w - 1].lfreq += sp->calls[r].lfreq;
		else
			sp->calls[w++] = sp->calls[r];
	}
	sp->ncalls = (uint32_t)w;
	return 0;
}

/* Marks every function reached from V by direct calls. */
static void mark_reached(const struct static_profile *sp, const uint32_t *first, uint32_t v,
			 bool *reached, uint32_t *queue)
{
	uint32_t qh = 0, qt = 0;

	reached[v] = true;
	queue[qt++] = v;
	while (qh < qt) {
		uint32_t x = queue[qh++];

		for (uint32_t c = first[x]; c < first[x + 1]; c++)
			if (!reached[sp->calls[c].to]) {
				reached[sp->calls[c].to] = true;
				queue[qt++] = sp->calls[c].to;
			}
	}
}

/* Builds the call graph with a virtual root (node nfuncs) and runs Algorithm 3. */
static int call_freqs(struct static_profile *sp, const struct cfg_program *prog)
{
	size_t n = prog->nfuncs, root = n, ncand = 0;
	double total_ind = 0;
	uint32_t first_root;
	struct gf_call *gc = calloc(sp->ncalls + 3 * n + 1, sizeof(*gc));
	double *cfreq = calloc(n + 1, sizeof(double));
	double *gfreq = calloc(sp->ncalls + 3 * n + 1, sizeof(double));
	bool *called = calloc(n + 1, sizeof(bool)), *reached = calloc(n + 1, sizeof(bool));
	uint32_t *queue = calloc(n + 1, sizeof(uint32_t)), *first = calloc(n + 2, sizeof(uint32_t));
	uint32_t ng = 0;
	int err = -ENOMEM;

	if (!gc || !cfreq || !gfreq || !called || !reached || !queue || !first)
		goto out;
	for (uint32_t c = 0; c < sp->ncalls; c++) {
		gc[ng++] = (struct gf_call){ sp->calls[c].from, sp->calls[c].to,
					     sp->calls[c].lfreq };
		if (sp->calls[c].from != sp->calls[c].to)
			called[sp->calls[c].to] = true;
	}
	/* calls are sorted by caller: first[f] .. first[f + 1] */
	for (uint32_t c = 0; c < sp->ncalls; c++)
		first[sp->calls[c].from + 1]++;
	for (size_t v = 0; v < n; v++)
		first[v + 1] += first[v];
	/* Roots: main, then the functions no direct call reaches (called through pointers,
	 * startup code), then whatever is still not reached (cycles entered only through
	 * pointers). */
	first_root = ng;
	if (sp->main_func >= 0) {
		gc[ng++] = (struct gf_call){ (uint32_t)root, (uint32_t)sp->main_func, 1.0 };
		mark_reached(sp, first, (uint32_t)sp->main_func, reached, queue);
	}
	for (int pass = 0; pass < 2; pass++)
		for (size_t v = 0; v < n; v++) {
			if (reached[v] || (pass == 0 && called[v]))
				continue;
			gc[ng++] = (struct gf_call){ (uint32_t)root, (uint32_t)v, SP_ROOT_CALLS };
			mark_reached(sp, first, (uint32_t)v, reached, queue);
		}
	if ((err = global_freq__calls((uint32_t)n + 1, (uint32_t)root, gc, ng, cfreq, gfreq)))
		goto out;
	/* Calls through pointers, one step: the invocations of every indirect call site (from
	 * the estimate above) are shared by the candidates, added to their root calls, and the
	 * estimate is made again. (A node for "any pointer" in the graph would close cycles
	 * through most of an interpreter, whose cyclic probabilities multiply.) */
	for (size_t v = 0; v < n; v++) {
		total_ind += cfreq[v] * sp->funcs[v].indirect;
		ncand += !called[v] && (long)v != sp->main_func &&
			 !startup_func(prog->funcs[v].name);
	}
	if (ncand && total_ind > 0) {
		for (uint32_t c = first_root; c < ng; c++)
			if (gc[c].from == root && (long)gc[c].to != sp->main_func &&
			    !called[gc[c].to] && !startup_func(prog->funcs[gc[c].to].name))
				gc[c].lfreq += total_ind / (double)ncand;
		if ((err = global_freq__calls((uint32_t)n + 1, (uint32_t)root, gc, ng, cfreq,
					      gfreq)))
			goto out;
	}
	for (size_t v = 0; v < n; v++)
		sp->funcs[v].invocations = cfreq[v];
	for (uint32_t c = 0; c < sp->ncalls; c++)
		sp->calls[c].gfreq = gfreq[c];
out:
	free(gc);
	free(cfreq);
	free(gfreq);
	free(called);
	free(reached);
	free(queue);
	free(first);
	return err;
}

int static_profile__compute(struct static_profile *sp, const struct cfg_program *prog,
			    const double *rates)
{
	return static_profile__compute_with(sp, prog, rates, NULL, NULL);
}

int static_profile__compute_with(struct static_profile *sp, const struct cfg_program *prog,
				 const double *rates, sp_probs_fn probs_fn, void *ctx)
{
	struct bh_decoder d;
	const struct cfg_func *m;
	int err;

	memset(sp, 0, sizeof(*sp));
	if (rates)
		memcpy(sp->rates, rates, sizeof(sp->rates));
	else
		bh__default_rates(sp->rates);
	if ((err = bh_decoder__open(&d, bh_code__elf, prog->img)))
		return err;
	sp->nfuncs = prog->nfuncs;
	sp->funcs = calloc(prog->nfuncs ? prog->nfuncs : 1, sizeof(*sp->funcs));
	err = -ENOMEM;
	if (!sp->funcs)
		goto out;
	for (size_t i = 0; i < prog->nfuncs; i++)
		if ((err = analyse_func(&sp->funcs[i], &d, &prog->funcs[i], i, sp->rates,
					probs_fn, ctx)))
			goto out;
	m = cfg_program__find(prog, "main");
	sp->main_func = m ? (long)(m - prog->funcs) : -1;
	if ((err = collect_calls(sp, prog)) || (err = call_freqs(sp, prog)))
		goto out;
	err = 0;
out:
	bh_decoder__close(&d);
	if (err)
		static_profile__free(sp);
	return err;
}

void static_profile__free(struct static_profile *sp)
{
	for (size_t i = 0; sp->funcs && i < sp->nfuncs; i++) {
		bh_func__free(&sp->funcs[i].bh);
		free(sp->funcs[i].prob);
		free(sp->funcs[i].efreq);
		free(sp->funcs[i].bfreq);
	}
	free(sp->funcs);
	free(sp->calls);
	memset(sp, 0, sizeof(*sp));
}
