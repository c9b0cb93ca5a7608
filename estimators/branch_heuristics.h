/*
 * Ball and Larus's nine static branch heuristics ("Branch prediction for free", PLDI 1993, as
 * split by Wu and Larus 1994 into LBH and LEH), recognised on x86-64 machine code from the
 * CFG and capstone's operand and register-access details. A heuristic *applies* to a two-way
 * conditional branch when it predicts exactly one of its two successors as taken.
 *
 * Terms. B is the branch block (its last instruction a jcc), with out-edges T (taken) and N
 * (not taken). The *compare* is the last instruction of B that writes the flags before the
 * jcc; only cmp and test are treated as compares. A successor's *region* is the successor
 * block followed through single CALL_RETURN or FALLTHROUGH out-edges into blocks with a single
 * in-edge (at most 8 blocks): Ball and Larus's basic block, which our CFG splits after every
 * call. A region *returns* (or *calls a no-return function*) when it, or the path with no
 * further branch that follows it (single out-edges: fall-through, jump, call return; at most
 * 8 blocks), ends in a return or tail call (or a NORETURN edge): gcc shares epilogues, so the
 * return is often a jump away. EXIT as a successor (a conditional tail call) returns. "S
 * post-dominates B" is read off the post-dominator tree. Registers are general-purpose
 * register families (rax..r15, any width).
 *
 *   LBH  loop branch: one of the two edges is a back edge (loops.h, irreducible retreating
 *        edges included), the other is not: predicts the back edge.
 *   LEH  loop exit: no back edge; B is in a loop, no successor is a loop header, and exactly
 *        one edge leaves B's innermost loop: predicts the other edge.
 *   LHH  loop header: a successor that is a loop header (entered by a non-back edge) or a
 *        pre-header (a block whose single out-edge enters a loop header from outside that
 *        loop), and does not post-dominate B: predicted taken.
 *   PH   pointer: the compare is a 64-bit `test r,r` or `cmp r,0` with r a pointer, or
 *        `cmp r1,r2` with both pointers, and the jcc is je/jne; r is a pointer when it is the
 *        base register of a memory operand (not of lea) in a successor region before that
 *        region writes it. Predicts "not equal" (je not taken, jne taken).
 *   OH   opcode: the compare is `test r,r` or `cmp x,0` (x a register or memory) and the jcc
 *        is js/jl/jle (predicted not taken) or jns/jge/jg (predicted taken); or the compare is
 *        `cmp x,imm` (any imm, 0 included) with je (not taken) or jne (taken), PH does not
 *        apply to this branch (pointers against null are PH's), and neither the "not
 *        equal" successor nor a predecessor compares the same operand against a constant
 *        (or branches again on the same flags): a switch lowered to a compare chain is a
 *        multiway branch, on which no heuristic predicts.
 *   GH   guard: a register operand of the compare, not written between the compare and the
 *        jcc, is read before being written in exactly one successor region, and that
 *        successor does not post-dominate B: predicted taken.
 *   CH   call: exactly one successor region contains a call (call instruction) and does not
 *        post-dominate B: predicted not taken.
 *   SH   store: exactly one successor region contains a store (an explicit memory operand
 *        written, other than through rsp: spills and stack arguments are not stores of the
 *        program's data; push and call are not stores) and does not post-dominate B:
 *        predicted not taken.
 *   RH   return: exactly one successor region returns (a ret, an out-edge of kind RETURN or
 *        TAIL_CALL, or the successor is EXIT) and does not post-dominate B: predicted not
 *        taken. (Ball and Larus have no post-dominance condition here; gcc's shared
 *        epilogues make `if (c) x(); return` branch straight to a return block that both
 *        paths reach, where "returns" says nothing about the branch.)
 *
 * Besides the heuristics, each branch records which successor regions end in a no-return call
 * (exit, abort, ...), for Algorithm 1's "b calls exit()" case.
 *
 * Blocks whose last instruction is not a jcc, or whose two out-edges go to the same vertex,
 * get no heuristic.
 */
#ifndef EDGEPROF_ESTIMATORS_BRANCH_HEURISTICS_H
#define EDGEPROF_ESTIMATORS_BRANCH_HEURISTICS_H

#include <stddef.h>
#include <stdint.h>

#include "cfg/cfg.h"
#include "cfg/dominators.h"
#include "cfg/loops.h"

/* In the paper's order of Table 1 columns is irrelevant; this is the order reports use. */
enum bh_kind { BH_LBH, BH_LEH, BH_LHH, BH_PH, BH_OH, BH_GH, BH_CH, BH_SH, BH_RH, BH_COUNT };

/* Which of OH's rules applied: a sign test against 0 (js/jl/jle, jns/jge/jg), an equality
 * test against 0, or an equality test against another constant. Reported apart, since they
 * are different predictions on x86-64 code. */
enum bh_oh_rule { BH_OH_NONE, BH_OH_SIGN, BH_OH_EQ_ZERO, BH_OH_EQ_IMM, BH_OH_NRULES };

/* One two-way conditional branch and the heuristics that apply to it. */
struct bh_branch {
	uint32_t block;
	uint32_t edge[2];  /* edge[0]: taken (or a conditional tail call), edge[1]: not taken */
	uint16_t applies;  /* bit k: heuristic k applies */
	uint16_t predicts; /* bit k: heuristic k predicts edge[1] taken (else edge[0]) */
	uint8_t noreturn;  /* bit i: edge[i]'s successor region ends in a call to a no-return
			    * function or a trap (an out-edge of kind NORETURN) */
	uint8_t oh_rule;   /* enum bh_oh_rule: the rule by which OH applies, if it does */
};

struct bh_func {
	struct bh_branch *branches; /* in block order */
	uint32_t nbranches;
};

/* Reads code: the bytes at VADDR and how many follow (*AVAIL), or NULL. */
typedef const uint8_t *(*bh_code_fn)(const void *ctx, uint64_t vaddr, size_t *avail);

/* A capstone handle (x86-64, detail on) for recognising heuristics. */
struct bh_decoder {
	size_t cs;       /* csh */
	void *insn;      /* cs_insn scratch */
	bh_code_fn code;
	const void *code_ctx;
};

/* Opens a decoder reading code through CODE(CTX, ...). Returns 0 or -EINVAL (capstone could
 * not be opened) or -ENOMEM. */
int bh_decoder__open(struct bh_decoder *d, bh_code_fn code, const void *ctx);

void bh_decoder__close(struct bh_decoder *d);

/* bh_code_fn over an elf_image (CTX is the struct elf_image *). */
const uint8_t *bh_code__elf(const void *ctx, uint64_t vaddr, size_t *avail);

/* Finds the two-way conditional branches of F and the heuristics that apply to each, given
 * F's loops LP and post-dominator tree PDOM. Code is decoded from each block's [start, end).
 * OUT is zeroed first. Returns 0 or -ENOMEM (OUT then holds nothing). */
int branch_heuristics__func(struct bh_func *out, struct bh_decoder *d, const struct cfg_func *f,
			    const struct cfg_loops *lp, const struct cfg_domtree *pdom);

void bh_func__free(struct bh_func *bf);

/* "LBH", "LEH", ... for K < BH_COUNT, else "?". */
const char *bh__name(unsigned k);

/* "sign", "eq_zero", "eq_imm" for RULE in 1..3 (enum bh_oh_rule), else "?". */
const char *bh__oh_rule_name(unsigned rule);

/* The heuristic named NAME (case-insensitive), or -1. */
int bh__lookup(const char *name);

/* Table 1 of Wu and Larus (Ball and Larus's measured hit rates): LBH .88, LEH .80, LHH .75,
 * PH .60, OH .84, GH .62, CH .78, SH .55, RH .72. Fills RATES[BH_COUNT]. */
void bh__default_rates(double rates[BH_COUNT]);

#endif
