/*
 * Running system calls inside another process: a thread held in a ptrace stop is made to
 * execute one `syscall` instruction with chosen arguments, and is then put back exactly as it
 * was (registers, and the few code bytes borrowed to hold the instruction). This is how the
 * in-process counting backend maps and unmaps its trampolines and counters in the target
 * (mmap, munmap), the way gdb's inferior calls and Orbit's user-space instrumentation do it.
 */
#ifndef EDGEPROF_USER_PROC_REMOTE_H
#define EDGEPROF_USER_PROC_REMOTE_H

#include <stdint.h>

/* Bytes borrowed at the scratch address: `mov $nr, %eax; syscall; int3`. */
#define REMOTE_SCRATCH_LEN 8

/* The address of an executable instruction of process (or thread) TID that no thread will
 * run while one of them is held: the program's entry point (AT_ENTRY in /proc/TID/auxv, the
 * `_start` that ran once at the start). 0 (with one line reported) when it cannot be read. */
uint64_t remote__scratch(int tid);

/* Runs system call NR with ARGS (6 values, as the kernel takes them: rdi, rsi, rdx, r10, r8,
 * r9) in thread TID, which must be in a ptrace stop of the calling tracer: a signal-delivery
 * stop, a group stop or PTRACE_INTERRUPT stop, or the PTRACE_EVENT_EXEC stop; not inside a
 * fork, clone, vfork or exit event (the pending result of that call would be lost: -EBUSY).
 * SCRATCH is an executable address whose REMOTE_SCRATCH_LEN bytes are borrowed
 * (remote__scratch; 0: looked up). *RET receives the raw return value (-errno for a failed
 * call). A thread stopped inside an interrupted system call (orig_rax >= 0, rax =
 * -ERESTART*) still restarts it once resumed: its saved registers are put back as they were,
 * and the kernel's restart logic runs from them at the resume. Signals that arrive meanwhile
 * are held back and sent again to TID (tgkill) once it is back. On return TID is in a ptrace
 * stop again: a signal-delivery stop for SIGTRAP if it was in another kind of stop before
 * (resume it with signal 0; PTRACE_LISTEN no longer applies). Returns 0 when the system call
 * ran, or a negative errno with one line reported (TID not stopped, not traced by us, gone).
 * Other threads of the process must not run the scratch bytes meanwhile: keep them stopped,
 * or use an address they cannot reach. */
int remote__syscall_at(int tid, uint64_t scratch, long nr, const uint64_t args[6], int64_t *ret);

/* remote__syscall_at with the scratch address looked up (remote__scratch). */
int remote__syscall(int tid, long nr, const uint64_t args[6], int64_t *ret);

/* Resumes TID (in a ptrace stop) for one instruction, with PTRACE_SINGLESTEP. Signals that
 * arrive instead are held back in *HELD (a mask: bit S-1 for signal S) to be sent again with
 * remote__resend once the caller is done. Returns 0 when the instruction ran and TID is
 * stopped again, or a negative errno with one line reported. */
int remote__single_step(int tid, uint64_t *held);

/* Sends the signals in HELD (from remote__single_step) again to thread TID of process TGID
 * (0: looked up) with tgkill: a signal meant for the whole process is then queued to TID. */
void remote__resend(int tgid, int tid, uint64_t held);

#endif
