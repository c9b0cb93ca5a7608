/*
 * The gcov JSON export (see gcov_json.h): the line counts (line_counts.h) as one jansson
 * document, serialised and gzip-compressed with zlib.
 */
#include "user/export/gcov_json.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "user/builtin.h"
#include "user/export/line_counts.h"
#include "user/util/json_out.h"

static json_t *func_json(const struct lc_func *f, int *err)
{
	json_t *o = json_object();

	jout_set(o, "name", json_string(f->name), err);
	jout_set(o, "demangled_name", json_string(f->name), err);
	jout_set(o, "start_line", json_integer(f->line), err);
	jout_set(o, "start_column", json_integer(f->column), err);
	jout_set(o, "end_line", json_integer(f->end_line), err);
	jout_set(o, "end_column", json_integer(f->end_column), err);
	jout_set(o, "blocks", json_integer(f->nblocks), err);
	jout_set(o, "blocks_executed", json_integer(f->nblocks_ran), err);
	jout_set(o, "execution_count", json_integer(f->count), err);
	return o;
}

static json_t *branch_json(int64_t count, bool fallthrough, int *err)
{
	json_t *o = json_object();

	jout_set(o, "count", json_integer(count < 0 ? 0 : count), err);
	jout_set(o, "throw", json_false(), err);
	jout_set(o, "fallthrough", json_boolean(fallthrough), err);
	return o;
}

/* File F's object; *LI, *BI, *FI walk the sorted lines, branches and functions. */
static json_t *file_json(const struct line_counts *c, const char *f, size_t *li, size_t *bi,
			 size_t *fi, struct gcov_json_stats *st, int *err)
{
	json_t *o = json_object(), *funcs = json_array(), *lines = json_array();

	jout_set(o, "file", json_string(f), err);
	for (; *fi < c->nfuncs && c->funcs[*fi].file == f; (*fi)++, st->functions++)
		jout_push(funcs, func_json(&c->funcs[*fi], err), err);
	for (; *li < c->nlines && c->lines[*li].file == f; (*li)++, st->lines++) {
		const struct lc_line *l = &c->lines[*li];
		json_t *lo = json_object(), *br = json_array();

		jout_set(lo, "line_number", json_integer(l->line), err);
		jout_set(lo, "function_name", json_string(l->func), err);
		jout_set(lo, "count", json_integer(l->count), err);
		jout_set(lo, "unexecuted_block", json_boolean(l->unexecuted), err);
		/* Branches on lines without a counted line entry cannot occur: a jump's block
		 * gives its line a count. Skip any that precede this line all the same. */
		while (*bi < c->nbranches && c->branches[*bi].file == f &&
		       c->branches[*bi].line < l->line)
			(*bi)++;
		for (; *bi < c->nbranches && c->branches[*bi].file == f &&
		       c->branches[*bi].line == l->line;
		     (*bi)++) {
			jout_push(br, branch_json(c->branches[*bi].taken, false, err), err);
			jout_push(br, branch_json(c->branches[*bi].not_taken, true, err), err);
		}
		jout_set(lo, "branches", br, err);
		jout_push(lines, lo, err);
	}
	while (*bi < c->nbranches && c->branches[*bi].file == f)
		(*bi)++;
	jout_set(o, "functions", funcs, err);
	jout_set(o, "lines", lines, err);
	st->files++;
	return o;
}

/* TEXT[0, N) gzip-compressed to OUT. Returns 0 or -EIO. */
static int write_gzip(FILE *out, const char *text, size_t n)
{
	unsigned char buf[1 << 16];
	z_stream z = { 0 };
	int zr;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -EIO;
	z.next_in = (unsigned char *)text;
	z.avail_in = (uInt)n;
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR ||
		    fwrite(buf, 1, sizeof(buf) - z.avail_out, out) != sizeof(buf) - z.avail_out) {
			deflateEnd(&z);
			return -EIO;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return 0;
}

int gcov_json__write(FILE *out, const struct profile *p, const struct cfg_program *prog,
		     const struct elf_image *img, const char *data_file,
		     struct gcov_json_stats *st)
{
	struct line_counts c;
	size_t li = 0, bi = 0, fi = 0;
	char cwd[PATH_MAX];
	json_t *doc, *files;
	char *text;
	int err;

	memset(st, 0, sizeof(*st));
	err = line_counts__build(&c, p, prog, img);
	if (err)
		return err;
	st->unknown_funcs = c.unknown_funcs;
	doc = json_object();
	files = json_array();
	jout_set(doc, "format_version", json_string("1"), &err);
	jout_set(doc, "gcc_version", json_string("edgeprof " EDGEPROF_VERSION), &err);
	jout_set(doc, "current_working_directory", json_string(getcwd(cwd, sizeof(cwd)) ? cwd : ""),
		 &err);
	jout_set(doc, "data_file", json_string(data_file), &err);
	for (size_t k = 0; k < c.nfiles && !err; k++)
		jout_push(files, file_json(&c, c.sorted[k], &li, &bi, &fi, st, &err), &err);
	jout_set(doc, "files", files, &err);
	line_counts__free(&c);
	text = err ? NULL : json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	if (!text)
		return -ENOMEM;
	err = write_gzip(out, text, strlen(text));
	free(text);
	return err ? err : ferror(out) ? -EIO : 0;
}
