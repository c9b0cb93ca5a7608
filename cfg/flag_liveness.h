/*
 * Which arithmetic flags (OF SF ZF AF PF CF) are live before each instruction of a function:
 * a backward data-flow analysis over the function's CFG, each instruction's effect from its
 * capstone decoding (the one the CFG build made, kept in the program: decode.h). An in-process counter increment (`incq`, which writes OF SF ZF
 * AF PF and keeps CF) may go bare where none of the flags it writes is live, and must save and
 * restore them elsewhere. The analysis is sound rather than precise: flags are dead after a
 * call, at a return and at a tail call (the ABI keeps no flag across them: a hand-written
 * callee reading flags its caller set is assumed absent), pass through a syscall (the kernel
 * restores them), and are all live at an unresolved indirect jump, at an edge to EXIT of
 * another kind, at a trap or int, and before any instruction that cannot be decoded; an
 * instruction that only writes flags under a condition (a shift by %cl, rep cmps/scas) kills
 * none.
 */
#ifndef EDGEPROF_CFG_FLAG_LIVENESS_H
#define EDGEPROF_CFG_FLAG_LIVENESS_H

#include <stdint.h>

#include "cfg.h"
#include "decode.h"

/* Flag bits of this analysis (not the EFLAGS bit positions). */
#define FLAG_CF 0x01u
#define FLAG_PF 0x02u
#define FLAG_AF 0x04u
#define FLAG_ZF 0x08u
#define FLAG_SF 0x10u
#define FLAG_OF 0x20u
#define FLAG_ALL 0x3fu
/* The flags `inc` / `incq` writes (all but CF). */
#define FLAG_INC_WRITES (FLAG_ALL & ~FLAG_CF)

struct flag_liveness {
	uint8_t *before;   /* [ninsns]: flags live before instruction k of the function */
	uint8_t *block_in; /* [nblocks + 1]: live at the start of block b; [nblocks] (EXIT) is 0 */
	uint8_t *edge;     /* [nedges]: live on edge e (see flag_liveness__edge) */
	uint32_t ninsns, nblocks, nedges;
};

/* Computes the flag liveness of F, whose instructions are decoded from PROG's image (with D
 * when given, else with the build's decoder PROG->dec, else with a decoder of its own: each
 * instruction's effect is taken from the decoder's cache, decoded there at most once). PROG's symbols tell which
 * tail-call targets are cold fragments of another function (flags kept live there). Returns 0
 * with FL filled (release with flag_liveness__release), or -ENOMEM / -EINVAL (capstone). */
int flag_liveness__compute(struct flag_liveness *fl, const struct cfg_program *prog,
			   const struct cfg_func *f, struct decoder *d);

/* Flags live on edge E of F: the live-in of its target block, or for an edge to EXIT what the
 * edge's kind says (0 after a return, a tail call or a call that does not return; FLAG_ALL for
 * an unresolved jump, a trap and any other kind; all for a tail call to a cold fragment). */
uint8_t flag_liveness__edge(const struct flag_liveness *fl, const struct cfg_func *f,
			    uint32_t e);

/* Flags live at the start of block B of F (0 for EXIT). */
static inline uint8_t flag_liveness__block(const struct flag_liveness *fl, uint32_t b)
{
	return b < fl->nblocks ? fl->block_in[b] : 0;
}

/* What instruction IN reads (*USE) and surely writes (*DEF) among the flags above, from
 * capstone's detail with the corrections capstone 4 needs. Exposed for the tests. */
void flag_liveness__insn_effect(const cs_insn *in, uint8_t *use, uint8_t *def);

/* Releases what FL holds. Safe on a zeroed FL. */
void flag_liveness__release(struct flag_liveness *fl);

#endif
