/*
 * Source file:line of code addresses, read through libdw from the binary's own DWARF, or from
 * its separate debug file (build-id or .gnu_debuglink, see debuginfo.h) when it has none.
 * Optional: a binary without debug info simply has no lines.
 */
#ifndef EDGEPROF_CFG_SRCLINE_H
#define EDGEPROF_CFG_SRCLINE_H

#include <elfutils/libdw.h>

#include "elf_image.h"

struct srcline;

/* Opens the line tables of IMG (its own, or its separate debug file's). Returns 0 with *SL
 * set, -ENOENT when neither has DWARF (not an error for callers: they print no lines), or
 * another negative errno. */
int srcline__open(struct srcline **sl, const struct elf_image *img);

/* Looks up ADDR: 0 with *FILE (owned by SL) and *LINE set, -ENOENT when no line covers it
 * (line 0, compiler-generated code, counts as none). */
int srcline__lookup(struct srcline *sl, uint64_t addr, const char **file, int *line);

/* The unit DIE holding a line for ADDR into *CU and its line-table row into *ROW (both owned
 * by SL, valid until its next call), for readers of more than file and line (inline_frames.h):
 * 0, or -ENOENT as srcline__lookup. */
int srcline__row(struct srcline *sl, uint64_t addr, Dwarf_Die **cu, Dwarf_Line **row);

void srcline__close(struct srcline *sl);

#endif
