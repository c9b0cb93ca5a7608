/*
 * Unit tests of estimators/bl_paths.c. Nothing is compared with a number the library made:
 * - the cut edges must leave the CFG acyclic (checked by Kahn's algorithm here) and be edges
 *   that close a cycle (each cut edge's head reaches its tail without cut edges);
 * - the Ball-Larus paths, enumerated here by brute force from their definition (start at the
 *   entry or at a cut edge's head, follow uncut edges, end leaving the function or by taking a
 *   cut edge), must get the numbers 0 .. total-1, each exactly once, by the run-time recipe,
 *   with the numbering's increments and with event counting's (chords of a spanning tree of
 *   random weights), and bl_paths__decode must give each path back;
 * - random executions of the CFG, split into paths by the definition, must count the same
 *   paths as the run-time recipe of the header (r, increments, count[r]) applied to them,
 *   with both sets of increments.
 * On hand-built CFGs (loops, nesting, irreducible regions, self loops, parallel edges,
 * unreachable cycles, a loop without exit, overflow), on random CFGs with a fixed seed, and on
 * the real CFGs of this test binary (every function with at most 20000 paths).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cfg/elf_image.h"
#include "estimators/bl_paths.h"
#include "support/cfg_fixture.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_ENUM 200000u

static uint64_t rnd(uint64_t *x);

/* The CFG less the cut edges is acyclic (Kahn), and every cut edge closes a cycle. */
static void check_cut(const struct cfg_func *f, const struct bl_paths *bp)
{
	uint32_t nb = f->nblocks, *indeg = calloc(nb + 1, sizeof(*indeg));
	uint32_t *queue = malloc((nb + 1) * sizeof(*queue)), qh = 0, qt = 0;
	bool *seen = calloc(nb + 1, sizeof(*seen));

	assert_non_null(indeg);
	assert_non_null(queue);
	assert_non_null(seen);
	/* The blocks reachable from the entry (by every edge); only they are on paths. */
	seen[f->entry_block] = true;
	for (bool more = true; more;) {
		more = false;
		for (uint32_t e = 0; e < f->nedges; e++)
			if (seen[f->edges[e].from] && f->edges[e].to < nb && !seen[f->edges[e].to])
				more = seen[f->edges[e].to] = true;
	}
	for (uint32_t v = 0; v < nb; v++)
		assert_int_equal(bp->reached[v], seen[v]);
	for (uint32_t e = 0; e < f->nedges; e++)
		if (!bp->back[e] && f->edges[e].to < nb && seen[f->edges[e].from])
			indeg[f->edges[e].to]++;
	for (uint32_t v = 0; v < nb; v++)
		if (seen[v] && !indeg[v])
			queue[qt++] = v;
	while (qh < qt) {
		uint32_t v = queue[qh++];

		for (uint32_t e = 0; e < f->nedges; e++)
			if (f->edges[e].from == v && !bp->back[e] && f->edges[e].to < nb &&
			    !--indeg[f->edges[e].to])
				queue[qt++] = f->edges[e].to;
	}
	for (uint32_t v = 0; v < nb; v++) /* every reachable block sorted: no cycle left */
		if (seen[v])
			assert_int_equal(indeg[v], 0);
	for (uint32_t e = 0; e < f->nedges; e++) /* nothing unreachable is cut */
		if (!seen[f->edges[e].from])
			assert_false(bp->back[e]);
	(void)qt;
	for (uint32_t c = 0; c < f->nedges; c++) {
		uint32_t stack[256], depth = 0;

		if (!bp->back[c])
			continue;
		/* Its head reaches its tail by uncut edges (or is it: a self loop). */
		memset(seen, 0, (nb + 1) * sizeof(*seen));
		stack[depth++] = f->edges[c].to;
		seen[f->edges[c].to] = true;
		while (depth && !seen[f->edges[c].from]) {
			uint32_t v = stack[--depth];

			for (uint32_t e = 0; e < f->nedges; e++)
				if (f->edges[e].from == v && !bp->back[e] && f->edges[e].to < nb &&
				    !seen[f->edges[e].to]) {
					seen[f->edges[e].to] = true;
					assert_true(depth < ARRAY_SIZE(stack));
					stack[depth++] = f->edges[e].to;
				}
		}
		assert_true(seen[f->edges[c].from]);
	}
	free(indeg);
	free(queue);
	free(seen);
}

/* Brute-force enumeration of the paths from block V with sum R so far and edges PATH[0, N). */
struct enum_state {
	const struct cfg_func *f;
	const struct bl_paths *bp;
	uint8_t *hit; /* per number */
	uint32_t path[512], start_edge;
	uint64_t ev_total; /* matches of the event-counting sums */
	uint64_t npaths;
	struct bl_path dec;
};

static void check_decoded(struct enum_state *s, uint64_t id, uint32_t n, uint32_t end_edge)
{
	assert_int_equal(bl_paths__decode(s->bp, s->f, id, &s->dec), 0);
	assert_int_equal(s->dec.start_edge, s->start_edge);
	assert_int_equal(s->dec.end_edge, end_edge);
	assert_int_equal(s->dec.nedges, n);
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(s->dec.edges[i], s->path[i]);
}

/* R: the sum of the numbering's increments so far; REV: the event-counting recipe's. */
static void enumerate(struct enum_state *s, uint32_t v, uint64_t r, uint64_t rev, uint32_t n)
{
	const struct cfg_func *f = s->f;

	for (uint32_t e = 0; e < f->nedges; e++) {
		uint64_t id;

		if (f->edges[e].from != v)
			continue;
		if (s->bp->back[e]) { /* the path ends by taking the cut edge */
			id = r + s->bp->exit_inc[e];
			assert_true(id < s->bp->total);
			assert_int_equal(rev + (uint64_t)s->bp->ev_exit_inc[e], id);
			s->ev_total++;
			assert_int_equal(s->hit[id], 0);
			s->hit[id] = 1;
			s->npaths++;
			check_decoded(s, id, n, e);
			continue;
		}
		assert_true(n < ARRAY_SIZE(s->path));
		s->path[n] = e;
		if (f->edges[e].to >= f->nblocks) { /* it leaves the function */
			id = r + s->bp->inc[e];
			assert_true(id < s->bp->total);
			assert_int_equal(rev + (uint64_t)s->bp->ev_inc[e], id);
			s->ev_total++;
			assert_int_equal(s->hit[id], 0);
			s->hit[id] = 1;
			s->npaths++;
			check_decoded(s, id, n + 1, UINT32_MAX);
			continue;
		}
		enumerate(s, f->edges[e].to, r + s->bp->inc[e], rev + (uint64_t)s->bp->ev_inc[e],
			  n + 1);
	}
}

/* Numbers F and checks the numbering against the brute-force enumeration; returns the
 * numbering (release it). */
static void check_numbering(const struct cfg_func *f, struct bl_paths *bp, uint64_t seed)
{
	struct enum_state s = {.f = f, .bp = bp};
	double *w = malloc((f->nedges + 1) * sizeof(*w));
	uint64_t x = seed | 1;
	uint32_t nreached = 0, ngraph = 2;

	assert_non_null(w);
	assert_int_equal(bl_paths__number(bp, f, UINT64_MAX), 0);
	check_cut(f, bp);
	/* Event counting with a tree of random weights: every path keeps its number, and only
	 * chords (edges off a spanning tree of the graph with its dummy edges) have code. */
	for (uint32_t e = 0; e < f->nedges; e++)
		w[e] = (double)(rnd(&x) % 1000);
	assert_int_equal(bl_paths__events(bp, f, seed % 3 ? w : NULL), 0);
	free(w);
	for (uint32_t v = 0; v < f->nblocks; v++)
		nreached += bp->reached[v];
	for (uint32_t e = 0; e < f->nedges; e++)
		if (bp->reached[f->edges[e].from])
			ngraph += bp->back[e] ? 2 : 1;
	assert_true(bp->nchords <= ngraph - (nreached + 2 - 1));
	assert_true(bp->total <= MAX_ENUM);
	s.hit = calloc(bp->total + 1, 1);
	assert_non_null(s.hit);
	s.start_edge = UINT32_MAX;
	enumerate(&s, f->entry_block, 0, (uint64_t)bp->ev_start, 0);
	for (uint32_t e = 0; e < f->nedges; e++)
		if (bp->back[e]) {
			s.start_edge = e;
			enumerate(&s, f->edges[e].to, bp->entry_inc[e],
				  (uint64_t)bp->ev_entry_inc[e], 0);
		}
	assert_int_equal(s.npaths, bp->total); /* every number exactly once */
	assert_int_equal(s.ev_total, bp->total);
	for (uint64_t i = 0; i < bp->total; i++)
		assert_int_equal(s.hit[i], 1);
	assert_int_equal(bl_paths__decode(bp, f, bp->total, &s.dec), -ERANGE);
	bl_path__free(&s.dec);
	free(s.hit);
}

/* A small deterministic generator (xorshift64*). */
static uint64_t rnd(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 0x2545F4914F6CDD1DULL;
}

/* A path counted by its edges: where it started, its edges and how it ended. */
struct walk_path {
	uint32_t start_edge, end_edge, n;
	uint32_t edges[64];
};

/* Random executions of F (up to STEPS edges each): counts per number by the run-time recipe
 * and, independently, the paths cut out of the edge sequence by the definition, whose numbers
 * come from decoding; both tallies must agree. */
static void check_walks(const struct cfg_func *f, const struct bl_paths *bp, uint64_t seed,
			unsigned nwalks, unsigned steps)
{
	uint64_t x = seed | 1, *by_recipe = calloc(bp->total + 1, sizeof(uint64_t));
	uint64_t *by_definition = calloc(bp->total + 1, sizeof(uint64_t));
	uint64_t *by_events = calloc(bp->total + 1, sizeof(uint64_t));
	struct bl_path dec = {0};

	assert_non_null(by_recipe);
	assert_non_null(by_definition);
	assert_non_null(by_events);
	for (unsigned w = 0; w < nwalks; w++) {
		uint32_t v = f->entry_block;
		uint64_t r = 0, rev = (uint64_t)bp->ev_start;
		struct walk_path cur = {.start_edge = UINT32_MAX, .end_edge = UINT32_MAX};

		for (unsigned step = 0; step < steps; step++) {
			const struct cfg_block *b = &f->blocks[v];
			uint32_t e, t;
			bool ended = false;

			if (!b->nsucc)
				break;
			e = f->succ[b->first_succ + rnd(&x) % b->nsucc];
			t = f->edges[e].to;
			if (bp->back[e]) {
				by_recipe[r + bp->exit_inc[e]]++;
				assert_true(rev + (uint64_t)bp->ev_exit_inc[e] < bp->total);
				by_events[rev + (uint64_t)bp->ev_exit_inc[e]]++;
				r = bp->entry_inc[e];
				rev = (uint64_t)bp->ev_entry_inc[e];
				cur.end_edge = e;
				ended = true;
			} else {
				r += bp->inc[e];
				rev += (uint64_t)bp->ev_inc[e];
				assert_true(cur.n < ARRAY_SIZE(cur.edges));
				cur.edges[cur.n++] = e;
				if (t >= f->nblocks) {
					by_recipe[r]++;
					assert_true(rev < bp->total);
					by_events[rev]++;
					ended = true;
				}
			}
			if (ended) {
				/* The path by the definition: find its number by decoding each
				 * candidate, never by the recipe's sum. */
				uint64_t id = UINT64_MAX;

				for (uint64_t i = 0; i < bp->total && id == UINT64_MAX; i++) {
					assert_int_equal(bl_paths__decode(bp, f, i, &dec), 0);
					if (dec.start_edge == cur.start_edge &&
					    dec.end_edge == cur.end_edge && dec.nedges == cur.n &&
					    !memcmp(dec.edges, cur.edges, cur.n * sizeof(uint32_t)))
						id = i;
				}
				assert_true(id != UINT64_MAX);
				by_definition[id]++;
				if (t >= f->nblocks && !bp->back[e])
					break;
				cur = (struct walk_path){.start_edge = e, .end_edge = UINT32_MAX};
			}
			v = t;
		}
	}
	for (uint64_t i = 0; i < bp->total; i++) {
		assert_int_equal(by_recipe[i], by_definition[i]);
		assert_int_equal(by_events[i], by_definition[i]);
	}
	free(by_events);
	bl_path__free(&dec);
	free(by_recipe);
	free(by_definition);
}

static void check_func(const struct cfg_func *f, uint64_t seed)
{
	struct bl_paths bp;

	assert_non_null(f);
	check_numbering(f, &bp, seed);
	if (bp.total <= 2000)
		check_walks(f, &bp, seed, bp.total <= 200 ? 40 : 4, 60);
	bl_paths__free(&bp);
}

/* A loop around a diamond (the seed's Figure 1 shape): entry 0, header 1, arms 2 and 3, latch
 * 4, exit 5. */
static void test_bl_paths__loop_diamond(void **state)
{
	static const struct fx_edge e[] = {
	    {0, 1, EDGE_FALLTHROUGH}, {1, 2, EDGE_TAKEN},	{1, 3, EDGE_NOT_TAKEN},
	    {2, 4, EDGE_JUMP},	      {3, 4, EDGE_FALLTHROUGH}, {4, 1, EDGE_TAKEN},
	    {4, 5, EDGE_NOT_TAKEN},   {5, 6, EDGE_RETURN},
	};
	struct cfg_func *f = CFG_FIXTURE("loop_diamond", 6, 0, e);
	struct bl_paths bp;

	(void)state;
	check_func(f, 1);
	/* By hand: from the entry 2 arms x (exit or back edge) = 4 paths, after the back edge
	 * the same 4: 8. */
	assert_int_equal(bl_paths__number(&bp, f, UINT64_MAX), 0);
	assert_int_equal(bp.total, 8);
	assert_true(bp.back[5]);
	bl_paths__free(&bp);
	cfg_fixture__free(f);
}

static void test_bl_paths__nested_loops(void **state)
{
	static const struct fx_edge e[] = {
	    {0, 1, EDGE_FALLTHROUGH}, {1, 2, EDGE_FALLTHROUGH}, {2, 3, EDGE_TAKEN},
	    {2, 4, EDGE_NOT_TAKEN},   {3, 4, EDGE_FALLTHROUGH}, {4, 2, EDGE_TAKEN},
	    {4, 5, EDGE_NOT_TAKEN},   {5, 1, EDGE_TAKEN},	{5, 6, EDGE_NOT_TAKEN},
	    {6, 7, EDGE_RETURN},
	};
	struct cfg_func *f = CFG_FIXTURE("nested", 7, 0, e);

	(void)state;
	check_func(f, 2);
	cfg_fixture__free(f);
}

/* Two entries into a cycle: 1 <-> 2, both reached from 0. */
static void test_bl_paths__irreducible(void **state)
{
	static const struct fx_edge e[] = {
	    {0, 1, EDGE_TAKEN}, {0, 2, EDGE_NOT_TAKEN}, {1, 2, EDGE_JUMP},
	    {2, 1, EDGE_TAKEN}, {2, 3, EDGE_RETURN},
	};
	struct cfg_func *f = CFG_FIXTURE("irreducible", 3, 0, e);

	(void)state;
	check_func(f, 3);
	cfg_fixture__free(f);
}

static void test_bl_paths__self_loop_and_parallel_edges(void **state)
{
	static const struct fx_edge e[] = {
	    {0, 1, EDGE_TAKEN},
	    {0, 1, EDGE_NOT_TAKEN},
	    {1, 1, EDGE_TAKEN},
	    {1, 2, EDGE_RETURN},
	};
	struct cfg_func *f = CFG_FIXTURE("self_parallel", 2, 0, e);

	(void)state;
	check_func(f, 4);
	cfg_fixture__free(f);
}

/* Blocks 1 and 2 form a cycle nothing reaches; block 3 loops for ever. */
static void test_bl_paths__unreachable_and_endless(void **state)
{
	static const struct fx_edge e[] = {
	    {0, 3, EDGE_TAKEN}, {0, 4, EDGE_RETURN}, {1, 2, EDGE_JUMP},
	    {2, 1, EDGE_JUMP},	{3, 3, EDGE_JUMP},
	};
	struct cfg_func *f = CFG_FIXTURE("unreachable", 4, 0, e);
	struct bl_paths bp;

	(void)state;
	check_func(f, 5);
	assert_int_equal(bl_paths__number(&bp, f, UINT64_MAX), 0);
	assert_false(bp.reached[1]);
	assert_false(bp.reached[2]);
	assert_int_equal(bp.npaths[1], 0);
	bl_paths__free(&bp);
	cfg_fixture__free(f);
}

/* A chain of N diamonds has 2^N paths: over a limit, -EOVERFLOW. */
static void test_bl_paths__overflow(void **state)
{
	enum { N = 70 };
	struct fx_edge e[3 * N + 1];
	struct cfg_func *f;
	struct bl_paths bp;
	uint32_t k = 0;

	(void)state;
	for (uint32_t d = 0; d < N; d++) {
		e[k++] = (struct fx_edge){2 * d, 2 * d + 1, EDGE_TAKEN};
		e[k++] = (struct fx_edge){2 * d, 2 * d + 2, EDGE_NOT_TAKEN};
		e[k++] = (struct fx_edge){2 * d + 1, 2 * d + 2, EDGE_JUMP};
	}
	e[k++] = (struct fx_edge){2 * N, 2 * N + 1, EDGE_RETURN};
	f = cfg_fixture__func("chain", 2 * N + 1, 0, e, k);
	assert_non_null(f);
	assert_int_equal(bl_paths__number(&bp, f, UINT64_MAX), -EOVERFLOW);
	assert_null(bp.npaths);
	cfg_fixture__free(f);
	/* 16 diamonds: 65536 paths, within a limit of 65536, not of 65535. */
	{
		struct fx_edge g[49];

		memcpy(g, e, 48 * sizeof(*g));
		g[48] = (struct fx_edge){32, 33, EDGE_RETURN};
		f = cfg_fixture__func("chain16", 33, 0, g, 49);
	}
	assert_non_null(f);
	assert_int_equal(bl_paths__number(&bp, f, 65535), -EOVERFLOW);
	assert_int_equal(bl_paths__number(&bp, f, 65536), 0);
	bl_paths__free(&bp);
	check_numbering(f, &bp, 7);
	bl_paths__free(&bp);
	cfg_fixture__free(f);
}

/* Random CFGs: up to 10 blocks, 1-3 successors each (forward, backward, self, EXIT). */
static void test_bl_paths__random(void **state)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	(void)state;
	for (unsigned g = 0; g < 300; g++) {
		struct fx_edge e[40];
		uint32_t nb = 1 + (uint32_t)(rnd(&x) % 10), k = 0;
		struct cfg_func *f;

		for (uint32_t v = 0; v < nb; v++) {
			uint32_t ns = 1 + (uint32_t)(rnd(&x) % 3);

			for (uint32_t j = 0; j < ns; j++) {
				uint32_t t = (uint32_t)(rnd(&x) % (nb + 1)); /* nb: EXIT */

				e[k++] = (struct fx_edge){v, t, t == nb ? EDGE_RETURN : EDGE_JUMP};
			}
		}
		f = cfg_fixture__func("random", nb, 0, e, k);
		assert_non_null(f);
		check_func(f, rnd(&x));
		cfg_fixture__free(f);
	}
}

static void test_bl_paths__bad_input(void **state)
{
	static const struct fx_edge e[] = {{0, 1, EDGE_RETURN}};
	struct cfg_func *f = CFG_FIXTURE("one", 1, 0, e);
	struct bl_paths bp;

	(void)state;
	assert_non_null(f);
	f->entry_block = 5;
	assert_int_equal(bl_paths__number(&bp, f, UINT64_MAX), -EINVAL);
	f->entry_block = 0;
	check_func(f, 6);
	cfg_fixture__free(f);
}

/* The functions of this binary, compiled code of every shape the compiler makes (switch
 * tables, loops with several exits, calls that do not return). */
static void test_bl_paths__real_cfgs(void **state)
{
	struct elf_image img;
	struct cfg_program prog;
	size_t nchecked = 0, noverflow = 0, nlooped = 0, nplain = 0, nchords = 0;

	(void)state;
	assert_int_equal(elf_image__open(&img, "/proc/self/exe"), 0);
	assert_int_equal(cfg_program__build(&prog, &img, NULL), 0);
	for (size_t i = 0; i < prog.nfuncs; i++) {
		const struct cfg_func *f = &prog.funcs[i];
		struct bl_paths bp;
		bool looped = false;
		int err;

		if (!f->nblocks)
			continue;
		err = bl_paths__number(&bp, f, 20000);
		if (err == -EOVERFLOW) {
			noverflow++;
			continue;
		}
		assert_int_equal(err, 0);
		for (uint32_t e = 0; e < f->nedges; e++)
			looped |= bp.back[e];
		/* Edges that run an increment and nothing else (back edges and exits count
		 * anyway): with the numbering's increments, and with event counting's. */
		assert_int_equal(bl_paths__events(&bp, f, NULL), 0);
		for (uint32_t e = 0; e < f->nedges; e++)
			if (!bp.back[e] && f->edges[e].to < f->nblocks) {
				nplain += bp.inc[e] != 0;
				nchords += bp.ev_inc[e] != 0;
			}
		bl_paths__free(&bp);
		check_func(f, i + 1);
		nchecked++;
		nlooped += looped;
	}
	print_message(
	    "%zu functions checked (%zu with loops), %zu with more than 20000 paths; "
	    "edges with an increment only: %zu numbering, %zu event counting (uniform weights)\n",
	    nchecked, nlooped, noverflow, nplain, nchords);
	assert_true(nchecked > 0);
	assert_true(nlooped > 0);
	cfg_program__free(&prog);
	elf_image__close(&img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bl_paths__loop_diamond),
	    cmocka_unit_test(test_bl_paths__nested_loops),
	    cmocka_unit_test(test_bl_paths__irreducible),
	    cmocka_unit_test(test_bl_paths__self_loop_and_parallel_edges),
	    cmocka_unit_test(test_bl_paths__unreachable_and_endless),
	    cmocka_unit_test(test_bl_paths__overflow),
	    cmocka_unit_test(test_bl_paths__random),
	    cmocka_unit_test(test_bl_paths__bad_input),
	    cmocka_unit_test(test_bl_paths__real_cfgs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
