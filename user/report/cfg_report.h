/*
 * Report writers for recovered control-flow graphs: the function table, one function in
 * detail, Graphviz DOT and streamed JSON. They only print; the command (cmd_cfg.c) decides
 * what to compute. Reusable by later commands that show CFGs (static, report).
 */
#ifndef EDGEPROF_USER_CFG_REPORT_H
#define EDGEPROF_USER_CFG_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "cfg/cfg.h"
#include "cfg/induction.h"
#include "cfg/dominators.h"
#include "cfg/loops.h"
#include "cfg/srcline.h"

/* Dominators and loops of one function. */
struct cfg_func_info {
	struct cfg_domtree dom;
	struct cfg_loops loops;
	bool analyzed; /* dom and loops are valid (false for a function without blocks) */
};

/* What the writers read. INFO (indexed like prog->funcs) and SL may be NULL. */
struct cfg_report {
	const struct cfg_program *prog;
	const struct elf_image *img;
	struct srcline *sl;
	const struct cfg_func_info *info;
	const struct cfg_induction *ind; /* loops counted by induction, or NULL */
	FILE *out;
};

/* Computes F's dominator tree and loops into FI. Returns 0 or a negative errno (message in
 * cfg_strerror() when the library set one). A function without blocks is left unanalyzed. */
int cfg_func_info__compute(struct cfg_func_info *fi, const struct cfg_func *f);

/* Releases FI's trees; safe on a zeroed FI. */
void cfg_func_info__release(struct cfg_func_info *fi);

/* Prints one line per function (address, blocks, edges, loops, instructions, flags, name)
 * and a summary line. Returns 0, or -EIO when writing failed. */
int cfg_report__table(const struct cfg_report *r);

/* Prints F in detail: blocks (with source lines and (post-)dominators), edges, loops, calls,
 * jump tables and unresolved jumps. FI and PDOM may be NULL. Returns 0 or -EIO. */
int cfg_report__func(const struct cfg_report *r, const struct cfg_func *f,
		     const struct cfg_func_info *fi, const struct cfg_domtree *pdom);

/* Prints F as a Graphviz digraph: blocks labelled with address and line, edges with their
 * kind, back edges styled. FI may be NULL (no back-edge styling). Returns 0 or -EIO. */
int cfg_report__dot(const struct cfg_report *r, const struct cfg_func *f,
		    const struct cfg_func_info *fi);

/* Streams the JSON document {"binary":{...},"functions":[...]} (plus "stats": EXTRA when
 * EXTRA is not NULL; the reference is not stolen) with every function, or only ONLY when not
 * NULL, dumping one function object at a time. Returns 0, -ENOMEM or -EIO. */
int cfg_report__json(const struct cfg_report *r, const struct cfg_func *only, json_t *extra);

/* Space-separated names of F's flags ("unresolved noreturn"), "-" when none; uses FI for
 * "irreducible". Writes into BUF of SIZE bytes and returns it. */
const char *cfg_report__flags(const struct cfg_report *r, const struct cfg_func *f,
			      const struct cfg_func_info *fi, char *buf, size_t size);

#endif
