/*
 * The control-flow graph of a whole binary: functions made of basic blocks and kinded edges,
 * recovered by recursive traversal from function entries and resolved jump-table targets
 * (never by linear sweep), so every block start is a proven instruction start.
 *
 * Ids are dense: blocks, edges and instructions of a function live in arrays and refer to each
 * other by index. Each function has a virtual EXIT vertex whose id is nblocks; edges that leave
 * the function (return, tail call, no-return call, trap) go to it. Addresses are ELF virtual
 * addresses. The graph never changes once built: analyses and profiles keep their own arrays.
 */
#ifndef EDGEPROF_CFG_CFG_H
#define EDGEPROF_CFG_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf_image.h"
#include "symbols.h"

/* What an instruction does to control flow. */
enum insn_flow {
	INSN_PLAIN = 0,  /* falls through */
	INSN_JCC,        /* conditional direct jump (jcc, jrcxz, loop*) */
	INSN_JMP,        /* unconditional direct jump */
	INSN_JMP_IND,    /* indirect jump (register or memory) */
	INSN_CALL,       /* direct call */
	INSN_CALL_IND,   /* indirect call */
	INSN_RET,        /* ret / iret */
	INSN_TRAP,       /* hlt, ud2, int3 (as a terminator): control leaves to EXIT */
	INSN_SYSCALL,    /* syscall: falls through */
};

/* What a counting site on this instruction costs: the first four classes are uprobes (what
 * the kernel does with the probed instruction, see uprobe-costs in the README); the last two
 * are in-process counters, a jump written over a window of whole instructions to a trampoline
 * that increments a counter (cfg_insn.patch_count / patch_branch say where one can go). */
enum insn_probe_class {
	PROBE_STEPPED = 0, /* copied out of line and single-stepped: expensive */
	PROBE_EMULATED,    /* jcc, jmp rel, call rel32, push reg, nop / xchg ax,ax */
	PROBE_NOP5,        /* 5-byte nopl: optimised uprobe (measured by calibrate; never placed:
			    * the optimised uprobe's call writes into the red zone) */
	PROBE_NEVER,       /* must not be probed (e.g. a prefix-only or unknown encoding) */
	PROBE_PATCH,       /* in-process counter, flags dead where it increments */
	PROBE_PATCH_FLAGS, /* in-process counter that saves and restores the flags */
	PROBE_CLASS_COUNT
};

/* Whether a site of class CLS counts in process (a patched jump to a trampoline), not with a
 * uprobe. */
static inline bool probe_class__in_process(unsigned cls)
{
	return cls == PROBE_PATCH || cls == PROBE_PATCH_FLAGS;
}

struct cfg_insn {
	uint64_t addr;
	uint8_t size;
	uint8_t flow;        /* enum insn_flow */
	uint8_t probe_class; /* enum insn_probe_class */
	uint8_t cc;          /* for INSN_JCC: the x86 condition code (jcc opcode & 0xf), or
			      * 0x10 jrcxz/jecxz, 0x11 loop, 0x12 loope, 0x13 loopne */
	/* In-process counters (0 where none can go; else PROBE_PATCH or PROBE_PATCH_FLAGS), set
	 * by a patch-window analysis after the build, never by the builder itself:
	 * patch_count   a window may start here, counting this instruction's block;
	 * patch_branch  (a block's last jcc) a window may end with this jump, counting each
	 *               outcome on its own. */
	uint8_t patch_count, patch_branch;
	/* patch_indirect  (a resolved table jump) a window from the table load to this jump
	 *                 counts each table entry taken, indexed by the entry (0: none). */
	uint8_t patch_indirect;
	/* 1: the instruction shares bytes with another instruction of its function, the one
	 * shape the builder accepts (cfg_func__prefix_pair): a jump lands just after an
	 * instruction's lock prefix (glibc's `cmpl $0,%fs:0x18; je 0f; lock; 0: cmpxchg`), so the
	 * prefixed instruction and the same one without the prefix are both decoded, each in a
	 * block of its own, ending at the same address. Neither may carry a probe or lie in a
	 * patch window (a byte written at either start would sit inside the other): the builder
	 * gives both PROBE_NEVER and the patch-window analysis never relocates them. */
	uint8_t overlap;
};

enum cfg_edge_kind {
	EDGE_FALLTHROUGH = 0, /* block split at a jump target, no control transfer */
	EDGE_TAKEN,           /* conditional branch taken */
	EDGE_NOT_TAKEN,       /* conditional branch not taken */
	EDGE_JUMP,            /* unconditional direct jump */
	EDGE_SWITCH,          /* jump-table case */
	EDGE_CALL_RETURN,     /* fall-through after a call that returns */
	EDGE_TAIL_CALL,       /* jump to another function's entry (to EXIT) */
	EDGE_RETURN,          /* return (to EXIT) */
	EDGE_NORETURN,        /* call to a no-return function, or a trap (to EXIT) */
	EDGE_UNRESOLVED,      /* unresolved indirect jump (to EXIT); the function is unresolved */
	EDGE_EXCEPTION,       /* a call that may throw -> its C++ landing pad (from the LSDA) */
	EDGE_KIND_COUNT
};

/* Edge flags. */
#define CFG_EDGE_COND_TAKEN 0x1 /* TAIL_CALL taken by a conditional jump (clang's jcc tail call) */
#define CFG_EDGE_INDIRECT 0x2   /* TAIL_CALL or NORETURN through an indirect jump / call */

struct cfg_edge {
	uint32_t from, to; /* block ids; to == nblocks is EXIT */
	uint8_t kind;      /* enum cfg_edge_kind */
	uint8_t flags;
	uint16_t ncases;   /* EDGE_SWITCH: table entries that lead here */
	uint64_t target;   /* TAIL_CALL / NORETURN: callee address, 0 when indirect or external */
};

struct cfg_block {
	uint64_t start, end;    /* [start, end) */
	uint32_t first_insn;    /* index into cfg_func.insns */
	uint32_t ninsns;
	uint32_t first_succ;    /* index into cfg_func.succ (edge ids), nsucc of them */
	uint32_t nsucc;
	uint32_t first_pred;    /* index into cfg_func.pred (edge ids), npred of them */
	uint32_t npred;
};

/* Why a call site was judged not to return (cfg_call.noreturn_why). */
enum cfg_noreturn_why {
	CFG_NORET_NONE = 0,
	CFG_NORET_CALLEE, /* the callee never returns (known by name, or the fixpoint) */
	CFG_NORET_STATUS, /* error() / error_at_line() with a non-zero constant status (edi) */
	CFG_NORET_LAYOUT, /* the call's fall-through leaves the function (its end, padding up to
			   * it, or another function's entry): the compiler emitted nothing after
			   * it because the call does not return (see CFG_FUNC_RUNS_OFF) */
};

/* A call site inside a function. */
struct cfg_call {
	uint64_t site;    /* address of the call (or tail-call jump) instruction */
	uint64_t target;  /* callee address; 0 when indirect and not resolved */
	uint32_t block;
	uint8_t indirect; /* through a register or memory */
	uint8_t tail;     /* a tail call (jump) rather than a call */
	uint8_t noreturn; /* callee judged no-return at build time */
	uint8_t external; /* callee is outside this binary (PLT stub or GOT slot) */
	uint8_t noreturn_why; /* enum cfg_noreturn_why, with noreturn */
	const char *name; /* callee name when known (symbol, PLT or GOT), else NULL */
};

/* A jump table resolved at an indirect jump. */
struct cfg_jump_table {
	uint64_t jump;    /* address of the indirect jump */
	uint64_t table;   /* address of the table */
	uint32_t entries; /* from the guarding compare or an index mask, limited to the table's
			   * data object when a symbol gives its size */
	uint8_t entry_size;
	uint8_t relative; /* entries are int32 offsets from the table base (PIC form) */
	uint8_t inferred; /* bound from an index mask, the table's length from where its entries
			   * stop pointing into the function (no symbol gave its size) */
	/* The jump's operand, for a probe that recomputes the target at run time: `jmp *base`
	 * (mem == 0) or `jmp *disp(base, index, 1 << scale_log2)` (mem == 1); registers are
	 * x86 numbers 0 (rax) .. 15 (r15), -1 for none; operand_ok == 0 when the form is not
	 * one of these (e.g. rip-relative or segment-based). */
	uint8_t operand_ok, mem, scale_log2;
	int8_t base, index;
	int32_t disp;
	/* The instruction that loads the table entry (the jump itself for `jmp *mem`), and the
	 * register (x86 number) that holds load_mult * j, j the entry's index (table +
	 * entry_size * j), just before it runs, for a counter indexed by j (load_mult 1, 2, 4
	 * or 8: gcc -O0 scales the index before the load); load == 0 (load_index -1) when the
	 * analysis did not prove such a register, or the paths to the jump disagree. */
	uint64_t load;
	int8_t load_index;
	uint8_t load_mult;
	uint64_t rel_base; /* relative: an entry's target is rel_base + sext32(entry) */
};

/* Function flags. */
#define CFG_FUNC_UNRESOLVED 0x1 /* has an indirect jump that could not be resolved */
#define CFG_FUNC_NORETURN 0x2   /* no path reaches a return or returning tail call */
#define CFG_FUNC_BAD_CODE 0x4   /* traversal hit undecodable bytes or left the code */
#define CFG_FUNC_EXTERNAL_NAME 0x8
/* Control can run past the function's end: a fall-through, a jcc's not-taken side or a jump
 * reaches code outside the function (another function's entry, or outside its symbol/FDE
 * range and its cold fragments) other than after a call (a call whose fall-through leaves is
 * no-return, CFG_NORET_LAYOUT). That code is not taken into the function: the path ends in an
 * EDGE_UNRESOLVED edge to EXIT whose target is the outside address (also bad_addr), and the
 * function gets block counts only. The rule (build.c, leaves_function): no block of a
 * function ever holds another function's entry or bytes outside its range, so code that
 * runs there is never counted as this function's. */
#define CFG_FUNC_RUNS_OFF 0x10
/* The other side of CFG_FUNC_RUNS_OFF: another function runs into this one's code other
 * than at its entry (glibc's __mempcpy_* jump into __memmove_*'s body, __memmove_chk_* falls
 * into it). Those addresses are roots (block starts entered from outside, as landing pads
 * are), listed in cfg_func.foreign: each is entered by a virtual edge EXIT->root whose count
 * no probe can take apart from the block's other entries, so the function gets block counts
 * only and those edges are unknowns of propagation. */
#define CFG_FUNC_FOREIGN_ENTRY 0x20

struct cfg_func {
	char *name;        /* owned copy */
	uint64_t entry;    /* ELF vaddr of the entry block */
	uint64_t sym_size; /* from symbol/FDE, 0 if unknown */
	unsigned sources;  /* enum func_source bits */
	uint32_t flags;    /* CFG_FUNC_* */

	struct cfg_block *blocks; /* sorted by start; blocks[0] is not necessarily the entry */
	uint32_t nblocks;
	uint32_t entry_block;
	struct cfg_edge *edges;
	uint32_t nedges;
	uint32_t *succ, *pred; /* edge ids grouped per block (see cfg_block) */
	uint32_t exit_first_pred, exit_npred; /* EXIT's in-edges in pred[] */
	struct cfg_insn *insns; /* in block order, each block's instructions contiguous */
	uint32_t ninsns;

	struct cfg_call *calls;
	uint32_t ncalls;
	struct cfg_jump_table *tables;
	uint32_t ntables;
	uint64_t *unresolved; /* addresses of unresolved indirect jumps */
	uint32_t nunresolved;
	uint64_t bad_addr;    /* with CFG_FUNC_BAD_CODE: where decoding failed; with
			       * CFG_FUNC_RUNS_OFF: the first address outside reached */
	uint32_t *foreign;    /* with CFG_FUNC_FOREIGN_ENTRY: the blocks another function's
			       * code runs into, ascending ids */
	uint32_t nforeign;
};

struct cfg_stats {
	double t_load, t_symbols, t_build, t_noreturn, t_analyze; /* seconds per phase */
	uint64_t insns_decoded;
	uint64_t nblocks, nedges;
	uint32_t nunresolved_funcs, nnoreturn_funcs, nbad_funcs, ntables;
	uint32_t nrunsoff_funcs;
	uint32_t noreturn_rounds;
};

struct decoder;
struct dinsn;

struct cfg_program {
	struct elf_image *img; /* not owned */
	struct symbols syms;
	struct cfg_func *funcs; /* sorted by entry */
	size_t nfuncs;
	struct cfg_stats stats;
	/* The build's decoding cache (decode.h; owned, NULL in a program made by hand): the
	 * analyses after the build (flag liveness, patch windows) read each instruction's facts
	 * from it instead of decoding again. */
	struct decoder *dec;
};

struct cfg_options {
	bool include_fragments_as_funcs; /* reserved */
	/* The decoding of an earlier build of an image with the same bytes, by the same code
	 * (decoder__records), or ninsns 0: preloaded (decoder__preload), so that the build
	 * decodes only what it lacks. */
	const struct dinsn *insns;
	size_t ninsns;
	const uint64_t *taken;
	size_t ntaken;
	/* NULL: the build copies insns and taken. Else they are lent to the program, read in
	 * place: they must stay valid and unchanged until the build calls RELEASE(RELEASE_CTX),
	 * which it does exactly once (when ninsns is not 0): when the program no longer reads
	 * them (cfg_program__free, cfg_program__drop_decoding, or the decoding grew), or before
	 * cfg_program__build returns an error. */
	void (*release)(void *ctx);
	void *release_ctx;
	/* Called after each function built, with how many are built and how many are known so
	 * far (calls found reveal more), or NULL. */
	void (*progress)(void *ctx, size_t built, size_t known);
	void *progress_ctx;
};

/* Discovers functions in IMG and builds every function's CFG, the no-return fixpoint and the
 * call sites. OPTS may be NULL. Returns 0, or a negative errno with the reason in
 * cfg_strerror() (-EINVAL with a preloaded decoding that cannot be IMG's). Functions whose
 * code cannot be decoded are kept with CFG_FUNC_BAD_CODE rather than failing the build. */
int cfg_program__build(struct cfg_program *prog, struct elf_image *img,
		       const struct cfg_options *opts);

void cfg_program__free(struct cfg_program *prog);

/* Frees PROG's decoding cache (cfg_program.dec, tens of MB for a large binary) once the
 * analyses that read it are done; any later one decodes on its own, with the same results. */
void cfg_program__drop_decoding(struct cfg_program *prog);

/* The function whose entry is ADDR, or NULL. */
struct cfg_func *cfg_program__func_at(const struct cfg_program *prog, uint64_t addr);

/* The function named NAME (first match); else, when NAME is a hex address ("0x401136"), the
 * function whose entry it is, or else one whose blocks contain it; else NULL. */
struct cfg_func *cfg_program__find(const struct cfg_program *prog, const char *name);

/* The block of F containing ADDR (any byte of it), or -1. Of a prefix pair
 * (cfg_func__prefix_pair), ADDR in the inner block's bytes gives the inner block: every
 * instruction start gives the block holding the instruction that starts there. */
int cfg_func__block_containing(const struct cfg_func *f, uint64_t addr);

/* The block of F starting exactly at ADDR, or -1. */
int cfg_func__block_at(const struct cfg_func *f, uint64_t addr);

/* True when ADDR is the start of one of F's decoded instructions. */
bool cfg_func__is_insn_start(const struct cfg_func *f, uint64_t addr);

/* Do blocks B - 1 and B of F (B >= 1) form the one overlap the builder accepts: block B is a
 * single instruction starting inside block B - 1's last instruction, after its prefix bytes,
 * and both end at the same address (both instructions marked cfg_insn.overlap)? */
bool cfg_func__prefix_pair(const struct cfg_func *f, uint32_t b);

/* True when F's blocks are sorted and disjoint but for prefix pairs (cfg_func__prefix_pair). */
bool cfg_func__blocks_ok(const struct cfg_func *f);

/* Fills F's succ/pred arrays and each block's first_succ/nsucc/first_pred/npred (and EXIT's
 * in-edges) from F's edges. Used by the builder and by tests that build CFGs by hand.
 * Returns 0 or -ENOMEM. */
int cfg_func__index_edges(struct cfg_func *f);

/* Releases everything F owns (not F itself). */
void cfg_func__release(struct cfg_func *f);

/* EXIT's vertex id for F (== nblocks). */
static inline uint32_t cfg_func__exit(const struct cfg_func *f)
{
	return f->nblocks;
}

/* Printable name of an edge kind ("fallthrough", "taken", ...). */
const char *cfg_edge_kind__name(enum cfg_edge_kind kind);

#endif
