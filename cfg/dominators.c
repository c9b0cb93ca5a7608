/*
 * Dominator and post-dominator trees (Cooper, Harvey and Kennedy, "A Simple, Fast Dominance
 * Algorithm"): iterate idom[v] = intersection over v's already-processed predecessors, in
 * reverse post-order, until nothing changes; then number the tree by DFS so that dominance
 * queries are O(1). Every traversal is iterative: functions can have 10^5 blocks.
 */
#include "dominators.h"

#include "error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * The graph as seen from the root: forward edges for dominators, reversed edges for
 * post-dominators. "Out" edges are the ones the DFS follows away from the root, "in" edges
 * the ones CHK intersects over.
 */
struct dir_graph {
	const struct cfg_func *f;
	bool post;
};

/* Edge ids of V's successors (REVERSED false) or predecessors (true), *N of them. */
static const uint32_t *edges_of(const struct cfg_func *f, uint32_t v, bool reversed,
				uint32_t *n)
{
	if (!reversed) {
		if (v >= f->nblocks) { /* EXIT has no successors */
			*n = 0;
			return NULL;
		}
		*n = f->blocks[v].nsucc;
		return f->succ + f->blocks[v].first_succ;
	}
	if (v == f->nblocks) {
		*n = f->exit_npred;
		return f->pred + f->exit_first_pred;
	}
	*n = f->blocks[v].npred;
	return f->pred + f->blocks[v].first_pred;
}

static const uint32_t *dg_out(const struct dir_graph *g, uint32_t v, uint32_t *n)
{
	return edges_of(g->f, v, g->post, n);
}

static const uint32_t *dg_in(const struct dir_graph *g, uint32_t v, uint32_t *n)
{
	return edges_of(g->f, v, !g->post, n);
}

/* The vertex an out-edge E leads to. */
static inline uint32_t dg_head(const struct dir_graph *g, uint32_t e)
{
	return g->post ? g->f->edges[e].from : g->f->edges[e].to;
}

/* The vertex an in-edge E comes from. */
static inline uint32_t dg_tail(const struct dir_graph *g, uint32_t e)
{
	return g->post ? g->f->edges[e].to : g->f->edges[e].from;
}

/*
 * Iterative DFS from the root along out-edges: fills PO (post-order number per vertex,
 * CFG_NO_VERTEX when unreached), dt->rpo and dt->nrpo. STACK and CURSOR are scratch arrays
 * of dt->n entries.
 */
static void dfs_postorder(struct cfg_domtree *dt, const struct dir_graph *g, uint32_t *po,
			  uint32_t *stack, uint32_t *cursor)
{
	uint32_t n = dt->n, sp = 0, count = 0, i;

	for (i = 0; i < n; i++) {
		po[i] = CFG_NO_VERTEX;
		cursor[i] = CFG_NO_VERTEX; /* not yet visited */
	}
	stack[sp++] = dt->root;
	cursor[dt->root] = 0;
	while (sp) {
		uint32_t v = stack[sp - 1], nout;
		const uint32_t *out = dg_out(g, v, &nout);

		if (cursor[v] < nout) {
			uint32_t w = dg_head(g, out[cursor[v]++]);

			if (w < n && cursor[w] == CFG_NO_VERTEX) {
				cursor[w] = 0;
				stack[sp++] = w;
			}
			continue;
		}
		po[v] = count++;
		sp--;
	}
	dt->nrpo = count;
	for (i = 0; i < n; i++)
		if (po[i] != CFG_NO_VERTEX)
			dt->rpo[count - 1 - po[i]] = i;
}

/* Nearest common ancestor of A and B in the partial tree, by post-order numbers. */
static uint32_t intersect(const uint32_t *idom, const uint32_t *po, uint32_t a, uint32_t b)
{
	while (a != b) {
		while (po[a] < po[b])
			a = idom[a];
		while (po[b] < po[a])
			b = idom[b];
	}
	return a;
}

/* The CHK fixpoint over dt->rpo (dt->idom all CFG_NO_VERTEX on entry). */
static void chk_iterate(struct cfg_domtree *dt, const struct dir_graph *g, const uint32_t *po)
{
	bool changed = true;
	uint32_t i, j;

	dt->idom[dt->root] = dt->root;
	while (changed) {
		changed = false;
		for (i = 1; i < dt->nrpo; i++) {
			uint32_t v = dt->rpo[i], nin, new_idom = CFG_NO_VERTEX;
			const uint32_t *in = dg_in(g, v, &nin);

			for (j = 0; j < nin; j++) {
				uint32_t p = dg_tail(g, in[j]);

				/* Predecessors not reached from the root, or not processed yet. */
				if (p >= dt->n || po[p] == CFG_NO_VERTEX ||
				    dt->idom[p] == CFG_NO_VERTEX)
					continue;
				if (new_idom == CFG_NO_VERTEX)
					new_idom = p;
				else
					new_idom = intersect(dt->idom, po, p, new_idom);
			}
			/* In RPO the DFS parent of v precedes v, so new_idom is always found. */
			if (new_idom != CFG_NO_VERTEX && dt->idom[v] != new_idom) {
				dt->idom[v] = new_idom;
				changed = true;
			}
		}
	}
}

/*
 * Pre/post DFS numbering of the tree given by dt->idom. FIRST has n + 1 entries, CURSOR,
 * KIDS and STACK n each.
 */
static void number_tree(struct cfg_domtree *dt, uint32_t *first, uint32_t *cursor,
			uint32_t *kids, uint32_t *stack)
{
	uint32_t n = dt->n, v, sp = 0, pre = 0, post = 0;

	/* Children lists in CSR form. */
	memset(first, 0, sizeof(*first) * (n + 1));
	for (v = 0; v < n; v++)
		if (dt->idom[v] != CFG_NO_VERTEX && v != dt->root)
			first[dt->idom[v] + 1]++;
	for (v = 0; v < n; v++)
		first[v + 1] += first[v];
	memcpy(cursor, first, sizeof(*cursor) * n);
	for (v = 0; v < n; v++)
		if (dt->idom[v] != CFG_NO_VERTEX && v != dt->root)
			kids[cursor[dt->idom[v]]++] = v;

	for (v = 0; v < n; v++) {
		dt->pre[v] = CFG_NO_VERTEX;
		dt->post_order[v] = CFG_NO_VERTEX;
	}
	memcpy(cursor, first, sizeof(*cursor) * n);
	stack[sp++] = dt->root;
	dt->pre[dt->root] = pre++;
	while (sp) {
		v = stack[sp - 1];
		if (cursor[v] < first[v + 1]) {
			uint32_t c = kids[cursor[v]++];

			dt->pre[c] = pre++;
			stack[sp++] = c;
			continue;
		}
		dt->post_order[v] = post++;
		sp--;
	}
}

static int compute(struct cfg_domtree *dt, const struct cfg_func *f, bool post)
{
	struct dir_graph g = { .f = f, .post = post };
	uint32_t n = f->nblocks + 1, i;
	uint32_t *scratch;

	memset(dt, 0, sizeof(*dt));
	dt->n = n;
	dt->post = post;
	dt->root = post ? f->nblocks : f->entry_block;
	dt->idom = malloc(sizeof(*dt->idom) * n);
	dt->pre = malloc(sizeof(*dt->pre) * n);
	dt->post_order = malloc(sizeof(*dt->post_order) * n);
	dt->rpo = malloc(sizeof(*dt->rpo) * n);
	/* po (n), stack (n), cursor (n), first (n + 1), kids (n) */
	scratch = malloc(sizeof(*scratch) * (5 * (size_t)n + 1));
	if (!dt->idom || !dt->pre || !dt->post_order || !dt->rpo || !scratch) {
		free(scratch);
		cfg_dom__free(dt);
		return cfg_error(ENOMEM, "out of memory for the %sdominators of '%s'",
				 post ? "post-" : "", f->name ? f->name : "?");
	}
	for (i = 0; i < n; i++) {
		dt->idom[i] = CFG_NO_VERTEX;
		dt->pre[i] = CFG_NO_VERTEX;
		dt->post_order[i] = CFG_NO_VERTEX;
	}
	/* A function without blocks (or a bogus entry) has an empty dominator tree. */
	if (!post && f->entry_block >= f->nblocks) {
		free(scratch);
		return 0;
	}
	{
		uint32_t *po = scratch, *stack = scratch + n, *cursor = scratch + 2 * (size_t)n;
		uint32_t *first = scratch + 3 * (size_t)n, *kids = scratch + 4 * (size_t)n + 1;

		dfs_postorder(dt, &g, po, stack, cursor);
		chk_iterate(dt, &g, po);
		number_tree(dt, first, cursor, kids, stack);
	}
	free(scratch);
	return 0;
}

int cfg_dom__compute(struct cfg_domtree *dt, const struct cfg_func *f)
{
	return compute(dt, f, false);
}

int cfg_postdom__compute(struct cfg_domtree *dt, const struct cfg_func *f)
{
	return compute(dt, f, true);
}

bool cfg_dom__dominates(const struct cfg_domtree *dt, uint32_t a, uint32_t b)
{
	if (a >= dt->n || b >= dt->n)
		return false;
	if (dt->pre[a] == CFG_NO_VERTEX || dt->pre[b] == CFG_NO_VERTEX)
		return false;
	return dt->pre[a] <= dt->pre[b] && dt->post_order[b] <= dt->post_order[a];
}

void cfg_dom__free(struct cfg_domtree *dt)
{
	free(dt->idom);
	free(dt->pre);
	free(dt->post_order);
	free(dt->rpo);
	memset(dt, 0, sizeof(*dt));
}
