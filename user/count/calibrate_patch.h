/*
 * Patching the calibration target (calibrate_target.c) with one in-process counter, so
 * `edgeprof calibrate` measures what a patched site costs (see calibrate_patch.c).
 */
#ifndef EDGEPROF_USER_COUNT_CALIBRATE_PATCH_H
#define EDGEPROF_USER_COUNT_CALIBRATE_PATCH_H

#include <stdbool.h>
#include <stdint.h>

struct patcher;

struct calibrate_patch {
	struct patcher *patcher;
	int traced; /* the pid while we hold it under ptrace, else 0 */
};

/* Patches process PID, a calibration target running this very executable EXE (its real
 * path) blocked before its loop (it has said it is ready), with one counter on the 5-byte
 * window at LABEL (an address of this process's ep_calib_loop), saving the flags when
 * FLAGS_LIVE; then releases it (it is no longer traced). Returns 0, or a negative errno with
 * one line reported; either way calibrate_patch__close must follow. */
int calibrate_patch__install(struct calibrate_patch *cp, int pid, const char *exe,
			     const void *label, bool flags_live);

/* The hits the counter holds (read from edgeprof's own mapping; valid after the target
 * exited too). */
uint64_t calibrate_patch__hits(const struct calibrate_patch *cp);

/* Releases the target if still held, and edgeprof's side of the counter. */
void calibrate_patch__close(struct calibrate_patch *cp);

#endif
