/*
 * The counting seam. A session plans its counting sites once; each site's class (enum
 * insn_probe_class) says which mechanism counts it: a uprobe (stepped, emulated, nop5: the
 * kernel traps and a BPF program counts into a BPF array map, user/count/uprobe_backend.c) or an
 * in-process counter (patch, patch-flags: a jump written into the target's code to a
 * trampoline that increments a counter in memory shared with edgeprof,
 * user/count/patch_backend.c). Each mechanism is a backend behind struct count_ops, in the
 * manner of libdwfl's Dwfl_Thread_Callbacks; the session holds one per mechanism and commands
 * never reach into them.
 */
#ifndef EDGEPROF_USER_COUNT_COUNT_H
#define EDGEPROF_USER_COUNT_COUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfg/cfg.h"
#include "estimators/placement.h"

/* One profiled object (the binary or a library) as a backend sees it. */
struct count_object {
	const char *path;            /* its real path */
	const struct elf_image *img;
	struct cfg_program *prog;    /* a backend marks the instructions it refuses here */
	const struct placement *pl;  /* the plan to count */
	uint32_t counter_base;       /* its counters are [counter_base, + capacity) of all */
	uint32_t capacity;
	uint32_t ordinal_base;       /* its indirect sites' ordinals are offset by this */
	uint64_t bias;               /* run-time address - ELF vaddr of its code, once mapped */
	unsigned index;              /* 0: the binary, K: the K-th library */
	bool unmapped;               /* not mapped in the process yet (a library at the exec):
				      * a backend that writes into its code only checks its sites
				      * (with the file's bytes) and installs nothing */
	const uint64_t *avoid;       /* ELF vaddrs no code may be written over (the tracer's
				      * breakpoints), NAVOID of them */
	size_t navoid;
	/* Told of each instruction the kernel refuses to probe (its counts cannot be exact
	 * where no other site replaces it); may be NULL. */
	void (*refused)(void *ctx, uint64_t vaddr);
	void *ctx;
};

/* A counting mechanism. Every op returns 0 or a negative errno after reporting one line,
 * unless it says otherwise. */
struct count_ops {
	const char *name; /* "uprobes", "in-process counters" */
	/* Whether this backend counts sites of class CLS. Must not be NULL. */
	bool (*counts_class)(unsigned cls);
	/* Checks, without installing anything, that every site of O's plan whose class this
	 * backend counts can be installed in process PID (stopped): those that cannot are
	 * marked in O->prog and counted in *NREFUSED, for the caller to plan again. Attach then
	 * refuses nothing that check accepted. May be NULL. */
	int (*check)(void *be, struct count_object *o, int pid, size_t *nrefused);
	/* Installs in process PID (stopped, or bound) the sites of O's plan whose class this
	 * backend counts. Sites it cannot take are marked in O->prog so that a new plan avoids
	 * them, their number goes to *NREFUSED, and then nothing of this call stays installed:
	 * the caller plans again and calls again. Must not be NULL. */
	int (*attach)(void *be, struct count_object *o, int pid, size_t *nrefused);
	/* Counts process PID (all its threads, and the processes it forks) from now on. May be
	 * NULL: the backend counts from attach on. */
	int (*count_pid)(void *be, int pid);
	/* Stops counting PID (the end of an attach window). May be NULL. */
	int (*uncount_pid)(void *be, int pid);
	/* Adds the counts so far to COUNTERS[0 .. every object's capacity). Exact once the
	 * counted processes are gone or no longer counted. Must not be NULL. */
	int (*read)(void *be, uint64_t *counters);
	/* Takes out whatever is still installed and frees the backend. Safe on NULL BE. Must
	 * not be NULL. */
	void (*close)(void *be);
	/* Process-control events (tracer_hooks has the same, and says when they come): a
	 * thread or a process sharing or copying the memory was created; a stopped thread is
	 * about to be unwound (STEP: it may be single-stepped); a signal is about to be
	 * delivered to a stopped thread; a child forked inside an attach window is about to be
	 * let go (it is not counted). Each may be NULL. */
	void (*spawned)(void *be, int parent, int child, bool thread);
	void (*before_unwind)(void *be, int tid, bool step);
	void (*before_signal)(void *be, int tid);
	void (*forked)(void *be, int child);
	/* Whether run-time address PC lies in code of the backend's own (a trampoline): 1 with
	 * *ORIG the program's instruction a frame at PC is at (a signal's frame can hold such a
	 * pc: one among a window's displaced instructions is not moved; so can a return address
	 * or a setjmp's landing after a displaced call), -EAGAIN when it is at no instruction
	 * of the program (inside an increment), 0 when PC is not the backend's. May be NULL. */
	int (*orig_pc)(void *be, uint64_t pc, uint64_t *orig);
};

/* A backend as the session holds it. */
struct count_backend {
	const struct count_ops *ops;
	void *be;
};

/* The uprobe backend (user/count/uprobe_backend.c): BE is a struct probes (probes.h). */
extern const struct count_ops uprobe_count_ops;

/* The in-process counting backend (user/count/patch_backend.c): BE from patch_backend__new. */
extern const struct count_ops patch_count_ops;

struct probes;

/* The FILE offsets of the sites of O's plan that uprobes count, with their attach cookies
 * (counters and ordinals moved to O's slice): malloc'd arrays of *N entries. */
int uprobe_backend__offsets(const struct count_object *o, uint64_t **offs, uint64_t **cookies,
			    size_t *n);

/* Attaches N probes of object O at file offsets OFFS with COOKIES by ATTACH (probes__attach
 * or probes__attach_loops). When the kernel refuses some instructions, none is attached,
 * those are marked PROBE_NEVER in O's CFG and their number is stored in *NREFUSED for the
 * caller to plan again. */
int uprobe_backend__attach_or_refuse(struct probes *p, struct count_object *o,
				     int (*attach)(struct probes *, const char *,
						   const uint64_t *, const uint64_t *, size_t),
				     const uint64_t *offs, const uint64_t *cookies, size_t n,
				     size_t *nrefused);

#endif
