/*
 * The text annotation of a profile (see annotate.h): the functions chosen, then for each a
 * header line, its source lines (func_code.h's walk, with context) and its blocks with their
 * instructions and out-edges.
 */
#include "user/report/annotate.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "user/report/func_code.h"
#include "user/util/log.h"

#define SOURCE_CONTEXT 2 /* lines shown around the lines with code */

struct annotate_ctx {
	FILE *out;
	const struct profile *p;
	const struct annotate_opts *o;
	struct func_code fc;
};

/* Count C as digits, or "?" when unknown. */
static const char *count_str(int64_t c, char *buf, size_t size)
{
	if (c == COUNT_UNKNOWN)
		snprintf(buf, size, "?");
	else
		snprintf(buf, size, "%" PRId64, c);
	return buf;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Whether source path FULL is WANT, or ends with "/" WANT. */
static bool path_matches(const char *full, const char *want)
{
	size_t n = strlen(full), m = strlen(want);

	return !strcmp(full, want) || (n > m && full[n - m - 1] == '/' && !strcmp(full + n - m, want));
}

/* --- source ------------------------------------------------------------------------------- */

static void text_code(void *arg, const struct sline *s, const char *text)
{
	struct annotate_ctx *c = arg;
	char buf[32];

	fprintf(c->out, "%12s %6d  %s\n", count_str(s->count, buf, sizeof(buf)), s->line,
		text ? text : "(past the end of the file)");
}

static void text_context(void *arg, int line, const char *text)
{
	struct annotate_ctx *c = arg;

	fprintf(c->out, "%12s %6d  %s\n", "", line, text);
}

static void text_gap(void *arg)
{
	struct annotate_ctx *c = arg;

	fprintf(c->out, "%12s %6s\n", "", "...");
}

static const struct source_walk_ops text_walk = { text_code, text_context, text_gap };

/* The source lines of F's code D[0, N), its own file first, then the others (inlined code)
 * by name; the files that cannot be read get one line for all of them. */
static int write_source(struct annotate_ctx *c, const struct profile_func *f,
			const struct dline *d, size_t n)
{
	const char *own = profile__file(c->p, f->file);
	char mapped[PATH_MAX], first_bad[PATH_MAX + 64] = "";
	struct sline *s;
	size_t w, nbad = 0, nfiles = 0;

	if (!c->fc.sl) {
		fprintf(c->out, "source: %s: disassembly only\n", c->fc.src_note);
		return 0;
	}
	if (func_code__lines(f, d, n, &s, &w)) {
		free(s);
		return -ENOMEM;
	}
	if (!w)
		fputs("source: no line of this function's code is in the line tables\n", c->out);
	for (int pass = 0; pass < 2; pass++) {
		for (size_t k = 0, e; k < w; k = e) {
			bool mine = own && !strcmp(s[k].file, own);
			const char *path;
			char **text = NULL, *buf;
			size_t ntext = 0;

			for (e = k; e < w && !strcmp(s[e].file, s[k].file); e++)
				;
			if (mine != !pass)
				continue;
			nfiles++;
			path = func_code__map_source(&c->o->source_maps, s[k].file,
						     mapped, sizeof(mapped));
			buf = func_code__read_source(path, &text, &ntext);
			if (!buf) {
				if (!nbad++)
					snprintf(first_bad, sizeof(first_bad), "'%s' (%s)", path,
						 strerror(errno));
				continue;
			}
			fprintf(c->out, "source %s (a line's count: the largest count of the "
				"blocks holding its code)\n", s[k].file);
			func_code__walk_source(s + k, e - k, text, ntext, SOURCE_CONTEXT, &text_walk,
					       c);
			free(text);
			free(buf);
		}
	}
	if (nbad == nfiles && nbad)
		fprintf(c->out, "source: cannot read %s%s: disassembly only%s\n", first_bad,
			nbad > 1 ? " nor the other files of its code" : "",
			c->o->source_maps.n ? "" : " (--source-map OLD=NEW reads sources that moved)");
	else if (nbad)
		fprintf(c->out, "source: cannot read %s and %zu more: their lines in the "
			"disassembly only\n", first_bad, nbad - 1);
	free(s);
	return 0;
}

/* --- disassembly -------------------------------------------------------------------------- */

static void block_header(struct annotate_ctx *c, const struct profile_func *f, uint32_t b,
			 const uint32_t *first, const uint32_t *edges)
{
	const struct profile_block *pb = &f->blocks[b];
	const char *src = profile__file(c->p, pb->file);
	char buf[32];

	fprintf(c->out, "block 0x%" PRIx64 "%s: %s", pb->addr,
		b == f->entry_block ? " (entry)" : "", count_str(pb->count, buf, sizeof(buf)));
	if (src && pb->line > 0)
		fprintf(c->out, "  %s:%d", base_name(src), pb->line);
	if (func_code__is_violation(f, b))
		fputs("  (flow conservation fails here)", c->out);
	fputc('\n', c->out);
	if (first[b] == first[b + 1])
		return;
	fputs("  ", c->out);
	for (uint32_t k = first[b]; k < first[b + 1]; k++) {
		const struct profile_edge *pe = &f->edges[edges[k]];

		fputs(k == first[b] ? "-> " : ", -> ", c->out);
		if (pe->to >= f->nblocks)
			fputs("exit", c->out);
		else
			fprintf(c->out, "0x%" PRIx64, f->blocks[pe->to].addr);
		fprintf(c->out, " %s %s", cfg_edge_kind__name(pe->kind),
			count_str(pe->count, buf, sizeof(buf)));
	}
	fputc('\n', c->out);
}

static int write_disassembly(struct annotate_ctx *c, const struct profile_func *f,
			     const struct dline *d, size_t n)
{
	uint32_t *first = NULL, *edges = NULL;
	const char *last_file = NULL;
	int last_line = 0;

	if (func_code__out_edges(f, &first, &edges)) {
		free(first);
		free(edges);
		return -ENOMEM;
	}
	fputs("disassembly (AT&T syntax; each block's count, then its out-edges' kinds and "
	      "counts)\n", c->out);
	for (uint32_t b = 0, k = 0; b < f->nblocks; b++) {
		block_header(c, f, b, first, edges);
		for (; k < n && d[k].block == b; k++) {
			const struct profile_func *g = d[k].target && d[k].target != f->addr &&
				profile_func__block_at(f, d[k].target) < 0 ?
				profile__func_at(c->p, d[k].target) : NULL;
			int len = fprintf(c->out, "    %12" PRIx64 ":  %s", d[k].addr, d[k].text);

			if (g)
				len += fprintf(c->out, " <%s>", g->name);
			if (d[k].file && (d[k].file != last_file || d[k].line != last_line))
				fprintf(c->out, "%*s%s:%d", len < 60 ? 60 - len : 2, "",
					base_name(d[k].file), d[k].line);
			last_file = d[k].file;
			last_line = d[k].line;
			fputc('\n', c->out);
		}
	}
	free(first);
	free(edges);
	return 0;
}

/* --- one function -------------------------------------------------------------------------- */

static int write_func(struct annotate_ctx *c, const struct profile_func *f,
		      const struct dline *d, size_t n)
{
	const char *src = profile__file(c->p, f->file);
	char b1[32], b2[32];
	int err;

	fprintf(c->out, "\n== %s at 0x%" PRIx64, f->name, f->addr);
	if (src)
		fprintf(c->out, ", %s:%d", src, f->line);
	fprintf(c->out, ": %s invocations, %s block executions, %" PRIu32 " blocks, %" PRIu32
		" edges\n", count_str(f->count, b1, sizeof(b1)),
		count_str(f->block_total, b2, sizeof(b2)), f->nblocks, f->nedges);
	if (f->nviolations)
		fprintf(c->out, "flow conservation fails at %" PRIu32 " vertices: these counts are "
			"NOT exact (edgeprof report says why)\n", f->nviolations);
	if (f->status == PLAN_NAIVE)
		fputs("counted by block only: edge counts are known only where the block counts "
		      "determine them\n", c->out);
	err = c->o->no_source ? 0 : write_source(c, f, d, n);
	return err ? err : write_disassembly(c, f, d, n);
}

/* Whether F has code at o->src_file:o->src_line, by its disassembly D[0, N). */
static bool has_line(const struct annotate_ctx *c, const struct dline *d, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (d[k].file && d[k].line == c->o->src_line && path_matches(d[k].file, c->o->src_file))
			return true;
	return false;
}

/* The functions to annotate into *ORDER (*N of them). Returns 0, or a negative errno after
 * one pr_err line. */
static int choose(struct annotate_ctx *c, const char *file, uint32_t **order, size_t *n)
{
	const struct profile *p = c->p;

	if (!c->o->function && !c->o->src_file) {
		if (func_code__hottest(p, order, n))
			return pr_err("out of memory"), -ENOMEM;
		if (*n > c->o->top)
			*n = c->o->top;
		return 0;
	}
	if (c->o->src_file && !c->fc.sl)
		return pr_err("'%s': %s", file, c->fc.src_note), -ENOENT;
	*n = 0;
	*order = malloc((p->nfuncs ? p->nfuncs : 1) * sizeof(**order));
	if (!*order)
		return pr_err("out of memory"), -ENOMEM;
	for (size_t i = 0; i < p->nfuncs; i++) {
		const struct profile_func *f = &p->funcs[i];
		struct dline *d;
		size_t nd;
		bool match;

		if (f->status == PLAN_EXCLUDED || !f->nblocks)
			continue;
		if (c->o->function) {
			if (!strcmp(f->name, c->o->function))
				(*order)[(*n)++] = (uint32_t)i;
			continue;
		}
		if (func_code__disassemble(&c->fc, f, &d, &nd)) {
			free(d);
			return pr_err("out of memory"), -ENOMEM;
		}
		match = has_line(c, d, nd);
		free(d);
		if (match)
			(*order)[(*n)++] = (uint32_t)i;
	}
	if (*n)
		return 0;
	if (c->o->function)
		return pr_err("'%s': no function named '%s' (edgeprof report lists them)", file,
			      c->o->function), -ESRCH;
	return pr_err("'%s': no code of %s:%d in any function", file, c->o->src_file,
		      c->o->src_line), -ESRCH;
}

int annotate__write(FILE *out, const struct profile *p, const char *file,
		    const struct annotate_opts *o)
{
	struct annotate_ctx c = { .out = out, .p = p, .o = o };
	uint32_t *order = NULL;
	size_t n = 0;
	int err;

	err = func_code__open(&c.fc, p, o->binary);
	if (err)
		return err;
	if (!c.fc.have_img || !c.fc.have_cs) {
		pr_err("'%s': %s", file, c.fc.img_note);
		func_code__close(&c.fc);
		return -ENOENT;
	}
	err = choose(&c, file, &order, &n);
	if (!err)
		fprintf(out, "binary %s, profile %s: %zu function%s\n",
			o->binary ? o->binary : p->binary_path, file, n, n == 1 ? "" : "s");
	for (size_t k = 0; !err && k < n; k++) {
		const struct profile_func *f = &p->funcs[order[k]];
		struct dline *d;
		size_t nd;

		err = func_code__disassemble(&c.fc, f, &d, &nd);
		if (!err)
			err = write_func(&c, f, d, nd);
		free(d);
		if (err)
			pr_err("out of memory");
	}
	if (!err && ferror(out))
		err = -EIO; /* main() reports the write error */
	free(order);
	func_code__close(&c.fc);
	return err;
}
