/*
 * Frames to virtual edges (Ball and Larus 3.2, generalised). A frame of the profiled binary
 * that was left without returning (its thread or process ended while it was active) adds one
 * unit of flow on v -> EXIT, where v is the block it was in: the block of the call it was
 * waiting on, or the block it stopped in. A frame entered without being called (a forked
 * child resuming in its parent's frames) adds EXIT -> w, where w is the block whose call it
 * is waiting on (the flow enters w after w's instructions, see struct virtual_edge).
 */
#ifndef EDGEPROF_ESTIMATORS_FRAMES_H
#define EDGEPROF_ESTIMATORS_FRAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "cfg/cfg.h"
#include "propagate.h"

/* Every block of a program, sorted by address, for address -> (function, block). */
struct block_index {
	struct block_ref {
		uint64_t start, end;
		uint32_t func, block;
	} *v;
	size_t n;
};

/* Builds the index of PROG's blocks. Returns 0 or -ENOMEM. */
int block_index__build(struct block_index *bi, const struct cfg_program *prog);

void block_index__free(struct block_index *bi);

/* The block containing ADDR, or NULL. */
const struct block_ref *block_index__find(const struct block_index *bi, uint64_t addr);

enum frame_kind {
	FRAME_LEFT = 0,    /* left without returning */
	FRAME_ENTERED = 1, /* entered without a call */
};

/* Maps one frame at VADDR (an ELF virtual address: a return address, or with ACTIVATION the
 * instruction the frame stopped at) to the virtual edge it needs. Returns 1 with *VE filled,
 * 0 when the frame needs none (its call block's only way out is already a no-return edge to
 * EXIT), -ENOENT when VADDR is in no recovered block (the caller reports it: the affected
 * function's counts will show a conservation violation). */
int frames__virtual_edge(const struct cfg_program *prog, const struct block_index *bi,
			 uint64_t vaddr, enum frame_kind kind, bool activation,
			 struct virtual_edge *ve);

#endif
