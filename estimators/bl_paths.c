/*
 * Ball-Larus path numbering of one function (see bl_paths.h): retreating edges of a depth-first
 * search (cfg_loops__retreating), path counts in its postorder (a DAG successor always finishes
 * first), increments in successor order, then the decoding of a number back into its edges; event
 * counting moves the increments to the chords of a spanning tree by vertex potentials.
 */
#include "estimators/bl_paths.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/loops.h"
#include "estimators/union_find.h"

void bl_paths__free(struct bl_paths *bp)
{
	free(bp->back);
	free(bp->reached);
	free(bp->npaths);
	free(bp->inc);
	free(bp->entry_inc);
	free(bp->exit_inc);
	free(bp->ev_inc);
	free(bp->ev_entry_inc);
	free(bp->ev_exit_inc);
	memset(bp, 0, sizeof(*bp));
}

void bl_path__free(struct bl_path *p)
{
	free(p->edges);
	memset(p, 0, sizeof(*p));
}

/* *ACC += X unless that passes LIMIT. */
static bool add_within(uint64_t *acc, uint64_t x, uint64_t limit)
{
	uint64_t s;

	if (__builtin_add_overflow(*acc, x, &s) || s > limit)
		return false;
	*acc = s;
	return true;
}

int bl_paths__number(struct bl_paths *bp, const struct cfg_func *f, uint64_t limit)
{
	uint32_t nb = f->nblocks, ne = f->nedges, *post, npost;
	uint64_t n;
	int err = -ENOMEM;

	memset(bp, 0, sizeof(*bp));
	if (!nb || f->entry_block >= nb)
		return -EINVAL;
	bp->nblocks = nb;
	bp->nedges = ne;
	bp->back = calloc(ne + 1, sizeof(*bp->back));
	bp->reached = calloc(nb + 1, sizeof(*bp->reached));
	bp->npaths = calloc(nb + 1, sizeof(*bp->npaths));
	bp->inc = calloc(ne + 1, sizeof(*bp->inc));
	bp->entry_inc = calloc(ne + 1, sizeof(*bp->entry_inc));
	bp->exit_inc = calloc(ne + 1, sizeof(*bp->exit_inc));
	post = malloc((nb + 1) * sizeof(*post));
	if (!bp->back || !bp->reached || !bp->npaths || !bp->inc || !bp->entry_inc ||
	    !bp->exit_inc || !post)
		goto fail;
	if (cfg_loops__retreating(f, bp->back, post, &npost))
		goto fail;
	for (uint32_t i = 0; i < npost; i++)
		bp->reached[post[i]] = true;
	bp->npaths[nb] = 1; /* EXIT */
	err = -EOVERFLOW;
	for (uint32_t i = 0; i < npost; i++) {
		uint32_t v = post[i];
		const struct cfg_block *b = &f->blocks[v];

		n = 0;
		/* The DAG's edges first, in successor order, then v->EXIT for each back edge. */
		for (uint32_t k = 0; k < b->nsucc; k++) {
			uint32_t e = f->succ[b->first_succ + k], t = f->edges[e].to;

			if (bp->back[e])
				continue;
			bp->inc[e] = n;
			if (!add_within(&n, bp->npaths[t < nb ? t : nb], limit))
				goto fail;
		}
		for (uint32_t k = 0; k < b->nsucc; k++) {
			uint32_t e = f->succ[b->first_succ + k];

			if (!bp->back[e])
				continue;
			bp->exit_inc[e] = n;
			if (!add_within(&n, 1, limit))
				goto fail;
		}
		bp->npaths[v] = n;
	}
	/* ENTRY: the entry block first (r starts at 0), then ENTRY->w for each back edge. */
	n = bp->npaths[f->entry_block];
	for (uint32_t e = 0; e < ne; e++) {
		if (!bp->back[e])
			continue;
		bp->entry_inc[e] = n;
		if (!add_within(&n, bp->npaths[f->edges[e].to], limit))
			goto fail;
	}
	bp->total = n;
	free(post);
	return 0;
fail:
	free(post);
	bl_paths__free(bp);
	return err;
}

static int push_edge(struct bl_path *p, uint32_t e)
{
	if (p->nedges == p->cap) {
		uint32_t cap = p->cap ? 2 * p->cap : 16;
		uint32_t *n = realloc(p->edges, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->edges = n;
		p->cap = cap;
	}
	p->edges[p->nedges++] = e;
	return 0;
}

int bl_paths__decode(const struct bl_paths *bp, const struct cfg_func *f, uint64_t id,
		     struct bl_path *p)
{
	uint32_t nb = bp->nblocks, v;
	uint64_t r = id;

	p->nedges = 0;
	p->start_edge = p->end_edge = UINT32_MAX;
	if (id >= bp->total)
		return -ERANGE;
	if (r < bp->npaths[f->entry_block]) {
		v = f->entry_block;
	} else {
		uint32_t start = UINT32_MAX;

		for (uint32_t e = 0; e < bp->nedges; e++)
			if (bp->back[e] && bp->entry_inc[e] <= r &&
			    r - bp->entry_inc[e] < bp->npaths[f->edges[e].to])
				start = e;
		if (start == UINT32_MAX)
			return -ERANGE; /* not reached with a consistent numbering */
		p->start_edge = start;
		r -= bp->entry_inc[start];
		v = f->edges[start].to;
	}
	for (;;) {
		const struct cfg_block *b = &f->blocks[v];
		uint32_t take = UINT32_MAX;
		uint64_t base = 0;

		/* The out-edge whose range [inc, inc + paths behind it) holds r. */
		for (uint32_t k = 0; k < b->nsucc && take == UINT32_MAX; k++) {
			uint32_t e = f->succ[b->first_succ + k], t = f->edges[e].to;
			uint64_t lo = bp->back[e] ? bp->exit_inc[e] : bp->inc[e];
			uint64_t span = bp->back[e] ? 1 : bp->npaths[t < nb ? t : nb];

			if (lo <= r && r - lo < span) {
				take = e;
				base = lo;
			}
		}
		if (take == UINT32_MAX)
			return -ERANGE;
		r -= base;
		if (bp->back[take]) {
			p->end_edge = take;
			return 0;
		}
		if (push_edge(p, take))
			return -ENOMEM;
		if (f->edges[take].to >= nb)
			return 0;
		v = f->edges[take].to;
	}
}

uint32_t bl_path__blocks(const struct bl_path *p, const struct cfg_func *f, uint32_t *blocks)
{
	uint32_t n = 0;

	blocks[n++] = p->start_edge == UINT32_MAX ? f->entry_block : f->edges[p->start_edge].to;
	for (uint32_t i = 0; i < p->nedges; i++)
		if (f->edges[p->edges[i]].to < f->nblocks)
			blocks[n++] = f->edges[p->edges[i]].to;
	return n;
}

/* An edge of the graph event counting spans: the DAG, its dummy edges, ENTRY->entry block and
 * EXIT->ENTRY. */
enum ev_kind { EV_REAL, EV_DUMMY_EXIT, EV_DUMMY_ENTRY, EV_START, EV_LOOP };

struct ev_edge {
	uint32_t from, to, id; /* vertices (blocks, nblocks EXIT, nblocks + 1 ENTRY); CFG edge */
	uint8_t kind;
	uint64_t val; /* the numbering's increment */
	double w;
};

static int cmp_ev_desc(const void *a, const void *b)
{
	const struct ev_edge *x = a, *y = b;

	if (x->kind == EV_LOOP || y->kind == EV_LOOP) /* EXIT->ENTRY first: always in the tree */
		return (y->kind == EV_LOOP) - (x->kind == EV_LOOP);
	if (x->w != y->w)
		return x->w < y->w ? 1 : -1;
	return x->id != y->id ? (x->id < y->id ? -1 : 1) : (int)x->kind - (int)y->kind;
}

int bl_paths__events(struct bl_paths *bp, const struct cfg_func *f, const double *w)
{
	uint32_t nb = bp->nblocks, nv = nb + 2, n = 0, entry = nb + 1;
	struct ev_edge *g = malloc((2 * (size_t)bp->nedges + 2) * sizeof(*g));
	uint32_t *parent = malloc(nv * sizeof(*parent)), *stack = malloc(nv * sizeof(*stack));
	bool *tree = calloc(2 * (size_t)bp->nedges + 2, sizeof(*tree));
	bool *known = calloc(nv, sizeof(*known));
	uint64_t *phi = calloc(nv, sizeof(*phi));
	int err = -ENOMEM;

	free(bp->ev_inc);
	free(bp->ev_entry_inc);
	free(bp->ev_exit_inc);
	bp->ev_inc = calloc(bp->nedges + 1, sizeof(*bp->ev_inc));
	bp->ev_entry_inc = calloc(bp->nedges + 1, sizeof(*bp->ev_entry_inc));
	bp->ev_exit_inc = calloc(bp->nedges + 1, sizeof(*bp->ev_exit_inc));
	if (!g || !parent || !stack || !tree || !known || !phi || !bp->ev_inc ||
	    !bp->ev_entry_inc || !bp->ev_exit_inc)
		goto out;
	for (uint32_t e = 0; e < bp->nedges; e++) {
		const struct cfg_edge *ed = &f->edges[e];
		double we = w ? w[e] : 1.0;

		if (ed->from >= nb || !bp->reached[ed->from])
			continue;
		if (!bp->back[e]) {
			g[n++] = (struct ev_edge){
			    ed->from, ed->to < nb ? ed->to : nb, e, EV_REAL, bp->inc[e], we};
			continue;
		}
		g[n++] = (struct ev_edge){ed->from, nb, e, EV_DUMMY_EXIT, bp->exit_inc[e], we};
		g[n++] = (struct ev_edge){entry, ed->to, e, EV_DUMMY_ENTRY, bp->entry_inc[e], we};
	}
	g[n++] = (struct ev_edge){entry, f->entry_block, UINT32_MAX, EV_START, 0, INFINITY};
	g[n++] = (struct ev_edge){nb, entry, UINT32_MAX, EV_LOOP, 0, INFINITY};
	qsort(g, n, sizeof(*g), cmp_ev_desc);
	/* Kruskal: the heaviest edges that close no cycle (undirected) form the tree. */
	for (uint32_t v = 0; v < nv; v++)
		parent[v] = v;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t a = uf_find(parent, g[i].from), b = uf_find(parent, g[i].to);

		if (a != b) {
			parent[a] = b;
			tree[i] = true;
		}
	}
	/* Potentials along the tree from ENTRY: phi(to) = phi(from) + val on each tree edge
	 * (the tree's edges listed per vertex, both ends, in ADJ from OFF). */
	{
		uint32_t *off = calloc(nv + 1, sizeof(*off)), *adj = malloc(2 * n * sizeof(*adj));
		uint32_t depth = 0;

		if (!off || !adj) {
			free(off);
			free(adj);
			goto out;
		}
		for (uint32_t i = 0; i < n; i++)
			if (tree[i]) {
				off[g[i].from + 1]++;
				off[g[i].to + 1]++;
			}
		for (uint32_t v = 0; v < nv; v++)
			off[v + 1] += off[v];
		memcpy(stack, off, nv * sizeof(*stack)); /* fill cursors, before the search */
		for (uint32_t i = 0; i < n; i++)
			if (tree[i]) {
				adj[stack[g[i].from]++] = i;
				adj[stack[g[i].to]++] = i;
			}
		known[entry] = true;
		stack[depth++] = entry;
		while (depth) {
			uint32_t v = stack[--depth];

			for (uint32_t k = off[v]; k < off[v + 1]; k++) {
				const struct ev_edge *t = &g[adj[k]];
				uint32_t u = t->from == v ? t->to : t->from;

				if (known[u])
					continue;
				phi[u] = t->from == v ? phi[v] + t->val : phi[v] - t->val;
				known[u] = true;
				stack[depth++] = u;
			}
		}
		free(off);
		free(adj);
	}
	/* Each edge's increment: val + phi(from) - phi(to), 0 on the tree (sums mod 2^64). */
	bp->nchords = 0;
	for (uint32_t i = 0; i < n; i++) {
		int64_t inc = (int64_t)(g[i].val + phi[g[i].from] - phi[g[i].to]);

		bp->nchords += inc != 0;
		switch (g[i].kind) {
		case EV_REAL:
			bp->ev_inc[g[i].id] = inc;
			break;
		case EV_DUMMY_EXIT:
			bp->ev_exit_inc[g[i].id] = inc;
			break;
		case EV_DUMMY_ENTRY:
			bp->ev_entry_inc[g[i].id] = inc;
			break;
		case EV_START:
			bp->ev_start = inc;
			break;
		default:
			break;
		}
	}
	err = 0;
out:
	free(g);
	free(parent);
	free(stack);
	free(tree);
	free(known);
	free(phi);
	return err;
}
