/*
 * Loop trip-count probe plan (see loop_probes.h): natural loops from the dominator tree, the
 * stack depth of every instruction from the stack height analysis, and per block the
 * cheapest instruction (by the site costs) whose depth is known.
 */
#include "loop_probes.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/decode.h"
#include "cfg/dominators.h"
#include "cfg/loops.h"
#include "cfg/stack_height.h"

/* The cheapest probeable instruction of block B with a known depth (the last of equals):
 * its index into f->insns, or -1. */
static int64_t block_site(const struct cfg_func *f, uint32_t b, const int64_t *height,
			  const struct site_costs *costs)
{
	const struct cfg_block *bl = &f->blocks[b];
	int64_t best = -1;
	double best_cost = INFINITY;

	for (uint32_t k = 0; k < bl->ninsns; k++) {
		uint32_t i = bl->first_insn + k;
		double cost = site_costs__of(costs, f->insns[i].probe_class);

		if (f->insns[i].probe_class == PROBE_NEVER || height[i] == STACK_HEIGHT_UNKNOWN ||
		    height[i] > 0 || -height[i] > (int64_t)LOOP_PROBES_MAX_DEPTH)
			continue;
		if (cost <= best_cost) {
			best_cost = cost;
			best = i;
		}
	}
	return best;
}

static int push_site(struct loop_probe_plan *plan, size_t *cap, const struct cfg_func *f,
		     uint32_t insn, uint32_t block, uint32_t loop, uint8_t event,
		     const int64_t *height)
{
	if (plan->nsites == *cap) {
		size_t n = *cap ? 2 * *cap : 256;
		struct loop_probe_site *s = realloc(plan->sites, n * sizeof(*s));

		if (!s)
			return -ENOMEM;
		plan->sites = s;
		*cap = n;
	}
	plan->sites[plan->nsites++] = (struct loop_probe_site){
	    .addr = f->insns[insn].addr,
	    .loop = loop,
	    .block = block,
	    .depth = (uint32_t)-height[insn],
	    .event = event,
	    .probe_class = f->insns[insn].probe_class,
	};
	return 0;
}

/* Plans the sites of loop L (plan index IDX) of F. Returns 0 or -ENOMEM; sets the loop's
 * skip reason when it cannot be measured (its sites are then dropped). */
static int plan_loop(struct loop_probe_plan *plan, size_t *cap, const struct cfg_func *f,
		     const struct cfg_loops *lp, uint32_t l, uint32_t idx, const int64_t *height,
		     const struct site_costs *costs)
{
	const struct cfg_loop *loop = &lp->loops[l];
	struct loop_probe_loop *pl = &plan->loops[idx];
	const struct cfg_block *h = &f->blocks[loop->header];
	size_t first = plan->nsites;
	int64_t site;

	if (loop->header == f->entry_block) {
		pl->skip = "its header is the function's entry (entered by calls)";
		return 0;
	}
	site = block_site(f, loop->header, height, costs);
	if (site < 0) {
		pl->skip = "no probeable instruction of known stack depth in its header";
		return 0;
	}
	if (push_site(plan, cap, f, (uint32_t)site, loop->header, idx, LOOP_PROBE_ITER, height))
		return -ENOMEM;
	for (uint32_t k = 0; k < h->npred; k++) {
		const struct cfg_edge *e = &f->edges[f->pred[h->first_pred + k]];
		bool seen = false;

		if (cfg_loops__contains(lp, l, e->from))
			continue; /* a back edge */
		for (uint32_t j = 0; j < k; j++)
			seen |= f->edges[f->pred[h->first_pred + j]].from == e->from;
		if (seen)
			continue;
		site = block_site(f, e->from, height, costs);
		if (site < 0) {
			pl->skip =
			    "an entry block has no probeable instruction of known stack depth";
			plan->nsites = first;
			return 0;
		}
		if (push_site(plan, cap, f, (uint32_t)site, e->from, idx, LOOP_PROBE_ENTER, height))
			return -ENOMEM;
	}
	return 0;
}

/* Plans the loops of function FI. Returns 0 or a negative errno. */
static int plan_func(struct loop_probe_plan *plan, size_t *cap, size_t *lcap,
		     const struct cfg_program *prog, size_t fi, struct decoder *d,
		     const struct site_costs *costs)
{
	const struct cfg_func *f = &prog->funcs[fi];
	struct cfg_domtree dom = {0};
	struct cfg_loops lp = {0};
	uint64_t *addrs = NULL;
	int64_t *height = NULL, *qh = NULL;
	uint32_t *qidx = NULL;
	uint8_t *want = NULL;
	size_t nq = 0;
	bool label_taken = false;
	int err;

	if (!f->nblocks)
		return 0;
	err = cfg_dom__compute(&dom, f);
	if (!err)
		err = cfg_loops__compute(&lp, f, &dom);
	if (err || !lp.nloops)
		goto out;
	if (plan->nloops + lp.nloops > *lcap) {
		size_t n = *lcap ? 2 * *lcap : 256;
		struct loop_probe_loop *nl;

		while (n < plan->nloops + lp.nloops)
			n *= 2;
		nl = realloc(plan->loops, n * sizeof(*nl));
		if (!nl) {
			err = -ENOMEM;
			goto out;
		}
		plan->loops = nl;
		*lcap = n;
	}
	/* Depths are needed in headers and their predecessors only (stack_height__at costs
	 * instructions x queries). */
	addrs = malloc((f->ninsns + 1) * sizeof(*addrs));
	height = malloc((f->ninsns + 1) * sizeof(*height));
	want = calloc(f->nblocks + 1, 1);
	qidx = malloc((f->ninsns + 1) * sizeof(*qidx));
	qh = malloc((f->ninsns + 1) * sizeof(*qh));
	if (!addrs || !height || !want || !qidx || !qh) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t l = 0; l < lp.nloops; l++) {
		const struct cfg_block *h = &f->blocks[lp.loops[l].header];

		want[lp.loops[l].header] = 1;
		for (uint32_t k = 0; k < h->npred; k++)
			want[f->edges[f->pred[h->first_pred + k]].from] = 1;
	}
	for (uint32_t i = 0; i < f->ninsns; i++)
		height[i] = STACK_HEIGHT_UNKNOWN;
	for (uint32_t b = 0; b < f->nblocks; b++)
		for (uint32_t k = 0; want[b] && k < f->blocks[b].ninsns; k++) {
			qidx[nq] = f->blocks[b].first_insn + k;
			addrs[nq++] = f->insns[f->blocks[b].first_insn + k].addr;
		}
	err = stack_height__at(f, d, addrs, nq, qh, &label_taken);
	if (err)
		goto out;
	for (size_t q = 0; q < nq; q++)
		height[qidx[q]] = qh[q];
	for (uint32_t l = 0; l < lp.nloops; l++) {
		uint32_t idx = plan->nloops++;
		size_t first = plan->nsites;

		plan->loops[idx] = (struct loop_probe_loop){
		    .func = (uint32_t)fi,
		    .header = lp.loops[l].header,
		    .header_addr = f->blocks[lp.loops[l].header].start,
		};
		/* An irreducible region elsewhere in F does not matter: a natural loop's header
		 * dominates its body, so every entry still comes from a block outside it. */
		if ((err = plan_loop(plan, cap, f, &lp, l, idx, height, costs)))
			goto out;
		if (!plan->loops[idx].skip) {
			plan->loops[idx].first_site = (uint32_t)first;
			plan->loops[idx].nsites = (uint32_t)(plan->nsites - first);
			plan->nmeasured++;
		}
	}
out:
	free(addrs);
	free(height);
	free(want);
	free(qidx);
	free(qh);
	cfg_loops__free(&lp);
	cfg_dom__free(&dom);
	return err;
}

int loop_probes__plan(struct loop_probe_plan *plan, const struct cfg_program *prog,
		      const struct placement *pl, const struct site_costs *costs)
{
	struct decoder d;
	size_t cap = 0, lcap = 0;
	int err;

	memset(plan, 0, sizeof(*plan));
	plan->func_first = calloc(prog->nfuncs + 1, sizeof(*plan->func_first));
	if (!plan->func_first)
		return -ENOMEM;
	err = decoder__open(&d, prog->img);
	if (err) {
		loop_probes__free(plan);
		return err;
	}
	for (size_t i = 0; i < prog->nfuncs; i++) {
		plan->func_first[i] = plan->nloops;
		if (i < pl->nfuncs && pl->funcs[i].status == PLAN_EXCLUDED)
			continue;
		err = plan_func(plan, &cap, &lcap, prog, i, &d, costs);
		if (err)
			break;
	}
	plan->func_first[prog->nfuncs] = plan->nloops;
	decoder__close(&d);
	if (err)
		loop_probes__free(plan);
	return err;
}

void loop_probes__free(struct loop_probe_plan *plan)
{
	free(plan->loops);
	free(plan->func_first);
	free(plan->sites);
	memset(plan, 0, sizeof(*plan));
}
