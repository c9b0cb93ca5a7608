/*
 * Ball and Larus's branch heuristics on x86-64 machine code (see branch_heuristics.h for how
 * each one is recognised). Each block is decoded once into a few facts (registers read before
 * written, registers dereferenced before written, registers written, call, store, return);
 * successor regions combine those facts; the branch block itself is decoded for its compare.
 */
#include "branch_heuristics.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cfg/decode.h"
#include "cfg/elf_image.h"

#define REGION_MAX_BLOCKS 8
/* rax rcx rdx rsi rdi r8 r9 r10 r11 */
#define CALLER_SAVED ((uint16_t)(0x1 | 0x2 | 0x4 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800))

static const char *const names[BH_COUNT] = { "LBH", "LEH", "LHH", "PH", "OH",
					     "GH",  "CH",  "SH",  "RH" };

const char *bh__name(unsigned k)
{
	return k < BH_COUNT ? names[k] : "?";
}

const char *bh__oh_rule_name(unsigned rule)
{
	static const char *const rules[BH_OH_NRULES] = { "?", "sign", "eq_zero", "eq_imm" };

	return rule > BH_OH_NONE && rule < BH_OH_NRULES ? rules[rule] : "?";
}

int bh__lookup(const char *name)
{
	for (unsigned k = 0; k < BH_COUNT; k++)
		if (!strcasecmp(name, names[k]))
			return (int)k;
	return -1;
}

void bh__default_rates(double rates[BH_COUNT])
{
	rates[BH_LBH] = 0.88;
	rates[BH_LEH] = 0.80;
	rates[BH_LHH] = 0.75;
	rates[BH_PH] = 0.60;
	rates[BH_OH] = 0.84;
	rates[BH_GH] = 0.62;
	rates[BH_CH] = 0.78;
	rates[BH_SH] = 0.55;
	rates[BH_RH] = 0.72;
}

const uint8_t *bh_code__elf(const void *ctx, uint64_t vaddr, size_t *avail)
{
	return elf_image__code(ctx, vaddr, avail);
}

int bh_decoder__open(struct bh_decoder *d, bh_code_fn code, const void *ctx)
{
	csh cs;

	memset(d, 0, sizeof(*d));
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return -EINVAL;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	d->insn = cs_malloc(cs);
	if (!d->insn) {
		cs_close(&cs);
		return -ENOMEM;
	}
	d->cs = cs;
	d->code = code;
	d->code_ctx = ctx;
	return 0;
}

void bh_decoder__close(struct bh_decoder *d)
{
	csh cs = d->cs;

	if (d->insn)
		cs_free(d->insn, 1);
	if (d->insn)
		cs_close(&cs);
	memset(d, 0, sizeof(*d));
}

/* What a block (or a region of blocks) does, as register-family bit sets. */
struct facts {
	uint16_t ubd;   /* read before written */
	uint16_t deref; /* base or index of a memory operand before written */
	uint16_t defs;  /* written */
	bool call, store, ret, noreturn;
};

/* The compare that decides a branch. */
enum cmp_kind { CMP_NONE = 0, CMP_TEST_SAME, CMP_CMP_ZERO, CMP_CMP_IMM, CMP_REG_REG, CMP_OTHER };

struct branch_info {
	int cc;             /* jcc condition code 0..15, or -1 */
	enum cmp_kind kind;
	int reg[2];         /* register families of the compare's register operands, or -1 */
	bool wide;          /* the compare's operands are 64-bit (could be pointers) */
	uint16_t clobbered; /* families written between the compare and the jcc */
	/* The compare's first operand, to recognise compare chains: a register family, or a
	 * memory operand (base, index, displacement). */
	int op_reg, op_base, op_index;
	int64_t op_disp;
	bool op_mem;
};

static inline uint16_t fam_bit(unsigned reg)
{
	int f = x86_reg_family(reg);

	return f >= 0 && f < 16 ? (uint16_t)(1u << f) : 0;
}

/* Decodes the instruction at ADDR into the scratch insn, or returns NULL. */
static const cs_insn *decode(struct bh_decoder *d, uint64_t addr)
{
	size_t avail;
	const uint8_t *code = d->code(d->code_ctx, addr, &avail);
	cs_insn *in = d->insn;
	uint64_t a = addr;

	if (!code || !avail)
		return NULL;
	if (avail > 16)
		avail = 16;
	if (!cs_disasm_iter(d->cs, &code, &avail, &a, in))
		return NULL;
	return in;
}

static bool is_zero_idiom(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	return (in->id == X86_INS_XOR || in->id == X86_INS_SUB) && x->op_count == 2 &&
	       x->operands[0].type == X86_OP_REG && x->operands[1].type == X86_OP_REG &&
	       x->operands[0].reg == x->operands[1].reg;
}

/* Adds instruction IN to the facts FA. */
static void add_insn(struct bh_decoder *d, const cs_insn *in, struct facts *fa)
{
	const cs_x86 *x = &in->detail->x86;
	cs_regs rd, wr;
	uint8_t nrd = 0, nwr = 0;
	uint16_t reads = 0, writes = 0, derefs = 0;

	if (cs_regs_access(d->cs, in, rd, &nrd, wr, &nwr) == CS_ERR_OK) {
		for (unsigned i = 0; i < nrd; i++)
			reads |= fam_bit(rd[i]);
		for (unsigned i = 0; i < nwr; i++)
			writes |= fam_bit(wr[i]);
	}
	for (unsigned i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type != X86_OP_MEM)
			continue;
		/* A base register is a pointer (an index is an integer; lea and nop do not
		 * access memory). */
		if (in->id != X86_INS_LEA && in->id != X86_INS_NOP)
			derefs |= fam_bit(op->mem.base);
		reads |= fam_bit(op->mem.base) | fam_bit(op->mem.index);
		if ((op->access & CS_AC_WRITE) && x86_reg_family(op->mem.base) != 4 &&
		    in->id != X86_INS_PUSH && in->id != X86_INS_CALL)
			fa->store = true;
	}
	if (is_zero_idiom(in))
		reads = 0;
	reads &= ~(uint16_t)(1u << 4); /* rsp */
	derefs &= ~(uint16_t)(1u << 4);
	fa->ubd |= (reads | derefs) & ~fa->defs;
	fa->deref |= derefs & ~fa->defs;
	fa->defs |= writes;
	if (in->id == X86_INS_CALL) {
		/* The callee may write every caller-saved register (System V ABI): a use after
		 * the call is not a use of the value before it. */
		fa->defs |= CALLER_SAVED;
		fa->call = true;
	}
	if (in->id == X86_INS_RET || in->id == X86_INS_RETF || in->id == X86_INS_RETFQ)
		fa->ret = true;
}

/* Decodes block B of F into FA (zeroed first); stops at undecodable bytes. */
static void block_facts(struct bh_decoder *d, const struct cfg_func *f, uint32_t b,
			struct facts *fa)
{
	uint64_t a = f->blocks[b].start, end = f->blocks[b].end;

	memset(fa, 0, sizeof(*fa));
	while (a < end) {
		const cs_insn *in = decode(d, a);

		if (!in || !in->size)
			break;
		add_insn(d, in, fa);
		a += in->size;
	}
}

static bool writes_flags(struct bh_decoder *d, const cs_insn *in)
{
	cs_regs rd, wr;
	uint8_t nrd = 0, nwr = 0;

	if (cs_regs_access(d->cs, in, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return false;
	for (unsigned i = 0; i < nwr; i++)
		if (wr[i] == X86_REG_EFLAGS)
			return true;
	return false;
}

/* The jcc condition code of IN, or -1 (not a jcc, or jrcxz / loop). */
static int jcc_cc(const cs_insn *in)
{
	const uint8_t *op = in->detail->x86.opcode;

	if (op[0] >= 0x70 && op[0] <= 0x7f)
		return op[0] & 0xf;
	if (op[0] == 0x0f && op[1] >= 0x80 && op[1] <= 0x8f)
		return op[1] & 0xf;
	return -1;
}

/* Decodes branch block B: its jcc and the compare before it. */
static void branch_info(struct bh_decoder *d, const struct cfg_func *f, uint32_t b,
			struct branch_info *bi)
{
	uint64_t a = f->blocks[b].start, end = f->blocks[b].end;

	memset(bi, 0, sizeof(*bi));
	bi->cc = -1;
	bi->op_reg = bi->op_base = bi->op_index = -1;
	bi->reg[0] = bi->reg[1] = -1;
	while (a < end) {
		const cs_insn *in = decode(d, a);
		const cs_x86 *x;

		if (!in || !in->size)
			return;
		x = &in->detail->x86;
		if (a + in->size >= end) {
			bi->cc = jcc_cc(in);
			return;
		}
		a += in->size;
		if (!writes_flags(d, in)) {
			cs_regs rd, wr;
			uint8_t nrd = 0, nwr = 0;

			if (cs_regs_access(d->cs, in, rd, &nrd, wr, &nwr) == CS_ERR_OK)
				for (unsigned i = 0; i < nwr; i++)
					bi->clobbered |= fam_bit(wr[i]);
			continue;
		}
		/* A new flag setter: the compare, if it is one. */
		bi->clobbered = 0;
		bi->wide = false;
		bi->reg[0] = bi->reg[1] = -1;
		bi->kind = CMP_OTHER;
		if ((in->id == X86_INS_TEST || in->id == X86_INS_CMP) && x->op_count == 2) {
			const cs_x86_op *o0 = &x->operands[0], *o1 = &x->operands[1];

			bi->wide = o0->size == 8;
			bi->op_mem = o0->type == X86_OP_MEM;
			bi->op_reg = o0->type == X86_OP_REG ? x86_reg_family(o0->reg) : -1;
			bi->op_base = bi->op_mem ? (int)o0->mem.base : -1;
			bi->op_index = bi->op_mem ? (int)o0->mem.index : -1;
			bi->op_disp = bi->op_mem ? o0->mem.disp : 0;
			if (o0->type == X86_OP_REG)
				bi->reg[0] = x86_reg_family(o0->reg);
			if (o1->type == X86_OP_REG)
				bi->reg[1] = x86_reg_family(o1->reg);
			if (in->id == X86_INS_TEST) {
				if (o0->type == X86_OP_REG && o1->type == X86_OP_REG &&
				    o0->reg == o1->reg)
					bi->kind = CMP_TEST_SAME;
			} else if (o1->type == X86_OP_IMM) {
				bi->kind = o1->imm == 0 ? CMP_CMP_ZERO : CMP_CMP_IMM;
			} else if (o0->type == X86_OP_REG && o1->type == X86_OP_REG) {
				bi->kind = CMP_REG_REG;
			}
		}
	}
}

struct hctx {
	struct bh_decoder *d;
	const struct cfg_func *f;
	const struct cfg_loops *lp;
	const struct cfg_domtree *pdom;
	struct facts *bf; /* per block, lazily */
	bool *have;
	int32_t *header_loop; /* per vertex: loop whose header it is, or -1 */
};

static const struct facts *get_facts(struct hctx *h, uint32_t b)
{
	if (!h->have[b]) {
		block_facts(h->d, h->f, b, &h->bf[b]);
		h->have[b] = true;
	}
	return &h->bf[b];
}

/* Whether the path from S that has no further branch (single out-edges: fall-through,
 * jump, call return) returns or calls a no-return function, into R. */
static void chain_exits(struct hctx *h, uint32_t s, struct facts *r)
{
	const struct cfg_func *f = h->f;

	for (unsigned n = 0; n < REGION_MAX_BLOCKS && s < f->nblocks; n++) {
		const struct cfg_block *cb = &f->blocks[s];
		const struct cfg_edge *e;

		if (cb->nsucc != 1)
			return;
		e = &f->edges[f->succ[cb->first_succ]];
		if (e->kind == EDGE_RETURN || e->kind == EDGE_TAIL_CALL) {
			r->ret = true;
			return;
		}
		if (e->kind == EDGE_NORETURN) {
			r->noreturn = true;
			return;
		}
		if (e->kind != EDGE_CALL_RETURN && e->kind != EDGE_FALLTHROUGH &&
		    e->kind != EDGE_JUMP)
			return;
		s = e->to;
	}
}

/* The facts of the region starting at successor S (EXIT: a return). */
static void region_facts(struct hctx *h, uint32_t s, struct facts *r)
{
	const struct cfg_func *f = h->f;

	memset(r, 0, sizeof(*r));
	if (s >= f->nblocks) {
		r->ret = true;
		return;
	}
	for (unsigned n = 0; n < REGION_MAX_BLOCKS; n++) {
		const struct facts *b = get_facts(h, s);
		const struct cfg_block *cb = &f->blocks[s];
		const struct cfg_edge *e1;

		r->ubd |= b->ubd & ~r->defs;
		r->deref |= b->deref & ~r->defs;
		r->defs |= b->defs;
		r->call |= b->call;
		r->store |= b->store;
		r->ret |= b->ret;
		for (uint32_t k = 0; k < cb->nsucc; k++) {
			const struct cfg_edge *e = &f->edges[f->succ[cb->first_succ + k]];

			if (e->kind == EDGE_RETURN || e->kind == EDGE_TAIL_CALL)
				r->ret = true;
			if (e->kind == EDGE_NORETURN && cb->nsucc == 1)
				r->noreturn = true;
		}
		if (cb->nsucc != 1)
			return;
		e1 = &f->edges[f->succ[cb->first_succ]];
		if (e1->kind == EDGE_JUMP && e1->to < f->nblocks) {
			chain_exits(h, e1->to, r);
			return;
		}
		if ((e1->kind != EDGE_CALL_RETURN && e1->kind != EDGE_FALLTHROUGH) ||
		    e1->to >= f->nblocks || e1->to == s)
			return;
		if (f->blocks[e1->to].npred != 1) {
			chain_exits(h, e1->to, r);
			return;
		}
		s = e1->to;
	}
}

static bool postdominates(const struct hctx *h, uint32_t s, uint32_t b)
{
	return cfg_dom__dominates(h->pdom, s, b);
}

static bool is_back(const struct cfg_loops *lp, uint32_t e)
{
	if (lp->is_back_edge && lp->is_back_edge[e])
		return true;
	for (uint32_t i = 0; i < lp->nirreducible; i++)
		if (lp->irreducible_edges[i] == e)
			return true;
	return false;
}

/* True when S is a loop header or pre-header (see the header). */
static bool header_or_preheader(const struct hctx *h, uint32_t s)
{
	const struct cfg_func *f = h->f;
	const struct cfg_edge *e;
	int32_t l;

	if (s >= f->nblocks)
		return false;
	if (h->header_loop[s] >= 0)
		return true;
	if (f->blocks[s].nsucc != 1)
		return false;
	e = &f->edges[f->succ[f->blocks[s].first_succ]];
	if (e->to >= f->nblocks)
		return false;
	l = h->header_loop[e->to];
	return l >= 0 && !cfg_loops__contains(h->lp, (uint32_t)l, s);
}

/* True when block C compares OP's operand against a constant (or branches again on the
 * flags of the same compare). */
static bool same_compare(struct hctx *h, const struct branch_info *bi, uint32_t c)
{
	struct branch_info nb;

	if (c >= h->f->nblocks || h->f->blocks[c].nsucc != 2)
		return false;
	branch_info(h->d, h->f, c, &nb);
	if (nb.cc < 0)
		return false;
	if (nb.kind == CMP_NONE)
		return true;
	if (nb.kind != CMP_CMP_IMM && nb.kind != CMP_CMP_ZERO && nb.kind != CMP_TEST_SAME)
		return false;
	if (bi->op_mem)
		return nb.op_mem && nb.op_base == bi->op_base && nb.op_index == bi->op_index &&
		       nb.op_disp == bi->op_disp;
	return bi->op_reg >= 0 && nb.op_reg == bi->op_reg;
}

/* True when branch B's compare against a constant is part of a chain of compares of the same
 * operand against constants (its "not equal" successor NE, or a predecessor, compares it
 * again): a switch lowered to compares, a multiway branch on which Ball and Larus's
 * heuristics make no prediction. */
static bool compare_chain(struct hctx *h, const struct branch_info *bi, uint32_t b, uint32_t ne)
{
	const struct cfg_func *f = h->f;

	if (same_compare(h, bi, ne))
		return true;
	for (uint32_t k = 0; k < f->blocks[b].npred; k++) {
		const struct cfg_edge *e = &f->edges[f->pred[f->blocks[b].first_pred + k]];

		if (e->from != b && same_compare(h, bi, e->from))
			return true;
	}
	return false;
}

/* Sets heuristic K on BR predicting successor index WHICH (0 or 1). */
static void set(struct bh_branch *br, unsigned k, unsigned which)
{
	br->applies |= (uint16_t)(1u << k);
	if (which)
		br->predicts |= (uint16_t)(1u << k);
}

/* "Exactly one of A0, A1": the index that holds, or -1. */
static int exactly_one(bool a0, bool a1)
{
	return a0 == a1 ? -1 : a0 ? 0 : 1;
}

static void classify(struct hctx *h, struct bh_branch *br)
{
	const struct cfg_func *f = h->f;
	uint32_t b = br->block, s[2], i;
	bool back[2];
	struct facts r[2];
	struct branch_info bi;
	int w;
	bool ph = false;

	for (i = 0; i < 2; i++) {
		s[i] = f->edges[br->edge[i]].to;
		back[i] = is_back(h->lp, br->edge[i]);
	}
	if (back[0] || back[1]) {
		if (back[0] != back[1])
			set(br, BH_LBH, back[0] ? 0 : 1);
		return;
	}
	for (i = 0; i < 2; i++) {
		region_facts(h, s[i], &r[i]);
		if (r[i].noreturn)
			br->noreturn |= (uint8_t)(1u << i);
	}
	branch_info(h->d, f, b, &bi);

	/* LEH */
	if (h->lp->innermost && h->lp->innermost[b] >= 0 &&
	    !(s[0] < f->nblocks && h->header_loop[s[0]] >= 0) &&
	    !(s[1] < f->nblocks && h->header_loop[s[1]] >= 0)) {
		uint32_t l = (uint32_t)h->lp->innermost[b];
		bool ex0 = s[0] >= f->nblocks || !cfg_loops__contains(h->lp, l, s[0]);
		bool ex1 = s[1] >= f->nblocks || !cfg_loops__contains(h->lp, l, s[1]);

		w = exactly_one(ex0, ex1);
		if (w >= 0)
			set(br, BH_LEH, (unsigned)!w);
	}
	/* LHH */
	w = exactly_one(header_or_preheader(h, s[0]) && !postdominates(h, s[0], b),
			header_or_preheader(h, s[1]) && !postdominates(h, s[1], b));
	if (w >= 0)
		set(br, BH_LHH, (unsigned)w);
	/* CH, SH, RH */
	w = exactly_one(r[0].call && !postdominates(h, s[0], b),
			r[1].call && !postdominates(h, s[1], b));
	if (w >= 0)
		set(br, BH_CH, (unsigned)!w);
	w = exactly_one(r[0].store && !postdominates(h, s[0], b),
			r[1].store && !postdominates(h, s[1], b));
	if (w >= 0)
		set(br, BH_SH, (unsigned)!w);
	w = exactly_one(r[0].ret && !(s[0] < f->nblocks && postdominates(h, s[0], b)),
			r[1].ret && !(s[1] < f->nblocks && postdominates(h, s[1], b)));
	if (w >= 0)
		set(br, BH_RH, (unsigned)!w);
	if (bi.cc < 0)
		return;
	/* Compare operands still holding the compared values at the jcc. */
	for (i = 0; i < 2; i++)
		if (bi.reg[i] >= 0 && (bi.clobbered & (1u << bi.reg[i])))
			bi.reg[i] = -1;
	/* PH: je (4) / jne (5) on pointers. */
	if ((bi.cc == 4 || bi.cc == 5) && bi.wide) {
		uint16_t ptrs = r[0].deref | r[1].deref;

		if ((bi.kind == CMP_TEST_SAME || bi.kind == CMP_CMP_ZERO) && bi.reg[0] >= 0)
			ph = ptrs & (1u << bi.reg[0]);
		else if (bi.kind == CMP_REG_REG && bi.reg[0] >= 0 && bi.reg[1] >= 0)
			ph = (ptrs & (1u << bi.reg[0])) && (ptrs & (1u << bi.reg[1]));
		if (ph)
			set(br, BH_PH, bi.cc == 4 ? 1 : 0);
	}
	/* OH */
	if (bi.kind == CMP_TEST_SAME || bi.kind == CMP_CMP_ZERO) {
		switch (bi.cc) {
		case 0x8: case 0xc: case 0xe: /* js, jl, jle: "< 0", "<= 0" fail */
			set(br, BH_OH, 1);
			br->oh_rule = BH_OH_SIGN;
			break;
		case 0x9: case 0xd: case 0xf: /* jns, jge, jg */
			set(br, BH_OH, 0);
			br->oh_rule = BH_OH_SIGN;
			break;
		}
	}
	if ((bi.kind == CMP_TEST_SAME || bi.kind == CMP_CMP_ZERO || bi.kind == CMP_CMP_IMM) &&
	    (bi.cc == 4 || bi.cc == 5) && !ph &&
	    !compare_chain(h, &bi, b, s[bi.cc == 4 ? 1 : 0])) {
		set(br, BH_OH, bi.cc == 4 ? 1 : 0);
		br->oh_rule = bi.kind == CMP_CMP_IMM ? BH_OH_EQ_IMM : BH_OH_EQ_ZERO;
	}
	/* GH */
	{
		uint16_t regs = 0;
		bool g0, g1;

		for (i = 0; i < 2; i++)
			if (bi.reg[i] >= 0 && bi.reg[i] != 4)
				regs |= (uint16_t)(1u << bi.reg[i]);
		g0 = (r[0].ubd & regs) && s[0] < f->nblocks && !postdominates(h, s[0], b);
		g1 = (r[1].ubd & regs) && s[1] < f->nblocks && !postdominates(h, s[1], b);
		w = exactly_one(g0, g1);
		if (w >= 0)
			set(br, BH_GH, (unsigned)w);
	}
}

int branch_heuristics__func(struct bh_func *out, struct bh_decoder *d, const struct cfg_func *f,
			    const struct cfg_loops *lp, const struct cfg_domtree *pdom)
{
	struct hctx h = { .d = d, .f = f, .lp = lp, .pdom = pdom };
	uint32_t b, n = 0;
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	h.bf = calloc(f->nblocks + 1, sizeof(*h.bf));
	h.have = calloc(f->nblocks + 1, sizeof(*h.have));
	h.header_loop = malloc((f->nblocks + 1) * sizeof(*h.header_loop));
	out->branches = calloc(f->nblocks + 1, sizeof(*out->branches));
	if (!h.bf || !h.have || !h.header_loop || !out->branches)
		goto out;
	for (b = 0; b <= f->nblocks; b++)
		h.header_loop[b] = -1;
	for (uint32_t l = 0; l < lp->nloops; l++)
		h.header_loop[lp->loops[l].header] = (int32_t)l;
	for (b = 0; b < f->nblocks; b++) {
		const struct cfg_block *cb = &f->blocks[b];
		struct bh_branch *br = &out->branches[n];
		int t = -1, nt = -1;

		if (cb->nsucc != 2)
			continue;
		for (uint32_t k = 0; k < 2; k++) {
			uint32_t e = f->succ[cb->first_succ + k];
			uint8_t kind = f->edges[e].kind;
			bool cond_tail = kind == EDGE_TAIL_CALL &&
					 (f->edges[e].flags & CFG_EDGE_COND_TAKEN);

			if (kind == EDGE_NOT_TAKEN)
				nt = (int)e;
			else if (kind == EDGE_TAKEN || cond_tail)
				t = (int)e;
		}
		if (t < 0 || nt < 0 || f->edges[t].to == f->edges[nt].to)
			continue;
		memset(br, 0, sizeof(*br));
		br->block = b;
		br->edge[0] = (uint32_t)t;
		br->edge[1] = (uint32_t)nt;
		classify(&h, br);
		n++;
	}
	out->nbranches = n;
	err = 0;
out:
	if (err) {
		free(out->branches);
		memset(out, 0, sizeof(*out));
	}
	free(h.bf);
	free(h.have);
	free(h.header_loop);
	return err;
}

void bh_func__free(struct bh_func *bf)
{
	free(bf->branches);
	memset(bf, 0, sizeof(*bf));
}
