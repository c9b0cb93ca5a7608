/*
 * Process control for `edgeprof run`: starts the profiled program stopped under ptrace, lets
 * the caller attach its probes, runs the program and every process and thread it creates to
 * the end, and records where frames of the profiled binary were left without returning
 * (thread or process exit, exit() deep in the stack, fatal signals, pthread_exit) or entered
 * without being called (a forked child resumes in its parent's frames). These are the
 * early-termination edges v->EXIT of Ball and Larus (1994, section 3.2) and their mirror
 * image for fork: flow conservation only holds once they are added. Stacks are unwound with
 * libdwfl; only frames of the object whose build-id is the profiled binary's are kept.
 */
#ifndef EDGEPROF_USER_TRACER_H
#define EDGEPROF_USER_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum frame_event_kind {
	FRAME_EXIT = 0,	 /* a frame left without returning (thread/process exit, fatal signal) */
	FRAME_ENTRY = 1, /* a frame entered without a call (a forked child resumes in its
			  * parent's frames) */
	FRAME_THROW = 2, /* a frame on the stack when a C++ exception is raised (or resumed
			  * after a cleanup), innermost first; each throw starts with a marker
			  * event of this kind with vaddr 0. The caller decides which frames the
			  * exception skips (those whose call site has no landing pad). */
};

struct frame_event {
	uint64_t vaddr;	    /* ELF virtual address in the profiled binary: the return address
			     * of the frame, or the interrupted instruction when activation */
	uint8_t kind;	    /* enum frame_event_kind */
	uint8_t activation; /* 1: vaddr is the instruction the thread was stopped at (innermost
			     * frame, or a frame interrupted by a signal); 0: a return address
			     * (not minus one: the caller maps it to its call block) */
	uint8_t pending;    /* with activation: the thread was interrupted before the
			     * instruction at vaddr (detaching), so a probe there has not fired */
	uint8_t obj;	    /* the profiled object the frame is in: 0 the binary, K the library
			     * tracer_hooks.lib_ids[K - 1] */
	int tid;	    /* the thread whose stack this frame was on */
	int tgid;	    /* and its process */
	/* With activation: the frame's general registers by x86 number (0 rax .. 15 r15), as
	 * the unwinder recovered them (the thread's own, or those a signal frame saved); bit k
	 * of regs_valid says regs[k] is known. */
	uint16_t regs_valid;
	uint64_t regs[16];
};

/* At most this many profiled objects: the binary and TRACER_MAX_OBJECTS - 1 libraries. */
#define TRACER_MAX_OBJECTS 16

struct tracer_hooks {
	/* Called once the program has exec'd and is stopped before its first instruction:
	 * the caller attaches probes and adds PID to its BPF filter. Non-zero aborts: the
	 * program is killed and reaped, and tracer__run returns that value if it is negative,
	 * else -ECANCELED (the hook reports its own error). May be NULL. */
	int (*started)(void *ctx, int pid);
	void *ctx;
	/* An instruction of the profiled binary early in its start code (ELF virtual address,
	 * not a probe site; 0 for none) and the vaddr the binary's first loadable segment maps
	 * file offset 0 at: the tracer stops there once, when the C library is loaded, to set
	 * its breakpoints on pthread_exit and the longjmp family. Without it, frames skipped by
	 * longjmp are not accounted for. */
	uint64_t early_stop;
	uint64_t load_vaddr;
	/* tracer__run: with WATCH set (and EARLY_OFFSET, the early stop's file offset in the
	 * binary), nothing is ever written into the program: the early stop and the library
	 * functions above are watched (a uprobe signals the thread) rather than broken on with
	 * int3, and the program is not killed when edgeprof dies, so it runs on correctly if
	 * edgeprof is killed. Without WATCH, int3 breakpoints, and the program dies with
	 * edgeprof. */
	uint64_t early_offset;
	/* tracer__attach only: called while every thread of the process is stopped, its
	 * stacks unwound, right before it is let go (PID stops being counted). May be NULL. */
	int (*stopping)(void *ctx, int pid);
	/* Watches the instruction at FILE_OFFSET of the object at PATH (the entry of longjmp,
	 * pthread_exit or the C++ unwinder; for tracer__run also the early stop) in process PID
	 * only: a thread of PID reaching it must be sent EP_NOTIFY_SIGNAL (bpf/edgeprof.h), and
	 * no other process may see the watch (a uprobe bound to PID: a process run under
	 * valgrind elsewhere would take the int3 of a file-wide uprobe for its own). Returns 0
	 * when it will be. tracer__attach: may be NULL, such frames are then not followed.
	 * tracer__run: see early_offset; a forked child gets watches of its own before it
	 * runs. */
	int (*watch)(void *ctx, int pid, const char *path, uint64_t file_offset);
	/* tracer__run with WATCH: the longjmp family is watched in a process only from the
	 * first delivery of a signal it catches (a handler that longjmps leaves frames at
	 * arbitrary instructions, which only unwinding finds); until then the caller accounts
	 * for the frames longjmps leave by itself (longjmp pseudo-edges, cfg/longjmp.h), and
	 * no longjmp stops the program. A forked child keeps its parent's state. */
	bool lazy_longjmp;
	/* Shared libraries profiled besides the binary, by lowercase hex build-id: frames in
	 * them give events with obj = 1 + their index. At most TRACER_MAX_OBJECTS - 1. */
	const char *const *lib_ids;
	size_t nlib_ids;
	/* Called when process PID has just replaced its image (exec), stopped before the new
	 * image's first instruction: the caller stops counting PID (the new image and its
	 * children are not the profiled program any more). May be NULL. */
	int (*execed)(void *ctx, int pid);
	/* tracer__run: called for a process PID that exec'd (after execed), once its thread
	 * was let go (tracer__run detaches an exec'd process other than the one it started:
	 * it is not followed any more); for what may take long (destroying PID's probes), so
	 * that it never holds PID's exit. May be NULL. */
	void (*released)(void *ctx, int pid);
	/* tracer__run only: called at the early stop (the C library and the program's other
	 * shared libraries are mapped then; no frame of theirs is active) with the process's
	 * pid: the caller attaches the libraries' probes. Non-zero is reported and ignored. */
	int (*loaded)(void *ctx, int pid);
	/* tracer__run only: called once at the dynamic loader's debugger rendezvous
	 * (_dl_debug_state, found in the loader's .dynsym at AT_BASE) with r_state
	 * RT_CONSISTENT after the initial mapping: every DT_NEEDED library is mapped, no
	 * constructor has run (ifunc resolvers and glibc's __libc_early_init have: see
	 * libs__load_roots). The thread is stopped in the loader, PID single-threaded. When
	 * the program has no such loader (static, or its symbols are missing) it is called
	 * right after STARTED at the exec stop instead, nothing mapped yet. Non-zero is
	 * reported and ignored. NULL: no such stop (nothing else changes). */
	int (*mapped)(void *ctx, int pid);
	/* Takes back a watch made through WATCH (the rendezvous's, once it has served, since
	 * the loader calls it again at each dlopen). May be NULL: the watch stays and its
	 * later hits are recognised and ignored. */
	int (*unwatch)(void *ctx, int pid, const char *path, uint64_t file_offset);
	/* Called for a stopped thread TID right before its stack is unwound: at its exit
	 * (STEP false: it cannot run any more) and at the detach of tracer__attach (STEP true:
	 * it may be single-stepped). The caller may move its pc to an equivalent one (a pc in
	 * an in-process counter's trampoline is in no code the unwinder knows). May be NULL. */
	void (*before_unwind)(void *ctx, int tid, bool step);
	/* Called for a stopped thread TID right before a signal is delivered to it (the
	 * program's own, at its signal-delivery stop or its release): the caller may move its
	 * pc to an equivalent one, so that the signal frame the kernel builds, the handler and
	 * every later unwinding through that frame see the program's own code, not a
	 * trampoline. May be NULL. */
	void (*before_signal)(void *ctx, int tid);
	/* A frame's pc PC (a run-time address: where it stopped, or its return address) that
	 * may lie in code of the caller's own (an in-process counter's trampoline: a signal's
	 * frame can leave a pc there, a call displaced there returns there, a setjmp called so
	 * lands there): 1 with *ORIG the program's address the frame is at, -EAGAIN when it is
	 * at none (the frame is then unknown: the unwinding counts as failed), 0 when PC is not
	 * the caller's. May be NULL. */
	int (*orig_pc)(void *ctx, uint64_t pc, uint64_t *orig);
	/* Called when traced thread PARENT creates a thread (THREAD true) or a process that
	 * shares or copies its memory (fork, vfork), at PARENT's event stop: the new task has
	 * not run yet. May be NULL. */
	void (*spawned)(void *ctx, int parent, int child, bool thread);
	/* tracer__run only: called at the first stop of process PID (created by fork, vfork
	 * or clone without CLONE_THREAD by a traced process), before it runs its first
	 * instruction. May be NULL. */
	void (*child_stopped)(void *ctx, int pid);
	/* tracer__attach only: called for a process CHILD forked inside the window, stopped
	 * before it runs, with its one thread under the tracer's ptrace; the tracer lets it
	 * go right after (children are not counted). When NULL, forks are not followed. */
	void (*forked)(void *ctx, int child);
};

/* A process whose image was replaced by an exec (of a process still profiled then). */
struct tracer_exec {
	int pid;	/* the process */
	int main;	/* 1: the program's own process (run) or the one attached to */
	int frames;	/* 1: its frames of the profiled objects were recorded at the exec */
	double at;	/* seconds since the start (attach: since the window opened) */
	char *path;	/* the new executable (/proc/PID/exe), malloc'd; NULL when unknown */
};

struct tracer_result {
	int wait_status;	    /* of the main process, as from waitpid */
	struct frame_event *events; /* in the order they happened */
	size_t nevents;
	unsigned nprocesses;	  /* processes traced, the main one included */
	unsigned nthreads;	  /* threads created (clone with CLONE_THREAD) */
	unsigned unwind_failures; /* stacks that could not be unwound (fully) */
	unsigned nexecs;	  /* execs after the first, in any traced process */
	struct tracer_exec *execs; /* those of processes still profiled then, in order: the
				    * frames active at the exec (recorded at the C library's
				    * execve or execveat, kept once the exec succeeded) are
				    * FRAME_EXIT events, the process is no longer profiled */
	size_t nexec_records;
	unsigned nlongjmps;	  /* longjmps whose skipped frames were recorded */
	unsigned nlazy_watches;	  /* processes whose longjmps became watched (lazy_longjmp)
				   * when they caught a signal */
	double seconds;		  /* wall time from the first instruction to the end (attach:
				   * from the end of the attach to the start of the detach) */
	/* tracer__attach only: */
	double held_attach;	  /* seconds the process was stopped to attach */
	double held_detach;	  /* and to detach (0 when it ended before) */
	unsigned nattached;	  /* threads it had when attached */
	int detached;		  /* 1: it was let go running; 0: it ended in the window */
	int stop_signal;	  /* the signal that ended the window (0: duration or exit) */
};

/* Runs PATH (executed as given, no PATH search) with ARGV (argv[0] included, NULL-ended)
 * under ptrace, inheriting stdin, stdout, stderr and the environment. BUILD_ID is the
 * lowercase hex build-id of the profiled binary: only frames in an object with this build-id
 * produce events ("" or NULL: the main executable of the program, matched by path).
 * HOOKS->started runs once the program is stopped right after its exec. Meanwhile SIGINT and
 * SIGQUIT are ignored (the terminal sends them to the program too), SIGTERM and SIGHUP are
 * forwarded to the program; the previous dispositions are restored on return.
 * Returns 0 when the program ran, whatever its exit status, with *RES filled (release it
 * with tracer_result__release) once every traced process and thread is gone; or a negative
 * errno, with one message through log.h, when it could not be started (missing, not
 * executable, exec failed) or the hook refused; then nothing is left running and *RES is
 * empty. */
int tracer__run(const char *path, char *const argv[], const char *build_id,
		const struct tracer_hooks *hooks, struct tracer_result *res);

/* Attaches to the running process PID (a thread group id) and every thread it has or creates
 * (PTRACE_SEIZE; to a child it forks only
 * when HOOKS->forked is set, until that hook has run), counting it for SECONDS (<= 0: no limit) or until
 * SIGINT, SIGTERM or SIGHUP reaches edgeprof, or until it ends. At the start and at the end
 * every thread is stopped (PTRACE_INTERRUPT) and its stack unwound: the frames of the
 * profiled binary (BUILD_ID, as for tracer__run) give FRAME_ENTRY events at the attach (each
 * active frame is entered once without a call, at its resume point) and FRAME_EXIT events
 * with `pending` at the detach (each is left once, before its next instruction). Threads that
 * end in between give FRAME_EXIT events as in tracer__run. HOOKS->started runs while the
 * threads are stopped at the attach (the caller starts counting PID there), HOOKS->stopping
 * at the detach (the caller stops counting), so the counts cover exactly the window. No
 * breakpoint is written into the process (frames skipped by longjmp, pthread_exit or C++
 * throws inside the window are not seen), and if edgeprof dies the kernel lets every thread
 * go. Returns 0 with *RES filled, or a negative errno with one line reported (no such
 * process, a zombie or kernel thread, no permission) and nothing left attached or stopped. */
int tracer__attach(int pid, const char *build_id, const struct tracer_hooks *hooks,
		   double seconds, struct tracer_result *res);

/* Whether PID is a process edgeprof can attach to: 0, or a negative errno with one line
 * reported (no such process, a zombie, a kernel thread, edgeprof itself). */
int tracer__check_target(int pid);

/* The I-th function (from 0) whose first instruction the tracer watches or breaks on in the
 * program's libraries (pthread_exit, the longjmp family, execve, the C++ unwinder's entries),
 * NULL past the last: no in-process counter may be written over those instructions. */
const char *tracer__watched_function(size_t i);

/* Looks the watched functions up in edgeprof's own C library, for tracer__run's watches made
 * at the exec (a few ms of libdw): on another thread ahead of tracer__run if the caller likes,
 * which must not run meanwhile; else tracer__run does it. */
void tracer__find_own_functions(void);

/* Frees what tracer__run allocated in RES and zeroes it. Safe on a zeroed result. */
void tracer_result__release(struct tracer_result *res);

/* The name of an event kind: "EXIT" or "ENTRY". */
const char *frame_event__kind_name(uint8_t kind);

#endif
