/*
 * x86-64 instruction decoding with capstone, cached per address: each address of a binary is
 * decoded at most once however often the CFG builder revisits it. Besides the control-flow
 * facts the builder needs, it classifies each instruction for probe cost, and keeps from the
 * same decoding what the later per-instruction analyses ask of it (flag liveness, patch
 * windows): the builder's decoder lives on in the program it built (cfg_program.dec), so
 * those analyses never decode an instruction of the CFG again.
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
	/* For the analyses after the build, from the same capstone detail: */
	uint8_t reloc;       /* enum reloc_kind (patch_window.h: patch_reloc__kind) */
	uint8_t quiet;       /* cannot fault nor touch memory (patch_window.h) */
	uint8_t flags_use;   /* flag_liveness__insn_effect: FLAG_* read ... */
	uint8_t flags_def;   /* ... and surely written */
	uint8_t pad;         /* DINSN_PAD_* */
	uint8_t ntaken;      /* code addresses the instruction takes (patch_insn__taken), */
	uint32_t taken;      /* ... at decoder.taken[taken, taken + ntaken) */
};

#define DINSN_PAD_NOP_INT3 0x1 /* capstone calls it nop or int3 */
#define DINSN_PAD_XCHG_AX 0x2  /* 66 90 (xchg %ax,%ax) */

struct decoder {
	csh cs;          /* detail on */
	cs_insn *scratch;
	const struct elf_image *img;
	struct dinsn *insns;
	size_t n, cap;
	/* addr -> insns[] index + 1 (0: not decoded yet, UINT32_MAX: not an instruction), as
	 * lazily allocated chunks of 4096 addresses per executable section. */
	uint32_t ***chunks; /* [section][chunk] */
	size_t nsecs;       /* of the image when opened (closing never reads the image) */
	size_t *nchunks;    /* [section] */
	const struct elf_section *last_sec; /* the executable section of the last lookup */
	bool disjoint;      /* the image's sections are sorted and do not overlap */
	uint64_t *taken;    /* see dinsn.taken */
	size_t ntaken, taken_cap;
	uint64_t ndecoded;   /* by capstone (not preloaded) */
	/* Set while insns and taken are the preloaded arrays, lent (decoder__preload): called
	 * with release_ctx once they are no longer used (copied on the first growth, or at
	 * close). */
	void (*release)(void *ctx);
	void *release_ctx;
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

/* The decoder's cache as flat arrays, valid until the next decoder__get or decoder__index:
 * every instruction decoded so far (*INSNS, *N of them, each with its own address) and the
 * taken addresses they index (*TAKEN, *NTAKEN), for keeping across runs (decoder__preload). */
void decoder__records(const struct decoder *d, const struct dinsn **insns, size_t *n,
		      const uint64_t **taken, size_t *ntaken);

/* Fills D, open and still empty, with the records decoder__records gave for an image with the
 * same bytes (by the same code: the caller proves both), as if D had decoded them itself:
 * their later lookups decode nothing, and D->ndecoded stays 0. Returns 0; -EINVAL when a
 * record cannot be one of this image's (outside its executable sections, a size of 0 or over
 * 15, an unknown flow, a taken index past NTAKEN, an address given twice), D left empty;
 * -ENOMEM. With RELEASE (else NULL), the arrays are lent, not copied: D reads them in place
 * (they must stay valid and unchanged) and calls RELEASE(CTX) once it no longer does, at
 * decoder__close at the latest; on failure they are not taken (RELEASE is not called). */
int decoder__preload(struct decoder *d, const struct dinsn *insns, size_t n,
		     const uint64_t *taken, size_t ntaken, void (*release)(void *ctx), void *ctx);

/* Decodes ADDR with full capstone detail into the decoder's scratch instruction, for the
 * analyses that need operands (jump tables). Returns NULL as decoder__get does. Never
 * cached: prefer the facts of decoder__get where they suffice. */
const cs_insn *decoder__detail(struct decoder *d, uint64_t addr);

/* The general-purpose register family (0..15 for rax..r15) of a capstone register, or -1
 * (rip, segment and vector registers, flags). */
int x86_reg_family(unsigned reg);

#endif
