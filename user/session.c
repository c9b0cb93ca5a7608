/*
 * A profiling session (see session.h): plan, attach, and from counters and frame events to a
 * written profile. Shared by `edgeprof run` and `edgeprof record -p`.
 */
#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/edgeprof.h"
#include "calibration.h"
#include "cfg/error.h"
#include "cfg/srcline.h"
#include "estimators/frames.h"
#include "estimators/propagate.h"
#include "log.h"
#include "proc_maps.h"
#include "profile.h"

/* The run-time load bias of PATH in process PID (0 when not found, which is also right for
 * a non-PIE executable). */
static uint64_t load_bias(int pid, const char *path, const struct elf_image *img)
{
	uint64_t base = proc_maps__base(pid, path);
	uint64_t first = img->segs[0].vaddr - img->segs[0].offset;

	return base ? base - (first & ~0xfffULL) : 0;
}

/* One target an indirect site saw: add its hits to the counter of the matching out-edge. */
static void fold_indirect(void *arg, uint32_t ordinal, uint64_t target, uint64_t hits)
{
	struct session *c = arg;
	const struct probe_site *s;
	const struct cfg_func *f;
	int b;

	if (ordinal >= c->nindirect || c->indirect_site[ordinal] == UINT32_MAX) {
		c->unmatched += hits;
		return;
	}
	s = &c->pl.sites[c->indirect_site[ordinal]];
	f = &c->prog.funcs[s->func];
	b = cfg_func__block_containing(f, s->addr);
	for (uint32_t k = 0; b >= 0 && k < f->blocks[b].nsucc && k < s->counter2; k++) {
		const struct cfg_edge *e = &f->edges[f->succ[f->blocks[b].first_succ + k]];

		if (e->to < f->nblocks && f->blocks[e->to].start == target - c->bias) {
			c->counters[s->counter + k] += hits;
			return;
		}
	}
	c->unmatched += hits;
}

/* Makes the instruction at VADDR unprobeable in PROG (the kernel refused a probe there). */
static void mark_refused(struct cfg_program *prog, uint64_t vaddr)
{
	for (size_t i = 0; i < prog->nfuncs; i++) {
		struct cfg_func *f = &prog->funcs[i];
		int b = cfg_func__block_containing(f, vaddr);

		for (uint32_t k = 0; b >= 0 && k < f->blocks[b].ninsns; k++)
			if (f->insns[f->blocks[b].first_insn + k].addr == vaddr)
				f->insns[f->blocks[b].first_insn + k].probe_class = PROBE_NEVER;
	}
}

/* The file offsets of the sites of the plan. Returns a malloc'd array, or NULL (reported). */
static uint64_t *site_offsets(const struct session *c)
{
	uint64_t *offs = malloc((c->pl.nsites + 1) * sizeof(*offs));

	if (!offs) {
		pr_err("out of memory");
		return NULL;
	}
	for (size_t i = 0; i < c->pl.nsites; i++)
		if (elf_image__vaddr_to_offset(&c->img, c->pl.sites[i].addr, &offs[i])) {
			pr_err("'%s': probe site %#llx has no file offset", c->binary,
			       (unsigned long long)c->pl.sites[i].addr);
			free(offs);
			return NULL;
		}
	return offs;
}

int session__prepare(struct session *s, const char *binary, const struct session_options *o)
{
	s->img.fd = -1;
	if (strlen(binary) >= sizeof(s->binary))
		return pr_err("'%s': path too long", binary);
	strcpy(s->binary, binary);
	s->popt.mode = o->mode;
	if (elf_image__open(&s->img, binary))
		return pr_lib_err(binary, cfg_strerror());
	if (cfg_program__build(&s->prog, &s->img, NULL))
		return pr_lib_err(binary, cfg_strerror());
	calibration__load(&s->popt.costs);
	if (o->weights) {
		if (run_weights__load(&s->rw, o->weights, &s->img, &s->prog))
			return -1;
		s->popt.weights = run_weights__get;
		s->popt.weights_ctx = &s->rw;
	}
	if (placement__plan(&s->pl, &s->prog, &s->popt))
		return pr_err("'%s': out of memory planning probes", binary);
	if (s->pl.ncounters >= EP_MAX_COUNTERS)
		return pr_err("'%s': %u counters needed, at most %llu supported", binary,
			      s->pl.ncounters, (unsigned long long)EP_MAX_COUNTERS);
	/* Room for a plan made again without refused sites (see session__attach). */
	s->capacity = s->pl.ncounters + s->pl.ncounters / 2 + 1024;
	if (probes__open(&s->probes, s->capacity))
		return -1;
	probes__bind_pid(s->probes, o->bound_pid);
	pr_info("%zu functions (%u with chords, %u block counts only, %u excluded), %zu probe sites, %u counters",
		s->prog.nfuncs, s->pl.nchord_funcs, s->pl.nnaive_funcs, s->pl.nexcluded_funcs,
		s->pl.nsites, s->pl.ncounters);
	return 0;
}

int session__attach(struct session *c, int pid)
{
	int err = -EINVAL;

	for (int round = 0; round < 4; round++) {
		uint64_t *offs = site_offsets(c), *cookies, *bad = NULL;
		size_t nbad = 0;

		if (!offs)
			return -EINVAL;
		cookies = malloc((c->pl.nsites + 1) * sizeof(*cookies));
		if (!cookies) {
			free(offs);
			return pr_err("out of memory");
		}
		for (size_t i = 0; i < c->pl.nsites; i++)
			cookies[i] = probes__cookie(&c->pl.sites[i]);
		err = c->pl.nsites ? probes__attach(c->probes, c->binary, offs, cookies,
						    c->pl.nsites) : 0;
		free(cookies);
		if (err == -ENOTSUPP)
			err = probes__refused(c->probes, c->binary, offs, c->pl.nsites, &bad, &nbad);
		free(offs);
		if (err)
			return err;
		if (!nbad) {
			c->bias = load_bias(pid, c->binary, &c->img);
			return 0;
		}
		pr_info("the kernel refuses probes on %zu instructions: placing probes without them",
			nbad);
		for (size_t i = 0; i < nbad; i++) {
			uint64_t v;

			if (!elf_image__offset_to_vaddr(&c->img, bad[i], &v)) {
				pr_debug("the kernel refuses a probe at %#llx",
					 (unsigned long long)v);
				mark_refused(&c->prog, v);
			}
		}
		free(bad);
		placement__free(&c->pl);
		if (placement__plan(&c->pl, &c->prog, &c->popt))
			return pr_err("'%s': out of memory planning probes", c->binary);
		if (c->pl.ncounters > c->capacity)
			return pr_err("'%s': %u counters needed after leaving out refused probes, %u loaded",
				      c->binary, c->pl.ncounters, c->capacity);
	}
	return pr_err("'%s': the kernel keeps refusing probe sites", c->binary);
}

/* The frames of one C++ throw, from its marker at events[I]: innermost first, each frame whose
 * call has no landing pad is skipped by the exception (left without returning); the first one
 * whose call has one handles it (through its exception edge) and ends the walk. Returns the
 * index of the throw's last event. */
static size_t throw_frames(const struct cfg_program *prog, const struct block_index *bi,
			   const struct tracer_result *tr, size_t i, struct virtual_edge *v,
			   size_t *n, size_t *unmapped)
{
	bool handled = false;

	for (i++; i < tr->nevents && tr->events[i].kind == FRAME_THROW && tr->events[i].vaddr;
	     i++) {
		const struct frame_event *ev = &tr->events[i];
		const struct block_ref *r;
		const struct cfg_func *f;
		const struct cfg_block *b;

		if (handled || ev->activation)
			continue;
		r = block_index__find(bi, ev->vaddr - 1);
		if (!r || r->end != ev->vaddr) {
			(*unmapped)++;
			continue;
		}
		f = &prog->funcs[r->func];
		b = &f->blocks[r->block];
		for (uint32_t k = 0; k < b->nsucc; k++)
			handled |= f->edges[f->succ[b->first_succ + k]].kind == EDGE_EXCEPTION;
		if (!handled && frames__virtual_edge(prog, bi, ev->vaddr, FRAME_LEFT, false,
						     &v[*n]) == 1)
			(*n)++;
	}
	return i - 1;
}

/* Maps the unwound frames to virtual edges (one list for the whole program). */
static int frames_to_virtual(const struct cfg_program *prog, const struct tracer_result *tr,
			     struct virtual_edge **vout, size_t *nout, size_t *unmapped)
{
	struct block_index bi;
	struct virtual_edge *v = NULL;
	size_t n = 0, i;
	int err = block_index__build(&bi, prog);

	*unmapped = 0;
	if (err)
		return err;
	v = calloc(tr->nevents + 1, sizeof(*v));
	if (!v) {
		block_index__free(&bi);
		return -ENOMEM;
	}
	for (i = 0; i < tr->nevents; i++) {
		const struct frame_event *ev = &tr->events[i];
		int rc;

		if (ev->kind == FRAME_THROW) {
			i = throw_frames(prog, &bi, tr, i, v, &n, unmapped);
			continue;
		}
		rc = frames__virtual_edge(prog, &bi, ev->vaddr,
					  ev->kind == FRAME_ENTRY ? FRAME_ENTERED : FRAME_LEFT,
					  ev->activation, &v[n]);
		if (rc == 1) {
			v[n].stopped_before = ev->pending;
			n++;
		}
		else if (rc < 0)
			(*unmapped)++;
	}
	block_index__free(&bi);
	*vout = v;
	*nout = n;
	return 0;
}

static int cmp_ve_func(const void *a, const void *b)
{
	const struct virtual_edge *x = a, *y = b;

	return x->func < y->func ? -1 : x->func > y->func;
}


int session__finish(struct session *s, const struct tracer_result *tr,
		    const struct session_run_info *info, const char *out)
{
	struct func_counts *counts = NULL;
	struct virtual_edge *ve = NULL;
	struct srcline *lines = NULL;
	size_t nve = 0, unmapped = 0, i, j, nviol = 0;
	int ret = -1;

	s->counters = calloc(s->capacity + 1, sizeof(*s->counters));
	if (!s->counters || probes__read(s->probes, s->counters)) {
		pr_err("cannot read the counters");
		goto out;
	}
	/* Indirect sites: their counters are the targets their jumps took. */
	s->indirect_site = malloc((s->pl.nsites + 1) * sizeof(*s->indirect_site));
	if (!s->indirect_site)
		goto nomem;
	for (i = 0; i < s->pl.nsites; i++)
		s->indirect_site[i] = UINT32_MAX;
	for (i = 0; i < s->pl.nsites; i++)
		if (s->pl.sites[i].kind == SITE_INDIRECT && s->pl.sites[i].ordinal < s->pl.nsites) {
			s->indirect_site[s->pl.sites[i].ordinal] = (uint32_t)i;
			if (s->pl.sites[i].ordinal + 1 > s->nindirect)
				s->nindirect = s->pl.sites[i].ordinal + 1;
		}
	if (s->nindirect && probes__read_indirect(s->probes, fold_indirect, s))
		goto out;
	if (s->unmatched)
		pr_warn("%llu indirect jumps went to targets that are no edge of the CFG: counts of their functions are not exact",
			(unsigned long long)s->unmatched);
	if (probes__lost_forks(s->probes))
		pr_warn("%llu forked processes could not be counted (too many processes)",
			(unsigned long long)probes__lost_forks(s->probes));
	probes__close(s->probes);
	s->probes = NULL;
	if (frames_to_virtual(&s->prog, tr, &ve, &nve, &unmapped))
		goto nomem;
	if (nve)
		qsort(ve, nve, sizeof(*ve), cmp_ve_func);
	counts = calloc(s->prog.nfuncs ? s->prog.nfuncs : 1, sizeof(*counts));
	if (!counts)
		goto nomem;
	for (i = 0, j = 0; i < s->prog.nfuncs; i++) {
		size_t k = j;

		while (j < nve && ve[j].func == i)
			j++;
		if (s->pl.funcs[i].status == PLAN_EXCLUDED)
			continue;
		if (propagate__func(&s->prog.funcs[i], i, &s->pl, s->counters, &ve[k], j - k,
				    &counts[i]))
			goto nomem;
		nviol += counts[i].nviolations;
	}
	if (srcline__open(&lines, &s->img))
		lines = NULL;
	if (profile__write(out, &(struct profile_input){
					.prog = &s->prog, .pl = &s->pl, .counters = s->counters,
					.counts = counts, .costs = &s->popt.costs, .lines = lines,
					.argv = info->argv, .wait_status = tr->wait_status,
					.seconds = tr->seconds, .nprocesses = tr->nprocesses,
					.nthreads = tr->nthreads,
					.unwind_failures = tr->unwind_failures, .nvirtual = nve,
					.ve = ve, .mode = info->mode, .pid = info->pid,
					.held_attach = info->held_attach,
					.held_detach = info->held_detach }))
		goto out;
	if (nviol)
		pr_warn("%zu blocks break flow conservation (frames left by longjmp or exceptions, or unwinding failed %u times): their functions' counts are not exact, see 'edgeprof report'",
			nviol, tr->unwind_failures);
	if (unmapped)
		pr_warn("%zu unwound frames were not in any recovered block", unmapped);
	pr_info("profile written to '%s'", out);
	ret = 0;
	goto out;
nomem:
	pr_err("out of memory");
out:
	if (lines)
		srcline__close(lines);
	for (i = 0; counts && i < s->prog.nfuncs; i++)
		func_counts__release(&counts[i]);
	free(counts);
	free(ve);
	return ret;
}

void session__release(struct session *s)
{
	probes__close(s->probes);
	s->probes = NULL;
	free(s->counters);
	free(s->indirect_site);
	s->counters = NULL;
	s->indirect_site = NULL;
	run_weights__free(&s->rw);
	placement__free(&s->pl);
	cfg_program__free(&s->prog);
	if (s->img.fd != 0 || s->img.path) /* a zeroed S has no image */
		elf_image__close(&s->img);
}
