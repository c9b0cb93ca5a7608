/*
 * An lcov tracefile (.info, what genhtml and lcov read) from an exact profile of a binary
 * built with -g, never recompiled: per source file, its functions (FN/FNDA: entry line,
 * invocations), its lines (DA: a line's count is the largest count of the blocks holding an
 * instruction of that line, so a line ran exactly when one of its instructions did) and its
 * branches (BRDA: each conditional jump's taken and not-taken counts, "-" when its block
 * never ran), with the LF/LH, FNF/FNH and BRF/BRH totals. Lines come from the binary's DWARF
 * (cfg/srcline.h); code without a line is left out, and so are blocks whose count is unknown
 * and functions with violations.
 */
#ifndef EDGEPROF_USER_EXPORT_LCOV_H
#define EDGEPROF_USER_EXPORT_LCOV_H

#include <stdint.h>
#include <stdio.h>

#include "cfg/cfg.h"
#include "cfg/elf_image.h"
#include "user/profile/profile.h"

struct lcov_stats {
	uint32_t files, lines, lines_hit, branches, functions;
	uint32_t unknown_funcs; /* functions left out: excluded, or violations */
};

/* Writes the tracefile of profile P (of the build IMG, whose CFG is PROG) to OUT, test name
 * TEST (NULL: none); fills ST. Returns 0, -ENOENT when the binary has no line tables, -ENOMEM,
 * or -EIO on a write error (no message printed). */
int lcov__write(FILE *out, const struct profile *p, const struct cfg_program *prog,
		const struct elf_image *img, const char *test, struct lcov_stats *st);

#endif
