/*
 * Writers for `edgeprof cfg`: the per-function table, the detailed view of one function,
 * Graphviz DOT, and JSON streamed one function object at a time so binaries with tens of
 * thousands of functions never need one giant tree. Addresses are ELF virtual addresses in
 * lowercase hex; block ends are exclusive; edges join block start addresses (or "exit").
 */
#include "user/report/cfg_report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/symbols.h"
#include "user/util/json_out.h"

int cfg_func_info__compute(struct cfg_func_info *fi, const struct cfg_func *f)
{
	int err;

	memset(fi, 0, sizeof(*fi));
	if (f->nblocks == 0)
		return 0;
	err = cfg_dom__compute(&fi->dom, f);
	if (err)
		return err;
	err = cfg_loops__compute(&fi->loops, f, &fi->dom);
	if (err) {
		cfg_dom__free(&fi->dom);
		return err;
	}
	fi->analyzed = true;
	return 0;
}

void cfg_func_info__release(struct cfg_func_info *fi)
{
	if (!fi->analyzed)
		return;
	cfg_loops__free(&fi->loops);
	cfg_dom__free(&fi->dom);
	fi->analyzed = false;
}

static const struct cfg_func_info *info_of(const struct cfg_report *r, const struct cfg_func *f)
{
	if (!r->info)
		return NULL;
	return &r->info[f - r->prog->funcs];
}

static bool is_fragment(const struct cfg_report *r, const struct cfg_func *f)
{
	const struct func_start *fs = symbols__func_at(&r->prog->syms, f->entry);

	return fs && fs->fragment;
}

static bool is_irreducible(const struct cfg_func_info *fi)
{
	return fi && fi->analyzed && !fi->loops.reducible;
}

const char *cfg_report__flags(const struct cfg_report *r, const struct cfg_func *f,
			      const struct cfg_func_info *fi, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
#define ADD_FLAG(cond, name)                                                        \
	do {                                                                        \
		if ((cond) && len < size)                                           \
			len += snprintf(buf + len, size - len, "%s%s", len ? " " : "", \
					name);                                      \
	} while (0)
	ADD_FLAG(f->flags & CFG_FUNC_UNRESOLVED, "unresolved");
	ADD_FLAG(f->flags & CFG_FUNC_NORETURN, "noreturn");
	ADD_FLAG(is_irreducible(fi), "irreducible");
	ADD_FLAG(f->flags & CFG_FUNC_BAD_CODE, "bad-code");
	ADD_FLAG(f->flags & CFG_FUNC_RUNS_OFF, "runs-off");
	ADD_FLAG(f->flags & CFG_FUNC_FOREIGN_ENTRY, "entered-mid");
	ADD_FLAG(is_fragment(r, f), "fragment");
#undef ADD_FLAG
	if (!buf[0])
		snprintf(buf, size, "-");
	return buf;
}

static const char *const source_names[] = {
	"symtab", "dynsym", "fde", "entry", "init_array", "call",
};

static const char *sources_str(unsigned sources, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(source_names) / sizeof(source_names[0]); i++)
		if ((sources & (1u << i)) && len < size)
			len += snprintf(buf + len, size - len, "%s%s", len ? "," : "",
					source_names[i]);
	if (!buf[0])
		snprintf(buf, size, "-");
	return buf;
}

/* Source line of ADDR, or false. */
static bool line_of(const struct cfg_report *r, uint64_t addr, const char **file, int *line)
{
	if (!r->sl)
		return false;
	return srcline__lookup(r->sl, addr, file, line) == 0 && *file;
}

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static uint32_t max_loop_depth(const struct cfg_func_info *fi)
{
	uint32_t d = 0;

	if (!fi || !fi->analyzed)
		return 0;
	for (uint32_t i = 0; i < fi->loops.nloops; i++)
		if (fi->loops.loops[i].depth > d)
			d = fi->loops.loops[i].depth;
	return d;
}

/* The name of what an edge or a call reaches at TARGET, or NULL. */
static const char *callee_name(const struct cfg_report *r, uint64_t target)
{
	const struct cfg_func *g;
	const char *name;

	if (!target)
		return NULL;
	g = cfg_program__func_at(r->prog, target);
	if (g)
		return g->name;
	name = symbols__plt_name(&r->prog->syms, target);
	return name;
}

/* Flushes OUT: 0, or the negative errno of a failed write (-EIO when unknown). */
static int finish(FILE *out)
{
	errno = 0;
	if (fflush(out) || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

/* --- table ------------------------------------------------------------------------------ */

int cfg_report__table(const struct cfg_report *r)
{
	const struct cfg_program *prog = r->prog;
	uint64_t nblocks = 0, nedges = 0, ninsns = 0, nloops = 0;
	size_t nunres = 0, nnoret = 0, nirred = 0, nbad = 0;
	char flags[96], h[HEXLEN];

	fprintf(r->out, "%-18s %7s %7s %6s %7s  %-24s %s\n", "ADDRESS", "BLOCKS", "EDGES",
		"LOOPS", "INSNS", "FLAGS", "NAME");
	for (size_t i = 0; i < prog->nfuncs; i++) {
		const struct cfg_func *f = &prog->funcs[i];
		const struct cfg_func_info *fi = info_of(r, f);
		char loops[16];

		if (fi && fi->analyzed)
			snprintf(loops, sizeof(loops), "%" PRIu32, fi->loops.nloops);
		else
			snprintf(loops, sizeof(loops), "%s", fi ? "0" : "-");
		fprintf(r->out, "%-18s %7" PRIu32 " %7" PRIu32 " %6s %7" PRIu32 "  %-24s %s\n",
			jout_addr(h, f->entry), f->nblocks, f->nedges, loops, f->ninsns,
			cfg_report__flags(r, f, fi, flags, sizeof(flags)), f->name);
		nblocks += f->nblocks;
		nedges += f->nedges;
		ninsns += f->ninsns;
		if (fi && fi->analyzed)
			nloops += fi->loops.nloops;
		nunres += !!(f->flags & CFG_FUNC_UNRESOLVED);
		nnoret += !!(f->flags & CFG_FUNC_NORETURN);
		nbad += !!(f->flags & CFG_FUNC_BAD_CODE);
		nirred += is_irreducible(fi);
	}
	fprintf(r->out,
		"%zu functions, %" PRIu64 " blocks, %" PRIu64 " edges, %" PRIu64
		" instructions, %" PRIu64 " loops; %zu unresolved, %zu noreturn, "
		"%zu irreducible, %zu bad code%s%s%s\n",
		prog->nfuncs, nblocks, nedges, ninsns, nloops, nunres, nnoret, nirred, nbad,
		!prog->syms.stripped ? "" :
		prog->syms.debug_file ? " (stripped: symbols from the debug file " :
					" (stripped: functions from .dynsym and .eh_frame)",
		prog->syms.stripped && prog->syms.debug_file ? prog->syms.debug_file : "",
		prog->syms.stripped && prog->syms.debug_file ? ")" : "");
	return finish(r->out);
}

/* --- one function in detail ------------------------------------------------------------ */

static void block_ref(const struct cfg_func *f, uint32_t v, char *buf, size_t size)
{
	if (v == cfg_func__exit(f))
		snprintf(buf, size, "EXIT");
	else if (v == CFG_NO_VERTEX || v > f->nblocks)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "b%" PRIu32, v);
}

static void print_edge_extra(const struct cfg_report *r, const struct cfg_edge *e)
{
	char h[HEXLEN];
	const char *name;

	if (e->kind == EDGE_SWITCH && e->ncases)
		fprintf(r->out, " (%u case%s)", e->ncases, e->ncases == 1 ? "" : "s");
	if (e->flags & CFG_EDGE_COND_TAKEN)
		fprintf(r->out, " conditional");
	if (e->flags & CFG_EDGE_INDIRECT)
		fprintf(r->out, " indirect");
	if (e->target) {
		name = callee_name(r, e->target);
		fprintf(r->out, " -> %s%s%s%s", jout_addr(h, e->target), name ? " <" : "",
			name ? name : "", name ? ">" : "");
	}
}

static const char *const reg_names[16] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15",
};

/* How the loop at HEADER of F is counted by induction (cfg/induction.h), when asked. */
static void print_induction(const struct cfg_report *r, const struct cfg_func *f,
			    uint32_t header)
{
	const struct cfg_induction *ind = r->ind;
	size_t fi = (size_t)(f - r->prog->funcs);
	char h[HEXLEN], a[16];

	if (!ind || !ind->first)
		return;
	for (uint32_t i = ind->first[fi]; i < ind->first[fi + 1]; i++) {
		const struct cfg_iv *iv = &ind->iv[i];

		if (iv->header != header)
			continue;
		block_ref(f, iv->block, a, sizeof(a));
		fprintf(r->out, "       induction: %s steps by %+" PRId64 " at %s (%s); %" PRIu32
			" action%s:", reg_names[iv->reg & 15], iv->step,
			jout_addr(h, iv->step_addr), a, iv->nactions, iv->nactions == 1 ? "" : "s");
		for (uint32_t k = 0; k < iv->nactions; k++) {
			const struct cfg_iv_action *x = &ind->actions[iv->first_action + k];

			fprintf(r->out, " %s%s+=%s@%s", x->out ? "exits" : "entries",
				x->kind == IV_JCC_TAKEN ? "(taken)" :
				x->kind == IV_JCC_NOT ? "(not taken)" : "",
				reg_names[x->reg & 15], jout_addr(h, x->addr));
		}
		fprintf(r->out, "\n");
		return;
	}
	for (uint32_t i = 0; i < ind->nrejects; i++)
		if (ind->rejects[i].func == fi && ind->rejects[i].header == header) {
			fprintf(r->out, "       not counted by induction: %s\n", ind->rejects[i].why);
			return;
		}
}

static void print_loops(const struct cfg_report *r, const struct cfg_func *f,
			const struct cfg_func_info *fi)
{
	char h[HEXLEN], a[16], b[16];

	if (!fi || !fi->analyzed)
		return;
	fprintf(r->out, "\nloops: %" PRIu32 "%s\n", fi->loops.nloops,
		fi->loops.reducible ? "" : " (irreducible regions present)");
	for (uint32_t l = 0; l < fi->loops.nloops; l++) {
		const struct cfg_loop *lp = &fi->loops.loops[l];

		fprintf(r->out, "  L%-3" PRIu32 " header b%" PRIu32 " %s  depth %" PRIu32, l,
			lp->header, jout_addr(h, f->blocks[lp->header].start), lp->depth);
		if (lp->parent >= 0)
			fprintf(r->out, " (in L%" PRId32 ")", lp->parent);
		fprintf(r->out, "  %" PRIu32 " block%s  back edges from:", lp->nblocks,
			lp->nblocks == 1 ? "" : "s");
		for (uint32_t k = 0; k < lp->nback; k++) {
			block_ref(f, f->edges[lp->back_edges[k]].from, a, sizeof(a));
			fprintf(r->out, " %s", a);
		}
		fprintf(r->out, "  exits:");
		if (!lp->nexits)
			fprintf(r->out, " none");
		for (uint32_t k = 0; k < lp->nexits; k++) {
			const struct cfg_edge *e = &f->edges[lp->exits[k]];

			block_ref(f, e->from, a, sizeof(a));
			block_ref(f, e->to, b, sizeof(b));
			fprintf(r->out, " %s->%s", a, b);
		}
		fprintf(r->out, "\n");
		print_induction(r, f, lp->header);
	}
	for (uint32_t k = 0; k < fi->loops.nirreducible; k++) {
		const struct cfg_edge *e = &f->edges[fi->loops.irreducible_edges[k]];

		block_ref(f, e->from, a, sizeof(a));
		block_ref(f, e->to, b, sizeof(b));
		fprintf(r->out, "  irreducible retreating edge %s->%s\n", a, b);
	}
}

static void print_calls(const struct cfg_report *r, const struct cfg_func *f)
{
	char h[HEXLEN], t[HEXLEN];

	fprintf(r->out, "\ncalls: %" PRIu32 "\n", f->ncalls);
	for (uint32_t i = 0; i < f->ncalls; i++) {
		const struct cfg_call *c = &f->calls[i];
		const char *name = c->name ? c->name : callee_name(r, c->target);

		fprintf(r->out, "  %-18s b%-5" PRIu32 " %-5s %s", jout_addr(h, c->site), c->block,
			c->tail ? "tail" : "call",
			name ? name : (c->indirect ? "(indirect)" : "?"));
		if (c->target)
			fprintf(r->out, " %s", jout_addr(t, c->target));
		if (c->indirect && name)
			fprintf(r->out, " indirect");
		if (c->external)
			fprintf(r->out, " external");
		if (c->noreturn)
			fprintf(r->out, " noreturn%s", c->noreturn_why == CFG_NORET_STATUS ?
				" (constant non-zero status)" : c->noreturn_why == CFG_NORET_LAYOUT ?
				" (nothing follows the call in the function)" : "");
		fprintf(r->out, "\n");
	}
}

int cfg_report__func(const struct cfg_report *r, const struct cfg_func *f,
		     const struct cfg_func_info *fi, const struct cfg_domtree *pdom)
{
	char h[HEXLEN], e[HEXLEN], flags[96], src[96], a[16], b[16];
	const char *file;
	int line;

	fprintf(r->out, "function %s\n", f->name);
	fprintf(r->out, "  entry    %s", jout_addr(h, f->entry));
	if (f->nblocks)
		fprintf(r->out, " (block b%" PRIu32 ")", f->entry_block);
	fprintf(r->out, "\n");
	if (f->sym_size)
		fprintf(r->out, "  size     %" PRIu64 " bytes\n", f->sym_size);
	fprintf(r->out, "  found by %s\n", sources_str(f->sources, src, sizeof(src)));
	if (line_of(r, f->entry, &file, &line))
		fprintf(r->out, "  source   %s:%d\n", file, line);
	fprintf(r->out, "  flags    %s\n", cfg_report__flags(r, f, fi, flags, sizeof(flags)));
	if (f->flags & CFG_FUNC_BAD_CODE)
		fprintf(r->out, "  bad code at %s\n", jout_addr(h, f->bad_addr));
	else if (f->flags & CFG_FUNC_RUNS_OFF)
		fprintf(r->out, "  runs off its end into other code at %s\n",
			jout_addr(h, f->bad_addr));
	if (f->nforeign) {
		fprintf(r->out, "  entered by another function's code at");
		for (uint32_t i = 0; i < f->nforeign; i++)
			fprintf(r->out, " %s", jout_addr(h, f->blocks[f->foreign[i]].start));
		fprintf(r->out, "\n");
	}
	fprintf(r->out, "  shape    %" PRIu32 " blocks, %" PRIu32 " edges, %" PRIu32
		" instructions", f->nblocks, f->nedges, f->ninsns);
	if (fi && fi->analyzed)
		fprintf(r->out, ", %" PRIu32 " loops (max depth %" PRIu32 ")",
			fi->loops.nloops, max_loop_depth(fi));
	fprintf(r->out, "\n");

	fprintf(r->out, "\nblocks: %" PRIu32 "  (idom: immediate dominator, ipdom: immediate "
		"post-dominator, loop: innermost loop)\n", f->nblocks);
	fprintf(r->out, "  %-6s %-18s %-18s %5s %6s %6s %5s  %s\n", "ID", "START", "END", "INSNS",
		"IDOM", "IPDOM", "LOOP", "LINE");
	for (uint32_t i = 0; i < f->nblocks; i++) {
		const struct cfg_block *bl = &f->blocks[i];
		char loop[16] = "-";

		if (fi && fi->analyzed && i == f->entry_block)
			snprintf(a, sizeof(a), "entry");
		else
			block_ref(f, fi && fi->analyzed ? fi->dom.idom[i] : CFG_NO_VERTEX, a,
				  sizeof(a));
		block_ref(f, pdom ? pdom->idom[i] : CFG_NO_VERTEX, b, sizeof(b));
		if (fi && fi->analyzed && fi->loops.innermost[i] >= 0)
			snprintf(loop, sizeof(loop), "L%" PRId32, fi->loops.innermost[i]);
		fprintf(r->out, "  b%-5" PRIu32 " %-18s %-18s %5" PRIu32 " %6s %6s %5s  ", i,
			jout_addr(h, bl->start), jout_addr(e, bl->end), bl->ninsns, a, b, loop);
		if (line_of(r, bl->start, &file, &line))
			fprintf(r->out, "%s:%d", basename_of(file), line);
		else
			fprintf(r->out, "-");
		fprintf(r->out, "\n");
	}

	fprintf(r->out, "\nedges: %" PRIu32 "\n", f->nedges);
	for (uint32_t i = 0; i < f->nedges; i++) {
		const struct cfg_edge *ed = &f->edges[i];

		block_ref(f, ed->from, a, sizeof(a));
		block_ref(f, ed->to, b, sizeof(b));
		fprintf(r->out, "  e%-4" PRIu32 " %5s -> %-5s %s", i, a, b,
			cfg_edge_kind__name(ed->kind));
		print_edge_extra(r, ed);
		if (fi && fi->analyzed && fi->loops.is_back_edge[i])
			fprintf(r->out, " [back edge]");
		fprintf(r->out, "\n");
	}

	print_loops(r, f, fi);
	print_calls(r, f);

	fprintf(r->out, "\njump tables: %" PRIu32 "\n", f->ntables);
	for (uint32_t i = 0; i < f->ntables; i++) {
		const struct cfg_jump_table *t = &f->tables[i];

		fprintf(r->out, "  jump %s  table %s  %" PRIu32 " entries x %u bytes%s\n",
			jout_addr(h, t->jump), jout_addr(e, t->table), t->entries, t->entry_size,
			t->relative ? " (relative)" : "");
	}
	fprintf(r->out, "\nunresolved jumps: %" PRIu32 "\n", f->nunresolved);
	for (uint32_t i = 0; i < f->nunresolved; i++)
		fprintf(r->out, "  %s\n", jout_addr(h, f->unresolved[i]));
	return finish(r->out);
}

/* --- DOT ---------------------------------------------------------------------------------- */

static void dot_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, out);
	}
	fputc('"', out);
}

int cfg_report__dot(const struct cfg_report *r, const struct cfg_func *f,
		    const struct cfg_func_info *fi)
{
	char h[HEXLEN], label[512];
	const char *file;
	int line;

	fprintf(r->out, "digraph ");
	dot_string(r->out, f->name);
	fprintf(r->out, " {\n");
	snprintf(label, sizeof(label), "%s @ %s", f->name, jout_addr(h, f->entry));
	fprintf(r->out, "\tgraph [fontname=\"monospace\", labelloc=t, label=");
	dot_string(r->out, label);
	fprintf(r->out, "];\n");
	fprintf(r->out, "\tnode [shape=box, fontname=\"monospace\", fontsize=10];\n");
	fprintf(r->out, "\tedge [fontname=\"monospace\", fontsize=9];\n");
	for (uint32_t i = 0; i < f->nblocks; i++) {
		const struct cfg_block *bl = &f->blocks[i];
		int n = snprintf(label, sizeof(label), "b%" PRIu32 " %s\\n%" PRIu32 " insn%s", i,
				 jout_addr(h, bl->start), bl->ninsns, bl->ninsns == 1 ? "" : "s");

		if (line_of(r, bl->start, &file, &line) && n > 0 && (size_t)n < sizeof(label)) {
			snprintf(label + n, sizeof(label) - n, "\\n%s:%d", basename_of(file), line);
			/* A backslash in a file name would start a DOT escape. */
			for (char *p = label + n + 2; *p; p++)
				if (*p == '\\')
					*p = '/';
		}
		/* Labels carry "\n" escapes already: print them verbatim, quoting only quotes. */
		fprintf(r->out, "\tb%" PRIu32 " [label=\"", i);
		for (const char *p = label; *p; p++) {
			if (*p == '"')
				fputc('\\', r->out);
			fputc(*p, r->out);
		}
		fprintf(r->out, "\"%s];\n", i == f->entry_block ? ", penwidth=2, style=bold" : "");
	}
	fprintf(r->out, "\texit [label=\"EXIT\", shape=ellipse];\n");
	for (uint32_t i = 0; i < f->nedges; i++) {
		const struct cfg_edge *e = &f->edges[i];
		bool back = fi && fi->analyzed && fi->loops.is_back_edge[i];

		fprintf(r->out, "\tb%" PRIu32 " -> ", e->from);
		if (e->to == cfg_func__exit(f))
			fprintf(r->out, "exit");
		else
			fprintf(r->out, "b%" PRIu32, e->to);
		fprintf(r->out, " [label=\"%s\"", cfg_edge_kind__name(e->kind));
		if (back)
			fprintf(r->out, ", style=bold, color=red, constraint=false");
		else if (e->kind == EDGE_UNRESOLVED)
			fprintf(r->out, ", style=dashed, color=orange");
		else if (e->to == cfg_func__exit(f))
			fprintf(r->out, ", style=dotted");
		fprintf(r->out, "];\n");
	}
	fprintf(r->out, "}\n");
	return finish(r->out);
}

/* --- JSON ----------------------------------------------------------------------------------- */

/* The JSON name of vertex V of F: the block's start address or "exit". */
static json_t *jvertex(const struct cfg_func *f, uint32_t v)
{
	if (v >= f->nblocks)
		return json_string("exit");
	return jout_hex(f->blocks[v].start);
}

static json_t *json_edge_ref(const struct cfg_func *f, uint32_t edge, int *err)
{
	json_t *o = json_object();

	if (!o) {
		(*err)++;
		return NULL;
	}
	jout_set(o, "from", jvertex(f, f->edges[edge].from), err);
	jout_set(o, "to", jvertex(f, f->edges[edge].to), err);
	return o;
}

static json_t *json_flags(const struct cfg_report *r, const struct cfg_func *f,
			  const struct cfg_func_info *fi, int *err)
{
	char buf[96], *save = NULL, *tok;
	json_t *a = json_array();

	if (!a) {
		(*err)++;
		return NULL;
	}
	cfg_report__flags(r, f, fi, buf, sizeof(buf));
	if (!strcmp(buf, "-"))
		return a;
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		jout_push(a, json_string(tok), err);
	return a;
}

static json_t *json_blocks(const struct cfg_report *r, const struct cfg_func *f, int *err)
{
	json_t *a = json_array();
	const char *file;
	int line;

	for (uint32_t i = 0; a && i < f->nblocks; i++) {
		const struct cfg_block *bl = &f->blocks[i];
		json_t *o = json_object();

		if (!o) {
			(*err)++;
			break;
		}
		jout_set(o, "addr", jout_hex(bl->start), err);
		jout_set(o, "end", jout_hex(bl->end), err);
		jout_set(o, "insns", json_integer(bl->ninsns), err);
		if (line_of(r, bl->start, &file, &line)) {
			jout_set(o, "file", json_string(file), err);
			jout_set(o, "line", json_integer(line), err);
		}
		jout_push(a, o, err);
	}
	return a;
}

static json_t *json_edges(const struct cfg_report *r, const struct cfg_func *f,
			  const struct cfg_func_info *fi, int *err)
{
	json_t *a = json_array();
	bool *retreating = calloc(f->nedges + 1, sizeof(*retreating));

	/* The edges Ball-Larus path numbering cuts (estimators/bl_paths.h). */
	if (!retreating || cfg_loops__retreating(f, retreating, NULL, NULL))
		(*err)++;
	for (uint32_t i = 0; a && retreating && i < f->nedges; i++) {
		const struct cfg_edge *e = &f->edges[i];
		json_t *o = json_object();
		const char *name;

		if (!o) {
			(*err)++;
			break;
		}
		jout_set(o, "from", jvertex(f, e->from), err);
		jout_set(o, "to", jvertex(f, e->to), err);
		jout_set(o, "kind", json_string(cfg_edge_kind__name(e->kind)), err);
		if (e->kind == EDGE_SWITCH)
			jout_set(o, "cases", json_integer(e->ncases), err);
		if (e->flags & CFG_EDGE_COND_TAKEN)
			jout_set(o, "conditional", json_true(), err);
		if (e->flags & CFG_EDGE_INDIRECT)
			jout_set(o, "indirect", json_true(), err);
		if (e->target) {
			jout_set(o, "target", jout_hex(e->target), err);
			name = callee_name(r, e->target);
			if (name)
				jout_set(o, "callee", json_string(name), err);
		}
		if (fi && fi->analyzed && fi->loops.is_back_edge[i])
			jout_set(o, "back", json_true(), err);
		if (retreating[i])
			jout_set(o, "retreating", json_true(), err);
		jout_push(a, o, err);
	}
	free(retreating);
	return a;
}

static json_t *json_loops(const struct cfg_func *f, const struct cfg_func_info *fi, int *err)
{
	json_t *a = json_array();

	for (uint32_t l = 0; a && fi && fi->analyzed && l < fi->loops.nloops; l++) {
		const struct cfg_loop *lp = &fi->loops.loops[l];
		json_t *o = json_object(), *body = json_array(), *back = json_array(),
		       *exits = json_array();

		jout_set(o, "header", jout_hex(f->blocks[lp->header].start), err);
		jout_set(o, "depth", json_integer(lp->depth), err);
		jout_set(o, "parent", lp->parent >= 0 ? json_integer(lp->parent) : json_null(), err);
		for (uint32_t k = 0; body && k < lp->nblocks; k++)
			jout_push(body, jout_hex(f->blocks[lp->blocks[k]].start), err);
		for (uint32_t k = 0; back && k < lp->nback; k++)
			jout_push(back, json_edge_ref(f, lp->back_edges[k], err), err);
		for (uint32_t k = 0; exits && k < lp->nexits; k++)
			jout_push(exits, json_edge_ref(f, lp->exits[k], err), err);
		if (o) {
			jout_set(o, "blocks", body, err);
			jout_set(o, "back_edges", back, err);
			jout_set(o, "exits", exits, err);
		} else {
			json_decref(body);
			json_decref(back);
			json_decref(exits);
		}
		jout_push(a, o, err);
	}
	return a;
}

static json_t *json_calls(const struct cfg_report *r, const struct cfg_func *f, int *err)
{
	json_t *a = json_array();

	for (uint32_t i = 0; a && i < f->ncalls; i++) {
		const struct cfg_call *c = &f->calls[i];
		const char *name = c->name ? c->name : callee_name(r, c->target);
		json_t *o = json_object();

		if (!o) {
			(*err)++;
			break;
		}
		jout_set(o, "site", jout_hex(c->site), err);
		jout_set(o, "target", c->target ? jout_hex(c->target) : json_null(), err);
		jout_set(o, "name", name ? json_string(name) : json_null(), err);
		jout_set(o, "indirect", json_boolean(c->indirect), err);
		jout_set(o, "tail", json_boolean(c->tail), err);
		jout_set(o, "noreturn", json_boolean(c->noreturn), err);
		if (c->noreturn)
			jout_set(o, "noreturn_why", json_string(c->noreturn_why == CFG_NORET_STATUS ?
				 "status" : c->noreturn_why == CFG_NORET_LAYOUT ? "layout" : "callee"),
				 err);
		jout_set(o, "external", json_boolean(c->external), err);
		jout_push(a, o, err);
	}
	return a;
}

static json_t *json_tables(const struct cfg_func *f, int *err)
{
	json_t *a = json_array();

	for (uint32_t i = 0; a && i < f->ntables; i++) {
		const struct cfg_jump_table *t = &f->tables[i];
		json_t *o = json_object();

		if (!o) {
			(*err)++;
			break;
		}
		jout_set(o, "jump", jout_hex(t->jump), err);
		jout_set(o, "table", jout_hex(t->table), err);
		jout_set(o, "entries", json_integer(t->entries), err);
		jout_set(o, "entry_size", json_integer(t->entry_size), err);
		jout_set(o, "relative", json_boolean(t->relative), err);
		jout_push(a, o, err);
	}
	return a;
}

static json_t *json_func(const struct cfg_report *r, const struct cfg_func *f,
			 const struct cfg_func_info *fi)
{
	json_t *o = json_object(), *unres = json_array(), *src = json_array();
	const char *file;
	int line, err = 0;

	if (!o || !unres || !src) {
		json_decref(o);
		json_decref(unres);
		json_decref(src);
		return NULL;
	}
	jout_set(o, "name", json_string(f->name), &err);
	jout_set(o, "addr", jout_hex(f->entry), &err);
	jout_set(o, "size", json_integer((json_int_t)f->sym_size), &err);
	for (size_t i = 0; i < sizeof(source_names) / sizeof(source_names[0]); i++)
		if (f->sources & (1u << i))
			jout_push(src, json_string(source_names[i]), &err);
	jout_set(o, "found_by", src, &err);
	jout_set(o, "flags", json_flags(r, f, fi, &err), &err);
	if (f->flags & CFG_FUNC_BAD_CODE)
		jout_set(o, "bad_addr", jout_hex(f->bad_addr), &err);
	if (line_of(r, f->entry, &file, &line)) {
		jout_set(o, "file", json_string(file), &err);
		jout_set(o, "line", json_integer(line), &err);
	}
	jout_set(o, "insns", json_integer(f->ninsns), &err);
	jout_set(o, "blocks", json_blocks(r, f, &err), &err);
	jout_set(o, "edges", json_edges(r, f, fi, &err), &err);
	if (fi && fi->analyzed) {
		jout_set(o, "reducible", json_boolean(fi->loops.reducible), &err);
		jout_set(o, "loops", json_loops(f, fi, &err), &err);
	}
	jout_set(o, "calls", json_calls(r, f, &err), &err);
	jout_set(o, "jump_tables", json_tables(f, &err), &err);
	for (uint32_t i = 0; i < f->nunresolved; i++)
		jout_push(unres, jout_hex(f->unresolved[i]), &err);
	jout_set(o, "unresolved", unres, &err);
	if (f->nforeign) {
		json_t *fe = json_array();

		for (uint32_t i = 0; i < f->nforeign; i++)
			jout_push(fe, jout_hex(f->blocks[f->foreign[i]].start), &err);
		jout_set(o, "foreign_entries", fe, &err);
	}
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *json_binary(const struct cfg_report *r)
{
	json_t *o = json_object();
	int err = 0;

	if (!o)
		return NULL;
	jout_set(o, "path", json_string(r->img->path ? r->img->path : ""), &err);
	jout_set(o, "build_id", r->img->build_id[0] ? json_string(r->img->build_id) : json_null(),
	     &err);
	jout_set(o, "pie", json_boolean(r->img->pie), &err);
	jout_set(o, "entry", jout_hex(r->img->entry), &err);
	jout_set(o, "stripped", json_boolean(r->prog->syms.stripped), &err);
	jout_set(o, "debug_file",
		 r->prog->syms.debug_file ? json_string(r->prog->syms.debug_file) : json_null(),
		 &err);
	jout_set(o, "nfunctions", json_integer((json_int_t)r->prog->nfuncs), &err);
	if (err) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int cfg_report__json(const struct cfg_report *r, const struct cfg_func *only, json_t *extra)
{
	const size_t flags = JSON_COMPACT;
	json_t *o = json_binary(r);
	bool first = true;

	if (!o)
		return -ENOMEM;
	fputs("{\"binary\":", r->out);
	json_dumpf(o, r->out, flags);
	json_decref(o);
	fputs(",\n\"functions\":[\n", r->out);
	for (size_t i = 0; i < r->prog->nfuncs; i++) {
		const struct cfg_func *f = &r->prog->funcs[i];

		if (only && f != only)
			continue;
		o = json_func(r, f, info_of(r, f));
		if (!o)
			return -ENOMEM;
		if (!first)
			fputs(",\n", r->out);
		first = false;
		json_dumpf(o, r->out, flags);
		json_decref(o);
		if (ferror(r->out))
			return -EIO;
	}
	fputs("\n]", r->out);
	if (extra) {
		fputs(",\n\"stats\":", r->out);
		json_dumpf(extra, r->out, flags);
	}
	fputs("}\n", r->out);
	return finish(r->out);
}
