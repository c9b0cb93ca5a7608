/*
 * Building the CFG of every function (see cfg.h): recursive traversal from each function
 * entry, jump tables resolved after the rest of the function is known (so the bound proof
 * sees every predecessor), blocks cut at leaders and after every control transfer, kinded
 * edges, call sites, and the no-return fixpoint: every function of the binary starts as
 * "never returns" and is flipped once a return becomes reachable, which rebuilds its callers,
 * until nothing changes (a greatest fixpoint: functions that truly never return stay so).
 */
#include "cfg.h"
#include "addr_map.h"
#include "decode.h"
#include "eh_lsda.h"
#include "error.h"
#include "jump_table.h"
#include "noreturn.h"
#include "sort.h"
#include "stack_height.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define VEC(T)                                                                                     \
	struct {                                                                                   \
		T *v;                                                                              \
		size_t n, cap;                                                                     \
	}

#define VEC_PUSH(vec, val)                                                                         \
	({                                                                                         \
		int _rc = 0;                                                                       \
		if ((vec).n == (vec).cap) {                                                        \
			size_t _c = (vec).cap ? 2 * (vec).cap : 32;                                \
			void *_p = realloc((vec).v, _c * sizeof(*(vec).v));                        \
			if (_p) {                                                                  \
				(vec).v = _p;                                                      \
				(vec).cap = _c;                                                    \
			} else {                                                                   \
				_rc = -ENOMEM;                                                     \
			}                                                                          \
		}                                                                                  \
		if (!_rc)                                                                          \
			(vec).v[(vec).n++] = (val);                                                \
		_rc;                                                                               \
	})

#define PLT_MAX 8 /* .plt sections the builder keeps ranges of (see in_plt) */

/* Callee status in the no-return fixpoint. */
enum { ST_NORETURN = 0, ST_RETURNS = 1, ST_KNOWN_NORETURN = 2 };

struct jref {
	uint64_t src;
	uint32_t next;  /* 1 + index of the previous source of the same target, 0 at the end */
	uint32_t count; /* sources of the same target up to this one */
};

struct table_rec {
	struct cfg_jump_table jt;
	uint64_t *targets;
};

struct builder {
	struct cfg_program *prog;
	const struct cfg_options *opts; /* may be NULL */
	const struct elf_image *img;
	struct symbols *syms;
	struct decoder dec;
	struct addr_map status;    /* function entry -> ST_* */
	struct addr_map func_index; /* function entry -> index in funcs */
	VEC(struct cfg_func) funcs;
	VEC(uint64_t) new_starts;  /* call targets that are not known function starts yet */
	VEC(uint64_t) foreign;     /* pairs (address, function entry): code of that function
				    * entered by another function that runs off into it */
	bool assume_returns;       /* step 1 of build_all: internal callees all return */
	/* The .plt* sections' address ranges, when no two sections overlap (then an address is
	 * in one exactly when elf_image__section_at finds it); else plt_exact is false. */
	uint64_t plt_lo[PLT_MAX], plt_hi[PLT_MAX];
	unsigned nplt;
	bool plt_exact;
	struct addr_map ext_ret;   /* callee without a status -> 1 returns, 0 not (by name) ... */
	struct addr_map slot_ret;  /* ... and the same for GOT slots */

	/* Scratch for the function being built. */
	uint64_t entry;
	const struct func_start *self; /* symbols__func_at(entry), set with entry */
	uint64_t next_start;       /* the first function start above entry (UINT64_MAX: none) */
	struct addr_map visited;   /* addr -> 1: walked to (an instruction, or code that is bad
				    * or outside the function) */
	struct addr_map ft_pred;   /* addr -> the insn that falls through into it */
	struct addr_map ft_alt;    /* addr -> a second insn falling through into it (a prefix
				    * pair's two instructions end together), FT_MANY for more */
	struct addr_map jump_head; /* addr -> 1 + index into jrefs of its last intra jump source
				    * (present: some intra jump goes there) */
	VEC(struct jref) jrefs;    /* every intra jump source, chained per target */
	struct addr_map roots;     /* addr -> 1: entered from outside (landing pads) */
	struct addr_map bad;       /* addr -> 1: a target that is not decodable code */
	struct addr_map block_of;  /* block start -> block id, while assembling */
	struct addr_map tablelike; /* indirect jump -> 1: looks like a table, bound unproven */
	struct addr_map outside;   /* addr -> 1: reached, but outside the function (see walk) */
	struct addr_map status_nr; /* call -> 1: no-return by its constant status argument */
	struct addr_map status_veto; /* call -> 1: that proof failed once the code was complete
				      * (kept for the whole build of one function) */
	VEC(uint64_t) work;
	VEC(uint64_t) insns;       /* visited instruction addresses */
	VEC(uint64_t) pending;     /* indirect jumps not yet resolved */
	VEC(struct table_rec) tables;
	bool overlap;
	struct jt_cfg jt_cfg;      /* how the jump-table resolver asks about predecessors */
	struct eh_callsite *callsites; /* C++ call sites with landing pads, sorted by start */
	size_t ncallsites;
	struct addr_map eh_of;     /* call insn -> index into callsites, in the current function */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool in_plt_section(const struct elf_image *img, uint64_t addr)
{
	const struct elf_section *s = elf_image__section_at(img, addr);

	return s && strncmp(s->name, ".plt", 4) == 0;
}

/* Is ADDR inside a PLT section (.plt, .plt.got, .plt.sec)? */
static bool in_plt(const struct builder *b, uint64_t addr)
{
	if (!b->plt_exact)
		return in_plt_section(b->img, addr);
	for (unsigned i = 0; i < b->nplt; i++)
		if (addr >= b->plt_lo[i] && addr < b->plt_hi[i])
			return true;
	return false;
}

/* Fills B's PLT ranges from its image's section table. */
static void find_plt(struct builder *b)
{
	const struct elf_image *img = b->img;

	b->plt_exact = true;
	b->nplt = 0;
	for (size_t k = 0; k < img->nsecs; k++) {
		const struct elf_section *s = &img->secs[k];

		if (k && (s->addr < img->secs[k - 1].addr ||
			  s->addr - img->secs[k - 1].addr < img->secs[k - 1].size))
			b->plt_exact = false;
		if (strncmp(s->name, ".plt", 4) || !s->size)
			continue;
		if (b->nplt == PLT_MAX) {
			b->plt_exact = false;
			continue;
		}
		b->plt_lo[b->nplt] = s->addr;
		b->plt_hi[b->nplt++] = s->addr + s->size;
	}
}

/* A jump to T leaves the function being built (a tail call) when T is another function's
 * entry or a PLT stub; a cold fragment of this function stays inside. */
static bool is_tail_target(struct builder *b, uint64_t t)
{
	const struct func_start *fs;

	if (t == b->entry)
		return false;
	if (in_plt(b, t))
		return true;
	if (t > b->entry && t < b->next_start)
		return false; /* no start there */
	fs = symbols__func_at(b->syms, t);
	if (!fs)
		return false;
	return !(fs->fragment && fs->parent == b->entry);
}

static const char *callee_name(struct builder *b, uint64_t target, bool slot)
{
	const struct func_start *fs;

	if (slot)
		return symbols__got_name(b->syms, target);
	if (in_plt(b, target))
		return symbols__plt_name(b->syms, target);
	fs = symbols__func_at(b->syms, target);
	return fs ? fs->name : NULL;
}

/* Does a call (or tail call) to TARGET return? Internal functions answer from the fixpoint. */
static bool callee_returns(struct builder *b, uint64_t target, bool slot, bool indirect)
{
	uint32_t st;
	const char *name;

	if (indirect && !slot)
		return true;
	if (!slot && addr_map__get(&b->status, target, &st))
		return st == ST_RETURNS || (st == ST_NORETURN && b->assume_returns);
	/* The name of a target without a status is stable: symbols added later are functions
	 * with a status, and their synthesised names are no known no-return function's. */
	if (addr_map__get(slot ? &b->slot_ret : &b->ext_ret, target, &st))
		return st == 1;
	name = callee_name(b, target, slot);
	st = noreturn__known(name) ? 0 : 1;
	addr_map__put(slot ? &b->slot_ret : &b->ext_ret, target, st); /* a cache: may fail */
	/* External, or not a function we build (e.g. outside the code): assume it returns. */
	return st == 1;
}

static int note_jump(struct builder *b, uint64_t src, uint64_t t)
{
	bool fresh;
	uint32_t *head = addr_map__ref(&b->jump_head, t, &fresh);
	struct jref r = { .src = src, .count = 1 };

	if (!head)
		return -ENOMEM;
	if (!fresh) {
		r.next = *head;
		r.count = b->jrefs.v[*head - 1].count + 1;
	}
	if (VEC_PUSH(b->jrefs, r))
		return -ENOMEM;
	*head = (uint32_t)b->jrefs.n;
	return VEC_PUSH(b->work, t);
}

#define FT_MANY 0xff /* ft_alt: more than two instructions fall through into the address */

static size_t all_preds(void *ctx, uint64_t addr, uint64_t *out, size_t max)
{
	struct builder *b = ctx;
	uint32_t ft, i = 0, one;
	size_t n = 0;

	if (addr == b->entry || addr_map__get(&b->roots, addr, &one))
		return SIZE_MAX;
	if (addr_map__get(&b->ft_alt, addr, &ft)) {
		if (ft == FT_MANY)
			return SIZE_MAX;
		if (n++ < max)
			out[n - 1] = addr - ft;
	}
	if (addr_map__get(&b->ft_pred, addr, &ft) && n++ < max)
		out[n - 1] = addr - ft;
	addr_map__get(&b->jump_head, addr, &i);
	for (; i; i = b->jrefs.v[i - 1].next)
		if (n++ < max)
			out[n - 1] = b->jrefs.v[i - 1].src;
	return n;
}

static uint64_t table_limit(void *ctx, uint64_t addr)
{
	const struct builder *b = ctx;

	return symbols__object_remaining(b->syms, addr);
}

/* Inside the symbol or FDE range of the function being built, or of one of its fragments. */
static bool in_function(void *ctx, uint64_t addr)
{
	const struct builder *b = ctx;
	const struct func_start *fs = b->self;
	size_t lo = 0, hi = b->syms->nfuncs;

	if (fs && fs->size && addr >= fs->addr && addr - fs->addr < fs->size)
		return true;
	/* The nearest start at or below ADDR: a fragment of this function covering it. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->syms->funcs[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	fs = &b->syms->funcs[lo - 1];
	return fs->fragment && fs->parent == b->entry && fs->size && addr - fs->addr < fs->size;
}

static bool unique_pred(void *ctx, uint64_t addr, uint64_t *pred)
{
	struct builder *b = ctx;
	uint32_t n = 0, ft, head = 0, one;
	bool has_ft = addr_map__get(&b->ft_pred, addr, &ft);

	if (addr == b->entry || addr_map__get(&b->roots, addr, &one) ||
	    addr_map__get(&b->ft_alt, addr, &one))
		return false;
	if (addr_map__get(&b->jump_head, addr, &head))
		n = b->jrefs.v[head - 1].count;
	if (n + has_ft != 1)
		return false;
	if (has_ft) {
		*pred = addr - ft;
	} else {
		/* The source as a 32-bit offset from ADDR, as jumps reach. */
		uint32_t delta = (uint32_t)(int32_t)(int64_t)(b->jrefs.v[head - 1].src - addr);

		*pred = addr + (uint64_t)(int64_t)(int32_t)delta;
	}
	return true;
}

/*
 * Where a function ends. Code reached from a function's entry (by fall-through, jump or a
 * call's return) belongs to it only while it stays inside the function: the function's own
 * entry, its symbol or FDE range when that size is known (or one of its cold fragments), and
 * never another function's entry. An instruction outside is never decoded as part of the
 * function: a call whose fall-through would leave is a no-return call (gcc emitted nothing
 * after it because it knew the callee does not return there, e.g. error(1, ...), or a helper
 * that always exits); any other path that leaves (a plain fall-through, a jcc's not-taken
 * side, a jump into the middle of other code) becomes an EDGE_UNRESOLVED edge to EXIT and
 * the function is flagged CFG_FUNC_RUNS_OFF (block counts only), unless the code it reached
 * is a cold part of it (merge_fragments then rebuilds it with that part). Before this rule
 * such a path silently took in the next function's code: its executions, entered there by
 * calls, were counted as this function's, and flow could still be conserved (find's main
 * ran past `call error` into _start, and main was reported invoked twice).
 */
static bool leaves_function(struct builder *b, uint64_t a)
{
	const struct func_start *fs, *self;

	if (a == b->entry)
		return false;
	self = b->self;
	/* No start lies strictly between the entry and the next start. */
	if (a > b->entry && a < b->next_start)
		return self && self->size && !in_function(b, a);
	fs = symbols__func_at(b->syms, a);
	if (fs && !(fs->fragment && fs->parent == b->entry))
		return true;
	return self && self->size && !in_function(b, a);
}

/* Does the fall-through of a call at NEXT leave the function, possibly after alignment
 * padding (nops, int3) that runs up to the end of the function or another function's entry? */
static bool falls_off(struct builder *b, uint64_t next)
{
	for (int k = 0; k < 64; k++) {
		const struct dinsn *di;

		if (leaves_function(b, next))
			return true;
		di = decoder__get(&b->dec, next);
		if (!di || !(di->pad & DINSN_PAD_NOP_INT3))
			return false;
		next += di->size;
	}
	return false;
}

/* GNU error(status, errnum, fmt, ...) and error_at_line(status, ...) (and gnulib's verror,
 * verror_at_line) call exit(status) when status is not 0. */
static bool is_error_like(const char *name)
{
	return name && (strcmp(name, "error") == 0 || strcmp(name, "error_at_line") == 0 ||
			strcmp(name, "verror") == 0 || strcmp(name, "verror_at_line") == 0);
}

/* Is the call (or tail call) DI a call of the C library's error() or error_at_line() whose
 * status (edi) is a non-zero constant on every path to it? Only external callees (PLT stub
 * or GOT slot) are judged by name: a function of the binary is judged by its own code. */
static bool status_noreturn(struct builder *b, const struct dinsn *di)
{
	bool slot = di->rip_slot;
	bool ind = di->flow == INSN_CALL_IND || di->flow == INSN_JMP_IND;
	int64_t v;
	uint32_t one;

	if ((ind && !slot) || (!slot && !in_plt(b, di->target)))
		return false;
	if (!is_error_like(callee_name(b, di->target, slot)))
		return false;
	if (addr_map__get(&b->status_veto, di->addr, &one))
		return false;
	if (jump_table__reg_const(&b->dec, &b->jt_cfg, di->addr, 7, &v) || (int32_t)v == 0)
		return false;
	return addr_map__put(&b->status_nr, di->addr, 1) == 0;
}

/* Does the call or tail call DI (a copy: decoding invalidates the cache's pointers) return to
 * its caller? Sets *WHY to the enum cfg_noreturn_why when it does not. */
static bool site_returns(struct builder *b, const struct dinsn *di, bool tail, uint8_t *why)
{
	bool slot = di->rip_slot;
	bool ind = di->flow == INSN_CALL_IND || di->flow == INSN_JMP_IND;
	uint8_t w = CFG_NORET_NONE;

	if (!callee_returns(b, ind && !slot ? 0 : di->target, slot, ind))
		w = CFG_NORET_CALLEE;
	else if (status_noreturn(b, di))
		w = CFG_NORET_STATUS;
	else if (!tail && falls_off(b, di->addr + di->size))
		w = CFG_NORET_LAYOUT;
	if (why)
		*why = w;
	return w == CFG_NORET_NONE;
}

/* Once the function's code is complete: does every no-return judgement made from a status
 * argument still hold with every predecessor known? A failed one is vetoed for the rest of
 * this function's build (the caller starts over). */
static bool status_proofs_hold(struct builder *b)
{
	bool ok = true;

	for (size_t i = 0; i < b->insns.n; i++) {
		uint64_t a = b->insns.v[i];
		uint32_t one;
		int64_t v;

		if (!addr_map__get(&b->status_nr, a, &one))
			continue;
		if (jump_table__reg_const(&b->dec, &b->jt_cfg, a, 7, &v) || (int32_t)v == 0) {
			addr_map__put(&b->status_veto, a, 1);
			ok = false;
		}
	}
	return ok;
}

static void reset_scratch(struct builder *b, uint64_t entry)
{
	size_t i;

	b->entry = entry;
	/* Symbols are only added between builds (build_all): the pointer holds for this one. */
	b->self = symbols__func_at(b->syms, entry);
	i = b->self ? (size_t)(b->self - b->syms->funcs) + 1 : 0;
	while (i < b->syms->nfuncs && b->syms->funcs[i].addr <= entry)
		i++;
	b->next_start = i < b->syms->nfuncs ? b->syms->funcs[i].addr : UINT64_MAX;
	addr_map__clear(&b->visited);
	addr_map__clear(&b->ft_pred);
	addr_map__clear(&b->ft_alt);
	addr_map__clear(&b->jump_head);
	addr_map__clear(&b->roots);
	addr_map__clear(&b->eh_of);
	b->jrefs.n = 0;
	addr_map__clear(&b->bad);
	addr_map__clear(&b->block_of);
	addr_map__clear(&b->tablelike);
	addr_map__clear(&b->outside);
	addr_map__clear(&b->status_nr);
	b->work.n = b->insns.n = b->pending.n = 0;
	for (i = 0; i < b->tables.n; i++)
		free(b->tables.v[i].targets);
	b->tables.n = 0;
	b->overlap = false;
}

/* The landing pad of the call at A, or 0 when no C++ call site covers A. */
static size_t callsite_of(const struct builder *b, uint64_t a)
{
	size_t lo = 0, hi = b->ncallsites;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->callsites[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && a < b->callsites[lo - 1].end ? lo : 0;
}

/* A call that may throw: its landing pad becomes a root of the function (entered by the
 * unwinder, so no instruction is its predecessor) and the target of an exception edge. */
static int note_landing_pad(struct builder *b, uint64_t call)
{
	size_t cs = b->ncallsites ? callsite_of(b, call) : 0;
	uint64_t lp;

	if (!cs)
		return 0;
	lp = b->callsites[cs - 1].lp;
	if (!elf_image__code(b->img, lp, &(size_t){ 0 }))
		return 0;
	if (addr_map__put(&b->eh_of, call, (uint32_t)(cs - 1)) ||
	    addr_map__put(&b->roots, lp, 1))
		return -ENOMEM;
	return VEC_PUSH(b->work, lp);
}

/* Records that an instruction of SIZE bytes falls through into NEXT. Two different ones do
 * only when instructions overlap (a prefix pair, see assemble): both are kept. */
static int note_fall(struct builder *b, uint64_t next, uint8_t size)
{
	bool fresh;
	uint32_t *ft = addr_map__ref(&b->ft_pred, next, &fresh), *alt;

	if (!ft)
		return -ENOMEM;
	if (fresh || *ft == size) {
		*ft = size;
		return 0;
	}
	alt = addr_map__ref(&b->ft_alt, next, &fresh);
	if (!alt)
		return -ENOMEM;
	*alt = !fresh && *alt != size ? FT_MANY : size;
	return 0;
}

/* Walks straight-line code from A until a transfer ends the path. */
static int walk(struct builder *b, uint64_t a)
{
	int err;

	for (;;) {
		bool fresh;
		uint32_t *seen = addr_map__ref(&b->visited, a, &fresh);
		const struct dinsn *di;
		struct dinsn cur;
		uint64_t next;

		if (!seen)
			return -ENOMEM;
		if (!fresh)
			return 0;
		/* Marked before the checks: where the path ends, it ends again next time. */
		*seen = 1;

		if (leaves_function(b, a))
			return addr_map__put(&b->outside, a, 1);
		di = decoder__get(&b->dec, a);
		if (!di)
			return addr_map__put(&b->bad, a, 1);
		cur = *di;
		di = &cur;
		if (VEC_PUSH(b->insns, a))
			return -ENOMEM;
		next = a + di->size;
		switch (di->flow) {
		case INSN_JCC:
			if (!is_tail_target(b, di->target) && (err = note_jump(b, a, di->target)))
				return err;
			break;
		case INSN_JMP:
			if (!is_tail_target(b, di->target))
				return note_jump(b, a, di->target);
			return 0;
		case INSN_JMP_IND:
			return di->rip_slot ? 0 : VEC_PUSH(b->pending, a);
		case INSN_CALL:
			if ((err = note_landing_pad(b, a)))
				return err;
			if (!in_plt(b, di->target) && !symbols__func_at(b->syms, di->target) &&
			    elf_image__code(b->img, di->target, &(size_t){ 0 }) &&
			    (err = VEC_PUSH(b->new_starts, di->target)))
				return err;
			if (!site_returns(b, di, false, NULL))
				return 0;
			break;
		case INSN_CALL_IND:
			if ((err = note_landing_pad(b, a)))
				return err;
			if (!site_returns(b, di, false, NULL))
				return 0;
			break;
		case INSN_RET:
		case INSN_TRAP:
			return 0;
		default:
			break;
		}
		if ((err = note_fall(b, next, di->size)))
			return err;
		a = next;
	}
}

static int resolve_tables(struct builder *b, bool *grew)
{
	size_t i, k;
	int err;

	*grew = false;
	for (i = 0; i < b->pending.n; i++) {
		struct table_rec rec = { 0 };
		uint64_t j = b->pending.v[i];
		bool done = false;

		for (k = 0; k < b->tables.n; k++)
			done |= b->tables.v[k].jt.jump == j;
		if (done)
			continue;
		err = jump_table__resolve(&b->dec, j, &b->jt_cfg, &rec.jt, &rec.targets);
		if (err == -ERANGE) {
			if (addr_map__put(&b->tablelike, j, 1))
				return -ENOMEM;
			continue;
		}
		if (err == -ENOENT)
			continue;
		if (err)
			return err;
		if (VEC_PUSH(b->tables, rec)) {
			free(rec.targets);
			return -ENOMEM;
		}
		for (k = 0; k < rec.jt.entries; k++) {
			bool dup = false;

			for (size_t m = 0; m < k && !dup; m++)
				dup = rec.targets[m] == rec.targets[k];
			if (!dup && (err = note_jump(b, j, rec.targets[k])))
				return err;
		}
		*grew = true;
	}
	return 0;
}

/* Re-checks every table once the function is complete: a predecessor found later may have
 * broken the chain the bound was proven on. Returns true if all still hold unchanged. */
static bool tables_still_hold(struct builder *b)
{
	size_t i;

	for (i = 0; i < b->tables.n; i++) {
		struct cfg_jump_table jt;
		uint64_t *t = NULL;
		int err = jump_table__resolve(&b->dec, b->tables.v[i].jt.jump, &b->jt_cfg, &jt, &t);
		bool same = !err && jt.entries == b->tables.v[i].jt.entries &&
			    memcmp(t, b->tables.v[i].targets, jt.entries * sizeof(*t)) == 0;

		free(t);
		if (!same)
			return false;
		/* The load that indexes the table, as the complete function proves it. */
		b->tables.v[i].jt.load = jt.load;
		b->tables.v[i].jt.load_index = jt.load_index;
		b->tables.v[i].jt.load_mult = jt.load_mult;
	}
	return true;
}

static const struct table_rec *table_at(struct builder *b, uint64_t jump)
{
	for (size_t i = 0; i < b->tables.n; i++)
		if (b->tables.v[i].jt.jump == jump)
			return &b->tables.v[i];
	return NULL;
}

struct fbuild {
	VEC(struct cfg_block) blocks;
	VEC(struct cfg_edge) edges;
	VEC(struct cfg_insn) insns;
	VEC(struct cfg_call) calls;
	VEC(uint64_t) unresolved;
	struct addr_map *block_of; /* start -> block id (the builder's, cleared per function) */
	struct addr_map *outside;  /* the builder's: addresses reached outside the function */
};

static int add_edge(struct fbuild *fb, uint32_t from, uint32_t to, uint8_t kind, uint8_t flags,
		    uint64_t target)
{
	struct cfg_edge e = { .from = from, .to = to, .kind = kind, .flags = flags,
			      .target = target };

	return VEC_PUSH(fb->edges, e);
}

/* Edge to the block starting at T, or UNRESOLVED to EXIT when T is no decoded block. */
static int edge_to(struct fbuild *fb, struct cfg_func *f, uint32_t from, uint64_t t,
		   uint8_t kind, uint32_t nblocks)
{
	uint32_t to;

	if (!addr_map__get(fb->block_of, t, &to)) {
		f->flags |= addr_map__get(fb->outside, t, &to) ? CFG_FUNC_RUNS_OFF
							       : CFG_FUNC_BAD_CODE;
		if (!f->bad_addr)
			f->bad_addr = t;
		return add_edge(fb, from, nblocks, EDGE_UNRESOLVED, 0, t);
	}
	return add_edge(fb, from, to, kind, 0, 0);
}

static int add_call(struct builder *b, struct fbuild *fb, const struct dinsn *di, uint32_t blk,
		    bool tail, bool returns, uint8_t why)
{
	bool indirect = di->flow == INSN_JMP_IND || di->flow == INSN_CALL_IND;
	struct cfg_call c = {
		.site = di->addr,
		.target = indirect && !di->rip_slot ? 0 : di->target,
		.block = blk,
		.indirect = indirect,
		.tail = tail,
		.noreturn = !returns,
		.noreturn_why = returns ? CFG_NORET_NONE : why,
		.external = di->rip_slot || in_plt(b, di->target),
	};

	if (indirect && di->rip_slot) {
		c.name = symbols__got_name(b->syms, di->target);
		c.target = 0;
	} else if (!indirect) {
		c.name = callee_name(b, di->target, false);
	}
	return VEC_PUSH(fb->calls, c);
}

static int make_edges(struct builder *b, struct fbuild *fb, struct cfg_func *f, uint32_t blk,
		      uint32_t nblocks)
{
	const struct cfg_block *bl = &fb->blocks.v[blk];
	struct dinsn cur = *decoder__get(&b->dec, fb->insns.v[bl->first_insn + bl->ninsns - 1].addr);
	const struct dinsn *di = &cur;
	uint64_t next = bl->end;
	const struct table_rec *tr;
	uint32_t eh;
	uint8_t why = 0;
	bool ret;
	int err = 0;

	switch (di->flow) {
	case INSN_JCC:
		if (is_tail_target(b, di->target)) {
			ret = site_returns(b, di, true, &why);
			err = add_edge(fb, blk, nblocks, ret || why == CFG_NORET_CALLEE ?
				       EDGE_TAIL_CALL : EDGE_NORETURN, CFG_EDGE_COND_TAKEN,
				       di->target);
			err = err ? err : add_call(b, fb, di, blk, true, ret, why);
		} else {
			err = edge_to(fb, f, blk, di->target, EDGE_TAKEN, nblocks);
		}
		return err ? err : edge_to(fb, f, blk, next, EDGE_NOT_TAKEN, nblocks);
	case INSN_JMP:
		if (is_tail_target(b, di->target)) {
			ret = site_returns(b, di, true, &why);
			err = add_edge(fb, blk, nblocks, ret || why == CFG_NORET_CALLEE ?
				       EDGE_TAIL_CALL : EDGE_NORETURN, 0, di->target);
			return err ? err : add_call(b, fb, di, blk, true, ret, why);
		}
		return edge_to(fb, f, blk, di->target, EDGE_JUMP, nblocks);
	case INSN_JMP_IND:
		if (di->rip_slot) {
			ret = site_returns(b, di, true, &why);
			err = add_edge(fb, blk, nblocks, ret ? EDGE_TAIL_CALL : EDGE_NORETURN,
				       CFG_EDGE_INDIRECT, 0);
			return err ? err : add_call(b, fb, di, blk, true, ret, why);
		}
		tr = table_at(b, di->addr);
		if (!tr) {
			f->flags |= CFG_FUNC_UNRESOLVED;
			err = VEC_PUSH(fb->unresolved, di->addr);
			return err ? err : add_edge(fb, blk, nblocks, EDGE_UNRESOLVED, 0, 0);
		}
		for (uint32_t k = 0; k < tr->jt.entries && !err; k++) {
			uint32_t to, m;
			bool dup = false;

			for (m = 0; m < k && !dup; m++)
				dup = tr->targets[m] == tr->targets[k];
			if (dup) {
				/* Count the case on the edge already made for this target. */
				for (size_t e = fb->edges.n; e-- > 0;)
					if (fb->edges.v[e].from == blk &&
					    fb->edges.v[e].kind == EDGE_SWITCH &&
					    addr_map__get(fb->block_of, tr->targets[k], &to) &&
					    fb->edges.v[e].to == to) {
						fb->edges.v[e].ncases++;
						break;
					}
				continue;
			}
			err = edge_to(fb, f, blk, tr->targets[k], EDGE_SWITCH, nblocks);
			if (!err)
				fb->edges.v[fb->edges.n - 1].ncases = 1;
		}
		return err;
	case INSN_CALL:
	case INSN_CALL_IND:
		ret = site_returns(b, di, false, &why);
		err = add_call(b, fb, di, blk, false, ret, why);
		if (!err && addr_map__get(&b->eh_of, di->addr, &eh))
			err = edge_to(fb, f, blk, b->callsites[eh].lp, EDGE_EXCEPTION, nblocks);
		if (err)
			return err;
		if (!ret)
			return add_edge(fb, blk, nblocks, EDGE_NORETURN,
					di->flow == INSN_CALL_IND ? CFG_EDGE_INDIRECT : 0,
					di->flow == INSN_CALL ? di->target : 0);
		return edge_to(fb, f, blk, next, EDGE_CALL_RETURN, nblocks);
	case INSN_RET:
		return add_edge(fb, blk, nblocks, EDGE_RETURN, 0, 0);
	case INSN_TRAP:
		return add_edge(fb, blk, nblocks, EDGE_NORETURN, 0, 0);
	default:
		return edge_to(fb, f, blk, next, EDGE_FALLTHROUGH, nblocks);
	}
}

static bool ends_block(const struct dinsn *di)
{
	return di->flow != INSN_PLAIN && di->flow != INSN_SYSCALL;
}

/* Two capstone operands that say the same. */
static bool same_operand(const cs_x86_op *x, const cs_x86_op *y)
{
	if (x->type != y->type || x->size != y->size || x->access != y->access)
		return false;
	switch (x->type) {
	case X86_OP_REG:
		return x->reg == y->reg;
	case X86_OP_IMM:
		return x->imm == y->imm;
	case X86_OP_MEM:
		return x->mem.segment == y->mem.segment && x->mem.base == y->mem.base &&
		       x->mem.index == y->mem.index && x->mem.scale == y->mem.scale &&
		       x->mem.disp == y->mem.disp;
	default:
		return false;
	}
}

/*
 * The one overlap of decodings the CFG accepts (a prefix pair): code jumps to IN, strictly
 * inside the instruction at OUT, where every byte of OUT before IN is a lock prefix (0xf0),
 * the instruction decoded at IN ends exactly where OUT ends and is OUT's operation without
 * the lock (same capstone instruction, same operands, no lock or rep prefix of its own), and
 * both fall through (no transfer). glibc's single-thread atomics are built so:
 * `cmpl $0,%fs:0x18; je 0f; lock; 0: cmpxchg %rdi,(%rsi)` (the je skips the lock only). Only
 * the lock prefix is accepted: 0x66/0x67 change the operand or address size, 0xf2/0xf3 may
 * select another instruction (mandatory prefixes), segment overrides another address, and
 * 0x2e/0x3e are no idiom any compiler or library is known to jump over. Both instructions are
 * real instruction starts on some path each; neither is one on every path, so neither may
 * hold a probe or a patch window (assemble marks both).
 */
static bool prefix_pair(struct builder *b, uint64_t out, uint64_t in)
{
	const struct dinsn *d;
	const uint8_t *code;
	const cs_insn *c;
	cs_x86_op ops[8];
	uint8_t osize, nops;
	unsigned id;
	size_t avail;
	uint32_t one;

	if (in <= out || !addr_map__get(&b->jump_head, in, &one) ||
	    addr_map__get(&b->roots, in, &one) || in == b->entry)
		return false;
	d = decoder__get(&b->dec, out);
	if (!d || d->flow != INSN_PLAIN || out + d->size <= in)
		return false;
	osize = d->size;
	d = decoder__get(&b->dec, in);
	if (!d || d->flow != INSN_PLAIN || in + d->size != out + osize)
		return false;
	code = elf_image__code(b->img, out, &avail);
	if (!code || avail < osize)
		return false;
	for (uint64_t k = 0; k < in - out; k++)
		if (code[k] != 0xf0)
			return false;
	c = decoder__detail(&b->dec, out);
	if (!c || c->size != osize || c->detail->x86.prefix[0] != X86_PREFIX_LOCK ||
	    c->detail->x86.op_count > 8)
		return false;
	id = c->id;
	nops = c->detail->x86.op_count;
	memcpy(ops, c->detail->x86.operands, nops * sizeof(*ops));
	c = decoder__detail(&b->dec, in);
	if (!c || c->id != id || c->size != osize - (in - out) || c->detail->x86.prefix[0] ||
	    c->detail->x86.op_count != nops)
		return false;
	for (uint8_t k = 0; k < nops; k++)
		if (!same_operand(&ops[k], &c->detail->x86.operands[k]))
			return false;
	return true;
}

/* Turns the visited instructions into blocks, edges and call sites of F. */
static int assemble(struct builder *b, struct cfg_func *f)
{
	struct fbuild fb = { .block_of = &b->block_of, .outside = &b->outside };
	uint64_t *a = b->insns.v;
	size_t n = b->insns.n, i;
	uint64_t pair_end = 0; /* where the last prefix pair ends: a leader */
	struct dinsn pcur;     /* the previous instruction's record */
	bool prev_inner = false;
	uint32_t nb, one;
	int err = 0;

	sort__u64(a, n);
	for (i = 0; i < n && !err; i++) {
		struct dinsn cur = *decoder__get(&b->dec, a[i]);
		const struct dinsn *di = &cur, *prev = i ? &pcur : NULL;
		bool leader, inner = false;
		struct cfg_insn ci;

		leader = i == 0 || a[i] == b->entry || addr_map__get(&b->jump_head, a[i], &one) ||
			 addr_map__get(&b->roots, a[i], &one) || a[i] == pair_end ||
			 ends_block(prev) || a[i - 1] + prev->size != a[i];
		ci = (struct cfg_insn){ .addr = a[i], .size = di->size, .flow = di->flow,
					.probe_class = di->probe_class, .cc = di->cc };
		if (prev && a[i - 1] + prev->size > a[i]) {
			/* Two decodings overlap: code jumps into the middle of an instruction.
			 * Only a jump over a lock prefix is understood (prefix_pair), once per
			 * instruction; anything else is undecodable code. */
			if (!prev_inner && prefix_pair(b, a[i - 1], a[i])) {
				inner = true;
				leader = true;
				pair_end = a[i] + di->size;
				ci.overlap = 1;
				ci.probe_class = PROBE_NEVER;
				fb.insns.v[fb.insns.n - 1].overlap = 1;
				fb.insns.v[fb.insns.n - 1].probe_class = PROBE_NEVER;
			} else {
				b->overlap = true;
				f->flags |= CFG_FUNC_BAD_CODE;
				if (!f->bad_addr)
					f->bad_addr = a[i];
			}
		}
		prev_inner = inner;
		if (leader) {
			struct cfg_block blk = { .start = a[i], .first_insn = (uint32_t)fb.insns.n };

			err = VEC_PUSH(fb.blocks, blk);
			if (!err)
				err = addr_map__put(fb.block_of, a[i], (uint32_t)fb.blocks.n - 1);
		}
		if (!err)
			err = VEC_PUSH(fb.insns, ci);
		if (!err) {
			fb.blocks.v[fb.blocks.n - 1].ninsns++;
			fb.blocks.v[fb.blocks.n - 1].end = a[i] + di->size;
		}
		pcur = cur;
	}
	nb = (uint32_t)fb.blocks.n;
	for (i = 0; i < nb && !err; i++)
		err = make_edges(b, &fb, f, (uint32_t)i, nb);
	if (!err && b->bad.n)
		f->flags |= CFG_FUNC_BAD_CODE;
	if (!err && nb == 0) {
		f->flags |= CFG_FUNC_BAD_CODE;
		f->bad_addr = b->entry;
	} else if (!err && !addr_map__get(fb.block_of, b->entry, &f->entry_block)) {
		f->flags |= CFG_FUNC_BAD_CODE;
		f->bad_addr = b->entry;
		f->entry_block = 0;
	}
	if (!err) {
		f->blocks = fb.blocks.v;
		f->nblocks = nb;
		f->edges = fb.edges.v;
		f->nedges = (uint32_t)fb.edges.n;
		f->insns = fb.insns.v;
		f->ninsns = (uint32_t)fb.insns.n;
		f->calls = fb.calls.v;
		f->ncalls = (uint32_t)fb.calls.n;
		f->unresolved = fb.unresolved.v;
		f->nunresolved = (uint32_t)fb.unresolved.n;
		fb.blocks.v = NULL;
		fb.edges.v = NULL;
		fb.insns.v = NULL;
		fb.calls.v = NULL;
		fb.unresolved.v = NULL;
		f->ntables = (uint32_t)b->tables.n;
		f->tables = calloc(b->tables.n ? b->tables.n : 1, sizeof(*f->tables));
		if (!f->tables)
			err = -ENOMEM;
		for (i = 0; !err && i < b->tables.n; i++)
			f->tables[i] = b->tables.v[i].jt;
		if (!err)
			err = cfg_func__index_edges(f);
	}
	free(fb.blocks.v);
	free(fb.edges.v);
	free(fb.insns.v);
	free(fb.calls.v);
	free(fb.unresolved.v);
	return err;
}

/*
 * An unresolved `jmp *reg` (or through memory not at a fixed slot) is an indirect tail call
 * when the frame is fully torn down (stack height back at its entry value on every path),
 * the function never materialises the address of its own code (no computed goto), and the
 * jump does not look like a table whose bound we failed to prove. Anything less stays
 * unresolved.
 */
static int classify_indirect_tail_calls(struct builder *b, struct cfg_func *f)
{
	int64_t *h;
	bool label_taken;
	uint32_t k, kept = 0, one;
	int err;

	if (!f->nunresolved)
		return 0;
	h = malloc(f->nunresolved * sizeof(*h));
	if (!h)
		return -ENOMEM;
	err = stack_height__at(f, &b->dec, f->unresolved, f->nunresolved, h, &label_taken);
	for (k = 0; !err && k < f->nunresolved; k++) {
		uint64_t j = f->unresolved[k];
		int blk = cfg_func__block_containing(f, j);
		struct cfg_call *nc;

		if (label_taken || h[k] != 0 || blk < 0 || addr_map__get(&b->tablelike, j, &one)) {
			f->unresolved[kept++] = j;
			continue;
		}
		for (uint32_t e = 0; e < f->nedges; e++)
			if (f->edges[e].from == (uint32_t)blk && f->edges[e].kind == EDGE_UNRESOLVED) {
				f->edges[e].kind = EDGE_TAIL_CALL;
				f->edges[e].flags |= CFG_EDGE_INDIRECT;
			}
		nc = realloc(f->calls, (f->ncalls + 1) * sizeof(*nc));
		if (!nc) {
			err = -ENOMEM;
			break;
		}
		f->calls = nc;
		f->calls[f->ncalls++] = (struct cfg_call){ .site = j, .block = (uint32_t)blk,
							   .indirect = 1, .tail = 1 };
	}
	free(h);
	if (err)
		return err;
	f->nunresolved = kept;
	if (!kept)
		f->flags &= ~CFG_FUNC_UNRESOLVED;
	return 0;
}

/* Where the traversal of the function at ENTRY starts: its entry, and the addresses where
 * other functions run into its code (roots, entered from outside like landing pads). */
static int seed(struct builder *b, uint64_t entry)
{
	int err = VEC_PUSH(b->work, entry);

	for (size_t i = 0; !err && i < b->foreign.n; i += 2)
		if (b->foreign.v[i + 1] == entry) {
			err = addr_map__put(&b->roots, b->foreign.v[i], 1);
			err = err ? err : VEC_PUSH(b->work, b->foreign.v[i]);
		}
	return err;
}

/* Builds F (whose name, entry and sources are set) from scratch. */
static int build_func(struct builder *b, struct cfg_func *f)
{
	char *name = f->name;
	uint64_t entry = f->entry, size = f->sym_size;
	unsigned sources = f->sources;
	bool grew;
	int err, rounds = 0;

	f->name = NULL;
	cfg_func__release(f);
	f->name = name;
	f->entry = entry;
	f->sym_size = size;
	f->sources = sources;
	reset_scratch(b, entry);
	addr_map__clear(&b->status_veto);
	err = seed(b, entry);
	for (;;) {
		while (!err && b->work.n)
			err = walk(b, b->work.v[--b->work.n]);
		if (err)
			return err;
		err = resolve_tables(b, &grew);
		if (err)
			return err;
		if (grew)
			continue;
		if (!status_proofs_hold(b)) {
			/* A call judged no-return by its status has a new predecessor: start over
			 * without that judgement (the veto only grows, so this ends). */
			reset_scratch(b, entry);
			err = seed(b, entry);
			continue;
		}
		if (tables_still_hold(b) || ++rounds > 4)
			break;
		/* Start over with what we know now (more predecessors, fewer proofs). */
		reset_scratch(b, entry);
		err = seed(b, entry);
	}
	err = assemble(b, f);
	return err ? err : classify_indirect_tail_calls(b, f);
}

static int add_func(struct builder *b, const struct func_start *fs)
{
	struct cfg_func f = { 0 };
	uint32_t st;

	if (addr_map__get(&b->func_index, fs->addr, &st))
		return 0;
	f.name = strdup(fs->name);
	if (!f.name)
		return -ENOMEM;
	f.entry = fs->addr;
	f.sym_size = fs->size;
	f.sources = fs->sources;
	if (VEC_PUSH(b->funcs, f) ||
	    addr_map__put(&b->func_index, fs->addr, (uint32_t)b->funcs.n - 1) ||
	    addr_map__put(&b->status, fs->addr,
			  noreturn__known(fs->name) ? ST_KNOWN_NORETURN : ST_NORETURN))
		return -ENOMEM;
	return 0;
}

/* Can F reach a return under the current statuses? Returns, unresolved jumps, undecodable
 * code and tail calls to callees that may return all count; a call to a callee that is
 * (currently) no-return cuts its call-return edge. */
static bool func_can_return(struct builder *b, const struct cfg_func *f, uint32_t *stack,
			    uint8_t *seen)
{
	uint32_t sp = 0, i;

	if ((f->flags & CFG_FUNC_BAD_CODE) || f->nblocks == 0)
		return true;
	memset(seen, 0, f->nblocks);
	stack[sp++] = f->entry_block;
	seen[f->entry_block] = 1;
	while (sp) {
		uint32_t v = stack[--sp];
		const struct cfg_block *bl = &f->blocks[v];
		const struct cfg_insn *last = &f->insns[bl->first_insn + bl->ninsns - 1];
		const struct dinsn *di = NULL;

		for (i = 0; i < bl->nsucc; i++) {
			const struct cfg_edge *e = &f->edges[f->succ[bl->first_succ + i]];

			switch (e->kind) {
			case EDGE_RETURN:
			case EDGE_UNRESOLVED:
				return true;
			case EDGE_TAIL_CALL:
				if (!e->target || callee_returns(b, e->target, false, false))
					return true;
				continue;
			case EDGE_CALL_RETURN:
				if (!di)
					di = decoder__get(&b->dec, last->addr);
				if (di && di->flow == INSN_CALL &&
				    !callee_returns(b, di->target, false, false))
					continue;
				break;
			case EDGE_NORETURN:
				continue;
			default:
				break;
			}
			if (e->to < f->nblocks && !seen[e->to]) {
				seen[e->to] = 1;
				stack[sp++] = e->to;
			}
		}
	}
	return false;
}

/* Does F call (not tail-call) a function whose final status is no-return, while it was built
 * assuming that the callee returns? */
static bool needs_rebuild(struct builder *b, const struct cfg_func *f)
{
	for (uint32_t k = 0; k < f->ncalls; k++) {
		const struct cfg_call *c = &f->calls[k];

		if (!c->tail && !c->indirect && !c->noreturn && c->target &&
		    !callee_returns(b, c->target, false, false))
			return true;
	}
	return false;
}

static int cmp_pair(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* True when some block of G that lies outside G's own FDE range is also code of F, or G runs
 * off its range (CFG_FUNC_RUNS_OFF) into code of F. */
static bool borrows_from(const struct cfg_func *g, const struct cfg_func *f)
{
	for (uint32_t e = 0; e < g->nedges; e++)
		if (g->edges[e].kind == EDGE_UNRESOLVED && g->edges[e].target &&
		    cfg_func__block_containing(f, g->edges[e].target) >= 0)
			return true;
	for (uint32_t i = 0; i < g->nblocks; i++) {
		uint64_t a = g->blocks[i].start;

		if (g->sym_size && a >= g->entry && a < g->entry + g->sym_size)
			continue;
		if (cfg_func__block_containing(f, a) >= 0)
			return true;
	}
	return false;
}

/* The start whose symbol or FDE range holds ADDR (the nearest start at or below it), or NULL. */
static const struct func_start *range_owner(const struct symbols *syms, uint64_t addr)
{
	size_t lo = 0, hi = syms->nfuncs;
	const struct func_start *fs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (syms->funcs[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	fs = &syms->funcs[lo - 1];
	return fs->size && addr - fs->addr < fs->size ? fs : NULL;
}

#define REF_MID (1ULL << 63) /* a source that jumps into the middle of the start's range */

/* Does edge E of F leave from a jump table (a switch case)? gcc moves unlikely cases into the
 * function's .cold part: a table entry is a jump within the function, never a call, and no
 * compiler fills a switch table with another function's entry. */
static bool from_table(const struct cfg_func *f, const struct cfg_edge *e)
{
	const struct cfg_block *bl;

	if (e->from >= f->nblocks)
		return false;
	bl = &f->blocks[e->from];
	for (uint32_t j = 0; j < f->ntables; j++)
		if (f->tables[j].jump >= bl->start && f->tables[j].jump < bl->end &&
		    f->tables[j].entry_size)
			return true;
	return false;
}

/*
 * A start whose FDE says it begins inside a frame already set up (not a function) that
 * several functions jump to: gcc's cold part of one function, which it runs back into, and a
 * jump from another function whose target the compiler chose freely because it is never
 * taken (python3.11: long_richcompare's bound check before a switch whose default is
 * __builtin_unreachable jumps to PyArg_ValidateKeywordArguments.cold). The part belongs to the
 * one jumper whose code it runs into (borrows_from); the other jumps stay tail calls to it.
 * REFS holds N (target, source) pairs for T; sets *SRC and returns true when exactly one
 * jumper qualifies and none of the references is a call.
 */
static bool frame_owner(struct builder *b, const uint64_t *refs, size_t n, uint64_t t,
			uint64_t *src)
{
	uint32_t gi, fi;
	uint64_t owner = 0;
	size_t j;

	if (!addr_map__get(&b->func_index, t, &gi))
		return false;
	for (j = 0; j < n; j++) {
		uint64_t s = refs[2 * j + 1];

		if (s == UINT64_MAX)
			return false;
		s &= ~REF_MID;
		if (s == owner || !addr_map__get(&b->func_index, s, &fi) ||
		    !borrows_from(&b->funcs.v[gi], &b->funcs.v[fi]))
			continue;
		if (owner)
			return false;
		owner = s;
	}
	if (!owner)
		return false;
	*src = owner;
	return true;
}

/*
 * Split-off parts of functions in stripped binaries (gcc's .cold parts have their own FDE but
 * no name): a start known only from an FDE, never called, reached by direct jumps (to its
 * start, or into its range: F's jumps that run off, CFG_FUNC_RUNS_OFF) from exactly one
 * function F, whose code runs on into F's own blocks (or runs off into them), or which F
 * enters in the middle of its range (no function is entered there: it is a part of F), or
 * whose FDE says it starts inside a frame already set up (fs->mid_frame: not entered by a
 * call, so not a function; its code may end in a return or a tail call of F's frame), or
 * which an entry of F's jump table reaches (a switch case moved to the cold part: in a leaf
 * function its FDE looks like a function's). Such a start becomes a fragment of F
 * and F is rebuilt to include it; the fragment is no longer a function of its own.
 */
static int merge_fragments(struct builder *b)
{
	VEC(uint64_t) refs = { 0 }; /* pairs (target, source function entry, kind 0 call/1 jump) */
	size_t i, k, nf = b->funcs.n, merged = 0;
	uint8_t *dead = NULL;
	int err = 0;

	for (i = 0; i < nf && !err; i++) {
		const struct cfg_func *f = &b->funcs.v[i];

		for (k = 0; k < f->ncalls && !err; k++) {
			const struct cfg_call *c = &f->calls[k];

			if (!c->target || c->indirect)
				continue;
			err = VEC_PUSH(refs, c->target);
			err = err ? err : VEC_PUSH(refs, c->tail ? f->entry : UINT64_MAX);
		}
		/* A jump that ran off F into the middle of another start's range (gcc's cold
		 * part, entered at any of its blocks): a jump to that start, for this purpose. */
		for (k = 0; k < f->nedges && !err; k++) {
			const struct cfg_edge *e = &f->edges[k];
			const struct func_start *g;

			if (e->kind != EDGE_UNRESOLVED || !e->target || !(f->flags & CFG_FUNC_RUNS_OFF))
				continue;
			g = range_owner(b->syms, e->target);
			if (!g || g->addr == f->entry)
				continue;
			err = VEC_PUSH(refs, g->addr);
			err = err ? err : VEC_PUSH(refs, f->entry | (e->target != g->addr ||
								     from_table(f, e) ? REF_MID : 0));
		}
	}
	if (err)
		goto out;
	if (refs.n)
		qsort(refs.v, refs.n / 2, 2 * sizeof(uint64_t), cmp_pair);
	dead = calloc(nf ? nf : 1, 1);
	if (!dead) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < refs.n; i = k) {
		uint64_t t = refs.v[i], src = refs.v[i + 1] & ~REF_MID;
		uint32_t gi, fi;
		bool one_jumper = refs.v[i + 1] != UINT64_MAX, mid = false;
		struct func_start *fs;

		for (k = i; k < refs.n && refs.v[k] == t; k += 2) {
			one_jumper &= refs.v[k + 1] != UINT64_MAX && (refs.v[k + 1] & ~REF_MID) == src;
			mid |= refs.v[k + 1] != UINT64_MAX && (refs.v[k + 1] & REF_MID);
		}
		fs = (struct func_start *)symbols__func_at(b->syms, t);
		if (!one_jumper && fs && fs->mid_frame && !(fs->sources & ~FUNC_SRC_FDE))
			one_jumper = frame_owner(b, refs.v + i, (k - i) / 2, t, &src);
		if (!one_jumper || !fs || (fs->sources & ~FUNC_SRC_FDE) || src == t ||
		    !addr_map__get(&b->func_index, t, &gi) ||
		    !addr_map__get(&b->func_index, src, &fi) || dead[gi] || dead[fi] ||
		    !(mid || fs->mid_frame || borrows_from(&b->funcs.v[gi], &b->funcs.v[fi])))
			continue;
		fs->fragment = true;
		fs->parent = src;
		dead[gi] = 1;
		merged++;
		err = build_func(b, &b->funcs.v[fi]);
		if (err)
			goto out;
	}
	if (merged) {
		for (i = 0, k = 0; i < nf; i++) {
			if (dead[i]) {
				cfg_func__release(&b->funcs.v[i]);
				continue;
			}
			b->funcs.v[k++] = b->funcs.v[i];
		}
		b->funcs.n = k;
		addr_map__clear(&b->func_index);
		for (i = 0; i < k && !err; i++)
			err = addr_map__put(&b->func_index, b->funcs.v[i].entry, (uint32_t)i);
	}
out:
	free(refs.v);
	free(dead);
	return err;
}

/* Flags G (just rebuilt with the b->foreign roots naming it) CFG_FUNC_FOREIGN_ENTRY and
 * lists in G->foreign the blocks those roots start, ascending. */
static int record_foreign(struct builder *b, struct cfg_func *g)
{
	uint8_t *mark = calloc(g->nblocks ? g->nblocks : 1, 1);
	uint32_t n = 0;

	if (!mark)
		return -ENOMEM;
	for (size_t i = 0; i < b->foreign.n; i += 2) {
		int k;

		if (b->foreign.v[i + 1] != g->entry)
			continue;
		k = cfg_func__block_containing(g, b->foreign.v[i]);
		/* A root always starts a block of its own (seed); a root inside an instruction
		 * of G leaves overlapping blocks, which placement excludes anyway. */
		if (k >= 0 && g->blocks[k].start == b->foreign.v[i] && !mark[k]) {
			mark[k] = 1;
			n++;
		}
	}
	g->flags |= CFG_FUNC_FOREIGN_ENTRY;
	g->foreign = malloc((n ? n : 1) * sizeof(*g->foreign));
	if (!g->foreign) {
		free(mark);
		return -ENOMEM;
	}
	g->nforeign = 0;
	for (uint32_t k = 0; k < g->nblocks; k++)
		if (mark[k])
			g->foreign[g->nforeign++] = k;
	free(mark);
	return 0;
}

/*
 * The other side of CFG_FUNC_RUNS_OFF: when F runs off into code of another function G (not
 * at G's entry, and G is not a part of F that merge_fragments took in), G's code there is
 * entered from outside G's graph, and G's edge counts would take F's executions as G's own.
 * G is rebuilt with that address as a root (a block start, entered from outside) and flagged
 * CFG_FUNC_FOREIGN_ENTRY, its blocks entered there listed in G->foreign (placement gives it
 * block counts only; propagation takes the flow entering there as unknowns).
 */
static int mark_foreign_entries(struct builder *b)
{
	size_t i, n0 = b->foreign.n;
	int err = 0;

	for (i = 0; i < b->funcs.n && !err; i++) {
		const struct cfg_func *f = &b->funcs.v[i];

		if (!(f->flags & CFG_FUNC_RUNS_OFF))
			continue;
		for (uint32_t k = 0; k < f->nedges && !err; k++) {
			const struct cfg_edge *e = &f->edges[k];
			const struct func_start *g;
			uint32_t gi;

			if (e->kind != EDGE_UNRESOLVED || !e->target)
				continue;
			g = range_owner(b->syms, e->target);
			if (!g || g->addr == f->entry || g->addr == e->target ||
			    !addr_map__get(&b->func_index, g->addr, &gi))
				continue;
			err = VEC_PUSH(b->foreign, e->target);
			err = err ? err : VEC_PUSH(b->foreign, g->addr);
		}
	}
	for (i = n0; i < b->foreign.n && !err; i += 2) {
		uint32_t gi;
		bool again = false;

		for (size_t k = n0; k < i; k += 2)
			again |= b->foreign.v[k + 1] == b->foreign.v[i + 1];
		if (again || !addr_map__get(&b->func_index, b->foreign.v[i + 1], &gi))
			continue;
		err = build_func(b, &b->funcs.v[gi]);
		err = err ? err : record_foreign(b, &b->funcs.v[gi]);
	}
	return err;
}

/*
 * The no-return analysis in three steps: (1) build every function assuming that the
 * functions of the binary return (a superset of the final graph); (2) the greatest fixpoint
 * over those graphs: all functions start as no-return and flip when a return becomes
 * reachable; (3) rebuild the callers of the functions that stayed no-return, so that no code
 * is followed past such a call.
 */
static int build_all(struct builder *b)
{
	size_t built = 0, i, maxb = 0;
	uint32_t *stack = NULL;
	uint8_t *seen = NULL;
	bool changed;
	int err = 0;
	double t0 = now();

	/* (1) every function, assuming internal callees return; new call targets join. */
	b->assume_returns = true;
	for (;;) {
		for (i = 0; i < b->new_starts.n && !err; i++) {
			struct func_start *fs = symbols__add(b->syms, b->new_starts.v[i], FUNC_SRC_CALL);

			err = fs ? add_func(b, fs) : -ENOMEM;
		}
		b->new_starts.n = 0;
		for (; built < b->funcs.n && !err; built++) {
			err = build_func(b, &b->funcs.v[built]);
			if (b->opts && b->opts->progress)
				b->opts->progress(b->opts->progress_ctx, built + 1, b->funcs.n);
		}
		if (err || !b->new_starts.n)
			break;
	}
	b->prog->stats.t_build = now() - t0;
	if (err)
		return err;
	/* (2) the fixpoint, on the graphs only. */
	b->assume_returns = false;
	for (i = 0; i < b->funcs.n; i++)
		if (b->funcs.v[i].nblocks > maxb)
			maxb = b->funcs.v[i].nblocks;
	stack = malloc((maxb + 1) * sizeof(*stack));
	seen = malloc(maxb + 1);
	if (!stack || !seen) {
		err = -ENOMEM;
		goto out;
	}
	do {
		changed = false;
		for (i = 0; i < b->funcs.n && !err; i++) {
			struct cfg_func *f = &b->funcs.v[i];
			uint32_t st = ST_RETURNS;

			addr_map__get(&b->status, f->entry, &st);
			if (st == ST_NORETURN && func_can_return(b, f, stack, seen)) {
				err = addr_map__put(&b->status, f->entry, ST_RETURNS);
				changed = true;
			}
		}
		b->prog->stats.noreturn_rounds++;
	} while (changed && !err);
	/* (3) rebuild callers of no-return functions with the final statuses. */
	for (i = 0; i < b->funcs.n && !err; i++)
		if (needs_rebuild(b, &b->funcs.v[i]))
			err = build_func(b, &b->funcs.v[i]);
	/* Call targets seen only in the superset graphs of step 1 stay as functions: they are
	 * real call targets of decoded code, and keeping them is the conservative choice. */
	b->new_starts.n = 0;
	if (!err)
		err = merge_fragments(b);
	if (!err)
		err = mark_foreign_entries(b);
out:
	free(stack);
	free(seen);
	b->prog->stats.t_noreturn = now() - t0 - b->prog->stats.t_build;
	return err;
}

/* Final touches: no-return flags, edges of tail calls whose callee never returns. */
static void finish(struct builder *b)
{
	struct cfg_stats *s = &b->prog->stats;
	size_t i;

	for (i = 0; i < b->funcs.n; i++) {
		struct cfg_func *f = &b->funcs.v[i];
		uint32_t st = ST_RETURNS, k;

		addr_map__get(&b->status, f->entry, &st);
		if (st != ST_RETURNS)
			f->flags |= CFG_FUNC_NORETURN;
		for (k = 0; k < f->nedges; k++) {
			struct cfg_edge *e = &f->edges[k];

			if (e->kind == EDGE_TAIL_CALL && e->target &&
			    !callee_returns(b, e->target, false, false))
				e->kind = EDGE_NORETURN;
		}
		s->nblocks += f->nblocks;
		s->nedges += f->nedges;
		s->ntables += f->ntables;
		s->nunresolved_funcs += !!(f->flags & CFG_FUNC_UNRESOLVED);
		s->nnoreturn_funcs += !!(f->flags & CFG_FUNC_NORETURN);
		s->nbad_funcs += !!(f->flags & CFG_FUNC_BAD_CODE);
		s->nrunsoff_funcs += !!(f->flags & CFG_FUNC_RUNS_OFF);
	}
	s->insns_decoded = b->dec.ndecoded;
}

static int cmp_callsite(const void *x, const void *y)
{
	const struct eh_callsite *a = x, *c = y;

	return a->start < c->start ? -1 : a->start > c->start;
}

/* Every C++ call site with a landing pad, from the LSDAs the FDEs name. An LSDA that cannot be
 * read is skipped: its landing pads stay unknown (and the oracle would see them missing). */
static int load_callsites(struct builder *b)
{
	size_t cap = 0, i;

	for (i = 0; i < b->syms->nlsdas; i++) {
		int err = eh_lsda__callsites(b->img, b->syms->lsdas[i].lsda, b->syms->lsdas[i].start,
					     &b->callsites, &b->ncallsites, &cap);

		if (err == -ENOMEM)
			return err;
	}
	if (b->ncallsites)
		qsort(b->callsites, b->ncallsites, sizeof(*b->callsites), cmp_callsite);
	return 0;
}

static void free_builder(struct builder *b)
{
	size_t i;

	decoder__close(&b->dec);
	addr_map__free(&b->status);
	addr_map__free(&b->func_index);
	addr_map__free(&b->ext_ret);
	addr_map__free(&b->slot_ret);
	addr_map__free(&b->visited);
	addr_map__free(&b->ft_pred);
	addr_map__free(&b->ft_alt);
	addr_map__free(&b->jump_head);
	addr_map__free(&b->roots);
	addr_map__free(&b->eh_of);
	free(b->jrefs.v);
	free(b->callsites);
	addr_map__free(&b->bad);
	addr_map__free(&b->block_of);
	addr_map__free(&b->tablelike);
	addr_map__free(&b->outside);
	addr_map__free(&b->status_nr);
	addr_map__free(&b->status_veto);
	free(b->new_starts.v);
	free(b->foreign.v);
	free(b->work.v);
	free(b->insns.v);
	free(b->pending.v);
	for (i = 0; i < b->tables.n; i++)
		free(b->tables.v[i].targets);
	free(b->tables.v);
}

int cfg_program__build(struct cfg_program *prog, struct elf_image *img,
		       const struct cfg_options *opts)
{
	struct builder b = { 0 };
	double t0 = now();
	size_t i;
	int err;

	memset(prog, 0, sizeof(*prog));
	prog->img = img;
	err = symbols__load(&prog->syms, img);
	if (err) {
		if (opts && opts->ninsns && opts->release)
			opts->release(opts->release_ctx);
		return err;
	}
	prog->stats.t_symbols = now() - t0;
	b.prog = prog;
	b.img = img;
	b.opts = opts;
	b.jt_cfg = (struct jt_cfg){ .unique_pred = unique_pred, .preds = all_preds,
				    .table_limit = table_limit, .in_function = in_function,
				    .ctx = &b };
	b.syms = &prog->syms;
	find_plt(&b);
	err = decoder__open(&b.dec, img);
	if (!err && opts && opts->ninsns) {
		err = decoder__preload(&b.dec, opts->insns, opts->ninsns, opts->taken, opts->ntaken,
				       opts->release, opts->release_ctx);
		if (err == -EINVAL)
			cfg_error(EINVAL, "'%s': the decoding given is not this image's", img->path);
	}
	if (err && opts && opts->ninsns && opts->release)
		opts->release(opts->release_ctx); /* not lent after all */
	if (!err)
		err = load_callsites(&b);
	for (i = 0; !err && i < prog->syms.nfuncs; i++) {
		const struct func_start *fs = &prog->syms.funcs[i];

		/* A cold fragment with a known parent is built as part of the parent. */
		if (fs->fragment && fs->parent)
			continue;
		err = add_func(&b, fs);
	}
	if (!err)
		err = build_all(&b);
	if (!err) {
		finish(&b);
		if (b.funcs.n)
			sort__by_key_u64(b.funcs.v, b.funcs.n, sizeof(*b.funcs.v),
					 offsetof(struct cfg_func, entry), false);
		prog->funcs = b.funcs.v;
		prog->nfuncs = b.funcs.n;
		b.funcs.v = NULL;
		/* The decoding lives on with the program (cfg_program.dec). */
		prog->dec = malloc(sizeof(*prog->dec));
		if (prog->dec) {
			*prog->dec = b.dec;
			memset(&b.dec, 0, sizeof(b.dec));
		}
	} else {
		for (i = 0; i < b.funcs.n; i++)
			cfg_func__release(&b.funcs.v[i]);
		free(b.funcs.v);
		symbols__free(&prog->syms);
		if (err == -ENOMEM)
			cfg_error(ENOMEM, "'%s': out of memory building the CFG", img->path);
	}
	free_builder(&b);
	return err;
}

void cfg_program__free(struct cfg_program *prog)
{
	size_t i;

	for (i = 0; i < prog->nfuncs; i++)
		cfg_func__release(&prog->funcs[i]);
	free(prog->funcs);
	symbols__free(&prog->syms);
	cfg_program__drop_decoding(prog);
	memset(prog, 0, sizeof(*prog));
}

void cfg_program__drop_decoding(struct cfg_program *prog)
{
	if (prog->dec) {
		decoder__close(prog->dec);
		free(prog->dec);
		prog->dec = NULL;
	}
}
