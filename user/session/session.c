/*
 * A profiling session (see session.h): plan every object, attach, and from counters and
 * frame events to a written profile. Shared by `edgeprof run` and `edgeprof record -p`.
 */
#include "user/session/session.h"
#include "user/session/analysis_cache.h"
#include "user/session/decode_cache.h"
#include "user/session/lib_hint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/edgeprof.h"
#include "user/builtin.h"
#include "user/count/calibration.h"
#include "user/count/patch_backend.h"
#include "user/util/clock.h"
#include "cfg/error.h"
#include "cfg/srcline.h"
#include "estimators/frames.h"
#include "estimators/propagate.h"
#include "user/util/log.h"
#include "user/util/progress.h"
#include "user/proc/libs.h"
#include "user/proc/proc_maps.h"
#include "user/profile/profile.h"

int session_options__parse(struct session_options *o, int opt, char *arg, const char *cmd,
			   char **names, size_t *nnames)
{
	switch (opt) {
	case 'P':
		if (strcmp(arg, "chords") == 0)
			o->mode = PLACEMENT_CHORDS;
		else if (strcmp(arg, "naive") == 0)
			o->mode = PLACEMENT_NAIVE;
		else
			return usage_error(cmd, "unknown placement '%s' (chords or naive)", arg);
		return 0;
	case 'M':
		if (strcmp(arg, "auto") == 0)
			o->counting = COUNTING_AUTO;
		else if (strcmp(arg, "uprobe") == 0)
			o->counting = COUNTING_UPROBE;
		else
			return usage_error(cmd, "unknown probes '%s' (auto or uprobe)", arg);
		return 0;
	case 'w':
		o->weights = arg;
		return 0;
	case 'I':
		if (!arg || strcmp(arg, "cheaper") == 0)
			o->induction = 1;
		else if (strcmp(arg, "always") == 0)
			o->induction = 2;
		else
			return usage_error(cmd, "unknown --induction '%s' (cheaper or always)", arg);
		return 0;
	case 'l':
		if (*nnames == TRACER_MAX_OBJECTS - 1)
			return usage_error(cmd, "at most %d --lib options", TRACER_MAX_OBJECTS - 1);
		names[(*nnames)++] = arg;
		return 0;
	case 'O':
	case 'X': {
		int err = func_select__add(o->select, arg, opt == 'X');

		if (err == -E2BIG)
			return usage_error(cmd, "at most %d --only and --exclude patterns",
					   FUNC_SELECT_MAX);
		if (err)
			return usage_error(cmd, "empty pattern '%s'", arg);
		return 0;
	}
	}
	return usage_error(cmd, "unknown option '%c'", opt);
}

/* The run-time load bias of PATH in process PID (0 when not found, which is also right for
 * a non-PIE executable). */
static uint64_t load_bias(int pid, const char *path, const struct elf_image *img)
{
	uint64_t base = proc_maps__base(pid, path);
	uint64_t first = img->segs[0].vaddr - img->segs[0].offset;

	return base ? base - (first & ~0xfffULL) : 0;
}

/* The object whose indirect ordinals hold ORDINAL (a map ordinal), or NULL. */
static struct session_object *object_of_ordinal(struct session *s, uint32_t ordinal)
{
	for (size_t k = 0; k < s->nobjs; k++)
		if (ordinal >= s->objs[k].ordinal_base &&
		    ordinal - s->objs[k].ordinal_base < s->objs[k].nordinals)
			return &s->objs[k];
	return NULL;
}

/* One target an indirect site saw: add its hits to the counter of the matching out-edge. */
static void fold_indirect(void *arg, uint32_t ordinal, uint64_t target, uint64_t hits)
{
	struct session *s = arg;
	struct session_object *o = object_of_ordinal(s, ordinal);
	const struct probe_site *site;
	const struct cfg_func *f;
	int b;

	if (!o)
		return;
	ordinal -= o->ordinal_base;
	if (ordinal >= o->nindirect || o->indirect_site[ordinal] == UINT32_MAX) {
		o->unmatched += hits;
		return;
	}
	site = &o->pl.sites[o->indirect_site[ordinal]];
	f = &o->prog.funcs[site->func];
	b = cfg_func__block_containing(f, site->addr);
	for (uint32_t k = 0; b >= 0 && k < f->blocks[b].nsucc && k < site->counter2; k++) {
		const struct cfg_edge *e = &f->edges[f->succ[f->blocks[b].first_succ + k]];

		if (e->to < f->nblocks && f->blocks[e->to].start == target - o->bias) {
			s->counters[o->counter_base + site->counter + k] += hits;
			return;
		}
	}
	o->unmatched += hits;
	o->notes[site->func].unmatched += hits;
}

/* Table jumps counted in process that went to no edge: HITS in function FUNC of object
 * INDEX. */
static void patch_unmatched(void *arg, unsigned index, uint32_t func, uint64_t hits)
{
	struct session *s = arg;
	struct session_object *o = index < s->nobjs ? &s->objs[index] : NULL;

	if (!o)
		return;
	o->unmatched += hits;
	if (func < o->prog.nfuncs)
		o->notes[func].unmatched += hits;
}

/* A counting backend refused the instruction at VADDR of object CTX (the kernel would not
 * probe it): noted in the functions holding it. */
static void note_refused(void *ctx, uint64_t vaddr)
{
	struct session_object *o = ctx;

	for (size_t i = 0; i < o->prog.nfuncs; i++)
		if (cfg_func__block_containing(&o->prog.funcs[i], vaddr) >= 0)
			o->notes[i].refused++;
}

/* The function of O whose symbol covers VADDR (the innermost when several do), or -1. */
static long func_covering(const struct session_object *o, uint64_t vaddr)
{
	long best = -1;

	for (size_t i = 0; i < o->prog.nfuncs; i++) {
		const struct cfg_func *f = &o->prog.funcs[i];

		if (f->entry <= vaddr && vaddr - f->entry < f->sym_size &&
		    (best < 0 || f->entry > o->prog.funcs[best].entry))
			best = (long)i;
	}
	return best;
}

/* An unwound frame of object K at VADDR lies outside every recovered block: counted in the
 * run, in the object and in the function whose symbol covers it. */
static void note_unmapped(struct session *s, size_t k, uint64_t vaddr, size_t *unmapped)
{
	struct session_object *o = &s->objs[k];
	long i = func_covering(o, vaddr);

	(*unmapped)++;
	o->unmapped++;
	if (i >= 0)
		o->notes[i].unmapped++;
	pr_debug("'%s': unwound frame at %#llx is in no recovered block%s%s", o->path,
		 (unsigned long long)vaddr, i >= 0 ? " of " : "",
		 i >= 0 ? o->prog.funcs[i].name : "");
}

/* The view of object O (the K-th) that a counting backend gets. */
static struct count_object count_object_of(struct session_object *o, size_t k)
{
	return (struct count_object){
		.path = o->path, .img = &o->img, .prog = &o->prog, .pl = &o->pl,
		.counter_base = o->counter_base, .capacity = o->capacity,
		.ordinal_base = o->ordinal_base, .bias = o->bias, .index = (unsigned)k,
		.avoid = o->avoid, .navoid = o->navoid, .refused = note_refused, .ctx = o,
		.unmapped = o->not_mapped,
	};
}

/* The jumps of PROG whose table an indirect site could recompute (operand_ok): no plan,
 * the first or one made again without refused sites, has more indirect sites than this,
 * since a plan has at most one site per address and only such jumps get one. */
static uint32_t max_indirect_sites(const struct cfg_program *prog)
{
	uint64_t n = 0;

	for (size_t i = 0; i < prog->nfuncs; i++)
		for (uint32_t t = 0; t < prog->funcs[i].ntables; t++)
			n += prog->funcs[i].tables[t].operand_ok != 0;
	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* The largest ordinal + 1 of PL's indirect sites. */
static uint32_t plan_ordinals(const struct placement *pl)
{
	uint32_t n = 0;

	for (size_t i = 0; i < pl->nsites; i++)
		if (pl->sites[i].kind == SITE_INDIRECT && pl->sites[i].ordinal + 1 > n)
			n = pl->sites[i].ordinal + 1;
	return n;
}

/* Whether O's plan fits the counters loaded for it (capacity_bound): a plan made again
 * without refused sites can need more than the first. */
static bool plan_fits(const struct session_object *o)
{
	return o->pl.ncounters_all <= o->capacity && o->pl.nsites <= o->capacity;
}

/* Plans the functions of O set in REDO again, the others' plans kept, once PB (O's patch
 * backend, object INDEX, or NULL) has reserved their springboards. Returns 0, or -1 (reported)
 * with O's plan unchanged. */
static int replan_funcs(struct session_object *o, const bool *redo, struct patch_backend *pb,
			unsigned index)
{
	if (pb && patch_backend__before_replan(pb, index, redo))
		return -1;
	if (placement__replan(&o->pl, &o->prog, &o->popt, redo))
		return pr_err("'%s': out of memory planning probes", o->path);
	return 0;
}

/* Makes O's plan final for in-process counters as far as the binary tells (see
 * patch_backend__settle): the functions whose sites the patch backend cannot take are planned
 * again until it takes every one, so that at the attach only run-time reasons (a held thread,
 * another tool's breakpoint) can refuse a site. Returns 0 or -1 (reported). */
static int object_settle(struct session_object *o, struct patch_backend *pb, unsigned index)
{
	bool *redo = calloc(o->prog.nfuncs + 1, sizeof(*redo));
	double start = now_seconds();
	int ret = -1;

	if (!redo)
		return pr_err("out of memory");
	for (int round = 0; round < 16; round++) {
		struct count_object co = count_object_of(o, index);
		size_t nbad = 0, nredo = 0;
		double t0 = now_seconds();

		memset(redo, 0, (o->prog.nfuncs + 1) * sizeof(*redo));
		if (patch_backend__settle(pb, &co, redo, &nbad))
			goto out;
		if (!nbad) {
			pr_debug("'%s': plan settled for in-process counters: %d checks, %.3f s",
				 o->path, round + 1, now_seconds() - start);
			ret = 0;
			goto out;
		}
		for (size_t i = 0; i < o->prog.nfuncs; i++)
			nredo += redo[i];
		if (replan_funcs(o, redo, pb, index))
			goto out;
		if (!plan_fits(o)) {
			pr_err("'%s': %u counters needed after leaving out refused probes, room "
			       "for %u",
			       o->path, o->pl.ncounters, o->capacity);
			goto out;
		}
		pr_debug("'%s': in-process counters cannot take %zu sites: %zu functions planned "
			 "again (%.3f s)",
			 o->path, nbad, nredo, now_seconds() - t0);
	}
	pr_err("'%s': in-process counters keep refusing sites", o->path);
out:
	free(redo);
	return ret;
}

/* Takes every in-process class off F's instructions: uprobes count it. */
static void func_no_patch(struct cfg_func *f)
{
	for (uint32_t k = 0; k < f->ninsns; k++)
		f->insns[k].patch_count = f->insns[k].patch_branch = f->insns[k].patch_indirect = 0;
}

/* The function of O that symbol NAME of SYMS names (a PLT or GOT callee: "malloc",
 * "malloc@plt"), or -1. */
static long func_named(const struct session_object *o, const struct libs_syms *syms,
		       const char *name)
{
	uint64_t a = libs__syms_find(syms, name);
	struct cfg_func *f = a ? cfg_program__func_at(&o->prog, a) : NULL;

	return f ? f - o->prog.funcs : -1;
}

/* Library O's functions the loader may run before its rendezvous: those at ROOTS[0, N) and
 * every function they reach by direct calls (through the PLT too, when O defines the
 * callee). Their instructions lose their in-process classes: uprobes attached at the exec
 * count them. Returns 0 or -1 (reported). */
static int object_mark_early(struct session_object *o, const struct libs_syms *syms,
			     const uint64_t *roots, size_t n)
{
	bool *seen = calloc(o->prog.nfuncs + 1, sizeof(*seen));
	uint32_t *queue = calloc(o->prog.nfuncs + 1, sizeof(*queue));
	size_t head = 0, tail = 0, nindirect = 0;

	if (!seen || !queue) {
		free(seen);
		free(queue);
		return pr_err("out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		struct cfg_func *f = cfg_program__func_at(&o->prog, roots[i]);
		size_t fi = f ? (size_t)(f - o->prog.funcs) : 0;

		if (f && !seen[fi]) {
			seen[fi] = true;
			queue[tail++] = (uint32_t)fi;
		}
	}
	while (head < tail) {
		struct cfg_func *f = &o->prog.funcs[queue[head++]];

		func_no_patch(f);
		for (uint32_t c = 0; c < f->ncalls; c++) {
			const struct cfg_call *cl = &f->calls[c];
			struct cfg_func *g = NULL;
			long gi = -1;

			if (cl->indirect && !cl->target)
				nindirect++;
			else if (!cl->external && cl->target &&
				 (g = cfg_program__func_at(&o->prog, cl->target)))
				gi = g - o->prog.funcs;
			else if (cl->external && cl->name &&
				 (gi = func_named(o, syms, cl->name)) < 0)
				pr_debug("'%s': %s, called by %s before the loader's rendezvous, is not one of its functions",
					 o->path, cl->name, f->name);
			if (gi >= 0 && !seen[gi]) {
				seen[gi] = true;
				queue[tail++] = (uint32_t)gi;
			}
		}
	}
	pr_info("'%s': %zu functions may run before the loader's rendezvous (%zu ifunc resolvers and early initialisers, %zu indirect calls not followed): counted by uprobes from the exec on",
		o->path, tail, n, nindirect);
	free(seen);
	free(queue);
	return 0;
}

/* Keeps in-process counters of library O off the first instruction of each function the
 * tracer watches (its uprobe would run the file's instruction, not the jump written there). */
static void object_avoid_watched(struct session_object *o, const struct libs_syms *syms)
{
	const char *name;

	for (size_t i = 0; (name = tracer__watched_function(i)); i++) {
		long f = func_named(o, syms, name);

		if (f >= 0 && o->navoid < sizeof(o->avoid) / sizeof(o->avoid[0]))
			o->avoid[o->navoid++] = o->prog.funcs[f].entry;
	}
}

/* The file name of object O, for the progress line. */
static const char *base_name(const struct session_object *o)
{
	const char *base = strrchr(o->path, '/');

	return base ? base + 1 : o->path;
}

/* The progress line while object CTX's functions are built (cfg_options.progress). */
static void build_progress(void *ctx, size_t built, size_t known)
{
	progress__set("analysing '%s': %zu/%zu functions", base_name(ctx), built, known);
}

/* Counters any plan of object O can use: one per block and per edge of each function, its
 * EXIT edge, two per longjmp pseudo-edge (the pseudo-edge and its block's edge), and room
 * besides. Known from the CFG alone, so the BPF program is loaded while the plan is made;
 * a plan that would not fit is refused where it is made (object_settle, session__attach). */
static uint64_t capacity_bound(const struct session_object *o)
{
	uint64_t n = 1024 + 2 * (uint64_t)o->lj.nv;

	for (size_t i = 0; i < o->prog.nfuncs; i++)
		n += (uint64_t)o->prog.funcs[i].nblocks * (o->induction ? 3 : 1) +
		     o->prog.funcs[i].nedges + 1; /* a counted loop: 2 sums for a block */
	return n;
}

/* Opens object O's image at PATH, with POPT for its analysis, unless it is open already.
 * Returns 0 or -1 (reported). */
static int object_open_image(struct session_object *o, const char *path,
			     const struct placement_options *popt)
{
	if (o->img.fd >= 0)
		return 0;
	if (strlen(path) >= sizeof(o->path))
		return pr_err("'%s': path too long", path);
	strcpy(o->path, path);
	o->popt = *popt;
	if (elf_image__open(&o->img, path))
		return pr_lib_err(path, cfg_strerror());
	return 0;
}

/* Opens object O at PATH with POPT and builds its CFG; sets its capacity (capacity_bound)
 * and ordinal slice. When O is cacheable and its analysis was kept, reads it back instead
 * (into PB's object 0 too, ATTACH as the session's): O is cached, its CFG, plan and
 * in-process windows made. Returns 0 or -1 (reported). */
static int object_open(struct session_object *o, const char *path,
		       const struct placement_options *popt, struct patch_backend *pb, bool attach)
{
	uint64_t cap;

	if (object_open_image(o, path, popt))
		return -1;
	if (o->cacheable && analysis_cache__load(o, pb, attach)) {
		o->cached = true;
		o->popt.longjmp = &o->lj;
		o->notes = calloc(o->prog.nfuncs + 1, sizeof(*o->notes));
		return o->notes ? 0 : pr_err("out of memory");
	}
	if (decode_cache__build(&o->prog, &o->img, false, build_progress, o))
		return pr_lib_err(path, cfg_strerror());
	o->notes = calloc(o->prog.nfuncs + 1, sizeof(*o->notes));
	if (!o->notes)
		return pr_err("out of memory");
	/* Frames a longjmp leaves through calls: pseudo-edges the plan derives (no unwinding
	 * at the longjmp, see session__longjmp_lazy). */
	if (cfg_longjmp__analyze(&o->lj, &o->prog))
		return pr_err("out of memory");
	o->popt.longjmp = &o->lj;
	cap = capacity_bound(o);
	if (cap >= EP_MAX_COUNTERS)
		return pr_err("'%s': %llu counters needed, at most %llu supported", path,
			      (unsigned long long)cap, (unsigned long long)EP_MAX_COUNTERS);
	o->capacity = (uint32_t)cap;
	o->nordinals = max_indirect_sites(&o->prog);
	return 0;
}

/* Selects the functions of object O, opened by object_open (SELECT, may be NULL) and plans
 * their probes (nothing to do when O is cached); a cacheable O's analysis is then kept, its
 * writing's handle into *SAVE. Returns 0 or -1 (reported). */
static int object_plan(struct session_object *o, struct func_select *select, const char *weights,
		       struct patch_backend *pb, bool attach, unsigned index, const uint64_t *roots,
		       size_t nroots, struct analysis_save **save)
{
	const char *path = o->path;

	if (o->cached)
		goto planned;
	/* Where in-process counters can go, before the plan prices its sites. */
	progress__set("analysing '%s': where counters can be written", base_name(o));
	if (pb && patch_backend__classify(pb, index, &o->prog))
		return -1;
	decode_cache__save(&o->img, &o->prog);
	cfg_program__drop_decoding(&o->prog); /* read by the CFG and patch analyses only */
	if (pb && index) {
		struct libs_syms syms;
		int err = libs__syms_load(path, &syms);

		if (!err) {
			object_avoid_watched(o, &syms);
			if (nroots)
				err = object_mark_early(o, &syms, roots, nroots);
		} else {
			pr_err("'%s': cannot read its symbols", path);
		}
		libs__syms_free(&syms);
		if (err)
			return -1;
	}
	if (weights) {
		if (run_weights__load(&o->rw, weights, &o->img, &o->prog))
			return -1;
		o->popt.weights = run_weights__get;
		o->popt.weights_ctx = &o->rw;
	}
	if (func_select__active(select)) {
		o->select = calloc(o->prog.nfuncs + 1, sizeof(*o->select));
		if (!o->select || func_select__apply(select, &o->prog, o->select))
			return pr_err("out of memory");
		o->popt.select = o->select;
	}
	if (o->induction) {
		int err;

		progress__set("analysing '%s': loops counted by induction", base_name(o));
		err = cfg_induction__analyze(&o->ind, &o->prog, o->select);
		if (err)
			return pr_err("'%s': cannot analyse its loops: %s", path,
				      err == -ENOMEM ? "out of memory" : cfg_strerror());
		o->popt.induction = &o->ind;
		o->popt.induction_always = o->induction == 2;
	}
	progress__set("analysing '%s': planning the counters", base_name(o));
	if (placement__plan(&o->pl, &o->prog, &o->popt))
		return pr_err("'%s': out of memory planning probes", path);
	if (!plan_fits(o))
		return pr_err("'%s': %u counters planned, room for %u", path, o->pl.ncounters,
			      o->capacity);
	if (pb && object_settle(o, pb, index))
		return -1;
	if (o->nordinals < plan_ordinals(&o->pl))
		o->nordinals = plan_ordinals(&o->pl);
	if (o->cacheable)
		*save = analysis_cache__save(o, pb, attach);
planned:
	pr_info("'%s': %zu functions (%u with chords, %u block counts only, %u excluded), %zu probe sites, %u counters, %u jump tables",
		path, o->prog.nfuncs, o->pl.nchord_funcs, o->pl.nnaive_funcs, o->pl.nexcluded_funcs,
		o->pl.nsites, o->pl.ncounters, o->nordinals);
	if (o->lj.active)
		pr_info("'%s': longjmp pseudo-edges: %u abandon, %u resume (%u in chord plans, one chord each)",
			path, o->lj.nabandon, o->lj.nresume, o->pl.npseudo);
	if (o->induction)
		pr_info("'%s': induction: %u loops proved counted, %u counted so (%zu accumulator sites), %u not proved",
			path, o->ind.niv, o->pl.nivs, o->pl.naccums, o->ind.nrejects);
	return 0;
}

/* The BPF program, loaded on a thread of its own while the probes are planned: its maps are
 * sized by the objects' capacities, which the CFGs give (capacity_bound). */
struct probes_load {
	pthread_t thread;
	bool started;
	uint32_t capacity;
	struct probes *probes;
	int err;
};

static void *load_probes(void *arg)
{
	struct probes_load *l = arg;

	l->err = probes__open_loops(&l->probes, l->capacity, 0);
	tracer__find_own_functions(); /* for `run` (tracer__run's early watches) */
	return NULL;
}

/* Plans the probes of every object of S, opened by object_open, with options O. Returns 0,
 * -ENOENT (no function matches O->select) or -1, reported. */
static int plan_objects(struct session *s, const char *binary, const struct session_options *o)
{
	uint64_t ordinals = 0;

	for (size_t k = 0; k < s->nobjs; k++) {
		struct session_object *ob = &s->objs[k];
		uint64_t *roots = NULL;
		size_t nroots = 0;
		int err;

		/* `run`: a library is patched at the loader's rendezvous; functions of it the
		 * loader runs before (ifunc resolvers, __libc_early_init) are counted from the
		 * exec on, by uprobes; one whose code the loader writes into, by uprobes only. */
		if (k && s->patch && o->bound_pid <= 0) {
			if (libs__load_roots(o->libs[k - 1], &roots, &nroots))
				pr_info("'%s': the loader writes into its code (text relocations): counted by uprobes",
					o->libs[k - 1]);
			else if (nroots)
				ob->patch_later = true;
			else
				ob->deferred = true;
		}
		err = object_plan(ob, o->select, k ? NULL : o->weights,
				  !k || ob->deferred || ob->patch_later ? s->patch : NULL,
				  o->bound_pid > 0, (unsigned)k, roots, nroots, &s->analysis_save);
		free(roots);
		if (err)
			return -1;
		ob->ordinal_base = (uint32_t)ordinals;
		ordinals += ob->nordinals;
		/* Ordinals are 17 bits of a cookie, one per jump-table site: each object's
		 * slice is as large as its jump tables, not its counters. */
		if (ordinals > EP_MAX_INDIRECT_SITES)
			return pr_err("'%s': %llu jump-table sites in all, at most %u can be counted at once: profile fewer libraries at once (--lib)",
				      ob->path, (unsigned long long)ordinals, EP_MAX_INDIRECT_SITES);
	}
	if (func_select__active(o->select) && func_select__check(o->select))
		return -ENOENT;
	if (o->loop_stats) {
		int err = loop_probes__plan(&s->loops, &s->objs[0].prog, &s->objs[0].pl,
					    &s->objs[0].popt.costs);
		size_t stepped = 0;

		if (err)
			return pr_err("'%s': cannot plan the loop probes: %s", binary,
				      err == -ENOMEM ? "out of memory" : cfg_strerror());
		s->loop_stats = true;
		for (size_t i = 0; i < s->loops.nsites; i++)
			stepped += s->loops.sites[i].probe_class == PROBE_STEPPED;
		pr_info("'%s': loop stats: %u loops, %u measured with %zu probe sites (%zu single-stepped)",
			binary, s->loops.nloops, s->loops.nmeasured, s->loops.nsites, stepped);
		for (uint32_t l = 0; l < s->loops.nloops; l++)
			if (s->loops.loops[l].skip)
				pr_debug("loop at %#llx in %s not measured: %s",
					 (unsigned long long)s->loops.loops[l].header_addr,
					 s->objs[0].prog.funcs[s->loops.loops[l].func].name,
					 s->loops.loops[l].skip);
	}
	return 0;
}

static int prepare(struct session *s, const char *binary, const struct session_options *o)
{
	struct placement_options popt = { .mode = o->mode };
	struct probes_load load = { 0 };
	uint64_t total = 0;
	double t0 = now_seconds();
	int err;

	if (o->nlibs > TRACER_MAX_OBJECTS - 1)
		return pr_err("at most %d libraries can be profiled at once", TRACER_MAX_OBJECTS - 1);
	if (o->induction && o->counting != COUNTING_UPROBE)
		return pr_err("--induction counts with uprobes only for now: add --probes uprobe");
	s->objs = calloc(o->nlibs + 1, sizeof(*s->objs));
	if (!s->objs)
		return pr_err("out of memory");
	for (size_t k = 0; k <= o->nlibs; k++) {
		s->objs[k].img.fd = -1;
		s->objs[k].induction = o->induction;
	}
	s->nobjs = o->nlibs + 1;
	calibration__ensure(&popt.costs);
	t0 = now_seconds(); /* the analysis, not a calibration made first */
	/* In-process counters, in the binary, and with `run` in the libraries too (patched at
	 * the loader's rendezvous, but for the functions it runs earlier). With --loop-stats
	 * everything stays uprobes: the trip-count probes are planned after the counters and
	 * could land inside a patched window. */
	if (o->counting == COUNTING_AUTO && !o->loop_stats) {
		if (patch_backend__new(&s->patch, o->bound_pid > 0))
			return -1;
		s->patch_owned = true;
		patch_backend__on_unmatched(s->patch, patch_unmatched, s);
	}
	/* The binary's analysis is kept across runs when nothing but its bytes and the options
	 * the key holds decides it. Read back, it takes less time than loading the BPF program,
	 * which then starts first, sized by the kept capacity. */
	s->objs[0].cacheable = !o->weights && !o->loop_stats && !o->induction &&
			       !func_select__active(o->select);
	if (s->objs[0].cacheable && s->nobjs == 1) {
		if (object_open_image(&s->objs[0], binary, &popt))
			return -1;
		if (analysis_cache__capacity(&s->objs[0], s->patch != NULL, o->bound_pid > 0,
					     &load.capacity))
			load.started = !pthread_create(&load.thread, NULL, load_probes, &load);
	}
	for (size_t k = 0; k < s->nobjs; k++) {
		struct session_object *ob = &s->objs[k];

		err = object_open(ob, k ? o->libs[k - 1] : binary, &popt, k ? NULL : s->patch,
				  o->bound_pid > 0);
		ob->counter_base = (uint32_t)total;
		total += ob->capacity;
		if (!err && total >= EP_MAX_COUNTERS)
			err = pr_err("'%s': %llu counters needed, at most %llu supported: profile fewer libraries at once",
				     ob->path, (unsigned long long)total,
				     (unsigned long long)EP_MAX_COUNTERS);
		if (err)
			break;
		s->lib_ids[k] = ob->img.build_id;
	}
	s->capacity = (uint32_t)total;
	if (load.started && (err || load.capacity != s->capacity)) {
		/* Not needed, or sized for a kept analysis that was not used: sized again. */
		pthread_join(load.thread, NULL);
		probes__close(load.probes);
		load = (struct probes_load){ 0 };
	}
	if (err)
		return -1;
	/* With --loop-stats the maps are sized by the loops too: loaded after their plan. */
	load.capacity = s->capacity;
	if (!o->loop_stats && !load.started)
		load.started = !pthread_create(&load.thread, NULL, load_probes, &load);
	err = plan_objects(s, binary, o);
	s->analysis_s = now_seconds() - t0;
	if (load.started) {
		pthread_join(load.thread, NULL);
		s->probes = load.probes;
		if (load.err && !err)
			err = -1;
	}
	if (err) {
		probes__close(s->probes);
		s->probes = NULL;
		return err;
	}
	pr_info("analysis (CFGs and probe plans) took %.3f s", s->analysis_s);
	if (!load.started &&
	    probes__open_loops(&s->probes, s->capacity, s->loop_stats ? s->loops.nloops : 0))
		return -1;
	pr_debug("BPF programs and maps loaded");
	probes__bind_pid(s->probes, o->bound_pid);
	/* `run`: the probes are bound to the program's process once it exists (session__bind),
	 * and each child it forks gets links of its own (session__child). */
	if (o->bound_pid <= 0)
		probes__follow_forks(s->probes);
	s->backends[s->nbackends++] = (struct count_backend){ &uprobe_count_ops, s->probes };
	if (s->patch) {
		s->backends[s->nbackends++] = (struct count_backend){ &patch_count_ops, s->patch };
		s->patch_owned = false; /* closed as a backend from now on */
	}
	return 0;
}

int session__prepare(struct session *s, const char *binary, const struct session_options *o)
{
	int err = prepare(s, binary, o);

	progress__end();
	return err;
}

void session__avoid(struct session *s, uint64_t vaddr)
{
	struct session_object *o = &s->objs[0];

	if (vaddr && o->navoid < sizeof(o->avoid) / sizeof(o->avoid[0])) {
		o->avoid[o->navoid++] = vaddr;
		/* No window may hold it: known before the process exists too. */
		if (s->patch && object_settle(o, s->patch, 0))
			pr_warn("'%s': in-process counters could not be planned around %#llx",
				o->path, (unsigned long long)vaddr);
	}
}

bool session__patches_at(const struct session *s, uint64_t vaddr)
{
	return s->patch && s->nobjs &&
	       patch_backend__written(s->patch, 0, &s->objs[0].pl, vaddr);
}

/* The source lines of every object of S into s->lines (an object without line tables, or
 * whose lines cannot be read, gets an empty table: the profile then has no lines for it). */
static void *read_lines(void *arg)
{
	struct session *s = arg;

	for (size_t k = 0; k < s->nobjs; k++)
		block_lines__build(&s->lines[k], &s->objs[k].prog, s->objs[k].path);
	return NULL;
}

/* s->lines, allocated empty (NULL when out of memory). */
static struct block_lines *alloc_lines(struct session *s)
{
	if (!s->lines && (s->lines = calloc(s->nobjs + 1, sizeof(*s->lines))))
		for (size_t k = 0; k <= s->nobjs; k++)
			s->lines[k].img.fd = -1;
	return s->lines;
}

/* Starts read_lines on a thread of its own, once; without a thread the lines are read by
 * session__finish. The objects' CFGs are only read meanwhile. */
static void start_lines(struct session *s)
{
	if (s->lines)
		return;
	if (alloc_lines(s))
		s->lines_started = !pthread_create(&s->lines_thread, NULL, read_lines, s);
}

/* The objects' lines, once read (NULL when out of memory). */
static struct block_lines *finish_lines(struct session *s)
{
	if (s->lines_started) {
		pthread_join(s->lines_thread, NULL);
		s->lines_started = false;
		return s->lines;
	}
	if (alloc_lines(s))
		read_lines(s);
	return s->lines;
}

int session__count_pid(struct session *s, int pid)
{
	start_lines(s);
	for (size_t b = 0; b < s->nbackends; b++)
		if (s->backends[b].ops->count_pid &&
		    s->backends[b].ops->count_pid(s->backends[b].be, pid))
			return -1;
	return 0;
}

int session__uncount_pid(struct session *s, int pid)
{
	int ret = 0;

	for (size_t b = 0; b < s->nbackends; b++)
		if (s->backends[b].ops->uncount_pid &&
		    s->backends[b].ops->uncount_pid(s->backends[b].be, pid))
			ret = -1;
	return ret;
}

void session__spawned(struct session *s, int parent, int child, bool thread)
{
	for (size_t b = 0; b < s->nbackends; b++)
		if (s->backends[b].ops->spawned)
			s->backends[b].ops->spawned(s->backends[b].be, parent, child, thread);
}

void session__before_unwind(struct session *s, int tid, bool step)
{
	for (size_t b = 0; b < s->nbackends; b++)
		if (s->backends[b].ops->before_unwind)
			s->backends[b].ops->before_unwind(s->backends[b].be, tid, step);
}

int session__orig_pc(struct session *s, uint64_t pc, uint64_t *orig)
{
	*orig = pc;
	for (size_t b = 0; b < s->nbackends; b++) {
		int rc = s->backends[b].ops->orig_pc
				 ? s->backends[b].ops->orig_pc(s->backends[b].be, pc, orig)
				 : 0;

		if (rc)
			return rc;
	}
	return 0;
}

void session__before_signal(struct session *s, int tid)
{
	for (size_t b = 0; b < s->nbackends; b++)
		if (s->backends[b].ops->before_signal)
			s->backends[b].ops->before_signal(s->backends[b].be, tid);
}

void session__forked(struct session *s, int child)
{
	for (size_t b = 0; b < s->nbackends; b++)
		if (s->backends[b].ops->forked)
			s->backends[b].ops->forked(s->backends[b].be, child);
}

void session__bind(struct session *s, int pid)
{
	probes__bind_pid(s->probes, pid);
}

void session__child(struct session *s, int pid)
{
	probes__add_child(s->probes, pid);
}

void session__execed(struct session *s, int pid)
{
	probes__remove_pid(s->probes, pid);
}

void session__released(struct session *s, int pid)
{
	probes__drop_pid(s->probes, pid);
}

bool session__patches(const struct session *s)
{
	return s->patch != NULL;
}

int session__watch(struct session *s, int pid, const char *path, uint64_t file_offset)
{
	return probes__watch(s->probes, pid, path, file_offset);
}

/* Attaches the loop probes of the binary (after its counting probes): instructions the
 * kernel refuses are left out and the loops planned again. Returns 0 or non-zero (reported). */
static int attach_loops(struct session *s)
{
	struct session_object *c = &s->objs[0];
	struct count_object co = count_object_of(c, 0);

	for (int round = 0; round < 4; round++) {
		uint64_t *offs = malloc((s->loops.nsites + 1) * sizeof(*offs)), *cookies;
		size_t nbad = 0;
		uint32_t nloops = s->loops.nloops;
		int err = 0;

		cookies = malloc((s->loops.nsites + 1) * sizeof(*cookies));
		if (!offs || !cookies) {
			free(offs);
			free(cookies);
			return pr_err("out of memory");
		}
		for (size_t i = 0; !err && i < s->loops.nsites; i++) {
			const struct loop_probe_site *ls = &s->loops.sites[i];

			if (elf_image__vaddr_to_offset(&c->img, ls->addr, &offs[i]))
				err = pr_err("'%s': loop probe site %#llx has no file offset", c->path,
					     (unsigned long long)ls->addr);
			cookies[i] = ep_cookie_loop(ls->event == LOOP_PROBE_ENTER ? EP_LOOP_ENTER
										  : EP_LOOP_ITER,
						    ls->depth, ls->loop);
		}
		if (!err)
			err = uprobe_backend__attach_or_refuse(s->probes, &co, probes__attach_loops,
							       offs, cookies, s->loops.nsites,
							       &nbad);
		free(cookies);
		free(offs);
		if (err)
			return err;
		if (!nbad)
			return 0;
		pr_info("'%s': the kernel refuses loop probes on %zu instructions: placing them again",
			c->path, nbad);
		loop_probes__free(&s->loops);
		if (loop_probes__plan(&s->loops, &c->prog, &c->pl, &c->popt.costs) ||
		    s->loops.nloops != nloops)
			return pr_err("'%s': cannot plan the loop probes again", c->path);
	}
	return pr_err("'%s': the kernel keeps refusing loop probe sites", c->path);
}

/* A digest of the classes of each function's instructions (what its plan depends on), in
 * SUM[nfuncs]. */
static void class_digests(const struct cfg_program *prog, uint64_t *sum)
{
	for (size_t i = 0; i < prog->nfuncs; i++) {
		const struct cfg_func *f = &prog->funcs[i];
		uint64_t h = 0xcbf29ce484222325ULL;

		for (uint32_t k = 0; k < f->ninsns; k++) {
			const struct cfg_insn *in = &f->insns[k];

			h = (h ^ (in->probe_class | (uint64_t)in->patch_count << 8 |
				  (uint64_t)in->patch_branch << 16 |
				  (uint64_t)in->patch_indirect << 24)) *
			    0x100000001b3ULL;
		}
		sum[i] = h;
	}
}

/* Plans C's probes again after a backend refused some of its sites (their instructions'
 * classes changed since DIGEST was taken): only the functions holding them, once PB (C's
 * patch backend, object INDEX, or NULL) has reserved their springboards. Returns 0 or -1
 * (reported). */
static int replan(struct session_object *c, const uint64_t *digest, struct patch_backend *pb,
		  unsigned index)
{
	size_t n = c->prog.nfuncs, nredo = 0;
	uint64_t *now = malloc((n + 1) * sizeof(*now));
	bool *redo = calloc(n + 1, sizeof(*redo));
	int err;

	if (!now || !redo) {
		free(now);
		free(redo);
		return pr_err("out of memory");
	}
	class_digests(&c->prog, now);
	for (size_t i = 0; i < n; i++)
		nredo += redo[i] = now[i] != digest[i];
	err = replan_funcs(c, redo, pb, index);
	if (!err)
		pr_debug("'%s': %zu functions planned again", c->path, nredo);
	free(now);
	free(redo);
	return err;
}

int session__attach(struct session *s, size_t k, int pid)
{
	struct session_object *c = &s->objs[k];
	uint64_t *digest = malloc((c->prog.nfuncs + 1) * sizeof(*digest));
	int ret = -1;

	if (!digest)
		return pr_err("out of memory");
	for (int round = 0; round < 8; round++) {
		struct count_object co = count_object_of(c, k);
		size_t nbad = 0, b = 0;
		int err = 0;
		double t0 = now_seconds();

		co.bias = load_bias(pid, c->path, &c->img);
		class_digests(&c->prog, digest);
		/* What a backend can tell without installing anything, first; then each attaches
		 * (the uprobe backend, first, finds refusals only by attaching, and leaves nothing
		 * installed when it refuses). */
		for (size_t u = 0; u < s->nbackends && !err && !nbad; u++)
			if (s->backends[u].ops->check) {
				b = u + 1;
				err = s->backends[u].ops->check(s->backends[u].be, &co, pid, &nbad);
			}
		for (size_t u = 0; u < s->nbackends && !err && !nbad; u++) {
			b = u + 1;
			err = s->backends[u].ops->attach(s->backends[u].be, &co, pid, &nbad);
			if (nbad && u > 0) {
				pr_err("'%s': %s refused sites it had accepted", c->path,
				       s->backends[u].ops->name);
				goto out;
			}
		}
		pr_debug("'%s': round %d: checked and attached in %.3f s", c->path, round,
			 now_seconds() - t0);
		if (err) {
			ret = err;
			goto out;
		}
		if (!nbad) {
			c->bias = co.bias;
			c->attached = true;
			ret = k == 0 && s->loop_stats ? attach_loops(s) : 0;
			goto out;
		}
		pr_info("'%s': %s refuse %zu sites: placing counters without them", c->path,
			s->backends[b - 1].ops->name, nbad);
		t0 = now_seconds();
		if (replan(c, digest, k ? NULL : s->patch, (unsigned)k))
			goto out;
		pr_debug("'%s': planned again in %.3f s", c->path, now_seconds() - t0);
		if (!plan_fits(c)) {
			pr_err(
			    "'%s': %u counters needed after leaving out refused probes, %u loaded",
			    c->path, c->pl.ncounters, c->capacity);
			goto out;
		}
		if (plan_ordinals(&c->pl) > c->nordinals) {
			pr_err("'%s': %u jump-table sites after leaving out refused probes, %u "
			       "reserved",
			       c->path, plan_ordinals(&c->pl), c->nordinals);
			goto out;
		}
	}
	pr_err("'%s': the counting mechanisms keep refusing sites", c->path);
out:
	free(digest);
	return ret;
}

int session__check_libs(struct session *s, int pid)
{
	int ret = 0;

	for (size_t k = 1; k < s->nobjs; k++) {
		struct session_object *o = &s->objs[k];
		struct count_object co = count_object_of(o, k);
		uint64_t *offs = NULL, *cookies = NULL, *bad = NULL;
		size_t n = 0, nbad = 0;

		/* Attached while mapped: the kernel said then what it refused. */
		if (!o->before_mapped)
			continue;

		/* Mapped now: where (jump-table targets are run-time addresses). */
		o->bias = load_bias(pid, o->path, &o->img);

		if (uprobe_backend__offsets(&co, &offs, &cookies, &n) ||
		    probes__refused(s->probes, o->path, offs, n, &bad, &nbad)) {
			free(offs);
			free(cookies);
			return -1;
		}
		if (nbad) {
			pr_warn("'%s': the kernel refused %zu of its probes: its counts are not exact",
				o->path, nbad);
			ret = -1;
		}
		for (size_t i = 0; i < nbad; i++) {
			uint64_t v;
			long f;

			if (!elf_image__offset_to_vaddr(&o->img, bad[i], &v) &&
			    (f = func_covering(o, v)) >= 0)
				o->notes[f].refused++;
		}
		free(bad);
		free(offs);
		free(cookies);
	}
	return ret;
}

int session__attach_libs(struct session *s, int pid)
{
	int err;

	probes__bind_pid(s->probes, pid);
	s->main_pid = pid;
	for (size_t k = 1; k < s->nobjs; k++) {
		struct session_object *o = &s->objs[k];

		if (o->deferred)
			continue;
		o->before_mapped = !proc_maps__base(pid, o->path);
		/* Its in-process counters are checked now (with the file's bytes), installed at
		 * the rendezvous (session__attach_mapped). */
		o->not_mapped = o->patch_later && o->before_mapped;
		err = session__attach(s, k, pid);
		o->not_mapped = false;
		if (err)
			return -1;
	}
	return 0;
}

/* Whether site S of O still has its in-process class in O's CFG (a backend's check takes it
 * away from a site it refuses). */
static bool still_patchable(const struct session_object *o, const struct probe_site *st)
{
	const struct cfg_func *f = &o->prog.funcs[st->func];
	int blk = cfg_func__block_containing(f, st->addr);

	for (uint32_t k = 0; blk >= 0 && k < f->blocks[blk].ninsns; k++) {
		const struct cfg_insn *in = &f->insns[f->blocks[blk].first_insn + k];

		if (in->addr == st->addr)
			return st->kind == SITE_BRANCH	 ? in->patch_branch
			       : st->kind == SITE_INDIRECT ? in->patch_indirect
							   : in->patch_count;
	}
	return false;
}

/* Installs the in-process counters of library K checked at the exec (patch_later), now that
 * PID maps it. Sites that cannot be patched now (bytes that differ from the file's: another
 * session's breakpoints) are left uncounted and noted. Returns 0 or -1 (reported). */
static int object_install(struct session *s, size_t k, int pid)
{
	struct session_object *o = &s->objs[k];
	struct count_object co = count_object_of(o, k);
	size_t nbad = 0;

	co.bias = load_bias(pid, o->path, &o->img);
	if (!proc_maps__base(pid, o->path)) {
		pr_warn("'%s' is not mapped at the loader's rendezvous: its in-process counters are not installed (its counts are not exact)",
			o->path);
		return -1;
	}
	o->bias = co.bias;
	for (size_t b = 0; b < s->nbackends; b++) {
		const struct count_ops *ops = s->backends[b].ops;

		if (!ops->check || (ops->check(s->backends[b].be, &co, pid, &nbad)))
			continue;
		if (nbad) {
			pr_warn("'%s': %zu of its in-process counter sites cannot be patched at the loader's rendezvous: their functions' counts are not exact",
				o->path, nbad);
			for (size_t i = 0; i < o->pl.nsites; i++)
				if (probe_class__in_process(o->pl.sites[i].probe_class) &&
				    !still_patchable(o, &o->pl.sites[i]))
					note_refused(o, o->pl.sites[i].addr);
		}
		if (ops->attach(s->backends[b].be, &co, pid, &nbad))
			return -1;
	}
	return 0;
}

/* Takes object O's in-process counter sites out of its CFG and plans it again: uprobes
 * count all of it. Returns 0 or -1 (reported). */
static int object_no_patch(struct session_object *o)
{
	for (size_t i = 0; i < o->prog.nfuncs; i++)
		func_no_patch(&o->prog.funcs[i]);
	placement__free(&o->pl);
	if (placement__plan(&o->pl, &o->prog, &o->popt))
		return pr_err("'%s': out of memory planning probes", o->path);
	if (!plan_fits(o))
		return pr_err("'%s': %u counters needed with uprobes only, %u loaded", o->path,
			      o->pl.ncounters, o->capacity);
	return 0;
}

int session__attach_mapped(struct session *s, int pid)
{
	double t0 = now_seconds();

	probes__bind_pid(s->probes, pid);
	s->main_pid = pid;
	for (size_t k = 1; k < s->nobjs; k++) {
		struct session_object *o = &s->objs[k];

		if (o->patch_later && object_install(s, k, pid)) {
			s->libs_failed = true;
			return -1;
		}
		if (!o->deferred)
			continue;
		o->before_mapped = !proc_maps__base(pid, o->path);
		if (o->before_mapped) {
			pr_info("'%s' is not mapped at the loader's rendezvous (dlopen'd later?): counted by uprobes",
				o->path);
			if (object_no_patch(o)) {
				s->libs_failed = true;
				return -1;
			}
		}
		if (session__attach(s, k, pid)) {
			s->libs_failed = true;
			return -1;
		}
	}
	pr_info("libraries attached at the loader's rendezvous in %.3f s", now_seconds() - t0);
	return 0;
}

/* The frames of every object: block indices and the virtual edges found, per object. */
struct frame_map {
	struct session *s;       /* its objects note unwound frames outside their blocks */
	struct block_index *bi;  /* [nobjs] */
	struct virtual_edge **v; /* [nobjs], room for every event */
	size_t *n;               /* [nobjs] */
	const struct frame_event **lost; /* frames in no recovered block, room for every event */
	size_t nlost;
	size_t ncovered; /* unwound frames whose flow a longjmp pseudo-edge carries */
};


/* The function of PROG whose extent (entry .. entry + symbol size) holds ADDR, or -1. */
static long func_around(const struct cfg_program *prog, uint64_t addr)
{
	long best = -1;

	for (size_t i = 0; i < prog->nfuncs; i++) {
		const struct cfg_func *f = &prog->funcs[i];

		if (f->entry <= addr && addr - f->entry < f->sym_size &&
		    (best < 0 || f->entry > prog->funcs[best].entry))
			best = (long)i;
	}
	return best;
}

/* Adds vertex V to FC's violations unless it is there already. Returns 0 or -ENOMEM. */
static int add_violation(struct func_counts *fc, uint32_t v)
{
	uint32_t *nv;

	for (uint32_t k = 0; k < fc->nviolations; k++)
		if (fc->violations[k] == v)
			return 0;
	nv = realloc(fc->violations, (fc->nviolations + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	fc->violations = nv;
	fc->violations[fc->nviolations++] = v;
	return 0;
}

/* The frames in no recovered block, attributed: a frame inside a function whose code was
 * only partly recovered (an unresolved indirect jump leaves the code it reaches unknown) had
 * flow through code no probe counts, so the function is flagged (its EXIT vertex joins its
 * violations, *NVIOL grows) unless it is excluded (it has no counts) or already flagged; one
 * warning names each function, its addresses and why its code is incomplete. */
static int lost_frames_report(const struct session *s, const struct frame_map *m,
			      struct func_counts **counts, size_t *nviol)
{
	char msg[1024];
	size_t len = 0, nowhere = 0, nexcluded = 0;
	bool *done = calloc(m->nlost + 1, sizeof(*done));

	if (!done)
		return -ENOMEM;
	msg[0] = 0;
	for (size_t i = 0; i < m->nlost; i++) {
		const struct frame_event *ev = m->lost[i];
		const struct session_object *o = &s->objs[ev->obj];
		uint64_t at = ev->activation ? ev->vaddr : ev->vaddr - 1;
		long fi = func_around(&o->prog, at);
		const struct cfg_func *f;
		size_t nf = 0;

		if (done[i])
			continue;
		if (fi < 0) {
			nowhere++;
			continue;
		}
		f = &o->prog.funcs[fi];
		if (o->pl.funcs[fi].status == PLAN_EXCLUDED) {
			nexcluded++;
			continue;
		}
		for (size_t j = i; j < m->nlost; j++) {
			const struct frame_event *e2 = m->lost[j];

			if (!done[j] && e2->obj == ev->obj &&
			    func_around(&o->prog, e2->activation ? e2->vaddr : e2->vaddr - 1) == fi) {
				done[j] = true;
				nf++;
			}
		}
		if (counts[ev->obj] && !counts[ev->obj][fi].nviolations) {
			if (add_violation(&counts[ev->obj][fi], f->nblocks)) {
				free(done);
				return -ENOMEM;
			}
			(*nviol)++;
		}
		if (len < sizeof(msg))
			len += (size_t)snprintf(msg + len, sizeof(msg) - len,
						"%s%zu in %s (at %#llx%s%s)", len ? ", " : "", nf,
						f->name, (unsigned long long)ev->vaddr,
						o->pl.funcs[fi].reason ? ": " : "",
						o->pl.funcs[fi].reason ? o->pl.funcs[fi].reason : "");
	}
	free(done);
	if (len)
		pr_warn("unwound frames in code no recovered block holds: %s%s: those functions' counts are not exact",
			msg, len >= sizeof(msg) ? "..." : "");
	if (nowhere)
		pr_warn("%zu unwound frames were in no function of a profiled object", nowhere);
	if (nexcluded)
		pr_info("%zu unwound frames were in excluded functions (they have no counts)",
			nexcluded);
	return 0;
}

/* Whether frame event EV is accounted: in an attached object and, for a library (whose
 * probes are bound to one process), in that process. */
static bool event_counts(const struct session *s, const struct frame_event *ev)
{
	if (ev->obj >= s->nobjs || !s->objs[ev->obj].attached)
		return false;
	return ev->obj == 0 || !s->main_pid || ev->tgid == s->main_pid;
}

/* Whether FP has pseudo-edge KIND at BLOCK (its pseudo-edges are sorted by block). */
static bool has_pseudo(const struct func_plan *fp, uint32_t block, uint8_t kind)
{
	uint32_t lo = 0, hi = fp->npseudo;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (fp->pseudo[mid].block < block)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < fp->npseudo && fp->pseudo[lo].block == block && fp->pseudo[lo].kind == kind;
}

/* Whether virtual edge VE of object O is flow a longjmp pseudo-edge already carries (a frame
 * left while waiting on a call with an abandon edge, or entered after a setjmp call with a
 * resume edge): propagation derives those, so the edge is not added (counted once). */
static bool covered_by_pseudo(const struct session_object *o, const struct virtual_edge *ve)
{
	const struct cfg_func *f = &o->prog.funcs[ve->func];
	const struct func_plan *fp = &o->pl.funcs[ve->func];

	if (fp->status == PLAN_EXCLUDED || !fp->npseudo)
		return false;
	if (ve->to == f->nblocks && ve->from < f->nblocks && !ve->stopped_at)
		return has_pseudo(fp, ve->from, CFG_PSEUDO_ABANDON);
	if (ve->from == f->nblocks && ve->to < f->nblocks &&
	    ve->resumed_at == f->blocks[ve->to].end)
		return has_pseudo(fp, ve->to, CFG_PSEUDO_RESUME);
	return false;
}

/* The frames of one C++ throw, from its marker at events[I]: innermost first, each frame whose
 * call has no landing pad is skipped by the exception (left without returning); the first one
 * whose call has one handles it (through its exception edge) and ends the walk. Frames of
 * objects not profiled are not seen. Returns the index of the throw's last event. */
static size_t throw_frames(struct frame_map *m, const struct tracer_result *tr, size_t i,
			   size_t *unmapped)
{
	bool handled = false;

	for (i++; i < tr->nevents && tr->events[i].kind == FRAME_THROW && tr->events[i].vaddr;
	     i++) {
		const struct frame_event *ev = &tr->events[i];
		const struct cfg_program *prog;
		const struct block_index *bi;
		const struct block_ref *r;
		const struct cfg_func *f;
		const struct cfg_block *b;

		if (handled || ev->activation || !event_counts(m->s, ev))
			continue;
		prog = &m->s->objs[ev->obj].prog;
		bi = &m->bi[ev->obj];
		r = block_index__find(bi, ev->vaddr - 1);
		if (!r || r->end != ev->vaddr) {
			note_unmapped(m->s, ev->obj, ev->vaddr - 1, unmapped);
			if (m->lost) /* kept for lost_frames_report */
				m->lost[m->nlost++] = ev;
			continue;
		}
		f = &prog->funcs[r->func];
		b = &f->blocks[r->block];
		for (uint32_t k = 0; k < b->nsucc; k++)
			handled |= f->edges[f->succ[b->first_succ + k]].kind == EDGE_EXCEPTION;
		if (!handled && frames__virtual_edge(prog, bi, ev->vaddr, FRAME_LEFT, false,
						     &m->v[ev->obj][m->n[ev->obj]]) == 1 &&
		    !covered_by_pseudo(&m->s->objs[ev->obj], &m->v[ev->obj][m->n[ev->obj]]))
			m->n[ev->obj]++;
	}
	return i - 1;
}

/* Maps the unwound frames to virtual edges, per object. */
static int frames_to_virtual(struct frame_map *m, const struct tracer_result *tr,
			     size_t *unmapped)
{
	const struct session *s = m->s;

	*unmapped = 0;
	m->lost = calloc(tr->nevents + 1, sizeof(*m->lost));
	if (!m->lost)
		return -ENOMEM;
	for (size_t k = 0; k < s->nobjs; k++) {
		int err = block_index__build(&m->bi[k], &s->objs[k].prog);

		if (err)
			return err;
		m->v[k] = calloc(tr->nevents + 1, sizeof(*m->v[k]));
		if (!m->v[k])
			return -ENOMEM;
	}
	for (size_t i = 0; i < tr->nevents; i++) {
		const struct frame_event *ev = &tr->events[i];
		struct virtual_edge *ve;
		int rc;

		if (ev->kind == FRAME_THROW) {
			i = throw_frames(m, tr, i, unmapped);
			continue;
		}
		if (!event_counts(s, ev))
			continue;
		ve = &m->v[ev->obj][m->n[ev->obj]];
		rc = frames__virtual_edge(&s->objs[ev->obj].prog, &m->bi[ev->obj], ev->vaddr,
					  ev->kind == FRAME_ENTRY ? FRAME_ENTERED : FRAME_LEFT,
					  ev->activation, ve);
		if (rc == 1 && covered_by_pseudo(&s->objs[ev->obj], ve)) {
			m->ncovered++;
		} else if (rc == 1) {
			ve->stopped_before = ev->pending;
			m->n[ev->obj]++;
		} else if (rc < 0) {
			note_unmapped(m->s, ev->obj, ev->vaddr, unmapped);
			if (m->lost)
				m->lost[m->nlost++] = ev;
		}
	}
	return 0;
}

/* The unwound frames inside loops counted by induction (cfg_induction__inside): a frame
 * entered there (attach, fork) adds its register's value to the loop's entry sum, one left
 * there (exit, fatal signal, longjmp, detach) to its exit sum, as its entry and exit sites
 * would have. A frame whose register the unwinder could not recover leaves its function's
 * count unknown: LOST[k][func] is set (LOST[k] is allocated as needed). Returns 0 or
 * -ENOMEM. */
static int induction_frames(struct session *s, const struct frame_map *m,
			    const struct tracer_result *tr, bool **lost)
{
	for (size_t i = 0; i < tr->nevents; i++) {
		const struct frame_event *ev = &tr->events[i];
		const struct session_object *o;
		const struct block_ref *r;

		if (ev->kind == FRAME_THROW || !ev->activation || !event_counts(s, ev))
			continue;
		o = &s->objs[ev->obj];
		if (!o->pl.nivs || !(r = block_index__find(&m->bi[ev->obj], ev->vaddr)))
			continue;
		for (uint32_t k = 0; k < o->pl.nivs; k++) {
			const struct plan_iv *iv = &o->pl.ivs[k];
			bool fired = ev->kind == FRAME_EXIT && !ev->pending;

			if (iv->iv->func != r->func ||
			    !cfg_induction__inside(&o->ind, iv->iv, r->block, ev->vaddr, fired))
				continue;
			pr_debug("induction: frame at %#llx (%s, %s) inside the loop at %#llx: register %d %s %#llx",
				 (unsigned long long)ev->vaddr, ev->kind == FRAME_ENTRY ? "entered" : "left",
				 fired ? "its instruction started" : "interrupted",
				 (unsigned long long)iv->iv->step_addr, iv->iv->reg,
				 ev->regs_valid & (1u << iv->iv->reg) ? "=" : "unknown, mask",
				 (unsigned long long)(ev->regs_valid & (1u << iv->iv->reg)
							      ? ev->regs[iv->iv->reg]
							      : ev->regs_valid));
			if (!(ev->regs_valid & (1u << iv->iv->reg))) {
				if (!lost[ev->obj] &&
				    !(lost[ev->obj] = calloc(o->prog.nfuncs + 1, sizeof(**lost))))
					return -ENOMEM;
				lost[ev->obj][iv->iv->func] = true;
				continue;
			}
			s->counters[o->counter_base +
				    (ev->kind == FRAME_ENTRY ? iv->acc_in : iv->acc_out)] +=
				ev->regs[iv->iv->reg];
		}
	}
	return 0;
}

static int cmp_ve_func(const void *a, const void *b)
{
	const struct virtual_edge *x = a, *y = b;

	return x->func < y->func ? -1 : x->func > y->func;
}

/* Indirect sites of O: ordinal -> site. Returns 0 or -ENOMEM. */
static int index_indirect(struct session_object *o)
{
	o->indirect_site = malloc((o->pl.nsites + 1) * sizeof(*o->indirect_site));
	if (!o->indirect_site)
		return -ENOMEM;
	for (size_t i = 0; i < o->pl.nsites; i++)
		o->indirect_site[i] = UINT32_MAX;
	for (size_t i = 0; i < o->pl.nsites; i++)
		if (o->pl.sites[i].kind == SITE_INDIRECT && o->pl.sites[i].ordinal < o->pl.nsites) {
			o->indirect_site[o->pl.sites[i].ordinal] = (uint32_t)i;
			if (o->pl.sites[i].ordinal + 1 > o->nindirect)
				o->nindirect = o->pl.sites[i].ordinal + 1;
		}
	return 0;
}

/* Propagates object O's counts with its virtual edges VE[0..NVE) (sorted by function) into
 * COUNTS[nfuncs]; adds its violations to *NVIOL. Returns 0 or -ENOMEM. */
static int object_counts(const struct session *s, const struct session_object *o,
			 const struct virtual_edge *ve, size_t nve, struct func_counts *counts,
			 size_t *nviol)
{
	const uint64_t *counters = s->counters + o->counter_base;

	for (size_t i = 0, j = 0; i < o->prog.nfuncs; i++) {
		size_t k = j;

		while (j < nve && ve[j].func == i)
			j++;
		if (o->pl.funcs[i].status == PLAN_EXCLUDED)
			continue;
		if (propagate__func(&o->prog.funcs[i], i, &o->pl, counters, &ve[k], j - k,
				    &counts[i]))
			return -ENOMEM;
		*nviol += counts[i].nviolations;
	}
	return 0;
}

/* The measured moments of the binary's loops (M, from BPF) checked against its edge counts
 * COUNTS: a loop's entries must be the flow into its header from its entry blocks and its
 * trip sum the header's count, where those are known. Fills *STATS (malloc'd, sorted by
 * function) and *SUM. Returns 0 or -ENOMEM. */
static int loop_results(struct session *s, const struct probes_loop_moments *m,
			const struct func_counts *counts, struct profile_loop_stat **stats,
			size_t *nstats, struct profile_loop_summary *sum)
{
	const struct session_object *o = &s->objs[0];
	const struct loop_probe_plan *lp = &s->loops;
	uint32_t bad = 0;

	*nstats = 0;
	*stats = calloc(lp->nloops + 1, sizeof(**stats));
	if (!*stats)
		return -ENOMEM;
	*sum = (struct profile_loop_summary){ .loops = lp->nloops, .measured = lp->nmeasured,
					      .sites = lp->nsites };
	for (size_t i = 0; i < lp->nsites; i++) {
		const struct loop_probe_site *ls = &lp->sites[i];
		const struct func_counts *fc = &counts[lp->loops[ls->loop].func];
		int64_t n = fc->blocks ? fc->blocks[ls->block] : COUNT_UNKNOWN;

		if (n > 0) {
			sum->hits += (uint64_t)n;
			sum->est_trap_ns += (double)n * site_costs__of(&o->popt.costs, ls->probe_class);
		}
	}
	for (uint32_t l = 0; l < lp->nloops; l++) {
		const struct loop_probe_loop *pl = &lp->loops[l];
		const struct cfg_func *f = &o->prog.funcs[pl->func];
		const struct func_counts *fc = &counts[pl->func];
		int64_t hc = fc->blocks ? fc->blocks[pl->header] : COUNT_UNKNOWN, in = 0;

		if (pl->skip)
			continue;
		for (uint32_t k = 0; fc->edges && k < f->nedges && in != COUNT_UNKNOWN; k++) {
			const struct cfg_edge *e = &f->edges[k];
			bool from_entry = false;

			if (e->to != pl->header)
				continue;
			for (uint32_t j = 1; j < pl->nsites; j++)
				from_entry |= lp->sites[pl->first_site + j].block == e->from;
			if (!from_entry)
				continue;
			in = fc->edges[k] < 0 ? COUNT_UNKNOWN : in + fc->edges[k];
		}
		if (!fc->edges)
			in = COUNT_UNKNOWN;
		if ((hc >= 0 && (uint64_t)hc != m[l].sum) ||
		    (in >= 0 && (uint64_t)in != m[l].entries) || m[l].sum > INT64_MAX) {
			pr_debug("loop at %#llx in %s: measured %llu entries, %llu trips; edge counts say %lld, %lld",
				 (unsigned long long)pl->header_addr, f->name,
				 (unsigned long long)m[l].entries, (unsigned long long)m[l].sum,
				 (long long)in, (long long)hc);
			bad++;
			continue;
		}
		(*stats)[(*nstats)++] = (struct profile_loop_stat){
			.func = pl->func, .header = pl->header_addr, .entries = m[l].entries,
			.sum = m[l].sum, .sumsq = m[l].sumsq,
		};
	}
	if (bad)
		pr_warn("%u loops' measured trip counts disagree with the edge counts (-vv: which): their moments are left out of the profile",
			bad);
	pr_info("loop stats: %zu of %u loops measured, %llu extra probe hits, est. %.3f s of traps",
		*nstats, lp->nloops, (unsigned long long)sum->hits, sum->est_trap_ns / 1e9);
	return 0;
}

#define MAX_VIOLATING_SHOWN 10 /* functions named in the warning */

/* The execs whose frames of the old image were not followed (an exec that bypassed the C
 * library, or the exec of an image that was not profiled). */
static unsigned execs_unfollowed(const struct tracer_result *tr)
{
	unsigned n = 0;

	for (size_t i = 0; i < tr->nexec_records; i++)
		n += !tr->execs[i].frames;
	return n;
}

/* Warns that NVIOL vertices break flow conservation, naming each function (of every object
 * K, with COUNTS[K]) and its actual cause. */
static void warn_violations(const struct session *s, struct func_counts **counts, size_t nviol,
			    const struct tracer_result *tr, size_t unmapped)
{
	size_t nfuncs = 0, shown = 0;
	char why[1024];

	for (size_t k = 0; k < s->nobjs; k++)
		for (size_t i = 0; i < s->objs[k].prog.nfuncs; i++)
			nfuncs += counts[k][i].nviolations != 0;
	pr_warn("%zu blocks in %zu function%s break flow conservation: their counts are not exact (see 'edgeprof report'):",
		nviol, nfuncs, nfuncs == 1 ? "" : "s");
	for (size_t k = 0; k < s->nobjs; k++) {
		const struct session_object *o = &s->objs[k];
		const struct profile_input in = { .prog = &o->prog, .notes = o->notes };

		for (size_t i = 0; i < o->prog.nfuncs; i++) {
			struct profile_cause c[8];
			size_t n;

			if (!counts[k][i].nviolations)
				continue;
			if (shown++ >= MAX_VIOLATING_SHOWN)
				continue;
			n = profile__func_causes(&in, i, c, 8);
			profile__violation_cause(c, n < 8 ? n : 8, tr->unwind_failures,
						 execs_unfollowed(tr), unmapped, why, sizeof(why));
			pr_warn("  %s%s%s (%#llx): %u block%s: %s%s", k ? o->path : "", k ? ": " : "",
				o->prog.funcs[i].name, (unsigned long long)o->prog.funcs[i].entry,
				counts[k][i].nviolations, counts[k][i].nviolations == 1 ? "" : "s",
				why, n > 8 ? " and more" : "");
		}
	}
	if (shown > MAX_VIOLATING_SHOWN)
		pr_warn("  and %zu more functions", nfuncs - MAX_VIOLATING_SHOWN);
}

/* Closes every counting backend (the uprobe one last: probes is its handle). */
static void close_backends(struct session *s)
{
	for (size_t b = s->nbackends; b-- > 0;)
		s->backends[b].ops->close(s->backends[b].be);
	if (s->patch_owned)
		patch_count_ops.close(s->patch);
	s->patch_owned = false;
	s->patch = NULL;
	s->nbackends = 0;
	s->probes = NULL;
}

int session__finish(struct session *s, const struct tracer_result *tr,
		    const struct session_run_info *info, const char *out)
{
	struct probes_loop_moments *lm = NULL;
	struct profile_loop_stat *lstats = NULL;
	struct profile_loop_summary lsum;
	size_t nlstats = 0;
	uint64_t lost_trips = 0;
	size_t n = s->nobjs, unmapped = 0, nviol = 0;
	struct block_index *bi = calloc(n, sizeof(*bi));
	struct virtual_edge **v = calloc(n, sizeof(*v));
	size_t *nv = calloc(n, sizeof(*nv));
	struct func_counts **counts = calloc(n, sizeof(*counts));
	struct block_lines *blines = finish_lines(s);
	struct profile_input *in = calloc(n, sizeof(*in));
	struct profile_exec *execs = calloc(tr->nexec_records + 1, sizeof(*execs));
	struct frame_map m = { .s = s, .bi = bi, .v = v, .n = nv };
	bool **iv_lost = NULL;
	uint64_t unmatched = 0;
	char *profiled[TRACER_MAX_OBJECTS];
	int ret = -1;

	if (s->libs_failed) {
		pr_err("the libraries' counters could not be placed when the loader had mapped them: no profile written");
		goto out;
	}
	if (!bi || !v || !nv || !counts || !in || !execs)
		goto nomem;
	for (size_t i = 0; i < tr->nexec_records; i++)
		execs[i] = (struct profile_exec){ .pid = tr->execs[i].pid, .main = tr->execs[i].main,
						  .frames = tr->execs[i].frames,
						  .at = tr->execs[i].at, .path = tr->execs[i].path };
	s->counters = calloc(s->capacity + 1, sizeof(*s->counters));
	if (!s->counters)
		goto nomem;
	for (size_t b = 0; b < s->nbackends; b++)
		if (s->backends[b].ops->read(s->backends[b].be, s->counters)) {
			pr_err("cannot read the counters of the %s", s->backends[b].ops->name);
			goto out;
		}
	/* Indirect sites: their counters are the targets their jumps took. */
	for (size_t k = 0; k < n; k++)
		if (index_indirect(&s->objs[k]))
			goto nomem;
	if (probes__read_indirect(s->probes, fold_indirect, s))
		goto out;
	for (size_t k = 0; k < n; k++)
		unmatched += s->objs[k].unmatched;
	if (unmatched)
		pr_warn("%llu indirect jumps went to targets that are no edge of the CFG: counts of their functions are not exact",
			(unsigned long long)unmatched);
	if (probes__lost_forks(s->probes))
		pr_warn("%llu forked processes could not be counted (too many processes, or their probes could not be attached)",
			(unsigned long long)probes__lost_forks(s->probes));
	if (s->loop_stats) {
		lm = calloc(s->loops.nloops + 1, sizeof(*lm));
		if (!lm)
			goto nomem;
		if (probes__read_loops(s->probes, lm, &lost_trips))
			goto out;
		if (lost_trips)
			pr_warn("%llu loop iterations could not be followed (too many loops active at once): some loops' moments are not exact",
				(unsigned long long)lost_trips);
	}
	/* Every counter is read: the links go while the counts are propagated and written
	 * (close_backends waits for them). */
	pr_debug("counters read");
	probes__detach_async(s->probes);
	if (frames_to_virtual(&m, tr, &unmapped))
		goto nomem;
	iv_lost = calloc(n, sizeof(*iv_lost));
	if (!iv_lost || induction_frames(s, &m, tr, iv_lost))
		goto nomem;
	for (size_t k = 0; k < n; k++) {
		struct session_object *o = &s->objs[k];

		if (nv[k])
			qsort(v[k], nv[k], sizeof(*v[k]), cmp_ve_func);
		counts[k] = calloc(o->prog.nfuncs ? o->prog.nfuncs : 1, sizeof(*counts[k]));
		if (!counts[k] || object_counts(s, o, v[k], nv[k], counts[k], &nviol))
			goto nomem;
		for (size_t i = 0; iv_lost[k] && i < o->prog.nfuncs; i++) {
			if (!iv_lost[k][i] || o->pl.funcs[i].status == PLAN_EXCLUDED)
				continue;
			pr_warn("'%s': a frame inside a loop of %s counted by induction had its register unknown: its counts are not exact",
				o->path, o->prog.funcs[i].name);
			if (counts[k][i].nviolations)
				continue; /* flagged already */
			if (add_violation(&counts[k][i], o->prog.funcs[i].nblocks))
				goto nomem;
			nviol++;
		}
		in[k] = (struct profile_input){
			.prog = &o->prog, .pl = &o->pl, .counters = s->counters + o->counter_base,
			.counts = counts[k], .costs = &o->popt.costs, .blines = blines ? &blines[k] : NULL,
			.argv = info->argv, .wait_status = tr->wait_status, .seconds = tr->seconds,
			.nprocesses = tr->nprocesses, .nthreads = tr->nthreads,
			.unwind_failures = tr->unwind_failures, .nvirtual = nv[k], .ve = v[k],
			.nlongjmps = tr->nlongjmps,
			.mode = info->mode, .pid = info->pid, .held_attach = info->held_attach,
			.held_detach = info->held_detach, .analysis_s = s->analysis_s,
			.execs = execs, .nexecs = tr->nexec_records,
			.notes = o->notes, .unmapped_frames = o->unmapped,
		};
	}
	if (lost_frames_report(s, &m, counts, &nviol))
		goto nomem;
	if (s->loop_stats) {
		if (loop_results(s, lm, counts[0], &lstats, &nlstats, &lsum))
			goto nomem;
		in[0].loops = lstats;
		in[0].nloops = nlstats;
		in[0].loop_summary = &lsum;
	}
	/* Libraries whose probes never went in (the program ended before its loader was done)
	 * have nothing to report. */
	in[0].libs = &in[1];
	for (size_t k = 1; k < n; k++) {
		if (s->objs[k].attached)
			in[1 + in[0].nlibs++] = in[k];
		else
			pr_warn("'%s' was never attached: it has no section in the profile",
				s->objs[k].path);
	}
	pr_debug("counts propagated");
	if (profile__write(out, &in[0]))
		goto out;
	pr_debug("profile written");
	if (nviol)
		warn_violations(s, counts, nviol, tr, unmapped);
	else if (unmapped)
		pr_warn("%zu unwound frames were not in any recovered block (-vv: where)", unmapped);
	/* A frame beyond a stack's unknown part is one whose call never ends in the flow: the
	 * counts of its function can be wrong with flow conserved everywhere. */
	if (tr->unwind_failures && !nviol)
		pr_warn("%u stack%s could not be unwound fully (-vv: where): functions with frames "
			"beyond it may have inexact counts although flow is conserved",
			tr->unwind_failures, tr->unwind_failures == 1 ? "" : "s");
	for (size_t i = 0; i < tr->nexec_records; i++)
		if (execs[i].main)
			pr_warn("the %s exec'd '%s' at %.3f s (pid %d): the counts cover the image before the exec",
				info->mode && !strcmp(info->mode, "attach") ? "process" : "program",
				execs[i].path ? execs[i].path : "?", execs[i].at, execs[i].pid);
	for (size_t k = 1; k < n; k++)
		profiled[k - 1] = s->objs[k].path;
	lib_hint__report(s->objs[0].path,
			 lib_hint__own_insns(&s->objs[0].prog, &s->objs[0].pl, counts[0]),
			 info->pid, profiled, n - 1);
	pr_info("profile written to '%s'", out);
	ret = 0;
	goto out;
nomem:
	pr_err("out of memory");
out:
	close_backends(s);
	pr_debug("counting backends closed");
	for (size_t k = 0; k < n; k++) {
		for (size_t i = 0; counts && counts[k] && i < s->objs[k].prog.nfuncs; i++)
			func_counts__release(&counts[k][i]);
		if (counts)
			free(counts[k]);
		if (v)
			free(v[k]);
		if (bi)
			block_index__free(&bi[k]);
		if (iv_lost)
			free(iv_lost[k]);
	}
	free(iv_lost);
	free(m.lost);
	free(bi);
	free(v);
	free(nv);
	free(counts);
	free(in);
	free(execs);
	free(lm);
	free(lstats);
	return ret;
}

void session__release(struct session *s)
{
	analysis_cache__save_end(s->analysis_save);
	s->analysis_save = NULL;
	if (s->lines_started)
		pthread_join(s->lines_thread, NULL);
	s->lines_started = false;
	for (size_t k = 0; s->lines && k < s->nobjs; k++)
		block_lines__free(&s->lines[k]);
	free(s->lines);
	s->lines = NULL;
	close_backends(s);
	free(s->counters);
	s->counters = NULL;
	for (size_t k = 0; k < s->nobjs; k++) {
		struct session_object *o = &s->objs[k];

		free(o->indirect_site);
		free(o->notes);
		free(o->select);
		run_weights__free(&o->rw);
		placement__free(&o->pl);
		cfg_longjmp__free(&o->lj);
		cfg_induction__free(&o->ind);
		cfg_program__free(&o->prog);
		elf_image__close(&o->img);
	}
	free(s->objs);
	s->objs = NULL;
	s->nobjs = 0;
	loop_probes__free(&s->loops);
	s->loop_stats = false;
}

bool session__longjmp_lazy(const struct session *s)
{
	for (size_t k = 0; k < s->nobjs; k++)
		if (!s->objs[k].lj.active)
			return false;
	return s->nobjs > 0;
}
