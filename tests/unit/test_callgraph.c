/*
 * Unit tests of cfg/callgraph.c on a hand-made program: functions with call sites of every
 * sort (direct, repeated, recursive, tail, PLT, GOT, indirect, to no known function).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cfg/callgraph.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

enum { F_MAIN, F_A, F_B, F_C, F_D, NFUNCS };

static const uint64_t entries[NFUNCS] = { 0x401000, 0x401100, 0x401200, 0x401300, 0x401400 };
static const char *const names[NFUNCS] = { "main", "a", "b", "c", "d" };

#define PLT_PUTS 0x400500
#define GOT_FREE 0x404018

/* Sites: { target, indirect, tail, external, name }. */
struct site {
	uint64_t target;
	uint8_t indirect, tail, external;
	const char *name;
};

/*
 * main: a, a again, b by a direct tail call, puts@plt (direct, external), free through its
 *       GOT slot (indirect, external), a function pointer (indirect, target unknown), and a
 *       direct call to 0x401234, the middle of b (no function there: no edge).
 * a:    b, and itself (recursion).
 * b:    an indirect tail call (jmp *%rax).
 * c:    d by a direct tail call, and a.
 * d:    nothing.
 * Callees: main {a, b}; a {a, b}; b {}; c {a, d}; d {}.
 * Callers (reverse): main {}; a {main, a, c}; b {main, a}; c {}; d {c}.
 * Indirect sites: main 1 (the GOT call counts as external), b 1. External: main 2.
 */
static const struct site main_sites[] = {
	{ 0x401100, 0, 0, 0, "a" },    { 0x401100, 0, 0, 0, "a" },
	{ 0x401200, 0, 1, 0, "b" },    { PLT_PUTS, 0, 0, 1, "puts" },
	{ GOT_FREE, 1, 0, 1, "free" }, { 0, 1, 0, 0, NULL },
	{ 0x401234, 0, 0, 0, NULL },
};
static const struct site a_sites[] = { { 0x401200, 0, 0, 0, "b" }, { 0x401100, 0, 0, 0, "a" } };
static const struct site b_sites[] = { { 0, 1, 1, 0, NULL } };
static const struct site c_sites[] = { { 0x401400, 0, 1, 0, "d" }, { 0x401100, 0, 0, 0, "a" } };

static void set_calls(struct cfg_func *f, const struct site *s, uint32_t n)
{
	uint32_t i;

	f->calls = calloc(n ? n : 1, sizeof(*f->calls));
	assert_non_null(f->calls);
	f->ncalls = n;
	for (i = 0; i < n; i++) {
		f->calls[i].site = f->entry + 4 * i;
		f->calls[i].target = s[i].target;
		f->calls[i].indirect = s[i].indirect;
		f->calls[i].tail = s[i].tail;
		f->calls[i].external = s[i].external;
		f->calls[i].name = s[i].name;
	}
}

static int setup_program(void **state)
{
	struct cfg_program *prog = calloc(1, sizeof(*prog));
	size_t i;

	if (!prog)
		return -1;
	prog->funcs = calloc(NFUNCS, sizeof(*prog->funcs));
	if (!prog->funcs)
		return -1;
	prog->nfuncs = NFUNCS;
	for (i = 0; i < NFUNCS; i++) {
		prog->funcs[i].entry = entries[i];
		prog->funcs[i].name = strdup(names[i]);
	}
	set_calls(&prog->funcs[F_MAIN], main_sites, ARRAY_SIZE(main_sites));
	set_calls(&prog->funcs[F_A], a_sites, ARRAY_SIZE(a_sites));
	set_calls(&prog->funcs[F_B], b_sites, ARRAY_SIZE(b_sites));
	set_calls(&prog->funcs[F_C], c_sites, ARRAY_SIZE(c_sites));
	*state = prog;
	return 0;
}

static int teardown_program(void **state)
{
	struct cfg_program *prog = *state;
	size_t i;

	for (i = 0; i < prog->nfuncs; i++)
		cfg_func__release(&prog->funcs[i]);
	free(prog->funcs);
	free(prog);
	return 0;
}

/* Compares a list against a -1-terminated expectation. */
static void check_ids(const char *what, size_t node, const uint32_t *got, uint32_t n,
		      const int *exp)
{
	uint32_t i, m = 0;

	while (exp[m] >= 0)
		m++;
	if (n != m)
		print_error("function %zu: %u %s, expected %u\n", node, n, what, m);
	assert_int_equal(n, m);
	for (i = 0; i < n; i++)
		assert_int_equal(got[i], exp[i]);
}

static void test_callgraph__edges_and_counts(void **state)
{
	static const int callees[NFUNCS][4] = {
		[F_MAIN] = { F_A, F_B, -1 }, [F_A] = { F_A, F_B, -1 }, [F_B] = { -1 },
		[F_C] = { F_A, F_D, -1 },    [F_D] = { -1 },
	};
	static const int callers[NFUNCS][4] = {
		[F_MAIN] = { -1 }, [F_A] = { F_MAIN, F_A, F_C, -1 }, [F_B] = { F_MAIN, F_A, -1 },
		[F_C] = { -1 },    [F_D] = { F_C, -1 },
	};
	static const uint32_t nindirect[NFUNCS] = { [F_MAIN] = 1, [F_B] = 1 };
	static const uint32_t nexternal[NFUNCS] = { [F_MAIN] = 2 };
	const struct cfg_program *prog = *state;
	struct cfg_callgraph cg;
	size_t i;

	assert_int_equal(cfg_callgraph__build(&cg, prog), 0);
	assert_int_equal(cg.n, NFUNCS);
	for (i = 0; i < NFUNCS; i++) {
		check_ids("callees", i, cg.nodes[i].callees, cg.nodes[i].ncallees, callees[i]);
		check_ids("callers", i, cg.nodes[i].callers, cg.nodes[i].ncallers, callers[i]);
		assert_int_equal(cg.nodes[i].nindirect, nindirect[i]);
		assert_int_equal(cg.nodes[i].nexternal, nexternal[i]);
	}
	cfg_callgraph__free(&cg);
	assert_null(cg.nodes);
	assert_int_equal(cg.n, 0);
}

/* A program without functions has an empty graph. */
static void test_callgraph__empty_program(void **state)
{
	struct cfg_program prog = { 0 };
	struct cfg_callgraph cg;

	assert_int_equal(cfg_callgraph__build(&cg, &prog), 0);
	assert_int_equal(cg.n, 0);
	cfg_callgraph__free(&cg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_callgraph__edges_and_counts, setup_program,
						teardown_program),
		cmocka_unit_test(test_callgraph__empty_program),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
