/*
 * A static profile of a whole program (Wu and Larus): per function, the branch heuristics that
 * apply, branch probabilities (Dempster-Shafer), local block and edge frequencies; over the
 * call graph, call and invocation frequencies; global frequencies are local ones times the
 * function's invocations. The call graph has a virtual root calling `main` once per run and
 * every function no direct call reaches (functions called through pointers, startup code,
 * unused library entry points) SP_ROOT_CALLS times. Beyond the paper (which leaves calls
 * through pointers out), the estimated invocations of all indirect call sites are then shared
 * equally by those functions (except main and the C runtime's startup functions), added to
 * their calls from the root, and the call frequencies estimated again (one step, not a
 * fixpoint). A direct call's local frequency is its block's, a tail call's its TAIL_CALL
 * edge's.
 */
#ifndef EDGEPROF_ESTIMATORS_STATIC_PROFILE_H
#define EDGEPROF_ESTIMATORS_STATIC_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "branch_heuristics.h"
#include "cfg/cfg.h"

/* Invocations the virtual root gives to each function no direct call reaches (less than main's
 * one: most are dead library entry points, the others get the indirect calls' share). */
#define SP_ROOT_CALLS 0.1

struct sp_func {
	struct bh_func bh;   /* the two-way branches and their heuristics */
	double *prob;        /* [nedges] branch probabilities */
	double *efreq;       /* [nedges] local edge frequencies */
	double *bfreq;       /* [nblocks + 1] local block frequencies (EXIT last) */
	double invocations;  /* global invocation frequency */
	double indirect;     /* local frequency of its indirect calls and tail calls */
};

/* A call-graph edge: direct calls and tail calls from one function to another, together. */
struct sp_call {
	uint32_t from, to; /* function indices */
	double lfreq;      /* per invocation of the caller */
	double gfreq;      /* global */
};

struct static_profile {
	struct sp_func *funcs; /* indexed like prog->funcs */
	size_t nfuncs;
	struct sp_call *calls; /* sorted by (from, to) */
	uint32_t ncalls;
	long main_func;        /* index of main, -1 when none */
	double rates[BH_COUNT];
};

/* Estimates the static profile of PROG (whose image gives the code) with heuristic hit rates
 * RATES[BH_COUNT] (NULL: Table 1). SP is zeroed first. Returns 0, -EINVAL (capstone could not
 * be opened) or -ENOMEM; on failure SP holds nothing. */
int static_profile__compute(struct static_profile *sp, const struct cfg_program *prog,
			    const double *rates);

/* Replaces some of the branch probabilities PROB[nedges] of function I (F, its heuristics BF)
 * before its local frequencies are computed; the out-edges of each block must still sum to 1.
 * For experiments that take the probabilities from elsewhere (a profile). Returns true when
 * they were measured: the local frequencies are then not capped (local_freq.h). */
typedef bool (*sp_probs_fn)(void *ctx, size_t i, const struct cfg_func *f,
			    const struct bh_func *bf, double *prob);

/* static_profile__compute, with PROBS_FN (may be NULL) called on each function's Dempster-Shafer
 * probabilities. */
int static_profile__compute_with(struct static_profile *sp, const struct cfg_program *prog,
				 const double *rates, sp_probs_fn probs_fn, void *ctx);

/* Global frequency of block B (EXIT: nblocks) or edge E of function I. */
static inline double static_profile__gblock(const struct static_profile *sp, size_t i, uint32_t b)
{
	return sp->funcs[i].bfreq ? sp->funcs[i].bfreq[b] * sp->funcs[i].invocations : 0;
}

static inline double static_profile__gedge(const struct static_profile *sp, size_t i, uint32_t e)
{
	return sp->funcs[i].efreq ? sp->funcs[i].efreq[e] * sp->funcs[i].invocations : 0;
}

void static_profile__free(struct static_profile *sp);

#endif
