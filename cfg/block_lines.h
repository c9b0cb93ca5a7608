/*
 * The source file:line of every function entry and block start of a program, looked up once
 * (srcline.h) through an image of its own: so the table can be made on another thread while
 * the program's own image is in use, e.g. while the profiled program runs.
 */
#ifndef EDGEPROF_CFG_BLOCK_LINES_H
#define EDGEPROF_CFG_BLOCK_LINES_H

#include "cfg.h"
#include "elf_image.h"
#include "srcline.h"

struct block_line {
	const char *file; /* owned by the table; NULL: no line */
	int line;
};

struct block_lines {
	struct block_line **funcs; /* per function of the program: [0] its entry, [1 + k] block k */
	size_t nfuncs;
	struct srcline *sl;	   /* owns the file names */
	struct elf_image img;	   /* the image the lines were read through */
};

/* Fills BL with the lines of PROG's functions and blocks, read from the file at PATH (the
 * program's; its DWARF or separate debug file). PROG is only read. Returns 0; -ENOENT when the
 * file has no line tables (BL is then empty: every position unknown); or another negative
 * errno (cfg_strerror() says why), BL empty. */
int block_lines__build(struct block_lines *bl, const struct cfg_program *prog, const char *path);

/* Block K of function I (K = -1: its entry), or NULL when unknown. */
const struct block_line *block_lines__at(const struct block_lines *bl, size_t i, long k);

/* Releases BL; safe on a zeroed or already-freed table. */
void block_lines__free(struct block_lines *bl);

#endif
