/*
 * Basic operations on a built CFG: edge indexing (successor and predecessor lists), lookups
 * by address, and release. The construction itself lives in build.c.
 */
#include "cfg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *cfg_edge_kind__name(enum cfg_edge_kind kind)
{
	static const char *const names[EDGE_KIND_COUNT] = {
		[EDGE_FALLTHROUGH] = "fallthrough", [EDGE_TAKEN] = "taken",
		[EDGE_NOT_TAKEN] = "not_taken",     [EDGE_JUMP] = "jump",
		[EDGE_SWITCH] = "switch",           [EDGE_CALL_RETURN] = "call_return",
		[EDGE_TAIL_CALL] = "tail_call",     [EDGE_RETURN] = "return",
		[EDGE_NORETURN] = "noreturn",       [EDGE_UNRESOLVED] = "unresolved",
		[EDGE_EXCEPTION] = "exception",
	};
	return (unsigned)kind < EDGE_KIND_COUNT ? names[kind] : "?";
}

int cfg_func__index_edges(struct cfg_func *f)
{
	uint32_t nv = f->nblocks + 1, *nout, *nin, i;

	free(f->succ);
	free(f->pred);
	f->succ = malloc(sizeof(*f->succ) * (f->nedges ? f->nedges : 1));
	f->pred = malloc(sizeof(*f->pred) * (f->nedges ? f->nedges : 1));
	nout = calloc(nv + 1, sizeof(*nout));
	nin = calloc(nv + 1, sizeof(*nin));
	if (!f->succ || !f->pred || !nout || !nin) {
		free(nout);
		free(nin);
		return -ENOMEM;
	}
	for (i = 0; i < f->nedges; i++) {
		nout[f->edges[i].from + 1]++;
		nin[f->edges[i].to + 1]++;
	}
	for (i = 0; i < nv; i++) {
		nout[i + 1] += nout[i];
		nin[i + 1] += nin[i];
	}
	for (i = 0; i < f->nblocks; i++) {
		f->blocks[i].first_succ = nout[i];
		f->blocks[i].nsucc = nout[i + 1] - nout[i];
		f->blocks[i].first_pred = nin[i];
		f->blocks[i].npred = nin[i + 1] - nin[i];
	}
	f->exit_first_pred = nin[f->nblocks];
	f->exit_npred = nin[f->nblocks + 1] - nin[f->nblocks];
	/* Stable fill keeps edges in id order within each block. */
	for (i = 0; i < f->nedges; i++) {
		f->succ[nout[f->edges[i].from]++] = i;
		f->pred[nin[f->edges[i].to]++] = i;
	}
	free(nout);
	free(nin);
	return 0;
}

void cfg_func__release(struct cfg_func *f)
{
	free(f->name);
	free(f->blocks);
	free(f->edges);
	free(f->succ);
	free(f->pred);
	free(f->insns);
	free(f->calls);
	free(f->tables);
	free(f->unresolved);
	free(f->foreign);
	memset(f, 0, sizeof(*f));
}

int cfg_func__block_containing(const struct cfg_func *f, uint64_t addr)
{
	uint32_t lo = 0, hi = f->nblocks;

	/* The last block starting at or below ADDR (blocks are sorted by start; the only
	 * overlap, a prefix pair, nests the inner block at the end of the outer one). */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (f->blocks[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < f->blocks[lo - 1].end ? (int)(lo - 1) : -1;
}

bool cfg_func__prefix_pair(const struct cfg_func *f, uint32_t b)
{
	const struct cfg_block *o, *in;
	const struct cfg_insn *oi, *ii;

	if (b == 0 || b >= f->nblocks)
		return false;
	o = &f->blocks[b - 1];
	in = &f->blocks[b];
	if (!o->ninsns || in->ninsns != 1 || in->start <= o->start || in->start >= o->end ||
	    in->end != o->end)
		return false;
	oi = &f->insns[o->first_insn + o->ninsns - 1];
	ii = &f->insns[in->first_insn];
	return oi->overlap && ii->overlap && oi->addr < ii->addr &&
	       oi->addr + oi->size == ii->addr + ii->size;
}

bool cfg_func__blocks_ok(const struct cfg_func *f)
{
	for (uint32_t b = 0; b < f->nblocks; b++) {
		if (f->blocks[b].start >= f->blocks[b].end)
			return false;
		if (b && f->blocks[b].start < f->blocks[b - 1].end &&
		    !(cfg_func__prefix_pair(f, b) && !(b > 1 && cfg_func__prefix_pair(f, b - 1))))
			return false;
		if (b && f->blocks[b].start <= f->blocks[b - 1].start)
			return false;
	}
	return true;
}

int cfg_func__block_at(const struct cfg_func *f, uint64_t addr)
{
	int b = cfg_func__block_containing(f, addr);

	return b >= 0 && f->blocks[b].start == addr ? b : -1;
}

bool cfg_func__is_insn_start(const struct cfg_func *f, uint64_t addr)
{
	int b = cfg_func__block_containing(f, addr);
	uint32_t lo, hi;

	if (b < 0)
		return false;
	lo = f->blocks[b].first_insn;
	hi = lo + f->blocks[b].ninsns;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (f->insns[mid].addr < addr)
			lo = mid + 1;
		else if (f->insns[mid].addr > addr)
			hi = mid;
		else
			return true;
	}
	return false;
}

struct cfg_func *cfg_program__func_at(const struct cfg_program *prog, uint64_t addr)
{
	size_t lo = 0, hi = prog->nfuncs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (prog->funcs[mid].entry < addr)
			lo = mid + 1;
		else if (prog->funcs[mid].entry > addr)
			hi = mid;
		else
			return &prog->funcs[mid];
	}
	return NULL;
}

struct cfg_func *cfg_program__find(const struct cfg_program *prog, const char *name)
{
	struct cfg_func *f;
	unsigned long long a;
	size_t i;
	char *end;

	for (i = 0; i < prog->nfuncs; i++)
		if (prog->funcs[i].name && strcmp(prog->funcs[i].name, name) == 0)
			return &prog->funcs[i];
	if (strncmp(name, "0x", 2) && strncmp(name, "0X", 2))
		return NULL;
	errno = 0;
	a = strtoull(name + 2, &end, 16);
	if (errno || end == name + 2 || *end)
		return NULL;
	f = cfg_program__func_at(prog, a);
	for (i = 0; !f && i < prog->nfuncs; i++)
		if (cfg_func__block_containing(&prog->funcs[i], a) >= 0)
			f = &prog->funcs[i];
	return f;
}
