/*
 * Probe placement (see placement.h): per function, the cost of measuring each edge from each
 * kind of site, a maximum spanning tree (Kruskal, seeded with EXIT->root and with every edge
 * no site can measure), and sites for the chords: a branch site per conditional jump with a
 * chord, else the cheaper of a block site and an entry site. Sites are unique per address;
 * counters are shared where two chords are measured by the same block count. A plan made
 * again after some instructions' classes changed plans only the functions that need it, with
 * the edge weights they were planned with, and renumbers the others' counters.
 */
#include "placement.h"
#include "cfg/array.h"
#include "cfg/dominators.h"
#include "cfg/loops.h"
#include "cfg/sort.h"
#include "union_find.h"
#include "weights.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct site_vec {
	struct probe_site *v;
	size_t n, cap;
};

struct counter_vec {
	struct counter_def *v;
	size_t n, cap;
};

struct planner {
	const struct cfg_program *prog;
	const struct placement_options *opt;
	struct site_vec sites;
	struct counter_vec counters;
	uint32_t nindirect; /* indirect sites so far (their ordinals) */
	/* Every planned site address -> its index + 1 (addresses of all functions so far). */
	uint64_t *addr_keys;
	uint32_t *addr_vals;
	size_t addr_cap, addr_n;
	/* placement__replan: the plan made before (sites sorted by address) and, per function,
	 * whether the new plan keeps its sites (set once the function's turn came). Their
	 * addresses are planned too; the table above holds the sites planned again only. */
	const struct placement *base;
	const bool *kept;
	/* Loops counted by induction, and their accumulator sites (counter: 2 * the loop's
	 * index + 1 for the exit sum, until placement__plan numbers them), and where the
	 * current function's began. */
	struct {
		struct plan_iv *v;
		size_t n, cap;
	} ivs;
	struct {
		struct accum_site *v;
		size_t n, cap;
	} accums;
	size_t mark_iv, mark_acc;
};

static size_t hash_slot(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

/* BASE's site at ADDR, or NULL. */
static const struct probe_site *base_site(const struct placement *base, uint64_t addr)
{
	size_t lo = 0, hi = base->nsites;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (base->sites[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < base->nsites && base->sites[lo].addr == addr ? &base->sites[lo] : NULL;
}

/* Whether a site is planned at ADDR so far. */
static bool site_lookup(const struct planner *p, uint64_t addr)
{
	const struct probe_site *b;
	size_t s;

	if (p->addr_cap)
		for (s = hash_slot(addr, p->addr_cap); p->addr_vals[s];
		     s = (s + 1) & (p->addr_cap - 1))
			if (p->addr_keys[s] == addr)
				return true;
	return p->base && (b = base_site(p->base, addr)) && p->kept[b->func];
}

static int site_remember(struct planner *p, uint64_t addr, uint32_t val)
{
	size_t s, i;

	if ((p->addr_n + 1) * 2 > p->addr_cap) {
		size_t cap = p->addr_cap ? 2 * p->addr_cap : 1024;
		uint64_t *k = malloc(cap * sizeof(*k));
		uint32_t *v = calloc(cap, sizeof(*v));

		if (!k || !v) {
			free(k);
			free(v);
			return -ENOMEM;
		}
		for (i = 0; i < p->addr_cap; i++) {
			if (!p->addr_vals[i])
				continue;
			for (s = hash_slot(p->addr_keys[i], cap); v[s]; s = (s + 1) & (cap - 1))
				;
			k[s] = p->addr_keys[i];
			v[s] = p->addr_vals[i];
		}
		free(p->addr_keys);
		free(p->addr_vals);
		p->addr_keys = k;
		p->addr_vals = v;
		p->addr_cap = cap;
	}
	for (s = hash_slot(addr, p->addr_cap); p->addr_vals[s]; s = (s + 1) & (p->addr_cap - 1))
		if (p->addr_keys[s] == addr) {
			p->addr_vals[s] = val;
			return 0;
		}
	p->addr_keys[s] = addr;
	p->addr_vals[s] = val;
	p->addr_n++;
	return 0;
}

static int push_site(struct planner *p, const struct probe_site *s)
{
	if (array_grow((void **)&p->sites.v, &p->sites.cap, p->sites.n + 1, sizeof(*p->sites.v),
		       256))
		return -ENOMEM;
	p->sites.v[p->sites.n++] = *s;
	return site_remember(p, s->addr, (uint32_t)p->sites.n);
}

static int push_counter(struct planner *p, uint32_t func, uint8_t what, uint32_t id,
			uint32_t site, uint32_t *idx)
{
	if (array_grow((void **)&p->counters.v, &p->counters.cap, p->counters.n + 1,
		       sizeof(*p->counters.v), 256))
		return -ENOMEM;
	*idx = (uint32_t)p->counters.n;
	p->counters.v[p->counters.n++] = (struct counter_def){ .func = func, .what = what,
							       .id = id, .site = site };
	return 0;
}

static const struct cfg_insn *last_insn(const struct cfg_func *f, uint32_t b)
{
	return &f->insns[f->blocks[b].first_insn + f->blocks[b].ninsns - 1];
}

static bool is_branch_block(const struct cfg_func *f, uint32_t b)
{
	return last_insn(f, b)->flow == INSN_JCC && f->blocks[b].nsucc == 2;
}

/* The resolved jump table ending block B whose operand a probe can recompute, or NULL. */
static const struct cfg_jump_table *indirect_table(const struct cfg_func *f, uint32_t b)
{
	const struct cfg_insn *in = last_insn(f, b);

	if (in->flow != INSN_JMP_IND || in->probe_class == PROBE_NEVER)
		return NULL;
	for (uint32_t k = 0; k < f->blocks[b].nsucc; k++)
		if (f->edges[f->succ[f->blocks[b].first_succ + k]].kind != EDGE_SWITCH)
			return NULL;
	for (uint32_t t = 0; t < f->ntables; t++)
		if (f->tables[t].jump == in->addr)
			return f->tables[t].operand_ok ? &f->tables[t] : NULL;
	return NULL;
}

/* The cheapest way to count the table jump IN: an in-process indexed counter (patch_indirect)
 * or its uprobe. Stores the class in *CLS and returns its cost. */
static double indirect_cost(const struct site_costs *c, const struct cfg_insn *in, unsigned *cls)
{
	double u = site_costs__of(c, in->probe_class);

	if (in->patch_indirect && site_costs__of(c, in->patch_indirect) <= u) {
		*cls = in->patch_indirect;
		return site_costs__of(c, in->patch_indirect);
	}
	*cls = in->probe_class;
	return u;
}

/* The cheapest instruction of block B to count it: its index in f->insns, or -1. */
static long cheapest_insn(const struct cfg_func *f, uint32_t b, const struct site_costs *c)
{
	long best = -1;
	double bc = INFINITY;

	for (uint32_t k = 0; k < f->blocks[b].ninsns; k++) {
		const struct cfg_insn *in = &f->insns[f->blocks[b].first_insn + k];
		unsigned cls;
		double cost = site_costs__best(c, in, false, &cls);

		if (cls != PROBE_NEVER && cost < bc) {
			bc = cost;
			best = f->blocks[b].first_insn + k;
		}
	}
	return best;
}

/* The cheapest instruction of block C that can count the edge into it (its index in
 * f->insns), or -1: C needs that one in-edge only (the entry also takes EXIT->root). Any
 * instruction of C runs as often as C is entered (frames stopped or resumed inside C are
 * virtual flow that propagation corrects by the site's address), but not C's conditional or
 * table jump, which may become a branch or jump-table site of its own. */
static long entry_site(const struct cfg_func *f, uint32_t c, const struct site_costs *sc)
{
	const struct cfg_block *b;
	uint32_t n;
	long best = -1;
	double bc = INFINITY;

	if (c >= f->nblocks || c == f->entry_block || f->blocks[c].npred != 1)
		return -1;
	b = &f->blocks[c];
	n = b->ninsns;
	if (is_branch_block(f, c) || indirect_table(f, c))
		n--;
	for (uint32_t k = 0; k < n; k++) {
		const struct cfg_insn *in = &f->insns[b->first_insn + k];
		unsigned cls;
		double cost = site_costs__best(sc, in, false, &cls);

		if (cls != PROBE_NEVER && cost < bc) {
			bc = cost;
			best = b->first_insn + k;
		}
	}
	return best;
}

/* The weight of block B's executions: the sum of its out-edges' weights W. */
static double out_weight(const struct cfg_func *f, uint32_t b, const double *w)
{
	double s = 0;

	for (uint32_t k = 0; k < f->blocks[b].nsucc; k++)
		s += fmax(w[f->succ[f->blocks[b].first_succ + k]], 0);
	return s;
}

static double iv_cost(const struct cfg_func *f, const struct cfg_induction *ind,
		      const struct cfg_iv *iv, const double *w, const struct site_costs *c)
{
	double cost = 0;

	for (uint32_t k = 0; k < iv->nactions; k++) {
		const struct cfg_iv_action *a = &ind->actions[iv->first_action + k];
		unsigned cls = f->insns[a->insn].probe_class;

		if (cls == PROBE_NEVER) /* refused by the kernel since the analysis */
			return INFINITY;
		cost += fmax(out_weight(f, a->block, w), 1e-9) * site_costs__of(c, cls);
	}
	return cost;
}

/* Makes IV (function FI, its block edge a chord) a loop of the plan: its accumulator
 * sites, and FP's block_iv. Returns 0 or -ENOMEM. */
static int count_iv(struct planner *p, size_t fi, struct func_plan *fp, const struct cfg_iv *iv)
{
	const struct cfg_func *f = &p->prog->funcs[fi];
	const struct cfg_induction *ind = p->opt->induction;
	uint32_t k = (uint32_t)p->ivs.n;

	if (!fp->block_iv) {
		fp->block_iv = malloc((f->nblocks + 1) * sizeof(*fp->block_iv));
		if (!fp->block_iv)
			return -ENOMEM;
		for (uint32_t b = 0; b <= f->nblocks; b++)
			fp->block_iv[b] = PLACEMENT_NO_COUNTER;
	}
	if (array_grow((void **)&p->ivs.v, &p->ivs.cap, p->ivs.n + 1, sizeof(*p->ivs.v), 64) ||
	    array_grow((void **)&p->accums.v, &p->accums.cap, p->accums.n + iv->nactions,
		       sizeof(*p->accums.v), 64))
		return -ENOMEM;
	p->ivs.v[p->ivs.n++] = (struct plan_iv){ .iv = iv, .acc_in = 2 * k, .acc_out = 2 * k + 1 };
	for (uint32_t j = 0; j < iv->nactions; j++) {
		const struct cfg_iv_action *a = &ind->actions[iv->first_action + j];

		p->accums.v[p->accums.n++] = (struct accum_site){
			.addr = a->addr, .func = (uint32_t)fi, .kind = a->kind, .cc = a->cc,
			.reg = a->reg, .probe_class = f->insns[a->insn].probe_class,
			.counter = 2 * k + a->out,
			.block = a->block,
		};
	}
	fp->block_iv[iv->block] = k;
	return 0;
}

/* What measuring edge E costs, per invocation, with each kind of site (INFINITY when that
 * kind cannot): a site fires every time its instruction runs, so a branch or jump-table
 * site pays for all executions of its block (W of every out-edge), not only for E's. */
struct edge_pay {
	double branch, block, entry, indirect;
	long block_insn; /* the block site's instruction */
	long entry_insn; /* the entry site's instruction (in the edge's target) */
};

static struct edge_pay edge_pay(const struct cfg_func *f, uint32_t e, const double *w,
				const struct site_costs *c, const bool *split)
{
	const struct cfg_edge *ed = &f->edges[e];
	struct edge_pay p = { INFINITY, INFINITY, INFINITY, INFINITY, -1, -1 };
	double we = fmax(w[e], 1e-9), wb = fmax(out_weight(f, ed->from, w), we);
	unsigned cls;

	if (is_branch_block(f, ed->from))
		p.branch = wb * site_costs__best(c, last_insn(f, ed->from), true, &cls);
	if (f->blocks[ed->from].nsucc == 1 && !split[ed->from] &&
	    (p.block_insn = cheapest_insn(f, ed->from, c)) >= 0)
		p.block = we * site_costs__best(c, &f->insns[p.block_insn], false, &cls);
	if ((p.entry_insn = entry_site(f, ed->to, c)) >= 0)
		p.entry = we * site_costs__best(c, &f->insns[p.entry_insn], false, &cls);
	if (indirect_table(f, ed->from))
		p.indirect = wb * indirect_cost(c, last_insn(f, ed->from), &cls);
	return p;
}

static double pay_min(const struct edge_pay *p)
{
	return fmin(fmin(p->branch, p->block), fmin(p->entry, p->indirect));
}

struct keyed_edge {
	double key;
	double w;     /* tie-break: the heavier edge first */
	uint32_t e;
};

static int cmp_keyed_desc(const void *a, const void *b)
{
	const struct keyed_edge *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	if (x->w != y->w)
		return x->w > y->w ? -1 : 1;
	return x->e < y->e ? -1 : x->e > y->e;
}

/* Sorts KE[0, N), made in order of .e, as cmp_keyed_desc orders them: by two stable radix
 * passes (weight, then cost, each descending) when every cost and weight is a number >= 0 (the
 * bits of which order as the values do), else by qsort. */
static void sort_keyed_edges(struct keyed_edge *ke, size_t n)
{
	size_t i = 0;

	if (n <= 16) {
		sort__keyed(ke, n, sizeof(*ke), cmp_keyed_desc);
		return;
	}
	for (; i < n; i++) {
		if (!(ke[i].key >= 0 && ke[i].w >= 0) || ke[i].e != i)
			break;
		ke[i].key = ke[i].key == 0 ? 0.0 : ke[i].key; /* -0 as +0 */
		ke[i].w = ke[i].w == 0 ? 0.0 : ke[i].w;
	}
	if (i < n) {
		qsort(ke, n, sizeof(*ke), cmp_keyed_desc);
		return;
	}
	sort__by_key_u64(ke, n, sizeof(*ke), offsetof(struct keyed_edge, w), true);
	sort__by_key_u64(ke, n, sizeof(*ke), offsetof(struct keyed_edge, key), true);
}

/* Why a function is not planned with chords (func_plan.reason): every text it can be. */
enum {
	REASON_NOT_SELECTED,
	REASON_NO_CODE,
	REASON_OVERLAP,
	REASON_NAIVE,
	REASON_UNRESOLVED,
	REASON_BAD_CODE,
	REASON_RUNS_OFF,
	REASON_FOREIGN,
	REASON_CYCLE,
	REASON_SHARED,
	NREASONS
};

static const char *const plan_reasons[NREASONS] = {
	[REASON_NOT_SELECTED] = "not selected",
	[REASON_NO_CODE] = "no code",
	[REASON_OVERLAP] = "overlapping instructions",
	[REASON_NAIVE] = "naive placement requested",
	[REASON_UNRESOLVED] = "unresolved indirect jump: block counts only",
	[REASON_BAD_CODE] = "undecodable code: block counts only",
	[REASON_RUNS_OFF] = "control runs past the function's end into other code: block counts only",
	[REASON_FOREIGN] = "another function runs into its code: block counts only",
	[REASON_CYCLE] = "edges no probe site can measure form a cycle: block counts only",
	[REASON_SHARED] = "code shared with another function",
};

int placement__reason_index(const char *reason)
{
	if (!reason)
		return -1;
	for (int i = 0; i < NREASONS; i++)
		if (!strcmp(reason, plan_reasons[i]))
			return i;
	return -2;
}

const char *placement__reason_text(int index)
{
	return index >= 0 && index < NREASONS ? plan_reasons[index] : NULL;
}

/* Counts block B with a COUNT site at instruction index K (shared when already counted). */
static int count_block(struct planner *p, size_t fi, struct func_plan *fp, uint32_t b, long k)
{
	const struct cfg_func *f = &p->prog->funcs[fi];
	const struct cfg_insn *in = &f->insns[k];
	struct probe_site s;
	uint32_t idx;
	unsigned cls;
	int err;

	if (fp->block_counter[b] != PLACEMENT_NO_COUNTER)
		return 0;
	if (site_lookup(p, in->addr))
		return -EEXIST;
	err = push_counter(p, (uint32_t)fi, COUNTS_BLOCK, b, (uint32_t)p->sites.n, &idx);
	if (err)
		return err;
	site_costs__best(&p->opt->costs, in, false, &cls);
	s = (struct probe_site){ .addr = in->addr, .func = (uint32_t)fi, .kind = SITE_COUNT,
				 .probe_class = (uint8_t)cls, .counter = idx,
				 .counter2 = PLACEMENT_NO_COUNTER };
	fp->block_counter[b] = idx;
	return push_site(p, &s);
}

/* A branch site on B's conditional jump, counting both out-edges. */
static int count_branch(struct planner *p, size_t fi, struct func_plan *fp, uint32_t b)
{
	const struct cfg_func *f = &p->prog->funcs[fi];
	const struct cfg_insn *in = last_insn(f, b);
	uint32_t taken = UINT32_MAX, not_taken = UINT32_MAX, ct, cn, k;
	struct probe_site s;
	unsigned cls;
	int err;

	for (k = 0; k < f->blocks[b].nsucc; k++) {
		uint32_t e = f->succ[f->blocks[b].first_succ + k];

		if (f->edges[e].kind == EDGE_NOT_TAKEN)
			not_taken = e;
		else
			taken = e;
	}
	if (taken == UINT32_MAX || not_taken == UINT32_MAX)
		return -EINVAL;
	if (fp->edge_counter[taken] != PLACEMENT_NO_COUNTER)
		return 0;
	if (site_lookup(p, in->addr))
		return -EEXIST;
	err = push_counter(p, (uint32_t)fi, COUNTS_EDGE, taken, (uint32_t)p->sites.n, &ct);
	if (!err)
		err = push_counter(p, (uint32_t)fi, COUNTS_EDGE, not_taken, (uint32_t)p->sites.n,
				   &cn);
	if (err)
		return err;
	fp->edge_counter[taken] = ct;
	fp->edge_counter[not_taken] = cn;
	site_costs__best(&p->opt->costs, in, true, &cls);
	s = (struct probe_site){ .addr = in->addr, .func = (uint32_t)fi, .kind = SITE_BRANCH,
				 .cc = in->cc, .probe_class = (uint8_t)cls, .counter = ct,
				 .counter2 = cn };
	return push_site(p, &s);
}

/* An indirect site on B's table jump, counting each of its out-edges. */
static int count_indirect(struct planner *p, size_t fi, struct func_plan *fp, uint32_t b)
{
	const struct cfg_func *f = &p->prog->funcs[fi];
	const struct cfg_insn *in = last_insn(f, b);
	const struct cfg_jump_table *jt = indirect_table(f, b);
	uint32_t first = 0, idx, k;
	struct probe_site s;
	unsigned cls;
	int err;

	if (!jt || p->nindirect >= (1u << 17))
		return -EINVAL;
	if (fp->edge_counter[f->succ[f->blocks[b].first_succ]] != PLACEMENT_NO_COUNTER)
		return 0;
	if (site_lookup(p, in->addr))
		return -EEXIST;
	for (k = 0; k < f->blocks[b].nsucc; k++) {
		uint32_t e = f->succ[f->blocks[b].first_succ + k];

		err = push_counter(p, (uint32_t)fi, COUNTS_EDGE, e, (uint32_t)p->sites.n, &idx);
		if (err)
			return err;
		if (k == 0)
			first = idx;
		fp->edge_counter[e] = idx;
	}
	indirect_cost(&p->opt->costs, in, &cls);
	s = (struct probe_site){ .addr = in->addr, .func = (uint32_t)fi, .kind = SITE_INDIRECT,
				 .probe_class = (uint8_t)cls, .counter = first,
				 .counter2 = f->blocks[b].nsucc, .ordinal = p->nindirect++,
				 .mem = jt->mem, .scale_log2 = jt->scale_log2, .base = jt->base,
				 .index = jt->index, .disp = jt->disp };
	return push_site(p, &s);
}

static int plan_naive(struct planner *p, size_t fi, struct func_plan *fp)
{
	const struct cfg_func *f = &p->prog->funcs[fi];
	uint32_t b;
	int err;

	for (b = 0; b < f->nblocks; b++) {
		/* The first instruction that may be probed (a block of one unprobeable
		 * instruction stays uncounted: its count comes from its neighbours, if at all). */
		uint32_t k = f->blocks[b].first_insn, end = k + f->blocks[b].ninsns;

		unsigned cls = PROBE_NEVER;

		while (k < end && (site_costs__best(&p->opt->costs, &f->insns[k], false, &cls),
				   cls == PROBE_NEVER))
			k++;
		if (k == end)
			continue;
		err = count_block(p, fi, fp, b, k);
		if (err)
			return err;
	}
	return 0;
}

/* The spanning tree and its chords. Returns 1 when some chord cannot be measured. */
static int plan_chords(struct planner *p, size_t fi, struct func_plan *fp)
{
	const struct cfg_func *f = &p->prog->funcs[fi];
	const struct site_costs *c = &p->opt->costs;
	const struct cfg_longjmp *lj = p->opt->longjmp;
	uint32_t np = lj && lj->active ? lj->first[fi + 1] - lj->first[fi] : 0;
	const struct cfg_pseudo *ps = np ? &lj->v[lj->first[fi]] : NULL;
	const struct cfg_induction *ind = p->opt->induction;
	uint32_t ni0 = ind && ind->first ? ind->first[fi] : 0;
	uint32_t ni = ind && ind->first ? ind->first[fi + 1] - ni0 : 0;
	/* Edges: CFG edges, EXIT->root (ne), pseudo-edge j (ne + 1 + j), the block edge of
	 * pseudo-edge j's block (ne + 1 + np + j), the block edge of counted loop i's step
	 * block (ne + 1 + 2 np + i). Vertices: blocks (b_in), EXIT (nblocks), the b_out of
	 * pseudo-edge j's block (nblocks + 1 + j), of loop i's step block (nblocks + 1 + np +
	 * i). */
	uint32_t ne = f->nedges, nv = f->nblocks + 1, nall = ne + 1 + 2 * np + ni, e;
	uint32_t *parent = NULL, *outv = NULL, ivb = ne + 1 + 2 * np;
	double *ivc = NULL;
	bool *iv_ok = NULL;
	bool *split = NULL;
	long *bins = NULL;
	struct keyed_edge *ke = NULL;
	double *w = fp->weights ? fp->weights : malloc((ne + 1) * sizeof(*w));
	double *cost = malloc((ne + 1) * sizeof(*cost));
	struct edge_pay *pay = malloc((ne + 1) * sizeof(*pay));
	struct cfg_domtree dom = { 0 };
	struct cfg_loops lp = { 0 };
	int err = -ENOMEM;

	ke = malloc(nall * sizeof(*ke));
	parent = malloc((nv + np + ni) * sizeof(*parent));
	ivc = malloc((ni + 1) * sizeof(*ivc));
	iv_ok = calloc(ni + 1, sizeof(*iv_ok));
	outv = malloc(nv * sizeof(*outv));
	split = calloc(nv, sizeof(*split));
	bins = malloc((np + 1) * sizeof(*bins));
	fp->pseudo = ps;
	fp->npseudo = np;
	if (!w || !cost || !ke || !parent || !pay || !outv || !split || !bins || !ivc || !iv_ok)
		goto out;
	for (e = 0; e < nv; e++)
		outv[e] = e;
	for (e = 0; e < np; e++) {
		if (ps[e].block >= f->nblocks || split[ps[e].block]) {
			err = 1; /* one pseudo-edge per block (cfg/longjmp.c makes no other) */
			goto out;
		}
		split[ps[e].block] = true;
		outv[ps[e].block] = nv + e;
	}
	/* A counted loop's step block gets its block edge unless a pseudo-edge split it. */
	for (e = 0; e < ni; e++) {
		uint32_t sb = ind->iv[ni0 + e].block;

		if (sb >= f->nblocks || split[sb])
			continue;
		iv_ok[e] = true;
		split[sb] = true;
		outv[sb] = nv + np + e;
	}
	if (!fp->weights &&
	    (!p->opt->weights || !p->opt->weights(p->opt->weights_ctx, fi, f, w))) {
		err = cfg_dom__compute(&dom, f);
		if (!err)
			err = cfg_loops__compute(&lp, f, &dom);
		if (!err)
			err = weights__ball_larus(f, &lp, w);
		if (err)
			goto out;
	}
	fp->weights = w; /* the function's, whatever its plan (placement__replan's too) */
	for (e = 0; e < ne; e++) {
		pay[e] = edge_pay(f, e, w, c, split);
		cost[e] = pay_min(&pay[e]);
		/* Keep in the tree what is expensive (or impossible) to measure; between edges
		 * that cost the same (a branch site's two outcomes), the heavier. */
		ke[e] = (struct keyed_edge){ .key = cost[e], .w = w[e], .e = e };
	}
	ke[ne] = (struct keyed_edge){ .key = INFINITY, .e = ne }; /* EXIT->root first */
	for (e = 0; e < np; e++) {
		unsigned cls;
		double wb = out_weight(f, ps[e].block, w);

		/* The pseudo-edges come first too (they cannot be measured); a block edge costs
		 * a block counter on its block. */
		ke[ne + 1 + e] = (struct keyed_edge){ .key = INFINITY, .w = INFINITY,
						     .e = ne + 1 + e };
		bins[e] = cheapest_insn(f, ps[e].block, c);
		ke[ne + 1 + np + e] = (struct keyed_edge){
			.key = bins[e] < 0 ? INFINITY
					   : fmax(wb, 1e-9) * site_costs__best(c, &f->insns[bins[e]],
									       false, &cls),
			.w = wb, .e = ne + 1 + np + e
		};
	}
	for (e = 0; e < ni; e++) {
		const struct cfg_iv *iv = &ind->iv[ni0 + e];

		ivc[e] = iv_ok[e] ? iv_cost(f, ind, iv, w, c) : INFINITY;
		ke[ivb + e] = (struct keyed_edge){ .key = p->opt->induction_always && !isinf(ivc[e])
							  ? 0 : ivc[e],
						   .w = iv_ok[e] ? out_weight(f, iv->block, w) : 0,
						   .e = ivb + e };
	}
	sort_keyed_edges(ke, nall);
	/* EXIT->root and the pseudo-edges must be the very first tree edges (a star at EXIT
	 * and EXIT->root, to distinct vertices: no cycle). */
	for (uint32_t first = 0, k = 0; k < nall; k++)
		if (ke[k].e == ne || (ke[k].e > ne && ke[k].e <= ne + np)) {
			struct keyed_edge t = ke[first];

			ke[first++] = ke[k];
			ke[k] = t;
		}
	for (e = 0; e < nv + np + ni; e++)
		parent[e] = e;
	fp->nchords = 0;
	fp->est_cost_iv = 0;
	err = 0;
	for (e = 0; e < nall; e++) {
		uint32_t id = ke[e].e, a, b, ra, rb;

		if (id < ne) {
			a = outv[f->edges[id].from];
			b = f->edges[id].to;
		} else if (id == ne) {
			a = f->nblocks;
			b = f->entry_block;
		} else if (id <= ne + np) {
			const struct cfg_pseudo *q = &ps[id - ne - 1];

			a = q->kind == CFG_PSEUDO_ABANDON ? nv + (id - ne - 1) : f->nblocks;
			b = q->kind == CFG_PSEUDO_ABANDON ? f->nblocks : nv + (id - ne - 1);
		} else if (id >= ivb) {
			if (!iv_ok[id - ivb])
				continue; /* no such edge: its block is not split */
			a = ind->iv[ni0 + id - ivb].block;
			b = nv + np + (id - ivb);
		} else {
			a = ps[id - ne - 1 - np].block;
			b = nv + (id - ne - 1 - np);
		}
		ra = uf_find(parent, a);
		rb = uf_find(parent, b);
		if (ra != rb) {
			parent[ra] = rb;
			if (id <= ne)
				fp->in_tree[id] = true;
			continue;
		}
		if (id <= ne)
			fp->in_tree[id] = false;
		fp->nchords++;
		/* Every chord must be measurable. */
		if ((id < ne && isinf(cost[id])) || (id > ne && id <= ne + np) ||
		    (id > ne + np && id < ivb && bins[id - ne - 1 - np] < 0) ||
		    (id >= ivb && isinf(ivc[id - ivb]))) {
			err = 1;
			goto out;
		}
		if (id >= ivb) {
			err = count_iv(p, fi, fp, &ind->iv[ni0 + id - ivb]);
			fp->est_cost_iv += ivc[id - ivb];
		} else if (id > ne + np)
			err = count_block(p, fi, fp, ps[id - ne - 1 - np].block,
					  bins[id - ne - 1 - np]);
		if (err)
			goto out;
	}
	/* Branch sites first where they are a chord's cheapest way (one probe then measures
	 * every out-edge of its conditional jump, other chords among them for free). */
	for (e = 0; e < ne && !err; e++)
		if (!fp->in_tree[e] && fp->edge_counter[e] == PLACEMENT_NO_COUNTER &&
		    pay[e].branch <= cost[e])
			err = count_branch(p, fi, fp, f->edges[e].from);
	for (e = 0; e < ne && !err; e++) {
		const struct cfg_edge *ed = &f->edges[e];
		const struct edge_pay *q = &pay[e];

		if (fp->in_tree[e] || fp->edge_counter[e] != PLACEMENT_NO_COUNTER)
			continue;
		if (q->block <= q->entry && q->block <= q->indirect && q->block_insn >= 0)
			err = count_block(p, fi, fp, ed->from, q->block_insn);
		else if (!isinf(q->entry) && q->entry <= q->indirect)
			err = count_block(p, fi, fp, ed->to, q->entry_insn);
		else if (!isinf(q->indirect))
			err = count_indirect(p, fi, fp, ed->from);
		else if (!isinf(q->branch))
			err = count_branch(p, fi, fp, ed->from);
		else
			err = 1;
	}
	/* Estimated cost per invocation: the executions of every site times its cost (a branch
	 * or jump-table site runs with every execution of its block). */
	fp->est_cost = fp->est_cost_iv;
	for (uint32_t b = 0; b < f->nblocks; b++) {
		bool counted = false;

		for (uint32_t k2 = 0; k2 < f->blocks[b].nsucc && !counted; k2++)
			counted = fp->edge_counter[f->succ[f->blocks[b].first_succ + k2]] !=
				  PLACEMENT_NO_COUNTER;
		if (counted) {
			unsigned cls;

			fp->est_cost += out_weight(f, b, w) *
					(indirect_table(f, b) ? indirect_cost(c, last_insn(f, b), &cls)
							      : site_costs__best(c, last_insn(f, b), true,
										 &cls));
		}
	}
	for (uint32_t b = 0; b < f->nblocks; b++) {
		double wb = 0;

		if (fp->block_counter[b] == PLACEMENT_NO_COUNTER)
			continue;
		for (uint32_t k2 = 0; k2 < f->blocks[b].npred; k2++)
			wb += w[f->pred[f->blocks[b].first_pred + k2]];
		if (b == f->entry_block)
			wb += w[ne];
		fp->est_cost += wb * site_costs__of(c, p->sites.v[p->counters.v[fp->block_counter[b]].site].probe_class);
	}
out:
	cfg_loops__free(&lp);
	cfg_dom__free(&dom);
	free(ivc);
	free(iv_ok);
	free(outv);
	free(split);
	free(bins);
	if (w != fp->weights)
		free(w);
	free(cost);
	free(pay);
	free(ke);
	free(parent);
	return err;
}

/* Forgets the sites and counters added for a function since the marks (a failed attempt). */
static void rollback(struct planner *p, struct func_plan *fp, const struct cfg_func *f,
		     size_t nsites, size_t ncounters)
{
	for (size_t i = nsites; i < p->sites.n; i++)
		site_remember(p, p->sites.v[i].addr, 0);
	p->sites.n = nsites;
	p->counters.n = ncounters;
	p->ivs.n = p->mark_iv;
	p->accums.n = p->mark_acc;
	free(fp->block_iv);
	fp->block_iv = NULL;
	fp->pseudo = NULL;
	fp->npseudo = 0;
	for (uint32_t e = 0; e <= f->nedges; e++)
		fp->edge_counter[e] = PLACEMENT_NO_COUNTER;
	for (uint32_t b = 0; b < f->nblocks; b++)
		fp->block_counter[b] = PLACEMENT_NO_COUNTER;
}

/* Whether two of F's blocks overlap (code that jumps into the middle of an instruction), other
 * than as a prefix pair (cfg_func__prefix_pair: neither of its instructions can be a site, so
 * no probe sits inside the other). */
static bool blocks_overlap(const struct cfg_func *f)
{
	return !cfg_func__blocks_ok(f);
}

/* Plans function FI into FP (zeroed but for its weights, which it plans with when set):
 * allocates FP's arrays. Returns 0 or -ENOMEM, -EINVAL. */
static int plan_func(struct planner *p, size_t fi, struct func_plan *fp)
{
	const struct cfg_func *f = &p->prog->funcs[fi];
	const struct placement_options *opt = p->opt;
	size_t ns = p->sites.n, nc = p->counters.n;
	int err = 0;

	p->mark_iv = p->ivs.n;
	p->mark_acc = p->accums.n;
	fp->in_tree = calloc(f->nedges + 1, sizeof(*fp->in_tree));
	fp->edge_counter = malloc((f->nedges + 1) * sizeof(*fp->edge_counter));
	fp->block_counter = malloc((f->nblocks + 1) * sizeof(*fp->block_counter));
	if (!fp->in_tree || !fp->edge_counter || !fp->block_counter)
		return -ENOMEM;
	rollback(p, fp, f, ns, nc);
	if ((opt->select && !opt->select[fi]) || f->nblocks == 0) {
		fp->status = PLAN_EXCLUDED;
		fp->reason = f->nblocks ? plan_reasons[REASON_NOT_SELECTED] : plan_reasons[REASON_NO_CODE];
		return 0;
	}
	if (blocks_overlap(f)) {
		/* A probe on one decoding would sit inside an instruction of the other. */
		fp->status = PLAN_EXCLUDED;
		fp->reason = plan_reasons[REASON_OVERLAP];
		return 0;
	}
	if (opt->mode == PLACEMENT_NAIVE) {
		fp->status = PLAN_NAIVE;
		fp->reason = plan_reasons[REASON_NAIVE];
	} else if (f->flags & CFG_FUNC_UNRESOLVED) {
		fp->status = PLAN_NAIVE;
		fp->reason = plan_reasons[REASON_UNRESOLVED];
	} else if (f->flags & CFG_FUNC_BAD_CODE) {
		fp->status = PLAN_NAIVE;
		fp->reason = plan_reasons[REASON_BAD_CODE];
	} else if (f->flags & CFG_FUNC_RUNS_OFF) {
		fp->status = PLAN_NAIVE;
		fp->reason = plan_reasons[REASON_RUNS_OFF];
	} else if (f->flags & CFG_FUNC_FOREIGN_ENTRY) {
		/* Flow enters from another function's code at blocks that also have entries of
		 * their own: no probe tells those entries apart (propagation takes them as
		 * unknowns, cfg_func.foreign). */
		fp->status = PLAN_NAIVE;
		fp->reason = plan_reasons[REASON_FOREIGN];
	} else {
		fp->status = PLAN_CHORDS;
		err = plan_chords(p, fi, fp);
		if (err == 1) {
			rollback(p, fp, f, ns, nc);
			fp->status = PLAN_NAIVE;
			fp->reason = plan_reasons[REASON_CYCLE];
			err = 0;
		}
	}
	if (!err && fp->status == PLAN_NAIVE)
		err = plan_naive(p, fi, fp);
	if (!err && fp->status == PLAN_NAIVE && opt->longjmp && opt->longjmp->active) {
		/* Block counters everywhere: the pseudo-edges are unknowns of propagation only
		 * (they cost no chord). */
		fp->pseudo = &opt->longjmp->v[opt->longjmp->first[fi]];
		fp->npseudo = opt->longjmp->first[fi + 1] - opt->longjmp->first[fi];
	}
	if (err == -EEXIST) {
		/* Another function already probes one of these instructions. */
		rollback(p, fp, f, ns, nc);
		fp->status = PLAN_EXCLUDED;
		fp->reason = plan_reasons[REASON_SHARED];
		err = 0;
	}
	return err;
}

/* Points each counter of PL at its site's index. */
static void point_counters(struct placement *pl)
{
	for (size_t i = 0; i < pl->nsites; i++) {
		const struct probe_site *ps = &pl->sites[i];

		if (ps->kind == SITE_INDIRECT) {
			for (uint32_t k = 0; k < ps->counter2; k++)
				pl->counters[ps->counter + k].site = (uint32_t)i;
			continue;
		}
		pl->counters[ps->counter].site = (uint32_t)i;
		if (ps->counter2 != PLACEMENT_NO_COUNTER)
			pl->counters[ps->counter2].site = (uint32_t)i;
	}
}

/* PL's totals from its functions' plans. */
static void sum_up(struct placement *pl)
{
	pl->est_cost = 0;
	pl->nchord_funcs = pl->nnaive_funcs = pl->nexcluded_funcs = pl->npseudo = 0;
	for (size_t fi = 0; fi < pl->nfuncs; fi++) {
		pl->est_cost += pl->funcs[fi].est_cost;
		pl->nchord_funcs += pl->funcs[fi].status == PLAN_CHORDS;
		pl->nnaive_funcs += pl->funcs[fi].status == PLAN_NAIVE;
		pl->nexcluded_funcs += pl->funcs[fi].status == PLAN_EXCLUDED;
		if (pl->funcs[fi].status == PLAN_CHORDS)
			pl->npseudo += pl->funcs[fi].npseudo;
		else if (pl->funcs[fi].status == PLAN_EXCLUDED)
			pl->funcs[fi].npseudo = 0;
	}
}

int placement__plan(struct placement *pl, const struct cfg_program *prog,
		    const struct placement_options *opt)
{
	struct planner p = { .prog = prog, .opt = opt };
	int err = 0;

	memset(pl, 0, sizeof(*pl));
	pl->mode = opt->mode;
	pl->nfuncs = prog->nfuncs;
	pl->funcs = calloc(prog->nfuncs ? prog->nfuncs : 1, sizeof(*pl->funcs));
	if (!pl->funcs)
		return -ENOMEM;
	for (size_t fi = 0; fi < prog->nfuncs && !err; fi++)
		err = plan_func(&p, fi, &pl->funcs[fi]);
	free(p.addr_keys);
	free(p.addr_vals);
	if (err) {
		free(p.sites.v);
		free(p.counters.v);
		free(p.ivs.v);
		free(p.accums.v);
		placement__free(pl);
		return err;
	}
	/* Sites sorted by address; then each counter points at its site's index. */
	if (p.sites.n)
		sort__by_key_u64(p.sites.v, p.sites.n, sizeof(*p.sites.v),
				 offsetof(struct probe_site, addr), false);
	pl->sites = p.sites.v;
	pl->nsites = p.sites.n;
	pl->counters = p.counters.v;
	pl->ncounters = (uint32_t)p.counters.n;
	point_counters(pl);
	/* The accumulators after every counter. */
	pl->ivs = p.ivs.v;
	pl->ind = opt->induction;
	pl->nivs = (uint32_t)p.ivs.n;
	pl->accums = p.accums.v;
	pl->naccums = p.accums.n;
	for (uint32_t k = 0; k < pl->nivs; k++) {
		pl->ivs[k].acc_in += pl->ncounters;
		pl->ivs[k].acc_out += pl->ncounters;
	}
	for (size_t k = 0; k < pl->naccums; k++)
		pl->accums[k].counter += pl->ncounters;
	if (pl->naccums)
		sort__by_key_u64(pl->accums, pl->naccums, sizeof(*pl->accums),
				 offsetof(struct accum_site, addr), false);
	pl->ncounters_all = pl->ncounters + 2 * pl->nivs;
	sum_up(pl);
	return 0;
}

/* A function in placement__replan: its counters [c0, c0 + nc) (a function's counters are
 * pushed together) in the plan replaced when kept, else among those planned again, and what
 * moves them (and a kept function's ordinals) to their place in the new plan. */
struct replan_func {
	uint32_t c0, nc;
	uint32_t o0, o1; /* a kept function's ordinals: the lowest and the highest (o0 UINT32_MAX:
			  * no indirect site) */
	uint32_t cdelta, odelta;
};

/* Each function's counters and ordinals in PL into R. Returns 0 or -EINVAL. */
static int replan_index(const struct placement *pl, struct replan_func *r)
{
	for (size_t fi = 0; fi < pl->nfuncs; fi++)
		r[fi] = (struct replan_func){ .c0 = UINT32_MAX, .o0 = UINT32_MAX };
	for (size_t i = 0; i < pl->nsites; i++) {
		const struct probe_site *s = &pl->sites[i];
		uint32_t end = s->kind == SITE_INDIRECT ? s->counter + s->counter2
			       : s->counter2 != PLACEMENT_NO_COUNTER && s->counter2 > s->counter
				   ? s->counter2 + 1
				   : s->counter + 1;
		struct replan_func *rf;

		if (s->func >= pl->nfuncs)
			return -EINVAL;
		rf = &r[s->func];
		if (s->counter < rf->c0)
			rf->c0 = s->counter;
		if (end > rf->nc)
			rf->nc = end; /* the end, for now */
		if (s->kind == SITE_INDIRECT && s->ordinal < rf->o0)
			rf->o0 = s->ordinal;
		if (s->kind == SITE_INDIRECT && s->ordinal > rf->o1)
			rf->o1 = s->ordinal;
	}
	for (size_t fi = 0; fi < pl->nfuncs; fi++) {
		if (r[fi].c0 == UINT32_MAX)
			r[fi].c0 = 0;
		else
			r[fi].nc -= r[fi].c0;
	}
	return 0;
}

/* Moves site S by its function's R (KEPT: from the plan replaced, else planned again). */
static void move_site(struct probe_site *s, const struct replan_func *r, bool kept)
{
	s->counter += r->cdelta;
	if (s->kind == SITE_INDIRECT)
		s->ordinal += kept ? r->odelta : 0;
	else if (s->counter2 != PLACEMENT_NO_COUNTER)
		s->counter2 += r->cdelta;
}

/* Moves the counters of function F's plan FP by DELTA. */
static void move_func(struct func_plan *fp, const struct cfg_func *f, uint32_t delta)
{
	for (uint32_t e = 0; delta && e <= f->nedges; e++)
		if (fp->edge_counter[e] != PLACEMENT_NO_COUNTER)
			fp->edge_counter[e] += delta;
	for (uint32_t b = 0; delta && b < f->nblocks; b++)
		if (fp->block_counter[b] != PLACEMENT_NO_COUNTER)
			fp->block_counter[b] += delta;
}

/* Frees the arrays of FP, not WEIGHTS (another plan's). */
static void func_plan_free(struct func_plan *fp, const double *weights)
{
	free(fp->in_tree);
	free(fp->edge_counter);
	free(fp->block_counter);
	free(fp->block_iv);
	if (fp->weights != weights)
		free(fp->weights);
}

/* Whether function FI's plan in PL must be made again whatever else changed: one excluded
 * for sharing code with a function before it may not share any more. */
static bool shared_code(const struct placement *pl, size_t fi)
{
	const struct func_plan *fp = &pl->funcs[fi];

	return fp->status == PLAN_EXCLUDED && fp->reason &&
	       strcmp(fp->reason, plan_reasons[REASON_SHARED]) == 0;
}

/* The new sites of placement__replan into SITES: PL's sites of the KEPT functions and P's
 * (sorted) merged by address, each moved by its function's R. */
static void merge_sites(struct probe_site *sites, const struct placement *pl, const bool *kept,
			const struct planner *p, const struct replan_func *r)
{
	size_t i = 0, j = 0, n = 0;

	for (;;) {
		while (i < pl->nsites && !kept[pl->sites[i].func])
			i++;
		if (i < pl->nsites && (j == p->sites.n || pl->sites[i].addr < p->sites.v[j].addr)) {
			sites[n] = pl->sites[i++];
			move_site(&sites[n], &r[sites[n].func], true);
		} else if (j < p->sites.n) {
			sites[n] = p->sites.v[j++];
			move_site(&sites[n], &r[sites[n].func], false);
		} else {
			break;
		}
		n++;
	}
}

int placement__replan(struct placement *pl, const struct cfg_program *prog,
		      const struct placement_options *opt, const bool *redo)
{
	struct planner p = { .prog = prog, .opt = opt, .base = pl };
	size_t nf = pl->nfuncs, nsites = 0, fi;
	struct replan_func *r;
	struct func_plan *nfp; /* those planned again */
	bool *kept, *clash;
	struct probe_site *sites = NULL;
	struct counter_def *counters = NULL;
	uint32_t ncounters = 0;
	int err = -ENOMEM;

	if (nf != prog->nfuncs || opt->induction || pl->nivs) {
		/* Counted loops are planned afresh (their counters follow all others). */
		struct placement fresh;

		err = placement__plan(&fresh, prog, opt);
		if (!err) {
			placement__free(pl);
			*pl = fresh;
		}
		return err;
	}
	r = calloc(nf + 1, sizeof(*r));
	nfp = calloc(nf + 1, sizeof(*nfp));
	kept = calloc(nf + 1, sizeof(*kept));
	clash = calloc(nf + 1, sizeof(*clash));
	p.kept = kept;
	if (!r || !nfp || !kept || !clash || (err = replan_index(pl, r)))
		goto out;
	/* In function order, as placement__plan goes: a function keeps its plan unless its
	 * instructions' classes changed (REDO), one planned again before it took one of its
	 * sites' addresses (CLASH), or it shares code. Its counters and ordinals follow those
	 * of the functions before it. */
	for (fi = 0; fi < nf && !err; fi++) {
		struct replan_func *rf = &r[fi];
		size_t s0 = p.sites.n;

		if (!redo[fi] && !clash[fi] && !shared_code(pl, fi)) {
			kept[fi] = true;
			rf->cdelta = ncounters - rf->c0;
			ncounters += rf->nc;
			if (rf->o0 != UINT32_MAX) {
				rf->odelta = p.nindirect - rf->o0;
				if (rf->o1 + rf->odelta + 1 > p.nindirect)
					p.nindirect = rf->o1 + rf->odelta + 1;
			}
			continue;
		}
		nfp[fi].weights = pl->funcs[fi].weights;
		rf->c0 = (uint32_t)p.counters.n;
		err = plan_func(&p, fi, &nfp[fi]);
		rf->nc = (uint32_t)p.counters.n - rf->c0;
		rf->cdelta = ncounters - rf->c0;
		ncounters += rf->nc;
		for (size_t k = s0; k < p.sites.n; k++) {
			const struct probe_site *b = base_site(pl, p.sites.v[k].addr);

			if (b && b->func > fi)
				clash[b->func] = true;
		}
	}
	if (err)
		goto out;
	for (size_t i = 0; i < pl->nsites; i++)
		nsites += kept[pl->sites[i].func];
	nsites += p.sites.n;
	sites = malloc((nsites + 1) * sizeof(*sites));
	counters = malloc(((size_t)ncounters + 1) * sizeof(*counters));
	if (!sites || !counters) {
		err = -ENOMEM;
		goto out;
	}
	/* Nothing fails from here on: PL becomes the new plan. */
	for (fi = 0; fi < nf; fi++)
		if (r[fi].nc)
			memcpy(counters + (uint32_t)(r[fi].c0 + r[fi].cdelta),
			       (kept[fi] ? pl->counters : p.counters.v) + r[fi].c0,
			       r[fi].nc * sizeof(*counters));
	if (p.sites.n)
		sort__by_key_u64(p.sites.v, p.sites.n, sizeof(*p.sites.v),
				 offsetof(struct probe_site, addr), false);
	merge_sites(sites, pl, kept, &p, r);
	for (fi = 0; fi < nf; fi++) {
		if (!kept[fi]) {
			func_plan_free(&pl->funcs[fi], nfp[fi].weights);
			pl->funcs[fi] = nfp[fi];
			nfp[fi] = (struct func_plan){ 0 };
		}
		move_func(&pl->funcs[fi], &prog->funcs[fi], r[fi].cdelta);
	}
	free(pl->sites);
	free(pl->counters);
	pl->sites = sites;
	pl->nsites = nsites;
	pl->counters = counters;
	pl->ncounters = ncounters;
	pl->ncounters_all = ncounters;
	sites = NULL;
	counters = NULL;
	point_counters(pl);
	sum_up(pl);
out:
	for (fi = 0; nfp && fi < nf; fi++)
		func_plan_free(&nfp[fi], pl->funcs[fi].weights);
	free(sites);
	free(counters);
	free(p.sites.v);
	free(p.counters.v);
	free(p.addr_keys);
	free(p.addr_vals);
	free(r);
	free(nfp);
	free(kept);
	free(clash);
	return err;
}

void placement__free(struct placement *pl)
{
	size_t i;

	for (i = 0; i < pl->nfuncs; i++)
		func_plan_free(&pl->funcs[i], NULL);
	free(pl->funcs);
	free(pl->sites);
	free(pl->counters);
	free(pl->ivs);
	free(pl->accums);
	memset(pl, 0, sizeof(*pl));
}
