/*
 * Jump-table resolution by forward symbolic execution of the chain before an indirect jump
 * (see jump_table.h). Values are affine in at most one symbol: c + s * SYM. Symbols 0..15 are
 * the general registers at the start of the chain; later symbols stand for loaded values
 * (remembering their address, size and extension) or for anything not modelled. Memory is
 * modelled only as cells at affine addresses, forgotten on any store that may alias them.
 */
#include "jump_table.h"
#include "addr_map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CHAIN 64
#define MAX_SYMS (16 + 2 * MAX_CHAIN + 8)
#define MAX_ENTRIES 65536
#define MAX_UNBOUNDED 1024 /* entries read of a table whose index has no bound */

struct sval {
	int sym;   /* -1: constant */
	int64_t c; /* value = c + s * sym */
	int64_t s;
};

struct symdef {
	bool is_load;
	uint8_t size;
	bool sext;
	struct sval addr;
	/* A load: the instruction, and its memory operand's index and base registers (family,
	 * -1 for none), their values just before it and the operand's scale. */
	uint64_t insn;
	int idx_fam, base_fam;
	struct sval idx_val, base_val;
	int64_t idx_scale;
	/* The load's operand was disp(,%idx,scale) with an index register that a 32-bit write
	 * (zero-extending) set along the chain: the slot is disp + scale * i, i in [0, 2^32). */
	bool zx_index;
	int64_t disp;
	uint8_t scale;
};

#define MAX_MEMO 32

/* A memory cell known along the chain: a store's value, or a load's symbol (so that two
 * loads of the same cell give the same value, as -O0 code reloads stack slots). */
struct memo {
	struct sval addr;
	uint8_t size;
	struct sval val;
};

/* A cell whose address is not affine in one symbol (base and index both unknown), known by
 * the values of its base and index: `cmpb $0xc,(%rax,%rdx,1); ja` then
 * `movzbl (%rax,%rdx,1),%edx` reads the byte the compare bounded (Debian dash). Every store
 * forgets them all (any store may alias such a cell). */
struct smemo {
	struct sval base, index;
	int64_t disp;
	int scale;
	uint8_t size;
	bool sext;
	struct sval val;
};

struct jt_state {
	struct decoder *d;
	const struct jt_cfg *cfg;
	uint64_t chain_start;
	uint8_t const_state[16]; /* 0 not asked, 1 constant, 2 not constant */
	int64_t const_val[16];
	struct memo memo[MAX_MEMO];
	int nmemo;
	struct smemo smemo[MAX_MEMO];
	int nsmemo;
	struct sval reg[16];
	struct symdef syms[MAX_SYMS];
	int nsyms;
	bool cmp_valid;
	struct sval cmp_val;
	int64_t cmp_imm;
	bool bound_valid;
	struct sval bound_val; /* bound_min <= bound_val <= bound_max (signed when bound_min < 0) */
	uint64_t bound_max;
	int64_t bound_min;
	uint8_t bound_w; /* operand size of the bounding compare */
	uint8_t cmp_size;
	bool zx[16]; /* the register was last written by a 32-bit (zero-extending) operation */
	uint64_t sym_max[MAX_SYMS]; /* symbol <= sym_max (from `and $mask`), UINT64_MAX: none */
	/* The instruction and memory operand being read, for the load symbols it makes. */
	const cs_insn *cur_in;
	const cs_x86_op *cur_op;
};

/* Two's-complement arithmetic, as the machine does it (no signed-overflow UB). */
static int64_t wadd(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

static int64_t wmul(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a * (uint64_t)b);
}

static struct sval *reg_of(struct jt_state *st, unsigned reg);

static struct sval fresh(struct jt_state *st)
{
	struct sval v = { .sym = st->nsyms, .c = 0, .s = 1 };

	if (st->nsyms < MAX_SYMS)
		memset(&st->syms[st->nsyms++], 0, sizeof(struct symdef));
	else
		v.sym = MAX_SYMS - 1; /* saturate: the last symbol is never a load */
	return v;
}

static struct sval load_sym(struct jt_state *st, struct sval addr, uint8_t size, bool sext)
{
	struct sval v = fresh(st);

	if (v.sym == MAX_SYMS - 1)
		return v;
	st->syms[v.sym] = (struct symdef){ .is_load = true, .size = size, .sext = sext,
					   .addr = addr, .idx_fam = -1, .base_fam = -1 };
	if (st->cur_in && st->cur_op) {
		struct symdef *sd = &st->syms[v.sym];
		const struct sval *ix = st->cur_op->mem.index != X86_REG_INVALID
						? reg_of(st, st->cur_op->mem.index)
						: NULL;
		const struct sval *bs = st->cur_op->mem.base != X86_REG_INVALID &&
						st->cur_op->mem.base != X86_REG_RIP
						? reg_of(st, st->cur_op->mem.base)
						: NULL;

		sd->insn = st->cur_in->address;
		if (ix) {
			sd->idx_fam = x86_reg_family(st->cur_op->mem.index);
			sd->idx_val = *ix;
			sd->idx_scale = st->cur_op->mem.scale;
		}
		if (bs) {
			sd->base_fam = x86_reg_family(st->cur_op->mem.base);
			sd->base_val = *bs;
		}
	}
	return v;
}

/* The sign extension of the 4-byte load symbol SYM: the same load, sign-extended (the
 * instruction and registers of the load kept). */
static struct sval resext(struct jt_state *st, int sym)
{
	struct symdef old = st->syms[sym];
	struct sval v = load_sym(st, old.addr, 4, true);

	if (v.sym != MAX_SYMS - 1) {
		struct symdef *sd = &st->syms[v.sym];

		sd->insn = old.insn;
		sd->idx_fam = old.idx_fam;
		sd->base_fam = old.base_fam;
		sd->idx_val = old.idx_val;
		sd->base_val = old.base_val;
		sd->idx_scale = old.idx_scale;
	}
	return v;
}

static bool sv_add(struct sval a, struct sval b, struct sval *out)
{
	if (a.sym >= 0 && b.sym >= 0) {
		if (a.sym != b.sym)
			return false;
		*out = (struct sval){ .sym = a.sym, .c = wadd(a.c, b.c), .s = wadd(a.s, b.s) };
		return true;
	}
	*out = a.sym >= 0 ? a : b;
	out->c = wadd(a.c, b.c);
	if (a.sym < 0 && b.sym < 0)
		out->s = 0;
	return true;
}

static struct sval sv_scale(struct sval a, int64_t k)
{
	a.c = wmul(a.c, k);
	a.s = wmul(a.s, k);
	return a;
}

static struct sval *reg_of(struct jt_state *st, unsigned reg)
{
	int f = x86_reg_family(reg);

	return f >= 0 ? &st->reg[f] : NULL;
}

#define MAX_BACK (1 << 18) /* instructions visited looking for a register's definitions */

static bool writes_family(csh cs, const cs_insn *in, int fam)
{
	cs_regs rd, wr;
	uint8_t nrd, nwr, i;

	if (cs_regs_access(cs, in, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return true;
	for (i = 0; i < nwr; i++)
		if (x86_reg_family(wr[i]) == fam)
			return true;
	/* Calls clobber the caller-saved registers (rax rcx rdx rsi rdi r8-r11). */
	if (in->id == X86_INS_CALL || in->id == X86_INS_SYSCALL)
		return fam <= 2 || fam == 6 || fam == 7 || (fam >= 8 && fam <= 11);
	return false;
}

/* The constant a 64-bit register write puts in FAM, if it is one we recognise. */
static bool const_def(const cs_insn *in, int fam, int64_t *val)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o0 = x->op_count > 0 ? &x->operands[0] : NULL;
	const cs_x86_op *o1 = x->op_count > 1 ? &x->operands[1] : NULL;

	if (!o0 || !o1 || o0->type != X86_OP_REG || x86_reg_family(o0->reg) != fam)
		return false;
	if (in->id == X86_INS_LEA && o1->type == X86_OP_MEM && o1->mem.base == X86_REG_RIP &&
	    o1->mem.index == X86_REG_INVALID && o0->size == 8) {
		*val = (int64_t)(in->address + in->size + (uint64_t)o1->mem.disp);
		return true;
	}
	/* xor %r32,%r32 / xor %r64,%r64 (and sub): the zero idiom. */
	if ((in->id == X86_INS_XOR || in->id == X86_INS_SUB) && o1->type == X86_OP_REG &&
	    o1->reg == o0->reg && (o0->size == 8 || o0->size == 4)) {
		*val = 0;
		return true;
	}
	if ((in->id == X86_INS_MOV || in->id == X86_INS_MOVABS) && o1->type == X86_OP_IMM &&
	    (o0->size == 8 || (o0->size == 4 && o1->imm >= 0 && o1->imm <= UINT32_MAX))) {
		*val = o1->imm;
		return true;
	}
	return false;
}

/* Does IN write the register family FAM as a zero-extended 32-bit value (its destination
 * a 32-bit register of FAM, or movzx)? */
static bool zx_def(const cs_insn *in, int fam)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o0 = x->op_count > 0 ? &x->operands[0] : NULL;

	if (!o0 || o0->type != X86_OP_REG || x86_reg_family(o0->reg) != fam)
		return false;
	if (in->id == X86_INS_XCHG || in->id == X86_INS_CMPXCHG || in->id == X86_INS_XADD)
		return false;
	return in->id == X86_INS_MOVZX || o0->size == 4;
}

/* The search of jump_table__reg_const; with ZX, each write of FAM need only be a 32-bit
 * (zero-extending) write, whatever its value (VAL unused). */
static int reg_search(struct decoder *d, const struct jt_cfg *cfg, uint64_t addr, int fam,
		      bool zx, int64_t *val)
{
	struct addr_map seen = { 0 };
	uint64_t *work = malloc(MAX_BACK * sizeof(*work)), small[16], *buf = small, *big = NULL;
	size_t nw = 0, i, n;
	uint32_t one;
	bool found = false, ok = work != NULL;

	if (ok)
		work[nw++] = addr;
	while (ok && nw) {
		uint64_t a = work[--nw];

		buf = small;
		n = cfg->preds(cfg->ctx, a, buf, 16);
		if (n != SIZE_MAX && n > 16) {
			uint64_t *nb = realloc(big, n * sizeof(*nb));

			if (!nb) {
				ok = false;
				break;
			}
			big = buf = nb;
			n = cfg->preds(cfg->ctx, a, buf, n);
		}
		if (n == SIZE_MAX || n == 0) {
			ok = false;
			break;
		}
		for (i = 0; i < n && ok; i++) {
			const cs_insn *in;
			int64_t v;

			if (addr_map__get(&seen, buf[i], &one))
				continue;
			if (seen.n >= MAX_BACK || nw >= MAX_BACK || addr_map__put(&seen, buf[i], 1)) {
				ok = false;
				break;
			}
			in = decoder__detail(d, buf[i]);
			if (!in) {
				ok = false;
			} else if (!writes_family(d->cs, in, fam)) {
				work[nw++] = buf[i];
			} else if (zx) {
				ok = zx_def(in, fam);
				found = true;
			} else if (!const_def(in, fam, &v) || (found && v != *val)) {
				ok = false;
			} else {
				*val = v;
				found = true;
			}
		}
	}
	addr_map__free(&seen);
	free(work);
	free(big);
	return ok && found ? 0 : -ENOENT;
}

int jump_table__reg_const(struct decoder *d, const struct jt_cfg *cfg, uint64_t addr, int fam,
			  int64_t *val)
{
	return reg_search(d, cfg, addr, fam, false, val);
}

/* Replaces an initial register symbol in V by that register's constant value at the chain
 * start, when it has one. */
static void try_const(struct jt_state *st, struct sval *v)
{
	int r = v->sym;

	if (r < 0 || r >= 16 || !st->cfg || !st->cfg->preds)
		return;
	if (st->const_state[r] == 0) {
		/* decoder__detail reuses one scratch instruction: the caller's is gone after. */
		st->const_state[r] = jump_table__reg_const(st->d, st->cfg, st->chain_start, r,
							   &st->const_val[r]) ? 2 : 1;
	}
	if (st->const_state[r] == 1)
		*v = (struct sval){ .sym = -1, .c = wadd(v->c, wmul(v->s, st->const_val[r])) };
}

/* The address of a memory operand as a value, or false when not affine. */
static bool mem_addr(struct jt_state *st, const cs_insn *in, const cs_x86_op *op,
		     struct sval *out)
{
	struct sval v = { .sym = -1, .c = op->mem.disp, .s = 0 };


	if (op->mem.segment != X86_REG_INVALID)
		return false;
	if (op->mem.base == X86_REG_RIP) {
		v.c = wadd(v.c, (int64_t)(in->address + in->size));
	} else if (op->mem.base != X86_REG_INVALID) {
		struct sval *b = reg_of(st, op->mem.base);

		if (!b || !sv_add(v, *b, &v))
			return false;
	}
	if (op->mem.index != X86_REG_INVALID) {
		struct sval *ix = reg_of(st, op->mem.index), bv, iv;

		if (!ix)
			return false;
		if (!sv_add(v, sv_scale(*ix, op->mem.scale), &v)) {
			/* Two symbols: the base may be a constant set before the chain. */
			bv = *reg_of(st, op->mem.base);
			iv = *ix;
			try_const(st, &bv);
			try_const(st, &iv);
			v = (struct sval){ .sym = -1, .c = op->mem.disp };
			if (!sv_add(v, bv, &v) || !sv_add(v, sv_scale(iv, op->mem.scale), &v))
				return false;
		}
	}
	*out = v;
	return true;
}

static bool same_sval(struct sval a, struct sval b)
{
	return a.sym == b.sym && a.c == b.c && (a.sym < 0 || a.s == b.s);
}

/* Two cells certainly do not overlap: same base symbol and scale, disjoint constant ranges,
 * or both constant addresses that are disjoint. */
static bool disjoint(struct sval a, uint8_t asz, struct sval b, uint8_t bsz)
{
	if (a.sym != b.sym || (a.sym >= 0 && a.s != b.s))
		return false;
	if (a.c > INT64_MAX - 16 || b.c > INT64_MAX - 16)
		return false;
	return a.c + asz <= b.c || b.c + bsz <= a.c;
}

/* A store of VAL (or of an unknown value when VAL is NULL) to ADDR/SIZE; ADDR NULL: the
 * address is not affine, so every cell is forgotten. */
static void memo_store(struct jt_state *st, const struct sval *addr, uint8_t size,
		       const struct sval *val)
{
	int i, k = 0;

	st->nsmemo = 0;
	if (!addr) {
		st->nmemo = 0;
		return;
	}
	for (i = 0; i < st->nmemo; i++)
		if (disjoint(st->memo[i].addr, st->memo[i].size, *addr, size))
			st->memo[k++] = st->memo[i];
	st->nmemo = k;
	if (val && st->nmemo < MAX_MEMO)
		st->memo[st->nmemo++] = (struct memo){ .addr = *addr, .size = size, .val = *val };
}

static struct sval memo_load(struct jt_state *st, struct sval addr, uint8_t size, bool sext)
{
	struct sval v;
	int i;

	for (i = 0; i < st->nmemo; i++)
		if (same_sval(st->memo[i].addr, addr) && st->memo[i].size >= size)
			return st->memo[i].val;
	v = load_sym(st, addr, size, sext);
	if (st->nmemo < MAX_MEMO)
		st->memo[st->nmemo++] = (struct memo){ .addr = addr, .size = size, .val = v };
	return v;
}

/* The value of a load from OP (sign-extended: SEXT), whose address is not affine: the value of
 * an earlier load of the same size and extension from the same base and index values (no
 * store between), or a new unknown. */
static bool smemo_load(struct jt_state *st, const cs_x86_op *op, bool sext, struct sval *out)
{
	struct sval zero = { .sym = -1 }, b = zero, ix = zero, *r;

	if (op->mem.segment != X86_REG_INVALID || op->mem.base == X86_REG_RIP)
		return false;
	if (op->mem.base != X86_REG_INVALID) {
		if (!(r = reg_of(st, op->mem.base)))
			return false;
		b = *r;
	}
	if (op->mem.index != X86_REG_INVALID) {
		if (!(r = reg_of(st, op->mem.index)))
			return false;
		ix = *r;
	}
	for (int i = 0; i < st->nsmemo; i++) {
		const struct smemo *m = &st->smemo[i];

		if (same_sval(m->base, b) && same_sval(m->index, ix) && m->disp == op->mem.disp &&
		    m->scale == op->mem.scale && m->size == op->size && m->sext == sext) {
			*out = m->val;
			return true;
		}
	}
	*out = fresh(st);
	if (out->sym != MAX_SYMS - 1 && st->nsmemo < MAX_MEMO)
		st->smemo[st->nsmemo++] = (struct smemo){ .base = b, .index = ix,
							  .disp = op->mem.disp,
							  .scale = op->mem.scale, .size = op->size,
							  .sext = sext, .val = *out };
	return true;
}

/* Records on a load's symbol V that its operand is disp(B,%idx,scale), B none or a register
 * holding a constant, with an index that a 32-bit operation set (see struct symdef). */
static void note_index(struct jt_state *st, const cs_x86_op *op, struct sval v)
{
	struct sval *b = NULL;
	int f;

	if (v.sym < 16 || v.sym == MAX_SYMS - 1 || v.c != 0 || v.s != 1 ||
	    !st->syms[v.sym].is_load || op->mem.base == X86_REG_RIP ||
	    op->mem.segment != X86_REG_INVALID || op->mem.index == X86_REG_INVALID)
		return;
	/* A base register must hold a constant (`lea T(%rip),%r11; jmp *(%r11,%rdi,8)`). */
	if (op->mem.base != X86_REG_INVALID && (!(b = reg_of(st, op->mem.base)) || b->sym >= 0))
		return;
	f = x86_reg_family(op->mem.index);
	if (f < 0)
		return;
	if (!st->zx[f]) {
		/* Not written along the chain: its value at the chain start, zero-extended
		 * on every path there (`mov %edx,%ebx` in the prologue, calls between)? */
		int64_t unused;

		if (st->reg[f].sym != f || st->reg[f].c != 0 || st->reg[f].s != 1 || !st->cfg ||
		    !st->cfg->preds ||
		    reg_search(st->d, st->cfg, st->chain_start, f, true, &unused))
			return;
		st->zx[f] = true;
	}
	st->syms[v.sym].zx_index = true;
	st->syms[v.sym].disp = wadd(op->mem.disp, b ? b->c : 0);
	st->syms[v.sym].scale = (uint8_t)op->mem.scale;
}

static bool operand_value(struct jt_state *st, const cs_insn *in, const cs_x86_op *op,
			  bool sext, struct sval *out)
{
	struct sval a, *r;

	switch (op->type) {
	case X86_OP_IMM:
		*out = (struct sval){ .sym = -1, .c = op->imm };
		return true;
	case X86_OP_REG:
		r = reg_of(st, op->reg);
		if (!r)
			return false;
		*out = *r;
		return true;
	case X86_OP_MEM:
		if (!mem_addr(st, in, op, &a))
			return smemo_load(st, op, sext, out);
		st->cur_in = in;
		st->cur_op = op;
		*out = memo_load(st, a, op->size, sext);
		note_index(st, op, *out);
		st->cur_in = NULL;
		st->cur_op = NULL;
		/* A zero-extending load of a byte or a word bounds the value. */
		if (!sext && (op->size == 1 || op->size == 2) && in->id == X86_INS_MOVZX &&
		    out->sym >= 16 && out->sym != MAX_SYMS - 1 && out->c == 0 && out->s == 1)
			st->sym_max[out->sym] = op->size == 1 ? 0xff : 0xffff;
		return true;
	default:
		return false;
	}
}

static void clobber_writes(struct jt_state *st, csh cs, const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	cs_regs rd, wr;
	uint8_t nrd, nwr, i;

	for (i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM && (x->operands[i].access & CS_AC_WRITE)) {
			struct sval a;

			if (mem_addr(st, in, &x->operands[i], &a))
				memo_store(st, &a, x->operands[i].size, NULL);
			else
				memo_store(st, NULL, 0, NULL);
		}
	if (in->id == X86_INS_PUSH) {
		/* A push writes the 8 bytes below rsp, where no live object is (the ABI keeps
		 * nothing below rsp but a leaf function's red zone, and a function that pushes
		 * has none in use): it forgets only the cells addressed from rsp that it may
		 * overlap, not a cell at a constant address (`cmpl $4,x(%rip)` before the pushes
		 * of a prologue and the reload of x after them, as in Debian ls) nor one loaded
		 * through an argument (`cmpl $0x1b,(%rsi); ja; push ...; mov (%rsi),%eax; jmp
		 * *T(,%rax,8)`). Cells addressed by two registers (smemo) are all forgotten. */
		struct sval sp = st->reg[4], a;
		int j, k = 0;

		st->nsmemo = 0;
		a = (struct sval){ .sym = sp.sym, .c = wadd(sp.c, -8), .s = sp.s };
		for (j = 0; j < st->nmemo; j++)
			if (st->memo[j].addr.sym != sp.sym ||
			    disjoint(st->memo[j].addr, st->memo[j].size, a, 8))
				st->memo[k++] = st->memo[j];
		st->nmemo = k;
	} else if (in->id == X86_INS_CALL) {
		memo_store(st, NULL, 0, NULL); /* the callee writes anything */
	}

	if (cs_regs_access(cs, in, rd, &nrd, wr, &nwr) != CS_ERR_OK) {
		/* Unknown effects: forget everything. */
		for (i = 0; i < 16; i++)
			st->reg[i] = fresh(st);
		st->cmp_valid = false;
		return;
	}
	for (i = 0; i < nwr; i++) {
		struct sval *r = reg_of(st, wr[i]);

		if (r)
			*r = fresh(st);
		if (wr[i] == X86_REG_EFLAGS)
			st->cmp_valid = false;
	}
}

/* Applies the constraint of an unsigned conditional jump on the path taken along the chain:
 * an upper bound (v <= imm), or a lower bound at or above the sign bit of the compare's width
 * (`cmp $-6,%edi; jb` not taken: edi in [0xfffffffa, 0xffffffff], i.e. [-6, -1] signed),
 * which bounds v + k for a small k as a 32-bit index computes it. */
static void apply_branch(struct jt_state *st, unsigned cc, bool taken)
{
	int64_t m, lo;
	uint64_t l, sign;

	if (!st->cmp_valid)
		return;
	if (st->cmp_imm < 0 || (st->cmp_size == 4 && st->cmp_imm >= 0x80000000LL)) {
		/* A negative immediate: only a lower bound v >= imm (unsigned) says anything. */
		sign = st->cmp_size == 4 ? 0x80000000ULL : 0x8000000000000000ULL;
		l = st->cmp_size == 4 ? (uint32_t)st->cmp_imm : (uint64_t)st->cmp_imm;
		if ((cc == 0x2 && !taken) || (cc == 0x3 && taken))
			; /* v >= imm */
		else if ((cc == 0x7 && taken) || (cc == 0x6 && !taken))
			l++; /* v > imm */
		else
			return;
		if (st->cmp_size != 4 && st->cmp_size != 8)
			return;
		if (st->cmp_size == 4 && l > 0xffffffffULL)
			return;
		if (l < sign || l == 0)
			return;
		lo = st->cmp_size == 4 ? (int64_t)(int32_t)(uint32_t)l : (int64_t)l;
		st->bound_valid = true;
		st->bound_val = st->cmp_val;
		st->bound_min = lo;
		st->bound_max = (uint64_t)-1; /* -1 signed */
		st->bound_w = st->cmp_size;
		return;
	}
	switch (cc) {
	case 0x7: /* ja: not taken -> v <= imm */
		if (taken)
			return;
		m = st->cmp_imm;
		break;
	case 0x3: /* jae: not taken -> v < imm */
		if (taken || st->cmp_imm == 0)
			return;
		m = st->cmp_imm - 1;
		break;
	case 0x6: /* jbe: taken -> v <= imm */
		if (!taken)
			return;
		m = st->cmp_imm;
		break;
	case 0x2: /* jb: taken -> v < imm */
		if (!taken || st->cmp_imm == 0)
			return;
		m = st->cmp_imm - 1;
		break;
	default:
		return;
	}
	st->bound_valid = true;
	st->bound_val = st->cmp_val;
	st->bound_min = 0;
	st->bound_max = (uint64_t)m;
	st->bound_w = st->cmp_size;
}

static void step(struct jt_state *st, csh cs, const cs_insn *in, const struct dinsn *di,
		 bool taken_to_next)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o0 = x->op_count > 0 ? &x->operands[0] : NULL;
	const cs_x86_op *o1 = x->op_count > 1 ? &x->operands[1] : NULL;
	struct sval *dst = o0 && o0->type == X86_OP_REG ? reg_of(st, o0->reg) : NULL;
	struct sval v, w;

	if (di->flow == INSN_JCC) {
		apply_branch(st, di->cc, taken_to_next);
		return;
	}
	if (di->flow == INSN_CALL || di->flow == INSN_CALL_IND) {
		/* A call that returned (the chain goes on after it): the System V ABI's
		 * caller-saved registers, the flags and memory are unknown afterwards; rbx, rbp,
		 * rsp and r12-r15 keep their values. */
		static const int clobbered[] = { 0, 1, 2, 6, 7, 8, 9, 10, 11 };

		for (size_t i = 0; i < sizeof(clobbered) / sizeof(clobbered[0]); i++)
			st->reg[clobbered[i]] = fresh(st);
		st->cmp_valid = false;
		memo_store(st, NULL, 0, NULL);
		return;
	}
	switch (in->id) {
	case X86_INS_MOV:
		if (o0 && o0->type == X86_OP_MEM && o1) {
			struct sval a;

			if (!mem_addr(st, in, o0, &a)) {
				memo_store(st, NULL, 0, NULL);
				return;
			}
			if (operand_value(st, in, o1, false, &v))
				memo_store(st, &a, o0->size, &v);
			else
				memo_store(st, &a, o0->size, NULL);
			return;
		}
		/* fall through */
	case X86_INS_MOVABS:
	case X86_INS_MOVZX:
	case X86_INS_MOVSX:
	case X86_INS_MOVSXD:
		/* movzx of a byte or word register: the value is in [0, 0xff] or [0, 0xffff],
		 * whatever the register held (the bound of an index mask, as `and $0xff`).
		 * A value a compare already bounds keeps its symbol, and that tighter bound
		 * (`cmp $0x29,%al; ja; movzbl %al,%eax`: 42 entries, not 256). */
		if (dst && o1 && in->id == X86_INS_MOVZX && o1->type == X86_OP_REG &&
		    (o1->size == 1 || o1->size == 2)) {
			uint64_t mask = o1->size == 1 ? 0xff : 0xffff;
			bool known = operand_value(st, in, o1, false, &v);

			if (known && v.sym < 0) {
				*dst = (struct sval){ .sym = -1, .c = (int64_t)((uint64_t)v.c & mask) };
			} else if (known && ((st->cmp_valid && same_sval(st->cmp_val, v)) ||
					     (st->bound_valid && same_sval(st->bound_val, v)))) {
				*dst = v; /* as before: the compare's bound applies to it */
				return;
			} else {
				v = fresh(st);
				if (v.sym != MAX_SYMS - 1)
					st->sym_max[v.sym] = mask;
				*dst = v;
			}
			st->cmp_valid = false;
			return;
		}
		if (dst && o1 &&
		    operand_value(st, in, o1, in->id == X86_INS_MOVSX || in->id == X86_INS_MOVSXD,
				  &v)) {
			/* movsxd r64, r32 of a zero-extended 4-byte load: now sign-extended. */
			if (in->id == X86_INS_MOVSXD && o1->type == X86_OP_REG && v.sym >= 16 &&
			    v.c == 0 && v.s == 1 && st->syms[v.sym].is_load &&
			    st->syms[v.sym].size == 4)
				v = resext(st, v.sym);
			*dst = v;
			return;
		}
		break;
	case X86_INS_CDQE:
		v = st->reg[0];
		if (v.sym >= 16 && v.c == 0 && v.s == 1 && st->syms[v.sym].is_load &&
		    st->syms[v.sym].size == 4)
			st->reg[0] = resext(st, v.sym);
		return;
	case X86_INS_LEA:
		if (dst && o1 && o1->type == X86_OP_MEM && mem_addr(st, in, o1, &v)) {
			*dst = v;
			return;
		}
		break;
	case X86_INS_ADD:
	case X86_INS_SUB:
		if (dst && o1 && (o1->type == X86_OP_IMM || o1->type == X86_OP_REG) &&
		    operand_value(st, in, o1, false, &w)) {
			struct sval old = *dst;

			if (in->id == X86_INS_SUB)
				w = sv_scale(w, -1);
			if (!sv_add(*dst, w, &v)) {
				struct sval a0 = *dst;

				try_const(st, &a0);
				try_const(st, &w);
				if (!sv_add(a0, w, &v))
					v = fresh(st);
			}
			*dst = v;
			/* sub reg, imm sets the flags exactly as cmp reg, imm would. */
			st->cmp_valid = in->id == X86_INS_SUB && o1->type == X86_OP_IMM;
			st->cmp_val = old;
			st->cmp_imm = o1->type == X86_OP_IMM ? o1->imm : 0;
			st->cmp_size = o0->size;
			return;
		}
		break;
	case X86_INS_AND:
		if (dst && o1 && o1->type == X86_OP_IMM && o1->imm >= 0 && o1->imm < MAX_ENTRIES) {
			v = fresh(st);
			if (v.sym != MAX_SYMS - 1)
				st->sym_max[v.sym] = (uint64_t)o1->imm;
			*dst = v;
			st->cmp_valid = false;
			return;
		}
		break;
	case X86_INS_SHL:
		if (dst && o1 && o1->type == X86_OP_IMM && o1->imm >= 0 && o1->imm < 8) {
			*dst = sv_scale(*dst, (int64_t)1 << o1->imm);
			st->cmp_valid = false;
			return;
		}
		break;
	case X86_INS_CMP:
		if (o0 && o1 && (o0->type == X86_OP_REG || o0->type == X86_OP_MEM) &&
		    o1->type == X86_OP_IMM && operand_value(st, in, o0, false, &v)) {
			st->cmp_valid = true;
			st->cmp_val = v;
			st->cmp_imm = o1->imm;
			st->cmp_size = o0->size;
			return;
		}
		break;
	default:
		break;
	}
	clobber_writes(st, cs, in);
}

/* Table of TARGET = BASE + ... forms, read once the index bound is known. */
static int read_table(struct decoder *d, const struct jt_state *st, struct sval target,
		      bool via_mem, struct cfg_jump_table *jt, uint64_t **targets)
{
	const struct symdef *ld;
	struct sval a, b;
	int64_t base;
	uint64_t n, i, *t, lim;
	bool relative, by_mask = false, by_ref = false;

	if (target.sym < 0 && !via_mem) {
		/* A register holding one known code address: a jump with a single target. */
		size_t avail;

		if (!elf_image__code(d->img, (uint64_t)target.c, &avail))
			return -ENOENT;
		t = malloc(sizeof(*t));
		if (!t)
			return -ENOMEM;
		t[0] = (uint64_t)target.c;
		jt->table = 0;
		jt->entries = 1;
		jt->entry_size = 0;
		*targets = t;
		return 0;
	}
	if (target.sym < 16 || target.s != 1 || !st->syms[target.sym].is_load)
		return -ENOENT;
	ld = &st->syms[target.sym];
	if (via_mem || (ld->size == 8 && target.c == 0))
		relative = false;
	else if (ld->size == 4 && ld->sext)
		relative = true;
	else
		return -ENOENT;
	a = ld->addr; /* table slot address: a.c + a.s * SYM */
	b = st->bound_val;
	if (a.sym < 0 || a.s != (relative ? 4 : 8))
		return -ENOENT;
	if (st->bound_valid && a.sym == b.sym && b.s == 1 && st->bound_min < 0) {
		/* j = b.c + SYM in [min, -1] (a lower bound at the sign bit): slot = (a.c - a.s *
		 * b.c) + a.s * j, the index being j - min in [0, -min). After a 32-bit compare
		 * this holds only when the index register was computed by a 32-bit operation
		 * (`lea 6(%rdi),%esi`: it wraps to [0, 5]), not by a 64-bit sum. */
		if (st->bound_w == 4 && !ld->zx_index)
			return -ERANGE;
		base = wadd(wadd(a.c, -wmul(a.s, b.c)), wmul(a.s, st->bound_min));
		n = (uint64_t)(-st->bound_min);
	} else if (st->bound_valid && a.sym == b.sym && b.s == 1) {
		/* j = b.c + SYM in [0, max]  =>  slot = (a.c - a.s * b.c) + a.s * j */
		base = (int64_t)((uint64_t)a.c - (uint64_t)a.s * (uint64_t)b.c);
		n = st->bound_max + 1;
	} else if (st->sym_max[a.sym] != UINT64_MAX) {
		/* SYM = x & mask in [0, mask] */
		base = a.c;
		n = st->sym_max[a.sym] + 1;
		by_mask = true;
	} else if (!relative && ld->zx_index && ld->scale == 8) {
		/* No bound at all (a switch whose default is __builtin_unreachable, as CPython's
		 * Py_RETURN_RICHCOMPARE and its regex engine's opcode dispatch): the index is a
		 * zero-extended 32-bit value, so the slots start at the operand's displacement;
		 * the table ends where its absolute entries stop pointing into this function
		 * (a superset of the cases: adjacent tables of the same function are read too,
		 * every entry an address the code jumps to; an index past them is undefined). */
		base = ld->disp;
		n = MAX_UNBOUNDED;
		by_ref = true;
	} else {
		return -ERANGE;
	}
	if (n == 0 || n > MAX_ENTRIES)
		return -ERANGE;
	/* Indexing past the array is undefined in C: the object's size bounds the table. */
	lim = st->cfg->table_limit ? st->cfg->table_limit(st->cfg->ctx, (uint64_t)base) : 0;
	if (lim && lim / (uint64_t)a.s < n)
		n = lim / (uint64_t)a.s;
	if (n == 0)
		return -ERANGE;
	t = malloc(n * sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		uint64_t e;
		size_t avail;
		bool ok;

		ok = !elf_image__read(d->img, (uint64_t)base + i * (uint64_t)a.s, relative ? 4 : 8,
				      &e);
		if (ok)
			t[i] = relative ? (uint64_t)wadd(target.c, (int64_t)(int32_t)e) : e;
		ok = ok && elf_image__code(d->img, t[i], &avail);
		/* A mask bounds the index, not the table: without an object size, the table
		 * ends where its entries stop pointing into this function. */
		if (((by_mask && !lim) || by_ref) &&
		    (!ok || !st->cfg->in_function || !st->cfg->in_function(st->cfg->ctx, t[i]))) {
			n = i;
			jt->inferred = 1;
			break;
		}
		if (!ok) {
			free(t);
			return -ERANGE;
		}
	}
	if (n == 0) {
		free(t);
		return -ERANGE;
	}
	jt->table = (uint64_t)base;
	jt->entries = (uint32_t)n;
	jt->entry_size = relative ? 4 : 8;
	jt->relative = relative;
	jt->rel_base = relative ? (uint64_t)target.c : 0;
	/* The entry index j = (slot - base) / a.s = (a.c - base) / a.s + SYM: a register of the
	 * load's operand holds m * j (m 1, 2, 4 or 8) when its value is m * SYM + m * that
	 * constant (the index register, scaled by a.s / m in the operand; or the base). */
	jt->load_index = -1;
	jt->load_mult = 0;
	if (ld->insn) {
		int64_t c0 = (int64_t)((uint64_t)a.c - (uint64_t)base) / a.s;

		for (int r = 0; r < 2 && jt->load_index < 0; r++) {
			int fam = r ? ld->base_fam : ld->idx_fam;
			struct sval v = r ? ld->base_val : ld->idx_val;
			int64_t m = v.s, scale = r ? 1 : ld->idx_scale;

			if (fam < 0 || v.sym != a.sym || (m != 1 && m != 2 && m != 4 && m != 8) ||
			    v.c != m * c0 || scale * m != a.s)
				continue;
			jt->load = ld->insn;
			jt->load_index = (int8_t)fam;
			jt->load_mult = (uint8_t)m;
		}
	}
	*targets = t;
	return 0;
}

/* Records the jump's operand in JT for probes that recompute its target. */
static void describe_operand(const cs_insn *in, struct cfg_jump_table *jt)
{
	const cs_x86_op *op = &in->detail->x86.operands[0];

	jt->operand_ok = 0;
	jt->base = jt->index = -1;
	if (op->type == X86_OP_REG) {
		jt->base = (int8_t)x86_reg_family(op->reg);
		jt->operand_ok = jt->base >= 0 && op->size == 8;
		return;
	}
	if (op->type != X86_OP_MEM || op->mem.segment != X86_REG_INVALID ||
	    op->mem.base == X86_REG_RIP || op->mem.disp < INT32_MIN || op->mem.disp > INT32_MAX)
		return;
	jt->mem = 1;
	jt->disp = (int32_t)op->mem.disp;
	if (op->mem.base != X86_REG_INVALID && (jt->base = (int8_t)x86_reg_family(op->mem.base)) < 0)
		return;
	if (op->mem.index != X86_REG_INVALID &&
	    (jt->index = (int8_t)x86_reg_family(op->mem.index)) < 0)
		return;
	switch (op->mem.scale) {
	case 1: jt->scale_log2 = 0; break;
	case 2: jt->scale_log2 = 1; break;
	case 4: jt->scale_log2 = 2; break;
	case 8: jt->scale_log2 = 3; break;
	default: return;
	}
	jt->operand_ok = 1;
}

/* A private copy of a decoded instruction: decoder__detail reuses its scratch buffer. */
struct insn_copy {
	cs_insn in;
	cs_detail detail;
};

static const cs_insn *copy_insn(struct decoder *d, uint64_t addr, struct insn_copy *c)
{
	const cs_insn *in = decoder__detail(d, addr);

	if (!in)
		return NULL;
	c->in = *in;
	c->detail = *in->detail;
	c->in.detail = &c->detail;
	return &c->in;
}

/* Extends CHAIN (N instructions, the last the oldest) backwards while each instruction has a
 * unique predecessor that is not a syscall. A call that returns is passed through: step()
 * keeps the callee-saved registers across it, as the compiler that emitted the code did
 * (perl's Perl_sv_upgrade bounds a copy of its index before one path calls
 * Perl_sv_force_normal_flags, and uses the index after the paths meet). Returns the new
 * length. */
static int extend_chain(struct decoder *d, const struct jt_cfg *cfg, uint64_t *chain, int n)
{
	uint64_t cur = chain[n - 1], p;

	while (n <= MAX_CHAIN && cfg->unique_pred(cfg->ctx, cur, &p)) {
		const struct dinsn *di = decoder__get(d, p);

		if (!di || di->flow == INSN_SYSCALL)
			break;
		chain[n++] = p;
		cur = p;
	}
	return n;
}

/* Updates which registers hold a zero-extended 32-bit value after IN: its destination
 * register written at 32 bits (mov, lea, movzx, cvttsd2si ... to r32, which clear bits
 * 32-63) or by movzx; any other write of a register forgets it. */
static void track_zx(struct jt_state *st, csh cs, const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o0 = x->op_count > 0 ? &x->operands[0] : NULL;
	int dst = o0 && o0->type == X86_OP_REG ? x86_reg_family(o0->reg) : -1;
	cs_regs rd, wr;
	uint8_t nrd, nwr, i;

	if (cs_regs_access(cs, in, rd, &nrd, wr, &nwr) != CS_ERR_OK) {
		memset(st->zx, 0, sizeof(st->zx));
		return;
	}
	for (i = 0; i < nwr; i++) {
		int f = x86_reg_family(wr[i]);

		if (f < 0)
			continue;
		st->zx[f] = f == dst && (in->id == X86_INS_MOVZX ||
					 (o0->size == 4 && in->id != X86_INS_XCHG &&
					  in->id != X86_INS_CMPXCHG && in->id != X86_INS_XADD));
	}
}

/* Resolves JUMP by executing CHAIN (N instructions, chain[0] == JUMP, chain[n-1] the oldest). */
static int resolve_chain(struct decoder *d, uint64_t jump, const struct jt_cfg *cfg,
			 const uint64_t *chain, int n, struct cfg_jump_table *jt,
			 uint64_t **targets)
{
	int i;
	struct jt_state *st;
	struct insn_copy copy;
	const cs_insn *in;
	struct sval target;
	bool via_mem = false;
	int err;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->d = d;
	st->cfg = cfg;
	st->chain_start = chain[n - 1];
	for (i = 0; i < 16; i++)
		st->reg[i] = (struct sval){ .sym = i, .c = 0, .s = 1 };
	st->nsyms = 16;
	for (i = 0; i < MAX_SYMS; i++)
		st->sym_max[i] = UINT64_MAX;
	/* Execute from the oldest instruction forwards; chain[i-1] follows chain[i]. */
	for (i = n - 1; i >= 1; i--) {
		const struct dinsn *di = decoder__get(d, chain[i]);
		struct dinsn dcopy;
		bool taken;

		if (!di)
			goto unresolved;
		dcopy = *di;
		taken = dcopy.flow == INSN_JCC && dcopy.target == chain[i - 1] &&
			chain[i] + dcopy.size != chain[i - 1];
		in = copy_insn(d, chain[i], &copy);
		if (!in)
			goto unresolved;
		step(st, d->cs, in, &dcopy, taken);
		track_zx(st, d->cs, in);
	}
	in = copy_insn(d, jump, &copy);
	if (!in || in->detail->x86.op_count != 1)
		goto unresolved;
	if (in->detail->x86.operands[0].type == X86_OP_REG) {
		struct sval *r = reg_of(st, in->detail->x86.operands[0].reg);

		if (!r)
			goto unresolved;
		target = *r;
	} else if (in->detail->x86.operands[0].type == X86_OP_MEM) {
		struct sval a;

		if (!mem_addr(st, in, &in->detail->x86.operands[0], &a))
			goto unresolved;
		st->cur_in = in;
		st->cur_op = &in->detail->x86.operands[0];
		target = load_sym(st, a, 8, false);
		note_index(st, &in->detail->x86.operands[0], target);
		st->cur_in = NULL;
		st->cur_op = NULL;
		via_mem = true;
	} else {
		goto unresolved;
	}
	memset(jt, 0, sizeof(*jt));
	jt->jump = jump;
	err = read_table(d, st, target, via_mem, jt, targets);
	if (err)
		memset(jt, 0, sizeof(*jt));
	else
		describe_operand(in, jt);
	free(st);
	return err;
unresolved:
	free(st);
	return -ENOENT;
}

#define MAX_SPLIT 32

/*
 * The chain stops at a merge point: an instruction with several predecessors (gcc's switch
 * inside a loop: the index is computed and bounded on two paths that meet right before the
 * table load; python's eval loop: 16 paths each load an opcode and meet at `jmp *%rax`).
 * Each predecessor's path is resolved on its own; when every one gives the same table
 * (address, entry size, form), the jump is resolved with the largest bound among them (each
 * path's bound is proven for that path, so the union of the cases is the larger prefix of
 * the same table). Any path that does not resolve, or resolves to one constant target rather
 * than a table, leaves the jump unresolved (then perhaps an indirect tail call, build.c).
 */
static int resolve_split(struct decoder *d, uint64_t jump, const struct jt_cfg *cfg,
			 const uint64_t *chain, int n, struct cfg_jump_table *jt,
			 uint64_t **targets)
{
	uint64_t preds[MAX_SPLIT], sub[MAX_CHAIN + 2];
	struct cfg_jump_table best = { 0 }, one;
	uint64_t *best_t = NULL, *t;
	size_t np;
	int m, err = 0;

	if (!cfg->preds || n > MAX_CHAIN)
		return -ENOENT;
	np = cfg->preds(cfg->ctx, chain[n - 1], preds, MAX_SPLIT);
	if (np == SIZE_MAX || np < 2 || np > MAX_SPLIT)
		return -ENOENT;
	for (size_t k = 0; k < np && !err; k++) {
		const struct dinsn *di = decoder__get(d, preds[k]);

		if (!di || di->flow == INSN_SYSCALL || di->flow == INSN_JMP_IND) {
			err = -ENOENT;
			break;
		}
		memcpy(sub, chain, n * sizeof(*chain));
		sub[n] = preds[k];
		m = extend_chain(d, cfg, sub, n + 1);
		t = NULL;
		err = resolve_chain(d, jump, cfg, sub, m, &one, &t);
		if (err)
			break;
		/* Only a real table: a path that loads one constant code address (no table,
		 * entry_size 0) says nothing of the other paths' targets (sqlite3's updateMapping
		 * tail-calls one of three functions, chosen by `lea f(%rip)` on each path). */
		if (!one.table || !one.entry_size) {
			free(t);
			err = -ENOENT;
			break;
		}
		if (best_t && (one.load != best.load || one.load_index != best.load_index ||
			       one.load_mult != best.load_mult)) {
			one.load = best.load = 0;
			one.load_index = best.load_index = -1;
			one.load_mult = best.load_mult = 0;
		}
		if (best_t && (one.table != best.table || one.entry_size != best.entry_size ||
			       one.relative != best.relative || one.operand_ok != best.operand_ok)) {
			free(t);
			err = -ENOENT;
			break;
		}
		if (!best_t || one.entries > best.entries) {
			free(best_t);
			best = one;
			best_t = t;
		} else {
			free(t);
		}
	}
	if (err) {
		free(best_t);
		return err;
	}
	*jt = best;
	*targets = best_t;
	return 0;
}

int jump_table__resolve(struct decoder *d, uint64_t jump, const struct jt_cfg *cfg,
			struct cfg_jump_table *jt, uint64_t **targets)
{
	uint64_t chain[MAX_CHAIN + 1];
	int n, err, err2;

	chain[0] = jump;
	n = extend_chain(d, cfg, chain, 1);
	err = resolve_chain(d, jump, cfg, chain, n, jt, targets);
	if (err != -ERANGE && err != -ENOENT)
		return err;
	err2 = resolve_split(d, jump, cfg, chain, n, jt, targets);
	return err2 == -ENOMEM || !err2 ? err2 : err;
}
