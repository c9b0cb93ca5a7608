/*
 * System calls run inside a ptrace-stopped thread (see remote.h). The thread's registers are
 * saved, REMOTE_SCRATCH_LEN bytes at an executable address nobody runs any more (the entry
 * point) are replaced by `mov $nr, %eax; syscall; int3`, the thread is resumed there with
 * orig_rax = -1 (so that the kernel does not apply the restart of a system call the thread was
 * interrupted in to ours: rip - 2 and rax = orig_rax) and stops at the int3; then the bytes and
 * every register, orig_rax included, are put back, and the kernel restarts the interrupted call
 * at the next resume as it would have. The number is loaded by the borrowed code, not through
 * rax, because a thread stopped at PTRACE_EVENT_EXEC is still inside execve, whose return
 * value overwrites rax on the way out.
 */
#include "user/proc/remote.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "user/util/log.h"

/* A stop waited for through at most this many unrelated signals before giving up. */
#define REMOTE_MAX_DETOURS 64

uint64_t remote__scratch(int tid)
{
	char path[64];
	uint64_t aux[2], entry = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_err("thread %d: cannot read %s: %s", tid, path, strerror(errno));
		return 0;
	}
	while (read(fd, aux, sizeof(aux)) == (ssize_t)sizeof(aux) && aux[0] != AT_NULL)
		if (aux[0] == AT_ENTRY)
			entry = aux[1];
	close(fd);
	if (!entry)
		pr_err("thread %d: no entry point in its auxiliary vector", tid);
	return entry;
}

static int thread_group(int tid)
{
	char path[64], line[256];
	int tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

void remote__resend(int tgid, int tid, uint64_t held)
{
	if (!held)
		return;
	if (!tgid)
		tgid = thread_group(tid);
	for (int s = 1; s <= 64; s++)
		if (held & (1ull << (s - 1)))
			syscall(SYS_tgkill, tgid, tid, s);
}

/* Waits for TID's next stop after a resume. Returns the stop's signal (SIGTRAP for a trap,
 * 0 for a PTRACE_EVENT stop to resume again), or a negative errno when it is gone. */
static int wait_stop(int tid)
{
	int status;

	for (;;) {
		pid_t r = waitpid(tid, &status, __WALL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return -ESRCH;
		if (!WIFSTOPPED(status))
			continue;
		if (status >> 16 == PTRACE_EVENT_EXIT)
			return -ESRCH; /* killed meanwhile: it is on its way out */
		if (status >> 16)
			return 0;
		return WSTOPSIG(status);
	}
}

/* Resumes TID with REQ (PTRACE_CONT or PTRACE_SINGLESTEP) until it stops with a trap at an
 * address in [LO, HI] (*REGS then holds its registers), holding back other signals in
 * *HELD. A stop out of that range is an error (-EIO): the thread is not where it should be. */
static int run_until_trap(int tid, int req, uint64_t lo, uint64_t hi, struct user_regs_struct *regs,
			  uint64_t *held)
{
	for (int detour = 0; detour < REMOTE_MAX_DETOURS; detour++) {
		int sig;

		if (ptrace(req, tid, NULL, NULL) < 0)
			return -errno;
		sig = wait_stop(tid);
		if (sig < 0)
			return sig;
		if (ptrace(PTRACE_GETREGS, tid, NULL, regs) < 0)
			return -errno;
		if (regs->rip < lo || regs->rip > hi)
			return -EIO;
		if (sig == SIGTRAP)
			return 0;
		if (sig > 0 && sig <= 64)
			*held |= 1ull << (sig - 1);
	}
	return -EAGAIN;
}

/* Whether TID is stopped inside a system call whose result is not yet in its registers (a
 * PTRACE_EVENT stop of fork, clone, vfork, exit or seccomp): its result would be lost. */
static int in_syscall_event(int tid)
{
	siginfo_t si;
	int event;

	if (ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) < 0)
		return 0; /* a group stop: not inside a system call */
	if (si.si_signo != SIGTRAP)
		return 0;
	event = si.si_code >> 8;
	return event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK ||
	       event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_VFORK_DONE ||
	       event == PTRACE_EVENT_EXIT || event == PTRACE_EVENT_SECCOMP;
}

int remote__syscall_at(int tid, uint64_t scratch, long nr, const uint64_t args[6], int64_t *ret)
{
	struct user_regs_struct saved, regs;
	uint64_t held = 0;
	long word, patched;
	uint8_t code[REMOTE_SCRATCH_LEN] = {0xb8, 0, 0, 0, 0, 0x0f, 0x05, 0xcc};
	uint32_t nr32 = (uint32_t)nr;
	int err, rc = 0;

	if (!scratch && !(scratch = remote__scratch(tid)))
		return -ENOENT;
	if (ptrace(PTRACE_GETREGS, tid, NULL, &saved) < 0) {
		err = -errno;
		pr_err("thread %d: not stopped under our ptrace: %s", tid, strerror(errno));
		return err;
	}
	if (in_syscall_event(tid)) {
		pr_err("thread %d: stopped inside a fork, clone or exit: no system call can be "
		       "run in it there",
		       tid);
		return -EBUSY;
	}
	errno = 0;
	word = ptrace(PTRACE_PEEKDATA, tid, (void *)scratch, NULL);
	if (errno) {
		err = -errno;
		pr_err("thread %d: cannot read %#" PRIx64 ": %s", tid, scratch, strerror(errno));
		return err;
	}
	memcpy(code + 1, &nr32, 4);
	memcpy(&patched, code, sizeof(patched));
	if (ptrace(PTRACE_POKEDATA, tid, (void *)scratch, (void *)patched) < 0) {
		err = -errno;
		pr_err("thread %d: cannot write code at %#" PRIx64 ": %s", tid, scratch,
		       strerror(errno));
		return err;
	}
	regs = saved;
	regs.rip = scratch;
	regs.orig_rax = (uint64_t)-1; /* no restart of an interrupted call into ours */
	regs.rax = (uint64_t)nr;
	regs.rdi = args[0];
	regs.rsi = args[1];
	regs.rdx = args[2];
	regs.r10 = args[3];
	regs.r8 = args[4];
	regs.r9 = args[5];
	if (ptrace(PTRACE_SETREGS, tid, NULL, &regs) < 0) {
		err = -errno;
		pr_err("thread %d: cannot set registers: %s", tid, strerror(errno));
		ptrace(PTRACE_POKEDATA, tid, (void *)scratch, (void *)word);
		return err;
	}
	err = run_until_trap(tid, PTRACE_CONT, scratch, scratch + REMOTE_SCRATCH_LEN, &regs, &held);
	if (err == 0 && regs.rip != scratch + REMOTE_SCRATCH_LEN)
		err = -EIO;
	if (err) {
		pr_err("thread %d: system call %ld did not complete: %s", tid, nr, strerror(-err));
		rc = err;
	} else {
		*ret = (int64_t)regs.rax;
	}
	if (err != -ESRCH) {
		if (ptrace(PTRACE_POKEDATA, tid, (void *)scratch, (void *)word) < 0 ||
		    ptrace(PTRACE_SETREGS, tid, NULL, &saved) < 0) {
			err = -errno;
			pr_err("thread %d: cannot put its code or registers back: %s", tid,
			       strerror(errno));
			return err;
		}
		remote__resend(0, tid, held);
	}
	return rc;
}

int remote__syscall(int tid, long nr, const uint64_t args[6], int64_t *ret)
{
	return remote__syscall_at(tid, 0, nr, args, ret);
}

int remote__single_step(int tid, uint64_t *held)
{
	struct user_regs_struct regs;
	int err;

	err = run_until_trap(tid, PTRACE_SINGLESTEP, 0, UINT64_MAX, &regs, held);
	if (err)
		pr_err("thread %d: cannot single-step: %s", tid, strerror(-err));
	return err;
}
