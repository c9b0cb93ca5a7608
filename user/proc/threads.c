/*
 * The threads of a process held under ptrace, and what could resume in a range of code: each
 * thread's pc (and the syscall it would restart), and every word of its used stack that points
 * into the range (return addresses, and the pcs that signal frames will resume at). A
 * superset of the real resume points, which is what the in-process counters need: a window of
 * code that none of these points into can be patched while the threads are held.
 */
#include "user/proc/threads.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <unistd.h>

#include "user/util/log.h"

/* Stacks are read at most this far above the stack pointer. */
#define SCAN_MAX (64ull << 20)

int proc_threads__list(int pid, int **tids, size_t *n)
{
	char path[64];
	struct dirent *de;
	size_t cap = 0;
	DIR *dir;

	*tids = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir) {
		int err = errno;

		pr_err("process %d: cannot list its threads: %s", pid, strerror(err));
		return -err;
	}
	while ((de = readdir(dir))) {
		int tid = atoi(de->d_name);

		if (tid <= 0)
			continue;
		if (*n == cap) {
			int *t = realloc(*tids, (cap = cap ? 2 * cap : 16) * sizeof(*t));

			if (!t) {
				closedir(dir);
				free(*tids);
				*tids = NULL;
				pr_err("out of memory");
				return -ENOMEM;
			}
			*tids = t;
		}
		(*tids)[(*n)++] = tid;
	}
	closedir(dir);
	return 0;
}

/* The end of the mapping of PID that holds ADDR, or 0. */
static uint64_t mapping_end(int pid, uint64_t addr)
{
	char path[64], line[512];
	uint64_t end = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		uint64_t lo, hi;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &lo, &hi) == 2 && addr >= lo && addr < hi) {
			end = hi;
			break;
		}
	}
	fclose(f);
	return end;
}

int proc_threads__resume_points(int pid, const int *tids, size_t n, uint64_t lo, uint64_t hi,
				void (*fn)(void *ctx, uint64_t addr), void *ctx)
{
	char path[64];
	int fd, err = 0;
	uint64_t *buf = malloc(1 << 16);

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !buf) {
		err = fd < 0 ? -errno : -ENOMEM;
		pr_err("process %d: cannot read its memory: %s", pid, strerror(-err));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct user_regs_struct r;
		uint64_t sp, end;

		if (ptrace(PTRACE_GETREGS, tids[i], NULL, &r)) {
			err = -errno;
			pr_err("thread %d: cannot read its registers: %s", tids[i], strerror(errno));
			goto out;
		}
		fn(ctx, r.rip);
		/* Stopped in a system call that may be restarted: it resumes at the syscall. */
		if ((int64_t)r.orig_rax >= 0 && r.rip >= 2)
			fn(ctx, r.rip - 2);
		sp = r.rsp & ~7ull;
		end = mapping_end(pid, sp);
		if (!end)
			continue;
		if (end - sp > SCAN_MAX)
			end = sp + SCAN_MAX;
		while (sp < end) {
			size_t want = end - sp < (1 << 16) ? end - sp : (1 << 16);
			ssize_t got = pread(fd, buf, want, (off_t)sp);

			if (got <= 0)
				break;
			for (size_t k = 0; k < (size_t)got / 8; k++)
				if (buf[k] >= lo && buf[k] < hi)
					fn(ctx, buf[k]);
			sp += (uint64_t)got;
		}
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return err;
}
