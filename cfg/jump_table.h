/*
 * Jump-table recognition at an indirect jump. The straight-line chain of instructions that
 * leads to the jump (extended backwards while each instruction has exactly one predecessor)
 * is executed symbolically; the target must be a load from TABLE + stride * INDEX (absolute
 * 8-byte entries) or BASE + sext32(load) (PIC form), and INDEX must be bounded by an unsigned
 * compare (cmp $N + ja/jae/jbe/jb) on the chain or by an `and $mask` of the index; a table
 * never extends past the data object (symbol) that holds it. A register that the chain only reads (e.g. a
 * table base loaded before a loop) is a constant when every definition reaching the chain
 * start, over all predecessors, is the same `lea X(%rip)` or `mov $imm`. No bound, no table:
 * the caller reports the jump unresolved instead of guessing.
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

#endif
