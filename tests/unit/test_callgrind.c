/*
 * Unit tests of the callgrind output reader (tests/support/callgrind.c) on hand-written
 * profiles in the exact shape callgrind 3.19 writes: name compression, relative positions,
 * calls= with inclusive cost lines, jump=/jcnd= source lines, several contexts of one
 * address, object selection; and malformed inputs, which must fail with one message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "support/callgrind.h"

static const char profile[] =
	"# callgrind format\n"
	"version: 1\n"
	"creator: callgrind-3.19.0\n"
	"positions: instr line\n"
	"events: Ir\n"
	"summary: 133\n"
	"\n"
	"ob=(1) /lib/libc.so.6\n"
	"fl=(1) ???\n"
	"fn=(1) __libc_start_call_main\n"
	"0x27240 0 3\n"
	"cob=(2) /tmp/prog\n"
	"cfi=(2) prog.c\n"
	"cfn=(2) main\n"
	"calls=1 0x1060 0 \n"
	"* 0 60\n"
	"\n"
	"ob=(2)\n"
	"fl=(2)\n"
	"fn=(2)\n"
	"0x1060 11 1\n"
	"+4 * 1\n"
	"cfn=(3) sq\n"
	"calls=10 +76 -8 \n"
	"* * 30\n"
	"+5 +1 10\n"
	"jcnd=9/10 -9 * \n"
	"* * \n"
	"+2 * 1\n"
	"cob=(1)\n"
	"cfn=(4) exit\n"
	"calls=1 0x2a000 0 \n"
	"* * 40\n"
	"fn=(3)\n"
	"0x10b0 3 10\n"
	"+3 * 10\n"
	"jump=2 +11 * \n"
	"* * \n"
	"jump=3 +21 * \n"
	"* * \n"
	"fn=(5) sq'2\n"
	"0x10b0 3 5\n"
	"+3 * 5\n"
	"jump=1 +11 * \n"
	"* * \n"
	"+3 *\n"
	"\n"
	"totals: 133\n";

static void parses_positions_and_counts(void **state)
{
	struct cg_profile p;

	(void)state;
	assert_int_equal(cg_profile__parse(&p, profile, strlen(profile), "t", "prog"), 0);
	assert_string_equal(p.object, "/tmp/prog");
	/* Self costs only: the inclusive lines after calls= are not counted. */
	assert_int_equal(p.total_ir, 3 + 1 + 1 + 10 + 1 + 10 + 10 + 5 + 5);
	assert_int_equal(p.summary_ir, 133);
	assert_int_equal(p.ninsns, 6);
	assert_int_equal(cg_profile__count(&p, 0x1060), 1);
	assert_int_equal(cg_profile__count(&p, 0x1064), 1);
	assert_int_equal(cg_profile__count(&p, 0x1069), 10);
	assert_int_equal(cg_profile__count(&p, 0x106b), 1);
	/* Two contexts of one address add up; a position-only line has no cost. */
	assert_int_equal(cg_profile__count(&p, 0x10b0), 15);
	assert_int_equal(cg_profile__count(&p, 0x10b3), 15);
	assert_int_equal(cg_profile__count(&p, 0x10b6), 0);
	assert_int_equal(p.object_ir, 1 + 1 + 10 + 1 + 15 + 15);
	cg_profile__free(&p);
}

static void parses_jumps(void **state)
{
	struct cg_profile p;
	long j;

	(void)state;
	assert_int_equal(cg_profile__parse(&p, profile, strlen(profile), "t", "/tmp/prog"), 0);
	assert_int_equal(p.njumps, 3);
	j = cg_profile__first_jump(&p, 0x1069);
	assert_true(j >= 0);
	assert_int_equal(p.jumps[j].to, 0x1060);
	assert_int_equal(p.jumps[j].taken, 9);
	assert_int_equal(p.jumps[j].executed, 10);
	assert_true(p.jumps[j].cond);
	/* Targets are relative to the last cost line and do not move it; merged contexts. */
	j = cg_profile__first_jump(&p, 0x10b3);
	assert_true(j >= 0);
	assert_int_equal(p.jumps[j].to, 0x10be);
	assert_int_equal(p.jumps[j].taken, 3);
	assert_false(p.jumps[j].cond);
	assert_int_equal(p.jumps[j + 1].to, 0x10c8);
	assert_int_equal(p.jumps[j + 1].taken, 3);
	assert_int_equal(cg_profile__first_jump(&p, 0x1060), -1);
	cg_profile__free(&p);
}

static void parses_calls(void **state)
{
	struct cg_profile p;
	size_t i;
	int seen = 0;

	(void)state;
	assert_int_equal(cg_profile__parse(&p, profile, strlen(profile), "t", "prog"), 0);
	assert_int_equal(p.ncalls, 3);
	for (i = 0; i < p.ncalls; i++) {
		const struct cg_call *c = &p.calls[i];

		if (!c->site_in) { /* libc -> main */
			assert_true(c->target_in);
			assert_int_equal(c->target, 0x1060);
			seen |= 1;
		} else if (c->target_in) { /* main -> sq: site from the line after calls= */
			assert_int_equal(c->site, 0x1064);
			assert_int_equal(c->target, 0x10b0);
			assert_int_equal(c->count, 10);
			seen |= 2;
		} else { /* main -> exit in libc (a calls= without cob= stays in ob=) */
			assert_int_equal(c->site, 0x106b);
			assert_int_equal(c->target, 0x2a000);
			seen |= 4;
		}
	}
	assert_int_equal(seen, 7);
	cg_profile__free(&p);
}

static void other_object_is_empty(void **state)
{
	struct cg_profile p;

	(void)state;
	assert_int_equal(cg_profile__parse(&p, profile, strlen(profile), "t", "/bin/other"), 0);
	assert_null(p.object);
	assert_int_equal(p.ninsns, 0);
	assert_int_equal(p.njumps, 0);
	assert_int_equal(p.ncalls, 0);
	assert_int_equal(p.total_ir, 46);
	cg_profile__free(&p);
}

static void expect_error_len(const char *text, size_t len, const char *what)
{
	struct cg_profile p;

	assert_int_equal(cg_profile__parse(&p, text, len, "bad", "prog"), -1);
	if (!strstr(p.error, what))
		fail_msg("error '%s' does not mention '%s'", p.error, what);
	assert_null(p.insns);
	cg_profile__free(&p);
}

static void expect_error(const char *text, const char *what)
{
	expect_error_len(text, strlen(text), what);
}

static void rejects_malformed(void **state)
{
	static const char nul[] = "positions: instr line\nevents: Ir\n0x10 1\0 1\n";

	(void)state;
	expect_error("", "no events");
	expect_error("positions: line\nevents: Ir\n", "--dump-instr=yes");
	expect_error("positions: instr\nevents: Dr\n", "no Ir");
	expect_error("positions: instr line\nevents: Ir\nob=(1) prog\nzz 1 1\n", "bad:4:");
	expect_error("positions: instr line\nevents: Ir\nob=(1) prog\n0x10 1 x\n", "bad cost");
	expect_error("positions: instr line\nevents: Ir\nob=(1) prog\n0x10 1 1 2\n",
		     "more costs");
	expect_error("positions: instr line\nevents: Ir\nob=(7)\n", "before it is defined");
	expect_error("positions: instr line\nevents: Ir\nob=(1 prog\n", "name compression");
	expect_error("positions: instr line\nevents: Ir\nob=(1) prog\n0x10 1 1\njump=1 +3 *\n",
		     "ends after");
	expect_error("positions: instr line\nevents: Ir\nob=(1) prog\n0x10 1 1\n"
		     "jcnd=5/3 +3 *\n* *\n", "above its execution count");
	expect_error("positions: instr line\nevents: Ir\nob=(1) prog\n0x10 1 1\n"
		     "calls=1 0x20\n* * 5\n", "expected 2 position");
	expect_error("positions: instr line\nevents: Ir\nob=(1) prog\n0x10 1 1\n"
		     "calls=1 0x20 0\nfn=(1) x\n", "where a cost line was expected");
	expect_error("positions: instr line\nevents: Ir\nfoo=bar\n", "unknown specification");
	expect_error("version: 2\n", "unsupported format version");
	expect_error("0x10 1 1\n", "before positions");
	expect_error_len(nul, sizeof(nul) - 1, "NUL");
}

static void loads_missing_file(void **state)
{
	struct cg_profile p;

	(void)state;
	assert_int_equal(cg_profile__load(&p, "/nonexistent/callgrind.out", "prog"), -1);
	assert_non_null(strstr(p.error, "/nonexistent/callgrind.out"));
	cg_profile__free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_positions_and_counts),
		cmocka_unit_test(parses_jumps),
		cmocka_unit_test(parses_calls),
		cmocka_unit_test(other_object_is_empty),
		cmocka_unit_test(rejects_malformed),
		cmocka_unit_test(loads_missing_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
