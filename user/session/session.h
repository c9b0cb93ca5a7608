/*
 * A profiling session: the main binary and any shared libraries profiled with it (`--lib`),
 * each an object with its own CFG, probe plan and slice of the BPF counters; the probes; and
 * the step that turns counter values and process-control events (frames left or entered
 * without call or return) into exact per-edge counts and a profile file with one section per
 * object. `edgeprof run` and `edgeprof record -p` differ only in how the process is
 * controlled (tracer.h); both go through a session.
 */
#ifndef EDGEPROF_USER_SESSION_H
#define EDGEPROF_USER_SESSION_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "cfg/cfg.h"
#include "estimators/loop_probes.h"
#include "estimators/placement.h"
#include "user/count/count.h"
#include "user/count/probes.h"
#include "user/session/func_select.h"
#include "user/session/run_weights.h"
#include "user/proc/tracer.h"

/* Which mechanisms count (`--probes`). */
enum session_counting {
	COUNTING_AUTO = 0, /* in-process counters where proven safe, uprobes elsewhere */
	COUNTING_UPROBE,   /* uprobes only */
};

struct session_options {
	enum placement_mode mode;
	enum session_counting counting;
	const char *weights;  /* a profile for exact weights of the binary, or NULL */
	int bound_pid;        /* > 0: probes live in this process only (attach to a running
			       * process); 0: the binary's in every process mapping it, counted
			       * when started by us or forked by a counted process */
	char *const *libs;    /* real paths of shared libraries to profile too */
	size_t nlibs;         /* at most TRACER_MAX_OBJECTS - 1 */
	bool loop_stats;      /* also measure the trip-count moments of the binary's loops
			       * (`run --loop-stats`; not for libraries) */
	int induction;        /* count loops by induction where proven (cfg/induction.h),
			       * 1: where the plan finds it cheaper, 2: always; with
			       * COUNTING_UPROBE only */
	struct func_select *select; /* --only / --exclude, applied to every object; NULL or
				     * empty: every function (each pattern's matches are
				     * counted into it) */
};

struct analysis_save;

/* One profiled object: the binary (objs[0]) or a library. */
struct session_object {
	char path[PATH_MAX];   /* its real path */
	struct elf_image img;
	struct cfg_program prog;
	struct placement pl;
	struct placement_options popt;
	struct cfg_longjmp lj; /* its longjmp pseudo-edges (popt.longjmp) */
	struct cfg_induction ind; /* its loops counted by induction (popt.induction), when
				   * asked */
	int induction;            /* session_options.induction */
	struct run_weights rw;
	bool *select;          /* per function, whether it is profiled (popt.select), or NULL */
	uint32_t counter_base; /* its counters are [counter_base, + capacity) of the map */
	uint32_t capacity;
	uint32_t ordinal_base; /* its indirect sites' ordinals, offset by this in the map */
	uint32_t nordinals;    /* the size of its ordinal slice: every jump whose table a
				* probe can recompute (a bound on any plan's indirect sites) */
	uint64_t bias;         /* run-time address - ELF vaddr of its code */
	bool attached;
	bool cacheable;        /* its analysis may be kept and read back (analysis_cache.h) */
	bool cached;           /* ... and was read back: nothing to classify, plan or settle */
	uint8_t bytes_hash[16]; /* XXH3-128 of its file's bytes, once bytes_hashed (its key) */
	bool bytes_hashed;
	bool deferred;         /* run: attached when the loader has mapped it (tracer_hooks.mapped),
				* with in-process counters; else at the exec, with uprobes */
	bool patch_later;      /* run: the loader runs some of its code before its rendezvous
				* (ifunc resolvers, __libc_early_init): those functions and
				* what they call are counted by uprobes attached at the exec,
				* the rest in process from the rendezvous on */
	bool not_mapped;       /* being attached before it is mapped (count_object.unmapped) */
	bool before_mapped;    /* its uprobes were attached before its file was mapped: the
				* kernel checks them only then (session__check_libs) */
	uint64_t avoid[16];    /* ELF vaddrs no code may be written over (session__avoid, the
				* tracer's watched functions) */
	size_t navoid;
	/* while folding indirect targets into counters */
	uint32_t *indirect_site; /* ordinal -> index into pl.sites */
	uint32_t nindirect;
	uint64_t unmatched;    /* indirect hits to a target that is no edge */
	struct profile_func_notes *notes; /* per function: refused probes, unmatched indirect
					   * hits, unwound frames outside its blocks */
	uint64_t unmapped;     /* unwound frames outside every recovered block */
};

/* At most this many counting mechanisms (count.h) in one session. */
#define SESSION_MAX_BACKENDS 2

struct session {
	struct session_object *objs;
	size_t nobjs;
	/* The counting mechanisms, attached in this order (uprobes first): a site's class says
	 * which counts it. probes is the uprobe backend's handle, which the uprobe-only features
	 * (loop statistics, jump-table targets, watched library functions) use directly. */
	struct count_backend backends[SESSION_MAX_BACKENDS];
	size_t nbackends;
	struct probes *probes;
	struct patch_backend *patch; /* the in-process backend, NULL with --probes uprobe */
	bool patch_owned;      /* patch not yet among the backends (closed on its own) */
	uint32_t capacity;     /* counters the BPF map holds, all objects */
	uint64_t *counters;    /* their values, at the end */
	int main_pid;          /* libraries' probes are bound to this process: their frames in
			        * other processes are not theirs to count */
	const char *lib_ids[TRACER_MAX_OBJECTS]; /* build-ids of objs[1..] for the tracer */
	bool libs_failed;      /* a library's probes could not be attached at the rendezvous */
	bool loop_stats;       /* the binary's loops are probed for trip counts */
	struct loop_probe_plan loops; /* their plan (objs[0]) */
	double analysis_s;     /* seconds session__prepare spent on CFGs and plans */
	/* The objects' source lines for the profile, read on a thread of their own from the
	 * first counted process on (the machine's other core idles while the target runs). */
	struct block_lines *lines;
	struct analysis_save *analysis_save; /* the binary's analysis being kept (its thread) */
	pthread_t lines_thread;
	bool lines_started;
};

/* What session__finish writes besides the counts. */
struct session_run_info {
	char *const *argv;     /* the program's command line (NULL-terminated), or NULL */
	const char *mode;      /* "run" or "attach" */
	int pid;               /* attach: the process attached to */
	double held_attach, held_detach; /* attach: seconds the process was stopped */
};

/* The options `run` and `record` share, as getopt_long values: --placement MODE ('P'),
 * --probes auto|uprobe ('M'), --weights FILE ('w'), --lib NAME|PATH ('l': the name goes
 * into NAMES, which holds TRACER_MAX_OBJECTS - 1, counted in *NNAMES), --only PATTERN ('O')
 * and --exclude PATTERN ('X') (into O->select, which must then be set). Takes option OPT
 * with argument ARG into O.
 * Returns 0, or the exit status of a usage error reported for command CMD. */
int session_options__parse(struct session_options *o, int opt, char *arg, const char *cmd,
			   char **names, size_t *nnames);

/* Opens BINARY (a real path) and the libraries of O, builds their CFGs, selects their
 * functions (O->select), plans the probes and loads the BPF program with room for all.
 * Returns 0, -ENOENT when no pattern of O->select matches a function of any object, or -1;
 * either after reporting one line. Release S in any case. */
int session__prepare(struct session *s, const char *binary, const struct session_options *o);

/* Attaches the probes of object K (0: the binary) for process PID, which maps it and has not
 * run its code since (stopped) or is bound (its probes live only there): sites the kernel
 * refuses are found by bisection, left out, and the object's probes planned again. Sets the
 * object's load bias from PID's mappings. Does not count PID yet (probes__add_pid). Returns
 * 0 or non-zero (reported). */
int session__attach(struct session *s, size_t k, int pid);

/* session__attach of every library not deferred (all of them for `record -p`; for `run`
 * those the loader runs code of before its rendezvous, libs__load_roots), with
 * their probes bound to PID. A library PID does not map yet gets its probes when it is
 * mapped; the kernel checks them only then: see session__check_libs. */
int session__attach_libs(struct session *s, int pid);

/* `run`, at the loader's rendezvous (tracer_hooks.mapped): session__attach of every deferred
 * library, with every backend (in-process counters where proven safe, uprobes for the rest)
 * when PID maps it; one PID does not map yet (a dlopen to come) gets uprobes only, attached
 * now (by file: they come into its memory when it is mapped). Returns 0 or -1 (reported;
 * the profile is then not written). */
int session__attach_mapped(struct session *s, int pid);

/* Once the libraries are mapped in process PID (before their probed code can have run): takes
 * their load addresses, and checks whether the kernel refuses any of their probes, which
 * would then have been left out silently.
 * Returns 0, or -1 after a warning per library with refused sites (its counts are not exact
 * then). */
int session__check_libs(struct session *s, int pid);

/* Reads the counters (the counted processes must be gone or no longer counted), detaches the
 * probes, maps TR's frame events to virtual edges, propagates every function's counts and
 * writes the profile to OUT atomically. Returns 0, or non-zero after reporting one line. */
int session__finish(struct session *s, const struct tracer_result *tr,
		    const struct session_run_info *info, const char *out);

/* Keeps every counting mechanism from writing code over the instruction of the binary at
 * ELF address VADDR (a breakpoint of the tracer's goes there; 0 is ignored). At most 4. The
 * plan is made again around it at once (no attach has to refuse a site for it). */
void session__avoid(struct session *s, uint64_t vaddr);

/* Whether the in-process counters of the binary (as planned now) write over or relocate the
 * byte at ELF address VADDR: false without them. */
bool session__patches_at(const struct session *s, uint64_t vaddr);

/* Counts process PID (and what it forks) from now on, with every backend; the first call also
 * starts reading the objects' source lines for the profile on another thread. Returns 0 or
 * non-zero (reported). */
int session__count_pid(struct session *s, int pid);

/* Stops counting process PID (the end of an attach window). Returns 0 or non-zero
 * (reported). */
int session__uncount_pid(struct session *s, int pid);

/* The process-control events of tracer_hooks (spawned, before_unwind, forked), passed to
 * every backend. */
void session__spawned(struct session *s, int parent, int child, bool thread);
void session__before_unwind(struct session *s, int tid, bool step);

/* A signal is about to be delivered to thread TID: each backend may move its pc out of code
 * of its own (see tracer_hooks.before_signal). */
void session__before_signal(struct session *s, int tid);

/* The program's address of a frame at run-time address PC in a backend's own code (see
 * count_ops.orig_pc): 1 with *ORIG set, -EAGAIN at no instruction of the program, 0 when PC
 * is no backend's. */
int session__orig_pc(struct session *s, uint64_t pc, uint64_t *orig);
void session__forked(struct session *s, int child);

/* `run`: binds the probes attached from now on to process PID (the program, stopped at its
 * exec): no other process mapping the binary or a library gets them. */
void session__bind(struct session *s, int pid);

/* `run`: process PID was just forked (or vforked, or cloned without CLONE_THREAD) and has
 * not run yet: when it is counted, gives it probes of its own (failures are warned about and
 * make the profile report lost forks). */
void session__child(struct session *s, int pid);

/* `run`: process PID replaced its image (exec) and is stopped before the new image's first
 * instruction: stops counting it (quick: its probes no longer count nor signal it). */
void session__execed(struct session *s, int pid);

/* `run`: process PID, which exec'd (session__execed), was let go: takes its probes out
 * (slow: each link's release waits for a kernel grace period). */
void session__released(struct session *s, int pid);

/* Whether some sites of S may be counted in process (then an attach installs its counters
 * while every thread is held, and follows forks). */
bool session__patches(const struct session *s);

/* Whether longjmps need no watch until a signal is caught (tracer_hooks.lazy_longjmp): every
 * profiled object calls a setjmp- or longjmp-family function, so its longjmp pseudo-edges
 * carry the flow of every frame a longjmp leaves through its calls. An object that calls
 * none has no pseudo-edges (a library's longjmp may still skip its frames through a
 * callback): then every longjmp is watched and unwound, as before. */
bool session__longjmp_lazy(const struct session *s);

/* Watches the instruction at FILE_OFFSET of PATH in process PID only (tracer_hooks.watch):
 * the uprobe goes into that process's memory, no other process's. */
int session__watch(struct session *s, int pid, const char *path, uint64_t file_offset);

/* Frees everything S holds (probes detached). Safe on a zeroed or partly prepared S. */
void session__release(struct session *s);

#endif
