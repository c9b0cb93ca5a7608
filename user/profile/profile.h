/*
 * The profile file (edgeprof.data): what one `edgeprof run` measured, as versioned JSON keyed
 * by the binary's build-id. The writer streams one function at a time and replaces the file
 * atomically; the reader validates strictly and loads a plain in-memory form that needs no
 * CFG (for `edgeprof report`, and as placement weights for a later run).
 *
 * Schema, version 1 (addresses are ELF virtual addresses "0x.." in lowercase hex; a count is
 * a non-negative integer, or null when not determinable; block ends are exclusive):
 *
 * {
 *   "format": "edgeprof-profile",
 *   "version": 1,
 *   "binary": {"path": STR, "build_id": HEX | null},
 *   "run": {"argv": [STR...], "wait_status": INT (0..0xffff),
 *           "exit_code": INT | null, "signal": INT | null,      (derived, informative)
 *           "seconds": NUM, "processes": INT, "threads": INT,
 *           "analysis_s": NUM,      (CFG recovery and placement, all objects; optional)
 *           "unwind_failures": INT, "virtual_edges": INT,
 *           "unmapped_frames": INT,                               (optional, 0)
 *           "longjmp": {"pseudo_edges": INT, "abandoned": INT,    (optional: longjmp
 *                       "resumed": INT, "unwound": INT},           pseudo-edges, derived)
 *           "mode": "run" | "attach",                             (optional, "run")
 *           "pid": INT, "held_attach_s": NUM, "held_detach_s": NUM, (with "attach")
 *           "execs": [{"pid": INT, "main": BOOL, "at_s": NUM,       (optional)
 *                      "path": STR | null, "frames": BOOL}...]},
 *   "placement": {
 *     "mode": "chords" | "naive",
 *     "costs": {"stepped": NS, "emulated": NS, "nop5": NS, "patch": NS, "patch_flags": NS,
 *               "measured": BOOL},                              (patch* optional on read)
 *     "est_cost_ns": NUM,                                       (per invocation, summed)
 *     "sites": [{"addr": ADDR, "func": I, "kind": "count" | "branch", "cc": INT (branch),
 *                "class": "stepped" | "emulated" | "nop5" | "never" (a uprobe) |
 *                         "patch" | "patch-flags" (an in-process counter),
 *                "counters": [C] | [C_TAKEN, C_NOT_TAKEN], "hits": INT}...],
 *     "counters": [{"func": I, "edge": E, "site": S} | {"func": I, "block": B, "site": S}...]
 *   },
 *   "counters": [INT...],                                       (raw values, one per counter)
 *   "functions": [{
 *     "name": STR, "addr": ADDR,
 *     "status": "chords" | "naive" | "excluded", "reason": STR | null,
 *     "count": COUNT,                                           (invocations = EXIT->root)
 *     "file": STR, "line": INT,                                 (entry line, optional)
 *     "chords": INT, "est_cost_ns": NUM,
 *     "virtual_in": INT, "virtual_out": INT,
 *     "virtual": [{"from": ADDR|"exit", "to": ADDR|"exit", "count": N,
 *                  "stopped_at": ADDR (optional), "resumed_at": ADDR (optional)}] (optional),
 *     "longjmp": [{"kind": "abandon" | "resume", "block": ADDR,  (optional, written only:
 *                  "count": COUNT}...],                           derived pseudo-edges)
 *     "foreign_entries": [{"block": ADDR, "count": COUNT}...],  (optional, written only:
 *                  entries from another function's code, derived; status "naive")
 *     "blocks": [{"addr": ADDR, "end": ADDR, "count": COUNT,
 *                 "file": STR, "line": INT}...],                (file/line optional)
 *     "edges": [{"from": ADDR, "to": ADDR | "exit", "kind": KIND, "count": COUNT,
 *                "measured": BOOL}...],
 *     "violations": [ADDR | "exit"...],
 *     "loops": [{"header": ADDR, "entries": INT, "sum": INT,       (optional, --loop-stats)
 *                "sumsq": INT | NUM}...],
 *     "inexact": [{"cause": CAUSE, "addr": ADDR, "count": INT}...]  (optional; addr or
 *                                                                   count as the cause has)
 *   }...],
 *   "probes": {"sites": INT, "hits": INT, "sites_hit": INT, "est_trap_ns": NUM,
 *              "naive_hits": INT},
 *   "violations": INT,
 *   "loop_stats": {"loops": INT, "measured": INT, "sites": INT, (optional, --loop-stats)
 *                  "hits": INT, "est_trap_ns": NUM},
 *   "libraries": [{...}...]                                     (optional)
 * }
 *
 * Function I in "sites" and "counters" is an index into "functions"; edge E and block B index
 * that function's "edges" and "blocks" (which are in CFG id order; E == the number of edges
 * is the virtual EXIT->root edge). KIND is an edge kind name
 * of cfg_edge_kind__name. "libraries" holds one object per shared library profiled with the
 * binary (`--lib`), each with every key above but "libraries": its own binary, run (the same),
 * placement, counters, functions, probes and violations. Blocks are sorted by address and do not overlap (but for a prefix pair, cfg_func__prefix_pair: a block inside the block before it that ends where that one ends); edge endpoints and
 * violations name blocks of the same function (or "exit"; an edge never leaves "exit": the
 * virtual EXIT->root edge is the function's "count"). Excluded functions have no blocks or
 * edges. Each site's "hits" is the sum of its counters; "probes.hits" the sum of all
 * counters; "est_trap_ns" the sum of hits x the cost of the site's class; "naive_hits" the
 * sum of the known block counts of every profiled function (what one probe per block would
 * have taken); "violations" the number of vertices, over all functions, where conservation
 * of flow failed. Negative derived counts are written as null (their vertex is a violation).
 *
 * "execs" (optional: only when one happened; readers before it ignore it) lists the processes
 * whose image an exec replaced while they were the profiled program: "pid", "main" (true for
 * the program's own process, or the one attached to), "at_s" seconds since the start (attach:
 * since the window opened), "path" the new executable, "frames" whether the frames active at
 * the exec were followed (left without returning, as at exit). The counts of such a process
 * cover its image before the exec: it is not counted after it, nor are the processes it
 * creates after it.
 * "inexact" lists what makes a function's counts not exact, or made it excluded or block
 * counts only, as far as the run knows: CAUSE "unresolved_jump" (an indirect jump at "addr"
 * the CFG could not resolve), "bad_code" (undecodable code at "addr"), "refused_probes"
 * ("count" instructions the kernel would not probe), "unmatched_indirect" ("count" jumps of
 * a resolved jump table to a target that is no edge), "unmapped_frames" ("count" unwound
 * frames inside the function's symbol but outside its recovered blocks). "unmapped_frames"
 * counts every unwound frame outside the recovered blocks.
 *
 * "loops" (a run with --loop-stats) holds the measured trip-count moments of the function's
 * natural loops whose header is the block at "header": "entries" loop entries, "sum" the sum
 * of their trip counts (header executions per entry) and "sumsq" the sum of their squares (an
 * integer, or a number beyond 2^63). Valid moments have entries <= sum <= sumsq and entries 0
 * exactly when sum is 0; a loop that was not measured is not listed. "loop_stats" says what
 * measuring them cost: "loops" natural loops in the binary, "measured" of them probed, their
 * "sites", the "hits" of those probes (the counts of the blocks holding them) and their
 * estimated trap time "est_trap_ns" (hits x the cost of the site's class).
 */
#ifndef EDGEPROF_USER_PROFILE_H
#define EDGEPROF_USER_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include <stdint.h>

#include "cfg/cfg.h"
#include "cfg/block_lines.h"
#include "cfg/srcline.h"
#include "estimators/placement.h"
#include "estimators/propagate.h"
#include "estimators/site_costs.h"

#define PROFILE_FORMAT "edgeprof-profile"
#define PROFILE_VERSION 1
#define PROFILE_DEFAULT_PATH "edgeprof.data"

/* Limits the reader enforces (larger values are rejected as corrupt). */
#define PROFILE_MAX_FILE_SIZE (4ull << 30)
#define PROFILE_MAX_ITEMS (1u << 26) /* functions, sites, counters, blocks or edges of one
				      * function, argv entries */
#define PROFILE_NO_FILE UINT32_MAX

/* Measured trip-count moments of one loop (profile_input.loops). */
struct profile_loop_stat {
	uint32_t func;   /* index into prog->funcs */
	uint64_t header; /* ELF vaddr of the header block */
	uint64_t entries, sum;
	unsigned __int128 sumsq;
};

/* What measuring loop trip counts cost (the "loop_stats" key). */
struct profile_loop_summary {
	uint32_t loops, measured;
	uint64_t sites, hits;
	double est_trap_ns;
};

/* An exec that replaced the image of a profiled process (the "execs" of "run"). */
struct profile_exec {
	int pid;
	bool main;   /* the program's own process (or the one attached to) */
	bool frames; /* its frames at the exec were followed */
	double at;   /* seconds since the start */
	char *path;  /* the new executable, NULL when unknown */
};

/* The "execs" JSON array of EXECS[0, N) (run.execs), as the profile and `report --json`
 * write it; NULL or a partial array with *ERR set when out of memory. */
json_t *profile_exec__json(const struct profile_exec *execs, size_t n, int *err);

/* What the writer reads: one run, its plan and its propagated counts. */
struct profile_input {
	const char *binary_path;             /* NULL: prog->img->path */
	const char *build_id;                /* hex; NULL: prog->img->build_id ("" = none) */
	const struct cfg_program *prog;
	const struct placement *pl;
	const uint64_t *counters;            /* [pl->ncounters] raw values */
	const struct func_counts *counts;    /* indexed like prog->funcs; entries of excluded
					      * functions may be zeroed */
	const struct site_costs *costs;
	const struct block_lines *blines;    /* source lines of entries and blocks; may be NULL */
	char *const *argv;                   /* NULL-terminated, may be NULL */
	int wait_status;
	double seconds;
	unsigned nprocesses, nthreads, unwind_failures;
	size_t nvirtual;                     /* virtual edges added */
	unsigned nlongjmps;                  /* longjmps stopped at and unwound */
	const char *mode;                    /* "run" (NULL) or "attach" (a running process) */
	int pid;                             /* attach: the process */
	double held_attach, held_detach;     /* attach: seconds it was stopped */
	double analysis_s;                   /* seconds spent on CFG recovery and placement */
	const struct virtual_edge *ve;       /* those edges, sorted by function (may be NULL) */
	const struct profile_input *libs;    /* shared libraries profiled with it (--lib) */
	size_t nlibs;
	const struct profile_loop_stat *loops; /* sorted by func; may be NULL */
	size_t nloops;
	const struct profile_loop_summary *loop_summary; /* NULL: no "loop_stats" key */
	const struct profile_exec *execs;    /* images replaced by an exec, may be NULL */
	size_t nexecs;
	const struct profile_func_notes *notes; /* indexed like prog->funcs; may be NULL */
	uint64_t unmapped_frames;            /* unwound frames outside every recovered block */
};

/* What makes a function's counts not exact (see "inexact" above). */
enum profile_cause_kind {
	PCAUSE_UNRESOLVED_JUMP = 0, /* addr */
	PCAUSE_BAD_CODE,	    /* addr */
	PCAUSE_REFUSED_PROBES,	    /* count */
	PCAUSE_UNMATCHED_INDIRECT,  /* count */
	PCAUSE_UNMAPPED_FRAMES,	    /* count */
	PCAUSE_COUNT,
};

struct profile_cause {
	uint8_t kind;	/* enum profile_cause_kind */
	uint64_t addr;	/* ELF vaddr, 0 when the kind has none */
	uint64_t count; /* 0 when the kind has none */
};

/* What the session knows about one function beyond its CFG and plan (profile_input.notes),
 * all 0 when nothing happened. */
struct profile_func_notes {
	uint32_t refused;   /* instructions the kernel refused to probe */
	uint64_t unmatched; /* indirect jumps to a target that is no edge */
	uint64_t unmapped;  /* unwound frames in its symbol, outside its blocks */
};

struct profile_block {
	uint64_t addr, end;
	int64_t count;  /* COUNT_UNKNOWN when null */
	uint32_t file;  /* index into profile.files, PROFILE_NO_FILE when none */
	int line;
};

struct profile_edge {
	uint32_t from, to; /* block indices of the function; to == nblocks is EXIT */
	uint8_t kind;      /* enum cfg_edge_kind */
	bool measured;
	int64_t count;     /* COUNT_UNKNOWN when null */
};

/* A virtual edge of a function (see estimators/propagate.h). */
struct profile_virtual {
	uint32_t from, to;      /* block indices, nblocks = EXIT */
	uint64_t count;
	uint64_t stopped_at;    /* 0 when none */
	uint64_t resumed_at;    /* 0 when none */
};

/* A loop's trip-count moments as read (see "loops" above). */
struct profile_loop {
	uint64_t header; /* ELF vaddr of its header block */
	uint64_t entries, sum;
	double sumsq;
};

struct profile_func {
	char *name;
	uint64_t addr;
	uint8_t status;    /* enum func_plan_status */
	char *reason;      /* NULL when none */
	int64_t count;     /* invocations, COUNT_UNKNOWN when null */
	uint32_t file;     /* entry's file: index into profile.files, or PROFILE_NO_FILE */
	int line;
	uint32_t nchords;
	double est_cost_ns;
	uint64_t virtual_in, virtual_out;
	struct profile_block *blocks;
	uint32_t nblocks;
	uint32_t entry_block; /* the block starting at addr, or nblocks when there is none */
	struct profile_edge *edges;
	uint32_t nedges;
	uint32_t *violations; /* block indices, nblocks = EXIT */
	uint32_t nviolations;
	struct profile_virtual *virt; /* flow added by unwinding (frames left or entered) */
	uint32_t nvirt;
	int64_t block_total;  /* sum of the known block counts */
	struct profile_loop *loops; /* measured trip-count moments (--loop-stats), or NULL */
	uint32_t nloops;
	struct profile_cause *causes; /* "inexact", or NULL */
	uint32_t ncauses;
};

struct profile_site {
	uint64_t addr;
	uint32_t func;        /* index into profile.funcs */
	uint8_t kind;         /* enum site_kind */
	uint8_t cc;
	uint8_t probe_class;  /* enum insn_probe_class */
	uint32_t counter, counter2; /* counter2 is PLACEMENT_NO_COUNTER for SITE_COUNT */
	uint64_t hits;
};

struct profile_counter {
	uint32_t func;  /* index into profile.funcs */
	uint8_t what;   /* enum counter_what */
	uint32_t id;    /* edge or block index of that function */
	uint32_t site;  /* index into profile.sites */
};

struct profile {
	char *source;      /* the file (or name) it was read from */
	char *binary_path;
	char build_id[2 * 64 + 1]; /* lowercase hex, "" when the binary had none */

	char **argv;
	size_t argc;
	int wait_status;
	double seconds;
	unsigned nprocesses, nthreads, unwind_failures;
	uint64_t nvirtual;
	uint64_t unmapped_frames; /* run.unmapped_frames */
	/* run.longjmp (0 when absent): longjmp pseudo-edges planned, the flow derived on them
	 * (frames left through a call, second returns of setjmp), longjmps unwound. */
	uint64_t lj_pseudo, lj_abandoned, lj_resumed, lj_unwound;
	bool attached;         /* recorded by attaching to a running process (mode "attach") */
	int pid;               /* then: that process */
	double held_attach, held_detach; /* seconds it was stopped at attach and at detach */
	struct profile_exec *execs; /* images replaced by an exec ("execs"), in order */
	size_t nexecs;

	enum placement_mode mode;
	struct site_costs costs;
	double est_cost_ns;
	struct profile_site *sites;
	size_t nsites;
	struct profile_counter *counter_defs;
	uint64_t *counters; /* raw values, [ncounters] */
	uint32_t ncounters;

	struct profile_func *funcs;
	size_t nfuncs;
	uint32_t *by_addr; /* function indices sorted by addr (for profile__func_at) */
	uint32_t nchord_funcs, nnaive_funcs, nexcluded_funcs;

	char **files; /* distinct source file names */
	uint32_t nfiles;

	/* Summary. */
	uint64_t hits, sites_hit, naive_hits;
	double est_trap_ns;
	/* The same per site class (enum insn_probe_class): which mechanism counted what. */
	struct profile_class_total {
		uint64_t sites, hits;
		double est_ns;
	} by_class[PROBE_CLASS_COUNT];
	uint64_t nviolations;
	bool has_loop_stats;   /* a "loop_stats" key: the run measured loop trip counts */
	struct profile_loop_summary loop_stats;

	/* Shared libraries profiled in the same run (`--lib`), each a whole profile of its own
	 * object (no libraries of their own). */
	struct profile *libs;
	size_t nlibs;
};

/* Writes the profile of IN to PATH, resolved by profile_dest__resolve (profile_dest.h): a
 * regular file or a new name atomically (a temporary file in its directory, flushed and
 * fsync'ed, given to the invoking user under sudo, renamed over the name, the directory
 * fsync'ed); a character device, a FIFO or a descriptor's name ("-", /dev/stdout) in place.
 * Functions are streamed one at a time. On failure a temporary file is removed, a file is
 * left as it was (a device or FIFO may have had part of it), the problem is reported with
 * pr_err (one line naming PATH) and a negative errno is returned (-EINVAL for inconsistent
 * input, e.g. a counter above INT64_MAX, or a destination refused); 0 on success. */
int profile__write(const char *path, const struct profile_input *in);

/* Reads and validates the profile at PATH into P (zeroed first). Returns 0; -EINVAL when the
 * file is not a valid version-1 profile, -ENOENT / -EISDIR / other negative errnos when it
 * cannot be read, -ENOMEM; on failure exactly one line naming PATH was reported with pr_err
 * and P holds nothing to release (releasing it is still safe). */
int profile__read(const char *path, struct profile *p);

/* profile__read on the SIZE bytes at BUF; NAME names the input in messages. */
int profile__read_buffer(const char *buf, size_t size, const char *name, struct profile *p);

/* profile__read, and on success the parsed document into *DOC when DOC is not NULL (a
 * reference the caller releases with json_decref), for a caller that works on the document
 * itself (`edgeprof merge`). */
int profile__read_doc(const char *path, struct profile *p, json_t **doc);

/* Validates and reads document ROOT (already parsed; not released), named NAME in
 * messages, into P, with profile__read's checks and its single pr_err line on failure. */
int profile__from_doc(json_t *root, const char *name, struct profile *p);

/* Frees everything P owns and zeroes it; safe on a zeroed or failed-to-read P. */
void profile__release(struct profile *p);

/* Returns 0 when P was recorded on the binary with build-id BUILD_ID, else reports why not
 * with pr_err (different build-ids, or either side has none) and returns -EINVAL. */
int profile__check_build_id(const struct profile *p, const char *build_id);

/* The function of P whose entry is ADDR (the first one when several are), or NULL. */
const struct profile_func *profile__func_at(const struct profile *p, uint64_t addr);

/* The block of F starting at ADDR, or -1. */
int profile_func__block_at(const struct profile_func *f, uint64_t addr);

/* The source file name of index FILE, or NULL for PROFILE_NO_FILE. */
static inline const char *profile__file(const struct profile *p, uint32_t file)
{
	return file < p->nfiles ? p->files[file] : NULL;
}

/* The JSON object of one virtual edge, {"from","to","count"[,"stopped_at"][,"resumed_at"]}
 * (zero addresses are left out); takes FROM and TO (vertex values: "0x.." or "exit"). NULL
 * when out of memory. Shared by the profile writer and `report --json`. */
json_t *profile__virtual_json(json_t *from, json_t *to, uint64_t count, uint64_t stopped_at,
			      uint64_t resumed_at);

/* The causes of function I of IN (see "inexact"): its unresolved jumps, undecodable code,
 * and IN's notes on it, into OUT (room for MAX). Returns how many there are (those beyond
 * MAX are not stored). */
size_t profile__func_causes(const struct profile_input *in, size_t i, struct profile_cause *out,
			    size_t max);

/* "unresolved_jump", "bad_code", ... (see "inexact"), or NULL. */
const char *profile__cause_name(unsigned kind);

/* Cause C in words ("unresolved indirect jump at 0x36b5", "3 frames could not be mapped to a
 * block") into BUF of SIZE bytes; returns BUF. */
const char *profile__cause_text(const struct profile_cause *c, char *buf, size_t size);

/* Why a function with violations is not exact, in words, into BUF of SIZE bytes: its causes
 * C[0..N) if any; else, of the run, unwinding failures (UNWIND_FAILURES), execs (NEXECS),
 * unwound frames outside every block (UNMAPPED); else what is left (a path the CFG misses).
 * Returns BUF. */
const char *profile__violation_cause(const struct profile_cause *c, size_t n,
				     unsigned unwind_failures, unsigned nexecs, uint64_t unmapped,
				     char *buf, size_t size);

/* "chords", "naive" or "excluded". */
const char *profile__status_name(unsigned status);

/* "stepped", "emulated", "nop5" or "never". */
const char *profile__class_name(unsigned probe_class);

#endif
