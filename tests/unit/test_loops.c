/*
 * Unit tests of cfg/loops.c on hand-built CFGs: every loop's header, body, back edges, exits,
 * parent and depth, the innermost loop of every block, the back-edge flags and reducibility
 * are derived by hand in the comments.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cfg/error.h"
#include "cfg/loops.h"
#include "support/cfg_fixture.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Expected loop, with -1-terminated lists. */
struct exp_loop {
	uint32_t header;
	int32_t parent;
	uint32_t depth;
	int32_t blocks[16];
	int32_t back[8];
	int32_t exits[8];
};

static void check_list(const char *what, uint32_t loop, const uint32_t *got, uint32_t n,
		       const int32_t *exp)
{
	uint32_t i, m = 0;

	while (exp[m] >= 0)
		m++;
	if (n != m)
		print_error("loop %u: %u %s, expected %u\n", loop, n, what, m);
	assert_int_equal(n, m);
	for (i = 0; i < n; i++) {
		if (got[i] != (uint32_t)exp[i])
			print_error("loop %u: %s[%u] = %u, expected %d\n", loop, what, i, got[i],
				    exp[i]);
		assert_int_equal(got[i], exp[i]);
	}
}

/* Computes dominators and loops of F and checks them against the expectations. */
static void check_loops(const struct cfg_func *f, const struct exp_loop *exp, uint32_t nexp,
			const int32_t *innermost, const int32_t *back_edges, bool reducible,
			const int32_t *irreducible)
{
	struct cfg_domtree dom;
	struct cfg_loops lp;
	uint32_t i, b;

	assert_int_equal(cfg_dom__compute(&dom, f), 0);
	assert_int_equal(cfg_loops__compute(&lp, f, &dom), 0);
	assert_int_equal(lp.nloops, nexp);
	for (i = 0; i < nexp; i++) {
		const struct cfg_loop *l = &lp.loops[i];

		assert_int_equal(l->header, exp[i].header);
		assert_int_equal(l->parent, exp[i].parent);
		assert_int_equal(l->depth, exp[i].depth);
		check_list("blocks", i, l->blocks, l->nblocks, exp[i].blocks);
		check_list("back edges", i, l->back_edges, l->nback, exp[i].back);
		check_list("exits", i, l->exits, l->nexits, exp[i].exits);
		/* contains() agrees with the body, and parents come first. */
		for (b = 0; b < f->nblocks; b++) {
			bool in = false;
			uint32_t k;

			for (k = 0; k < l->nblocks; k++)
				in |= l->blocks[k] == b;
			assert_int_equal(cfg_loops__contains(&lp, i, b), in);
		}
		assert_true(l->parent < (int32_t)i);
	}
	assert_false(cfg_loops__contains(&lp, nexp, 0));
	for (b = 0; b < f->nblocks; b++) {
		if (lp.innermost[b] != innermost[b])
			print_error("block %u: innermost %d, expected %d\n", b, lp.innermost[b],
				    innermost[b]);
		assert_int_equal(lp.innermost[b], innermost[b]);
	}
	{
		uint32_t e, k = 0;

		for (e = 0; e < f->nedges; e++) {
			bool exp_back = back_edges[k] == (int32_t)e;

			if (exp_back)
				k++;
			assert_int_equal(lp.is_back_edge[e], exp_back);
		}
		assert_int_equal(back_edges[k], -1);
	}
	assert_int_equal(lp.reducible, reducible);
	check_list("irreducible edges", 0, lp.irreducible_edges, lp.nirreducible, irreducible);
	cfg_loops__free(&lp);
	cfg_dom__free(&dom);
}

static const int32_t none[] = { -1 };

/*
 * Straight line and a diamond have no loops: e0 0->1, e1 0->2, e2 1->3, e3 2->3,
 * e4 3->EXIT. No edge goes to a dominator; the DFS meets no retreating edge.
 */
static void test_loops__acyclic(void **state)
{
	static const struct fx_edge edges[] = {
		{ 0, 1, EDGE_TAKEN }, { 0, 2, EDGE_NOT_TAKEN }, { 1, 3, EDGE_JUMP },
		{ 2, 3, EDGE_FALLTHROUGH }, { 3, 4, EDGE_RETURN },
	};
	static const int32_t innermost[] = { -1, -1, -1, -1 };
	struct cfg_func *f = CFG_FIXTURE("diamond", 4, 0, edges);

	assert_non_null(f);
	check_loops(f, NULL, 0, innermost, none, true, none);
	cfg_fixture__free(f);
}

/*
 * A loop inside a loop:
 *   e0 0->1  e1 1->2  e2 2->3  e3 2->4  e4 3->2  e5 4->1  e6 4->5  e7 5->EXIT
 * Dominator tree: 0 -> 1 -> 2 -> {3, 4}, 4 -> 5 -> EXIT.
 * Back edges: e4 (2 dom 3) and e5 (1 dom 4).
 * Loop of 1 (latch 4): walk back 4 <- 2 <- {1 stop, 3 <- 2}: body {1,2,3,4}; leaving it:
 * e6 4->5. Loop of 2 (latch 3): 3 <- 2: body {2,3}; leaving: e3 2->4.
 * Order by size: loop 0 = header 1 (depth 1), loop 1 = header 2 (parent 0, depth 2).
 * Innermost: 0 none, 1 -> 0, 2 -> 1, 3 -> 1, 4 -> 0, 5 none.
 */
static void test_loops__nested(void **state)
{
	static const struct fx_edge edges[] = {
		{ 0, 1, EDGE_FALLTHROUGH }, { 1, 2, EDGE_FALLTHROUGH }, { 2, 3, EDGE_NOT_TAKEN },
		{ 2, 4, EDGE_TAKEN },       { 3, 2, EDGE_JUMP },        { 4, 1, EDGE_TAKEN },
		{ 4, 5, EDGE_NOT_TAKEN },   { 5, 6, EDGE_RETURN },
	};
	static const struct exp_loop exp[] = {
		{ 1, -1, 1, { 1, 2, 3, 4, -1 }, { 5, -1 }, { 6, -1 } },
		{ 2, 0, 2, { 2, 3, -1 }, { 4, -1 }, { 3, -1 } },
	};
	static const int32_t innermost[] = { -1, 0, 1, 1, 0, -1 };
	static const int32_t back[] = { 4, 5, -1 };
	struct cfg_func *f = CFG_FIXTURE("nested", 6, 0, edges);

	assert_non_null(f);
	check_loops(f, exp, ARRAY_SIZE(exp), innermost, back, true, none);
	cfg_fixture__free(f);
}

/*
 * Two back edges into one header (a `continue` and the loop's own latch) make one loop, and
 * one exit goes straight to EXIT (a conditional tail call inside the loop):
 *   e0 0->1  e1 1->2  e2 1->3  e3 2->1  e4 2->EXIT  e5 3->1  e6 3->4  e7 4->EXIT
 * Dominators: idom(1) = 0, idom(2) = idom(3) = 1, idom(4) = 3, idom(EXIT) = 1.
 * Back edges: e3 and e5 (1 dominates 2 and 3). Body: latches 2 and 3, whose only
 * predecessor is the header: {1,2,3}. Exits: e4 (to EXIT) and e6 (3->4).
 */
static void test_loops__shared_header(void **state)
{
	static const struct fx_edge edges[] = {
		{ 0, 1, EDGE_FALLTHROUGH }, { 1, 2, EDGE_NOT_TAKEN }, { 1, 3, EDGE_TAKEN },
		{ 2, 1, EDGE_NOT_TAKEN },   { 2, 5, EDGE_TAIL_CALL }, { 3, 1, EDGE_TAKEN },
		{ 3, 4, EDGE_NOT_TAKEN },   { 4, 5, EDGE_RETURN },
	};
	static const struct exp_loop exp[] = {
		{ 1, -1, 1, { 1, 2, 3, -1 }, { 3, 5, -1 }, { 4, 6, -1 } },
	};
	static const int32_t innermost[] = { -1, 0, 0, 0, -1 };
	static const int32_t back[] = { 3, 5, -1 };
	struct cfg_func *f = CFG_FIXTURE("shared", 5, 0, edges);

	assert_non_null(f);
	check_loops(f, exp, ARRAY_SIZE(exp), innermost, back, true, none);
	cfg_fixture__free(f);
}

/*
 * Three levels plus a sibling: A (header 1) contains B (header 2) and D (header 6); B
 * contains C, the self-loop of block 3.
 *   e0 0->1   e1 1->2   e2 2->3   e3 3->3   e4 3->4   e5 4->2   e6 4->5
 *   e7 5->6   e8 6->7   e9 6->8   e10 7->6  e11 8->1  e12 8->9  e13 9->EXIT
 * Dominator tree is the chain 0-1-2-3-4-5-6, 6 -> {7, 8}, 8 -> 9 -> EXIT.
 * Back edges: e3 (3 dom 3), e5 (2 dom 4), e10 (6 dom 7), e11 (1 dom 8).
 * A, latch 8: 8 <- 6 <- {5, 7}, 7 <- 6, 5 <- 4 <- 3 <- {2, 3}, 2 <- {1 stop, 4}:
 *    body {1..8}, exits e12 (8->9).
 * B, latch 4: 4 <- 3 <- {2 stop, 3}: body {2,3,4}, exits e6 (4->5).
 * C, latch 3 = header: body {3}, exits e4 (3->4).
 * D, latch 7: 7 <- 6 stop: body {6,7}, exits e9 (6->8).
 * Order by size (8, 3, 2, 1): A = 0, B = 1, D = 2, C = 3. Parents: B and D in A (their
 * headers 2 and 6 are in A's body), C in B (smallest body holding block 3): depths 1, 2, 2,
 * 3. Innermost: 1 -> A, 2 -> B, 3 -> C, 4 -> B, 5 -> A, 6, 7 -> D, 8 -> A; 0, 9 none.
 */
static void test_loops__deep_nesting_and_siblings(void **state)
{
	static const struct fx_edge edges[] = {
		{ 0, 1, EDGE_FALLTHROUGH }, { 1, 2, EDGE_FALLTHROUGH }, { 2, 3, EDGE_FALLTHROUGH },
		{ 3, 3, EDGE_TAKEN },       { 3, 4, EDGE_NOT_TAKEN },   { 4, 2, EDGE_TAKEN },
		{ 4, 5, EDGE_NOT_TAKEN },   { 5, 6, EDGE_FALLTHROUGH }, { 6, 7, EDGE_NOT_TAKEN },
		{ 6, 8, EDGE_TAKEN },       { 7, 6, EDGE_JUMP },        { 8, 1, EDGE_TAKEN },
		{ 8, 9, EDGE_NOT_TAKEN },   { 9, 10, EDGE_RETURN },
	};
	static const struct exp_loop exp[] = {
		{ 1, -1, 1, { 1, 2, 3, 4, 5, 6, 7, 8, -1 }, { 11, -1 }, { 12, -1 } },
		{ 2, 0, 2, { 2, 3, 4, -1 }, { 5, -1 }, { 6, -1 } },
		{ 6, 0, 2, { 6, 7, -1 }, { 10, -1 }, { 9, -1 } },
		{ 3, 1, 3, { 3, -1 }, { 3, -1 }, { 4, -1 } },
	};
	static const int32_t innermost[] = { -1, 0, 1, 3, 1, 0, 2, 2, 0, -1 };
	static const int32_t back[] = { 3, 5, 10, 11, -1 };
	struct cfg_func *f = CFG_FIXTURE("deep", 10, 0, edges);

	assert_non_null(f);
	check_loops(f, exp, ARRAY_SIZE(exp), innermost, back, true, none);
	cfg_fixture__free(f);
}

/*
 * A self-loop that never exits: e0 0->1, e1 0->2, e2 1->1, e3 2->EXIT.
 * Back edge e2 (1 dom 1); body {1}; no exit edge at all.
 */
static void test_loops__infinite_self_loop(void **state)
{
	static const struct fx_edge edges[] = {
		{ 0, 1, EDGE_TAKEN }, { 0, 2, EDGE_NOT_TAKEN }, { 1, 1, EDGE_JUMP },
		{ 2, 3, EDGE_RETURN },
	};
	static const struct exp_loop exp[] = {
		{ 1, -1, 1, { 1, -1 }, { 2, -1 }, { -1 } },
	};
	static const int32_t innermost[] = { -1, 0, -1 };
	static const int32_t back[] = { 2, -1 };
	struct cfg_func *f = CFG_FIXTURE("inf", 3, 0, edges);

	assert_non_null(f);
	check_loops(f, exp, ARRAY_SIZE(exp), innermost, back, true, none);
	cfg_fixture__free(f);
}

/*
 * The classic irreducible two-entry loop: 1 and 2 form a cycle entered at both.
 *   e0 0->1  e1 0->2  e2 1->2  e3 2->1  e4 2->3  e5 3->EXIT
 * idom(1) = idom(2) = 0, so neither e2 nor e3 goes to a dominator: no loop, no back edge.
 * DFS from 0 (successors in edge order): 0 -e0-> 1 -e2-> 2, then e3 2->1 meets 1 on the
 * stack: retreating, and 1 does not dominate 2: irreducible = {e3}.
 */
static void test_loops__irreducible_two_entries(void **state)
{
	static const struct fx_edge edges[] = {
		{ 0, 1, EDGE_TAKEN }, { 0, 2, EDGE_NOT_TAKEN }, { 1, 2, EDGE_JUMP },
		{ 2, 1, EDGE_TAKEN }, { 2, 3, EDGE_NOT_TAKEN }, { 3, 4, EDGE_RETURN },
	};
	static const int32_t innermost[] = { -1, -1, -1, -1 };
	static const int32_t irr[] = { 3, -1 };
	struct cfg_func *f = CFG_FIXTURE("irr", 4, 0, edges);

	assert_non_null(f);
	check_loops(f, NULL, 0, innermost, none, false, irr);
	cfg_fixture__free(f);
}

/*
 * Cooper, Harvey and Kennedy's irreducible example (see test_dominators.c; every idom is 0):
 *   e0 0->1  e1 0->2  e2 1->3  e3 2->4  e4 2->5  e5 3->4  e6 4->3  e7 4->5  e8 5->4
 *   e9 3->EXIT
 * No back edge. DFS: 0 -e0-> 1 -e2-> 3 -e5-> 4; e6 4->3 retreats to 3 (not dominating 4);
 * 4 -e7-> 5; e8 5->4 retreats to 4 (not dominating 5); back in 0, e1 -> 2 whose edges reach
 * finished blocks. Irreducible = {e6, e8}.
 * A natural loop is added after the irreducible region: e10 3->6, e11 6->7, e12 7->6,
 * e13 7->EXIT. Dominators: idom(6) = 3, idom(7) = 6; back edge e12, body {6,7}, exit e13.
 * The DFS goes on from 3 through e10 to 6 and 7; e12 retreats to 6, which dominates 7.
 */
static void test_loops__irreducible_chk_example(void **state)
{
	static const struct fx_edge edges[] = {
		{ 0, 1, EDGE_TAKEN },  { 0, 2, EDGE_NOT_TAKEN }, { 1, 3, EDGE_JUMP },
		{ 2, 4, EDGE_TAKEN },  { 2, 5, EDGE_NOT_TAKEN }, { 3, 4, EDGE_SWITCH },
		{ 4, 3, EDGE_TAKEN },  { 4, 5, EDGE_NOT_TAKEN }, { 5, 4, EDGE_JUMP },
		{ 3, 8, EDGE_SWITCH }, { 3, 6, EDGE_SWITCH },    { 6, 7, EDGE_FALLTHROUGH },
		{ 7, 6, EDGE_TAKEN },  { 7, 8, EDGE_TAIL_CALL },
	};
	static const struct exp_loop exp[] = {
		{ 6, -1, 1, { 6, 7, -1 }, { 12, -1 }, { 13, -1 } },
	};
	static const int32_t innermost[] = { -1, -1, -1, -1, -1, -1, 0, 0 };
	static const int32_t back[] = { 12, -1 };
	static const int32_t irr[] = { 6, 8, -1 };
	struct cfg_func *f = CFG_FIXTURE("chk", 8, 0, edges);

	assert_non_null(f);
	check_loops(f, exp, ARRAY_SIZE(exp), innermost, back, false, irr);
	cfg_fixture__free(f);
}

/*
 * Parallel edges: two switch cases jump back to the header, one leaves, and block 3 has two
 * edges to EXIT.
 *   e0 0->1  e1 1->2  e2 1->3  e3 2->1  e4 2->1  e5 2->3  e6 3->EXIT  e7 3->EXIT
 * idom(1) = 0, idom(2) = idom(3) = 1. Back edges e3 and e4, one loop at 1 with body {1,2}
 * and exits e2 (1->3) and e5 (2->3). Reducible: the DFS's retreating edges are e3 and e4,
 * both to a dominator.
 */
static void test_loops__multigraph(void **state)
{
	static const struct fx_edge edges[] = {
		{ 0, 1, EDGE_FALLTHROUGH }, { 1, 2, EDGE_NOT_TAKEN }, { 1, 3, EDGE_TAKEN },
		{ 2, 1, EDGE_SWITCH },      { 2, 1, EDGE_SWITCH },    { 2, 3, EDGE_SWITCH },
		{ 3, 4, EDGE_RETURN },      { 3, 4, EDGE_TAIL_CALL },
	};
	static const struct exp_loop exp[] = {
		{ 1, -1, 1, { 1, 2, -1 }, { 3, 4, -1 }, { 2, 5, -1 } },
	};
	static const int32_t innermost[] = { -1, 0, 0, -1 };
	static const int32_t back[] = { 3, 4, -1 };
	struct cfg_func *f = CFG_FIXTURE("multi", 4, 0, edges);

	assert_non_null(f);
	check_loops(f, exp, ARRAY_SIZE(exp), innermost, back, true, none);
	cfg_fixture__free(f);
}

/*
 * Unreachable code feeding a loop and looping itself:
 *   e0 0->1  e1 1->2  e2 2->1  e3 2->EXIT  e4 3->2  e5 3->3
 * Block 3 is not reached: its self-loop e5 is no back edge (3 has no dominator), and it is
 * not part of loop 1's body although it is a predecessor of the latch 2.
 * Loop at 1: back edge e2, body {1,2}, exit e3.
 */
static void test_loops__unreachable_block(void **state)
{
	static const struct fx_edge edges[] = {
		{ 0, 1, EDGE_FALLTHROUGH }, { 1, 2, EDGE_FALLTHROUGH }, { 2, 1, EDGE_TAKEN },
		{ 2, 4, EDGE_RETURN },      { 3, 2, EDGE_JUMP },        { 3, 3, EDGE_TAKEN },
	};
	static const struct exp_loop exp[] = {
		{ 1, -1, 1, { 1, 2, -1 }, { 2, -1 }, { 3, -1 } },
	};
	static const int32_t innermost[] = { -1, 0, 0, -1 };
	static const int32_t back[] = { 2, -1 };
	struct cfg_func *f = CFG_FIXTURE("unreach", 4, 0, edges);

	assert_non_null(f);
	check_loops(f, exp, ARRAY_SIZE(exp), innermost, back, true, none);
	cfg_fixture__free(f);
}

/* A post-dominator tree is not a valid input. */
static void test_loops__rejects_postdom_tree(void **state)
{
	static const struct fx_edge edges[] = { { 0, 1, EDGE_RETURN } };
	struct cfg_func *f = CFG_FIXTURE("one", 1, 0, edges);
	struct cfg_domtree pdom;
	struct cfg_loops lp;

	assert_non_null(f);
	assert_int_equal(cfg_postdom__compute(&pdom, f), 0);
	assert_int_equal(cfg_loops__compute(&lp, f, &pdom), -EINVAL);
	assert_non_null(strstr(cfg_strerror(), "'one'"));
	cfg_loops__free(&lp);
	cfg_dom__free(&pdom);
	cfg_fixture__free(f);
}

/* A function without blocks has no loops and is reducible. */
static void test_loops__no_blocks(void **state)
{
	struct cfg_func *f = cfg_fixture__func("empty", 0, 0, NULL, 0);
	struct cfg_domtree dom;
	struct cfg_loops lp;

	assert_non_null(f);
	assert_int_equal(cfg_dom__compute(&dom, f), 0);
	assert_int_equal(cfg_loops__compute(&lp, f, &dom), 0);
	assert_int_equal(lp.nloops, 0);
	assert_true(lp.reducible);
	assert_int_equal(lp.nirreducible, 0);
	cfg_loops__free(&lp);
	cfg_dom__free(&dom);
	cfg_fixture__free(f);
}

/*
 * 1000 loops nested inside each other, n = 2000 blocks:
 *   block i -> i + 1 for i < n - 1, block n - 1 -> EXIT, and for every i < n / 2 an edge
 *   from block n - 1 - i back to block i.
 * Dominators: the chain, idom(i) = i - 1, so every such edge is a back edge.
 * Loop with header i (i < n/2) has latch n-1-i and body {i .. n-1-i}; its parent is the
 * loop of i - 1, depth i + 1. Checks the traversals are not recursive and the order.
 */
static void test_loops__deep_nest_scales(void **state)
{
	const uint32_t n = 2000, half = n / 2;
	struct fx_edge *edges = malloc(sizeof(*edges) * (n + half));
	struct cfg_func *f;
	struct cfg_domtree dom;
	struct cfg_loops lp;
	uint32_t i, ne = 0;

	assert_non_null(edges);
	for (i = 0; i + 1 < n; i++)
		edges[ne++] = (struct fx_edge){ i, i + 1, EDGE_NOT_TAKEN };
	edges[ne++] = (struct fx_edge){ n - 1, n, EDGE_RETURN };
	for (i = 0; i < half; i++)
		edges[ne++] = (struct fx_edge){ n - 1 - i, i, EDGE_TAKEN };
	f = cfg_fixture__func("deepnest", n, 0, edges, ne);
	free(edges);
	assert_non_null(f);
	assert_int_equal(cfg_dom__compute(&dom, f), 0);
	assert_int_equal(cfg_loops__compute(&lp, f, &dom), 0);
	assert_int_equal(lp.nloops, half);
	assert_true(lp.reducible);
	for (i = 0; i < half; i++) {
		assert_int_equal(lp.loops[i].header, i);
		assert_int_equal(lp.loops[i].nblocks, n - 2 * i);
		assert_int_equal(lp.loops[i].blocks[0], i);
		assert_int_equal(lp.loops[i].blocks[n - 2 * i - 1], n - 1 - i);
		assert_int_equal(lp.loops[i].parent, (int32_t)i - 1);
		assert_int_equal(lp.loops[i].depth, i + 1);
		assert_int_equal(lp.innermost[i], i);
		assert_int_equal(lp.innermost[n - 1 - i], i);
	}
	cfg_loops__free(&lp);
	cfg_dom__free(&dom);
	cfg_fixture__free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loops__acyclic),
		cmocka_unit_test(test_loops__nested),
		cmocka_unit_test(test_loops__shared_header),
		cmocka_unit_test(test_loops__deep_nesting_and_siblings),
		cmocka_unit_test(test_loops__infinite_self_loop),
		cmocka_unit_test(test_loops__irreducible_two_entries),
		cmocka_unit_test(test_loops__irreducible_chk_example),
		cmocka_unit_test(test_loops__multigraph),
		cmocka_unit_test(test_loops__unreachable_block),
		cmocka_unit_test(test_loops__rejects_postdom_tree),
		cmocka_unit_test(test_loops__no_blocks),
		cmocka_unit_test(test_loops__deep_nest_scales),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
