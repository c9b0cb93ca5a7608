/*
 * Calibration: what one counter hit costs on this machine for each probe class (uprobes, and
 * in-process counters: calibrate_patch.h), measured by
 * `edgeprof calibrate` on a built-in loop (calibrate_target.c) and kept in
 * $XDG_CACHE_HOME/edgeprof/site-costs.json (default ~/.cache/edgeprof/), from which
 * placement's site costs are loaded. The file's JSON is also what `calibrate --json` prints:
 *   { "version": 1, "kernel": uname -r, "machine": uname -m, "date": ISO 8601 UTC,
 *     "iterations": N, "repeat": K, "unprobed_ns": median loop time without probes,
 *     "patch_iterations": M, "unpatched_ns": median loop time of M iterations unpatched,
 *     "classes": [ { "class", "insn", "probe_class", "ns_per_hit", "hits", "runs",
 *                    "probed_ns" }, ... ],
 *     "site_costs": { "stepped", "emulated", "nop5", "patch", "patch_flags" } }
 *   (ns per hit; a file without "patch" and "patch_flags" gives their defaults)
 */
#ifndef EDGEPROF_USER_CALIBRATION_H
#define EDGEPROF_USER_CALIBRATION_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "estimators/site_costs.h"

/* The instructions measured, one probe each. */
enum calib_class {
	CALIB_NOP5 = 0, /* nopl 0x0(%rax,%rax,1): PROBE_NOP5 */
	CALIB_JCC,	/* jz rel8, as a branch site: PROBE_EMULATED */
	CALIB_PUSH,	/* push %rbx: PROBE_EMULATED */
	CALIB_MOV,	/* mov %rdx,%rax: PROBE_STEPPED */
	CALIB_NUPROBE,	/* the classes above are uprobes, those below in-process counters */
	CALIB_PATCH = CALIB_NUPROBE, /* a window with the flags dead: PROBE_PATCH */
	CALIB_PATCH_FLAGS,	     /* a window with the flags live: PROBE_PATCH_FLAGS */
	CALIB_NCLASSES,
};

struct calib_result {
	const char *name;     /* "nop5", "jcc", "push", "mov" */
	const char *insn;     /* the probed instruction, AT&T syntax */
	unsigned probe_class; /* enum insn_probe_class */
	double ns_per_hit;    /* (median probed - median unprobed) / hits */
	double probed_ns;     /* median loop time with the probe */
	uint64_t hits;	      /* counted hits per probed run (== iterations) */
	unsigned runs;	      /* probed runs */
};

struct calibration {
	uint64_t iterations;
	unsigned repeat;
	double unprobed_ns; /* median loop time without probes */
	/* The patched classes' runs: more iterations (a hit costs a few ns, not hundreds). */
	uint64_t patch_iterations;
	double unpatched_ns; /* median loop time of patch_iterations without a patch */
	struct calib_result classes[CALIB_NCLASSES];
	struct site_costs costs; /* per probe class; emulated = mean of jcc and push */
	char kernel[65], machine[65], date[32];
};

#define CALIBRATION_DEFAULT_ITERATIONS 200000
#define CALIBRATION_DEFAULT_REPEAT 5
/* The quick calibration `run` and `record` make when there is none (about 1 s here). */
#define CALIBRATION_QUICK_ITERATIONS 5000
#define CALIBRATION_QUICK_REPEAT 2
/* Set (to anything but "" or "0"), `run` and `record` use the default costs when there is
 * no calibration instead of measuring them (deterministic placement, e.g. in tests). */
#define CALIBRATION_OPT_OUT_ENV "EDGEPROF_NO_CALIBRATE"
/* json_dumpf flags of the file and of --json: indented, costs as 535.4, not 535.39999. */
#define CALIBRATION_JSON_FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(12))

/* The loop of calibrate_target.c: runs N > 0 iterations. Its global labels ep_calib_nop5,
 * ep_calib_jcc, ep_calib_push and ep_calib_mov mark the instructions probed, ep_calib_patch
 * and ep_calib_patch_flags the 5-byte windows patched. */
void ep_calib_loop(uint64_t n);
extern const char ep_calib_nop5[], ep_calib_jcc[], ep_calib_push[], ep_calib_mov[],
    ep_calib_patch[], ep_calib_patch_flags[];

/* The hidden target mode (`edgeprof calibrate --target-loop N`): prints "ready" on stdout,
 * waits for one byte on stdin, runs ep_calib_loop(N) and prints the loop's wall-clock time in
 * ns on stdout. Returns the exit status. */
int calibrate_target__run(uint64_t n);

/* Measures every class of C->classes: REPEAT rounds, each running, per class, the target
 * (re-executed from /proc/self/exe) once without probes and once with one probe on the
 * class's instruction (a uprobe, or a patched in-process counter); the cost is the difference
 * of the medians divided by the iterations: ITERATIONS for uprobes, C->patch_iterations
 * (more) for patched counters. Fails unless every probed run counted exactly one hit per
 * iteration. Returns 0, or a negative
 * errno after reporting the failure (-EPERM & co. from probes__open when BPF is
 * unavailable). */
int calibration__run(struct calibration *c, uint64_t iterations, unsigned repeat);

/* The calibration as JSON (the format above); NULL when out of memory. */
json_t *calibration__to_json(const struct calibration *c);

/* Where the calibration file lives, in BUF of LEN bytes. Returns 0, or -ENOENT when there
 * is no home or cache directory, -ENAMETOOLONG. */
int calibration__path(char *buf, size_t len);

/* Writes C to the calibration file atomically (temporary file + rename), creating its
 * directories. Stores the path in PATH (LEN bytes) when not NULL. Returns 0, or a negative
 * errno after reporting the failure. */
int calibration__save(const struct calibration *c, char *path, size_t len);

/* Fills C with the defaults (site_costs__defaults), then overrides them with the measured
 * costs of the calibration file when it exists, is valid and was made on the running kernel
 * (C->measured is then true). Prints nothing when the file is absent, a warning when it is
 * invalid or stale. Returns 0 (defaults or measured), or -EINVAL when the file was ignored. */
int calibration__load(struct site_costs *c);

/* The site costs for `run` and `record`: the calibration file's (calibration__load); when
 * there is no valid one for this kernel, a quick calibration (CALIBRATION_QUICK_*) is made
 * and stored, unless CALIBRATION_OPT_OUT_ENV is set. Fills C (defaults when nothing could be
 * measured). Returns 0, or a negative errno when measuring failed (warned; C holds the
 * defaults then). */
int calibration__ensure(struct site_costs *c);

#endif
