/*
 * gcov's JSON intermediate format (`gcov --json-format`, format_version "1" as gcc 12 writes
 * it: a gzip-compressed JSON document) from an exact profile of a binary built with -g, never
 * recompiled: per source file its functions (name, start and end line and column, blocks,
 * blocks executed, invocations) and its lines (count, the function whose block gives the
 * count, whether a block of the line never ran, and per conditional jump on the line two
 * branches: taken, then not taken, the "fallthrough" one). The counts are the lcov export's
 * (line_counts.h): a line's count is the largest count of the blocks holding an instruction
 * of it; a branch of a block that never ran counts 0; "blocks" are edgeprof's blocks, not
 * gcc's; "gcc_version" says "edgeprof VERSION", "data_file" names the profile.
 */
#ifndef EDGEPROF_USER_EXPORT_GCOV_JSON_H
#define EDGEPROF_USER_EXPORT_GCOV_JSON_H

#include <stdint.h>
#include <stdio.h>

#include "cfg/cfg.h"
#include "cfg/elf_image.h"
#include "user/profile/profile.h"

struct gcov_json_stats {
	uint32_t files, lines, functions;
	uint32_t unknown_funcs; /* functions left out: violations */
};

/* Writes the gzip-compressed document of profile P (read from DATA_FILE, of the build IMG,
 * whose CFG is PROG) to OUT; fills ST. Returns 0, -ENOENT when the binary has no line tables,
 * -ENOMEM, or -EIO on a write or compression error (no message printed). */
int gcov_json__write(FILE *out, const struct profile *p, const struct cfg_program *prog,
		     const struct elf_image *img, const char *data_file,
		     struct gcov_json_stats *st);

#endif
