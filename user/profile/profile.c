/*
 * The profile file (see profile.h for the schema): the writer streams the document one
 * function (or one site, one counter) at a time, formatted by hand into a buffer of its own
 * (jansson for the small parts: header, reals, strings to escape), into a temporary file that
 * replaces the old profile only once it is complete and on disk; the reader loads the JSON,
 * checks every member (types, ranges, addresses, cross references, summary totals) and copies
 * it into plain arrays, reporting the first problem as one line.
 */
#include "user/util/json_out.h"
#include "user/profile/profile.h"
#include "user/profile/profile_dest.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "user/util/log.h"

static const char *const status_names[] = {
	[PLAN_CHORDS] = "chords", [PLAN_NAIVE] = "naive", [PLAN_EXCLUDED] = "excluded",
};

static const char *const class_names[] = {
	[PROBE_STEPPED] = "stepped", [PROBE_EMULATED] = "emulated",
	[PROBE_NOP5] = "nop5",       [PROBE_NEVER] = "never",
	[PROBE_PATCH] = "patch",     [PROBE_PATCH_FLAGS] = "patch-flags",
};

static const char *const site_kind_names[] = {
	[SITE_COUNT] = "count", [SITE_BRANCH] = "branch", [SITE_INDIRECT] = "indirect",
};

json_t *profile_exec__json(const struct profile_exec *execs, size_t n, int *err)
{
	json_t *ex = json_array();

	for (size_t i = 0; ex && i < n; i++) {
		const struct profile_exec *e = &execs[i];
		json_t *o = json_object();

		if (!o) {
			*err = -1;
			break;
		}
		jout_set(o, "pid", json_integer(e->pid), err);
		jout_set(o, "main", json_boolean(e->main), err);
		jout_set(o, "at_s", json_real(isfinite(e->at) && e->at > 0 ? e->at : 0.0), err);
		jout_set(o, "path", e->path ? json_string(e->path) : json_null(), err);
		jout_set(o, "frames", json_boolean(e->frames), err);
		jout_push(ex, o, err);
	}
	return ex;
}

const char *profile__status_name(unsigned status)
{
	return status < 3 ? status_names[status] : "?";
}

const char *profile__class_name(unsigned probe_class)
{
	return probe_class < PROBE_CLASS_COUNT ? class_names[probe_class] : "?";
}

/* ---- writing -------------------------------------------------------------------------- */

struct writer {
	const char *path;
	const struct profile_input *in;
	FILE *out;
	int err; /* first negative errno */
	char msg[256];
};

/* Records the first failure: negative errno ERR and its message. Returns ERR. */
static int wfail(struct writer *w, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int wfail(struct writer *w, int err, const char *fmt, ...)
{
	va_list ap;

	if (w->err)
		return err;
	w->err = err;
	va_start(ap, fmt);
	vsnprintf(w->msg, sizeof(w->msg), fmt, ap);
	va_end(ap);
	return err;
}

/* Dumps V (stolen) compactly; NULL V is an allocation failure. */
static void wdump(struct writer *w, json_t *v)
{
	if (!v) {
		wfail(w, -ENOMEM, "out of memory");
		return;
	}
	if (json_dumpf(v, w->out, JSON_COMPACT | JSON_ENCODE_ANY))
		wfail(w, -EIO, "write error");
	json_decref(v);
}

/* The bulk of the document (functions, sites, counters) goes through a buffer of the writer's
 * own, formatted by hand: jansson trees and fprintf cost 0.2 s of CPU for the 24 MB profile of
 * a sqlite3 run. The text is byte for byte what json_dumpf(JSON_COMPACT) and the fprintf
 * formats made: strings that are not plain printable ASCII, and reals, still go through
 * jansson. */
#define OBUF_SIZE 65536

struct obuf {
	struct writer *w;
	bool to_mem;	    /* false: the text goes to w->out; true: it is kept in mem */
	char *mem;
	size_t mem_n, mem_cap;
	size_t n;
	char buf[OBUF_SIZE];
};

/* Passes N bytes at S on to B's destination. */
static void ob_sink(struct obuf *b, const char *s, size_t n)
{
	if (!b->to_mem) {
		if (fwrite(s, 1, n, b->w->out) != n)
			wfail(b->w, -EIO, "write error");
		return;
	}
	if (n > b->mem_cap - b->mem_n) {
		size_t cap = 2 * b->mem_cap + n;
		char *m = realloc(b->mem, cap);

		if (!m) {
			wfail(b->w, -ENOMEM, "out of memory");
			return;
		}
		b->mem = m;
		b->mem_cap = cap;
	}
	memcpy(b->mem + b->mem_n, s, n);
	b->mem_n += n;
}

static void ob_flush(struct obuf *b)
{
	if (b->n)
		ob_sink(b, b->buf, b->n);
	b->n = 0;
}

static void ob_putn(struct obuf *b, const char *s, size_t n)
{
	if (n > OBUF_SIZE - b->n) {
		ob_flush(b);
		if (n > OBUF_SIZE) {
			ob_sink(b, s, n);
			return;
		}
	}
	memcpy(b->buf + b->n, s, n);
	b->n += n;
}

/* Appends the literal text S. */
static void ob_lit(struct obuf *b, const char *s)
{
	ob_putn(b, s, strlen(s));
}

static void ob_u64(struct obuf *b, uint64_t v)
{
	char t[24], *e = t + sizeof(t), *p = e;

	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	ob_putn(b, p, (size_t)(e - p));
}

static void ob_i64(struct obuf *b, int64_t v)
{
	if (v < 0) {
		ob_putn(b, "-", 1);
		ob_u64(b, -(uint64_t)v);
	} else {
		ob_u64(b, (uint64_t)v);
	}
}

/* "0x.." in quotes, lowercase, as jout_hex makes it. */
static void ob_hex(struct obuf *b, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char t[24], *e = t + sizeof(t), *p = e;

	*--p = '"';
	do
		*--p = digits[v & 15];
	while (v >>= 4);
	*--p = 'x';
	*--p = '0';
	*--p = '"';
	ob_putn(b, p, (size_t)(e - p));
}

/* A count as jcount makes it: null when negative. */
static void ob_count(struct obuf *b, int64_t c)
{
	if (c < 0)
		ob_lit(b, "null");
	else
		ob_u64(b, (uint64_t)c);
}

/* Appends V (stolen) as json_dumpf(JSON_COMPACT | JSON_ENCODE_ANY) writes it; NULL V is an
 * allocation failure (as an invalid UTF-8 string is for json_string). */
static void ob_json(struct obuf *b, json_t *v)
{
	char *t = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

	json_decref(v);
	if (!t) {
		wfail(b->w, -ENOMEM, "out of memory");
		return;
	}
	ob_lit(b, t);
	free(t);
}

/* Appends S as a JSON string: verbatim in quotes when it is printable ASCII with nothing to
 * escape (what jansson writes for it), else through jansson. */
static void ob_str(struct obuf *b, const char *s);

/* The plan's loops counted by induction, when it has any: "induction":[{func, header (its
 * address), block (the step's), step_addr, step, reg, entries and exits (the two sums, 64-bit
 * wrapping, written as signed: JSON readers take no integer past 2^63), count (the step's executions), body (block ids), sites:[{addr,
 * block, when: always|taken|not_taken, sum: entries|exits, reg}]}], then a comma. */
static void induction_json(struct obuf *b, const struct profile_input *in)
{
	static const char *const when[] = { "always", "taken", "not_taken" };
	const struct placement *pl = in->pl;

	if (!pl->nivs)
		return;
	ob_lit(b, "\n\"induction\":[");
	for (uint32_t k = 0; k < pl->nivs; k++) {
		const struct plan_iv *pv = &pl->ivs[k];
		const struct cfg_iv *iv = pv->iv;
		const struct cfg_func *f = &in->prog->funcs[iv->func];
		uint64_t ein = in->counters[pv->acc_in], eout = in->counters[pv->acc_out];

		ob_lit(b, k ? ",\n{\"func\":" : "\n{\"func\":");
		ob_u64(b, iv->func);
		ob_lit(b, ",\"header\":");
		ob_hex(b, f->blocks[iv->header].start);
		ob_lit(b, ",\"block\":");
		ob_u64(b, iv->block);
		ob_lit(b, ",\"step_addr\":");
		ob_hex(b, iv->step_addr);
		ob_lit(b, ",\"step\":");
		ob_i64(b, iv->step);
		ob_lit(b, ",\"reg\":");
		ob_u64(b, (uint64_t)iv->reg);
		ob_lit(b, ",\"entries\":");
		ob_i64(b, (int64_t)ein);
		ob_lit(b, ",\"exits\":");
		ob_i64(b, (int64_t)eout);
		ob_lit(b, ",\"count\":");
		ob_i64(b, (int64_t)(eout - ein) / iv->step);
		ob_lit(b, ",\"body\":[");
		for (uint32_t j = 0; j < iv->nblocks; j++) {
			if (j)
				ob_putn(b, ",", 1);
			ob_u64(b, pl->ind->body[iv->first_block + j]);
		}
		ob_lit(b, "],\"sites\":[");
		for (uint32_t j = 0; j < iv->nactions; j++) {
			const struct cfg_iv_action *a = &pl->ind->actions[iv->first_action + j];

			ob_lit(b, j ? ",{\"addr\":" : "{\"addr\":");
			ob_hex(b, a->addr);
			ob_lit(b, ",\"block\":");
			ob_u64(b, a->block);
			ob_lit(b, ",\"when\":\"");
			ob_lit(b, when[a->kind < 3 ? a->kind : 0]);
			ob_lit(b, a->out ? "\",\"sum\":\"exits\",\"reg\":" : "\",\"sum\":\"entries\",\"reg\":");
			ob_u64(b, (uint64_t)a->reg);
			ob_putn(b, "}", 1);
		}
		ob_lit(b, "]}");
	}
	ob_lit(b, "],");
}

static void ob_str(struct obuf *b, const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if ((unsigned char)s[n] < 0x20 || (unsigned char)s[n] > 0x7e || s[n] == '"' ||
		    s[n] == '\\')
			break;
	if (s[n]) {
		ob_json(b, json_string(s));
		return;
	}
	ob_putn(b, "\"", 1);
	ob_putn(b, s, n);
	ob_putn(b, "\"", 1);
}

/* ,"KEY": followed by the members of O (taken) in their order: the optional parts a
 * jansson helper builds (loops_json, causes_json). */
static void ob_members(struct obuf *b, json_t *o)
{
	const char *key;
	json_t *v;

	json_object_foreach(o, key, v) {
		ob_putn(b, ",", 1);
		ob_str(b, key);
		ob_putn(b, ":", 1);
		ob_json(b, json_incref(v));
	}
	json_decref(o);
}

static bool is_hex_id(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 128 || n % 2)
		return false;
	return strspn(s, "0123456789abcdefABCDEF") == n;
}

static const char *in_path(const struct profile_input *in)
{
	if (in->binary_path)
		return in->binary_path;
	if (in->prog->img && in->prog->img->path)
		return in->prog->img->path;
	return "";
}

static const char *in_build_id(const struct profile_input *in)
{
	if (in->build_id)
		return in->build_id;
	if (in->prog->img)
		return in->prog->img->build_id;
	return "";
}

/* The line of block K of function I of IN (K = -1: its entry). */
static bool line_of(const struct profile_input *in, size_t i, long k, const char **file,
		    int *line)
{
	const struct block_line *bl = block_lines__at(in->blines, i, k);

	if (bl) {
		*file = bl->file;
		*line = bl->line;
	}
	return bl != NULL;
}

static void longjmp_summary_json(json_t *run, const struct profile_input *in, int *err);

/* Checks that the plan, the counters and the counts agree; fills the summary totals. */
struct totals {
	uint64_t hits, sites_hit, naive_hits, violations;
	double est_trap_ns;
	/* The accumulator sites of loops counted by induction: their executions (those of the
	 * blocks holding them, from the propagated counts) and estimated cost. */
	uint64_t acc_hits;
	double acc_est_ns;
};

static int check_input(struct writer *w, struct totals *t)
{
	const struct profile_input *in = w->in;
	const struct placement *pl = in->pl;
	const struct cfg_program *prog = in->prog;

	if (pl->nfuncs != prog->nfuncs)
		return wfail(w, -EINVAL, "placement has %zu functions, program %zu", pl->nfuncs,
			     prog->nfuncs);
	if (pl->ncounters && !in->counters)
		return wfail(w, -EINVAL, "no counter values");
	if (!is_hex_id(in_build_id(in)) && in_build_id(in)[0])
		return wfail(w, -EINVAL, "build-id '%s' is not hex", in_build_id(in));
	for (uint32_t c = 0; c < pl->ncounters; c++) {
		const struct counter_def *d = &pl->counters[c];
		const struct cfg_func *f;

		if (in->counters[c] > INT64_MAX)
			return wfail(w, -EINVAL, "counter %" PRIu32 " is out of range", c);
		if (d->func >= prog->nfuncs || d->site >= pl->nsites)
			return wfail(w, -EINVAL, "counter %" PRIu32 " is inconsistent", c);
		f = &prog->funcs[d->func];
		if (d->what == COUNTS_EDGE ? d->id > f->nedges :
		    d->what == COUNTS_BLOCK ? d->id >= f->nblocks : true)
			return wfail(w, -EINVAL, "counter %" PRIu32 " is inconsistent", c);
	}
	for (size_t s = 0; s < pl->nsites; s++) {
		const struct probe_site *ps = &pl->sites[s];
		uint64_t hits = 0;

		if (ps->func >= prog->nfuncs || ps->counter >= pl->ncounters ||
		    (ps->kind == SITE_BRANCH && ps->counter2 >= pl->ncounters) ||
		    (ps->kind == SITE_INDIRECT &&
		     (!ps->counter2 || ps->counter2 > pl->ncounters - ps->counter)) ||
		    ps->kind > SITE_INDIRECT || ps->probe_class >= PROBE_CLASS_COUNT)
			return wfail(w, -EINVAL, "probe site %zu is inconsistent", s);
		hits = in->counters[ps->counter];
		if (ps->kind == SITE_BRANCH)
			hits += in->counters[ps->counter2]; /* both <= INT64_MAX: no wrap */
		for (uint32_t k = 1; ps->kind == SITE_INDIRECT && k < ps->counter2; k++)
			if (__builtin_add_overflow(hits, in->counters[ps->counter + k], &hits))
				hits = UINT64_MAX;
		if (hits > INT64_MAX || __builtin_add_overflow(t->hits, hits, &t->hits) ||
		    t->hits > INT64_MAX)
			return wfail(w, -EINVAL, "counter values are out of range");
		t->sites_hit += hits != 0;
		t->est_trap_ns += (double)hits * site_costs__of(in->costs, ps->probe_class);
	}
	for (size_t k = 0; k < pl->naccums; k++) {
		const struct accum_site *a = &pl->accums[k];
		int64_t n = a->func < prog->nfuncs && in->counts[a->func].blocks &&
				    a->block < prog->funcs[a->func].nblocks
				? in->counts[a->func].blocks[a->block]
				: COUNT_UNKNOWN;

		if (n > 0) {
			t->acc_hits += (uint64_t)n;
			t->acc_est_ns += (double)n * site_costs__of(in->costs, a->probe_class);
		}
	}
	for (size_t i = 0; i < prog->nfuncs; i++) {
		const struct cfg_func *f = &prog->funcs[i];
		const struct func_counts *fc = &in->counts[i];

		if (pl->funcs[i].status == PLAN_EXCLUDED)
			continue;
		if (fc->nviolations && !fc->violations)
			return wfail(w, -EINVAL, "function '%s': violations missing", f->name);
		for (uint32_t k = 0; k < fc->nviolations; k++)
			if (fc->violations[k] > f->nblocks)
				return wfail(w, -EINVAL, "function '%s': bad violation vertex",
					     f->name);
		t->violations += fc->nviolations;
		for (uint32_t b = 0; fc->blocks && b < f->nblocks; b++)
			if (fc->blocks[b] > 0 &&
			    (__builtin_add_overflow(t->naive_hits, (uint64_t)fc->blocks[b],
						    &t->naive_hits) ||
			     t->naive_hits > INT64_MAX))
				return wfail(w, -EINVAL, "block counts are out of range");
	}
	for (size_t k = 0; k < in->nloops; k++) {
		const struct profile_loop_stat *l = &in->loops[k];

		if (l->func >= prog->nfuncs || (k && l->func < in->loops[k - 1].func) ||
		    l->entries > l->sum || l->sum > INT64_MAX || l->sum > l->sumsq ||
		    (l->entries == 0) != (l->sum == 0))
			return wfail(w, -EINVAL, "loop moments %zu are inconsistent", k);
	}
	return 0;
}

static void write_header(struct writer *w)
{
	const struct profile_input *in = w->in;
	json_t *bin = json_object(), *run = json_object(), *argv = json_array();
	const char *bid = in_build_id(in);
	char lower[2 * 64 + 1];
	int err = 0;

	for (size_t i = 0; i <= strlen(bid) && i < sizeof(lower); i++)
		lower[i] = (char)((bid[i] >= 'A' && bid[i] <= 'F') ? bid[i] - 'A' + 'a' : bid[i]);
	lower[sizeof(lower) - 1] = '\0';
	if (bin) {
		jout_set(bin, "path", json_string(in_path(in)), &err);
		jout_set(bin, "build_id", bid[0] ? json_string(lower) : json_null(), &err);
	}
	for (size_t i = 0; argv && in->argv && in->argv[i]; i++)
		jout_push(argv, json_string(in->argv[i]), &err);
	if (run) {
		int ws = in->wait_status;

		jout_set(run, "argv", argv, &err);
		argv = NULL;
		jout_set(run, "wait_status", json_integer(ws & 0xffff), &err);
		jout_set(run, "exit_code", WIFEXITED(ws) ? json_integer(WEXITSTATUS(ws)) : json_null(),
		     &err);
		jout_set(run, "signal", WIFSIGNALED(ws) ? json_integer(WTERMSIG(ws)) : json_null(),
		     &err);
		jout_set(run, "seconds", json_real(isfinite(in->seconds) && in->seconds > 0 ?
					       in->seconds : 0.0), &err);
		jout_set(run, "analysis_s", json_real(in->analysis_s), &err);
		jout_set(run, "processes", json_integer(in->nprocesses), &err);
		jout_set(run, "threads", json_integer(in->nthreads), &err);
		jout_set(run, "unwind_failures", json_integer(in->unwind_failures), &err);
		jout_set(run, "virtual_edges", json_integer((json_int_t)in->nvirtual), &err);
		longjmp_summary_json(run, in, &err);
		if (in->unmapped_frames)
			jout_set(run, "unmapped_frames",
				 json_integer((json_int_t)in->unmapped_frames), &err);
		if (in->mode && !strcmp(in->mode, "attach")) {
			jout_set(run, "mode", json_string("attach"), &err);
			jout_set(run, "pid", json_integer(in->pid), &err);
			jout_set(run, "held_attach_s", json_real(in->held_attach), &err);
			jout_set(run, "held_detach_s", json_real(in->held_detach), &err);
		} else {
			jout_set(run, "mode", json_string("run"), &err);
		}
		if (in->nexecs)
			jout_set(run, "execs", profile_exec__json(in->execs, in->nexecs, &err), &err);
	}
	json_decref(argv);
	if (!bin || !run || err) {
		json_decref(bin);
		json_decref(run);
		wfail(w, -ENOMEM, "out of memory");
		return;
	}
	fprintf(w->out, "{\"format\":\"%s\",\"version\":%d,\n\"binary\":", PROFILE_FORMAT,
		PROFILE_VERSION);
	wdump(w, bin);
	fputs(",\n\"run\":", w->out);
	wdump(w, run);
}

static void write_placement(struct writer *w)
{
	const struct profile_input *in = w->in;
	const struct placement *pl = in->pl;
	const struct site_costs *c = in->costs;
	struct obuf *b;

	fprintf(w->out, ",\n\"placement\":{\"mode\":\"%s\",\"costs\":{",
		pl->mode == PLACEMENT_NAIVE ? "naive" : "chords");
	fprintf(w->out,
		"\"stepped\":%.17g,\"emulated\":%.17g,\"nop5\":%.17g,\"patch\":%.17g,\"patch_flags\":%.17g,\"measured\":%s",
		c->ns[PROBE_STEPPED], c->ns[PROBE_EMULATED], c->ns[PROBE_NOP5],
		c->ns[PROBE_PATCH], c->ns[PROBE_PATCH_FLAGS], c->measured ? "true" : "false");
	if (c->measured && site_costs__date_ok(c->date))
		fprintf(w->out, ",\"date\":\"%s\"", c->date);
	fputs("},", w->out);
	fprintf(w->out, "\"est_cost_ns\":%.17g,\n\"sites\":[",
		isfinite(pl->est_cost) ? pl->est_cost : 0.0);
	b = calloc(1, sizeof(*b));
	if (!b) {
		wfail(w, -ENOMEM, "out of memory");
		return;
	}
	b->w = w;
	b->n = 0;
	for (size_t s = 0; s < pl->nsites; s++) {
		const struct probe_site *ps = &pl->sites[s];
		uint64_t hits = in->counters[ps->counter];

		ob_lit(b, s ? ",\n{\"addr\":" : "\n{\"addr\":");
		ob_hex(b, ps->addr);
		ob_lit(b, ",\"func\":");
		ob_u64(b, ps->func);
		ob_lit(b, ",\"kind\":\"");
		ob_lit(b, site_kind_names[ps->kind]);
		ob_lit(b, "\",");
		if (ps->kind == SITE_BRANCH) {
			hits += in->counters[ps->counter2];
			ob_lit(b, "\"cc\":");
			ob_u64(b, ps->cc);
			ob_putn(b, ",", 1);
		}
		for (uint32_t k = 1; ps->kind == SITE_INDIRECT && k < ps->counter2; k++)
			hits += in->counters[ps->counter + k];
		ob_lit(b, "\"class\":\"");
		ob_lit(b, class_names[ps->probe_class]);
		ob_lit(b, "\",\"counters\":[");
		ob_u64(b, ps->counter);
		if (ps->kind == SITE_BRANCH) {
			ob_putn(b, ",", 1);
			ob_u64(b, ps->counter2);
		}
		for (uint32_t k = 1; ps->kind == SITE_INDIRECT && k < ps->counter2; k++) {
			ob_putn(b, ",", 1);
			ob_u64(b, ps->counter + k);
		}
		ob_lit(b, "],\"hits\":");
		ob_u64(b, hits);
		ob_putn(b, "}", 1);
	}
	ob_lit(b, "],");
	induction_json(b, in);
	ob_lit(b, "\n\"counters\":[");
	for (uint32_t i = 0; i < pl->ncounters; i++) {
		const struct counter_def *d = &pl->counters[i];

		ob_lit(b, i ? ",\n{\"func\":" : "\n{\"func\":");
		ob_u64(b, d->func);
		ob_lit(b, d->what == COUNTS_BLOCK ? ",\"block\":" : ",\"edge\":");
		ob_u64(b, d->id);
		ob_lit(b, ",\"site\":");
		ob_u64(b, d->site);
		ob_putn(b, "}", 1);
	}
	ob_lit(b, "]},\n\"counters\":[");
	for (uint32_t i = 0; i < pl->ncounters; i++) {
		if (i)
			ob_lit(b, i % 16 ? "," : ",\n");
		ob_u64(b, in->counters[i]);
	}
	ob_flush(b);
	free(b);
	fputs("]", w->out);
}

/* Run-level "longjmp": the pseudo-edges of the binary and its libraries (cfg/longjmp.h) and
 * the flow propagation derived on them, with the longjmps that were unwound instead. */
static void longjmp_summary_json(json_t *run, const struct profile_input *in, int *err)
{
	uint64_t n = 0, abandoned = 0, resumed = 0;
	json_t *o;

	for (size_t k = 0; k <= in->nlibs; k++) {
		const struct profile_input *x = k ? &in->libs[k - 1] : in;

		for (size_t i = 0; x->counts && i < x->prog->nfuncs; i++) {
			const struct func_counts *fc = &x->counts[i];

			for (uint32_t j = 0; fc->edges && j < fc->npseudo; j++) {
				int64_t c = fc->edges[x->prog->funcs[i].nedges + 1 + j];

				n++;
				if (c <= 0)
					continue;
				if (fc->pseudo[j].kind == CFG_PSEUDO_ABANDON)
					abandoned += (uint64_t)c;
				else
					resumed += (uint64_t)c;
			}
		}
	}
	if (!n && !in->nlongjmps)
		return;
	o = json_object();
	if (!o) {
		(*err)++;
		return;
	}
	jout_set(o, "pseudo_edges", json_integer((json_int_t)n), err);
	jout_set(o, "abandoned", json_integer((json_int_t)abandoned), err);
	jout_set(o, "resumed", json_integer((json_int_t)resumed), err);
	jout_set(o, "unwound", json_integer(in->nlongjmps), err);
	jout_set(run, "longjmp", o, err);
}

json_t *profile__virtual_json(json_t *from, json_t *to, uint64_t count, uint64_t stopped_at,
			      uint64_t resumed_at)
{
	json_t *vo = json_object();
	int err = 0;

	if (!vo) {
		json_decref(from);
		json_decref(to);
		return NULL;
	}
	jout_set(vo, "from", from, &err);
	jout_set(vo, "to", to, &err);
	jout_set(vo, "count", json_integer((json_int_t)count), &err);
	if (stopped_at)
		jout_set(vo, "stopped_at", jout_hex(stopped_at), &err);
	if (resumed_at)
		jout_set(vo, "resumed_at", jout_hex(resumed_at), &err);
	if (err) {
		json_decref(vo);
		return NULL;
	}
	return vo;
}

static json_t *jvertex(const struct cfg_func *f, uint32_t v)
{
	if (v >= f->nblocks)
		return json_string("exit");
	return jout_hex(f->blocks[v].start);
}

/* Adds "loops" to O when function I has measured loop moments; counts failures in *ERR. */
static void loops_json(json_t *o, const struct profile_input *in, size_t i, int *err)
{
	size_t lo = 0, hi = in->nloops;
	json_t *la;

	while (lo < hi) { /* first loop of function i */
		size_t mid = lo + (hi - lo) / 2;

		if (in->loops[mid].func < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == in->nloops || in->loops[lo].func != i)
		return;
	la = json_array();
	for (; la && lo < in->nloops && in->loops[lo].func == i; lo++) {
		const struct profile_loop_stat *l = &in->loops[lo];
		json_t *lj = json_object();

		if (!lj) {
			(*err)++;
			break;
		}
		jout_set(lj, "header", jout_hex(l->header), err);
		jout_set(lj, "entries", json_integer((json_int_t)l->entries), err);
		jout_set(lj, "sum", json_integer((json_int_t)l->sum), err);
		jout_set(lj, "sumsq", l->sumsq <= INT64_MAX ? json_integer((json_int_t)l->sumsq)
							   : json_real((double)l->sumsq),
			 err);
		jout_push(la, lj, err);
	}
	if (!la)
		(*err)++;
	else
		jout_set(o, "loops", la, err);
}

static const char *const cause_names[PCAUSE_COUNT] = {
	[PCAUSE_UNRESOLVED_JUMP] = "unresolved_jump",
	[PCAUSE_BAD_CODE] = "bad_code",
	[PCAUSE_REFUSED_PROBES] = "refused_probes",
	[PCAUSE_UNMATCHED_INDIRECT] = "unmatched_indirect",
	[PCAUSE_UNMAPPED_FRAMES] = "unmapped_frames",
};

const char *profile__cause_name(unsigned kind)
{
	return kind < PCAUSE_COUNT ? cause_names[kind] : NULL;
}

/* Whether causes of KIND have an address (else a count). */
static bool cause_has_addr(unsigned kind)
{
	return kind == PCAUSE_UNRESOLVED_JUMP || kind == PCAUSE_BAD_CODE;
}

size_t profile__func_causes(const struct profile_input *in, size_t i, struct profile_cause *out,
			    size_t max)
{
	const struct cfg_func *f = &in->prog->funcs[i];
	const struct profile_func_notes *x = in->notes ? &in->notes[i] : NULL;
	size_t n = 0;

#define ADD(...)                                                                                   \
	do {                                                                                       \
		if (n < max)                                                                       \
			out[n] = (struct profile_cause){ __VA_ARGS__ };                            \
		n++;                                                                               \
	} while (0)
	for (uint32_t k = 0; k < f->nunresolved; k++)
		ADD(.kind = PCAUSE_UNRESOLVED_JUMP, .addr = f->unresolved[k]);
	if (f->flags & CFG_FUNC_BAD_CODE)
		ADD(.kind = PCAUSE_BAD_CODE, .addr = f->bad_addr);
	if (x && x->refused)
		ADD(.kind = PCAUSE_REFUSED_PROBES, .count = x->refused);
	if (x && x->unmatched)
		ADD(.kind = PCAUSE_UNMATCHED_INDIRECT, .count = x->unmatched);
	if (x && x->unmapped)
		ADD(.kind = PCAUSE_UNMAPPED_FRAMES, .count = x->unmapped);
#undef ADD
	return n;
}

const char *profile__cause_text(const struct profile_cause *c, char *buf, size_t size)
{
	switch (c->kind) {
	case PCAUSE_UNRESOLVED_JUMP:
		snprintf(buf, size, "unresolved indirect jump at 0x%" PRIx64, c->addr);
		break;
	case PCAUSE_BAD_CODE:
		snprintf(buf, size, "undecodable code at 0x%" PRIx64, c->addr);
		break;
	case PCAUSE_REFUSED_PROBES:
		snprintf(buf, size, "the kernel refused probes on %" PRIu64 " instruction%s",
			 c->count, c->count == 1 ? "" : "s");
		break;
	case PCAUSE_UNMATCHED_INDIRECT:
		snprintf(buf, size, "%" PRIu64 " indirect jump%s went to a target that is no edge",
			 c->count, c->count == 1 ? "" : "s");
		break;
	case PCAUSE_UNMAPPED_FRAMES:
		snprintf(buf, size, "%" PRIu64 " unwound frame%s outside its recovered blocks",
			 c->count, c->count == 1 ? " was" : "s were");
		break;
	default:
		snprintf(buf, size, "unknown cause");
	}
	return buf;
}

const char *profile__violation_cause(const struct profile_cause *c, size_t n,
				     unsigned unwind_failures, unsigned nexecs, uint64_t unmapped,
				     char *buf, size_t size)
{
	size_t len = 0;
	char one[160];

#define PUT(...)                                                                                   \
	do {                                                                                       \
		int w_ = snprintf(buf + len, size - len, __VA_ARGS__);                             \
		len = w_ < 0 ? len : len + (size_t)w_ < size ? len + (size_t)w_ : size - 1;        \
	} while (0)
	if (!size)
		return buf;
	buf[0] = '\0';
	for (size_t k = 0; k < n; k++)
		PUT("%s%s", k ? "; " : "", profile__cause_text(&c[k], one, sizeof(one)));
	if (n)
		return buf;
	if (unwind_failures)
		PUT("%sunwinding failed %u time%s in the run", len ? "; " : "", unwind_failures,
		    unwind_failures == 1 ? "" : "s");
	if (nexecs)
		PUT("%sexec replaced the image %u time%s (frames of the old image were left "
		    "without events)", len ? "; " : "", nexecs, nexecs == 1 ? "" : "s");
	if (unmapped)
		PUT("%s%" PRIu64 " unwound frame%s outside every recovered block", len ? "; " : "",
		    unmapped, unmapped == 1 ? " was" : "s were");
	if (!len)
		PUT("no recorded cause: control left or entered the function where its CFG has no "
		    "edge (e.g. a call assumed to return that did not, or a jump the CFG missed)");
#undef PUT
	return buf;
}

/* Adds "inexact" to O when function I has causes; counts failures in *ERR. */
static void causes_json(json_t *o, const struct profile_input *in, size_t i, int *err)
{
	size_t n = profile__func_causes(in, i, NULL, 0);
	struct profile_cause *c;
	json_t *a;

	if (!n)
		return;
	c = calloc(n, sizeof(*c));
	a = json_array();
	if (!c || !a) {
		free(c);
		json_decref(a);
		(*err)++;
		return;
	}
	profile__func_causes(in, i, c, n);
	for (size_t k = 0; k < n; k++) {
		json_t *co = json_object();

		if (!co) {
			(*err)++;
			break;
		}
		jout_set(co, "cause", json_string(cause_names[c[k].kind]), err);
		if (cause_has_addr(c[k].kind))
			jout_set(co, "addr", jout_hex(c[k].addr), err);
		else
			jout_set(co, "count", json_integer((json_int_t)c[k].count), err);
		jout_push(a, co, err);
	}
	free(c);
	jout_set(o, "inexact", a, err);
}

static void ob_vertex(struct obuf *b, const struct cfg_func *f, uint32_t v)
{
	if (v >= f->nblocks)
		ob_lit(b, "\"exit\"");
	else
		ob_hex(b, f->blocks[v].start);
}

/* Appends the JSON object of function I (what jansson made of it before: the same members in
 * the same order). Failures are recorded in B's writer. */
static void write_func(struct obuf *b, size_t i)
{
	const struct profile_input *in = b->w->in;
	const struct cfg_func *f = &in->prog->funcs[i];
	const struct func_plan *fp = &in->pl->funcs[i];
	const struct func_counts *fc = &in->counts[i];
	bool excluded = fp->status == PLAN_EXCLUDED;
	const char *file;
	json_t *tail;
	int line, err = 0;

	ob_lit(b, "{\"name\":");
	ob_str(b, f->name ? f->name : "");
	ob_lit(b, ",\"addr\":");
	ob_hex(b, f->entry);
	ob_lit(b, ",\"status\":");
	ob_str(b, profile__status_name(fp->status));
	ob_lit(b, ",\"reason\":");
	if (fp->reason)
		ob_str(b, fp->reason);
	else
		ob_lit(b, "null");
	ob_lit(b, ",\"count\":");
	if (!excluded && fc->edges)
		ob_count(b, fc->edges[f->nedges]);
	else
		ob_lit(b, "null");
	if (line_of(in, i, -1, &file, &line)) {
		ob_lit(b, ",\"file\":");
		ob_str(b, file);
		ob_lit(b, ",\"line\":");
		ob_i64(b, line);
	}
	ob_lit(b, ",\"chords\":");
	ob_u64(b, excluded ? 0 : fp->nchords);
	ob_lit(b, ",\"est_cost_ns\":");
	ob_json(b, json_real(isfinite(fp->est_cost) && fp->est_cost > 0 ? fp->est_cost : 0.0));
	ob_lit(b, ",\"virtual_in\":");
	ob_i64(b, excluded ? 0 : (json_int_t)fc->virtual_in);
	ob_lit(b, ",\"virtual_out\":");
	ob_i64(b, excluded ? 0 : (json_int_t)fc->virtual_out);
	if (!excluded && in->ve) {
		size_t lo = 0, hi = in->nvirtual;
		bool first = true;

		while (lo < hi) { /* first virtual edge of function i */
			size_t mid = lo + (hi - lo) / 2;

			if (in->ve[mid].func < i)
				lo = mid + 1;
			else
				hi = mid;
		}
		ob_lit(b, ",\"virtual\":[");
		for (; lo < in->nvirtual && in->ve[lo].func == i; lo++, first = false) {
			const struct virtual_edge *x = &in->ve[lo];

			if (!first)
				ob_putn(b, ",", 1);
			ob_json(b, profile__virtual_json(jvertex(f, x->from), jvertex(f, x->to),
							 x->count, x->stopped_at, x->resumed_at));
		}
		ob_putn(b, "]", 1);
	}
	if (!excluded && fc->npseudo) {
		/* Longjmp pseudo-edges: derived by propagation, never measured. */
		ob_lit(b, ",\"longjmp\":[");
		for (uint32_t j = 0; j < fc->npseudo; j++) {
			const struct cfg_pseudo *q = &fc->pseudo[j];

			ob_lit(b, j ? ",{\"kind\":" : "{\"kind\":");
			ob_lit(b, q->kind == CFG_PSEUDO_ABANDON ? "\"abandon\"" : "\"resume\"");
			ob_lit(b, ",\"block\":");
			ob_hex(b, f->blocks[q->block].start);
			ob_lit(b, ",\"count\":");
			if (fc->edges)
				ob_count(b, fc->edges[f->nedges + 1 + j]);
			else
				ob_lit(b, "null");
			ob_putn(b, "}", 1);
		}
		ob_putn(b, "]", 1);
	}
	if (!excluded && fc->nforeign) {
		/* Entries from another function's code: derived by propagation. */
		ob_lit(b, ",\"foreign_entries\":[");
		for (uint32_t j = 0; j < fc->nforeign; j++) {
			ob_lit(b, j ? ",{\"block\":" : "{\"block\":");
			ob_hex(b, f->blocks[fc->foreign[j]].start);
			ob_lit(b, ",\"count\":");
			if (fc->edges)
				ob_count(b, fc->edges[f->nedges + 1 + fc->npseudo + j]);
			else
				ob_lit(b, "null");
			ob_putn(b, "}", 1);
		}
		ob_putn(b, "]", 1);
	}
	ob_lit(b, ",\"blocks\":[");
	for (uint32_t k = 0; !excluded && k < f->nblocks; k++) {
		const struct cfg_block *bl = &f->blocks[k];

		ob_lit(b, k ? ",{\"addr\":" : "{\"addr\":");
		ob_hex(b, bl->start);
		ob_lit(b, ",\"end\":");
		ob_hex(b, bl->end);
		ob_lit(b, ",\"count\":");
		if (fc->blocks)
			ob_count(b, fc->blocks[k]);
		else
			ob_lit(b, "null");
		if (line_of(in, i, (long)k, &file, &line)) {
			ob_lit(b, ",\"file\":");
			ob_str(b, file);
			ob_lit(b, ",\"line\":");
			ob_i64(b, line);
		}
		ob_putn(b, "}", 1);
	}
	ob_lit(b, "],\"edges\":[");
	for (uint32_t e = 0; !excluded && e < f->nedges; e++) {
		const struct cfg_edge *ce = &f->edges[e];

		ob_lit(b, e ? ",{\"from\":" : "{\"from\":");
		ob_vertex(b, f, ce->from);
		ob_lit(b, ",\"to\":");
		ob_vertex(b, f, ce->to);
		ob_lit(b, ",\"kind\":");
		ob_str(b, cfg_edge_kind__name(ce->kind));
		ob_lit(b, ",\"count\":");
		if (fc->edges)
			ob_count(b, fc->edges[e]);
		else
			ob_lit(b, "null");
		ob_lit(b, fc->measured && fc->measured[e] ? ",\"measured\":true}"
							  : ",\"measured\":false}");
	}
	ob_lit(b, "],\"violations\":[");
	for (uint32_t k = 0; !excluded && k < fc->nviolations; k++) {
		if (k)
			ob_putn(b, ",", 1);
		ob_vertex(b, f, fc->violations[k]);
	}
	ob_putn(b, "]", 1);
	tail = json_object();
	if (!tail) {
		wfail(b->w, -ENOMEM, "out of memory");
		return;
	}
	if (!excluded && in->nloops)
		loops_json(tail, in, i, &err);
	causes_json(tail, in, i, &err);
	if (err)
		wfail(b->w, -ENOMEM, "out of memory");
	ob_members(b, tail);
	ob_putn(b, "}", 1);
}

static int check_func_shape(struct writer *w, size_t i)
{
	const struct cfg_func *f = &w->in->prog->funcs[i];

	for (uint32_t e = 0; e < f->nedges; e++)
		if (f->edges[e].from >= f->nblocks || f->edges[e].to > f->nblocks ||
		    f->edges[e].kind >= EDGE_KIND_COUNT)
			return wfail(w, -EINVAL, "function '%s': edge %" PRIu32 " is invalid",
				     f->name, e);
	if (!cfg_func__blocks_ok(f))
		return wfail(w, -EINVAL, "function '%s': blocks overlap or are unsorted", f->name);
	return 0;
}

/* Functions [FROM, TO) of B's input, as members of the "functions" array; stops at the first
 * failure (recorded in B's writer). */
static void write_func_range(struct obuf *b, size_t from, size_t to)
{
	const struct profile_input *in = b->w->in;

	for (size_t i = from; i < to && !b->w->err; i++) {
		if (in->pl->funcs[i].status != PLAN_EXCLUDED && check_func_shape(b->w, i))
			break;
		ob_lit(b, i ? ",\n" : "\n");
		write_func(b, i);
	}
}

struct func_share {
	struct writer w; /* a copy of the document's, for this share's failures */
	struct obuf *b;	 /* text kept in memory */
	size_t from, to;
};

static void *func_share_run(void *arg)
{
	struct func_share *sh = arg;

	write_func_range(sh->b, sh->from, sh->to);
	ob_flush(sh->b);
	return NULL;
}

/* Below this many blocks and edges in all, one thread writes every function. */
#define FUNCS_SPLIT_MIN 256

/* Every function of B's input into B. The lines come looked up already (block_lines: no
 * libdw call is left), so the second half (by blocks and edges) is formatted on another thread into memory
 * while this one writes the first half, then appended: the same text, in less time, as the
 * program has ended and the machine's other core is free. */
static void write_functions(struct obuf *b)
{
	const struct profile_input *in = b->w->in;
	const struct cfg_program *prog = in->prog;
	struct func_share sh = { .to = prog->nfuncs };
	uint64_t total = 0, half = 0;
	pthread_t worker;

	for (size_t i = 0; i < prog->nfuncs; i++)
		total += prog->funcs[i].nblocks + prog->funcs[i].nedges;
	if (total < FUNCS_SPLIT_MIN) {
		write_func_range(b, 0, prog->nfuncs);
		return;
	}
	while (sh.from < prog->nfuncs && half < total / 2) {
		half += prog->funcs[sh.from].nblocks + prog->funcs[sh.from].nedges;
		sh.from++;
	}
	sh.w = *b->w;
	sh.w.err = 0;
	sh.b = calloc(1, sizeof(*sh.b));
	if (sh.b) {
		sh.b->w = &sh.w;
		sh.b->to_mem = true;
	}
	if (!sh.b || pthread_create(&worker, NULL, func_share_run, &sh)) {
		free(sh.b);
		write_func_range(b, 0, prog->nfuncs);
		return;
	}
	write_func_range(b, 0, sh.from);
	pthread_join(worker, NULL);
	if (!b->w->err && sh.w.err) {
		b->w->err = sh.w.err;
		memcpy(b->w->msg, sh.w.msg, sizeof(b->w->msg));
	}
	if (!b->w->err) {
		ob_flush(b);
		ob_sink(b, sh.b->mem, sh.b->mem_n);
	}
	free(sh.b->mem);
	free(sh.b);
}

static void write_body(struct writer *w, const struct totals *t)
{
	const struct profile_input *in = w->in;
	struct obuf *b;

	write_header(w);
	write_placement(w);
	fputs(",\n\"functions\":[", w->out);
	b = calloc(1, sizeof(*b));
	if (!b) {
		wfail(w, -ENOMEM, "out of memory");
		return;
	}
	b->w = w;
	write_functions(b);
	ob_flush(b);
	free(b);
	if (ferror(w->out))
		wfail(w, -EIO, "write error");
	/* The closing brace is the caller's: libraries may follow. */
	fprintf(w->out,
		"],\n\"probes\":{\"sites\":%zu,\"hits\":%" PRIu64 ",\"sites_hit\":%" PRIu64
		",\"est_trap_ns\":%.17g,\"naive_hits\":%" PRIu64,
		in->pl->nsites, t->hits, t->sites_hit, isfinite(t->est_trap_ns) ? t->est_trap_ns :
		0.0, t->naive_hits);
	if (in->pl->nivs)
		fprintf(w->out,
			",\"induction\":{\"loops\":%" PRIu32 ",\"sites\":%zu,\"hits\":%" PRIu64
			",\"est_trap_ns\":%.17g}",
			in->pl->nivs, in->pl->naccums, t->acc_hits,
			isfinite(t->acc_est_ns) ? t->acc_est_ns : 0.0);
	fprintf(w->out, "},\n\"violations\":%" PRIu64, t->violations);
	if (in->loop_summary) {
		const struct profile_loop_summary *ls = in->loop_summary;

		fprintf(w->out,
			",\n\"loop_stats\":{\"loops\":%" PRIu32 ",\"measured\":%" PRIu32
			",\"sites\":%" PRIu64 ",\"hits\":%" PRIu64 ",\"est_trap_ns\":%.17g}",
			ls->loops, ls->measured, ls->sites, ls->hits,
			isfinite(ls->est_trap_ns) && ls->est_trap_ns > 0 ? ls->est_trap_ns : 0.0);
	}
}

/* Syncs directory DIR so the rename is durable (best effort). */
/* Writes the whole profile of IN to W->out (open); records the first failure in W. */
static void write_all(struct writer *w, const struct profile_input *in, struct totals *t)
{
	write_body(w, t);
	if (in->nlibs)
		fputs(",\n\"libraries\":[", w->out);
	for (size_t k = 0; k < in->nlibs && !w->err; k++) {
		struct writer lw = { .path = w->path, .in = &in->libs[k], .out = w->out };
		struct totals lt = { 0 };

		if (k)
			fputs(",\n", w->out);
		if (check_input(&lw, &lt) == 0)
			write_body(&lw, &lt);
		if (lw.err) {
			w->err = lw.err;
			memcpy(w->msg, lw.msg, sizeof(w->msg));
		} else {
			fputs("}", w->out);
		}
	}
	fputs(in->nlibs ? "]}\n" : "}\n", w->out);
}

/* A checked profile to write: its writer and the totals check_input found. */
struct checked {
	struct writer w;
	struct totals t;
};

/* profile_dest__write's filler: the whole profile (a struct checked) into OUT. */
static int fill_profile(FILE *out, void *ctx, char *msg, size_t size)
{
	struct checked *c = ctx;
	struct writer *w = &c->w;

	w->out = out;
	write_all(w, w->in, &c->t);
	w->out = NULL;
	if (w->err)
		snprintf(msg, size, "%s", w->msg);
	return w->err;
}

int profile__write(const char *path, const struct profile_input *in)
{
	struct checked c = { .w = { .path = path, .in = in } };

	if (!path || !in || !in->prog || !in->pl || !in->costs ||
	    (in->prog->nfuncs && !in->counts)) {
		pr_err("'%s': cannot write the profile: incomplete input", path ? path : "");
		return -EINVAL;
	}
	/* Inconsistent input is refused before the destination is touched. */
	if (check_input(&c.w, &c.t)) {
		pr_err("'%s': cannot write the profile: %s", path, c.w.msg);
		return c.w.err;
	}
	return profile_dest__write(path, "the profile", fill_profile, &c);
}

/* ---- reading -------------------------------------------------------------------------- */

struct reader {
	const char *name;
	struct profile *p;
	bool nested;     /* reading a library's profile */
	uint32_t *slots; /* file-name interning: open addressing, index + 1, 0 = empty */
	size_t nslots;   /* power of two */
	size_t files_cap;
};

/* Reports the one error of this read ("'NAME': MESSAGE") and returns -EINVAL. */
static int rfail(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int rfail(struct reader *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr_err("'%s': %s", r->name, msg);
	return -EINVAL;
}

static int rnomem(struct reader *r)
{
	pr_err("'%s': out of memory reading the profile", r->name);
	return -ENOMEM;
}

/* Parses "0x" and 1 to 16 hex digits. */
static bool parse_addr(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	size_t n;

	if (s[0] != '0' || s[1] != 'x')
		return false;
	s += 2;
	n = strlen(s);
	if (n == 0 || n > 16 || strspn(s, "0123456789abcdefABCDEF") != n)
		return false;
	for (; *s; s++) {
		int d = *s <= '9' ? *s - '0' : (*s | 0x20) - 'a' + 10;

		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return true;
}

/* The member KEY of object O, which must exist and have type TYPE (JSON_NULL: any). */
static int get(struct reader *r, json_t *o, const char *key, json_type type, const char *where,
	       json_t **out)
{
	static const char *const type_names[] = {
		[JSON_OBJECT] = "an object", [JSON_ARRAY] = "an array",
		[JSON_STRING] = "a string",  [JSON_INTEGER] = "an integer",
		[JSON_REAL] = "a number",    [JSON_TRUE] = "a boolean",
		[JSON_FALSE] = "a boolean",  [JSON_NULL] = "null",
	};
	json_t *v = json_object_get(o, key);

	*out = NULL;
	if (!v)
		return rfail(r, "%s: \"%s\" is missing", where, key);
	if (type != JSON_NULL && json_typeof(v) != type &&
	    !(type == JSON_TRUE && json_is_boolean(v)) &&
	    !(type == JSON_REAL && json_is_number(v)))
		return rfail(r, "%s: \"%s\" is not %s", where, key, type_names[type]);
	*out = v;
	return 0;
}

static int get_uint(struct reader *r, json_t *o, const char *key, uint64_t max,
		    const char *where, uint64_t *out)
{
	json_t *v;
	int err = get(r, o, key, JSON_INTEGER, where, &v);

	if (err)
		return err;
	if (json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) > max)
		return rfail(r, "%s: \"%s\" is out of range (%" JSON_INTEGER_FORMAT ")", where, key,
			     json_integer_value(v));
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int get_u32(struct reader *r, json_t *o, const char *key, uint32_t max,
		   const char *where, uint32_t *out)
{
	uint64_t v;
	int err = get_uint(r, o, key, max, where, &v);

	if (!err)
		*out = (uint32_t)v;
	return err;
}

/* A count: a non-negative integer or null (COUNT_UNKNOWN). */
static int get_count(struct reader *r, json_t *o, const char *key, const char *where,
		     int64_t *out)
{
	json_t *v;
	int err = get(r, o, key, JSON_NULL, where, &v);

	if (err)
		return err;
	if (json_is_null(v)) {
		*out = COUNT_UNKNOWN;
		return 0;
	}
	if (!json_is_integer(v))
		return rfail(r, "%s: \"%s\" is not a count (an integer or null)", where, key);
	if (json_integer_value(v) < 0)
		return rfail(r, "%s: \"%s\" is negative (%" JSON_INTEGER_FORMAT ")", where, key,
			     json_integer_value(v));
	*out = json_integer_value(v);
	return 0;
}

/* A non-negative finite number. */
static int get_num(struct reader *r, json_t *o, const char *key, const char *where, double *out)
{
	json_t *v;
	int err = get(r, o, key, JSON_REAL, where, &v);

	if (err)
		return err;
	*out = json_number_value(v);
	if (!isfinite(*out) || *out < 0)
		return rfail(r, "%s: \"%s\" is out of range", where, key);
	return 0;
}

static int get_bool(struct reader *r, json_t *o, const char *key, const char *where, bool *out)
{
	json_t *v;
	int err = get(r, o, key, JSON_TRUE, where, &v);

	if (!err)
		*out = json_is_true(v);
	return err;
}

static int get_str(struct reader *r, json_t *o, const char *key, const char *where,
		   const char **out)
{
	json_t *v;
	int err = get(r, o, key, JSON_STRING, where, &v);

	if (err)
		return err;
	if (json_string_length(v) > 65536)
		return rfail(r, "%s: \"%s\" is too long", where, key);
	*out = json_string_value(v);
	return 0;
}

static int get_addr(struct reader *r, json_t *o, const char *key, const char *where,
		    uint64_t *out)
{
	const char *s;
	int err = get_str(r, o, key, where, &s);

	if (err)
		return err;
	if (!parse_addr(s, out))
		return rfail(r, "%s: \"%s\" is not an address (\"%.40s\")", where, key, s);
	return 0;
}

/* The array KEY of O, at most PROFILE_MAX_ITEMS long. */
static int get_array(struct reader *r, json_t *o, const char *key, const char *where,
		     json_t **out)
{
	int err = get(r, o, key, JSON_ARRAY, where, out);

	if (err)
		return err;
	if (json_array_size(*out) > PROFILE_MAX_ITEMS)
		return rfail(r, "%s: \"%s\" has too many entries", where, key);
	return 0;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The index of file name S in p->files, added when new; PROFILE_NO_FILE on ENOMEM. */
static uint32_t intern(struct reader *r, const char *s)
{
	struct profile *p = r->p;
	size_t i;

	if ((p->nfiles + 1) * 2 > r->nslots) {
		size_t n = r->nslots ? r->nslots * 2 : 64;
		uint32_t *slots = calloc(n, sizeof(*slots));

		if (!slots)
			return PROFILE_NO_FILE;
		for (uint32_t k = 0; k < p->nfiles; k++) {
			for (i = hash_str(p->files[k]) & (n - 1); slots[i]; i = (i + 1) & (n - 1))
				;
			slots[i] = k + 1;
		}
		free(r->slots);
		r->slots = slots;
		r->nslots = n;
	}
	for (i = hash_str(s) & (r->nslots - 1); r->slots[i]; i = (i + 1) & (r->nslots - 1))
		if (!strcmp(p->files[r->slots[i] - 1], s))
			return r->slots[i] - 1;
	if (p->nfiles == r->files_cap) {
		size_t cap = r->files_cap ? r->files_cap * 2 : 16;
		char **files = realloc(p->files, cap * sizeof(*files));

		if (!files)
			return PROFILE_NO_FILE;
		p->files = files;
		r->files_cap = cap;
	}
	p->files[p->nfiles] = strdup(s);
	if (!p->files[p->nfiles])
		return PROFILE_NO_FILE;
	r->slots[i] = ++p->nfiles;
	return p->nfiles - 1;
}

/* Optional "file" and "line" of O into *FILE and *LINE. */
static int get_line(struct reader *r, json_t *o, const char *where, uint32_t *file, int *line)
{
	const char *s;
	uint64_t v;
	int err;

	*file = PROFILE_NO_FILE;
	*line = 0;
	if (json_object_get(o, "file")) {
		err = get_str(r, o, "file", where, &s);
		if (err)
			return err;
		*file = intern(r, s);
		if (*file == PROFILE_NO_FILE)
			return rnomem(r);
	}
	if (json_object_get(o, "line")) {
		err = get_uint(r, o, "line", INT_MAX, where, &v);
		if (err)
			return err;
		*line = (int)v;
	}
	return 0;
}

static int read_binary(struct reader *r, json_t *root)
{
	struct profile *p = r->p;
	json_t *bin, *bid;
	const char *path;
	int err;

	err = get(r, root, "binary", JSON_OBJECT, "profile", &bin);
	if (!err)
		err = get_str(r, bin, "path", "binary", &path);
	if (!err)
		err = get(r, bin, "build_id", JSON_NULL, "binary", &bid);
	if (err)
		return err;
	if (!json_is_null(bid)) {
		const char *s = json_string_value(bid);

		if (!s || !is_hex_id(s))
			return rfail(r, "binary: build-id is not a hex string");
		for (size_t i = 0; s[i]; i++)
			p->build_id[i] = (char)(s[i] >= 'A' && s[i] <= 'F' ? s[i] - 'A' + 'a' : s[i]);
	}
	p->binary_path = strdup(path);
	return p->binary_path ? 0 : rnomem(r);
}

/* The optional "mode" of "run" and, for an attach, the process and how long it was held. */
static int read_run_mode(struct reader *r, json_t *run)
{
	struct profile *p = r->p;
	json_t *mode = json_object_get(run, "mode");
	uint64_t v;
	int err;

	if (!mode)
		return 0;
	if (!json_is_string(mode) || (strcmp(json_string_value(mode), "run") &&
				      strcmp(json_string_value(mode), "attach")))
		return rfail(r, "run: mode is not \"run\" or \"attach\"");
	if (strcmp(json_string_value(mode), "attach"))
		return 0;
	p->attached = true;
	err = get_uint(r, run, "pid", INT_MAX, "run", &v);
	if (!err)
		err = get_num(r, run, "held_attach_s", "run", &p->held_attach);
	if (!err)
		err = get_num(r, run, "held_detach_s", "run", &p->held_detach);
	p->pid = (int)v;
	return err;
}

/* The optional "execs" of "run". */
static int read_execs(struct reader *r, json_t *run)
{
	struct profile *p = r->p;
	json_t *a = json_object_get(run, "execs");
	uint64_t v;
	int err;

	if (!a)
		return 0;
	if (!json_is_array(a))
		return rfail(r, "run: execs is not an array");
	if (json_array_size(a) > PROFILE_MAX_ITEMS)
		return rfail(r, "run: too many execs");
	p->execs = calloc(json_array_size(a) + 1, sizeof(*p->execs));
	if (!p->execs)
		return rnomem(r);
	for (size_t i = 0; i < json_array_size(a); i++) {
		json_t *o = json_array_get(a, i), *path;
		struct profile_exec *e = &p->execs[i];
		char where[48];

		snprintf(where, sizeof(where), "run: execs[%zu]", i);
		if (!json_is_object(o))
			return rfail(r, "%s is not an object", where);
		p->nexecs = i + 1;
		err = get_uint(r, o, "pid", INT_MAX, where, &v);
		if (!err)
			err = get_bool(r, o, "main", where, &e->main);
		if (!err)
			err = get_bool(r, o, "frames", where, &e->frames);
		if (!err)
			err = get_num(r, o, "at_s", where, &e->at);
		if (err)
			return err;
		e->pid = (int)v;
		if (e->pid <= 0)
			return rfail(r, "%s: pid is not a process id", where);
		path = json_object_get(o, "path");
		if (!path || !(json_is_null(path) || json_is_string(path)))
			return rfail(r, "%s: path is not a string or null", where);
		if (json_is_string(path) && !(e->path = strdup(json_string_value(path))))
			return rnomem(r);
	}
	return 0;
}

static int read_run(struct reader *r, json_t *root)
{
	struct profile *p = r->p;
	json_t *run, *argv;
	uint64_t v;
	int err;

	err = get(r, root, "run", JSON_OBJECT, "profile", &run);
	if (!err)
		err = get_array(r, run, "argv", "run", &argv);
	if (err)
		return err;
	p->argv = calloc(json_array_size(argv) + 1, sizeof(*p->argv));
	if (!p->argv)
		return rnomem(r);
	for (size_t i = 0; i < json_array_size(argv); i++) {
		const char *s = json_string_value(json_array_get(argv, i));

		if (!s)
			return rfail(r, "run: argv[%zu] is not a string", i);
		p->argv[i] = strdup(s);
		if (!p->argv[i])
			return rnomem(r);
		p->argc = i + 1;
	}
	err = get_uint(r, run, "wait_status", 0xffff, "run", &v);
	if (err)
		return err;
	p->wait_status = (int)v;
	err = get_num(r, run, "seconds", "run", &p->seconds);
	if (!err)
		err = get_uint(r, run, "processes", UINT_MAX, "run", &v);
	if (err)
		return err;
	p->nprocesses = (unsigned)v;
	err = get_uint(r, run, "threads", UINT_MAX, "run", &v);
	if (err)
		return err;
	p->nthreads = (unsigned)v;
	err = get_uint(r, run, "unwind_failures", UINT_MAX, "run", &v);
	if (err)
		return err;
	p->unwind_failures = (unsigned)v;
	err = get_uint(r, run, "virtual_edges", INT64_MAX, "run", &p->nvirtual);
	if (!err && json_object_get(run, "unmapped_frames"))
		err = get_uint(r, run, "unmapped_frames", INT64_MAX, "run", &p->unmapped_frames);
	if (!err && json_object_get(run, "longjmp")) {
		json_t *lj = json_object_get(run, "longjmp");

		if (!json_is_object(lj))
			return rfail(r, "run: \"longjmp\" is not an object");
		err = get_uint(r, lj, "pseudo_edges", INT64_MAX, "run.longjmp", &p->lj_pseudo);
		if (!err)
			err = get_uint(r, lj, "abandoned", INT64_MAX, "run.longjmp", &p->lj_abandoned);
		if (!err)
			err = get_uint(r, lj, "resumed", INT64_MAX, "run.longjmp", &p->lj_resumed);
		if (!err)
			err = get_uint(r, lj, "unwound", INT64_MAX, "run.longjmp", &p->lj_unwound);
	}
	if (!err)
		err = read_run_mode(r, run);
	if (!err)
		err = read_execs(r, run);
	return err;
}

static int read_counters(struct reader *r, json_t *root)
{
	struct profile *p = r->p;
	json_t *a;
	int err = get_array(r, root, "counters", "profile", &a);

	if (err)
		return err;
	p->ncounters = (uint32_t)json_array_size(a);
	p->counters = calloc(p->ncounters ? p->ncounters : 1, sizeof(*p->counters));
	if (!p->counters)
		return rnomem(r);
	for (uint32_t i = 0; i < p->ncounters; i++) {
		json_t *v = json_array_get(a, i);

		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return rfail(r, "counter %" PRIu32 " is not a non-negative integer", i);
		p->counters[i] = (uint64_t)json_integer_value(v);
		if (__builtin_add_overflow(p->hits, p->counters[i], &p->hits) ||
		    p->hits > INT64_MAX)
			return rfail(r, "the counters add up to more than %" PRId64, INT64_MAX);
	}
	return 0;
}

int profile_func__block_at(const struct profile_func *f, uint64_t addr)
{
	uint32_t lo = 0, hi = f->nblocks;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (f->blocks[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->nblocks && f->blocks[lo].addr == addr ? (int)lo : -1;
}

/* Vertex V ("exit" when EXIT_OK, or a block address) of F into *OUT. */
static int get_vertex(struct reader *r, const struct profile_func *f, json_t *v, bool exit_ok,
		      const char *what, uint32_t *out)
{
	const char *s = json_string_value(v);
	uint64_t addr;
	int b;

	if (s && exit_ok && !strcmp(s, "exit")) {
		*out = f->nblocks;
		return 0;
	}
	if (!s || !parse_addr(s, &addr))
		return rfail(r, "function '%s': %s is not a block address%s", f->name, what,
			     exit_ok ? " or \"exit\"" : "");
	b = profile_func__block_at(f, addr);
	if (b < 0)
		return rfail(r, "function '%s': %s 0x%" PRIx64 " which is not a block", f->name,
			     what, addr);
	*out = (uint32_t)b;
	return 0;
}

static int read_blocks(struct reader *r, struct profile_func *f, json_t *a)
{
	char where[160];
	int err;

	f->blocks = calloc(f->nblocks ? f->nblocks : 1, sizeof(*f->blocks));
	if (!f->blocks)
		return rnomem(r);
	for (uint32_t b = 0; b < f->nblocks; b++) {
		struct profile_block *bl = &f->blocks[b];
		json_t *o = json_array_get(a, b);

		snprintf(where, sizeof(where), "function '%.64s': block %" PRIu32, f->name, b);
		if (!json_is_object(o))
			return rfail(r, "%s is not an object", where);
		err = get_addr(r, o, "addr", where, &bl->addr);
		if (!err)
			err = get_addr(r, o, "end", where, &bl->end);
		if (!err)
			err = get_count(r, o, "count", where, &bl->count);
		if (!err)
			err = get_line(r, o, where, &bl->file, &bl->line);
		if (err)
			return err;
		if (bl->end <= bl->addr)
			return rfail(r, "%s: ends at 0x%" PRIx64 ", before it starts", where,
				     bl->end);
		/* Disjoint, but for a prefix pair (cfg_func__prefix_pair): a block inside the
		 * one before that ends with it, once. */
		if (b && (bl->addr <= f->blocks[b - 1].addr ||
			  (bl->addr < f->blocks[b - 1].end &&
			   (bl->end != f->blocks[b - 1].end ||
			    (b > 1 && f->blocks[b - 1].addr < f->blocks[b - 2].end)))))
			return rfail(r, "%s: 0x%" PRIx64 " overlaps or precedes the block before",
				     where, bl->addr);
		if (bl->count > 0 &&
		    __builtin_add_overflow(f->block_total, bl->count, &f->block_total))
			return rfail(r, "%s: block counts are out of range", where);
	}
	return 0;
}

static int read_edges(struct reader *r, struct profile_func *f, json_t *a)
{
	char where[160];
	const char *kind;
	json_t *v;
	int err;

	f->edges = calloc(f->nedges ? f->nedges : 1, sizeof(*f->edges));
	if (!f->edges)
		return rnomem(r);
	for (uint32_t e = 0; e < f->nedges; e++) {
		struct profile_edge *pe = &f->edges[e];
		json_t *o = json_array_get(a, e);
		unsigned k;

		snprintf(where, sizeof(where), "function '%.64s': edge %" PRIu32, f->name, e);
		if (!json_is_object(o))
			return rfail(r, "%s is not an object", where);
		err = get(r, o, "from", JSON_NULL, where, &v);
		if (!err)
			err = get_vertex(r, f, v, false, "edge from", &pe->from);
		if (!err)
			err = get(r, o, "to", JSON_NULL, where, &v);
		if (!err)
			err = get_vertex(r, f, v, true, "edge to", &pe->to);
		if (!err)
			err = get_str(r, o, "kind", where, &kind);
		if (!err)
			err = get_count(r, o, "count", where, &pe->count);
		if (!err)
			err = get_bool(r, o, "measured", where, &pe->measured);
		if (err)
			return err;
		for (k = 0; k < EDGE_KIND_COUNT; k++)
			if (!strcmp(kind, cfg_edge_kind__name(k)))
				break;
		if (k == EDGE_KIND_COUNT)
			return rfail(r, "%s: unknown kind \"%.40s\"", where, kind);
		pe->kind = (uint8_t)k;
	}
	return 0;
}

/* Reads a function's optional "loops" (A, NULL when absent): measured trip-count moments. */
static int read_loops(struct reader *r, struct profile_func *f, json_t *a, const char *where)
{
	if (!a)
		return 0;
	if (!json_is_array(a))
		return rfail(r, "%s: \"loops\" is not an array", where);
	if (json_array_size(a) > f->nblocks)
		return rfail(r, "%s: more loops than blocks", where);
	f->nloops = (uint32_t)json_array_size(a);
	f->loops = calloc(f->nloops ? f->nloops : 1, sizeof(*f->loops));
	if (!f->loops)
		return rnomem(r);
	for (uint32_t k = 0; k < f->nloops; k++) {
		json_t *lo = json_array_get(a, k);
		struct profile_loop *l = &f->loops[k];
		int err;

		if (!json_is_object(lo))
			return rfail(r, "%s: a loop is not an object", where);
		err = get_addr(r, lo, "header", where, &l->header);
		if (!err)
			err = get_uint(r, lo, "entries", INT64_MAX, where, &l->entries);
		if (!err)
			err = get_uint(r, lo, "sum", INT64_MAX, where, &l->sum);
		if (!err)
			err = get_num(r, lo, "sumsq", where, &l->sumsq);
		if (err)
			return err;
		if (profile_func__block_at(f, l->header) < 0)
			return rfail(r, "%s: loop header 0x%" PRIx64 " is not a block", where,
				     l->header);
		for (uint32_t j = 0; j < k; j++)
			if (f->loops[j].header == l->header)
				return rfail(r, "%s: loop header 0x%" PRIx64 " listed twice", where,
					     l->header);
		if (l->entries > l->sum || (l->entries == 0) != (l->sum == 0) ||
		    l->sumsq < (double)l->sum * (1 - 1e-12))
			return rfail(r, "%s: loop 0x%" PRIx64 ": inconsistent moments", where,
				     l->header);
	}
	return 0;
}

/* Reads a function's optional "inexact" (A, NULL when absent). */
static int read_causes(struct reader *r, struct profile_func *f, json_t *a, const char *where)
{
	if (!a)
		return 0;
	if (!json_is_array(a))
		return rfail(r, "%s: \"inexact\" is not an array", where);
	if (json_array_size(a) > PROFILE_MAX_ITEMS)
		return rfail(r, "%s: too many inexact causes", where);
	f->ncauses = (uint32_t)json_array_size(a);
	f->causes = calloc(f->ncauses ? f->ncauses : 1, sizeof(*f->causes));
	if (!f->causes)
		return rnomem(r);
	for (uint32_t k = 0; k < f->ncauses; k++) {
		json_t *co = json_array_get(a, k);
		struct profile_cause *c = &f->causes[k];
		const char *name;
		unsigned kind;
		int err;

		if (!json_is_object(co))
			return rfail(r, "%s: an inexact cause is not an object", where);
		err = get_str(r, co, "cause", where, &name);
		if (err)
			return err;
		for (kind = 0; kind < PCAUSE_COUNT; kind++)
			if (!strcmp(name, cause_names[kind]))
				break;
		if (kind == PCAUSE_COUNT)
			return rfail(r, "%s: unknown inexact cause \"%.40s\"", where, name);
		c->kind = (uint8_t)kind;
		if (cause_has_addr(kind))
			err = get_addr(r, co, "addr", where, &c->addr);
		else
			err = get_uint(r, co, "count", INT64_MAX, where, &c->count);
		if (err)
			return err;
	}
	return 0;
}

static int read_func(struct reader *r, json_t *o, size_t i, struct profile_func *f)
{
	char where[160];
	json_t *blocks, *edges, *viol, *reason;
	const char *s;
	uint64_t v;
	unsigned st;
	int err;

	snprintf(where, sizeof(where), "function %zu", i);
	if (!json_is_object(o))
		return rfail(r, "%s is not an object", where);
	err = get_str(r, o, "name", where, &s);
	if (err)
		return err;
	f->name = strdup(s);
	if (!f->name)
		return rnomem(r);
	snprintf(where, sizeof(where), "function '%.64s'", f->name);
	err = get_addr(r, o, "addr", where, &f->addr);
	if (!err)
		err = get_str(r, o, "status", where, &s);
	if (err)
		return err;
	for (st = 0; st < 3; st++)
		if (!strcmp(s, status_names[st]))
			break;
	if (st == 3)
		return rfail(r, "%s: unknown status \"%.40s\"", where, s);
	f->status = (uint8_t)st;
	err = get(r, o, "reason", JSON_NULL, where, &reason);
	if (err)
		return err;
	if (!json_is_null(reason)) {
		if (!json_is_string(reason))
			return rfail(r, "%s: \"reason\" is not a string or null", where);
		f->reason = strdup(json_string_value(reason));
		if (!f->reason)
			return rnomem(r);
	}
	err = get_count(r, o, "count", where, &f->count);
	if (!err)
		err = get_line(r, o, where, &f->file, &f->line);
	if (!err)
		err = get_u32(r, o, "chords", PROFILE_MAX_ITEMS, where, &f->nchords);
	if (!err)
		err = get_num(r, o, "est_cost_ns", where, &f->est_cost_ns);
	if (!err)
		err = get_uint(r, o, "virtual_in", INT64_MAX, where, &f->virtual_in);
	if (!err)
		err = get_uint(r, o, "virtual_out", INT64_MAX, where, &f->virtual_out);
	if (!err)
		err = get_array(r, o, "blocks", where, &blocks);
	if (!err)
		err = get_array(r, o, "edges", where, &edges);
	if (!err)
		err = get_array(r, o, "violations", where, &viol);
	if (err)
		return err;
	f->nblocks = (uint32_t)json_array_size(blocks);
	f->nedges = (uint32_t)json_array_size(edges);
	f->nviolations = (uint32_t)json_array_size(viol);
	if (f->status == PLAN_EXCLUDED && (f->nblocks || f->nedges || f->nviolations))
		return rfail(r, "%s: excluded, but has blocks, edges or violations", where);
	err = read_blocks(r, f, blocks);
	if (!err)
		err = read_edges(r, f, edges);
	if (err)
		return err;
	v = (uint64_t)profile_func__block_at(f, f->addr);
	f->entry_block = (int64_t)v < 0 ? f->nblocks : (uint32_t)v;
	if (f->nblocks && f->entry_block == f->nblocks)
		return rfail(r, "%s: entry 0x%" PRIx64 " is not a block", where, f->addr);
	f->violations = calloc(f->nviolations ? f->nviolations : 1, sizeof(*f->violations));
	if (!f->violations)
		return rnomem(r);
	for (uint32_t k = 0; k < f->nviolations; k++) {
		err = get_vertex(r, f, json_array_get(viol, k), true, "violation at",
				 &f->violations[k]);
		if (err)
			return err;
	}
	{
		json_t *va = json_object_get(o, "virtual");

		if (va && !json_is_array(va))
			return rfail(r, "%s: \"virtual\" is not an array", where);
		f->nvirt = va ? (uint32_t)json_array_size(va) : 0;
		if (f->nvirt > PROFILE_MAX_ITEMS)
			return rfail(r, "%s: too many virtual edges", where);
		f->virt = calloc(f->nvirt ? f->nvirt : 1, sizeof(*f->virt));
		if (!f->virt)
			return rnomem(r);
		for (uint32_t k = 0; k < f->nvirt; k++) {
			json_t *vo = json_array_get(va, k);
			struct profile_virtual *pv = &f->virt[k];

			if (!json_is_object(vo))
				return rfail(r, "%s: a virtual edge is not an object", where);
			err = get_vertex(r, f, json_object_get(vo, "from"), true, "virtual edge from",
					 &pv->from);
			if (!err)
				err = get_vertex(r, f, json_object_get(vo, "to"), true,
						 "virtual edge to", &pv->to);
			if (!err)
				err = get_uint(r, vo, "count", INT64_MAX, where, &pv->count);
			if (!err && json_object_get(vo, "stopped_at"))
				err = get_addr(r, vo, "stopped_at", where, &pv->stopped_at);
			if (!err && json_object_get(vo, "resumed_at"))
				err = get_addr(r, vo, "resumed_at", where, &pv->resumed_at);
			if (err)
				return err;
		}
	}
	err = read_loops(r, f, json_object_get(o, "loops"), where);
	if (!err)
		err = read_causes(r, f, json_object_get(o, "inexact"), where);
	if (err)
		return err;
	if (__builtin_add_overflow(r->p->nviolations, f->nviolations, &r->p->nviolations))
		return rfail(r, "%s: too many violations", where);
	if (f->status != PLAN_EXCLUDED &&
	    (__builtin_add_overflow(r->p->naive_hits, (uint64_t)f->block_total,
				    &r->p->naive_hits) ||
	     r->p->naive_hits > INT64_MAX))
		return rfail(r, "%s: block counts are out of range", where);
	return 0;
}

struct addr_index {
	uint64_t addr;
	uint32_t idx;
};

static int cmp_addr_index(const void *a, const void *b)
{
	const struct addr_index *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int read_functions(struct reader *r, json_t *root)
{
	struct profile *p = r->p;
	struct addr_index *ix;
	json_t *a;
	int err = get_array(r, root, "functions", "profile", &a);

	if (err)
		return err;
	p->nfuncs = json_array_size(a);
	p->funcs = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*p->funcs));
	if (!p->funcs)
		return rnomem(r);
	for (size_t i = 0; i < p->nfuncs; i++) {
		err = read_func(r, json_array_get(a, i), i, &p->funcs[i]);
		if (err)
			return err;
		switch (p->funcs[i].status) {
		case PLAN_CHORDS:
			p->nchord_funcs++;
			break;
		case PLAN_NAIVE:
			p->nnaive_funcs++;
			break;
		default:
			p->nexcluded_funcs++;
			break;
		}
	}
	ix = malloc((p->nfuncs ? p->nfuncs : 1) * sizeof(*ix));
	p->by_addr = malloc((p->nfuncs ? p->nfuncs : 1) * sizeof(*p->by_addr));
	if (!ix || !p->by_addr) {
		free(ix);
		return rnomem(r);
	}
	for (size_t i = 0; i < p->nfuncs; i++)
		ix[i] = (struct addr_index){ p->funcs[i].addr, (uint32_t)i };
	if (p->nfuncs)
		qsort(ix, p->nfuncs, sizeof(*ix), cmp_addr_index);
	for (size_t i = 0; i < p->nfuncs; i++)
		p->by_addr[i] = ix[i].idx;
	free(ix);
	return 0;
}

static int read_costs(struct reader *r, json_t *pl)
{
	struct profile *p = r->p;
	json_t *c;
	int err = get(r, pl, "costs", JSON_OBJECT, "placement", &c);

	site_costs__defaults(&p->costs);
	if (!err)
		err = get_num(r, c, "stepped", "placement costs", &p->costs.ns[PROBE_STEPPED]);
	if (!err)
		err = get_num(r, c, "emulated", "placement costs", &p->costs.ns[PROBE_EMULATED]);
	if (!err)
		err = get_num(r, c, "nop5", "placement costs", &p->costs.ns[PROBE_NOP5]);
	/* In-process counter costs: absent from profiles written before they existed. */
	if (!err && json_object_get(c, "patch"))
		err = get_num(r, c, "patch", "placement costs", &p->costs.ns[PROBE_PATCH]);
	if (!err && json_object_get(c, "patch_flags"))
		err = get_num(r, c, "patch_flags", "placement costs", &p->costs.ns[PROBE_PATCH_FLAGS]);
	if (!err)
		err = get_bool(r, c, "measured", "placement costs", &p->costs.measured);
	if (!err && json_object_get(c, "date")) {
		const char *d = json_string_value(json_object_get(c, "date"));

		if (!d || !site_costs__date_ok(d))
			return rfail(r, "placement costs: \"date\" is not an ISO 8601 date");
		snprintf(p->costs.date, sizeof(p->costs.date), "%s", d);
	}
	return err;
}

static int read_site(struct reader *r, json_t *o, size_t s, struct profile_site *ps)
{
	struct profile *p = r->p;
	char where[64];
	const char *str;
	json_t *ctr;
	uint64_t hits = 0, v;
	unsigned k;
	int err;

	snprintf(where, sizeof(where), "placement: site %zu", s);
	if (!json_is_object(o))
		return rfail(r, "%s is not an object", where);
	err = get_addr(r, o, "addr", where, &ps->addr);
	if (!err)
		err = get_u32(r, o, "func", p->nfuncs ? (uint32_t)(p->nfuncs - 1) : 0, where,
			      &ps->func);
	if (!err && !p->nfuncs)
		err = rfail(r, "%s: there are no functions", where);
	if (!err)
		err = get_str(r, o, "kind", where, &str);
	if (err)
		return err;
	for (k = 0; k < 3 && strcmp(str, site_kind_names[k]); k++)
		;
	if (k == 3)
		return rfail(r, "%s: unknown kind \"%.40s\"", where, str);
	ps->kind = (uint8_t)k;
	if (ps->kind == SITE_BRANCH) {
		err = get_uint(r, o, "cc", 0xff, where, &v);
		if (err)
			return err;
		ps->cc = (uint8_t)v;
	}
	err = get_str(r, o, "class", where, &str);
	if (err)
		return err;
	for (k = 0; k < PROBE_CLASS_COUNT && strcmp(str, class_names[k]); k++)
		;
	if (k == PROBE_CLASS_COUNT)
		return rfail(r, "%s: unknown class \"%.40s\"", where, str);
	ps->probe_class = (uint8_t)k;
	err = get(r, o, "counters", JSON_ARRAY, where, &ctr);
	if (err)
		return err;
	if (ps->kind == SITE_INDIRECT ? json_array_size(ctr) == 0 ||
						 json_array_size(ctr) > PROFILE_MAX_ITEMS
				      : json_array_size(ctr) != (ps->kind == SITE_BRANCH ? 2u : 1u))
		return rfail(r, "%s: a %s site has a wrong number of counters", where,
			     site_kind_names[ps->kind]);
	ps->counter2 = ps->kind == SITE_INDIRECT ? (uint32_t)json_array_size(ctr)
						 : PLACEMENT_NO_COUNTER;
	for (size_t i = 0; i < json_array_size(ctr); i++) {
		json_t *c = json_array_get(ctr, i);
		json_int_t ci = json_integer_value(c);

		if (!json_is_integer(c) || ci < 0 || (uint64_t)ci >= p->ncounters)
			return rfail(r, "%s: counter is not an index of \"counters\"", where);
		if (ps->kind == SITE_INDIRECT) {
			/* Consecutive counters, one per out-edge. */
			if (i == 0)
				ps->counter = (uint32_t)ci;
			else if ((uint64_t)ci != (uint64_t)ps->counter + i)
				return rfail(r, "%s: indirect counters are not consecutive", where);
		} else {
			*(i ? &ps->counter2 : &ps->counter) = (uint32_t)ci;
		}
		if (__builtin_add_overflow(hits, p->counters[ci], &hits) || hits > INT64_MAX)
			return rfail(r, "%s: hits are out of range", where);
	}
	err = get_uint(r, o, "hits", INT64_MAX, where, &ps->hits);
	if (err)
		return err;
	if (ps->hits != hits)
		return rfail(r, "%s: %" PRIu64 " hits, but its counters hold %" PRIu64, where,
			     ps->hits, hits);
	p->sites_hit += hits != 0;
	p->est_trap_ns += (double)hits * site_costs__of(&p->costs, ps->probe_class);
	p->by_class[ps->probe_class].sites++;
	p->by_class[ps->probe_class].hits += hits;
	p->by_class[ps->probe_class].est_ns +=
		(double)hits * site_costs__of(&p->costs, ps->probe_class);
	return 0;
}

static int read_counter_def(struct reader *r, json_t *o, uint32_t c, struct profile_counter *d)
{
	struct profile *p = r->p;
	const struct profile_func *f;
	const struct profile_site *ps;
	char where[64];
	int err;

	snprintf(where, sizeof(where), "placement: counter %" PRIu32, c);
	if (!json_is_object(o))
		return rfail(r, "%s is not an object", where);
	if (!p->nfuncs || !p->nsites)
		return rfail(r, "%s: there are no functions or sites", where);
	err = get_u32(r, o, "func", (uint32_t)(p->nfuncs - 1), where, &d->func);
	if (!err)
		err = get_u32(r, o, "site", (uint32_t)(p->nsites - 1), where, &d->site);
	if (err)
		return err;
	f = &p->funcs[d->func];
	if (json_object_get(o, "edge") && !json_object_get(o, "block")) {
		d->what = COUNTS_EDGE;
		err = get_u32(r, o, "edge", f->nedges, where, &d->id);
	} else if (json_object_get(o, "block") && !json_object_get(o, "edge")) {
		d->what = COUNTS_BLOCK;
		err = f->nblocks ? get_u32(r, o, "block", f->nblocks - 1, where, &d->id) :
				   rfail(r, "%s: function '%.64s' has no blocks", where, f->name);
	} else {
		err = rfail(r, "%s: needs exactly one of \"edge\" and \"block\"", where);
	}
	if (err)
		return err;
	ps = &p->sites[d->site];
	if (ps->kind == SITE_INDIRECT ? c < ps->counter || c - ps->counter >= ps->counter2
				      : ps->counter != c && ps->counter2 != c)
		return rfail(r, "%s: site %" PRIu32 " does not use it", where, d->site);
	return 0;
}

static int read_placement(struct reader *r, json_t *root)
{
	struct profile *p = r->p;
	json_t *pl, *sites, *defs;
	const char *mode;
	int err;

	err = get(r, root, "placement", JSON_OBJECT, "profile", &pl);
	if (!err)
		err = get_str(r, pl, "mode", "placement", &mode);
	if (err)
		return err;
	if (!strcmp(mode, "chords"))
		p->mode = PLACEMENT_CHORDS;
	else if (!strcmp(mode, "naive"))
		p->mode = PLACEMENT_NAIVE;
	else
		return rfail(r, "placement: unknown mode \"%.40s\"", mode);
	err = read_costs(r, pl);
	if (!err)
		err = get_num(r, pl, "est_cost_ns", "placement", &p->est_cost_ns);
	if (!err)
		err = get_array(r, pl, "sites", "placement", &sites);
	if (!err)
		err = get_array(r, pl, "counters", "placement", &defs);
	if (err)
		return err;
	if (json_array_size(defs) != p->ncounters)
		return rfail(r, "placement: %zu counter definitions for %" PRIu32 " counters",
			     json_array_size(defs), p->ncounters);
	p->nsites = json_array_size(sites);
	p->sites = calloc(p->nsites ? p->nsites : 1, sizeof(*p->sites));
	p->counter_defs = calloc(p->ncounters ? p->ncounters : 1, sizeof(*p->counter_defs));
	if (!p->sites || !p->counter_defs)
		return rnomem(r);
	for (size_t s = 0; s < p->nsites; s++) {
		err = read_site(r, json_array_get(sites, s), s, &p->sites[s]);
		if (err)
			return err;
	}
	for (uint32_t c = 0; c < p->ncounters; c++) {
		err = read_counter_def(r, json_array_get(defs, c), c, &p->counter_defs[c]);
		if (err)
			return err;
	}
	return 0;
}

/* "probes" and "violations" must agree with what was read. */
static int read_summary(struct reader *r, json_t *root)
{
	struct profile *p = r->p;
	uint64_t v;
	double est;
	json_t *pr;
	int err;

	err = get(r, root, "probes", JSON_OBJECT, "profile", &pr);
	if (!err)
		err = get_uint(r, pr, "sites", INT64_MAX, "probes", &v);
	if (err)
		return err;
	if (v != p->nsites)
		return rfail(r, "probes: %" PRIu64 " sites, but the placement has %zu", v,
			     p->nsites);
	err = get_uint(r, pr, "hits", INT64_MAX, "probes", &v);
	if (err)
		return err;
	if (v != p->hits)
		return rfail(r, "probes: %" PRIu64 " hits, but the counters add up to %" PRIu64, v,
			     p->hits);
	err = get_uint(r, pr, "sites_hit", INT64_MAX, "probes", &v);
	if (err)
		return err;
	if (v != p->sites_hit)
		return rfail(r, "probes: %" PRIu64 " sites hit, but the sites say %" PRIu64, v,
			     p->sites_hit);
	err = get_uint(r, pr, "naive_hits", INT64_MAX, "probes", &v);
	if (err)
		return err;
	if (v != p->naive_hits)
		return rfail(r, "probes: naive_hits %" PRIu64 ", but the blocks add up to %" PRIu64,
			     v, p->naive_hits);
	err = get_num(r, pr, "est_trap_ns", "probes", &est);
	if (err)
		return err;
	p->est_trap_ns = est; /* as recorded: the costs of the run */
	err = get_uint(r, root, "violations", INT64_MAX, "profile", &v);
	if (err)
		return err;
	if (v != p->nviolations)
		return rfail(r, "%" PRIu64 " violations, but the functions list %" PRIu64, v,
			     p->nviolations);
	pr = json_object_get(root, "loop_stats");
	if (pr) {
		struct profile_loop_summary *ls = &p->loop_stats;
		uint64_t loops = 0, measured = 0;

		if (!json_is_object(pr))
			return rfail(r, "\"loop_stats\" is not an object");
		err = get_uint(r, pr, "loops", UINT32_MAX, "loop_stats", &loops);
		if (!err)
			err = get_uint(r, pr, "measured", loops, "loop_stats", &measured);
		if (!err)
			err = get_uint(r, pr, "sites", INT64_MAX, "loop_stats", &ls->sites);
		if (!err)
			err = get_uint(r, pr, "hits", INT64_MAX, "loop_stats", &ls->hits);
		if (!err)
			err = get_num(r, pr, "est_trap_ns", "loop_stats", &ls->est_trap_ns);
		if (err)
			return err;
		ls->loops = (uint32_t)loops;
		ls->measured = (uint32_t)measured;
		p->has_loop_stats = true;
	}
	return 0;
}

static int read_root(struct reader *r, json_t *root);

/* The optional "libraries": each a profile of its own (without libraries). */
static int read_libraries(struct reader *r, json_t *root)
{
	struct profile *p = r->p;
	json_t *libs = json_object_get(root, "libraries");
	int err = 0;

	if (!libs)
		return 0;
	if (r->nested)
		return rfail(r, "a library's profile has libraries");
	if (!json_is_array(libs) || json_array_size(libs) > 256)
		return rfail(r, "libraries is not an array of at most 256 profiles");
	p->libs = calloc(json_array_size(libs) + 1, sizeof(*p->libs));
	if (!p->libs)
		return rnomem(r);
	for (size_t k = 0; k < json_array_size(libs) && !err; k++) {
		struct reader lr = { .name = r->name, .p = &p->libs[k], .nested = true };

		p->libs[k].source = strdup(r->name);
		err = p->libs[k].source ? read_root(&lr, json_array_get(libs, k)) : rnomem(r);
		free(lr.slots);
		p->nlibs = k + 1;
	}
	return err;
}

static int read_root(struct reader *r, json_t *root)
{
	json_t *fmt, *ver;
	int err;

	fmt = json_object_get(root, "format");
	if (!json_is_object(root) || !json_is_string(fmt) ||
	    strcmp(json_string_value(fmt), PROFILE_FORMAT))
		return rfail(r, "not an edgeprof profile");
	ver = json_object_get(root, "version");
	if (!json_is_integer(ver))
		return rfail(r, "not an edgeprof profile (no version)");
	if (json_integer_value(ver) != PROFILE_VERSION)
		return rfail(r, "profile version %" JSON_INTEGER_FORMAT
			     " is not supported (this edgeprof reads version %d)",
			     json_integer_value(ver), PROFILE_VERSION);
	err = read_binary(r, root);
	if (!err)
		err = read_run(r, root);
	if (!err)
		err = read_counters(r, root);
	if (!err)
		err = read_functions(r, root);
	if (!err)
		err = read_placement(r, root);
	if (!err)
		err = read_summary(r, root);
	if (!err)
		err = read_libraries(r, root);
	return err;
}

/* Reads document ROOT (a reference kept by the caller) into P, named R->name. */
static int read_doc(struct reader *r, json_t *root)
{
	int err;

	r->p->source = strdup(r->name);
	err = r->p->source ? read_root(r, root) : rnomem(r);
	free(r->slots);
	r->slots = NULL;
	if (err)
		profile__release(r->p);
	return err;
}

/* profile__read_buffer, and with DOC the parsed document (owned by the caller) on success. */
static int read_buffer(const char *buf, size_t size, const char *name, struct profile *p,
		       json_t **doc)
{
	struct reader r = { .name = name ? name : "profile", .p = p };
	json_error_t jerr;
	json_t *root;
	size_t i;
	int err;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < size && strchr(" \t\r\n", buf[i]) && buf[i]; i++)
		;
	if (i == size)
		return rfail(&r, "%s, not an edgeprof profile", size ? "blank file" : "empty file");
	if (buf[i] != '{')
		return rfail(&r, "not an edgeprof profile");
	if (size > PROFILE_MAX_FILE_SIZE)
		return rfail(&r, "too large for a profile");
	root = json_loadb(buf, size, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		if (json_error_code(&jerr) == json_error_out_of_memory)
			return rnomem(&r);
		return rfail(&r, "truncated or corrupt JSON at line %d: %s", jerr.line, jerr.text);
	}
	err = read_doc(&r, root);
	if (!err && doc)
		*doc = json_incref(root);
	json_decref(root);
	return err;
}

int profile__read_buffer(const char *buf, size_t size, const char *name, struct profile *p)
{
	return read_buffer(buf, size, name, p, NULL);
}

int profile__from_doc(json_t *root, const char *name, struct profile *p)
{
	struct reader r = { .name = name ? name : "profile", .p = p };

	memset(p, 0, sizeof(*p));
	return read_doc(&r, root);
}

int profile__read(const char *path, struct profile *p)
{
	return profile__read_doc(path, p, NULL);
}

int profile__read_doc(const char *path, struct profile *p, json_t **doc)
{
	struct stat st;
	size_t size = 0, cap;
	char *buf;
	ssize_t n;
	int fd, err;

	memset(p, 0, sizeof(*p));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		pr_err("'%s': %s", path, strerror(err));
		return -err;
	}
	if (fstat(fd, &st)) {
		err = errno;
		close(fd);
		pr_err("'%s': %s", path, strerror(err));
		return -err;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		pr_err("'%s': is a directory, not an edgeprof profile", path);
		return -EISDIR;
	}
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > PROFILE_MAX_FILE_SIZE) {
		close(fd);
		pr_err("'%s': too large for a profile", path);
		return -EINVAL;
	}
	cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 65536;
	buf = malloc(cap);
	for (;;) {
		if (!buf) {
			close(fd);
			pr_err("'%s': out of memory reading the profile", path);
			return -ENOMEM;
		}
		if (size == cap) {
			char *nb = cap >= PROFILE_MAX_FILE_SIZE ? NULL : realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				close(fd);
				pr_err("'%s': too large for a profile", path);
				return -EINVAL;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + size, cap - size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			free(buf);
			close(fd);
			pr_err("'%s': %s", path, strerror(err));
			return -err;
		}
		if (n == 0)
			break;
		size += (size_t)n;
	}
	close(fd);
	err = read_buffer(buf, size, path, p, doc);
	free(buf);
	return err;
}

void profile__release(struct profile *p)
{
	for (size_t i = 0; p->argv && i < p->argc; i++)
		free(p->argv[i]);
	free(p->argv);
	for (size_t i = 0; p->execs && i < p->nexecs; i++)
		free(p->execs[i].path);
	free(p->execs);
	for (size_t i = 0; p->funcs && i < p->nfuncs; i++) {
		struct profile_func *f = &p->funcs[i];

		free(f->name);
		free(f->reason);
		free(f->blocks);
		free(f->edges);
		free(f->violations);
		free(f->virt);
		free(f->loops);
		free(f->causes);
	}
	free(p->funcs);
	free(p->by_addr);
	for (uint32_t i = 0; p->files && i < p->nfiles; i++)
		free(p->files[i]);
	free(p->files);
	free(p->binary_path);
	free(p->source);
	free(p->sites);
	free(p->counter_defs);
	free(p->counters);
	for (size_t k = 0; p->libs && k < p->nlibs; k++)
		profile__release(&p->libs[k]);
	free(p->libs);
	memset(p, 0, sizeof(*p));
}

int profile__check_build_id(const struct profile *p, const char *build_id)
{
	const char *src = p->source ? p->source : PROFILE_DEFAULT_PATH;

	if (!build_id || !build_id[0] || !p->build_id[0]) {
		pr_err("'%s': cannot check that the profile is of this binary: %s has no build-id",
		       src, !p->build_id[0] ? "the profiled binary" : "this binary");
		return -EINVAL;
	}
	if (strcasecmp(p->build_id, build_id)) {
		pr_err("'%s': the profile is of another build (build-id %s, recorded on '%s'); "
		       "this binary's build-id is %s",
		       src, p->build_id, p->binary_path ? p->binary_path : "?", build_id);
		return -EINVAL;
	}
	return 0;
}

const struct profile_func *profile__func_at(const struct profile *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nfuncs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->funcs[p->by_addr[mid]].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nfuncs && p->funcs[p->by_addr[lo]].addr == addr ?
		       &p->funcs[p->by_addr[lo]] : NULL;
}
