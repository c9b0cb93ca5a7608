/*
 * Oracle for `edgeprof report --time --cost insns`: callgrind's inclusive Ir per call of each
 * function against the predicted mean instructions per invocation.
 *
 *   time_oracle ext REPORT.json OBJECT CALLGRIND-FILE...
 *       prints a --cost file {"base":"insns","external":{NAME:MEAN}}: for every callee
 *       outside the binary that REPORT.json lists under "external_sites", callgrind's mean
 *       inclusive Ir per call over all those sites (PLT stub and dynamic linking included).
 *   time_oracle compare REPORT.json OBJECT CALLGRIND-FILE... [--tsv FILE] [--exact NAME...]
 *       compares every function of OBJECT that ran, is not recursive (neither in the report
 *       nor as a callgrind recursion level NAME'N) and whose name is unique, and prints one
 *       line per function in the TSV file and a summary line: compared, exact, median and
 *       worst relative error. Exit 1 when a function named after --exact, or (with
 *       --check-expected) one the report marks "exact_expected", is not exact, or when the
 *       call counts disagree.
 *   time_oracle cycles REPORT.json OBJECT CALLGRIND-FILE...
 *       for every call cycle of the report (its recursive functions, grouped by their
 *       "cycle_members"): the calls into the cycle's functions from functions outside it
 *       (its entries) and their inclusive Ir, from callgrind's call arcs, against the
 *       report's "entries" and "entries" x "mean_per_entry" summed over the cycle (and per
 *       function when only one has entries); that every recursive function has a share of
 *       at most 1 and no mean or standard deviation per call; prints one line per cycle.
 *       Exit 1 when any differs.
 *   time_oracle percall NAME CALLGRIND-FILE...
 *       for files written with --dump-after=NAME (one part per call of NAME): prints the
 *       number of calls and the mean and standard deviation of NAME's inclusive Ir per call.
 *
 * Callgrind's inclusive cost of F is its self cost plus the inclusive cost written after each
 * calls= line in F's contexts (see tests/support/callgrind.c for the format). It is compared
 * with the report's "mean" times "calls". The parser here keeps only what this needs.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 4096

struct cgfn {
	char *name;	/* without a recursion suffix */
	bool in;	/* in OBJECT */
	bool recursive; /* seen as NAME'N */
	double self, incl_calls, called;
	double incl_into; /* inclusive Ir of the calls into it */
};

struct site {
	uint64_t addr;
	double count, incl;
};

struct state {
	const char *object;
	char **obnames, **fnnames;
	size_t nob, nfn;
	struct cgfn *fns;
	size_t nfns, capfns;
	struct site *sites;
	size_t nsites, capsites;
	int cur_ob, cob, cur_fn, cfn;
	uint64_t last_pos;
	int pend; /* 1: calls, 2: jump */
	double pend_count;
	int pend_fn;
	bool pend_ob_in;
	struct arc {
		int from, to; /* indices into fns */
		double count, incl;
	} *arcs;
	size_t narcs, caparcs;
};

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q) {
		fprintf(stderr, "time_oracle: out of memory\n");
		exit(2);
	}
	return q;
}

static bool ob_matches(const char *name, const char *object)
{
	const char *b1 = strrchr(name, '/'), *b2 = strrchr(object, '/');

	if (!strcmp(name, object))
		return true;
	return !strcmp(b1 ? b1 + 1 : name, b2 ? b2 + 1 : object);
}

/* "(id) name" or "(id)" or "name": returns the id in the table (defining it). */
static int compressed(char ***tab, size_t *n, const char *v)
{
	long id;
	char *end;

	if (*v != '(') {
		*tab = xrealloc(*tab, (*n + 1) * sizeof(**tab));
		(*tab)[*n] = strdup(v);
		return (int)(*n)++;
	}
	id = strtol(v + 1, &end, 10);
	if (id < 0 || id > 10000000 || *end != ')') {
		fprintf(stderr, "time_oracle: bad compressed name '%s'\n", v);
		exit(2);
	}
	/* ids are small integers; names go at index id + 1000000 offset-free: keep a map */
	if ((size_t)id >= *n) {
		*tab = xrealloc(*tab, ((size_t)id + 1) * sizeof(**tab));
		for (size_t i = *n; i <= (size_t)id; i++)
			(*tab)[i] = NULL;
		*n = (size_t)id + 1;
	}
	if (end[1] == ' ') {
		free((*tab)[id]);
		(*tab)[id] = strdup(end + 2);
	}
	return (int)id;
}

/* The function record for fn-name id FN in object OB. */
static int fn_record(struct state *s, int fn, int ob)
{
	const char *raw = s->fnnames[fn] ? s->fnnames[fn] : "???";
	char name[1024];
	const char *q = strchr(raw, '\'');
	bool rec = q && isdigit((unsigned char)q[1]);
	bool in = ob >= 0 && s->obnames[ob] && ob_matches(s->obnames[ob], s->object);

	snprintf(name, sizeof(name), "%.*s", rec ? (int)(q - raw) : (int)strlen(raw), raw);
	for (size_t i = 0; i < s->nfns; i++) {
		if (s->fns[i].in == in && !strcmp(s->fns[i].name, name)) {
			s->fns[i].recursive |= rec;
			return (int)i;
		}
	}
	if (s->nfns == s->capfns) {
		s->capfns = s->capfns ? 2 * s->capfns : 256;
		s->fns = xrealloc(s->fns, s->capfns * sizeof(*s->fns));
	}
	s->fns[s->nfns] = (struct cgfn){.name = strdup(name), .in = in, .recursive = rec};
	return (int)s->nfns++;
}

static uint64_t parse_pos(struct state *s, const char **p)
{
	const char *t = *p;
	char *end;
	uint64_t v;

	while (*t == ' ')
		t++;
	if (*t == '*') {
		v = s->last_pos;
		end = (char *)t + 1;
	} else if (*t == '+') {
		v = s->last_pos + strtoull(t + 1, &end, 0);
	} else if (*t == '-') {
		v = s->last_pos - strtoull(t + 1, &end, 0);
	} else {
		v = strtoull(t, &end, 0);
	}
	*p = end;
	return v;
}

static void load(struct state *s, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	bool in_body = false;

	if (!f) {
		fprintf(stderr, "time_oracle: %s: %s\n", path, strerror(errno));
		exit(2);
	}
	s->cur_ob = s->cob = s->cur_fn = s->cfn = -1;
	s->last_pos = 0;
	s->pend = 0;
	while (getline(&line, &cap, f) > 0) {
		char *v;

		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "ob=", 3)) {
			s->cur_ob = compressed(&s->obnames, &s->nob, line + 3);
		} else if (!strncmp(line, "cob=", 4)) {
			s->cob = compressed(&s->obnames, &s->nob, line + 4);
		} else if (!strncmp(line, "fn=", 3)) {
			s->cur_fn =
			    fn_record(s, compressed(&s->fnnames, &s->nfn, line + 3), s->cur_ob);
			in_body = true;
		} else if (!strncmp(line, "cfn=", 4)) {
			s->cfn = compressed(&s->fnnames, &s->nfn, line + 4);
		} else if (!strncmp(line, "calls=", 6)) {
			int ob = s->cob >= 0 ? s->cob : s->cur_ob;

			s->pend = 1;
			s->pend_count = strtod(line + 6, NULL);
			s->pend_fn = fn_record(s, s->cfn, ob);
			s->pend_ob_in = s->obnames[ob] && ob_matches(s->obnames[ob], s->object);
			s->cob = -1;
		} else if (!strncmp(line, "jump=", 5) || !strncmp(line, "jcnd=", 5)) {
			s->pend = 2;
		} else if (in_body && (isdigit((unsigned char)line[0]) || line[0] == '+' ||
				       line[0] == '-' || line[0] == '*')) {
			const char *p = line;
			uint64_t pos = parse_pos(s, &p);
			double ir;

			s->last_pos = pos;
			(void)parse_pos(s, &p); /* line subposition: relative to its own last, but
						 * we do not need it; it does not affect instr */
			ir = strtod(p, &v);
			if (v == p)
				ir = 0;
			if (s->cur_fn < 0) {
				s->pend = 0;
				continue;
			}
			if (s->pend == 1) {
				struct cgfn *fr = &s->fns[s->cur_fn];

				fr->incl_calls += ir;
				if (s->narcs == s->caparcs) {
					s->caparcs = s->caparcs ? 2 * s->caparcs : 256;
					s->arcs = xrealloc(s->arcs, s->caparcs * sizeof(*s->arcs));
				}
				s->arcs[s->narcs++] =
				    (struct arc){s->cur_fn, s->pend_fn, s->pend_count, ir};
				s->fns[s->pend_fn].called += s->pend_count;
				s->fns[s->pend_fn].incl_into += ir;
				if (fr->in && !s->pend_ob_in) {
					if (s->nsites == s->capsites) {
						s->capsites = s->capsites ? 2 * s->capsites : 256;
						s->sites = xrealloc(
						    s->sites, s->capsites * sizeof(*s->sites));
					}
					s->sites[s->nsites++] =
					    (struct site){pos, s->pend_count, ir};
				}
			} else if (s->pend == 0) {
				s->fns[s->cur_fn].self += ir;
			}
			s->pend = 0;
		} else if ((v = strchr(line, '=')) && v - line < 6) {
			/* fl=, fi=, fe=, cfi=, cfl=, jfi=, jfn=: irrelevant */
		}
	}
	free(line);
	fclose(f);
}

/* Subpositions: "positions: instr line" is assumed (what the tests ask callgrind for). The
 * line subposition's compression is relative to the last line number, which we ignore: the
 * cost (Ir) is the token after it either way. */

static json_t *load_report(const char *path)
{
	json_error_t e;
	json_t *r = json_load_file(path, 0, &e);

	if (!r || !json_is_array(json_object_get(r, "functions"))) {
		fprintf(stderr, "time_oracle: %s: %s\n", path, r ? "no functions" : e.text);
		exit(2);
	}
	return r;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int do_ext(struct state *s, json_t *rep)
{
	json_t *fns = json_object_get(rep, "functions"), *f, *out = json_object(), *ext;
	size_t i, k;
	const char *name;
	json_t *acc = json_object(), *pair;

	json_array_foreach(fns, i, f)
	{
		json_t *xs = json_object_get(f, "external_sites"), *x;

		json_array_foreach(xs, k, x)
		{
			const char *nm = json_string_value(json_object_get(x, "name"));
			uint64_t site =
			    strtoull(json_string_value(json_object_get(x, "site")), NULL, 16);
			double cnt = 0, incl = 0;

			if (!nm)
				continue;
			for (size_t j = 0; j < s->nsites; j++)
				if (s->sites[j].addr == site)
					cnt += s->sites[j].count, incl += s->sites[j].incl;
			pair = json_object_get(acc, nm);
			if (!pair) {
				pair = json_pack("[f,f]", 0.0, 0.0);
				json_object_set_new(acc, nm, pair);
			}
			json_array_set_new(
			    pair, 0, json_real(json_real_value(json_array_get(pair, 0)) + cnt));
			json_array_set_new(
			    pair, 1, json_real(json_real_value(json_array_get(pair, 1)) + incl));
		}
	}
	ext = json_object();
	json_object_foreach(acc, name, pair)
	{
		double cnt = json_real_value(json_array_get(pair, 0));

		if (cnt > 0)
			json_object_set_new(
			    ext, name, json_real(json_real_value(json_array_get(pair, 1)) / cnt));
	}
	json_object_set_new(out, "base", json_string("insns"));
	json_object_set_new(out, "external", ext);
	json_dumpf(out, stdout, JSON_INDENT(1) | JSON_SORT_KEYS);
	putchar('\n');
	json_decref(out);
	json_decref(acc);
	return 0;
}

static int do_compare(struct state *s, json_t *rep, const char *tsv, char **exact, int nexact,
		      bool check_expected)
{
	json_t *fns = json_object_get(rep, "functions"), *f;
	double *errs = malloc((json_array_size(fns) + 1) * sizeof(double));
	size_t i, n = 0, nexact_ok = 0, ncalls_bad = 0, nskip_rec = 0;
	double worst = 0;
	const char *worst_name = "-";
	FILE *t = tsv ? fopen(tsv, "w") : NULL;
	int ret = 0;

	if (t)
		fprintf(t, "function\tcalls\tpredicted_mean\tcallgrind_mean\trel_error\tflags\n");
	json_array_foreach(fns, i, f)
	{
		const char *name = json_string_value(json_object_get(f, "name"));
		double calls = (double)json_integer_value(json_object_get(f, "calls"));
		json_t *mean = json_object_get(f, "mean"), *fl = json_object_get(f, "flags"), *x;
		bool rec = false, dup = false;
		struct cgfn *c = NULL;
		size_t k;
		double cgm, err;
		char flags[256] = "";

		if (name && calls > 0 && json_object_get(f, "cycle")) {
			nskip_rec++; /* recursive: no mean per call (see cycles) */
			continue;
		}
		if (!name || !json_is_number(mean) || calls <= 0)
			continue;
		json_array_foreach(fl, k, x) rec |= !strcmp(json_string_value(x), "recursive");
		json_array_foreach(fns, k, x) dup |=
		    k != i && !strcmp(json_string_value(json_object_get(x, "name")), name);
		for (k = 0; k < s->nfns; k++)
			if (s->fns[k].in && !strcmp(s->fns[k].name, name))
				c = &s->fns[k];
		if (!c) { /* callgrind names a function without a symbol by its address */
			char hex[32];

			snprintf(hex, sizeof(hex), "0x%016" PRIx64,
				 (uint64_t)strtoull(json_string_value(json_object_get(f, "addr")),
						    NULL, 16));
			for (k = 0; k < s->nfns; k++)
				if (s->fns[k].in && !strcmp(s->fns[k].name, hex))
					c = &s->fns[k];
		}
		if (!c || dup)
			continue;
		if (rec || c->recursive) {
			nskip_rec++;
			continue;
		}
		if (c->called != calls) {
			fprintf(stderr, "time_oracle: %s: %.0f calls, callgrind %.0f\n", name,
				calls, c->called);
			ncalls_bad++;
			continue;
		}
		cgm = (c->self + c->incl_calls) / c->called;
		err = cgm > 0 ? fabs(json_number_value(mean) - cgm) / cgm : 0;
		if (json_integer_value(json_object_get(f, "calls_indirect")))
			strcat(flags, "indirect ");
		if (json_integer_value(json_object_get(f, "calls_external")))
			strcat(flags, "external ");
		if (json_integer_value(json_object_get(f, "calls_unprofiled")))
			strcat(flags, "unprofiled ");
		if (json_integer_value(json_object_get(f, "rep_string")))
			strcat(flags, "rep ");
		if (json_is_true(json_object_get(f, "exact_expected")))
			strcat(flags, "exact-expected ");
		json_array_foreach(json_object_get(f, "inexact_causes"), k, x)
		{
			if (strlen(flags) + strlen(json_string_value(x)) + 8 < sizeof(flags)) {
				strcat(flags, "cause:");
				strcat(flags, json_string_value(x));
				strcat(flags, " ");
			}
		}
		if (t)
			fprintf(t, "%s\t%.0f\t%.6f\t%.6f\t%.3g\t%s\n", name, calls,
				json_number_value(mean), cgm, err, flags);
		errs[n++] = err;
		nexact_ok += err < 1e-9;
		if (check_expected && json_is_true(json_object_get(f, "exact_expected")) &&
		    err >= 1e-9) {
			fprintf(stderr,
				"time_oracle: %s: predicted %.6f, callgrind %.6f: expected "
				"exact\n",
				name, json_number_value(mean), cgm);
			ret = 1;
		}
		if (err > worst) {
			worst = err;
			worst_name = name;
		}
		for (int e = 0; e < nexact; e++) {
			if (strcmp(exact[e], name))
				continue;
			if (err >= 1e-9) {
				fprintf(stderr,
					"time_oracle: %s: predicted %.6f, callgrind %.6f: not "
					"exact\n",
					name, json_number_value(mean), cgm);
				ret = 1;
			}
			exact[e] = "";
		}
	}
	for (int e = 0; e < nexact; e++) {
		if (*exact[e]) {
			fprintf(stderr, "time_oracle: %s: not compared\n", exact[e]);
			ret = 1;
		}
	}
	qsort(errs, n, sizeof(*errs), cmp_double);
	printf("compared %zu functions (%zu recursive skipped): %zu exact, median rel error %.3g, "
	       "worst %.3g (%s)%s\n",
	       n, nskip_rec, nexact_ok, n ? errs[n / 2] : 0.0, worst, worst_name,
	       ncalls_bad ? ", CALL COUNTS DIFFER" : "");
	if (ncalls_bad)
		ret = 1;
	if (t)
		fclose(t);
	free(errs);
	return ret;
}

/* Inclusive Ir of calls to NAME in each file (one call per part), mean and deviation. */
/* Whether callgrind function FN is one of the names in the JSON array MEMBERS (in OBJECT). */
static bool in_cycle(const struct cgfn *fn, json_t *members)
{
	size_t k;
	json_t *x;

	if (!fn->in)
		return false;
	json_array_foreach(members, k, x) if (!strcmp(json_string_value(x), fn->name)) return true;
	return false;
}

static int do_cycles(struct state *s, json_t *rep)
{
	json_t *fns = json_object_get(rep, "functions"), *f, *done = json_object();
	size_t i, ncycles = 0;
	int bad = 0;

	json_array_foreach(fns, i, f) {
		json_t *members = json_object_get(f, "cycle_members"), *g;
		double r_entries = 0, r_time = 0, cg_entries = 0, cg_incl = 0;
		const char *cycle = json_string_value(json_object_get(f, "cycle"));
		const char *only = NULL;
		size_t j, nentry = 0;

		if (!json_is_array(members) || !cycle)
			continue;
		if (json_is_number(json_object_get(f, "mean")) ||
		    json_is_number(json_object_get(f, "stddev")) ||
		    json_number_value(json_object_get(f, "share")) > 1 + 1e-9) {
			printf("FAIL: %s: recursive, but a mean or stddev per call, or a share "
			       "above 1\n",
			       json_string_value(json_object_get(f, "name")));
			bad = 1;
		}
		if (json_object_get(done, cycle))
			continue;
		json_object_set_new(done, cycle, json_true());
		json_array_foreach(fns, j, g) {
			json_t *e = json_object_get(g, "entries"),
			       *m = json_object_get(g, "mean_per_entry");
			const char *gc = json_string_value(json_object_get(g, "cycle"));

			if (!gc || strcmp(gc, cycle) || !json_is_number(e) || !json_is_number(m))
				continue;
			r_entries += json_number_value(e);
			r_time += json_number_value(e) * json_number_value(m);
			if (json_number_value(e) > 0) {
				nentry++;
				only = json_string_value(json_object_get(g, "name"));
			}
		}
		for (size_t a = 0; a < s->narcs; a++) {
			if (!in_cycle(&s->fns[s->arcs[a].to], members) ||
			    in_cycle(&s->fns[s->arcs[a].from], members))
				continue;
			cg_entries += s->arcs[a].count;
			cg_incl += s->arcs[a].incl;
		}
		ncycles++;
		printf("%s %s: %.0f entries, %.17g per entry; callgrind: %.0f entries, %.17g "
		       "inclusive Ir per entry%s%s\n",
		       r_entries == cg_entries && fabs(r_time - cg_incl) <= 1e-9 * cg_incl ? "ok:" :
											   "FAIL:",
		       cycle, r_entries, r_entries > 0 ? r_time / r_entries : 0, cg_entries,
		       cg_entries > 0 ? cg_incl / cg_entries : 0, nentry == 1 ? "; entered at " : "",
		       nentry == 1 ? only : "");
		if (r_entries != cg_entries || fabs(r_time - cg_incl) > 1e-9 * cg_incl)
			bad = 1;
	}
	json_decref(done);
	printf("%zu call cycles compared\n", ncycles);
	return bad || !ncycles;
}

static int do_percall(const char *name, int nfiles, char **files)
{
	double sum = 0, sumsq = 0, n = 0;

	for (int i = 0; i < nfiles; i++) {
		struct state s = {.object = ""};
		double incl = 0, calls = 0;

		load(&s, files[i]);
		(void)calls;
		/* the callee record of NAME: its "called" count; its inclusive cost is the sum of
		 * the inclusive lines of the calls into it, recorded per caller: recompute */
		for (size_t k = 0; k < s.nfns; k++) {
			if (strcmp(s.fns[k].name, name))
				continue;
			calls += s.fns[k].called;
			incl += s.fns[k].incl_into;
		}
		if (calls == 0)
			continue;
		if (calls != 1) {
			fprintf(stderr, "time_oracle: %s: %.0f calls of %s in one part\n", files[i],
				calls, name);
			return 1;
		}
		sum += incl;
		sumsq += incl * incl;
		n++;
	}
	if (!n) {
		fprintf(stderr, "time_oracle: no call of %s\n", name);
		return 1;
	}
	printf("%.0f %.17g %.17g\n", n, sum / n, sqrt(fmax(0, sumsq / n - (sum / n) * (sum / n))));
	return 0;
}

int main(int argc, char **argv)
{
	struct state s = {0};
	const char *tsv = NULL;
	char *exact[MAXN];
	int nexact = 0, i;
	bool check_expected = false;
	json_t *rep;

	if (argc >= 4 && !strcmp(argv[1], "percall"))
		return do_percall(argv[2], argc - 3, argv + 3);

	if (argc < 5 || (strcmp(argv[1], "ext") && strcmp(argv[1], "compare") &&
			 strcmp(argv[1], "cycles"))) {
		fprintf(stderr,
			"usage: time_oracle ext|compare|cycles REPORT.json OBJECT CALLGRIND-FILE... "
			"[--tsv FILE] [--exact NAME...]\n");
		return 2;
	}
	rep = load_report(argv[2]);
	s.object = argv[3];
	for (i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "--tsv") && i + 1 < argc) {
			tsv = argv[++i];
		} else if (!strcmp(argv[i], "--check-expected")) {
			check_expected = true;
		} else if (!strcmp(argv[i], "--exact")) {
			while (i + 1 < argc && nexact < MAXN)
				exact[nexact++] = argv[++i];
		} else {
			load(&s, argv[i]);
		}
	}
	if (!strcmp(argv[1], "cycles"))
		return do_cycles(&s, rep);
	return !strcmp(argv[1], "ext") ? do_ext(&s, rep)
				       : do_compare(&s, rep, tsv, exact, nexact, check_expected);
}
