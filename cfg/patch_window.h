/*
 * Where a 5-byte `jmp rel32` to a trampoline may be written over a program's code: patch
 * windows of consecutive whole instructions of one block, 5 to 16 bytes, that nothing can
 * enter but at their first instruction, made only of instructions a trampoline can run
 * elsewhere with the same effect. "Nothing can enter" is proven against one set per program
 * of every address code may be entered at: every block start of every function, every
 * function start and PLT stub, every call and tail-call target, every call's return address,
 * every jump-table entry, every exception landing pad, every code address taken by a
 * rip-relative `lea`, an immediate, a relative relocation or an aligned data word; plus, per
 * query, the caller's own list (the resume pcs of held threads, unwound frame pcs, uprobe
 * sites, breakpoints). Functions with an unresolved indirect jump or undecodable code get no
 * window at all (their jumps may land anywhere). A count window starts at the instruction
 * whose block it counts (the increment runs before it); a branch window ends with a block's
 * jcc (each outcome counted on its own in the trampoline) and starts at or before it. Each
 * window is classed by the flags live where its increments go: PATCH_PLAIN (a bare `incq`)
 * or PATCH_FLAGSAVE.
 *
 * Short windows (the E9Patch / Dyninst short-jump tactic): where the block has fewer than 5
 * bytes from a count site to its end, or from its start to a branch site's jcc, a window of 2
 * to 4 bytes of whole instructions gets a 2-byte `jmp rel8` to a springboard, a 5-byte `jmp
 * rel32` to the trampoline written in bytes proven never executed within -128..+127 of the
 * jmp's end: a padding gap. A gap is a run of bytes covered by no recovered block of any
 * function, right after an unconditional jmp or a ret (every block ending there ends so),
 * up to the next recovered block, in one executable section, made only of nop and int3
 * instructions that tile it exactly, holding no entry of the set above (no block or function
 * start, symbol, FDE start, call return address, jump-table entry, landing pad, taken code
 * address), and lying in no function whose jumps are not all resolved (by symbol or FDE
 * range, or next to either end). The padding after a function's last instruction and the
 * padding after a jmp inside one are both such gaps.
 */
#ifndef EDGEPROF_CFG_PATCH_WINDOW_H
#define EDGEPROF_CFG_PATCH_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfg.h"
#include "decode.h"
#include "flag_liveness.h"

#define PATCH_WINDOW_MAX 16 /* bytes a window may overwrite */

enum patch_class {
	PATCH_NONE = 0,     /* no window */
	PATCH_PLAIN = 1,    /* flags the increment writes are dead there: a bare increment */
	PATCH_FLAGSAVE = 2, /* live: the increment saves and restores them */
};

/* How one instruction runs in a trampoline (the code generator and the window search agree
 * through this). The kinds after RELOC_RIP end a block and may only end a window. */
enum reloc_kind {
	RELOC_NO = 0,   /* cannot be moved (syscall, int, loop/jrcxz, xbegin, rsp-based indirect
			 * call, any other reader of rip, undecodable, 16-bit branches) */
	RELOC_COPY,     /* its bytes as they are */
	RELOC_RIP,      /* its bytes, the rip-relative disp32 re-based */
	RELOC_JMP,      /* jmp rel8/rel32: jmp rel32 to the same target */
	RELOC_JCC,      /* jcc rel8/rel32: jcc rel32, the outcomes split */
	RELOC_CALL,     /* call rel32: push the original return address, jmp rel32 */
	RELOC_CALL_IND, /* call *reg / *mem (not through rsp): push it, jmp *the same operand */
	RELOC_JMP_IND,  /* jmp *reg / *mem (rip-relative re-based) */
	RELOC_RET,      /* ret, ret imm16 */
};

/* The relocation kind of IN (decoded with detail). */
enum reloc_kind patch_reloc__kind(const cs_insn *in);

/* Whether IN (decoded with detail) can neither fault nor touch memory: no memory operand but
 * a lea's or a nop's, no implicit stack or string access, no division (patch_func.quiet). */
bool patch_insn__quiet(const cs_insn *in);

/* The code addresses of IMG that IN (decoded with detail) takes, entries of the set above: a
 * rip-relative lea's target, an immediate or an absolute displacement that is code (none for
 * a call, jmp or jcc). Writes at most MAX of them to OUT, in operand order; returns how many. */
unsigned patch_insn__taken(const struct elf_image *img, const cs_insn *in, uint64_t *out,
			   unsigned max);

/* Sorted, unique addresses (ELF vaddrs) where code may be entered other than by falling
 * through from the previous instruction. */
struct patch_entries {
	uint64_t *addr;
	size_t n, cap;
};

/* Whether any of PE, or of the sorted EXTRA[0, NEXTRA), lies in (LO, HI) (open: the window's
 * own start is fine). */
bool patch_entries__inside(const struct patch_entries *pe, const uint64_t *extra,
			   size_t nextra, uint64_t lo, uint64_t hi);

/* A function's analysis: per instruction k (cfg_func.insns order). */
struct patch_func {
	uint8_t *reloc;        /* enum reloc_kind */
	uint8_t *count_class;  /* enum patch_class: a count window can start at k */
	uint8_t *branch_class; /* enum patch_class: a branch window can end with k (its block's
				* last instruction, a jcc) */
	uint8_t *indirect_class; /* enum patch_class: an indirect window can count the table
				  * jump k (its block's last instruction) */
	uint8_t *quiet;        /* 1: k cannot fault nor touch memory (no memory operand but a
				* lea's, no stack access, no division) */
	int32_t *block;        /* the block holding k (block_of_insn's answer), or -1 */
	size_t entries_lo, entries_hi; /* patch_analysis.entries within the function's span */
	struct flag_liveness fl;
	bool refused;          /* unresolved or bad code: no windows */
};

/* A padding gap [lo, hi): bytes proven never executed (see above). */
struct patch_gap {
	uint64_t lo, hi;
};

#define PATCH_JMP8_LEN 2   /* jmp rel8 */
#define PATCH_SPRING_LEN 5 /* the springboard: jmp rel32 */

struct patch_analysis {
	const struct cfg_program *prog;
	struct patch_entries entries;
	struct patch_gap *gaps; /* sorted, disjoint */
	size_t ngaps;
	struct patch_func *funcs; /* indexed like prog->funcs */
	size_t nfuncs;
	struct {
		uint64_t insns, count_plain, count_flagsave, branch_plain, branch_flagsave;
		uint64_t jcc_blocks, entries;
		uint64_t count_short, branch_short; /* of the above, short windows */
		uint64_t gaps, gap_bytes;
		uint64_t table_jumps, indirect_plain, indirect_flagsave;
	} stats;
};

/* Analyses every function of PROG: the entry set, each instruction's relocation kind, flag
 * liveness, and the count and branch classes without any extra address to avoid. PROG must
 * outlive PA. Returns 0, -ENOMEM, or -EINVAL (capstone could not be opened). */
int patch_analysis__build(struct patch_analysis *pa, const struct cfg_program *prog);

/* Copies the classes into PROG's instructions (cfg_insn.patch_count, patch_branch and
 * patch_indirect as
 * PROBE_PATCH / PROBE_PATCH_FLAGS, 0 for none). PROG is the program PA was built from. */
void patch_analysis__apply(const struct patch_analysis *pa, struct cfg_program *prog);

/* Releases what PA holds. Safe on a zeroed or already released PA. */
void patch_analysis__release(struct patch_analysis *pa);

/* A window found by a query below. */
struct patch_window {
	uint64_t start;           /* ELF vaddr of its first instruction */
	uint8_t len;              /* bytes, 5..PATCH_WINDOW_MAX */
	uint32_t func;            /* index into prog->funcs */
	uint32_t first, ninsns;   /* its instructions: insns[first, first + ninsns) of func */
	uint8_t cls;              /* enum patch_class for the increments it carries */
	uint8_t live_entry;       /* FLAG_* live before its first instruction */
	bool ends_jcc;            /* its last instruction is its block's jcc */
	uint8_t live_taken;       /* ends_jcc: flags live on the taken outcome */
	uint8_t live_not_taken;   /* ... and on the not-taken one */
	bool ends_block;          /* its last instruction ends its block (no jmp back needed
				   * when it is a jmp, jcc, ret or call) */
	bool short_jump;          /* len < 5: a jmp rel8 to a springboard in a padding gap */
	/* Indirect windows: the instructions relocated run from start up to and including the
	 * table jump, RELOC_LEN bytes (>= len: only the first LEN are overwritten, the rest
	 * are never reached through the window's first instruction again); INDEX_REG (x86
	 * number) holds the table entry's index at start. reloc_len == len elsewhere. */
	uint8_t reloc_len;
	int8_t index_reg;
	uint8_t index_mult;       /* the register holds index_mult * the entry's index */
	uint64_t index_at;        /* the table load (ELF vaddr), in the window */
	uint8_t live_index;       /* flags live before it */
	uint32_t last;            /* the window's last relocated instruction (insns index) */
};

/* The most bytes an indirect window relocates (from the table load to the jump). */
#define PATCH_INDIRECT_MAX 64

/* Query options. */
#define PATCH_WINDOW_TO_BLOCK_END 0x1 /* "jump optimisation": extend a count window to its
				       * block's terminating jmp/jcc/ret/call when that is still
				       * a valid window, so the trampoline runs the terminator
				       * itself instead of jumping back to it */
/* A short count window: the fewest instructions that hold the jmp rel8, not first the block's
 * end (the window a held thread's resume point in the block's end leaves: the one to generate
 * code for, once a check has chosen it). */
#define PATCH_WINDOW_SHORTEST 0x2

/* The count window starting at instruction INSN of function FUNC (its increment counts
 * INSN's block): 5 bytes or more, or, when the block has fewer than 5 bytes from INSN on, a
 * short window (w->short_jump: INSN to the block's end, or the fewest instructions of 2 bytes
 * or more) that has at least one springboard slot in reach (patch_analysis__springboard with
 * nothing used); none of whose instructions but the first starts at one of AVOID[0, NAVOID)
 * (sorted ELF vaddrs; may be NULL). Returns 0 with *W, or -ENOENT. */
int patch_analysis__count_window(const struct patch_analysis *pa, size_t func, uint32_t insn,
				 const uint64_t *avoid, size_t navoid, unsigned opts,
				 struct patch_window *w);

/* The shortest branch window ending with instruction INSN of FUNC (its block's jcc), under
 * AVOID as above; when the block has fewer than 5 bytes up to the jcc's end, the jcc alone as
 * a short window (w->short_jump), if a springboard slot is in reach. live_taken /
 * live_not_taken say where each outcome's increment needs the
 * flags; cls is their worst. Returns 0 with *W, or -ENOENT. */
int patch_analysis__branch_window(const struct patch_analysis *pa, size_t func, uint32_t insn,
				  const uint64_t *avoid, size_t navoid, struct patch_window *w);

/* A springboard for the short window W: the start SB of a 5-byte slot [SB, SB + 5)
 * inside one padding gap, within jmp rel8 reach of the window's jmp (-128 <= SB - (w->start
 * + 2) <= 127), overlapping none of the slots USED[0, NUSED) (their starts, any order) and
 * holding none of AVOID[0, NAVOID) (sorted), the nearest to W's start. Returns 0 with *SB, or
 * -ENOENT. */
int patch_analysis__springboard(const struct patch_analysis *pa, const struct patch_window *w,
				const uint64_t *used, size_t nused, const uint64_t *avoid,
				size_t navoid, uint64_t *sb);

/* The springboard slot starts a jmp rel8 at START reaches: [*LO, *HI]. */
void patch_window__sb_reach(uint64_t start, uint64_t *lo, uint64_t *hi);

/* The index of the first of PA's gaps whose end is above A (pa->ngaps when none is): the gap
 * holding A when its lo <= A. */
size_t patch_analysis__gap_after(const struct patch_analysis *pa, uint64_t a);

/* Whether [SB, SB + 5) is a springboard slot of the short window W (in one gap, in reach). */
bool patch_analysis__springboard_ok(const struct patch_analysis *pa,
				    const struct patch_window *w, uint64_t sb);

/* The indirect window counting the table jump INSN of FUNC (its block's last instruction,
 * a jump through a resolved table whose entry load proves a register holding the entry's
 * index, cfg_jump_table.load): it starts at that load in the same block (or as far before it
 * as 5 bytes need) and relocates every instruction from there to the jump; nothing but its
 * first instruction may be entered at (AVOID as above, checked over the whole relocated
 * range), and every instruction between the load and the jump is quiet (patch_func.quiet: a
 * fault there would leave the jump counted but not taken). live_index is the flags live at
 * the load; cls PATCH_FLAGSAVE when any flag is (the bounds check writes them all). Returns 0
 * with *W, or -ENOENT. */
int patch_analysis__indirect_window(const struct patch_analysis *pa, size_t func, uint32_t insn,
				    const uint64_t *avoid, size_t navoid, struct patch_window *w);

/* The index in F's insns of the instruction at ADDR, or -1. */
long patch_func__insn_at(const struct cfg_func *f, uint64_t addr);

#endif
