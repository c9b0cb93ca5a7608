/*
 * The trampoline code generator (see trampoline.h): decodes a window's bytes with capstone,
 * lays out [entry increment] [relocated instructions] [jcc outcomes with their increments]
 * [jmp back], and records the pc map and the lock-prefix offsets as it goes.
 */
#include "user/count/trampoline.h"

#include <capstone/capstone.h>
#include <cpuid.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/flag_liveness.h"
#include "cfg/patch_window.h"
#include "cfg/sort.h"

#define MAX_PCS 128
#define MAX_JUMPS 40
#define MAX_LOCKS 4

struct emitter {
	const struct tramp_spec *sp;
	uint8_t buf[TRAMP_MAX_LEN];
	uint32_t pos;
	struct patch_pc pcs[MAX_PCS];
	uint32_t npcs;
	uint32_t locks[MAX_LOCKS];
	uint32_t nlock;
	bool no_cont; /* make it without continuations (it did not fit with them) */
	uint8_t nconts;
	csh cs;		/* capstone, and an instruction for decoding continuations (lazily) */
	cs_insn *cin;
	struct patch_jump jumps[MAX_JUMPS];
	uint32_t njumps;
	int err;
};

static void put(struct emitter *e, const void *p, uint32_t n)
{
	if (e->err)
		return;
	if (e->pos + n > TRAMP_MAX_LEN) {
		e->err = -ENOSPC;
		return;
	}
	memcpy(e->buf + e->pos, p, n);
	e->pos += n;
}

static void put1(struct emitter *e, uint8_t b)
{
	put(e, &b, 1);
}

static void put32(struct emitter *e, uint32_t v)
{
	put(e, &v, 4);
}

static uint64_t here(const struct emitter *e)
{
	return e->sp->tramp + e->pos;
}

/* The rel32 from the end of an instruction ending at END to TO, or -ERANGE in e->err. */
static int32_t rel32(struct emitter *e, uint64_t end, uint64_t to)
{
	int64_t d = (int64_t)(to - end);

	if (d < INT32_MIN || d > INT32_MAX) {
		if (!e->err)
			e->err = -ERANGE;
		return 0;
	}
	return (int32_t)d;
}

/* A stretch starting at the current offset (replacing one that starts there too). */
static void mark(struct emitter *e, uint8_t clean, uint64_t orig, uint32_t pending)
{
	struct patch_pc *pc;

	if (e->err)
		return;
	if (e->npcs && e->pcs[e->npcs - 1].off == e->pos) {
		pc = &e->pcs[e->npcs - 1];
	} else {
		if (e->npcs == MAX_PCS) {
			e->err = -ENOSPC;
			return;
		}
		pc = &e->pcs[e->npcs++];
	}
	pc->off = e->pos;
	pc->orig = orig;
	pc->pending = clean == 1 ? pending : PATCH_NO_COUNTER;
	pc->clean = clean;
}

/* Where a jump to original address TO goes: the trampoline's own start for its site (which a
 * thread at the site would reach through one more jump), else TO, recorded for
 * patch_blob__shortcut with the offset REL_OFF of the rel32 the caller puts there. */
static uint64_t shortcut(struct emitter *e, uint64_t to, uint32_t rel_off)
{
	if (to == e->sp->site)
		return e->sp->tramp;
	if (e->njumps == MAX_JUMPS) {
		if (!e->err)
			e->err = -ENOSPC;
		return to;
	}
	e->jumps[e->njumps++] = (struct patch_jump){ .off = rel_off, .to = to };
	return to;
}

static void jmp_to(struct emitter *e, uint64_t to)
{
	put1(e, 0xe9);
	put32(e, (uint32_t)rel32(e, here(e) + 4, shortcut(e, to, e->pos)));
}

/* `incq counter(%rip)` behind the switchable prefix. */
static void incq(struct emitter *e, uint32_t c)
{
	uint64_t slot = e->sp->counters + 8 * (uint64_t)c;

	if (e->nlock == MAX_LOCKS) {
		e->err = -EINVAL;
		return;
	}
	e->locks[e->nlock++] = e->pos;
	put1(e, e->sp->atomic ? 0xf0 : 0x3e);
	put1(e, 0x48);
	put1(e, 0xff);
	put1(e, 0x05);
	put32(e, (uint32_t)rel32(e, here(e) + 4, slot));
}

/* Whether lahf/sahf work in 64-bit mode here (CPUID 0x80000001 ECX bit 0; missing only on
 * the earliest x86-64 CPUs): else flag saves use pushfq/popfq. */
static bool have_lahf(void)
{
	unsigned a, b, c, d;

	return __get_cpuid(0x80000001, &a, &b, &c, &d) && (c & 1);
}

/* Counter C's increment where LIVE flags are live; the stretch before it is the caller's.
 * Ends with a clean stretch at ORIG (nothing pending). */
static void increment(struct emitter *e, uint32_t c, uint8_t live, uint64_t orig)
{
	static const uint8_t lea_down[] = { 0x48, 0x8d, 0x64, 0x24, 0x80 }; /* lea -128(%rsp),%rsp */
	static const uint8_t lea_up[] = { 0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0 }; /* +128 */

	if (c == PATCH_NO_COUNTER)
		return;
	if (!(live & FLAG_INC_WRITES)) {
		incq(e, c);
	} else if (e->sp->flagsave == TRAMP_SAVE_PUSHF || !have_lahf()) {
		put(e, lea_down, sizeof(lea_down));
		mark(e, false, orig, PATCH_NO_COUNTER);
		put1(e, 0x9c); /* pushfq */
		incq(e, c);
		put1(e, 0x9d); /* popfq */
		put(e, lea_up, sizeof(lea_up));
	} else {
		bool of = live & FLAG_OF;

		put(e, lea_down, sizeof(lea_down));
		mark(e, false, orig, PATCH_NO_COUNTER);
		put1(e, 0x50); /* push %rax */
		if (of) {
			static const uint8_t seto[] = { 0x0f, 0x90, 0xc0 };

			put(e, seto, sizeof(seto));
		}
		put1(e, 0x9f); /* lahf */
		incq(e, c);
		if (of) {
			put1(e, 0x04); /* add $0x7f,%al: OF = (al == 1) */
			put1(e, 0x7f);
		}
		put1(e, 0x9e); /* sahf */
		put1(e, 0x58); /* pop %rax */
		put(e, lea_up, sizeof(lea_up));
	}
	mark(e, true, orig, PATCH_NO_COUNTER);
}

/* A patch_pc clean value of 0 (step) for stretches after an indexed increment. */
#define PC_STEP 0

/* x86 register numbers. */
#define REG_RAX 0
#define REG_RCX 1
#define REG_RDX 2
#define REG_RSP 4
#define REG_RSI 6
#define REG_RDI 7

/* The indexed increment of an indirect site (see struct tramp_spec.indexed): bounds check,
 * `incq slot(,%idx,8)` (absolute, or through a scratch register), the out-of-range slot on a
 * side path emitted at *OVER_AT's jcc later by indexed_over. Stretches: clean at the site
 * until the increment has run, then PC_STEP (the table jump has not run yet). */
static void indexed_increment(struct emitter *e, uint32_t *over_at, uint32_t *join)
{
	static const uint8_t lea_down[] = { 0x48, 0x8d, 0x64, 0x24, 0x80 }; /* lea -128(%rsp),%rsp */
	const struct tramp_spec *sp = e->sp;
	uint64_t slots = sp->counters + 8 * (uint64_t)sp->index_counter;
	bool flags = sp->live_index & FLAG_ALL;
	bool absolute = slots + 8 * ((uint64_t)sp->index_slots + 1) <= 0x7fffffffull;
	int idx = sp->index_reg, scr = -1;
	unsigned mult = sp->index_mult ? sp->index_mult : 1;
	uint8_t rex, ss = mult == 8 ? 0 : mult == 4 ? 1 : mult == 2 ? 2 : 3; /* SIB scale 8/mult */

	if (!absolute) {
		static const int cand[] = { REG_RCX, REG_RDX, REG_RSI, REG_RDI };

		for (unsigned k = 0; k < 4 && scr < 0; k++)
			if (cand[k] != idx)
				scr = cand[k];
	}
	if (flags || scr >= 0) {
		put(e, lea_down, sizeof(lea_down));
		mark(e, PC_STEP, sp->index_at, PATCH_NO_COUNTER);
	}
	if (flags)
		put1(e, 0x9c); /* pushfq */
	if (scr >= 0) {
		put1(e, (uint8_t)(0x50 + scr)); /* push %scr */
		put1(e, 0x48);			 /* lea slots(%rip),%scr */
		put1(e, 0x8d);
		put1(e, (uint8_t)(0x05 | (scr << 3)));
		put32(e, (uint32_t)rel32(e, here(e) + 4, slots));
	}
	/* cmp $slots,%idx (64-bit, unsigned below) */
	put1(e, (uint8_t)(0x48 | (idx >= 8 ? 1 : 0)));
	put1(e, 0x81);
	put1(e, (uint8_t)(0xf8 | (idx & 7)));
	put32(e, sp->index_slots * mult);
	put1(e, 0x0f); /* jae over */
	put1(e, 0x83);
	*over_at = e->pos;
	put32(e, 0);
	/* [lock] incq slots(,%idx,8) or (%scr,%idx,8) */
	if (e->nlock == MAX_LOCKS) {
		e->err = -EINVAL;
		return;
	}
	e->locks[e->nlock++] = e->pos;
	put1(e, sp->atomic ? 0xf0 : 0x3e);
	rex = (uint8_t)(0x48 | (idx >= 8 ? 2 : 0) | (scr >= 8 ? 1 : 0));
	put1(e, rex);
	put1(e, 0xff);
	put1(e, 0x04); /* mod 00, /0, rm 100: SIB */
	put1(e, (uint8_t)((ss << 6) | ((idx & 7) << 3) | (scr >= 0 ? (scr & 7) : 5)));
	if (scr < 0)
		put32(e, (uint32_t)slots);
	*join = e->pos;
	mark(e, PC_STEP, sp->index_at, PATCH_NO_COUNTER);
	if (scr >= 0)
		put1(e, (uint8_t)(0x58 + scr)); /* pop %scr */
	if (flags)
		put1(e, 0x9d); /* popfq */
	if (flags || scr >= 0) {
		static const uint8_t lea_up[] = { 0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0 };

		put(e, lea_up, sizeof(lea_up));
	}
}

/* The out-of-range side path of indexed_increment: the slot after the site's, then back. */
static void indexed_over(struct emitter *e, uint32_t over_at, uint32_t join)
{
	const struct tramp_spec *sp = e->sp;
	int32_t d;

	if (e->err)
		return;
	d = (int32_t)(e->pos - (over_at + 4));
	memcpy(e->buf + over_at, &d, 4);
	mark(e, PC_STEP, sp->index_at, PATCH_NO_COUNTER);
	incq(e, sp->index_counter + sp->index_slots);
	put1(e, 0xe9);
	put32(e, (uint32_t)(join - (e->pos + 4)));
}

/* Copies IN with its rip-relative disp32 re-based for its new place; with MODRM_REG >= 0 the
 * ModRM reg field is replaced (call * -> jmp *). */
static void copy_insn(struct emitter *e, const cs_insn *in, int modrm_reg)
{
	const cs_x86 *x = &in->detail->x86;
	uint8_t b[16];

	memcpy(b, in->bytes, in->size);
	if (modrm_reg >= 0)
		b[x->encoding.modrm_offset] =
			(uint8_t)((b[x->encoding.modrm_offset] & ~0x38) | (modrm_reg << 3));
	for (unsigned k = 0; k < x->op_count; k++) {
		const cs_x86_op *op = &x->operands[k];
		uint64_t target;
		int32_t d;

		if (op->type != X86_OP_MEM || op->mem.base != X86_REG_RIP)
			continue;
		target = in->address + in->size + (uint64_t)op->mem.disp;
		d = rel32(e, here(e) + in->size, target);
		memcpy(b + x->encoding.disp_offset, &d, 4);
	}
	put(e, b, in->size);
}

/* Pushes the original return address RET (flags untouched). */
static void push_ret(struct emitter *e, uint64_t ret, uint64_t call_addr)
{
	put1(e, 0x68); /* push $imm32 (sign-extended) */
	put32(e, (uint32_t)ret);
	if (ret > 0x7fffffffu) {
		static const uint8_t movl[] = { 0xc7, 0x44, 0x24, 0x04 }; /* movl $imm,4(%rsp) */

		mark(e, false, call_addr, PATCH_NO_COUNTER);
		put(e, movl, sizeof(movl));
		put32(e, (uint32_t)(ret >> 32));
	}
}

static uint8_t jcc_cc(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	if (x->opcode[0] == 0x0f)
		return x->opcode[1] & 0xf;
	return x->opcode[0] & 0xf;
}

/* One instruction of the window: at AT, SIZE bytes BYTES, of relocation kind KIND, its
 * branch TARGET and condition CC (jcc), and IN, capstone's decoding of it (NULL for the kinds
 * that need none: a copy without a rip-relative operand, ret, a direct jmp, jcc or call). */
struct insn_ref {
	const cs_insn *in;
	uint64_t at, target;
	const uint8_t *bytes;
	uint8_t size, cc;
	enum reloc_kind kind;
};

static int32_t le32(const uint8_t *b)
{
	return (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
			 (uint32_t)b[3] << 24);
}

/* Fills R (its at, bytes, size and kind set) from its bytes alone when it is one of the plain
 * forms (a copy, ret, jmp rel8/rel32, jcc rel8/rel32, call rel32, without prefixes). */
static bool plain_insn(struct insn_ref *r)
{
	const uint8_t *b = r->bytes;
	uint64_t next = r->at + r->size;

	switch (r->kind) {
	case RELOC_COPY:
		return true;
	case RELOC_RET:
		return (r->size == 1 && b[0] == 0xc3) || (r->size == 3 && b[0] == 0xc2);
	case RELOC_JMP:
		if (r->size == 2 && b[0] == 0xeb)
			r->target = next + (uint64_t)(int64_t)(int8_t)b[1];
		else if (r->size == 5 && b[0] == 0xe9)
			r->target = next + (uint64_t)(int64_t)le32(b + 1);
		else
			return false;
		return true;
	case RELOC_JCC:
		if (r->size == 2 && (b[0] & 0xf0) == 0x70) {
			r->cc = b[0] & 0xf;
			r->target = next + (uint64_t)(int64_t)(int8_t)b[1];
		} else if (r->size == 6 && b[0] == 0x0f && (b[1] & 0xf0) == 0x80) {
			r->cc = b[1] & 0xf;
			r->target = next + (uint64_t)(int64_t)le32(b + 2);
		} else {
			return false;
		}
		return true;
	case RELOC_CALL:
		if (r->size != 5 || b[0] != 0xe8)
			return false;
		r->target = next + (uint64_t)(int64_t)le32(b + 1);
		return true;
	default:
		return false;
	}
}

/* Copies R as it is, or re-based (copy_insn) when capstone decoded it. */
static void copy_ref(struct emitter *e, const struct insn_ref *r, int modrm_reg)
{
	if (r->in)
		copy_insn(e, r->in, modrm_reg);
	else
		put(e, r->bytes, r->size);
}

/* Fills R (its at and bytes set, and its size and kind as the patch analysis saw them, or
 * size 0) for relocation: from its bytes alone when it is a plain form, else decoded by
 * capstone into IN from at most AVAIL bytes, its size and kind then what the analysis saw
 * when it said. False when the bytes do not decode (so). */
static bool decode_ref(csh cs, cs_insn *in, struct insn_ref *r, size_t avail)
{
	const uint8_t *p = r->bytes;
	uint64_t a = r->at;

	if (r->size && plain_insn(r))
		return true;
	if (!cs_disasm_iter(cs, &p, &avail, &a, in) ||
	    (r->size && (in->size != r->size || patch_reloc__kind(in) != r->kind)))
		return false;
	*r = (struct insn_ref){.in = in,
			       .at = r->at,
			       .bytes = in->bytes,
			       .size = (uint8_t)in->size,
			       .kind = patch_reloc__kind(in)};
	r->target = in->detail->x86.op_count ? (uint64_t)in->detail->x86.operands[0].imm : 0;
	if (r->kind == RELOC_JCC)
		r->cc = jcc_cc(in);
	return true;
}

/* The continuation of the spec starting at run-time address AT, or NULL. */
static const struct tramp_cont *cont_at(const struct emitter *e, uint64_t at)
{
	const struct tramp_spec *sp = e->sp;
	uint32_t lo = 0, hi = e->no_cont ? 0 : sp->ncont;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (sp->cont[mid].at == at)
			return &sp->cont[mid];
		if (sp->cont[mid].at < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Control goes on at original address TO, where nothing is pending: a copy of the
 * continuation that starts there, else a jump to it. A continuation that is not what it
 * says fails with -ENOSPC, as one that does not fit: the trampoline is made without. */
static void go_to(struct emitter *e, uint64_t to)
{
	const struct tramp_cont *c = cont_at(e, to);
	const uint8_t *code;
	uint64_t at;

	if (!c || to == e->sp->site) {
		jmp_to(e, to);
		return;
	}
	code = c->bytes;
	at = c->at;
	e->nconts++;
	for (uint32_t k = 0; k < c->ninsns && !e->err; k++) {
		struct insn_ref r = {.at = at, .bytes = code, .size = c->sizes[k],
				     .kind = c->kinds[k]};

		if ((uint64_t)(code - c->bytes) + r.size > c->len) {
			e->err = -ENOSPC; /* made again without continuations */
			break;
		}
		mark(e, true, at, PATCH_NO_COUNTER);
		if ((!e->cin && !(e->cin = cs_malloc(e->cs))) ||
		    !decode_ref(e->cs, e->cin, &r, r.size)) {
			e->err = -ENOSPC;
			break;
		}
		code += r.size;
		at += r.size;
		switch (r.kind) {
		case RELOC_COPY:
		case RELOC_RIP:
			copy_ref(e, &r, -1);
			break;
		case RELOC_JCC:
			put1(e, 0x0f);
			put1(e, (uint8_t)(0x80 | r.cc));
			put32(e, (uint32_t)rel32(e, here(e) + 4, shortcut(e, r.target, e->pos)));
			break;
		case RELOC_JMP:
		case RELOC_RET:
			if (k + 1 != c->ninsns) {
				e->err = -ENOSPC;
				break;
			}
			if (r.kind == RELOC_RET)
				copy_ref(e, &r, -1);
			else
				jmp_to(e, r.target);
			return;
		default:
			e->err = -ENOSPC;
			break;
		}
	}
	if (!e->err && at != c->at + c->len)
		e->err = -ENOSPC;
	mark(e, true, at, PATCH_NO_COUNTER);
	jmp_to(e, at);
}

/* Relocates R. Returns true when it transfers control (no jump back after it). */
static bool relocate(struct emitter *e, const struct insn_ref *r)
{
	const struct tramp_spec *sp = e->sp;
	uint64_t next = r->at + r->size;
	uint64_t target = r->target;
	uint32_t jcc_at;

	if (!r->in && r->kind != RELOC_COPY && r->kind != RELOC_RET && r->kind != RELOC_JMP &&
	    r->kind != RELOC_JCC && r->kind != RELOC_CALL) {
		e->err = -EINVAL;
		return true;
	}
	switch (r->kind) {
	case RELOC_COPY:
	case RELOC_RIP:
		copy_ref(e, r, -1);
		return false;
	case RELOC_JMP:
		go_to(e, target);
		return true;
	case RELOC_JMP_IND:
	case RELOC_RET:
		copy_ref(e, r, -1);
		return true;
	case RELOC_CALL:
		push_ret(e, next, r->at);
		mark(e, true, target, PATCH_NO_COUNTER); /* as at the callee's entry */
		jmp_to(e, target);
		return true;
	case RELOC_CALL_IND:
		push_ret(e, next, r->at);
		mark(e, false, r->at, PATCH_NO_COUNTER); /* step into the callee */
		copy_ref(e, r, 4);
		return true;
	case RELOC_JCC:
		put1(e, 0x0f);
		put1(e, (uint8_t)(0x80 | r->cc));
		jcc_at = e->pos;
		put32(e, 0);
		if (sp->taken_counter == PATCH_NO_COUNTER && !e->err) {
			/* Nothing to count when taken: the jcc goes to the target itself. */
			int32_t d = rel32(e, sp->tramp + jcc_at + 4, shortcut(e, target, jcc_at));

			memcpy(e->buf + jcc_at, &d, 4);
			jcc_at = UINT32_MAX;
		}
		/* not taken */
		mark(e, true, next, sp->not_taken_counter);
		increment(e, sp->not_taken_counter, sp->live_not_taken, next);
		mark(e, true, next, PATCH_NO_COUNTER);
		go_to(e, next);
		if (jcc_at == UINT32_MAX)
			return true;
		/* taken */
		if (!e->err) {
			int32_t d = rel32(e, sp->tramp + jcc_at + 4, here(e));

			memcpy(e->buf + jcc_at, &d, 4);
		}
		mark(e, true, target, sp->taken_counter);
		increment(e, sp->taken_counter, sp->live_taken, target);
		mark(e, true, target, PATCH_NO_COUNTER);
		go_to(e, target);
		return true;
	default:
		e->err = -EINVAL;
		return true;
	}
}

unsigned patch_blob__shortcut(struct patch_blob *b, const uint64_t *sites, const uint64_t *tramps,
			      size_t n)
{
	b->nshortcuts = 0;
	for (uint32_t j = 0; j < b->njumps; j++) {
		size_t lo = sort__lower_bound_u64(sites, n, b->jumps[j].to);
		int64_t d;
		int32_t d32;

		if (lo == n || sites[lo] != b->jumps[j].to || sites[lo] == b->site ||
		    b->jumps[j].off + 4 > b->tramp_len)
			continue;
		d = (int64_t)(tramps[lo] - (b->tramp + b->jumps[j].off + 4));
		if (d < INT32_MIN || d > INT32_MAX)
			continue;
		d32 = (int32_t)d;
		memcpy(b->tramp_code + b->jumps[j].off, &d32, 4);
		if (b->nshortcuts < UINT8_MAX)
			b->nshortcuts++;
	}
	return b->nshortcuts;
}

void patch_blob__release(struct patch_blob *b)
{
	free(b->jumps);
	free(b->tramp_code);
	free(b->pcs);
	free(b->lock_offsets);
	memset(b, 0, sizeof(*b));
}

/* Per thread (the install makes trampolines on two threads, see patch_backend.c), kept for
 * every site it makes: a capstone handle, an instruction for decoding a window's
 * instructions, and the emitter (allocating and clearing one costs more than a site's
 * trampoline, 35,000 times for sqlite3). Released by trampoline__thread_done. */
static __thread csh tls_cs;
static __thread bool tls_opened;
static __thread struct emitter *tls_emitter;
static __thread cs_insn *tls_insn;

/* The calling thread's capstone handle, opened at its first use. 0 if it cannot be opened. */
static csh tramp_capstone(void)
{
	if (!tls_opened) {
		if (cs_open(CS_ARCH_X86, CS_MODE_64, &tls_cs) != CS_ERR_OK)
			return 0;
		cs_option(tls_cs, CS_OPT_DETAIL, CS_OPT_ON);
		tls_opened = true;
	}
	return tls_cs;
}

/* The calling thread's emitter, reset, and its instruction for decoding into *IN. NULL when
 * out of memory. */
static struct emitter *scratch(csh cs, cs_insn **in)
{
	struct emitter *e = tls_emitter;

	if (!e && !(e = tls_emitter = calloc(1, sizeof(*e))))
		return NULL;
	if (!tls_insn && !(tls_insn = cs_malloc(cs)))
		return NULL;
	e->cs = cs;
	e->sp = NULL;
	e->pos = 0;
	e->npcs = 0;
	e->nlock = 0;
	e->no_cont = false;
	e->nconts = 0;
	e->njumps = 0;
	e->err = 0;
	*in = tls_insn;
	return e;
}

void trampoline__thread_done(void)
{
	if (tls_insn)
		cs_free(tls_insn, 1);
	tls_insn = NULL;
	free(tls_emitter);
	tls_emitter = NULL;
	if (tls_opened)
		cs_close(&tls_cs);
	tls_opened = false;
}

/* trampoline__emit, with the spec's continuations unless NO_CONT. Returns -ENOSPC when
 * the trampoline would not fit. */
static int emit(const struct tramp_spec *sp, bool no_cont, struct patch_blob *out)
{
	struct emitter *e;
	csh cs;
	cs_insn *in;
	const uint8_t *code = sp->bytes;
	size_t avail = sp->len;
	uint64_t addr = sp->site;
	bool transferred = false, fired, incremented = false;
	uint32_t over_at = 0, join = 0;
	uint8_t patch_len = sp->indexed ? sp->patch_len : sp->len;
	int32_t d;
	int err;

	memset(out, 0, sizeof(*out));
	if (sp->len < (sp->springboard ? 2 : 5) ||
	    sp->len > (sp->indexed ? TRAMP_MAX_RELOC : 16) || !sp->bytes ||
	    (sp->springboard && (!sp->sb_bytes || sp->indexed)))
		return -EINVAL;
	if (sp->indexed &&
	    (patch_len < 5 || patch_len > 16 || patch_len > sp->len || sp->index_reg < 0 ||
	     sp->index_reg > 15 || sp->index_reg == REG_RSP || !sp->index_slots ||
	     (sp->index_mult > 1 && sp->index_mult != 2 && sp->index_mult != 4 &&
	      sp->index_mult != 8) ||
	     (uint64_t)sp->index_slots * (sp->index_mult ? sp->index_mult : 1) > INT32_MAX ||
	     sp->entry_counter != PATCH_NO_COUNTER || sp->taken_counter != PATCH_NO_COUNTER ||
	     sp->not_taken_counter != PATCH_NO_COUNTER))
		return -EINVAL;
	cs = tramp_capstone();
	if (!cs)
		return -EINVAL;
	e = scratch(cs, &in);
	if (!e)
		return -ENOMEM;
	e->sp = sp;
	e->no_cont = no_cont;
	mark(e, true, sp->site, PATCH_NO_COUNTER); /* not fired yet */
	increment(e, sp->entry_counter, sp->live_entry, sp->site);
	/* Once the entry counter is bumped the site has fired: a thread moved to the site's
	 * address would be taken for one that has not (a uprobe there would still fire), so
	 * until the first displaced instruction has run it is stepped on, not moved. */
	fired = sp->entry_counter != PATCH_NO_COUNTER;
	if (fired)
		mark(e, PATCH_PC_FIRED, sp->site, PATCH_NO_COUNTER);

	for (uint32_t ki = 0; !e->err && avail; ki++) {
		uint64_t at = addr;
		enum reloc_kind kind;
		struct insn_ref r = {.at = at, .bytes = code};

		if (transferred) {
			e->err = -EINVAL; /* a transfer before the end */
			break;
		}
		/* As the patch analysis decoded it, when it is a plain form; else decoded here
		 * (and checked to be what the analysis saw). */
		if (sp->kinds && ki < sp->ninsns && sp->sizes[ki] <= avail) {
			r.size = sp->sizes[ki];
			r.kind = sp->kinds[ki];
		}
		if (!decode_ref(cs, in, &r, avail)) {
			e->err = -EINVAL; /* bytes that do not decode (as analysed) */
			break;
		}
		code += r.size;
		avail -= r.size;
		addr += r.size;
		kind = r.kind;
		if (kind == RELOC_NO || (kind == RELOC_JCC && avail)) {
			e->err = -EINVAL;
			break;
		}
		/* An indexed increment goes right before the table load and counts the table
		 * jump at the end of the window: from the increment on until that jump has run,
		 * a thread is stepped on (moved back it would be counted twice, left there it
		 * would be counted for an edge not taken yet). */
		if (sp->indexed && at == sp->index_at) {
			mark(e, true, at, PATCH_NO_COUNTER);
			indexed_increment(e, &over_at, &join);
			incremented = true;
		}
		if (incremented)
			mark(e, PC_STEP, at, PATCH_NO_COUNTER);
		else if (!fired || at != sp->site)
			mark(e, true, at, PATCH_NO_COUNTER);
		if (sp->indexed && kind != RELOC_COPY && kind != RELOC_RIP &&
		    (kind != RELOC_JMP_IND || avail)) {
			e->err = -EINVAL; /* an indexed window ends with its table jump only */
			break;
		}
		transferred = relocate(e, &r);
	}
	if (sp->indexed && !e->err && (!transferred || !incremented))
		e->err = -EINVAL;
	if (sp->indexed)
		indexed_over(e, over_at, join);
	if (!e->err && !transferred) {
		mark(e, true, sp->site + sp->len, PATCH_NO_COUNTER);
		go_to(e, sp->site + sp->len);
	}
	/* The site's jump: a jmp rel32 to the trampoline, or a jmp rel8 to the springboard
	 * and there a jmp rel32. */
	if (sp->springboard) {
		int64_t d8 = (int64_t)(sp->springboard - (sp->site + 2));

		if (d8 < -128 || d8 > 127) {
			if (!e->err)
				e->err = -ERANGE;
		}
		memset(out->code, 0xcc, sizeof(out->code));
		out->code[0] = 0xeb;
		out->code[1] = (uint8_t)(int8_t)d8;
		out->sb_code[0] = 0xe9;
		d = rel32(e, sp->springboard + 5, sp->tramp);
		memcpy(out->sb_code + 1, &d, 4);
	} else {
		out->code[0] = 0xe9;
		d = rel32(e, sp->site + 5, sp->tramp);
		memcpy(out->code + 1, &d, 4);
		memset(out->code + 5, 0xcc, sizeof(out->code) - 5);
	}
	err = e->err;
	if (err)
		goto out;
	if (sp->springboard) {
		out->sb = sp->springboard;
		memcpy(out->sb_orig, sp->sb_bytes, 5);
	}
	out->site = sp->site;
	out->len = patch_len;
	memcpy(out->orig, sp->bytes, patch_len);
	out->tramp = sp->tramp;
	out->tramp_len = e->pos;
	out->tramp_code = malloc(e->pos);
	out->pcs = malloc(e->npcs * sizeof(*out->pcs));
	out->lock_offsets = malloc((e->nlock ? e->nlock : 1) * sizeof(*out->lock_offsets));
	if (!out->tramp_code || !out->pcs || !out->lock_offsets) {
		patch_blob__release(out);
		err = -ENOMEM;
		goto out;
	}
	memcpy(out->tramp_code, e->buf, e->pos);
	memcpy(out->pcs, e->pcs, e->npcs * sizeof(*out->pcs));
	out->npcs = e->npcs;
	memcpy(out->lock_offsets, e->locks, e->nlock * sizeof(*out->lock_offsets));
	out->nlock = e->nlock;
	out->nconts = e->nconts;
	out->jumps = malloc((e->njumps ? e->njumps : 1) * sizeof(*out->jumps));
	if (!out->jumps) {
		patch_blob__release(out);
		err = -ENOMEM;
		goto out;
	}
	memcpy(out->jumps, e->jumps, e->njumps * sizeof(*out->jumps));
	out->njumps = e->njumps;
out:
	if (err)
		memset(out, 0, sizeof(*out));
	return err;
}

int trampoline__emit(const struct tramp_spec *sp, struct patch_blob *out)
{
	int err = emit(sp, false, out);

	if (err == -ENOSPC && sp->ncont)
		err = emit(sp, true, out);
	return err == -ENOSPC ? -EINVAL : err;
}
