/*
 * The call graph of a program: for each function, its direct callees (function indices), the
 * number of indirect call sites and of external call sites (their names are in the functions'
 * cfg_call records). Tail calls are calls. A call through a GOT slot counts as external only;
 * a direct call to an address where no function starts is ignored.
 */
#ifndef EDGEPROF_CFG_CALLGRAPH_H
#define EDGEPROF_CFG_CALLGRAPH_H

#include "cfg.h"

struct cfg_cg_node {
	uint32_t *callees;   /* function indices, unique, ascending */
	uint32_t ncallees;
	uint32_t *callers;   /* function indices, unique, ascending */
	uint32_t ncallers;
	uint32_t nindirect;  /* indirect call / tail-call sites */
	uint32_t nexternal;  /* call sites into PLT stubs or GOT slots */
};

struct cfg_callgraph {
	struct cfg_cg_node *nodes; /* indexed like prog->funcs */
	size_t n;
};

/* Builds the call graph from the call sites of every function. Returns 0 or -ENOMEM. */
int cfg_callgraph__build(struct cfg_callgraph *cg, const struct cfg_program *prog);

void cfg_callgraph__free(struct cfg_callgraph *cg);

#endif
