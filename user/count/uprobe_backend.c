/*
 * The uprobe counting backend (count.h): the sites of a plan whose class is a uprobe class
 * (stepped, emulated, nop5) become one uprobe-multi link per object (probes.c), each probe
 * with a cookie that tells the BPF program which counters to bump. Instructions the kernel
 * refuses to probe are found by bisection and marked unprobeable in the CFG, for the session
 * to plan again without them.
 */
#include "user/count/count.h"

#include <errno.h>
#include <stdlib.h>

#include "bpf/edgeprof.h"
#include "cfg/elf_image.h"
#include "user/count/probes.h"
#include "user/util/log.h"

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

int uprobe_backend__attach_or_refuse(struct probes *p, struct count_object *o,
				     int (*attach)(struct probes *, const char *,
						   const uint64_t *, const uint64_t *, size_t),
				     const uint64_t *offs, const uint64_t *cookies, size_t n,
				     size_t *nrefused)
{
	uint64_t *bad = NULL;
	int err = n ? attach(p, o->path, offs, cookies, n) : 0;

	*nrefused = 0;
	if (err == -ENOTSUPP)
		err = probes__refused(p, o->path, offs, n, &bad, nrefused);
	if (err)
		return err;
	for (size_t i = 0; i < *nrefused; i++) {
		uint64_t v;

		if (!elf_image__offset_to_vaddr(o->img, bad[i], &v)) {
			pr_debug("the kernel refuses a probe at %#llx", (unsigned long long)v);
			mark_refused(o->prog, v);
			if (o->refused)
				o->refused(o->ctx, v);
		}
	}
	free(bad);
	return 0;
}

/* The attach cookie of site S of object O: its counters and ordinal moved to O's slice. */
static uint64_t object_cookie(const struct count_object *o, const struct probe_site *s)
{
	struct probe_site moved = *s;

	if (s->kind == SITE_INDIRECT) {
		moved.ordinal += o->ordinal_base;
	} else {
		if (s->counter != PLACEMENT_NO_COUNTER)
			moved.counter += o->counter_base;
		if (s->kind == SITE_BRANCH && s->counter2 != PLACEMENT_NO_COUNTER)
			moved.counter2 += o->counter_base;
	}
	return probes__cookie(&moved);
}

static bool uprobe_counts_class(unsigned cls)
{
	return cls == PROBE_STEPPED || cls == PROBE_EMULATED || cls == PROBE_NOP5;
}

int uprobe_backend__offsets(const struct count_object *o, uint64_t **offs, uint64_t **cookies,
			    size_t *n)
{
	const struct placement *pl = o->pl;

	*n = 0;
	*offs = malloc((pl->nsites + pl->naccums + 1) * sizeof(**offs));
	*cookies = malloc((pl->nsites + pl->naccums + 1) * sizeof(**cookies));
	if (!*offs || !*cookies) {
		free(*offs);
		free(*cookies);
		*offs = *cookies = NULL;
		return pr_err("out of memory");
	}
	for (size_t i = 0; i < pl->nsites; i++) {
		const struct probe_site *s = &pl->sites[i];

		if (!uprobe_counts_class(s->probe_class))
			continue;
		if (elf_image__vaddr_to_offset(o->img, s->addr, &(*offs)[*n])) {
			free(*offs);
			free(*cookies);
			*offs = *cookies = NULL;
			return pr_err("'%s': probe site %#llx has no file offset", o->path,
				      (unsigned long long)s->addr);
		}
		(*cookies)[(*n)++] = object_cookie(o, s);
	}
	/* The accumulators of loops counted by induction: uprobes whatever the mechanism (an
	 * address may have a counting probe too: the kernel runs both). */
	for (size_t i = 0; i < pl->naccums; i++) {
		const struct accum_site *a = &pl->accums[i];

		if (elf_image__vaddr_to_offset(o->img, a->addr, &(*offs)[*n])) {
			free(*offs);
			free(*cookies);
			*offs = *cookies = NULL;
			return pr_err("'%s': accumulator site %#llx has no file offset", o->path,
				      (unsigned long long)a->addr);
		}
		(*cookies)[(*n)++] = ep_cookie_accum(a->kind == IV_AT ? EP_CC_ALWAYS : a->cc,
						     a->kind == IV_JCC_TAKEN, (unsigned)a->reg,
						     a->counter + o->counter_base);
	}
	return 0;
}

static int uprobe_attach(void *be, struct count_object *o, int pid, size_t *nrefused)
{
	uint64_t *offs, *cookies;
	size_t n;
	int err = uprobe_backend__offsets(o, &offs, &cookies, &n);

	if (err)
		return err;
	err = uprobe_backend__attach_or_refuse(be, o, probes__attach, offs, cookies, n, nrefused);
	free(offs);
	free(cookies);
	return err;
}

static int uprobe_count_pid(void *be, int pid)
{
	return probes__add_pid(be, pid);
}

static int uprobe_uncount_pid(void *be, int pid)
{
	return probes__remove_pid(be, pid);
}

static int uprobe_read(void *be, uint64_t *counters)
{
	uint32_t n = probes__ncounters(be);
	uint64_t *v = calloc((size_t)n + 1, sizeof(*v));
	int err;

	if (!v)
		return pr_err("out of memory");
	err = probes__read(be, v);
	for (uint32_t i = 0; !err && i < n; i++)
		counters[i] += v[i];
	free(v);
	return err;
}

static void uprobe_close(void *be)
{
	probes__close(be);
}

const struct count_ops uprobe_count_ops = {
	.name = "uprobes",
	.counts_class = uprobe_counts_class,
	.attach = uprobe_attach,
	.count_pid = uprobe_count_pid,
	.uncount_pid = uprobe_uncount_pid,
	.read = uprobe_read,
	.close = uprobe_close,
};
