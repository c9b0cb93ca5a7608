/*
 * Counting Sarkar's counters (see sarkar_counters.h): the relations of optimization 2 as
 * sparse rows over the control conditions, their rank by incremental sparse Gaussian
 * elimination modulo 2^31 - 1 (the coefficients are small integers, so the rank over the
 * rationals is the rank modulo this prime unless a determinant happens to be a multiple of
 * it, which the relations' shape makes implausible).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sarkar_counters.h"
#include "union_find.h"

#define MOD 2147483647ull
#define WORK_BOUND 200000000ull /* merged terms before giving up on exact rank */

struct term {
	uint32_t col;
	uint64_t val; /* 1 .. MOD-1 */
};

struct row {
	struct term *t;
	uint32_t n, cap;
};

struct planner {
	const struct fcdg *g;
	int32_t *col;	     /* per ECFG edge: its column, or -1 when not a condition */
	uint32_t *pin_first; /* FCDG in-edges per node: conditions (ECFG edge ids) */
	uint32_t *pin;
	struct row cur;
	bool ok; /* the row being built is expressible */
	bool nomem;
};

static uint64_t mod_pow(uint64_t b, uint64_t e)
{
	uint64_t r = 1;

	for (b %= MOD; e; e >>= 1, b = b * b % MOD)
		if (e & 1)
			r = r * b % MOD;
	return r;
}

static void row_add(struct planner *p, struct row *r, uint32_t col, int64_t v)
{
	uint64_t val = (uint64_t)((v % (int64_t)MOD + (int64_t)MOD) % (int64_t)MOD);

	if (r->n == r->cap) {
		uint32_t cap = r->cap ? 2 * r->cap : 8;
		struct term *t = realloc(r->t, cap * sizeof(*t));

		if (!t) {
			p->nomem = true;
			return;
		}
		r->t = t;
		r->cap = cap;
	}
	r->t[r->n++] = (struct term){.col = col, .val = val};
}

static int cmp_term(const void *a, const void *b)
{
	const struct term *x = a, *y = b;

	return x->col < y->col ? -1 : x->col > y->col;
}

/* Sorts R by column, merging duplicates and dropping zeros. */
static void row_normalize(struct row *r)
{
	uint32_t i, k = 0;

	qsort(r->t, r->n, sizeof(*r->t), cmp_term);
	for (i = 0; i < r->n; i++) {
		if (k && r->t[k - 1].col == r->t[i].col)
			r->t[k - 1].val = (r->t[k - 1].val + r->t[i].val) % MOD;
		else
			r->t[k++] = r->t[i];
		if (k && !r->t[k - 1].val)
			k--;
	}
	r->n = k;
}

static void add_node_total(struct planner *p, uint32_t u, int64_t sign);

/* Adds SIGN x TOTAL_FREQ(ECFG edge C) to the current row. */
static void add_cond(struct planner *p, uint32_t c, int64_t sign)
{
	const struct fcdg *g = p->g;
	const struct fcdg_ecfg_edge *ee = &g->ecfg_edges[c];
	const struct fcdg_node *nu = &g->nodes[ee->from];
	uint32_t i, nreal = 0;

	if (ee->label == FCDG_LABEL_Z)
		return;
	if (p->col[c] >= 0) {
		row_add(p, &p->cur, (uint32_t)p->col[c], sign);
		return;
	}
	for (i = 0; i < nu->nout; i++)
		nreal += g->ecfg_edges[nu->first_out + i].label != FCDG_LABEL_Z;
	/* Not a condition: the node's total less its other (counted) labels. */
	add_node_total(p, ee->from, sign);
	if (nreal == 1)
		return;
	for (i = 0; i < nu->nout; i++) {
		uint32_t c2 = nu->first_out + i;

		if (c2 == c || g->ecfg_edges[c2].label == FCDG_LABEL_Z)
			continue;
		if (p->col[c2] < 0) {
			p->ok = false;
			return;
		}
		row_add(p, &p->cur, (uint32_t)p->col[c2], -sign);
	}
}

/* Adds SIGN x the total executions of node U: the sum of its FCDG parents' conditions. */
static void add_node_total(struct planner *p, uint32_t u, int64_t sign)
{
	for (uint32_t i = p->pin_first[u]; i < p->pin_first[u + 1]; i++) {
		uint32_t c = p->pin[i];

		if (p->g->ecfg_edges[c].label != FCDG_LABEL_Z)
			row_add(p, &p->cur, (uint32_t)p->col[c], sign);
	}
}

/* True when postexit node PE leaves loop L. */
static bool leaves(const struct fcdg *g, const struct fcdg_node *pe, uint32_t l)
{
	for (int32_t k = pe->loop; k >= 0; k = g->lp->loops[k].parent) {
		if (k == (int32_t)l)
			return true;
		if (k == pe->outer)
			break;
	}
	return false;
}

int sarkar_counters__plan(struct sarkar_counters *sc, const struct fcdg *g,
			  const double *total_freq, bool *counted)
{
	struct planner p = {.g = g};
	uint32_t ne = g->necfg_edges, i, k, ncols = 0;
	uint32_t *cols = NULL, *pivot_row = NULL;
	struct row *rows = NULL;
	uint32_t nrows = 0;
	uint64_t work = 0;
	int ret = -ENOMEM;

	memset(sc, 0, sizeof(*sc));
	p.col = malloc((ne + 1) * sizeof(*p.col));
	p.pin_first = calloc(g->nnodes + 2, sizeof(*p.pin_first));
	p.pin = malloc((g->nedges + 1) * sizeof(*p.pin));
	cols = malloc((ne + 1) * sizeof(*cols));
	if (!p.col || !p.pin_first || !p.pin || !cols)
		goto out;
	for (i = 0; i < ne; i++)
		p.col[i] = -1;
	for (i = 0; i < g->nedges; i++) {
		p.col[g->edges[i].cond] = 0; /* marked: a condition */
		p.pin_first[g->edges[i].to + 2]++;
	}
	for (i = 0; i < g->nnodes; i++)
		p.pin_first[i + 2] += p.pin_first[i + 1];
	for (i = 0; i < g->nedges; i++)
		p.pin[p.pin_first[g->edges[i].to + 1]++] = g->edges[i].cond;
	/* Columns: real conditions, most frequent first (so that they become pivots). */
	for (i = 0; i < ne; i++) {
		if (p.col[i] == 0 && g->ecfg_edges[i].label != FCDG_LABEL_Z)
			cols[ncols++] = i;
		p.col[i] = -1;
	}
	if (total_freq) {
		/* insertion-free ordering: sort indices by descending frequency */
		for (i = 1; i < ncols; i++) {
			uint32_t c = cols[i], j = i;

			while (j && total_freq[cols[j - 1]] < total_freq[c]) {
				cols[j] = cols[j - 1];
				j--;
			}
			cols[j] = c;
		}
	}
	for (i = 0; i < ncols; i++)
		p.col[cols[i]] = (int32_t)i;
	sc->conditions = ncols;

	rows = calloc(g->nnodes + 2 * g->lp->nloops + 1, sizeof(*rows));
	pivot_row = malloc((ncols + 1) * sizeof(*pivot_row));
	if (!rows || !pivot_row)
		goto out;
	for (i = 0; i < ncols; i++)
		pivot_row[i] = UINT32_MAX;

	/* The relations, one candidate row at a time, reduced against the pivots so far. */
	for (k = 0; k < g->nnodes + 2 * g->lp->nloops; k++) {
		p.cur = (struct row){0};
		p.ok = true;
		if (k < g->nnodes) {
			const struct fcdg_node *nu = &g->nodes[k];
			bool all = nu->type == FCDG_OTHER && nu->nout >= 2;

			for (i = 0; all && i < nu->nout; i++)
				all = p.col[nu->first_out + i] >= 0;
			if (!all)
				continue;
			for (i = 0; i < nu->nout; i++)
				add_cond(&p, nu->first_out + i, 1);
			add_node_total(&p, k, -1);
		} else {
			uint32_t l = (k - g->nnodes) / 2, ph = g->preheader[l];
			bool exits = (k - g->nnodes) % 2 == 0;

			for (i = 0; i < ne; i++) {
				const struct fcdg_ecfg_edge *ee = &g->ecfg_edges[i];
				const struct fcdg_node *nt = &g->nodes[ee->to];

				if (ee->label == FCDG_LABEL_Z)
					continue;
				if (exits && nt->type == FCDG_POSTEXIT && leaves(g, nt, l))
					add_cond(&p, i, 1); /* leaves loop l */
				else if (!exits && ee->back && g->nodes[ee->to].loop == (int32_t)l)
					add_cond(&p, i, 1);
			}
			if (exits) {
				add_node_total(&p, ph, -1);
			} else {
				add_cond(&p, g->nodes[ph].first_out, -1); /* PH -> header (U) */
				add_node_total(&p, ph, 1);
			}
		}
		if (p.nomem) {
			free(p.cur.t);
			goto out;
		}
		if (!p.ok) {
			free(p.cur.t);
			continue;
		}
		row_normalize(&p.cur);
		while (p.cur.n) {
			uint32_t c = p.cur.t[0].col;
			const struct row *pr;
			struct row nr = {0};
			uint64_t f;
			uint32_t a = 0, b = 0;

			if (pivot_row[c] == UINT32_MAX) {
				pivot_row[c] = nrows;
				rows[nrows++] = p.cur;
				p.cur = (struct row){0};
				break;
			}
			if (work > WORK_BOUND) {
				sc->truncated = true;
				break;
			}
			/* cur -= (cur[c] / pr[c]) pr */
			pr = &rows[pivot_row[c]];
			f = p.cur.t[0].val * mod_pow(pr->t[0].val, MOD - 2) % MOD;
			while (a < p.cur.n || b < pr->n) {
				struct term t;

				if (b >= pr->n || (a < p.cur.n && p.cur.t[a].col < pr->t[b].col)) {
					t = p.cur.t[a++];
				} else if (a >= p.cur.n || pr->t[b].col < p.cur.t[a].col) {
					t = pr->t[b++];
					t.val = (MOD - t.val * f % MOD) % MOD;
				} else {
					t = p.cur.t[a++];
					t.val = (t.val + MOD - pr->t[b++].val * f % MOD) % MOD;
				}
				work++;
				if (t.val)
					row_add(&p, &nr, t.col, (int64_t)t.val);
			}
			free(p.cur.t);
			p.cur = nr;
			if (p.nomem)
				goto out;
		}
		free(p.cur.t);
	}
	sc->relations = nrows;
	sc->counters = ncols - nrows;
	if (counted)
		memset(counted, 0, ne * sizeof(*counted));
	for (i = 0; i < ncols; i++) {
		bool keep = pivot_row[i] == UINT32_MAX;

		if (counted)
			counted[cols[i]] = keep;
		if (keep && total_freq)
			sc->increments += total_freq[cols[i]];
	}
	ret = 0;
out:
	if (rows)
		for (i = 0; i < nrows; i++)
			free(rows[i].t);
	free(rows);
	free(pivot_row);
	free(cols);
	free(p.col);
	free(p.pin_first);
	free(p.pin);
	return ret;
}

struct wedge {
	uint32_t from, to;
	double w;
};

static int cmp_wedge_desc(const void *a, const void *b)
{
	const struct wedge *x = a, *y = b;

	return x->w < y->w ? 1 : x->w > y->w ? -1 : 0;
}

int chords__optimal(const struct cfg_func *f, const int64_t *edge_count, int64_t calls,
		    uint32_t *counters, double *increments)
{
	uint32_t n = f->nedges + 1, i, nch = 0;
	struct wedge *we = malloc(n * sizeof(*we));
	uint32_t *parent = malloc((f->nblocks + 1) * sizeof(*parent));
	double incr = 0;

	if (!we || !parent) {
		free(we);
		free(parent);
		return -ENOMEM;
	}
	for (i = 0; i < f->nedges; i++)
		we[i] = (struct wedge){f->edges[i].from, f->edges[i].to,
				       edge_count[i] > 0 ? (double)edge_count[i] : 0};
	we[f->nedges] = (struct wedge){f->nblocks, f->entry_block, calls > 0 ? (double)calls : 0};
	qsort(we, n, sizeof(*we), cmp_wedge_desc);
	for (i = 0; i <= f->nblocks; i++)
		parent[i] = i;
	for (i = 0; i < n; i++) {
		uint32_t a = uf_find(parent, we[i].from), b = uf_find(parent, we[i].to);

		if (a != b) {
			parent[a] = b;
			continue;
		}
		nch++;
		incr += we[i].w;
	}
	free(we);
	free(parent);
	*counters = nch;
	*increments = incr;
	return 0;
}
