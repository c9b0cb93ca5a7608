/*
 * A profiling session over one binary: its CFG, the probe plan, the BPF counters, and the
 * step that turns counter values and process-control events (frames left or entered without
 * call or return) into exact per-edge counts and a profile file. `edgeprof run` and
 * `edgeprof record -p` differ only in how the process is controlled (tracer.h); both go
 * through a session.
 */
#ifndef EDGEPROF_USER_SESSION_H
#define EDGEPROF_USER_SESSION_H

#include <limits.h>
#include <stdint.h>

#include "cfg/cfg.h"
#include "estimators/placement.h"
#include "probes.h"
#include "run_weights.h"
#include "tracer.h"

struct session_options {
	enum placement_mode mode;
	const char *weights;  /* a profile for exact weights, or NULL */
	int bound_pid;        /* > 0: probes live in this process only (attach to a running
			       * process); 0: in every process mapping the binary, counted when
			       * started by us or forked by a counted process */
};

struct session {
	char binary[PATH_MAX]; /* the binary's real path */
	struct elf_image img;
	struct cfg_program prog;
	struct placement pl;
	struct placement_options popt;
	struct run_weights rw;
	uint32_t capacity;     /* counters the BPF map holds */
	struct probes *probes;
	uint64_t bias;         /* run-time address - ELF vaddr of the binary's code */
	/* while folding indirect targets into counters */
	uint32_t *indirect_site; /* ordinal -> index into pl.sites */
	uint32_t nindirect;
	uint64_t *counters;
	uint64_t unmatched;    /* indirect hits to a target that is no edge */
};

/* What session__finish writes besides the counts. */
struct session_run_info {
	char *const *argv;     /* the program's command line (NULL-terminated), or NULL */
	const char *mode;      /* "run" or "attach" */
	int pid;               /* attach: the process attached to */
	double held_attach, held_detach; /* attach: seconds the process was stopped */
};

/* Opens BINARY (a real path), builds its CFG, plans the probes and loads the BPF program with
 * room for the plan. Returns 0, or non-zero after reporting one line; release S in any case. */
int session__prepare(struct session *s, const char *binary, const struct session_options *o);

/* Attaches the plan's probes; PID is a process that maps the binary and has not run the
 * code since (stopped) or is bound (probes live only there): sites the kernel refuses are
 * found by bisection, left out, and the probes planned again. Sets the load bias from PID's
 * mappings. Does not count PID yet (probes__add_pid). Returns 0 or non-zero (reported). */
int session__attach(struct session *s, int pid);

/* Reads the counters (the counted processes must be gone or no longer counted), detaches the
 * probes, maps TR's frame events to virtual edges, propagates every function's counts and
 * writes the profile to OUT atomically. Returns 0, or non-zero after reporting one line. */
int session__finish(struct session *s, const struct tracer_result *tr,
		    const struct session_run_info *info, const char *out);

/* Frees everything S holds (probes detached). Safe on a zeroed or partly prepared S. */
void session__release(struct session *s);

#endif
