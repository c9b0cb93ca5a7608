/*
 * A profiled function's code as the reports show it (`report --html`, `annotate`): the
 * binary opened for disassembly (capstone, AT&T syntax) and source lines (cfg/srcline.h),
 * each block's instructions with their file:line, each block's out-edges, the source lines
 * of the function's code with their counts (a line's count is the largest known count of the
 * blocks holding its code, as `export --format lcov` counts it), the source files read from
 * disk (with --source-map OLD=NEW applied) and walked with a few lines of context, and the
 * executed functions ordered hottest first. Rendering is the callers'.
 */
#ifndef EDGEPROF_USER_REPORT_FUNC_CODE_H
#define EDGEPROF_USER_REPORT_FUNC_CODE_H

#include <capstone/capstone.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfg/elf_image.h"
#include "cfg/srcline.h"
#include "user/profile/profile.h"

/* The profiled binary, opened for disassembly and source lines. */
struct func_code {
	struct elf_image img;
	bool have_img;
	char img_note[600]; /* why there is no disassembly, when there is none */
	struct srcline *sl; /* NULL: no source lines (src_note says why) */
	char src_note[160];
	csh cs;
	bool have_cs;
};

/* One disassembled instruction of a function. */
struct dline {
	uint64_t addr, target; /* target: a direct jump's or call's, else 0 */
	uint32_t block;
	const char *file;      /* owned by the srcline handle; NULL when none */
	int line;
	char text[208];        /* "mnemonic operands" */
};

/* A source line's count within one function. */
struct sline {
	const char *file;
	int line;
	int64_t count; /* the largest known count of the blocks holding its code, or unknown */
};

/* Opens BINARY (NULL: the path profile P records; FILE is P's name, for messages) into C.
 * Returns 0, also when it cannot be opened (then !C->have_img and C->img_note says why, with
 * nothing printed), or -EINVAL after one pr_err line when it is another build than P's.
 * C is to be closed with func_code__close either way. */
int func_code__open(struct func_code *c, const struct profile *p, const char *binary);

void func_code__close(struct func_code *c);

/* F's instructions block by block into *OUT (*N of them, to be freed), each with its line
 * when C has line tables. Needs C->have_cs. Returns 0 or -ENOMEM. */
int func_code__disassemble(struct func_code *c, const struct profile_func *f,
			   struct dline **out, size_t *n);

/* The out-edges of every block of F: *EDGES holds edge ids grouped by source block, *FIRST[b]
 * the start of block b's group ((*FIRST)[nblocks] the end). Both to be freed, also on
 * failure. Returns 0 or -ENOMEM. */
int func_code__out_edges(const struct profile_func *f, uint32_t **first, uint32_t **edges);

/* Whether flow conservation fails at vertex V of F (a block index, or nblocks: EXIT). */
bool func_code__is_violation(const struct profile_func *f, uint32_t v);

/* The source lines of D[0, N) (F's disassembly) with their counts into *OUT (*M of them, to be
 * freed), sorted by file name and line, one per line. Returns 0 or -ENOMEM. */
int func_code__lines(const struct profile_func *f, const struct dline *d, size_t n,
		     struct sline **out, size_t *m);

#define SOURCE_MAPS_MAX 16

/* --source-map OLD=NEW options: a source path starting with OLD is read from NEW + the rest. */
struct source_maps {
	const char *map[SOURCE_MAPS_MAX];
	size_t n;
};

/* Adds option argument ARG to M: 0, -EINVAL when ARG is not OLD=NEW (OLD not empty), -E2BIG
 * when M holds SOURCE_MAPS_MAX already. */
int source_maps__add(struct source_maps *m, const char *arg);

/* PATH with the first of M's maps whose OLD starts it applied, into BUF; PATH itself when
 * none applies. */
const char *func_code__map_source(const struct source_maps *m, const char *path, char *buf,
				  size_t size);

/* Reads PATH (a regular file of at most 64 MiB) into a NUL-terminated buffer, with the start
 * of each line into *LINES (*N of them, to be freed). Returns the buffer (to be freed), or
 * NULL with errno set. */
char *func_code__read_source(const char *path, char ***lines, size_t *n);

/* What func_code__walk_source shows, one call per line. */
struct source_walk_ops {
	/* A line with code, S; TEXT its text, or NULL when past the end of the file. */
	void (*code)(void *arg, const struct sline *s, const char *text);
	/* A line without code shown as context. */
	void (*context)(void *arg, int line, const char *text);
	/* Lines skipped between two shown ones. */
	void (*gap)(void *arg);
};

/* Walks the lines of one source file with code, S[0, N) sorted by line, with CONTEXT lines
 * of TEXT[0, NTEXT) around each, the lines between them skipped (one gap call); with TEXT
 * NULL the lines with code only (text ""). */
void func_code__walk_source(const struct sline *s, size_t n, char **text, size_t ntext,
			    int context, const struct source_walk_ops *ops, void *arg);

/* The indices of P's executed functions (not excluded, a non-zero block count), hottest
 * (most block executions) first, ties by address, into *ORDER (*N of them, to be freed).
 * Returns 0 or -ENOMEM. */
int func_code__hottest(const struct profile *p, uint32_t **order, size_t *n);

#endif
