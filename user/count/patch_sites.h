/*
 * Where in-process counters can go in a program, and the code for one site: the bridge
 * between a counting plan (estimators/placement.h) and the pure analyses and code generator
 * of in-process counting. A site is patched over a window of whole instructions of one block
 * (at least the 5 bytes of a jmp rel32, or 2 to 4 bytes with a jmp rel8 to a springboard in
 * padding nearby, never shared by two sites) that starts at a count site or ends with a
 * branch site's conditional jump, and into which nothing but its first instruction can be
 * entered. An indirect site (a jump-table dispatch) is patched at its table load: the
 * trampoline counts the table entry about to be taken in a slot of its own (indexed by the
 * entry), and the slots are folded into the plan's per-edge counters when they are read.
 */
#ifndef EDGEPROF_USER_COUNT_PATCH_SITES_H
#define EDGEPROF_USER_COUNT_PATCH_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfg/cfg.h"
#include "estimators/placement.h"
#include "user/count/trampoline.h"

struct patch_sites;

/* Analyses PROG (flag liveness, every address code can be entered at) and sets the
 * patch_count and patch_branch class of each of its instructions (cfg.h). Returns 0 with *OUT
 * (for the calls below), or a negative errno with one line reported. */
int patch_sites__open(struct patch_sites **out, struct cfg_program *prog);

/* The window for site S of the plan: [*START, *START + *LEN) in ELF vaddrs, none of whose
 * instructions but the first starts at one of AVOID[0, NAVOID) (sorted ELF vaddrs where a held
 * thread may resume). A short window also gets its springboard *SB (ELF vaddr; else *SB = 0),
 * the lowest slot in reach overlapping none taken (patch_sites__take) nor any of USED[0,
 * NUSED) (slot starts; may be NULL) and holding none of AVOID. Returns 0, or -ENOENT when
 * there is none (then S must not be patched). */
int patch_sites__window(const struct patch_sites *ps, const struct probe_site *s,
			const uint64_t *avoid, size_t navoid, const uint64_t *used, size_t nused,
			uint64_t *start, uint8_t *len, uint64_t *sb);

/* The window patch_sites__window gives site S with no held thread avoided: [START, START +
 * LEN) and springboard SB (0: none), as long as no other window takes SB. */
typedef void (*patch_window_fn)(void *ctx, const struct probe_site *s, uint64_t start,
				uint8_t len, uint64_t sb);

/* Reserves springboard slots for the short windows of the first plan PL, once, in address
 * order (each the lowest free slot in reach). A window left without a slot loses its class
 * (cfg_insn patch_count or patch_branch): no plan made afterwards can pick it; PL's sites that
 * lost theirs are counted in *NDROPPED and their functions set in REDO[nfuncs] (plan them
 * again, after patch_sites__reserve_funcs). patch_sites__window gives each window its
 * reserved slot. PL's count and branch sites that have a window and keep their class are
 * passed to SEEN (when not NULL) with it, in address order. Returns 0 or -ENOMEM. */
int patch_sites__reserve(struct patch_sites *ps, const struct placement *pl, bool *redo,
			 size_t *ndropped, patch_window_fn seen, void *ctx);

/* Before the functions FUNCS[fi] are planned again: every short window of theirs a plan could
 * pick gets a slot reserved, or loses its class (once per function). Returns 0 or -ENOMEM. */
int patch_sites__reserve_funcs(struct patch_sites *ps, const bool *funcs);

/* Marks the springboard slot [SB, SB + 5) taken: patch_sites__window hands it out no more. */
void patch_sites__take(struct patch_sites *ps, uint64_t sb);

/* Whether no slot given out since patch_sites__reset_springboards overlaps [SB, SB + 5). */
bool patch_sites__slot_free(const struct patch_sites *ps, uint64_t sb);

/* Frees every slot taken (a new plan is about to be given its springboards). */
void patch_sites__reset_springboards(struct patch_sites *ps);

/* Whether patch_sites__emit takes the window [START, START + LEN) with springboard SB (0:
 * none) for site S: the window S has with no held thread avoided, a springboard in its reach,
 * the bytes in the file. A window chosen around held threads (patch_sites__window with AVOID)
 * may differ: then S must not be patched. */
bool patch_sites__emit_accepts(const struct patch_sites *ps, const struct probe_site *s,
			       uint64_t start, uint8_t len, uint64_t sb);

/* Where a trampoline may not run a copy of the original code (trampoline.h, struct
 * tramp_cont), in ELF vaddrs: the sorted addresses STOP[0, NSTOP) that must run in the
 * original code (every site of the plan, patched or not, a held thread's resume point, a
 * breakpoint), the sorted, disjoint byte ranges [LO[i], HI[i]) written over (every window and
 * springboard), and BYTES_OK(CTX, VADDR, LEN), whether the process holds the file's bytes
 * there (NULL: unknown, taken as yes, as windows are). */
struct patch_conts {
	const uint64_t *stop;
	size_t nstop;
	const uint64_t *lo, *hi;
	size_t nranges;
	bool (*bytes_ok)(void *ctx, uint64_t vaddr, uint8_t len);
	void *ctx;
};

/* Generates the code for site S over the window [START, START + LEN) (with the springboard SB,
 * an ELF vaddr patch_sites__window gave, or 0): BIAS is the object's
 * load bias, TRAMP the run-time address its trampoline will live at, COUNTERS the run-time
 * address of the object's counter 0 (counter c at COUNTERS + 8c), ATOMIC whether increments
 * start locked. With CONTS (may be NULL), where the trampoline leaves to original code of the
 * site's function it runs a copy of the straight-line code there instead, when that copy
 * reaches a ret, a jmp or a jcc before CONTS stops it (saving the jump back on those paths).
 * Fills *OUT (release with patch_blob__release). Returns 0 or a negative errno. */
int patch_sites__emit(const struct patch_sites *ps, const struct probe_site *s, uint64_t start,
		      uint8_t len, uint64_t sb, uint64_t bias, uint64_t tramp, uint64_t counters,
		      bool atomic, const struct patch_conts *conts,
		      struct patch_blob *out);

/* The counter slots indirect sites may count into: one per table entry plus one for an index
 * out of its table, for every table jump that has an indirect class. */
uint32_t patch_sites__nslots(const struct patch_sites *ps);

/* Places those slots at counters [FIRST, FIRST + patch_sites__nslots(PS)) of the object
 * (after its plan's counters): call before patch_sites__emit. */
void patch_sites__place_slots(struct patch_sites *ps, uint32_t first);

/* The end (ELF vaddr) of the code site S's window [START, START + LEN) relocates: the table
 * jump's end for an indirect site (no other site, window or held thread may lie in there),
 * START + LEN otherwise. */
uint64_t patch_sites__span_end(const struct patch_sites *ps, const struct probe_site *s,
			       uint64_t start, uint8_t len);

/* Adds what indirect site S (patched) counted, read in SLOTS (the object's counters as laid
 * out in the target, SLOTS[c] for counter c), to the plan's counters of its out-edges,
 * COUNTERS[S->counter + k] for the k-th successor; hits of an entry whose target is no
 * successor, or of an index out of the table, are added to *UNMATCHED. */
void patch_sites__fold(const struct patch_sites *ps, const struct probe_site *s,
		       const uint64_t *slots, uint64_t *counters, uint64_t *unmatched);

/* Frees what a patch_blob holds. Safe on a zeroed blob. */
void patch_blob__release(struct patch_blob *b);

/* Frees PS. Safe on NULL. */
void patch_sites__close(struct patch_sites *ps);

struct snap_out;
struct snap_in;

/* Saves PS as it is (its analysis, slots, springboard reservations). Returns 0 or -ENOMEM. */
int patch_sites__save(const struct patch_sites *ps, struct snap_out *o);

/* Reads into *OUT what patch_sites__save saved for PROG (loaded the same way, its
 * instructions' patch classes included). Returns 0 or -EINVAL / -ENOMEM (*OUT NULL). */
int patch_sites__load(struct patch_sites **out, struct cfg_program *prog, struct snap_in *in);

#endif
