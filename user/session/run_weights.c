/*
 * Placement weights from an earlier profile (see run_weights.h).
 */
#include "user/session/run_weights.h"

#include <string.h>

#include "estimators/propagate.h"
#include "user/report/heuristic_rates.h"
#include "user/util/log.h"
#include "user/report/static_eval.h"

int run_weights__load(struct run_weights *rw, const char *path, const struct elf_image *img,
		      const struct cfg_program *prog)
{
	memset(rw, 0, sizeof(*rw));
	if (!strcmp(path, "static")) {
		double rates[BH_COUNT];

		if (heuristic_rates__load(NULL, rates, NULL, 0))
			return -1;
		if (static_profile__compute(&rw->sp, prog, rates))
			return pr_err("'%s': cannot estimate the static profile: out of memory",
				      img->path);
		rw->prog = prog;
		rw->is_static = true;
		return 0;
	}
	if (profile__read(path, &rw->prof))
		return -1;
	if (profile__check_build_id(&rw->prof, img->build_id)) {
		profile__release(&rw->prof);
		return -1;
	}
	rw->prog = prog;
	rw->loaded = true;
	return 0;
}

bool run_weights__get(void *ctx, size_t func, const struct cfg_func *f, double *w)
{
	struct run_weights *rw = ctx;
	const struct profile_func *pf =
		rw->is_static ? NULL : profile__func_at(&rw->prof, f->entry);
	uint32_t e, k;

	if (rw->is_static)
		return static_eval__weights(&rw->sp, func, f, w);
	if (!pf || pf->count == COUNT_UNKNOWN)
		return false;
	for (e = 0; e < f->nedges; e++) {
		const struct cfg_edge *ce = &f->edges[e];
		uint64_t from = f->blocks[ce->from].start;
		bool found = false;

		for (k = 0; k < pf->nedges && !found; k++) {
			const struct profile_edge *pe = &pf->edges[k];
			bool to_exit = pe->to >= pf->nblocks;

			if (pe->kind != ce->kind || pf->blocks[pe->from].addr != from ||
			    to_exit != (ce->to == f->nblocks) ||
			    (!to_exit && pf->blocks[pe->to].addr != f->blocks[ce->to].start))
				continue;
			if (pe->count == COUNT_UNKNOWN)
				return false;
			/* A floor keeps zero-count edges ordered by their site costs. */
			w[e] = (double)pe->count + 1e-3;
			found = true;
		}
		if (!found)
			return false;
	}
	w[f->nedges] = (double)pf->count + 1e-3;
	return true;
}

void run_weights__free(struct run_weights *rw)
{
	if (rw->loaded)
		profile__release(&rw->prof);
	if (rw->is_static)
		static_profile__free(&rw->sp);
	memset(rw, 0, sizeof(*rw));
}
