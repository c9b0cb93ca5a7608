/*
 * Function invocation and global call frequencies over a call graph with recursion (Wu and
 * Larus, Algorithm 3), and global block and edge frequencies (section 6: a local frequency
 * times its function's invocation frequency). The call graph is plain data: nodes 0..n-1, an
 * entry node, and call edges with local call frequencies (how often one invocation of the
 * caller calls the callee). Back edges are the retreating edges of a depth-first search from
 * the entry; each target of a back edge is a recursion head whose cyclic probability is found
 * by propagating from it with every other head's cycle ignored; the final pass from the entry
 * divides each head's entering frequency by 1 - its cyclic probability. Departure from the
 * paper: only the first head of each strongly connected component (the one the search enters
 * it by) is amplified; its other heads' cycles are part of its cyclic probability already, and
 * amplifying each of them again multiplies the estimate once per head (in sqlite3's mutually
 * recursive expression and statement walkers, by 10^10).
 */
#ifndef EDGEPROF_ESTIMATORS_GLOBAL_FREQ_H
#define EDGEPROF_ESTIMATORS_GLOBAL_FREQ_H

#include <stddef.h>
#include <stdint.h>

/* Cyclic probabilities of recursion heads are capped at 1 - GF_EPSILON. */
#define GF_EPSILON 0.1

struct gf_call {
	uint32_t from, to; /* node ids */
	double lfreq;      /* local call frequency */
};

/* Fills CFREQ[0 .. n-1] with the invocation frequency of every node (the entry's is 1 times
 * its recursion factor; nodes not reached from the entry get 0) and GFREQ[0 .. ncalls-1] with
 * each call edge's global frequency (lfreq times the caller's invocation frequency). Several
 * edges between the same pair of nodes are allowed (their frequencies add up). Returns 0,
 * -EINVAL (ENTRY >= N or an edge names a node >= N) or -ENOMEM. */
int global_freq__calls(uint32_t n, uint32_t entry, const struct gf_call *calls, uint32_t ncalls,
		       double *cfreq, double *gfreq);

#endif
