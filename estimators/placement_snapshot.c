/*
 * Saving a probe plan and reading it back (placement.h: placement__save, placement__load),
 * for the session's analysis cache. Records are written as they are in memory, their
 * pointers then replaced: a function's reason by its index among the texts a plan gives, its
 * pseudo-edges by their offset into the longjmp analysis, its arrays by copies.
 */
#include "placement.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/snapshot.h"

_Static_assert(sizeof(struct placement) == 128, "placement changed: save it (placement_snapshot.c)");
_Static_assert(sizeof(struct probe_site) == 40, "probe_site changed: save it");
_Static_assert(sizeof(struct counter_def) == 16, "counter_def changed: save it");
_Static_assert(sizeof(struct func_plan) == 96, "func_plan changed: save it");

/* Clears the pointers of PL and of FP (written as arrays, or indices, after them). */
static void placement_unlink(struct placement *pl)
{
	pl->sites = NULL;
	pl->counters = NULL;
	pl->funcs = NULL;
	pl->ivs = NULL;
	pl->ind = NULL;
	pl->accums = NULL;
}

static void plan_unlink(struct func_plan *fp)
{
	fp->reason = NULL;
	fp->in_tree = NULL;
	fp->edge_counter = fp->block_counter = NULL;
	fp->pseudo = NULL;
	fp->weights = NULL;
	fp->block_iv = NULL;
}

int placement__save(const struct placement *pl, const struct cfg_program *prog,
		    const struct cfg_longjmp *lj, struct snap_out *o)
{
	struct placement t = *pl;

	if (pl->nfuncs != prog->nfuncs || pl->nivs || pl->naccums)
		return -EINVAL; /* loops counted by induction are not kept */
	placement_unlink(&t);
	snap_put(o, &t, sizeof(t));
	snap_put_array(o, pl->sites, pl->nsites, sizeof(*pl->sites));
	snap_put_array(o, pl->counters, pl->ncounters, sizeof(*pl->counters));
	for (size_t i = 0; i < pl->nfuncs; i++) {
		const struct func_plan *fp = &pl->funcs[i];
		const struct cfg_func *f = &prog->funcs[i];
		int reason = placement__reason_index(fp->reason);
		uint64_t pseudo = UINT64_MAX;

		if (reason == -2)
			return -EINVAL;
		if (fp->pseudo) {
			if (!lj || !lj->v || fp->pseudo < lj->v || fp->pseudo >= lj->v + lj->nv)
				return -EINVAL;
			pseudo = (uint64_t)(fp->pseudo - lj->v);
		}
		struct func_plan tf = *fp;

		plan_unlink(&tf);
		snap_put(o, &tf, sizeof(tf));
		snap_put_u64(o, (uint64_t)(int64_t)reason);
		snap_put_u64(o, pseudo);
		snap_put_opt(o, fp->in_tree, (size_t)f->nedges + 1, sizeof(*fp->in_tree));
		snap_put_opt(o, fp->edge_counter, (size_t)f->nedges + 1, sizeof(*fp->edge_counter));
		snap_put_opt(o, fp->block_counter, (size_t)f->nblocks + 1,
			     sizeof(*fp->block_counter));
		snap_put_opt(o, fp->weights, (size_t)f->nedges + 1, sizeof(*fp->weights));
	}
	return o->err;
}

/* Whether the counter and site references of PL are in range for PROG. */
static bool plan_consistent(const struct placement *pl, const struct cfg_program *prog)
{
	for (size_t i = 0; i < pl->nsites; i++) {
		const struct probe_site *s = &pl->sites[i];

		if (s->func >= prog->nfuncs || (i && pl->sites[i - 1].addr >= s->addr))
			return false;
		if (s->kind == SITE_INDIRECT
			? (uint64_t)s->counter + s->counter2 > pl->ncounters
			: s->counter >= pl->ncounters ||
			      (s->counter2 != PLACEMENT_NO_COUNTER && s->counter2 >= pl->ncounters))
			return false;
	}
	for (uint32_t c = 0; c < pl->ncounters; c++)
		if (pl->counters[c].func >= prog->nfuncs || pl->counters[c].site >= pl->nsites)
			return false;
	return true;
}

int placement__load(struct placement *pl, const struct cfg_program *prog,
		    const struct cfg_longjmp *lj, struct snap_in *in)
{
	size_t nfuncs;

	if (!snap_get(in, pl, sizeof(*pl)))
		return in->err;
	nfuncs = pl->nfuncs;
	placement_unlink(pl);
	pl->nfuncs = 0;
	pl->sites = snap_get_array(in, pl->nsites, sizeof(*pl->sites));
	pl->counters = snap_get_array(in, pl->ncounters, sizeof(*pl->counters));
	if (!in->err && snap_check(in, nfuncs == prog->nfuncs) &&
	    !(pl->funcs = calloc(nfuncs + 1, sizeof(*pl->funcs))))
		in->err = -ENOMEM;
	for (size_t i = 0; i < nfuncs && !in->err; i++) {
		struct func_plan *fp = &pl->funcs[i];
		const struct cfg_func *f = &prog->funcs[i];
		int64_t reason;
		uint64_t pseudo;

		pl->nfuncs = i + 1;
		if (!snap_get(in, fp, sizeof(*fp)))
			break;
		plan_unlink(fp);
		reason = (int64_t)snap_get_u64(in);
		pseudo = snap_get_u64(in);
		fp->reason = placement__reason_text((int)reason);
		snap_check(in, reason == -1 || (reason >= 0 && fp->reason));
		if (pseudo != UINT64_MAX &&
		    snap_check(in, lj && pseudo <= lj->nv && fp->npseudo <= lj->nv - pseudo))
			fp->pseudo = &lj->v[pseudo];
		fp->in_tree = snap_get_opt(in, (size_t)f->nedges + 1, sizeof(*fp->in_tree));
		fp->edge_counter =
		    snap_get_opt(in, (size_t)f->nedges + 1, sizeof(*fp->edge_counter));
		fp->block_counter =
		    snap_get_opt(in, (size_t)f->nblocks + 1, sizeof(*fp->block_counter));
		fp->weights = snap_get_opt(in, (size_t)f->nedges + 1, sizeof(*fp->weights));
	}
	if (!in->err)
		snap_check(in, pl->nfuncs == nfuncs && plan_consistent(pl, prog));
	if (in->err) {
		int err = in->err;

		placement__free(pl);
		return err;
	}
	return 0;
}
