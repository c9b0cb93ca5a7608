/*
 * Unit tests of the static profile estimators (Wu and Larus 1994) with hand-computed
 * expectations: the Dempster-Shafer examples of section 3.2, the cyclic probabilities of
 * Figure 1 (8.33 and 578.70), Algorithm 3 on the recursive call graph of the paper's
 * permutation program (Figure 7, Table 11), Wall's matching scores on the paper's Table 12,
 * and the branch heuristics recognised on hand-assembled x86-64 code (the five that apply to
 * the first branch of the paper's atoi, combined to its 0.95).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cfg/dominators.h"
#include "cfg/loops.h"
#include "estimators/branch_heuristics.h"
#include "estimators/dempster_shafer.h"
#include "estimators/global_freq.h"
#include "estimators/local_freq.h"
#include "estimators/matching_score.h"
#include "support/cfg_fixture.h"

#define near(a, b, eps) assert_true(((a) - (b)) < (eps) && ((b) - (a)) < (eps))

/* Section 3.2: 0.5 combined with 0.7 gives 0.7, then with 0.6 gives 0.778. */
static void test_static__dempster_shafer_example(void **state)
{
	double p;

	(void)state;
	p = ds__combine(0.5, 0.7);
	near(p, 0.7, 1e-12);
	p = ds__combine(p, 0.6);
	near(p, 0.42 / 0.54, 1e-12);
	near(p, 0.778, 5e-4);
	/* Associative and commutative. */
	near(ds__combine(ds__combine(0.5, 0.6), 0.7), p, 1e-12);
	/* Evidence below one half lowers the probability. */
	assert_true(ds__combine(0.7, 0.45) < 0.7);
}

/* F's dominator tree and loops (loops.h). */
static void loops_of(struct cfg_func *f, struct cfg_domtree *dom, struct cfg_loops *lp)
{
	assert_int_equal(cfg_dom__compute(dom, f), 0);
	assert_int_equal(cfg_loops__compute(lp, f, dom), 0);
}

/* Loops.h, probabilities (Algorithm 1) and local frequencies (Algorithm 2) of F. */
static void local_freqs(struct cfg_func *f, double *prob, double *bfreq, double *efreq)
{
	struct cfg_domtree dom;
	struct cfg_loops lp;

	loops_of(f, &dom, &lp);
	assert_int_equal(ds__branch_probs(f, &lp, NULL, NULL, prob), 0);
	assert_int_equal(local_freq__compute(f, &lp, prob, bfreq, efreq), 0);
	cfg_loops__free(&lp);
	cfg_dom__free(&dom);
}

/* Figure 1b: head b0 (block 1) branches evenly to b1 and b2 (no heuristic: 0.5 each), each
 * of which goes back to b0 with LBH's 0.88 or leaves: bfreq(b0) = 1 / (1 - 0.44 - 0.44). */
static void test_static__figure1b(void **state)
{
	struct fx_edge edges[] = {
		{ 0, 1, EDGE_FALLTHROUGH }, { 1, 2, EDGE_TAKEN },     { 1, 3, EDGE_NOT_TAKEN },
		{ 2, 1, EDGE_TAKEN },       { 2, 4, EDGE_NOT_TAKEN }, { 3, 1, EDGE_TAKEN },
		{ 3, 4, EDGE_NOT_TAKEN },   { 4, 5, EDGE_RETURN },
	};
	struct cfg_func *f = CFG_FIXTURE("fig1b", 5, 0, edges);
	double prob[8], bfreq[6], efreq[8];

	(void)state;
	assert_non_null(f);
	local_freqs(f, prob, bfreq, efreq);
	near(prob[1], 0.5, 1e-12);
	near(prob[3], 0.88, 1e-12);
	near(prob[4], 0.12, 1e-12);
	near(bfreq[1], 1.0 / 0.12, 1e-9);
	near(bfreq[1], 8.33, 5e-3);
	near(bfreq[2], 0.5 / 0.12, 1e-9);
	near(bfreq[4], 1.0, 1e-9);  /* what enters leaves */
	near(bfreq[5], 1.0, 1e-9);  /* EXIT */
	near(efreq[3], 0.44 / 0.12, 1e-9);
	cfg_fixture__free(f);
}

/* Figure 1c: three loops sharing head b0 (block 1), back-edge probabilities 0.88:
 * bfreq(b0) = 1 / (1 - 0.88 - 0.88 x 0.12 - 0.88 x 0.12 x 0.12) = 578.70. */
static void test_static__figure1c(void **state)
{
	struct fx_edge edges[] = {
		{ 0, 1, EDGE_FALLTHROUGH }, { 1, 2, EDGE_JUMP },      { 2, 1, EDGE_TAKEN },
		{ 2, 3, EDGE_NOT_TAKEN },   { 3, 1, EDGE_TAKEN },     { 3, 4, EDGE_NOT_TAKEN },
		{ 4, 1, EDGE_TAKEN },       { 4, 5, EDGE_NOT_TAKEN }, { 5, 6, EDGE_RETURN },
	};
	struct cfg_func *f = CFG_FIXTURE("fig1c", 6, 0, edges);
	double prob[9], bfreq[7], efreq[9];
	double cp = 0.88 + 0.88 * 0.12 + 0.88 * 0.12 * 0.12;

	(void)state;
	assert_non_null(f);
	local_freqs(f, prob, bfreq, efreq);
	near(bfreq[1], 1.0 / (1.0 - cp), 1e-6);
	near(bfreq[1], 578.70, 5e-3);
	near(bfreq[5], 1.0, 1e-9);
	near(bfreq[6], 1.0, 1e-9);
	cfg_fixture__free(f);
}

/* Caps: a measured loop of a million iterations per entry (back edge 1 - 1e-6) keeps its
 * frequency with LF_LIMITS_MEASURED; an estimate is capped at LF_MAX_FREQ per invocation. */
static void test_static__local_freq_limits(void **state)
{
	struct fx_edge edges[] = {
		{ 0, 1, EDGE_FALLTHROUGH }, { 1, 1, EDGE_TAKEN }, { 1, 2, EDGE_NOT_TAKEN },
		{ 2, 3, EDGE_RETURN },
	};
	struct cfg_func *f = CFG_FIXTURE("bigloop", 3, 0, edges);
	double prob[4] = { 1.0, 1.0 - 1e-6, 1e-6, 1.0 }, bfreq[4], efreq[4];
	struct cfg_domtree dom;
	struct cfg_loops lp;

	(void)state;
	assert_non_null(f);
	loops_of(f, &dom, &lp);
	assert_int_equal(local_freq__compute_limited(f, &lp, prob, bfreq, efreq,
						     LF_LIMITS_MEASURED), 0);
	near(bfreq[1], 1e6, 1e-3);
	near(efreq[1], 1e6 - 1.0, 1e-3);
	near(bfreq[2], 1.0, 1e-9);
	assert_int_equal(local_freq__compute(f, &lp, prob, bfreq, efreq), 0);
	near(bfreq[1], LF_MAX_FREQ, 1e-9);
	cfg_loops__free(&lp);
	cfg_dom__free(&dom);
	cfg_fixture__free(f);
}

/* Nested loops with different heads (Figure 2): the inner loop's cyclic probability is used
 * for the outer one. Outer head 1 -> inner head 2; 2 -> 2 (0.88) | 3; 3 -> 1 (0.88) | 4.
 * bfreq(2) = bfreq(1) / 0.12; bfreq(3) = bfreq(1); bfreq(1) = 1 / 0.12. */
static void test_static__nested_loops(void **state)
{
	struct fx_edge edges[] = {
		{ 0, 1, EDGE_FALLTHROUGH }, { 1, 2, EDGE_FALLTHROUGH }, { 2, 2, EDGE_TAKEN },
		{ 2, 3, EDGE_NOT_TAKEN },   { 3, 1, EDGE_TAKEN },       { 3, 4, EDGE_NOT_TAKEN },
		{ 4, 5, EDGE_RETURN },
	};
	struct cfg_func *f = CFG_FIXTURE("nested", 5, 0, edges);
	double prob[7], bfreq[6], efreq[7];

	(void)state;
	assert_non_null(f);
	local_freqs(f, prob, bfreq, efreq);
	near(bfreq[1], 1 / 0.12, 1e-9);
	near(bfreq[2], 1 / 0.12 / 0.12, 1e-6);
	near(bfreq[3], 1 / 0.12, 1e-9);
	near(bfreq[4], 1.0, 1e-9);
	cfg_fixture__free(f);
}

/* An irreducible cycle (two entries, 1 and 2), every branch 0.5: 0 -> 1 | 2, 1 -> 2 | 3,
 * 2 -> 1 | 3. The flow equations give x1 = 0.5 + 0.5 x2, x2 = 0.5 + 0.5 x1: 1 each, and 1
 * leaves through block 3. The elimination alone loses the retreating edge's flow; the
 * repeated final passes bring it in. */
static void test_static__irreducible(void **state)
{
	struct fx_edge edges[] = {
		{ 0, 1, EDGE_TAKEN }, { 0, 2, EDGE_NOT_TAKEN }, { 1, 2, EDGE_TAKEN },
		{ 1, 3, EDGE_NOT_TAKEN }, { 2, 1, EDGE_TAKEN }, { 2, 3, EDGE_NOT_TAKEN },
		{ 3, 4, EDGE_RETURN },
	};
	struct cfg_func *f = CFG_FIXTURE("irr", 4, 0, edges);
	double prob[7] = { 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 1.0 }, bfreq[5], efreq[7];
	struct cfg_domtree dom;
	struct cfg_loops lp;

	(void)state;
	assert_non_null(f);
	loops_of(f, &dom, &lp);
	assert_false(lp.reducible);
	assert_int_equal(local_freq__compute(f, &lp, prob, bfreq, efreq), 0);
	near(bfreq[1], 1.0, 1e-4);
	near(bfreq[2], 1.0, 1e-4);
	near(bfreq[3], 1.0, 1e-4);
	cfg_loops__free(&lp);
	cfg_dom__free(&dom);
	cfg_fixture__free(f);
}

/* Algorithm 3 on the permutation program (Figure 7): permute is a recursion head,
 * permute_next_pos calls it 1.52 times per invocation and is called 0.5 times per permute:
 * the cyclic probability is 0.76, permute runs 1 / 0.24 = 4.17 times (Table 11: 4.2),
 * permute_next_pos and report_one 2.08 (2.1), in_prefix 8.2 x 2.08 = 17.1. */
static void test_static__call_graph_recursion(void **state)
{
	enum { MAIN, PERMUTE, PNP, IN_PREFIX, REPORT, ATOI, N };
	struct gf_call calls[] = {
		{ MAIN, ATOI, 1.0 },      { MAIN, PERMUTE, 1.0 },     { PERMUTE, PNP, 0.5 },
		{ PERMUTE, REPORT, 0.5 }, { PNP, PERMUTE, 1.52 },     { PNP, IN_PREFIX, 8.2 },
	};
	double cfreq[N], gfreq[6];

	(void)state;
	assert_int_equal(global_freq__calls(N, MAIN, calls, 6, cfreq, gfreq), 0);
	near(cfreq[MAIN], 1.0, 1e-12);
	near(cfreq[ATOI], 1.0, 1e-12);
	near(cfreq[PERMUTE], 1 / 0.24, 1e-9);
	near(cfreq[PNP], 0.5 / 0.24, 1e-9);
	near(cfreq[REPORT], 0.5 / 0.24, 1e-9);
	near(cfreq[IN_PREFIX], 8.2 * 0.5 / 0.24, 1e-9);
	near(cfreq[IN_PREFIX], 17.1, 0.05);
	/* The recursive call's global frequency: every invocation but the first. */
	near(gfreq[4], 1 / 0.24 - 1, 1e-9);
	/* Bad input. */
	assert_int_equal(global_freq__calls(N, N, calls, 6, cfreq, gfreq), -22);
	/* Two heads in one strongly connected component: B <-> C, and C calls itself. Only B, the
	 * component's first node, is amplified: cp(B) = 0.5 x 0.4 = 0.2, B runs 1.25 times, C
	 * 0.625 (its own self-call is in the component's cycle, not multiplied again). */
	{
		struct gf_call scc[] = { { 0, 1, 1.0 }, { 1, 2, 0.5 }, { 2, 1, 0.4 }, { 2, 2, 0.5 } };
		double c3[3], g3[4];

		assert_int_equal(global_freq__calls(3, 0, scc, 4, c3, g3), 0);
		near(c3[1], 1.25, 1e-12);
		near(c3[2], 0.625, 1e-12);
	}
	/* Self-recursion with a runaway probability is capped. */
	{
		struct gf_call self[] = { { 0, 1, 1.0 }, { 1, 1, 2.0 } };
		double c2[2], g2[2];

		assert_int_equal(global_freq__calls(2, 0, self, 2, c2, g2), 0);
		near(c2[1], 1 / GF_EPSILON, 1e-6);
	}
}

/* Table 12 of the paper: static and dynamic global edge frequencies of the permutation
 * program, 25 edges (the two lists show 24 each: atoi's 3->3 ran 0 times, in_prefix's 0->5
 * is estimated 0.41 in Table 11). Top 10%: 1.0; top 20%: 4 of 5 edges, weighted 0.89
 * (dynamic counts: 48042 / 54227); top 30%: 7 of 8, 0.92. */
static void test_static__wall_scores_table12(void **state)
{
	double stat[] = { 100.0, 88.0, 16.7, 16.7, 15.0, 15.0, 13.9, 12.0, 6.15, 4.87, 3.20, 3.20,
			  2.10,  2.10, 2.05, 2.05, 2.05, 2.05, 2.05, 2.05, .95,  .84,  .84,  .84,
			  0.41 };
	double dyn[] = { 17580, 15630, 7416, 7416, 3600, 6185, 5466, 1950, 0,    5466, 1956, 1956,
			 1237,  720,   1237, 720,  720,  1237, 720,  1237, 1,    1,    1,    1,
			 6 };
	struct match_score s;

	(void)state;
	assert_int_equal(matching_score__compute(stat, dyn, 25, 10, &s), 0);
	assert_int_equal(s.m, 3);
	near(s.u, 1.0, 1e-12);
	near(s.w, 1.0, 1e-12);
	assert_int_equal(matching_score__compute(stat, dyn, 25, 20, &s), 0);
	assert_int_equal(s.m, 5);
	assert_int_equal(s.k, 4);
	near(s.u, 0.8, 1e-12);
	near(s.w, 48042.0 / 54227.0, 1e-12);
	near(s.w, 0.89, 5e-3);
	assert_int_equal(matching_score__compute(stat, dyn, 25, 30, &s), 0);
	assert_int_equal(s.m, 8);
	assert_int_equal(s.k, 7);
	near(s.w, 0.92, 5e-3);
	assert_int_equal(matching_score__compute(stat, dyn, 25, 100, &s), 0);
	near(s.u, 1.0, 1e-12);
	near(s.w, 1.0, 1e-12);
	/* A perfect static profile scores 1 everywhere. */
	assert_int_equal(matching_score__compute(dyn, dyn, 25, 20, &s), 0);
	near(s.w, 1.0, 1e-12);
	/* Equal dynamic counts are interchangeable: the dynamic top 2 of {1, 1, 1, 10} is 10 and
	 * any one of the 1s, so a static order that ranks item 2 second matches fully (breaking
	 * the tie by index would have counted only item 0 and given 10/11). */
	{
		double st[] = { 0.1, 0.2, 0.3, 10 }, dy[] = { 1, 1, 1, 10 };

		assert_int_equal(matching_score__compute(st, dy, 4, 50, &s), 0);
		assert_int_equal(s.m, 2);
		assert_int_equal(s.k, 2);
		near(s.u, 1.0, 1e-12);
		near(s.w, 1.0, 1e-12);
		/* Only as many tied items as there are slots: two 1s for one slot. */
		double st2[] = { 0.3, 0.2, 0.1, 0.05 }, dy2[] = { 1, 1, 5, 0 };

		assert_int_equal(matching_score__compute(st2, dy2, 4, 50, &s), 0);
		assert_int_equal(s.k, 1);
		near(s.w, 1.0 / 6.0, 1e-12);
	}
	assert_int_equal(matching_score__compute(stat, dyn, 0, 20, &s), -22);
	assert_int_equal(matching_score__compute(stat, dyn, 25, 0, &s), -22);
}

/* --- heuristics on hand-assembled code -------------------------------------------------- */

/* Code of a fixture: CFG_FIXTURE_BLOCK_SIZE bytes per block. */
struct code_buf {
	const uint8_t *bytes;
	size_t len;
};

static const uint8_t *fx_code(const void *ctx, uint64_t vaddr, size_t *avail)
{
	const struct code_buf *c = ctx;

	if (vaddr < CFG_FIXTURE_BASE || vaddr >= CFG_FIXTURE_BASE + c->len)
		return NULL;
	*avail = c->len - (vaddr - CFG_FIXTURE_BASE);
	return c->bytes + (vaddr - CFG_FIXTURE_BASE);
}

/* Places CODE (N bytes) in block B of BUF: right-aligned (nops before) when RIGHT, so a jcc
 * ends the block, else followed by nops. */
static void put(uint8_t *buf, unsigned b, const uint8_t *code, size_t n, int right)
{
	uint8_t *blk = buf + b * CFG_FIXTURE_BLOCK_SIZE;

	memset(blk, 0x90, CFG_FIXTURE_BLOCK_SIZE);
	memcpy(blk + (right ? CFG_FIXTURE_BLOCK_SIZE - n : 0), code, n);
}

static void heuristics(struct cfg_func *f, const struct code_buf *cb, struct bh_func *bf)
{
	struct cfg_domtree dom, pdom;
	struct cfg_loops lp;
	struct bh_decoder d;

	assert_int_equal(bh_decoder__open(&d, fx_code, cb), 0);
	assert_int_equal(cfg_dom__compute(&dom, f), 0);
	assert_int_equal(cfg_postdom__compute(&pdom, f), 0);
	assert_int_equal(cfg_loops__compute(&lp, f, &dom), 0);
	assert_int_equal(branch_heuristics__func(bf, &d, f, &lp, &pdom), 0);
	cfg_loops__free(&lp);
	cfg_dom__free(&dom);
	cfg_dom__free(&pdom);
	bh_decoder__close(&d);
}

#define BIT(k) (1u << (k))

/* The first branch of the paper's atoi: a null check of a pointer (test rax,rax; je) whose
 * null side calls and returns, whose other side dereferences the pointer, stores and goes on
 * to another branch:
 *   0: test rax,rax; je 1 (taken) | 2 (not taken)
 *   1: call; -> 4 (call_return)      4: ret
 *   2: mov rdx,[rax+8]; mov [rdi],rdx; jmp 3
 *   3: cmp edi,esi; jl 5 | 6         5: ret      6: ret
 * PH, GH, CH, RH predict block 2, SH block 1; combined (Table 1 rates): 0.948 for block 2,
 * the paper's 0.95. */
static void test_static__heuristics_atoi_b0(void **state)
{
	static const uint8_t b0[] = { 0x48, 0x85, 0xc0, 0x74, 0x10 };
	static const uint8_t b1[] = { 0xe8, 0x00, 0x00, 0x00, 0x00 };
	static const uint8_t b2[] = { 0x48, 0x8b, 0x50, 0x08, 0x48, 0x89, 0x17, 0xeb, 0x00 };
	static const uint8_t ret[] = { 0xc3 };
	static const uint8_t jl[] = { 0x39, 0xf7, 0x7c, 0x10 };
	struct fx_edge edges[] = {
		{ 0, 1, EDGE_TAKEN },  { 0, 2, EDGE_NOT_TAKEN }, { 1, 4, EDGE_CALL_RETURN },
		{ 2, 3, EDGE_JUMP },   { 3, 5, EDGE_TAKEN },     { 3, 6, EDGE_NOT_TAKEN },
		{ 4, 7, EDGE_RETURN }, { 5, 7, EDGE_RETURN },    { 6, 7, EDGE_RETURN },
	};
	struct cfg_func *f = CFG_FIXTURE("atoi", 7, 0, edges);
	uint8_t buf[7 * CFG_FIXTURE_BLOCK_SIZE];
	struct code_buf cb = { buf, sizeof(buf) };
	struct bh_func bf;
	struct cfg_domtree dom;
	struct cfg_loops lp;
	double prob[9];

	(void)state;
	assert_non_null(f);
	put(buf, 0, b0, sizeof(b0), 1);
	put(buf, 1, b1, sizeof(b1), 0);
	put(buf, 2, b2, sizeof(b2), 0);
	put(buf, 3, jl, sizeof(jl), 1);
	put(buf, 4, ret, 1, 0);
	put(buf, 5, ret, 1, 0);
	put(buf, 6, ret, 1, 0);
	heuristics(f, &cb, &bf);
	assert_int_equal(bf.nbranches, 2);
	assert_int_equal(bf.branches[0].block, 0);
	assert_int_equal(bf.branches[0].applies,
			 BIT(BH_PH) | BIT(BH_GH) | BIT(BH_CH) | BIT(BH_SH) | BIT(BH_RH));
	/* edge[1] (not taken, block 2) predicted by PH, GH, CH, RH; SH predicts edge[0]. */
	assert_int_equal(bf.branches[0].predicts,
			 BIT(BH_PH) | BIT(BH_GH) | BIT(BH_CH) | BIT(BH_RH));
	assert_int_equal(cfg_dom__compute(&dom, f), 0);
	assert_int_equal(cfg_loops__compute(&lp, f, &dom), 0);
	assert_int_equal(ds__branch_probs(f, &lp, &bf, NULL, prob), 0);
	near(prob[1], 0.948, 1e-3);
	near(prob[0] + prob[1], 1.0, 1e-12);
	cfg_loops__free(&lp);
	cfg_dom__free(&dom);
	bh_func__free(&bf);
	cfg_fixture__free(f);
}

/* The opcode heuristic: test eax,eax; js -> "< 0" fails (not taken); cmp eax,5; je ->
 * "== constant" fails; cmp eax,0; jg -> taken. Both successors just return. */
static void test_static__heuristics_opcode(void **state)
{
	static const uint8_t js[] = { 0x85, 0xc0, 0x78, 0x10 };
	static const uint8_t je5[] = { 0x83, 0xf8, 0x05, 0x74, 0x10 };
	static const uint8_t jg0[] = { 0x83, 0xf8, 0x00, 0x7f, 0x10 };
	static const uint8_t ret[] = { 0xc3 };
	const uint8_t *codes[] = { js, je5, jg0 };
	size_t sizes[] = { sizeof(js), sizeof(je5), sizeof(jg0) };
	uint16_t predicts[] = { BIT(BH_OH), BIT(BH_OH), 0 };

	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		struct fx_edge edges[] = {
			{ 0, 1, EDGE_TAKEN }, { 0, 2, EDGE_NOT_TAKEN },
			{ 1, 3, EDGE_RETURN }, { 2, 3, EDGE_RETURN },
		};
		struct cfg_func *f = CFG_FIXTURE("oh", 3, 0, edges);
		uint8_t buf[3 * CFG_FIXTURE_BLOCK_SIZE];
		struct code_buf cb = { buf, sizeof(buf) };
		struct bh_func bf;

		assert_non_null(f);
		put(buf, 0, codes[i], sizes[i], 1);
		put(buf, 1, ret, 1, 0);
		put(buf, 2, ret, 1, 0);
		heuristics(f, &cb, &bf);
		assert_int_equal(bf.nbranches, 1);
		assert_int_equal(bf.branches[0].applies, BIT(BH_OH));
		assert_int_equal(bf.branches[0].predicts, predicts[i]);
		bh_func__free(&bf);
		cfg_fixture__free(f);
	}
}

/* Loop heuristics on a rotated loop: 0: guard -> 1 (header, LHH) | 3; 1: body, branch back to
 * 1 (LBH) | 2; 2 -> 3; 3: ret. Then a loop with an exit from the middle (LEH):
 * 0 -> 1; 1: branch -> 2 (stays) | 3 (exits); 2 -> 1 (back); 3: ret. */
static void test_static__heuristics_loops(void **state)
{
	static const uint8_t jcc[] = { 0x39, 0xf7, 0x7c, 0x10 }; /* cmp edi,esi; jl */
	static const uint8_t nop[] = { 0x90 };
	static const uint8_t ret[] = { 0xc3 };
	struct fx_edge e1[] = {
		{ 0, 1, EDGE_NOT_TAKEN }, { 0, 3, EDGE_TAKEN }, { 1, 1, EDGE_TAKEN },
		{ 1, 2, EDGE_NOT_TAKEN }, { 2, 3, EDGE_FALLTHROUGH }, { 3, 4, EDGE_RETURN },
	};
	struct fx_edge e2[] = {
		{ 0, 1, EDGE_FALLTHROUGH }, { 1, 2, EDGE_NOT_TAKEN }, { 1, 3, EDGE_TAKEN },
		{ 2, 1, EDGE_JUMP },        { 3, 4, EDGE_RETURN },
	};
	uint8_t buf[4 * CFG_FIXTURE_BLOCK_SIZE];
	struct code_buf cb = { buf, sizeof(buf) };
	struct cfg_func *f;
	struct bh_func bf;

	(void)state;
	put(buf, 0, jcc, sizeof(jcc), 1);
	put(buf, 1, jcc, sizeof(jcc), 1);
	put(buf, 2, nop, 1, 0);
	put(buf, 3, ret, 1, 0);
	f = CFG_FIXTURE("rotated", 4, 0, e1);
	assert_non_null(f);
	heuristics(f, &cb, &bf);
	assert_int_equal(bf.nbranches, 2);
	/* Guard: block 1 is a loop header not post-dominating 0: LHH predicts edge[1]
	 * (not taken); block 3 returns but post-dominates 0: no RH. */
	assert_true(bf.branches[0].applies & BIT(BH_LHH));
	assert_true(bf.branches[0].predicts & BIT(BH_LHH));
	assert_false(bf.branches[0].applies & BIT(BH_RH));
	/* Latch: LBH alone, predicting the back edge (edge[0], taken). */
	assert_int_equal(bf.branches[1].applies, BIT(BH_LBH));
	assert_int_equal(bf.branches[1].predicts, 0);
	bh_func__free(&bf);
	cfg_fixture__free(f);

	put(buf, 2, nop, 1, 0);
	f = CFG_FIXTURE("midexit", 4, 0, e2);
	assert_non_null(f);
	heuristics(f, &cb, &bf);
	assert_int_equal(bf.nbranches, 1);
	assert_true(bf.branches[0].applies & BIT(BH_LEH));
	/* edge[0] (taken) exits to 3: LEH predicts edge[1]. */
	assert_true(bf.branches[0].predicts & BIT(BH_LEH));
	bh_func__free(&bf);
	cfg_fixture__free(f);
}

/* Algorithm 1's "b calls exit()": a successor that inevitably calls a no-return function gets
 * DS_NORETURN_PROB, whatever the heuristics say. And a register read after a call is not a
 * use of the compared value (the callee may write every caller-saved register): no GH.
 *   0: cmp rdx,rax; jae 1 | 2      1: call -> 3 (call_return)    3: mov r8,rax; ret
 *   2: call (no-return: NORETURN to EXIT) */
static void test_static__noreturn_and_call_clobber(void **state)
{
	static const uint8_t b0[] = { 0x48, 0x39, 0xc2, 0x73, 0x10 };
	static const uint8_t call[] = { 0xe8, 0x00, 0x00, 0x00, 0x00 };
	static const uint8_t b3[] = { 0x49, 0x89, 0xc0, 0xc3 };
	struct fx_edge edges[] = {
		{ 0, 1, EDGE_TAKEN },  { 0, 2, EDGE_NOT_TAKEN }, { 1, 3, EDGE_CALL_RETURN },
		{ 2, 4, EDGE_NORETURN }, { 3, 4, EDGE_RETURN },
	};
	struct cfg_func *f = CFG_FIXTURE("nr", 4, 0, edges);
	uint8_t buf[4 * CFG_FIXTURE_BLOCK_SIZE];
	struct code_buf cb = { buf, sizeof(buf) };
	struct bh_func bf;
	struct cfg_domtree dom;
	struct cfg_loops lp;
	double prob[5];

	(void)state;
	assert_non_null(f);
	put(buf, 0, b0, sizeof(b0), 1);
	put(buf, 1, call, sizeof(call), 0);
	put(buf, 2, call, sizeof(call), 0);
	put(buf, 3, b3, sizeof(b3), 0);
	heuristics(f, &cb, &bf);
	assert_int_equal(bf.nbranches, 1);
	assert_int_equal(bf.branches[0].noreturn, 2); /* edge[1]'s side */
	assert_false(bf.branches[0].applies & BIT(BH_GH));
	/* Block 1's region returns, block 2's does not: RH predicts block 2. */
	assert_true(bf.branches[0].applies & BIT(BH_RH));
	assert_int_equal(cfg_dom__compute(&dom, f), 0);
	assert_int_equal(cfg_loops__compute(&lp, f, &dom), 0);
	assert_int_equal(ds__branch_probs(f, &lp, &bf, NULL, prob), 0);
	near(prob[1], DS_NORETURN_PROB, 1e-12);
	near(prob[0], 1 - DS_NORETURN_PROB, 1e-12);
	cfg_loops__free(&lp);
	cfg_dom__free(&dom);
	bh_func__free(&bf);
	cfg_fixture__free(f);
}

/* A shared epilogue: 0: test eax,eax; je 2 | 1; 1: call -> 2; 2: ret. Block 2 returns but
 * post-dominates 0, so it does not count as a returning successor; block 1 returns through
 * the path with no further branch after it (its call, then 2): RH predicts block 2, and so
 * does CH. */
static void test_static__return_chain(void **state)
{
	static const uint8_t b0[] = { 0x85, 0xc0, 0x74, 0x10 };
	static const uint8_t call[] = { 0xe8, 0x00, 0x00, 0x00, 0x00 };
	static const uint8_t ret[] = { 0xc3 };
	struct fx_edge edges[] = {
		{ 0, 2, EDGE_TAKEN }, { 0, 1, EDGE_NOT_TAKEN }, { 1, 2, EDGE_CALL_RETURN },
		{ 2, 3, EDGE_RETURN },
	};
	struct cfg_func *f = CFG_FIXTURE("epi", 3, 0, edges);
	uint8_t buf[3 * CFG_FIXTURE_BLOCK_SIZE];
	struct code_buf cb = { buf, sizeof(buf) };
	struct bh_func bf;

	(void)state;
	assert_non_null(f);
	put(buf, 0, b0, sizeof(b0), 1);
	put(buf, 1, call, sizeof(call), 0);
	put(buf, 2, ret, 1, 0);
	heuristics(f, &cb, &bf);
	assert_int_equal(bf.nbranches, 1);
	assert_true(bf.branches[0].applies & BIT(BH_RH));
	assert_false(bf.branches[0].predicts & BIT(BH_RH)); /* edge[0]: block 2 */
	assert_true(bf.branches[0].applies & BIT(BH_CH));
	assert_false(bf.branches[0].predicts & BIT(BH_CH));
	bh_func__free(&bf);
	cfg_fixture__free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_static__dempster_shafer_example),
		cmocka_unit_test(test_static__figure1b),
		cmocka_unit_test(test_static__figure1c),
		cmocka_unit_test(test_static__local_freq_limits),
		cmocka_unit_test(test_static__nested_loops),
		cmocka_unit_test(test_static__irreducible),
		cmocka_unit_test(test_static__call_graph_recursion),
		cmocka_unit_test(test_static__wall_scores_table12),
		cmocka_unit_test(test_static__heuristics_atoi_b0),
		cmocka_unit_test(test_static__heuristics_opcode),
		cmocka_unit_test(test_static__heuristics_loops),
		cmocka_unit_test(test_static__noreturn_and_call_clobber),
		cmocka_unit_test(test_static__return_chain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
