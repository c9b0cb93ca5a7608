/*
 * Unit tests of cfg/fcdg.c and estimators/sarkar.c on hand-built CFGs with analytic answers:
 * the paper's Figure 1 program (TIME(START) = 920, STD_DEV(START) = 300), a branch between
 * two costs (variance p(1-p)(a-b)^2), a loop with measured trip-count moments (the product
 * variance formula), and the FCDG shape of Figure 3.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cfg/dispatch.h"
#include "cfg/dominators.h"
#include "cfg/fcdg.h"
#include "cfg/loops.h"
#include "estimators/sarkar.h"
#include "estimators/sarkar_counters.h"
#include "support/cfg_fixture.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define EPS 1e-9

struct fixture {
	struct cfg_func *f;
	struct cfg_domtree dom;
	struct cfg_loops lp;
	struct fcdg g;
	double *cost;
};

/* Builds dominators, loops and the FCDG of F; COSTS per block (others 0). */
static void setup(struct fixture *x, struct cfg_func *f, const double *block_cost)
{
	uint32_t i;

	assert_non_null(f);
	x->f = f;
	assert_int_equal(cfg_dom__compute(&x->dom, f), 0);
	assert_int_equal(cfg_loops__compute(&x->lp, f, &x->dom), 0);
	assert_int_equal(fcdg__build(&x->g, f, &x->lp), 0);
	x->cost = calloc(x->g.nnodes, sizeof(double));
	assert_non_null(x->cost);
	for (i = 0; i < f->nblocks; i++)
		x->cost[i] = block_cost[i];
}

static void teardown(struct fixture *x)
{
	free(x->cost);
	fcdg__free(&x->g);
	cfg_loops__free(&x->lp);
	cfg_dom__free(&x->dom);
	cfg_fixture__free(x->f);
}

/* True when the FCDG has an edge FROM -> TO. */
static bool has_fcdg_edge(const struct fcdg *g, uint32_t from, uint32_t to)
{
	for (uint32_t i = 0; i < g->nedges; i++)
		if (g->edges[i].from == from && g->edges[i].to == to)
			return true;
	return false;
}

/*
 * Figure 1:  10 IF (M .GE. 0) THEN; IF (N .LT. 0) GOTO 20; ELSE; IF (N .GE. 0) GOTO 20;
 * ENDIF; CALL FOO(M,N); GOTO 10; 20 CONTINUE. Blocks: 0 = IF1, 1 = IF2, 2 = IF3, 3 = CALL,
 * 4 = GOTO, 5 = CONTINUE.
 *   e0 0->1 T  e1 0->2 F  e2 1->5 T  e3 1->3 F  e4 2->5 T  e5 2->3 F  e6 3->4  e7 4->0 (back)
 *   e8 5->EXIT
 * The IF at 10 runs 10 times, TRUE_M times with M >= 0; the loop is left once by IF2 taken, so
 * the CALL runs 9 times. COST: IF = 1, CALL = 100, others 0. Per iteration the time is
 * 2 + 100 B with P(B) = 9/10: mean 92, variance 100^2 0.9 0.1 = 900; the loop runs 10 times,
 * so TIME(PH) = 920 and (VAR(FREQ) = 0) VAR(PH) = 10^2 900 = 90000, STD_DEV(START) = 300,
 * whatever TRUE_M is (TRUE_M = 10 leaves IF3 never executed: division-by-zero rule).
 */
static void figure1(int64_t true_m)
{
	static const struct fx_edge edges[] = {
	    {0, 1, EDGE_TAKEN},	      {0, 2, EDGE_NOT_TAKEN}, {1, 5, EDGE_TAKEN},
	    {1, 3, EDGE_NOT_TAKEN},   {2, 5, EDGE_TAKEN},     {2, 3, EDGE_NOT_TAKEN},
	    {3, 4, EDGE_CALL_RETURN}, {4, 0, EDGE_JUMP},      {5, 6, EDGE_RETURN},
	};
	static const double cost[] = {1, 1, 1, 100, 0, 0};
	int64_t ec[9] = {true_m, 10 - true_m, 1, true_m - 1, 0, 10 - true_m, 9, 9, 1};
	int64_t bc[6] = {10, true_m, 10 - true_m, 9, 9, 1};
	struct fixture x;
	struct sarkar_result r;
	struct sarkar_input in;
	uint32_t start, ph, stop;

	setup(&x, CFG_FIXTURE("figure1", 6, 0, edges), cost);
	start = fcdg__start(&x.g);
	stop = fcdg__stop(&x.g);
	assert_int_equal(x.lp.nloops, 1);
	ph = x.g.preheader[0];
	/* ECFG: START, STOP, one preheader, two postexits (e2 and e4 leave the loop), the loop
	 * end that the back edge e7 goes to. */
	assert_int_equal(x.g.nnodes, 6 + 2 + 1 + 2 + 1);
	/* Figure 3: START -> {PH, CONTINUE}; PH -> {IF1, PE, PE}; IF1 -> IF2 (T), IF3 (F);
	 * IF2 -> PE (T), {CALL, GOTO} (F); IF3 -> PE (T), {CALL, GOTO} (F); nothing -> STOP;
	 * the back edge IF2/IF3 -> IF1 is not in the FCDG. */
	assert_true(has_fcdg_edge(&x.g, start, ph));
	assert_true(has_fcdg_edge(&x.g, start, 5));
	assert_true(has_fcdg_edge(&x.g, ph, 0));
	assert_true(has_fcdg_edge(&x.g, 0, 1));
	assert_true(has_fcdg_edge(&x.g, 0, 2));
	assert_true(has_fcdg_edge(&x.g, 1, 3) && has_fcdg_edge(&x.g, 1, 4));
	assert_true(has_fcdg_edge(&x.g, 2, 3) && has_fcdg_edge(&x.g, 2, 4));
	assert_false(has_fcdg_edge(&x.g, 1, 0) || has_fcdg_edge(&x.g, 2, 0));
	assert_false(has_fcdg_edge(&x.g, start, stop));
	/* Figure 3's 13 edges, plus the loop end (cost 0) under IF2 F and IF3 F, and its two
	 * pseudo conditions to the postexits. */
	assert_int_equal(x.g.nedges, 2 + 3 + 2 + 3 + 3 + 4);

	in = (struct sarkar_input){
	    .g = &x.g, .edge_count = ec, .block_count = bc, .calls = 1, .cost = x.cost};
	assert_int_equal(sarkar__compute(&r, &in), 0);
	assert_true(fabs(r.time[start] - 920.0) < EPS);
	assert_true(fabs(sarkar__std_dev(&r, start) - 300.0) < EPS);
	assert_true(fabs(r.et2[start] - (90000.0 + 920.0 * 920.0)) < 1e-6);
	assert_true(fabs(r.node_freq[0] - 10.0) < EPS);			 /* the header */
	assert_true(fabs(r.node_freq[3] - 9.0) < EPS);			 /* the call */
	assert_true(fabs(r.freq[x.g.nodes[ph].first_out] - 10.0) < EPS); /* loop frequency */
	assert_true(fabs(r.time[ph] - 920.0) < EPS);
	assert_true(fabs(r.time[0] - 92.0) < EPS);
	assert_true(fabs(r.var[0] - 900.0) < 1e-6);
	{
		/* Conditions: START U, PH U, IF1 T/F, IF2 T/F, IF3 T/F. Relations: IF1, IF2, IF3
		 * branch sums, loop exits (IF2 T + IF3 T = START U), back edges
		 * (IF2 F + IF3 F = PH U - START U) = the sum of the first three less the fourth:
		 * rank 4, so 4 counters, as many as spanning-tree chords (10 edges, 7 vertices). */
		struct sarkar_counters sc;

		assert_int_equal(sarkar_counters__plan(&sc, &x.g, r.total_freq, NULL), 0);
		assert_int_equal(sc.conditions, 8);
		assert_int_equal(sc.relations, 4);
		assert_int_equal(sc.counters, 4);
		assert_false(sc.truncated);
	}
	if (true_m == 10) {
		assert_true(r.node_freq[2] == 0.0);
		assert_true(r.freq[x.g.nodes[2].first_out] == 0.0);
	}
	sarkar__release(&r);
	teardown(&x);
}

static void test_sarkar__figure1(void **state)
{
	figure1(6);
}

static void test_sarkar__figure1_division_by_zero(void **state)
{
	figure1(10);
}

/*
 * A branch: e0 0->1 T, e1 0->2 F, e2 1->3, e3 2->3, e4 3->EXIT; COST(1) = a, COST(2) = b,
 * others 0; taken with probability p in N calls. Mean p a + (1-p) b, variance
 * p (1-p) (a-b)^2.
 */
static void test_sarkar__branch(void **state)
{
	static const struct fx_edge edges[] = {
	    {0, 1, EDGE_TAKEN},	      {0, 2, EDGE_NOT_TAKEN}, {1, 3, EDGE_JUMP},
	    {2, 3, EDGE_FALLTHROUGH}, {3, 4, EDGE_RETURN},
	};
	const double a = 37, b = 5;
	const int64_t n = 1000, taken = 300;
	const double p = (double)taken / (double)n;
	double cost[] = {0, a, b, 0};
	int64_t ec[] = {taken, n - taken, taken, n - taken, n};
	int64_t bc[] = {n, taken, n - taken, n};
	struct fixture x;
	struct sarkar_result r;
	struct sarkar_input in;
	uint32_t start;

	setup(&x, CFG_FIXTURE("branch", 4, 0, edges), cost);
	start = fcdg__start(&x.g);
	in = (struct sarkar_input){
	    .g = &x.g, .edge_count = ec, .block_count = bc, .calls = (double)n, .cost = x.cost};
	assert_int_equal(sarkar__compute(&r, &in), 0);
	assert_true(fabs(r.time[start] - (p * a + (1 - p) * b)) < EPS);
	assert_true(fabs(r.var[start] - p * (1 - p) * (a - b) * (a - b)) < 1e-9);
	sarkar__release(&r);
	teardown(&x);
}

/*
 * A loop whose body is a branch: e0 0->1, e1 1->2 T, e2 1->3 F, e3 2->4, e4 3->4, e5 4->1 T
 * (back), e6 4->5 F, e7 5->EXIT. COST(2) = a, COST(3) = b. Per iteration S has mean
 * m = p a + (1-p) b and variance v = p (1-p) (a-b)^2; the trip count N (per call) has
 * measured moments: mean F, variance VF. Product formula: TIME = F m,
 * VAR = F^2 v + VF m^2 + VF v. Without moments VAR = F^2 v.
 */
static void test_sarkar__loop_moments(void **state)
{
	static const struct fx_edge edges[] = {
	    {0, 1, EDGE_FALLTHROUGH}, {1, 2, EDGE_TAKEN},	{1, 3, EDGE_NOT_TAKEN},
	    {2, 4, EDGE_JUMP},	      {3, 4, EDGE_FALLTHROUGH}, {4, 1, EDGE_TAKEN},
	    {4, 5, EDGE_NOT_TAKEN},   {5, 6, EDGE_RETURN},
	};
	/* 4 calls with trip counts 1, 3, 5, 11: sum 20, sum of squares 156. */
	const int64_t calls = 4, trips = 20, taken = 8;
	const double F = 5.0, VF = 156.0 / 4 - 25.0, a = 10, b = 2;
	const double p = (double)taken / (double)trips;
	const double m = p * a + (1 - p) * b, v = p * (1 - p) * (a - b) * (a - b);
	double cost[] = {0, 0, a, b, 0, 0};
	int64_t ec[] = {calls,	       taken,	      trips - taken, taken,
			trips - taken, trips - calls, calls,	     calls};
	int64_t bc[] = {calls, trips, taken, trips - taken, trips, calls};
	struct loop_moments mom[1] = {{.entries = 4, .sum = 20, .sumsq = 156}};
	struct fixture x;
	struct sarkar_result r;
	struct sarkar_input in;
	uint32_t start;

	setup(&x, CFG_FIXTURE("loop", 6, 0, edges), cost);
	start = fcdg__start(&x.g);
	assert_int_equal(x.lp.nloops, 1);
	in = (struct sarkar_input){.g = &x.g,
				   .edge_count = ec,
				   .block_count = bc,
				   .calls = (double)calls,
				   .cost = x.cost,
				   .moments = mom};
	assert_int_equal(sarkar__compute(&r, &in), 0);
	assert_true(fabs(r.time[start] - F * m) < 1e-9);
	assert_true(fabs(r.var[start] - (F * F * v + VF * m * m + VF * v)) < 1e-9);
	assert_int_equal(r.loops_with_moments, 1);
	assert_true(fabs(r.freq_var[0] - VF) < 1e-12);
	sarkar__release(&r);

	/* Independent iterations: the random-sum variance E[N] v + VAR(N) m^2. */
	in.iid_iterations = true;
	assert_int_equal(sarkar__compute(&r, &in), 0);
	assert_true(fabs(r.time[start] - F * m) < 1e-9);
	assert_true(fabs(r.var[start] - (F * v + VF * m * m)) < 1e-9);
	sarkar__release(&r);
	in.iid_iterations = false;

	in.moments = NULL;
	assert_int_equal(sarkar__compute(&r, &in), 0);
	assert_true(fabs(r.var[start] - F * F * v) < 1e-9);
	assert_int_equal(r.loops_with_moments, 0);
	sarkar__release(&r);
	teardown(&x);
}

/*
 * Nested loops left by one edge from the inner loop to EXIT get one postexit per loop:
 *   e0 0->1, e1 1->2, e2 2->2 T (inner back), e3 2->3 F, e4 2->EXIT (exits both, as a
 *   no-return call would), e5 3->1 T (outer back), e6 3->4 F, e7 4->EXIT.
 * Two preheaders, one postexit per exit edge (e3, e4, e6), e4's with pseudo edges from both
 * preheaders.
 * The mean is still the flat sum of count x cost.
 */
static void test_sarkar__nested_exit(void **state)
{
	static const struct fx_edge edges[] = {
	    {0, 1, EDGE_FALLTHROUGH}, {1, 2, EDGE_FALLTHROUGH}, {2, 2, EDGE_TAKEN},
	    {2, 3, EDGE_NOT_TAKEN},   {2, 5, EDGE_NORETURN},	{3, 1, EDGE_TAKEN},
	    {3, 4, EDGE_NOT_TAKEN},   {4, 5, EDGE_RETURN},
	};
	double cost[] = {1, 2, 3, 4, 5};
	/* 3 calls: one leaves from the inner loop. Outer entered 3 times, header 1 runs 7,
	 * block 2 runs 20 (13 self loops), 6 times to 3, once to EXIT; 3 -> 1 four times. */
	int64_t ec[] = {3, 7, 13, 6, 1, 4, 2, 2};
	int64_t bc[] = {3, 7, 20, 6, 2};
	struct fixture x;
	struct sarkar_result r;
	struct sarkar_input in;
	double flat = 0;
	uint32_t i;

	setup(&x, CFG_FIXTURE("nested", 5, 0, edges), cost);
	assert_int_equal(x.lp.nloops, 2);
	assert_int_equal(x.g.nnodes, 5 + 2 + 2 + 3 + 2);
	in = (struct sarkar_input){
	    .g = &x.g, .edge_count = ec, .block_count = bc, .calls = 3, .cost = x.cost};
	assert_int_equal(sarkar__compute(&r, &in), 0);
	for (i = 0; i < 5; i++) {
		flat += (double)bc[i] * cost[i];
		assert_true(fabs(r.node_freq[i] - (double)bc[i] / 3.0) < 1e-9);
	}
	assert_true(fabs(r.time[fcdg__start(&x.g)] - flat / 3.0) < 1e-9);
	sarkar__release(&r);
	teardown(&x);
}

/*
 * bzip2's uInt64_toAscii at -O2: an outer loop L0 (header 1) left only through its inner loop
 * L1 (header 4), a self loop L2 (2) inside L0 and a self loop L3 (7) after it:
 *   e0 0->1, e1 1->2, e2 2->2 T, e3 2->3 F, e4 3->4, e5 4->9 T, e6 4->5 F, e7 5->4 T,
 *   e8 5->6 F (leaves L1 and L0), e9 6->7, e10 7->7 T, e11 7->8 F, e12 8->EXIT, e13 9->1.
 * With one postexit per loop left, the postexit of L1 on e8 would sit in L0, be control
 * dependent on L0's preheader and get L0's trip count as its frequency; with one postexit in
 * the interval the edge goes to, every block's NODE_FREQ is its count per call, and Sarkar's
 * counters are not fewer than the |E| - |V| + 1 = 5 chords that any edge profile needs.
 * Counts for 2 calls: L0 runs 5 times (e13 3), L2 12 (e2 7), L1 9 (e7 4), L3 7 (e10 5).
 */
static void test_sarkar__exit_through_inner_loop(void **state)
{
	static const struct fx_edge edges[] = {
	    {0, 1, EDGE_FALLTHROUGH}, {1, 2, EDGE_FALLTHROUGH}, {2, 2, EDGE_TAKEN},
	    {2, 3, EDGE_NOT_TAKEN},   {3, 4, EDGE_FALLTHROUGH}, {4, 9, EDGE_TAKEN},
	    {4, 5, EDGE_NOT_TAKEN},   {5, 4, EDGE_TAKEN},	{5, 6, EDGE_NOT_TAKEN},
	    {6, 7, EDGE_FALLTHROUGH}, {7, 7, EDGE_TAKEN},	{7, 8, EDGE_NOT_TAKEN},
	    {8, 10, EDGE_RETURN},     {9, 1, EDGE_JUMP},
	};
	double cost[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
	int64_t ec[] = {2, 5, 7, 5, 5, 3, 6, 4, 2, 2, 5, 2, 2, 3};
	int64_t bc[] = {2, 5, 12, 5, 9, 6, 2, 7, 2, 3};
	struct fixture x;
	struct sarkar_result r;
	struct sarkar_input in;
	struct sarkar_counters sc;
	uint32_t chords, i;
	double incr;

	setup(&x, CFG_FIXTURE("exit_inner", 10, 0, edges), cost);
	assert_int_equal(x.lp.nloops, 4);
	in = (struct sarkar_input){
	    .g = &x.g, .edge_count = ec, .block_count = bc, .calls = 2, .cost = x.cost};
	assert_int_equal(sarkar__compute(&r, &in), 0);
	for (i = 0; i < 10; i++) {
		if (fabs(r.node_freq[i] - (double)bc[i] / 2.0) > 1e-9)
			print_error("block %u: NODE_FREQ %g, expected %g\n", i, r.node_freq[i],
				    (double)bc[i] / 2.0);
		assert_true(fabs(r.node_freq[i] - (double)bc[i] / 2.0) < 1e-9);
	}
	assert_true(fabs(r.time[fcdg__start(&x.g)] - 53.0 / 2.0) < 1e-9);
	assert_int_equal(sarkar_counters__plan(&sc, &x.g, r.total_freq, NULL), 0);
	assert_int_equal(chords__optimal(x.f, ec, 2, &chords, &incr), 0);
	assert_int_equal(chords, 5);
	assert_true(sc.counters >= chords);
	sarkar__release(&r);
	teardown(&x);
}

/*
 * lua's luaY_parser loop (lparser.c:789): a `continue` back to the header skips a block that
 * every exit passes, so that block post-dominates the header unless the back edge ends the
 * iteration (the loop end node); its frequency must be its own count, not the header's.
 *   e0 0->1, e1 1->3 T (continue path), e2 1->2 F, e3 2->5 T (exit), e4 2->6 F,
 *   e5 6->5 T (exit), e6 6->3 F, e7 3->4, e8 4->1 (back), e9 5->EXIT.
 * 1 call: header 1 runs 15 times, 2 times taken; 2 runs 13, exits once; 6 runs 12, 3 runs 14.
 */
static void test_sarkar__continue_skips_postdominator(void **state)
{
	static const struct fx_edge edges[] = {
	    {0, 1, EDGE_FALLTHROUGH}, {1, 3, EDGE_TAKEN},	{1, 2, EDGE_NOT_TAKEN},
	    {2, 5, EDGE_TAKEN},	      {2, 6, EDGE_NOT_TAKEN},	{6, 5, EDGE_TAKEN},
	    {6, 3, EDGE_NOT_TAKEN},   {3, 4, EDGE_FALLTHROUGH}, {4, 1, EDGE_JUMP},
	    {5, 7, EDGE_RETURN},
	};
	double cost[] = {1, 1, 1, 1, 1, 1, 1};
	int64_t ec[] = {1, 2, 13, 1, 12, 0, 12, 14, 14, 1};
	int64_t bc[] = {1, 15, 13, 14, 14, 1, 12};
	struct fixture x;
	struct sarkar_result r;
	struct sarkar_input in;
	uint32_t i;

	setup(&x, CFG_FIXTURE("continue", 7, 0, edges), cost);
	in = (struct sarkar_input){
	    .g = &x.g, .edge_count = ec, .block_count = bc, .calls = 1, .cost = x.cost};
	assert_int_equal(sarkar__compute(&r, &in), 0);
	for (i = 0; i < 7; i++) {
		if (fabs(r.node_freq[i] - (double)bc[i]) > 1e-9)
			print_error("block %u: NODE_FREQ %g, expected %g\n", i, r.node_freq[i],
				    (double)bc[i]);
		assert_true(fabs(r.node_freq[i] - (double)bc[i]) < 1e-9);
	}
	sarkar__release(&r);
	teardown(&x);
}

/* An irreducible function is refused: e0 0->1 T, e1 0->2 F, e2 1->2, e3 2->1 T, e4 2->EXIT. */
static void test_sarkar__irreducible(void **state)
{
	static const struct fx_edge edges[] = {
	    {0, 1, EDGE_TAKEN}, {0, 2, EDGE_NOT_TAKEN}, {1, 2, EDGE_JUMP},
	    {2, 1, EDGE_TAKEN}, {2, 3, EDGE_RETURN},
	};
	struct cfg_func *f = CFG_FIXTURE("irreducible", 3, 0, edges);
	struct cfg_domtree dom;
	struct cfg_loops lp;
	struct fcdg g;

	assert_non_null(f);
	assert_int_equal(cfg_dom__compute(&dom, f), 0);
	assert_int_equal(cfg_loops__compute(&lp, f, &dom), 0);
	assert_false(lp.reducible);
	assert_int_equal(fcdg__build(&g, f, &lp), -ENOTSUP);
	fcdg__free(&g);
	cfg_loops__free(&lp);
	cfg_dom__free(&dom);
	cfg_fixture__free(f);
}

/*
 * The irreducible function above, made reducible by one dispatch block D (block 3) that the
 * edges into its region's entries (1 and 2) go to: e0 0->D, e1 0->D, e2 1->D, e3 2->D, e4
 * 2->EXIT, e5 D->1, e6 D->2. 10 calls: e0 4, e1 6, e2 9, e3 5, e4 10; so D->1 carries
 * e0 + e3 = 9, D->2 e1 + e2 = 15, D runs 24 times, and every block's NODE_FREQ is its count.
 */
static void test_sarkar__dispatch(void **state)
{
	static const struct fx_edge edges[] = {
	    {0, 1, EDGE_TAKEN}, {0, 2, EDGE_NOT_TAKEN}, {1, 2, EDGE_JUMP},
	    {2, 1, EDGE_TAKEN}, {2, 3, EDGE_RETURN},
	};
	struct cfg_func *f = CFG_FIXTURE("irreducible", 3, 0, edges);
	struct cfg_dispatch d;
	struct cfg_domtree dom;
	struct cfg_loops lp;
	struct fcdg g;
	struct sarkar_result r;
	struct sarkar_input in;
	int64_t ec[8] = {4, 6, 9, 5, 10}, bc[5] = {10, 9, 15};
	double cost[16] = {1, 2, 3};

	assert_non_null(f);
	assert_int_equal(cfg_dispatch__build(&d, f, 4), 0);
	assert_int_equal(d.f.nblocks, 4);
	assert_int_equal(d.f.nedges, 7);
	cfg_dispatch__counts(&d, ec, bc, 10);
	assert_int_equal(ec[5] + ec[6], 24);
	assert_int_equal(bc[3], 24);
	assert_true((d.f.edges[5].to == 1 && ec[5] == 9) || (d.f.edges[5].to == 2 && ec[5] == 15));
	assert_int_equal(cfg_dom__compute(&dom, &d.f), 0);
	assert_int_equal(cfg_loops__compute(&lp, &d.f, &dom), 0);
	assert_true(lp.reducible);
	assert_int_equal(lp.nloops, 1);
	assert_int_equal(lp.loops[0].header, 3);
	assert_int_equal(fcdg__build(&g, &d.f, &lp), 0);
	in = (struct sarkar_input){
	    .g = &g, .edge_count = ec, .block_count = bc, .calls = 10, .cost = cost};
	assert_int_equal(sarkar__compute(&r, &in), 0);
	for (uint32_t i = 0; i < 4; i++) {
		if (fabs(r.node_freq[i] - (double)bc[i] / 10.0) > 1e-9)
			print_error("block %u: NODE_FREQ %g, count %ld / 10\n", i, r.node_freq[i],
				    (long)bc[i]);
		assert_true(fabs(r.node_freq[i] - (double)bc[i] / 10.0) < 1e-9);
	}
	assert_true(fabs(r.time[fcdg__start(&g)] - (10 * 1 + 9 * 2 + 15 * 3) / 10.0) < 1e-9);
	sarkar__release(&r);
	fcdg__free(&g);
	cfg_loops__free(&lp);
	cfg_dom__free(&dom);
	cfg_dispatch__free(&d);
	cfg_fixture__free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sarkar__figure1),
	    cmocka_unit_test(test_sarkar__figure1_division_by_zero),
	    cmocka_unit_test(test_sarkar__branch),
	    cmocka_unit_test(test_sarkar__loop_moments),
	    cmocka_unit_test(test_sarkar__nested_exit),
	    cmocka_unit_test(test_sarkar__exit_through_inner_loop),
	    cmocka_unit_test(test_sarkar__continue_skips_postdominator),
	    cmocka_unit_test(test_sarkar__irreducible),
	    cmocka_unit_test(test_sarkar__dispatch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
