/*
 * The program's call graph from the call sites recorded by the builder. A site into a PLT
 * stub or GOT slot is external (even when it is an indirect call through the GOT); any other
 * indirect site is counted as indirect; a direct call or direct tail call whose target is a
 * function entry of this program is an edge caller -> callee.
 */
#include "callgraph.h"

#include "error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorts and deduplicates A[0..N), returns the new count. */
static uint32_t sort_unique(uint32_t *a, uint32_t n)
{
	uint32_t i, m = 0;

	if (!n)
		return 0;
	qsort(a, n, sizeof(*a), cmp_u32);
	for (i = 0; i < n; i++)
		if (m == 0 || a[m - 1] != a[i])
			a[m++] = a[i];
	return m;
}

/* Collects the callees and site counts of function I into NODE. */
static int callees_of(struct cfg_cg_node *node, const struct cfg_program *prog, size_t i)
{
	const struct cfg_func *f = &prog->funcs[i];
	uint32_t k, n = 0;

	if (f->ncalls) {
		node->callees = malloc(sizeof(*node->callees) * f->ncalls);
		if (!node->callees)
			return -ENOMEM;
	}
	for (k = 0; k < f->ncalls; k++) {
		const struct cfg_call *c = &f->calls[k];
		const struct cfg_func *callee;

		if (c->external) {
			node->nexternal++;
			continue;
		}
		if (c->indirect) {
			node->nindirect++;
			continue;
		}
		if (!c->target)
			continue;
		callee = cfg_program__func_at(prog, c->target);
		if (callee)
			node->callees[n++] = (uint32_t)(callee - prog->funcs);
	}
	node->ncallees = sort_unique(node->callees, n);
	if (!node->ncallees) {
		free(node->callees);
		node->callees = NULL;
	}
	return 0;
}

int cfg_callgraph__build(struct cfg_callgraph *cg, const struct cfg_program *prog)
{
	size_t i, n = prog->nfuncs;
	uint32_t k;

	memset(cg, 0, sizeof(*cg));
	if (n > UINT32_MAX)
		return cfg_error(EOVERFLOW, "too many functions for a call graph (%zu)", n);
	cg->nodes = calloc(n ? n : 1, sizeof(*cg->nodes));
	if (!cg->nodes)
		return cfg_error(ENOMEM, "out of memory for the call graph");
	cg->n = n;
	for (i = 0; i < n; i++)
		if (callees_of(&cg->nodes[i], prog, i))
			goto nomem;

	/* Callers: count, allocate, fill in caller order (hence ascending and unique, since
	 * each caller's callee list is unique). */
	for (i = 0; i < n; i++)
		for (k = 0; k < cg->nodes[i].ncallees; k++)
			cg->nodes[cg->nodes[i].callees[k]].ncallers++;
	for (i = 0; i < n; i++) {
		if (!cg->nodes[i].ncallers)
			continue;
		cg->nodes[i].callers = malloc(sizeof(uint32_t) * cg->nodes[i].ncallers);
		if (!cg->nodes[i].callers)
			goto nomem;
		cg->nodes[i].ncallers = 0;
	}
	for (i = 0; i < n; i++) {
		for (k = 0; k < cg->nodes[i].ncallees; k++) {
			struct cfg_cg_node *callee = &cg->nodes[cg->nodes[i].callees[k]];

			callee->callers[callee->ncallers++] = (uint32_t)i;
		}
	}
	return 0;
nomem:
	cfg_callgraph__free(cg);
	return cfg_error(ENOMEM, "out of memory for the call graph");
}

void cfg_callgraph__free(struct cfg_callgraph *cg)
{
	size_t i;

	for (i = 0; cg->nodes && i < cg->n; i++) {
		free(cg->nodes[i].callees);
		free(cg->nodes[i].callers);
	}
	free(cg->nodes);
	memset(cg, 0, sizeof(*cg));
}
