/*
 * Function discovery: where functions start and what they are called. Sources, in order of
 * trust: .symtab FUNC symbols (the file's own, or for a stripped file the .symtab of its
 * separate debug file, found by build-id or .gnu_debuglink: debuginfo.h); .dynsym plus the
 * starts of .eh_frame FDEs (read through libdw), so stripped distro binaries work without
 * debug files; plus the entry point and init/fini arrays. PLT
 * stubs (and GOT slots) are named from the dynamic relocations so calls into libc are known.
 */
#ifndef EDGEPROF_CFG_SYMBOLS_H
#define EDGEPROF_CFG_SYMBOLS_H

#include "elf_image.h"

enum func_source {
	FUNC_SRC_SYMTAB = 1 << 0,
	FUNC_SRC_DYNSYM = 1 << 1,
	FUNC_SRC_FDE = 1 << 2,
	FUNC_SRC_ENTRY = 1 << 3,
	FUNC_SRC_INIT_ARRAY = 1 << 4,
	FUNC_SRC_CALL = 1 << 5, /* found as the target of a direct call */
};

struct func_start {
	uint64_t addr;
	uint64_t size;    /* from the symbol or the FDE; 0 when unknown */
	char *name;       /* owned; synthesised "fun_<hex>" when no symbol names it */
	unsigned sources; /* enum func_source bits */
	bool fragment;    /* a split-off part of another function (gcc's NAME.cold) */
	uint64_t parent;  /* for fragments: the parent function's start, 0 if unknown */
	bool mid_frame;   /* its FDE says it starts inside a frame already set up (not entered
			   * by a call): gcc's split-off cold part of a function */
};

/* A PLT stub or a GOT slot resolved to the external symbol it reaches. */
struct ext_ref {
	uint64_t addr; /* stub address (plt) or slot address (got) */
	char *name;    /* owned, without version suffix */
};

/* An FDE that names a language-specific data area (C++ exception tables). */
struct fde_lsda {
	uint64_t start; /* the FDE's initial location */
	uint64_t lsda;  /* LSDA address (in .gcc_except_table) */
};

/* A sized data object from .symtab (e.g. a jump or dispatch table). */
struct data_object {
	uint64_t addr, size;
};

struct symbols {
	struct func_start *funcs; /* sorted by addr, unique */
	struct data_object *objects; /* OBJECT symbols with a size, sorted by addr */
	size_t nobjects;
	size_t nfuncs;
	struct ext_ref *plt;      /* PLT stubs, sorted by addr */
	size_t nplt;
	struct ext_ref *got;      /* GOT slots with JUMP_SLOT / GLOB_DAT relocs, sorted */
	size_t ngot;
	bool stripped;            /* no .symtab of its own */
	char *debug_file;         /* owned: the separate debug file whose .symtab named the
				   * functions of a stripped file (debuginfo.h), or NULL */
	size_t nfde;              /* FDEs read */
	struct fde_lsda *lsdas;   /* FDEs with an LSDA, in .eh_frame order */
	size_t nlsdas;
};

/* Discovers the function starts and the PLT/GOT names of IMG. Returns 0 or a negative errno
 * (message in cfg_strerror()). A corrupt .eh_frame is an error, not a silent partial list. */
int symbols__load(struct symbols *syms, const struct elf_image *img);

void symbols__free(struct symbols *syms);

/* The function starting exactly at ADDR, or NULL. */
const struct func_start *symbols__func_at(const struct symbols *syms, uint64_t addr);

/* Adds a start (e.g. a call target found during traversal) if none is there yet; returns it
 * or NULL on allocation failure. Keeps the array sorted; pointers into it become invalid. */
struct func_start *symbols__add(struct symbols *syms, uint64_t addr, unsigned source);

/* Bytes from ADDR to the end of the sized data object containing it, or 0 when no object
 * symbol covers ADDR (always 0 for stripped files). */
uint64_t symbols__object_remaining(const struct symbols *syms, uint64_t addr);

/* The external name of the PLT stub at ADDR, or NULL. */
const char *symbols__plt_name(const struct symbols *syms, uint64_t addr);

/* The external name whose GOT slot is at ADDR, or NULL. */
const char *symbols__got_name(const struct symbols *syms, uint64_t addr);

#endif
