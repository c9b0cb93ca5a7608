/*
 * What the coverage exports (lcov.h, gcov_text.h, gcov_json.h) share: an exact profile's counts by source
 * line, through the binary's DWARF (cfg/srcline.h). Each instruction of a block with a known
 * count gives its line that count, each conditional jump its line its taken and not-taken
 * counts, each function its entry line its invocations; code without a line, blocks whose
 * count is unknown and functions with violations are left out. File names are interned:
 * one file's entries compare equal as pointers.
 */
#ifndef EDGEPROF_USER_EXPORT_LINE_COUNTS_H
#define EDGEPROF_USER_EXPORT_LINE_COUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfg/cfg.h"
#include "cfg/elf_image.h"
#include "user/profile/profile.h"

struct lc_line {
	const char *file;
	int line;
	int64_t count; /* the largest count of the blocks holding an instruction of the line */
	const char *func;     /* the function of the block giving COUNT (the CFG's name) */
	bool unexecuted;      /* a block holding an instruction of the line never ran */
};

struct lc_branch {
	const char *file;
	int line;
	uint32_t func, block;
	int64_t taken, not_taken; /* -1: the block never ran */
};

struct lc_func {
	const char *file;
	int line;
	const char *name; /* the CFG's */
	int column;       /* the entry's column in the line table, 0 when none */
	int end_line, end_column; /* its last line in the entry's file, and that row's column */
	int64_t count;
	int64_t returned; /* returns and tail calls out of it (known counts only) */
	uint32_t nblocks, nblocks_ran;
};

struct line_counts {
	struct lc_line *lines;       /* sorted by file name, line; one per line */
	size_t nlines, lines_cap;
	struct lc_branch *branches;  /* sorted by file name, line, function, block */
	size_t nbranches, branches_cap;
	struct lc_func *funcs;       /* sorted by file name, line, name */
	size_t nfuncs, funcs_cap;
	char **files;                /* interned file names, in the order met */
	size_t nfiles, files_cap;
	char **sorted;               /* the same, sorted */
	uint32_t unknown_funcs;      /* functions left out: violations */
};

/* Gathers the line counts of profile P (of the build IMG, whose CFG is PROG) into C.
 * Returns 0, -ENOENT when the binary has no line tables, or -ENOMEM (C then holds nothing). */
int line_counts__build(struct line_counts *c, const struct profile *p,
		       const struct cfg_program *prog, const struct elf_image *img);

void line_counts__free(struct line_counts *c);

#endif
