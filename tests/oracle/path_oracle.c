/*
 * path_oracle: exact Ball-Larus (1996) acyclic path counts per function, from a complete trace
 * of a run (tests/oracle/step_trace.c single-steps every thread). It is the oracle of
 * `edgeprof run --paths`, whose path counts must equal these.
 *
 *   path_oracle --cfg CFG.json --trace TRACE [--json | --report]
 *
 * CFG.json is `edgeprof cfg BINARY --json`: only its block boundaries, edges (with their
 * "retreating" flags: the edges Ball-Larus numbering cuts), function entries and call names are
 * read. Independence: nothing else of edgeprof is used (no cfg/, estimators/ or user/ code);
 * what ran comes from the trace alone, replayed per thread with a shadow stack of activations
 * {function, entry sp, current block, current path}, by these rules applied to each instruction
 * (pc, sp) of the main executable:
 *
 *   - activations whose entry sp is below sp have been left (a return, a longjmp, an unwind):
 *     they are popped (also at a LEAVE record, the sp where control left the executable);
 *   - pc at a function's entry with sp below the top's entry sp (or no activation) starts an
 *     activation (a call); with sp equal to the top's entry sp it is a tail jump (the top
 *     leaves, the new activation starts), or, into the top's own function, an edge into its
 *     entry block (a loop);
 *   - otherwise pc must lie in the top's function: at a block start it enters that block (the
 *     edge is previous block -> new block), elsewhere it must lie in the current block (calls
 *     made inside a block do not end it). Anything else is an inconsistency: counted, the
 *     first few printed, exit status 1; the record is skipped (a block entered without a CFG
 *     edge from the current block is an inconsistency too, but the block is entered).
 *
 * The activation started at the ELF entry point (_start) is never popped by the sp rule: the
 * kernel put argc where a return address would be, and _start pops it.
 *
 * Paths: an activation's path starts at its entry block (start "entry"). Taking a retreating
 * edge u->v ends the path at u (end "back", "end_to" v) and starts one at v (start "back",
 * "start_from" u): the back edge is part of both paths' identities, as in Ball-Larus
 * numbering, where each cut edge has its own dummy edges. Leaving the function (return, tail
 * jump, popped by a longjmp or an unwind) ends the path at the current block (end "exit");
 * activations still live when their thread or the process ends (or execs) end "cut". A longjmp
 * that lands in a live activation, after a call to a setjmp-family function (by the CFG's call
 * names) in block s, at s's call_return successor v, when the current block u has no CFG edge
 * to v, ends the path at u (end "exit": edgeprof's abandon pseudo-edge u -> EXIT) and starts
 * one at v (start "resume", "start_from" s): setjmp's call returns a second time, so the edge
 * s -> v is taken once more (as callgrind and edgeprof count it) while s does not run again
 * and is not in the path (edgeprof's resume pseudo-edge EXIT -> s, then s -> v). A path is
 * its function, start, end and block sequence; two parallel edges (both outcomes of a jcc to
 * one block) cannot be told apart in a trace and make one path.
 *
 * Output: without an option a short summary. --json: {"binary", "trace", "functions":[{"name",
 * "addr", "count" (activations), "paths":[{"start", ["start_from"], "end", ["end_to"], "blocks",
 * "count"}], "blocks":[{"addr","count"}], "edges":[{"from","to","count"}] (block-to-block CFG
 * edges, parallel ones merged; a transition without a CFG edge is listed with "cfg": false),
 * "resumes":[{"from" u,"to" v,"count"}] (longjmp arrivals)}], "inconsistencies"}.
 * --report: the same replay's counts in the shape of `edgeprof report --json` (functions with
 * "count", blocks with "addr", "end", "count", edges with "from", "to", "kind", "count";
 * "violations" = inconsistencies) for tests/oracle/count_oracle.c: a block-to-block edge counts
 * its transitions (null when parallel to another); an edge to "exit" counts the activations
 * that left from its block (a return, a tail jump, a longjmp), plus for "noreturn" those cut
 * there, and is null when its block has other exit edges or its kind is not one of these.
 *
 * Exit status: 0 when the replay is consistent, 1 otherwise, 2 on bad input.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "support/json_hex.h"

/* The trace format (written by tests/oracle/step_trace.c). */
#include "step_trace.h"

#define NONE UINT32_MAX
#define MAX_PRINTED 10

enum start_kind { START_ENTRY, START_BACK, START_RESUME };
enum end_kind { END_EXIT, END_BACK, END_CUT };
static const char *const start_names[] = {"entry", "back", "resume"};
static const char *const end_names[] = {"exit", "back", "cut"};

struct block {
	uint64_t start, end;
	uint32_t func;
	uint32_t first_out, nout; /* its edges: out[first_out .. first_out + nout) */
	uint32_t resume_edge;	  /* the call_return edge s -> it of a setjmp call s, or NONE */
	uint64_t count;		  /* entries */
	uint64_t ends_leave;	  /* activations that left the function from it */
	uint64_t ends_cut;	  /* activations cut there (thread or process end) */
};

struct edge {
	uint32_t from, to; /* block indices; to == NONE: the exit vertex */
	char *kind;
	bool retreating;
	bool parallel; /* another edge joins the same two blocks */
	uint64_t count;
};

struct func {
	char *name;
	uint64_t addr;
	uint32_t first_block, nblocks; /* sorted by address */
	uint32_t entry;		       /* block index */
	uint32_t first_edge, nedges;
	uint64_t activations;
};

/* A non-CFG transition (an inconsistency) or a longjmp arrival, by function and blocks. */
struct jump {
	uint32_t func, from, to;
	bool resume;
	uint64_t count;
};

struct act {
	uint32_t func;
	uint64_t entry_sp;
	uint32_t cur;
	uint32_t start_kind, start_from;
	uint32_t *path;
	size_t n, cap;
};

struct thr {
	uint32_t tid;
	struct act *stack;
	size_t depth, cap;
	bool away; /* control was outside the top activation since its last instruction */
};

struct path_entry {
	uint64_t hash;
	uint32_t off, len; /* key in the pool: func, start, start_from, end, end_to, blocks... */
	uint64_t count;
};

struct oracle {
	const char *cfg_path, *trace_path;
	char *bin_path, *bin_build_id;
	uint64_t elf_entry;
	bool has_elf_entry;
	struct func *funcs;
	uint32_t nfuncs;
	struct block *blocks;
	uint32_t nblocks;
	struct edge *edges;
	uint32_t nedges;
	uint32_t *out;	    /* edge indices by from block */
	uint32_t *by_addr;  /* block indices sorted by start */
	uint32_t *by_entry; /* function indices sorted by entry address */
	struct jump *jumps;
	size_t njumps, capjumps;
	struct thr *thrs;
	size_t nthrs, capthrs;
	struct path_entry *table;
	size_t table_cap, table_n;
	uint32_t *pool;
	size_t pool_n, pool_cap;
	uint32_t *key;
	size_t key_cap;
	uint64_t records, inconsistencies, resumes;
	char trace_bin[4096], trace_build_id[129];
};

static void usage(void)
{
	fprintf(stderr, "usage: path_oracle --cfg CFG.json --trace TRACE [--json | --report]\n");
}

static void oom(void)
{
	fprintf(stderr, "path_oracle: out of memory\n");
	exit(2);
}

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		oom();
	return q;
}

/* Grows *P (of *CAP elements of SIZE bytes) to hold at least NEED elements. */
static void grow(void *pp, size_t *cap, size_t need, size_t size)
{
	void **p = pp;
	size_t c = *cap ? *cap : 16;

	if (need <= *cap)
		return;
	while (c < need)
		c *= 2;
	*p = xrealloc(*p, c * size);
	*cap = c;
}

/* ---- the CFG --------------------------------------------------------------------------------- */

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static struct oracle *sort_ctx;

static int cmp_block_idx(const void *a, const void *b)
{
	const struct block *x = &sort_ctx->blocks[*(const uint32_t *)a];
	const struct block *y = &sort_ctx->blocks[*(const uint32_t *)b];

	return cmp_u64(x->start, y->start);
}

static int cmp_func_idx(const void *a, const void *b)
{
	return cmp_u64(sort_ctx->funcs[*(const uint32_t *)a].addr,
		       sort_ctx->funcs[*(const uint32_t *)b].addr);
}

static int cmp_block(const void *a, const void *b)
{
	return cmp_u64(((const struct block *)a)->start, ((const struct block *)b)->start);
}

static int cmp_edge_from(const void *a, const void *b)
{
	const struct edge *x = &sort_ctx->edges[*(const uint32_t *)a];
	const struct edge *y = &sort_ctx->edges[*(const uint32_t *)b];

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The block of function F that starts at ADDR, or NONE. */
static uint32_t block_starting(const struct oracle *o, const struct func *f, uint64_t addr)
{
	uint32_t lo = 0, hi = f->nblocks;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (o->blocks[f->first_block + mid].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < f->nblocks && o->blocks[f->first_block + lo].start == addr)
		return f->first_block + lo;
	return NONE;
}

/* The block of function F that contains PC, or NONE. */
static uint32_t block_in_func(const struct oracle *o, const struct func *f, uint64_t pc)
{
	uint32_t lo = 0, hi = f->nblocks;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (o->blocks[f->first_block + mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && pc < o->blocks[f->first_block + lo - 1].end)
		return f->first_block + lo - 1;
	return NONE;
}

/* The block of any function that contains PC, or NONE. */
static uint32_t block_at(const struct oracle *o, uint64_t pc)
{
	uint32_t lo = 0, hi = o->nblocks;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (o->blocks[o->by_addr[mid]].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && pc < o->blocks[o->by_addr[lo - 1]].end)
		return o->by_addr[lo - 1];
	return NONE;
}

/* The function whose entry is PC, or NONE. */
static uint32_t func_at_entry(const struct oracle *o, uint64_t pc)
{
	uint32_t lo = 0, hi = o->nfuncs;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (o->funcs[o->by_entry[mid]].addr < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < o->nfuncs && o->funcs[o->by_entry[lo]].addr == pc)
		return o->by_entry[lo];
	return NONE;
}

static bool is_setjmp_name(const char *name)
{
	static const char *const names[] = {"setjmp",	 "_setjmp",	"__setjmp",
					    "sigsetjmp", "__sigsetjmp", "_setjmp_r"};
	size_t i, len;

	if (!name)
		return false;
	len = strcspn(name, "@");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && !strncmp(name, names[i], len))
			return true;
	return false;
}

/* Loads one function JF (index FI) of the CFG: its blocks (sorted by address) and edges,
 * appended to O's arrays. Returns 0, or -1 with a message printed. */
static int load_func(struct oracle *o, json_t *jf, size_t fi, size_t *capb, size_t *cape)
{
	json_t *jblocks = json_object_get(jf, "blocks"), *jedges = json_object_get(jf, "edges");
	const char *name = json_string_value(json_object_get(jf, "name"));
	struct func *f = &o->funcs[o->nfuncs];
	size_t i;

	memset(f, 0, sizeof(*f));
	if (!name || !parse_hex(json_object_get(jf, "addr"), &f->addr) || !json_is_array(jblocks) ||
	    !json_is_array(jedges)) {
		fprintf(stderr, "path_oracle: %s: function %zu: bad name, addr, blocks or edges\n",
			o->cfg_path, fi);
		return -1;
	}
	f->name = strdup(name);
	if (!f->name)
		oom();
	f->first_block = o->nblocks;
	f->nblocks = (uint32_t)json_array_size(jblocks);
	grow(&o->blocks, capb, (size_t)o->nblocks + f->nblocks, sizeof(*o->blocks));
	for (i = 0; i < f->nblocks; i++) {
		struct block *b = &o->blocks[o->nblocks + i];
		json_t *j = json_array_get(jblocks, i);

		memset(b, 0, sizeof(*b));
		b->func = o->nfuncs;
		b->resume_edge = NONE;
		if (!parse_hex(json_object_get(j, "addr"), &b->start) ||
		    !parse_hex(json_object_get(j, "end"), &b->end) || b->end <= b->start) {
			fprintf(stderr, "path_oracle: %s: %s: block %zu malformed\n", o->cfg_path,
				name, i);
			return -1;
		}
	}
	o->nblocks += f->nblocks;
	qsort(&o->blocks[f->first_block], f->nblocks, sizeof(*o->blocks), cmp_block);
	for (i = 1; i < f->nblocks; i++)
		if (o->blocks[f->first_block + i].start < o->blocks[f->first_block + i - 1].end) {
			fprintf(stderr, "path_oracle: %s: %s: blocks overlap at 0x%" PRIx64 "\n",
				o->cfg_path, name, o->blocks[f->first_block + i].start);
			return -1;
		}
	f->entry = block_starting(o, f, f->addr);
	if (f->nblocks && f->entry == NONE) {
		fprintf(stderr, "path_oracle: %s: %s: entry 0x%" PRIx64 " is not a block\n",
			o->cfg_path, name, f->addr);
		return -1;
	}

	f->first_edge = o->nedges;
	grow(&o->edges, cape, (size_t)o->nedges + json_array_size(jedges), sizeof(*o->edges));
	for (i = 0; i < json_array_size(jedges); i++) {
		json_t *j = json_array_get(jedges, i), *jfrom = json_object_get(j, "from"),
		       *jto = json_object_get(j, "to");
		const char *kind = json_string_value(json_object_get(j, "kind"));
		struct edge *e = &o->edges[o->nedges];
		uint64_t from, to;

		if (json_is_string(jfrom) && !strcmp(json_string_value(jfrom), "entry"))
			continue; /* from the virtual entry vertex: nothing to replay */
		memset(e, 0, sizeof(*e));
		e->to = NONE;
		if (!kind || !parse_hex(jfrom, &from) ||
		    (e->from = block_starting(o, f, from)) == NONE ||
		    (!(json_is_string(jto) && !strcmp(json_string_value(jto), "exit")) &&
		     (!parse_hex(jto, &to) || (e->to = block_starting(o, f, to)) == NONE))) {
			fprintf(stderr,
				"path_oracle: %s: %s: edge %zu does not join blocks of the "
				"function\n",
				o->cfg_path, name, i);
			return -1;
		}
		e->kind = strdup(kind);
		if (!e->kind)
			oom();
		e->retreating = json_is_true(json_object_get(j, "retreating"));
		o->nedges++;
	}
	f->nedges = o->nedges - f->first_edge;

	/* Blocks a longjmp may land in: after a call to a setjmp-family function. */
	for (i = 0; i < json_array_size(json_object_get(jf, "calls")); i++) {
		json_t *j = json_array_get(json_object_get(jf, "calls"), i);
		uint64_t site;
		uint32_t b, k;

		if (!is_setjmp_name(json_string_value(json_object_get(j, "name"))) ||
		    !parse_hex(json_object_get(j, "site"), &site) ||
		    (b = block_in_func(o, f, site)) == NONE)
			continue;
		for (k = f->first_edge; k < o->nedges; k++)
			if (o->edges[k].from == b && o->edges[k].to != NONE &&
			    !strcmp(o->edges[k].kind, "call_return") &&
			    o->blocks[o->edges[k].to].resume_edge == NONE)
				o->blocks[o->edges[k].to].resume_edge = k;
	}
	o->nfuncs++;
	return 0;
}

/* Loads CFG.json into O. Returns 0, or -1 with a message printed. */
static int load_cfg(struct oracle *o)
{
	json_error_t jerr;
	json_t *root = json_load_file(o->cfg_path, 0, &jerr), *funcs, *bin;
	size_t capb = 0, cape = 0, fi;
	uint32_t i, k;
	int ret = -1;

	if (!root) {
		fprintf(stderr, "path_oracle: %s:%d: %s\n", o->cfg_path, jerr.line, jerr.text);
		return -1;
	}
	funcs = json_object_get(root, "functions");
	bin = json_object_get(root, "binary");
	if (!json_is_array(funcs) || !json_is_object(bin)) {
		fprintf(stderr, "path_oracle: %s: no \"functions\" array or \"binary\" object\n",
			o->cfg_path);
		goto out;
	}
	o->bin_path = strdup(json_string_value(json_object_get(bin, "path")) ?: "");
	o->bin_build_id = strdup(json_string_value(json_object_get(bin, "build_id")) ?: "");
	if (!o->bin_path || !o->bin_build_id)
		oom();
	o->has_elf_entry = parse_hex(json_object_get(bin, "entry"), &o->elf_entry);
	o->funcs = calloc(json_array_size(funcs) + 1, sizeof(*o->funcs));
	if (!o->funcs)
		oom();
	for (fi = 0; fi < json_array_size(funcs); fi++)
		if (load_func(o, json_array_get(funcs, fi), fi, &capb, &cape))
			goto out;
	sort_ctx = o;
	o->by_addr = calloc((size_t)o->nblocks + 1, sizeof(*o->by_addr));
	o->by_entry = calloc((size_t)o->nfuncs + 1, sizeof(*o->by_entry));
	o->out = calloc((size_t)o->nedges + 1, sizeof(*o->out));
	if (!o->by_addr || !o->by_entry || !o->out)
		oom();
	for (i = 0; i < o->nblocks; i++)
		o->by_addr[i] = i;
	qsort(o->by_addr, o->nblocks, sizeof(*o->by_addr), cmp_block_idx);
	for (i = 0; i < o->nfuncs; i++)
		o->by_entry[i] = i;
	qsort(o->by_entry, o->nfuncs, sizeof(*o->by_entry), cmp_func_idx);
	for (i = 0; i < o->nedges; i++)
		o->out[i] = i;
	qsort(o->out, o->nedges, sizeof(*o->out), cmp_edge_from);
	for (i = 0; i < o->nedges; i++) {
		struct block *b = &o->blocks[o->edges[o->out[i]].from];

		if (!b->nout)
			b->first_out = i;
		b->nout++;
	}
	for (i = 0; i < o->nblocks; i++) {
		const struct block *b = &o->blocks[i];

		for (k = 0; k < b->nout; k++) {
			struct edge *e = &o->edges[o->out[b->first_out + k]];
			uint32_t m;

			for (m = 0; m < b->nout; m++)
				if (m != k && e->to != NONE &&
				    o->edges[o->out[b->first_out + m]].to == e->to)
					e->parallel = true;
		}
	}
	ret = 0;
out:
	json_decref(root);
	return ret;
}

/* ---- paths ------------------------------------------------------------------------------- */

static uint64_t hash_key(const uint32_t *k, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= k[i];
		h *= 1099511628211ull;
	}
	return h ^ (h >> 29);
}

static void table_insert(struct oracle *o, const uint32_t *key, size_t n, uint64_t count);

static void table_grow(struct oracle *o)
{
	struct path_entry *old = o->table;
	size_t cap = o->table_cap, i;

	o->table_cap = cap ? 2 * cap : 1024;
	o->table = calloc(o->table_cap, sizeof(*o->table));
	if (!o->table)
		oom();
	for (i = 0; i < cap; i++) {
		size_t k;

		if (!old[i].len)
			continue;
		for (k = old[i].hash & (o->table_cap - 1); o->table[k].len;
		     k = (k + 1) & (o->table_cap - 1))
			;
		o->table[k] = old[i];
	}
	free(old);
}

/* Adds COUNT to the path KEY[0, N) (func, start, start_from, end, end_to, blocks...). */
static void table_insert(struct oracle *o, const uint32_t *key, size_t n, uint64_t count)
{
	uint64_t h = hash_key(key, n);
	size_t k;

	if (2 * (o->table_n + 1) > o->table_cap)
		table_grow(o);
	for (k = h & (o->table_cap - 1); o->table[k].len; k = (k + 1) & (o->table_cap - 1)) {
		struct path_entry *e = &o->table[k];

		if (e->hash == h && e->len == n && !memcmp(o->pool + e->off, key, n * 4)) {
			e->count += count;
			return;
		}
	}
	grow(&o->pool, &o->pool_cap, o->pool_n + n, sizeof(*o->pool));
	memcpy(o->pool + o->pool_n, key, n * 4);
	o->table[k].hash = h;
	o->table[k].off = (uint32_t)o->pool_n;
	o->table[k].len = (uint32_t)n;
	o->table[k].count = count;
	o->pool_n += n;
	o->table_n++;
}

/* Ends activation A's current path with END (END_TO: the head of the back edge, or NONE). */
static void end_path(struct oracle *o, struct act *a, uint32_t end, uint32_t end_to)
{
	size_t n = 6 + a->n;

	grow(&o->key, &o->key_cap, n, sizeof(*o->key));
	o->key[0] = a->func;
	o->key[1] = a->start_kind;
	o->key[2] = a->start_from;
	o->key[3] = end;
	o->key[4] = end_to;
	o->key[5] = (uint32_t)a->n;
	memcpy(o->key + 6, a->path, a->n * sizeof(*a->path));
	table_insert(o, o->key, n, 1);
	a->n = 0;
}

/* Starts a path of activation A at block B. */
static void start_path(struct act *a, uint32_t b, uint32_t kind, uint32_t from)
{
	a->start_kind = kind;
	a->start_from = from;
	a->n = 0;
	grow(&a->path, &a->cap, 1, sizeof(*a->path));
	a->path[a->n++] = b;
	a->cur = b;
}

static void append_block(struct act *a, uint32_t b)
{
	grow(&a->path, &a->cap, a->n + 1, sizeof(*a->path));
	a->path[a->n++] = b;
	a->cur = b;
}

/* ---- the replay -------------------------------------------------------------------------- */

static struct thr *get_thread(struct oracle *o, uint32_t tid, bool create)
{
	size_t i;

	for (i = 0; i < o->nthrs; i++)
		if (o->thrs[i].tid == tid)
			return &o->thrs[i];
	if (!create)
		return NULL;
	grow(&o->thrs, &o->capthrs, o->nthrs + 1, sizeof(*o->thrs));
	memset(&o->thrs[o->nthrs], 0, sizeof(*o->thrs));
	o->thrs[o->nthrs].tid = tid;
	return &o->thrs[o->nthrs++];
}

static void inconsistency(struct oracle *o, const struct thr *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void inconsistency(struct oracle *o, const struct thr *t, const char *fmt, ...)
{
	va_list ap;

	if (o->inconsistencies++ >= MAX_PRINTED)
		return;
	fprintf(stderr, "path_oracle: inconsistency at record %" PRIu64 " (tid %u): ", o->records,
		t->tid);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Ends the top activation of T: its path ends END_EXIT (it left the function) or END_CUT. */
static void pop_act(struct oracle *o, struct thr *t, uint32_t end)
{
	struct act *a = &t->stack[t->depth - 1];

	end_path(o, a, end, NONE);
	if (end == END_CUT)
		o->blocks[a->cur].ends_cut++;
	else
		o->blocks[a->cur].ends_leave++;
	t->depth--;
	t->away = true;
}

static void push_act(struct oracle *o, struct thr *t, uint32_t func, uint64_t sp)
{
	struct func *f = &o->funcs[func];
	struct act *a;

	if (t->depth == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;

		t->stack = xrealloc(t->stack, cap * sizeof(*t->stack));
		memset(t->stack + t->cap, 0, (cap - t->cap) * sizeof(*t->stack));
		t->cap = cap;
	}
	a = &t->stack[t->depth++];
	a->func = func;
	/* _start: no return address at its sp, and it pops argc. */
	a->entry_sp =
	    t->depth == 1 && o->has_elf_entry && f->addr == o->elf_entry ? UINT64_MAX : sp;
	start_path(a, f->entry, START_ENTRY, NONE);
	f->activations++;
	o->blocks[f->entry].count++;
	t->away = false;
}

/* Pops the activations of T that SP shows have been left. */
static void pop_left(struct oracle *o, struct thr *t, uint64_t sp)
{
	while (t->depth && t->stack[t->depth - 1].entry_sp < sp)
		pop_act(o, t, END_EXIT);
}

static void note_jump(struct oracle *o, uint32_t func, uint32_t from, uint32_t to, bool resume)
{
	size_t i;

	for (i = 0; i < o->njumps; i++)
		if (o->jumps[i].func == func && o->jumps[i].from == from && o->jumps[i].to == to &&
		    o->jumps[i].resume == resume) {
			o->jumps[i].count++;
			return;
		}
	grow(&o->jumps, &o->capjumps, o->njumps + 1, sizeof(*o->jumps));
	o->jumps[o->njumps++] = (struct jump){func, from, to, resume, 1};
}

/* The top activation A of T enters block V (a block start was reached). */
static void enter_block(struct oracle *o, struct thr *t, struct act *a, uint32_t v)
{
	const struct block *u = &o->blocks[a->cur];
	uint32_t k, e = NONE;

	for (k = 0; k < u->nout && e == NONE; k++)
		if (o->edges[o->out[u->first_out + k]].to == v)
			e = o->out[u->first_out + k];
	o->blocks[v].count++;
	if (e == NONE) {
		e = o->blocks[v].resume_edge;
		if (t->away && e != NONE) {
			/* A longjmp into this live activation: its setjmp call returns again. */
			o->blocks[a->cur].ends_leave++;
			o->edges[e].count++;
			end_path(o, a, END_EXIT, NONE);
			start_path(a, v, START_RESUME, o->edges[e].from);
			note_jump(o, a->func, (uint32_t)(u - o->blocks), v, true);
			o->resumes++;
			return;
		}
		inconsistency(o, t, "%s: no CFG edge 0x%" PRIx64 " -> 0x%" PRIx64,
			      o->funcs[a->func].name, u->start, o->blocks[v].start);
		note_jump(o, a->func, (uint32_t)(u - o->blocks), v, false);
		append_block(a, v);
		return;
	}
	o->edges[e].count++;
	if (o->edges[e].retreating) {
		uint32_t from = a->cur;

		end_path(o, a, END_BACK, v);
		start_path(a, v, START_BACK, from);
	} else {
		append_block(a, v);
	}
}

/* Thread T is about to execute the instruction at PC with stack pointer SP. */
static void replay_step(struct oracle *o, struct thr *t, uint64_t pc, uint64_t sp)
{
	struct act *a;
	uint32_t fe, b;

	pop_left(o, t, sp);
	a = t->depth ? &t->stack[t->depth - 1] : NULL;
	fe = func_at_entry(o, pc);
	if (fe != NONE && o->funcs[fe].nblocks) {
		if (!a || sp < a->entry_sp) {
			push_act(o, t, fe, sp);
			return;
		}
		if (sp == a->entry_sp && fe != a->func) {
			pop_act(o, t, END_EXIT); /* a tail jump */
			push_act(o, t, fe, sp);
			return;
		}
		/* fe == a->func, sp == entry sp: a jump to its own entry block */
	}
	b = a ? block_in_func(o, &o->funcs[a->func], pc) : NONE;
	if (b == NONE) {
		uint32_t g = block_at(o, pc);

		if (g != NONE)
			inconsistency(o, t,
				      "pc 0x%" PRIx64 " (sp 0x%" PRIx64 ") in %s, but the "
				      "top activation is %s's",
				      pc, sp, o->funcs[o->blocks[g].func].name,
				      a ? o->funcs[a->func].name : "nobody");
		t->away = true; /* outside every function (the PLT) */
		return;
	}
	if (pc == o->blocks[b].start)
		enter_block(o, t, a, b);
	else if (b != a->cur)
		inconsistency(o, t,
			      "%s: pc 0x%" PRIx64 " inside block 0x%" PRIx64 " reached "
			      "from block 0x%" PRIx64 " without passing its start",
			      o->funcs[a->func].name, pc, o->blocks[b].start,
			      o->blocks[a->cur].start);
	t->away = false;
}

static void cut_thread(struct oracle *o, struct thr *t)
{
	while (t->depth)
		pop_act(o, t, END_CUT);
}

/* Replays the trace. Returns 0, or -1 with a message printed (bad input). */
static int replay(struct oracle *o)
{
	FILE *f = fopen(o->trace_path, "rb");
	struct trace_header h;
	struct trace_rec *recs = malloc(4096 * sizeof(*recs));
	bool ended = false;
	struct stat stbuf;
	size_t n, i, pad;
	int ret = -1;
	char skip[8];

	if (!recs)
		oom();
	if (!f) {
		fprintf(stderr, "path_oracle: %s: %s\n", o->trace_path, strerror(errno));
		free(recs);
		return -1;
	}
	if (fread(&h, sizeof(h), 1, f) != 1 || memcmp(h.magic, TRACE_MAGIC, 8) ||
	    h.version != TRACE_VERSION || h.path_len >= sizeof(o->trace_bin) ||
	    h.build_id_len >= sizeof(o->trace_build_id) ||
	    fread(o->trace_bin, 1, h.path_len, f) != h.path_len ||
	    fread(o->trace_build_id, 1, h.build_id_len, f) != h.build_id_len) {
		fprintf(stderr, "path_oracle: %s: not a step_trace trace (version %d)\n",
			o->trace_path, TRACE_VERSION);
		goto out;
	}
	pad = (8 - (h.path_len + h.build_id_len) % 8) % 8;
	if (fread(skip, 1, pad, f) != pad || fstat(fileno(f), &stbuf) ||
	    ((uint64_t)stbuf.st_size - sizeof(h) - h.path_len - h.build_id_len - pad) %
		sizeof(*recs)) {
		fprintf(stderr, "path_oracle: %s: truncated header or record\n", o->trace_path);
		goto out;
	}
	if (o->bin_build_id[0] && o->trace_build_id[0] &&
	    strcasecmp(o->bin_build_id, o->trace_build_id)) {
		fprintf(stderr, "path_oracle: %s: build id %s is not the CFG's (%s, %s)\n",
			o->trace_path, o->trace_build_id, o->bin_build_id, o->cfg_path);
		goto out;
	}
	while ((n = fread(recs, sizeof(*recs), 4096, f)) > 0) {
		for (i = 0; i < n; i++) {
			const struct trace_rec *r = &recs[i];
			struct thr *t;
			size_t k;

			o->records++;
			if (ended) {
				fprintf(stderr,
					"path_oracle: %s: records after the end of the process\n",
					o->trace_path);
				goto out;
			}
			switch (r->kind) {
			case REC_STEP:
				replay_step(o, get_thread(o, r->tid, true), r->vaddr, r->sp);
				break;
			case REC_LEAVE:
				t = get_thread(o, r->tid, true);
				pop_left(o, t, r->sp);
				t->away = true;
				break;
			case REC_THREAD_EXIT:
				t = get_thread(o, r->tid, false);
				if (t) {
					cut_thread(o, t);
					for (k = 0; k < t->cap; k++)
						free(t->stack[k].path);
					free(t->stack);
					*t = o->thrs[--o->nthrs];
				}
				break;
			case REC_PROCESS_EXIT:
			case REC_EXEC:
				for (k = 0; k < o->nthrs; k++)
					cut_thread(o, &o->thrs[k]);
				ended = true;
				break;
			default:
				fprintf(stderr,
					"path_oracle: %s: record %" PRIu64 ": unknown kind %u\n",
					o->trace_path, o->records, r->kind);
				goto out;
			}
		}
	}
	if (ferror(f)) {
		fprintf(stderr, "path_oracle: %s: read error\n", o->trace_path);
		goto out;
	}
	if (!ended) {
		fprintf(stderr,
			"path_oracle: %s: incomplete trace (no PROCESS_EXIT or EXEC "
			"record at its end)\n",
			o->trace_path);
		goto out;
	}
	ret = 0;
out:
	fclose(f);
	free(recs);
	return ret;
}

/* ---- output ------------------------------------------------------------------------------ */

static json_t *hex(uint64_t v)
{
	char s[32];

	snprintf(s, sizeof(s), "0x%" PRIx64, v);
	return json_string(s);
}

static int cmp_path(const void *a, const void *b)
{
	const struct path_entry *x = a, *y = b;
	const uint32_t *p = sort_ctx->pool + x->off, *q = sort_ctx->pool + y->off;
	uint32_t i, n = x->len < y->len ? x->len : y->len;

	for (i = 0; i < n; i++)
		if (p[i] != q[i])
			return p[i] < q[i] ? -1 : 1;
	return x->len < y->len ? -1 : x->len > y->len;
}

static json_t *binary_json(const struct oracle *o)
{
	json_t *b = json_object();

	json_object_set_new(b, "path", json_string(o->bin_path));
	json_object_set_new(b, "build_id",
			    o->bin_build_id[0] ? json_string(o->bin_build_id) : json_null());
	return b;
}

/* Paths of every function as JSON arrays, indexed by function (sorted for stable output). */
static json_t **paths_json(struct oracle *o)
{
	json_t **out = calloc((size_t)o->nfuncs + 1, sizeof(*out));
	struct path_entry *all = calloc(o->table_n + 1, sizeof(*all));
	size_t i, n = 0;
	uint32_t k;

	if (!out || !all)
		oom();
	for (i = 0; i < o->table_cap; i++)
		if (o->table[i].len)
			all[n++] = o->table[i];
	sort_ctx = o;
	qsort(all, n, sizeof(*all), cmp_path);
	for (k = 0; k < o->nfuncs; k++)
		out[k] = json_array();
	for (i = 0; i < n; i++) {
		const uint32_t *key = o->pool + all[i].off;
		json_t *p = json_object(), *bl = json_array();

		json_object_set_new(p, "start", json_string(start_names[key[1]]));
		if (key[2] != NONE)
			json_object_set_new(p, "start_from", hex(o->blocks[key[2]].start));
		json_object_set_new(p, "end", json_string(end_names[key[3]]));
		if (key[4] != NONE)
			json_object_set_new(p, "end_to", hex(o->blocks[key[4]].start));
		for (k = 0; k < key[5]; k++)
			json_array_append_new(bl, hex(o->blocks[key[6 + k]].start));
		json_object_set_new(p, "blocks", bl);
		json_object_set_new(p, "count", json_integer((json_int_t)all[i].count));
		json_array_append_new(out[key[0]], p);
	}
	free(all);
	return out;
}

/* The --json document. */
static json_t *oracle_json(struct oracle *o)
{
	json_t *root = json_object(), *funcs = json_array(), *tr = json_object();
	json_t **paths = paths_json(o);
	uint32_t fi, i, k;

	json_object_set_new(root, "binary", binary_json(o));
	json_object_set_new(tr, "path", json_string(o->trace_path));
	json_object_set_new(tr, "binary", json_string(o->trace_bin));
	json_object_set_new(tr, "records", json_integer((json_int_t)o->records));
	json_object_set_new(root, "trace", tr);
	for (fi = 0; fi < o->nfuncs; fi++) {
		const struct func *f = &o->funcs[fi];
		json_t *jf = json_object(), *bl = json_array(), *ed = json_array();
		json_t *res = json_array();

		json_object_set_new(jf, "name", json_string(f->name));
		json_object_set_new(jf, "addr", hex(f->addr));
		json_object_set_new(jf, "count", json_integer((json_int_t)f->activations));
		json_object_set_new(jf, "paths", paths[fi]);
		for (i = f->first_block; i < f->first_block + f->nblocks; i++) {
			json_t *b = json_object();

			json_object_set_new(b, "addr", hex(o->blocks[i].start));
			json_object_set_new(b, "count",
					    json_integer((json_int_t)o->blocks[i].count));
			json_array_append_new(bl, b);
		}
		json_object_set_new(jf, "blocks", bl);
		/* Block-to-block edges, parallel ones merged (their counts are on the first). */
		for (i = f->first_edge; i < f->first_edge + f->nedges; i++) {
			const struct edge *e = &o->edges[i];
			uint64_t c = 0;
			bool first = true;
			json_t *je;

			if (e->to == NONE)
				continue;
			for (k = f->first_edge; k < f->first_edge + f->nedges; k++)
				if (o->edges[k].from == e->from && o->edges[k].to == e->to) {
					if (k < i)
						first = false;
					c += o->edges[k].count;
				}
			if (!first)
				continue;
			je = json_object();
			json_object_set_new(je, "from", hex(o->blocks[e->from].start));
			json_object_set_new(je, "to", hex(o->blocks[e->to].start));
			json_object_set_new(je, "count", json_integer((json_int_t)c));
			json_array_append_new(ed, je);
		}
		for (i = 0; i < o->njumps; i++) {
			const struct jump *j = &o->jumps[i];
			json_t *je;

			if (j->func != fi)
				continue;
			je = json_object();
			json_object_set_new(je, "from", hex(o->blocks[j->from].start));
			json_object_set_new(je, "to", hex(o->blocks[j->to].start));
			json_object_set_new(je, "count", json_integer((json_int_t)j->count));
			if (!j->resume)
				json_object_set_new(je, "cfg", json_false());
			json_array_append_new(j->resume ? res : ed, je);
		}
		json_object_set_new(jf, "edges", ed);
		json_object_set_new(jf, "resumes", res);
		json_array_append_new(funcs, jf);
	}
	free(paths);
	json_object_set_new(root, "functions", funcs);
	json_object_set_new(root, "inconsistencies", json_integer((json_int_t)o->inconsistencies));
	return root;
}

/* An exit edge's count (see the top comment), or -1 for null. */
static int64_t exit_edge_count(const struct oracle *o, const struct edge *e)
{
	const struct block *b = &o->blocks[e->from];
	uint32_t k, exits = 0;

	for (k = 0; k < b->nout; k++)
		if (o->edges[o->out[b->first_out + k]].to == NONE)
			exits++;
	if (exits != 1)
		return -1;
	if (!strcmp(e->kind, "noreturn"))
		return (int64_t)(b->ends_leave + b->ends_cut);
	if (!strcmp(e->kind, "return") || !strcmp(e->kind, "tail_call") ||
	    !strcmp(e->kind, "taken") || !strcmp(e->kind, "jump") || !strcmp(e->kind, "switch"))
		return (int64_t)b->ends_leave;
	return -1;
}

/* The --report document: counts in the shape of `edgeprof report --json`. */
static json_t *report_json(const struct oracle *o)
{
	json_t *root = json_object(), *funcs = json_array();
	uint32_t fi, i;

	json_object_set_new(root, "binary", binary_json(o));
	json_object_set_new(root, "violations", json_integer((json_int_t)o->inconsistencies));
	for (fi = 0; fi < o->nfuncs; fi++) {
		const struct func *f = &o->funcs[fi];
		json_t *jf = json_object(), *bl = json_array(), *ed = json_array();

		json_object_set_new(jf, "name", json_string(f->name));
		json_object_set_new(jf, "addr", hex(f->addr));
		json_object_set_new(jf, "count", json_integer((json_int_t)f->activations));
		for (i = f->first_block; i < f->first_block + f->nblocks; i++) {
			json_t *b = json_object();

			json_object_set_new(b, "addr", hex(o->blocks[i].start));
			json_object_set_new(b, "end", hex(o->blocks[i].end));
			json_object_set_new(b, "count",
					    json_integer((json_int_t)o->blocks[i].count));
			json_array_append_new(bl, b);
		}
		for (i = f->first_edge; i < f->first_edge + f->nedges; i++) {
			const struct edge *e = &o->edges[i];
			json_t *je = json_object();
			int64_t c = e->to == NONE ? exit_edge_count(o, e)
				    : e->parallel ? -1
						  : (int64_t)e->count;

			json_object_set_new(je, "from", hex(o->blocks[e->from].start));
			json_object_set_new(je, "to",
					    e->to == NONE ? json_string("exit")
							  : hex(o->blocks[e->to].start));
			json_object_set_new(je, "kind", json_string(e->kind));
			json_object_set_new(je, "count", c < 0 ? json_null() : json_integer(c));
			json_array_append_new(ed, je);
		}
		json_object_set_new(jf, "blocks", bl);
		json_object_set_new(jf, "edges", ed);
		json_array_append_new(funcs, jf);
	}
	json_object_set_new(root, "functions", funcs);
	return root;
}

static void print_summary(const struct oracle *o)
{
	uint64_t acts = 0, execs = 0, *npaths = calloc((size_t)o->nfuncs + 1, sizeof(*npaths));
	uint64_t *nexecs = calloc((size_t)o->nfuncs + 1, sizeof(*nexecs));
	uint32_t fi, ran = 0;
	size_t i;

	if (!npaths || !nexecs)
		oom();
	for (i = 0; i < o->table_cap; i++)
		if (o->table[i].len) {
			npaths[o->pool[o->table[i].off]]++;
			nexecs[o->pool[o->table[i].off]] += o->table[i].count;
			execs += o->table[i].count;
		}
	for (fi = 0; fi < o->nfuncs; fi++) {
		if (!o->funcs[fi].activations)
			continue;
		ran++;
		acts += o->funcs[fi].activations;
		printf("  %-32s activations %" PRIu64 ", paths %" PRIu64 " distinct, %" PRIu64
		       " executed\n",
		       o->funcs[fi].name, o->funcs[fi].activations, npaths[fi], nexecs[fi]);
	}
	printf("path_oracle %s: records %" PRIu64 ", functions run %u, activations %" PRIu64
	       ", paths %zu distinct, %" PRIu64 " executed, longjmp resumes %" PRIu64
	       "; inconsistencies %" PRIu64 " %s\n",
	       o->trace_path, o->records, ran, acts, o->table_n, execs, o->resumes,
	       o->inconsistencies, o->inconsistencies ? "FAIL" : "ok");
	free(npaths);
	free(nexecs);
}

static void free_oracle(struct oracle *o)
{
	size_t i, k;

	for (i = 0; i < o->nfuncs; i++)
		free(o->funcs[i].name);
	for (i = 0; i < o->nedges; i++)
		free(o->edges[i].kind);
	for (i = 0; i < o->nthrs; i++) {
		for (k = 0; k < o->thrs[i].cap; k++)
			free(o->thrs[i].stack[k].path);
		free(o->thrs[i].stack);
	}
	free(o->funcs);
	free(o->blocks);
	free(o->edges);
	free(o->out);
	free(o->by_addr);
	free(o->by_entry);
	free(o->jumps);
	free(o->thrs);
	free(o->table);
	free(o->pool);
	free(o->key);
	free(o->bin_path);
	free(o->bin_build_id);
}

int main(int argc, char **argv)
{
	struct oracle o;
	bool as_json = false, as_report = false;
	json_t *doc = NULL;
	int i, ret = 2;

	memset(&o, 0, sizeof(o));
	for (i = 1; i < argc; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "--cfg")) {
			o.cfg_path = argv[++i];
		} else if (i + 1 < argc && !strcmp(argv[i], "--trace")) {
			o.trace_path = argv[++i];
		} else if (!strcmp(argv[i], "--json")) {
			as_json = true;
		} else if (!strcmp(argv[i], "--report")) {
			as_report = true;
		} else {
			usage();
			return 2;
		}
	}
	if (!o.cfg_path || !o.trace_path || (as_json && as_report)) {
		usage();
		return 2;
	}
	if (load_cfg(&o) || replay(&o))
		goto out;
	if (o.inconsistencies > MAX_PRINTED)
		fprintf(stderr, "path_oracle: ... %" PRIu64 " more inconsistencies not shown\n",
			o.inconsistencies - MAX_PRINTED);
	if (as_json || as_report) {
		doc = as_json ? oracle_json(&o) : report_json(&o);
		if (!doc || json_dumpf(doc, stdout, JSON_COMPACT) || putchar('\n') == EOF) {
			fprintf(stderr, "path_oracle: cannot write the JSON output\n");
			goto out;
		}
	} else {
		print_summary(&o);
	}
	if (fflush(stdout)) {
		fprintf(stderr, "path_oracle: write error\n");
		goto out;
	}
	ret = o.inconsistencies ? 1 : 0;
out:
	json_decref(doc);
	free_oracle(&o);
	return ret;
}
