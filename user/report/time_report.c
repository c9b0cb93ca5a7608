/*
 * `edgeprof report --time` (see time_report.h): opens the profiled binary (checked by
 * build-id), rebuilds its CFG, matches every profiled function to it, builds each function's
 * FCDG and computes TIME and VAR callees first (Tarjan's strongly connected components of the
 * direct call graph; a recursive component is iterated to the fixed point of its means),
 * then prints per function and per loop the mean, standard deviation, coefficient of
 * variation and share of the program's time, the counter comparison, and on request one
 * function's FCDG (text or DOT).
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "user/builtin.h"
#include "user/session/decode_cache.h"
#include "cfg/dispatch.h"
#include "cfg/dominators.h"
#include "cfg/error.h"
#include "cfg/fcdg.h"
#include "cfg/loops.h"
#include "estimators/cost_model.h"
#include "estimators/sarkar.h"
#include "estimators/sarkar_counters.h"
#include "user/util/json_out.h"
#include "user/util/log.h"
#include "user/report/time_report.h"

#define MAX_SCC_ROUNDS 10000
#define SCC_TOLERANCE 1e-12
#define MAX_DISPATCH_ROUNDS 16

struct ext_cost {
	char *name;
	double cost;
};

struct cost_setup {
	struct cost_model model;
	const char *name; /* "insns", "cycles" or the file */
	bool insns;
	struct ext_cost *ext; /* costs of calls into code outside the binary, by name */
	size_t next;
	double ext_default;
};

struct ftime {
	const struct profile_func *pf;
	struct cfg_func *cf;
	const char *skip;   /* why no time at all */
	const char *approx; /* why only a mean */
	bool built, has_fcdg, done, recursive, computed, has_disp;
	struct cfg_dispatch disp;  /* when F is irreducible */
	const struct cfg_func *gf; /* the graph of the FCDG: cf or disp.f */
	uint32_t ndispatch;	   /* dispatch blocks added */
	struct cfg_domtree dom;
	struct cfg_loops lp;
	struct fcdg g;
	struct sarkar_result r;
	double *base;		 /* per block: its own instructions' cost */
	double *cost, *cost_var; /* per ECFG node */
	int64_t *ecount, *bcount;
	struct loop_moments *mom;
	double calls, mean, var, self;
	double entries;	 /* recursive: calls from outside its call cycle (its SCC) */
	double ext_time; /* all calls x the cost of its calls out of the binary */
	char *cycle;	 /* recursive: the call cycle in words ("fib -> fib") */
	uint32_t scc;	 /* recursive: the index of its component's root (members share it) */
	bool var_capped; /* VAR lowered to the most that CALLS calls of mean MEAN allow */
	uint64_t dyn_indirect, dyn_external, dyn_unprofiled, dyn_recursive; /* calls made */
	uint64_t dyn_rep;	/* rep-prefixed string instructions executed */
	bool exact_expected;	/* see exactness() */
	uint32_t freq_mismatch; /* blocks whose NODE_FREQ x calls is not their count */
	unsigned causes;	/* CAUSE_* bits: why the insns mean may differ from a count */
	struct sarkar_counters sc;
	bool sc_ok;
	double naive_incr, chord_incr, probe_incr;
	uint32_t nchord_counters, nprobe_counters;
	/* Tarjan */
	int32_t index, low;
	bool onstack;
	uint32_t *callees;
	uint32_t ncallees;
};

/* Why a function's insns-model mean may not be its instructions per call (own or callees'). */
enum {
	CAUSE_INDIRECT = 1,  /* calls through pointers: the callee's cost is unknown (0) */
	CAUSE_RECURSIVE = 2, /* recursive, or calls a recursive function (a mean over depths) */
	CAUSE_REP = 4,	     /* rep string instructions: one cost per execution */
	CAUSE_EXTERNAL = 8,  /* calls out of the binary: a cost per callee from --cost FILE */
	CAUSE_UNPROFILED = 16,
	CAUSE_APPROX = 32,    /* counts not exact */
	CAUSE_CALL_SITE = 64, /* a callee's cost depends on the call site */
};

static const char *const cause_names[] = {"indirect",	"recursive", "rep",	 "external",
					  "unprofiled", "approx",    "call-site"};

struct ctx {
	const struct profile *p;
	const struct time_opts *o;
	struct elf_image img;
	struct cfg_program prog;
	struct cost_setup cs;
	struct ftime *ft;
	size_t n;
	/* Tarjan */
	int32_t next_index;
	uint32_t *stack;
	size_t sp;
	uint32_t nloop_stats;	/* loops with measured moments (from the profile or FILE) */
	uint32_t nloop_profile; /* of them, from the profile's "loops" */
	uint32_t nloop_file;	/* of them, from --loop-stats FILE */
	uint32_t nloop_unused;	/* the profile's moments that fit no loop of the timed graph */
	int err;
};

/* --- cost model ------------------------------------------------------------------------ */

static const char *strip_suffix(const char *name, char *buf, size_t size)
{
	const char *at = strchr(name, '@');

	if (!at)
		return name;
	snprintf(buf, size, "%.*s", (int)(at - name), name);
	return buf;
}

static bool ext_lookup(const struct cost_setup *cs, const char *name, double *cost)
{
	char buf[256];

	if (!name)
		return false;
	name = strip_suffix(name, buf, sizeof(buf));
	for (size_t i = 0; i < cs->next; i++) {
		if (!strcmp(cs->ext[i].name, name)) {
			*cost = cs->ext[i].cost;
			return true;
		}
	}
	return false;
}

static int cost_setup__load_file(struct cost_setup *cs, const char *path)
{
	json_error_t jerr;
	json_t *root = json_load_file(path, 0, &jerr), *v, *cls, *ext;
	const char *key;
	bool cycles = true;

	if (!root)
		return pr_err("'%s': %s (line %d)", path, jerr.text, jerr.line);
	if (!json_is_object(root)) {
		json_decref(root);
		return pr_err("'%s': not a JSON object", path);
	}
	v = json_object_get(root, "base");
	if (v && (!json_is_string(v) || (strcmp(json_string_value(v), "insns") &&
					 strcmp(json_string_value(v), "cycles")))) {
		json_decref(root);
		return pr_err("'%s': \"base\" must be \"insns\" or \"cycles\"", path);
	}
	if (v)
		cycles = !strcmp(json_string_value(v), "cycles");
	if (cost_model__init(&cs->model, cycles)) {
		json_decref(root);
		return pr_err("cannot open capstone");
	}
	cs->insns = !cycles;
	cls = json_object_get(root, "classes");
	if (cls && !json_is_object(cls)) {
		json_decref(root);
		return pr_err("'%s': \"classes\" must be an object", path);
	}
	json_object_foreach(cls, key, v)
	{
		int c = cost_class__from_name(key);

		if (c < 0 || !json_is_number(v) || json_number_value(v) < 0) {
			json_decref(root);
			return pr_err(
			    "'%s': class '%s': unknown class or not a non-negative number", path,
			    key);
		}
		cs->model.cost[c] = json_number_value(v);
		if (json_number_value(v) != 1.0)
			cs->insns = false;
	}
	ext = json_object_get(root, "external");
	if (ext && !json_is_object(ext)) {
		json_decref(root);
		return pr_err("'%s': \"external\" must be an object", path);
	}
	if (ext) {
		cs->ext = calloc(json_object_size(ext) + 1, sizeof(*cs->ext));
		if (!cs->ext) {
			json_decref(root);
			return pr_err("out of memory");
		}
	}
	json_object_foreach(ext, key, v)
	{
		if (!json_is_number(v) || json_number_value(v) < 0) {
			json_decref(root);
			return pr_err("'%s': external '%s': not a non-negative number", path, key);
		}
		cs->ext[cs->next].name = strdup(key);
		cs->ext[cs->next++].cost = json_number_value(v);
	}
	v = json_object_get(root, "external_default");
	if (v && (!json_is_number(v) || json_number_value(v) < 0)) {
		json_decref(root);
		return pr_err("'%s': \"external_default\" must be a non-negative number", path);
	}
	cs->ext_default = v ? json_number_value(v) : 0;
	json_decref(root);
	return 0;
}

static int cost_setup__init(struct cost_setup *cs, const char *what)
{
	memset(cs, 0, sizeof(*cs));
	cs->name = what ? what : "cycles";
	if (!strcmp(cs->name, "insns") || !strcmp(cs->name, "cycles")) {
		cs->insns = !strcmp(cs->name, "insns");
		if (cost_model__init(&cs->model, !cs->insns))
			return pr_err("cannot open capstone");
		return 0;
	}
	return cost_setup__load_file(cs, cs->name);
}

static void cost_setup__release(struct cost_setup *cs)
{
	for (size_t i = 0; i < cs->next; i++)
		free(cs->ext[i].name);
	free(cs->ext);
	cost_model__release(&cs->model);
}

/* --- per function ------------------------------------------------------------------------ */

static void ftime__release(struct ftime *t)
{
	if (t->built) {
		sarkar__release(&t->r);
		fcdg__free(&t->g);
		cfg_loops__free(&t->lp);
		cfg_dom__free(&t->dom);
	}
	if (t->has_disp)
		cfg_dispatch__free(&t->disp);
	free(t->base);
	free(t->cost);
	free(t->cost_var);
	free(t->ecount);
	free(t->bcount);
	free(t->mom);
	free(t->callees);
	free(t->cycle);
}

/* Index into ctx->ft of the profiled function at ADDR, or -1. */
static long func_index(const struct ctx *c, uint64_t addr)
{
	const struct profile_func *pf = profile__func_at(c->p, addr);

	return pf ? pf - c->p->funcs : -1;
}

/* Matches T's profile to its CFG and builds its FCDG. Sets t->skip or t->approx. */
static int ftime__prepare(struct ctx *c, struct ftime *t)
{
	const struct profile_func *pf = t->pf;
	struct cfg_func *cf = cfg_program__func_at(&c->prog, pf->addr);
	uint32_t i;
	int ret;

	t->cf = cf;
	if (pf->status == PLAN_EXCLUDED) {
		t->skip = pf->reason ? pf->reason : "not profiled";
		return 0;
	}
	if (!cf || cf->nblocks != pf->nblocks || cf->nedges != pf->nedges) {
		t->skip = "the profile does not match the binary's CFG";
		return 0;
	}
	for (i = 0; i < cf->nblocks; i++)
		if (cf->blocks[i].start != pf->blocks[i].addr)
			break;
	for (uint32_t e = 0; i == cf->nblocks && e < cf->nedges; e++)
		if (cf->edges[e].from != pf->edges[e].from || cf->edges[e].to != pf->edges[e].to)
			i = 0;
	if (i != cf->nblocks) {
		t->skip = "the profile does not match the binary's CFG";
		return 0;
	}
	if (pf->count == COUNT_UNKNOWN) {
		t->skip = "invocations unknown";
		return 0;
	}
	t->calls = (double)pf->count;
	t->ecount = malloc((cf->nedges + 1) * sizeof(*t->ecount));
	t->bcount = malloc((cf->nblocks + 1) * sizeof(*t->bcount));
	t->base = malloc((cf->nblocks + 1) * sizeof(*t->base));
	if (!t->ecount || !t->bcount || !t->base)
		return -ENOMEM;
	for (i = 0; i < cf->nedges; i++) {
		t->ecount[i] = pf->edges[i].count;
		if (pf->edges[i].count == COUNT_UNKNOWN)
			t->skip = "some edge counts are unknown (block counts only)";
	}
	for (i = 0; i < cf->nblocks; i++) {
		t->bcount[i] = pf->blocks[i].count;
		if (pf->blocks[i].count == COUNT_UNKNOWN)
			t->skip = "some block counts are unknown";
		t->base[i] = cost_model__block(&c->cs.model, &c->img, cf, i);
		for (uint32_t k = 0; k < cf->blocks[i].ninsns && pf->blocks[i].count > 0; k++)
			if (cost_model__is_rep(&c->cs.model, &c->img,
					       cf->insns[cf->blocks[i].first_insn + k].addr))
				t->dyn_rep += (uint64_t)pf->blocks[i].count;
	}
	if (t->skip)
		return 0;
	if (pf->nviolations)
		t->approx = "flow conservation fails: counts not exact";
	else if (pf->nvirt)
		t->approx = "frames left or entered without call/return (virtual edges)";

	t->gf = cf;
	ret = cfg_dom__compute(&t->dom, cf);
	if (!ret)
		ret = cfg_loops__compute(&t->lp, cf, &t->dom);
	if (ret)
		return ret;
	t->built = true;
	if (!t->lp.reducible) {
		/* Irreducible: dispatch blocks make it reducible with exact counts. */
		t->has_disp = true;
		ret = cfg_dispatch__build(&t->disp, cf, MAX_DISPATCH_ROUNDS);
		if (ret == -ENOMEM)
			return ret;
		if (!ret) {
			struct cfg_func *gf = &t->disp.f;
			int64_t *ec = realloc(t->ecount, (gf->nedges + 1) * sizeof(*ec));
			int64_t *bc;
			double *base;

			if (!ec)
				return -ENOMEM;
			t->ecount = ec;
			bc = realloc(t->bcount, (gf->nblocks + 1) * sizeof(*bc));
			if (!bc)
				return -ENOMEM;
			t->bcount = bc;
			base = realloc(t->base, (gf->nblocks + 1) * sizeof(*base));
			if (!base)
				return -ENOMEM;
			t->base = base;
			for (i = cf->nblocks; i < gf->nblocks; i++)
				t->base[i] = 0;
			cfg_dispatch__counts(&t->disp, t->ecount, t->bcount, pf->count);
			cfg_loops__free(&t->lp);
			cfg_dom__free(&t->dom);
			ret = cfg_dom__compute(&t->dom, gf);
			if (!ret)
				ret = cfg_loops__compute(&t->lp, gf, &t->dom);
			if (ret) {
				t->built = false;
				return ret;
			}
			t->gf = gf;
			t->ndispatch = gf->nblocks - cf->nblocks;
		}
	}
	ret = fcdg__build(&t->g, t->gf, &t->lp);
	if (ret == -ENOMEM)
		return ret;
	if (ret) {
		t->approx = !t->lp.reducible ? "irreducible beyond dispatch blocks: mean only"
					     : "a block cannot reach the exit: mean only (no FCDG)";
		return 0;
	}
	t->has_fcdg = true;
	t->cost = calloc(t->g.nnodes, sizeof(double));
	t->cost_var = calloc(t->g.nnodes, sizeof(double));
	if (!t->cost || !t->cost_var)
		return -ENOMEM;
	return 0;
}

/* Mean and variance of one call from T at call record K (tail or not); adds to the dynamic
 * counts of calls whose callee's cost is unknown when COUNT is set. */
static void callee_cost(struct ctx *c, struct ftime *t, const struct cfg_call *k, double n,
			double *mean, double *var)
{
	long j;

	*mean = 0;
	*var = 0;
	/* A call through a memory slot the CFG calls external but cannot name (a function
	 * pointer in data, not a GOT entry) is a call by pointer. */
	if ((k->external && k->name) || (!k->target && k->name)) {
		if (!ext_lookup(&c->cs, k->name, mean))
			*mean = c->cs.ext_default;
		t->dyn_external += (uint64_t)n;
		t->ext_time += n * *mean;
		return;
	}
	if (!k->target || k->external) {
		t->dyn_indirect += (uint64_t)n;
		return;
	}
	j = func_index(c, k->target);
	if (j < 0 || c->ft[j].skip) {
		t->dyn_unprofiled += (uint64_t)n;
		return;
	}
	if (c->ft[j].onstack)
		t->dyn_recursive += (uint64_t)n; /* same strongly connected component */
	if (!c->ft[j].computed) {
		if (!c->ft[j].onstack)
			t->dyn_unprofiled += (uint64_t)n;
		return;
	}
	*mean = c->ft[j].mean;
	/* within a recursive component the variance is not modelled (see solve_scc) */
	*var = isnan(c->ft[j].var) || c->ft[j].onstack ? 0 : c->ft[j].var;
}

/* The call record of a tail-call edge E of F (its block's tail call), or NULL. */
static const struct cfg_call *tail_call_of(const struct cfg_func *f, uint32_t e)
{
	for (uint32_t i = 0; i < f->ncalls; i++)
		if (f->calls[i].tail && f->calls[i].block == f->edges[e].from)
			return &f->calls[i];
	return NULL;
}

/* Computes T's mean and variance with the callees' current values. */
static int ftime__evaluate(struct ctx *c, struct ftime *t)
{
	const struct cfg_func *cf = t->cf;
	double *extra = calloc(t->gf->nblocks + 1, sizeof(double));
	double *extra_var = calloc(t->gf->nblocks + 1, sizeof(double));
	double *tc = calloc(cf->nedges + 1, sizeof(double)), *tc_var;
	double total = 0, self = 0;
	uint32_t i;
	int ret = 0;

	tc_var = calloc(cf->nedges + 1, sizeof(double));
	if (!extra || !extra_var || !tc || !tc_var) {
		ret = -ENOMEM;
		goto out;
	}
	t->dyn_external = t->dyn_indirect = t->dyn_unprofiled = t->dyn_recursive = 0;
	t->ext_time = 0;
	for (i = 0; i < cf->ncalls; i++) {
		const struct cfg_call *k = &cf->calls[i];
		double m, v;

		if (k->tail)
			continue;
		callee_cost(c, t, k, (double)(t->bcount[k->block] > 0 ? t->bcount[k->block] : 0),
			    &m, &v);
		extra[k->block] += m;
		extra_var[k->block] += v;
	}
	for (i = 0; i < cf->nedges; i++) {
		const struct cfg_edge *ce = &cf->edges[i];
		struct cfg_call tmp;
		const struct cfg_call *k;

		if (ce->kind != EDGE_TAIL_CALL)
			continue;
		k = tail_call_of(cf, i);
		if (ce->target) {
			tmp = (struct cfg_call){.target = ce->target, .tail = 1};
			if (k)
				tmp.external = k->external, tmp.name = k->name;
			k = &tmp;
		}
		if (k)
			callee_cost(c, t, k, (double)(t->ecount[i] > 0 ? t->ecount[i] : 0), &tc[i],
				    &tc_var[i]);
	}
	for (i = 0; i < cf->nblocks; i++) {
		double n = t->bcount[i] > 0 ? (double)t->bcount[i] : 0;

		total += n * (t->base[i] + extra[i]);
		self += n * t->base[i];
	}
	for (i = 0; i < cf->nedges; i++)
		total += (t->ecount[i] > 0 ? (double)t->ecount[i] : 0) * tc[i];
	t->self = t->calls > 0 ? self / t->calls : 0;
	if (!t->has_fcdg) {
		t->mean = t->calls > 0 ? total / t->calls : 0;
		t->var = NAN;
		goto out;
	}
	for (i = 0; i < t->g.nnodes; i++) {
		const struct fcdg_node *nd = &t->g.nodes[i];

		t->cost[i] = t->cost_var[i] = 0;
		if (nd->type == FCDG_OTHER) {
			t->cost[i] = t->base[nd->block] + extra[nd->block];
			t->cost_var[i] = extra_var[nd->block];
		} else if (nd->type == FCDG_TAILCALL) {
			t->cost[i] = tc[nd->edge];
			t->cost_var[i] = tc_var[nd->edge];
		}
	}
	{
		struct sarkar_input in = {.g = &t->g,
					  .edge_count = t->ecount,
					  .block_count = t->bcount,
					  .calls = t->calls,
					  .cost = t->cost,
					  .cost_var = t->cost_var,
					  .moments = t->mom,
					  .iid_iterations = c->o->iid_loops};

		if (t->r.time)
			sarkar__release(&t->r);
		ret = sarkar__compute(&t->r, &in);
		if (ret)
			goto out;
		t->mean = t->calls > 0 ? t->r.time[fcdg__start(&t->g)] : 0;
		t->var = t->calls > 0 ? t->r.var[fcdg__start(&t->g)] : 0;
		/* Self-check: the top-down recurrences give every block its measured count. */
		t->freq_mismatch = 0;
		for (i = 0; i < cf->nblocks && t->calls > 0; i++) {
			double want = t->bcount[i] > 0 ? (double)t->bcount[i] : 0;

			if (fabs(t->r.node_freq[i] * t->calls - want) > 1e-6 * (want + 1))
				t->freq_mismatch++;
		}
	}
out:
	free(extra);
	free(extra_var);
	free(tc);
	free(tc_var);
	return ret;
}

/* Counter comparison for T (needs its FCDG and first evaluation). */
static int ftime__counters(struct ctx *c, struct ftime *t, size_t idx)
{
	const struct profile *p = c->p;

	t->naive_incr = (double)t->pf->block_total;
	for (uint32_t k = 0; k < p->ncounters; k++) {
		if (p->counter_defs[k].func != idx)
			continue;
		t->probe_incr += (double)p->counters[k];
		t->nprobe_counters++;
	}
	/* Dispatch blocks add conditions that a profile of the real CFG would not count. */
	if (!t->has_fcdg || t->ndispatch)
		return 0;
	if (chords__optimal(t->cf, t->ecount, t->pf->count, &t->nchord_counters, &t->chord_incr))
		return -ENOMEM;
	if (sarkar_counters__plan(&t->sc, &t->g, t->r.total_freq, NULL))
		return -ENOMEM;
	t->sc_ok = true;
	return 0;
}

/* --- call graph order ----------------------------------------------------------------- */

static int collect_callees(struct ctx *c, struct ftime *t)
{
	const struct cfg_func *cf = t->cf;
	uint32_t n = 0;

	if (!cf || t->skip)
		return 0;
	t->callees = malloc((cf->ncalls + cf->nedges + 1) * sizeof(*t->callees));
	if (!t->callees)
		return -ENOMEM;
	for (uint32_t i = 0; i < cf->ncalls; i++) {
		long j = cf->calls[i].target && !cf->calls[i].external
			     ? func_index(c, cf->calls[i].target)
			     : -1;

		if (j >= 0)
			t->callees[n++] = (uint32_t)j;
	}
	for (uint32_t e = 0; e < cf->nedges; e++) {
		long j = cf->edges[e].kind == EDGE_TAIL_CALL && cf->edges[e].target
			     ? func_index(c, cf->edges[e].target)
			     : -1;

		if (j >= 0)
			t->callees[n++] = (uint32_t)j;
	}
	t->ncallees = n;
	return 0;
}

/*
 * Whether T's insns-model mean must equal the instructions it executes per call, callees
 * included: exact counts, not recursive, no calls by pointer, outside the profile or out of
 * it, no rep-prefixed string instruction executed, and every callee G exact itself and either
 * called only from T (all of G's invocations come from T's call sites) or of constant cost
 * (no loops, variance 0). Otherwise the call-site independence of rule 2 may not hold.
 */
static void exactness(struct ctx *c, struct ftime *t)
{
	const struct cfg_func *cf = t->cf;
	uint32_t nk = 0;
	struct {
		long j;
		double n;
	} *k = NULL;

	t->exact_expected = false;
	t->causes = (t->dyn_indirect ? CAUSE_INDIRECT : 0) | (t->recursive ? CAUSE_RECURSIVE : 0) |
		    (t->dyn_rep ? CAUSE_REP : 0) | (t->dyn_external ? CAUSE_EXTERNAL : 0) |
		    (t->dyn_unprofiled ? CAUSE_UNPROFILED : 0) |
		    (t->approx || t->freq_mismatch ? CAUSE_APPROX : 0);
	if (t->skip || !cf)
		return;
	k = calloc(cf->ncalls + cf->nedges + 1, sizeof(*k));
	if (!k)
		return;
	for (uint32_t i = 0; i < cf->ncalls; i++)
		if (!cf->calls[i].tail && cf->calls[i].target && !cf->calls[i].external)
			k[nk++] = (typeof(*k)){func_index(c, cf->calls[i].target),
					       (double)t->bcount[cf->calls[i].block]};
	for (uint32_t e = 0; e < cf->nedges; e++)
		if (cf->edges[e].kind == EDGE_TAIL_CALL && cf->edges[e].target)
			k[nk++] =
			    (typeof(*k)){func_index(c, cf->edges[e].target), (double)t->ecount[e]};
	t->exact_expected = !t->causes && t->has_fcdg;
	for (uint32_t i = 0; i < nk; i++) {
		const struct ftime *g;
		double from_t = 0;

		if (k[i].j < 0 || k[i].n <= 0)
			continue;
		g = &c->ft[k[i].j];
		if (g->onstack) /* the same recursive component */
			continue;
		t->causes |= g->causes | (g->recursive ? CAUSE_RECURSIVE : 0);
		for (uint32_t m = 0; m < nk; m++)
			if (k[m].j == k[i].j)
				from_t += k[m].n;
		if (!g->exact_expected || (from_t != g->calls && (g->lp.nloops || g->var != 0))) {
			t->exact_expected = false;
			if (g->exact_expected)
				t->causes |= CAUSE_CALL_SITE;
		}
	}
	if (t->causes)
		t->exact_expected = false;
	free(k);
}

#define MAX_SCC_DIRECT 2000 /* larger recursive components: iterated, not solved */

/* Dynamic calls T makes to function J (direct and tail calls). */
static double calls_to(const struct ctx *c, const struct ftime *t, long j)
{
	const struct cfg_func *cf = t->cf;
	double n = 0;

	for (uint32_t i = 0; i < cf->ncalls; i++)
		if (!cf->calls[i].tail && cf->calls[i].target && !cf->calls[i].external &&
		    t->bcount[cf->calls[i].block] > 0 && func_index(c, cf->calls[i].target) == j)
			n += (double)t->bcount[cf->calls[i].block];
	for (uint32_t e = 0; e < cf->nedges; e++)
		if (cf->edges[e].kind == EDGE_TAIL_CALL && cf->edges[e].target &&
		    t->ecount[e] > 0 && func_index(c, cf->edges[e].target) == j)
			n += (double)t->ecount[e];
	return n;
}

/* Solves A X = B in place (A is N x N, row-major; B becomes X) by Gaussian elimination with
 * partial pivoting. Returns 0, or -1 when A is singular. */
static int solve_dense(double *a, double *b, uint32_t n)
{
	for (uint32_t col = 0; col < n; col++) {
		uint32_t piv = col;

		for (uint32_t r = col + 1; r < n; r++)
			if (fabs(a[(size_t)r * n + col]) > fabs(a[(size_t)piv * n + col]))
				piv = r;
		if (fabs(a[(size_t)piv * n + col]) < 1e-12)
			return -1;
		if (piv != col) {
			for (uint32_t k = 0; k < n; k++) {
				double x = a[(size_t)col * n + k];

				a[(size_t)col * n + k] = a[(size_t)piv * n + k];
				a[(size_t)piv * n + k] = x;
			}
			double x = b[col];

			b[col] = b[piv];
			b[piv] = x;
		}
		for (uint32_t r = col + 1; r < n; r++) {
			double f = a[(size_t)r * n + col] / a[(size_t)col * n + col];

			if (f == 0)
				continue;
			for (uint32_t k = col; k < n; k++)
				a[(size_t)r * n + k] -= f * a[(size_t)col * n + k];
			b[r] -= f * b[col];
		}
	}
	for (uint32_t r = n; r-- > 0;) {
		double x = b[r];

		for (uint32_t k = r + 1; k < n; k++)
			x -= a[(size_t)r * n + k] * b[k];
		b[r] = x / a[(size_t)r * n + r];
	}
	return 0;
}

/*
 * The means of a recursive component MEMBERS[0..M) as a linear system (the way Sarkar treats
 * a call: its cost is the callee's mean), from the measured call counts: each member's mean is
 * its own time S (callees outside the component at their means) plus, for each member g it
 * calls, (its calls to g / its calls) x g's mean: (I - R) X = S. Solved directly (no iteration
 * that a deep recursion slows to a crawl). Its entries (calls from outside the component)
 * times X add up to the component's whole time, so X is the time per entry into the cycle:
 * exact for a member that is the component's only entry, a model value otherwise. Sets each
 * member's mean to X and its entries. Returns 0, 1 when the system cannot be solved (the
 * caller iterates instead), or -ENOMEM.
 */
static int solve_recursive(struct ctx *c, const uint32_t *members, uint32_t m)
{
	double *a = NULL, *x = NULL;
	long *pos = NULL;
	uint32_t n = 0;
	int ret = -ENOMEM;

	if (m > MAX_SCC_DIRECT)
		return 1;
	a = calloc((size_t)m * m + 1, sizeof(*a));
	x = calloc(m + 1, sizeof(*x));
	pos = malloc((c->n + 1) * sizeof(*pos));
	if (!a || !x || !pos)
		goto out;
	for (size_t i = 0; i < c->n; i++)
		pos[i] = -1;
	for (uint32_t k = 0; k < m; k++)
		if (!c->ft[members[k]].skip)
			pos[members[k]] = n++;
	/* S: every member's mean with the component's means at 0 (not computed yet). */
	for (uint32_t k = 0; k < m; k++) {
		struct ftime *t = &c->ft[members[k]];

		if (t->skip)
			continue;
		ret = ftime__evaluate(c, t);
		if (ret)
			goto out;
		x[pos[members[k]]] = t->mean;
		t->entries = t->calls;
	}
	for (uint32_t k = 0; k < m; k++) {
		struct ftime *t = &c->ft[members[k]];
		long r = pos[members[k]];

		if (r < 0)
			continue;
		a[(size_t)r * n + r] += 1;
		for (uint32_t j = 0; j < m; j++) {
			long col = pos[members[j]];
			double calls;

			if (col < 0)
				continue;
			calls = calls_to(c, t, members[j]);
			c->ft[members[j]].entries -= calls;
			if (t->calls > 0)
				a[(size_t)r * n + col] -= calls / t->calls;
		}
	}
	ret = 1;
	if (solve_dense(a, x, n))
		goto out;
	for (uint32_t k = 0; k < m; k++) {
		struct ftime *t = &c->ft[members[k]];

		if (pos[members[k]] < 0)
			continue;
		if (!isfinite(x[pos[members[k]]]) || x[pos[members[k]]] < 0)
			goto out;
		t->mean = x[pos[members[k]]];
		t->computed = true;
		if (t->entries < 0)
			t->entries = 0;
	}
	/* Once more with the solution, for everything else (and as a check). */
	for (uint32_t k = 0; k < m; k++) {
		struct ftime *t = &c->ft[members[k]];
		double want = t->mean;

		if (t->skip)
			continue;
		ret = ftime__evaluate(c, t);
		if (ret)
			goto out;
		if (fabs(t->mean - want) > 1e-6 * (fabs(want) + 1))
			t->approx = "recursive: the call counts and the block counts disagree";
	}
	ret = 0;
out:
	free(a);
	free(x);
	free(pos);
	return ret;
}

/* The call cycle of the recursive component MEMBERS[0..M) in words, malloc'd (NULL when out
 * of memory): "f -> f", "f -> g -> f", or "N functions: f, g, h, ...". */
static char *cycle_text(const struct ctx *c, const uint32_t *members, uint32_t m)
{
	char buf[512];
	size_t len = 0;

	if (m == 1) {
		snprintf(buf, sizeof(buf), "%s -> %s", c->ft[members[0]].pf->name,
			 c->ft[members[0]].pf->name);
	} else if (m == 2) {
		snprintf(buf, sizeof(buf), "%s -> %s -> %s", c->ft[members[1]].pf->name,
			 c->ft[members[0]].pf->name, c->ft[members[1]].pf->name);
	} else {
		len = (size_t)snprintf(buf, sizeof(buf), "%u functions:", m);
		for (uint32_t k = m; k-- > 0 && len < sizeof(buf);) {
			if (m - k > 6) {
				snprintf(buf + len, sizeof(buf) - len, ", ...");
				break;
			}
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s %s",
						k == m - 1 ? "" : ",", c->ft[members[k]].pf->name);
		}
	}
	return strdup(buf);
}

/* VAR of T as a variance of its CALLS calls: never negative, and at most what calls of this
 * mean allow (one call taking all of their time: MEAN^2 (CALLS - 1)); flagged when lowered. */
static void cap_variance(struct ftime *t)
{
	double most;

	if (isnan(t->var))
		return;
	most = t->mean * t->mean * (t->calls > 1 ? t->calls - 1 : 0);
	if (t->var < 0) {
		t->var_capped = t->var < -1e-9 * (t->mean * t->mean + 1);
		t->var = 0;
	} else if (t->var > most * (1 + 1e-12)) {
		t->var = most;
		t->var_capped = true;
	}
}

/* Computes the strongly connected component rooted at V once all its callees are done. */
static int solve_scc(struct ctx *c, uint32_t v)
{
	uint32_t *members, m = 0, round;
	bool self_call = false, solved = false;
	int ret = 0;

	members = malloc((c->sp + 1) * sizeof(*members));
	if (!members)
		return -ENOMEM;
	do {
		uint32_t w = c->stack[--c->sp];

		members[m++] = w;
		if (w == v)
			break;
	} while (c->sp);
	for (uint32_t k = 0; k < c->ft[v].ncallees; k++)
		self_call |= c->ft[v].callees[k] == v;
	for (uint32_t k = 0; k < m; k++) {
		c->ft[members[k]].recursive = m > 1 || self_call;
		c->ft[members[k]].mean = 0;
		c->ft[members[k]].var = 0;
	}
	/* Recursive: the means as a linear system of the call counts. */
	if (m > 1 || self_call) {
		ret = solve_recursive(c, members, m);
		if (ret < 0)
			goto out;
		solved = ret == 0;
		for (uint32_t k = 0; k < m; k++) {
			c->ft[members[k]].cycle = cycle_text(c, members, m);
			c->ft[members[k]].scc = v;
			if (!solved)
				c->ft[members[k]].entries = NAN; /* not known: no share */
		}
	}
	/* Non-recursive: one evaluation. Recursive, when the system could not be solved:
	 * iterate the means. */
	for (round = 0; !solved && round < (m > 1 || self_call ? MAX_SCC_ROUNDS : 1); round++) {
		double change = 0;

		for (uint32_t k = 0; k < m; k++) {
			struct ftime *t = &c->ft[members[k]];
			double old = t->mean;

			if (t->skip)
				continue;
			ret = ftime__evaluate(c, t);
			if (ret)
				goto out;
			t->computed = true;
			if (fabs(t->mean - old) > change * (1 + fabs(t->mean)))
				change = fabs(t->mean - old) / (1 + fabs(t->mean));
		}
		if (round && change < SCC_TOLERANCE)
			break;
	}
	if (round == MAX_SCC_ROUNDS)
		for (uint32_t k = 0; k < m; k++)
			c->ft[members[k]].approx = "recursive: the means did not converge";
	ret = 0;
	/* The variance of a recursive function would need the distribution of the recursion
	 * depth, which Sarkar does not model (and the iteration of the means does not give):
	 * not computed; its callers take it as 0. */
	if (m > 1 || self_call)
		for (uint32_t k = 0; k < m; k++)
			c->ft[members[k]].var = NAN;
	for (uint32_t k = 0; k < m; k++)
		cap_variance(&c->ft[members[k]]);
	for (uint32_t k = 0; k < m; k++) {
		c->ft[members[k]].onstack = false;
		c->ft[members[k]].done = true;
	}
	for (uint32_t k = 0; k < m; k++)
		exactness(c, &c->ft[members[k]]);
out:
	free(members);
	return ret;
}

static int tarjan(struct ctx *c, uint32_t v)
{
	struct ftime *t = &c->ft[v];
	int ret;

	t->index = t->low = c->next_index++;
	c->stack[c->sp++] = v;
	t->onstack = true;
	for (uint32_t k = 0; k < t->ncallees; k++) {
		uint32_t w = t->callees[k];

		if (c->ft[w].index < 0) {
			ret = tarjan(c, w);
			if (ret)
				return ret;
			if (c->ft[w].low < t->low)
				t->low = c->ft[w].low;
		} else if (c->ft[w].onstack && c->ft[w].index < t->low) {
			t->low = c->ft[w].index;
		}
	}
	if (t->low == t->index)
		return solve_scc(c, v);
	return 0;
}

/* --- loop statistics input -------------------------------------------------------------- */

static int parse_hex(json_t *v, uint64_t *out)
{
	const char *s = json_string_value(v);
	char *end;

	if (!s || strncmp(s, "0x", 2))
		return -1;
	errno = 0;
	*out = strtoull(s + 2, &end, 16);
	return *end || errno || end == s + 2 ? -1 : 0;
}

/* Loop L of T, by its header's address: its index, or -1. */
static int32_t loop_at(const struct ftime *t, uint64_t header)
{
	for (uint32_t k = 0; k < t->lp.nloops; k++)
		if (t->gf->blocks[t->lp.loops[k].header].start == header)
			return (int32_t)k;
	return -1;
}

/* Whether the measured moments PL fit loop L of T's timed graph (which may have dispatch
 * blocks): its entries are the flow into its header from outside it, its trips the header's
 * count. */
static bool moments_fit(const struct ftime *t, uint32_t l, const struct profile_loop *pl)
{
	uint32_t h = t->lp.loops[l].header;
	int64_t in = 0;

	for (uint32_t e = 0; e < t->gf->nedges; e++) {
		const struct cfg_edge *ce = &t->gf->edges[e];

		if (ce->to != h || cfg_loops__contains(&t->lp, l, ce->from))
			continue;
		if (t->ecount[e] < 0)
			return false;
		in += t->ecount[e];
	}
	return (uint64_t)in == pl->entries && t->bcount[h] >= 0 &&
	       (uint64_t)t->bcount[h] == pl->sum;
}

/* Takes the trip-count moments the profile holds (`run --loop-stats`) for every timed
 * function. Returns 0 or -ENOMEM. */
static int profile_moments(struct ctx *c)
{
	for (size_t i = 0; i < c->n; i++) {
		struct ftime *t = &c->ft[i];

		if (!t->pf->nloops || !t->has_fcdg)
			continue;
		for (uint32_t k = 0; k < t->pf->nloops; k++) {
			const struct profile_loop *pl = &t->pf->loops[k];
			int32_t l = loop_at(t, pl->header);

			if (l < 0 || !moments_fit(t, (uint32_t)l, pl)) {
				pr_debug("%s: the loop at 0x%" PRIx64 " of the profile is no loop of the "
					 "timed graph with the same entries and trips",
					 t->pf->name, pl->header);
				c->nloop_unused++;
				continue;
			}
			if (!t->mom) {
				t->mom = calloc(t->lp.nloops, sizeof(*t->mom));
				if (!t->mom)
					return -ENOMEM;
			}
			t->mom[l] = (struct loop_moments){ .entries = pl->entries,
							   .sum = (double)pl->sum,
							   .sumsq = pl->sumsq };
			if (pl->entries)
				c->nloop_profile++;
		}
	}
	return 0;
}

/* Counts the loops with measured moments. */
static void count_moments(struct ctx *c)
{
	c->nloop_stats = 0;
	for (size_t i = 0; i < c->n; i++)
		for (uint32_t k = 0; c->ft[i].mom && k < c->ft[i].lp.nloops; k++)
			c->nloop_stats += c->ft[i].mom[k].entries != 0;
}

/* Reads {"loops":[{"func":ADDR,"header":ADDR,"entries":N,"sum":S,"sumsq":Q}...]}: these
 * moments replace the profile's for the same loops. */
static int load_loop_stats(struct ctx *c, const char *path)
{
	json_error_t jerr;
	json_t *root = json_load_file(path, 0, &jerr), *loops, *l;
	size_t i;

	if (!root)
		return pr_err("'%s': %s (line %d)", path, jerr.text, jerr.line);
	loops = json_object_get(root, "loops");
	if (!json_is_array(loops)) {
		json_decref(root);
		return pr_err("'%s': no \"loops\" array", path);
	}
	json_array_foreach(loops, i, l)
	{
		uint64_t fa, ha;
		json_t *en = json_object_get(l, "entries"), *su = json_object_get(l, "sum");
		json_t *sq = json_object_get(l, "sumsq");
		long j;
		struct ftime *t;

		if (parse_hex(json_object_get(l, "func"), &fa) ||
		    parse_hex(json_object_get(l, "header"), &ha) || !json_is_integer(en) ||
		    json_integer_value(en) < 0 || !json_is_number(su) || !json_is_number(sq)) {
			json_decref(root);
			return pr_err(
			    "'%s': loop %zu: needs func, header (\"0x..\"), entries, sum, "
			    "sumsq",
			    path, i);
		}
		j = func_index(c, fa);
		if (j < 0 || !c->ft[j].has_fcdg) {
			pr_warn("'%s': loop %zu: no timed function at 0x%" PRIx64 ", ignored", path,
				i, fa);
			continue;
		}
		t = &c->ft[j];
		bool found = false;

		for (uint32_t k = 0; k < t->lp.nloops; k++) {
			if (t->gf->blocks[t->lp.loops[k].header].start != ha)
				continue;
			found = true;
			if (!t->mom) {
				t->mom = calloc(t->lp.nloops, sizeof(*t->mom));
				if (!t->mom) {
					json_decref(root);
					return pr_err("out of memory");
				}
			}
			t->mom[k] =
			    (struct loop_moments){.entries = (uint64_t)json_integer_value(en),
						  .sum = json_number_value(su),
						  .sumsq = json_number_value(sq)};
			c->nloop_file++;
		}
		if (!found)
			pr_warn("'%s': loop %zu: no loop header at 0x%" PRIx64 " in %s, ignored",
				path, i, ha, t->pf->name);
	}
	json_decref(root);
	return 0;
}

/* --- output ----------------------------------------------------------------------------- */

static double cv_of(double mean, double var)
{
	return mean > 0 && !isnan(var) ? sqrt(var > 0 ? var : 0) / mean : NAN;
}

/* The time T accounts for in the program's: its calls x its mean, or for a recursive
 * function its entries into the call cycle x its time per entry (NAN when not known). */
static double func_time(const struct ftime *t)
{
	if (t->recursive)
		return t->entries * t->mean;
	return t->calls * t->mean;
}

static double total_time(const struct ctx *c)
{
	double total = 0;

	for (size_t i = 0; i < c->n; i++)
		if (c->ft[i].computed)
			total += c->ft[i].calls * c->ft[i].self + c->ft[i].ext_time;
	return total;
}

struct rank {
	size_t i;
	double v;
};

static int cmp_rank(const void *a, const void *b)
{
	const struct rank *x = a, *y = b;

	return x->v < y->v ? 1 : x->v > y->v ? -1 : (x->i > y->i) - (x->i < y->i);
}

static const char *flags_str(const struct ftime *t, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s%s%s%s%s", t->ndispatch ? " irreducible(dispatch)" : "",
		 t->recursive ? " recursive" : "", t->dyn_rep ? " rep-string" : "",
		 t->approx ? " approx" : "", t->dyn_indirect ? " indirect-calls" : "",
		 t->dyn_external ? " external-calls" : "",
		 t->dyn_unprofiled ? " unprofiled-callees" : "");
	return buf;
}

struct totals {
	double naive_c, naive_i, sarkar_c, sarkar_i, chord_c, chord_i, probe_c, probe_i;
	uint32_t nfuncs, ntruncated;
};

static void counter_totals(const struct ctx *c, struct totals *tt)
{
	memset(tt, 0, sizeof(*tt));
	for (size_t i = 0; i < c->n; i++) {
		const struct ftime *t = &c->ft[i];

		if (!t->sc_ok)
			continue;
		tt->nfuncs++;
		tt->naive_c += t->pf->nblocks;
		tt->naive_i += t->naive_incr;
		tt->sarkar_c += t->sc.counters;
		tt->sarkar_i += t->sc.increments;
		tt->chord_c += t->nchord_counters;
		tt->chord_i += t->chord_incr;
		tt->probe_c += t->nprobe_counters;
		tt->probe_i += t->probe_incr;
		tt->ntruncated += t->sc.truncated;
	}
}

static void print_text(FILE *out, struct ctx *c)
{
	const struct profile *p = c->p;
	double total = total_time(c);
	struct rank *rk = calloc(c->n + 1, sizeof(*rk));
	size_t nr = 0, shown, nloops = 0, nrec_shown = 0;
	uint32_t nirr = 0, nrec = 0, nskip = 0, nappr = 0, ntimed = 0, nmis = 0, nfcdg = 0;
	uint32_t ndisp = 0;
	struct totals tt;
	char fb[128];

	if (!rk) {
		c->err = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < c->n; i++) {
		const struct ftime *t = &c->ft[i];

		if (t->skip) {
			nskip++;
			continue;
		}
		if (!t->computed)
			continue;
		ntimed++;
		nirr += !t->has_fcdg;
		nrec += t->recursive;
		nappr += t->approx && t->has_fcdg;
		nfcdg += t->has_fcdg;
		ndisp += t->ndispatch != 0;
		nmis += t->freq_mismatch != 0;
		if (t->calls > 0)
			rk[nr++] =
			    (struct rank){.i = i, .v = isnan(func_time(t)) ? 0 : func_time(t)};
	}
	qsort(rk, nr, sizeof(*rk), cmp_rank);
	fprintf(out, "binary:        %s (build-id %s)\n", p->binary_path,
		*p->build_id ? p->build_id : "none");
	fprintf(out, "cost model:    %s%s\n", c->cs.name,
		c->cs.insns ? " (instructions executed; a call costs the callee's mean)"
			    : " (per-class instruction costs; a call costs the callee's mean)");
	fprintf(out, "loop model:    %s\n",
		c->o->iid_loops
		    ? "independent iterations (VAR = E[N] VAR(S) + VAR(N) E[S]^2)"
		    : "Sarkar's product (VAR(N x S), every iteration of an entry alike: "
		      "an upper bound when iterations vary independently)");
	if (c->nloop_stats)
		fprintf(out,
			"loop variance: measured trip-count moments for %u loops (%u from the "
			"profile, %u from --loop-stats FILE); VAR(FREQ) = 0 for the others\n",
			c->nloop_stats, c->nloop_profile, c->nloop_file);
	if (c->nloop_unused)
		fprintf(out,
			"               (%u measured loops of the profile fit no loop of the timed "
			"graph and are not used)\n",
			c->nloop_unused);
	else
		fprintf(out,
			"loop variance: not measured: VAR(FREQ) = 0 for every loop (Sarkar's "
			"simplification), so loop standard deviations are from the body only\n");
	if (p->has_loop_stats)
		fprintf(out,
			"loop probes:   %u of %u loops probed by `run --loop-stats`, %" PRIu64
			" sites, %" PRIu64 " extra probe hits, est. %.3f s of traps (counting "
			"probes: %.3f s)\n",
			p->loop_stats.measured, p->loop_stats.loops, p->loop_stats.sites,
			p->loop_stats.hits, p->loop_stats.est_trap_ns / 1e9, p->est_trap_ns / 1e9);
	fprintf(out,
		"functions:     %u timed (%u mean only: irreducible or no exit, %u "
		"recursive: time per entry of their call cycle, %u approximate counts), "
		"%u skipped\n",
		ntimed, nirr, nrec, nappr, nskip);
	if (ndisp)
		fprintf(out,
			"irreducible:   %u functions made reducible by dispatch blocks (one per "
			"irreducible region; counts stay exact)\n",
			ndisp);
	fprintf(out,
		"FCDG check:    NODE_FREQ x calls = the block's count in %u of %u functions "
		"with an FCDG%s\n",
		nfcdg - nmis, nfcdg, nmis ? " (the others: counts not exact)" : "");
	fprintf(out, "program time:  %.6g (sum of calls x own cost over the timed functions, and of "
		"their calls out of the binary)\n\n",
		total);
	fprintf(out, "%12s %14s %14s %9s %7s  %-18s %s\n", "calls", "mean", "stddev", "cv", "share",
		"function", "flags");
	shown = nr < c->o->top ? nr : c->o->top;
	for (size_t k = 0; k < shown; k++) {
		const struct ftime *t = &c->ft[rk[k].i];
		char ab[HEXLEN];

		char sd[32] = "-", cv[32] = "-";

		char mean[32] = "-", share[32] = "-";

		if (!isnan(t->var)) {
			snprintf(sd, sizeof(sd), "%.6g", sqrt(t->var));
			snprintf(cv, sizeof(cv), "%.3g", cv_of(t->mean, t->var));
		}
		if (!t->recursive)
			snprintf(mean, sizeof(mean), "%.6g", t->mean);
		if (total > 0 && !isnan(func_time(t)))
			snprintf(share, sizeof(share), "%.2f%%", 100.0 * func_time(t) / total);
		fprintf(out, "%12.0f %14s %14s %9s %7s  %-18s %s%s%s\n", t->calls, mean, sd, cv,
			share, t->pf->name, jout_addr(ab, t->pf->addr),
			flags_str(t, fb, sizeof(fb)), t->var_capped ? " stddev-capped" : "");
		nrec_shown += t->recursive;
	}
	if (nrec_shown) {
		fprintf(out,
			"\nrecursive functions: mean per call and stddev not computed (the profile "
			"has no distribution of the recursion depth); time per entry into the call "
			"cycle (a call from outside it), from the call counts as a linear system, "
			"and share by entries:\n");
		fprintf(out, "%12s %12s %14s %7s  %-18s %s\n", "entries", "calls", "time/entry",
			"share", "function", "call cycle");
		for (size_t k = 0; k < shown; k++) {
			const struct ftime *t = &c->ft[rk[k].i];
			char share[32] = "-";

			if (!t->recursive)
				continue;
			if (total > 0 && !isnan(func_time(t)))
				snprintf(share, sizeof(share), "%.2f%%",
					 100.0 * func_time(t) / total);
			fprintf(out, "%12.0f %12.0f %14.6g %7s  %-18s %s%s\n", t->entries, t->calls,
				t->mean, share, t->pf->name, t->cycle ? t->cycle : "?",
				t->approx ? " (approx)" : "");
		}
	}
	/* Loops: by share of the program's time. */
	for (size_t i = 0; i < c->n; i++)
		if (c->ft[i].has_fcdg && c->ft[i].computed)
			nloops += c->ft[i].lp.nloops;
	free(rk);
	rk = calloc(nloops + 1, sizeof(*rk));
	if (!rk) {
		c->err = -ENOMEM;
		return;
	}
	nr = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct ftime *t = &c->ft[i];

		if (!t->has_fcdg || !t->computed || t->recursive) /* share not computed */
			continue;
		for (uint32_t l = 0; l < t->lp.nloops; l++) {
			uint32_t ph = t->g.preheader[l];

			rk[nr++] = (struct rank){
			    .i = i << 20 | l, .v = t->calls * t->r.node_freq[ph] * t->r.time[ph]};
		}
	}
	qsort(rk, nr, sizeof(*rk), cmp_rank);
	shown = nr < c->o->top ? nr : c->o->top;
	fprintf(out, "\nloops (per entry; trips = header executions per entry):\n");
	fprintf(out, "%12s %10s %14s %14s %9s %7s  %-18s %s\n", "entries", "trips", "mean",
		"stddev", "cv", "share", "header", "function");
	for (size_t k = 0; k < shown; k++) {
		const struct ftime *t = &c->ft[rk[k].i >> 20];
		uint32_t l = rk[k].i & 0xfffff, ph = t->g.preheader[l];
		double entries = t->calls * t->r.node_freq[ph];
		char ab[HEXLEN];

		if (rk[k].v <= 0)
			break;
		fprintf(out, "%12.0f %10.4g %14.6g %14.6g %9.3g %6.2f%%  %-18s %s%s\n", entries,
			t->r.freq[t->g.nodes[ph].first_out], t->r.time[ph],
			sarkar__std_dev(&t->r, ph), cv_of(t->r.time[ph], t->r.var[ph]),
			total > 0 ? 100.0 * rk[k].v / total : 0.0,
			jout_addr(ab, t->gf->blocks[t->lp.loops[l].header].start), t->pf->name,
			t->mom && t->mom[l].entries ? " (trip variance measured)" : "");
	}
	free(rk);
	counter_totals(c, &tt);
	fprintf(out,
		"\ncounters over %u functions with an FCDG (static counters, dynamic "
		"increments on this profile):\n",
		tt.nfuncs);
	fprintf(out, "  naive (one per block)               %10.0f %16.0f\n", tt.naive_c,
		tt.naive_i);
	fprintf(out, "  Sarkar (conditions, opt 1 and 2)    %10.0f %16.0f%s\n", tt.sarkar_c,
		tt.sarkar_i, tt.ntruncated ? "  (elimination truncated: upper bound)" : "");
	fprintf(out, "  chords (best tree for this profile) %10.0f %16.0f\n", tt.chord_c,
		tt.chord_i);
	fprintf(out, "  this run's counters (%-6s)         %10.0f %16.0f\n",
		p->mode == PLACEMENT_NAIVE ? "naive" : "chords", tt.probe_c, tt.probe_i);
	if (nskip || nirr) {
		fprintf(out, "\nnot timed or mean only:\n");
		for (size_t i = 0; i < c->n; i++) {
			const struct ftime *t = &c->ft[i];
			char ab[HEXLEN];

			if (!t->skip && t->has_fcdg)
				continue;
			if (!t->skip && !t->computed)
				continue;
			if (t->pf->count == 0 && t->skip)
				continue;
			fprintf(out, "  %-18s %s: %s\n", jout_addr(ab, t->pf->addr), t->pf->name,
				t->skip ? t->skip : t->approx);
		}
	}
}

static json_t *jnum(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static json_t *json_function(struct ctx *c, const struct ftime *t, double total)
{
	json_t *o = json_object(), *fl = json_array(), *loops = NULL, *cnt;
	int err = 0;

	if (!o || !fl) {
		json_decref(o);
		json_decref(fl);
		return NULL;
	}
	jout_set(o, "name", json_string(t->pf->name), &err);
	jout_set(o, "addr", jout_hex(t->pf->addr), &err);
	jout_set(o, "calls", json_integer(t->pf->count < 0 ? 0 : t->pf->count), &err);
	if (t->skip) {
		jout_set(o, "status", json_string("skipped"), &err);
		jout_set(o, "reason", json_string(t->skip), &err);
		json_decref(fl);
		return err ? (json_decref(o), NULL) : o;
	}
	jout_set(o, "status", json_string(t->has_fcdg ? "fcdg" : "mean-only"), &err);
	if (t->recursive) {
		char why[600];

		snprintf(why, sizeof(why), "recursive: call cycle %s", t->cycle ? t->cycle : "?");
		jout_set(o, "mean", json_null(), &err);
		jout_set(o, "stddev", json_null(), &err);
		jout_set(o, "cv", json_null(), &err);
		jout_set(o, "not_computed", json_string(why), &err);
		jout_set(o, "cycle", json_string(t->cycle ? t->cycle : "?"), &err);
		{
			json_t *ms = json_array();

			for (size_t i = 0; ms && i < c->n; i++)
				if (c->ft[i].recursive && c->ft[i].scc == t->scc)
					jout_push(ms, json_string(c->ft[i].pf->name), &err);
			jout_set(o, "cycle_members", ms, &err);
		}
		jout_set(o, "entries", jnum(t->entries), &err);
		jout_set(o, "mean_per_entry", jnum(t->mean), &err);
	} else {
		jout_set(o, "mean", jnum(t->mean), &err);
		jout_set(o, "stddev", jnum(isnan(t->var) ? NAN : sqrt(t->var)), &err);
		jout_set(o, "cv", jnum(cv_of(t->mean, t->var)), &err);
		if (t->var_capped)
			jout_set(o, "stddev_capped", json_true(), &err);
	}
	jout_set(o, "self", jnum(t->self), &err);
	jout_set(o, "share", jnum(total > 0 ? func_time(t) / total : NAN), &err);
	if (t->recursive)
		jout_push(fl, json_string("recursive"), &err);
	if (t->approx)
		jout_push(fl, json_string(t->approx), &err);
	jout_set(o, "flags", fl, &err);
	jout_set(o, "calls_indirect", json_integer((json_int_t)t->dyn_indirect), &err);
	jout_set(o, "calls_external", json_integer((json_int_t)t->dyn_external), &err);
	jout_set(o, "calls_unprofiled", json_integer((json_int_t)t->dyn_unprofiled), &err);
	jout_set(o, "calls_recursive", json_integer((json_int_t)t->dyn_recursive), &err);
	jout_set(o, "rep_string", json_integer((json_int_t)t->dyn_rep), &err);
	jout_set(o, "exact_expected", json_boolean(t->exact_expected), &err);
	if (t->has_fcdg)
		jout_set(o, "node_freq_mismatches", json_integer(t->freq_mismatch), &err);
	if (t->ndispatch)
		jout_set(o, "dispatch_blocks", json_integer(t->ndispatch), &err);
	{
		json_t *ca = json_array();

		for (unsigned b = 0; ca && b < sizeof(cause_names) / sizeof(cause_names[0]); b++)
			if (t->causes & 1u << b)
				jout_push(ca, json_string(cause_names[b]), &err);
		jout_set(o, "inexact_causes", ca, &err);
	}
	{
		/* Calls into code outside the binary: their cost comes from --cost FILE. */
		json_t *xs = json_array();

		for (uint32_t i = 0; xs && i < t->cf->ncalls; i++) {
			const struct cfg_call *k = &t->cf->calls[i];
			int64_t n = t->bcount[k->block];

			if (!k->external || !k->name)
				continue;
			jout_push(xs,
				  json_pack("{s:o,s:s?,s:I,s:b}", "site", jout_hex(k->site), "name",
					    k->name, "count",
					    (json_int_t)(k->tail ? 0
							 : n > 0 ? n
								 : 0),
					    "tail", (int)k->tail),
				  &err);
		}
		jout_set(o, "external_sites", xs, &err);
	}
	if (t->has_fcdg) {
		loops = json_array();
		for (uint32_t l = 0; loops && l < t->lp.nloops; l++) {
			json_t *lo = json_object();
			uint32_t ph = t->g.preheader[l];

			jout_set(lo, "header", jout_hex(t->gf->blocks[t->lp.loops[l].header].start),
				 &err);
			jout_set(lo, "depth", json_integer(t->lp.loops[l].depth), &err);
			jout_set(lo, "entries", jnum(t->calls * t->r.node_freq[ph]), &err);
			jout_set(lo, "trips", jnum(t->r.freq[t->g.nodes[ph].first_out]), &err);
			jout_set(lo, "trips_var", jnum(t->r.freq_var[l]), &err);
			jout_set(lo, "trips_var_measured",
				 json_boolean(t->mom && t->mom[l].entries), &err);
			jout_set(lo, "mean", jnum(t->r.time[ph]), &err);
			jout_set(lo, "stddev", jnum(sarkar__std_dev(&t->r, ph)), &err);
			jout_set(lo, "share",
				 jnum(total > 0 && !t->recursive
					  ? t->calls * t->r.node_freq[ph] * t->r.time[ph] / total
					  : NAN),
				 &err);
			jout_push(loops, lo, &err);
		}
		jout_set(o, "loops", loops, &err);
	}
	cnt = json_pack("{s:{s:i,s:f},s:{s:i,s:f},s:{s:i,s:f},s:{s:i,s:f}}", "naive", "counters",
			(json_int_t)t->pf->nblocks, "increments", t->naive_incr, "sarkar",
			"counters", (json_int_t)(t->sc_ok ? t->sc.counters : 0), "increments",
			t->sc_ok ? t->sc.increments : 0.0, "chords", "counters",
			(json_int_t)t->nchord_counters, "increments", t->chord_incr, "run",
			"counters", (json_int_t)t->nprobe_counters, "increments", t->probe_incr);
	jout_set(o, "counters", cnt, &err);
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static void print_json(FILE *out, struct ctx *c)
{
	const struct profile *p = c->p;
	double total = total_time(c);
	struct totals tt;
	bool first = true;

	fprintf(out, "{\"binary\":{\"path\":");
	{
		json_t *s = json_string(p->binary_path);

		json_dumpf(s, out, JSON_ENCODE_ANY);
		json_decref(s);
	}
	fprintf(out, ",\"build_id\":\"%s\"},\n\"cost\":", p->build_id);
	{
		json_t *s = json_string(c->cs.name);

		json_dumpf(s, out, JSON_ENCODE_ANY);
		json_decref(s);
	}
	fprintf(out,
		",\"loop_model\":\"%s\",\"loop_variance\":\"%s\",\"loops_with_moments\":%u,"
		"\"loops_from_profile\":%u,\"loops_from_file\":%u,\"loops_unused\":%u,",
		c->o->iid_loops ? "independent" : "product",
		c->nloop_stats ? "measured where given, else 0" : "assumed 0", c->nloop_stats,
		c->nloop_profile, c->nloop_file, c->nloop_unused);
	if (c->p->has_loop_stats)
		fprintf(out,
			"\"loop_probes\":{\"loops\":%u,\"measured\":%u,\"sites\":%" PRIu64
			",\"hits\":%" PRIu64 ",\"est_trap_ns\":%.17g},",
			c->p->loop_stats.loops, c->p->loop_stats.measured, c->p->loop_stats.sites,
			c->p->loop_stats.hits, c->p->loop_stats.est_trap_ns);
	fprintf(out, "\"total\":%.17g,\n\"functions\":[\n", total);
	for (size_t i = 0; i < c->n; i++) {
		const struct ftime *t = &c->ft[i];
		json_t *o;

		if (!t->computed && !t->skip)
			continue;
		o = json_function(c, t, total);
		if (!o) {
			c->err = -ENOMEM;
			return;
		}
		if (!first)
			fputs(",\n", out);
		first = false;
		json_dumpf(o, out, JSON_COMPACT);
		json_decref(o);
	}
	counter_totals(c, &tt);
	fprintf(out,
		"\n],\n\"counters\":{\"functions\":%u,\"naive\":{\"counters\":%.0f,"
		"\"increments\":%.0f},\"sarkar\":{\"counters\":%.0f,\"increments\":%.0f},"
		"\"chords\":{\"counters\":%.0f,\"increments\":%.0f},\"run\":{\"counters\":%.0f,"
		"\"increments\":%.0f},\"placement\":\"%s\"}}\n",
		tt.nfuncs, tt.naive_c, tt.naive_i, tt.sarkar_c, tt.sarkar_i, tt.chord_c, tt.chord_i,
		tt.probe_c, tt.probe_i, p->mode == PLACEMENT_NAIVE ? "naive" : "chords");
}

/* A node's name: its block's address or its type (and its loop's header). */
static const char *node_name(const struct ftime *t, uint32_t u, char *buf, size_t size)
{
	const struct fcdg_node *nd = &t->g.nodes[u];
	char ab[HEXLEN];

	switch (nd->type) {
	case FCDG_OTHER:
		if (nd->block >= t->cf->nblocks)
			snprintf(buf, size, "dispatch%u(%s)", u,
				 jout_addr(ab, t->gf->blocks[nd->block].start));
		else
			snprintf(buf, size, "%s", jout_addr(ab, t->cf->blocks[nd->block].start));
		break;
	case FCDG_PREHEADER:
	case FCDG_POSTEXIT:
	case FCDG_LOOPEND:
		snprintf(buf, size, "%s%u(%s)", fcdg_node_type__name(nd->type), u,
			 jout_addr(ab, t->gf->blocks[t->lp.loops[nd->loop].header].start));
		break;
	case FCDG_TAILCALL:
		snprintf(buf, size, "tailcall%u", u);
		break;
	default:
		snprintf(buf, size, "%s", fcdg_node_type__name(nd->type));
	}
	return buf;
}

static const char *label_name(const struct ftime *t, uint32_t cond, char *buf, size_t size)
{
	const struct fcdg_ecfg_edge *ee = &t->g.ecfg_edges[cond];

	if (ee->label == FCDG_LABEL_U)
		return "U";
	if (ee->label == FCDG_LABEL_Z)
		return "Z";
	snprintf(buf, size, "%s#%u", cfg_edge_kind__name(t->gf->edges[ee->cfg_edge].kind),
		 ee->cfg_edge);
	return buf;
}

static int print_fcdg(FILE *out, struct ctx *c, const char *name)
{
	struct cfg_func *cf = cfg_program__find(&c->prog, name);
	long j = cf ? func_index(c, cf->entry) : -1;
	const struct ftime *t;
	char nb[64], nb2[64], lb[64];

	if (j < 0)
		return pr_err("--fcdg: no profiled function '%s'", name);
	t = &c->ft[j];
	if (t->skip || !t->has_fcdg || !t->computed)
		return pr_err("--fcdg: '%s' has no FCDG: %s", name,
			      t->skip	  ? t->skip
			      : t->approx ? t->approx
					  : "not executed");
	if (c->o->dot) {
		fprintf(out, "digraph \"%s\" {\n  node [shape=box fontname=monospace];\n",
			t->pf->name);
		for (uint32_t k = 0; k < t->g.norder; k++) {
			uint32_t u = t->g.order[k];

			fprintf(out, "  n%u [label=\"%s\\n[%.4g, %.6g, %.6g, %.6g, %.6g]\"];\n", u,
				node_name(t, u, nb, sizeof(nb)), t->cost[u], t->r.time[u],
				t->r.et2[u], t->r.var[u], sarkar__std_dev(&t->r, u));
		}
		for (uint32_t e = 0; e < t->g.nedges; e++) {
			const struct fcdg_edge *fe = &t->g.edges[e];

			fprintf(out, "  n%u -> n%u [label=\"%s <%.4g, %.0f>\"%s];\n", fe->from,
				fe->to, label_name(t, fe->cond, lb, sizeof(lb)),
				t->r.freq[fe->cond], t->r.total_freq[fe->cond],
				t->g.ecfg_edges[fe->cond].label == FCDG_LABEL_Z ? " style=dashed"
										: "");
		}
		fprintf(out, "}\n");
		return 0;
	}
	fprintf(out,
		"FCDG of %s: %u nodes, %u edges; [COST, TIME, E[T^2], VAR, STD_DEV] per "
		"node, <FREQ, TOTAL_FREQ> per condition\n",
		t->pf->name, t->g.nnodes, t->g.nedges);
	for (uint32_t k = 0; k < t->g.norder; k++) {
		uint32_t u = t->g.order[k];
		const struct fcdg_node *nd = &t->g.nodes[u];

		fprintf(out, "%-28s [%.4g, %.6g, %.6g, %.6g, %.6g] node_freq %.6g\n",
			node_name(t, u, nb, sizeof(nb)), t->cost[u], t->r.time[u], t->r.et2[u],
			t->r.var[u], sarkar__std_dev(&t->r, u), t->r.node_freq[u]);
		for (uint32_t i = 0; i < nd->nchild; i++) {
			const struct fcdg_edge *fe = &t->g.edges[nd->first_child + i];

			fprintf(out, "    %-16s <%.6g, %.0f> -> %s\n",
				label_name(t, fe->cond, lb, sizeof(lb)), t->r.freq[fe->cond],
				t->r.total_freq[fe->cond], node_name(t, fe->to, nb2, sizeof(nb2)));
		}
	}
	return 0;
}

/* --- entry ------------------------------------------------------------------------------- */

int time_report__run(FILE *out, const struct profile *p, const char *file,
		     const struct time_opts *o)
{
	struct ctx c = {.p = p, .o = o};
	const char *bin = o->binary ? o->binary : p->binary_path;
	int ret = EXIT_INPUT, err;

	if (!bin || !*bin)
		return pr_err("'%s': the profile names no binary", file), EXIT_INPUT;
	if (elf_image__open(&c.img, bin))
		return pr_err("%s", cfg_strerror()), EXIT_INPUT;
	if (profile__check_build_id(p, c.img.build_id))
		goto out_img;
	if (cost_setup__init(&c.cs, o->cost))
		goto out_img;
	if (decode_cache__build(&c.prog, &c.img, true, NULL, NULL)) {
		pr_err("%s", cfg_strerror());
		goto out_cost;
	}
	c.n = p->nfuncs;
	c.ft = calloc(c.n + 1, sizeof(*c.ft));
	c.stack = malloc((c.n + 1) * sizeof(*c.stack));
	if (!c.ft || !c.stack)
		goto nomem;
	for (size_t i = 0; i < c.n; i++) {
		c.ft[i].pf = &p->funcs[i];
		c.ft[i].index = -1;
		err = ftime__prepare(&c, &c.ft[i]);
		if (!err)
			err = collect_callees(&c, &c.ft[i]);
		if (err)
			goto nomem;
	}
	if (profile_moments(&c))
		goto nomem;
	if (o->loop_stats && load_loop_stats(&c, o->loop_stats))
		goto out_all;
	count_moments(&c);
	for (size_t i = 0; i < c.n; i++) {
		if (c.ft[i].index < 0 && tarjan(&c, (uint32_t)i))
			goto nomem;
	}
	for (size_t i = 0; i < c.n; i++)
		if (c.ft[i].computed && ftime__counters(&c, &c.ft[i], i))
			goto nomem;
	if (o->fcdg) {
		if (!print_fcdg(out, &c, o->fcdg))
			ret = EXIT_OK;
		goto out_all;
	}
	if (o->json)
		print_json(out, &c);
	else
		print_text(out, &c);
	if (c.err)
		goto nomem;
	ret = EXIT_OK;
	goto out_all;
nomem:
	pr_err("out of memory");
out_all:
	for (size_t i = 0; c.ft && i < c.n; i++)
		ftime__release(&c.ft[i]);
	free(c.ft);
	free(c.stack);
	cfg_program__free(&c.prog);
out_cost:
	cost_setup__release(&c.cs);
out_img:
	elf_image__close(&c.img);
	return ret;
}
