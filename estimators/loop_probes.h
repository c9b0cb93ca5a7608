/*
 * Where to probe to measure loop trip counts (`edgeprof run --loop-stats`), as plain data:
 * for every natural loop of every profiled function (irreducible regions are no natural
 * loops and are not measured), one ITER site in its header
 * block (executed once per header execution, i.e. per trip) and one ENTER site in every block
 * outside the loop with an edge to the header (any entry passes one of them first). Each site
 * carries its stack depth (bytes below rsp at the function's entry), so that the BPF side can
 * name the frame (rsp + depth) and keep recursive activations apart. A loop whose sites
 * cannot all be placed is listed with the reason it is not measured.
 */
#ifndef EDGEPROF_ESTIMATORS_LOOP_PROBES_H
#define EDGEPROF_ESTIMATORS_LOOP_PROBES_H

#include <stddef.h>
#include <stdint.h>

#include "cfg/cfg.h"
#include "estimators/placement.h"

enum loop_probe_event {
	LOOP_PROBE_ITER = 0,  /* one more trip of the entry running in this frame */
	LOOP_PROBE_ENTER = 1, /* the frame's previous entry (if any) is complete */
};

struct loop_probe_site {
	uint64_t addr;	     /* ELF vaddr of the probed instruction */
	uint32_t loop;	     /* index into loop_probe_plan.loops */
	uint32_t block;	     /* the block holding it (its count is the site's hits) */
	uint32_t depth;	     /* rsp at the function's entry - rsp before this instruction */
	uint8_t event;	     /* enum loop_probe_event */
	uint8_t probe_class; /* enum insn_probe_class */
};

struct loop_probe_loop {
	uint32_t func;	 /* index into prog->funcs */
	uint32_t header; /* block id */
	uint64_t header_addr;
	const char *skip;	     /* NULL: measured; else why not (static string) */
	uint32_t first_site, nsites; /* its sites in loop_probe_plan.sites (ITER first) */
};

struct loop_probe_plan {
	struct loop_probe_loop *loops; /* grouped by function, ascending */
	uint32_t nloops, nmeasured;
	uint32_t *func_first;	       /* [nfuncs + 1]: loops of function i are
					* [func_first[i], func_first[i + 1]) */
	struct loop_probe_site *sites; /* of measured loops only */
	size_t nsites;
};

/* The maximum stack depth a site may have (24 bits in a cookie). */
#define LOOP_PROBES_MAX_DEPTH 0xffffffu

/* Plans the loop probes of PROG: every loop of the functions that PL profiles (status other
 * than PLAN_EXCLUDED), each site the instruction of its block that COSTS price lowest.
 * Instructions of class PROBE_NEVER are not used. Returns 0, -ENOMEM, or another negative
 * errno from the decoder (PLAN is then empty; release it in any case). */
int loop_probes__plan(struct loop_probe_plan *plan, const struct cfg_program *prog,
		      const struct placement *pl, const struct site_costs *costs);

/* Frees PLAN's arrays and zeroes it. Safe on a zeroed plan. */
void loop_probes__free(struct loop_probe_plan *plan);

#endif
