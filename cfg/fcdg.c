/*
 * Sarkar's extended CFG and forward control dependence graph of one function (see fcdg.h):
 * intervals from the natural loops, preheader/postexit/tail-call nodes and pseudo edges,
 * post-dominators of the ECFG (Cooper, Harvey and Kennedy over the reversed graph), control
 * dependences by walking the post-dominator tree from each edge's target up to its source's
 * immediate post-dominator (Ferrante, Ottenstein and Warren). Back edges go to a loop end
 * node, so the ECFG is acyclic and its control dependences are the forward ones.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fcdg.h"

int32_t fcdg__hdr_lca(const struct cfg_loops *lp, int32_t a, int32_t b)
{
	while (a != b) {
		uint32_t da = a < 0 ? 0 : lp->loops[a].depth;
		uint32_t db = b < 0 ? 0 : lp->loops[b].depth;

		if (da >= db)
			a = fcdg__hdr_parent(lp, a);
		else
			b = fcdg__hdr_parent(lp, b);
	}
	return a;
}

const char *fcdg_node_type__name(unsigned type)
{
	static const char *const names[] = {"block",	"stop",	    "start",  "preheader",
					    "postexit", "tailcall", "loopend"};

	return type < sizeof(names) / sizeof(names[0]) ? names[type] : "?";
}

void fcdg__free(struct fcdg *g)
{
	free(g->nodes);
	free(g->preheader);
	free(g->ecfg_edges);
	free(g->edges);
	free(g->order);
	memset(g, 0, sizeof(*g));
}

/* Loops left by going from interval A to interval B: A, its parents, up to LCA (excluded). */
static uint32_t exit_levels(const struct cfg_loops *lp, int32_t a, int32_t b)
{
	int32_t lca = fcdg__hdr_lca(lp, a, b);
	uint32_t n = 0;

	for (; a != lca; a = fcdg__hdr_parent(lp, a))
		n++;
	return n;
}

struct builder {
	struct fcdg *g;
	struct fcdg_ecfg_edge *tmp; /* unsorted ECFG edges */
	uint32_t ntmp;
};

static void add_edge(struct builder *b, uint32_t from, uint32_t to, uint8_t label,
		     uint32_t cfg_edge)
{
	b->tmp[b->ntmp++] =
	    (struct fcdg_ecfg_edge){.from = from, .to = to, .label = label, .cfg_edge = cfg_edge};
}

static uint32_t new_node(struct fcdg *g, uint8_t type, int32_t hdr, int32_t loop, uint32_t edge)
{
	uint32_t id = g->nnodes++;

	g->nodes[id] = (struct fcdg_node){.type = type,
					  .hdr = hdr,
					  .loop = loop,
					  .outer = loop,
					  .block = FCDG_NONE,
					  .edge = edge};
	return id;
}

/* The ECFG node a CFG edge into vertex V arrives at when it comes from interval FROM_HDR:
 * V's preheader when V heads a loop that the edge enters, else V. */
static uint32_t arrival(const struct fcdg *g, uint32_t v, int32_t from_hdr)
{
	int32_t l;

	if (v >= g->nblocks)
		return v; /* STOP */
	l = g->nodes[v].loop;
	if (l >= 0 && fcdg__hdr_lca(g->lp, from_hdr, l) != l)
		return g->preheader[l];
	return v;
}

/* Adds FROM -> ... -> TO for a CFG edge leaving interval FROM_HDR for TO_HDR: when it leaves
 * loops, through one postexit node in their common interval with a pseudo edge from the
 * preheader of every loop it leaves (a chain of one postexit per loop would put the inner
 * postexits inside the outer loops, where they run once per exit, not once per iteration).
 * LABEL/CFG_EDGE label the first ECFG edge. */
static void add_exit_chain(struct builder *b, uint32_t from, int32_t from_hdr, uint32_t to,
			   int32_t to_hdr, uint8_t label, uint32_t cfg_edge, uint32_t edge)
{
	struct fcdg *g = b->g;
	int32_t lca = fcdg__hdr_lca(g->lp, from_hdr, to_hdr);
	int32_t l, outer = from_hdr;

	if (from_hdr != lca) {
		uint32_t pe;

		while (fcdg__hdr_parent(g->lp, outer) != lca)
			outer = fcdg__hdr_parent(g->lp, outer);
		pe = new_node(g, FCDG_POSTEXIT, lca, from_hdr, edge);
		g->nodes[pe].outer = outer;
		add_edge(b, from, pe, label, cfg_edge);
		for (l = from_hdr; l != lca; l = fcdg__hdr_parent(g->lp, l))
			add_edge(b, g->preheader[l], pe, FCDG_LABEL_Z, FCDG_NONE);
		from = pe;
		label = FCDG_LABEL_U;
		cfg_edge = FCDG_NONE;
	}
	add_edge(b, from, arrival(g, to, lca), label, cfg_edge);
}

static int build_ecfg(struct fcdg *g)
{
	const struct cfg_func *f = g->f;
	const struct cfg_loops *lp = g->lp;
	uint32_t nb = f->nblocks, e, i, maxn, maxe;
	struct builder b = {.g = g};
	uint32_t *cnt;

	/* Upper bounds: a postexit and a tail-call node per edge, a preheader and a loop end
	 * per loop; per exit edge its own edges and two pseudo edges per loop left. */
	maxn = nb + 2 + 2 * lp->nloops;
	maxe = 2 + 3 * lp->nloops;
	for (e = 0; e < f->nedges; e++) {
		const struct cfg_edge *ce = &f->edges[e];
		int32_t hu = lp->innermost[ce->from];
		int32_t hv = ce->to < nb ? lp->innermost[ce->to] : FCDG_ROOT_INTERVAL;
		uint32_t k = exit_levels(lp, hu, hv);

		maxn += 2;
		maxe += 2 * k + 3;
	}
	g->nodes = calloc(maxn, sizeof(*g->nodes));
	g->preheader = calloc(lp->nloops ? lp->nloops : 1, sizeof(*g->preheader));
	b.tmp = calloc(maxe, sizeof(*b.tmp));
	if (!g->nodes || !g->preheader || !b.tmp) {
		free(b.tmp);
		return -ENOMEM;
	}
	for (i = 0; i < nb; i++)
		g->nodes[i] = (struct fcdg_node){.type = FCDG_OTHER,
						 .hdr = lp->innermost[i],
						 .loop = -1,
						 .outer = -1,
						 .block = i,
						 .edge = FCDG_NONE};
	for (i = 0; i < lp->nloops; i++)
		g->nodes[lp->loops[i].header].loop = (int32_t)i;
	g->nnodes = nb;
	new_node(g, FCDG_STOP, FCDG_ROOT_INTERVAL, -1, FCDG_NONE);
	new_node(g, FCDG_START, FCDG_ROOT_INTERVAL, -1, FCDG_NONE);
	for (i = 0; i < lp->nloops; i++) {
		g->preheader[i] =
		    new_node(g, FCDG_PREHEADER, lp->loops[i].parent, (int32_t)i, FCDG_NONE);
		add_edge(&b, g->preheader[i], lp->loops[i].header, FCDG_LABEL_U, FCDG_NONE);
	}
	add_edge(&b, fcdg__start(g), arrival(g, f->entry_block, FCDG_ROOT_INTERVAL), FCDG_LABEL_U,
		 FCDG_NONE);
	add_edge(&b, fcdg__start(g), fcdg__stop(g), FCDG_LABEL_Z, FCDG_NONE);
	for (e = 0; e < f->nedges; e++) {
		const struct cfg_edge *ce = &f->edges[e];
		int32_t hu = lp->innermost[ce->from];
		int32_t hv = ce->to < nb ? lp->innermost[ce->to] : FCDG_ROOT_INTERVAL;

		if (ce->kind == EDGE_TAIL_CALL) {
			uint32_t tc = new_node(g, FCDG_TAILCALL, hu, -1, e);

			add_edge(&b, ce->from, tc, FCDG_LABEL_CFG, e);
			add_exit_chain(&b, tc, hu, ce->to, hv, FCDG_LABEL_U, FCDG_NONE, e);
		} else {
			add_exit_chain(&b, ce->from, hu, ce->to, hv, FCDG_LABEL_CFG, e, e);
		}
	}

	/* Back edges go to their loop's end node instead (so that the ECFG is acyclic and each
	 * iteration ends there); a loop end has a pseudo edge to every postexit of its loop, or
	 * to STOP when the loop has none. */
	{
		uint32_t *end = calloc(lp->nloops + 1, sizeof(*end)), n0 = g->nnodes, k;
		bool *has_pe = calloc(lp->nloops + 1, sizeof(*has_pe));

		if (!end || !has_pe) {
			free(end);
			free(has_pe);
			free(b.tmp);
			return -ENOMEM;
		}
		for (i = 0; i < lp->nloops; i++)
			end[i] = new_node(g, FCDG_LOOPEND, (int32_t)i, (int32_t)i, FCDG_NONE);
		for (i = 0; i < b.ntmp; i++) {
			struct fcdg_ecfg_edge *ee = &b.tmp[i];
			int32_t l = ee->to < nb ? g->nodes[ee->to].loop : -1;

			if (l >= 0 && fcdg__hdr_lca(lp, g->nodes[ee->from].hdr, l) == l) {
				ee->to = end[l];
				ee->back = true;
			}
		}
		for (k = 0; k < n0; k++) {
			const struct fcdg_node *pe = &g->nodes[k];

			if (pe->type != FCDG_POSTEXIT)
				continue;
			for (int32_t l = pe->loop; l >= 0; l = lp->loops[l].parent) {
				add_edge(&b, end[l], k, FCDG_LABEL_Z, FCDG_NONE);
				has_pe[l] = true;
				if (l == pe->outer)
					break;
			}
		}
		for (i = 0; i < lp->nloops; i++)
			if (!has_pe[i])
				add_edge(&b, end[i], fcdg__stop(g), FCDG_LABEL_Z, FCDG_NONE);
		free(end);
		free(has_pe);
	}

	/* Group by source (stable: a block's edges stay in CFG order). */
	cnt = calloc(g->nnodes + 1, sizeof(*cnt));
	g->ecfg_edges = calloc(b.ntmp ? b.ntmp : 1, sizeof(*g->ecfg_edges));
	if (!cnt || !g->ecfg_edges) {
		free(cnt);
		free(b.tmp);
		return -ENOMEM;
	}
	for (i = 0; i < b.ntmp; i++)
		cnt[b.tmp[i].from + 1]++;
	for (i = 0; i < g->nnodes; i++) {
		g->nodes[i].first_out = cnt[i];
		g->nodes[i].nout = cnt[i + 1];
		cnt[i + 1] += cnt[i];
	}
	for (i = 0; i < b.ntmp; i++)
		g->ecfg_edges[cnt[b.tmp[i].from]++] = b.tmp[i];
	g->necfg_edges = b.ntmp;
	free(cnt);
	free(b.tmp);
	return 0;
}

/* Topological order of the (acyclic) ECFG from START (iterative DFS, reverse post-order). Sets
 * nodes[].topo (FCDG_NONE for nodes not reached). */
static int topo_order(struct fcdg *g)
{
	uint32_t n = g->nnodes, sp = 0, k, i;
	uint32_t *stack = malloc(n * sizeof(*stack)), *next = calloc(n, sizeof(*next));
	uint32_t *post = malloc(n * sizeof(*post));
	uint8_t *seen = calloc(n, 1);
	uint32_t npost = 0;

	g->order = malloc(n * sizeof(*g->order));
	if (!stack || !next || !post || !seen || !g->order) {
		free(stack), free(next), free(post), free(seen);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		g->nodes[i].topo = FCDG_NONE;
	stack[sp++] = fcdg__start(g);
	seen[fcdg__start(g)] = 1;
	while (sp) {
		uint32_t u = stack[sp - 1];
		const struct fcdg_node *nu = &g->nodes[u];

		if (next[u] < nu->nout) {
			const struct fcdg_ecfg_edge *ee = &g->ecfg_edges[nu->first_out + next[u]++];

			if (!seen[ee->to]) {
				seen[ee->to] = 1;
				stack[sp++] = ee->to;
			}
			continue;
		}
		post[npost++] = u;
		sp--;
	}
	for (k = 0; k < npost; k++) {
		g->order[k] = post[npost - 1 - k];
		g->nodes[g->order[k]].topo = k;
	}
	g->norder = npost;
	free(stack), free(next), free(post), free(seen);
	return 0;
}

/* Immediate post-dominators of the ECFG (nodes[].ipdom). Returns -ENOTSUP when a node
 * reached from START cannot reach STOP. */
static int postdominators(struct fcdg *g)
{
	uint32_t n = g->nnodes, i, k, sp = 0, nrpo = 0, stop = fcdg__stop(g);
	uint32_t *pcnt = calloc(n + 1, sizeof(*pcnt)), *pred = NULL, *stack = NULL, *next = NULL;
	uint32_t *rpo = NULL, *num = NULL;
	int ret = -ENOMEM;
	bool changed;

	if (!pcnt)
		return -ENOMEM;
	/* In-edges (the reversed graph's out-edges), as ECFG edge sources. */
	for (i = 0; i < g->necfg_edges; i++)
		pcnt[g->ecfg_edges[i].to + 1]++;
	for (i = 0; i < n; i++)
		pcnt[i + 1] += pcnt[i];
	pred = malloc((g->necfg_edges + 1) * sizeof(*pred));
	stack = malloc(n * sizeof(*stack));
	next = calloc(n, sizeof(*next));
	rpo = malloc(n * sizeof(*rpo));
	num = malloc(n * sizeof(*num));
	if (!pred || !stack || !next || !rpo || !num)
		goto out;
	{
		uint32_t *fill = next; /* reused as a cursor, cleared below */

		for (i = 0; i < g->necfg_edges; i++) {
			uint32_t t = g->ecfg_edges[i].to;

			pred[pcnt[t] + fill[t]++] = g->ecfg_edges[i].from;
		}
		memset(next, 0, n * sizeof(*next));
	}
	for (i = 0; i < n; i++) {
		num[i] = FCDG_NONE;
		g->nodes[i].ipdom = FCDG_NONE;
	}
	/* Post-order of the reversed graph from STOP. */
	stack[sp++] = stop;
	num[stop] = 0;
	while (sp) {
		uint32_t u = stack[sp - 1];

		if (pcnt[u] + next[u] < pcnt[u + 1]) {
			uint32_t p = pred[pcnt[u] + next[u]++];

			if (num[p] == FCDG_NONE) {
				num[p] = 0;
				stack[sp++] = p;
			}
			continue;
		}
		rpo[nrpo++] = u;
		sp--;
	}
	/* rpo[] holds the post-order; number vertices by post-order (root highest). */
	for (k = 0; k < nrpo; k++)
		num[rpo[k]] = k;
	g->nodes[stop].ipdom = stop;
	do {
		changed = false;
		for (k = nrpo; k-- > 0;) {
			uint32_t u = rpo[k], nidom = FCDG_NONE;
			const struct fcdg_node *nu = &g->nodes[u];

			if (u == stop)
				continue;
			for (i = 0; i < nu->nout; i++) {
				uint32_t s = g->ecfg_edges[nu->first_out + i].to;

				if (g->nodes[s].ipdom == FCDG_NONE)
					continue;
				if (nidom == FCDG_NONE) {
					nidom = s;
					continue;
				}
				{
					uint32_t a = s, c = nidom;

					while (a != c) {
						while (num[a] < num[c])
							a = g->nodes[a].ipdom;
						while (num[c] < num[a])
							c = g->nodes[c].ipdom;
					}
					nidom = a;
				}
			}
			if (nidom != FCDG_NONE && g->nodes[u].ipdom != nidom) {
				g->nodes[u].ipdom = nidom;
				changed = true;
			}
		}
	} while (changed);
	ret = 0;
	for (k = 0; k < g->norder; k++)
		if (g->nodes[g->order[k]].ipdom == FCDG_NONE)
			ret = -ENOTSUP;
out:
	free(pcnt), free(pred), free(stack), free(next), free(rpo), free(num);
	return ret;
}

/* Control dependences of the ECFG, keeping the forward ones (source before target in the
 * topological order). */
static int control_dependences(struct fcdg *g)
{
	uint32_t cap = 64, i;

	g->edges = malloc(cap * sizeof(*g->edges));
	if (!g->edges)
		return -ENOMEM;
	for (i = 0; i < g->nnodes; i++) {
		g->nodes[i].first_child = g->nedges;
		g->nodes[i].nchild = 0;
	}
	for (i = 0; i < g->necfg_edges; i++) {
		const struct fcdg_ecfg_edge *ee = &g->ecfg_edges[i];
		struct fcdg_node *nu = &g->nodes[ee->from];
		uint32_t r = ee->to, steps = 0;

		if (nu->topo == FCDG_NONE)
			continue;
		if (!nu->nchild)
			nu->first_child = g->nedges;
		while (r != nu->ipdom && r != FCDG_NONE && steps++ <= g->nnodes) {
			const struct fcdg_node *nr = &g->nodes[r];

			if (nr->topo != FCDG_NONE && nr->topo > nu->topo) {
				if (g->nedges == cap) {
					struct fcdg_edge *ne;

					cap *= 2;
					ne = realloc(g->edges, cap * sizeof(*ne));
					if (!ne)
						return -ENOMEM;
					g->edges = ne;
				}
				g->edges[g->nedges++] =
				    (struct fcdg_edge){.from = ee->from, .to = r, .cond = i};
				nu->nchild++;
			}
			if (r == fcdg__stop(g))
				break;
			r = nr->ipdom;
		}
	}
	return 0;
}

int fcdg__build(struct fcdg *g, const struct cfg_func *f, const struct cfg_loops *lp)
{
	int ret;

	memset(g, 0, sizeof(*g));
	g->f = f;
	g->lp = lp;
	g->nblocks = f->nblocks;
	if (!f->nblocks || f->entry_block >= f->nblocks || !lp->reducible)
		return -ENOTSUP;
	ret = build_ecfg(g);
	if (!ret)
		ret = topo_order(g);
	if (!ret)
		ret = postdominators(g);
	if (!ret)
		ret = control_dependences(g);
	return ret;
}
