/*
 * x86-64 instruction decoding with capstone, cached per address: each address of a binary is
 * decoded at most once however often the CFG builder revisits it. Besides the control-flow
 * facts the builder needs, it classifies each instruction for probe cost.
 */
#ifndef EDGEPROF_CFG_DECODE_H
#define EDGEPROF_CFG_DECODE_H

#include <capstone/capstone.h>

#include "addr_map.h"
#include "cfg.h"
#include "elf_image.h"

/* A decoded instruction as the builder sees it. */
struct dinsn {
	uint64_t addr;
	uint64_t target; /* direct jcc/jmp/call: destination; indirect through [rip+disp]:
			  * the memory slot's address; else 0 */
	uint8_t size;
	uint8_t flow;        /* enum insn_flow */
	uint8_t probe_class; /* enum insn_probe_class */
	uint8_t cc;          /* see struct cfg_insn */
	uint8_t rip_slot;    /* indirect through [rip+disp]: target is the slot */
};

struct decoder {
	csh cs;          /* detail on */
	cs_insn *scratch;
	const struct elf_image *img;
	struct dinsn *insns;
	size_t n, cap;
	/* addr -> insns[] index + 1 (0: not decoded yet, UINT32_MAX: not an instruction), as
	 * lazily allocated chunks of 4096 addresses per executable section. */
	uint32_t ***chunks; /* [section][chunk] */
	uint64_t ndecoded;
};

/* Opens capstone for x86-64 with detail on. Returns 0 or a negative errno (message set). */
int decoder__open(struct decoder *d, const struct elf_image *img);

void decoder__close(struct decoder *d);

/* Decodes (or finds in the cache) the instruction at ADDR. Returns a pointer valid until the
 * next decoder__get call, or NULL when ADDR is not in an executable section or the bytes are
 * not a valid instruction. */
const struct dinsn *decoder__get(struct decoder *d, uint64_t addr);

/* The cache index of the instruction at ADDR (decoding it if needed), or -1 as for
 * decoder__get. Indices stay valid for the decoder's lifetime: d->insns[index]. */
long decoder__index(struct decoder *d, uint64_t addr);

/* Decodes ADDR with full capstone detail into the decoder's scratch instruction, for the
 * analyses that need operands (jump tables). Returns NULL as decoder__get does. */
const cs_insn *decoder__detail(struct decoder *d, uint64_t addr);

/* The general-purpose register family (0..15 for rax..r15) of a capstone register, or -1
 * (rip, segment and vector registers, flags). */
int x86_reg_family(unsigned reg);

#endif
