/*
 * Natural loops of one function. Back edges are edges whose target dominates their source;
 * the bodies of all back edges into one header are merged into one loop. Natural loops with
 * different headers are either disjoint or nested, so sorting them by decreasing body size
 * puts every loop after all the loops that contain it, and the innermost-loop-so-far of its
 * header is then its parent. Reducibility comes from an iterative DFS: a retreating edge
 * whose target does not dominate its source enters a cycle somewhere other than its header.
 */
#include "loops.h"

#include "error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Sort key for loop order: larger bodies first, then lower header. */
static int cmp_loop_outer_first(const void *a, const void *b)
{
	const struct cfg_loop *x = a, *y = b;

	if (x->nblocks != y->nblocks)
		return x->nblocks > y->nblocks ? -1 : 1;
	return x->header < y->header ? -1 : x->header > y->header;
}

static bool reached(const struct cfg_domtree *dom, uint32_t v)
{
	return v < dom->n && dom->idom[v] != CFG_NO_VERTEX;
}

/*
 * The body of the loop headed by L->header, whose back edges are already in L: the header
 * plus every reached block that reaches a latch without passing through the header. MARK
 * (per block) is set to STAMP for body blocks; WORK is scratch of nblocks entries.
 */
static int loop_body(struct cfg_loop *l, const struct cfg_func *f,
		     const struct cfg_domtree *dom, uint32_t *mark, uint32_t stamp,
		     uint32_t *work)
{
	uint32_t n = 0, sp = 0, i, j;

	mark[l->header] = stamp;
	work[n++] = l->header;
	for (i = 0; i < l->nback; i++) {
		uint32_t latch = f->edges[l->back_edges[i]].from;

		if (mark[latch] != stamp) {
			mark[latch] = stamp;
			work[n++] = latch;
		}
	}
	/* work[1..n) doubles as the worklist: every block is scanned once. */
	sp = 1;
	while (sp < n) {
		uint32_t b = work[sp++];
		const struct cfg_block *blk = &f->blocks[b];

		for (j = 0; j < blk->npred; j++) {
			uint32_t p = f->edges[f->pred[blk->first_pred + j]].from;

			if (p < f->nblocks && mark[p] != stamp && reached(dom, p)) {
				mark[p] = stamp;
				work[n++] = p;
			}
		}
	}
	l->blocks = malloc(sizeof(*l->blocks) * n);
	if (!l->blocks)
		return -ENOMEM;
	memcpy(l->blocks, work, sizeof(*l->blocks) * n);
	qsort(l->blocks, n, sizeof(*l->blocks), cmp_u32);
	l->nblocks = n;
	return 0;
}

/* Edges from L's body (marked STAMP in MARK) to outside it, ascending edge ids. */
static int loop_exits(struct cfg_loop *l, const struct cfg_func *f, const uint32_t *mark,
		      uint32_t stamp)
{
	uint32_t i, j, n = 0, cap = 0;
	uint32_t *ex = NULL;

	for (i = 0; i < l->nblocks; i++) {
		const struct cfg_block *blk = &f->blocks[l->blocks[i]];

		for (j = 0; j < blk->nsucc; j++) {
			uint32_t e = f->succ[blk->first_succ + j], t = f->edges[e].to;

			if (t < f->nblocks && mark[t] == stamp)
				continue;
			if (n == cap) {
				uint32_t *p;

				cap = cap ? 2 * cap : 4;
				p = realloc(ex, sizeof(*ex) * cap);
				if (!p) {
					free(ex);
					return -ENOMEM;
				}
				ex = p;
			}
			ex[n++] = e;
		}
	}
	if (n)
		qsort(ex, n, sizeof(*ex), cmp_u32);
	l->exits = ex;
	l->nexits = n;
	return 0;
}

int cfg_loops__retreating(const struct cfg_func *f, bool *retreating, uint32_t *post,
			  uint32_t *npost)
{
	uint32_t nb = f->nblocks, sp = 0, n = 0;
	uint32_t *stack = malloc(sizeof(*stack) * (nb ? nb : 1));
	uint32_t *cursor = malloc(sizeof(*cursor) * (nb ? nb : 1));
	uint8_t *state = calloc(nb ? nb : 1, 1); /* 0 new, 1 on stack, 2 done */
	int err = 0;

	if (!stack || !cursor || !state) {
		err = -ENOMEM;
		goto out;
	}
	memset(retreating, 0, f->nedges * sizeof(*retreating));
	if (f->entry_block < nb) {
		stack[sp++] = f->entry_block;
		cursor[f->entry_block] = 0;
		state[f->entry_block] = 1;
	}
	while (sp) {
		uint32_t v = stack[sp - 1];
		const struct cfg_block *blk = &f->blocks[v];

		if (cursor[v] < blk->nsucc) {
			uint32_t e = f->succ[blk->first_succ + cursor[v]++];
			uint32_t w = f->edges[e].to;

			if (w >= nb)
				continue;
			if (state[w] == 0) {
				state[w] = 1;
				cursor[w] = 0;
				stack[sp++] = w;
			} else if (state[w] == 1) {
				retreating[e] = true;
			}
			continue;
		}
		state[v] = 2;
		if (post)
			post[n] = v;
		n++;
		sp--;
	}
	if (npost)
		*npost = n;
out:
	free(stack);
	free(cursor);
	free(state);
	return err;
}

/* Every retreating edge (cfg_loops__retreating) whose target does not dominate its source is
 * recorded as irreducible, in edge order. */
static int find_irreducible(struct cfg_loops *lp, const struct cfg_func *f,
			    const struct cfg_domtree *dom)
{
	bool *retreating = calloc(f->nedges + 1, sizeof(*retreating));
	uint32_t *irr = NULL, n = 0;
	int err = -ENOMEM;

	if (!retreating || cfg_loops__retreating(f, retreating, NULL, NULL) ||
	    !(irr = malloc(sizeof(*irr) * (f->nedges + 1))))
		goto out;
	for (uint32_t e = 0; e < f->nedges; e++)
		if (retreating[e] && !cfg_dom__dominates(dom, f->edges[e].to, f->edges[e].from))
			irr[n++] = e;
	if (!n) {
		free(irr);
		irr = NULL;
	}
	lp->irreducible_edges = irr;
	lp->nirreducible = n;
	lp->reducible = n == 0;
	err = 0;
out:
	free(retreating);
	return err;
}

int cfg_loops__compute(struct cfg_loops *lp, const struct cfg_func *f,
		       const struct cfg_domtree *dom)
{
	uint32_t nb = f->nblocks, ne = f->nedges, e, i, j, nloops = 0;
	uint32_t *nback = NULL, *mark = NULL, *work = NULL, *slot = NULL;
	int err = -ENOMEM;

	memset(lp, 0, sizeof(*lp));
	if (dom->post || dom->n != nb + 1)
		return cfg_error(EINVAL, "loops of '%s' need its dominator tree",
				 f->name ? f->name : "?");
	lp->innermost = malloc(sizeof(*lp->innermost) * (nb ? nb : 1));
	lp->is_back_edge = calloc(ne ? ne : 1, sizeof(*lp->is_back_edge));
	nback = calloc(nb ? nb : 1, sizeof(*nback));
	slot = malloc(sizeof(*slot) * (nb ? nb : 1));
	mark = calloc(nb ? nb : 1, sizeof(*mark));
	work = malloc(sizeof(*work) * (nb ? nb : 1));
	if (!lp->innermost || !lp->is_back_edge || !nback || !slot || !mark || !work)
		goto fail;
	for (i = 0; i < nb; i++)
		lp->innermost[i] = -1;

	/* Back edges, counted per header. */
	for (e = 0; e < ne; e++) {
		const struct cfg_edge *ed = &f->edges[e];

		if (ed->to >= nb || !reached(dom, ed->from))
			continue;
		if (cfg_dom__dominates(dom, ed->to, ed->from)) {
			lp->is_back_edge[e] = true;
			if (nback[ed->to]++ == 0)
				nloops++;
		}
	}

	/* One loop per header, in header order for now. */
	lp->loops = calloc(nloops ? nloops : 1, sizeof(*lp->loops));
	if (!lp->loops)
		goto fail;
	lp->nloops = nloops;
	for (i = 0, j = 0; i < nb; i++) {
		if (!nback[i])
			continue;
		lp->loops[j].header = i;
		lp->loops[j].parent = -1;
		lp->loops[j].back_edges = malloc(sizeof(uint32_t) * nback[i]);
		if (!lp->loops[j].back_edges)
			goto fail;
		slot[i] = j++;
	}
	for (e = 0; e < ne; e++) {
		if (lp->is_back_edge[e]) {
			struct cfg_loop *l = &lp->loops[slot[f->edges[e].to]];

			l->back_edges[l->nback++] = e;
		}
	}
	for (i = 0; i < nloops; i++) {
		err = loop_body(&lp->loops[i], f, dom, mark, i + 1, work);
		if (!err)
			err = loop_exits(&lp->loops[i], f, mark, i + 1);
		if (err)
			goto fail;
	}

	/* Outer loops first; then parent = innermost loop seen so far at the header. */
	qsort(lp->loops, nloops, sizeof(*lp->loops), cmp_loop_outer_first);
	for (i = 0; i < nloops; i++) {
		struct cfg_loop *l = &lp->loops[i];

		l->parent = lp->innermost[l->header];
		l->depth = l->parent < 0 ? 1 : lp->loops[l->parent].depth + 1;
		for (j = 0; j < l->nblocks; j++)
			lp->innermost[l->blocks[j]] = (int32_t)i;
	}

	err = find_irreducible(lp, f, dom);
	if (err)
		goto fail;
	free(nback);
	free(slot);
	free(mark);
	free(work);
	return 0;
fail:
	free(nback);
	free(slot);
	free(mark);
	free(work);
	cfg_loops__free(lp);
	return cfg_error(-err, "out of memory for the loops of '%s'", f->name ? f->name : "?");
}

bool cfg_loops__contains(const struct cfg_loops *lp, uint32_t l, uint32_t b)
{
	const struct cfg_loop *loop;
	uint32_t lo = 0, hi;

	if (l >= lp->nloops)
		return false;
	loop = &lp->loops[l];
	hi = loop->nblocks;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (loop->blocks[mid] < b)
			lo = mid + 1;
		else if (loop->blocks[mid] > b)
			hi = mid;
		else
			return true;
	}
	return false;
}

void cfg_loops__free(struct cfg_loops *lp)
{
	uint32_t i;

	for (i = 0; lp->loops && i < lp->nloops; i++) {
		free(lp->loops[i].blocks);
		free(lp->loops[i].back_edges);
		free(lp->loops[i].exits);
	}
	free(lp->loops);
	free(lp->innermost);
	free(lp->is_back_edge);
	free(lp->irreducible_edges);
	memset(lp, 0, sizeof(*lp));
}
