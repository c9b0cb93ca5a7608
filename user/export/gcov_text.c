/*
 * The gcov text report of one source file (see gcov_text.h).
 */
#include "user/export/gcov_text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

const char *gcov_text__name(const char *file, char *buf, size_t size)
{
	size_t n = strlen(file);

	if (n + sizeof(".gcov") > size)
		return NULL;
	for (size_t i = 0; i < n; i++)
		buf[i] = file[i] == '/' ? '#' : file[i];
	memcpy(buf + n, ".gcov", sizeof(".gcov"));
	return buf;
}

/* The first index of the entries of FILE in ARRAY (N entries sorted by file), or N. */
#define FIRST_OF(array, n, f)                                                                  \
	({                                                                                     \
		size_t i_ = 0;                                                                 \
		while (i_ < (n) && (array)[i_].file != (f))                                    \
			i_++;                                                                  \
		i_;                                                                            \
	})

static int percent(int64_t part, int64_t whole)
{
	return whole > 0 ? (int)(100 * part / whole) : 0;
}

int gcov_text__write(FILE *out, const struct line_counts *c, const char *file)
{
	size_t li = FIRST_OF(c->lines, c->nlines, file);
	size_t bi = FIRST_OF(c->branches, c->nbranches, file);
	size_t fi = FIRST_OF(c->funcs, c->nfuncs, file);
	FILE *src = fopen(file, "r");
	char *text = NULL;
	size_t cap = 0;
	int max = 0;

	/* The last line with code or a function entry. */
	for (size_t k = li; k < c->nlines && c->lines[k].file == file; k++)
		max = c->lines[k].line > max ? c->lines[k].line : max;
	for (size_t k = fi; k < c->nfuncs && c->funcs[k].file == file; k++)
		max = c->funcs[k].line > max ? c->funcs[k].line : max;
	fprintf(out, "        -:    0:Source:%s\n        -:    0:Runs:1\n", file);
	for (int line = 1;; line++) {
		bool code = false, has_text = false;
		int64_t n = 0;
		ssize_t len;

		if (src && (len = getline(&text, &cap, src)) >= 0) {
			has_text = true;
			if (len && text[len - 1] == '\n')
				text[len - 1] = 0;
		}
		if (!has_text && line > max)
			break;
		for (; fi < c->nfuncs && c->funcs[fi].file == file && c->funcs[fi].line == line; fi++) {
			const struct lc_func *f = &c->funcs[fi];

			fprintf(out, "function %s called %" PRId64 " returned %d%% blocks executed %d%%\n",
				f->name, f->count, percent(f->returned, f->count),
				percent(f->nblocks_ran, f->nblocks));
		}
		if (li < c->nlines && c->lines[li].file == file && c->lines[li].line == line) {
			code = true;
			n = c->lines[li++].count;
		}
		/* Without the source, only the lines with code are written. */
		if (!code && !has_text)
			continue;
		if (!code)
			fprintf(out, "%9s:%5d:%s\n", "-", line, has_text ? text : "");
		else if (n)
			fprintf(out, "%9" PRId64 ":%5d:%s\n", n, line, has_text ? text : "");
		else
			fprintf(out, "%9s:%5d:%s\n", "#####", line, has_text ? text : "");
		for (int k = 0; bi < c->nbranches && c->branches[bi].file == file &&
				c->branches[bi].line == line;
		     bi++) {
			const struct lc_branch *b = &c->branches[bi];

			for (int side = 0; side < 2; side++, k++) {
				int64_t m = side ? b->not_taken : b->taken;

				if (m < 0)
					fprintf(out, "branch %2d never executed\n", k);
				else
					fprintf(out, "branch %2d taken %" PRId64 "\n", k, m);
			}
		}
	}
	free(text);
	if (src)
		fclose(src);
	return ferror(out) ? -EIO : 0;
}
