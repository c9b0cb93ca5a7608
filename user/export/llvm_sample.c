/*
 * The LLVM text sample profile export (see llvm_sample.h): every counted instruction gives a
 * record keyed by its inline path (the functions from the outermost to the innermost, each
 * with the call site it was inlined at) and its line offset and discriminator, every direct
 * call one more with its callee, every function entry one with its invocations. The records
 * are sorted so that a function's own lines come before the call sites inlined into it (each
 * followed by its own subtree, as the text format nests them), merged (largest count per
 * line, sums of calls and invocations), and written in that order.
 */
#include "user/export/llvm_sample.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/array.h"
#include "cfg/inline_frames.h"
#include "cfg/srcline.h"

/* Deeper inline chains than this are left out (as instructions without a line). */
#define MAX_FRAMES 64

/* One level of an inline path: a function and, below the top, the call site (line offset
 * and base discriminator in the level above) it was inlined at. */
struct ls_frame {
	const char *name;
	uint32_t off, disc;
};

enum ls_kind { REC_HEAD, REC_BODY, REC_CALL };

struct ls_rec {
	uint32_t first, nframes; /* the inline path: frames[first .. first + nframes) */
	uint8_t kind;            /* enum ls_kind */
	uint32_t off, disc;      /* REC_BODY, REC_CALL: the line in the innermost function */
	const char *callee;      /* REC_CALL */
	uint64_t count;
};

struct builder {
	struct ls_frame *frames;
	size_t nframes, frames_cap;
	struct ls_rec *recs;
	size_t nrecs, recs_cap;
	struct inline_frames *ifr;
	const char **entry_name; /* [prog->nfuncs]: the function at each entry, NULL: none */
	struct llvm_sample_stats *st;
};

/* LLVM's encoding of discriminators (DILocation::getUnsignedFromPrefixEncoding and
 * getNextComponentInDiscriminator): components base discriminator, duplication factor, copy
 * id, each 0 as a lone 1 bit, else (C << 1) for C < 64, else 14 bits with bit 6 set. */
static unsigned prefix_decode(unsigned u)
{
	if (u & 1)
		return 0;
	u >>= 1;
	if (u & 0x40)
		return (u >> 7 & 0xfe0) | (u & 0x1f);
	return u & 0x3f;
}

static unsigned next_component(unsigned d)
{
	if ((d & 1) == 0)
		return d >> ((d & 0x40) ? 14 : 7);
	return d >> 1;
}

static unsigned base_disc(unsigned d)
{
	return prefix_decode(d);
}

static unsigned dup_factor(unsigned d)
{
	unsigned f = prefix_decode(next_component(d));

	return f ? f : 1;
}

/* A line's offset as LLVM's FunctionSamples::getOffset computes it. */
static uint32_t line_off(const struct inline_frame *f)
{
	return (uint32_t)(f->line - f->decl_line) & 0xffff;
}

/* Adds a record of KIND for the inline path of FR[0 .. N) (the leaf line from FR[N - 1]). */
static int add_rec(struct builder *b, const struct inline_frame *fr, int n, uint8_t kind,
		   const char *callee, uint64_t count)
{
	struct ls_rec *r;

	if (array_grow((void **)&b->frames, &b->frames_cap, b->nframes + (size_t)n,
		       sizeof(*b->frames), 256) ||
	    array_grow((void **)&b->recs, &b->recs_cap, b->nrecs + 1, sizeof(*b->recs), 256))
		return -ENOMEM;
	r = &b->recs[b->nrecs++];
	*r = (struct ls_rec){ .first = (uint32_t)b->nframes, .nframes = (uint32_t)n, .kind = kind,
			      .callee = callee, .count = count };
	for (int k = 0; k < n; k++)
		b->frames[b->nframes++] = (struct ls_frame){
			fr[k].name, k ? line_off(&fr[k - 1]) : 0, k ? base_disc(fr[k - 1].discriminator) : 0
		};
	if (kind != REC_HEAD) {
		r->off = line_off(&fr[n - 1]);
		r->disc = base_disc(fr[n - 1].discriminator);
	} else {
		r->nframes = 1;
		b->nframes -= (size_t)n - 1;
	}
	return 0;
}

/* Whether every frame of FR[0 .. N) has a line: a call line of 0 (call sites LLVM merged
 * after inlining) names no call site a compilation can look up. */
static bool lines_known(const struct inline_frame *fr, int n)
{
	for (int k = 0; k < n; k++)
		if (fr[k].line <= 0)
			return false;
	return true;
}

/* The call made by the instruction at ADDR of F, or NULL. */
static const struct cfg_call *call_at(const struct cfg_func *f, uint64_t addr)
{
	for (uint32_t k = 0; k < f->ncalls; k++)
		if (f->calls[k].site == addr)
			return &f->calls[k];
	return NULL;
}

static int gather_func(struct builder *b, const struct cfg_program *prog, size_t fi,
		       const struct profile_func *pf)
{
	const struct cfg_func *f = &prog->funcs[fi];
	struct inline_frame fr[MAX_FRAMES];
	int err = 0;

	for (uint32_t bi = 0; bi < f->nblocks && !err; bi++) {
		const struct cfg_block *bl = &f->blocks[bi];
		int64_t n = pf->blocks[bi].count;

		if (n < 0)
			continue;
		for (uint32_t k = 0; k < bl->ninsns && !err; k++) {
			const struct cfg_insn *in = &f->insns[bl->first_insn + k];
			const struct cfg_call *c;
			const struct cfg_func *g;
			int nf = inline_frames__at(b->ifr, in->addr, fr, MAX_FRAMES);

			if (nf == -ENOMEM)
				return nf;
			if (nf <= 0 || !lines_known(fr, nf)) {
				b->st->no_line += n > 0;
				continue;
			}
			err = add_rec(b, fr, nf, REC_BODY, NULL,
				      (uint64_t)n * dup_factor(fr[nf - 1].discriminator));
			if (err || in->flow != INSN_CALL || n <= 0)
				continue;
			c = call_at(f, in->addr);
			g = c && !c->indirect && !c->external && c->target
				    ? cfg_program__func_at(prog, c->target)
				    : NULL;
			if (g && b->entry_name[g - prog->funcs])
				err = add_rec(b, fr, nf, REC_CALL, b->entry_name[g - prog->funcs],
					      (uint64_t)n);
		}
	}
	if (!err && pf->count > 0 && b->entry_name[fi]) {
		fr[0] = (struct inline_frame){ .name = b->entry_name[fi] };
		err = add_rec(b, fr, 1, REC_HEAD, NULL, (uint64_t)pf->count);
	}
	return err;
}

/* Sorts the inline paths as the text format nests them: frame by frame (the top by name,
 * the others by call site, then name), a path before the longer ones it begins. */
static const struct ls_frame *sort_frames;

static int cmp_path(const struct ls_rec *x, const struct ls_rec *y, uint32_t *common)
{
	uint32_t n = x->nframes < y->nframes ? x->nframes : y->nframes;

	for (uint32_t k = 0; k < n; k++) {
		const struct ls_frame *a = &sort_frames[x->first + k], *b = &sort_frames[y->first + k];
		int c;

		if (k && (a->off != b->off || a->disc != b->disc)) {
			*common = k;
			return a->off != b->off ? (a->off < b->off ? -1 : 1)
						: (a->disc < b->disc ? -1 : 1);
		}
		c = a->name == b->name ? 0 : strcmp(a->name, b->name);
		if (c) {
			*common = k;
			return c;
		}
	}
	*common = n;
	return (x->nframes > y->nframes) - (x->nframes < y->nframes);
}

static int cmp_rec(const void *pa, const void *pb)
{
	const struct ls_rec *x = pa, *y = pb;
	uint32_t common;
	int c = cmp_path(x, y, &common);

	if (c)
		return c;
	if ((x->kind == REC_HEAD) != (y->kind == REC_HEAD))
		return x->kind == REC_HEAD ? -1 : 1;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	if (x->disc != y->disc)
		return x->disc < y->disc ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->kind == REC_CALL)
		return strcmp(x->callee, y->callee);
	return 0;
}

/* Merges equal records: the largest count of a line, the sum of invocations and calls. */
static void merge(struct builder *b)
{
	size_t n = 0;

	for (size_t i = 0; i < b->nrecs; i++) {
		struct ls_rec *last = n ? &b->recs[n - 1] : NULL, *r = &b->recs[i];

		if (last && !cmp_rec(last, r)) {
			if (r->kind == REC_BODY)
				last->count = r->count > last->count ? r->count : last->count;
			else
				last->count += r->count;
		} else {
			b->recs[n++] = *r;
		}
	}
	b->nrecs = n;
}

/* The end of the subtree of the node at depth D that record I's path begins (its first
 * D + 1 frames), and the sum of its line counts into *TOTAL. */
static size_t subtree(const struct builder *b, size_t i, uint32_t d, uint64_t *total)
{
	size_t j = i;
	uint32_t common;

	*total = 0;
	for (; j < b->nrecs; j++) {
		if (b->recs[j].nframes < d + 1)
			break;
		if (j > i && (cmp_path(&b->recs[i], &b->recs[j], &common), common < d + 1))
			break;
		if (b->recs[j].kind == REC_BODY)
			*total += b->recs[j].count;
	}
	return j;
}

static void put_loc(FILE *out, uint32_t depth, uint32_t off, uint32_t disc)
{
	fprintf(out, "%*s%" PRIu32, (int)depth, "", off);
	if (disc)
		fprintf(out, ".%" PRIu32, disc);
	fputs(": ", out);
}

/* Writes the lines and inlined call sites of the node at depth D whose records are [I, END). */
static void write_node(FILE *out, struct builder *b, size_t i, size_t end, uint32_t d)
{
	while (i < end && b->recs[i].kind == REC_HEAD)
		i++;
	while (i < end && b->recs[i].nframes == d + 1) {
		const struct ls_rec *r = &b->recs[i++];

		put_loc(out, d + 1, r->off, r->disc);
		fprintf(out, "%" PRIu64, r->count);
		b->st->lines++;
		for (; i < end && b->recs[i].kind == REC_CALL && b->recs[i].nframes == d + 1 &&
		       b->recs[i].off == r->off && b->recs[i].disc == r->disc;
		     i++) {
			fprintf(out, " %s:%" PRIu64, b->recs[i].callee, b->recs[i].count);
			b->st->targets++;
		}
		fputc('\n', out);
	}
	while (i < end) {
		const struct ls_frame *site = &b->frames[b->recs[i].first + d + 1];
		uint64_t total;
		size_t j = subtree(b, i, d + 1, &total);

		if (total) {
			put_loc(out, d + 1, site->off, site->disc);
			fprintf(out, "%s:%" PRIu64 "\n", site->name, total);
			b->st->inlined++;
			write_node(out, b, i, j, d + 1);
		}
		i = j;
	}
}

static void write_all(FILE *out, struct builder *b)
{
	for (size_t i = 0; i < b->nrecs;) {
		uint64_t total, head = 0;
		size_t j = subtree(b, i, 0, &total);

		for (size_t k = i; k < j && b->recs[k].kind == REC_HEAD; k++)
			head += b->recs[k].count;
		if (total) {
			fprintf(out, "%s:%" PRIu64 ":%" PRIu64 "\n", b->frames[b->recs[i].first].name,
				total, head);
			b->st->funcs++;
			write_node(out, b, i, j, 0);
		}
		i = j;
	}
}

/* Each function's name in the DWARF (the outermost frame of its first instruction that has
 * one), for the heads and call targets. */
static int name_entries(struct builder *b, const struct cfg_program *prog)
{
	struct inline_frame fr[MAX_FRAMES];

	b->entry_name = calloc(prog->nfuncs ? prog->nfuncs : 1, sizeof(*b->entry_name));
	if (!b->entry_name)
		return -ENOMEM;
	for (size_t i = 0; i < prog->nfuncs; i++) {
		const struct cfg_func *f = &prog->funcs[i];
		const struct cfg_block *bl;
		int nf = -ENOENT;

		if (!f->nblocks || f->entry_block >= f->nblocks)
			continue;
		bl = &f->blocks[f->entry_block];
		for (uint32_t k = 0; k < bl->ninsns && nf <= 0; k++) {
			nf = inline_frames__at(b->ifr, f->insns[bl->first_insn + k].addr, fr,
					       MAX_FRAMES);
			if (nf == -ENOMEM)
				return nf;
		}
		if (nf > 0)
			b->entry_name[i] = fr[0].name;
	}
	return 0;
}

int llvm_sample__write(FILE *out, const struct profile *p, const struct cfg_program *prog,
		       const struct elf_image *img, struct llvm_sample_stats *st)
{
	struct builder b = { .st = st };
	struct srcline *sl = NULL;
	int err;

	memset(st, 0, sizeof(*st));
	err = srcline__open(&sl, img);
	if (err)
		return err == -ENOENT ? err : -ENOMEM;
	err = inline_frames__open(&b.ifr, sl);
	if (!err)
		err = name_entries(&b, prog);
	for (size_t i = 0; i < prog->nfuncs && !err; i++) {
		const struct profile_func *pf = profile__func_at(p, prog->funcs[i].entry);

		if (!pf || pf->status == PLAN_EXCLUDED || pf->nblocks != prog->funcs[i].nblocks)
			continue;
		if (pf->nviolations) {
			st->unknown_funcs++;
			continue;
		}
		err = gather_func(&b, prog, i, pf);
		st->partial_funcs += (prog->funcs[i].flags & CFG_FUNC_UNRESOLVED) && pf->count > 0;
	}
	if (!err) {
		sort_frames = b.frames;
		qsort(b.recs, b.nrecs, sizeof(*b.recs), cmp_rec);
		merge(&b);
		write_all(out, &b);
		sort_frames = NULL;
		if (fflush(out) || ferror(out))
			err = -EIO;
	}
	inline_frames__close(b.ifr);
	srcline__close(sl);
	free(b.entry_name);
	free(b.frames);
	free(b.recs);
	return err < 0 ? (err == -EIO || err == -ENOENT ? err : -ENOMEM) : 0;
}
