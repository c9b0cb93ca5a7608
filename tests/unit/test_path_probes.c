/*
 * Unit tests of estimators/path_probes.c. Random executions of a CFG are run twice: once
 * through the plan's probe sites, firing each site's actions as the run-time recipe of
 * path_probes.h says (every instruction of a block in order, a branch site's outcome list by
 * the edge taken), and once through Ball-Larus numbering's plain recipe applied to the edge
 * sequence (bl_paths.h; its unit tests check it against the paths' definition). Both must count
 * the same paths, which holds only if every action sits where its edge and nothing else is
 * seen, in the right order, with the right increments. On random CFGs (jcc blocks, switch-like
 * blocks, self loops, loops into the entry block, instructions that cannot be probed) with a
 * fixed seed, and on the real CFGs of this test binary with their real stack heights. A
 * planned function must also have every site at a proven instruction with a known depth.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cfg/decode.h"
#include "cfg/elf_image.h"
#include "cfg/stack_height.h"
#include "estimators/path_probes.h"
#include "support/cfg_fixture.h"

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 0x2545F4914F6CDD1DULL;
}

/* A frame's run-time state (what the BPF side keeps per thread and frame). */
struct frame {
	uint64_t r;
	bool live, marked;
	uint64_t *count;
	uint64_t total;
};

static void run_actions(struct frame *fr, const struct path_action *a, unsigned n)
{
	for (unsigned k = 0; k < n; k++, a++)
		switch (a->op) {
		case PATH_OP_START:
			if (fr->marked) {
				fr->marked = false;
			} else {
				fr->r = (uint64_t)a->a;
				fr->live = true;
			}
			break;
		case PATH_OP_ADD:
			assert_true(fr->live);
			fr->r += (uint64_t)a->a;
			break;
		case PATH_OP_BACK:
			assert_true(fr->live);
			assert_true(fr->r + (uint64_t)a->a < fr->total);
			fr->count[fr->r + (uint64_t)a->a]++;
			fr->r = (uint64_t)a->b;
			fr->marked = a->to_entry;
			break;
		default:
			assert_true(fr->live);
			assert_true(fr->r + (uint64_t)a->a < fr->total);
			fr->count[fr->r + (uint64_t)a->a]++;
			fr->live = false;
			break;
		}
}

/* The site of the plan at ADDR among function FI's, or NULL. */
static const struct path_probe_site *site_at(const struct path_probe_plan *plan, uint32_t fi,
					     uint64_t addr)
{
	const struct path_probe_func *pf = &plan->funcs[fi];

	for (uint32_t k = 0; k < pf->nsites; k++)
		if (plan->sites[pf->first_site + k].addr == addr)
			return &plan->sites[pf->first_site + k];
	return NULL;
}

/* Whether taking edge E out of its block's conditional jump means the jump is taken. */
static bool jump_taken(const struct cfg_edge *e)
{
	return e->kind == EDGE_TAKEN ||
	       (e->kind == EDGE_TAIL_CALL && (e->flags & CFG_EDGE_COND_TAKEN));
}

/* NWALKS random executions of F (function FI of PLAN, planned) of up to STEPS edges each:
 * the counts by the plan's sites must equal those by the plain recipe. */
static void check_walks(const struct cfg_func *f, const struct path_probe_plan *plan, uint32_t fi,
			uint64_t seed, unsigned nwalks, unsigned steps)
{
	const struct bl_paths *bp = &plan->funcs[fi].bp;
	uint64_t x = seed | 1, *plain = calloc(bp->total + 1, sizeof(uint64_t));
	struct frame fr = {.count = calloc(bp->total + 1, sizeof(uint64_t)), .total = bp->total};

	assert_non_null(plain);
	assert_non_null(fr.count);
	for (unsigned w = 0; w < nwalks; w++) {
		uint32_t v = f->entry_block;
		uint64_t r = 0;

		fr.live = fr.marked = false; /* a new frame */
		for (unsigned step = 0; step < steps; step++) {
			const struct cfg_block *b = &f->blocks[v];
			uint32_t e;

			if (!b->nsucc)
				break;
			e = f->succ[b->first_succ + rnd(&x) % b->nsucc];
			for (uint32_t k = 0; k < b->ninsns; k++) {
				const struct path_probe_site *s =
				    site_at(plan, fi, f->insns[b->first_insn + k].addr);

				if (!s)
					continue;
				run_actions(&fr, s->actions, s->ncommon);
				if (s->branch) {
					assert_int_equal(k, b->ninsns - 1);
					if (jump_taken(&f->edges[e]))
						run_actions(&fr, s->actions + s->ncommon,
							    s->ntaken);
					else
						run_actions(&fr,
							    s->actions + s->ncommon + s->ntaken,
							    s->nnot);
				}
			}
			if (bp->back[e]) {
				plain[r + bp->exit_inc[e]]++;
				r = bp->entry_inc[e];
			} else {
				r += bp->inc[e];
				if (f->edges[e].to >= f->nblocks) {
					plain[r]++;
					assert_false(fr.live); /* the exit ended the frame */
					break;
				}
			}
			v = f->edges[e].to;
		}
	}
	for (uint64_t i = 0; i < bp->total; i++)
		assert_int_equal(fr.count[i], plain[i]);
	free(plain);
	free(fr.count);
}

/* Every site of a planned function is one of its instructions, probeable, at its depth. */
static void check_sites(const struct cfg_func *f, const struct path_probe_plan *plan, uint32_t fi,
			const int64_t *height)
{
	const struct path_probe_func *pf = &plan->funcs[fi];

	for (uint32_t k = 0; k < pf->nsites; k++) {
		const struct path_probe_site *s = &plan->sites[pf->first_site + k];
		bool found = false;

		assert_int_equal(s->func, fi);
		assert_true(s->ncommon + s->ntaken + s->nnot >= 1);
		if (k)
			assert_true(s[-1].addr < s->addr);
		for (uint32_t i = 0; i < f->ninsns; i++)
			if (f->insns[i].addr == s->addr) {
				found = true;
				assert_int_not_equal(f->insns[i].probe_class, PROBE_NEVER);
				assert_int_equal(-height[i], (int64_t)s->depth);
				if (s->branch)
					assert_int_equal(f->insns[i].flow, INSN_JCC);
			}
		assert_true(found);
	}
}

/* Plans fixture F (every instruction at depth 0, at most LIMIT paths) alone into *PLAN. */
static void plan_fixture(struct path_probe_plan *plan, const struct cfg_func *f, uint64_t limit)
{
	int64_t *height = calloc(f->ninsns + 1, sizeof(*height));
	size_t cap = 0;

	assert_non_null(height);
	*plan = (struct path_probe_plan){.funcs = calloc(1, sizeof(*plan->funcs)), .nfuncs = 1};
	assert_non_null(plan->funcs);
	assert_int_equal(path_probes__plan_func(plan, &cap, f, 0, height, limit), 0);
	free(height);
}

/* Random CFGs: up to 10 blocks, 1-3 successors (a jcc's two, or a dispatch's three), some
 * instructions that cannot be probed. */
static void test_path_probes__random(void **state)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	unsigned nplanned = 0, nskipped = 0;

	(void)state;
	for (unsigned g = 0; g < 400; g++) {
		struct fx_edge e[40];
		uint32_t nb = 1 + (uint32_t)(rnd(&x) % 10), k = 0;
		struct path_probe_plan plan;
		int64_t height[16] = {0};
		struct cfg_func *f;

		for (uint32_t v = 0; v < nb; v++) {
			uint32_t c = (uint32_t)(rnd(&x) % 10), ns = c < 4 ? 1 : c < 9 ? 2 : 3;

			for (uint32_t j = 0; j < ns; j++) {
				uint32_t t = (uint32_t)(rnd(&x) % (nb + 1)); /* nb: EXIT */
				enum cfg_edge_kind kind = EDGE_SWITCH;

				if (ns == 1)
					kind = t == nb ? EDGE_RETURN : EDGE_JUMP;
				else if (ns == 2)
					kind = j	 ? EDGE_NOT_TAKEN
					       : t == nb ? EDGE_TAIL_CALL
							 : EDGE_TAKEN;
				e[k++] = (struct fx_edge){v, t, kind};
			}
		}
		f = cfg_fixture__func("random", nb, 0, e, k);
		assert_non_null(f);
		for (uint32_t i = 0; i < f->nedges; i++)
			if (f->edges[i].kind == EDGE_TAIL_CALL)
				f->edges[i].flags |= CFG_EDGE_COND_TAKEN;
		for (uint32_t i = 1; i < f->ninsns; i++)
			if (rnd(&x) % 6 == 0)
				f->insns[i].probe_class = PROBE_NEVER;
		plan_fixture(&plan, f, 1u << 20);
		if (plan.funcs[0].skip) {
			nskipped++;
		} else {
			nplanned++;
			check_sites(f, &plan, 0, height);
			check_walks(f, &plan, 0, rnd(&x), 60, 80);
		}
		path_probes__free(&plan);
		cfg_fixture__free(f);
	}
	print_message("%u random CFGs planned, %u skipped (an edge no probe sees)\n", nplanned,
		      nskipped);
	assert_true(nplanned > 100);
}

/* A loop into the entry block: the back edge marks the frame so that the entry's start
 * action continues it; the exit is seen at the return. */
static void test_path_probes__entry_loop(void **state)
{
	/* 0: jcc -> 0 (taken) or 1; 1: ret */
	static const struct fx_edge e[] = {
	    {0, 0, EDGE_TAKEN}, {0, 1, EDGE_NOT_TAKEN}, {1, 2, EDGE_RETURN}};
	struct cfg_func *f = CFG_FIXTURE("entry_loop", 2, 0, e);
	struct path_probe_plan plan;
	const struct path_probe_site *s;

	(void)state;
	assert_non_null(f);
	plan_fixture(&plan, f, 1000);
	assert_null(plan.funcs[0].skip);
	s = site_at(&plan, 0, f->entry);
	assert_non_null(s);
	assert_int_equal(s->actions[0].op, PATH_OP_START);
	assert_true(s->branch);
	assert_int_equal(s->ntaken, 1);
	assert_int_equal(s->actions[s->ncommon].op, PATH_OP_BACK);
	assert_true(s->actions[s->ncommon].to_entry);
	check_walks(f, &plan, 0, 42, 50, 40);
	path_probes__free(&plan);
	cfg_fixture__free(f);
}

/* A function whose exit no probe can see is not planned, and says why. */
static void test_path_probes__unseen_exit(void **state)
{
	/* 0: dispatch to 1, 2 or EXIT (no jcc, three successors): the exit edge is unseen */
	static const struct fx_edge e[] = {
	    {0, 1, EDGE_SWITCH}, {0, 2, EDGE_SWITCH}, {0, 3, EDGE_TAIL_CALL},
	    {1, 3, EDGE_RETURN}, {2, 3, EDGE_RETURN},
	};
	struct cfg_func *f = CFG_FIXTURE("unseen_exit", 3, 0, e);
	struct path_probe_plan plan;

	(void)state;
	assert_non_null(f);
	plan_fixture(&plan, f, 1000);
	assert_non_null(plan.funcs[0].skip);
	assert_int_equal(plan.nsites, 0);
	assert_int_equal(plan.ncounted, 0);
	path_probes__free(&plan);
	cfg_fixture__free(f);
}

/* The functions of this binary, with their stack heights. */
static void test_path_probes__real_cfgs(void **state)
{
	struct elf_image img;
	struct cfg_program prog;
	struct path_probe_plan plan = {0};
	struct decoder d;
	size_t cap = 0, nplanned = 0, nskipped = 0, nsites = 0;

	(void)state;
	assert_int_equal(elf_image__open(&img, "/proc/self/exe"), 0);
	assert_int_equal(cfg_program__build(&prog, &img, NULL), 0);
	assert_int_equal(decoder__open(&d, &img), 0);
	plan.funcs = calloc(prog.nfuncs + 1, sizeof(*plan.funcs));
	plan.nfuncs = prog.nfuncs;
	assert_non_null(plan.funcs);
	for (size_t i = 0; i < prog.nfuncs; i++) {
		const struct cfg_func *f = &prog.funcs[i];
		int64_t *height = malloc((f->ninsns + 1) * sizeof(*height));
		bool label_taken;

		assert_non_null(height);
		assert_int_equal(stack_height__at(f, &d, NULL, 0, height, &label_taken), 0);
		assert_int_equal(path_probes__plan_func(&plan, &cap, f, (uint32_t)i, height, 20000),
				 0);
		if (plan.funcs[i].skip) {
			nskipped++;
		} else {
			nplanned++;
			nsites += plan.funcs[i].nsites;
			check_sites(f, &plan, (uint32_t)i, height);
			check_walks(f, &plan, (uint32_t)i, i + 1, 40, 200);
		}
		free(height);
	}
	print_message("%zu functions planned (%zu sites), %zu skipped\n", nplanned, nsites,
		      nskipped);
	assert_true(nplanned > nskipped);
	path_probes__free(&plan);
	decoder__close(&d);
	cfg_program__free(&prog);
	elf_image__close(&img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_path_probes__entry_loop),
	    cmocka_unit_test(test_path_probes__unseen_exit),
	    cmocka_unit_test(test_path_probes__random),
	    cmocka_unit_test(test_path_probes__real_cfgs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
