/*
 * Unit tests of cfg/inline_frames.c against this very test binary (built with -g): a function
 * inlined into a marker function gives two frames (the marker at the call line, the inlined
 * function at its own line, each with its declaration line), the marker's other code one;
 * deeper chains than the caller's array say -E2BIG; an address in no function -ENOENT.
 */
#include <errno.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cfg/elf_image.h"
#include "cfg/inline_frames.h"
#include "cfg/srcline.h"

/* Each function on one line, so every row of its code carries that line. */
static const int twice_line = __LINE__ + 1;
static inline __attribute__((always_inline)) int inl_twice(volatile int *p) { return *p * 2 + *p; }

static const int marker_line = __LINE__ + 1;
static __attribute__((noinline)) int inl_marker(volatile int *p) { return inl_twice(p) ^ 7; }

static int first_object_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	*(uintptr_t *)data = info->dlpi_addr;
	return 1;
}

struct fixture {
	struct elf_image img;
	struct srcline *sl;
	struct inline_frames *ifr;
	uint64_t marker; /* ELF virtual address of inl_marker */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	uintptr_t bias = 0;

	if (!f || elf_image__open(&f->img, "/proc/self/exe") != 0)
		return -1;
	if (srcline__open(&f->sl, &f->img) || inline_frames__open(&f->ifr, f->sl))
		return -1;
	dl_iterate_phdr(first_object_bias, &bias);
	f->marker = (uint64_t)((uintptr_t)inl_marker - bias);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	inline_frames__close(f->ifr);
	srcline__close(f->sl);
	elf_image__close(&f->img);
	free(f);
	return 0;
}

static void test_inline_frames__inlined_call(void **state)
{
	struct fixture *f = *state;
	struct inline_frame fr[8];
	volatile int x = 3;
	int inlined = 0, own = 0;

	for (uint64_t a = f->marker; a < f->marker + 64; a++) {
		int n = inline_frames__at(f->ifr, a, fr, 8);

		if (n < 1 || strcmp(fr[0].name, "inl_marker"))
			continue; /* padding, another function, or no line */
		assert_int_equal(fr[0].decl_line, marker_line);
		assert_int_equal(fr[0].line, marker_line);
		if (n == 1) {
			own++;
			continue;
		}
		assert_int_equal(n, 2);
		assert_string_equal(fr[1].name, "inl_twice");
		assert_int_equal(fr[1].decl_line, twice_line);
		assert_int_equal(fr[1].line, twice_line);
		inlined++;
		/* Two frames do not fit in one. */
		assert_int_equal(inline_frames__at(f->ifr, a, fr, 1), -E2BIG);
	}
	assert_true(inlined > 0);
	assert_true(own > 0);
	assert_int_equal(inl_marker(&x), (3 * 2 + 3) ^ 7);
}

static void test_inline_frames__no_function(void **state)
{
	struct fixture *f = *state;
	struct inline_frame fr[8];

	assert_int_equal(inline_frames__at(f->ifr, 0x10, fr, 8), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inline_frames__inlined_call),
		cmocka_unit_test(test_inline_frames__no_function),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
