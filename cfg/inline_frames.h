/*
 * The inline frames of a code address from the binary's DWARF: the concrete function that
 * holds it (DW_TAG_subprogram) and the chain of inlined subroutines (DW_TAG_inlined_subroutine)
 * around it, each with its name, its declaration line and the line it is at in it: the line
 * table's row for the innermost frame, the call line (DW_AT_call_line) of the frame inside it
 * for the others, each with its DWARF discriminator (the row's, or the inlined subroutine's
 * DW_AT_GNU_discriminator). This is what a sample profile keys its counts by.
 */
#ifndef EDGEPROF_CFG_INLINE_FRAMES_H
#define EDGEPROF_CFG_INLINE_FRAMES_H

#include <stdint.h>

#include "srcline.h"

struct inline_frame {
	const char *name;       /* linkage name, else name (owned by the DWARF reader) */
	int decl_line;          /* DW_AT_decl_line of the function, 0 when it has none */
	int line;               /* where in the function: the row's line (> 0), or the call's
				 * (0 when DWARF gives none: call sites LLVM merged) */
	unsigned discriminator; /* as DWARF holds it (LLVM's encoded form), 0 when none */
};

struct inline_frames;

/* Prepares to read the inline frames of SL's binary (SL must outlive it). Returns 0 with *IF
 * set, or -ENOMEM. */
int inline_frames__open(struct inline_frames **ifr, struct srcline *sl);

/* The frames at ADDR into FR (at most MAX), outermost (the concrete function) first. Returns
 * their number (>= 1), -ENOENT when no line or no function covers ADDR (line 0 included),
 * -E2BIG when there are more than MAX, or -ENOMEM. The names stay valid while SL is open. */
int inline_frames__at(struct inline_frames *ifr, uint64_t addr, struct inline_frame *fr,
		      int max);

void inline_frames__close(struct inline_frames *ifr);

#endif
