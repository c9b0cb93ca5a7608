/*
 * The in-process half of `edgeprof calibrate`: what one hit of a patched counter costs here.
 * The calibration target (calibrate_target.c), blocked before its loop, is seized with
 * ptrace; one window of its loop gets a jump to a trampoline with one increment (the flags
 * dead there, or live and saved), exactly as the patch backend makes them (trampoline.h,
 * patcher.h); the target is released, runs its loop patched and exits, and the counter must
 * hold one hit per iteration.
 */
#include "user/count/calibrate_patch.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cfg/flag_liveness.h"
#include "user/count/patcher.h"
#include "user/count/trampoline.h"
#include "user/proc/proc_maps.h"
#include "user/util/log.h"

/* The window each class patches: 5 bytes of whole instructions at the label. */
#define CALIB_WINDOW_LEN 5

/* Waits for TID's next stop (or its end). Returns 0 in a stop, -ECHILD otherwise. */
static int wait_stop(int tid)
{
	int status;

	while (waitpid(tid, &status, __WALL) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return WIFSTOPPED(status) ? 0 : -ECHILD;
}

int calibrate_patch__install(struct calibrate_patch *cp, int pid, const char *exe,
			     const void *label, bool flags_live)
{
	uint64_t my_base, its_base, site;
	struct patcher_region r;
	struct patch_blob blob = {0};
	struct tramp_spec sp = {0};
	int err, region;

	memset(cp, 0, sizeof(*cp));
	my_base = proc_maps__base(getpid(), exe);
	its_base = proc_maps__base(pid, exe);
	if (!my_base || !its_base) {
		pr_err("cannot find '%s' in the memory map of the calibration target", exe);
		return -ENOENT;
	}
	site = (uint64_t)(uintptr_t)label - my_base + its_base;

	if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) || ptrace(PTRACE_INTERRUPT, pid, NULL, NULL)) {
		err = -errno;
		pr_err("cannot trace the calibration target %d: %s", pid, strerror(errno));
		return err;
	}
	cp->traced = pid;
	err = wait_stop(pid);
	if (err) {
		pr_err("the calibration target %d did not stop", pid);
		return err;
	}
	err = patcher__open(&cp->patcher, pid, pid);
	if (err)
		return err;
	region = patcher__add_region(cp->patcher, site, site + CALIB_WINDOW_LEN, 1, 4096, &r);
	if (region < 0)
		return region;
	/* The target runs this very binary: its bytes at the window are ours. */
	sp.site = site;
	sp.bytes = label;
	sp.len = CALIB_WINDOW_LEN;
	sp.tramp = r.tramp_base;
	sp.counters = r.counters_base;
	sp.entry_counter = 0;
	sp.taken_counter = PATCH_NO_COUNTER;
	sp.not_taken_counter = PATCH_NO_COUNTER;
	sp.live_entry = flags_live ? FLAG_ALL : 0;
	sp.flagsave = TRAMP_SAVE_LAHF;
	err = trampoline__emit(&sp, &blob);
	if (err) {
		pr_err("cannot make the calibration trampoline: %s", strerror(-err));
		return err;
	}
	err = patcher__install(cp->patcher, &blob, 1);
	patch_blob__release(&blob);
	if (err)
		return err;
	/* Released patched: the loop runs without us. */
	if (ptrace(PTRACE_DETACH, pid, NULL, NULL)) {
		err = -errno;
		pr_err("cannot release the calibration target %d: %s", pid, strerror(errno));
		return err;
	}
	cp->traced = 0;
	return 0;
}

uint64_t calibrate_patch__hits(const struct calibrate_patch *cp)
{
	uint64_t hits = 0;

	if (cp->patcher && patcher__read(cp->patcher, &hits, 1) != 1)
		return 0;
	return hits;
}

void calibrate_patch__close(struct calibrate_patch *cp)
{
	if (cp->traced)
		ptrace(PTRACE_DETACH, cp->traced, NULL, NULL);
	patcher__close(cp->patcher);
	memset(cp, 0, sizeof(*cp));
}
