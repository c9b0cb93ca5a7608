/*
 * The code generator of the in-process counting backend: for one patch window (cfg/
 * patch_window.h) it makes the bytes to write over the window (a jmp rel32 to a trampoline,
 * int3 fill), the trampoline (the counter increments and the window's instructions relocated),
 * and a map from every trampoline offset to the original address a thread stopped there is
 * equivalent to. Plain data, no ptrace: the patcher (user/count/patcher.h) installs it.
 * Increments are `incq disp32(%rip)` behind a prefix byte the patcher may flip between 0x3e
 * (plain) and 0xf0 (lock); where flags the increment writes are live it is wrapped, below the
 * 128-byte red zone, in rax + lahf/seto ... add/sahf (or pushfq/popfq), so every register, flag
 * and the red zone survive. An indirect site (a jump-table dispatch) gets an indexed
 * increment instead: before the table load, the counter of the table entry about to be taken,
 * `incq slots(,%idx,8)`, behind an unsigned bounds check of the index register (an index out
 * of the table counts into one more slot, never outside the site's slots).
 */
#ifndef EDGEPROF_USER_COUNT_TRAMPOLINE_H
#define EDGEPROF_USER_COUNT_TRAMPOLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PATCH_NO_COUNTER UINT32_MAX

/* A jump of a trampoline to original code: its rel32 at OFF in the trampoline, to TO. */
struct patch_jump {
	uint32_t off;
	uint64_t to;
};

/* A stretch of a trampoline: a pc at tramp + x with off <= x < the next stretch's off. */
struct patch_pc {
	uint32_t off;	  /* its first offset in the trampoline code */
	uint64_t orig;	  /* clean: the equivalent original address (run-time) */
	uint32_t pending; /* clean: the counter (index from the counters base) to add one to
			   * when the pc is moved to orig, or PATCH_NO_COUNTER */
	uint8_t clean;	  /* 0: single-step the thread until it is at a clean offset (or out of
			   * the trampoline); PATCH_PC_FIRED: after the site's own counter was
			   * bumped, before its first displaced instruction ran: a thread that
			   * can run is stepped on (at orig it would be taken for one the site
			   * had not counted), one that ends there (its exit, e.g. that
			   * instruction faulted) is at orig with the site fired, as a uprobe
			   * at orig would have fired before the fault */
};

#define PATCH_PC_FIRED 2

struct patch_blob {
	uint64_t site;	  /* run-time address of the window start */
	uint8_t len;	  /* bytes overwritten there (>= 5, or >= 2 with a springboard) */
	uint8_t code[16]; /* new bytes for [site, site + len): jmp rel32 to tramp (jmp rel8 to
			   * the springboard), int3 fill */
	uint8_t orig[16]; /* the original bytes (restore and verify) */
	uint64_t sb;	  /* run-time address of the springboard, 0 for none: [sb, sb + 5) */
	uint8_t sb_code[5]; /* jmp rel32 to tramp */
	uint8_t sb_orig[5]; /* the padding's original bytes (restore and verify) */
	uint64_t tramp;	  /* run-time address its trampoline code will live at */
	uint8_t *tramp_code; /* malloc'd */
	uint32_t tramp_len;
	struct patch_pc *pcs; /* by increasing off, the first at 0 */
	uint32_t npcs;
	uint32_t *lock_offsets; /* prefix bytes in tramp_code: 0x3e plain, 0xf0 lock (atomic) */
	uint32_t nlock;
	uint8_t nconts;     /* continuations copied (struct tramp_cont) */
	uint8_t nshortcuts; /* jumps sent straight to another window's trampoline */
	struct patch_jump *jumps; /* its rel32 jumps to original addresses */
	uint32_t njumps;
};

/* How a flag-saving increment keeps the flags. */
enum tramp_flagsave {
	TRAMP_SAVE_LAHF = 0, /* push rax; [seto al]; lahf; inc; [add $0x7f,al]; sahf; pop rax */
	TRAMP_SAVE_PUSHF,    /* pushfq; inc; popfq */
};

/* A stretch of original code a trampoline may run a copy of instead of jumping back to it
 * (section 6.3's jump optimisation: the jump back is saved wherever the copy reaches a ret, a
 * jmp or a taken jcc before it has to return to the original code). Whole instructions
 * [AT, AT + LEN) (run-time addresses) of relocation kinds copy, rip-relative, jcc, jmp or ret
 * only (cfg/patch_window.h), NINSNS of them with their SIZES and KINDS, which hold no site, no
 * window and nothing else that must run in the original code; only the last may be a jmp or
 * ret. A jcc's taken outcome jumps to its target, the copy goes on with its not-taken one. */
struct tramp_cont {
	uint64_t at;
	const uint8_t *bytes;
	uint8_t len, ninsns;
	const uint8_t *sizes, *kinds;
};

/* One window's trampoline to make. The flags FLAG_* are cfg/flag_liveness.h's bits. */
struct tramp_spec {
	uint64_t site;           /* run-time address of the window start */
	const uint8_t *bytes;    /* the window's original bytes, LEN of them */
	uint8_t len;             /* 5..16 (2..16 with a springboard): whole instructions, the
				  * last may be a jmp, jcc, call, ret or indirect jmp (then nothing
				  * jumps back) */
	uint64_t springboard;    /* run-time address of a springboard in padding within rel8
				  * reach of site + 2, or 0: the site gets a jmp rel32 itself */
	const uint8_t *sb_bytes; /* the springboard's 5 original bytes (with springboard) */
	uint64_t tramp;          /* run-time address the trampoline will live at */
	uint64_t counters;       /* run-time address of counter 0 (counter c at + 8c) */
	uint32_t entry_counter;  /* incremented before the window runs, or PATCH_NO_COUNTER */
	uint32_t taken_counter;  /* window ending with a jcc: its taken outcome's counter */
	uint32_t not_taken_counter; /* ... and its not-taken outcome's (or PATCH_NO_COUNTER) */
	uint8_t live_entry, live_taken, live_not_taken; /* flags live where each goes */
	bool atomic;             /* lock prefixes from the start */
	uint8_t flagsave;        /* enum tramp_flagsave */
	/* A jump the trampoline makes to this window's own site goes to its own start; one to
	 * any other original address is recorded (struct patch_blob jumps) for
	 * patch_blob__shortcut. */
	/* An indirect site (a jump-table dispatch): when INDEXED, the window's instruction at
	 * INDEX_AT (run-time) loads the table entry whose index j, times INDEX_MULT (0 or 1, 2,
	 * 4, 8), is in register INDEX_REG (x86 number, not rsp) just before it; right before it
	 * the trampoline adds one to counter INDEX_COUNTER + j (`incq slots(,%idx,8/mult)`)
	 * when j < INDEX_SLOTS (unsigned), else to INDEX_COUNTER + INDEX_SLOTS
	 * (out of range), with every flag saved when LIVE_INDEX (the flags live before the load)
	 * has any, since the bounds check writes them all. The LEN bytes relocated (5 up to
	 * TRAMP_MAX_RELOC, whole instructions) end with the table jump; only the first PATCH_LEN
	 * (5..16) are overwritten. The counters' address is absolute (`disp32(,%idx,8)`) when
	 * the slots lie below 2 GiB, else taken into a scratch register saved below the red
	 * zone. ENTRY_COUNTER and the jcc counters must be PATCH_NO_COUNTER. */
	bool indexed;
	uint64_t index_at;
	uint8_t live_index;
	int8_t index_reg;
	uint8_t index_mult;
	uint32_t index_counter, index_slots;
	uint8_t patch_len;
	/* Optional (NULL: every instruction is decoded here): the window's first NINSNS
	 * instructions as the patch analysis decoded them, their sizes and enum reloc_kind. One of
	 * a plain form (a copy without a rip-relative operand, ret, a direct jmp, jcc or call, no
	 * prefix) is relocated from its bytes without decoding it again; any other is decoded
	 * and must be what they say. */
	const uint8_t *sizes, *kinds;
	uint32_t ninsns;
	/* Optional continuations, sorted by at: where the trampoline would jump back to the
	 * start of one of them (the window's end, a jcc outcome, a jmp target), it runs the copy
	 * instead. A trampoline that would grow past TRAMP_MAX_LEN with them is made without. */
	const struct tramp_cont *cont;
	uint32_t ncont;
};

/* The most bytes a trampoline takes. */
#define TRAMP_MAX_LEN 320

/* The most bytes an indexed (indirect) window relocates. */
#define TRAMP_MAX_RELOC 64

/* Makes the patch for SP into *OUT (release with patch_blob__release): with a springboard,
 * the site gets a jmp rel8 to it and the springboard a jmp rel32 to the trampoline (-ERANGE
 * when the springboard is out of rel8 reach). The window's bytes are decoded at SP->site:
 * every instruction must be one of cfg/patch_window.h's relocation kinds other than RELOC_NO,
 * only the last may transfer control. Returns 0, -EINVAL (a bad window: an instruction it
 * cannot move, a partial instruction, a length out of range), -ERANGE (a displacement or a
 * jump does not reach from the trampoline) or -ENOMEM. */
int trampoline__emit(const struct tramp_spec *sp, struct patch_blob *out);

/* Jump shortcuts (the seed's jump optimisation): every jump of B's trampoline to one of the
 * sorted run-time addresses SITES[0, N), other windows' starts, goes straight to TRAMPS[i],
 * that window's trampoline, which starts with what a thread there would run. Only for
 * windows installed and removed with B. Sets and returns B->nshortcuts. */
unsigned patch_blob__shortcut(struct patch_blob *b, const uint64_t *sites, const uint64_t *tramps,
			      size_t n);

/* Frees what a patch_blob holds. Safe on a zeroed blob. */
void patch_blob__release(struct patch_blob *b);

/* Frees what trampoline__emit keeps for the calling thread between sites (its capstone handle,
 * emitter and decoding buffer): call when a thread that made trampolines is done with them. */
void trampoline__thread_done(void);

#endif
