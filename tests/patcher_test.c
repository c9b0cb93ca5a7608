/*
 * Test driver for the in-process counting backend's process side (user/count/patcher.c,
 * user/proc/remote.c), run by tests/patcher.sh on tests/patcher/target (NFUNCS functions 32
 * bytes apart from funcs_start, each starting with the 6-byte window `push %rbp; mov
 * %rsp,%rbp; mov %edi,%eax`, then counting its own calls in calls[k]). Per function the driver
 * hand-assembles a blob: the site gets `jmp tramp_k; int3`, the trampoline `lock incq
 * counter_k(%rip)` (a 0x3e / 0xf0 prefix), the three displaced instructions and `jmp f_k + 6`;
 * for odd k (but the last) the site gets `jmp rel8` to a springboard in the function's
 * alignment padding (at f_k + 20, after its ret) holding `jmp tramp_k` (window 2 steps a
 * thread onto a springboard: removed, it must be back at the site).
 * Modes (each exits 0 when every check held, prints "FAIL: ..." lines and exits 1 otherwise):
 *   run FUNCS CALLS PROG ARGS...     starts PROG under ptrace, patches at the exec stop (run-ev:
 *                                    at the PTRACE_EVENT_EXEC stop inside execve), turns
 *                                    the increments atomic at the first clone, restores the
 *                                    sites in a forked child, and at the main thread's exit
 *                                    compares every counter with the program's calls[k]
 *   attach FUNCS CALLS WINDOWS PROG ARGS...   starts PROG, and WINDOWS times seizes all its
 *                                    threads, installs, lets it run, stops it, steps one
 *                                    thread into a trampoline, removes, and checks counters
 *                                    against calls[] (threads in flight accounted for), the
 *                                    text against the file, pcs and maps (window 4: a frame pc
 *                                    in a trampoline is passed: its region must stay mapped); a
 *                                    second object's regions (libc's, nothing patched) too
 *   kill FUNCS CALLS PROG ARGS...    a helper process patches the running PROG and is
 *                                    SIGKILLed while PROG runs patched
 * (NFUNCS comes first: `MODE NFUNCS FUNCS CALLS ...`.) FUNCS and CALLS are the ELF vaddrs of
 * funcs_start and calls. PROG's first argument is its number of threads. PROG's stdout is left
 * alone (the script compares it with a native run's); FAIL lines and timings go to stderr.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "user/count/patcher.h"

#define WIN 6	  /* window bytes */
#define TRAMP 19  /* trampoline bytes: lock incq (8), the window (6), jmp (5) */
#define STRIDE 32 /* functions and trampolines are this far apart */
#define SB_OFF 20 /* odd functions' springboards: in the padding after their 20 bytes */
#define MAX_TASKS 80

static const uint8_t window[WIN] = {0x55, 0x48, 0x89, 0xe5, 0x89, 0xf8};

static int fails;

#define FAIL(...)                                      \
	do {                                           \
		fprintf(stderr, "FAIL: " __VA_ARGS__); \
		fprintf(stderr, "\n");                 \
		fails++;                               \
	} while (0)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct target {
	int pid;
	char exe[PATH_MAX];
	uint64_t funcs, calls; /* run-time */
	uint64_t text_lo, text_hi, text_off;
	int nfuncs;
};

static int read_mem(int pid, uint64_t addr, void *buf, size_t len)
{
	char path[64];
	int fd;
	ssize_t r;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	r = pread(fd, buf, len, (off_t)addr);
	close(fd);
	return r == (ssize_t)len ? 0 : -EIO;
}

/* Fills T from /proc/PID (exe path, load bias, text mapping) for the ELF vaddrs given. */
static int target_locate(struct target *t, uint64_t funcs_vaddr, uint64_t calls_vaddr)
{
	char path[64], line[4096];
	uint64_t base = 0;
	Elf64_Ehdr eh;
	bool have_base = false;
	FILE *f;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", t->pid);
	n = readlink(path, t->exe, sizeof(t->exe) - 1);
	if (n <= 0)
		return -1;
	t->exe[n] = 0;
	fd = open(t->exe, O_RDONLY);
	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	snprintf(path, sizeof(path), "/proc/%d/maps", t->pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perm[8], name[4096];

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &lo, &hi, perm, &off, name) !=
			5 ||
		    strcmp(name, t->exe) != 0)
			continue;
		if (off == 0 && !have_base) {
			base = lo; /* where the first segment (vaddr 0 in a PIE) is */
			have_base = true;
		}
		if (perm[2] == 'x') {
			t->text_lo = lo;
			t->text_hi = hi;
			t->text_off = off;
		}
	}
	if (f)
		fclose(f);
	if (eh.e_type == ET_EXEC)
		base = 0; /* vaddrs are addresses */
	t->funcs = base + funcs_vaddr;
	t->calls = base + calls_vaddr;
	return have_base && t->text_hi ? 0 : -1;
}

/* The blobs for every function but the EXCLUDEd ones, in the region R. UNCLEAN0: the
 * trampoline's first instruction is marked not clean (a thread there is single-stepped). */
struct blobs {
	struct patch_blob *b;
	uint8_t *code;
	struct patch_pc *pcs;
	uint32_t lock0;
	size_t n;
};

static void blobs_free(struct blobs *bl)
{
	free(bl->b);
	free(bl->code);
	free(bl->pcs);
	memset(bl, 0, sizeof(*bl));
}

static int blobs_make(struct blobs *bl, const struct target *t, const struct patcher_region *r,
		      const bool *exclude, bool unclean0)
{
	memset(bl, 0, sizeof(*bl));
	bl->b = calloc(t->nfuncs, sizeof(*bl->b));
	bl->code = calloc(t->nfuncs, TRAMP);
	bl->pcs = calloc(t->nfuncs * 5, sizeof(*bl->pcs));
	if (!bl->b || !bl->code || !bl->pcs)
		return -ENOMEM;
	for (int k = 0; k < t->nfuncs; k++) {
		struct patch_blob *b = &bl->b[bl->n];
		uint8_t *c = bl->code + TRAMP * bl->n;
		struct patch_pc *pc = bl->pcs + 5 * bl->n;
		uint64_t site = t->funcs + STRIDE * k, tramp = r->tramp_base + STRIDE * k;
		int32_t d;

		if (exclude && exclude[k])
			continue;
		if (read_mem(t->pid, site, b->orig, WIN) || memcmp(b->orig, window, WIN)) {
			FAIL("f_%d at %#" PRIx64 " does not start with the expected window", k,
			     site);
			return -EILSEQ;
		}
		b->site = site;
		b->len = WIN;
		b->tramp = tramp;
		if (k % 2 && k + 1 < t->nfuncs) {
			static const uint8_t nop5[5] = {0x66, 0x0f, 0x1f, 0x44, 0x00};
			static const uint8_t nop5b[5] = {0x0f, 0x1f, 0x44, 0x00, 0x00};
			static const uint8_t nop5c[5] = {0x66, 0x66, 0x2e, 0x0f, 0x1f};

			b->sb = site + SB_OFF;
			if (read_mem(t->pid, b->sb, b->sb_orig, 5) ||
			    (memcmp(b->sb_orig, nop5, 5) && memcmp(b->sb_orig, nop5b, 5) &&
			     memcmp(b->sb_orig, nop5c, 5) && b->sb_orig[0] != 0x90 &&
			     b->sb_orig[0] != 0x66)) {
				FAIL("f_%d: no padding at %#" PRIx64, k, b->sb);
				return -EILSEQ;
			}
			memset(b->code, 0xcc, WIN);
			b->code[0] = 0xeb;
			b->code[1] = SB_OFF - 2;
			b->sb_code[0] = 0xe9;
			d = (int32_t)(tramp - (b->sb + 5));
			memcpy(b->sb_code + 1, &d, 4);
		} else {
			b->code[0] = 0xe9;
			d = (int32_t)(tramp - (site + 5));
			memcpy(b->code + 1, &d, 4);
			b->code[5] = 0xcc;
		}
		c[0] = 0x3e; /* lock incq counter_k(%rip), lock or not */
		c[1] = 0x48;
		c[2] = 0xff;
		c[3] = 0x05;
		d = (int32_t)(r->counters_base + 8 * k - (tramp + 8));
		memcpy(c + 4, &d, 4);
		memcpy(c + 8, window, WIN);
		c[14] = 0xe9;
		d = (int32_t)(site + WIN - (tramp + TRAMP));
		memcpy(c + 15, &d, 4);
		b->tramp_code = c;
		b->tramp_len = TRAMP;
		pc[0] = (struct patch_pc){0, site, (uint32_t)k, !unclean0};
		pc[1] = (struct patch_pc){8, site, PATCH_NO_COUNTER, 1};
		pc[2] = (struct patch_pc){9, site + 1, PATCH_NO_COUNTER, 1};
		pc[3] = (struct patch_pc){12, site + 4, PATCH_NO_COUNTER, 1};
		pc[4] = (struct patch_pc){14, site + 6, PATCH_NO_COUNTER, 1};
		b->pcs = pc;
		b->npcs = 5;
		b->lock_offsets = &bl->lock0;
		b->nlock = 1;
		bl->n++;
	}
	return 0;
}

/* The threads of PID. */
static int list_tasks(int pid, int *tids, int max)
{
	char path[64];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	while (d && (de = readdir(d)))
		if (atoi(de->d_name) > 0 && n < max)
			tids[n++] = atoi(de->d_name);
	if (d)
		closedir(d);
	return n;
}

static uint64_t get_pc(int tid)
{
	struct user_regs_struct regs;

	if (ptrace(PTRACE_GETREGS, tid, NULL, &regs) < 0)
		return 0;
	return regs.rip;
}

/* Whether PC is in some region of P (trampolines or counters). */
static bool in_regions(const struct patcher *p, uint64_t pc)
{
	for (size_t i = 0; i < patcher__nregions(p); i++) {
		const struct patcher_region *r = patcher__region(p, i);

		if (pc >= r->tramp_base && pc < r->counters_base + 8ull * r->ncounters)
			return true;
	}
	return false;
}

/* Checks the executable mapping of T equals its file's bytes. */
static void check_text(const struct target *t)
{
	size_t len = t->text_hi - t->text_lo;
	uint8_t *mem = malloc(len), *file = calloc(1, len);
	int fd = open(t->exe, O_RDONLY);

	if (!mem || !file || fd < 0 || pread(fd, file, len, (off_t)t->text_off) <= 0 ||
	    read_mem(t->pid, t->text_lo, mem, len))
		FAIL("cannot read the text of %d or its file", t->pid);
	else if (memcmp(mem, file, len) != 0)
		FAIL("process %d: its text differs from the file's after the removal", t->pid);
	if (fd >= 0)
		close(fd);
	free(mem);
	free(file);
}

/* Whether /proc/PID/maps has a mapping overlapping [LO, HI). */
static bool mapped(int pid, uint64_t lo, uint64_t hi)
{
	char path[64], line[4096];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long a, b;

		if (sscanf(line, "%llx-%llx", &a, &b) == 2 && a < hi && b > lo)
			found = true;
	}
	if (f)
		fclose(f);
	return found;
}

/* The first executable mapping of PID whose path contains NAME, in [*LO, *HI). */
static bool exec_mapping(int pid, const char *name, uint64_t *lo, uint64_t *hi)
{
	char path[64], line[4096];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	while (f && !found && fgets(line, sizeof(line), f)) {
		unsigned long long a, b;
		char perm[8];

		if (sscanf(line, "%llx-%llx %7s", &a, &b, perm) == 3 && perm[2] == 'x' &&
		    strstr(line, name)) {
			*lo = a;
			*hi = b;
			found = true;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* Whether every byte of R is within rel32 reach of every byte of [LO, HI). */
static bool near(const struct patcher_region *r, uint64_t lo, uint64_t hi)
{
	uint64_t a = r->tramp_base, b = r->counters_base + 8ull * r->ncounters;
	uint64_t l = a < lo ? a : lo, h = b > hi ? b : hi;

	return h - l < (1ull << 31);
}

static int wait_stopped(int tid)
{
	int status;

	if (waitpid(tid, &status, __WALL) < 0 || !WIFSTOPPED(status))
		return -1;
	return status;
}

/* --- run mode ------------------------------------------------------------------------------ */

static int mode_run(uint64_t funcs, uint64_t calls, int nfuncs, char **argv, bool at_event)
{
	struct target t = {.nfuncs = nfuncs};
	struct patcher *p = NULL;
	struct patcher_region r;
	struct blobs bl;
	uint64_t *cnt = calloc(nfuncs, sizeof(*cnt)), *own = calloc(nfuncs, sizeof(*own));
	int status, pid, exit_status = -1, children = 0;
	bool atomic = false, checked = false;
	double t0;

	pid = fork();
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		if (at_event)
			raise(SIGSTOP);
		execv(argv[0], argv);
		_exit(127);
	}
	t.pid = pid;
	if (wait_stopped(pid) < 0)
		return 1;
	ptrace(PTRACE_SETOPTIONS, pid, NULL,
	       (void *)(long)(PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEEXIT |
			      PTRACE_O_EXITKILL | (at_event ? PTRACE_O_TRACEEXEC : 0)));
	if (at_event) {
		/* Patch at the PTRACE_EVENT_EXEC stop, inside execve: its return value is
		 * written to rax on the way out, after the remote system calls. */
		if (ptrace(PTRACE_CONT, pid, NULL, NULL) < 0 || (status = wait_stopped(pid)) < 0 ||
		    status >> 16 != PTRACE_EVENT_EXEC) {
			FAIL("no PTRACE_EVENT_EXEC stop");
			kill(pid, SIGKILL);
			return 1;
		}
	}
	if (target_locate(&t, funcs, calls)) {
		FAIL("cannot locate the text");
		kill(pid, SIGKILL);
		return 1;
	}
	t0 = now();
	if (patcher__open(&p, pid, pid) < 0 ||
	    patcher__add_region(p, t.text_lo, t.text_hi, nfuncs, STRIDE * nfuncs, &r) < 0) {
		FAIL("cannot map the regions");
		kill(pid, SIGKILL);
		return 1;
	}
	fprintf(stderr, "time map regions: %.6f s (at %#" PRIx64 ", code at %#" PRIx64 ")\n",
		now() - t0, r.tramp_base, t.text_lo);
	if (blobs_make(&bl, &t, &r, NULL, false) < 0) {
		kill(pid, SIGKILL);
		return 1;
	}
	if (r.tramp_base + r.tramp_size != r.counters_base ||
	    !mapped(pid, r.tramp_base, r.tramp_base + 1) ||
	    !mapped(pid, r.counters_base, r.counters_base + 1))
		FAIL("the regions are not where patcher__add_region says");
	t0 = now();
	if (patcher__install(p, bl.b, bl.n) < 0)
		FAIL("install failed");
	fprintf(stderr, "time install %zu sites: %.6f s\n", bl.n, now() - t0);
	/* A malformed blob and a second install of the same sites are refused, all or
	 * nothing (nothing changes: the counts below stay exact). */
	{
		struct patch_blob bad = bl.b[0];

		bad.code[1] ^= 1;
		if (patcher__install(p, &bad, 1) != -EINVAL)
			FAIL("a blob whose jmp misses its trampoline was accepted");
		if (patcher__install(p, bl.b, bl.n) != -EINVAL)
			FAIL("an overlapping second install was accepted");
	}
	ptrace(PTRACE_CONT, pid, NULL, NULL);
	for (;;) {
		int tid = waitpid(-1, &status, __WALL), sig = 0, ev;

		if (tid < 0)
			break;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (tid == pid)
				exit_status = status;
			continue;
		}
		ev = status >> 16;
		if (ev == PTRACE_EVENT_CLONE && !atomic) {
			patcher__set_atomic(p); /* before the new thread runs */
			atomic = true;
		} else if (ev == PTRACE_EVENT_FORK) {
			unsigned long child;

			ptrace(PTRACE_GETEVENTMSG, tid, NULL, &child);
			/* The child's first stop: restore its sites, let it go. */
			if (wait_stopped((int)child) < 0 ||
			    patcher__unpatch_child(p, (int)child, (int)child) < 0)
				FAIL("cannot restore the sites in the child %lu", child);
			else if (mapped((int)child, r.tramp_base, r.counters_base + 8))
				FAIL("the regions are still mapped in the child");
			ptrace(PTRACE_DETACH, (int)child, NULL, NULL);
			children++;
		} else if (ev == PTRACE_EVENT_EXIT && tid == pid && !checked) {
			/* Every other thread has been joined: calls[] is final. */
			checked = true;
			patcher__read(p, cnt, nfuncs);
			if (read_mem(pid, t.calls, own, 8 * nfuncs))
				FAIL("cannot read calls[]");
			for (int k = 0; k < nfuncs; k++)
				if (cnt[k] != own[k])
					FAIL("f_%d: counter %" PRIu64
					     ", the program's own count %" PRIu64,
					     k, cnt[k], own[k]);
			fprintf(stderr,
				"counter[0] %" PRIu64 " calls[0] %" PRIu64 " atomic %d forks %d\n",
				cnt[0], own[0], atomic, children);
		} else if (!ev && WSTOPSIG(status) != SIGTRAP && WSTOPSIG(status) != SIGSTOP) {
			sig = WSTOPSIG(status);
			if (sig == SIGSEGV || sig == SIGILL || sig == SIGBUS) {
				siginfo_t si;

				ptrace(PTRACE_GETSIGINFO, tid, NULL, &si);
				FAIL("thread %d: signal %d at pc %#" PRIx64 " (address %p)", tid,
				     sig, get_pc(tid), si.si_addr);
			}
		}
		ptrace(PTRACE_CONT, tid, NULL, (void *)(long)sig);
	}
	if (!checked)
		FAIL("the main thread's exit was not seen");
	if (!WIFEXITED(exit_status) || WEXITSTATUS(exit_status) != 0)
		FAIL("the program did not exit with 0 (status %#x)", exit_status);
	patcher__close(p);
	blobs_free(&bl);
	free(cnt);
	free(own);
	return fails ? 1 : 0;
}

/* --- attach mode --------------------------------------------------------------------------- */

/* Seizes and stops every thread of PID (threads that end meanwhile are left out); returns
 * their number (TIDS), or -1 when there is none. */
static int seize_all(int pid, int *tids)
{
	int n = 0, prev = -1;

	while (n != prev) { /* until no new thread shows up */
		int all[MAX_TASKS], m = list_tasks(pid, all, MAX_TASKS);

		prev = n;
		for (int i = 0; i < m; i++) {
			bool have = false;

			for (int j = 0; j < n; j++)
				have |= tids[j] == all[i];
			if (have || ptrace(PTRACE_SEIZE, all[i], NULL, NULL) < 0)
				continue;
			if (ptrace(PTRACE_INTERRUPT, all[i], NULL, NULL) < 0 ||
			    wait_stopped(all[i]) < 0) {
				ptrace(PTRACE_DETACH, all[i], NULL, NULL);
				continue;
			}
			tids[n++] = all[i];
		}
	}
	return n > 0 ? n : -1;
}

/* Leaves out (EXCLUDE[k]) every site whose window holds a thread's resume address other than
 * its start, as the code generator must; returns how many. */
static int exclusions(const struct target *t, const int *tids, int n, bool *exclude)
{
	int cnt = 0;

	for (int i = 0; i < n; i++) {
		uint64_t pc = get_pc(tids[i]);

		if (pc > t->funcs && pc < t->funcs + STRIDE * t->nfuncs &&
		    (pc - t->funcs) % STRIDE > 0 && (pc - t->funcs) % STRIDE < WIN) {
			cnt += !exclude[(pc - t->funcs) / STRIDE];
			exclude[(pc - t->funcs) / STRIDE] = true;
		}
	}
	return cnt;
}

/* Threads in flight: per function, those that passed its entry but not yet its calls[]
 * increment (pc in a trampoline of f_k, or at f_k + 6 in the original code). */
static void in_flight(const struct target *t, const struct patcher *p, const int *tids, int n,
		      uint64_t *inside)
{
	memset(inside, 0, 8 * t->nfuncs);
	for (int i = 0; i < n; i++) {
		uint64_t pc = get_pc(tids[i]), orig = pc;

		if (p && patcher__orig_of(p, pc, &orig) != 0) {
			/* In the trampoline of f_k: entered (counted, or pending). */
			inside[(orig - t->funcs) / STRIDE]++;
			continue;
		}
		if (pc >= t->funcs && pc < t->funcs + STRIDE * t->nfuncs &&
		    (pc - t->funcs) % STRIDE == WIN)
			inside[(pc - t->funcs) / STRIDE]++;
	}
}

/* Single-steps TID until its pc is at a springboard (at most 10000 steps). */
static bool step_onto_springboard(const struct target *t, int tid)
{
	for (int i = 0; i < 10000; i++) {
		uint64_t pc = get_pc(tid);

		if (pc >= t->funcs && pc < t->funcs + STRIDE * (uint64_t)t->nfuncs &&
		    (pc - t->funcs) % STRIDE == SB_OFF && (pc - t->funcs) / STRIDE % 2 == 1 &&
		    (pc - t->funcs) / STRIDE + 1 < (uint64_t)t->nfuncs)
			return true;
		if (ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL) < 0 || wait_stopped(tid) < 0)
			return false;
	}
	return false;
}

/* Single-steps TID until its pc is at offset OFF of some trampoline (at most 10000 steps). */
static bool step_into(const struct patcher *p, int tid, uint32_t off)
{
	const struct patcher_region *r = patcher__region(p, 0);

	for (int i = 0; i < 10000; i++) {
		uint64_t pc = get_pc(tid);

		if (pc >= r->tramp_base && pc < r->tramp_base + r->tramp_size &&
		    (pc - r->tramp_base) % STRIDE == off)
			return true;
		if (ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL) < 0 || wait_stopped(tid) < 0)
			return false;
	}
	return false;
}

static int one_window(struct target *t, int w, int windows)
{
	static const uint32_t offs[] = {0, 0, 9, 8, 14, 12};
	int tids[MAX_TASKS], n;
	struct patcher *p = NULL;
	struct patcher_region r, r2 = {0};
	uint64_t libc_lo = 0, libc_hi = 0;
	struct blobs bl;
	bool *exclude = calloc(t->nfuncs, sizeof(bool));
	uint64_t *own0 = calloc(t->nfuncs, 8), *in0 = calloc(t->nfuncs, 8);
	uint64_t *own1 = calloc(t->nfuncs, 8), *in1 = calloc(t->nfuncs, 8);
	uint64_t *cnt = calloc(t->nfuncs, 8), pcs[MAX_TASKS], frame;
	bool unclean0 = w % 2 == 1;
	double t0, held, t_install, t_remove;
	int kept, nexcluded;

	t0 = now();
	n = seize_all(t->pid, tids);
	if (n <= 0) {
		FAIL("window %d: cannot seize the threads", w);
		return -1;
	}
	nexcluded = exclusions(t, tids, n, exclude);
	{
		struct user_regs_struct regs;

		/* Where the remote system calls run: in a system call (orig_rax >= 0) or not. */
		if (ptrace(PTRACE_GETREGS, tids[0], NULL, &regs) == 0)
			fprintf(stderr,
				"window %d: remote calls in thread %d, orig_rax %lld rax %lld\n",
				w + 1, tids[0], (long long)regs.orig_rax, (long long)regs.rax);
	}
	read_mem(t->pid, t->calls, own0, 8 * t->nfuncs);
	in_flight(t, NULL, tids, n, in0);
	if (patcher__open(&p, t->pid, tids[0]) < 0 ||
	    patcher__add_region(p, t->text_lo, t->text_hi, t->nfuncs, STRIDE * t->nfuncs, &r) < 0 ||
	    blobs_make(&bl, t, &r, exclude, unclean0) < 0) {
		FAIL("window %d: cannot map the regions or make the blobs", w);
		return -1;
	}
	/* A second object far away (libc, no site patched there): its own regions, near it,
	 * its counters after the binary's in patcher__read, unmapped at the removal too. */
	if (!exec_mapping(t->pid, "libc.so", &libc_lo, &libc_hi) ||
	    patcher__add_region(p, libc_lo, libc_hi, 4, 4096, &r2) != 1)
		FAIL("window %d: no second region for libc", w);
	else if (!near(&r2, libc_lo, libc_hi) || !near(&r, t->text_lo, t->text_hi) ||
		 r2.first_counter != (uint32_t)t->nfuncs)
		FAIL("window %d: a region out of reach of its code, or misnumbered", w);
	if (w % 3 == 2)
		patcher__set_atomic(p); /* before the install: written atomic */
	t_install = now();
	if (patcher__install(p, bl.b, bl.n) < 0)
		FAIL("window %d: install failed", w);
	t_install = now() - t_install;
	if (n > 1 && w % 3 != 2)
		patcher__set_atomic(p); /* after: flipped in place */
	held = now() - t0;
	for (int i = 0; i < n; i++)
		ptrace(PTRACE_CONT, tids[i], NULL, NULL);
	/* The counters move while the program runs, read from our own mapping. */
	{
		uint64_t sum0 = 0, sum1 = 0;
		int tries = 0;

		patcher__read(p, cnt, t->nfuncs);
		for (int k = 0; k < t->nfuncs; k++)
			sum0 += cnt[k];
		do {
			usleep(10000);
			patcher__read(p, cnt, t->nfuncs);
			sum1 = 0;
			for (int k = 0; k < t->nfuncs; k++)
				sum1 += cnt[k];
		} while (sum1 == sum0 && ++tries < 100);
		if (sum1 == sum0)
			FAIL("window %d: the counters did not move in 1 s of running", w);
	}
	usleep(20000);
	t0 = now();
	for (int i = 0; i < n; i++)
		if (ptrace(PTRACE_INTERRUPT, tids[i], NULL, NULL) < 0 || wait_stopped(tids[i]) < 0)
			FAIL("window %d: cannot stop thread %d", w, tids[i]);
	/* One thread (the last: the first may be blocked in a system call, where the remote
	 * system calls run), at a chosen trampoline offset, for patcher__remove to move out. */
	if (w == 1 && t->nfuncs > 1) {
		if (!step_onto_springboard(t, tids[n - 1]))
			FAIL("window %d: thread %d never reached a springboard", w, tids[n - 1]);
	} else if (!step_into(p, tids[n - 1], offs[w % 6])) {
		FAIL("window %d: thread %d never reached offset %u of a trampoline", w, tids[n - 1],
		     offs[w % 6]);
	}
	read_mem(t->pid, t->calls, own1, 8 * t->nfuncs);
	in_flight(t, p, tids, n, in1);
	for (int i = 0; i < n; i++)
		pcs[i] = get_pc(tids[i]);
	/* In window 4, a signal frame "resumes" in a trampoline: its region must stay. */
	frame = r.tramp_base + STRIDE + 9;
	t_remove = now();
	kept = patcher__remove(p, tids, n, &frame, w == 3);
	t_remove = now() - t_remove;
	if (kept != (w == 3))
		FAIL("window %d: remove returned %d", w, kept);
	{
		uint64_t all[t->nfuncs + 4];

		if (patcher__read(p, all, t->nfuncs + 4) != (size_t)t->nfuncs + 4 ||
		    all[t->nfuncs] || all[t->nfuncs + 3])
			FAIL("window %d: patcher__read does not give both objects' counters", w);
	}
	patcher__read(p, cnt, t->nfuncs);
	for (int k = 0; k < t->nfuncs; k++) {
		uint64_t want = exclude[k] ? 0 : own1[k] + in1[k] - own0[k] - in0[k];

		if (cnt[k] != want)
			FAIL("window %d: f_%d counted %" PRIu64 ", expected %" PRIu64
			     " (calls %" PRIu64 " -> %" PRIu64 ", in flight %" PRIu64 " -> %" PRIu64
			     ")",
			     w, k, cnt[k], want, own0[k], own1[k], in0[k], in1[k]);
	}
	for (int i = 0; i < n; i++) {
		uint64_t pc = get_pc(tids[i]), orig;
		int rc = patcher__orig_of(p, pcs[i], &orig);

		if (in_regions(p, pc))
			FAIL("window %d: thread %d left at %#" PRIx64 " in a region", w, tids[i],
			     pc);
		else if (pcs[i] >= t->funcs && pcs[i] < t->funcs + STRIDE * (uint64_t)t->nfuncs &&
			 (pcs[i] - t->funcs) % STRIDE == SB_OFF && pc != pcs[i] - SB_OFF)
			FAIL("window %d: thread %d at the springboard %#" PRIx64
			     " moved to %#" PRIx64 ", not to its site",
			     w, tids[i], pcs[i], pc);
		else if (rc == 1 && pc != orig)
			FAIL("window %d: thread %d moved to %#" PRIx64 ", not %#" PRIx64, w,
			     tids[i], pc, orig);
	}
	check_text(t);
	if (mapped(t->pid, r.tramp_base, r.counters_base + r.ncounters * 8ull) != (w == 3))
		FAIL("window %d: the regions are %s mapped", w, w == 3 ? "not" : "still");
	if (r2.tramp_base && mapped(t->pid, r2.tramp_base, r2.counters_base + 8))
		FAIL("window %d: libc's regions are still mapped", w);
	for (int i = 0; i < n; i++)
		ptrace(PTRACE_DETACH, tids[i], NULL, NULL);
	fprintf(stderr,
		"window %d/%d: %d threads, %zu sites (%d left out): install %.3f ms, remove %.3f "
		"ms; held %.1f ms at the attach, %.1f ms at the detach; counter[0] %" PRIu64
		"; thread %d moved from %#" PRIx64 "; regions at %#" PRIx64 " (code %#" PRIx64
		") and %#" PRIx64 " (libc %#" PRIx64 ")\n",
		w + 1, windows, n, bl.n, nexcluded, t_install * 1e3, t_remove * 1e3, held * 1e3,
		(now() - t0) * 1e3, cnt[0], tids[n - 1], pcs[n - 1], r.tramp_base, t->text_lo,
		r2.tramp_base, libc_lo);
	patcher__close(p);
	blobs_free(&bl);
	free(exclude);
	free(own0);
	free(own1);
	free(in0);
	free(in1);
	free(cnt);
	return 0;
}

static int start_plain(char **argv)
{
	int pid = fork();

	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* Waits (at most 5 s) until process PID has N threads (PROG's first argument). */
static void wait_threads(int pid, int n)
{
	for (int i = 0; i < 1000; i++) {
		int tids[MAX_TASKS];

		if (list_tasks(pid, tids, MAX_TASKS) >= n)
			break;
		usleep(5000);
	}
	usleep(10000);
}

static void wait_target(int pid)
{
	int status;

	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		FAIL("the program did not exit with 0 (status %#x)", status);
}

static int mode_attach(uint64_t funcs, uint64_t calls, int nfuncs, int windows, char **argv)
{
	struct target t = {.nfuncs = nfuncs};

	t.pid = start_plain(argv);
	wait_threads(t.pid, atoi(argv[1]));
	if (target_locate(&t, funcs, calls)) {
		FAIL("cannot locate the program's text");
		kill(t.pid, SIGKILL);
	}
	for (int w = 0; w < windows && !fails; w++) {
		if (one_window(&t, w, windows) < 0)
			break;
		usleep(20000);
	}
	wait_target(t.pid);
	return fails ? 1 : 0;
}

/* --- kill mode ----------------------------------------------------------------------------- */

static int mode_kill(uint64_t funcs, uint64_t calls, int nfuncs, char **argv)
{
	int ready[2], helper, pid;
	char c;

	if (pipe(ready))
		return 1;
	pid = start_plain(argv);
	wait_threads(pid, atoi(argv[1]));
	helper = fork();
	if (helper == 0) {
		struct target t = {.pid = pid, .nfuncs = nfuncs};
		int tids[MAX_TASKS], n = seize_all(pid, tids);
		struct patcher *p;
		struct patcher_region r;
		struct blobs bl;
		bool exclude[nfuncs];

		memset(exclude, 0, sizeof(exclude));
		if (n <= 0 || target_locate(&t, funcs, calls) || patcher__open(&p, pid, tids[0]) ||
		    patcher__add_region(p, t.text_lo, t.text_hi, nfuncs, STRIDE * nfuncs, &r) < 0)
			_exit(1);
		exclusions(&t, tids, n, exclude);
		if (blobs_make(&bl, &t, &r, exclude, false) || patcher__install(p, bl.b, bl.n))
			_exit(1);
		if (n > 1)
			patcher__set_atomic(p);
		for (int i = 0; i < n; i++)
			ptrace(PTRACE_CONT, tids[i], NULL, NULL);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1) {
		FAIL("the helper could not patch the program");
		kill(pid, SIGKILL);
	} else {
		struct target t = {.pid = pid, .nfuncs = nfuncs};
		uint8_t s0[WIN], s1[WIN];

		usleep(100000);
		/* Still patched while the helper dies (f_0, or f_1 through its springboard: one
		 * may have been left out). */
		if (target_locate(&t, funcs, calls) || read_mem(pid, t.funcs, s0, WIN) ||
		    read_mem(pid, t.funcs + STRIDE, s1, WIN) || (s0[0] != 0xe9 && s1[0] != 0xeb))
			FAIL("the program is not patched when its patcher is killed");
		kill(helper, SIGKILL);
	}
	waitpid(helper, NULL, 0);
	wait_target(pid);
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	uint64_t funcs, calls;
	int nfuncs;

	if (argc < 7) {
		fprintf(
		    stderr,
		    "usage: %s run|attach|kill NFUNCS FUNCS CALLS [WINDOWS] PROG NTHREADS ...\n",
		    argv[0]);
		return 2;
	}
	nfuncs = atoi(argv[2]);
	funcs = strtoull(argv[3], NULL, 0);
	calls = strtoull(argv[4], NULL, 0);
	if (strcmp(argv[1], "run") == 0 || strcmp(argv[1], "run-ev") == 0)
		return mode_run(funcs, calls, nfuncs, argv + 5, strcmp(argv[1], "run-ev") == 0);
	if (strcmp(argv[1], "attach") == 0 && argc > 7)
		return mode_attach(funcs, calls, nfuncs, atoi(argv[5]), argv + 6);
	if (strcmp(argv[1], "kill") == 0)
		return mode_kill(funcs, calls, nfuncs, argv + 5);
	fprintf(stderr, "%s: unknown mode %s\n", argv[0], argv[1]);
	return 2;
}
