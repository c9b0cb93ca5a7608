/*
 * Unit tests of the analysis snapshot (cfg/snapshot.h, cfg/cfg_snapshot.h, placement__save
 * and placement__load): the analysis of this test binary itself (/proc/self/exe: its CFGs,
 * longjmp pseudo-edges, patch-window analysis with its classes applied, and a chord plan)
 * saved, read back and saved again gives the same bytes, and what was read back answers
 * as the original does (every function's blocks, edges, instructions and calls with their
 * callee names; the plan's sites and counters). A stream cut short anywhere, or with a
 * count changed, is refused (no crash, nothing left allocated that the release functions
 * would not free).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cfg/cfg.h"
#include "cfg/cfg_snapshot.h"
#include "cfg/longjmp.h"
#include "cfg/patch_window.h"
#include "cfg/snapshot.h"
#include "estimators/placement.h"
#include "estimators/site_costs.h"

struct analysis {
	struct elf_image img;
	struct cfg_program prog;
	struct cfg_longjmp lj;
	struct patch_analysis pa;
	struct placement pl;
};

static struct analysis orig;

static int setup(void **state)
{
	struct placement_options opt = {.mode = PLACEMENT_CHORDS};

	(void)state;
	site_costs__defaults(&opt.costs);
	if (elf_image__open(&orig.img, "/proc/self/exe") ||
	    cfg_program__build(&orig.prog, &orig.img, NULL) ||
	    cfg_longjmp__analyze(&orig.lj, &orig.prog) ||
	    patch_analysis__build(&orig.pa, &orig.prog))
		return -1;
	patch_analysis__apply(&orig.pa, &orig.prog);
	cfg_program__drop_decoding(&orig.prog);
	opt.longjmp = &orig.lj;
	return placement__plan(&orig.pl, &orig.prog, &opt) ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	placement__free(&orig.pl);
	patch_analysis__release(&orig.pa);
	cfg_longjmp__free(&orig.lj);
	cfg_program__free(&orig.prog);
	elf_image__close(&orig.img);
	return 0;
}

/* Saves A into *OUT. */
static void save(const struct analysis *a, struct snap_out *out)
{
	memset(out, 0, sizeof(*out));
	assert_int_equal(cfg_program__save(&a->prog, out), 0);
	cfg_longjmp__save(&a->lj, a->prog.nfuncs, out);
	patch_analysis__save(&a->pa, out);
	assert_int_equal(placement__save(&a->pl, &a->prog, &a->lj, out), 0);
	assert_int_equal(out->err, 0);
}

/* Reads BUF[0, LEN) into *A (its image orig's): 0, or the first failure with *A released. */
static int load(struct analysis *a, const uint8_t *buf, size_t len)
{
	struct snap_in in = {.p = buf, .len = len};
	int err;

	memset(a, 0, sizeof(*a));
	if ((err = cfg_program__load(&a->prog, &orig.img, &in)))
		return err;
	if ((err = cfg_longjmp__load(&a->lj, a->prog.nfuncs, &in)))
		goto prog;
	if ((err = patch_analysis__load(&a->pa, &a->prog, &in)))
		goto lj;
	if ((err = placement__load(&a->pl, &a->prog, &a->lj, &in)))
		goto pa;
	if (in.pos == in.len)
		return 0;
	err = -EINVAL;
	placement__free(&a->pl);
pa:
	patch_analysis__release(&a->pa);
lj:
	cfg_longjmp__free(&a->lj);
prog:
	cfg_program__free(&a->prog);
	return err;
}

static void release(struct analysis *a)
{
	placement__free(&a->pl);
	patch_analysis__release(&a->pa);
	cfg_longjmp__free(&a->lj);
	cfg_program__free(&a->prog);
}

static void test_round_trip(void **state)
{
	struct snap_out first, second;
	struct analysis back;

	(void)state;
	assert_true(orig.prog.nfuncs > 100);
	assert_true(orig.pl.nsites > 100);
	save(&orig, &first);
	assert_int_equal(load(&back, first.buf, first.len), 0);
	save(&back, &second);
	assert_int_equal(second.len, first.len);
	assert_memory_equal(second.buf, first.buf, first.len);
	/* What was read back answers as the original. */
	assert_int_equal(back.prog.nfuncs, orig.prog.nfuncs);
	assert_ptr_equal(back.prog.img, &orig.img);
	assert_null(back.prog.dec);
	for (size_t i = 0; i < orig.prog.nfuncs; i++) {
		const struct cfg_func *f = &orig.prog.funcs[i], *g = &back.prog.funcs[i];

		assert_string_equal(g->name, f->name);
		assert_int_equal(g->nblocks, f->nblocks);
		assert_int_equal(g->nedges, f->nedges);
		assert_int_equal(g->ninsns, f->ninsns);
		if (f->nblocks)
			assert_memory_equal(g->blocks, f->blocks, f->nblocks * sizeof(*f->blocks));
		if (f->nedges)
			assert_memory_equal(g->edges, f->edges, f->nedges * sizeof(*f->edges));
		if (f->ninsns)
			assert_memory_equal(g->insns, f->insns, f->ninsns * sizeof(*f->insns));
		for (uint32_t c = 0; c < f->ncalls; c++) {
			assert_int_equal(g->calls[c].target, f->calls[c].target);
			if (f->calls[c].name)
				assert_string_equal(g->calls[c].name, f->calls[c].name);
			else
				assert_null(g->calls[c].name);
		}
		assert_int_equal(back.pl.funcs[i].status, orig.pl.funcs[i].status);
		if (orig.pl.funcs[i].reason)
			assert_string_equal(back.pl.funcs[i].reason, orig.pl.funcs[i].reason);
		assert_int_equal(back.pl.funcs[i].npseudo, orig.pl.funcs[i].npseudo);
	}
	assert_int_equal(back.pl.nsites, orig.pl.nsites);
	assert_memory_equal(back.pl.sites, orig.pl.sites, orig.pl.nsites * sizeof(*orig.pl.sites));
	assert_int_equal(back.pl.ncounters, orig.pl.ncounters);
	assert_memory_equal(back.pl.counters, orig.pl.counters,
			    orig.pl.ncounters * sizeof(*orig.pl.counters));
	assert_int_equal(back.pa.entries.n, orig.pa.entries.n);
	assert_int_equal(back.pa.ngaps, orig.pa.ngaps);
	release(&back);
	free(first.buf);
	free(second.buf);
}

/* Cut short at many points (each item's boundary among them), every load fails cleanly. */
static void test_cut_short(void **state)
{
	struct snap_out out;
	struct analysis back;
	size_t step;

	(void)state;
	save(&orig, &out);
	step = out.len / 997 + 1;
	for (size_t len = 0; len < out.len; len += step) {
		uint8_t *copy = malloc(len + 1);

		assert_non_null(copy);
		memcpy(copy, out.buf, len);
		assert_int_not_equal(load(&back, copy, len), 0);
		free(copy);
	}
	for (size_t len = out.len - 64; len < out.len; len += 8)
		assert_int_not_equal(load(&back, out.buf, len), 0);
	free(out.buf);
}

/* A count that disagrees with what follows is refused: the functions' count, one more and
 * one less. */
static void test_bad_counts(void **state)
{
	struct snap_out out, head = { 0 };
	struct cfg_program none = orig.prog;
	struct analysis back;
	size_t at;
	uint64_t v;

	(void)state;
	save(&orig, &out);
	/* The program's stream: its symbols, the functions' count, the statistics, the
	 * functions. Where the count is: from the stream of the same program without
	 * functions. */
	none.nfuncs = 0;
	assert_int_equal(cfg_program__save(&none, &head), 0);
	at = head.len - sizeof(none.stats) - sizeof(v);
	memcpy(&v, out.buf + at, sizeof(v));
	assert_int_equal(v, orig.prog.nfuncs);
	v = orig.prog.nfuncs + 1;
	memcpy(out.buf + at, &v, sizeof(v));
	assert_int_not_equal(load(&back, out.buf, out.len), 0);
	v = orig.prog.nfuncs - 1;
	memcpy(out.buf + at, &v, sizeof(v));
	assert_int_not_equal(load(&back, out.buf, out.len), 0);
	free(head.buf);
	free(out.buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_cut_short),
	    cmocka_unit_test(test_bad_counts),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
