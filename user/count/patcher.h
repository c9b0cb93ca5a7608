/*
 * The process side of the in-process counting backend: puts trampolines and counters into a
 * ptrace-stopped target process and takes them out again. Per profiled object (the binary,
 * each library) it maps, within +-2 GiB (rel32) of the object's code, a trampoline region
 * (PROT_READ|PROT_EXEC) and right after it a counter region of uint64 slots, both
 * MAP_SHARED|MAP_ANONYMOUS in the target (so a forked child shares them, and an exec drops
 * them), and maps both into edgeprof too (/proc/PID/map_files): edgeprof writes trampolines
 * and reads counters in its own mapping, without stopping the target. Sites are patched and
 * restored through /proc/PID/mem (the text page becomes a private copy of this process only:
 * the file and other processes running it are untouched). If edgeprof dies, the target runs on
 * patched and correct: its trampolines and counters are its own memory.
 */
#ifndef EDGEPROF_USER_COUNT_PATCHER_H
#define EDGEPROF_USER_COUNT_PATCHER_H

#include <stddef.h>
#include <stdint.h>

#include "user/count/trampoline.h"

struct patcher;

/* One object's regions, as patcher__add_region made them. */
struct patcher_region {
	uint64_t lo, hi;	/* the code range served (run-time, [lo, hi)) */
	uint64_t tramp_base;	/* trampoline region in the target */
	uint64_t tramp_size;	/* its bytes (the capacity asked, rounded up to pages) */
	uint64_t counters_base; /* counter c lives at counters_base + 8 * c (= tramp_base +
				 * tramp_size) */
	uint32_t ncounters;
	uint32_t first_counter; /* index of its counter 0 in patcher__read's array */
};

/* Starts patching process PID; TID is one of its threads, held in a ptrace stop of ours, in
 * which the patcher runs its system calls (mmap, munmap) until patcher__remove names others.
 * Nothing is mapped yet. Returns 0 with *OUT set, or a negative errno with one line. */
int patcher__open(struct patcher **out, int pid, int tid);

/* Maps the regions of one object whose code is [LO, HI) (run-time): TRAMP_CAPACITY bytes of
 * trampolines and NCOUNTERS zeroed counters, at addresses found free in /proc/PID/maps such
 * that every byte of both is within rel32 reach of every byte of [LO, HI) and of each other,
 * as near the code as possible (never in the 1 GiB above the program break's start, where the
 * heap grows, nor in the 256 MiB below the stack). The TID given to patcher__open must be
 * stopped. Returns the region's index (>= 0) with *INFO filled, or a negative errno with one
 * line (-ENOSPC: no such free range). */
int patcher__add_region(struct patcher *p, uint64_t lo, uint64_t hi, uint32_t ncounters,
			uint32_t tramp_capacity, struct patcher_region *info);

/* The number of regions, and region I's description (NULL when out of range). */
size_t patcher__nregions(const struct patcher *p);
const struct patcher_region *patcher__region(const struct patcher *p, size_t i);

/* Writes each blob's trampoline into its region and then each site's code (and springboard),
 * all or nothing. Each trampoline must lie in one region's trampoline range, each code must be
 * a jmp rel32 to its trampoline, or a jmp rel8 to the blob's springboard that holds a jmp
 * rel32 to it; no two windows or springboards nor two trampolines (these and those installed
 * before) may overlap (-EINVAL: a springboard is never shared); every thread of the process
 * must be stopped under our ptrace (checked: -ESRCH), none with its pc strictly inside a window
 * (site, site + len) or in a springboard [sb, sb + 5) (-EBUSY); and the bytes at each site and
 * springboard must equal blob.orig and blob.sb_orig (-EILSEQ). The lock prefixes are written
 * as given, or 0xf0 after patcher__set_atomic. May be called again with more blobs (a
 * library mapped later). Returns 0, or a negative errno with one line and no site of this
 * call changed. */
int patcher__install(struct patcher *p, const struct patch_blob *blobs, size_t n);

/* Copies the current counter values into COUNTERS[0, N): region 0's counters, then region
 * 1's (struct patcher_region.first_counter), from edgeprof's own mapping, without stopping
 * the target. Returns how many were copied. */
size_t patcher__read(const struct patcher *p, uint64_t *counters, size_t n);

/* Makes every installed increment atomic (every lock prefix byte 0xf0), now and for blobs
 * installed later: call it when the process gets a second thread, or forks a child that
 * keeps counting (every thread stopped). The trampoline regions are shared, so one write
 * serves parent and children. Idempotent. */
void patcher__set_atomic(struct patcher *p);

/* If the pc of TID (stopped under our ptrace) is at a springboard (after the site's jmp rel8,
 * before the springboard's jmp), moves it back to the site (nothing was counted yet). If it is
 * in an installed trampoline, makes the thread equivalent at the original address: single-steps
 * it while its offset is not clean (at most
 * 64 instructions), then adds one to the stretch's pending counter and sets rip to its
 * original address. Meant for patcher__remove: the original address is only equivalent once
 * the site's original bytes are back, before the thread runs again. Returns 1 when it moved,
 * 0 when its pc was in no trampoline, or a negative errno with one line. */
int patcher__move_pc(struct patcher *p, int tid);

/* patcher__move_pc for a thread that cannot be stepped (at its PTRACE_EVENT_EXIT stop): at a
 * clean offset it adds the pending count and sets rip to the original address (so the unwinder
 * sees the original code) and returns 1; 0 when the pc is in no trampoline; -EAGAIN, nothing
 * changed, at an offset that is not clean. */
int patcher__move_pc_at_exit(struct patcher *p, int tid);

/* At a signal's delivery to TID (stopped under our ptrace, patches installed): when its pc is
 * at a clean offset of a trampoline whose original address holds the program's own bytes (a
 * window's start, or code no window covers: a continuation's copies, a jump's target), adds
 * the stretch's pending count and sets rip to that address, so that the signal frame, the
 * handler and any unwinding through the frame see the program's code, and the thread goes
 * on there, as natively, after the handler. Anywhere else (inside an increment, among a
 * window's displaced instructions) it stays. Returns 1 when it moved, else 0. */
int patcher__move_pc_for_signal(struct patcher *p, int tid);

/* For the unwinder: the original address of ADDR when ADDR is in an installed trampoline.
 * Returns 1 with *ORIG set (a clean offset), 0 with *ORIG = ADDR (in no trampoline), or
 * -EAGAIN with *ORIG the stretch's orig (an offset that is not clean: only near there). */
int patcher__orig_of(const struct patcher *p, uint64_t addr, uint64_t *orig);

/* Takes everything out, with every thread of the process stopped under our ptrace: TIDS[0,
 * NTIDS) are its threads (their pcs are moved out of the trampolines, and the system calls run
 * in TIDS[0]); every site gets its original bytes back (where it still holds the blob's code;
 * a site holding neither is reported and left alone: -EILSEQ at the end); then the regions are
 * unmapped in the target, except those of an object whose trampolines hold one of
 * FRAME_PCS[0, NFRAME_PCS) (the caller's unwound outer frame pcs: a signal frame will resume
 * there), or whose springboard is one of them (that springboard keeps its jmp, the rest of its
 * site is restored), or a pc that could not be moved: they stay mapped, and are reported.
 * edgeprof's own mappings stay until patcher__close (patcher__read still works). Returns the
 * number of regions left mapped (>= 0), or a negative errno with one line. */
int patcher__remove(struct patcher *p, const int *tids, size_t ntids, const uint64_t *frame_pcs,
		    size_t nframe_pcs);

/* For a child forked by a patched process that must run unpatched (`edgeprof -p`: children
 * are not counted): CHILD is its pid, and CHILD_TID its one thread, stopped under our ptrace
 * (its first stop). Moves its pc out of a trampoline if there (never at a fork; no count
 * added), writes the original bytes back at every site in the child's memory and unmaps the
 * regions in the child. The parent stays patched. Returns 0, or a negative errno with one
 * line. */
int patcher__unpatch_child(struct patcher *p, int child, int child_tid);

/* Releases edgeprof's side (its mappings, files, memory); the target is left as it is. Safe
 * with NULL. */
void patcher__close(struct patcher *p);

#endif
