/*
 * The bridge between a counting plan and in-process counters (see patch_sites.h): the patch
 * analysis of cfg/patch_window.h run once per program, each plan site's window looked up from
 * its kind (a count site's window starts at it, a branch site's ends with its jcc), and the
 * site's trampoline made by user/count/trampoline.h with the flags live where each of its
 * increments goes (flag-saving increments keep them with lahf/seto, the cheaper measured way).
 */
#include "user/count/patch_sites.h"

#include <errno.h>
#include <stdlib.h>

#include "cfg/patch_window.h"

struct patch_sites {
	const struct cfg_program *prog;
	struct patch_analysis pa;
};

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
	*out = ps;
	return 0;
}

/* The window of site S under AVOID: 0 with *W, or -ENOENT. */
static int site_window(const struct patch_sites *ps, const struct probe_site *s,
		       const uint64_t *avoid, size_t navoid, struct patch_window *w)
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
						    0, w);
	case SITE_BRANCH:
		if (!f->insns[k].patch_branch)
			return -ENOENT;
		return patch_analysis__branch_window(&ps->pa, s->func, (uint32_t)k, avoid, navoid,
						     w);
	default:
		return -ENOENT;
	}
}

int patch_sites__window(const struct patch_sites *ps, const struct probe_site *s,
			const uint64_t *avoid, size_t navoid, const uint64_t *used, size_t nused,
			uint64_t *start, uint8_t *len, uint64_t *sb)
{
	struct patch_window w;
	int err = site_window(ps, s, avoid, navoid, &w);

	*sb = 0;
	if (!err && w.short_jump)
		err = patch_analysis__springboard(&ps->pa, &w, used, nused, avoid, navoid, sb);
	if (err)
		return err;
	*start = w.start;
	*len = w.len;
	return 0;
}

int patch_sites__emit(const struct patch_sites *ps, const struct probe_site *s, uint64_t start,
		      uint8_t len, uint64_t sb, uint64_t bias, uint64_t tramp, uint64_t counters,
		      bool atomic,
		      struct patch_blob *out)
{
	struct patch_window w;
	struct tramp_spec sp = { 0 };
	const uint8_t *bytes;
	size_t avail = 0;
	int err = site_window(ps, s, NULL, 0, &w);

	if (err || w.start != start || w.len != len || w.short_jump != (sb != 0) ||
	    (sb && !patch_analysis__springboard_ok(&ps->pa, &w, sb)))
		return -EINVAL;
	bytes = elf_image__code(ps->prog->img, start, &avail);
	if (!bytes || avail < len)
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
	if (s->kind == SITE_COUNT) {
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
	return trampoline__emit(&sp, out);
}

void patch_sites__close(struct patch_sites *ps)
{
	if (!ps)
		return;
	patch_analysis__release(&ps->pa);
	free(ps);
}
