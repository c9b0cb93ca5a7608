/*
 * Source-line counts of an exact profile (see line_counts.h): every counted instruction's
 * line with its block's count, every conditional jump's two counts and every function's entry
 * line, gathered through the binary's DWARF and grouped by file and line.
 */
#include "user/export/line_counts.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/array.h"
#include "cfg/srcline.h"

/* The interned copy of file name F (srcline's own strings live only as long as it). */
static const char *intern(struct line_counts *c, const char *f)
{
	for (size_t i = c->nfiles; i-- > 0;)
		if (!strcmp(c->files[i], f))
			return c->files[i];
	if (array_grow((void **)&c->files, &c->files_cap, c->nfiles + 1, sizeof(*c->files), 256))
		return NULL;
	c->files[c->nfiles] = strdup(f);
	return c->files[c->nfiles] ? c->files[c->nfiles++] : NULL;
}

/* The file and line of ADDR into *FILE and *LINE; false when it has none. */
static bool where(struct line_counts *c, struct srcline *sl, uint64_t addr, const char **file,
		  int *line, int *err)
{
	const char *f;

	if (srcline__lookup(sl, addr, &f, line) || *line <= 0)
		return false;
	*file = intern(c, f);
	if (!*file)
		*err = -ENOMEM;
	return *file != NULL;
}

/* The column of ADDR's line-table row, 0 when none. */
static int column_of(struct srcline *sl, uint64_t addr)
{
	Dwarf_Die *cu;
	Dwarf_Line *row;
	int col = 0;

	if (srcline__row(sl, addr, &cu, &row) || dwarf_linecol(row, &col))
		return 0;
	return col;
}

static int64_t edge_count(const struct profile_func *pf, const struct cfg_func *f, uint32_t b,
			  uint8_t kind)
{
	for (uint32_t k = 0; k < f->blocks[b].nsucc; k++) {
		uint32_t e = f->succ[f->blocks[b].first_succ + k];

		if (f->edges[e].kind == kind)
			return pf->edges[e].count;
	}
	return -1;
}

static int gather_func(struct line_counts *c, struct srcline *sl, size_t fi,
		       const struct cfg_func *f, const struct profile_func *pf)
{
	const char *file;
	int line, err = 0;

	for (uint32_t b = 0; b < f->nblocks; b++) {
		int64_t n = pf->blocks[b].count;
		const struct cfg_block *bl = &f->blocks[b];
		const struct cfg_insn *last = &f->insns[bl->first_insn + bl->ninsns - 1];

		if (n < 0)
			continue;
		for (uint32_t k = 0; k < bl->ninsns; k++) {
			if (!where(c, sl, f->insns[bl->first_insn + k].addr, &file, &line, &err))
				continue;
			if (array_grow((void **)&c->lines, &c->lines_cap, c->nlines + 1,
				       sizeof(*c->lines), 256))
				return -ENOMEM;
			c->lines[c->nlines++] = (struct lc_line){ file, line, n, f->name, n == 0 };
		}
		if (last->flow == INSN_JCC && where(c, sl, last->addr, &file, &line, &err)) {
			int64_t t = edge_count(pf, f, b, EDGE_TAKEN);
			int64_t nt = edge_count(pf, f, b, EDGE_NOT_TAKEN);

			if (t < 0 || nt < 0)
				continue; /* unknown (block counts only) */
			if (array_grow((void **)&c->branches, &c->branches_cap, c->nbranches + 1,
				       sizeof(*c->branches), 256))
				return -ENOMEM;
			c->branches[c->nbranches++] = (struct lc_branch){
				file, line, (uint32_t)fi, b, n ? t : -1, n ? nt : -1
			};
		}
	}
	if (pf->count >= 0 && where(c, sl, f->entry, &file, &line, &err)) {
		uint32_t ran = 0;
		int64_t ret = 0;
		int end_line = line, col = column_of(sl, f->entry), end_col = col;
		const char *g;
		int l;

		for (uint32_t k = 0; k < f->ninsns; k++)
			if (where(c, sl, f->insns[k].addr, &g, &l, &err) && g == file && l > end_line) {
				end_line = l;
				end_col = column_of(sl, f->insns[k].addr);
			}

		for (uint32_t b = 0; b < f->nblocks; b++)
			ran += pf->blocks[b].count > 0;
		for (uint32_t e = 0; e < f->nedges; e++)
			if ((f->edges[e].kind == EDGE_RETURN || f->edges[e].kind == EDGE_TAIL_CALL) &&
			    pf->edges[e].count > 0)
				ret += pf->edges[e].count;
		if (array_grow((void **)&c->funcs, &c->funcs_cap, c->nfuncs + 1,
			       sizeof(*c->funcs), 256))
			return -ENOMEM;
		c->funcs[c->nfuncs++] = (struct lc_func){ file,	     line,    f->name,	 col,
							  end_line,  end_col, pf->count, ret,
							  f->nblocks, ran };
	}
	return err;
}

static int cmp_line(const void *a, const void *b)
{
	const struct lc_line *x = a, *y = b;
	int d = strcmp(x->file, y->file);

	return d ? d : (x->line > y->line) - (x->line < y->line);
}

static int cmp_branch(const void *a, const void *b)
{
	const struct lc_branch *x = a, *y = b;
	int d = strcmp(x->file, y->file);

	if (d)
		return d;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	return (x->block > y->block) - (x->block < y->block);
}

static int cmp_func(const void *a, const void *b)
{
	const struct lc_func *x = a, *y = b;
	int d = strcmp(x->file, y->file);

	if (d)
		return d;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}


int line_counts__build(struct line_counts *c, const struct profile *p,
		       const struct cfg_program *prog, const struct elf_image *img)
{
	struct srcline *sl = NULL;
	size_t n;
	int err;

	memset(c, 0, sizeof(*c));
	err = srcline__open(&sl, img);
	if (err)
		return err;
	for (size_t i = 0; i < prog->nfuncs && !err; i++) {
		const struct cfg_func *f = &prog->funcs[i];
		const struct profile_func *pf = profile__func_at(p, f->entry);

		if (!pf || pf->status == PLAN_EXCLUDED || pf->nblocks != f->nblocks)
			continue;
		if (pf->nviolations) {
			c->unknown_funcs++;
			continue;
		}
		err = gather_func(c, sl, i, f, pf);
	}
	srcline__close(sl);
	if (err) {
		line_counts__free(c);
		return err;
	}
	qsort(c->lines, c->nlines, sizeof(*c->lines), cmp_line);
	/* One entry per line: the largest count of its instructions' blocks. */
	n = 0;
	for (size_t i = 0; i < c->nlines; i++) {
		struct lc_line *last = n ? &c->lines[n - 1] : NULL;

		if (last && last->file == c->lines[i].file && last->line == c->lines[i].line) {
			if (c->lines[i].count > last->count ||
			    (c->lines[i].count == last->count &&
			     strcmp(c->lines[i].func, last->func) < 0)) {
				last->count = c->lines[i].count;
				last->func = c->lines[i].func;
			}
			last->unexecuted |= c->lines[i].unexecuted;
		} else {
			c->lines[n++] = c->lines[i];
		}
	}
	c->nlines = n;
	qsort(c->branches, c->nbranches, sizeof(*c->branches), cmp_branch);
	qsort(c->funcs, c->nfuncs, sizeof(*c->funcs), cmp_func);
	c->sorted = malloc((c->nfiles ? c->nfiles : 1) * sizeof(*c->sorted));
	if (!c->sorted) {
		line_counts__free(c);
		return -ENOMEM;
	}
	memcpy(c->sorted, c->files, c->nfiles * sizeof(*c->sorted));
	qsort(c->sorted, c->nfiles, sizeof(*c->sorted), cmp_str);
	return 0;
}

void line_counts__free(struct line_counts *c)
{
	for (size_t k = 0; k < c->nfiles; k++)
		free(c->files[k]);
	free(c->files);
	free(c->sorted);
	free(c->lines);
	free(c->branches);
	free(c->funcs);
	memset(c, 0, sizeof(*c));
}
