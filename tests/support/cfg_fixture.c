/*
 * Hand-built CFGs for unit tests (see cfg_fixture.h).
 */
#include "cfg_fixture.h"

#include <stdlib.h>
#include <string.h>

/* A plausible terminator for a block whose first out-edge has kind KIND. */
static uint8_t flow_for(enum cfg_edge_kind kind)
{
	switch (kind) {
	case EDGE_TAKEN:
	case EDGE_NOT_TAKEN:
		return INSN_JCC;
	case EDGE_JUMP:
	case EDGE_TAIL_CALL:
		return INSN_JMP;
	case EDGE_SWITCH:
	case EDGE_UNRESOLVED:
		return INSN_JMP_IND;
	case EDGE_CALL_RETURN:
		return INSN_CALL;
	case EDGE_RETURN:
		return INSN_RET;
	case EDGE_NORETURN:
		return INSN_TRAP;
	default:
		return INSN_PLAIN;
	}
}

struct cfg_func *cfg_fixture__func(const char *name, uint32_t nblocks, uint32_t entry,
				   const struct fx_edge *edges, uint32_t nedges)
{
	struct cfg_func *f;
	uint32_t i;

	if (entry >= nblocks && nblocks)
		return NULL;
	for (i = 0; i < nedges; i++)
		if (edges[i].from >= nblocks || edges[i].to > nblocks)
			return NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->name = strdup(name ? name : "fixture");
	f->nblocks = nblocks;
	f->entry_block = entry;
	f->entry = CFG_FIXTURE_BASE + (uint64_t)entry * CFG_FIXTURE_BLOCK_SIZE;
	f->sym_size = (uint64_t)nblocks * CFG_FIXTURE_BLOCK_SIZE;
	f->blocks = calloc(nblocks ? nblocks : 1, sizeof(*f->blocks));
	f->insns = calloc(nblocks ? nblocks : 1, sizeof(*f->insns));
	f->edges = calloc(nedges ? nedges : 1, sizeof(*f->edges));
	if (!f->name || !f->blocks || !f->insns || !f->edges)
		goto fail;
	f->ninsns = nblocks;
	f->nedges = nedges;
	for (i = 0; i < nblocks; i++) {
		uint64_t start = CFG_FIXTURE_BASE + (uint64_t)i * CFG_FIXTURE_BLOCK_SIZE;

		f->blocks[i].start = start;
		f->blocks[i].end = start + CFG_FIXTURE_BLOCK_SIZE;
		f->blocks[i].first_insn = i;
		f->blocks[i].ninsns = 1;
		f->insns[i].addr = start;
		f->insns[i].size = CFG_FIXTURE_BLOCK_SIZE;
		f->insns[i].flow = INSN_PLAIN;
		f->insns[i].probe_class = PROBE_STEPPED;
	}
	for (i = 0; i < nedges; i++) {
		f->edges[i].from = edges[i].from;
		f->edges[i].to = edges[i].to;
		f->edges[i].kind = (uint8_t)edges[i].kind;
	}
	/* The first out-edge of each block decides its instruction's flow. */
	for (i = nedges; i-- > 0;)
		f->insns[edges[i].from].flow = flow_for(edges[i].kind);
	if (cfg_func__index_edges(f))
		goto fail;
	return f;
fail:
	cfg_fixture__free(f);
	return NULL;
}

void cfg_fixture__free(struct cfg_func *f)
{
	if (!f)
		return;
	cfg_func__release(f);
	free(f);
}
