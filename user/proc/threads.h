/*
 * The threads of a process held under ptrace, and the addresses in a range of code that they
 * could resume at (see threads.c).
 */
#ifndef EDGEPROF_USER_PROC_THREADS_H
#define EDGEPROF_USER_PROC_THREADS_H

#include <stddef.h>
#include <stdint.h>

/* The thread ids of process PID (/proc/PID/task) into *TIDS (malloc'd, *N of them). Returns 0,
 * or a negative errno with one line reported. */
int proc_threads__list(int pid, int **tids, size_t *n);

/* Calls FN(CTX, ADDR) for every address in [LO, HI) that one of the threads TIDS[0, N) of PID
 * (each held in a ptrace stop of this thread's) could resume at: its pc, the system call it
 * would restart (pc - 2), and every aligned word of its stack, from its stack pointer to the end
 * of that mapping, whose value lies in [LO, HI) (return addresses, and pcs saved by signal
 * frames on that stack). A superset, with repeats; FN is also called for pcs outside [LO, HI).
 * A signal frame on another stack than the one the thread runs on now (a handler on the
 * alternate stack interrupting one on the thread's stack) is not seen. Returns 0, or a
 * negative errno with one line reported. */
int proc_threads__resume_points(int pid, const int *tids, size_t n, uint64_t lo, uint64_t hi,
				void (*fn)(void *ctx, uint64_t addr), void *ctx);

#endif
