/*
 * Jump-table recognition at an indirect jump. The straight-line chain of instructions that
 * leads to the jump (extended backwards while each instruction has exactly one predecessor)
 * is executed symbolically; the target must be a load from TABLE + stride * INDEX (absolute
 * 8-byte entries) or BASE + sext32(load) (PIC form), and INDEX must be bounded by an unsigned
 * compare (cmp $N + ja/jae/jbe/jb) on the chain or by an `and $mask` of the index (or a
 * movzx of a byte or word register, a mask of 0xff / 0xffff); a table never extends past the
 * data object (symbol) that holds it. When the chain stops at a merge (an instruction with
 * several predecessors, e.g. the bound check copied onto a loop's back edge), each
 * predecessor's path is resolved on its own and all must give the same table. A register
 * that the chain only reads (e.g. a table base loaded before a loop) is a constant when
 * every definition reaching the chain start, over all predecessors, is the same
 * `lea X(%rip)`, `mov $imm` or zero idiom. No bound, no table: the caller reports the jump
 * unresolved instead of guessing.
 */
#ifndef EDGEPROF_CFG_JUMP_TABLE_H
#define EDGEPROF_CFG_JUMP_TABLE_H

#include "cfg.h"
#include "decode.h"

/* Tells the resolver the unique predecessor of the instruction at ADDR within the function
 * being built: returns true and sets *PRED when there is exactly one (fall-through or jump),
 * false when ADDR is the function entry or has zero or several predecessors. */
typedef bool (*jt_unique_pred_fn)(void *ctx, uint64_t addr, uint64_t *pred);

/* Lists every predecessor of the instruction at ADDR within the function being built into
 * OUT (at most MAX). Returns how many there are (possibly more than MAX: then OUT holds the
 * first MAX), or SIZE_MAX when ADDR is the function entry (values there come from callers). */
typedef size_t (*jt_preds_fn)(void *ctx, uint64_t addr, uint64_t *out, size_t max);

struct jt_cfg {
	jt_unique_pred_fn unique_pred;
	jt_preds_fn preds;
	/* Bytes from ADDR to the end of the data object holding it, 0 when unknown. */
	uint64_t (*table_limit)(void *ctx, uint64_t addr);
	/* True when ADDR lies inside the function being built (its symbol or FDE range). */
	bool (*in_function)(void *ctx, uint64_t addr);
	void *ctx;
};

/* Resolves the indirect jump at JUMP. On success returns 0, fills *JT and sets *TARGETS to a
 * malloc'd array of JT->entries targets (in table order, duplicates kept). Returns -ERANGE
 * when the target is loaded from a constant address plus a scaled index (it looks like a
 * table) but no bound is proven, -ENOENT when it does not look like a table at all, -ENOMEM
 * on allocation failure. */
int jump_table__resolve(struct decoder *d, uint64_t jump, const struct jt_cfg *cfg,
			struct cfg_jump_table *jt, uint64_t **targets);

/* Is the general register FAM (0 rax .. 15 r15, see x86_reg_family) the same constant on
 * every path that reaches the instruction at ADDR, just before it runs? Searches backwards
 * over every predecessor CFG->preds gives, each path until an instruction that writes FAM
 * (a call clobbers the caller-saved registers): each such write must be a recognised constant
 * (mov $imm, lea X(%rip), the xor/sub zero idiom), all equal. Returns 0 with *VAL set, or
 * -ENOENT when not proven (a path from the function entry or a root, an unknown write, two
 * different values, too many instructions, or no memory). The answer holds for the
 * predecessors known now: a caller still discovering the function's code must ask again once
 * it is complete. */
int jump_table__reg_const(struct decoder *d, const struct jt_cfg *cfg, uint64_t addr, int fam,
			  int64_t *val);

#endif
