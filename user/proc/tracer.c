/*
 * Process control for `edgeprof run` (see tracer.h): a fork/PTRACE_TRACEME/exec start with
 * exec errors reported through a close-on-exec pipe, a waitpid(-1, __WALL) loop over every
 * traced thread, and stack unwinding with libdwfl at PTRACE_EVENT_EXIT stops (frames left
 * without returning) and at the first stop of a forked child (frames entered without a
 * call). Each unwind uses a fresh Dwfl, since the mappings change as the program runs.
 */
#include "user/proc/tracer.h"

#include <elfutils/libdwfl.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpf/edgeprof.h"
#include "user/util/clock.h"
#include "user/util/log.h"
#include "user/proc/libs.h"
#include "user/proc/proc_maps.h"

/* Deeper stacks are cut there and counted as unwind failures. */
#define TRACER_MAX_FRAMES (1u << 20)

/* Which step of the start failed in the child, reported through the pipe. */
enum start_step { START_EXEC = 2 };

struct start_error {
	int step; /* enum start_step */
	int err;  /* errno */
};

struct task {
	int tid;
	int tgid;		   /* 0 until the first stop */
	bool seen;		   /* its first stop was handled */
	bool at_pthread_exit;	   /* its frames were recorded at the pthread_exit breakpoint: */
	size_t bp_first, bp_count; /* those events */
	bool held;		   /* tracer__attach: in a PTRACE_EVENT_STOP, not resumed */
	bool asked;		   /* sent PTRACE_INTERRUPT, its stop not seen yet */
	bool group_stop;	   /* that stop is a job-control stop (resume with LISTEN) */
	int deferred_sig;	   /* a signal for it that arrived while it was stepped out of a
				    * longjmp (settle_task): delivered when it is let go */
	/* Its last call of execve or execveat (BP_EXEC): the frames active then, kept until
	 * the exec succeeds (PTRACE_EVENT_EXEC), and the unwinding failures it had. */
	bool exec_called;
	/* The last signal delivered to it was a fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL or
	 * SIGTRAP raised by an instruction): the interrupted instruction had started, so a
	 * probe on it fired (else it was interrupted before it: see longjmp_hit). */
	bool last_sig_fault;
	struct frame_event *exec_frames;
	size_t nexec_frames;
	unsigned exec_failures;
	/* The last stop of it the tracer handled is its first one, whose FRAME_ENTRY events
	 * are res->events[entry_first, entry_first + entry_count) (see died_unseen). */
	bool only_first;
	size_t entry_first, entry_count;
	/* A SIGKILL took it out of its first stop while its frames were unwound: they are
	 * recorded as entered at its exit stop (where they are the same) */
	bool entries_at_exit;
};

/* A breakpoint the tracer keeps in a C library function for good: pthread_exit (which
 * unwinds the thread's frames before the thread exits: they are recorded at the breakpoint,
 * while still on the stack) and the longjmp family (which skips frames: they are recorded
 * before, and the frame it lands in after). */
enum bp_kind { BP_PTHREAD_EXIT = 0, BP_LONGJMP = 1, BP_THROW = 2, BP_EXEC = 3 };

struct bp {
	uint64_t addr;	 /* runtime address */
	uint8_t len;	 /* length of the displaced instruction, emulated at a hit */
	int8_t push_reg; /* -1: the instruction is endbr64 or a mov; else push of this register */
	int8_t mov_dst;	 /* >= 0: the instruction is a mov to this register (x86 number) */
	int8_t mov_src;	 /* of this register's 64 bits, or (-1) of IMM zero-extended */
	uint32_t imm;
	uint8_t kind;	 /* enum bp_kind */
	bool watched;	 /* no int3: a uprobe signals the thread (tracer__attach), which then
			  * stops just after the function's first instruction */
	uint64_t size;	 /* watched: the function's size (its symbol's), 0 when unknown */
};

#define MAX_BPS 12

/* A traced process (address space) and its breakpoints. */
struct proc {
	int tgid;
	bool tried; /* the breakpoints were looked for */
	bool replaced; /* its image was replaced by an exec (or it descends from one that was):
			* not the profiled program any more, its frames are not followed */
	struct bp bps[MAX_BPS];
	int nbps;
	/* With hooks->lazy_longjmp: it caught a signal, so the longjmp family is watched (or
	 * will be at the early stop); before that only the other functions are. */
	bool longjmp_needed;
	Dwfl *dwfl; /* its modules and unwinding state, reused until an address is unknown */
};

#define NSEARCH 9 /* bp_functions */

struct tracer {
	const char *build_id; /* NULL: match the module by path */
	const char *lib_ids[TRACER_MAX_OBJECTS - 1]; /* profiled libraries: objects 1.. */
	size_t nlib_ids;
	const struct tracer_hooks *hooks;
	char *exe_path;	      /* realpath of the program, when matching by path */
	int main_pid;
	struct task *tasks;
	size_t ntasks, cap_tasks;
	struct proc *procs;
	size_t nprocs, cap_procs;
	struct tracer_result *res;
	size_t cap_events;
	bool oom; /* an allocation failed: events were lost (reported once) */
	uint64_t early;      /* runtime address of the one-shot early stop, 0 when none */
	long early_word;     /* the word it replaced */
	int early_pid;
	/* The loader's rendezvous (hooks->mapped): a stop at _dl_debug_state (run-time address
	 * rdv, file offset rdv_off of rdv_path) in process rdv_pid, whose struct r_debug is at
	 * rdv_state; the loader's image is [rdv_lo, rdv_hi). rdv 0: none pending. */
	uint64_t rdv, rdv_state, rdv_lo, rdv_hi, rdv_off;
	long rdv_word; /* the word its int3 replaced (not watching) */
	int rdv_pid;
	char rdv_path[512];
	bool rdv_watched; /* the watch is still installed (hooks->unwatch missing) */
	bool attached; /* tracer__attach: a running process, no breakpoints written into it */
	double start;  /* when the program started (attach: the window opened) */
	bool watching; /* tracer__run with hooks->watch: no breakpoint written either */
	/* Library functions watched in the main process from its exec on (watch_ahead), as
	 * found in edgeprof's own C library; watch_install adopts each it would watch too. */
	struct ahead {
		char path[512];
		uint64_t offset;
		bool adopted;
	} ahead[NSEARCH];
	int nahead;
	/* Processes that exec'd (hooks->execed ran): hooks->released runs for them once the
	 * stopped thread is let go (release_pending). */
	int *released;
	size_t nreleased, cap_released;
};

/* Signal forwarding: the handler sends SIGTERM/SIGHUP to the main process while it lives,
 * else leaves the signal for the event loop, which sends it to every traced process. */
static volatile sig_atomic_t fwd_pid;
static volatile sig_atomic_t fwd_pending;

static const int ignored_signals[] = {SIGINT, SIGQUIT};
static const int forwarded_signals[] = {SIGTERM, SIGHUP};

struct saved_signals {
	struct sigaction ign[2], fwd[2];
};

const char *frame_event__kind_name(uint8_t kind)
{
	return kind == FRAME_ENTRY ? "ENTRY" : kind == FRAME_THROW ? "THROW" : "EXIT";
}

void tracer_result__release(struct tracer_result *res)
{
	if (!res)
		return;
	free(res->events);
	for (size_t i = 0; i < res->nexec_records; i++)
		free(res->execs[i].path);
	free(res->execs);
	memset(res, 0, sizeof(*res));
}

static void note_oom(struct tracer *t)
{
	if (!t->oom)
		pr_warn("out of memory while tracing: frame events lost");
	t->oom = true;
}

/* --- tasks -------------------------------------------------------------------------------- */

static struct task *task_find(struct tracer *t, int tid)
{
	for (size_t i = 0; i < t->ntasks; i++)
		if (t->tasks[i].tid == tid)
			return &t->tasks[i];
	return NULL;
}

static struct task *task_add(struct tracer *t, int tid)
{
	if (t->ntasks == t->cap_tasks) {
		size_t cap = t->cap_tasks ? 2 * t->cap_tasks : 16;
		struct task *tasks = realloc(t->tasks, cap * sizeof(*tasks));

		if (!tasks)
			return NULL;
		t->tasks = tasks;
		t->cap_tasks = cap;
	}
	t->tasks[t->ntasks] = (struct task){.tid = tid};
	return &t->tasks[t->ntasks++];
}

static void task_remove(struct tracer *t, int tid)
{
	struct task *task = task_find(t, tid);

	if (task) {
		free(task->exec_frames);
		*task = t->tasks[--t->ntasks];
	}
}

/* Frees the task table. */
static void tasks_free(struct tracer *t)
{
	for (size_t i = 0; i < t->ntasks; i++)
		free(t->tasks[i].exec_frames);
	free(t->tasks);
	t->tasks = NULL;
	t->ntasks = 0;
}

/* The thread group of TID from /proc/TID/status, or 0 when it cannot be read; and the
 * process of its (real) parent in *PPID. */
static int read_tgid(int tid, int *ppid)
{
	char path[64], line[256];
	int tgid = 0;
	FILE *f;

	*ppid = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f) && !*ppid)
		if (sscanf(line, "Tgid: %d", &tgid) != 1)
			sscanf(line, "PPid: %d", ppid);
	fclose(f);
	return tgid;
}

static struct proc *proc_find(struct tracer *t, int tgid)
{
	for (size_t i = 0; i < t->nprocs; i++)
		if (t->procs[i].tgid == tgid)
			return &t->procs[i];
	return NULL;
}

/* The record of process TGID, created (as a copy of FROM's when given: a forked child has
 * its parent's memory, breakpoint included) when missing. NULL when out of memory. */
static struct proc *proc_get(struct tracer *t, int tgid, const struct proc *from)
{
	struct proc *p = proc_find(t, tgid);
	struct proc copy = from ? *from : (struct proc){0};

	if (p)
		return p;
	if (t->nprocs == t->cap_procs) {
		size_t cap = t->cap_procs ? 2 * t->cap_procs : 8;
		struct proc *procs = realloc(t->procs, cap * sizeof(*procs));

		if (!procs)
			return NULL;
		t->procs = procs;
		t->cap_procs = cap;
	}
	p = &t->procs[t->nprocs++];
	*p = copy;
	p->tgid = tgid;
	p->dwfl = NULL; /* a Dwfl belongs to one process */
	return p;
}

static void proc_remove(struct tracer *t, int tgid)
{
	struct proc *p = proc_find(t, tgid);

	if (p) {
		if (p->dwfl)
			dwfl_end(p->dwfl);
		*p = t->procs[--t->nprocs];
	}
}

/* Takes the hooks and the profiled libraries' build-ids from HOOKS. */
static void tracer_set_libs(struct tracer *t, const struct tracer_hooks *hooks)
{
	t->hooks = hooks;
	/* A library without a build-id ("") is never matched: its frames are not seen. */
	for (size_t k = 0; hooks && k < hooks->nlib_ids && k < TRACER_MAX_OBJECTS - 1; k++)
		t->lib_ids[t->nlib_ids++] = hooks->lib_ids[k] ? hooks->lib_ids[k] : "";
}

/* --- unwinding ---------------------------------------------------------------------------- */

struct unwind {
	struct tracer *t;
	Dwfl *dwfl;
	int tid;
	uint8_t kind;
	bool unknown; /* a frame's address is in no module the Dwfl knows (dlopen since?) */
	uint64_t unknown_pc; /* the first such address */
	unsigned nframes;
	Dwfl_Module *last_mod; /* cache of the last module looked at */
	int last_obj;
	GElf_Addr last_bias;
	int tgid;
	bool cut; /* TRACER_MAX_FRAMES reached */
	bool pending; /* the thread was interrupted: activation frames have not run their pc */
};

static int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool build_id_equal(const char *hex, const unsigned char *bits, int len)
{
	if (strlen(hex) != 2 * (size_t)len)
		return false;
	for (int i = 0; i < len; i++) {
		int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0 || (unsigned)(hi << 4 | lo) != bits[i])
			return false;
	}
	return true;
}

/* Which profiled object MOD is (0 the binary, K the library lib_ids[K - 1]), or -1; sets
 * *BIAS (runtime address - ELF vaddr). */
static int module_is_profiled(struct unwind *u, Dwfl_Module *mod, GElf_Addr *bias)
{
	struct tracer *t = u->t;
	int obj = -1;

	if (mod == u->last_mod) {
		*bias = u->last_bias;
		return u->last_obj;
	}
	if (dwfl_module_getelf(mod, bias)) {
		const unsigned char *bits;
		GElf_Addr id_vaddr;
		int len = dwfl_module_build_id(mod, &bits, &id_vaddr);

		if (t->build_id) {
			if (len > 0 && build_id_equal(t->build_id, bits, len))
				obj = 0;
		} else {
			const char *name =
			    dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);

			if (name && t->exe_path && strcmp(name, t->exe_path) == 0)
				obj = 0;
		}
		for (size_t k = 0; obj < 0 && len > 0 && k < t->nlib_ids; k++)
			if (build_id_equal(t->lib_ids[k], bits, len))
				obj = 1 + (int)k;
	}
	u->last_mod = mod;
	u->last_obj = obj;
	u->last_bias = *bias;
	return obj;
}

static int add_event(struct tracer *t, const struct frame_event *ev)
{
	struct tracer_result *res = t->res;

	if (res->nevents == t->cap_events) {
		size_t cap = t->cap_events ? 2 * t->cap_events : 64;
		struct frame_event *events = realloc(res->events, cap * sizeof(*events));

		if (!events) {
			note_oom(t);
			return -ENOMEM;
		}
		res->events = events;
		t->cap_events = cap;
	}
	res->events[res->nevents++] = *ev;
	return 0;
}

/* A frame at *PC (where it stopped, or its return address) in code of the caller's own
 * (tracer_hooks.orig_pc) is at the program's address it maps to: *PC becomes that. Returns 0,
 * or -EAGAIN when it maps to none. */
static int orig_pc(struct tracer *t, Dwarf_Addr *pc)
{
	uint64_t orig;
	int rc;

	if (!t->hooks || !t->hooks->orig_pc)
		return 0;
	rc = t->hooks->orig_pc(t->hooks->ctx, *pc, &orig);
	if (rc == 1)
		*pc = orig;
	return rc < 0 ? -EAGAIN : 0;
}

/* The general registers of FRAME that the unwinder knows, by x86 number, into REGS, with a
 * bit per register known in *VALID. */
static void frame_regs(Dwfl_Frame *frame, uint64_t regs[16], uint16_t *valid)
{
	/* x86 register k is DWARF register dwarf[k]. */
	static const unsigned dwarf[16] = { 0, 2, 1, 3, 7, 6, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15 };

	*valid = 0;
	for (unsigned k = 0; k < 16; k++) {
		Dwarf_Word val;

		if (dwfl_frame_reg(frame, dwarf[k], &val) == 0) {
			regs[k] = val;
			*valid |= (uint16_t)(1u << k);
		}
	}
}

static int unwind_frame(Dwfl_Frame *frame, void *arg)
{
	struct unwind *u = arg;
	Dwarf_Addr pc;
	bool activation;
	Dwfl_Module *mod;
	GElf_Addr bias;
	int obj;

	if (!dwfl_frame_pc(frame, &pc, &activation))
		return DWARF_CB_ABORT; /* dwfl_errno says why */
	if (++u->nframes > TRACER_MAX_FRAMES) {
		u->cut = true;
		return DWARF_CB_ABORT;
	}
	if (!activation && pc == 0)
		return DWARF_CB_OK; /* an outermost frame without a return address */
	if (orig_pc(u->t, &pc) < 0) {
		u->unknown = true;
		u->unknown_pc = pc;
		return DWARF_CB_ABORT;
	}
	/* A return address may lie just past the end of its function (after a call that
	 * does not return): look the caller up by the call instruction. */
	mod = dwfl_addrmodule(u->dwfl, activation ? pc : pc - 1);
	if (!mod && !u->unknown) {
		u->unknown = true;
		u->unknown_pc = pc;
	}
	if (mod && (obj = module_is_profiled(u, mod, &bias)) >= 0) {
		struct frame_event ev = {
		    .vaddr = pc - bias,
		    .kind = u->kind,
		    .activation = activation,
		    .pending = activation && u->pending,
		    .obj = (uint8_t)obj,
		    .tid = u->tid,
		    .tgid = u->tgid,
		};

		if (activation)
			frame_regs(frame, ev.regs, &ev.regs_valid);
		if (add_event(u->t, &ev))
			return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

/* Where the tracer's Dwfls look for separate debug files: dwfl_standard_find_debuginfo, but a
 * module without a file of its own (the vdso) only by build ID under /usr/lib/debug when
 * DEBUGINFOD_URLS names no server. libdw 0.188 loads its debuginfod client (libcurl, gnutls and
 * a dozen more libraries: ~17 ms, with the target held) at the first debug file it cannot find
 * on disk, whether or not a server is set, and the vdso's is seldom on disk. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	if ((!urls || !*urls) && modname && modname[0] == '[')
		return dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name,
						    debuglink_file, debuglink_crc,
						    debuginfo_file_name);
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					    debuglink_file, debuglink_crc, debuginfo_file_name);
}

/* The Dwfl of process TGID (reporting TID's mappings), made on first use or when FRESH. NULL
 * when it cannot be made (reported at debug level). */
static Dwfl *proc_dwfl(struct tracer *t, int tid, int tgid, bool fresh)
{
	static const Dwfl_Callbacks callbacks = {
	    .find_elf = dwfl_linux_proc_find_elf,
	    .find_debuginfo = find_debuginfo,
	};
	struct proc *p = proc_get(t, tgid, NULL);
	Dwfl *d;
	int rc;

	if (!p) {
		note_oom(t);
		return NULL;
	}
	if (fresh && p->dwfl) {
		dwfl_end(p->dwfl);
		p->dwfl = NULL;
	}
	if (p->dwfl)
		return p->dwfl;
	d = dwfl_begin(&callbacks);
	/* Through the thread's own /proc entry: a leader that has exited (pthread_exit)
	 * leaves /proc/TGID/maps empty while other threads run. */
	if (!d || dwfl_linux_proc_report(d, tid) != 0 || dwfl_report_end(d, NULL, NULL) != 0 ||
	    (rc = dwfl_linux_proc_attach(d, tgid, true)) != 0) {
		pr_debug("thread %d: cannot prepare unwinding: %s", tid,
			 dwfl_errno() ? dwfl_errmsg(-1) : strerror(errno));
		if (d)
			dwfl_end(d);
		return NULL;
	}
	p->dwfl = d;
	return d;
}

/* Unwinds the stack of TID (of process TGID), which must be in a ptrace stop, and records a
 * KIND event for each of its frames in the profiled binary, innermost first. A stack that
 * cannot be unwound (fully) is counted in unwind_failures; the frames found are kept. */
static void unwind_task_at(struct tracer *t, int tid, int tgid, uint8_t kind, bool pending);

static void unwind_task(struct tracer *t, int tid, int tgid, uint8_t kind)
{
	unwind_task_at(t, tid, tgid, kind, false);
}

/* unwind_task, for a thread interrupted (PENDING) or not. */
static void unwind_task_at(struct tracer *t, int tid, int tgid, uint8_t kind, bool pending)
{
	size_t before = t->res->nevents;
	struct proc *p = proc_find(t, tgid);
	struct unwind u;
	int rc, attempt;

	if (p && p->replaced)
		return; /* no longer the profiled program */
	for (attempt = 0; attempt < 2; attempt++) {
		u = (struct unwind){.t = t, .tid = tid, .tgid = tgid, .kind = kind,
				    .pending = pending, .last_obj = -1};
		t->res->nevents = before;
		u.dwfl = proc_dwfl(t, tid, tgid, attempt > 0);
		if (!u.dwfl) {
			t->res->unwind_failures++;
			return;
		}
		rc = dwfl_getthread_frames(u.dwfl, tid, unwind_frame, &u);
		if (!u.unknown)
			break; /* else the mappings changed: once more with a fresh Dwfl */
	}
	if (u.cut) {
		pr_debug("thread %d: stack cut after %u frames", tid, TRACER_MAX_FRAMES);
		t->res->unwind_failures++;
	} else if (u.unknown) {
		/* Code of no file (JIT code, a trampoline a signal interrupted inside an
		 * increment) has no CFI: the frames beyond it cannot be told, and one of the
		 * profiled code left there would be missing from the flow, unexplained. */
		pr_debug("thread %d: a frame at %#llx is in no known code: the frames beyond it "
			 "are not known", tid, (unsigned long long)u.unknown_pc);
		t->res->unwind_failures++;
	} else if (rc != 0 && !t->oom) {
		/* libdwfl may report the end of some stacks as an error: only an error before
		 * any frame is a failure for sure; later ones lose the outer frames at most. */
		pr_debug("thread %d: unwinding stopped after %u frames: %s", tid, u.nframes,
			 dwfl_errmsg(-1));
		if (u.nframes == 0 || dwfl_errno() != 0)
			t->res->unwind_failures++;
		/* Its registers could not be read (a SIGKILL took the thread out of its stop):
		 * libdwfl then leaves the thread marked attached to the Dwfl, whose next
		 * unwinding would abort on an assertion (pid_set_initial_registers: tid_attached
		 * == 0). The next one gets a fresh Dwfl. */
		if (u.nframes == 0 && (p = proc_find(t, tgid)) && p->dwfl) {
			dwfl_end(p->dwfl);
			p->dwfl = NULL;
		}
	}
}

/* --- the pthread_exit breakpoint ---------------------------------------------------------- */


/* Functions to break on, looked up in one pass over the process's objects (libc's first). */
static const struct {
	const char *name;
	uint8_t kind;
} bp_functions[NSEARCH] = {
	{ "pthread_exit", BP_PTHREAD_EXIT }, { "longjmp", BP_LONGJMP },
	{ "_longjmp", BP_LONGJMP },	      { "siglongjmp", BP_LONGJMP },
	{ "__longjmp_chk", BP_LONGJMP }, { "_Unwind_RaiseException", BP_THROW },
	{ "_Unwind_Resume", BP_THROW },      { "execve", BP_EXEC },
	{ "execveat", BP_EXEC },
};

const char *tracer__watched_function(size_t i)
{
	return i < NSEARCH ? bp_functions[i].name : NULL;
}

struct symbol_search {
	GElf_Addr addr[NSEARCH];
	bool in_libc[NSEARCH];
	/* For watching with a uprobe (tracer__attach): the object's path and the function's
	 * file offset in it (0 when it could not be found). */
	char path[NSEARCH][512];
	uint64_t offset[NSEARCH];
	uint64_t size[NSEARCH]; /* the symbol's size */
};

/* The file offset of run-time address ADDR in MOD's ELF file, or 0. */
static uint64_t module_file_offset(Dwfl_Module *mod, GElf_Addr addr)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t n;

	if (!elf || elf_getphdrnum(elf, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    addr - bias >= ph.p_vaddr && addr - bias < ph.p_vaddr + ph.p_filesz)
			return addr - bias - ph.p_vaddr + ph.p_offset;
	}
	return 0;
}

static int search_module(Dwfl_Module *mod, void **userdata __attribute__((unused)),
			 const char *modname, Dwarf_Addr base __attribute__((unused)), void *arg)
{
	struct symbol_search *ss = arg;
	bool libc = strstr(modname, "/libc.so") || strstr(modname, "/libc-");
	int n = dwfl_module_getsymtab(mod);

	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);

		if (!name || GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF ||
		    !addr)
			continue;
		for (int k = 0; k < NSEARCH; k++)
			if (strcmp(name, bp_functions[k].name) == 0 &&
			    (!ss->addr[k] || (libc && !ss->in_libc[k]))) {
				ss->addr[k] = addr;
				ss->in_libc[k] = libc;
				ss->offset[k] = module_file_offset(mod, addr);
				ss->size[k] = sym.st_size;
				snprintf(ss->path[k], sizeof(ss->path[k]), "%s", modname);
			}
	}
	return DWARF_CB_OK;
}

/* Looks up the bp_functions in the objects mapped by process TGID (libc's first). */
static void find_functions(int tgid, struct symbol_search *ss)
{
	static const Dwfl_Callbacks callbacks = {
	    .find_elf = dwfl_linux_proc_find_elf,
	    .find_debuginfo = find_debuginfo,
	};
	Dwfl *dwfl = dwfl_begin(&callbacks);

	memset(ss, 0, sizeof(*ss));
	if (!dwfl)
		return;
	if (dwfl_linux_proc_report(dwfl, tgid) == 0 && dwfl_report_end(dwfl, NULL, NULL) == 0)
		dwfl_getmodules(dwfl, search_module, ss, 0);
	dwfl_end(dwfl);
}

/* Places an int3 at ADDR for KIND when its first instruction is one the tracer can emulate
 * (endbr64, push, mov of an immediate to a 32-bit register, mov between 64-bit registers, as
 * glibc's execve and execveat start): the breakpoint then never has to be lifted, so threads
 * cannot slip past. */
static void bp_place(struct proc *p, int tid, uint64_t addr, uint8_t kind)
{
	struct bp *b;
	const uint8_t *c;
	long word;

	for (int i = 0; i < p->nbps; i++)
		if (p->bps[i].addr == addr)
			return; /* an alias of a function already broken on */
	if (p->nbps == MAX_BPS)
		return;
	b = &p->bps[p->nbps];
	*b = (struct bp){ .addr = addr, .kind = kind, .push_reg = -1, .mov_dst = -1, .mov_src = -1 };
	errno = 0;
	word = ptrace(PTRACE_PEEKDATA, tid, (void *)addr, NULL);
	if (errno)
		goto fail;
	c = (const uint8_t *)&word;
	if (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa) {
		b->len = 4;
		b->push_reg = -1;
	} else if (c[0] >= 0x50 && c[0] <= 0x57 && c[0] != 0x54) {
		b->len = 1;
		b->push_reg = c[0] - 0x50;
	} else if (c[0] == 0x41 && c[1] >= 0x50 && c[1] <= 0x57) {
		b->len = 2;
		b->push_reg = 8 + c[1] - 0x50;
	} else if (c[0] >= 0xb8 && c[0] <= 0xbf && c[0] != 0xbc) {
		b->len = 5; /* mov $imm32, %r32 */
		b->mov_dst = c[0] - 0xb8;
		memcpy(&b->imm, c + 1, 4);
	} else if (c[0] == 0x41 && c[1] >= 0xb8 && c[1] <= 0xbf) {
		b->len = 6;
		b->mov_dst = 8 + c[1] - 0xb8;
		memcpy(&b->imm, c + 2, 4);
	} else if ((c[0] & 0xfa) == 0x48 && c[1] == 0x89 && (c[2] >> 6) == 3 &&
		   (c[2] & 7) != 4 && ((c[2] >> 3) & 7) != 4) {
		b->len = 3; /* mov %r64, %r64 (REX.W, R and B bits) */
		b->mov_src = (int8_t)(((c[0] >> 2) & 1) << 3 | ((c[2] >> 3) & 7));
		b->mov_dst = (int8_t)((c[0] & 1) << 3 | (c[2] & 7));
	} else {
		pr_debug("process %d: %#" PRIx64 " starts with %02x %02x: no breakpoint", p->tgid,
			 addr, c[0], c[1]);
		return;
	}
	word = (word & ~0xffL) | 0xcc;
	if (ptrace(PTRACE_POKEDATA, tid, (void *)addr, (void *)word))
		goto fail;
	p->nbps++;
	pr_debug("process %d: breakpoint at %#" PRIx64, p->tgid, addr);
	return;
fail:
	pr_debug("process %d: cannot place a breakpoint at %#" PRIx64 ": %s", p->tgid, addr,
		 strerror(errno));
}

/* Sets the breakpoints of the process of the stopped thread TID, once per process. */
static void breakpoint_install(struct tracer *t, int tid, int tgid)
{
	struct proc *p = proc_get(t, tgid, NULL);
	struct symbol_search ss;

	if (!p) {
		note_oom(t);
		return;
	}
	if (p->tried)
		return;
	p->tried = true;
	find_functions(tgid, &ss);
	for (int k = 0; k < NSEARCH; k++)
		if (ss.addr[k])
			bp_place(p, tid, ss.addr[k], bp_functions[k].kind);
}

static unsigned long long *reg_slot(struct user_regs_struct *regs, int reg)
{
	switch (reg) {
	case 0:
		return &regs->rax;
	case 1:
		return &regs->rcx;
	case 2:
		return &regs->rdx;
	case 3:
		return &regs->rbx;
	case 5:
		return &regs->rbp;
	case 6:
		return &regs->rsi;
	case 7:
		return &regs->rdi;
	case 8:
		return &regs->r8;
	case 9:
		return &regs->r9;
	case 10:
		return &regs->r10;
	case 11:
		return &regs->r11;
	case 12:
		return &regs->r12;
	case 13:
		return &regs->r13;
	case 14:
		return &regs->r14;
	default:
		return &regs->r15;
	}
}

/* Executes the instruction a breakpoint displaced (endbr64: nothing; push: the push) and
 * moves past it. REGS has rip at the breakpoint's address. */
static void bp_emulate(int tid, const struct bp *b, struct user_regs_struct *regs)
{
	if (b->watched)
		return; /* nothing was displaced: the thread goes on where it stopped */
	regs->rip = b->addr + b->len;
	if (b->push_reg >= 0) {
		regs->rsp -= 8;
		if (ptrace(PTRACE_POKEDATA, tid, (void *)regs->rsp,
			   (void *)*reg_slot(regs, b->push_reg)))
			pr_warn("thread %d: cannot emulate an instruction at a breakpoint: %s", tid,
				strerror(errno));
	} else if (b->mov_dst >= 0) {
		*reg_slot(regs, b->mov_dst) = b->mov_src >= 0 ? *reg_slot(regs, b->mov_src) : b->imm;
	}
	if (ptrace(PTRACE_SETREGS, tid, NULL, regs))
		pr_warn("thread %d: cannot step over a breakpoint: %s", tid, strerror(errno));
}

/* One frame of a stack, as longjmp handling compares them. */
struct frame_rec {
	uint64_t pc, rsp, vaddr;
	bool in_binary, activation; /* in_binary: in a profiled object, obj */
	uint8_t obj;
	uint16_t regs_valid; /* activation frames: their registers (struct frame_event) */
	uint64_t regs[16];
};

struct collect {
	struct unwind u;
	struct frame_rec *v;
	size_t n, cap;
	size_t max; /* stop after this many frames (0: all) */
};

static int collect_frame(Dwfl_Frame *frame, void *arg)
{
	struct collect *c = arg;
	Dwarf_Addr pc;
	Dwarf_Word rsp = 0;
	bool activation;
	Dwfl_Module *mod;
	GElf_Addr bias;
	struct frame_rec *r;
	int obj;

	if (!dwfl_frame_pc(frame, &pc, &activation) || (c->max && c->n >= c->max))
		return DWARF_CB_ABORT;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct frame_rec *v;

		if (cap > TRACER_MAX_FRAMES || !(v = realloc(c->v, cap * sizeof(*v))))
			return DWARF_CB_ABORT;
		c->v = v;
		c->cap = cap;
	}
	if (!activation && pc == 0)
		return DWARF_CB_OK;
	if (orig_pc(c->u.t, &pc) < 0) {
		c->u.unknown = true;
		return DWARF_CB_ABORT;
	}
	dwfl_frame_reg(frame, 7, &rsp); /* DWARF register 7 is rsp */
	r = &c->v[c->n++];
	*r = (struct frame_rec){ .pc = pc, .rsp = rsp, .activation = activation };
	if (activation)
		frame_regs(frame, r->regs, &r->regs_valid);
	mod = dwfl_addrmodule(c->u.dwfl, activation ? pc : pc - 1);
	if (!mod)
		c->u.unknown = true;
	if (mod && (obj = module_is_profiled(&c->u, mod, &bias)) >= 0) {
		r->in_binary = true;
		r->obj = (uint8_t)obj;
		r->vaddr = pc - bias;
	}
	return DWARF_CB_OK;
}

/* The frames of the stopped thread TID, innermost first; false when unwinding failed. */
static bool collect_frames(struct tracer *t, int tid, int tgid, struct collect *c)
{
	for (int attempt = 0; attempt < 2; attempt++) {

		c->u = (struct unwind){ .t = t, .tid = tid, .tgid = tgid, .last_obj = -1 };
		c->n = 0;
		c->u.dwfl = proc_dwfl(t, tid, tgid, attempt > 0);
		if (!c->u.dwfl)
			return false;
		dwfl_getthread_frames(c->u.dwfl, tid, collect_frame, c);
		if (!c->u.unknown)
			break;
	}
	return c->n > 0;
}

static void add_frame_event(struct tracer *t, uint64_t vaddr, uint8_t kind, int tid, int tgid,
			    uint8_t obj)
{
	struct frame_event ev = { .vaddr = vaddr, .kind = kind, .activation = 0, .obj = obj,
				  .tid = tid, .tgid = tgid };

	add_event(t, &ev);
}

static uint64_t ror17(uint64_t v)
{
	return (v >> 17) | (v << 47);
}

/*
 * A longjmp is about to run in TID (stopped at breakpoint B, REGS at its address): where it
 * lands is in its jmp_buf (glibc keeps rsp and pc there mangled with the thread's pointer
 * guard, at fs:0x30). Frames of the binary deeper than the landing stack pointer are left
 * without returning; the frame it lands in was waiting on some call and resumes after its
 * call to setjmp: left there, entered again inside the setjmp call's block.
 */
static void longjmp_hit(struct tracer *t, int tid, int tgid, const struct bp *b,
			struct user_regs_struct *regs)
{
	struct collect c = { 0 };
	uint64_t guard, jrsp, jpc, land_rsp, land_pc;
	bool landed = false;
	GElf_Addr land_bias = 0;
	int land_obj = -1;
	Dwfl_Module *land_mod;

	errno = 0;
	guard = (uint64_t)ptrace(PTRACE_PEEKDATA, tid, (void *)(regs->fs_base + 0x30), NULL);
	jrsp = (uint64_t)ptrace(PTRACE_PEEKDATA, tid, (void *)(regs->rdi + 6 * 8), NULL);
	jpc = (uint64_t)ptrace(PTRACE_PEEKDATA, tid, (void *)(regs->rdi + 7 * 8), NULL);
	if (errno || !collect_frames(t, tid, tgid, &c)) {
		pr_debug("thread %d: cannot read a longjmp's target", tid);
		t->res->unwind_failures++;
		goto out;
	}
	land_rsp = ror17(jrsp) ^ guard;
	land_pc = ror17(jpc) ^ guard;
	/* A setjmp called from a trampoline (its call displaced there) returns into it: the
	 * program's address is where the landing frame resumes. */
	if (orig_pc(t, (Dwarf_Addr *)&land_pc) < 0) {
		pr_debug("thread %d: a longjmp lands inside an increment", tid);
		t->res->unwind_failures++;
		goto out;
	}
	land_mod = dwfl_addrmodule(c.u.dwfl, land_pc);
	if (land_mod)
		land_obj = module_is_profiled(&c.u, land_mod, &land_bias);
	for (size_t i = 0; i < c.n; i++) {
		const struct frame_rec *f = &c.v[i];

		if (f->in_binary && f->activation && i > 0 &&
		    (f->rsp < land_rsp || (f->rsp == land_rsp && land_obj == f->obj))) {
			/* A frame a signal interrupted, left by its handler's longjmp where it
			 * stopped (before that instruction unless the signal was its fault); when
			 * it is the frame the longjmp lands in (its setjmp's caller, interrupted
			 * with the stack pointer it had then), entered again there. */
			struct task *tk = task_find(t, tid);
			struct frame_event ev = { .vaddr = f->vaddr, .kind = FRAME_EXIT,
						  .activation = 1,
						  .pending = !(tk && tk->last_sig_fault),
						  .obj = f->obj, .tid = tid, .tgid = tgid,
						  .regs_valid = f->regs_valid };

			memcpy(ev.regs, f->regs, sizeof(ev.regs));
			add_event(t, &ev);
			if (f->rsp < land_rsp)
				continue;
			add_frame_event(t, land_pc - land_bias, FRAME_ENTRY, tid, tgid, f->obj);
			landed = true;
			break;
		}
		if (!f->in_binary || f->activation)
			continue;
		if (f->rsp < land_rsp) {
			add_frame_event(t, f->vaddr, FRAME_EXIT, tid, tgid, f->obj); /* skipped */
			continue;
		}
		/* The frame it lands in: the same stack pointer, in the same object. */
		if (f->rsp == land_rsp && land_obj == f->obj) {
			add_frame_event(t, f->vaddr, FRAME_EXIT, tid, tgid, f->obj);
			add_frame_event(t, land_pc - land_bias, FRAME_ENTRY, tid, tgid, f->obj);
			landed = true;
		}
		break;
	}
	/* Landing in a frame of a profiled object that was not found: counts would be wrong. */
	if (!landed && land_obj >= 0) {
		pr_debug("thread %d: a longjmp lands in a frame not on its stack", tid);
		t->res->unwind_failures++;
	}
	t->res->nlongjmps++;
out:
	free(c.v);
	bp_emulate(tid, b, regs);
}

static int bp_record(struct tracer *t, int tid, int tgid, const struct bp *b,
		     struct user_regs_struct *regs_in);

/* TID (of TGID) is about to call execve or execveat: its frames now are those an exec leaves
 * without returning. They are kept aside (an exec may fail: execvp tries every directory of
 * PATH) until the exec succeeds (exec_done). */
static void exec_called(struct tracer *t, int tid, int tgid)
{
	struct tracer_result *res = t->res;
	size_t before = res->nevents;
	unsigned failures = res->unwind_failures;
	struct task *task;

	unwind_task(t, tid, tgid, FRAME_EXIT);
	task = task_find(t, tid);
	if (task) {
		free(task->exec_frames);
		task->exec_frames = NULL;
		task->nexec_frames = 0;
		task->exec_called = true;
		task->exec_failures = res->unwind_failures - failures;
		if (res->nevents > before) {
			task->exec_frames = malloc((res->nevents - before) * sizeof(*task->exec_frames));
			if (task->exec_frames) {
				memcpy(task->exec_frames, &res->events[before],
				       (res->nevents - before) * sizeof(*task->exec_frames));
				task->nexec_frames = res->nevents - before;
			} else {
				note_oom(t);
			}
		}
	}
	res->nevents = before;
	res->unwind_failures = failures;
}

/* Reads the executable of PID (after an exec: the new one), malloc'd; NULL when unknown. */
static char *exe_of(int pid)
{
	char link[64], buf[4096];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return strdup(buf);
}

/* Queues hooks->released for process TGID, which has just exec'd (see release_pending). */
static void release_later(struct tracer *t, int tgid)
{
	if (!t->hooks || !t->hooks->released)
		return;
	if (t->nreleased == t->cap_released) {
		size_t cap = t->cap_released ? 2 * t->cap_released : 8;
		int *v = realloc(t->released, cap * sizeof(*v));

		if (!v) {
			/* Now then: slower for the process, never wrong. */
			t->hooks->released(t->hooks->ctx, tgid);
			return;
		}
		t->released = v;
		t->cap_released = cap;
	}
	t->released[t->nreleased++] = tgid;
}

/* Runs hooks->released for the processes that exec'd, once they were let go (detached; the
 * main process: resumed): what the caller does there may take long (destroying a process's
 * uprobe links waits for kernel grace periods, 25-75 ms each), and a program that kills
 * the child it has just exec'd, then reaps it with WNOHANG, must find it gone by then (a
 * process that a SIGKILL took out of its exec stop before it was detached is released at
 * its exit stop, once detached there). */
static void release_pending(struct tracer *t)
{
	for (size_t i = 0; i < t->nreleased; i++)
		t->hooks->released(t->hooks->ctx, t->released[i]);
	t->nreleased = 0;
}

/*
 * Lets go process TGID for good when it is no longer the profiled program (it exec'd) and
 * not the one edgeprof started (whose status is the run's): its thread TID is in a ptrace
 * stop (of the exec, or of its exit) and is detached. Nothing of it is followed any more
 * (its frames are not, and neither are its children), and its exit and reaping by its
 * parent no longer wait for the tracer: a traced zombie is visible to its tracer only, so
 * while the tracer is busy a parent's waitpid(WNOHANG) would not find the child it killed.
 * Returns true when detached (TID and TGID are then forgotten).
 */
static bool let_go_replaced(struct tracer *t, int tid, int tgid)
{
	struct proc *p = proc_find(t, tgid);

	if (t->attached || tgid == t->main_pid || !p || !p->replaced)
		return false;
	/* ESRCH: it is not in that stop any more (a SIGKILL ended it): it is let go at its
	 * exit stop, which comes next. */
	if (ptrace(PTRACE_DETACH, tid, NULL, NULL)) {
		pr_debug("process %d: PTRACE_DETACH: %s", tgid, strerror(errno));
		return false;
	}
	pr_debug("process %d: let go (not the profiled program any more)", tgid);
	task_remove(t, tid);
	proc_remove(t, tgid);
	release_later(t, tgid);
	return true;
}

/*
 * Process TGID has replaced its image (PTRACE_EVENT_EXEC), the thread OLD_TID having called
 * exec (TGID itself, or a thread that took the leader's id). When TGID was still profiled:
 * the frames that thread had at its exec call are left without returning (FRAME_EXIT events,
 * as for exit()), the exec is recorded, the caller stops counting TGID (hooks->execed). From
 * now on TGID and the processes it creates are not the profiled program: no frame of theirs
 * is followed, no breakpoint is set in them.
 */
static void exec_done(struct tracer *t, int tgid, int old_tid)
{
	struct tracer_result *res = t->res;
	struct proc *p = proc_find(t, tgid);
	struct task *x = task_find(t, old_tid);

	if (!(p && p->replaced)) {
		struct tracer_exec *e;

		for (size_t i = 0; x && i < x->nexec_frames; i++)
			add_event(t, &x->exec_frames[i]);
		if (x && x->exec_called) {
			res->unwind_failures += x->exec_failures;
		} else {
			pr_debug("process %d: exec without a call of execve seen: its frames are not followed",
				 tgid);
			res->unwind_failures++;
		}
		e = realloc(res->execs, (res->nexec_records + 1) * sizeof(*e));
		if (e) {
			res->execs = e;
			e = &e[res->nexec_records++];
			*e = (struct tracer_exec){ .pid = tgid, .main = tgid == t->main_pid,
						   .frames = x && x->exec_called,
						   .at = now_seconds() - t->start,
						   .path = exe_of(tgid) };
		} else {
			note_oom(t);
		}
		if (t->hooks && t->hooks->execed && t->hooks->execed(t->hooks->ctx, tgid))
			pr_debug("process %d: the exec hook failed", tgid);
		/* The others are released once let go (let_go_replaced). */
		if (t->attached || tgid == t->main_pid)
			release_later(t, tgid);
		pr_debug("process %d replaced its program (exec of %s)", tgid,
			 e && e->path ? e->path : "?");
	}
	if (x) {
		free(x->exec_frames);
		x->exec_frames = NULL;
		x->nexec_frames = 0;
		x->exec_called = false;
	}
	/* A new program: its breakpoints are gone; it is not profiled. */
	proc_remove(t, tgid);
	p = proc_get(t, tgid, NULL);
	if (p) {
		p->replaced = true;
		p->tried = true;
	} else {
		note_oom(t);
	}
}

/* The breakpoint of process TGID that its stopped thread TID has just reached, with its
 * registers in *REGS: an int3 one (rip just past it), or with WATCHED a watched function
 * (rip past its first instruction, which is at most 15 bytes long); the last listed when
 * several fit; NULL when none. */
static const struct bp *bp_reached(struct tracer *t, int tid, int tgid, bool watched,
				   struct user_regs_struct *regs)
{
	struct proc *p = proc_find(t, tgid);
	const struct bp *found = NULL;

	if (!p || !p->nbps || ptrace(PTRACE_GETREGS, tid, NULL, regs))
		return NULL;
	for (int i = 0; i < p->nbps; i++) {
		const struct bp *b = &p->bps[i];

		if (watched ? b->watched && regs->rip >= b->addr && regs->rip < b->addr + 16
			    : regs->rip == b->addr + 1)
			found = b;
	}
	return found;
}

/* At a SIGTRAP stop of TID: when it is at one of the tracer's breakpoints, records what that
 * breakpoint is for, emulates the displaced instruction and returns 1 + its kind (the SIGTRAP
 * is then not delivered); 0 when it is not at one. */
static int breakpoint_hit(struct tracer *t, int tid, int tgid)
{
	struct user_regs_struct regs;
	const struct bp *b = bp_reached(t, tid, tgid, false, &regs);

	if (!b)
		return 0;
	/* Unwind from the function's entry, where its CFI describes the frame. */
	regs.rip = b->addr;
	if (ptrace(PTRACE_SETREGS, tid, NULL, &regs))
		return 0;
	return bp_record(t, tid, tgid, b, &regs);
}

/* At an EP_NOTIFY_SIGNAL stop of TID (tracer__attach): when TID is just inside a watched
 * function (after its first instruction), records what the function is about to do as
 * breakpoint_hit does and returns 1 + its kind (the signal is then not delivered); 0 when it
 * is not (the signal is the program's own). */
static int watch_hit(struct tracer *t, int tid, int tgid)
{
	struct user_regs_struct regs;
	const struct bp *b = bp_reached(t, tid, tgid, true, &regs);

	return b ? bp_record(t, tid, tgid, b, &regs) : 0;
}

/* What breakpoint B of process TGID, reached by TID (registers REGS), stands for: the frames
 * a longjmp skips, a throw's frames, or pthread_exit's. Returns 1 + B's kind. */
static int bp_record(struct tracer *t, int tid, int tgid, const struct bp *b,
		     struct user_regs_struct *regs_in)
{
	struct user_regs_struct regs = *regs_in;

	if (b->kind == BP_LONGJMP) {
		struct bp copy = *b; /* the table may move while the thread is stepped */

		longjmp_hit(t, tid, tgid, &copy, &regs);
		return 1 + BP_LONGJMP;
	}
	if (b->kind == BP_EXEC) {
		exec_called(t, tid, tgid);
		bp_emulate(tid, b, &regs);
		return 1 + BP_EXEC;
	}
	if (b->kind == BP_THROW) {
		struct frame_event marker = { .vaddr = 0, .kind = FRAME_THROW, .tid = tid,
					      .tgid = tgid };

		add_event(t, &marker);
		unwind_task(t, tid, tgid, FRAME_THROW);
		bp_emulate(tid, b, &regs);
		return 1 + BP_THROW;
	}
	unwind_task(t, tid, tgid, FRAME_EXIT);
	bp_emulate(tid, b, &regs);
	return 1 + BP_PTHREAD_EXIT;
}

static void watch_install(struct tracer *t, int pid, const struct tracer_hooks *hooks);
static void watch_ahead(struct tracer *t, int pid, const struct tracer_hooks *hooks);
static bool ahead_hit(struct tracer *t, int tid, int tgid);
static void longjmp_watch_on_signal(struct tracer *t, int tgid, int sig);
static void rdv_done(struct tracer *t, int tgid, bool late);

/* The one-shot early stop (see tracer_hooks.early_stop), watched (the thread has run the
 * watched instruction): watches the process's library functions, the C library being loaded
 * now. */
static bool early_watch_hit(struct tracer *t, int tid, int tgid)
{
	struct user_regs_struct regs;

	if (!t->early || tgid != t->early_pid || ptrace(PTRACE_GETREGS, tid, NULL, &regs) ||
	    regs.rip < t->early || regs.rip >= t->early + 16)
		return false;
	t->early = 0;
	if (t->rdv && tgid == t->rdv_pid)
		rdv_done(t, tgid, true);
	watch_install(t, tgid, t->hooks);
	if (t->hooks && t->hooks->loaded && t->hooks->loaded(t->hooks->ctx, tgid))
		pr_debug("process %d: the load hook failed", tgid);
	return true;
}

/* The one-shot early stop (see tracer_hooks.early_stop): puts the original word back,
 * rewinds the thread and sets the process's breakpoints, the C library being loaded now. */
static bool early_hit(struct tracer *t, int tid, int tgid)
{
	struct user_regs_struct regs;

	if (t->watching || !t->early || tgid != t->early_pid ||
	    ptrace(PTRACE_GETREGS, tid, NULL, &regs) || regs.rip != t->early + 1)
		return false;
	if (ptrace(PTRACE_POKEDATA, tid, (void *)t->early, (void *)t->early_word))
		pr_warn("thread %d: cannot remove the start breakpoint: %s", tid, strerror(errno));
	regs.rip = t->early;
	if (ptrace(PTRACE_SETREGS, tid, NULL, &regs))
		pr_warn("thread %d: cannot rewind after the start breakpoint: %s", tid,
			strerror(errno));
	t->early = 0;
	if (t->rdv && tgid == t->rdv_pid)
		rdv_done(t, tgid, true);
	breakpoint_install(t, tid, tgid);
	if (t->hooks && t->hooks->loaded && t->hooks->loaded(t->hooks->ctx, tgid))
		pr_debug("process %d: the load hook failed", tgid);
	return true;
}

/* Places the one-shot early stop in the freshly exec'd PID (see tracer_hooks). */
static void early_place(struct tracer *t, int pid, const char *path, uint64_t vaddr,
			uint64_t load_vaddr)
{
	char *exe = realpath(path, NULL);
	uint64_t base = exe ? proc_maps__base(pid, exe) : 0;

	if (!base) {
		free(exe);
		return;
	}
	t->early = vaddr + base - (load_vaddr & ~0xfffULL);
	if (t->watching) {
		if (t->hooks->watch(t->hooks->ctx, pid, exe, t->hooks->early_offset)) {
			pr_debug("cannot watch the start instruction");
			t->early = 0;
		} else {
			t->early_pid = pid;
		}
		free(exe);
		return;
	}
	free(exe);
	errno = 0;
	t->early_word = ptrace(PTRACE_PEEKDATA, pid, (void *)t->early, NULL);
	if (errno || ptrace(PTRACE_POKEDATA, pid, (void *)t->early,
			    (void *)((t->early_word & ~0xffL) | 0xcc))) {
		pr_debug("cannot place the start breakpoint: %s", strerror(errno));
		t->early = 0;
		return;
	}
	t->early_pid = pid;
}

/* --- the loader's rendezvous (hooks->mapped) ---------------------------------------------- */

/* Where the stop is, checked against glibc 2.36's elf/rtld.c (dl_main): the loader sets
 * r_state = RT_ADD and calls _dl_debug_state before _dl_map_object_deps maps the DT_NEEDED
 * libraries (and LD_PRELOAD ones); it then relocates every object (_dl_relocate_object, in
 * l_initfini order: IRELATIVE relocations and references to STT_GNU_IFUNC symbols call their
 * libraries' ifunc resolvers here), sets up TLS, calls libc's __libc_early_init
 * (_dl_call_libc_early_init), and only then sets r_state = RT_CONSISTENT and calls
 * _dl_debug_state again. Constructors (DT_INIT, DT_INIT_ARRAY) run after dl_main has
 * returned (_dl_init, from _dl_start_user), before the program's entry point. So at the
 * RT_CONSISTENT stop every initial library is mapped and relocated and none of its
 * constructors has run, but ifunc resolvers and __libc_early_init have: a library with such
 * code (libs__load_roots) must be counted from the exec on, not from here. A dlopen later
 * calls _dl_debug_state again (RT_ADD, RT_CONSISTENT): the stop is one-shot. */

/* AT_BASE of process PID (where its dynamic loader is loaded), or 0. */
static uint64_t auxv_base(int pid)
{
	char path[64];
	uint64_t v[2], base = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	f = fopen(path, "re");
	while (f && fread(v, sizeof(v), 1, f) == 1 && v[0] != AT_NULL)
		if (v[0] == AT_BASE) {
			base = v[1];
			break;
		}
	if (f)
		fclose(f);
	return base;
}

/* Places the one-shot stop at the loader's rendezvous in the freshly exec'd PID. Returns 0,
 * or -1 when the program has no such loader or the stop cannot be placed. */
static int rdv_place(struct tracer *t, int pid)
{
	struct libs_rendezvous r;
	uint64_t base = auxv_base(pid);

	if (!base || proc_maps__file_at(pid, base, t->rdv_path, sizeof(t->rdv_path)) ||
	    libs__rendezvous(t->rdv_path, &r)) {
		pr_debug("process %d: no dynamic loader rendezvous found", pid);
		return -1;
	}
	/* The loader is a shared object linked at 0: AT_BASE is its load bias. */
	t->rdv = base + r.state_fn;
	t->rdv_state = base + r.r_debug + LIBS_R_STATE_OFFSET;
	t->rdv_lo = base;
	t->rdv_hi = base + r.span;
	t->rdv_off = r.state_fn_off;
	t->rdv_pid = pid;
	if (t->watching) {
		if (!t->hooks->watch(t->hooks->ctx, pid, t->rdv_path, t->rdv_off)) {
			t->rdv_watched = true;
			return 0;
		}
	} else {
		errno = 0;
		t->rdv_word = ptrace(PTRACE_PEEKDATA, pid, (void *)t->rdv, NULL);
		if (!errno && !ptrace(PTRACE_POKEDATA, pid, (void *)t->rdv,
				      (void *)((t->rdv_word & ~0xffL) | 0xcc)))
			return 0;
	}
	pr_debug("process %d: cannot stop at '%s' _dl_debug_state: %s", pid, t->rdv_path,
		 strerror(errno));
	t->rdv = 0;
	return -1;
}

/* The loader's r_state as thread TID sees it, or -1 when it cannot be read. */
static long rdv_r_state(const struct tracer *t, int tid)
{
	long w;

	errno = 0;
	w = ptrace(PTRACE_PEEKDATA, tid, (void *)t->rdv_state, NULL);
	return errno ? -1 : (long)(int32_t)w;
}

/* The rendezvous has come (or will not: LATE, at the program's entry): the watch is taken
 * back and the caller told. */
static void rdv_done(struct tracer *t, int tgid, bool late)
{
	const struct tracer_hooks *h = t->hooks;

	t->rdv = 0;
	if (t->rdv_watched && h->unwatch && !h->unwatch(h->ctx, tgid, t->rdv_path, t->rdv_off))
		t->rdv_watched = false;
	if (late)
		pr_warn("process %d: the dynamic loader never said its libraries were mapped: they are counted from the program's entry on (their constructors are not counted)",
			tgid);
	if (h->mapped && h->mapped(h->ctx, tgid))
		pr_debug("process %d: the mapped hook failed", tgid);
}

/* An EP_NOTIFY_SIGNAL stop of TID (watching): whether it is the watched rendezvous (then the
 * signal is not the program's); its RT_CONSISTENT call ends the wait. */
static bool rdv_watch_hit(struct tracer *t, int tid, int tgid)
{
	struct user_regs_struct regs;

	/* The thread stops after the watched instruction: _dl_debug_state is a bare `ret`, so
	 * it is back in the loader's code. */
	if (!t->rdv_watched || tgid != t->rdv_pid || ptrace(PTRACE_GETREGS, tid, NULL, &regs) ||
	    regs.rip < t->rdv_lo || regs.rip >= t->rdv_hi)
		return false;
	if (t->rdv && rdv_r_state(t, tid) == LIBS_RT_CONSISTENT)
		rdv_done(t, tgid, false);
	return true;
}

/* A SIGTRAP stop of TID (int3, not watching): whether it is the rendezvous's int3. Before
 * RT_CONSISTENT the loader's instruction is stepped over and the int3 set again. */
static bool rdv_hit(struct tracer *t, int tid, int tgid)
{
	struct user_regs_struct regs;
	int st;

	if (t->watching || !t->rdv || tgid != t->rdv_pid ||
	    ptrace(PTRACE_GETREGS, tid, NULL, &regs) || regs.rip != t->rdv + 1)
		return false;
	regs.rip = t->rdv;
	if (ptrace(PTRACE_POKEDATA, tid, (void *)t->rdv, (void *)t->rdv_word) ||
	    ptrace(PTRACE_SETREGS, tid, NULL, &regs))
		pr_warn("thread %d: cannot take back the loader breakpoint: %s", tid,
			strerror(errno));
	if (rdv_r_state(t, tid) == LIBS_RT_CONSISTENT) {
		rdv_done(t, tgid, false);
		return true;
	}
	/* The loader is single-threaded here: nothing else can run past the lifted int3. */
	if (ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL) || waitpid(tid, &st, __WALL) != tid ||
	    !WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP ||
	    ptrace(PTRACE_POKEDATA, tid, (void *)t->rdv, (void *)((t->rdv_word & ~0xffL) | 0xcc))) {
		pr_warn("thread %d: cannot step over the loader breakpoint", tid);
		t->rdv = 0;
	}
	return true;
}

/* --- signals ------------------------------------------------------------------------------ */

static void forward_signal(int sig)
{
	int saved_errno = errno;
	pid_t pid = fwd_pid;

	if (pid > 0)
		kill(pid, sig);
	else
		fwd_pending = sig;
	errno = saved_errno;
}

static void signals_install(struct saved_signals *saved, int main_pid)
{
	struct sigaction sa;

	fwd_pid = main_pid;
	fwd_pending = 0;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN;
	for (size_t i = 0; i < 2; i++)
		sigaction(ignored_signals[i], &sa, &saved->ign[i]);
	/* No SA_RESTART: waitpid returns EINTR so that pending signals are handled. */
	sa.sa_handler = forward_signal;
	for (size_t i = 0; i < 2; i++)
		sigaction(forwarded_signals[i], &sa, &saved->fwd[i]);
}

static void signals_restore(const struct saved_signals *saved)
{
	for (size_t i = 0; i < 2; i++) {
		sigaction(ignored_signals[i], &saved->ign[i], NULL);
		sigaction(forwarded_signals[i], &saved->fwd[i], NULL);
	}
	fwd_pid = 0;
}

/* Sends a signal the handler could not forward (the main process is gone) to every traced
 * process. */
static void forward_pending(struct tracer *t)
{
	int sig = fwd_pending;

	if (!sig)
		return;
	fwd_pending = 0;
	for (size_t i = 0; i < t->ntasks; i++)
		if (t->tasks[i].tid == t->tasks[i].tgid)
			kill(t->tasks[i].tid, sig);
}

/* --- start -------------------------------------------------------------------------------- */

/* The child: stops until its parent has seized it, then executes the program; reports a
 * failure through FD. */
static void __attribute__((noreturn)) child_exec(int fd, const char *path, char *const argv[])
{
	struct start_error se = {.step = START_EXEC};

	raise(SIGSTOP);
	execv(path, argv);
	se.err = errno;
	if (write(fd, &se, sizeof(se)) != (ssize_t)sizeof(se))
		_exit(126);
	_exit(127);
}

/* Waits for PID to end, ignoring stops; used once it has been sent SIGKILL. */
static void reap(int pid)
{
	int st, rc;

	for (;;) {
		rc = waitpid(pid, &st, __WALL);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0 || WIFEXITED(st) || WIFSIGNALED(st))
			break;
		/* Still traced: a killed tracee stops once more at its exit event. */
		if (WIFSTOPPED(st))
			ptrace(PTRACE_CONT, pid, NULL, NULL);
	}
}

static void kill_and_reap(int pid)
{
	kill(pid, SIGKILL);
	reap(pid);
}

/* Starts PATH stopped after its exec. Returns the pid, or a negative errno (reported). */
static int start_program(const char *path, char *const argv[], bool exitkill)
{
	struct start_error se;
	int fds[2], pid, st, err;
	ssize_t n;

	if (pipe2(fds, O_CLOEXEC)) {
		err = errno;
		pr_err("cannot run '%s': pipe: %s", path, strerror(err));
		return -err;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		err = errno;
		close(fds[0]);
		close(fds[1]);
		pr_err("cannot run '%s': fork: %s", path, strerror(err));
		return -err;
	}
	if (pid == 0) {
		close(fds[0]);
		child_exec(fds[1], path, argv);
	}
	close(fds[1]);
	/*
	 * Traced with PTRACE_SEIZE, not PTRACE_TRACEME: a task it creates then starts with a
	 * trap stop, not with a SIGSTOP queued to it. Were edgeprof killed before that task's
	 * first stop, the SIGSTOP would stop the whole program for good; a trap stop goes with
	 * the tracer. The child stops itself (SIGSTOP), is seized, and is sent SIGCONT (else
	 * its process would still be in a group stop, which it would enter again once the
	 * tracer is gone); the stops on its way to the exec (the seize's trap, SIGCONT's
	 * delivery) are passed over, SIGCONT suppressed.
	 */
	err = 0;
	while (waitpid(pid, &st, WUNTRACED) < 0)
		if (errno != EINTR) {
			err = errno;
			break;
		}
	if (!err && !WIFSTOPPED(st))
		err = ECHILD;
	if (!err && ptrace(PTRACE_SEIZE, pid, NULL,
			   (void *)(long)(PTRACE_O_TRACEEXIT | PTRACE_O_TRACECLONE |
					  PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
					  PTRACE_O_TRACEEXEC | (exitkill ? PTRACE_O_EXITKILL : 0))))
		err = errno;
	if (!err && kill(pid, SIGCONT))
		err = errno;
	for (bool gone = false; !err;) {
		if (waitpid(pid, &st, __WALL) < 0) {
			if (errno != EINTR)
				err = errno;
			continue;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st))
			gone = true; /* the exec failed: the pipe says why */
		else if (!WIFSTOPPED(st))
			continue;
		else if (WSTOPSIG(st) == SIGTRAP && (st >> 16) == PTRACE_EVENT_EXEC)
			break; /* after the exec (the pipe was closed by it) */
		else if (ptrace(PTRACE_CONT, pid, NULL, NULL))
			err = errno;
		if (gone) {
			do
				n = read(fds[0], &se, sizeof(se));
			while (n < 0 && errno == EINTR);
			close(fds[0]);
			if (n == (ssize_t)sizeof(se)) {
				pr_err("cannot execute '%s': %s", path, strerror(se.err));
				return -se.err;
			}
			pr_err("cannot run '%s': it ended before its exec (status 0x%x)", path, st);
			return -ECHILD;
		}
	}
	close(fds[0]);
	if (err) {
		kill_and_reap(pid);
		pr_err("cannot trace '%s': ptrace: %s", path, strerror(err));
		return -err;
	}
	return pid;
}

/* --- event loop --------------------------------------------------------------------------- */

/* Whether thread TID has left the ptrace stop the tracer is handling for its
 * PTRACE_EVENT_EXIT stop (or is no longer stopped): only a SIGKILL does that. */
static bool left_for_exit(int tid)
{
	siginfo_t si;

	if (ptrace(PTRACE_GETSIGINFO, tid, NULL, &si))
		return errno == ESRCH;
	return si.si_signo == SIGTRAP && si.si_code == (SIGTRAP | PTRACE_EVENT_EXIT << 8);
}

/* The frames thread TID resumes in at its first stop, entered without a call: recorded as
 * FRAME_ENTRY events, and remembered in its task (died_unseen). When a SIGKILL took it out
 * of that stop while they were unwound (which then failed), they are recorded at its exit
 * stop instead (entries_at_exit): no instruction of the program ran in between. */
static void first_entries(struct tracer *t, int tid)
{
	struct tracer_result *res = t->res;
	size_t before = res->nevents;
	unsigned failures = res->unwind_failures;
	struct task *task;

	task = task_find(t, tid);
	if (!task)
		return;
	unwind_task(t, tid, task->tgid, FRAME_ENTRY);
	task = task_find(t, tid);
	if (!task)
		return;
	if (res->unwind_failures != failures && left_for_exit(tid)) {
		pr_debug("thread %d: killed in its first stop: its frames are recorded at its exit",
			 tid);
		res->nevents = before;
		res->unwind_failures = failures;
		task->entries_at_exit = true;
	}
	task->only_first = true;
	task->entry_first = before;
	task->entry_count = res->nevents - before;
}

/* The first stop of a task created by a traced one: a new process resumes in the frames
 * it copied from its parent, entered without a call. */
static void first_stop(struct tracer *t, struct task *task)
{
	int ppid;

	task->seen = true;
	task->tgid = read_tgid(task->tid, &ppid);
	if (task->tgid == 0) {
		task->tgid = task->tid; /* gone already: /proc says nothing more */
		return;
	}
	if (task->tgid == task->tid) {
		/* Its memory is a copy of its parent's, breakpoint included (the parent's
		 * fork event may not have been seen yet). */
		struct proc *p = proc_get(t, task->tid, proc_find(t, ppid));

		if (!p)
			note_oom(t);
		/* Watches are uprobes bound to one process: the child gets its own, where its
		 * parent had them (a process that exec'd had none any more). */
		if (p && t->watching && p->nbps) {
			p->nbps = 0;
			watch_install(t, task->tid, t->hooks);
		}
		if (t->hooks && t->hooks->child_stopped)
			t->hooks->child_stopped(t->hooks->ctx, task->tid);
		t->res->nprocesses++;
		first_entries(t, task->tid);
	} else {
		t->res->nthreads++;
		/* A new thread starts inside the C library's clone, after its syscall: entered
		 * without a call, which matters when libraries are profiled. */
		if (t->nlib_ids)
			first_entries(t, task->tid);
	}
}

/*
 * A task that ends (waitpid says it exited or was killed) without its PTRACE_EVENT_EXIT stop
 * having been seen, while the last stop of it the tracer handled was its first one: its
 * frames are left without returning where they were entered. A SIGKILL wakes a tracee from
 * the ptrace stop the tracer is busy with (the first stop of a forked child takes
 * milliseconds: watches and uprobes are attached for it), and the tracee stops again at
 * PTRACE_EVENT_EXIT before the tracer resumes it: the PTRACE_CONT meant for the first stop
 * then resumes the exit stop, which is never reported (Python's os.spawnv(P_NOWAIT) followed
 * by os.kill(pid, SIGKILL), in test_os). No instruction of the program ran in between: its
 * frames are those recorded at the first stop, each left as an exit stop would have
 * recorded it.
 */
static void died_unseen(struct tracer *t, const struct task *task)
{
	struct tracer_result *res = t->res;

	if (!task->seen || !task->only_first ||
	    task->entry_first + task->entry_count > res->nevents)
		return;
	pr_debug("thread %d (process %d): ended in its first stop, its exit stop unseen", task->tid,
		 task->tgid);
	for (size_t i = 0; i < task->entry_count; i++) {
		struct frame_event ev = res->events[task->entry_first + i];

		ev.kind = FRAME_EXIT;
		if (add_event(t, &ev))
			break;
	}
}

/*
 * At the PTRACE_EVENT_EXIT stop of TASK: when it dies right at the end of a successful exec
 * whose PTRACE_EVENT_EXEC stop was never reported, records that exec as exec_done does (the
 * frames kept at its execve call are left, the process is not profiled any more). A SIGKILL
 * ends a tracee's ptrace stop, and a stop the tracer has not waited for yet is then never
 * reported: a program that kills a child as soon as its exec is done (the close-on-exec pipe
 * of Python's subprocess says so) races the tracer, which sees the exit stop only, of a
 * process whose memory is the new image's already (not one frame of the old one is left).
 * Told by the registers: the thread is still in the execve (or execveat) call, which
 * returned 0 (only a successful exec returns, with 0: an interrupted or failed one gives
 * -errno). The exec'ing thread is TASK, or (a thread that exec'd took the leader's id)
 * another thread of the process that called execve.
 */
static void exec_unseen(struct tracer *t, struct task *task)
{
	struct user_regs_struct regs;
	struct proc *p = proc_find(t, task->tgid);
	int tgid = task->tgid, tid = task->tid, old_tid = 0;

	if (!p || p->replaced || ptrace(PTRACE_GETREGS, tid, NULL, &regs) ||
	    (regs.orig_rax != SYS_execve && regs.orig_rax != SYS_execveat) || regs.rax != 0)
		return;
	if (task->exec_called) {
		old_tid = tid;
	} else {
		for (size_t i = 0; i < t->ntasks && !old_tid; i++)
			if (t->tasks[i].tgid == tgid && t->tasks[i].exec_called)
				old_tid = t->tasks[i].tid;
		if (!old_tid)
			old_tid = tid; /* exec_done says its frames were not followed */
	}
	pr_debug("process %d: killed at the end of its exec (thread %d), whose stop was not seen",
		 tgid, old_tid);
	task->tgid = tgid;
	exec_done(t, tgid, old_tid);
	if (old_tid != tid)
		task_remove(t, old_tid);
	t->res->nexecs++;
}

/* The PTRACE_EVENT_EXIT stop of TASK: its frames are left without returning. Frames that
 * were recorded at pthread_exit already and are still on the stack (the forced unwinding
 * of pthread_exit stops at the thread's start routine, or for the main thread in libc's
 * start code) are not recorded twice. */
static void exit_stop(struct tracer *t, struct task *task)
{
	struct tracer_result *res = t->res;
	size_t before;
	int tid = task->tid;

	exec_unseen(t, task);
	task = task_find(t, tid);
	if (!task || let_go_replaced(t, tid, task->tgid))
		return;
	before = res->nevents;
	if (t->hooks && t->hooks->before_unwind)
		t->hooks->before_unwind(t->hooks->ctx, task->tid, false);
	if (task->entries_at_exit) {
		task->entries_at_exit = false;
		unwind_task(t, task->tid, task->tgid, FRAME_ENTRY);
	}
	unwind_task(t, task->tid, task->tgid, FRAME_EXIT);
	if (!task->at_pthread_exit)
		return;
	for (size_t k = 0; k < task->bp_count && res->nevents > before; k++) {
		const struct frame_event *b = &res->events[task->bp_first + task->bp_count - 1 - k];

		if (b->vaddr != res->events[res->nevents - 1].vaddr)
			break;
		res->nevents--;
	}
}

/* Whether MSG, the message of a fork, vfork or clone event of TASK, is the new task: a SIGKILL
 * that ends the event's stop before the message is read lets the exit path write the exit
 * status over it (a parent killed as it forks). The new task is traced by this process
 * (auto-attached); a task that /proc no longer shows (gone already) is taken at its word. */
static bool spawned_by(const struct task *task, int msg)
{
	char path[64], line[256];
	int tracer = -1;
	FILE *f;

	if (msg <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/status", msg);
	f = fopen(path, "re");
	if (!f)
		return true;
	while (fgets(line, sizeof(line), f) && sscanf(line, "TracerPid: %d", &tracer) != 1)
		;
	fclose(f);
	if (tracer < 0 || tracer == getpid())
		return true;
	pr_debug("thread %d: its fork event's message (%d) is no task it made: killed since",
		 task->tid, msg);
	return false;
}

/* Handles a ptrace event stop of TASK; returns nothing: the task is resumed after. */
static void event_stop(struct tracer *t, struct task *task, int event)
{
	unsigned long msg = 0;
	int tid;

	/* Its frames are accounted for from this stop on (died_unseen). */
	if (event != PTRACE_EVENT_STOP)
		task->only_first = false;
	switch (event) {
	case PTRACE_EVENT_EXIT:
		exit_stop(t, task);
		break;
	case PTRACE_EVENT_CLONE:
		/* Threads may call pthread_exit: catch it from the first one on (the parent
		 * is stopped and the new thread has not run yet). */
		if (!t->attached && !t->watching)
			breakpoint_install(t, task->tid, task->tgid);
		/* fall through */
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		/* The new task is attached and will stop with SIGSTOP (perhaps it already
		 * has): it is handled at that stop, whichever comes first. */
		if (ptrace(PTRACE_GETEVENTMSG, task->tid, NULL, &msg) == 0 &&
		    spawned_by(task, (int)msg)) {
			if (t->hooks && t->hooks->spawned)
				t->hooks->spawned(t->hooks->ctx, task->tid, (int)msg,
						  event == PTRACE_EVENT_CLONE);
			if (!task_find(t, (int)msg) && !task_add(t, (int)msg))
				note_oom(t);
		}
		break;
	case PTRACE_EVENT_EXEC:
		/* A non-leader thread that execs takes the leader's tid: forget its old one. */
		tid = task->tid;
		task->tgid = tid;
		if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) != 0)
			msg = (unsigned long)tid;
		/* The message is the exec'ing thread's former id, unless a SIGKILL ended this
		 * stop before it was read: the exit path has then written the exit status over
		 * it (9, from a parent that kills its child as soon as the exec is done). Any
		 * value that is no thread of this process is that: the leader exec'd. */
		if ((int)msg != tid) {
			const struct task *old = task_find(t, (int)msg);

			if (!old || old->tgid != tid) {
				pr_debug("process %d: its exec's message (%lu) names no thread of it: killed since",
					 tid, msg);
				msg = (unsigned long)tid;
			}
		}
		exec_done(t, tid, (int)msg);
		if ((int)msg != tid)
			task_remove(t, (int)msg);
		t->res->nexecs++;
		let_go_replaced(t, tid, tid);
		break;
	default:
		break;
	}
}

/* Thread TID is about to get signal SIG (0: none) delivered: hooks->before_signal. */
static void before_signal(const struct tracer *t, int tid, long sig)
{
	if (sig && t->hooks && t->hooks->before_signal)
		t->hooks->before_signal(t->hooks->ctx, tid);
}

/*
 * A fault the kernel raised in a traced thread (SIGSEGV, SIGBUS, SIGILL, SIGFPE with a
 * kernel si_code, not one sent by kill): says where, before the program's handler or its
 * death, so that a crash under edgeprof can be told from the program's own (its pc in the
 * program's code, in a trampoline of the in-process counters, in the uprobe XOL page...):
 * the pc, the faulting address and the /proc/PID/maps line holding the pc.
 */
static void fault_report(int tid, int tgid, int sig, const siginfo_t *si)
{
	struct user_regs_struct regs;
	char path[64], line[512], where[600] = "no mapping";
	FILE *f;

	if ((sig != SIGSEGV && sig != SIGBUS && sig != SIGILL && sig != SIGFPE) ||
	    si->si_code <= 0 || ptrace(PTRACE_GETREGS, tid, NULL, &regs))
		return;
	snprintf(path, sizeof(path), "/proc/%d/maps", tgid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;

		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && regs.rip >= lo && regs.rip < hi) {
			line[strcspn(line, "\n")] = 0;
			snprintf(where, sizeof(where), "in %s", line);
			break;
		}
	}
	if (f)
		fclose(f);
	pr_warn("process %d thread %d: %s (code %d) at pc %#llx, address %p, rsp %#llx; pc %s",
		tgid, tid, strsignal(sig), si->si_code, (unsigned long long)regs.rip, si->si_addr,
		(unsigned long long)regs.rsp, where);
}

static void event_loop(struct tracer *t)
{
	struct tracer_result *res = t->res;

	for (;;) {
		struct task *task;
		int st, tid, sig, inject = 0, hit;
		bool first;

		forward_pending(t);
		tid = waitpid(-1, &st, __WALL);
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			if (errno != ECHILD)
				pr_warn("waitpid: %s", strerror(errno));
			break;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (tid == t->main_pid) {
				res->wait_status = st;
				fwd_pid = 0;
			}
			task = task_find(t, tid);
			if (task)
				died_unseen(t, task);
			task_remove(t, tid);
			proc_remove(t, tid); /* when TID led a process: it is gone */
			continue;
		}
		if (!WIFSTOPPED(st))
			continue;
		task = task_find(t, tid);
		if (!task) {
			task = task_add(t, tid);
			if (!task) {
				note_oom(t);
				ptrace(PTRACE_CONT, tid, NULL, NULL);
				continue;
			}
		}
		first = !task->seen;
		if (first)
			first_stop(t, task);
		else
			task->only_first = false;
		sig = WSTOPSIG(st);
		if (sig == SIGTRAP && (st >> 16)) {
			/* Events may move the task table: do not use TASK after this. */
			event_stop(t, task, st >> 16);
		} else if (first && sig == SIGSTOP) {
			/* The initial SIGSTOP of a task auto-attached without PTRACE_SEIZE (a
			 * seized one's is a PTRACE_EVENT_STOP, above): suppressed. */
		} else {
			size_t before = res->nevents;
			siginfo_t si;
			bool have_si;

			if (sig == SIGTRAP && (rdv_hit(t, tid, task->tgid) ||
					       early_hit(t, tid, task->tgid)))
				goto resume;
			if (sig == EP_NOTIFY_SIGNAL && t->watching) {
				if (rdv_watch_hit(t, tid, task->tgid))
					goto resume;
				if (early_watch_hit(t, tid, task->tgid) || ahead_hit(t, tid, task->tgid))
					goto resume;
				hit = watch_hit(t, tid, task->tgid);
				if (hit == 1 + BP_PTHREAD_EXIT) {
					task = task_find(t, tid);
					task->at_pthread_exit = true;
					task->bp_first = before;
					task->bp_count = res->nevents - before;
				}
				if (hit)
					goto resume;
			}
			if (sig == SIGTRAP && (hit = breakpoint_hit(t, tid, task->tgid))) {
				if (hit != 1 + BP_PTHREAD_EXIT)
					goto resume;
				task->at_pthread_exit = true;
				task->bp_first = before;
				task->bp_count = res->nevents - before;
				goto resume;
			}
			/* A group-stop (PTRACE_EVENT_STOP with the stopping signal) has no
			 * siginfo to read: resume it (job control is not honoured). */
			have_si = ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) == 0;
			if (have_si || errno != EINVAL) {
				struct task *tk = task_find(t, tid);

				inject = sig;
				if (have_si)
					fault_report(tid, task->tgid, sig, &si);
				if (tk)
					tk->last_sig_fault = have_si &&
							     (sig == SIGSEGV || sig == SIGBUS ||
							      sig == SIGFPE || sig == SIGILL ||
							      sig == SIGTRAP) &&
							     si.si_code > 0 && si.si_code != SI_KERNEL;
				longjmp_watch_on_signal(t, task_find(t, tid) ? task_find(t, tid)->tgid
									    : tid,
							sig);
			}
		}
	resume:
		before_signal(t, tid, inject);
		if (ptrace(PTRACE_CONT, tid, NULL, (void *)(long)inject) && errno != ESRCH)
			pr_debug("thread %d: PTRACE_CONT: %s", tid, strerror(errno));
		release_pending(t);
	}
	release_pending(t);
}

int tracer__run(const char *path, char *const argv[], const char *build_id,
		const struct tracer_hooks *hooks, struct tracer_result *res)
{
	struct tracer t = {.res = res};
	struct saved_signals saved;
	double start;
	int pid, rc;
	bool rdv;

	memset(res, 0, sizeof(*res));
	t.build_id = build_id && *build_id ? build_id : NULL;
	tracer_set_libs(&t, hooks);
	if (!t.build_id) {
		t.exe_path = realpath(path, NULL);
		if (!t.exe_path) {
			rc = -errno;
			pr_err("cannot run '%s': %s", path, strerror(errno));
			return rc;
		}
	}
	t.watching = hooks && hooks->watch && hooks->early_stop && hooks->early_offset;
	pid = start_program(path, argv, !t.watching);
	if (pid < 0) {
		free(t.exe_path);
		return pid;
	}
	t.main_pid = pid;
	if (!task_add(&t, pid)) {
		kill_and_reap(pid);
		free(t.exe_path);
		pr_err("cannot run '%s': %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	t.tasks[0].tgid = pid;
	t.tasks[0].seen = true;
	res->nprocesses = 1;
	if (hooks && hooks->early_stop)
		early_place(&t, pid, path, hooks->early_stop, hooks->load_vaddr);
	if (hooks && t.early)
		watch_ahead(&t, pid, hooks);
	rdv = hooks && hooks->mapped && !rdv_place(&t, pid);
	if (hooks && hooks->started) {
		rc = hooks->started(hooks->ctx, pid);
		if (rc) {
			pr_debug("'%s' (pid %d) killed: the start hook failed", path, pid);
			kill_and_reap(pid);
			free(t.tasks);
			free(t.procs);
			free(t.exe_path);
			return rc < 0 ? rc : -ECANCELED;
		}
	}
	if (hooks && hooks->mapped && !rdv && hooks->mapped(hooks->ctx, pid))
		pr_debug("process %d: the mapped hook failed", pid);
	signals_install(&saved, pid);
	start = now_seconds();
	t.start = start;
	if (ptrace(PTRACE_CONT, pid, NULL, NULL))
		pr_warn("cannot continue '%s': PTRACE_CONT: %s", path, strerror(errno));
	event_loop(&t);
	free(t.released);
	res->seconds = now_seconds() - start;
	signals_restore(&saved);
	for (size_t i = 0; i < t.nprocs; i++)
		if (t.procs[i].dwfl)
			dwfl_end(t.procs[i].dwfl);
	free(t.procs);
	tasks_free(&t);
	free(t.exe_path);
	return 0;
}

/* --- attaching to a running process ------------------------------------------------------- */

enum attach_phase { PHASE_ATTACHING, PHASE_RUNNING, PHASE_DETACHING };

/* The threads of process PID from /proc/PID/task not yet traced: seized (and asked to stop
 * when INTERRUPT). Returns how many were added, or a negative errno (reported when the
 * process itself cannot be seized). */
static int seize_new_threads(struct tracer *t, int pid)
{
	/* Forks are followed only to hand the child to hooks->forked and let it go. */
	const long options = PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXIT | PTRACE_O_TRACEEXEC |
			     (t->hooks && t->hooks->forked ? PTRACE_O_TRACEFORK : 0);
	char path[64];
	struct dirent *de;
	DIR *dir;
	int added = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		int tid = atoi(de->d_name);
		struct task *task;

		if (tid <= 0 || task_find(t, tid))
			continue;
		if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)options)) {
			int err = errno;

			if (err == ESRCH)
				continue; /* the thread ended meanwhile */
			closedir(dir);
			return -err;
		}
		task = task_add(t, tid);
		if (!task) {
			ptrace(PTRACE_DETACH, tid, NULL, NULL);
			closedir(dir);
			return -ENOMEM;
		}
		task->tgid = pid;
		task->seen = true;
		task->asked = true;
		if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) && errno != ESRCH)
			pr_debug("thread %d: PTRACE_INTERRUPT: %s", tid, strerror(errno));
		added++;
	}
	closedir(dir);
	return added;
}

static bool all_held(const struct tracer *t)
{
	for (size_t i = 0; i < t->ntasks; i++)
		if (!t->tasks[i].held)
			return false;
	return true;
}

/* Resumes a held task: a job-control stop stays a stop (LISTEN), any other stop continues. */
static void release_task(const struct tracer *t, struct task *task)
{
	int req = task->group_stop ? PTRACE_LISTEN : PTRACE_CONT;
	long sig = req == PTRACE_CONT ? task->deferred_sig : 0;

	before_signal(t, task->tid, sig);
	task->held = false;
	task->group_stop = false;
	if (sig)
		task->deferred_sig = 0;
	if (ptrace(req, task->tid, NULL, (void *)sig) && errno != ESRCH)
		pr_debug("thread %d: resume: %s", task->tid, strerror(errno));
}

/* The bp_functions in edgeprof's own process (find_functions), looked up once. */
static struct symbol_search own_functions;
static bool own_found;

void tracer__find_own_functions(void)
{
	if (!own_found)
		find_functions(getpid(), &own_functions);
	own_found = true;
}

/* Watches, in the main process PID stopped at its exec, the bp_functions that edgeprof's own
 * C library defines, at their offsets in that file: the program most often maps the same one.
 * Attached now, with the exec's other uprobes, the watches cost no wait of their own at the
 * loader's rendezvous (the first uprobe registered after a pause waits for an RCU grace
 * period); watch_install adopts those it would attach itself and removes the others. Until
 * the rendezvous the loader runs none of these functions. */
static void watch_ahead(struct tracer *t, int pid, const struct tracer_hooks *hooks)
{
	const struct symbol_search *ss = &own_functions;

	if (!t->watching || !hooks->watch || !hooks->unwatch)
		return;
	tracer__find_own_functions();
	for (int k = 0; k < NSEARCH; k++) {
		bool dup = false;

		if (!ss->in_libc[k] || !ss->offset[k] ||
		    (bp_functions[k].kind == BP_LONGJMP && hooks->lazy_longjmp))
			continue;
		for (int i = 0; i < t->nahead; i++)
			dup |= t->ahead[i].offset == ss->offset[k] &&
			       strcmp(t->ahead[i].path, ss->path[k]) == 0;
		if (dup || hooks->watch(hooks->ctx, pid, ss->path[k], ss->offset[k]))
			continue;
		snprintf(t->ahead[t->nahead].path, sizeof(t->ahead[0].path), "%s", ss->path[k]);
		t->ahead[t->nahead].offset = ss->offset[k];
		t->ahead[t->nahead++].adopted = false;
	}
}

/* Whether the watch of PATH at OFFSET in PID is one watch_ahead attached (then adopted). */
static bool adopt_ahead(struct tracer *t, int pid, const char *path, uint64_t offset)
{
	for (int i = 0; pid == t->main_pid && i < t->nahead; i++)
		if (!t->ahead[i].adopted && t->ahead[i].offset == offset &&
		    strcmp(t->ahead[i].path, path) == 0)
			return t->ahead[i].adopted = true;
	return false;
}

/* Whether TID (of TGID) stopped on a watch of watch_ahead not adopted yet: a library's
 * initialiser ran the function before the program's start. It is let go (the signal is
 * edgeprof's): as before the watches were made early, the frames it leaves are not followed. */
static bool ahead_hit(struct tracer *t, int tid, int tgid)
{
	struct user_regs_struct regs;

	if (tgid != t->main_pid || !t->nahead || ptrace(PTRACE_GETREGS, tid, NULL, &regs))
		return false;
	for (int i = 0; i < t->nahead; i++) {
		uint64_t base = proc_maps__base(tgid, t->ahead[i].path);
		uint64_t at = base + t->ahead[i].offset;

		if (base && regs.rip >= at && regs.rip < at + 16) {
			pr_debug("thread %d: in %s's function at %#llx before the program's start: the frames it leaves are not followed",
				 tid, t->ahead[i].path, (unsigned long long)regs.rip);
			return true;
		}
	}
	return false;
}

/* Removes the watches of watch_ahead that watch_install did not adopt in PID (the program
 * maps another C library, or a function is not watched). */
static void drop_ahead(struct tracer *t, int pid, const struct tracer_hooks *hooks)
{
	for (int i = 0; i < t->nahead; i++)
		if (!t->ahead[i].adopted &&
		    hooks->unwatch(hooks->ctx, pid, t->ahead[i].path, t->ahead[i].offset))
			pr_debug("process %d: cannot remove the watch at %#llx of '%s'", pid,
				 (unsigned long long)t->ahead[i].offset, t->ahead[i].path);
	t->nahead = 0;
}

/* Watches the bp_functions of process PID through HOOKS->watch (uprobes that signal the
 * thread) rather than with breakpoints: nothing is written into a process attached to. */
static void watch_install(struct tracer *t, int pid, const struct tracer_hooks *hooks)
{
	struct proc *p = proc_get(t, pid, NULL);
	struct symbol_search ss;

	if (!p || !hooks || !hooks->watch)
		return;
	p->tried = true;
	find_functions(pid, &ss);
	for (int k = 0; k < NSEARCH && p->nbps < MAX_BPS; k++) {
		bool dup = false;

		if (bp_functions[k].kind == BP_LONGJMP && hooks->lazy_longjmp && t->watching &&
		    !p->longjmp_needed)
			continue; /* until it catches a signal (longjmp_watch_on_signal) */
		for (int i = 0; i < p->nbps; i++)
			dup |= p->bps[i].addr == ss.addr[k];
		if (!ss.addr[k] || dup)
			continue;
		if (!ss.offset[k] || (!adopt_ahead(t, pid, ss.path[k], ss.offset[k]) &&
				      hooks->watch(hooks->ctx, pid, ss.path[k], ss.offset[k]))) {
			pr_warn("cannot watch %s in '%s': frames it leaves are not followed",
				bp_functions[k].name, ss.path[k]);
			continue;
		}
		p->bps[p->nbps++] = (struct bp){.addr = ss.addr[k],
						.kind = bp_functions[k].kind,
						.watched = true,
						.size = ss.size[k]};
		pr_debug("process %d: watching %s at %#llx", pid, bp_functions[k].name,
			 (unsigned long long)ss.addr[k]);
	}
	if (pid == t->main_pid)
		drop_ahead(t, pid, hooks);
}

/* Whether process TGID catches signal SIG (its SigCgt mask in /proc; true when unknown). */
static bool signal_caught(int tgid, int sig)
{
	char path[64], line[256];
	unsigned long long mask = ~0ULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tgid);
	f = fopen(path, "r");
	if (!f)
		return true;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigCgt: %llx", &mask) == 1)
			break;
	fclose(f);
	return sig < 1 || sig > 64 || ((mask >> (sig - 1)) & 1);
}

/* With hooks->lazy_longjmp: signal SIG is about to be delivered to a thread of TGID; when
 * the process catches it, the longjmp family is watched from now on (before the handler
 * runs), since the handler may longjmp out of frames stopped at any instruction. */
static void longjmp_watch_on_signal(struct tracer *t, int tgid, int sig)
{
	struct proc *p;

	if (!t->watching || !t->hooks || !t->hooks->lazy_longjmp || !sig)
		return;
	p = proc_find(t, tgid);
	if (!p || p->longjmp_needed || p->replaced || !signal_caught(tgid, sig))
		return;
	p->longjmp_needed = true;
	t->res->nlazy_watches++;
	pr_debug("process %d catches signal %d: watching the longjmp family from now on", tgid,
		 sig);
	if (p->tried)
		watch_install(t, tgid, t->hooks);
}

/* Records TID, a thread created by a traced one (the kernel attached it). NULL when out of
 * memory (noted). */
static struct task *attached_thread(struct tracer *t, int tid)
{
	struct task *task = task_add(t, tid);

	if (!task) {
		note_oom(t);
		return NULL;
	}
	task->tgid = t->main_pid;
	task->seen = false; /* its first stop is still to come */
	t->res->nthreads++;
	return task;
}

/* One waitpid status ST of TID while attached, in PHASE. */
static void attach_status(struct tracer *t, int tid, int st, enum attach_phase phase)
{
	struct task *task;
	int sig, event, inject = 0;
	siginfo_t si;

	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		if (tid == t->main_pid)
			t->res->wait_status = st;
		task_remove(t, tid);
		return;
	}
	if (!WIFSTOPPED(st))
		return;
	task = task_find(t, tid);
	if (!task) {
		int ppid;

		if (read_tgid(tid, &ppid) != t->main_pid) {
			/* A process forked in the window (followed only with hooks->forked): its
			 * first stop, before it runs. It is not counted: let it go. */
			if (t->hooks && t->hooks->forked)
				t->hooks->forked(t->hooks->ctx, tid);
			if (ptrace(PTRACE_DETACH, tid, NULL, NULL) && errno != ESRCH)
				pr_debug("process %d: PTRACE_DETACH: %s", tid, strerror(errno));
			return;
		}
		if (!(task = attached_thread(t, tid))) {
			ptrace(PTRACE_DETACH, tid, NULL, NULL);
			return;
		}
	}
	sig = WSTOPSIG(st);
	event = st >> 16;
	if (event == PTRACE_EVENT_STOP) {
		/* An interrupt, a new thread's first stop, or a job-control stop. A new thread
		 * starts inside the C library's clone: entered without a call (for --lib). */
		if (!task->seen) {
			task->seen = true;
			/* (while attaching, every thread is unwound once all are stopped) */
			if (t->nlib_ids && phase != PHASE_ATTACHING)
				unwind_task(t, tid, t->main_pid, FRAME_ENTRY);
		}
		task->group_stop = sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
				   sig == SIGTTOU;
		task->held = true;
		task->asked = false;
		if (phase == PHASE_RUNNING)
			release_task(t, task);
		return;
	}
	if (sig == SIGTRAP && event) {
		if (event == PTRACE_EVENT_CLONE) {
			unsigned long msg = 0;

			/* The new thread stops by itself: it is held or resumed at that stop. */
			if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) == 0) {
				if (t->hooks && t->hooks->spawned)
					t->hooks->spawned(t->hooks->ctx, tid, (int)msg, true);
				if (!task_find(t, (int)msg))
					attached_thread(t, (int)msg);
			}
		} else if (event == PTRACE_EVENT_FORK) {
			/* The child is handled at its first stop (see above). */
		} else {
			event_stop(t, task, event);
		}
	} else if (sig == EP_NOTIFY_SIGNAL) {
		size_t before = t->res->nevents;
		int hit = watch_hit(t, tid, task->tgid);

		if (hit == 1 + BP_PTHREAD_EXIT) {
			task = task_find(t, tid);
			task->at_pthread_exit = true;
			task->bp_first = before;
			task->bp_count = t->res->nevents - before;
		} else if (!hit) {
			inject = sig; /* the program's own */
		}
	} else if (ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) == 0) {
		inject = sig; /* a signal for the process: delivered */
	}
	before_signal(t, tid, inject);
	if (ptrace(PTRACE_CONT, tid, NULL, (void *)(long)inject) && errno != ESRCH)
		pr_debug("thread %d: PTRACE_CONT: %s", tid, strerror(errno));
}

/* At most this many instructions are stepped to take a held thread out of a longjmp. */
#define SETTLE_MAX_STEPS 100000
/* The innermost frames looked at for a watched function (glibc's longjmp calls helpers two
 * deep at most). */
#define SETTLE_FRAMES 8

/*
 * TASK (of TGID), held at the attach or at the detach, may be inside a watched function past
 * the uprobe at its entry: the watch has fired already (at the detach: the frames a longjmp
 * skips are recorded, as is the frame it lands in) or never will (at the attach: the watch
 * signals only once counting is on), so unwinding the thread now would enter or leave again
 * frames that the function is about to leave without returning. A longjmp is run on, one
 * instruction at a time, until it has landed (the stack pointer at or above its caller's,
 * the pc out of the C library); a signal met meanwhile is the watch's (recorded as at any
 * watch stop) or the program's (delivered when the thread is let go). A thread inside any
 * other watched function (a throw, pthread_exit, an exec) is left as it is, counted as an
 * unwinding failure. Returns 0 (nothing to do, or landed), -ESRCH when the thread ended
 * (removed from the table, with its status), -EAGAIN when it was not taken out (counted).
 */
static int settle_task(struct tracer *t, struct task *task, int tgid, enum attach_phase phase)
{
	struct proc *p = proc_find(t, tgid);
	struct collect c = {.max = SETTLE_FRAMES};
	const struct bp *in = NULL;
	uint64_t caller_rsp = 0, last_pc = 0;
	Dwfl_Module *mod = NULL;
	int tid = task->tid, rc = 0, steps;

	if (!p || !p->nbps || !collect_frames(t, tid, tgid, &c))
		goto out;
	for (size_t i = 0; i < c.n && !in; i++) {
		const struct frame_rec *f = &c.v[i];
		uint64_t pc = f->activation ? f->pc : f->pc - 1;

		for (int k = 0; k < p->nbps; k++) {
			const struct bp *b = &p->bps[k];

			if (b->watched && b->size && pc >= b->addr && pc < b->addr + b->size &&
			    !(f->activation && pc == b->addr)) {
				in = b;
				caller_rsp = i + 1 < c.n ? c.v[i + 1].rsp : f->rsp;
				mod = dwfl_addrmodule(c.u.dwfl, b->addr);
				break;
			}
		}
	}
	if (!in)
		goto out;
	if (in->kind != BP_LONGJMP || !mod) {
		pr_debug("thread %d: held inside a watched function (%#llx) past its entry: the frames it leaves are not followed",
			 tid, (unsigned long long)in->addr);
		t->res->unwind_failures++;
		rc = -EAGAIN;
		goto out;
	}
	for (steps = 0;; steps++) {
		struct user_regs_struct regs;
		int st, sig, event;

		if (ptrace(PTRACE_GETREGS, tid, NULL, &regs)) {
			rc = -EAGAIN;
			break;
		}
		if (regs.rsp >= caller_rsp && dwfl_addrmodule(c.u.dwfl, regs.rip) != mod)
			break; /* landed */
		if (steps == SETTLE_MAX_STEPS) {
			rc = -EAGAIN;
			break;
		}
		last_pc = regs.rip;
		if (ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL) ||
		    waitpid(tid, &st, __WALL) != tid) {
			rc = -EAGAIN;
			break;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			attach_status(t, tid, st, phase); /* forgets it */
			rc = -ESRCH;
			goto out;
		}
		sig = WSTOPSIG(st);
		event = st >> 16;
		if (event || sig == SIGTRAP)
			continue; /* the step, an interrupt, a job-control stop or an event */
		if (sig == EP_NOTIFY_SIGNAL && watch_hit(t, tid, tgid))
			continue; /* the watch at the longjmp's entry, recorded now */
		task->deferred_sig = sig; /* the program's own: delivered at the release */
		if ((sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE) &&
		    ptrace(PTRACE_GETREGS, tid, NULL, &regs) == 0 && regs.rip == last_pc) {
			rc = -EAGAIN; /* a fault: it happens again when the thread is let go */
			break;
		}
	}
	if (rc) {
		pr_debug("thread %d: cannot run it out of a longjmp (%d steps): the frames it leaves are not followed",
			 tid, steps);
		t->res->unwind_failures++;
	} else {
		pr_debug("thread %d: held inside a longjmp: landed after %d steps", tid, steps);
	}
out:
	free(c.v);
	return rc;
}

/* Handles every status available now (WAIT: blocks for up to TIMEOUT seconds first, woken by
 * SIGCHLD or a stop request in SET). Returns false when no traced thread is left. */
static bool attach_poll(struct tracer *t, enum attach_phase phase, const sigset_t *set,
			double timeout, volatile int *stop_sig)
{
	struct timespec ts;
	siginfo_t si;
	int st, tid, sig, handled = 0;

	for (;;) {
		tid = waitpid(-1, &st, __WALL | WNOHANG);
		if (tid > 0) {
			attach_status(t, tid, st, phase);
			handled++;
			continue;
		}
		if (tid < 0 && errno == EINTR)
			continue;
		if (tid < 0 || t->ntasks == 0)
			return false;
		break;
	}
	if (handled || timeout <= 0)
		return true;
	ts.tv_sec = (time_t)timeout;
	ts.tv_nsec = (long)((timeout - (double)ts.tv_sec) * 1e9);
	sig = sigtimedwait(set, &si, &ts);
	if (sig > 0 && sig != SIGCHLD && !*stop_sig)
		*stop_sig = sig;
	return true;
}

/* The state letter and the kernel flags of the task whose stat file is PATH (/proc/.../stat);
 * both 0 when the file says nothing. Returns 0, or -errno when it cannot be opened. */
static int read_stat(const char *path, char *state, unsigned long *flags)
{
	char buf[512], *p;
	FILE *f = fopen(path, "re");

	*state = 0;
	*flags = 0;
	if (!f)
		return -errno;
	/* After "pid (comm)": state, ppid, pgrp, session, tty, tpgid, flags. */
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) &&
	    sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", state, flags) != 2)
		*state = 0;
	fclose(f);
	return 0;
}

/* How long hold_all waits for every thread to stop. */
#define HOLD_TIMEOUT 10.0
/* After this long, it looks at the threads that have not reported their stop. */
#define HOLD_RECONCILE 0.5

/* The state letter of thread TID of process TGID in /proc ('t' in a ptrace stop, 'Z' a
 * zombie), or 0 when it is gone. */
static char thread_state(int tgid, int tid)
{
	char path[96], state = 0;
	unsigned long flags;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", tgid, tid);
	read_stat(path, &state, &flags);
	return state;
}

/* Threads that have not reported the stop hold_all waits for: one already in a ptrace stop
 * whose report was missed is held as it is; one that has ended is forgotten. */
static void reconcile_held(struct tracer *t)
{
	for (size_t i = 0; i < t->ntasks; i++) {
		struct task *task = &t->tasks[i];
		char st;

		if (task->held)
			continue;
		st = thread_state(t->main_pid, task->tid);
		if (st == 't') {
			pr_debug("thread %d: in a ptrace stop not reported: held", task->tid);
			task->held = true;
			task->asked = false;
		} else if (st == 0 || st == 'Z' || st == 'X') {
			pr_debug("thread %d: ended without a report: forgotten", task->tid);
			task_remove(t, task->tid);
			i--;
		}
	}
}

/* Stops every traced thread (those created meanwhile included) and waits until all are
 * held: 1; 0 when the process ended meanwhile; -1 when some did not stop in HOLD_TIMEOUT
 * seconds (reported). */
static int hold_all(struct tracer *t, enum attach_phase phase, const sigset_t *set,
		    volatile int *stop_sig)
{
	double deadline = now_seconds() + HOLD_TIMEOUT;

	for (size_t i = 0; i < t->ntasks; i++) {
		struct task *task = &t->tasks[i];

		if (task->held || task->asked)
			continue;
		task->asked = true;
		if (ptrace(PTRACE_INTERRUPT, task->tid, NULL, NULL) && errno != ESRCH)
			pr_debug("thread %d: PTRACE_INTERRUPT: %s", task->tid, strerror(errno));
	}
	while (!all_held(t)) {
		if (!attach_poll(t, phase, set, 0.05, stop_sig))
			return 0;
		if (now_seconds() > deadline - HOLD_TIMEOUT + HOLD_RECONCILE) {
			reconcile_held(t);
			if (t->ntasks == 0)
				return 0;
			if (all_held(t))
				break;
		}
		if (now_seconds() > deadline) {
			for (size_t i = 0; i < t->ntasks; i++)
				if (!t->tasks[i].held)
					pr_warn("thread %d did not stop (interrupted: %s)",
						t->tasks[i].tid, t->tasks[i].asked ? "yes" : "no");
			pr_err("process %d: some threads did not stop within %.0f s", t->main_pid,
			       HOLD_TIMEOUT);
			return -1;
		}
	}
	return t->ntasks > 0;
}

int tracer__check_target(int pid)
{
	char path[64], state = 0;
	unsigned long flags = 0;
	int err;

	if (pid == getpid())
		return pr_err("process %d is edgeprof itself", pid), -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	err = read_stat(path, &state, &flags);
	if (err) {
		if (err == -ENOENT)
			pr_err("no process %d", pid);
		else
			pr_err("process %d: %s", pid, strerror(-err));
		return -ESRCH;
	}
	if (state == 'Z' || state == 'X')
		return pr_err("process %d is a zombie: it has ended", pid), -ESRCH;
	if (flags & 0x00200000) /* PF_KTHREAD */
		return pr_err("process %d is a kernel thread: nothing to profile", pid), -EINVAL;
	return 0;
}

int tracer__attach(int pid, const char *build_id, const struct tracer_hooks *hooks,
		   double seconds, struct tracer_result *res)
{
	struct tracer t = {.res = res, .main_pid = pid, .attached = true};
	volatile int stop_sig = 0;
	sigset_t set, old;
	double t0, start, deadline;
	int rc, tgid, ppid;

	memset(res, 0, sizeof(*res));
	t.build_id = build_id && *build_id ? build_id : NULL;
	tracer_set_libs(&t, hooks);
	rc = tracer__check_target(pid);
	if (rc)
		return rc;
	tgid = read_tgid(pid, &ppid);
	if (tgid && tgid != pid)
		return pr_err("%d is a thread of process %d: give the process", pid, tgid), -EINVAL;
	if (!t.build_id) {
		char exe[64];

		snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
		t.exe_path = realpath(exe, NULL);
	}
	/* Stop requests and SIGCHLD are taken by sigtimedwait in the loop, never lost. */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, &old);

	watch_install(&t, pid, hooks);
	/* The process's modules are read now, not while its threads are held (the unwinding
	 * makes the Dwfl afresh if a module appeared since). */
	proc_dwfl(&t, pid, pid, false);
	/* Attach: seize every thread, again until no new one appears, and hold them all. */
	t0 = now_seconds();
	for (int round = 0;; round++) {
		rc = seize_new_threads(&t, pid);
		if (rc < 0) {
			if (t.ntasks == 0) {
				if (rc == -EPERM)
					pr_err("cannot attach to process %d: %s (needs root, or CAP_SYS_PTRACE)",
					       pid, strerror(-rc));
				else
					pr_err("cannot attach to process %d: %s", pid,
					       rc == -ENOENT ? "no such process" : strerror(-rc));
				goto fail;
			}
			pr_warn("cannot attach to every thread of process %d: %s", pid, strerror(-rc));
		}
		if (rc <= 0 || round > 100)
			break;
	}
	res->nprocesses = 1;
	rc = hold_all(&t, PHASE_ATTACHING, &set, &stop_sig);
	/* Every thread is stopped: none can create another now. */
	if (rc == 1 && seize_new_threads(&t, pid) > 0)
		rc = hold_all(&t, PHASE_ATTACHING, &set, &stop_sig);
	if (rc != 1) {
		if (rc == 0)
			pr_err("process %d ended while edgeprof attached to it", pid);
		rc = rc == 0 ? -ESRCH : -ETIMEDOUT;
		goto fail_release;
	}
	res->nattached = (unsigned)t.ntasks;
	pr_debug("attach: %zu threads stopped after %.1f ms", t.ntasks, (now_seconds() - t0) * 1e3);
	/* A thread inside a longjmp is run on until it lands (the watch is not on yet). */
	for (size_t i = 0; i < t.ntasks; i++)
		if (settle_task(&t, &t.tasks[i], pid, PHASE_ATTACHING) == -ESRCH)
			i--;
	if (t.ntasks == 0) {
		pr_err("process %d ended while edgeprof attached to it", pid);
		rc = -ESRCH;
		goto fail_release;
	}
	for (size_t i = 0; i < t.ntasks; i++)
		unwind_task(&t, t.tasks[i].tid, pid, FRAME_ENTRY);
	pr_debug("attach: stacks unwound after %.1f ms", (now_seconds() - t0) * 1e3);
	if (hooks && hooks->started && (rc = hooks->started(hooks->ctx, pid)) != 0) {
		rc = rc < 0 ? rc : -ECANCELED;
		goto fail_release;
	}
	for (size_t i = 0; i < t.ntasks; i++)
		release_task(&t, &t.tasks[i]);
	start = now_seconds();
	t.start = start;
	res->held_attach = start - t0;
	deadline = seconds > 0 ? start + seconds : 0;
	/* Status, shown unless -q: the window is open. */
	log__printf(LOG_WARN, "attached to process %d, %zu threads (stopped %.1f ms): counting until %s", pid,
		t.ntasks, res->held_attach * 1e3,
		seconds > 0 ? "the duration ends, Ctrl-C or its end" : "Ctrl-C or its end");

	/* The window. */
	for (;;) {
		double left = 0.5;

		if (stop_sig)
			break;
		if (deadline) {
			left = deadline - now_seconds();
			if (left <= 0)
				break;
			if (left > 0.5)
				left = 0.5;
		}
		if (!attach_poll(&t, PHASE_RUNNING, &set, left, &stop_sig))
			break;
	}
	res->stop_signal = stop_sig;
	res->seconds = now_seconds() - start;

	/* Detach: hold every thread again, unwind, stop counting, let go. */
	if (t.ntasks) {
		t0 = now_seconds();
		/* Threads that did not stop are let go without their frames: unwinding failed. */
		if (hold_all(&t, PHASE_DETACHING, &set, &stop_sig) != 0) {
			for (size_t i = 0; i < t.ntasks; i++) {
				if (!t.tasks[i].held) {
					res->unwind_failures++;
					continue;
				}
				/* One inside a longjmp whose frames are recorded: run on. */
				if (settle_task(&t, &t.tasks[i], pid, PHASE_DETACHING) == -ESRCH) {
					i--;
					continue;
				}
				if (hooks && hooks->before_unwind)
					hooks->before_unwind(hooks->ctx, t.tasks[i].tid, true);
				unwind_task_at(&t, t.tasks[i].tid, pid, FRAME_EXIT, true);
			}
			if (hooks && hooks->stopping)
				hooks->stopping(hooks->ctx, pid);
			for (size_t i = 0; i < t.ntasks; i++)
				if (ptrace(PTRACE_DETACH, t.tasks[i].tid, NULL,
					   (void *)(long)t.tasks[i].deferred_sig) &&
				    errno != ESRCH)
					pr_debug("thread %d: PTRACE_DETACH: %s", t.tasks[i].tid,
						 strerror(errno));
			res->detached = 1;
			res->held_detach = now_seconds() - t0;
		}
	}
	rc = 0;
	goto out;

fail_release:
	for (size_t i = 0; i < t.ntasks; i++)
		ptrace(PTRACE_DETACH, t.tasks[i].tid, NULL, NULL);
fail:
	tracer_result__release(res);
out:
	/* Stop requests that came in are consumed; the old mask is restored. */
	{
		struct timespec zero = {0, 0};

		while (sigtimedwait(&set, NULL, &zero) > 0)
			;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	for (size_t i = 0; i < t.nprocs; i++)
		if (t.procs[i].dwfl)
			dwfl_end(t.procs[i].dwfl);
	free(t.procs);
	tasks_free(&t);
	free(t.exe_path);
	return rc;
}
