/*
 * The HTML page set of a profile (see html_report.h): the hottest functions chosen, their
 * graphs drawn by dot in parallel, then index.html and one page per function written into a
 * temporary directory that replaces DIR at the end.
 */
#include "user/report/html_report.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cfg/elf_image.h"
#include "cfg/srcline.h"
#include "user/builtin.h"
#include "user/report/cfg_svg.h"
#include "user/report/func_code.h"
#include "user/util/atomic_dir.h"
#include "user/util/log.h"

#define SOURCE_CONTEXT 3                /* lines shown around the lines with code */
#define FIT_WIDTH_PT 1400               /* wider graphs start fitted to the window's width */

/* A function with a page. */
struct hpage {
	const struct profile_func *f;
	char name[64]; /* "f-0x401136.html" */
	char dot[PATH_MAX], svg[PATH_MAX];
	bool drawn;
};

struct html_ctx {
	const struct profile *p;
	const char *file;
	const struct html_report_opts *o;
	struct atomic_dir dir;
	struct func_code fc;  /* the binary: disassembly and source lines */
	struct hpage *pages;
	size_t npages;
	size_t nexecuted;     /* functions with a non-zero block count */
};

static const char css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:14px 18px;color:#1d1d1d;background:#fff}"
	"h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:20px 0 6px}"
	"h3{font-size:14px;margin:12px 0 4px;font-family:ui-monospace,monospace}"
	"table{border-collapse:collapse}td,th{padding:1px 8px;text-align:left;vertical-align:top}"
	"th{background:#eee;font-weight:600}.n{text-align:right;font-variant-numeric:tabular-nums}"
	".sum td:first-child{color:#555}.hot tr:nth-child(even){background:#f7f7f7}"
	".mono,.dis td,.src td{font-family:ui-monospace,monospace;font-size:12px;white-space:pre}"
	".cfg{overflow:auto;max-height:82vh;border:1px solid #ccc;background:#fff;margin-top:4px}"
	"#fit:checked~.cfg svg{width:100%;height:auto}"
	".note{background:#fff6d8;border-left:4px solid #e0b000;padding:3px 8px;margin:6px 0}"
	".bad{background:#ffe3e3;border-left-color:#d00000}.sub{color:#555}"
	".bh td{border-top:1px solid #bbb;background:#f4f4f4;padding-top:3px;white-space:normal}"
	".bh td.n{font-weight:600}.viol td{background:#dde4ff}.nocode{color:#8a8a8a}"
	".gap td{color:#8a8a8a;background:#fafafa}a{color:#0645ad}h1.mono{font-size:19px}";

/* --- small writers ------------------------------------------------------------------------ */

/* S with &, <, >, " and ' escaped. */
static void esc(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default: fputc(*s, out);
		}
	}
}

static void page_head(FILE *out, const char *title, const char *sub)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "<meta name=\"viewport\" content=\"width=device-width\"><title>", out);
	esc(out, title);
	fputs(sub ? " - " : "", out);
	esc(out, sub);
	fprintf(out, "</title><style>%s</style></head>\n<body>\n", css);
}

static void page_tail(FILE *out)
{
	fputs("<p class=\"sub\">Made by edgeprof " EDGEPROF_VERSION
	      " (<code>edgeprof report --html</code>).</p>\n</body></html>\n", out);
}

/* Count C as a data attribute's value: its digits, empty when unknown. */
static const char *raw_count(int64_t c, char *buf, size_t size)
{
	if (c == COUNT_UNKNOWN)
		buf[0] = '\0';
	else
		snprintf(buf, size, "%" PRId64, c);
	return buf;
}

/* A table cell holding count C, filled by its heat against MAX. */
static void count_cell(FILE *out, int64_t c, int64_t max, bool text)
{
	char col[8], buf[32];

	fprintf(out, "<td class=\"n\" style=\"background:%s%s\">", cfg_svg__heat(c, max, col),
		cfg_svg__dark(c, max) ? ";color:#fff" : "");
	if (text)
		fputs(cfg_svg__count(c, buf, sizeof(buf)), out);
	fputs("</td>", out);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static FILE *open_file(struct html_ctx *c, const char *name)
{
	char path[PATH_MAX];
	FILE *f;

	if (!atomic_dir__path(&c->dir, name, path, sizeof(path))) {
		pr_err("'%s': name too long", c->o->dir);
		return NULL;
	}
	f = fopen(path, "w");
	if (!f)
		pr_err("'%s': cannot write '%s': %s", c->o->dir, name, strerror(errno));
	return f;
}

static int close_file(struct html_ctx *c, FILE *f, const char *name)
{
	bool bad = ferror(f);

	if (fclose(f) || bad)
		return pr_err("'%s': cannot write '%s': %s", c->o->dir, name,
			      strerror(errno ? errno : EIO)), -EIO;
	return 0;
}

/* --- choosing the functions ---------------------------------------------------------------- */

/* The executed functions, hottest (most block executions) first, the first O->top of them
 * given a page. */
static int choose(struct html_ctx *c, uint32_t **order)
{
	const struct profile *p = c->p;
	size_t n;

	if (func_code__hottest(p, order, &n))
		return -ENOMEM;
	c->nexecuted = n;
	c->npages = n < c->o->top ? n : c->o->top;
	c->pages = calloc(c->npages ? c->npages : 1, sizeof(*c->pages));
	if (!c->pages)
		return -ENOMEM;
	for (size_t k = 0; k < c->npages; k++) {
		struct hpage *pg = &c->pages[k];
		bool dup = false;

		pg->f = &p->funcs[(*order)[k]];
		for (size_t j = 0; j < k; j++)
			dup |= c->pages[j].f->addr == pg->f->addr;
		if (dup)
			snprintf(pg->name, sizeof(pg->name), "f-0x%" PRIx64 "-%zu.html", pg->f->addr,
				 k);
		else
			snprintf(pg->name, sizeof(pg->name), "f-0x%" PRIx64 ".html", pg->f->addr);
	}
	return 0;
}

/* The page of the function whose entry is ADDR, or NULL. */
static const struct hpage *page_at(const struct html_ctx *c, uint64_t addr)
{
	for (size_t k = 0; k < c->npages; k++)
		if (c->pages[k].f->addr == addr)
			return &c->pages[k];
	return NULL;
}

/* --- index.html ---------------------------------------------------------------------------- */

static void summary_row(FILE *out, const char *key, const char *value, bool bad)
{
	fprintf(out, "<tr%s><td>%s</td><td>", bad ? " class=\"bad\"" : "", key);
	esc(out, value);
	fputs("</td></tr>\n", out);
}

static const char *how_ended(const struct profile *p, char *buf, size_t size)
{
	int ws = p->wait_status;
	size_t n;

	if (p->attached)
		n = (size_t)snprintf(buf, size, "attached to process %d for %.3f s", p->pid,
				     p->seconds);
	else if (WIFEXITED(ws))
		n = (size_t)snprintf(buf, size, "exited with status %d after %.3f s",
				     WEXITSTATUS(ws), p->seconds);
	else if (WIFSIGNALED(ws))
		n = (size_t)snprintf(buf, size, "killed by signal %d after %.3f s", WTERMSIG(ws),
				     p->seconds);
	else
		n = (size_t)snprintf(buf, size, "wait status 0x%x after %.3f s", ws, p->seconds);
	if (n < size)
		snprintf(buf + n, size - n, "; %u process%s, %u thread%s", p->nprocesses,
			 p->nprocesses == 1 ? "" : "es", p->nthreads, p->nthreads == 1 ? "" : "s");
	return buf;
}

static const char *exactness(const struct profile_func *f, char *buf, size_t size)
{
	if (f->nviolations)
		snprintf(buf, size, "NOT exact (%" PRIu32 " violation%s)", f->nviolations,
			 f->nviolations == 1 ? "" : "s");
	else if (f->status == PLAN_NAIVE)
		snprintf(buf, size, "block counts only");
	else
		snprintf(buf, size, "exact");
	return buf;
}

static int write_index(struct html_ctx *c)
{
	const struct profile *p = c->p;
	FILE *out = open_file(c, "index.html");
	char buf[1024], n1[32], n2[32];
	int64_t total = 0;
	size_t len = 0;

	if (!out)
		return -EIO;
	for (size_t i = 0; i < p->nfuncs; i++)
		total += p->funcs[i].block_total > 0 ? p->funcs[i].block_total : 0;
	page_head(out, base_name(p->binary_path ? p->binary_path : "?"), "edgeprof");
	fputs("<h1>", out);
	esc(out, base_name(p->binary_path ? p->binary_path : "?"));
	fputs(": edgeprof profile</h1>\n<table class=\"sum\">\n", out);
	summary_row(out, "profile", c->file, false);
	summary_row(out, "binary", p->binary_path ? p->binary_path : "-", false);
	summary_row(out, "build-id", p->build_id[0] ? p->build_id : "(none)", false);
	buf[0] = '\0';
	for (size_t i = 0; i < p->argc && len < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? " " : "",
					p->argv[i]);
	summary_row(out, "command", p->argc ? buf : "-", false);
	summary_row(out, "run", how_ended(p, buf, sizeof(buf)), false);
	snprintf(buf, sizeof(buf), "%" PRIu32 " exact (chords), %" PRIu32 " with block counts "
		 "only, %" PRIu32 " excluded; %zu executed", p->nchord_funcs, p->nnaive_funcs,
		 p->nexcluded_funcs, c->nexecuted);
	summary_row(out, "functions", buf, false);
	snprintf(buf, sizeof(buf), "%zu sites, %" PRIu64 " hit, %s hits in total", p->nsites,
		 p->sites_hit, cfg_svg__count((int64_t)p->hits, n1, sizeof(n1)));
	summary_row(out, "probes", buf, false);
	summary_row(out, "block executions", cfg_svg__count(total, n2, sizeof(n2)), false);
	if (p->nviolations)
		snprintf(buf, sizeof(buf), "%" PRIu64 ": the counts of the functions marked NOT "
			 "exact are not exact (edgeprof report lists why)", p->nviolations);
	else
		snprintf(buf, sizeof(buf), "0 (flow is conserved everywhere)");
	summary_row(out, "violations", buf, p->nviolations != 0);
	for (size_t k = 0; k < p->nlibs; k++) {
		snprintf(buf, sizeof(buf), "%s (its pages: edgeprof report --html DIR --lib %s)",
			 p->libs[k].binary_path ? p->libs[k].binary_path : "?",
			 base_name(p->libs[k].binary_path ? p->libs[k].binary_path : "?"));
		summary_row(out, "library", buf, false);
	}
	fputs("</table>\n", out);
	if (c->fc.img_note[0]) {
		fputs("<p class=\"note\">", out);
		esc(out, c->fc.img_note);
		fputs("</p>\n", out);
	}
	fprintf(out, "<h2>Hottest functions (%zu of %zu executed; by block executions)</h2>\n",
		c->npages, c->nexecuted);
	fputs("<table class=\"hot\" id=\"hot\">\n<tr><th class=\"n\">#</th><th>function</th>"
	      "<th class=\"n\">invocations</th><th class=\"n\">block executions</th>"
	      "<th class=\"n\">%</th><th>counts</th><th>source</th></tr>\n", out);
	for (size_t k = 0; k < c->npages; k++) {
		const struct profile_func *f = c->pages[k].f;
		const char *src = profile__file(p, f->file);

		fprintf(out, "<tr data-addr=\"0x%" PRIx64 "\" data-count=\"%s\" "
			"data-blocks=\"%" PRId64 "\"><td class=\"n\">%zu</td><td><a href=\"%s\">",
			f->addr, raw_count(f->count, n1, sizeof(n1)), f->block_total, k + 1,
			c->pages[k].name);
		esc(out, f->name);
		fprintf(out, "</a></td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
			"<td class=\"n\">%.2f</td><td>%s</td><td class=\"mono\">",
			cfg_svg__count(f->count, n1, sizeof(n1)),
			cfg_svg__count(f->block_total, n2, sizeof(n2)),
			total ? 100.0 * (double)f->block_total / (double)total : 0.0,
			exactness(f, buf, sizeof(buf)));
		if (src) {
			esc(out, base_name(src));
			if (f->line > 0)
				fprintf(out, ":%d", f->line);
		}
		fputs("</td></tr>\n", out);
	}
	fputs("</table>\n", out);
	if (c->nexecuted > c->npages)
		fprintf(out, "<p class=\"sub\">%zu more functions ran; <code>--top N</code> gives "
			"pages to more of them.</p>\n", c->nexecuted - c->npages);
	page_tail(out);
	return close_file(c, out, "index.html");
}

/* --- function pages ------------------------------------------------------------------------ */

/* Reads the SVG at PATH: the text from its <svg element on, NUL-terminated, into *SVG (to be
 * freed through *BUF) and its width in points into *WIDTH. Returns 0 or a negative errno. */
static int read_svg(const char *path, char **buf, const char **svg, double *width)
{
	FILE *in = fopen(path, "r");
	size_t cap = 0, n = 0, r;
	const char *w;

	*buf = NULL;
	if (!in)
		return -errno;
	do {
		if (n + 65536 + 1 > cap) {
			char *m = realloc(*buf, cap = 2 * cap + 65536 + 1);

			if (!m) {
				fclose(in);
				return -ENOMEM;
			}
			*buf = m;
		}
		r = fread(*buf + n, 1, cap - n - 1, in);
		n += r;
	} while (r);
	fclose(in);
	(*buf)[n] = '\0';
	*svg = strstr(*buf, "<svg");
	if (!*svg)
		return -EINVAL;
	w = strstr(*svg, "width=\"");
	*width = w ? strtod(w + 7, NULL) : 0;
	return 0;
}

/* A jump's or call's target: a block of F, a function with a page, or a function's name. */
static void target_note(FILE *out, const struct html_ctx *c, const struct profile_func *f,
			uint64_t t)
{
	const struct profile_func *g;
	const struct hpage *pg;

	if (profile_func__block_at(f, t) >= 0 && t != f->addr) {
		fprintf(out, " <a href=\"#b-0x%" PRIx64 "\">&#8594; block</a>", t);
		return;
	}
	g = profile__func_at(c->p, t);
	if (!g)
		return;
	pg = page_at(c, t);
	fputs(" &lt;", out);
	if (pg)
		fprintf(out, "<a href=\"%s\">", pg->name);
	esc(out, g->name);
	fputs(pg ? "</a>&gt;" : "&gt;", out);
}

static void block_header(FILE *out, const struct profile *p, const struct profile_func *f,
			 uint32_t b, int64_t max, const uint32_t *first, const uint32_t *edges)
{
	const struct profile_block *pb = &f->blocks[b];
	const char *src = profile__file(p, pb->file);
	bool viol = func_code__is_violation(f, b);
	char buf[32], num[32];

	fprintf(out, "<tr class=\"bh%s\" id=\"b-0x%" PRIx64 "\" data-block=\"0x%" PRIx64 "\" "
		"data-count=\"%s\">", viol ? " viol" : "", pb->addr, pb->addr,
		raw_count(pb->count, buf, sizeof(buf)));
	count_cell(out, pb->count, max, true);
	fprintf(out, "<td colspan=\"3\">block 0x%" PRIx64 "%s", pb->addr,
		b == f->entry_block ? " (entry)" : "");
	if (src) {
		fputs(" &#183; ", out);
		esc(out, base_name(src));
		if (pb->line > 0)
			fprintf(out, ":%d", pb->line);
	}
	if (viol)
		fputs(" &#183; flow conservation fails here", out);
	for (uint32_t k = first[b]; k < first[b + 1]; k++) {
		const struct profile_edge *pe = &f->edges[edges[k]];

		fputs(k == first[b] ? " &#183; " : ", ", out);
		if (pe->to >= f->nblocks)
			fprintf(out, "<span class=\"e\" data-to=\"exit\" data-count=\"");
		else
			fprintf(out, "<span class=\"e\" data-to=\"0x%" PRIx64 "\" data-count=\"",
				f->blocks[pe->to].addr);
		fputs(raw_count(pe->count, num, sizeof(num)), out);
		fputs("\">&#8594; ", out);
		if (pe->to >= f->nblocks)
			fputs("exit", out);
		else
			fprintf(out, "<a href=\"#b-0x%" PRIx64 "\">0x%" PRIx64 "</a>",
				f->blocks[pe->to].addr, f->blocks[pe->to].addr);
		fprintf(out, " %s %s</span>", cfg_edge_kind__name(pe->kind),
			cfg_svg__count(pe->count, buf, sizeof(buf)));
	}
	fputs("</td></tr>\n", out);
}

static int write_disassembly(FILE *out, const struct html_ctx *c, const struct profile_func *f,
			     const struct dline *d, size_t n)
{
	uint32_t *first = NULL, *edges = NULL;
	int64_t max = cfg_svg__max_count(f);
	const char *last_file = NULL;
	int last_line = 0;

	fputs("<h2 id=\"disassembly\">Disassembly</h2>\n", out);
	if (!c->fc.have_cs) {
		fprintf(out, "<p class=\"note\">");
		esc(out, c->fc.img_note);
		fputs(": the blocks and their counts only.</p>\n", out);
	}
	if (func_code__out_edges(f, &first, &edges)) {
		free(first);
		free(edges);
		return -ENOMEM;
	}
	fputs("<p class=\"sub\">Each block with its count and its out-edges (kind and count); "
	      "AT&amp;T syntax.</p>\n<table class=\"dis\">\n", out);
	for (uint32_t b = 0, k = 0; b < f->nblocks; b++) {
		block_header(out, c->p, f, b, max, first, edges);
		for (; k < n && d[k].block == b; k++) {
			fputs("<tr>", out);
			count_cell(out, f->blocks[b].count, max, false);
			fprintf(out, "<td>%" PRIx64 "</td><td>", d[k].addr);
			esc(out, d[k].text);
			if (d[k].target)
				target_note(out, c, f, d[k].target);
			fputs("</td><td class=\"nocode\">", out);
			if (d[k].file && (d[k].file != last_file || d[k].line != last_line)) {
				esc(out, base_name(d[k].file));
				fprintf(out, ":%d", d[k].line);
			}
			last_file = d[k].file;
			last_line = d[k].line;
			fputs("</td></tr>\n", out);
		}
	}
	fputs("</table>\n", out);
	free(first);
	free(edges);
	return 0;
}

/* One line with code: its count, number and TEXT (NULL: not known). */
static void code_line(FILE *out, const struct sline *s, int64_t max, const char *text)
{
	char buf[32];

	fprintf(out, "<tr data-line=\"%d\" data-count=\"%s\">", s->line,
		raw_count(s->count, buf, sizeof(buf)));
	count_cell(out, s->count, max, true);
	fprintf(out, "<td class=\"n\">%d</td><td%s>", s->line, text ? "" : " class=\"nocode\"");
	esc(out, text ? text : "(past the end of the file)");
	fputs("</td></tr>\n", out);
}

struct html_src {
	FILE *out;
	int64_t max;
};

static void html_code(void *arg, const struct sline *s, const char *text)
{
	struct html_src *h = arg;

	code_line(h->out, s, h->max, text);
}

static void html_context(void *arg, int line, const char *text)
{
	struct html_src *h = arg;

	fprintf(h->out, "<tr class=\"nocode\"><td></td><td class=\"n\">%d</td><td>", line);
	esc(h->out, text);
	fputs("</td></tr>\n", h->out);
}

static void html_gap(void *arg)
{
	struct html_src *h = arg;

	fputs("<tr class=\"gap\"><td></td><td class=\"n\">&#8942;</td><td></td></tr>\n", h->out);
}

static const struct source_walk_ops html_walk = { html_code, html_context, html_gap };

/* The lines of one source file with code of the page's function, S[0, N) sorted by line:
 * each with SOURCE_CONTEXT lines around it, the lines between them skipped; by number only
 * when the file cannot be read. */
static void write_source_file(FILE *out, const struct html_ctx *c, const struct sline *s,
			      size_t n, int64_t max)
{
	char mapped[PATH_MAX], **text = NULL;
	const char *path = func_code__map_source(&c->o->source_maps, s[0].file,
						 mapped, sizeof(mapped));
	size_t ntext = 0;
	char *buf = func_code__read_source(path, &text, &ntext);
	struct html_src h = { out, max };

	fputs("<h3>", out);
	esc(out, s[0].file);
	fputs("</h3>\n", out);
	if (!buf) {
		fputs("<p class=\"note\">cannot read ", out);
		esc(out, path);
		fprintf(out, " (%s)%s: counts by line number only.</p>\n", strerror(errno),
			c->o->source_maps.n ? "" :
			"; <code>--source-map OLD=NEW</code> reads sources that moved");
	}
	fputs("<table class=\"src\">\n", out);
	func_code__walk_source(s, n, buf ? text : NULL, ntext, SOURCE_CONTEXT, &html_walk, &h);
	fputs("</table>\n", out);
	free(text);
	free(buf);
}

static int write_source(FILE *out, const struct html_ctx *c, const struct profile_func *f,
			const struct dline *d, size_t n)
{
	struct sline *s;
	const char *own = profile__file(c->p, f->file);
	int64_t max = cfg_svg__max_count(f);
	size_t w;

	fputs("<h2 id=\"source\">Source</h2>\n", out);
	if (!c->fc.have_img || !c->fc.sl) {
		fputs("<p class=\"note\">", out);
		esc(out, c->fc.have_img ? c->fc.src_note : c->fc.img_note);
		fputs(".</p>\n", out);
		return 0;
	}
	if (func_code__lines(f, d, n, &s, &w)) {
		free(s);
		return -ENOMEM;
	}
	if (!w)
		fputs("<p class=\"note\">no line of this function's code is in the line tables."
		      "</p>\n", out);
	else
		fputs("<p class=\"sub\">Each line's count is the largest count of the blocks "
		      "holding its code (as <code>edgeprof export --format lcov</code> counts it)."
		      "</p>\n", out);
	/* The function's own file first, then the others (inlined code) by name. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t k = 0, e; k < w; k = e) {
			bool mine = own && !strcmp(s[k].file, own);

			for (e = k; e < w && !strcmp(s[e].file, s[k].file); e++)
				;
			if (mine == !pass)
				write_source_file(out, c, s + k, e - k, max);
		}
	}
	free(s);
	return 0;
}

static int write_page(struct html_ctx *c, const struct hpage *pg)
{
	const struct profile_func *f = pg->f;
	const struct profile *p = c->p;
	const char *src = profile__file(p, f->file);
	struct dline *d = NULL;
	size_t nd = 0;
	char n1[32], n2[32], buf[160];
	FILE *out;
	int err = 0;

	if (c->fc.have_cs && func_code__disassemble(&c->fc, f, &d, &nd))
		return pr_err("out of memory"), -ENOMEM;
	out = open_file(c, pg->name);
	if (!out) {
		free(d);
		return -EIO;
	}
	page_head(out, f->name, base_name(p->binary_path ? p->binary_path : "?"));
	fputs("<p><a href=\"index.html\">&#8592; all functions</a></p>\n<h1 class=\"mono\">", out);
	esc(out, f->name);
	fprintf(out, "</h1>\n<p class=\"sub\" id=\"func\" data-addr=\"0x%" PRIx64 "\" "
		"data-count=\"%s\">0x%" PRIx64 " in ", f->addr, raw_count(f->count, n1, sizeof(n1)),
		f->addr);
	esc(out, base_name(p->binary_path ? p->binary_path : "?"));
	if (src) {
		fputs(" &#183; ", out);
		esc(out, src);
		if (f->line > 0)
			fprintf(out, ":%d", f->line);
	}
	fprintf(out, " &#183; %s invocations &#183; %s block executions &#183; %" PRIu32
		" blocks, %" PRIu32 " edges &#183; counts %s &#183; <a href=\"#disassembly\">"
		"disassembly</a> &#183; <a href=\"#source\">source</a></p>\n",
		cfg_svg__count(f->count, n1, sizeof(n1)),
		cfg_svg__count(f->block_total, n2, sizeof(n2)), f->nblocks, f->nedges,
		exactness(f, buf, sizeof(buf)));
	if (f->nviolations)
		fprintf(out, "<p class=\"note bad\">Flow conservation fails at %" PRIu32 " vertices "
			"(outlined in blue): these counts are NOT exact (<code>edgeprof report</code> "
			"says why).</p>\n", f->nviolations);
	if (f->status == PLAN_NAIVE)
		fputs("<p class=\"note\">This function was counted by block only: edge counts are "
		      "known only where the block counts determine them.</p>\n", out);
	fputs("<h2 id=\"graph\">Control-flow graph</h2>\n", out);
	if (!pg->drawn) {
		fprintf(out, "<p class=\"note\">Not drawn: %" PRIu32 " blocks (more than %d take dot "
			"too long).</p>\n", f->nblocks, CFG_SVG_MAX_BLOCKS);
	} else {
		char *svgbuf;
		const char *svg = NULL;
		double width = 0;

		err = read_svg(pg->svg, &svgbuf, &svg, &width);
		if (err)
			pr_err("'%s': cannot read dot's drawing of %s: %s", c->o->dir, f->name,
			       strerror(-err));
		/* A graph much wider than a window starts fitted to its width: an overview. */
		fprintf(out, "<p class=\"sub\">Blocks are filled by their count on a log scale, from "
			"pale yellow (ran once) to dark red (%s, the hottest block); grey: never ran"
			"; dashed: unknown. Edges are labelled with their counts. A block links to "
			"its disassembly.</p>\n<input type=\"checkbox\" id=\"fit\"%s><label "
			"for=\"fit\"> fit to the width</label>\n<div class=\"cfg\" id=\"cfg\">\n",
			cfg_svg__count(cfg_svg__max_count(f), n1, sizeof(n1)),
			width > FIT_WIDTH_PT ? " checked" : "");
		if (!err)
			fputs(svg, out);
		free(svgbuf);
		fputs("</div>\n", out);
	}
	if (!err)
		err = write_disassembly(out, c, f, d, nd);
	if (!err)
		err = write_source(out, c, f, d, nd);
	free(d);
	if (err == -ENOMEM)
		pr_err("out of memory");
	page_tail(out);
	if (close_file(c, out, pg->name))
		err = err ? err : -EIO;
	if (pg->drawn) {
		unlink(pg->svg);
		unlink(pg->dot);
	}
	return err;
}

/* Writes the DOT file of every page's function and has dot draw them. */
static int draw(struct html_ctx *c)
{
	const char **in = calloc(c->npages + 1, sizeof(*in)), **out = calloc(c->npages + 1,
									      sizeof(*out));
	const char **names = calloc(c->npages + 1, sizeof(*names));
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = 0;
	int err = 0;

	if (!in || !out || !names) {
		pr_err("out of memory");
		err = -ENOMEM;
		goto done;
	}
	for (size_t k = 0; k < c->npages && !err; k++) {
		struct hpage *pg = &c->pages[k];
		char name[96];
		FILE *f;

		if (!pg->f->nblocks || pg->f->nblocks > CFG_SVG_MAX_BLOCKS)
			continue;
		snprintf(name, sizeof(name), ".%zu.dot", k);
		atomic_dir__path(&c->dir, name, pg->dot, sizeof(pg->dot));
		snprintf(name, sizeof(name), ".%zu.svg", k);
		atomic_dir__path(&c->dir, name, pg->svg, sizeof(pg->svg));
		f = fopen(pg->dot, "w");
		if (!f || cfg_svg__dot(f, pg->f) | fclose(f)) {
			pr_err("'%s': cannot write a graph: %s", c->o->dir,
			       strerror(errno ? errno : EIO));
			err = -EIO;
			break;
		}
		pg->drawn = true;
		in[n] = pg->dot;
		out[n] = pg->svg;
		names[n++] = pg->f->name;
	}
	if (!err && n)
		err = cfg_svg__render(in, out, names, n, cpus > 0 ? (unsigned)cpus : 1);
done:
	free(in);
	free(out);
	free(names);
	return err;
}

int html_report__write(const struct profile *p, const char *file,
		       const struct html_report_opts *o)
{
	struct html_ctx c = { .p = p, .file = file, .o = o };
	uint32_t *order = NULL;
	int err;

	err = func_code__open(&c.fc, p, o->binary);
	if (err)
		return err;
	if (!c.fc.have_img && (o->binary || (p->binary_path && *p->binary_path)))
		pr_warn("'%s': %s", file, c.fc.img_note);
	err = choose(&c, &order);
	if (err)
		pr_err("out of memory");
	if (!err)
		err = atomic_dir__begin(&c.dir, o->dir);
	if (!err) {
		err = draw(&c);
		if (!err)
			err = write_index(&c);
		for (size_t k = 0; !err && k < c.npages; k++)
			err = write_page(&c, &c.pages[k]);
		if (err)
			atomic_dir__abort(&c.dir);
		else
			err = atomic_dir__commit(&c.dir);
	}
	if (!err)
		pr_info("'%s': index.html and %zu function page%s", o->dir, c.npages,
			c.npages == 1 ? "" : "s");
	free(order);
	free(c.pages);
	func_code__close(&c.fc);
	return err;
}
