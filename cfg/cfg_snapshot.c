/*
 * Saving and reading back a binary's CFGs, longjmp pseudo-edges and patch-window analysis
 * (see cfg_snapshot.h). Each record is written as it is in memory, its pointers then
 * replaced by the arrays written after it; the sizes asserted below make a change to any of
 * these records fail the build here until it is saved too.
 */
#include "cfg_snapshot.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "flag_liveness.h"

_Static_assert(sizeof(struct cfg_insn) == 16, "cfg_insn changed: save it (cfg_snapshot.c)");
_Static_assert(sizeof(struct cfg_edge) == 24, "cfg_edge changed: save it (cfg_snapshot.c)");
_Static_assert(sizeof(struct cfg_block) == 40, "cfg_block changed: save it (cfg_snapshot.c)");
_Static_assert(sizeof(struct cfg_call) == 40, "cfg_call changed: save it (cfg_snapshot.c)");
_Static_assert(sizeof(struct cfg_jump_table) == 56, "cfg_jump_table changed: save it");
_Static_assert(sizeof(struct cfg_func) == 176, "cfg_func changed: save it (cfg_snapshot.c)");
_Static_assert(sizeof(struct cfg_stats) == 88, "cfg_stats changed: save it (cfg_snapshot.c)");
_Static_assert(sizeof(struct cfg_program) == 224, "cfg_program changed: save it");
_Static_assert(sizeof(struct symbols) == 104, "symbols changed: save it (cfg_snapshot.c)");
_Static_assert(sizeof(struct func_start) == 48, "func_start changed: save it");
_Static_assert(sizeof(struct data_object) == 16, "data_object changed: save it");
_Static_assert(sizeof(struct ext_ref) == 16, "ext_ref changed: save it (cfg_snapshot.c)");
_Static_assert(sizeof(struct fde_lsda) == 16, "fde_lsda changed: save it (cfg_snapshot.c)");
_Static_assert(sizeof(struct cfg_longjmp) == 48, "cfg_longjmp changed: save it");
_Static_assert(sizeof(struct cfg_pseudo) == 8, "cfg_pseudo changed: save it");
_Static_assert(sizeof(struct patch_analysis) == 176, "patch_analysis changed: save it");
_Static_assert(sizeof(struct patch_func) == 112, "patch_func changed: save it");
_Static_assert(sizeof(struct patch_gap) == 16, "patch_gap changed: save it");
_Static_assert(sizeof(struct flag_liveness) == 40, "flag_liveness changed: save it");

/* --- symbols ------------------------------------------------------------------------------- */

/* The records V[0, N) of SIZE bytes, with N, each with the string pointer at NAME_OFF
 * cleared (the names are written on their own, or as references). */
static void put_unnamed(struct snap_out *o, const void *v, size_t n, size_t size, size_t name_off)
{
	char rec[64];

	if (size > sizeof(rec)) {
		o->err = o->err ? o->err : -EINVAL;
		return;
	}
	snap_put_u64(o, n);
	for (size_t i = 0; i < n; i++) {
		memcpy(rec, (const char *)v + i * size, size);
		memset(rec + name_off, 0, sizeof(void *));
		snap_put(o, rec, size);
	}
}

/* Reads what put_unnamed wrote, N records of SIZE bytes, then their N names (snap_put_str)
 * into the string pointers at NAME_OFF: the array, or NULL on a failure (then every name
 * read so far is in it, the others NULL: free them with the array). */
static void *get_named(struct snap_in *in, size_t n, size_t size, size_t name_off)
{
	char *v = snap_get_array(in, n, size);

	for (size_t i = 0; v && i < n; i++)
		memset(v + i * size + name_off, 0, sizeof(void *));
	for (size_t i = 0; v && i < n && !in->err; i++) {
		char *name = snap_get_str(in);

		memcpy(v + i * size + name_off, &name, sizeof(name));
	}
	return v;
}

static void put_names(struct snap_out *o, const void *v, size_t n, size_t size, size_t name_off)
{
	for (size_t i = 0; i < n; i++) {
		const char *name;

		memcpy(&name, (const char *)v + i * size + name_off, sizeof(name));
		snap_put_str(o, name);
	}
}

/* Clears the pointers of S (written as arrays after it). */
static void symbols_unlink(struct symbols *s)
{
	s->funcs = NULL;
	s->objects = NULL;
	s->plt = s->got = NULL;
	s->debug_file = NULL;
	s->lsdas = NULL;
}

static void symbols_save(const struct symbols *s, struct snap_out *o)
{
	struct symbols t = *s;

	symbols_unlink(&t);
	snap_put(o, &t, sizeof(t));
	put_unnamed(o, s->funcs, s->nfuncs, sizeof(*s->funcs), offsetof(struct func_start, name));
	put_names(o, s->funcs, s->nfuncs, sizeof(*s->funcs), offsetof(struct func_start, name));
	snap_put_array(o, s->objects, s->nobjects, sizeof(*s->objects));
	put_unnamed(o, s->plt, s->nplt, sizeof(*s->plt), offsetof(struct ext_ref, name));
	put_names(o, s->plt, s->nplt, sizeof(*s->plt), offsetof(struct ext_ref, name));
	put_unnamed(o, s->got, s->ngot, sizeof(*s->got), offsetof(struct ext_ref, name));
	put_names(o, s->got, s->ngot, sizeof(*s->got), offsetof(struct ext_ref, name));
	snap_put_str(o, s->debug_file);
	snap_put_array(o, s->lsdas, s->nlsdas, sizeof(*s->lsdas));
}

/* Reads S; on a failure the arrays not read are NULL and their counts 0, so that
 * symbols__free releases what was. */
static int symbols_load(struct symbols *s, struct snap_in *in)
{
	snap_get(in, s, sizeof(*s));
	symbols_unlink(s);
	if (!(s->funcs =
		  get_named(in, s->nfuncs, sizeof(*s->funcs), offsetof(struct func_start, name))))
		s->nfuncs = 0;
	s->objects = snap_get_array(in, s->nobjects, sizeof(*s->objects));
	if (!(s->plt = get_named(in, s->nplt, sizeof(*s->plt), offsetof(struct ext_ref, name))))
		s->nplt = 0;
	if (!(s->got = get_named(in, s->ngot, sizeof(*s->got), offsetof(struct ext_ref, name))))
		s->ngot = 0;
	s->debug_file = snap_get_str(in);
	s->lsdas = snap_get_array(in, s->nlsdas, sizeof(*s->lsdas));
	return in->err;
}

/* --- a call's callee name: a reference to the symbol that owns it -------------------------- */

struct name_ref {
	const char *p;
	uint64_t ref; /* table << 32 | index: 1 funcs, 2 plt, 3 got */
};

static int cmp_name_ref(const void *a, const void *b)
{
	const struct name_ref *x = a, *y = b;

	return x->p < y->p ? -1 : x->p > y->p;
}

static struct name_ref *name_refs(const struct symbols *s, size_t *n)
{
	struct name_ref *v = malloc((s->nfuncs + s->nplt + s->ngot + 1) * sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < s->nfuncs; i++)
		v[(*n)++] = (struct name_ref){s->funcs[i].name, 1ULL << 32 | i};
	for (size_t i = 0; i < s->nplt; i++)
		v[(*n)++] = (struct name_ref){s->plt[i].name, 2ULL << 32 | i};
	for (size_t i = 0; i < s->ngot; i++)
		v[(*n)++] = (struct name_ref){s->got[i].name, 3ULL << 32 | i};
	qsort(v, *n, sizeof(*v), cmp_name_ref);
	return v;
}

static const char *name_of_ref(const struct symbols *s, uint64_t ref)
{
	uint64_t i = ref & 0xffffffffULL;

	switch (ref >> 32) {
	case 1:
		return i < s->nfuncs ? s->funcs[i].name : NULL;
	case 2:
		return i < s->nplt ? s->plt[i].name : NULL;
	case 3:
		return i < s->ngot ? s->got[i].name : NULL;
	}
	return NULL;
}

/* --- functions ----------------------------------------------------------------------------- */

/* Clears the pointers of F (written as arrays after it). */
static void func_unlink(struct cfg_func *f)
{
	f->name = NULL;
	f->blocks = NULL;
	f->edges = NULL;
	f->succ = f->pred = NULL;
	f->insns = NULL;
	f->calls = NULL;
	f->tables = NULL;
	f->unresolved = NULL;
	f->foreign = NULL;
}

static int func_save(const struct cfg_func *f, const struct name_ref *refs, size_t nrefs,
		     struct snap_out *o)
{
	struct cfg_func t = *f;

	func_unlink(&t);
	snap_put(o, &t, sizeof(t));
	snap_put_str(o, f->name);
	snap_put_opt(o, f->blocks, f->nblocks, sizeof(*f->blocks));
	snap_put_opt(o, f->edges, f->nedges, sizeof(*f->edges));
	snap_put_opt(o, f->succ, f->nedges, sizeof(*f->succ));
	snap_put_opt(o, f->pred, f->nedges, sizeof(*f->pred));
	snap_put_opt(o, f->insns, f->ninsns, sizeof(*f->insns));
	/* The calls as snap_put_opt writes them, their names as references. */
	snap_put_u64(o, f->calls != NULL);
	if (f->calls)
		put_unnamed(o, f->calls, f->ncalls, sizeof(*f->calls),
			    offsetof(struct cfg_call, name));
	for (uint32_t c = 0; f->calls && c < f->ncalls; c++) {
		struct name_ref key = {.p = f->calls[c].name}, *r = NULL;

		if (key.p && !(r = bsearch(&key, refs, nrefs, sizeof(key), cmp_name_ref)))
			return -EINVAL;
		snap_put_u64(o, r ? r->ref : 0);
	}
	snap_put_opt(o, f->tables, f->ntables, sizeof(*f->tables));
	snap_put_opt(o, f->unresolved, f->nunresolved, sizeof(*f->unresolved));
	snap_put_opt(o, f->foreign, f->nforeign, sizeof(*f->foreign));
	return 0;
}

static bool func_consistent(const struct cfg_func *f)
{
	if ((f->nblocks && !f->blocks) || (f->ninsns && !f->insns) || (f->nedges && !f->edges) ||
	    (f->nblocks && (!f->succ || !f->pred)) || f->entry_block > f->nblocks ||
	    (uint64_t)f->exit_first_pred + f->exit_npred > f->nedges)
		return false;
	for (uint32_t b = 0; b < f->nblocks; b++) {
		const struct cfg_block *bl = &f->blocks[b];

		if ((uint64_t)bl->first_insn + bl->ninsns > f->ninsns ||
		    (uint64_t)bl->first_succ + bl->nsucc > f->nedges ||
		    (uint64_t)bl->first_pred + bl->npred > f->nedges)
			return false;
	}
	for (uint32_t e = 0; e < f->nedges; e++)
		if (f->edges[e].from >= f->nblocks || f->edges[e].to > f->nblocks ||
		    (f->succ && f->succ[e] >= f->nedges) || (f->pred && f->pred[e] >= f->nedges))
			return false;
	for (uint32_t c = 0; c < f->ncalls; c++)
		if (f->calls[c].block >= f->nblocks)
			return false;
	return true;
}

static int func_load(struct cfg_func *f, const struct symbols *s, struct snap_in *in)
{
	if (!snap_get(in, f, sizeof(*f)))
		return in->err;
	func_unlink(f);
	f->name = snap_get_str(in);
	f->blocks = snap_get_opt(in, f->nblocks, sizeof(*f->blocks));
	f->edges = snap_get_opt(in, f->nedges, sizeof(*f->edges));
	f->succ = snap_get_opt(in, f->nedges, sizeof(*f->succ));
	f->pred = snap_get_opt(in, f->nedges, sizeof(*f->pred));
	f->insns = snap_get_opt(in, f->ninsns, sizeof(*f->insns));
	f->calls = snap_get_opt(in, f->ncalls, sizeof(*f->calls));
	for (uint32_t c = 0; f->calls && c < f->ncalls && !in->err; c++) {
		uint64_t ref = snap_get_u64(in);

		f->calls[c].name = ref ? name_of_ref(s, ref) : NULL;
		snap_check(in, !ref || f->calls[c].name);
	}
	f->tables = snap_get_opt(in, f->ntables, sizeof(*f->tables));
	f->unresolved = snap_get_opt(in, f->nunresolved, sizeof(*f->unresolved));
	f->foreign = snap_get_opt(in, f->nforeign, sizeof(*f->foreign));
	if (!in->err && (!f->name || (f->ncalls && !f->calls)))
		snap_check(in, false);
	if (!in->err)
		snap_check(in, func_consistent(f));
	return in->err;
}

int cfg_program__save(const struct cfg_program *prog, struct snap_out *o)
{
	size_t nrefs;
	struct name_ref *refs = name_refs(&prog->syms, &nrefs);
	int err = 0;

	if (!refs)
		return -ENOMEM;
	symbols_save(&prog->syms, o);
	snap_put_u64(o, prog->nfuncs);
	snap_put(o, &prog->stats, sizeof(prog->stats));
	for (size_t i = 0; i < prog->nfuncs && !err; i++)
		err = func_save(&prog->funcs[i], refs, nrefs, o);
	free(refs);
	return err ? err : o->err;
}

int cfg_program__load(struct cfg_program *prog, struct elf_image *img, struct snap_in *in)
{
	size_t n;

	memset(prog, 0, sizeof(*prog));
	prog->img = img;
	symbols_load(&prog->syms, in);
	n = snap_get_u64(in);
	snap_get(in, &prog->stats, sizeof(prog->stats));
	if (!in->err && snap_check(in, n <= in->len / sizeof(struct cfg_func)) &&
	    !(prog->funcs = calloc(n + 1, sizeof(*prog->funcs))))
		in->err = -ENOMEM;
	for (size_t i = 0; i < n && !in->err; i++) {
		func_load(&prog->funcs[i], &prog->syms, in);
		prog->nfuncs = i + 1; /* released with the others when the load fails */
	}
	for (size_t i = 1; i < prog->nfuncs && !in->err; i++)
		snap_check(in, prog->funcs[i - 1].entry < prog->funcs[i].entry);
	if (in->err) {
		int err = in->err;

		cfg_program__free(prog);
		return err;
	}
	return 0;
}

/* --- longjmp pseudo-edges ------------------------------------------------------------------ */

/* Clears the pointers of LJ (written as arrays after it). */
static void longjmp_unlink(struct cfg_longjmp *lj)
{
	lj->may_longjmp = NULL;
	lj->first = NULL;
	lj->v = NULL;
}

void cfg_longjmp__save(const struct cfg_longjmp *lj, size_t nfuncs, struct snap_out *o)
{
	struct cfg_longjmp t = *lj;

	longjmp_unlink(&t);
	snap_put(o, &t, sizeof(t));
	snap_put_opt(o, lj->may_longjmp, nfuncs, sizeof(*lj->may_longjmp));
	snap_put_opt(o, lj->first, nfuncs + 1, sizeof(*lj->first));
	snap_put_opt(o, lj->v, lj->nv, sizeof(*lj->v));
}

int cfg_longjmp__load(struct cfg_longjmp *lj, size_t nfuncs, struct snap_in *in)
{
	if (!snap_get(in, lj, sizeof(*lj)))
		return in->err;
	longjmp_unlink(lj);
	lj->may_longjmp = snap_get_opt(in, nfuncs, sizeof(*lj->may_longjmp));
	lj->first = snap_get_opt(in, nfuncs + 1, sizeof(*lj->first));
	lj->v = snap_get_opt(in, lj->nv, sizeof(*lj->v));
	for (size_t i = 0; lj->first && i <= nfuncs && !in->err; i++)
		snap_check(in, lj->first[i] <= lj->nv && (!i || lj->first[i - 1] <= lj->first[i]));
	if (!in->err)
		snap_check(in, !lj->nv || (lj->v && lj->first));
	if (in->err) {
		int err = in->err;

		cfg_longjmp__free(lj);
		return err;
	}
	return 0;
}

/* --- the patch-window analysis ------------------------------------------------------------- */

/* Clears the pointers of PA and of PF (written as arrays after them). */
static void analysis_unlink(struct patch_analysis *pa)
{
	pa->prog = NULL;
	pa->entries.addr = NULL;
	pa->entries.cap = 0;
	pa->gaps = NULL;
	pa->funcs = NULL;
}

static void patch_func_unlink(struct patch_func *pf)
{
	pf->reloc = pf->count_class = pf->branch_class = pf->indirect_class = NULL;
	pf->quiet = NULL;
	pf->block = NULL;
	pf->fl.before = pf->fl.block_in = pf->fl.edge = NULL;
}

void patch_analysis__save(const struct patch_analysis *pa, struct snap_out *o)
{
	struct patch_analysis t = *pa;

	analysis_unlink(&t);
	snap_put(o, &t, sizeof(t));
	snap_put_opt(o, pa->entries.addr, pa->entries.n, sizeof(*pa->entries.addr));
	snap_put_opt(o, pa->gaps, pa->ngaps, sizeof(*pa->gaps));
	for (size_t i = 0; pa->funcs && i < pa->nfuncs; i++) {
		const struct patch_func *pf = &pa->funcs[i];
		size_t n = pa->prog->funcs[i].ninsns + 1;
		struct patch_func tf = *pf;

		patch_func_unlink(&tf);
		snap_put(o, &tf, sizeof(tf));
		snap_put_opt(o, pf->reloc, n, 1);
		snap_put_opt(o, pf->count_class, n, 1);
		snap_put_opt(o, pf->branch_class, n, 1);
		snap_put_opt(o, pf->indirect_class, n, 1);
		snap_put_opt(o, pf->quiet, n, 1);
		snap_put_opt(o, pf->block, n, sizeof(*pf->block));
		snap_put_opt(o, pf->fl.before, pf->fl.ninsns + 1, 1);
		snap_put_opt(o, pf->fl.block_in, pf->fl.nblocks + 1, 1);
		snap_put_opt(o, pf->fl.edge, pf->fl.nedges + 1, 1);
	}
}

int patch_analysis__load(struct patch_analysis *pa, const struct cfg_program *prog,
			 struct snap_in *in)
{
	size_t nfuncs;

	if (!snap_get(in, pa, sizeof(*pa)))
		return in->err;
	nfuncs = pa->nfuncs;
	analysis_unlink(pa);
	pa->prog = prog;
	pa->nfuncs = 0;
	pa->entries.addr = snap_get_opt(in, pa->entries.n, sizeof(*pa->entries.addr));
	pa->entries.cap = pa->entries.addr ? pa->entries.n : 0;
	pa->gaps = snap_get_opt(in, pa->ngaps, sizeof(*pa->gaps));
	if (!in->err && snap_check(in, nfuncs == prog->nfuncs) &&
	    !(pa->funcs = calloc(nfuncs + 1, sizeof(*pa->funcs))))
		in->err = -ENOMEM;
	for (size_t i = 0; i < nfuncs && !in->err; i++) {
		struct patch_func *pf = &pa->funcs[i];
		const struct cfg_func *f = &prog->funcs[i];
		size_t n = f->ninsns + 1;

		pa->nfuncs = i + 1;
		if (!snap_get(in, pf, sizeof(*pf)))
			break;
		patch_func_unlink(pf);
		pf->reloc = snap_get_opt(in, n, 1);
		pf->count_class = snap_get_opt(in, n, 1);
		pf->branch_class = snap_get_opt(in, n, 1);
		pf->indirect_class = snap_get_opt(in, n, 1);
		pf->quiet = snap_get_opt(in, n, 1);
		pf->block = snap_get_opt(in, n, sizeof(*pf->block));
		pf->fl.before = snap_get_opt(in, (size_t)pf->fl.ninsns + 1, 1);
		pf->fl.block_in = snap_get_opt(in, (size_t)pf->fl.nblocks + 1, 1);
		pf->fl.edge = snap_get_opt(in, (size_t)pf->fl.nedges + 1, 1);
		snap_check(in, pf->entries_lo <= pf->entries_hi &&
				   pf->entries_hi <= pa->entries.n &&
				   (!pf->fl.before ||
				    (pf->fl.ninsns == f->ninsns && pf->fl.nblocks == f->nblocks &&
				     pf->fl.nedges == f->nedges)));
		for (uint32_t k = 0; pf->block && k < f->ninsns && !in->err; k++)
			snap_check(in, pf->block[k] < (int32_t)f->nblocks);
	}
	if (in->err) {
		int err = in->err;

		patch_analysis__release(pa);
		return err;
	}
	return 0;
}
