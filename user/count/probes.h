/*
 * The BPF side of profiling, as seen from user space: loads bpf/edgeprof.bpf.c, attaches its
 * uprobe-multi program to the probe sites of a plan, says which processes count, and reads
 * the counters back. This is the only user code that touches libbpf; everything it needs is
 * plain data (file offsets, cookies, counter values).
 *
 * Uprobe offsets are FILE offsets into the binary, not ELF virtual addresses: convert each
 * probe_site.addr with elf_image__vaddr_to_offset (cfg/elf_image.h) before attaching.
 */
#ifndef EDGEPROF_USER_PROBES_H
#define EDGEPROF_USER_PROBES_H

#include <stddef.h>
#include <stdint.h>

#include "estimators/placement.h"

struct probes;

/* Opens and loads the BPF program with NCOUNTERS counters (1 .. EP_MAX_COUNTERS, all zero)
 * and starts following forks of counted processes. On success stores the handle in *P and
 * returns 0. When BPF is unavailable (no privilege, no kernel BTF, kernel too old) or on
 * another failure, reports why on stderr (one line, plus libbpf's details with -v) and
 * returns a negative errno (-EPERM for missing privileges). */
int probes__open(struct probes **p, uint32_t ncounters);

/* probes__open with room for the trip-count moments of NLOOPS loops (0 .. EP_LOOP_MAX_LOOPS;
 * 0: no loop statistics), for probes__attach_loops. Same returns. */
int probes__open_loops(struct probes **p, uint32_t ncounters, uint32_t nloops);

/* Attaches the loop trip-count program (bpf/edgeprof.h, EP_LOOP_*) at the N FILE offsets of
 * BINARY_PATH with cookies COOKIES (ep_cookie_loop; loop indices below the NLOOPS given to
 * probes__open_loops), one uprobe-multi link. An offset may also carry a counting probe, or
 * several loop probes. Returns 0, -ENOTSUPP without a message when the kernel refuses an
 * instruction, or another negative errno after reporting the failure. */
int probes__attach_loops(struct probes *p, const char *binary_path, const uint64_t *file_offsets,
			 const uint64_t *cookies, size_t n);

/* Trip-count moments of one loop over its completed entries. */
struct probes_loop_moments {
	uint64_t entries, sum;
	unsigned __int128 sumsq;
	uint64_t held; /* entries still held in loop_state at the read (their frame left) */
};

/* Reads the moments of every loop into M[0 .. nloops), counting the entries still held per
 * (thread, loop, frame) as completed (read once the counted processes are gone). *LOST: header
 * executions that could not be held (then some moments are not exact). Returns 0, or a
 * negative errno after reporting the failure. */
int probes__read_loops(struct probes *p, struct probes_loop_moments *m, uint64_t *lost);

/* Attaches probes to the binary at BINARY_PATH: one probe at each of the N FILE offsets
 * FILE_OFFSETS[i] (see above), with attach cookie COOKIES[i] (see probes__cookie). Uses one
 * uprobe-multi link for all of them (split only beyond the kernel's per-link limit) for every
 * process that maps the binary; only processes added with probes__add_pid (and their forked
 * children) are counted. Attaches nowhere else. May be called once per binary. Returns 0, or
 * a negative errno after reporting the failure (-EINVAL for a cookie naming a counter that
 * does not exist); on failure no probe of this call stays attached. */
/* (-ENOTSUPP, a refused instruction, is returned without a message.) */
int probes__attach(struct probes *p, const char *binary_path, const uint64_t *file_offsets,
		   const uint64_t *cookies, size_t n);

/* Counts the hits of process PID (its tgid; all its threads) from now on, and of the
 * processes it forks. Returns 0, or a negative errno after reporting the failure. */
int probes__add_pid(struct probes *p, int pid);

/* Watches the instruction at FILE_OFFSET of PATH (the entry of longjmp, pthread_exit or the
 * C++ unwinder in a shared library): a counted thread that reaches it is sent
 * EP_NOTIFY_SIGNAL, for its tracer to unwind it there. Returns 0 or a negative errno (at
 * debug level only: a function that cannot be watched is reported by the caller). */
int probes__watch(struct probes *p, int pid, const char *path, uint64_t file_offset);

/* Takes back the watch probes__watch made for PID (<= 0: the bound process) on PATH at
 * FILE_OFFSET. Returns 0, or -ENOENT when there is none. */
int probes__unwatch(struct probes *p, int pid, const char *path, uint64_t file_offset);

/* Binds the links attached from now on to process PID (all its threads): the kernel installs
 * their probes in that process only, and other processes mapping the binary never pay for
 * them. Its later children do not either, unless probes__follow_forks gives them links of
 * their own. PID <= 0: every process mapping the binary (the pids map filters). */
void probes__bind_pid(struct probes *p, int pid);

/* From now on, the counting and loop probes attached (probes__attach, probes__attach_loops)
 * are remembered, for probes__add_child to attach them again for each counted child
 * (`edgeprof run`: children are counted). */
void probes__follow_forks(struct probes *p);

/* Process PID was just created (fork, vfork, clone without CLONE_THREAD) and is stopped before
 * its first instruction. When it is counted (a counted process forked it) and P follows
 * forks: attaches every remembered probe again, bound to PID, so that it keeps counting
 * (a uprobe-multi link bound to a process runs its program for that thread group only, even
 * for a vfork child that shares its parent's memory). The links of children that are gone
 * are destroyed first. Returns 0 (also for a process that is not counted, or a thread), or
 * a negative errno after a warning (its counts are lost, and probes__lost_forks counts it). */
int probes__add_child(struct probes *p, int pid);

/* Destroys every link bound to process PID (PID has replaced its image by an exec, or is
 * gone: it is not counted any more, and its probes would only cost it traps). */
void probes__drop_pid(struct probes *p, int pid);

/* Stops counting process PID (its tgid): hits from now on are ignored. Returns 0 (also when
 * PID was not counted), or a negative errno after reporting the failure. */
int probes__remove_pid(struct probes *p, int pid);

/* The number of counters P was opened with. */
uint32_t probes__ncounters(const struct probes *p);

/* Copies the current value of every counter, summed over CPUs, into COUNTERS[0 .. ncounters).
 * Exact once the counted processes have exited. Returns 0, or a negative errno after
 * reporting the failure. */
int probes__read(struct probes *p, uint64_t *counters);

/* The number of processes forked by counted processes that could not be counted because the
 * process map was full (EP_MAX_PIDS live processes) or their probes could not be attached
 * (probes__add_child): when non-zero, counts are incomplete. */
uint64_t probes__lost_forks(const struct probes *p);

/* Starts destroying every link of P (every probe and watch) on a thread of its own, and
 * returns at once: releasing a uprobe link waits for a kernel grace period (25-75 ms), which
 * then overlaps the caller's work. Call it once the counters are read: a probe may still count
 * until probes__close returns. Nothing happens when no thread can start (probes__close then
 * destroys the links). Safe on NULL. */
void probes__detach_async(struct probes *p);

/* Detaches every probe (waiting for probes__detach_async's links to be gone) and unloads the
 * program. Safe on NULL. */
void probes__close(struct probes *p);

/* The attach cookie (bpf/edgeprof.h) of placement site S: a counter for SITE_COUNT, the
 * condition and the taken / not-taken counters for SITE_BRANCH; PLACEMENT_NO_COUNTER becomes
 * EP_IDX_NONE (that outcome is not counted). */
uint64_t probes__cookie(const struct probe_site *s);

#ifndef ENOTSUPP
#define ENOTSUPP 524 /* the kernel's "not supported": an instruction uprobes refuse */
#endif

/* The file offsets among FILE_OFFSETS[0..N) of BINARY_PATH where the kernel refuses a
 * uprobe (it analyses an instruction when it installs the probe in a process that maps the
 * file, so such a process must exist, stopped), found by bisection with trial links that
 * are destroyed at once. Returns 0 with *BAD (malloc'd, *NBAD entries), or -errno with one
 * line reported. */
int probes__refused(struct probes *p, const char *binary_path, const uint64_t *file_offsets,
		    size_t n, uint64_t **bad, size_t *nbad);

/* Called once per (indirect site ordinal, run-time target address) with its hit count. */
typedef void (*probes_indirect_fn)(void *ctx, uint32_t ordinal, uint64_t target, uint64_t hits);

/* Reports every target the indirect sites saw. Returns 0, or -1 with one line reported when
 * some hits could not be recorded (the `indirect` map was full). */
int probes__read_indirect(struct probes *p, probes_indirect_fn fn, void *ctx);

#endif
