/*
 * step_trace: a complete per-thread trace of the instructions a program runs in its main
 * executable, obtained by single-stepping every thread under ptrace. It is the input of the
 * Ball-Larus path oracle (tests/oracle/path_oracle.c), which replays it into exact path, block
 * and edge counts.
 *
 *   step_trace -o TRACE [--] PROG ARGS...
 *
 * Independence: nothing of edgeprof is used (no cfg/, estimators/ or user/ code, not even its
 * ELF reader): the program is run under PTRACE_SINGLESTEP, which stops before every
 * instruction of every thread, and every stop whose pc lies in an executable mapping of the
 * main executable (the file /proc/PID/exe names) is written down. No decoding, no CFG, no
 * probe: the only knowledge of x86 here is how to recognise a rep-prefixed string instruction.
 *
 * The trace (native byte order) is a header followed by 24-byte records:
 *
 *   header   "EPSTEP1\n", uint32 version (1), uint32 path length, uint32 build id length
 *            (hex digits, 0: none), uint32 0, uint64 load bias; then the path and the build
 *            id, without NULs, padded with zeros to a multiple of 8 bytes
 *   record   uint32 tid, uint32 kind, uint64 vaddr, uint64 sp
 *
 * Record kinds:
 *   STEP (1)          the thread is about to execute the instruction at vaddr (pc - bias); sp
 *                     is rsp there. A rep-prefixed string instruction, at which the thread
 *                     stops once per iteration, is written once per execution.
 *   LEAVE (2)         the thread's first stop outside the main executable's code after a stop
 *                     inside it (a return, a call or a jump out of it): vaddr is the absolute
 *                     pc, sp is rsp there. The replay needs the stack height at such points:
 *                     a function that returns into the C library and is called again from
 *                     there shows no other record in between.
 *   THREAD_EXIT (3)   the thread exits (PTRACE_EVENT_EXIT, or its exit status when no event
 *                     came).
 *   PROCESS_EXIT (4)  last record: the process exited; vaddr is its status as a shell reports
 *                     it (the exit code, or 128 + the signal that killed it).
 *   EXEC (5)          last record when the program execs another image: tracing stops there,
 *                     every thread is detached and the new image runs untraced.
 *
 * Signals the program receives are delivered (the signal number passed to PTRACE_SINGLESTEP),
 * so handlers run and are traced; only ptrace's own stops are swallowed (the single-step traps,
 * the event stops, the initial SIGSTOP of a new thread, group-stops). When a caught signal is
 * delivered before the instruction at which the thread stopped has run, that instruction's
 * record is withdrawn: it runs (and is written) after the handler returns. A SIGTRAP counts as
 * a single-step trap when its si_code says so (TRAP_TRACE; TRAP_BRKPT after a system call;
 * SIGTRAP, from ptrace_notify(), when the step enters a signal handler); any other SIGTRAP
 * (int3, raise) is delivered.
 *
 * Forked and vforked children (PTRACE_O_TRACEFORK, PTRACE_O_TRACEVFORK) are detached at their
 * first stop and run untraced: the trace covers the process started here, every thread of it,
 * until it exits or execs (a vforked child runs code of the executable untraced, on the
 * parent's stack). Limitations: a program that sends itself SIGTRAP while a step trap is
 * pending may lose one of the two (SIGTRAP does not queue); SIGSTOP does not stop the program
 * (its group-stop is resumed by the next step); an exec from a thread other than the main one
 * is followed only as far as the EXEC record; a thread killed without a PTRACE_EVENT_EXIT stop
 * loses the record of the instruction it stood at (taken as not run). Single-stepping costs
 * some 20 microseconds per instruction on the test VM.
 *
 * The trace is written to a temporary file next to TRACE and renamed when complete. Bad usage
 * or a program that cannot be started: one line on stderr, exit 2. Otherwise step_trace exits
 * with the program's status (128 + N when signal N killed it).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "step_trace.h"

#ifndef TRAP_TRACE
#define TRAP_TRACE 2
#endif
#ifndef TRAP_BRKPT
#define TRAP_BRKPT 1
#endif

#define MAX_MAPS 64

struct thread {
	pid_t tid;
	bool pending;	      /* a STEP record not written yet: the instruction may not have run */
	bool was_in;	      /* its last stop was in the main executable's code */
	bool exit_written;    /* its THREAD_EXIT record is written */
	struct trace_rec rec; /* the pending record */
	uint64_t rep_pc;      /* the last pc tested for a rep string instruction */
	bool rep_known, rep_is;
};

struct tracer {
	pid_t root;
	FILE *out;
	char exe[PATH_MAX];
	uint64_t bias;
	struct {
		uint64_t lo, hi;
	} maps[MAX_MAPS]; /* executable mappings of the main executable */
	int nmaps;
	struct thread *threads;
	size_t nthreads, cap;
	struct thread *last; /* cache of the last looked-up thread */
	bool write_error;
};

static char tmp_path[PATH_MAX]; /* removed on failure and by the signal handler */

static void usage(void)
{
	fprintf(stderr, "usage: step_trace -o TRACE [--] PROG ARGS...\n");
}

static void on_fatal_signal(int sig)
{
	if (tmp_path[0])
		unlink(tmp_path);
	_exit(128 + sig);
}

/* ---- the main executable: load bias, build id, mappings ---------------------------------- */

/* Reads the lowest PT_LOAD p_vaddr of ELF file PATH into *LOW_VADDR and its build id (hex,
 * "" when none) into BUILD_ID (129 bytes). Returns 0, or -1 with a message printed. */
static int read_elf(const char *path, uint64_t *low_vaddr, char *build_id)
{
	Elf64_Ehdr eh;
	Elf64_Phdr *ph = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -1;
	bool any = false;
	unsigned i;

	build_id[0] = '\0';
	if (fd < 0) {
		fprintf(stderr, "step_trace: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_machine != EM_X86_64 || eh.e_phentsize != sizeof(Elf64_Phdr) || !eh.e_phnum) {
		fprintf(stderr, "step_trace: %s: not an x86-64 ELF64 executable\n", path);
		goto out;
	}
	ph = calloc(eh.e_phnum, sizeof(*ph));
	if (!ph || pread(fd, ph, eh.e_phnum * sizeof(*ph), (off_t)eh.e_phoff) !=
		       (ssize_t)(eh.e_phnum * sizeof(*ph))) {
		fprintf(stderr, "step_trace: %s: cannot read the program headers\n", path);
		goto out;
	}
	for (i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && (!any || ph[i].p_vaddr < *low_vaddr)) {
			*low_vaddr = ph[i].p_vaddr;
			any = true;
		}
		if (ph[i].p_type == PT_NOTE && ph[i].p_filesz && ph[i].p_filesz < (1u << 20)) {
			uint8_t *n = malloc(ph[i].p_filesz);
			uint64_t off = 0;

			if (!n || pread(fd, n, ph[i].p_filesz, (off_t)ph[i].p_offset) !=
				      (ssize_t)ph[i].p_filesz) {
				free(n);
				continue;
			}
			while (off + sizeof(Elf64_Nhdr) <= ph[i].p_filesz) {
				Elf64_Nhdr *nh = (Elf64_Nhdr *)(n + off);
				uint64_t name = off + sizeof(*nh);
				uint64_t desc = name + ((nh->n_namesz + 3) & ~3u);
				uint64_t next = desc + ((nh->n_descsz + 3) & ~3u);
				uint32_t k;

				if (next > ph[i].p_filesz)
					break;
				if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
				    !memcmp(n + name, "GNU", 4) && nh->n_descsz <= 64)
					for (k = 0; k < nh->n_descsz; k++)
						sprintf(build_id + 2 * k, "%02x", n[desc + k]);
				off = next;
			}
			free(n);
		}
	}
	if (!any) {
		fprintf(stderr, "step_trace: %s: no PT_LOAD segment\n", path);
		goto out;
	}
	ret = 0;
out:
	free(ph);
	close(fd);
	return ret;
}

/* Finds the main executable of process PID after its exec: its path, its executable mappings
 * and its load bias (the start of its lowest mapping, which must have file offset 0, less the
 * lowest PT_LOAD p_vaddr rounded down to a page). Writes the trace header. Returns 0, or -1
 * with a message printed. */
static int setup_image(struct tracer *tr, pid_t pid)
{
	char path[64], line[PATH_MAX + 256], build_id[129];
	uint64_t lowest = UINT64_MAX, low_off = 1, low_vaddr = 0;
	struct trace_header h;
	long page = sysconf(_SC_PAGESIZE);
	ssize_t n;
	FILE *f;
	size_t len, pad;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, tr->exe, sizeof(tr->exe) - 1);
	if (n <= 0) {
		fprintf(stderr, "step_trace: %s: %s\n", path, strerror(errno));
		return -1;
	}
	tr->exe[n] = '\0';
	if (read_elf(tr->exe, &low_vaddr, build_id))
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f) {
		fprintf(stderr, "step_trace: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perms[8];
		int pos = 0, nf;
		char *name;

		nf = sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &lo, &hi, perms, &off, &pos);
		if (nf < 4 || !pos)
			continue;
		name = line + pos;
		name[strcspn(name, "\n")] = '\0';
		if (strcmp(name, tr->exe))
			continue;
		if (lo < lowest) {
			lowest = lo;
			low_off = off;
		}
		if (perms[2] == 'x') {
			if (tr->nmaps == MAX_MAPS) {
				fprintf(stderr, "step_trace: %s: too many executable mappings\n",
					tr->exe);
				fclose(f);
				return -1;
			}
			tr->maps[tr->nmaps].lo = lo;
			tr->maps[tr->nmaps].hi = hi;
			tr->nmaps++;
		}
	}
	fclose(f);
	if (lowest == UINT64_MAX || low_off != 0 || !tr->nmaps) {
		fprintf(stderr,
			"step_trace: %s: no executable mapping of %s, or its lowest mapping "
			"is not at file offset 0\n",
			path, tr->exe);
		return -1;
	}
	tr->bias = lowest - (low_vaddr & ~(uint64_t)(page - 1));

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, TRACE_MAGIC, sizeof(h.magic));
	h.version = TRACE_VERSION;
	len = strlen(tr->exe);
	h.path_len = (uint32_t)len;
	h.build_id_len = (uint32_t)strlen(build_id);
	h.bias = tr->bias;
	pad = (8 - (len + h.build_id_len) % 8) % 8;
	if (fwrite(&h, sizeof(h), 1, tr->out) != 1 || fwrite(tr->exe, 1, len, tr->out) != len ||
	    fwrite(build_id, 1, h.build_id_len, tr->out) != h.build_id_len ||
	    fwrite("\0\0\0\0\0\0\0", 1, pad, tr->out) != pad)
		tr->write_error = true;
	return 0;
}

static bool in_image(const struct tracer *tr, uint64_t pc)
{
	int i;

	for (i = 0; i < tr->nmaps; i++)
		if (pc >= tr->maps[i].lo && pc < tr->maps[i].hi)
			return true;
	return false;
}

/* Whether the instruction at PC of thread TID is a rep-prefixed string instruction: 0xf3 or
 * 0xf2, optionally among 0x66/0x67 and followed by a REX prefix, before movs, cmps, stos,
 * lods or scas (a4-a7, aa-af). */
static bool is_rep_string(pid_t tid, uint64_t pc)
{
	uint8_t b[16];
	bool rep = false;
	int i, k;

	for (k = 0; k < 2; k++) {
		long w;

		errno = 0;
		w = ptrace(PTRACE_PEEKTEXT, tid, (void *)(pc + 8 * k), NULL);
		if (w == -1 && errno)
			return false;
		memcpy(b + 8 * k, &w, 8);
	}
	for (i = 0; i < 15; i++) {
		if (b[i] == 0xf3 || b[i] == 0xf2)
			rep = true;
		else if (b[i] != 0x66 && b[i] != 0x67 && (b[i] & 0xf0) != 0x40)
			break;
	}
	return rep && i < 15 && ((b[i] >= 0xa4 && b[i] <= 0xa7) || (b[i] >= 0xaa && b[i] <= 0xaf));
}

/* ---- threads and records ----------------------------------------------------------------- */

static struct thread *find_thread(struct tracer *tr, pid_t tid)
{
	size_t i;

	if (tr->last && tr->last->tid == tid)
		return tr->last;
	for (i = 0; i < tr->nthreads; i++)
		if (tr->threads[i].tid == tid)
			return tr->last = &tr->threads[i];
	return NULL;
}

static struct thread *add_thread(struct tracer *tr, pid_t tid)
{
	struct thread *t;

	if (tr->nthreads == tr->cap) {
		size_t cap = tr->cap ? 2 * tr->cap : 16;
		struct thread *n = realloc(tr->threads, cap * sizeof(*n));

		if (!n) {
			fprintf(stderr, "step_trace: out of memory\n");
			exit(2);
		}
		tr->threads = n;
		tr->cap = cap;
	}
	t = &tr->threads[tr->nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	tr->last = NULL;
	return t;
}

static void remove_thread(struct tracer *tr, struct thread *t)
{
	*t = tr->threads[--tr->nthreads];
	tr->last = NULL;
}

static void emit(struct tracer *tr, pid_t tid, uint32_t kind, uint64_t vaddr, uint64_t sp)
{
	struct trace_rec r = {.tid = (uint32_t)tid, .kind = kind, .vaddr = vaddr, .sp = sp};

	if (fwrite(&r, sizeof(r), 1, tr->out) != 1)
		tr->write_error = true;
}

static void flush_pending(struct tracer *tr, struct thread *t)
{
	if (!t->pending)
		return;
	if (fwrite(&t->rec, sizeof(t->rec), 1, tr->out) != 1)
		tr->write_error = true;
	t->pending = false;
}

/* Thread T exits: its pending record is written when RAN (its instruction ran before the
 * exit: a system call that exited, or the instruction a fatal signal stopped, written at the
 * delivery), dropped otherwise (the thread was killed before running it); then THREAD_EXIT. */
static void thread_exit(struct tracer *tr, struct thread *t, bool ran)
{
	if (ran)
		flush_pending(tr, t);
	t->pending = false;
	if (!t->exit_written)
		emit(tr, t->tid, REC_THREAD_EXIT, 0, 0);
	t->exit_written = true;
}

/* Thread T stopped about to execute the instruction at PC with stack pointer SP: its previous
 * instruction has run, so its pending record is written; the new one is kept pending (a
 * signal may still come before it runs), or a LEAVE record is written when the thread has
 * just left the main executable. */
static void on_step(struct tracer *tr, struct thread *t, uint64_t pc, uint64_t sp)
{
	bool in = in_image(tr, pc);

	if (in && t->pending && t->rec.vaddr == pc - tr->bias) {
		/* The same pc again: one more iteration of a rep string instruction (kept as
		 * one execution), or an instruction that jumped to itself (a new one). */
		if (!t->rep_known || t->rep_pc != pc) {
			t->rep_pc = pc;
			t->rep_is = is_rep_string(t->tid, pc);
			t->rep_known = true;
		}
		if (t->rep_is)
			return;
	}
	flush_pending(tr, t);
	if (in) {
		t->rec.tid = (uint32_t)t->tid;
		t->rec.kind = REC_STEP;
		t->rec.vaddr = pc - tr->bias;
		t->rec.sp = sp;
		t->pending = true;
	} else if (t->was_in) {
		emit(tr, t->tid, REC_LEAVE, pc, sp);
	}
	t->was_in = in;
}

/* Whether signal SIG has a handler in thread TID's process (SigCgt of /proc/TID/status). */
static bool sig_caught(pid_t tid, int sig)
{
	char path[64], line[256];
	unsigned long long mask = 0;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigCgt: %llx", &mask) == 1) {
			found = true;
			break;
		}
	fclose(f);
	return found && sig >= 1 && sig <= 64 && (mask >> (sig - 1) & 1);
}

/* The thread group of TID (Tgid of /proc/TID/status), or -1. */
static pid_t tgid_of(pid_t tid)
{
	char path[64], line[256];
	int tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

static int get_regs(pid_t tid, struct user_regs_struct *regs)
{
	return (int)ptrace(PTRACE_GETREGS, tid, NULL, regs);
}

/* ---- the tracing loop -------------------------------------------------------------------- */

/* Starts PROG under ptrace, stopped at its exec. Returns its pid, or -1 with a message. */
static pid_t start_child(char **argv)
{
	int fds[2], err = 0, st = 0;
	pid_t pid, w;
	ssize_t n;

	if (pipe2(fds, O_CLOEXEC)) {
		fprintf(stderr, "step_trace: pipe: %s\n", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "step_trace: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0 && raise(SIGSTOP) == 0)
			execvp(argv[0], argv);
		err = errno;
		if (write(fds[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(fds[1]);
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
		n = read(fds[0], &err, sizeof(err));
		fprintf(stderr, "step_trace: cannot start %s: %s\n", argv[0],
			n == sizeof(err) ? strerror(err) : "it did not stop");
		close(fds[0]);
		return -1;
	}
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL,
		   (void *)(long)(PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL |
				  PTRACE_O_TRACEEXEC | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK)) ||
	    ptrace(PTRACE_CONT, pid, NULL, NULL)) {
		fprintf(stderr, "step_trace: ptrace: %s\n", strerror(errno));
		kill(pid, SIGKILL);
		close(fds[0]);
		return -1;
	}
	w = waitpid(pid, &st, 0);
	if (w != pid || !WIFSTOPPED(st) || st >> 8 != (SIGTRAP | (PTRACE_EVENT_EXEC << 8))) {
		n = read(fds[0], &err, sizeof(err));
		fprintf(stderr, "step_trace: cannot execute %s: %s\n", argv[0],
			n == sizeof(err) ? strerror(err) : "no exec stop");
		if (w != pid || WIFSTOPPED(st))
			kill(pid, SIGKILL);
		close(fds[0]);
		return -1;
	}
	close(fds[0]);
	return pid;
}

/* Single-steps every thread of the process until it exits or execs; returns its status as a
 * shell reports it, or -1 on a tracing error (message printed). */
static int trace_loop(struct tracer *tr)
{
	struct user_regs_struct regs;
	bool detaching = false;
	int status = -1;

	for (;;) {
		struct thread *t;
		int st, sig, event;
		pid_t pid = waitpid(-1, &st, __WALL);
		long resume_sig = 0;

		if (pid < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "step_trace: waitpid: %s\n", strerror(errno));
			return -1;
		}
		t = find_thread(tr, pid);
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (t && !detaching) {
				thread_exit(tr, t, false);
				remove_thread(tr, t);
			}
			if (pid != tr->root)
				continue;
			status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			if (!detaching) {
				size_t i;

				for (i = 0; i < tr->nthreads; i++)
					thread_exit(tr, &tr->threads[i], false);
				emit(tr, pid, REC_PROCESS_EXIT, (uint64_t)status, 0);
			}
			return status;
		}
		if (!WIFSTOPPED(st))
			continue;
		sig = WSTOPSIG(st);
		event = st >> 16;
		if (detaching) {
			ptrace(PTRACE_DETACH, pid, NULL,
			       (void *)(long)(event || sig == SIGTRAP || sig == SIGSTOP ? 0 : sig));
			continue;
		}
		if (!t) {
			/* A new tracee's first stop: a thread of the process (its initial
			 * SIGSTOP is swallowed) or a forked child (detached, untraced). */
			if (tgid_of(pid) != tr->root) {
				ptrace(PTRACE_DETACH, pid, NULL,
				       (void *)(long)(sig == SIGSTOP || event ? 0 : sig));
				continue;
			}
			t = add_thread(tr, pid);
			if (sig != SIGSTOP && !event)
				resume_sig = sig;
			if (get_regs(pid, &regs) == 0)
				on_step(tr, t, regs.rip, regs.rsp);
			goto resume;
		}
		if (event) {
			if (event == PTRACE_EVENT_EXIT) {
				/* Stopped where it stood: an instruction it did not run. */
				thread_exit(tr, t,
					    get_regs(pid, &regs) ||
						regs.rip - tr->bias != t->rec.vaddr);
			} else if (event == PTRACE_EVENT_EXEC) {
				size_t i;

				/* The exec ran; the other threads were killed by it. */
				flush_pending(tr, t);
				for (i = 0; i < tr->nthreads; i++)
					tr->threads[i].pending = false;
				emit(tr, pid, REC_EXEC, 0, 0);
				detaching = true;
				ptrace(PTRACE_DETACH, pid, NULL, NULL);
				continue;
			}
			/* PTRACE_EVENT_CLONE, _FORK, _VFORK: the new tracee is handled at its
			 * first stop (above). */
			goto resume;
		}
		if (get_regs(pid, &regs)) {
			if (errno == ESRCH) /* killed meanwhile: its exit status follows */
				continue;
			fprintf(stderr, "step_trace: PTRACE_GETREGS %d: %s\n", (int)pid,
				strerror(errno));
			return -1;
		}
		if (sig == SIGTRAP) {
			siginfo_t si;

			/* TRAP_TRACE: a step; TRAP_BRKPT: a step over a system call; SIGTRAP:
			 * ptrace_notify() when a step enters a signal handler (at its first
			 * instruction, not run yet). */
			if (ptrace(PTRACE_GETSIGINFO, pid, NULL, &si) == 0 &&
			    (si.si_code == TRAP_TRACE || si.si_code == TRAP_BRKPT ||
			     si.si_code == SIGTRAP)) {
				on_step(tr, t, regs.rip, regs.rsp);
				goto resume;
			}
		}
		{
			siginfo_t si;

			if (ptrace(PTRACE_GETSIGINFO, pid, NULL, &si) && errno == EINVAL)
				goto resume; /* a group-stop: nothing to deliver */
		}
		/* A signal for the program: delivered. A handler runs before the instruction
		 * at which the thread stands, which then runs (and is recorded) again. */
		resume_sig = sig;
		if (t->pending && t->rec.vaddr == regs.rip - tr->bias && sig_caught(pid, sig))
			t->pending = false;
		else
			flush_pending(tr, t); /* reached: it runs next, or the signal kills there */
	resume:
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, (void *)resume_sig) && errno != ESRCH) {
			fprintf(stderr, "step_trace: PTRACE_SINGLESTEP %d: %s\n", (int)pid,
				strerror(errno));
			return -1;
		}
	}
}

int main(int argc, char **argv)
{
	struct user_regs_struct regs;
	struct tracer tr;
	const char *trace = NULL;
	struct sigaction sa;
	int i = 1, status;
	struct thread *t;
	static char buf[1 << 20];

	if (i + 1 < argc && !strcmp(argv[i], "-o")) {
		trace = argv[i + 1];
		i += 2;
	}
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	if (!trace || !*trace || i >= argc) {
		usage();
		return 2;
	}
	if (snprintf(tmp_path, sizeof(tmp_path), "%s.tmp.%d", trace, (int)getpid()) >=
	    (int)sizeof(tmp_path)) {
		fprintf(stderr, "step_trace: %s: path too long\n", trace);
		return 2;
	}
	memset(&tr, 0, sizeof(tr));
	tr.out = fopen(tmp_path, "we");
	if (!tr.out) {
		fprintf(stderr, "step_trace: %s: %s\n", tmp_path, strerror(errno));
		tmp_path[0] = '\0';
		return 2;
	}
	setvbuf(tr.out, buf, _IOFBF, sizeof(buf));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fatal_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	tr.root = start_child(argv + i);
	if (tr.root < 0)
		goto fail;
	if (setup_image(&tr, tr.root) || get_regs(tr.root, &regs)) {
		kill(tr.root, SIGKILL);
		goto fail;
	}
	t = add_thread(&tr, tr.root);
	on_step(&tr, t, regs.rip, regs.rsp);
	if (ptrace(PTRACE_SINGLESTEP, tr.root, NULL, NULL)) {
		fprintf(stderr, "step_trace: PTRACE_SINGLESTEP: %s\n", strerror(errno));
		kill(tr.root, SIGKILL);
		goto fail;
	}
	status = trace_loop(&tr);
	if (status < 0) {
		kill(tr.root, SIGKILL);
		goto fail;
	}
	if (fflush(tr.out) || tr.write_error || ferror(tr.out)) {
		fprintf(stderr, "step_trace: %s: write error\n", tmp_path);
		goto fail;
	}
	if (fclose(tr.out)) {
		tr.out = NULL;
		fprintf(stderr, "step_trace: %s: write error\n", tmp_path);
		goto fail;
	}
	tr.out = NULL;
	if (rename(tmp_path, trace)) {
		fprintf(stderr, "step_trace: rename %s: %s\n", trace, strerror(errno));
		goto fail;
	}
	free(tr.threads);
	return status;
fail:
	if (tr.out)
		fclose(tr.out);
	unlink(tmp_path);
	free(tr.threads);
	return 2;
}
