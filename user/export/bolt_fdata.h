/*
 * BOLT's profile text ("fdata", what `llvm-bolt -data=FILE` reads) from an exact profile, in
 * the form a binary instrumented by `llvm-bolt -instrument` writes it:
 *
 *   1 F OFF 1 G OFF 0 COUNT      a branch (F == G) or a call or tail call (G's offset 0)
 *   0 [unknown] 0 1 F 0 0 COUNT  entries into F that no recorded call explains
 *
 * offsets in lowercase hex from the function's start, names as BOLT gives them (a global
 * symbol's name; a local one's "name/N", N counting the local symbols of that name in address
 * order; a PLT stub's "name@PLT"), zero counts left out, no header line. A branch record runs
 * from the branch instruction (a taken jcc, a jmp, each jump-table target of a jmp *); a
 * fall-through from the last instruction of the block it leaves (the jcc itself, or whatever
 * instruction ends a block that the next one is a jump target of, a call included, counted
 * as the call's executions), as BOLT's blocks are made: a call does not end one.
 * What edgeprof cannot write: the targets of indirect calls (counted as entry records of the
 * callees instead, so each function's entry total is the same), counts that are unknown
 * (edges of functions with block counts only), and functions whose counts are not exact
 * (violations).
 */
#ifndef EDGEPROF_USER_EXPORT_BOLT_FDATA_H
#define EDGEPROF_USER_EXPORT_BOLT_FDATA_H

#include <stdint.h>
#include <stdio.h>

#include "cfg/cfg.h"
#include "cfg/elf_image.h"
#include "user/profile/profile.h"

struct bolt_fdata_stats {
	uint64_t branches, calls, entries; /* records written */
	uint32_t funcs;                    /* functions with a record */
	uint64_t unknown_records;          /* records left out: their count is unknown */
	uint32_t unknown_funcs;            /* functions left out: excluded, or violations */
	uint32_t mismatched_funcs;         /* functions whose CFG differs from the profile's */
};

/* Writes the fdata of profile P (of the build IMG, whose CFG is PROG) to OUT; fills ST.
 * Returns 0, -ENOMEM, or -EIO on a write error (no message printed). */
int bolt_fdata__write(FILE *out, const struct profile *p, const struct cfg_program *prog,
		      const struct elf_image *img, struct bolt_fdata_stats *st);

#endif
