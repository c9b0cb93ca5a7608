/*
 * LLVM's text sample profile (what `clang -fprofile-sample-use=FILE` and `llvm-profdata
 * show --sample` read) from an exact profile of a binary built with -g:
 *
 *   FUNC:TOTAL:HEAD                 a function that ran: HEAD its invocations
 *    OFF[.DISC]: COUNT [G:N ...]    a line of it: OFF its line minus the function's
 *                                   DW_AT_decl_line (mod 2^16), DISC the line's base
 *                                   discriminator; G:N the direct calls to G made there
 *    OFF[.DISC]: CALLEE:TOTAL       a call site where CALLEE was inlined, followed by
 *     ...                           CALLEE's own lines, one space deeper (and so on)
 *
 * Lines, discriminators and inlined call sites come from the DWARF (cfg/inline_frames.h);
 * names are the functions' linkage names, else their names. A line's count is, as AutoFDO
 * makes it from samples, the largest over its instructions (in one inline context) of the
 * instruction's block count times the duplication factor LLVM encoded in its discriminator
 * (loop unrolling and vectorisation with -fdebug-info-for-profiling; 1 otherwise); TOTAL is
 * the sum of the counts of a function's lines and of its inlined call sites' TOTALs. Lines of
 * a function that ran are written with their count even when it is 0; functions and inlined
 * call sites whose TOTAL is 0 are left out, and so are instructions without a line (line 0,
 * or an inlined subroutine's call line 0),
 * blocks whose count is unknown, functions with violations, indirect calls (their targets are
 * not recorded) and calls to functions outside the binary or without DWARF. Code that only an
 * unresolved indirect jump reaches is not in the CFG, so its lines are missing too (counted
 * in partial_funcs).
 */
#ifndef EDGEPROF_USER_EXPORT_LLVM_SAMPLE_H
#define EDGEPROF_USER_EXPORT_LLVM_SAMPLE_H

#include <stdint.h>
#include <stdio.h>

#include "cfg/cfg.h"
#include "cfg/elf_image.h"
#include "user/profile/profile.h"

struct llvm_sample_stats {
	uint32_t funcs;           /* functions written (top level) */
	uint64_t lines, inlined;  /* body lines and inlined call sites written, at every depth */
	uint64_t targets;         /* call targets written */
	uint32_t unknown_funcs;   /* functions left out: violations */
	uint32_t partial_funcs;   /* functions written that have unresolved indirect jumps: code
				   * reached only through them is not in the CFG, not written */
	uint64_t no_line;         /* counted instructions without a line or function in DWARF */
};

/* Writes the sample profile of profile P (of the build IMG, whose CFG is PROG) to OUT; fills
 * ST. Returns 0, -ENOENT when the binary has no line tables, -ENOMEM, or -EIO on a write
 * error (no message printed). */
int llvm_sample__write(FILE *out, const struct profile *p, const struct cfg_program *prog,
		       const struct elf_image *img, struct llvm_sample_stats *st);

#endif
