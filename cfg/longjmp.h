/*
 * Where longjmp can take control without a CFG edge, as pseudo-edges for the counting plan
 * (Ball and Larus's flow conservation, generalised): a call block whose call may end in a
 * longjmp that skips the frame gets an "abandon" pseudo-edge b -> EXIT, and a call block
 * calling a setjmp-family function (_setjmp, setjmp, sigsetjmp, __sigsetjmp) a "resume"
 * pseudo-edge EXIT -> b, the second return entering after b's instructions. Pseudo-edges are
 * never measured: the plan keeps them in its spanning tree and propagation derives them.
 *
 * May-longjmp is a sound over-approximation on the call graph, to a fixpoint: a function may
 * longjmp when one of its call sites (tail calls and no-return calls included) calls a
 * longjmp-family function, is indirect, calls outside the program (except a fixed list of C
 * library functions that never call user code nor longjmp), or calls a function that may;
 * a function with an unresolved indirect jump may too. Only longjmps that reach the frame
 * through its calls are covered: a signal handler that longjmps leaves frames at arbitrary
 * instructions, which the caller must follow another way (frames are unwound then).
 * The analysis is active only in a program that calls a setjmp- or longjmp-family function
 * by name; elsewhere no pseudo-edge is made (and a caller follows longjmps as before).
 */
#ifndef EDGEPROF_CFG_LONGJMP_H
#define EDGEPROF_CFG_LONGJMP_H

#include <stdbool.h>
#include <stdint.h>

#include "cfg.h"

enum cfg_pseudo_kind {
	CFG_PSEUDO_ABANDON = 0, /* block -> EXIT: the frame left by a longjmp in the block's call */
	CFG_PSEUDO_RESUME = 1,	/* EXIT -> block: setjmp returning again, after the block's end */
};

struct cfg_pseudo {
	uint32_t block;
	uint8_t kind; /* enum cfg_pseudo_kind */
};

struct cfg_longjmp {
	bool active;	   /* the program calls a setjmp- or longjmp-family function */
	bool *may_longjmp; /* [nfuncs] */
	uint32_t *first;   /* [nfuncs + 1]: function i's pseudo-edges are v[first[i]..first[i+1]) */
	struct cfg_pseudo *v; /* sorted by function, then block */
	size_t nv;
	uint32_t nabandon, nresume;
};

/* Analyses PROG into *LJ (see above). Returns 0 or -ENOMEM. */
int cfg_longjmp__analyze(struct cfg_longjmp *lj, const struct cfg_program *prog);

/* Whether NAME is a setjmp-family function (its call returns a second time). */
bool cfg_longjmp__is_setjmp(const char *name);

/* Whether NAME is a longjmp-family function. */
bool cfg_longjmp__is_longjmp(const char *name);

void cfg_longjmp__free(struct cfg_longjmp *lj);

#endif
