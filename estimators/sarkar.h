/*
 * Average execution time and its variance over the forward control dependence graph (Sarkar,
 * PLDI 1989, sections 3 to 5), for one function: TOTAL_FREQ of every control condition from
 * an edge profile, FREQ and NODE_FREQ by the top-down recurrences (a condition of a node that
 * never ran gets FREQ 0), then bottom-up TIME(u) = COST(u) + sum FREQ(u,l) TIME(v), E[T^2],
 * VAR(u) and STD_DEV(u). A preheader's loop frequency may have a variance: from measured trip
 * count moments when given, else 0 (the paper's simplification). A node's own cost may carry a
 * variance (a callee's), added as independent.
 */
#ifndef EDGEPROF_ESTIMATORS_SARKAR_H
#define EDGEPROF_ESTIMATORS_SARKAR_H

#include <stdbool.h>
#include <stdint.h>

#include "cfg/fcdg.h"

/* Trip counts of one loop over its entries: per entry, N = executions of the header. */
struct loop_moments {
	uint64_t entries; /* 0: not measured */
	double sum;	  /* sum of N */
	double sumsq;	  /* sum of N^2 */
};

struct sarkar_input {
	const struct fcdg *g;
	const int64_t *edge_count;  /* per CFG edge; negative = unknown (taken as 0) */
	const int64_t *block_count; /* per CFG block; negative = unknown (taken as 0) */
	double calls;		    /* TOTAL_FREQ(START, U): invocations */
	const double *cost;	    /* COST per ECFG node (START, STOP, preheaders: usually 0) */
	const double *cost_var;	    /* VAR(COST) per ECFG node, or NULL for all 0 */
	const struct loop_moments *moments; /* per loop (cfg_loops index), or NULL */
	bool iid_iterations; /* false: the paper's product VAR(F x S), as if every iteration of
			      * an entry took the same time S; true: a random sum of F independent
			      * iterations, VAR = E[F] VAR(S) + VAR(F) E[S]^2 */
};

struct sarkar_result {
	uint32_t nnodes, nconds;
	double *total_freq; /* per ECFG edge (condition): TOTAL_FREQ(u, l) */
	double *freq;	    /* per ECFG edge: FREQ(u, l) */
	double *node_freq;  /* per node: NODE_FREQ(u), per invocation */
	double *time;	    /* per node: TIME(u) = E[T] */
	double *et2;	    /* per node: E[T^2] */
	double *var;	    /* per node: VAR(u) */
	double *freq_var;   /* per loop: VAR(FREQ(preheader, U)) used (0 when not measured) */
	uint32_t loops_with_moments; /* loops whose VAR(FREQ) came from moments */
};

/* TOTAL_FREQ of ECFG edge C of IN->g: a block's out-edge: its count; START's U: the calls;
 * a preheader's U: the header's count; pseudo edges: 0; other U edges: the count of the CFG
 * edge they continue. */
double sarkar__total_freq(const struct sarkar_input *in, uint32_t c);

/* Computes frequencies, times and variances for IN into R (allocated here; release with
 * sarkar__release). Returns 0 or -ENOMEM. */
int sarkar__compute(struct sarkar_result *r, const struct sarkar_input *in);

void sarkar__release(struct sarkar_result *r);

/* STD_DEV(u) = sqrt(VAR(u)). */
double sarkar__std_dev(const struct sarkar_result *r, uint32_t u);

#endif
