/*
 * Ball and Larus's heuristic weighting (section 5), see weights.h. One topological traversal
 * of the graph without its back edges: a vertex weighs the sum of its incoming non-back
 * edges (the root also gets EXIT->root's 1); at a loop entry, each exit edge of its loop gets
 * the entry's weight divided by the number of exits; then the vertex's other out-edges share
 * its weight (times LOOP_MULTIPLIER at a loop entry) minus what its own loop exits took.
 */
#include "weights.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int weights__ball_larus(const struct cfg_func *f, const struct cfg_loops *lp, double *w)
{
	uint32_t nv = f->nblocks + 1, ne = f->nedges, i, k;
	bool *back = calloc(ne ? ne : 1, sizeof(*back));
	bool *is_exit = calloc(ne ? ne : 1, sizeof(*is_exit));
	bool *done = calloc(ne ? ne : 1, sizeof(*done));
	bool *reach = calloc(nv, sizeof(*reach));
	uint32_t *indeg = calloc(nv, sizeof(*indeg));
	uint32_t *queue = malloc(nv * sizeof(*queue));
	int32_t *header_loop = malloc(nv * sizeof(*header_loop));
	uint32_t qh = 0, qt = 0;
	int err = -ENOMEM;

	if (!back || !is_exit || !done || !reach || !indeg || !queue || !header_loop)
		goto out;
	for (i = 0; i < ne; i++)
		w[i] = 0;
	w[ne] = 1.0;
	err = 0;
	if (f->nblocks == 0)
		goto out;
	for (i = 0; i < ne; i++)
		back[i] = lp->is_back_edge && lp->is_back_edge[i];
	for (i = 0; i < lp->nirreducible; i++)
		back[lp->irreducible_edges[i]] = true;
	for (i = 0; i < nv; i++)
		header_loop[i] = -1;
	for (i = 0; i < lp->nloops; i++) {
		header_loop[lp->loops[i].header] = (int32_t)i;
		for (k = 0; k < lp->loops[i].nexits; k++)
			is_exit[lp->loops[i].exits[k]] = true;
	}
	/* Reachable vertices from the root (EXIT is never expanded). */
	queue[qt++] = f->entry_block;
	reach[f->entry_block] = true;
	while (qh < qt) {
		uint32_t v = queue[qh++];

		if (v == f->nblocks)
			continue;
		for (k = 0; k < f->blocks[v].nsucc; k++) {
			uint32_t e = f->succ[f->blocks[v].first_succ + k], t = f->edges[e].to;

			if (!reach[t]) {
				reach[t] = true;
				queue[qt++] = t;
			}
		}
	}
	for (i = 0; i < ne; i++)
		if (!back[i] && reach[f->edges[i].from])
			indeg[f->edges[i].to]++;
	/* Kahn's topological traversal of the back-edge-free graph. */
	qh = qt = 0;
	queue[qt++] = f->entry_block;
	while (qh < qt) {
		uint32_t v = queue[qh++], nout = 0, m = 0;
		double W = v == f->entry_block ? 1.0 : 0.0, WE = 0, Wv;

		if (v == f->nblocks)
			continue;
		for (k = 0; k < f->blocks[v].npred; k++) {
			uint32_t e = f->pred[f->blocks[v].first_pred + k];

			if (!back[e])
				W += w[e];
		}
		/* Rule 2: a loop entry hands its weight to its loop's exits. */
		if (header_loop[v] >= 0) {
			const struct cfg_loop *l = &lp->loops[header_loop[v]];

			for (k = 0; k < l->nexits; k++)
				if (!done[l->exits[k]]) {
					w[l->exits[k]] = W / l->nexits;
					done[l->exits[k]] = true;
				}
		}
		/* Rule 3: the other out-edges share the rest. */
		Wv = header_loop[v] >= 0 ? W * LOOP_MULTIPLIER : W;
		nout = f->blocks[v].nsucc;
		for (k = 0; k < nout; k++) {
			uint32_t e = f->succ[f->blocks[v].first_succ + k];

			if (is_exit[e])
				WE += w[e];
			else
				m++;
		}
		for (k = 0; k < nout; k++) {
			uint32_t e = f->succ[f->blocks[v].first_succ + k], t = f->edges[e].to;

			if (!is_exit[e] && !done[e]) {
				w[e] = Wv > WE ? (Wv - WE) / m : 0.0;
				done[e] = true;
			}
			if (!back[e] && --indeg[t] == 0)
				queue[qt++] = t;
		}
	}
out:
	free(back);
	free(is_exit);
	free(done);
	free(reach);
	free(indeg);
	free(queue);
	free(header_loop);
	return err;
}
