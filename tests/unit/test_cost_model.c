/*
 * Unit tests of estimators/cost_model.c: the instruction class of hand-assembled x86-64
 * encodings, rep-prefix detection, class names, and the two built-in models.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "estimators/cost_model.h"

struct enc {
	const char *what;
	uint8_t bytes[8];
	size_t len;
	enum cost_class cls;
	bool rep;
};

static const struct enc encodings[] = {
    {"add %rsi,%rdi", {0x48, 0x01, 0xf7}, 3, COST_ALU, false},
    {"mov (%rdi),%eax", {0x8b, 0x07}, 2, COST_MEM, false},
    {"lea 0x8(%rdi),%rax", {0x48, 0x8d, 0x47, 0x08}, 4, COST_ALU, false},
    {"imul %esi,%edi", {0x0f, 0xaf, 0xfe}, 3, COST_MUL, false},
    {"div %rcx", {0x48, 0xf7, 0xf1}, 3, COST_DIV, false},
    {"divsd %xmm1,%xmm0", {0xf2, 0x0f, 0x5e, 0xc1}, 4, COST_FP_DIV, false},
    {"addsd %xmm1,%xmm0", {0xf2, 0x0f, 0x58, 0xc1}, 4, COST_FP, false},
    {"movsd %xmm1,%xmm0", {0xf2, 0x0f, 0x10, 0xc1}, 4, COST_FP, false},
    {"rep movsb", {0xf3, 0xa4}, 2, COST_STRING, true},
    {"movsb", {0xa4}, 1, COST_STRING, false},
    {"lock xadd %eax,(%rdi)", {0xf0, 0x0f, 0xc1, 0x07}, 4, COST_ATOMIC, false},
    {"syscall", {0x0f, 0x05}, 2, COST_SYSCALL, false},
    {"nop", {0x90}, 1, COST_NOP, false},
    {"endbr64", {0xf3, 0x0f, 0x1e, 0xfa}, 4, COST_NOP, false},
    {"call rel32", {0xe8, 0, 0, 0, 0}, 5, COST_CALL, false},
    {"ret", {0xc3}, 1, COST_RET, false},
    {"jne", {0x75, 0x00}, 2, COST_BRANCH, false},
    {"push %rbp", {0x55}, 1, COST_PUSH_POP, false},
};

static void test_cost_model__classes(void **state)
{
	struct cost_model m;

	assert_int_equal(cost_model__init(&m, true), 0);
	for (size_t i = 0; i < sizeof(encodings) / sizeof(encodings[0]); i++) {
		const struct enc *e = &encodings[i];
		bool rep = !e->rep;
		enum cost_class c = cost_model__classify_bytes(&m, e->bytes, e->len, &rep);

		if (c != e->cls || rep != e->rep)
			print_error("%s: class %s rep %d, expected %s rep %d\n", e->what,
				    cost_class__name(c), rep, cost_class__name(e->cls), e->rep);
		assert_int_equal(c, e->cls);
		assert_int_equal(rep, e->rep);
	}
	/* Undecodable bytes are plain ALU work. */
	{
		static const uint8_t bad[] = {0x0f, 0xff};

		assert_int_equal(cost_model__classify_bytes(&m, bad, sizeof(bad), NULL), COST_ALU);
	}
	cost_model__release(&m);
}

static void test_cost_model__models_and_names(void **state)
{
	struct cost_model ins, cyc;

	assert_int_equal(cost_model__init(&ins, false), 0);
	assert_int_equal(cost_model__init(&cyc, true), 0);
	for (unsigned c = 0; c < COST_CLASS_COUNT; c++) {
		assert_true(ins.cost[c] == 1.0);
		assert_true(cyc.cost[c] > 0);
		assert_int_equal(cost_class__from_name(cost_class__name(c)), (int)c);
	}
	assert_true(cyc.cost[COST_DIV] > cyc.cost[COST_MUL]);
	assert_true(cyc.cost[COST_MUL] > cyc.cost[COST_ALU]);
	assert_int_equal(cost_class__from_name("no-such-class"), -1);
	cost_model__release(&ins);
	cost_model__release(&cyc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cost_model__classes),
	    cmocka_unit_test(test_cost_model__models_and_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
