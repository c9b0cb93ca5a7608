/*
 * `edgeprof report --time`: Sarkar's average execution time and standard deviation per
 * function invocation and per loop entry (cfg/fcdg.h, estimators/sarkar.h), callees first
 * over the call graph, from an exact edge profile and a cost model (estimators/cost_model.h),
 * with the counter comparison naive / Sarkar / spanning-tree chords
 * (estimators/sarkar_counters.h). Needs the profiled binary (path and build-id from the
 * profile).
 */
#ifndef EDGEPROF_USER_TIME_REPORT_H
#define EDGEPROF_USER_TIME_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "user/profile/profile.h"

struct time_opts {
	const char *cost;	/* "insns", "cycles" (default) or a JSON file */
	const char *fcdg;	/* function to show node by node, or NULL */
	const char *loop_stats; /* JSON file of trip-count moments, or NULL */
	const char *binary;	/* overrides the profile's binary path, or NULL */
	bool json, dot;
	bool iid_loops;	 /* --loop-model independent */
	bool loop_model; /* --loop-model given */
	unsigned long top;
};

/* Prints the time report of profile P (read from FILE) to OUT. Returns an EXIT_* status; on
 * failure one line was reported with pr_err. */
int time_report__run(FILE *out, const struct profile *p, const char *file,
		     const struct time_opts *o);

#endif
