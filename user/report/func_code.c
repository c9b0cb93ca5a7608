/*
 * A profiled function's code for the reports (see func_code.h): the binary opened once,
 * functions disassembled block by block, their source lines counted, source files read and
 * walked with context.
 */
#include "user/report/func_code.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_SOURCE_SIZE (64u << 20) /* larger source files are not read */

int func_code__open(struct func_code *c, const struct profile *p, const char *binary)
{
	const char *path = binary ? binary : p->binary_path;
	int err;

	memset(c, 0, sizeof(*c));
	if (!path || !*path) {
		snprintf(c->img_note, sizeof(c->img_note), "the profile names no binary (give it "
			 "with --binary PATH): no disassembly and no source lines");
		return 0;
	}
	err = elf_image__open(&c->img, path);
	if (err) {
		snprintf(c->img_note, sizeof(c->img_note), "the binary '%s' cannot be opened (%s): "
			 "no disassembly and no source lines (give it with --binary PATH)", path,
			 strerror(-err));
		return 0;
	}
	if (profile__check_build_id(p, c->img.build_id)) {
		elf_image__close(&c->img);
		return -EINVAL;
	}
	c->have_img = true;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &c->cs) == CS_ERR_OK) {
		cs_option(c->cs, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
		c->have_cs = true;
	} else {
		snprintf(c->img_note, sizeof(c->img_note), "capstone cannot be opened: no "
			 "disassembly");
	}
	err = srcline__open(&c->sl, &c->img);
	if (err == -ENOENT)
		snprintf(c->src_note, sizeof(c->src_note), "the binary has no line tables (build "
			 "it with -g): no source lines");
	else if (err)
		snprintf(c->src_note, sizeof(c->src_note), "the line tables cannot be read (%s): no "
			 "source lines", strerror(-err));
	return 0;
}

void func_code__close(struct func_code *c)
{
	if (c->have_cs)
		cs_close(&c->cs);
	srcline__close(c->sl);
	if (c->have_img)
		elf_image__close(&c->img);
	memset(c, 0, sizeof(*c));
}

int func_code__disassemble(struct func_code *c, const struct profile_func *f,
			   struct dline **out, size_t *n)
{
	size_t cap = 0;
	cs_insn *in = cs_malloc(c->cs);

	*out = NULL;
	*n = 0;
	if (!in)
		return -ENOMEM;
	for (uint32_t b = 0; b < f->nblocks; b++) {
		const struct profile_block *pb = &f->blocks[b];
		size_t avail = 0;
		const uint8_t *code = elf_image__code(&c->img, pb->addr, &avail);
		uint64_t a = pb->addr;

		if (avail > pb->end - pb->addr)
			avail = pb->end - pb->addr;
		while (a < pb->end) {
			struct dline *d;
			bool ok = code && cs_disasm_iter(c->cs, &code, &avail, &a, in);

			if (*n == cap) {
				struct dline *m = realloc(*out, (cap = cap ? 2 * cap : 256) *
							  sizeof(**out));

				if (!m) {
					cs_free(in, 1);
					return -ENOMEM;
				}
				*out = m;
			}
			d = &(*out)[(*n)++];
			memset(d, 0, sizeof(*d));
			d->block = b;
			d->addr = ok ? in->address : a;
			if (!ok) {
				snprintf(d->text, sizeof(d->text), "(bytes that cannot be decoded up "
					 "to 0x%" PRIx64 ")", pb->end);
				a = pb->end;
			} else {
				snprintf(d->text, sizeof(d->text), "%-7s %s", in->mnemonic, in->op_str);
				if ((in->mnemonic[0] == 'j' || !strncmp(in->mnemonic, "call", 4)) &&
				    !strncmp(in->op_str, "0x", 2))
					d->target = strtoull(in->op_str, NULL, 16);
			}
			if (c->sl && srcline__lookup(c->sl, d->addr, &d->file, &d->line))
				d->file = NULL;
		}
	}
	cs_free(in, 1);
	return 0;
}

int func_code__out_edges(const struct profile_func *f, uint32_t **first, uint32_t **edges)
{
	*first = calloc((size_t)f->nblocks + 2, sizeof(**first));
	*edges = malloc(((size_t)f->nedges + 1) * sizeof(**edges));
	if (!*first || !*edges)
		return -ENOMEM;
	for (uint32_t e = 0; e < f->nedges; e++)
		if (f->edges[e].from < f->nblocks)
			(*first)[f->edges[e].from + 2]++;
	for (uint32_t b = 0; b < f->nblocks; b++)
		(*first)[b + 2] += (*first)[b + 1];
	for (uint32_t e = 0; e < f->nedges; e++)
		if (f->edges[e].from < f->nblocks)
			(*edges)[(*first)[f->edges[e].from + 1]++] = e;
	return 0;
}

bool func_code__is_violation(const struct profile_func *f, uint32_t v)
{
	for (uint32_t k = 0; k < f->nviolations; k++)
		if (f->violations[k] == v)
			return true;
	return false;
}

static int cmp_sline(const void *a, const void *b)
{
	const struct sline *x = a, *y = b;
	int r = x->file == y->file ? 0 : strcmp(x->file, y->file);

	return r ? r : (x->line > y->line) - (x->line < y->line);
}

int func_code__lines(const struct profile_func *f, const struct dline *d, size_t n,
		     struct sline **out, size_t *m)
{
	struct sline *s = malloc((n ? n : 1) * sizeof(*s));
	size_t k, w = 0;

	*out = s;
	*m = 0;
	if (!s)
		return -ENOMEM;
	for (k = 0; k < n; k++)
		if (d[k].file && d[k].line > 0)
			s[(*m)++] = (struct sline){ d[k].file, d[k].line, f->blocks[d[k].block].count };
	qsort(s, *m, sizeof(*s), cmp_sline);
	for (k = 0; k < *m; k++) {
		struct sline *last = w ? &s[w - 1] : NULL;

		if (last && !cmp_sline(last, &s[k])) {
			if (s[k].count > last->count)
				last->count = s[k].count;
		} else {
			s[w++] = s[k];
		}
	}
	*m = w;
	return 0;
}

int source_maps__add(struct source_maps *m, const char *arg)
{
	if (!strchr(arg, '=') || *arg == '=')
		return -EINVAL;
	if (m->n == SOURCE_MAPS_MAX)
		return -E2BIG;
	m->map[m->n++] = arg;
	return 0;
}

const char *func_code__map_source(const struct source_maps *m, const char *path, char *buf,
				  size_t size)
{
	for (size_t k = 0; k < m->n; k++) {
		const char *eq = strchr(m->map[k], '=');
		size_t old = eq ? (size_t)(eq - m->map[k]) : 0;

		if (old && !strncmp(path, m->map[k], old) &&
		    snprintf(buf, size, "%s%s", eq + 1, path + old) < (int)size)
			return buf;
	}
	return path;
}

char *func_code__read_source(const char *path, char ***lines, size_t *n)
{
	FILE *in = fopen(path, "r");
	struct stat st;
	char *buf;
	size_t len, cap = 0;

	*lines = NULL;
	*n = 0;
	if (!in)
		return NULL;
	if (fstat(fileno(in), &st) || st.st_size > MAX_SOURCE_SIZE || !S_ISREG(st.st_mode)) {
		fclose(in);
		errno = S_ISREG(st.st_mode) ? EFBIG : EINVAL;
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		fclose(in);
		return NULL;
	}
	len = fread(buf, 1, (size_t)st.st_size, in);
	fclose(in);
	buf[len] = '\0';
	for (char *s = buf; *s;) {
		char *e = strchr(s, '\n');

		if (*n == cap) {
			char **m = realloc(*lines, (cap = cap ? 2 * cap : 1024) * sizeof(**lines));

			if (!m) {
				free(*lines);
				*lines = NULL;
				free(buf);
				errno = ENOMEM;
				return NULL;
			}
			*lines = m;
		}
		(*lines)[(*n)++] = s;
		if (!e)
			break;
		*e = '\0';
		s = e + 1;
	}
	return buf;
}

void func_code__walk_source(const struct sline *s, size_t n, char **text, size_t ntext,
			    int context, const struct source_walk_ops *ops, void *arg)
{
	int shown_to = 0;

	for (size_t k = 0, e; k < n; k = e) {
		int from = s[k].line - context, to = s[k].line + context;

		for (e = k + 1; e < n && s[e].line - context <= to + 1; e++)
			to = s[e].line + context;
		if (!text) {
			for (; k < e; k++)
				ops->code(arg, &s[k], "");
			continue;
		}
		from = from < 1 ? 1 : from;
		if (from > shown_to + 1 && shown_to)
			ops->gap(arg);
		for (int line = from; line <= to && (size_t)line <= ntext; line++) {
			if (k < e && s[k].line == line)
				ops->code(arg, &s[k++], text[line - 1]);
			else
				ops->context(arg, line, text[line - 1]);
		}
		for (; k < e; k++) /* beyond the file's end: another version of it */
			ops->code(arg, &s[k], NULL);
		shown_to = to;
	}
}

static int cmp_hot(const void *a, const void *b, void *arg)
{
	const struct profile *p = arg;
	const struct profile_func *x = &p->funcs[*(const uint32_t *)a];
	const struct profile_func *y = &p->funcs[*(const uint32_t *)b];

	if (x->block_total != y->block_total)
		return x->block_total > y->block_total ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int func_code__hottest(const struct profile *p, uint32_t **order, size_t *n)
{
	*n = 0;
	*order = malloc((p->nfuncs ? p->nfuncs : 1) * sizeof(**order));
	if (!*order)
		return -ENOMEM;
	for (size_t i = 0; i < p->nfuncs; i++)
		if (p->funcs[i].status != PLAN_EXCLUDED && p->funcs[i].block_total > 0)
			(*order)[(*n)++] = (uint32_t)i;
	qsort_r(*order, *n, sizeof(**order), cmp_hot, (void *)p);
	return 0;
}
