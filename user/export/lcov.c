/*
 * The lcov export (see lcov.h): the line counts (line_counts.h), one SF record per file.
 */
#include "user/export/lcov.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "user/export/line_counts.h"

/* Writes file F's record; *LI, *BI, *FI walk the sorted lines, branches and functions. */
static void write_file(FILE *out, const struct line_counts *c, const char *f, size_t *li,
		       size_t *bi, size_t *fi, struct lcov_stats *st)
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
	for (; *li < c->nlines && c->lines[*li].file == f; (*li)++) {
		fprintf(out, "DA:%d,%" PRId64 "\n", c->lines[*li].line, c->lines[*li].count);
		lf++;
		lh += c->lines[*li].count > 0;
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
	struct line_counts c;
	size_t li = 0, bi = 0, fi = 0;
	int err;

	memset(st, 0, sizeof(*st));
	err = line_counts__build(&c, p, prog, img);
	if (err)
		return err;
	st->unknown_funcs = c.unknown_funcs;
	fprintf(out, "TN:%s\n", test ? test : "");
	for (size_t k = 0; k < c.nfiles; k++) {
		const char *f = c.sorted[k];
		bool any = (li < c.nlines && c.lines[li].file == f) ||
			   (bi < c.nbranches && c.branches[bi].file == f) ||
			   (fi < c.nfuncs && c.funcs[fi].file == f);

		if (any)
			write_file(out, &c, f, &li, &bi, &fi, st);
	}
	err = ferror(out) ? -EIO : 0;
	line_counts__free(&c);
	return err;
}
