/*
 * Unit tests of cfg/block_lines.c against this very test binary (built with -g): the table
 * holds, for every function entry and block start, what srcline__lookup answers (checked for
 * every one, through a line reader of the test's own), also when made on another thread while
 * the program's image is in use; and a file without line tables or that cannot be opened
 * leaves an empty table.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cfg/block_lines.h"
#include "cfg/cfg.h"
#include "cfg/elf_image.h"
#include "cfg/srcline.h"

static struct elf_image img;
static struct cfg_program prog;

static int setup(void **state)
{
	img.fd = -1;
	return elf_image__open(&img, "/proc/self/exe") || cfg_program__build(&prog, &img, NULL);
}

static int teardown(void **state)
{
	cfg_program__free(&prog);
	elf_image__close(&img);
	return 0;
}

/* Every entry and block of BL against srcline__lookup on the program's own image; returns
 * how many positions had a line. */
static size_t check_table(const struct block_lines *bl)
{
	struct srcline *sl;
	size_t with_line = 0;

	assert_int_equal(srcline__open(&sl, &img), 0);
	assert_int_equal(bl->nfuncs, prog.nfuncs);
	for (size_t i = 0; i < prog.nfuncs; i++) {
		const struct cfg_func *f = &prog.funcs[i];

		for (long k = -1; k < (long)f->nblocks; k++) {
			uint64_t addr = k < 0 ? f->entry : f->blocks[k].start;
			const struct block_line *got = block_lines__at(bl, i, k);
			const char *file = NULL;
			int line = 0;
			bool has = srcline__lookup(sl, addr, &file, &line) == 0 && file && line > 0;

			assert_int_equal(got != NULL, has);
			if (!has)
				continue;
			with_line++;
			assert_string_equal(got->file, file);
			assert_int_equal(got->line, line);
		}
	}
	srcline__close(sl);
	return with_line;
}

static void test_block_lines__equal_to_lookups(void **state)
{
	struct block_lines bl;

	assert_int_equal(block_lines__build(&bl, &prog, "/proc/self/exe"), 0);
	assert_true(check_table(&bl) > 100);
	/* Outside the table: no line. */
	assert_null(block_lines__at(&bl, prog.nfuncs, -1));
	assert_null(block_lines__at(NULL, 0, -1));
	block_lines__free(&bl);
	block_lines__free(&bl); /* twice is harmless */
}

static void *build_on_thread(void *arg)
{
	return (void *)(intptr_t)block_lines__build(arg, &prog, "/proc/self/exe");
}

/* Made on another thread while this one reads the program's image and its lines. */
static void test_block_lines__on_another_thread(void **state)
{
	struct block_lines bl;
	pthread_t t;
	void *ret;
	struct srcline *sl;
	const char *file;
	int line;

	assert_int_equal(pthread_create(&t, NULL, build_on_thread, &bl), 0);
	assert_int_equal(srcline__open(&sl, &img), 0);
	for (size_t i = 0; i < prog.nfuncs; i++)
		srcline__lookup(sl, prog.funcs[i].entry, &file, &line);
	srcline__close(sl);
	assert_int_equal(pthread_join(t, &ret), 0);
	assert_int_equal((intptr_t)ret, 0);
	assert_true(check_table(&bl) > 100);
	block_lines__free(&bl);
}

/* A file that cannot be opened, or one without line tables: an error and an empty table
 * (every position unknown). */
static void test_block_lines__no_lines(void **state)
{
	struct block_lines bl;
	char path[] = "/tmp/edgeprof-block-lines-XXXXXX";
	int fd;

	assert_true(block_lines__build(&bl, &prog, "/nonexistent/edgeprof-test") < 0);
	assert_int_equal(bl.nfuncs, 0);
	assert_null(block_lines__at(&bl, 0, -1));
	block_lines__free(&bl);
	/* A copy of the program without its DWARF: objcopy is part of binutils. */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	{
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "objcopy --strip-debug /proc/%d/exe %s", (int)getpid(),
			 path);
		assert_int_equal(system(cmd), 0);
	}
	assert_int_equal(block_lines__build(&bl, &prog, path), -ENOENT);
	assert_int_equal(bl.nfuncs, 0);
	block_lines__free(&bl);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_block_lines__equal_to_lookups),
		cmocka_unit_test(test_block_lines__on_another_thread),
		cmocka_unit_test(test_block_lines__no_lines),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
