/*
 * Count propagation (see propagate.h). The unknowns are the edge counts (EXIT->root
 * included); every vertex gives the equation in = out, and a counted block also gives
 * in = count and out = count, virtual edges adding known flow on either side. A worklist
 * solves any equation left with one unknown, which on a spanning tree whose chords are known
 * is exactly Ball and Larus's post-order propagation. Then every equation is checked.
 */
#include "propagate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct solver {
	const struct cfg_func *f;
	int64_t *x;        /* [ne + 1] */
	bool *known;       /* [ne + 1] */
	int64_t *vin, *vout; /* [nv]: virtual flow in and out of each vertex */
	int64_t *vmid;     /* [nv]: the part of vin entering after the block's first instruction */
	int64_t *count;    /* [nv]: measured block count, COUNT_UNKNOWN when not counted */
	uint32_t nv, ne;
};

/* Edge ids into / out of vertex V, EXIT->root (id ne) included. */
static uint32_t nin(const struct solver *s, uint32_t v)
{
	if (v == s->f->nblocks)
		return s->f->exit_npred;
	return s->f->blocks[v].npred + (v == s->f->entry_block);
}

static uint32_t in_edge(const struct solver *s, uint32_t v, uint32_t k)
{
	if (v == s->f->nblocks)
		return s->f->pred[s->f->exit_first_pred + k];
	if (k == s->f->blocks[v].npred)
		return s->ne; /* EXIT->root */
	return s->f->pred[s->f->blocks[v].first_pred + k];
}

static uint32_t nout(const struct solver *s, uint32_t v)
{
	return v == s->f->nblocks ? 1 : s->f->blocks[v].nsucc;
}

static uint32_t out_edge(const struct solver *s, uint32_t v, uint32_t k)
{
	return v == s->f->nblocks ? s->ne : s->f->succ[s->f->blocks[v].first_succ + k];
}

static uint32_t edge_src(const struct solver *s, uint32_t e)
{
	return e == s->ne ? s->f->nblocks : s->f->edges[e].from;
}

static uint32_t edge_dst(const struct solver *s, uint32_t e)
{
	return e == s->ne ? s->f->entry_block : s->f->edges[e].to;
}

/* Sums the known edges of one side; returns the number of unknowns, the last in *UNK. */
static uint32_t side(const struct solver *s, uint32_t v, bool in, int64_t *sum, uint32_t *unk)
{
	uint32_t n = in ? nin(s, v) : nout(s, v), k, u = 0;

	*sum = 0;
	for (k = 0; k < n; k++) {
		uint32_t e = in ? in_edge(s, v, k) : out_edge(s, v, k);

		if (s->known[e]) {
			*sum += s->x[e];
		} else {
			u++;
			*unk = e;
		}
	}
	return u;
}

/* Tries v's equations; returns the edge it solved, or UINT32_MAX. With c the block's count
 * (entries through its first instruction) and m its entries from inside:
 *   in + vin - m = c,   out + vout = c + m,   in + vin = out + vout. */
static uint32_t solve_at(struct solver *s, uint32_t v)
{
	int64_t si, so, m = s->vmid[v];
	uint32_t ui = 0, uo = 0;
	uint32_t ni = side(s, v, true, &si, &ui), no = side(s, v, false, &so, &uo);

	si += s->vin[v];
	so += s->vout[v];
	if (s->count[v] != COUNT_UNKNOWN) {
		if (ni == 1) {
			s->x[ui] = s->count[v] + m - si;
			s->known[ui] = true;
			return ui;
		}
		if (no == 1) {
			s->x[uo] = s->count[v] + m - so;
			s->known[uo] = true;
			return uo;
		}
	}
	if (ni == 1 && no == 0) {
		s->x[ui] = so - si;
		s->known[ui] = true;
		return ui;
	}
	if (no == 1 && ni == 0) {
		s->x[uo] = si - so;
		s->known[uo] = true;
		return uo;
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

int propagate__func(const struct cfg_func *f, size_t func, const struct placement *pl,
		    const uint64_t *counters, const struct virtual_edge *ve, size_t nve,
		    struct func_counts *out)
{
	const struct func_plan *fp = &pl->funcs[func];
	struct solver s = { .f = f, .ne = f->nedges, .nv = f->nblocks + 1 };
	uint32_t *work = NULL, nw = 0, v, e, k;
	uint8_t *queued = NULL;
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	out->edges = malloc((s.ne + 1) * sizeof(*out->edges));
	out->measured = calloc(s.ne + 1, sizeof(*out->measured));
	out->blocks = malloc((f->nblocks ? f->nblocks : 1) * sizeof(*out->blocks));
	s.x = out->edges;
	s.known = calloc(s.ne + 1, sizeof(*s.known));
	s.vin = calloc(s.nv, sizeof(*s.vin));
	s.vout = calloc(s.nv, sizeof(*s.vout));
	s.vmid = calloc(s.nv, sizeof(*s.vmid));
	s.count = malloc(s.nv * sizeof(*s.count));
	work = malloc(s.nv * 4 * sizeof(*work));
	queued = calloc(s.nv, 1);
	if (!out->edges || !out->measured || !out->blocks || !s.known || !s.vin || !s.vout ||
	    !s.vmid || !s.count || !work || !queued)
		goto fail;
	for (e = 0; e <= s.ne; e++) {
		s.x[e] = 0;
		if (fp->edge_counter && fp->edge_counter[e] != PLACEMENT_NO_COUNTER) {
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
			const struct probe_site *site =
				&pl->sites[pl->counters[fp->block_counter[x->from]].site];

			if (site->addr > x->stopped_at ||
			    (x->stopped_before && site->addr == x->stopped_at))
				s.count[x->from] += (int64_t)x->count;
		}
		/* A frame entered inside a block: not an entry, unless the counter saw it. */
		if (x->resumed_at && x->to < f->nblocks &&
		    x->resumed_at != f->blocks[x->to].start) {
			s.vmid[x->to] += (int64_t)x->count;
			if (s.count[x->to] != COUNT_UNKNOWN) {
				const struct probe_site *site =
					&pl->sites[pl->counters[fp->block_counter[x->to]].site];

				if (site->addr >= x->resumed_at)
					s.count[x->to] -= (int64_t)x->count;
			}
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
			uint32_t ends[2] = { edge_src(&s, solved), edge_dst(&s, solved) };

			for (k = 0; k < 2; k++)
				if (!queued[ends[k]]) {
					queued[ends[k]] = 1;
					work[nw++] = ends[k];
				}
		}
	}
	for (e = 0; e <= s.ne; e++)
		if (!s.known[e])
			s.x[e] = COUNT_UNKNOWN;
	/* Block counts, then every equation checked. */
	for (v = 0; v < s.nv; v++) {
		int64_t si, so;
		uint32_t ui, uo, ni = side(&s, v, true, &si, &ui), no = side(&s, v, false, &so, &uo);
		int64_t c = COUNT_UNKNOWN;
		bool bad = false;

		si += s.vin[v];
		so += s.vout[v];
		if (s.count[v] != COUNT_UNKNOWN) {
			c = s.count[v];
			bad |= (ni == 0 && si - s.vmid[v] != c) || (no == 0 && so - s.vmid[v] != c);
		} else if (ni == 0) {
			c = si - s.vmid[v];
		} else if (no == 0) {
			c = so - s.vmid[v];
		}
		bad |= ni == 0 && no == 0 && si != so;
		bad |= c != COUNT_UNKNOWN && c < 0;
		for (k = 0; k < nout(&s, v); k++) {
			e = out_edge(&s, v, k);
			bad |= s.known[e] && s.x[e] < 0;
		}
		if (v < f->nblocks)
			out->blocks[v] = c;
		if (bad && (err = add_violation(out, v)))
			goto fail;
	}
	free(s.known);
	free(s.vin);
	free(s.vout);
	free(s.vmid);
	free(s.count);
	free(work);
	free(queued);
	return 0;
fail:
	free(s.known);
	free(s.vin);
	free(s.vout);
	free(s.vmid);
	free(s.count);
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
