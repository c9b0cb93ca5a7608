/*
 * Dispatch blocks for irreducible regions (see dispatch.h): per round, dominators and loops of
 * the current graph; if irreducible, the strongly connected components of the graph without
 * its natural back edges (Tarjan), and for each component with two or more entry blocks one
 * dispatch block taking every edge into those entries.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "dominators.h"
#include "loops.h"

void cfg_dispatch__free(struct cfg_dispatch *d)
{
	free(d->f.blocks);
	free(d->f.edges);
	free(d->f.succ);
	free(d->f.pred);
	free(d->contrib);
	memset(d, 0, sizeof(*d));
}

struct tarjan {
	const struct cfg_func *f;
	const bool *skip_edge;
	int32_t *index, *low, next;
	uint32_t *stack, sp, *comp, ncomp;
	bool *on;
	/* iterative DFS */
	uint32_t *cs, *ci;
};

/* Strongly connected components of F's blocks over the edges not in SKIP_EDGE; comp[v]. */
static void scc(struct tarjan *t)
{
	const struct cfg_func *f = t->f;

	for (uint32_t r = 0; r < f->nblocks; r++) {
		uint32_t csp = 0;

		if (t->index[r] >= 0)
			continue;
		t->cs[csp] = r;
		t->ci[csp++] = 0;
		t->index[r] = t->low[r] = t->next++;
		t->stack[t->sp++] = r;
		t->on[r] = true;
		while (csp) {
			uint32_t v = t->cs[csp - 1], k = t->ci[csp - 1];

			if (k < f->blocks[v].nsucc) {
				uint32_t e = f->succ[f->blocks[v].first_succ + k],
					 w = f->edges[e].to;

				t->ci[csp - 1]++;
				if (w >= f->nblocks || t->skip_edge[e])
					continue;
				if (t->index[w] < 0) {
					t->index[w] = t->low[w] = t->next++;
					t->stack[t->sp++] = w;
					t->on[w] = true;
					t->cs[csp] = w;
					t->ci[csp++] = 0;
				} else if (t->on[w] && t->index[w] < t->low[v]) {
					t->low[v] = t->index[w];
				}
				continue;
			}
			if (t->low[v] == t->index[v]) {
				uint32_t w;

				do {
					w = t->stack[--t->sp];
					t->on[w] = false;
					t->comp[w] = t->ncomp;
				} while (w != v);
				t->ncomp++;
			}
			csp--;
			if (csp && t->low[v] < t->low[t->cs[csp - 1]])
				t->low[t->cs[csp - 1]] = t->low[v];
		}
	}
}

/* One round: adds dispatch blocks for the irreducible regions of D->f given its loops LP.
 * Returns the number added, or -ENOMEM. */
static int add_dispatch(struct cfg_dispatch *d, const struct cfg_loops *lp)
{
	struct cfg_func *f = &d->f;
	uint32_t nb = f->nblocks, i, added = 0;
	struct tarjan t = {.f = f, .skip_edge = lp->is_back_edge};
	uint32_t *size = NULL, *nentry = NULL;
	bool *entry = NULL;
	int ret = -ENOMEM;

	t.index = malloc(nb * sizeof(*t.index));
	t.low = malloc(nb * sizeof(*t.low));
	t.stack = malloc(nb * sizeof(*t.stack));
	t.comp = malloc(nb * sizeof(*t.comp));
	t.on = calloc(nb, sizeof(*t.on));
	t.cs = malloc(nb * sizeof(*t.cs));
	t.ci = malloc(nb * sizeof(*t.ci));
	entry = calloc(nb, sizeof(*entry));
	if (!t.index || !t.low || !t.stack || !t.comp || !t.on || !t.cs || !t.ci || !entry)
		goto out;
	for (i = 0; i < nb; i++)
		t.index[i] = -1;
	scc(&t);
	size = calloc(t.ncomp + 1, sizeof(*size));
	nentry = calloc(t.ncomp + 1, sizeof(*nentry));
	if (!size || !nentry)
		goto out;
	for (i = 0; i < nb; i++)
		size[t.comp[i]]++;
	/* Entries: blocks of a component of 2+ blocks entered from outside it (or the entry). */
	for (i = 0; i < nb; i++) {
		bool ent = i == f->entry_block;

		if (size[t.comp[i]] < 2)
			continue;
		for (uint32_t k = 0; !ent && k < f->blocks[i].npred; k++) {
			uint32_t pe = f->pred[f->blocks[i].first_pred + k];

			ent = t.comp[f->edges[pe].from] != t.comp[i];
		}
		if (ent) {
			entry[i] = true;
			nentry[t.comp[i]]++;
		}
	}
	for (uint32_t c = 0; c < t.ncomp; c++) {
		uint32_t h, nent = nentry[c];
		struct cfg_block *nbk;
		struct cfg_edge *ned;
		struct cfg_dispatch_contrib *nct;
		uint32_t nin = 0;

		if (nent < 2)
			continue;
		for (i = 0; i < nb; i++)
			if (entry[i] && t.comp[i] == c)
				nin += f->blocks[i].npred + (i == f->entry_block);
		nbk = realloc(f->blocks, (f->nblocks + 1) * sizeof(*nbk));
		if (!nbk)
			goto out;
		f->blocks = nbk;
		ned = realloc(f->edges, (f->nedges + nent) * sizeof(*ned));
		if (!ned)
			goto out;
		f->edges = ned;
		nct = realloc(d->contrib, (d->ncontrib + nin) * sizeof(*nct));
		if (!nct)
			goto out;
		d->contrib = nct;
		h = f->nblocks++;
		memset(&f->blocks[h], 0, sizeof(f->blocks[h]));
		/* EXIT is nblocks: it moves up by one. */
		for (uint32_t k = 0; k < f->nedges; k++)
			if (f->edges[k].to == h)
				f->edges[k].to = h + 1;
		for (i = 0; i < nb; i++) {
			uint32_t ne;

			if (!entry[i] || t.comp[i] != c)
				continue;
			if (!f->blocks[h].start)
				f->blocks[h].start = f->blocks[h].end = f->blocks[i].start;
			ne = f->nedges++;
			f->edges[ne] =
			    (struct cfg_edge){.from = h, .to = i, .kind = EDGE_SWITCH, .ncases = 1};
			for (uint32_t k = 0; k < f->blocks[i].npred; k++) {
				uint32_t pe = f->pred[f->blocks[i].first_pred + k];

				f->edges[pe].to = h;
				d->contrib[d->ncontrib++] = (struct cfg_dispatch_contrib){ne, pe};
			}
			if (i == f->entry_block) {
				f->entry_block = h;
				d->contrib[d->ncontrib++] =
				    (struct cfg_dispatch_contrib){ne, CFG_DISPATCH_CALLS};
			}
		}
		added++;
	}
	ret = (int)added;
out:
	free(t.index), free(t.low), free(t.stack), free(t.comp), free(t.on), free(t.cs);
	free(t.ci), free(entry), free(size), free(nentry);
	return ret;
}

int cfg_dispatch__build(struct cfg_dispatch *d, const struct cfg_func *f, uint32_t max_rounds)
{
	struct cfg_func *g = &d->f;
	int ret;

	memset(d, 0, sizeof(*d));
	*g = *f;
	g->blocks = malloc((f->nblocks + 1) * sizeof(*g->blocks));
	g->edges = malloc((f->nedges + 1) * sizeof(*g->edges));
	g->succ = g->pred = NULL;
	if (!g->blocks || !g->edges)
		return -ENOMEM;
	memcpy(g->blocks, f->blocks, f->nblocks * sizeof(*g->blocks));
	memcpy(g->edges, f->edges, f->nedges * sizeof(*g->edges));
	d->norig_blocks = f->nblocks;
	d->norig_edges = f->nedges;
	for (;;) {
		struct cfg_domtree dom;
		struct cfg_loops lp;
		bool reducible;
		int n = 0;

		ret = cfg_func__index_edges(g);
		if (ret)
			return ret;
		ret = cfg_dom__compute(&dom, g);
		if (ret)
			return ret;
		ret = cfg_loops__compute(&lp, g, &dom);
		if (ret) {
			cfg_dom__free(&dom);
			return ret;
		}
		reducible = lp.reducible;
		if (!reducible && d->rounds < max_rounds) {
			n = add_dispatch(d, &lp);
			d->rounds++;
		}
		cfg_loops__free(&lp);
		cfg_dom__free(&dom);
		if (reducible)
			return 0;
		if (n < 0)
			return n;
		if (n == 0)
			return -ENOTSUP; /* out of rounds, or no region found */
	}
}

void cfg_dispatch__counts(const struct cfg_dispatch *d, int64_t *edge_count, int64_t *block_count,
			  int64_t calls)
{
	uint32_t i;

	for (i = d->norig_edges; i < d->f.nedges; i++)
		edge_count[i] = 0;
	for (i = d->norig_blocks; i < d->f.nblocks; i++)
		block_count[i] = 0;
	for (i = 0; i < d->ncontrib; i++) {
		const struct cfg_dispatch_contrib *c = &d->contrib[i];
		int64_t v = c->src == CFG_DISPATCH_CALLS ? calls : edge_count[c->src];

		edge_count[c->edge] += v > 0 ? v : 0;
	}
	for (i = d->norig_edges; i < d->f.nedges; i++)
		block_count[d->f.edges[i].from] += edge_count[i];
}
