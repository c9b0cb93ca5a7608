/*
 * Frames to virtual edges (see frames.h).
 */
#include "frames.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/sort.h"

int block_index__build(struct block_index *bi, const struct cfg_program *prog)
{
	size_t n = 0, i;

	for (i = 0; i < prog->nfuncs; i++)
		n += prog->funcs[i].nblocks;
	bi->v = malloc((n ? n : 1) * sizeof(*bi->v));
	if (!bi->v)
		return -ENOMEM;
	bi->n = 0;
	for (i = 0; i < prog->nfuncs; i++)
		for (uint32_t b = 0; b < prog->funcs[i].nblocks; b++)
			bi->v[bi->n++] = (struct block_ref){ .start = prog->funcs[i].blocks[b].start,
							     .end = prog->funcs[i].blocks[b].end,
							     .func = (uint32_t)i, .block = b };
	if (bi->n)
		sort__by_key_u64(bi->v, bi->n, sizeof(*bi->v), offsetof(struct block_ref, start),
				 false);
	return 0;
}

void block_index__free(struct block_index *bi)
{
	free(bi->v);
	memset(bi, 0, sizeof(*bi));
}

const struct block_ref *block_index__find(const struct block_index *bi, uint64_t addr)
{
	size_t lo = 0, hi = bi->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (bi->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr < bi->v[lo - 1].end)
		return &bi->v[lo - 1];
	return NULL;
}

int frames__virtual_edge(const struct cfg_program *prog, const struct block_index *bi,
			 uint64_t vaddr, enum frame_kind kind, bool activation,
			 struct virtual_edge *ve)
{
	const struct block_ref *r;
	const struct cfg_func *f;
	const struct cfg_block *b;

	memset(ve, 0, sizeof(*ve));
	ve->count = 1;
	if (activation) {
		/* Stopped inside a block: flow entered it and left (or enters) right there. */
		r = block_index__find(bi, vaddr);
		if (!r)
			return -ENOENT;
		f = &prog->funcs[r->func];
		ve->func = r->func;
		if (kind == FRAME_LEFT) {
			ve->from = r->block;
			ve->to = f->nblocks;
			ve->stopped_at = vaddr;
		} else {
			ve->from = f->nblocks;
			ve->to = r->block;
			ve->resumed_at = vaddr;
		}
		return 1;
	}
	if (kind == FRAME_ENTERED) {
		/* Waiting on the call that ends the block just before the return address: the
		 * flow is inside that block, after its instructions. */
		r = block_index__find(bi, vaddr - 1);
		if (!r || r->end != vaddr)
			return -ENOENT;
		ve->func = r->func;
		ve->from = prog->funcs[r->func].nblocks;
		ve->to = r->block;
		ve->resumed_at = vaddr;
		return 1;
	}
	/* Left while waiting on a call: the call ends the block just before the return address. */
	r = block_index__find(bi, vaddr - 1);
	if (!r || r->end != vaddr)
		return -ENOENT;
	f = &prog->funcs[r->func];
	b = &f->blocks[r->block];
	for (uint32_t k = 0; k < b->nsucc; k++) {
		const struct cfg_edge *e = &f->edges[f->succ[b->first_succ + k]];

		if (e->kind == EDGE_CALL_RETURN) {
			ve->func = r->func;
			ve->from = r->block;
			ve->to = f->nblocks;
			return 1;
		}
	}
	return 0; /* the call was already known never to return: its edge goes to EXIT */
}
