/*
 * The lcov export (see lcov.h): every counted instruction's source line with its block's
 * count, every conditional jump's two counts and every function's entry line gathered, sorted
 * by file and line, then written one SF record per file.
 */
#include "user/export/lcov.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/srcline.h"

struct lc_line {
	const char *file;
	int line;
	int64_t count;
};

struct lc_branch {
	const char *file;
	int line;
	uint32_t func, block;
	int64_t taken, not_taken; /* -1: the block never ran */
};

struct lc_func {
	const char *file;
	int line;
	const char *name;
	int64_t count;
};

struct lc {
	struct lc_line *lines;
	size_t nlines, lines_cap;
	struct lc_branch *branches;
	size_t nbranches, branches_cap;
	struct lc_func *funcs;
	size_t nfuncs, funcs_cap;
	char **files; /* interned file names */
	size_t nfiles, files_cap;
};

/* Makes room for one more element of SIZE bytes in *V (N used, *CAP allocated). */
static int grow(void **v, size_t n, size_t *cap, size_t size)
{
	void *p;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? 2 * *cap : 256;
	p = realloc(*v, c * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

/* The interned copy of file name F (srcline's own strings live only as long as it). */
static const char *intern(struct lc *c, const char *f)
{
	for (size_t i = c->nfiles; i-- > 0;)
		if (!strcmp(c->files[i], f))
			return c->files[i];
	if (grow((void **)&c->files, c->nfiles, &c->files_cap, sizeof(*c->files)))
		return NULL;
	c->files[c->nfiles] = strdup(f);
	return c->files[c->nfiles] ? c->files[c->nfiles++] : NULL;
}

/* The file and line of ADDR into *FILE and *LINE; false when it has none. */
static bool where(struct lc *c, struct srcline *sl, uint64_t addr, const char **file, int *line,
		  int *err)
{
	const char *f;

	if (srcline__lookup(sl, addr, &f, line) || *line <= 0)
		return false;
	*file = intern(c, f);
	if (!*file)
		*err = -ENOMEM;
	return *file != NULL;
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

static int gather_func(struct lc *c, struct srcline *sl, size_t fi, const struct cfg_func *f,
		       const struct profile_func *pf)
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
			if (grow((void **)&c->lines, c->nlines, &c->lines_cap, sizeof(*c->lines)))
				return -ENOMEM;
			c->lines[c->nlines++] = (struct lc_line){ file, line, n };
		}
		if (last->flow == INSN_JCC && where(c, sl, last->addr, &file, &line, &err)) {
			int64_t t = edge_count(pf, f, b, EDGE_TAKEN);
			int64_t nt = edge_count(pf, f, b, EDGE_NOT_TAKEN);

			if (t < 0 || nt < 0)
				continue; /* unknown (block counts only) */
			if (grow((void **)&c->branches, c->nbranches, &c->branches_cap,
				 sizeof(*c->branches)))
				return -ENOMEM;
			c->branches[c->nbranches++] = (struct lc_branch){
				file, line, (uint32_t)fi, b, n ? t : -1, n ? nt : -1
			};
		}
	}
	if (pf->count >= 0 && where(c, sl, f->entry, &file, &line, &err)) {
		if (grow((void **)&c->funcs, c->nfuncs, &c->funcs_cap, sizeof(*c->funcs)))
			return -ENOMEM;
		c->funcs[c->nfuncs++] = (struct lc_func){ file, line, f->name, pf->count };
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

/* Writes file F's record; *LI, *BI, *FI walk the sorted lines, branches and functions. */
static void write_file(FILE *out, const struct lc *c, const char *f, size_t *li, size_t *bi,
		       size_t *fi, struct lcov_stats *st)
{
	uint32_t lf = 0, lh = 0, brf = 0, brh = 0, fnf = 0, fnh = 0;
	size_t f0 = *fi;

	fprintf(out, "SF:%s\n", f);
	for (; *fi < c->nfuncs && c->funcs[*fi].file == f; (*fi)++)
		fprintf(out, "FN:%d,%s\n", c->funcs[*fi].line, c->funcs[*fi].name);
	for (size_t k = f0; k < *fi; k++) {
		fprintf(out, "FNDA:%" PRId64 ",%s\n", c->funcs[k].count, c->funcs[k].name);
		fnf++;
		fnh += c->funcs[k].count > 0;
	}
	fprintf(out, "FNF:%" PRIu32 "\nFNH:%" PRIu32 "\n", fnf, fnh);
	for (; *bi < c->nbranches && c->branches[*bi].file == f; (*bi)++) {
		const struct lc_branch *b = &c->branches[*bi];

		for (int side = 0; side < 2; side++) {
			int64_t n = side ? b->not_taken : b->taken;

			if (n < 0)
				fprintf(out, "BRDA:%d,%" PRIu32 ",%d,-\n", b->line, b->block, side);
			else
				fprintf(out, "BRDA:%d,%" PRIu32 ",%d,%" PRId64 "\n", b->line, b->block,
					side, n);
			brf++;
			brh += n > 0;
		}
	}
	fprintf(out, "BRF:%" PRIu32 "\nBRH:%" PRIu32 "\n", brf, brh);
	while (*li < c->nlines && c->lines[*li].file == f) {
		int line = c->lines[*li].line;
		int64_t n = 0;

		for (; *li < c->nlines && c->lines[*li].file == f && c->lines[*li].line == line;
		     (*li)++)
			if (c->lines[*li].count > n)
				n = c->lines[*li].count;
		fprintf(out, "DA:%d,%" PRId64 "\n", line, n);
		lf++;
		lh += n > 0;
	}
	fprintf(out, "LF:%" PRIu32 "\nLH:%" PRIu32 "\nend_of_record\n", lf, lh);
	st->files++;
	st->lines += lf;
	st->lines_hit += lh;
	st->branches += brf;
	st->functions += fnf;
}

int lcov__write(FILE *out, const struct profile *p, const struct cfg_program *prog,
		const struct elf_image *img, const char *test, struct lcov_stats *st)
{
	struct lc c = { 0 };
	struct srcline *sl = NULL;
	size_t li = 0, bi = 0, fi = 0;
	char **files = NULL;
	int err;

	memset(st, 0, sizeof(*st));
	err = srcline__open(&sl, img);
	if (err)
		return err;
	for (size_t i = 0; i < prog->nfuncs && !err; i++) {
		const struct cfg_func *f = &prog->funcs[i];
		const struct profile_func *pf = profile__func_at(p, f->entry);

		if (!pf || pf->status == PLAN_EXCLUDED || pf->nblocks != f->nblocks)
			continue;
		if (pf->nviolations) {
			st->unknown_funcs++;
			continue;
		}
		err = gather_func(&c, sl, i, f, pf);
	}
	if (err)
		goto out;
	qsort(c.lines, c.nlines, sizeof(*c.lines), cmp_line);
	qsort(c.branches, c.nbranches, sizeof(*c.branches), cmp_branch);
	qsort(c.funcs, c.nfuncs, sizeof(*c.funcs), cmp_func);
	/* Files in name order, each record from the sorted lists (file names are interned, so
	 * one file's entries are adjacent and compare equal as pointers). */
	files = malloc((c.nfiles ? c.nfiles : 1) * sizeof(*files));
	if (!files) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(files, c.files, c.nfiles * sizeof(*files));
	qsort(files, c.nfiles, sizeof(*files), cmp_str);
	fprintf(out, "TN:%s\n", test ? test : "");
	for (size_t k = 0; k < c.nfiles; k++) {
		bool any = (li < c.nlines && c.lines[li].file == files[k]) ||
			   (bi < c.nbranches && c.branches[bi].file == files[k]) ||
			   (fi < c.nfuncs && c.funcs[fi].file == files[k]);

		if (any)
			write_file(out, &c, files[k], &li, &bi, &fi, st);
	}
	err = ferror(out) ? -EIO : 0;
out:
	srcline__close(sl);
	for (size_t k = 0; k < c.nfiles; k++)
		free(c.files[k]);
	free(c.files);
	free(files);
	free(c.lines);
	free(c.branches);
	free(c.funcs);
	return err;
}
