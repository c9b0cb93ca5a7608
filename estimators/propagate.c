/*
 * Count propagation (see propagate.h). The unknowns are the edge counts (EXIT->root, the
 * pseudo-edges and the foreign entries included); every vertex gives the equation in = out, and a counted block also gives
 * in = count and out = count, virtual edges adding known flow on either side. A worklist
 * solves any equation left with one unknown, which on a spanning tree whose chords are known
 * is exactly Ball and Larus's post-order propagation. Then every equation is checked.
 */
#include "propagate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* How an edge meets a vertex: entering at the block's first instruction, entering after its
 * instructions (a setjmp's second return: a resume pseudo-edge), or leaving it. */
enum role { START_IN = 0, MID_IN = 1, OUT = 2 };

struct incidence {
	uint32_t edge;
	uint8_t role;
};

struct solver {
	const struct cfg_func *f;
	int64_t *x;        /* [nx]: CFG edges, EXIT->root (ne), pseudo-edges (ne + 1 + j),
			    * foreign entries (ne + 1 + np + j) */
	bool *known;       /* [nx] */
	int64_t *vin, *vout; /* [nv]: virtual flow in and out of each vertex */
	int64_t *vmid;     /* [nv]: the part of vin entering after the block's first instruction */
	int64_t *count;    /* [nv]: measured block count, COUNT_UNKNOWN when not counted */
	uint32_t nv, ne, np, nx;
	struct incidence *inc; /* every vertex's incidences, vertex v's at inc[first[v]..] */
	uint32_t *first;       /* [nv + 1] */
	uint32_t *src, *dst;   /* [nx] */
};

/* Builds the incidence lists of S (edges of F, EXIT->root, the pseudo-edges PS and the
 * foreign entries EXIT->F->foreign[j], which enter at the block's start). */
static int build_incidence(struct solver *s, const struct cfg_pseudo *ps)
{
	const struct cfg_func *f = s->f;
	uint32_t *fill, e;

	s->inc = malloc(2 * s->nx * sizeof(*s->inc));
	s->first = calloc(s->nv + 1, sizeof(*s->first));
	s->src = malloc(s->nx * sizeof(*s->src));
	s->dst = malloc(s->nx * sizeof(*s->dst));
	fill = calloc(s->nv + 1, sizeof(*fill));
	if (!s->inc || !s->first || !s->src || !s->dst || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (e = 0; e < s->nx; e++) {
		if (e < s->ne) {
			s->src[e] = f->edges[e].from;
			s->dst[e] = f->edges[e].to;
		} else if (e == s->ne) {
			s->src[e] = f->nblocks;
			s->dst[e] = f->entry_block;
		} else if (e > s->ne + s->np) {
			s->src[e] = f->nblocks;
			s->dst[e] = f->foreign[e - s->ne - 1 - s->np];
		} else if (ps[e - s->ne - 1].kind == CFG_PSEUDO_ABANDON) {
			s->src[e] = ps[e - s->ne - 1].block;
			s->dst[e] = f->nblocks;
		} else {
			s->src[e] = f->nblocks;
			s->dst[e] = ps[e - s->ne - 1].block;
		}
		s->first[s->src[e] + 1]++;
		s->first[s->dst[e] + 1]++;
	}
	for (uint32_t v = 0; v < s->nv; v++)
		s->first[v + 1] += s->first[v];
	for (e = 0; e < s->nx; e++) {
		bool mid = e > s->ne && e <= s->ne + s->np &&
			   ps[e - s->ne - 1].kind == CFG_PSEUDO_RESUME;

		s->inc[s->first[s->src[e]] + fill[s->src[e]]++] =
			(struct incidence){ .edge = e, .role = OUT };
		s->inc[s->first[s->dst[e]] + fill[s->dst[e]]++] =
			(struct incidence){ .edge = e, .role = mid ? MID_IN : START_IN };
	}
	free(fill);
	return 0;
}

/* The equations of vertex V, each sum(coef[role] * x) = rhs over its incidences:
 *   0: flow  START_IN + MID_IN - OUT = vout - vin
 *   1: entries (a counted block)  START_IN = c - vin + vmid
 *   2: exits (a counted block)    OUT - MID_IN = c - vout + vmid */
static const int8_t coef[3][3] = { { 1, 1, -1 }, { 1, 0, 0 }, { 0, -1, 1 } };

static int64_t rhs(const struct solver *s, uint32_t v, int q)
{
	if (q == 0)
		return s->vout[v] - s->vin[v];
	if (q == 1)
		return s->count[v] - s->vin[v] + s->vmid[v];
	return s->count[v] - s->vout[v] + s->vmid[v];
}

/* Equation Q of V: the known part of its left side in *SUM; returns its number of unknowns
 * (with a non-zero coefficient), the last in *UNK with its coefficient *UC. */
static uint32_t equation(const struct solver *s, uint32_t v, int q, int64_t *sum, uint32_t *unk,
			 int *uc)
{
	uint32_t u = 0;

	*sum = 0;
	for (uint32_t k = s->first[v]; k < s->first[v + 1]; k++) {
		const struct incidence *in = &s->inc[k];
		int c = coef[q][in->role];

		if (!c)
			continue;
		if (s->known[in->edge]) {
			*sum += c * s->x[in->edge];
		} else {
			u++;
			*unk = in->edge;
			*uc = c;
		}
	}
	return u;
}

/* Tries v's equations; returns the edge it solved, or UINT32_MAX. */
static uint32_t solve_at(struct solver *s, uint32_t v)
{
	for (int q = 0; q < 3; q++) {
		int64_t sum;
		uint32_t unk = 0;
		int uc = 1;

		if (q && s->count[v] == COUNT_UNKNOWN)
			break;
		if (equation(s, v, q, &sum, &unk, &uc) == 1) {
			s->x[unk] = (rhs(s, v, q) - sum) * uc;
			s->known[unk] = true;
			return unk;
		}
	}
	return UINT32_MAX;
}

static int add_violation(struct func_counts *out, uint32_t v)
{
	uint32_t *nvv;

	for (uint32_t i = 0; i < out->nviolations; i++)
		if (out->violations[i] == v)
			return 0;
	nvv = realloc(out->violations, (out->nviolations + 1) * sizeof(*nvv));
	if (!nvv)
		return -ENOMEM;
	out->violations = nvv;
	out->violations[out->nviolations++] = v;
	return 0;
}

static void solver_free(struct solver *s)
{
	free(s->known);
	free(s->vin);
	free(s->vout);
	free(s->vmid);
	free(s->count);
	free(s->inc);
	free(s->first);
	free(s->src);
	free(s->dst);
}

/* Where block B's count is taken (B is counted): its counter's site, or its loop's step. */
static uint64_t counted_at(const struct placement *pl, const struct func_plan *fp, uint32_t b)
{
	if (fp->block_iv && fp->block_iv[b] != PLACEMENT_NO_COUNTER)
		return pl->ivs[fp->block_iv[b]].iv->step_addr;
	return pl->sites[pl->counters[fp->block_counter[b]].site].addr;
}

int propagate__func(const struct cfg_func *f, size_t func, const struct placement *pl,
		    const uint64_t *counters, const struct virtual_edge *ve, size_t nve,
		    struct func_counts *out)
{
	const struct func_plan *fp = &pl->funcs[func];
	uint32_t np = fp->status != PLAN_EXCLUDED ? fp->npseudo : 0;
	uint32_t nf = fp->status != PLAN_EXCLUDED ? f->nforeign : 0;
	struct solver s = { .f = f, .ne = f->nedges, .nv = f->nblocks + 1, .np = np,
			    .nx = f->nedges + 1 + np + nf };
	uint32_t *work = NULL, nw = 0, v, e, k;
	uint8_t *queued = NULL;
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	out->edges = malloc((s.nx + 1) * sizeof(*out->edges));
	out->measured = calloc(s.ne + 1, sizeof(*out->measured));
	out->blocks = malloc((f->nblocks ? f->nblocks : 1) * sizeof(*out->blocks));
	out->npseudo = np;
	out->pseudo = np ? fp->pseudo : NULL;
	out->nforeign = nf;
	out->foreign = nf ? f->foreign : NULL;
	s.x = out->edges;
	s.known = calloc(s.nx, sizeof(*s.known));
	s.vin = calloc(s.nv, sizeof(*s.vin));
	s.vout = calloc(s.nv, sizeof(*s.vout));
	s.vmid = calloc(s.nv, sizeof(*s.vmid));
	s.count = malloc(s.nv * sizeof(*s.count));
	work = malloc(s.nv * 4 * sizeof(*work));
	queued = calloc(s.nv, 1);
	if (!out->edges || !out->measured || !out->blocks || !s.known || !s.vin || !s.vout ||
	    !s.vmid || !s.count || !work || !queued || build_incidence(&s, fp->pseudo))
		goto fail;
	for (e = 0; e < s.nx; e++) {
		s.x[e] = 0;
		if (e <= s.ne && fp->edge_counter && fp->edge_counter[e] != PLACEMENT_NO_COUNTER) {
			s.x[e] = (int64_t)counters[fp->edge_counter[e]];
			s.known[e] = true;
			out->measured[e] = true;
		}
	}
	for (v = 0; v < s.nv; v++)
		s.count[v] = COUNT_UNKNOWN;
	for (v = 0; fp->block_counter && v < f->nblocks; v++)
		if (fp->block_counter[v] != PLACEMENT_NO_COUNTER)
			s.count[v] = (int64_t)counters[fp->block_counter[v]];
	/* A loop counted by induction: its step's executions from the two sums. A difference
	 * the step does not divide, or a negative count, is no count: the block's equations
	 * then fail the check below. */
	for (v = 0; fp->block_iv && v < f->nblocks; v++)
		if (fp->block_iv[v] != PLACEMENT_NO_COUNTER) {
			const struct plan_iv *iv = &pl->ivs[fp->block_iv[v]];
			int64_t d = (int64_t)(counters[iv->acc_out] - counters[iv->acc_in]);
			int64_t step = iv->iv->step;

			s.count[v] = d % step || d / step < 0 ? -1 : d / step;
		}
	for (size_t i = 0; i < nve; i++) {
		const struct virtual_edge *x = &ve[i];

		if (x->from >= s.nv || x->to >= s.nv)
			continue;
		s.vout[x->from] += (int64_t)x->count;
		s.vin[x->to] += (int64_t)x->count;
		if (x->to == f->nblocks)
			out->virtual_out += x->count;
		else
			out->virtual_in += x->count;
		/* A frame stopped inside a block before the instruction that counts it. */
		if (x->stopped_at && x->from < f->nblocks && s.count[x->from] != COUNT_UNKNOWN) {
			uint64_t at = counted_at(pl, fp, x->from);

			if (at > x->stopped_at || (x->stopped_before && at == x->stopped_at))
				s.count[x->from] += (int64_t)x->count;
		}
		/* A frame entered inside a block: not an entry, unless the counter saw it. */
		if (x->resumed_at && x->to < f->nblocks &&
		    x->resumed_at != f->blocks[x->to].start) {
			s.vmid[x->to] += (int64_t)x->count;
			if (s.count[x->to] != COUNT_UNKNOWN &&
			    counted_at(pl, fp, x->to) >= x->resumed_at)
				s.count[x->to] -= (int64_t)x->count;
		}
	}
	/* Worklist over vertices: solve, then revisit both ends of what was solved. */
	for (v = 0; v < s.nv; v++) {
		work[nw++] = v;
		queued[v] = 1;
	}
	while (nw) {
		uint32_t solved;

		v = work[--nw];
		queued[v] = 0;
		while ((solved = solve_at(&s, v)) != UINT32_MAX) {
			uint32_t ends[2] = { s.src[solved], s.dst[solved] };

			for (k = 0; k < 2; k++)
				if (!queued[ends[k]]) {
					queued[ends[k]] = 1;
					work[nw++] = ends[k];
				}
		}
	}
	for (e = 0; e < s.nx; e++)
		if (!s.known[e])
			s.x[e] = COUNT_UNKNOWN;
	/* Block counts, then every equation checked. */
	for (v = 0; v < s.nv; v++) {
		int64_t sum[3], c = COUNT_UNKNOWN;
		uint32_t nu[3] = { 0, 0, 0 }, unk;
		int uc;
		bool bad = false;

		for (int q = 0; q < 3; q++)
			nu[q] = equation(&s, v, q, &sum[q], &unk, &uc);
		if (s.count[v] != COUNT_UNKNOWN) {
			c = s.count[v];
			bad |= (nu[1] == 0 && sum[1] != rhs(&s, v, 1)) ||
			       (nu[2] == 0 && sum[2] != rhs(&s, v, 2));
		} else if (v < f->nblocks && nu[1] == 0) {
			c = sum[1] + s.vin[v] - s.vmid[v];
		} else if (v < f->nblocks && nu[2] == 0) {
			c = sum[2] + s.vout[v] - s.vmid[v];
		}
		bad |= nu[0] == 0 && sum[0] != rhs(&s, v, 0);
		bad |= c != COUNT_UNKNOWN && c < 0;
		for (k = s.first[v]; k < s.first[v + 1]; k++) {
			e = s.inc[k].edge;
			bad |= s.known[e] && s.x[e] < 0;
		}
		if (v < f->nblocks)
			out->blocks[v] = c;
		if (bad && (err = add_violation(out, v)))
			goto fail;
	}
	solver_free(&s);
	free(work);
	free(queued);
	return 0;
fail:
	solver_free(&s);
	free(work);
	free(queued);
	func_counts__release(out);
	return err ? err : -ENOMEM;
}

void func_counts__release(struct func_counts *fc)
{
	free(fc->edges);
	free(fc->blocks);
	free(fc->measured);
	free(fc->violations);
	memset(fc, 0, sizeof(*fc));
}
