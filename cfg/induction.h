/*
 * Loops counted by an induction variable (Ball and Larus 1994, section 6.3; Sarkar's DO-loop
 * counts): a loop in which one 64-bit general register R is written by exactly one
 * instruction, a step by a constant (add/sub $imm, inc, dec, lea imm(R)), executes that step
 * exactly as often as the step's block runs inside the loop. Summing R over the loop's entry
 * edges into one accumulator and over its exit edges into another, the step's executions
 * are (exits - entries) / step, with no code inside the loop: sums commute, so this holds
 * across threads, recursion and processes, in wrap-around arithmetic.
 *
 * This module proves such loops in machine code and says where the sums are taken: at
 * instructions outside the loop, or at the loop's own instructions that run once per exit
 * (a ret or jmp leaving it), each an action "accumulator += register" made before the
 * instruction runs, unconditionally or, at a conditional jump, only when the jump goes the
 * action's way. An exit into a block that other code also enters is summed at that block's
 * first instruction, and every other entry of that block adds the same value to the entry
 * sum, which cancels it. A loop is proved only when:
 *   - its body has no call, system call, indirect jump, trap or exception edge, and every
 *     way out is a jump, a fall-through, a return or a direct tail call;
 *   - R (not rsp) is written in the body by the step alone (capstone's register accesses,
 *     implicit ones included), with a 64-bit destination;
 *   - it is not entered at the function's entry, and every entry edge and exit edge has a
 *     site as above (the entry value may also be a constant 0 written last before the loop,
 *     which needs no action, or a 64-bit register moved into R last, read at that move).
 * Loops that fail keep their reason for `edgeprof cfg`.
 */
#ifndef EDGEPROF_CFG_INDUCTION_H
#define EDGEPROF_CFG_INDUCTION_H

#include <stdbool.h>
#include <stdint.h>

#include "cfg.h"

enum iv_action_kind {
	IV_AT = 0,	  /* before the instruction at addr, every time */
	IV_JCC_TAKEN = 1, /* at the conditional jump at addr, when it is taken */
	IV_JCC_NOT = 2,	  /* at the conditional jump at addr, when it is not taken */
};

/* One "accumulator += register" action. */
struct cfg_iv_action {
	uint64_t addr;	/* a proven instruction start of the function */
	uint32_t insn;	/* its index in the function's instructions */
	uint32_t block; /* the block holding it */
	uint32_t next;	/* IV_JCC_*: the block the jump's counted way leads to */
	uint8_t kind;	/* enum iv_action_kind */
	uint8_t cc;	/* the jump's condition (struct cfg_insn.cc) for IV_JCC_* */
	uint8_t out;	/* 0: the entry sum, 1: the exit sum */
	int8_t reg;	/* x86 register number read (0 rax .. 15 r15) */
};

/* One proved loop. */
struct cfg_iv {
	uint32_t func;			 /* index into prog->funcs */
	uint32_t header;		 /* the loop's header block */
	uint32_t block;			 /* the step's block */
	uint64_t step_addr;		 /* the step instruction */
	int64_t step;			 /* what it adds to R (non-zero) */
	int8_t reg;			 /* R, x86 number */
	uint32_t first_action, nactions; /* into cfg_induction.actions */
	uint32_t first_block, nblocks;	 /* the loop's body, ascending, into cfg_induction.body */
};

/* A loop not proved, and why (a static string). */
struct cfg_iv_reject {
	uint32_t func;
	uint32_t header;
	const char *why;
};

struct cfg_induction {
	struct cfg_iv *iv; /* by function, then outer loops first */
	uint32_t niv;
	uint32_t *first; /* [nfuncs + 1]: function i's loops are iv[first[i] .. first[i + 1]) */
	struct cfg_iv_action *actions;
	uint32_t nactions;
	uint32_t *body;
	uint32_t nbody;
	struct cfg_iv_reject *rejects;
	uint32_t nrejects;
};

/* Proves the counted loops of every function of PROG for which SELECT (NULL: all) is set,
 * decoding with PROG's image. A step block belongs to one loop at most (the outermost that
 * proves). Returns 0 or a negative errno (-ENOMEM; the decoder's error, cfg_strerror()). */
int cfg_induction__analyze(struct cfg_induction *ind, const struct cfg_program *prog,
			   const bool *select);

/* Whether block B is in the body of IV. */
bool cfg_induction__in_body(const struct cfg_induction *ind, const struct cfg_iv *iv, uint32_t b);

/* Whether a frame of IV's function stopped at ADDR (in block B) is inside the loop as the
 * sums see it: entered (its value is in the entry sum) and not yet left (not in the exit
 * sum). FIRED: the instruction at ADDR had started (a fault), so an action there had been
 * made; else it had not (an interrupted thread). Conditional jumps never fault: an action
 * at one counts as not made. */
bool cfg_induction__inside(const struct cfg_induction *ind, const struct cfg_iv *iv, uint32_t b,
			   uint64_t addr, bool fired);

void cfg_induction__free(struct cfg_induction *ind);

#endif
