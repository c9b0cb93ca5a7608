/*
 * Which functions a session profiles (`run` and `record` --only / --exclude): function-name
 * globs and `file:GLOB` source-file globs, applied to every profiled object (the binary and
 * each --lib library). A function is selected when no --only is given or one --only pattern
 * matches it, and no --exclude pattern does; the others get no counters at all
 * (placement_options.select, PLAN_EXCLUDED "not selected").
 */
#ifndef EDGEPROF_USER_FUNC_SELECT_H
#define EDGEPROF_USER_FUNC_SELECT_H

#include <stdbool.h>
#include <stddef.h>

#include "cfg/cfg.h"

#define FUNC_SELECT_MAX 64

struct func_pattern {
	const char *glob; /* the name glob, or the file glob after "file:" */
	bool file;        /* matched against the function's source file */
	bool exclude;     /* --exclude (else --only) */
	size_t matched;   /* functions it matched, over every object applied to */
};

struct func_select {
	struct func_pattern pat[FUNC_SELECT_MAX];
	size_t n;
	bool has_only;
};

/* Adds PATTERN (--only when EXCLUDE is false); PATTERN must outlive FS. Returns 0, or
 * -E2BIG when FS holds FUNC_SELECT_MAX patterns already, -EINVAL for an empty glob. */
int func_select__add(struct func_select *fs, const char *pattern, bool exclude);

/* Whether FS selects anything less than every function (it holds a pattern). */
bool func_select__active(const struct func_select *fs);

/* Fills SELECT[0..prog->nfuncs) for PROG (its image's line tables give the source files,
 * looked up only when a file: pattern is given) and counts each pattern's matches. Returns
 * 0, or -ENOMEM. */
int func_select__apply(struct func_select *fs, const struct cfg_program *prog, bool *select);

/* After every object was applied: 0 when some pattern matched a function (each one that
 * matched none is warned about), else -ENOENT after one error line naming the patterns. */
int func_select__check(const struct func_select *fs);

#endif
