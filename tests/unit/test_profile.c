/*
 * Unit tests of the profile file (user/profile/profile.c): a hand-built program of three functions
 * (exact chords, excluded, naive with a violation) is written and read back field by field;
 * failed writes (missing directory, a file-size limit hit mid-write, inconsistent input found
 * while streaming) leave the old file intact and no temporary file behind; the execs of a
 * run; destinations (a symlink followed, a directory refused, "-"); and every rejection path
 * of the reader, each with exactly one diagnostic line naming the problem.
 *
 * The Makefile links unit tests with the cfg/ and estimators/ libraries only, so the two
 * user/ files this needs (profile.c and its logger log.c) are compiled into this test here.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <jansson.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/cfg_fixture.h"
#include "user/util/log.h"
#include "user/util/json_out.h"
#include "user/profile/profile.h"

#define SHIFT2 0x1000u /* naive_fn's blocks are moved this far from the fixture base */

struct world {
	struct cfg_func *fx[3];
	struct cfg_func funcs[3];
	struct cfg_program prog;
	struct func_plan plans[3];
	struct probe_site sites[3];
	struct counter_def defs[4];
	struct placement pl;
	uint64_t counters[4];
	int64_t e0[6], b0[4], e2[4], b2[2];
	bool m0[6], m2[4];
	uint32_t viol2[1];
	struct func_counts counts[3];
	struct site_costs costs;
	char *argv[4];
	struct profile_input in;
	char dir[64];
	char path[96];
};

/* main_fn: diamond b0 -(taken)-> b1 -> b3, b0 -(not taken)-> b2 -> b3, b3 returns; 10 calls.
 * excluded_fn: not profiled. naive_fn (blocks moved by SHIFT2): b0 -> b1, b1 loops, b1
 * returns; block counters; a violation at b1. */
static int setup(void **state)
{
	static const struct fx_edge e_main[] = {
		{ 0, 1, EDGE_TAKEN }, { 0, 2, EDGE_NOT_TAKEN }, { 1, 3, EDGE_JUMP },
		{ 2, 3, EDGE_FALLTHROUGH }, { 3, 4, EDGE_RETURN },
	};
	static const struct fx_edge e_excl[] = { { 0, 1, EDGE_RETURN } };
	static const struct fx_edge e_naive[] = {
		{ 0, 1, EDGE_FALLTHROUGH }, { 1, 1, EDGE_TAKEN }, { 1, 2, EDGE_RETURN },
	};
	struct world *w = calloc(1, sizeof(*w));

	assert_non_null(w);
	w->fx[0] = CFG_FIXTURE("main_fn", 4, 0, e_main);
	w->fx[1] = CFG_FIXTURE("excluded \"fn\"", 1, 0, e_excl);
	w->fx[2] = CFG_FIXTURE("naive_fn", 2, 0, e_naive);
	for (int i = 0; i < 3; i++) {
		assert_non_null(w->fx[i]);
		w->funcs[i] = *w->fx[i];
	}
	/* Function order by entry: excluded_fn shares main_fn's base; move it in between. */
	for (uint32_t b = 0; b < w->funcs[1].nblocks; b++) {
		w->funcs[1].blocks[b].start += SHIFT2 / 2;
		w->funcs[1].blocks[b].end += SHIFT2 / 2;
	}
	w->funcs[1].entry += SHIFT2 / 2;
	for (uint32_t b = 0; b < w->funcs[2].nblocks; b++) {
		w->funcs[2].blocks[b].start += SHIFT2;
		w->funcs[2].blocks[b].end += SHIFT2;
	}
	w->funcs[2].entry += SHIFT2;
	w->prog.funcs = w->funcs;
	w->prog.nfuncs = 3;

	w->plans[0] = (struct func_plan){ .status = PLAN_CHORDS, .nchords = 2, .est_cost = 500 };
	w->plans[1] = (struct func_plan){ .status = PLAN_EXCLUDED, .reason = "not selected" };
	w->plans[2] = (struct func_plan){ .status = PLAN_NAIVE, .reason = "by request" };
	w->sites[0] = (struct probe_site){ .addr = CFG_FIXTURE_BASE + 12, .func = 0,
					   .kind = SITE_BRANCH, .cc = 4,
					   .probe_class = PROBE_EMULATED, .counter = 0,
					   .counter2 = 1 };
	w->sites[1] = (struct probe_site){ .addr = CFG_FIXTURE_BASE + SHIFT2, .func = 2,
					   .kind = SITE_COUNT, .probe_class = PROBE_NOP5,
					   .counter = 2, .counter2 = PLACEMENT_NO_COUNTER };
	w->sites[2] = (struct probe_site){ .addr = CFG_FIXTURE_BASE + SHIFT2 + 16, .func = 2,
					   .kind = SITE_COUNT, .probe_class = PROBE_STEPPED,
					   .counter = 3, .counter2 = PLACEMENT_NO_COUNTER };
	w->defs[0] = (struct counter_def){ 0, COUNTS_EDGE, 0, 0 };
	w->defs[1] = (struct counter_def){ 0, COUNTS_EDGE, 1, 0 };
	w->defs[2] = (struct counter_def){ 2, COUNTS_BLOCK, 0, 1 };
	w->defs[3] = (struct counter_def){ 2, COUNTS_BLOCK, 1, 2 };
	w->pl = (struct placement){ .mode = PLACEMENT_CHORDS, .sites = w->sites, .nsites = 3,
				    .counters = w->defs, .ncounters = 4, .funcs = w->plans,
				    .nfuncs = 3, .est_cost = 1234.5, .nchord_funcs = 1,
				    .nnaive_funcs = 1, .nexcluded_funcs = 1 };
	w->counters[0] = 7;
	w->counters[1] = 3;
	w->counters[2] = 1;
	w->counters[3] = 0; /* site 2 never hit */

	memcpy(w->e0, (int64_t[]){ 7, 3, 7, 3, 10, 10 }, sizeof(w->e0));
	memcpy(w->b0, (int64_t[]){ 10, 7, 3, 10 }, sizeof(w->b0));
	memcpy(w->m0, (bool[]){ true, true, false, false, false, false }, sizeof(w->m0));
	memcpy(w->e2, (int64_t[]){ 1, COUNT_UNKNOWN, -2, 1 }, sizeof(w->e2));
	memcpy(w->b2, (int64_t[]){ 1, COUNT_UNKNOWN }, sizeof(w->b2));
	w->viol2[0] = 1;
	w->counts[0] = (struct func_counts){ .edges = w->e0, .blocks = w->b0, .measured = w->m0 };
	w->counts[2] = (struct func_counts){ .edges = w->e2, .blocks = w->b2, .measured = w->m2,
					     .nviolations = 1, .violations = w->viol2,
					     .virtual_out = 1 };
	site_costs__defaults(&w->costs);
	w->argv[0] = "./prog";
	w->argv[1] = "--flag";
	w->argv[2] = "two words";
	w->in = (struct profile_input){
		.binary_path = "/tmp/prog", .build_id = "0123ABCDef", .prog = &w->prog,
		.pl = &w->pl, .counters = w->counters, .counts = w->counts, .costs = &w->costs,
		.argv = w->argv, .wait_status = 3 << 8, .seconds = 1.5, .nprocesses = 2,
		.nthreads = 3, .unwind_failures = 1, .nvirtual = 4,
	};
	snprintf(w->dir, sizeof(w->dir), "/tmp/edgeprof-test-profile.XXXXXX");
	assert_non_null(mkdtemp(w->dir));
	snprintf(w->path, sizeof(w->path), "%s/edgeprof.data", w->dir);
	log__set_verbosity(-1);
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;
	char cmd[128];

	for (int i = 0; i < 3; i++)
		cfg_fixture__free(w->fx[i]);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", w->dir);
	if (system(cmd))
		return -1;
	free(w);
	return 0;
}

/* --- stderr capture ------------------------------------------------------------------------ */

static int saved_stderr = -1;
static FILE *capture_file;

static void capture_begin(void)
{
	fflush(stderr);
	capture_file = tmpfile();
	assert_non_null(capture_file);
	saved_stderr = dup(2);
	assert_true(saved_stderr >= 0);
	assert_int_equal(dup2(fileno(capture_file), 2), 2);
}

/* Stops capturing; returns what was written (static buffer). */
static const char *capture_end(void)
{
	static char buf[4096];
	size_t n;

	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	rewind(capture_file);
	n = fread(buf, 1, sizeof(buf) - 1, capture_file);
	buf[n] = '\0';
	fclose(capture_file);
	return buf;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static bool dir_has_temp(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool found = false;

	assert_non_null(d);
	while ((de = readdir(d)))
		found |= strstr(de->d_name, ".tmp.") != NULL;
	closedir(d);
	return found;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* --- round trip ---------------------------------------------------------------------------- */

static void test_profile__round_trip(void **state)
{
	struct world *w = *state;
	struct profile p;
	const struct profile_func *f;

	assert_int_equal(profile__write(w->path, &w->in), 0);
	assert_false(dir_has_temp(w->dir));
	assert_int_equal(profile__read(w->path, &p), 0);

	assert_string_equal(p.binary_path, "/tmp/prog");
	assert_string_equal(p.build_id, "0123abcdef");
	assert_int_equal(p.argc, 3);
	assert_string_equal(p.argv[2], "two words");
	assert_null(p.argv[3]);
	assert_int_equal(p.wait_status, 3 << 8);
	assert_true(p.seconds == 1.5);
	assert_int_equal(p.nprocesses, 2);
	assert_int_equal(p.nthreads, 3);
	assert_int_equal(p.unwind_failures, 1);
	assert_int_equal(p.nvirtual, 4);

	assert_int_equal(p.mode, PLACEMENT_CHORDS);
	assert_true(p.costs.ns[PROBE_STEPPED] == w->costs.ns[PROBE_STEPPED]);
	assert_false(p.costs.measured);
	assert_true(p.est_cost_ns == 1234.5);
	assert_int_equal(p.nsites, 3);
	assert_int_equal(p.sites[0].kind, SITE_BRANCH);
	assert_int_equal(p.sites[0].cc, 4);
	assert_int_equal(p.sites[0].probe_class, PROBE_EMULATED);
	assert_int_equal(p.sites[0].counter2, 1);
	assert_int_equal(p.sites[0].hits, 10);
	assert_int_equal(p.sites[1].counter2, PLACEMENT_NO_COUNTER);
	assert_int_equal(p.sites[2].addr, CFG_FIXTURE_BASE + SHIFT2 + 16);
	assert_int_equal(p.ncounters, 4);
	assert_int_equal(p.counters[0], 7);
	assert_int_equal(p.counter_defs[3].what, COUNTS_BLOCK);
	assert_int_equal(p.counter_defs[3].id, 1);
	assert_int_equal(p.counter_defs[3].site, 2);

	assert_int_equal(p.nfuncs, 3);
	assert_int_equal(p.nchord_funcs, 1);
	assert_int_equal(p.nnaive_funcs, 1);
	assert_int_equal(p.nexcluded_funcs, 1);
	f = &p.funcs[0];
	assert_string_equal(f->name, "main_fn");
	assert_int_equal(f->addr, CFG_FIXTURE_BASE);
	assert_int_equal(f->status, PLAN_CHORDS);
	assert_null(f->reason);
	assert_int_equal(f->count, 10);
	assert_int_equal(f->nblocks, 4);
	assert_int_equal(f->entry_block, 0);
	assert_int_equal(f->blocks[3].addr, CFG_FIXTURE_BASE + 48);
	assert_int_equal(f->blocks[3].end, CFG_FIXTURE_BASE + 64);
	assert_int_equal(f->blocks[1].count, 7);
	assert_int_equal(f->blocks[1].file, PROFILE_NO_FILE);
	assert_int_equal(f->nedges, 5);
	assert_int_equal(f->edges[4].to, 4); /* exit */
	assert_int_equal(f->edges[4].kind, EDGE_RETURN);
	assert_int_equal(f->edges[1].kind, EDGE_NOT_TAKEN);
	assert_int_equal(f->edges[1].count, 3);
	assert_true(f->edges[1].measured);
	assert_false(f->edges[2].measured);
	assert_int_equal(f->block_total, 30);
	assert_int_equal(f->nviolations, 0);

	f = &p.funcs[1];
	assert_string_equal(f->name, "excluded \"fn\"");
	assert_int_equal(f->status, PLAN_EXCLUDED);
	assert_string_equal(f->reason, "not selected");
	assert_int_equal(f->count, COUNT_UNKNOWN);
	assert_int_equal(f->nblocks, 0);

	f = profile__func_at(&p, CFG_FIXTURE_BASE + SHIFT2);
	assert_ptr_equal(f, &p.funcs[2]);
	assert_int_equal(f->status, PLAN_NAIVE);
	assert_string_equal(f->reason, "by request");
	assert_int_equal(f->count, 1);
	assert_int_equal(f->blocks[1].count, COUNT_UNKNOWN);
	assert_int_equal(f->edges[1].count, COUNT_UNKNOWN);
	assert_int_equal(f->edges[2].count, COUNT_UNKNOWN); /* negative: written as null */
	assert_int_equal(f->nviolations, 1);
	assert_int_equal(f->violations[0], 1);
	assert_int_equal(f->virtual_out, 1);
	assert_int_equal(profile_func__block_at(f, CFG_FIXTURE_BASE + SHIFT2 + 16), 1);
	assert_int_equal(profile_func__block_at(f, CFG_FIXTURE_BASE + SHIFT2 + 8), -1);
	assert_null(profile__func_at(&p, 0x1234));

	assert_int_equal(p.hits, 11);
	assert_int_equal(p.sites_hit, 2);
	assert_int_equal(p.naive_hits, 31);
	assert_true(p.est_trap_ns == 10 * 500.0 + 1 * 380.0);
	assert_int_equal(p.nviolations, 1);

	assert_int_equal(profile__check_build_id(&p, "0123abcdef"), 0);
	capture_begin();
	assert_int_equal(profile__check_build_id(&p, "0123abcde0"), -EINVAL);
	assert_non_null(strstr(capture_end(),
			       "edgeprof.data': the profile is of another build (build-id 0123abcdef"));
	capture_begin();
	assert_int_equal(profile__check_build_id(&p, ""), -EINVAL);
	assert_non_null(strstr(capture_end(), "no build-id"));
	profile__release(&p);
	profile__release(&p); /* twice is fine */
}

/* Writing again replaces the file; the file has the documented top-level layout. */
/* Causes (unresolved jump from the CFG, the session's notes), run.execs, run.unmapped_frames
 * and the calibration date survive a round trip; an unknown cause is rejected. */
static void test_profile__causes(void **state)
{
	struct world *w = *state;
	struct profile_func_notes notes[3] = { { 0 }, { .refused = 2 }, { .unmatched = 5,
									 .unmapped = 1 } };
	uint64_t unresolved[1] = { CFG_FIXTURE_BASE + SHIFT2 + 4 };
	struct cfg_func *nf = &w->prog.funcs[2];
	struct profile_cause c[8];
	struct profile p;
	char buf[512];

	nf->unresolved = unresolved;
	nf->nunresolved = 1;
	w->costs.measured = true;
	snprintf(w->costs.date, sizeof(w->costs.date), "2026-11-23T19:46:38Z");
	w->in.notes = notes;
	w->in.unmapped_frames = 3;
	assert_int_equal(profile__func_causes(&w->in, 2, c, 8), 3);
	assert_int_equal(profile__write(w->path, &w->in), 0);
	nf->unresolved = NULL;
	nf->nunresolved = 0;
	assert_int_equal(profile__read(w->path, &p), 0);
	assert_int_equal(p.unmapped_frames, 3);
	assert_true(p.costs.measured);
	assert_string_equal(p.costs.date, "2026-11-23T19:46:38Z");
	assert_int_equal(p.funcs[0].ncauses, 0);
	assert_int_equal(p.funcs[1].ncauses, 1);
	assert_int_equal(p.funcs[1].causes[0].kind, PCAUSE_REFUSED_PROBES);
	assert_int_equal(p.funcs[1].causes[0].count, 2);
	assert_int_equal(p.funcs[2].ncauses, 3);
	assert_int_equal(p.funcs[2].causes[0].kind, PCAUSE_UNRESOLVED_JUMP);
	assert_int_equal(p.funcs[2].causes[0].addr, unresolved[0]);
	assert_int_equal(p.funcs[2].causes[1].kind, PCAUSE_UNMATCHED_INDIRECT);
	assert_int_equal(p.funcs[2].causes[1].count, 5);
	assert_int_equal(p.funcs[2].causes[2].kind, PCAUSE_UNMAPPED_FRAMES);
	profile__violation_cause(p.funcs[2].causes, 1, 0, 0, 0, buf, sizeof(buf));
	snprintf(buf + 256, 256, "unresolved indirect jump at 0x%" PRIx64, unresolved[0]);
	assert_string_equal(buf, buf + 256);
	profile__violation_cause(NULL, 0, 4, 1, 0, buf, sizeof(buf));
	assert_non_null(strstr(buf, "unwinding failed 4 times"));
	assert_non_null(strstr(buf, "exec replaced the image 1 time"));
	profile__violation_cause(NULL, 0, 0, 0, 0, buf, sizeof(buf));
	assert_non_null(strstr(buf, "no recorded cause"));
	profile__release(&p);
	/* An unknown cause is corrupt. */
	{
		FILE *f = fopen(w->path, "r");
		char *text = calloc(1, 1 << 20), *at;
		size_t n;

		assert_non_null(f);
		n = fread(text, 1, (1 << 20) - 1, f);
		fclose(f);
		at = strstr(text, "\"unresolved_jump\"");
		assert_non_null(at);
		memcpy(at, "\"unresolved_jumq\"", strlen("\"unresolved_jumq\""));
		capture_begin();
		assert_int_equal(profile__read_buffer(text, n, "t", &p), -EINVAL);
		assert_non_null(strstr(capture_end(), "unknown inexact cause"));
		profile__release(&p);
		free(text);
	}
}

static void test_profile__shape(void **state)
{
	struct world *w = *state;
	json_error_t jerr;
	json_t *root;

	assert_int_equal(profile__write(w->path, &w->in), 0);
	w->counters[2] = 5; /* no longer consistent with the counts, but still writable */
	assert_int_equal(profile__write(w->path, &w->in), 0);
	w->counters[2] = 1;
	root = json_load_file(w->path, 0, &jerr);
	assert_non_null(root);
	assert_string_equal(json_string_value(json_object_get(root, "format")), PROFILE_FORMAT);
	assert_int_equal(json_integer_value(json_object_get(root, "version")), 1);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(root, "counters"), 2)),
			 5);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(root, "probes"),
							    "hits")), 15);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(
		json_array_get(json_object_get(root, "functions"), 0), "edges"), 4), "to")), "exit");
	json_decref(root);
}

/* Loop trip-count moments (`run --loop-stats`): written per function and read back, a sum of
 * squares beyond 2^63 as a number, the "loop_stats" summary too; inconsistent moments are
 * refused by the writer with one line. */
static void test_profile__loops(void **state)
{
	struct world *w = *state;
	const struct cfg_func *mf = &w->prog.funcs[0];
	struct profile_loop_stat ls[2] = {
		{ .func = 0, .header = mf->blocks[1].start, .entries = 3, .sum = 7, .sumsq = 19 },
		{ .func = 0, .header = mf->blocks[3].start, .entries = 1, .sum = 5000000000ull,
		  .sumsq = (unsigned __int128)5000000000ull * 5000000000ull },
	};
	struct profile_loop_summary sum = { .loops = 4, .measured = 2, .sites = 5, .hits = 99,
					    .est_trap_ns = 49500 };
	const struct profile_func *f = NULL;
	struct profile p;
	const char *msg;

	w->in.loops = ls;
	w->in.nloops = 2;
	w->in.loop_summary = &sum;
	assert_int_equal(profile__write(w->path, &w->in), 0);
	assert_int_equal(profile__read(w->path, &p), 0);
	for (size_t i = 0; i < p.nfuncs; i++) {
		if (strcmp(p.funcs[i].name, mf->name) == 0)
			f = &p.funcs[i];
		else
			assert_int_equal(p.funcs[i].nloops, 0);
	}
	assert_non_null(f);
	assert_int_equal(f->nloops, 2);
	assert_true(f->loops[0].header == mf->blocks[1].start);
	assert_int_equal(f->loops[0].entries, 3);
	assert_int_equal(f->loops[0].sum, 7);
	assert_true(f->loops[0].sumsq == 19);
	assert_int_equal(f->loops[1].sum, 5000000000ull);
	assert_true(f->loops[1].sumsq == 2.5e19);
	assert_true(p.has_loop_stats);
	assert_int_equal(p.loop_stats.loops, 4);
	assert_int_equal(p.loop_stats.measured, 2);
	assert_int_equal(p.loop_stats.sites, 5);
	assert_int_equal(p.loop_stats.hits, 99);
	assert_true(p.loop_stats.est_trap_ns == 49500);
	profile__release(&p);

	ls[0].entries = 8; /* more entries than trips */
	capture_begin();
	assert_true(profile__write(w->path, &w->in) < 0);
	msg = capture_end();
	assert_int_equal(count_lines(msg), 1);
	assert_non_null(strstr(msg, "loop moments 0 are inconsistent"));
}

/* Execs that replaced a profiled image ("execs" of "run"): written and read back; a path
 * may be unknown (null). */
static void test_profile__execs(void **state)
{
	struct world *w = *state;
	struct profile_exec ex[2] = {
		{ .pid = 4242, .main = true, .frames = true, .at = 0.25, .path = "/usr/bin/true" },
		{ .pid = 4343, .main = false, .frames = false, .at = 1.5, .path = NULL },
	};
	struct profile p;
	char *text;

	/* None: no "execs" key (what readers before it saw). */
	assert_int_equal(profile__write(w->path, &w->in), 0);
	text = slurp(w->path);
	assert_null(strstr(text, "\"execs\""));
	free(text);
	assert_int_equal(profile__read(w->path, &p), 0);
	assert_int_equal(p.nexecs, 0);
	profile__release(&p);

	w->in.execs = ex;
	w->in.nexecs = 2;
	assert_int_equal(profile__write(w->path, &w->in), 0);
	assert_int_equal(profile__read(w->path, &p), 0);
	assert_int_equal(p.nexecs, 2);
	assert_int_equal(p.execs[0].pid, 4242);
	assert_true(p.execs[0].main);
	assert_true(p.execs[0].frames);
	assert_true(p.execs[0].at == 0.25);
	assert_string_equal(p.execs[0].path, "/usr/bin/true");
	assert_int_equal(p.execs[1].pid, 4343);
	assert_false(p.execs[1].main);
	assert_false(p.execs[1].frames);
	assert_null(p.execs[1].path);
	profile__release(&p);
}

/* --- destinations (-o) ------------------------------------------------------------------------ */

/* A symlink is followed (its target written, the link kept), a dangling one creates its
 * target, a directory and a missing directory are refused in one line, and "-" is written to
 * standard output (here a file). tests/run-output.sh has devices, FIFOs and the rest. */
static void test_profile__destinations(void **state)
{
	struct world *w = *state;
	char target[128], link[128], dangling[128], created[128], sub[128], out[128];
	const char *msg;
	struct stat st;
	struct profile p;
	int fd, saved;

	snprintf(target, sizeof(target), "%s/target.data", w->dir);
	snprintf(link, sizeof(link), "%s/link", w->dir);
	snprintf(dangling, sizeof(dangling), "%s/dangling", w->dir);
	snprintf(created, sizeof(created), "%s/created.data", w->dir);
	snprintf(sub, sizeof(sub), "%s/sub", w->dir);
	snprintf(out, sizeof(out), "%s/stdout.data", w->dir);
	fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(symlink("target.data", link), 0);
	assert_int_equal(symlink(created, dangling), 0);
	assert_int_equal(profile__write(link, &w->in), 0);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(profile__read(target, &p), 0);
	profile__release(&p);
	assert_int_equal(profile__write(dangling, &w->in), 0);
	assert_int_equal(profile__read(created, &p), 0);
	profile__release(&p);

	assert_int_equal(mkdir(sub, 0755), 0);
	capture_begin();
	assert_int_equal(profile__write(sub, &w->in), -EISDIR);
	msg = capture_end();
	assert_int_equal(count_lines(msg), 1);
	assert_non_null(strstr(msg, "it is a directory"));
	strcat(sub, "/no/x.data");
	capture_begin();
	assert_int_equal(profile__write(sub, &w->in), -ENOENT);
	msg = capture_end();
	assert_int_equal(count_lines(msg), 1);
	assert_non_null(strstr(msg, "does not exist"));

	/* "-": standard output, in place. */
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	fflush(stdout);
	saved = dup(1);
	dup2(fd, 1);
	close(fd);
	assert_int_equal(profile__write("-", &w->in), 0);
	dup2(saved, 1);
	close(saved);
	assert_int_equal(profile__read(out, &p), 0);
	profile__release(&p);
	assert_false(dir_has_temp(w->dir)); /* the teardown removes the rest */
}

/* --- atomic writes ------------------------------------------------------------------------- */

static void expect_write_fails(struct world *w, const char *path, const char *old)
{
	const char *msg;
	char *now;

	capture_begin();
	assert_true(profile__write(path, &w->in) < 0);
	msg = capture_end();
	if (count_lines(msg) != 1 || !strstr(msg, "cannot write the profile"))
		fail_msg("expected one line about the failed write, got: %s", msg);
	assert_false(dir_has_temp(w->dir));
	if (old) {
		now = slurp(w->path);
		assert_string_equal(now, old);
		free(now);
	}
}

static void test_profile__atomic_write(void **state)
{
	struct world *w = *state;
	char missing[160];
	char *old, *now;
	pid_t pid;
	int status;

	assert_int_equal(profile__write(w->path, &w->in), 0);
	old = slurp(w->path);

	/* The directory does not exist. */
	snprintf(missing, sizeof(missing), "%s/no/such/dir/edgeprof.data", w->dir);
	expect_write_fails(w, missing, old);

	/* Counter values out of range: refused before anything is created. */
	w->counters[0] = (uint64_t)INT64_MAX + 1;
	expect_write_fails(w, w->path, old);
	w->counters[0] = 7;

	/* A broken function found while streaming: the temporary file is removed. */
	w->funcs[2].edges[0].to = 99;
	expect_write_fails(w, w->path, old);
	w->funcs[2].edges[0].to = 1;

	/* The disk "fills up" mid-write: a file-size limit, which binds root too, set in a
	 * child so it cannot hit anything else of this test. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit small = { 100, 100 };
		int devnull = open("/dev/null", O_WRONLY);

		signal(SIGXFSZ, SIG_IGN);
		dup2(devnull, 2);
		if (setrlimit(RLIMIT_FSIZE, &small))
			_exit(2);
		_exit(profile__write(w->path, &w->in) == -EFBIG ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_false(dir_has_temp(w->dir));
	now = slurp(w->path);
	assert_string_equal(now, old);
	free(now);

	/* A read-only directory (only meaningful when not root). */
	if (geteuid() != 0) {
		assert_int_equal(chmod(w->dir, 0555), 0);
		expect_write_fails(w, w->path, old);
		assert_int_equal(chmod(w->dir, 0755), 0);
	}
	free(old);
}

/* --- rejections ---------------------------------------------------------------------------- */

/* Reads BUF (SIZE bytes) and expects -EINVAL with one line containing WANT. */
static void expect_reject(const char *buf, size_t size, const char *want)
{
	struct profile p;
	const char *msg;
	int err;

	capture_begin();
	err = profile__read_buffer(buf, size, "x.data", &p);
	msg = capture_end();
	if (err != -EINVAL || count_lines(msg) != 1 || !strstr(msg, want) ||
	    strncmp(msg, "edgeprof: 'x.data': ", 20))
		fail_msg("expected one line with \"%s\", got %d: %s", want, err, msg);
	assert_null(p.funcs);
}

/* Loads the valid profile of W as a JSON tree. */
static json_t *valid_tree(struct world *w)
{
	json_error_t jerr;
	json_t *root;

	assert_int_equal(profile__write(w->path, &w->in), 0);
	root = json_load_file(w->path, 0, &jerr);
	assert_non_null(root);
	return root;
}

static void expect_reject_tree(json_t *root, const char *want)
{
	char *s = json_dumps(root, JSON_COMPACT);

	assert_non_null(s);
	expect_reject(s, strlen(s), want);
	free(s);
	json_decref(root);
}

static json_t *func_of(json_t *root, size_t i)
{
	return json_array_get(json_object_get(root, "functions"), i);
}

static json_t *block_of(json_t *root, size_t f, size_t b)
{
	return json_array_get(json_object_get(func_of(root, f), "blocks"), b);
}

static json_t *edge_of(json_t *root, size_t f, size_t e)
{
	return json_array_get(json_object_get(func_of(root, f), "edges"), e);
}

static void test_profile__reject_not_json(void **state)
{
	struct world *w = *state;
	static const char random_bytes[] = "\x7f" "ELF\x02\x01\x01\x00\xff\xfe";
	char *good;

	expect_reject("", 0, "empty file");
#define REJECT_STR(s, want) expect_reject((s), strlen(s), (want))
	REJECT_STR("  \n", "not an edgeprof profile");
	expect_reject(random_bytes, sizeof(random_bytes), "not an edgeprof profile");
	REJECT_STR("[1,2]", "not an edgeprof profile");
	REJECT_STR("{\"a\":1}", "not an edgeprof profile");
	REJECT_STR("{\"format\":\"other\",\"version\":1}", "not an edgeprof profile");
	REJECT_STR("{\"format\":\"edgeprof-profile\",\"version\":\"1\"}", "no version");
	REJECT_STR("{\"format\":\"edgeprof-profile\",\"version\":7}",
		   "profile version 7 is not supported");
	REJECT_STR("{\"format\":\"edgeprof-profile\",\n\"version\":1,\"version\":1}",
		   "corrupt JSON at line 2");
	REJECT_STR("{\"format\":\"edgeprof-profile\",\"version\":1,\"violations\":"
		   "99999999999999999999}", "corrupt JSON");
	{
		static const char nul[] = "{\"format\":\"edgeprof-profile\",\"binary\":\"a\0b\"}";

		expect_reject(nul, sizeof(nul) - 1, "corrupt JSON");
	}

	assert_int_equal(profile__write(w->path, &w->in), 0);
	good = slurp(w->path);
	expect_reject(good, strlen(good) / 2, "truncated or corrupt JSON at line");
	expect_reject(good, strlen(good) - 3, "truncated or corrupt JSON at line");
	free(good);
#undef REJECT_STR
}

static void test_profile__reject_shape(void **state)
{
	struct world *w = *state;
	json_t *r;

	r = valid_tree(w);
	json_object_set_new(json_object_get(r, "binary"), "build_id", json_string("xyz"));
	expect_reject_tree(r, "build-id is not a hex");

	r = valid_tree(w);
	json_object_set_new(json_object_get(r, "binary"), "build_id", json_integer(5));
	expect_reject_tree(r, "build-id is not a hex");

	r = valid_tree(w);
	json_object_del(r, "binary");
	expect_reject_tree(r, "\"binary\" is missing");

	r = valid_tree(w);
	json_object_set_new(json_object_get(r, "run"), "execs", json_integer(1));
	expect_reject_tree(r, "execs is not an array");

	r = valid_tree(w);
	json_object_set_new(json_object_get(r, "run"), "execs",
			    json_pack("[{s:i,s:b,s:f,s:s,s:b}]", "pid", 0, "main", 1, "at_s", 0.5,
				      "path", "/bin/true", "frames", 1));
	expect_reject_tree(r, "pid is not a process id");

	r = valid_tree(w);
	json_object_set_new(json_object_get(r, "run"), "execs",
			    json_pack("[{s:i,s:b,s:f,s:i,s:b}]", "pid", 5, "main", 1, "at_s", 0.5,
				      "path", 7, "frames", 1));
	expect_reject_tree(r, "path is not a string or null");

	r = valid_tree(w);
	json_object_set_new(json_object_get(r, "run"), "execs",
			    json_pack("[{s:i,s:b,s:f,s:s}]", "pid", 5, "main", 1, "at_s", 0.5,
				      "path", "/bin/true"));
	expect_reject_tree(r, "\"frames\" is missing");

	r = valid_tree(w);
	json_object_set_new(json_object_get(r, "run"), "wait_status", json_integer(70000));
	expect_reject_tree(r, "\"wait_status\" is out of range");

	r = valid_tree(w);
	json_array_set_new(json_object_get(json_object_get(r, "run"), "argv"), 0, json_null());
	expect_reject_tree(r, "argv[0] is not a string");

	r = valid_tree(w);
	json_object_set_new(json_object_get(r, "run"), "seconds", json_string("1"));
	expect_reject_tree(r, "\"seconds\" is not a number");

	r = valid_tree(w);
	json_array_set_new(json_object_get(r, "counters"), 1, json_integer(-3));
	expect_reject_tree(r, "counter 1 is not a non-negative integer");

	r = valid_tree(w);
	json_array_set_new(json_object_get(r, "counters"), 1, json_integer(INT64_MAX));
	expect_reject_tree(r, "counters add up to more than");

	r = valid_tree(w);
	json_object_set_new(r, "functions", json_object());
	expect_reject_tree(r, "\"functions\" is not an array");

	r = valid_tree(w);
	json_array_set_new(json_object_get(r, "functions"), 0, json_integer(1));
	expect_reject_tree(r, "function 0 is not an object");

	r = valid_tree(w);
	json_object_del(func_of(r, 0), "blocks");
	expect_reject_tree(r, "function 'main_fn': \"blocks\" is missing");

	r = valid_tree(w);
	json_object_set_new(func_of(r, 0), "status", json_string("weird"));
	expect_reject_tree(r, "unknown status");

	r = valid_tree(w);
	json_object_set_new(func_of(r, 0), "addr", json_string("401000"));
	expect_reject_tree(r, "\"addr\" is not an address");

	r = valid_tree(w);
	json_object_set_new(func_of(r, 0), "addr", json_string("0x401004"));
	expect_reject_tree(r, "entry 0x401004 is not a block");

	r = valid_tree(w);
	json_object_set_new(func_of(r, 0), "count", json_integer(-1));
	expect_reject_tree(r, "\"count\" is negative");

	r = valid_tree(w);
	json_object_set_new(func_of(r, 1), "blocks", json_pack("[{s:s,s:s,s:n}]", "addr",
							       "0x401800", "end", "0x401810",
							       "count"));
	expect_reject_tree(r, "excluded, but has blocks");
}

static void test_profile__reject_blocks_edges(void **state)
{
	struct world *w = *state;
	json_t *r;

	r = valid_tree(w);
	json_object_set_new(block_of(r, 0, 1), "addr", json_string("0x12345678901234567"));
	expect_reject_tree(r, "block 1: \"addr\" is not an address");

	r = valid_tree(w);
	json_object_set_new(block_of(r, 0, 1), "addr", json_string("0x"));
	expect_reject_tree(r, "is not an address");

	r = valid_tree(w);
	json_object_set_new(block_of(r, 0, 1), "count", json_integer(-5));
	expect_reject_tree(r, "block 1: \"count\" is negative");

	r = valid_tree(w);
	json_object_set_new(block_of(r, 0, 1), "count", json_real(1.5));
	expect_reject_tree(r, "\"count\" is not a count");

	r = valid_tree(w);
	json_object_set_new(block_of(r, 0, 1), "end", json_string("0x401010"));
	expect_reject_tree(r, "before it starts");

	r = valid_tree(w);
	json_object_set_new(block_of(r, 0, 2), "addr", json_string("0x401018"));
	expect_reject_tree(r, "overlaps");

	r = valid_tree(w);
	json_object_set_new(block_of(r, 0, 2), "line", json_integer(-4));
	expect_reject_tree(r, "\"line\" is out of range");

	r = valid_tree(w);
	json_object_set_new(edge_of(r, 0, 2), "to", json_string("0x1234"));
	expect_reject_tree(r, "function 'main_fn': edge to 0x1234 which is not a block");

	r = valid_tree(w);
	json_object_set_new(edge_of(r, 0, 2), "from", json_string("exit"));
	expect_reject_tree(r, "edge from is not a block address");

	r = valid_tree(w);
	json_object_set_new(edge_of(r, 2, 0), "to", json_string("0x401000"));
	expect_reject_tree(r, "function 'naive_fn': edge to 0x401000 which is not a block");

	r = valid_tree(w);
	json_object_set_new(edge_of(r, 0, 2), "kind", json_string("teleport"));
	expect_reject_tree(r, "unknown kind \"teleport\"");

	r = valid_tree(w);
	json_object_set_new(edge_of(r, 0, 2), "measured", json_integer(1));
	expect_reject_tree(r, "\"measured\" is not a boolean");

	r = valid_tree(w);
	json_object_set_new(edge_of(r, 0, 2), "count", json_string("7"));
	expect_reject_tree(r, "\"count\" is not a count");

	r = valid_tree(w);
	json_array_set_new(json_object_get(func_of(r, 2), "violations"), 0,
			   json_string("0x999999"));
	expect_reject_tree(r, "violation at 0x999999 which is not a block");
}

static void test_profile__reject_placement_summary(void **state)
{
	struct world *w = *state;
	json_t *r, *pl;

#define PL(root) json_object_get((root), "placement")
#define SITE(root, i) json_array_get(json_object_get(PL(root), "sites"), (i))
#define DEF(root, i) json_array_get(json_object_get(PL(root), "counters"), (i))
	r = valid_tree(w);
	json_object_set_new(PL(r), "mode", json_string("random"));
	expect_reject_tree(r, "unknown mode");

	r = valid_tree(w);
	json_object_del(json_object_get(PL(r), "costs"), "nop5");
	expect_reject_tree(r, "placement costs: \"nop5\" is missing");

	r = valid_tree(w);
	json_object_set_new(SITE(r, 0), "counters", json_pack("[i,i]", 0, 9));
	expect_reject_tree(r, "site 0: counter is not an index");

	r = valid_tree(w);
	json_object_set_new(SITE(r, 1), "counters", json_pack("[i,i]", 2, 3));
	expect_reject_tree(r, "a count site has a wrong number of counters");

	r = valid_tree(w);
	json_object_set_new(SITE(r, 1), "func", json_integer(3));
	expect_reject_tree(r, "site 1: \"func\" is out of range");

	r = valid_tree(w);
	json_object_set_new(SITE(r, 1), "class", json_string("cheap"));
	expect_reject_tree(r, "unknown class");

	r = valid_tree(w);
	json_object_set_new(SITE(r, 0), "hits", json_integer(11));
	expect_reject_tree(r, "site 0: 11 hits, but its counters hold 10");

	r = valid_tree(w);
	json_object_set_new(DEF(r, 2), "site", json_integer(0));
	expect_reject_tree(r, "counter 2: site 0 does not use it");

	r = valid_tree(w);
	json_object_set_new(DEF(r, 2), "edge", json_integer(0));
	expect_reject_tree(r, "exactly one of \"edge\" and \"block\"");

	r = valid_tree(w);
	json_object_set_new(DEF(r, 0), "edge", json_integer(6));
	expect_reject_tree(r, "counter 0: \"edge\" is out of range");

	r = valid_tree(w);
	pl = json_object_get(PL(r), "counters");
	json_array_remove(pl, 3);
	expect_reject_tree(r, "3 counter definitions for 4 counters");

	r = valid_tree(w);
	json_object_set_new(json_object_get(r, "probes"), "hits", json_integer(12));
	expect_reject_tree(r, "probes: 12 hits, but the counters add up to 11");

	r = valid_tree(w);
	json_object_set_new(json_object_get(r, "probes"), "naive_hits", json_integer(1));
	expect_reject_tree(r, "naive_hits 1, but the blocks add up to 31");

	r = valid_tree(w);
	json_object_set_new(json_object_get(r, "probes"), "sites", json_integer(2));
	expect_reject_tree(r, "probes: 2 sites");

	r = valid_tree(w);
	json_object_set_new(r, "violations", json_integer(0));
	expect_reject_tree(r, "0 violations, but the functions list 1");
#undef PL
#undef SITE
#undef DEF
}

static void test_profile__read_errors(void **state)
{
	struct world *w = *state;
	char path[128];
	struct profile p;
	const char *msg;
	FILE *f;

	snprintf(path, sizeof(path), "%s/missing.data", w->dir);
	capture_begin();
	assert_int_equal(profile__read(path, &p), -ENOENT);
	msg = capture_end();
	assert_int_equal(count_lines(msg), 1);
	assert_non_null(strstr(msg, "No such file"));

	capture_begin();
	assert_int_equal(profile__read(w->dir, &p), -EISDIR);
	msg = capture_end();
	assert_int_equal(count_lines(msg), 1);
	assert_non_null(strstr(msg, "is a directory"));

	snprintf(path, sizeof(path), "%s/v7.data", w->dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"format\":\"edgeprof-profile\",\"version\":7}\n", f);
	fclose(f);
	capture_begin();
	assert_int_equal(profile__read(path, &p), -EINVAL);
	msg = capture_end();
	assert_int_equal(count_lines(msg), 1);
	assert_non_null(strstr(msg, "v7.data': profile version 7 is not supported"));
	profile__release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_profile__round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profile__shape, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profile__causes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profile__loops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profile__execs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profile__destinations, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profile__atomic_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profile__reject_not_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profile__reject_shape, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profile__reject_blocks_edges, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_profile__reject_placement_summary, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_profile__read_errors, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
