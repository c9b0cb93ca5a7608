/*
 * Merging profiles (see profile_merge.h): exact counts of the same build add up, so the sum
 * of two profiles is computed on their documents, key by key, and the summary keys the reader
 * checks (site hits, probes, naive_hits, violations) are made again from the sums.
 */
#include "user/profile/profile_merge.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "user/util/log.h"

struct merge {
	const char *a_name, *b_name;
	const char *where; /* the section being merged: "" or "library N: " */
	int err;
};

static int mfail(struct merge *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int mfail(struct merge *m, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (m->err)
		return m->err;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr_err("'%s': cannot be merged with '%s': %s%s", m->b_name, m->a_name, m->where, msg);
	m->err = -EINVAL;
	return m->err;
}

static int nomem(struct merge *m)
{
	if (!m->err) {
		pr_err("out of memory");
		m->err = -ENOMEM;
	}
	return m->err;
}

/* Whether A and B hold the same value at KEY (both missing counts as the same). */
static bool same_at(json_t *a, json_t *b, const char *key)
{
	json_t *x = json_object_get(a, key), *y = json_object_get(b, key);

	return (!x && !y) || (x && y && json_equal(x, y));
}

/* X + Y of two counts: integers, or null (unknown) when either is. Counts fit int64 (the
 * reader checks); a sum that does not is an error. */
static json_t *add_count(struct merge *m, json_t *x, json_t *y, const char *what)
{
	json_int_t s;

	if (!x || !y)
		return mfail(m, "%s: missing", what), NULL;
	if (json_is_null(x) || json_is_null(y))
		return json_null();
	if (!json_is_integer(x) || !json_is_integer(y))
		return mfail(m, "%s: not a count", what), NULL;
	if (__builtin_add_overflow(json_integer_value(x), json_integer_value(y), &s))
		return mfail(m, "%s: the sum is out of range", what), NULL;
	return json_integer(s);
}

/* Adds B[KEY] to A[KEY] (counts; a key missing from both is left missing). */
static void add_key(struct merge *m, json_t *a, json_t *b, const char *key, const char *what)
{
	json_t *x = json_object_get(a, key), *y = json_object_get(b, key), *s;

	if (m->err || (!x && !y))
		return;
	s = add_count(m, x, y, what);
	if (s && json_object_set_new(a, key, s))
		nomem(m);
}

/* Adds B[KEY] to A[KEY] as numbers (seconds, nanoseconds). */
static void add_real(struct merge *m, json_t *a, json_t *b, const char *key)
{
	json_t *x = json_object_get(a, key), *y = json_object_get(b, key);

	if (m->err || !x || !y || !json_is_number(x) || !json_is_number(y))
		return;
	if (json_object_set_new(a, key, json_real(json_number_value(x) + json_number_value(y))))
		nomem(m);
}

/* The entry of array A whose values at KEYS (NULL-terminated) equal E's, or NULL. */
static json_t *find_by(json_t *a, json_t *e, const char *const *keys)
{
	size_t i;
	json_t *x;

	json_array_foreach(a, i, x) {
		bool same = true;

		for (const char *const *k = keys; *k && same; k++)
			same = same_at(x, e, *k);
		if (same)
			return x;
	}
	return NULL;
}

/* Adds entry Y of a list into the matching entry X. */
typedef void (*merge_entry_fn)(struct merge *m, json_t *x, json_t *y);

/* Merges list FB[KEY] into FA[KEY], entries matched by KEYS and added by ADD (entries only B
 * has are appended). A list missing from B leaves A as it is. */
static void merge_list(struct merge *m, json_t *fa, json_t *fb, const char *key,
		       const char *const *keys, merge_entry_fn add)
{
	json_t *a = json_object_get(fa, key), *b = json_object_get(fb, key), *e;
	size_t i;

	if (m->err || !b)
		return;
	if (!a) {
		if (json_object_set(fa, key, b))
			nomem(m);
		return;
	}
	json_array_foreach(b, i, e) {
		json_t *x = find_by(a, e, keys);

		if (!x) {
			if (json_array_append(a, e))
				nomem(m);
			continue;
		}
		add(m, x, e);
	}
}

static void add_entry_count(struct merge *m, json_t *x, json_t *y)
{
	add_key(m, x, y, "count", "count");
}

/* Loop moments: "sumsq" may be an integer or, beyond 2^63, a real. */
static void add_sumsq(struct merge *m, json_t *x, json_t *y)
{
	json_t *a = json_object_get(x, "sumsq"), *b = json_object_get(y, "sumsq");
	json_int_t s;

	if (m->err || !a || !b)
		return;
	if (json_is_integer(a) && json_is_integer(b) &&
	    !__builtin_add_overflow(json_integer_value(a), json_integer_value(b), &s)) {
		if (json_object_set_new(x, "sumsq", json_integer(s)))
			nomem(m);
		return;
	}
	if (json_object_set_new(x, "sumsq", json_real(json_number_value(a) + json_number_value(b))))
		nomem(m);
}

static void add_loop(struct merge *m, json_t *x, json_t *y)
{
	add_key(m, x, y, "entries", "loop entries");
	add_key(m, x, y, "sum", "loop trips");
	add_sumsq(m, x, y);
}

/* The union of the violation lists (vertices where conservation failed in either run: the
 * sum fails there too). */
static void merge_violations(struct merge *m, json_t *fa, json_t *fb)
{
	json_t *a = json_object_get(fa, "violations"), *b = json_object_get(fb, "violations"), *v;
	size_t i, j;

	if (m->err || !a || !b)
		return;
	json_array_foreach(b, i, v) {
		json_t *w;
		bool found = false;

		json_array_foreach(a, j, w) {
			if (json_equal(v, w)) {
				found = true;
				break;
			}
		}
		if (!found && json_array_append(a, v))
			nomem(m);
	}
}

/* Checks that A and B have the same shape at KEY: arrays of equal length whose entries agree
 * on FIELDS. */
static bool same_shape(struct merge *m, json_t *a, json_t *b, const char *key,
		       const char *const *fields, const char *what)
{
	json_t *x = json_object_get(a, key), *y = json_object_get(b, key), *e;
	size_t i;

	if (!x && !y)
		return true;
	if (!json_is_array(x) || !json_is_array(y) || json_array_size(x) != json_array_size(y)) {
		mfail(m, "%s differ", what);
		return false;
	}
	json_array_foreach(x, i, e) {
		json_t *f = json_array_get(y, i);

		for (const char *const *k = fields; *k; k++)
			if (!same_at(e, f, *k)) {
				mfail(m, "%s differ (entry %zu, \"%s\")", what, i, *k);
				return false;
			}
	}
	return true;
}

static void merge_func(struct merge *m, json_t *fa, json_t *fb)
{
	static const char *const block_keys[] = { "addr", "end", NULL };
	static const char *const edge_keys[] = { "from", "to", "kind", NULL };
	static const char *const lj_keys[] = { "kind", "block", NULL };
	static const char *const fe_keys[] = { "block", NULL };
	static const char *const virt_keys[] = { "from", "to", "stopped_at", "resumed_at", NULL };
	static const char *const cause_keys[] = { "cause", "addr", NULL };
	static const char *const loop_keys[] = { "header", NULL };
	json_t *ba = json_object_get(fa, "blocks"), *bb = json_object_get(fb, "blocks");
	json_t *ea = json_object_get(fa, "edges"), *eb = json_object_get(fb, "edges");
	size_t i;
	json_t *e;

	if (!same_shape(m, fa, fb, "blocks", block_keys, "blocks") ||
	    !same_shape(m, fa, fb, "edges", edge_keys, "edges"))
		return;
	add_key(m, fa, fb, "count", "function count");
	add_key(m, fa, fb, "virtual_in", "virtual_in");
	add_key(m, fa, fb, "virtual_out", "virtual_out");
	json_array_foreach(ba, i, e)
		add_key(m, e, json_array_get(bb, i), "count", "block count");
	json_array_foreach(ea, i, e)
		add_key(m, e, json_array_get(eb, i), "count", "edge count");
	merge_list(m, fa, fb, "virtual", virt_keys, add_entry_count);
	merge_list(m, fa, fb, "longjmp", lj_keys, add_entry_count);
	merge_list(m, fa, fb, "foreign_entries", fe_keys, add_entry_count);
	merge_list(m, fa, fb, "inexact", cause_keys, add_entry_count);
	merge_list(m, fa, fb, "loops", loop_keys, add_loop);
	merge_violations(m, fa, fb);
}

/* Merges one object's sections (the root, or one library): placement, counters, functions. */
static void merge_object(struct merge *m, json_t *a, json_t *b)
{
	static const char *const func_keys[] = { "name", "addr", "status", NULL };
	static const char *const site_keys[] = { "addr", "func", "kind", "counters", NULL };
	json_t *pa = json_object_get(a, "placement"), *pb = json_object_get(b, "placement");
	json_t *ca = json_object_get(a, "counters"), *cb = json_object_get(b, "counters");
	json_t *fa = json_object_get(a, "functions"), *fb = json_object_get(b, "functions");
	json_t *sa, *sb, *x;
	size_t i;

	if (!same_at(json_object_get(a, "binary"), json_object_get(b, "binary"), "build_id")) {
		mfail(m, "different builds (build-ids differ)");
		return;
	}
	if (!same_at(pa, pb, "mode") || !same_at(pa, pb, "counters") ||
	    !same_shape(m, pa, pb, "sites", site_keys, "placements")) {
		mfail(m, "counted with a different placement (merge needs profiles recorded "
			 "with the same counters: same edgeprof, weights and calibration)");
		return;
	}
	if (!same_shape(m, a, b, "functions", func_keys, "functions"))
		return;
	sa = json_object_get(pa, "sites");
	sb = json_object_get(pb, "sites");
	json_array_foreach(sa, i, x)
		add_key(m, x, json_array_get(sb, i), "hits", "site hits");
	if (!json_is_array(ca) || !json_is_array(cb) || json_array_size(ca) != json_array_size(cb)) {
		mfail(m, "counters differ");
		return;
	}
	for (i = 0; i < json_array_size(ca) && !m->err; i++) {
		json_t *s = add_count(m, json_array_get(ca, i), json_array_get(cb, i), "counter");

		if (s && json_array_set_new(ca, i, s))
			nomem(m);
	}
	for (i = 0; i < json_array_size(fa) && !m->err; i++)
		merge_func(m, json_array_get(fa, i), json_array_get(fb, i));
	add_real(m, json_object_get(a, "probes"), json_object_get(b, "probes"), "est_trap_ns");
	if (json_object_get(a, "loop_stats") && json_object_get(b, "loop_stats")) {
		add_key(m, json_object_get(a, "loop_stats"), json_object_get(b, "loop_stats"), "hits",
			"loop probe hits");
		add_real(m, json_object_get(a, "loop_stats"), json_object_get(b, "loop_stats"),
			 "est_trap_ns");
	}
}

/* Makes the summary keys of one object again from its merged sections. */
static void summarize(struct merge *m, json_t *o)
{
	json_t *pl = json_object_get(o, "placement"), *pr = json_object_get(o, "probes");
	json_t *sites = json_object_get(pl, "sites"), *funcs = json_object_get(o, "functions");
	json_t *s, *f;
	uint64_t hits = 0, sites_hit = 0, naive = 0, violations = 0;
	size_t i;

	json_array_foreach(sites, i, s) {
		uint64_t h = (uint64_t)json_integer_value(json_object_get(s, "hits"));

		hits += h;
		sites_hit += h != 0;
	}
	json_array_foreach(funcs, i, f) {
		json_t *b;
		size_t j;

		const char *st = json_string_value(json_object_get(f, "status"));

		if (!st || strcmp(st, "excluded"))
			json_array_foreach(json_object_get(f, "blocks"), j, b) {
				json_t *c = json_object_get(b, "count");

				if (json_is_integer(c))
					naive += (uint64_t)json_integer_value(c);
			}
		violations += json_array_size(json_object_get(f, "violations"));
	}
	if (hits > INT64_MAX || naive > INT64_MAX) {
		mfail(m, "the summed counts are out of range");
		return;
	}
	if (json_object_set_new(pr, "hits", json_integer((json_int_t)hits)) ||
	    json_object_set_new(pr, "sites_hit", json_integer((json_int_t)sites_hit)) ||
	    json_object_set_new(pr, "naive_hits", json_integer((json_int_t)naive)) ||
	    json_object_set_new(o, "violations", json_integer((json_int_t)violations)))
		nomem(m);
}

/* The "merged" entry of input NAME whose run is RUN: {"source","argv","seconds"}. */
static json_t *merged_entry(const char *name, json_t *run)
{
	return json_pack("{s:s,s:O*,s:O*}", "source", name, "argv", json_object_get(run, "argv"),
			 "seconds", json_object_get(run, "seconds"));
}

/* What the merged profile says of its run: A's, with the sums of what adds up, and each
 * input's own run under "merged". */
static void merge_run(struct merge *m, json_t *a, json_t *b, const char *b_name)
{
	static const char *const counts[] = { "processes", "threads", "unwind_failures",
					      "virtual_edges", "unmapped_frames" };
	json_t *ra = json_object_get(a, "run"), *rb = json_object_get(b, "run");
	json_t *merged = json_object_get(ra, "merged"), *one;

	if (!json_is_object(ra) || !json_is_object(rb)) {
		mfail(m, "no run");
		return;
	}
	one = merged_entry(b_name, rb);
	if (!one || !merged || json_array_append_new(merged, one)) {
		json_decref(one);
		nomem(m);
		return;
	}
	for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++)
		add_key(m, ra, rb, counts[k], counts[k]);
	add_real(m, ra, rb, "seconds");
	add_real(m, ra, rb, "analysis_s");
	if (json_object_get(ra, "longjmp") && json_object_get(rb, "longjmp")) {
		static const char *const lj[] = { "pseudo_edges", "abandoned", "resumed", "unwound" };

		for (size_t k = 0; k < 4; k++)
			add_key(m, json_object_get(ra, "longjmp"), json_object_get(rb, "longjmp"),
				lj[k], "longjmp summary");
	}
	if (json_object_get(rb, "execs")) {
		json_t *ea = json_object_get(ra, "execs");

		if (!ea) {
			if (json_object_set(ra, "execs", json_object_get(rb, "execs")))
				nomem(m);
		} else if (json_array_extend(ea, json_object_get(rb, "execs"))) {
			nomem(m);
		}
	}
}

int profile_merge__start(json_t *a, const char *a_name)
{
	json_t *run = json_object_get(a, "run"), *merged, *one;

	if (!json_is_object(run))
		return pr_err("'%s': not a profile", a_name), -EINVAL;
	if (json_object_get(run, "merged"))
		return 0; /* merged before: its inputs are listed already */
	merged = json_array();
	one = merged_entry(a_name, run);
	if (!merged || !one || json_array_append_new(merged, one) ||
	    json_object_set_new(run, "merged", merged)) {
		json_decref(one);
		pr_err("out of memory");
		return -ENOMEM;
	}
	return 0;
}

int profile_merge__add(json_t *a, json_t *b, const char *a_name, const char *b_name)
{
	struct merge m = { .a_name = a_name, .b_name = b_name, .where = "" };
	json_t *la = json_object_get(a, "libraries"), *lb = json_object_get(b, "libraries");
	char where[64];

	merge_object(&m, a, b);
	if (!m.err && json_array_size(la) != json_array_size(lb))
		mfail(&m, "different libraries profiled");
	for (size_t k = 0; k < json_array_size(la) && !m.err; k++) {
		snprintf(where, sizeof(where), "library %zu: ", k + 1);
		m.where = where;
		merge_object(&m, json_array_get(la, k), json_array_get(lb, k));
	}
	m.where = "";
	if (!m.err)
		merge_run(&m, a, b, b_name);
	if (!m.err)
		summarize(&m, a);
	/* A library's "run" is the binary's. */
	for (size_t k = 0; k < json_array_size(la) && !m.err; k++) {
		summarize(&m, json_array_get(la, k));
		if (!m.err &&
		    json_object_set(json_array_get(la, k), "run", json_object_get(a, "run")))
			nomem(&m);
	}
	return m.err;
}
