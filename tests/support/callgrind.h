/*
 * A reader for valgrind callgrind output (format version 1, as written by callgrind 3.19 with
 * --dump-instr=yes --collect-jumps=yes) that keeps what a control-flow oracle needs for one
 * ELF object: how often each instruction ran, which jumps were taken how often, and which
 * calls were made. The format notes are at the top of callgrind.c.
 */
#ifndef EDGEPROF_TESTS_CALLGRIND_H
#define EDGEPROF_TESTS_CALLGRIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One executed instruction of the object: ELF virtual address and execution count. */
struct cg_insn {
	uint64_t addr;
	uint64_t count;
};

/* A jump (jump= or jcnd= line) inside the object. */
struct cg_jump {
	uint64_t from;     /* address of the jump instruction */
	uint64_t to;       /* target address */
	uint64_t taken;    /* times the jump went to TO */
	uint64_t executed; /* jcnd: times the jump instruction ran; jump: same as taken */
	bool cond;         /* from a jcnd= line */
};

/* A call (calls= line) that starts or ends in the object. Callgrind also reports jumps it
 * judges to be tail calls, and jumps between objects, as calls. */
struct cg_call {
	uint64_t site;   /* call instruction; an ELF vaddr only when site_in */
	uint64_t target; /* callee; an ELF vaddr only when target_in */
	uint64_t count;
	bool site_in;    /* the calling instruction is in the object */
	bool target_in;  /* the callee is in the object */
};

struct cg_profile {
	char *object;           /* the ob= name that matched, NULL if the object never ran */
	struct cg_insn *insns;  /* sorted by addr, one per address, count > 0 */
	size_t ninsns;
	struct cg_jump *jumps;  /* sorted by (from, to, cond), merged */
	size_t njumps;
	struct cg_call *calls;  /* sorted by (site_in, site, target_in, target), merged */
	size_t ncalls;
	uint64_t total_ir;      /* self Ir summed over every object in the file */
	uint64_t object_ir;     /* self Ir of the object */
	uint64_t summary_ir;    /* the Ir of the "summary:" (or else "totals:") line, 0 if absent */
	uint64_t totals_ir;     /* the Ir of the "totals:" line (written with the file's costs,
				 * after them), 0 if absent */
	char error[320];        /* "FILE:LINE: reason" after a failed load */
};

/* Reads the callgrind output file PATH and keeps the data of the object OBJECT, matched
 * against each ob=/cob= name by full path or else by basename. Returns 0, or -1 with one line
 * in PROF->error (the profile is then empty but must still be freed). */
int cg_profile__load(struct cg_profile *prof, const char *path, const char *object);

/* As cg_profile__load for LEN bytes of callgrind text in BUF; NAME is used in messages. */
int cg_profile__parse(struct cg_profile *prof, const char *buf, size_t len, const char *name,
		      const char *object);

/* Releases what a load allocated; safe on a zeroed or failed profile. */
void cg_profile__free(struct cg_profile *prof);

/* Self-check of the reader: whether the self costs read add up to callgrind's own total (its
 * "summary:", or its "totals:" line: when a signal handler longjmps, callgrind's running
 * summary misses the cost it had accumulated in the handler's context (measured:
 * tests/programs/longjmp_mix.c, summary 208656, every line and "totals:" 211446), and the
 * file is still whole when its lines add up to "totals:"). A file with neither passes. */
bool cg_profile__whole(const struct cg_profile *prof);

/* Adds the counts of SRC (another process's profile of the same object, e.g. a forked child)
 * to DST, which stays sorted and merged as cg_profile__load leaves it. A zeroed DST is fine.
 * Returns 0, or -1 when out of memory (DST unchanged in meaning, maybe larger). */
int cg_profile__add(struct cg_profile *dst, const struct cg_profile *src);

/* The execution count of the instruction at ADDR (0 when it never ran). */
uint64_t cg_profile__count(const struct cg_profile *prof, uint64_t addr);

/* Index of the first jump whose source is FROM, or -1; the jumps from FROM follow it. */
long cg_profile__first_jump(const struct cg_profile *prof, uint64_t from);

#endif
