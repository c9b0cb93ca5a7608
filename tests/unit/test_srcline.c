/*
 * Unit tests of cfg/srcline.c against this very test binary (built with -g): the line of a
 * static function of this file, found through its runtime address minus the load bias; a
 * binary without DWARF; addresses without lines; and DWARF corrupted in memory, which must
 * only lose lines, never crash.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cfg/elf_image.h"
#include "cfg/srcline.h"

#define NO_DWARF_BINARY "/usr/bin/python3.11"

/* Each marker function is on one line, so every line-table row of its code carries that
 * line, whatever the compiler schedules first. */
static const int marker1_line = __LINE__ + 1;
static __attribute__((noinline)) int srcline_marker1(volatile int *p) { return *p * 3 + 1; }

static const int marker2_line = __LINE__ + 1;
static __attribute__((noinline)) int srcline_marker2(volatile int *p) { return *p ^ 0x55; }

/* The main program's load bias (0 for a non-PIE build): the first object dl_iterate_phdr
 * reports is the executable. */
static int first_object_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	*(uintptr_t *)data = info->dlpi_addr;
	return 1;
}

/* The ELF virtual address of function pointer FN of this executable. */
static uint64_t elf_vaddr(int (*fn)(volatile int *))
{
	uintptr_t bias = 0;

	dl_iterate_phdr(first_object_bias, &bias);
	return (uint64_t)((uintptr_t)fn - bias);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int open_self(void **state)
{
	struct elf_image *img = calloc(1, sizeof(*img));

	if (!img || elf_image__open(img, "/proc/self/exe") != 0) {
		free(img);
		return -1;
	}
	*state = img;
	return 0;
}

static int close_image(void **state)
{
	struct elf_image *img = *state;

	elf_image__close(img);
	free(img);
	return 0;
}

static void test_srcline__self_function_line(void **state)
{
	struct elf_image *img = *state;
	volatile int x = 2;
	struct srcline *sl;
	const char *file = NULL;
	int line = 0;

	/* Keep the markers called so that they are not dropped. */
	assert_int_equal(srcline_marker1(&x), 7);
	assert_int_equal(srcline_marker2(&x), 0x57);

	assert_int_equal(srcline__open(&sl, img), 0);
	assert_non_null(sl);
	assert_int_equal(srcline__lookup(sl, elf_vaddr(srcline_marker1), &file, &line), 0);
	assert_non_null(file);
	if (!ends_with(file, "test_srcline.c"))
		print_error("file '%s'\n", file);
	assert_true(ends_with(file, "test_srcline.c"));
	assert_int_equal(line, marker1_line);

	/* A second function, then the first again (the last-range shortcut must not return a
	 * stale answer), then an address inside the first function's body. */
	assert_int_equal(srcline__lookup(sl, elf_vaddr(srcline_marker2), &file, &line), 0);
	assert_true(ends_with(file, "test_srcline.c"));
	assert_int_equal(line, marker2_line);
	assert_int_equal(srcline__lookup(sl, elf_vaddr(srcline_marker1), &file, &line), 0);
	assert_int_equal(line, marker1_line);
	assert_int_equal(srcline__lookup(sl, elf_vaddr(srcline_marker1) + 1, &file, &line), 0);
	assert_int_equal(line, marker1_line);
	srcline__close(sl);
}

/* Addresses outside any compilation unit have no line. */
static void test_srcline__address_without_line(void **state)
{
	struct elf_image *img = *state;
	struct srcline *sl;
	const char *file = NULL;
	int line = 0;

	assert_int_equal(srcline__open(&sl, img), 0);
	assert_int_equal(srcline__lookup(sl, 0, &file, &line), -ENOENT);
	assert_int_equal(srcline__lookup(sl, 0x10, &file, &line), -ENOENT);
	assert_int_equal(srcline__lookup(sl, UINT64_MAX - 1, &file, &line), -ENOENT);
	assert_null(file);
	srcline__close(sl);
}

/* A stripped distribution binary has no DWARF: -ENOENT and no handle. */
static void test_srcline__stripped_binary_has_no_dwarf(void **state)
{
	struct elf_image img = { 0 };
	struct srcline *sl = (struct srcline *)&img; /* must be reset to NULL */

	if (access(NO_DWARF_BINARY, R_OK) != 0)
		skip();
	assert_int_equal(elf_image__open(&img, NO_DWARF_BINARY), 0);
	assert_int_equal(srcline__open(&sl, &img), -ENOENT);
	assert_null(sl);
	elf_image__close(&img);
	srcline__close(NULL);
}

/* Reads the whole file PATH into a malloc'ed buffer. */
static uint8_t *read_file(const char *path, size_t *size)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);
	size_t done = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !(buf = malloc(st.st_size))) {
		close(fd);
		return NULL;
	}
	while (done < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + done, st.st_size - done);

		if (r <= 0) {
			free(buf);
			close(fd);
			return NULL;
		}
		done += r;
	}
	close(fd);
	*size = done;
	return buf;
}

/* File offset and size of the section NAME of the ELF image BUF, or false. */
static bool find_section(const uint8_t *buf, size_t size, const char *name, uint64_t *off,
			 uint64_t *len)
{
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool found = false;

	elf_version(EV_CURRENT);
	elf = elf_memory((char *)buf, size);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0) {
		if (elf)
			elf_end(elf);
		return false;
	}
	while (!found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && strcmp(n, name) == 0 && sh.sh_type != SHT_NOBITS &&
		    sh.sh_offset + sh.sh_size <= size) {
			*off = sh.sh_offset;
			*len = sh.sh_size;
			found = true;
		}
	}
	elf_end(elf);
	return found;
}

/*
 * Corrupts the DWARF of a copy of this binary in several ways (pseudo-random bytes sprinkled
 * over .debug_info, .debug_abbrev, .debug_line and .debug_aranges; each section truncated
 * to garbage) and looks up a range of addresses: every call must return 0 or a negative
 * errno, and any line found must be plausible.
 */
static void test_srcline__corrupt_dwarf_does_not_crash(void **state)
{
	static const char *const sections[] = { ".debug_info", ".debug_abbrev", ".debug_line",
						 ".debug_aranges", ".debug_rnglists" };
	size_t size = 0, s;
	uint8_t *orig = read_file("/proc/self/exe", &size);
	uint8_t *buf;
	uint64_t base = elf_vaddr(srcline_marker1);
	uint32_t rng = 1;
	int mode;

	assert_non_null(orig);
	buf = malloc(size);
	assert_non_null(buf);
	for (s = 0; s < sizeof(sections) / sizeof(sections[0]); s++) {
		uint64_t off, len;

		if (!find_section(orig, size, sections[s], &off, &len) || len == 0)
			continue;
		for (mode = 0; mode < 4; mode++) {
			struct elf_image img = { 0 };
			struct srcline *sl = NULL;
			uint64_t i;
			int err;

			memcpy(buf, orig, size);
			for (i = 0; i < len; i++) {
				rng = rng * 1103515245u + 12345u;
				if (mode == 0 && (rng >> 16) % 13 == 0)
					buf[off + i] = (uint8_t)(rng >> 8); /* sprinkled bytes */
				else if (mode == 1 && i >= len / 2)
					buf[off + i] = 0xff; /* second half all ones */
				else if (mode == 2 && i < 64)
					buf[off + i] = (uint8_t)(rng >> 8); /* header garbage */
				else if (mode == 3)
					buf[off + i] = 0; /* all zero */
			}
			err = elf_image__open_memory(&img, buf, size, "corrupt");
			assert_int_equal(err, 0);
			err = srcline__open(&sl, &img);
			assert_true(err <= 0);
			if (err == 0) {
				const char *file;
				int line;

				for (i = 0; i < 4096; i += 7) {
					err = srcline__lookup(sl, base - 2048 + i, &file, &line);
					assert_true(err == 0 || err == -ENOENT);
					if (err == 0) {
						assert_non_null(file);
						assert_true(line > 0);
					}
				}
				srcline__close(sl);
			} else {
				assert_null(sl);
			}
			elf_image__close(&img);
		}
	}
	free(buf);
	free(orig);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_srcline__self_function_line, open_self,
						close_image),
		cmocka_unit_test_setup_teardown(test_srcline__address_without_line, open_self,
						close_image),
		cmocka_unit_test(test_srcline__stripped_binary_has_no_dwarf),
		cmocka_unit_test(test_srcline__corrupt_dwarf_does_not_crash),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
