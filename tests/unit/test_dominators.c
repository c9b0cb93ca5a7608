/*
 * Unit tests of cfg/dominators.c: dominator and post-dominator trees of hand-built CFGs whose
 * expected trees are derived by hand in the comments, plus a cross-check against the
 * definition (A dominates B iff B is unreachable from the root once A is removed) on
 * pseudo-random graphs, and a 10^5-block chain for the absence of recursion.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "cfg/dominators.h"
#include "support/cfg_fixture.h"

#define NO CFG_NO_VERTEX

static void check_idoms(const struct cfg_domtree *dt, const uint32_t *expected, uint32_t n)
{
	uint32_t v;

	assert_int_equal(dt->n, n);
	for (v = 0; v < n; v++) {
		if (dt->idom[v] != expected[v])
			print_error("vertex %u: idom %u, expected %u\n", v, dt->idom[v],
				    expected[v]);
		assert_int_equal(dt->idom[v], expected[v]);
	}
}

/* Every vertex with an idom is dominated by it and by the root; unreached vertices by
 * nothing. */
static void check_tree_consistent(const struct cfg_domtree *dt)
{
	uint32_t v, reached = 0;

	for (v = 0; v < dt->n; v++) {
		if (dt->idom[v] == NO) {
			assert_false(cfg_dom__dominates(dt, v, v));
			assert_false(cfg_dom__dominates(dt, dt->root, v));
			continue;
		}
		reached++;
		assert_true(cfg_dom__dominates(dt, v, v));
		assert_true(cfg_dom__dominates(dt, dt->idom[v], v));
		assert_true(cfg_dom__dominates(dt, dt->root, v));
		if (v != dt->root)
			assert_false(cfg_dom__dominates(dt, v, dt->idom[v]));
	}
	assert_int_equal(dt->nrpo, reached);
	assert_int_equal(dt->rpo[0], dt->root);
}

/*
 * The irreducible example of Cooper, Harvey and Kennedy (their nodes 6..1 in post-order
 * become blocks 0..5: 6->0, 5->1, 4->2, 1->3, 2->4, 3->5), plus 3 -> EXIT:
 *
 *   e0 0->1  e1 0->2  e2 1->3  e3 2->4  e4 2->5  e5 3->4  e6 4->3  e7 4->5  e8 5->4
 *   e9 3->EXIT
 *
 * Dominators: 1 and 2 have the single predecessor 0. 3 is reached by 0-1-3 and 0-2-4-3,
 * 4 by 0-2-4 and 0-1-3-4, 5 by 0-2-5 and 0-1-3-4-5: no common vertex but 0, so idom = 0
 * for all of 1..5 (the paper's result: every node's idom is the root). EXIT's only
 * predecessor is 3: idom(EXIT) = 3.
 *
 * Post-dominators (root EXIT): only 3 leaves, so ipdom(3) = EXIT. From 4 every path leaves
 * through 3 (4->3, or 4->5->4->...->3): ipdom(4) = 3. 5's only successor is 4: ipdom(5) = 4.
 * 1 -> 3: ipdom(1) = 3. 2 -> 4 or 2 -> 5 -> 4: ipdom(2) = 4. 0 -> 1 -> 3 or 0 -> 2 -> 4 ->
 * ... -> 3: ipdom(0) = 3.
 */
static const struct fx_edge chk_edges[] = {
	{ 0, 1, EDGE_TAKEN }, { 0, 2, EDGE_NOT_TAKEN }, { 1, 3, EDGE_JUMP },
	{ 2, 4, EDGE_TAKEN }, { 2, 5, EDGE_NOT_TAKEN }, { 3, 4, EDGE_TAKEN },
	{ 4, 3, EDGE_TAKEN }, { 4, 5, EDGE_NOT_TAKEN }, { 5, 4, EDGE_JUMP },
	{ 3, 6, EDGE_RETURN },
};

static void test_dominators__chk_paper_example(void **state)
{
	static const uint32_t dom[7] = { 0, 0, 0, 0, 0, 0, 3 };
	static const uint32_t pdom[7] = { 3, 3, 4, 6, 3, 4, 6 };
	struct cfg_func *f = CFG_FIXTURE("chk", 6, 0, chk_edges);
	struct cfg_domtree dt;

	assert_non_null(f);
	assert_int_equal(cfg_dom__compute(&dt, f), 0);
	assert_int_equal(dt.root, 0);
	assert_false(dt.post);
	check_idoms(&dt, dom, 7);
	check_tree_consistent(&dt);
	assert_false(cfg_dom__dominates(&dt, 3, 4));
	assert_false(cfg_dom__dominates(&dt, 4, 3));
	assert_true(cfg_dom__dominates(&dt, 3, 6));
	cfg_dom__free(&dt);

	assert_int_equal(cfg_postdom__compute(&dt, f), 0);
	assert_int_equal(dt.root, 6);
	assert_true(dt.post);
	check_idoms(&dt, pdom, 7);
	check_tree_consistent(&dt);
	assert_true(cfg_dom__dominates(&dt, 3, 0));
	assert_true(cfg_dom__dominates(&dt, 4, 2));
	assert_false(cfg_dom__dominates(&dt, 4, 1));
	cfg_dom__free(&dt);
	cfg_fixture__free(f);
}

/*
 * Diamond: e0 0->1, e1 0->2, e2 1->3, e3 2->3, e4 3->EXIT.
 * Dominators: 1, 2 and 3 (joined from both arms) all have idom 0; EXIT has idom 3.
 * Post-dominators: ipdom(3) = EXIT; 1 and 2 both lead only to 3; 0 reaches 3 through either
 * arm, so ipdom(0) = 3.
 */
static void test_dominators__diamond(void **state)
{
	static const struct fx_edge edges[] = {
		{ 0, 1, EDGE_TAKEN }, { 0, 2, EDGE_NOT_TAKEN }, { 1, 3, EDGE_JUMP },
		{ 2, 3, EDGE_FALLTHROUGH }, { 3, 4, EDGE_RETURN },
	};
	static const uint32_t dom[5] = { 0, 0, 0, 0, 3 };
	static const uint32_t pdom[5] = { 3, 3, 3, 4, 4 };
	struct cfg_func *f = CFG_FIXTURE("diamond", 4, 0, edges);
	struct cfg_domtree dt;

	assert_non_null(f);
	assert_int_equal(cfg_dom__compute(&dt, f), 0);
	check_idoms(&dt, dom, 5);
	check_tree_consistent(&dt);
	assert_int_equal(dt.nrpo, 5);
	assert_false(cfg_dom__dominates(&dt, 1, 3));
	assert_false(cfg_dom__dominates(&dt, 2, 3));
	assert_false(cfg_dom__dominates(&dt, 1, 2));
	assert_true(cfg_dom__dominates(&dt, 3, 4));
	assert_false(cfg_dom__dominates(&dt, 4, 0));
	assert_false(cfg_dom__dominates(&dt, 0, 99)); /* out of range */
	cfg_dom__free(&dt);

	assert_int_equal(cfg_postdom__compute(&dt, f), 0);
	check_idoms(&dt, pdom, 5);
	check_tree_consistent(&dt);
	assert_true(cfg_dom__dominates(&dt, 3, 0));
	assert_false(cfg_dom__dominates(&dt, 1, 0));
	cfg_dom__free(&dt);
	cfg_fixture__free(f);
}

/*
 * The graph of Lengauer and Tarjan's paper, R=0 A=1 B=2 C=3 D=4 E=5 F=6 G=7 H=8 I=9 J=10
 * K=11 L=12, with K -> EXIT added:
 *   R->A R->B R->C A->D B->A B->D B->E C->F C->G D->L E->H F->I G->I G->J H->E H->K I->K
 *   J->I K->I K->R L->H
 * A: preds R, B(<-R only) -> R. D: via R-A-D and R-B-D -> R. L: only D -> D. H: via
 * R-B-E-H and R-A-D-L-H -> R. E: via R-B-E and R-A-D-L-H-E -> R. I: via R-C-F-I and
 * R-B-E-H-K-I -> R. K: via H and I -> R. F, G: only C -> C. J: only G -> G.
 * EXIT: only K -> K.
 */
static void test_dominators__lengauer_tarjan_example(void **state)
{
	enum { R, A, B, C, D, E, F, G, H, I, J, K, L, X };
	static const struct fx_edge edges[] = {
		{ R, A, EDGE_SWITCH }, { R, B, EDGE_SWITCH }, { R, C, EDGE_SWITCH },
		{ A, D, EDGE_JUMP },   { B, A, EDGE_SWITCH }, { B, D, EDGE_SWITCH },
		{ B, E, EDGE_SWITCH }, { C, F, EDGE_TAKEN },  { C, G, EDGE_NOT_TAKEN },
		{ D, L, EDGE_JUMP },   { E, H, EDGE_JUMP },   { F, I, EDGE_JUMP },
		{ G, I, EDGE_TAKEN },  { G, J, EDGE_NOT_TAKEN }, { H, E, EDGE_TAKEN },
		{ H, K, EDGE_NOT_TAKEN }, { I, K, EDGE_JUMP }, { J, I, EDGE_JUMP },
		{ K, I, EDGE_SWITCH }, { K, R, EDGE_SWITCH }, { K, X, EDGE_SWITCH },
		{ L, H, EDGE_JUMP },
	};
	static const uint32_t dom[X + 1] = {
		[R] = R, [A] = R, [B] = R, [C] = R, [D] = R, [E] = R, [F] = C,
		[G] = C, [H] = R, [I] = R, [J] = G, [K] = R, [L] = D, [X] = K,
	};
	struct cfg_func *f = CFG_FIXTURE("lt", X, R, edges);
	struct cfg_domtree dt;

	assert_non_null(f);
	assert_int_equal(cfg_dom__compute(&dt, f), 0);
	check_idoms(&dt, dom, X + 1);
	check_tree_consistent(&dt);
	assert_true(cfg_dom__dominates(&dt, C, J));
	assert_false(cfg_dom__dominates(&dt, G, I));
	cfg_dom__free(&dt);
	cfg_fixture__free(f);
}

/*
 * Unreachable block: e0 0->1, e1 1->EXIT, e2 2->1 (nothing reaches 2).
 * Dominators: idom(1) = 0 (2 is ignored as a predecessor), idom(EXIT) = 1, idom(2) = none.
 * Post-dominators: 2 does reach EXIT: ipdom(2) = 1, ipdom(0) = 1, ipdom(1) = EXIT.
 */
static void test_dominators__unreachable_block(void **state)
{
	static const struct fx_edge edges[] = {
		{ 0, 1, EDGE_FALLTHROUGH }, { 1, 3, EDGE_RETURN }, { 2, 1, EDGE_JUMP },
	};
	static const uint32_t dom[4] = { 0, 0, NO, 1 };
	static const uint32_t pdom[4] = { 1, 3, 1, 3 };
	struct cfg_func *f = CFG_FIXTURE("unreach", 3, 0, edges);
	struct cfg_domtree dt;

	assert_non_null(f);
	assert_int_equal(cfg_dom__compute(&dt, f), 0);
	check_idoms(&dt, dom, 4);
	check_tree_consistent(&dt);
	assert_int_equal(dt.nrpo, 3);
	assert_false(cfg_dom__dominates(&dt, 0, 2));
	assert_false(cfg_dom__dominates(&dt, 2, 1));
	cfg_dom__free(&dt);

	assert_int_equal(cfg_postdom__compute(&dt, f), 0);
	check_idoms(&dt, pdom, 4);
	check_tree_consistent(&dt);
	assert_int_equal(dt.nrpo, 4);
	cfg_dom__free(&dt);
	cfg_fixture__free(f);
}

/*
 * A block in an infinite loop: e0 0->1, e1 0->2, e2 1->1 (self-loop), e3 2->EXIT.
 * Dominators: idom(1) = idom(2) = 0 (the self-loop adds nothing), idom(EXIT) = 2.
 * Post-dominators: 1 never reaches EXIT, so it has no post-dominator; ipdom(2) = EXIT; 0's
 * only way out is through 2: ipdom(0) = 2.
 */
static void test_dominators__infinite_loop_self_loop(void **state)
{
	static const struct fx_edge edges[] = {
		{ 0, 1, EDGE_TAKEN }, { 0, 2, EDGE_NOT_TAKEN }, { 1, 1, EDGE_JUMP },
		{ 2, 3, EDGE_RETURN },
	};
	static const uint32_t dom[4] = { 0, 0, 0, 2 };
	static const uint32_t pdom[4] = { 2, NO, 3, 3 };
	struct cfg_func *f = CFG_FIXTURE("inf", 3, 0, edges);
	struct cfg_domtree dt;

	assert_non_null(f);
	assert_int_equal(cfg_dom__compute(&dt, f), 0);
	check_idoms(&dt, dom, 4);
	check_tree_consistent(&dt);
	cfg_dom__free(&dt);

	assert_int_equal(cfg_postdom__compute(&dt, f), 0);
	check_idoms(&dt, pdom, 4);
	check_tree_consistent(&dt);
	assert_int_equal(dt.nrpo, 3);
	assert_false(cfg_dom__dominates(&dt, 3, 1));
	cfg_dom__free(&dt);
	cfg_fixture__free(f);
}

/*
 * Multigraph: e0 0->1 taken, e1 0->1 not taken (a jcc to the next block), e2/e3 1->2 and
 * e4 1->3 switch cases, e5 2->3, e6 3->EXIT tail call, e7 3->EXIT return.
 * Dominators: 1's predecessors are 0 twice: idom 0. 2: only 1 -> 1. 3: from 1 and 2 ->
 * intersect = 1. EXIT: only 3 (twice) -> 3.
 * Post-dominators: ipdom(3) = EXIT; 2 -> 3 -> 3; 1 -> 2 -> 3 or 1 -> 3: 3; 0 -> 1 only: 1.
 */
static void test_dominators__multigraph(void **state)
{
	static const struct fx_edge edges[] = {
		{ 0, 1, EDGE_TAKEN },  { 0, 1, EDGE_NOT_TAKEN }, { 1, 2, EDGE_SWITCH },
		{ 1, 2, EDGE_SWITCH }, { 1, 3, EDGE_SWITCH },    { 2, 3, EDGE_FALLTHROUGH },
		{ 3, 4, EDGE_TAIL_CALL }, { 3, 4, EDGE_RETURN },
	};
	static const uint32_t dom[5] = { 0, 0, 1, 1, 3 };
	static const uint32_t pdom[5] = { 1, 3, 3, 4, 4 };
	struct cfg_func *f = CFG_FIXTURE("multi", 4, 0, edges);
	struct cfg_domtree dt;

	assert_non_null(f);
	assert_int_equal(cfg_dom__compute(&dt, f), 0);
	check_idoms(&dt, dom, 5);
	check_tree_consistent(&dt);
	cfg_dom__free(&dt);

	assert_int_equal(cfg_postdom__compute(&dt, f), 0);
	check_idoms(&dt, pdom, 5);
	check_tree_consistent(&dt);
	cfg_dom__free(&dt);
	cfg_fixture__free(f);
}

/*
 * The entry is not block 0 and has a predecessor (a loop back to the entry):
 * e0 2->0, e1 0->1, e2 1->2, e3 1->EXIT; entry block 2.
 * Dominators: 2 is the root; 0 only from 2; 1 only from 0; EXIT only from 1.
 * Post-dominators: ipdom(1) = EXIT, ipdom(0) = 1, ipdom(2) = 0.
 */
static void test_dominators__entry_not_first(void **state)
{
	static const struct fx_edge edges[] = {
		{ 2, 0, EDGE_FALLTHROUGH }, { 0, 1, EDGE_FALLTHROUGH },
		{ 1, 2, EDGE_TAKEN },       { 1, 3, EDGE_NORETURN },
	};
	static const uint32_t dom[4] = { 2, 0, 2, 1 };
	static const uint32_t pdom[4] = { 1, 3, 0, 3 };
	struct cfg_func *f = CFG_FIXTURE("entry2", 3, 2, edges);
	struct cfg_domtree dt;

	assert_non_null(f);
	assert_int_equal(cfg_dom__compute(&dt, f), 0);
	assert_int_equal(dt.root, 2);
	check_idoms(&dt, dom, 4);
	check_tree_consistent(&dt);
	cfg_dom__free(&dt);
	assert_int_equal(cfg_postdom__compute(&dt, f), 0);
	check_idoms(&dt, pdom, 4);
	check_tree_consistent(&dt);
	cfg_dom__free(&dt);
	cfg_fixture__free(f);
}

/* A function with no edge to EXIT at all (e.g. an endless server loop): e0 0->1, e1 1->0.
 * Post-dominators: only EXIT is in the tree. */
static void test_dominators__no_exit_edge(void **state)
{
	static const struct fx_edge edges[] = { { 0, 1, EDGE_FALLTHROUGH }, { 1, 0, EDGE_JUMP } };
	static const uint32_t dom[3] = { 0, 0, NO };
	static const uint32_t pdom[3] = { NO, NO, 2 };
	struct cfg_func *f = CFG_FIXTURE("noexit", 2, 0, edges);
	struct cfg_domtree dt;

	assert_non_null(f);
	assert_int_equal(cfg_dom__compute(&dt, f), 0);
	check_idoms(&dt, dom, 3);
	check_tree_consistent(&dt);
	cfg_dom__free(&dt);
	assert_int_equal(cfg_postdom__compute(&dt, f), 0);
	check_idoms(&dt, pdom, 3);
	check_tree_consistent(&dt);
	assert_int_equal(dt.nrpo, 1);
	cfg_dom__free(&dt);
	cfg_fixture__free(f);
}

/* A function without blocks: only EXIT exists. The dominator tree (rooted at a block) is
 * empty; the post-dominator tree is EXIT alone. */
static void test_dominators__no_blocks(void **state)
{
	struct cfg_func *f = cfg_fixture__func("empty", 0, 0, NULL, 0);
	struct cfg_domtree dt;

	assert_non_null(f);
	assert_int_equal(cfg_dom__compute(&dt, f), 0);
	assert_int_equal(dt.n, 1);
	assert_int_equal(dt.nrpo, 0);
	assert_int_equal(dt.idom[0], NO);
	assert_false(cfg_dom__dominates(&dt, 0, 0));
	cfg_dom__free(&dt);
	assert_int_equal(cfg_postdom__compute(&dt, f), 0);
	assert_int_equal(dt.nrpo, 1);
	assert_int_equal(dt.idom[0], 0);
	assert_true(cfg_dom__dominates(&dt, 0, 0));
	cfg_dom__free(&dt);
	cfg_fixture__free(f);
}

/* 100000 blocks in a chain 0 -> 1 -> ... -> EXIT, with a back edge from the last block to
 * block 0: idom(i) = i - 1 and ipdom(i) = i + 1. Deep enough to overflow any recursive
 * traversal on a default stack. */
static void test_dominators__long_chain(void **state)
{
	const uint32_t n = 100000;
	struct fx_edge *edges = malloc(sizeof(*edges) * (n + 1));
	struct cfg_func *f;
	struct cfg_domtree dt;
	uint32_t i;

	assert_non_null(edges);
	for (i = 0; i < n; i++)
		edges[i] = (struct fx_edge){ i, i + 1, EDGE_FALLTHROUGH };
	edges[n] = (struct fx_edge){ n - 1, 0, EDGE_TAKEN };
	f = cfg_fixture__func("chain", n, 0, edges, n + 1);
	free(edges);
	assert_non_null(f);
	assert_int_equal(cfg_dom__compute(&dt, f), 0);
	assert_int_equal(dt.nrpo, n + 1);
	assert_int_equal(dt.idom[0], 0);
	for (i = 1; i <= n; i++)
		assert_int_equal(dt.idom[i], i - 1);
	assert_true(cfg_dom__dominates(&dt, 0, n));
	assert_true(cfg_dom__dominates(&dt, n / 2, n - 1));
	assert_false(cfg_dom__dominates(&dt, n - 1, n / 2));
	cfg_dom__free(&dt);
	assert_int_equal(cfg_postdom__compute(&dt, f), 0);
	for (i = 0; i < n; i++)
		assert_int_equal(dt.idom[i], i + 1);
	assert_true(cfg_dom__dominates(&dt, n, 0));
	cfg_dom__free(&dt);
	cfg_fixture__free(f);
}

/* --- cross-check against the definition on pseudo-random graphs ------------------------- */

static uint64_t rng_state;

static uint32_t rnd(uint32_t bound)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rng_state >> 33) % bound;
}

/* Marks in SEEN the vertices reachable from ROOT without entering REMOVED (forward edges, or
 * reversed ones for POST). */
static void reach(const struct cfg_func *f, bool post, uint32_t root, uint32_t removed,
		  bool *seen, uint32_t *stack)
{
	uint32_t n = f->nblocks + 1, sp = 0, v, e;

	for (v = 0; v < n; v++)
		seen[v] = false;
	if (root == removed)
		return;
	seen[root] = true;
	stack[sp++] = root;
	while (sp) {
		v = stack[--sp];
		for (e = 0; e < f->nedges; e++) {
			uint32_t from = post ? f->edges[e].to : f->edges[e].from;
			uint32_t to = post ? f->edges[e].from : f->edges[e].to;

			if (from == v && to != removed && !seen[to]) {
				seen[to] = true;
				stack[sp++] = to;
			}
		}
	}
}

static void cross_check(const struct cfg_func *f, bool post)
{
	uint32_t n = f->nblocks + 1, a, b;
	uint32_t root = post ? f->nblocks : f->entry_block;
	bool *reached = malloc(n), *seen = malloc(n);
	bool *dom = malloc((size_t)n * n); /* dom[a * n + b]: a dominates b */
	uint32_t *stack = malloc(sizeof(*stack) * n);
	struct cfg_domtree dt;

	assert_true(reached && seen && dom && stack);
	reach(f, post, root, CFG_NO_VERTEX, reached, stack);
	for (a = 0; a < n; a++) {
		reach(f, post, root, a, seen, stack);
		for (b = 0; b < n; b++)
			dom[a * n + b] = reached[a] && reached[b] && !seen[b];
	}
	assert_int_equal(post ? cfg_postdom__compute(&dt, f) : cfg_dom__compute(&dt, f), 0);
	for (b = 0; b < n; b++) {
		for (a = 0; a < n; a++)
			assert_int_equal(cfg_dom__dominates(&dt, a, b), dom[a * n + b]);
		if (!reached[b]) {
			assert_int_equal(dt.idom[b], NO);
			continue;
		}
		if (b == root) {
			assert_int_equal(dt.idom[b], root);
			continue;
		}
		/* idom(b) strictly dominates b, and every strict dominator of b dominates it. */
		assert_true(dt.idom[b] != b && dom[dt.idom[b] * n + b]);
		for (a = 0; a < n; a++)
			if (a != b && dom[a * n + b])
				assert_true(dom[a * n + dt.idom[b]]);
	}
	cfg_dom__free(&dt);
	free(reached);
	free(seen);
	free(dom);
	free(stack);
}

static void test_dominators__random_graphs_match_definition(void **state)
{
	struct fx_edge edges[160];
	int round;

	rng_state = 12345;
	for (round = 0; round < 300; round++) {
		uint32_t nb = 1 + rnd(30), ne = 0, b, k;
		struct cfg_func *f;

		for (b = 0; b < nb; b++) {
			uint32_t nsucc = rnd(4);

			for (k = 0; k < nsucc && ne < 160; k++) {
				/* One edge in eight goes to EXIT. */
				uint32_t to = rnd(8) == 0 ? nb : rnd(nb);

				edges[ne++] = (struct fx_edge){ b, to, EDGE_SWITCH };
			}
		}
		f = cfg_fixture__func("rnd", nb, rnd(nb), edges, ne);
		assert_non_null(f);
		cross_check(f, false);
		cross_check(f, true);
		cfg_fixture__free(f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dominators__chk_paper_example),
		cmocka_unit_test(test_dominators__diamond),
		cmocka_unit_test(test_dominators__lengauer_tarjan_example),
		cmocka_unit_test(test_dominators__unreachable_block),
		cmocka_unit_test(test_dominators__infinite_loop_self_loop),
		cmocka_unit_test(test_dominators__multigraph),
		cmocka_unit_test(test_dominators__entry_not_first),
		cmocka_unit_test(test_dominators__no_exit_edge),
		cmocka_unit_test(test_dominators__no_blocks),
		cmocka_unit_test(test_dominators__long_chain),
		cmocka_unit_test(test_dominators__random_graphs_match_definition),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
