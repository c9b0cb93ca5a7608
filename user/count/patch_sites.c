/*
 * The bridge between a counting plan and in-process counters (see patch_sites.h): the patch
 * analysis of cfg/patch_window.h run once per program, each plan site's window looked up from
 * its kind (a count site's window starts at it, a branch site's ends with its jcc), and the
 * site's trampoline made by user/count/trampoline.h with the flags live where each of its
 * increments goes (flag-saving increments keep them with lahf/seto, the cheaper measured way).
 * Indirect sites get a window from their table load to their jump and an indexed increment
 * into slots of their own, one per table entry, folded into per-edge counts when read.
 * Springboard slots are reserved before the plan is final (patch_sites__reserve): the first
 * plan's short windows first, in address order, each the lowest free slot in reach (which
 * leaves the most room to the windows after it), then, before a function is planned again,
 * every other short window of it (patch_sites__reserve_funcs); one left without a slot loses
 * its class, so no plan made afterwards needs a slot twice.
 */
#include "user/count/patch_sites.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/cfg_snapshot.h"
#include "cfg/elf_image.h"
#include "cfg/patch_window.h"
#include "cfg/sort.h"
#include "user/util/log.h"

/* The slots of one table jump. */
struct ind_slots {
	uint64_t jump;	 /* ELF vaddr of the table jump */
	uint32_t slot;	 /* its first slot, from the slots' start */
	uint32_t nslots; /* table entries (one more slot follows: out of range) */
};

struct patch_sites {
	const struct cfg_program *prog;
	struct patch_analysis pa;
	struct ind_slots *ind; /* by jump address */
	size_t nind;
	uint32_t nslots, first;
	uint8_t *taken;	  /* per byte of the padding gaps: TAKEN_* */
	uint64_t *gap_at; /* gap g's first byte in taken */
	uint64_t gap_bytes;
	struct sb_res *res; /* reserved slots, by (addr, kind) */
	size_t nres, res_cap;
	uint8_t *func_done; /* per function: every short window of it has a slot (or no class) */
};

#define TAKEN_RESERVED 1 /* a reserved slot holds the byte */
#define TAKEN_CHECK 2	 /* a slot given out since patch_sites__reset_springboards */

/* A springboard slot reserved for the short window of one instruction. */
struct sb_res {
	uint64_t addr; /* the instruction (a count window's start, a branch window's jcc) */
	uint64_t sb;   /* its slot [sb, sb + PATCH_SPRING_LEN) */
	uint8_t kind;  /* SITE_COUNT or SITE_BRANCH */
};

static int cmp_ind(const void *a, const void *b)
{
	const struct ind_slots *x = a, *y = b;

	return x->jump < y->jump ? -1 : x->jump > y->jump;
}

/* Slots for every table jump with an indirect class. Returns 0 or -ENOMEM. */
static int lay_out_slots(struct patch_sites *ps)
{
	const struct cfg_program *prog = ps->prog;
	size_t n = 0;
	uint64_t total = 0;

	for (size_t i = 0; i < prog->nfuncs; i++)
		n += prog->funcs[i].ntables;
	ps->ind = calloc(n + 1, sizeof(*ps->ind));
	if (!ps->ind)
		return -ENOMEM;
	for (size_t i = 0; i < prog->nfuncs; i++) {
		const struct cfg_func *f = &prog->funcs[i];

		for (uint32_t t = 0; t < f->ntables; t++) {
			long k = patch_func__insn_at(f, f->tables[t].jump);

			if (k < 0 || !f->insns[k].patch_indirect)
				continue;
			if (total + f->tables[t].entries + 1 > UINT32_MAX / 2) {
				f->insns[k].patch_indirect = 0; /* absurdly many: uprobes */
				continue;
			}
			ps->ind[ps->nind++] = (struct ind_slots){ .jump = f->tables[t].jump,
								  .slot = (uint32_t)total,
								  .nslots = f->tables[t].entries };
			total += f->tables[t].entries + 1;
		}
	}
	qsort(ps->ind, ps->nind, sizeof(*ps->ind), cmp_ind);
	ps->nslots = (uint32_t)total;
	return 0;
}

static const struct ind_slots *ind_of(const struct patch_sites *ps, uint64_t jump)
{
	struct ind_slots key = { .jump = jump };

	return ps->nind ? bsearch(&key, ps->ind, ps->nind, sizeof(key), cmp_ind) : NULL;
}

/* The lowest springboard slot in reach of a jmp rel8 at START (see patch_window.h) whose 5
 * bytes lie in one gap, none of them taken (patch_sites__take) nor in a slot of USED[0, NUSED)
 * (slot starts), holding none of AVOID[0, NAVOID) (sorted); 0 when there is none. */
static uint64_t free_slot(const struct patch_sites *ps, uint64_t start, const uint64_t *used,
			  size_t nused, const uint64_t *avoid, size_t navoid)
{
	const struct patch_analysis *pa = &ps->pa;
	uint64_t lo, hi;

	patch_window__sb_reach(start, &lo, &hi);
	for (size_t g = patch_analysis__gap_after(pa, lo); g < pa->ngaps && pa->gaps[g].lo <= hi;
	     g++) {
		const struct patch_gap *gp = &pa->gaps[g];
		uint64_t x = gp->lo > lo ? gp->lo : lo;
		size_t run = 0; /* free bytes ending at x */

		for (; x < gp->hi && x < hi + PATCH_SPRING_LEN; x++) {
			bool clash = ps->taken[ps->gap_at[g] + (x - gp->lo)];

			for (size_t u = 0; !clash && u < nused; u++)
				clash = used[u] <= x && x < used[u] + PATCH_SPRING_LEN;
			run = clash ? 0 : run + 1;
			if (run == PATCH_SPRING_LEN) {
				uint64_t sb = x + 1 - PATCH_SPRING_LEN;

				if (!sort__any_in_u64(avoid, navoid, sb, sb + PATCH_SPRING_LEN))
					return sb;
				run--; /* the next start */
			}
		}
	}
	return 0;
}

void patch_sites__reset_springboards(struct patch_sites *ps)
{
	for (uint64_t i = 0; i < ps->gap_bytes; i++)
		ps->taken[i] &= (uint8_t)~TAKEN_CHECK;
}

/* The TAKEN_* bits of padding byte A (0 outside the gaps). */
static uint8_t taken_at(const struct patch_sites *ps, uint64_t a)
{
	const struct patch_analysis *pa = &ps->pa;
	size_t g = patch_analysis__gap_after(pa, a);

	return g < pa->ngaps && pa->gaps[g].lo <= a
		   ? ps->taken[ps->gap_at[g] + (a - pa->gaps[g].lo)]
		   : 0;
}

/* Marks [SB, SB + 5) with BIT. */
static void mark_slot(struct patch_sites *ps, uint64_t sb, uint8_t bit)
{
	const struct patch_analysis *pa = &ps->pa;
	size_t g = patch_analysis__gap_after(pa, sb);

	if (g < pa->ngaps && pa->gaps[g].lo <= sb && sb + PATCH_SPRING_LEN <= pa->gaps[g].hi)
		for (uint64_t x = 0; x < PATCH_SPRING_LEN; x++)
			ps->taken[ps->gap_at[g] + (sb - pa->gaps[g].lo) + x] |= bit;
}

bool patch_sites__slot_free(const struct patch_sites *ps, uint64_t sb)
{
	for (uint64_t x = 0; x < PATCH_SPRING_LEN; x++)
		if (taken_at(ps, sb + x) & TAKEN_CHECK)
			return false;
	return true;
}

void patch_sites__take(struct patch_sites *ps, uint64_t sb)
{
	mark_slot(ps, sb, TAKEN_CHECK);
}

static int cmp_res(const void *a, const void *b)
{
	const struct sb_res *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

/* The slot reserved for the window of KIND at ADDR among the first N reservations (sorted),
 * or NULL. */
static const struct sb_res *res_of(const struct patch_sites *ps, size_t n, uint64_t addr,
				   uint8_t kind)
{
	struct sb_res key = {.addr = addr, .kind = kind};

	return n ? bsearch(&key, ps->res, n, sizeof(key), cmp_res) : NULL;
}

/* Reserves a slot for the short window W of KIND at ADDR: 1 when it got one (or had one), 0
 * when none is free, -ENOMEM. */
static int reserve_one(struct patch_sites *ps, const struct patch_window *w, uint64_t addr,
		       uint8_t kind)
{
	uint64_t sb = free_slot(ps, w->start, NULL, 0, NULL, 0);

	if (!sb)
		return 0;
	if (ps->nres == ps->res_cap) {
		size_t cap = ps->res_cap ? 2 * ps->res_cap : 1024;
		struct sb_res *v = realloc(ps->res, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ps->res = v;
		ps->res_cap = cap;
	}
	ps->res[ps->nres++] = (struct sb_res){.addr = addr, .sb = sb, .kind = kind};
	mark_slot(ps, sb, TAKEN_RESERVED);
	return 1;
}

/* The window instruction K of F as a site of KIND (count or branch) would have with no held
 * thread avoided (0 with *W), else -ENOENT. */
static int insn_window(const struct patch_sites *ps, size_t fi, uint32_t k, uint8_t kind,
		       struct patch_window *w)
{
	const struct cfg_insn *in = &ps->prog->funcs[fi].insns[k];

	if (kind == SITE_COUNT)
		return in->patch_count ? patch_analysis__count_window(&ps->pa, fi, k, NULL, 0, 0, w)
				       : -ENOENT;
	return in->patch_branch ? patch_analysis__branch_window(&ps->pa, fi, k, NULL, 0, w)
				: -ENOENT;
}

/* The short window of instruction K of F as a site of KIND would have (0 with *W), else
 * -ENOENT (none, or not short). */
static int short_window(const struct patch_sites *ps, size_t fi, uint32_t k, uint8_t kind,
			struct patch_window *w)
{
	int err = insn_window(ps, fi, k, kind, w);

	return err ? err : w->short_jump ? 0 : -ENOENT;
}

/* The instruction of PL's site S in its function F (an index into f->insns), or -1: looked for
 * in the block its first counter measures (or ends, an edge's), else by its address. */
static long site_insn(const struct cfg_func *f, const struct placement *pl,
		      const struct probe_site *s)
{
	const struct counter_def *cd = s->counter < pl->ncounters ? &pl->counters[s->counter] : NULL;
	uint32_t b = UINT32_MAX;

	if (cd && cd->func == s->func && cd->what == COUNTS_BLOCK)
		b = cd->id;
	else if (cd && cd->func == s->func && cd->what == COUNTS_EDGE && cd->id < f->nedges)
		b = f->edges[cd->id].from;
	for (uint32_t k = 0; b < f->nblocks && k < f->blocks[b].ninsns; k++)
		if (f->insns[f->blocks[b].first_insn + k].addr == s->addr)
			return (long)(f->blocks[b].first_insn + k);
	return patch_func__insn_at(f, s->addr);
}

/* Drops the class of KIND of instruction K of F (it has no slot). */
static void drop(struct patch_sites *ps, size_t fi, uint32_t k, uint8_t kind)
{
	struct cfg_insn *in = &((struct cfg_func *)&ps->prog->funcs[fi])->insns[k];

	if (kind == SITE_COUNT)
		in->patch_count = 0;
	else
		in->patch_branch = 0;
}

int patch_sites__reserve(struct patch_sites *ps, const struct placement *pl, bool *redo,
			 size_t *ndropped, patch_window_fn seen, void *ctx)
{
	const struct cfg_program *prog = ps->prog;
	struct patch_window w;
	int err = 0, r;

	*ndropped = 0;
	/* The plan's short windows (sites are sorted by address). */
	for (size_t i = 0; i < pl->nsites && !err; i++) {
		const struct probe_site *s = &pl->sites[i];
		long k;

		if (!probe_class__in_process(s->probe_class) || s->kind == SITE_INDIRECT ||
		    s->func >= prog->nfuncs ||
		    (k = site_insn(&prog->funcs[s->func], pl, s)) < 0 ||
		    insn_window(ps, s->func, (uint32_t)k, s->kind, &w))
			continue;
		r = w.short_jump ? reserve_one(ps, &w, s->addr, s->kind) : 1;
		if (r < 0) {
			err = r;
		} else if (!r) {
			drop(ps, s->func, (uint32_t)k, s->kind);
			redo[s->func] = true;
			++*ndropped;
		} else if (seen) {
			seen(ctx, s, w.start, w.len, w.short_jump ? ps->res[ps->nres - 1].sb : 0);
		}
	}
	if (!err && ps->nres)
		qsort(ps->res, ps->nres, sizeof(*ps->res), cmp_res);
	return err;
}

/* Every other window of function FI that would be short (from an instruction less than 5
 * bytes before its block's end, or of a jcc ending a block with less than 5 bytes) gets a slot
 * or loses its class; the first NSORTED reservations are sorted. Returns 0 or -ENOMEM. */
static int reserve_func(struct patch_sites *ps, size_t fi, size_t nsorted)
{
	const struct cfg_func *f = &ps->prog->funcs[fi];
	struct patch_window w;
	int err = 0, r;

	for (uint32_t b = 0; b < f->nblocks && !err; b++) {
		const struct cfg_block *bl = &f->blocks[b];
		uint32_t last = bl->first_insn + bl->ninsns - 1;

		for (uint32_t k = bl->first_insn; bl->ninsns && k <= last && !err; k++) {
			for (uint8_t kind = SITE_COUNT; kind <= SITE_BRANCH; kind++) {
				uint64_t a = f->insns[k].addr;

				if ((kind == SITE_BRANCH && k != last) ||
				    f->insns[last].addr + f->insns[last].size - a >= 5 ||
				    short_window(ps, fi, k, kind, &w) ||
				    res_of(ps, nsorted, a, kind))
					continue;
				r = reserve_one(ps, &w, a, kind);
				if (r < 0)
					err = r;
				else if (!r)
					drop(ps, fi, k, kind);
			}
		}
	}
	return err;
}

int patch_sites__reserve_funcs(struct patch_sites *ps, const bool *funcs)
{
	size_t nsorted = ps->nres, n = ps->prog->nfuncs;
	int err = 0;

	if (!ps->func_done && !(ps->func_done = calloc(n + 1, 1)))
		return -ENOMEM;
	for (size_t fi = 0; fi < n && !err; fi++)
		if (funcs[fi] && !ps->func_done[fi]) {
			err = reserve_func(ps, fi, nsorted);
			ps->func_done[fi] = 1;
		}
	if (!err && ps->nres > nsorted)
		qsort(ps->res, ps->nres, sizeof(*ps->res), cmp_res);
	return err;
}

/* The map of the gaps' bytes. Returns 0 or -ENOMEM. */
static int map_gaps(struct patch_sites *ps)
{
	const struct patch_analysis *pa = &ps->pa;

	ps->gap_at = calloc(pa->ngaps + 1, sizeof(*ps->gap_at));
	if (!ps->gap_at)
		return -ENOMEM;
	for (size_t g = 0; g < pa->ngaps; g++) {
		ps->gap_at[g] = ps->gap_bytes;
		ps->gap_bytes += pa->gaps[g].hi - pa->gaps[g].lo;
	}
	ps->taken = calloc(ps->gap_bytes + 1, 1);
	return ps->taken ? 0 : -ENOMEM;
}

int patch_sites__open(struct patch_sites **out, struct cfg_program *prog)
{
	struct patch_sites *ps = calloc(1, sizeof(*ps));
	int err;

	*out = NULL;
	if (!ps)
		return -ENOMEM;
	ps->prog = prog;
	err = patch_analysis__build(&ps->pa, prog);
	if (err) {
		free(ps);
		return err;
	}
	patch_analysis__apply(&ps->pa, prog);
	err = map_gaps(ps);
	if (!err)
		err = lay_out_slots(ps);
	if (err) {
		patch_sites__close(ps);
		return err;
	}
	*out = ps;
	return 0;
}

uint32_t patch_sites__nslots(const struct patch_sites *ps)
{
	return ps->nslots;
}

void patch_sites__place_slots(struct patch_sites *ps, uint32_t first)
{
	ps->first = first;
}

/* The window of site S under AVOID (OPTS: PATCH_WINDOW_* of a count window): 0 with *W, or
 * -ENOENT. */
static int site_window(const struct patch_sites *ps, const struct probe_site *s,
		       const uint64_t *avoid, size_t navoid, unsigned opts, struct patch_window *w)
{
	const struct cfg_func *f;
	long k;

	if (s->func >= ps->prog->nfuncs)
		return -ENOENT;
	f = &ps->prog->funcs[s->func];
	k = patch_func__insn_at(f, s->addr);
	if (k < 0)
		return -ENOENT;
	switch (s->kind) {
	case SITE_COUNT:
		if (!f->insns[k].patch_count)
			return -ENOENT; /* refused since the analysis */
		return patch_analysis__count_window(&ps->pa, s->func, (uint32_t)k, avoid, navoid,
						    opts, w);
	case SITE_BRANCH:
		if (!f->insns[k].patch_branch)
			return -ENOENT;
		return patch_analysis__branch_window(&ps->pa, s->func, (uint32_t)k, avoid, navoid,
						     w);
	case SITE_INDIRECT:
		if (!f->insns[k].patch_indirect || !ind_of(ps, s->addr))
			return -ENOENT;
		return patch_analysis__indirect_window(&ps->pa, s->func, (uint32_t)k, avoid,
						       navoid, w);
	default:
		return -ENOENT;
	}
}

int patch_sites__window(const struct patch_sites *ps, const struct probe_site *s,
			const uint64_t *avoid, size_t navoid, const uint64_t *used, size_t nused,
			uint64_t *start, uint8_t *len, uint64_t *sb)
{
	struct patch_window w;
	int err = site_window(ps, s, avoid, navoid, 0, &w);

	*sb = 0;
	if (!err && w.short_jump) {
		/* Its reserved slot, unless a held thread is there or it was given out already;
		 * else (a window patch_sites__reserve did not see) the lowest free one. */
		const struct sb_res *r = res_of(ps, ps->nres, s->addr, s->kind);
		bool clash = !r || sort__any_in_u64(avoid, navoid, r->sb, r->sb + PATCH_SPRING_LEN);

		for (uint64_t x = 0; !clash && x < PATCH_SPRING_LEN; x++)
			clash = taken_at(ps, r->sb + x) & TAKEN_CHECK;
		for (size_t u = 0; !clash && u < nused; u++)
			clash = used[u] < r->sb + PATCH_SPRING_LEN &&
				r->sb < used[u] + PATCH_SPRING_LEN;
		*sb = clash ? free_slot(ps, w.start, used, nused, avoid, navoid) : r->sb;
		if (!*sb)
			err = -ENOENT;
	}
	if (err)
		return err;
	*start = w.start;
	*len = w.len;
	return 0;
}

/* Into *W the window of site S that is [START, START + LEN) with the springboard SB (0: none):
 * the one S has with no held thread avoided, or, for a count site, the fewest instructions of
 * its short window (patch_sites__window gives that one when a held thread's resume point lies
 * in the block's end). Returns 0, or -EINVAL when S has no such window (it was not checked). */
static int checked_window(const struct patch_sites *ps, const struct probe_site *s, uint64_t start,
			  uint8_t len, uint64_t sb, struct patch_window *w)
{
	bool same = !site_window(ps, s, NULL, 0, 0, w) && w->start == start && w->len == len;

	if (!same && s->kind == SITE_COUNT)
		same = !site_window(ps, s, NULL, 0, PATCH_WINDOW_SHORTEST, w) && w->short_jump &&
		       w->start == start && w->len == len;
	if (!same || w->short_jump != (sb != 0) ||
	    (sb && !patch_analysis__springboard_ok(&ps->pa, w, sb)))
		return -EINVAL;
	return 0;
}

bool patch_sites__emit_accepts(const struct patch_sites *ps, const struct probe_site *s,
			       uint64_t start, uint8_t len, uint64_t sb)
{
	struct patch_window w;
	size_t avail = 0;

	if (checked_window(ps, s, start, len, sb, &w))
		return false;
	if (!elf_image__code(ps->prog->img, start, &avail) || avail < w.reloc_len)
		return false;
	if (sb && (!elf_image__code(ps->prog->img, sb, &avail) || avail < PATCH_SPRING_LEN))
		return false;
	return s->kind != SITE_INDIRECT || ind_of(ps, s->addr);
}

/* The most instructions and bytes of one continuation. */
#define CONT_MAX_INSNS 12
#define CONT_MAX_BYTES 64

/* Whether [A, A + N) overlaps a range written over (CONTS' sorted, disjoint ranges). */
static bool overwritten(const struct patch_conts *c, uint64_t a, uint8_t n)
{
	size_t k = sort__lower_bound_u64(c->hi, c->nranges, a + 1); /* the first ending after a */

	return k < c->nranges && c->lo[k] < a + n;
}

/* The continuation from ELF vaddr X in function FI (see struct tramp_cont) into *C, its sizes
 * and kinds into SIZES and KINDS (CONT_MAX_INSNS each): true when there is one worth making,
 * one that transfers control (a jcc, a jmp or a ret) before it must end. */
static bool make_cont(const struct patch_sites *ps, size_t fi, uint64_t x,
		      const struct patch_conts *c, uint64_t bias, struct tramp_cont *out,
		      uint8_t *sizes, uint8_t *kinds)
{
	const struct cfg_func *f = &ps->prog->funcs[fi];
	const struct patch_func *pf = &ps->pa.funcs[fi];
	long k = patch_func__insn_at(f, x);
	uint64_t a = x;
	uint32_t n = 0, len = 0;
	bool transfers = false;
	const uint8_t *bytes;
	size_t avail = 0;

	if (pf->refused || k < 0 || !(bytes = elf_image__code(ps->prog->img, x, &avail)))
		return false;
	for (; (size_t)k < f->ninsns && n < CONT_MAX_INSNS; k++) {
		const struct cfg_insn *in = &f->insns[k];
		uint8_t kind = pf->reloc[k];

		if (in->addr != a || in->overlap || len + in->size > CONT_MAX_BYTES ||
		    len + in->size > avail ||
		    (kind != RELOC_COPY && kind != RELOC_RIP && kind != RELOC_JCC &&
		     kind != RELOC_JMP && kind != RELOC_RET) ||
		    sort__any_in_u64(c->stop, c->nstop, a, a + 1) ||
		    overwritten(c, a, in->size) ||
		    (c->bytes_ok && !c->bytes_ok(c->ctx, a, in->size)))
			break;
		sizes[n] = in->size;
		kinds[n++] = kind;
		len += in->size;
		a += in->size;
		if (kind == RELOC_JCC || kind == RELOC_JMP || kind == RELOC_RET)
			transfers = true;
		if (kind == RELOC_JMP || kind == RELOC_RET)
			break;
	}
	if (!transfers)
		return false;
	*out = (struct tramp_cont){.at = x + bias, .bytes = bytes, .len = (uint8_t)len,
				   .ninsns = (uint8_t)n, .sizes = sizes, .kinds = kinds};
	return true;
}

/* Where the jcc or jmp ending a block of F at instruction K jumps to within F (its taken or
 * jump edge's block), or 0. */
static uint64_t jump_target(const struct cfg_func *f, uint32_t k)
{
	int b = cfg_func__block_containing(f, f->insns[k].addr);

	if (b < 0 || f->blocks[b].first_insn + f->blocks[b].ninsns != k + 1)
		return 0;
	for (uint32_t i = 0; i < f->blocks[b].nsucc; i++) {
		const struct cfg_edge *e = &f->edges[f->succ[f->blocks[b].first_succ + i]];

		if ((e->kind == EDGE_TAKEN || e->kind == EDGE_JUMP) && e->to < f->nblocks)
			return f->blocks[e->to].start;
	}
	return 0;
}

int patch_sites__emit(const struct patch_sites *ps, const struct probe_site *s, uint64_t start,
		      uint8_t len, uint64_t sb, uint64_t bias, uint64_t tramp, uint64_t counters,
		      bool atomic, const struct patch_conts *conts,
		      struct patch_blob *out)
{
	struct patch_window w;
	struct tramp_spec sp = { 0 };
	const uint8_t *bytes;
	size_t avail = 0;
	int err = checked_window(ps, s, start, len, sb, &w);

	if (err)
		return err;
	if (w.short_jump && s->kind == SITE_COUNT && !w.ends_block)
		pr_debug("site %#llx: a short window of %u bytes, not to its block's end (a held "
			 "thread's resume point there, or an instruction that ends windows only)",
			 (unsigned long long)s->addr, len);
	bytes = elf_image__code(ps->prog->img, start, &avail);
	if (!bytes || avail < w.reloc_len)
		return -EINVAL;
	if (sb) {
		sp.springboard = sb + bias;
		sp.sb_bytes = elf_image__code(ps->prog->img, sb, &avail);
		if (!sp.sb_bytes || avail < PATCH_SPRING_LEN)
			return -EINVAL;
	}
	sp.site = start + bias;
	sp.bytes = bytes;
	sp.len = len;
	sp.tramp = tramp;
	sp.counters = counters;
	sp.entry_counter = sp.taken_counter = sp.not_taken_counter = PATCH_NO_COUNTER;
	if (s->kind == SITE_INDIRECT) {
		const struct ind_slots *is = ind_of(ps, s->addr);

		if (!is)
			return -EINVAL;
		sp.indexed = true;
		sp.len = w.reloc_len;
		sp.patch_len = len;
		sp.index_reg = w.index_reg;
		sp.index_mult = w.index_mult;
		sp.index_at = w.index_at + bias;
		sp.live_index = w.live_index;
		sp.index_counter = ps->first + is->slot;
		sp.index_slots = is->nslots;
	} else if (s->kind == SITE_COUNT) {
		sp.entry_counter = s->counter;
	} else {
		sp.taken_counter = s->counter;
		sp.not_taken_counter = s->counter2;
	}
	sp.live_entry = w.live_entry;
	sp.live_taken = w.live_taken;
	sp.live_not_taken = w.live_not_taken;
	sp.atomic = atomic;
	sp.flagsave = TRAMP_SAVE_LAHF;
	/* The window's instructions as the analysis decoded them (not decoded again). */
	{
		const struct cfg_func *f = &ps->prog->funcs[w.func];
		const struct patch_func *pf = &ps->pa.funcs[w.func];
		uint8_t sizes[TRAMP_MAX_RELOC], kinds[TRAMP_MAX_RELOC];
		uint32_t n = 0, total = 0;

		for (uint32_t k = w.first; k <= w.last && k < f->ninsns && n < TRAMP_MAX_RELOC;
		     k++, n++) {
			sizes[n] = f->insns[k].size;
			kinds[n] = pf->reloc[k];
			total += sizes[n];
		}
		/* Continuations: the window's end, its jcc's two outcomes or its jmp's target. */
		struct tramp_cont cont[2];
		uint8_t csizes[2][CONT_MAX_INSNS], ckinds[2][CONT_MAX_INSNS];
		uint64_t exits[2];
		uint32_t nexits = 0, ncont = 0;

		if (n && total == sp.len && f->insns[w.first].addr == start) {
			sp.sizes = sizes;
			sp.kinds = kinds;
			sp.ninsns = n;
		}
		if (conts && s->kind != SITE_INDIRECT && w.last < f->ninsns) {
			const struct cfg_insn *last = &f->insns[w.last];
			uint8_t lk = pf->reloc[w.last];

			if (lk == RELOC_JCC || lk == RELOC_JMP) {
				uint64_t t = jump_target(f, w.last);

				if (t)
					exits[nexits++] = t;
			}
			if (lk != RELOC_JMP && lk != RELOC_RET && lk != RELOC_JMP_IND &&
			    lk != RELOC_CALL && lk != RELOC_CALL_IND)
				exits[nexits++] = last->addr + last->size;
			for (uint32_t x = 0; x < nexits; x++)
				if ((!ncont || cont[0].at != exits[x] + bias) &&
				    make_cont(ps, w.func, exits[x], conts, bias, &cont[ncont],
					      csizes[ncont], ckinds[ncont]))
					ncont++;
			if (ncont == 2 && cont[1].at < cont[0].at) { /* sorted by at */
				struct tramp_cont t = cont[0];

				cont[0] = cont[1];
				cont[1] = t;
			}
			sp.cont = cont;
			sp.ncont = ncont;
		}
		return trampoline__emit(&sp, out);
	}
}

uint64_t patch_sites__span_end(const struct patch_sites *ps, const struct probe_site *s,
			       uint64_t start, uint8_t len)
{
	const struct cfg_func *f;
	long k;

	if (s->kind != SITE_INDIRECT || s->func >= ps->prog->nfuncs)
		return start + len;
	f = &ps->prog->funcs[s->func];
	k = patch_func__insn_at(f, s->addr);
	return k < 0 ? start + len : s->addr + f->insns[k].size;
}

void patch_sites__fold(const struct patch_sites *ps, const struct probe_site *s,
		       const uint64_t *slots, uint64_t *counters, uint64_t *unmatched)
{
	const struct ind_slots *is = ind_of(ps, s->addr);
	const struct cfg_func *f;
	const struct cfg_jump_table *jt = NULL;
	int b;

	if (!is || s->kind != SITE_INDIRECT || s->func >= ps->prog->nfuncs)
		return;
	f = &ps->prog->funcs[s->func];
	for (uint32_t t = 0; t < f->ntables && !jt; t++)
		if (f->tables[t].jump == s->addr)
			jt = &f->tables[t];
	b = cfg_func__block_containing(f, s->addr);
	slots += ps->first + is->slot;
	*unmatched += slots[is->nslots]; /* indices out of the table */
	for (uint32_t j = 0; j < is->nslots; j++) {
		uint64_t v = 0, hits = slots[j];
		bool found = false;

		if (!hits)
			continue;
		if (jt && b >= 0 &&
		    !elf_image__read(ps->prog->img, jt->table + (uint64_t)j * jt->entry_size,
				     jt->entry_size, &v)) {
			if (jt->relative)
				v = jt->rel_base + (uint64_t)(int64_t)(int32_t)(uint32_t)v;
			for (uint32_t k = 0; k < f->blocks[b].nsucc && k < s->counter2; k++) {
				const struct cfg_edge *e =
					&f->edges[f->succ[f->blocks[b].first_succ + k]];

				if (e->to < f->nblocks && f->blocks[e->to].start == v) {
					counters[s->counter + k] += hits;
					found = true;
					break;
				}
			}
		}
		if (!found)
			*unmatched += hits;
	}
}

void patch_sites__close(struct patch_sites *ps)
{
	if (!ps)
		return;
	free(ps->ind);
	free(ps->taken);
	free(ps->gap_at);
	free(ps->res);
	free(ps->func_done);
	patch_analysis__release(&ps->pa);
	free(ps);
}

_Static_assert(sizeof(struct patch_sites) == 264, "patch_sites changed: save it (patch_sites__save)");
_Static_assert(sizeof(struct ind_slots) == 16, "ind_slots changed: save it");
_Static_assert(sizeof(struct sb_res) == 24, "sb_res changed: save it");

/* Clears the pointers of PS (written as arrays after it; its analysis on its own). */
static void sites_unlink(struct patch_sites *ps)
{
	ps->prog = NULL;
	memset(&ps->pa, 0, sizeof(ps->pa));
	ps->ind = NULL;
	ps->taken = NULL;
	ps->gap_at = NULL;
	ps->res = NULL;
	ps->res_cap = 0;
	ps->func_done = NULL;
}

int patch_sites__save(const struct patch_sites *ps, struct snap_out *o)
{
	struct patch_sites t = *ps;

	sites_unlink(&t);
	snap_put(o, &t, sizeof(t));
	patch_analysis__save(&ps->pa, o);
	snap_put_array(o, ps->ind, ps->nind, sizeof(*ps->ind));
	snap_put_array(o, ps->taken, ps->gap_bytes + 1, 1);
	snap_put_array(o, ps->gap_at, ps->pa.ngaps + 1, sizeof(*ps->gap_at));
	snap_put_array(o, ps->res, ps->nres, sizeof(*ps->res));
	snap_put_opt(o, ps->func_done, ps->prog->nfuncs + 1, 1);
	return o->err;
}

int patch_sites__load(struct patch_sites **out, struct cfg_program *prog, struct snap_in *in)
{
	struct patch_sites *ps = calloc(1, sizeof(*ps));
	int err;

	*out = NULL;
	if (!ps)
		return in->err = -ENOMEM;
	if (!snap_get(in, ps, sizeof(*ps))) {
		free(ps);
		return in->err;
	}
	sites_unlink(ps);
	ps->prog = prog;
	if (patch_analysis__load(&ps->pa, prog, in))
		goto fail; /* the analysis released: zeroed */
	ps->ind = snap_get_array(in, ps->nind, sizeof(*ps->ind));
	ps->taken = snap_get_array(in, ps->gap_bytes + 1, 1);
	ps->gap_at = snap_get_array(in, ps->pa.ngaps + 1, sizeof(*ps->gap_at));
	ps->res = snap_get_array(in, ps->nres, sizeof(*ps->res));
	ps->res_cap = ps->nres ? ps->nres : 1;
	ps->func_done = snap_get_opt(in, prog->nfuncs + 1, 1);
	for (size_t g = 0; ps->gap_at && g < ps->pa.ngaps && !in->err; g++)
		snap_check(in, ps->gap_at[g] + (ps->pa.gaps[g].hi - ps->pa.gaps[g].lo) <= ps->gap_bytes);
	if (in->err)
		goto fail;
	*out = ps;
	return 0;
fail:
	err = in->err;
	patch_sites__close(ps);
	return err;
}

