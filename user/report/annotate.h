/*
 * `edgeprof annotate`: a profile's functions as text, like `perf annotate` and `gcov -b`:
 * for each function (the hottest first, or the ones named, or the ones holding code of a
 * source line) its source lines with their counts (a line's count is the largest count of
 * the blocks holding its code, as the lcov export counts it) and its disassembly block by
 * block, each block with its count and its out-edges with theirs (taken, not taken, switch
 * targets, returns). Source files that cannot be read leave the disassembly only, said in one
 * line.
 */
#ifndef EDGEPROF_USER_REPORT_ANNOTATE_H
#define EDGEPROF_USER_REPORT_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "user/profile/profile.h"
#include "user/report/func_code.h"

struct annotate_opts {
	const char *binary;   /* the profiled binary, NULL: the path the profile records */
	unsigned long top;    /* without function and src_file: this many hottest functions */
	const char *function; /* the functions of this name, or NULL */
	const char *src_file; /* or the functions with code of SRC_FILE:SRC_LINE (a path, or
			       * its last components), or NULL */
	int src_line;
	bool no_source;       /* disassembly only */
	struct source_maps source_maps;
};

/* Writes the annotation of profile P (read from FILE) to OUT as O says. Returns 0, or a
 * negative errno after one pr_err line: the binary cannot be opened or is another build
 * (-ENOENT, -EINVAL), no function matches (-ESRCH), out of memory, or a write error (-EIO). */
int annotate__write(FILE *out, const struct profile *p, const char *file,
		    const struct annotate_opts *o);

#endif
