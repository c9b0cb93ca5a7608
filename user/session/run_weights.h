/*
 * Exact placement weights from an earlier profile of the same build (`edgeprof run --weights
 * FILE`): each function's edge counts, matched to the CFG by addresses and kinds. Functions
 * the profile does not cover keep the heuristic weighting. `--weights static` (the literal
 * word; write ./static for a file of that name) uses the static profile estimate instead
 * (Wu and Larus: local edge frequencies, estimators/static_profile.h), with the stored
 * heuristic hit rates (heuristic_rates.h) or Table 1.
 */
#ifndef EDGEPROF_USER_RUN_WEIGHTS_H
#define EDGEPROF_USER_RUN_WEIGHTS_H

#include "cfg/cfg.h"
#include "estimators/static_profile.h"
#include "user/profile/profile.h"

struct run_weights {
	struct profile prof;
	const struct cfg_program *prog;
	bool loaded;
	bool is_static;          /* PATH was "static": SP holds the estimate */
	struct static_profile sp;
};

/* Reads PATH and checks it was recorded on IMG's build; or, when PATH is "static", estimates
 * PROG's static profile. Returns 0, or -1 with one line reported (unreadable or corrupt
 * profile, another build, an invalid heuristic-rates file, out of memory). */
int run_weights__load(struct run_weights *rw, const char *path, const struct elf_image *img,
		      const struct cfg_program *prog);

/* placement_weights_fn: fills W[0..nedges] with the profile's counts for function FUNC (a
 * small floor keeps never-taken edges ordered by site cost), or returns false when the
 * profile has no complete counts for it; for "static", the estimated local frequencies. */
bool run_weights__get(void *ctx, size_t func, const struct cfg_func *f, double *w);

void run_weights__free(struct run_weights *rw);

#endif
