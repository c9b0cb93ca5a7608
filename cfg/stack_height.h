/*
 * Stack height analysis: how far rsp is below its value at function entry, per instruction,
 * by forward dataflow over the CFG (push/pop, add/sub/lea of rsp by constants, call, and
 * leave through a tracked rbp). Used to tell an indirect tail call (frame fully torn down)
 * from an indirect jump inside the function.
 */
#ifndef EDGEPROF_CFG_STACK_HEIGHT_H
#define EDGEPROF_CFG_STACK_HEIGHT_H

#include "cfg.h"
#include "decode.h"

#define STACK_HEIGHT_UNKNOWN INT64_MIN

/* Computes the stack height (0 at entry, -8 after one push) just before each of the N
 * instructions ADDRS of F (STACK_HEIGHT_UNKNOWN where paths disagree or rsp is set in a way
 * not modelled) into OUT, and whether F takes the address of one of its own instructions
 * (lea/mov of a code label: a sign of computed goto) into *LABEL_TAKEN. ADDRS NULL: the height
 * before every instruction, OUT[i] for f->insns[i] (N is ignored; room for f->ninsns). Returns 0
 * or -ENOMEM. */
int stack_height__at(const struct cfg_func *f, struct decoder *d, const uint64_t *addrs,
		     size_t n, int64_t *out, bool *label_taken);

#endif
