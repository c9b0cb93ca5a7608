/*
 * cfg_oracle: an independent soundness check of CFG recovery against what really ran.
 *
 *   cfg_oracle --binary PATH --callgrind FILE [--cfg-binary PATH2]
 *	Builds the CFG of PATH2 (default PATH; e.g. a stripped copy with the same code) and
 *	checks it against a callgrind run of PATH (--dump-instr=yes --collect-jumps=yes):
 *	(a) every executed instruction in PATH's .text is an instruction start inside a block
 *	    of a recovered function;
 *	(b) every taken jump from .text is an edge (or a tail call, or for a function that runs
 *	    off its end into other code, CFG_FUNC_RUNS_OFF, the recorded exit to that address)
 *	    of a function holding the jump's block;
 *	(c) every fall-through that carried flow is an edge (or stays inside one block): the
 *	    flow into an instruction j not explained by jumps and calls to j comes from the
 *	    instruction before j, and a jcc that ran more often than it was taken falls through;
 *	(d) every direct call from .text to the binary itself is a call site of the CFG.
 *	Prints one summary line and the first misses; exits 1 on any miss, 2 on usage or load
 *	errors.
 *
 *   cfg_oracle --match-stripped UNSTRIPPED STRIPPED
 *	Checks that the functions of UNSTRIPPED known from both .symtab and .eh_frame are found
 *	again in the CFG program of STRIPPED (cold fragments: as a block start). Exits 1 below
 *	99%.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/cfg.h"
#include "cfg/error.h"
#include "support/callgrind.h"

#define MAX_PRINTED_MISSES 50
#define MAX_PRINTED_MISSING_FUNCS 30

/* One decoded instruction of one function: the reverse index from addresses to CFGs. */
struct insn_ref {
	uint64_t addr;
	uint32_t func, block, insn;
};

enum miss_class {
	MISS_INSN,
	MISS_JUMP,
	MISS_FALL,
	MISS_CALL,
	MISS_CLASS_COUNT,
};

static const char *const class_names[MISS_CLASS_COUNT] = { "insn", "jump", "fallthrough",
							    "call" };

struct oracle {
	struct elf_image img;      /* the profiled binary (PATH) */
	struct symbols names;      /* its symbols, for printing */
	struct elf_image cfg_img;  /* the binary whose CFG is built (PATH2) */
	struct cfg_program prog;
	const struct elf_section *text;
	struct insn_ref *refs;     /* sorted by (addr, func) */
	size_t nrefs;
	struct cg_profile prof;
	uint64_t *jumps_in, *calls_in; /* per prof.insns: explained inflow */

	unsigned long checked[MISS_CLASS_COUNT];
	unsigned long misses[MISS_CLASS_COUNT];
	unsigned long printed;
	unsigned long negative_inflow; /* parser/profile inconsistencies (not misses) */
	unsigned long outside_entries; /* block starts entered by no recorded transfer */
	uint64_t first_outside;
};

static void usage(void)
{
	fprintf(stderr,
		"usage: cfg_oracle --binary PATH --callgrind FILE [--cfg-binary PATH2]\n"
		"       cfg_oracle --match-stripped UNSTRIPPED STRIPPED\n");
}

static int cmp_ref(const void *a, const void *b)
{
	const struct insn_ref *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	return x->block < y->block ? -1 : x->block > y->block;
}

static int build_refs(struct oracle *o)
{
	size_t n = 0, fi;
	uint32_t b, k;

	for (fi = 0; fi < o->prog.nfuncs; fi++)
		n += o->prog.funcs[fi].ninsns;
	o->refs = malloc((n ? n : 1) * sizeof(*o->refs));
	if (!o->refs)
		return -ENOMEM;
	for (fi = 0; fi < o->prog.nfuncs; fi++) {
		const struct cfg_func *f = &o->prog.funcs[fi];

		for (b = 0; b < f->nblocks; b++) {
			const struct cfg_block *bl = &f->blocks[b];

			for (k = bl->first_insn; k < bl->first_insn + bl->ninsns && k < f->ninsns;
			     k++)
				o->refs[o->nrefs++] = (struct insn_ref){ f->insns[k].addr,
									 (uint32_t)fi, b, k };
		}
	}
	qsort(o->refs, o->nrefs, sizeof(*o->refs), cmp_ref);
	return 0;
}

/* The refs at exactly ADDR: returns the first index and sets *N. */
static size_t refs_at(const struct oracle *o, uint64_t addr, size_t *n)
{
	size_t lo = 0, hi = o->nrefs, i;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->refs[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < o->nrefs && o->refs[i].addr == addr; i++)
		;
	*n = i - lo;
	return lo;
}

static const struct cfg_func *ref_func(const struct oracle *o, const struct insn_ref *r)
{
	return &o->prog.funcs[r->func];
}

static const struct cfg_insn *ref_insn(const struct oracle *o, const struct insn_ref *r)
{
	return &ref_func(o, r)->insns[r->insn];
}

static bool in_text(const struct oracle *o, uint64_t addr)
{
	return addr >= o->text->addr && addr < o->text->addr + o->text->size;
}

/* "name+0xoff" of the unstripped symbol at or below ADDR. */
static void describe(const struct oracle *o, uint64_t addr, char *buf, size_t len)
{
	size_t lo = 0, hi = o->names.nfuncs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->names.funcs[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo) {
		snprintf(buf, len, "?");
		return;
	}
	if (addr == o->names.funcs[lo - 1].addr)
		snprintf(buf, len, "%s", o->names.funcs[lo - 1].name);
	else
		snprintf(buf, len, "%s+0x%" PRIx64, o->names.funcs[lo - 1].name,
			 addr - o->names.funcs[lo - 1].addr);
}

static void miss(struct oracle *o, enum miss_class cls, uint64_t addr, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void miss(struct oracle *o, enum miss_class cls, uint64_t addr, const char *fmt, ...)
{
	char where[160], msg[256];
	va_list ap;

	o->misses[cls]++;
	if (o->printed++ >= MAX_PRINTED_MISSES)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	describe(o, addr, where, sizeof(where));
	printf("miss %-11s 0x%" PRIx64 " <%s>: %s\n", class_names[cls], addr, where, msg);
}

/* Does block B of F have an edge to the block starting at TARGET? With KIND >= 0, only an edge
 * of that kind counts; *OTHER_KIND is set to the kind of an edge of another kind. */
static bool has_edge_to(const struct cfg_func *f, uint32_t b, uint64_t target, int kind,
			int *other_kind)
{
	const struct cfg_block *bl = &f->blocks[b];
	uint32_t k;

	for (k = 0; k < bl->nsucc; k++) {
		const struct cfg_edge *e = &f->edges[f->succ[bl->first_succ + k]];

		/* A function that runs off its end records where control leaves it (an
		 * unresolved edge to EXIT with the outside address): that transfer is known. */
		if (e->to == f->nblocks && e->kind == EDGE_UNRESOLVED && e->target == target &&
		    (f->flags & CFG_FUNC_RUNS_OFF))
			return true;
		if (e->to >= f->nblocks || f->blocks[e->to].start != target)
			continue;
		if (kind < 0 || e->kind == kind)
			return true;
		if (other_kind)
			*other_kind = e->kind;
	}
	return false;
}

/* Is the jump at SITE (in block B of F) to TARGET a tail call the CFG knows about? */
static bool has_tail_call(const struct oracle *o, const struct cfg_func *f, uint32_t b,
			  uint64_t site, uint64_t target)
{
	const struct cfg_block *bl = &f->blocks[b];
	bool entry = cfg_program__func_at(&o->prog, target) != NULL;
	uint32_t k;

	for (k = 0; k < f->ncalls; k++) {
		const struct cfg_call *c = &f->calls[k];

		if (c->site != site || !c->tail)
			continue;
		if (c->target == target || (c->indirect && !c->target && entry))
			return true;
	}
	for (k = 0; k < bl->nsucc; k++) {
		const struct cfg_edge *e = &f->edges[f->succ[bl->first_succ + k]];

		if (e->kind != EDGE_TAIL_CALL && e->kind != EDGE_NORETURN)
			continue;
		if (e->target == target || ((e->flags & CFG_EDGE_INDIRECT) && !e->target && entry))
			return true;
	}
	return false;
}

/* (a) */
static void check_insns(struct oracle *o)
{
	size_t i, n, first;

	for (i = 0; i < o->prof.ninsns; i++) {
		uint64_t addr = o->prof.insns[i].addr;

		if (!in_text(o, addr))
			continue;
		o->checked[MISS_INSN]++;
		first = refs_at(o, addr, &n);
		if (n && cfg_func__is_insn_start(ref_func(o, &o->refs[first]), addr))
			continue;
		if (n) {
			miss(o, MISS_INSN, addr, "ran %" PRIu64 "x; indexed but not an insn start",
			     o->prof.insns[i].count);
			continue;
		}
		/* Inside a decoded instruction (misaligned) or not decoded at all? */
		{
			size_t j;

			for (j = first; j-- > 0 && o->refs[j].addr + 16 > addr;) {
				const struct cfg_insn *in = ref_insn(o, &o->refs[j]);

				if (in->addr < addr && in->addr + in->size > addr) {
					miss(o, MISS_INSN, addr,
					     "ran %" PRIu64 "x; INSIDE the instruction at 0x%" PRIx64
					     " of %s (misaligned decode)",
					     o->prof.insns[i].count, in->addr,
					     ref_func(o, &o->refs[j])->name);
					goto next;
				}
			}
		}
		miss(o, MISS_INSN, addr, "ran %" PRIu64 "x; not in any recovered function",
		     o->prof.insns[i].count);
next:;
	}
}

/* Is some CFG instruction at FROM the last of its block, with an edge or tail call to TO?
 * Writes the reason for a miss into WHY. */
static bool transfer_ok(struct oracle *o, uint64_t from, uint64_t to, char *why, size_t len)
{
	size_t first, n, k;
	bool at_end = false;

	first = refs_at(o, from, &n);
	if (!n) {
		snprintf(why, len, "source not decoded");
		return false;
	}
	for (k = first; k < first + n; k++) {
		const struct insn_ref *r = &o->refs[k];
		const struct cfg_func *f = ref_func(o, r);
		const struct cfg_insn *in = ref_insn(o, r);

		if (f->blocks[r->block].end != in->addr + in->size)
			continue;
		at_end = true;
		if (has_edge_to(f, r->block, to, -1, NULL) || has_tail_call(o, f, r->block, from, to))
			return true;
	}
	if (!at_end)
		snprintf(why, len, "source does not end a block (in %s)",
			 ref_func(o, &o->refs[first])->name);
	else
		snprintf(why, len, "no edge or tail call in %s%s", ref_func(o, &o->refs[first])->name,
			 n > 1 ? " (nor the other functions holding it)" : "");
	return false;
}

/* The control-flow kind of the instruction at ADDR, or -1 when not decoded. */
static int flow_at(const struct oracle *o, uint64_t addr)
{
	size_t n, first = refs_at(o, addr, &n);

	return n ? ref_insn(o, &o->refs[first])->flow : -1;
}

/* (b), and calls= whose site is a jump (callgrind's view of tail calls). */
static void check_jumps(struct oracle *o)
{
	char why[200];
	size_t i;

	for (i = 0; i < o->prof.njumps; i++) {
		const struct cg_jump *j = &o->prof.jumps[i];

		if (!j->taken || !in_text(o, j->from))
			continue;
		/* Callgrind shows the iterations of a rep-prefixed string instruction as jumps
		 * to itself; they are not control flow. */
		if (j->from == j->to && flow_at(o, j->from) == INSN_PLAIN)
			continue;
		o->checked[MISS_JUMP]++;
		if (!transfer_ok(o, j->from, j->to, why, sizeof(why)))
			miss(o, MISS_JUMP, j->from, "%s 0x%" PRIx64 " -> 0x%" PRIx64 " taken %" PRIu64
			     "x: %s", j->cond ? "jcnd" : "jump", j->from, j->to, j->taken, why);
	}
	for (i = 0; i < o->prof.ncalls; i++) {
		const struct cg_call *c = &o->prof.calls[i];
		int flow;

		if (!c->site_in || !c->target_in || !in_text(o, c->site))
			continue;
		flow = flow_at(o, c->site);
		if (flow != INSN_JMP && flow != INSN_JCC && flow != INSN_JMP_IND)
			continue;
		o->checked[MISS_JUMP]++;
		if (!transfer_ok(o, c->site, c->target, why, sizeof(why)))
			miss(o, MISS_JUMP, c->site, "tail call 0x%" PRIx64 " -> 0x%" PRIx64
			     " taken %" PRIu64 "x: %s", c->site, c->target, c->count, why);
	}
}

static size_t insn_index(const struct oracle *o, uint64_t addr)
{
	size_t lo = 0, hi = o->prof.ninsns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->prof.insns[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < o->prof.ninsns && o->prof.insns[lo].addr == addr ? lo : (size_t)-1;
}

/* Explained inflow of every executed instruction: jumps and calls to it. */
static int explain_inflow(struct oracle *o)
{
	size_t i, k;

	o->jumps_in = calloc(o->prof.ninsns + 1, sizeof(*o->jumps_in));
	o->calls_in = calloc(o->prof.ninsns + 1, sizeof(*o->calls_in));
	if (!o->jumps_in || !o->calls_in)
		return -ENOMEM;
	for (i = 0; i < o->prof.njumps; i++) {
		k = insn_index(o, o->prof.jumps[i].to);
		if (k != (size_t)-1)
			o->jumps_in[k] += o->prof.jumps[i].taken;
	}
	for (i = 0; i < o->prof.ncalls; i++) {
		if (!o->prof.calls[i].target_in)
			continue;
		k = insn_index(o, o->prof.calls[i].target);
		if (k != (size_t)-1)
			o->calls_in[k] += o->prof.calls[i].count;
	}
	return 0;
}

/* The edge kind a fall-through after an instruction of FLOW must have. */
static int fall_kind(int flow)
{
	switch (flow) {
	case INSN_CALL:
	case INSN_CALL_IND:
		return EDGE_CALL_RETURN;
	case INSN_JCC:
		return EDGE_NOT_TAKEN;
	case INSN_JMP: /* to the next instruction */
		return EDGE_JUMP;
	default:
		return EDGE_FALLTHROUGH;
	}
}

/* Flow of FLOW units from the instruction of ref R to the next instruction J: fine when J is
 * in R's block, or R's block has an edge of the right kind to the block starting at J. */
static bool fall_ok_in(const struct oracle *o, const struct insn_ref *r, uint64_t j,
		       int *other_kind)
{
	const struct cfg_func *f = ref_func(o, r);
	const struct cfg_insn *in = ref_insn(o, r);
	const struct cfg_block *bl = &f->blocks[r->block];

	if (j < bl->end)
		return true;
	if (has_edge_to(f, r->block, j, fall_kind(in->flow), other_kind))
		return true;
	/* A jcc whose target is the next instruction: either edge will do. */
	return in->flow == INSN_JCC && has_edge_to(f, r->block, j, EDGE_TAKEN, NULL);
}

/* Is IN a direct jmp to the very next instruction? Callgrind does not report such a jump
 * (it looks like a fall-through to it), so its flow must be checked as one. */
static bool jumps_to_next(const struct oracle *o, const struct cfg_insn *in)
{
	const uint8_t *p;
	size_t avail, i = 0;

	if (in->flow != INSN_JMP)
		return false;
	p = elf_image__code(&o->cfg_img, in->addr, &avail);
	if (!p || avail < in->size)
		return false;
	while (i < in->size && (p[i] == 0xf2 || p[i] == 0x3e || p[i] == 0x2e))
		i++; /* bnd and branch-hint prefixes */
	if (i + 2 == in->size && p[i] == 0xeb)
		return p[i + 1] == 0;
	if (i + 5 == in->size && p[i] == 0xe9)
		return !p[i + 1] && !p[i + 2] && !p[i + 3] && !p[i + 4];
	return false;
}

/* Can no control flow pass from the instruction of ref R to the next instruction? True for
 * returns, jumps (but a jump to the next instruction) and traps, and for calls of external
 * functions known not to return (the C++ throw functions among them). */
static bool cannot_fall(const struct oracle *o, const struct insn_ref *r)
{
	const struct cfg_func *f = ref_func(o, r);
	const struct cfg_insn *in = ref_insn(o, r);
	uint32_t k;

	switch (in->flow) {
	case INSN_JMP:
		return !jumps_to_next(o, in);
	case INSN_RET:
	case INSN_JMP_IND:
	case INSN_TRAP:
		return true;
	case INSN_CALL:
	case INSN_CALL_IND:
		for (k = 0; k < f->ncalls; k++)
			if (f->calls[k].site == in->addr && f->calls[k].external &&
			    f->calls[k].noreturn)
				return true;
		return false;
	default:
		return false;
	}
}

static bool block_start_at(const struct oracle *o, uint64_t addr)
{
	size_t n, k, first = refs_at(o, addr, &n);

	for (k = first; k < first + n; k++)
		if (ref_func(o, &o->refs[k])->blocks[o->refs[k].block].start == addr)
			return true;
	return false;
}

/* (c), seen from the receiving instruction J. Flow into J that no jump or call explains came
 * from the instruction before J, unless nothing can fall through from there: then it came
 * from outside any recorded transfer (the C++ unwinder entering a landing pad), and J must
 * be a block start. */
static void check_fall_in(struct oracle *o, size_t idx)
{
	uint64_t j = o->prof.insns[idx].addr, count = o->prof.insns[idx].count;
	uint64_t explained = o->jumps_in[idx] + o->calls_in[idx], flow;
	size_t n, k, lo;
	bool any_prev = false, all_stop = true;
	int other = -1, prev_flow = -1;
	uint64_t prev_addr = 0;

	if (explained > count) {
		o->negative_inflow++;
		return;
	}
	flow = count - explained;
	if (!flow)
		return;
	refs_at(o, j, &n);
	if (!n)
		return; /* an (a) miss already */
	o->checked[MISS_FALL]++;
	/* Candidate previous instructions: those of any function ending exactly at J. */
	lo = refs_at(o, j >= 16 ? j - 16 : 0, &n);
	for (k = lo; k < o->nrefs && o->refs[k].addr < j; k++) {
		const struct insn_ref *r = &o->refs[k];
		const struct cfg_insn *in = ref_insn(o, r);

		if (in->addr + in->size != j)
			continue;
		if (!any_prev) {
			prev_flow = in->flow;
			prev_addr = in->addr;
		}
		any_prev = true;
		if (fall_ok_in(o, r, j, &other))
			return;
		if (!cannot_fall(o, r)) {
			all_stop = false;
			prev_flow = in->flow;
			prev_addr = in->addr;
		}
	}
	if (all_stop) {
		if (!any_prev) {
			/* Undecoded code that ran just before J is an (a) miss already. */
			for (k = 1; k < 16 && k <= j; k++)
				if (cg_profile__count(&o->prof, j - k))
					return;
		}
		if (block_start_at(o, j)) {
			if (!o->outside_entries++)
				o->first_outside = j;
			return;
		}
		miss(o, MISS_FALL, j, "entered %" PRIu64 "x from outside any jump, call or "
		     "fall-through, but is not a block start", flow);
		return;
	}
	if (other >= 0)
		miss(o, MISS_FALL, prev_addr, "0x%" PRIx64 " -> 0x%" PRIx64 " (%" PRIu64
		     "x) is a %s edge, expected %s", prev_addr, j, flow,
		     cfg_edge_kind__name(other), cfg_edge_kind__name(fall_kind(prev_flow)));
	else
		miss(o, MISS_FALL, prev_addr, "0x%" PRIx64 " -> 0x%" PRIx64 " (%" PRIu64
		     "x): no %s edge", prev_addr, j, flow,
		     cfg_edge_kind__name(fall_kind(prev_flow)));
}

/* (c), seen from a conditional jump I: it ran more often than it jumped. */
static void check_not_taken(struct oracle *o, size_t idx)
{
	uint64_t i = o->prof.insns[idx].addr, count = o->prof.insns[idx].count, out = 0;
	size_t first, n, k;
	long jk;
	int other = -1;

	first = refs_at(o, i, &n);
	if (!n || ref_insn(o, &o->refs[first])->flow != INSN_JCC)
		return;
	jk = cg_profile__first_jump(&o->prof, i);
	for (; jk >= 0 && (size_t)jk < o->prof.njumps && o->prof.jumps[jk].from == i; jk++)
		out += o->prof.jumps[jk].taken;
	for (k = 0; k < o->prof.ncalls; k++)
		if (o->prof.calls[k].site_in && o->prof.calls[k].site == i)
			out += o->prof.calls[k].count;
	if (out >= count)
		return;
	o->checked[MISS_FALL]++;
	for (k = first; k < first + n; k++) {
		const struct cfg_insn *in = ref_insn(o, &o->refs[k]);

		if (fall_ok_in(o, &o->refs[k], in->addr + in->size, &other))
			return;
	}
	miss(o, MISS_FALL, i, "jcc not taken %" PRIu64 "x but no not_taken edge%s%s",
	     count - out, other >= 0 ? ", only " : "", other >= 0 ?
	     cfg_edge_kind__name(other) : "");
}

/* (d): direct calls from .text into the binary must be call sites of the CFG. */
static void check_calls(struct oracle *o)
{
	size_t i, first, n, k;
	uint32_t c;

	for (i = 0; i < o->prof.ncalls; i++) {
		const struct cg_call *cc = &o->prof.calls[i];
		bool direct, found = false;
		int flow;

		if (!cc->site_in || !cc->target_in || !in_text(o, cc->site))
			continue;
		flow = flow_at(o, cc->site);
		if (flow != INSN_CALL && flow != INSN_CALL_IND)
			continue; /* jumps were checked as such; undecoded sites are (a) misses */
		direct = flow == INSN_CALL;
		o->checked[MISS_CALL]++;
		first = refs_at(o, cc->site, &n);
		for (k = first; k < first + n && !found; k++) {
			const struct cfg_func *f = ref_func(o, &o->refs[k]);

			for (c = 0; c < f->ncalls && !found; c++)
				if (f->calls[c].site == cc->site &&
				    (!direct || f->calls[c].target == cc->target))
					found = true;
		}
		if (!found)
			miss(o, MISS_CALL, cc->site, "%s call 0x%" PRIx64 " -> 0x%" PRIx64 " (%" PRIu64
			     "x) is not a call site of the CFG", direct ? "direct" : "indirect",
			     cc->site, cc->target, cc->count);
	}
}

static int load_image(struct elf_image *img, const char *path)
{
	if (elf_image__open(img, path)) {
		fprintf(stderr, "cfg_oracle: %s\n", cfg_strerror());
		return -1;
	}
	return 0;
}

static int run_check(const char *binary, const char *cg_file, const char *cfg_binary)
{
	struct oracle o;
	unsigned long total = 0;
	size_t i;
	int ret = 2, cls;

	memset(&o, 0, sizeof(o));
	if (load_image(&o.img, binary))
		goto out;
	if (symbols__load(&o.names, &o.img)) {
		fprintf(stderr, "cfg_oracle: %s\n", cfg_strerror());
		goto out;
	}
	o.text = elf_image__section_named(&o.img, ".text");
	if (!o.text || !o.text->exec) {
		fprintf(stderr, "cfg_oracle: %s: no executable .text section\n", binary);
		goto out;
	}
	if (load_image(&o.cfg_img, cfg_binary))
		goto out;
	if (cfg_program__build(&o.prog, &o.cfg_img, NULL)) {
		fprintf(stderr, "cfg_oracle: %s: %s\n", cfg_binary, cfg_strerror());
		goto out;
	}
	if (build_refs(&o)) {
		fprintf(stderr, "cfg_oracle: out of memory\n");
		goto out;
	}
	if (cg_profile__load(&o.prof, cg_file, binary)) {
		fprintf(stderr, "cfg_oracle: %s\n", o.prof.error);
		goto out;
	}
	if (!cg_profile__whole(&o.prof)) {
		fprintf(stderr, "cfg_oracle: %s: parsed Ir total %" PRIu64 " != summary %" PRIu64
			"\n", cg_file, o.prof.total_ir, o.prof.summary_ir);
		goto out;
	}
	if (!o.prof.ninsns) {
		fprintf(stderr, "cfg_oracle: %s: no costs for object '%s'\n", cg_file, binary);
		goto out;
	}
	if (explain_inflow(&o)) {
		fprintf(stderr, "cfg_oracle: out of memory\n");
		goto out;
	}

	check_insns(&o);
	check_jumps(&o);
	for (i = 0; i < o.prof.ninsns; i++) {
		if (!in_text(&o, o.prof.insns[i].addr))
			continue;
		check_fall_in(&o, i);
		check_not_taken(&o, i);
	}
	check_calls(&o);

	for (cls = 0; cls < MISS_CLASS_COUNT; cls++)
		total += o.misses[cls];
	if (o.printed > MAX_PRINTED_MISSES)
		printf("... %lu more misses not shown\n", o.printed - MAX_PRINTED_MISSES);
	printf("cfg_oracle %s%s%s: funcs %zu, insns %lu, jumps %lu, fallthroughs %lu, calls %lu;"
	       " misses: insn %lu, jump %lu, fallthrough %lu, call %lu%s\n",
	       binary, cfg_binary != binary ? " cfg " : "", cfg_binary != binary ? cfg_binary : "",
	       o.prog.nfuncs, o.checked[MISS_INSN], o.checked[MISS_JUMP], o.checked[MISS_FALL],
	       o.checked[MISS_CALL], o.misses[MISS_INSN], o.misses[MISS_JUMP],
	       o.misses[MISS_FALL], o.misses[MISS_CALL], total ? " FAIL" : " ok");
	if (o.outside_entries) {
		char where[160];

		describe(&o, o.first_outside, where, sizeof(where));
		printf("note: %lu block start(s) entered from outside recorded flow (unwinder?), "
		       "first 0x%" PRIx64 " <%s>\n", o.outside_entries, o.first_outside, where);
	}
	if (o.negative_inflow)
		printf("note: %lu instructions received more jumps/calls than executions\n",
		       o.negative_inflow);
	ret = total ? 1 : 0;
out:
	free(o.jumps_in);
	free(o.calls_in);
	free(o.refs);
	cg_profile__free(&o.prof);
	cfg_program__free(&o.prog);
	symbols__free(&o.names);
	elf_image__close(&o.cfg_img);
	elf_image__close(&o.img);
	return ret;
}

/* Is ADDR the start of a block of some function of PROG? */
static bool block_start_anywhere(const struct cfg_program *prog, uint64_t addr)
{
	size_t i;

	for (i = 0; i < prog->nfuncs; i++)
		if (cfg_func__block_at(&prog->funcs[i], addr) >= 0)
			return true;
	return false;
}

static int run_match(const char *unstripped, const char *stripped)
{
	struct elf_image uimg, simg;
	struct symbols usyms;
	struct cfg_program sprog;
	size_t i, nu = 0, nfound = 0, nfrag = 0, nfrag_found = 0, printed = 0;
	int ret = 2;

	memset(&uimg, 0, sizeof(uimg));
	memset(&simg, 0, sizeof(simg));
	memset(&usyms, 0, sizeof(usyms));
	memset(&sprog, 0, sizeof(sprog));
	if (load_image(&uimg, unstripped))
		goto out;
	if (symbols__load(&usyms, &uimg)) {
		fprintf(stderr, "cfg_oracle: %s: %s\n", unstripped, cfg_strerror());
		goto out;
	}
	if (usyms.stripped) {
		fprintf(stderr, "cfg_oracle: %s: has no .symtab\n", unstripped);
		goto out;
	}
	if (load_image(&simg, stripped))
		goto out;
	if (cfg_program__build(&sprog, &simg, NULL)) {
		fprintf(stderr, "cfg_oracle: %s: %s\n", stripped, cfg_strerror());
		goto out;
	}
	for (i = 0; i < usyms.nfuncs; i++) {
		const struct func_start *fs = &usyms.funcs[i];
		bool found, said = false;

		if ((fs->sources & (FUNC_SRC_SYMTAB | FUNC_SRC_FDE)) !=
		    (FUNC_SRC_SYMTAB | FUNC_SRC_FDE))
			continue;
		nu++;
		if (fs->fragment) {
			/* A cold part is built into its parent: look for it as a block. Found
			 * as a function of its own, or in a parent, that runs off into other
			 * code or is entered in the middle (block counts only, or excluded),
			 * it is not: the symbols say the two are one function. */
			const struct cfg_func *own = cfg_program__func_at(&sprog, fs->addr);
			const struct cfg_func *par =
				fs->parent ? cfg_program__func_at(&sprog, fs->parent) : NULL;
			const uint32_t split = CFG_FUNC_RUNS_OFF | CFG_FUNC_FOREIGN_ENTRY;

			nfrag++;
			found = own || block_start_anywhere(&sprog, fs->addr);
			if (found && ((own && (own->flags & split)) || (par && (par->flags & split)))) {
				found = false;
				if (printed++ < MAX_PRINTED_MISSING_FUNCS)
					printf("split 0x%" PRIx64 " %s: a function of its own or its "
					       "parent runs off or is entered mid-range in the "
					       "stripped CFG\n",
					       fs->addr, fs->name);
				said = true;
			}
			nfrag_found += found;
		} else {
			found = cfg_program__func_at(&sprog, fs->addr) != NULL;
		}
		nfound += found;
		if (!found && !said && printed++ < MAX_PRINTED_MISSING_FUNCS)
			printf("missing 0x%" PRIx64 " %s%s\n", fs->addr, fs->name,
			       fs->fragment ? " (cold fragment, no block)" : "");
	}
	if (printed > MAX_PRINTED_MISSING_FUNCS)
		printf("... %zu more missing\n", printed - MAX_PRINTED_MISSING_FUNCS);
	printf("match-stripped %s: symtab+fde funcs %zu, found in stripped %zu (%.1f%%), "
	       "cold fragments %zu/%zu%s\n",
	       stripped, nu, nfound, nu ? 100.0 * nfound / nu : 100.0, nfrag_found, nfrag,
	       nfound * 100 >= nu * 99 ? " ok" : " FAIL");
	ret = nfound * 100 >= nu * 99 ? 0 : 1;
out:
	cfg_program__free(&sprog);
	symbols__free(&usyms);
	elf_image__close(&simg);
	elf_image__close(&uimg);
	return ret;
}

int main(int argc, char **argv)
{
	const char *binary = NULL, *cg = NULL, *cfg_binary = NULL;
	int i;

	if (argc == 4 && !strcmp(argv[1], "--match-stripped"))
		return run_match(argv[2], argv[3]);
	for (i = 1; i < argc; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "--binary"))
			binary = argv[++i];
		else if (i + 1 < argc && !strcmp(argv[i], "--callgrind"))
			cg = argv[++i];
		else if (i + 1 < argc && !strcmp(argv[i], "--cfg-binary"))
			cfg_binary = argv[++i];
		else {
			usage();
			return 2;
		}
	}
	if (!binary || !cg) {
		usage();
		return 2;
	}
	return run_check(binary, cg, cfg_binary ? cfg_binary : binary);
}
