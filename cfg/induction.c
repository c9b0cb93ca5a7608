/*
 * Loops counted by an induction variable (see induction.h): per function, its natural loops
 * (outer first), the registers each body writes (capstone's register accesses), the one-step
 * candidates, and the actions at the loop's entry and exit edges.
 */
#include "induction.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "decode.h"
#include "dominators.h"
#include "error.h"
#include "loops.h"

#define REG_RSP 4
#define NO_REG (-1)

/* Growable arrays of the result. */
struct builder {
	struct cfg_induction *ind;
	size_t cap_iv, cap_act, cap_body, cap_rej;
	struct decoder dec;
};

static int reject(struct builder *b, uint32_t func, uint32_t header, const char *why)
{
	struct cfg_induction *ind = b->ind;

	if (array_grow((void **)&ind->rejects, &b->cap_rej, ind->nrejects + 1,
		       sizeof(*ind->rejects), 16))
		return -ENOMEM;
	ind->rejects[ind->nrejects++] = (struct cfg_iv_reject){func, header, why};
	return 0;
}

/* The general registers INSN writes (explicitly or implicitly) as a mask of x86 families;
 * false when capstone cannot tell. */
static bool written_regs(csh cs, const cs_insn *in, uint32_t *mask)
{
	cs_regs rr, ww;
	uint8_t nr = 0, nw = 0;

	*mask = 0;
	if (cs_regs_access(cs, in, rr, &nr, ww, &nw) != CS_ERR_OK)
		return false;
	for (uint8_t k = 0; k < nw; k++) {
		int fam = x86_reg_family(ww[k]);

		if (fam >= 0)
			*mask |= 1u << fam;
	}
	return true;
}

/* The 64-bit register family of capstone register REG, or -1 when REG is not a full 64-bit
 * general register. */
static int reg64(unsigned reg)
{
	static const unsigned full[16] = {
	    X86_REG_RAX, X86_REG_RCX, X86_REG_RDX, X86_REG_RBX, X86_REG_RSP, X86_REG_RBP,
	    X86_REG_RSI, X86_REG_RDI, X86_REG_R8,  X86_REG_R9,	X86_REG_R10, X86_REG_R11,
	    X86_REG_R12, X86_REG_R13, X86_REG_R14, X86_REG_R15,
	};

	for (int k = 0; k < 16; k++)
		if (full[k] == reg)
			return k;
	return -1;
}

/* When IN steps a 64-bit register by a constant (add/sub $imm, inc, dec, lea imm(R) into
 * R), its family, with the step in *STEP; else -1. */
static int step_of(const cs_insn *in, int64_t *step)
{
	const cs_x86 *x = &in->detail->x86;
	int r;

	switch (in->id) {
	case X86_INS_ADD:
	case X86_INS_SUB:
		if (x->op_count != 2 || x->operands[0].type != X86_OP_REG ||
		    x->operands[1].type != X86_OP_IMM)
			return -1;
		r = reg64(x->operands[0].reg);
		*step = in->id == X86_INS_ADD ? x->operands[1].imm : -x->operands[1].imm;
		break;
	case X86_INS_INC:
	case X86_INS_DEC:
		if (x->op_count != 1 || x->operands[0].type != X86_OP_REG)
			return -1;
		r = reg64(x->operands[0].reg);
		*step = in->id == X86_INS_INC ? 1 : -1;
		break;
	case X86_INS_LEA:
		if (x->op_count != 2 || x->operands[0].type != X86_OP_REG ||
		    x->operands[1].type != X86_OP_MEM ||
		    x->operands[1].mem.index != X86_REG_INVALID ||
		    x->operands[1].mem.segment != X86_REG_INVALID)
			return -1;
		r = reg64(x->operands[0].reg);
		if (r < 0 || reg64(x->operands[1].mem.base) != r)
			return -1;
		*step = x->operands[1].mem.disp;
		break;
	default:
		return -1;
	}
	if (r < 0 || r == REG_RSP || *step == 0)
		return -1;
	return r;
}

/* What instruction IN leaves in register R (which it writes): 0 a constant zero (*SRC -1),
 * 1 a copy of 64-bit register *SRC, -1 anything else. */
static int writes_what(const cs_insn *in, int r, int *src)
{
	const cs_x86 *x = &in->detail->x86;

	*src = NO_REG;
	if (x->op_count != 2 || x->operands[0].type != X86_OP_REG ||
	    x86_reg_family(x->operands[0].reg) != r)
		return -1;
	/* xor/sub of a register with itself, 32 or 64 bits (a 32-bit write clears the upper
	 * half); mov $0 likewise. */
	if ((in->id == X86_INS_XOR || in->id == X86_INS_SUB) && x->operands[1].type == X86_OP_REG &&
	    x->operands[1].reg == x->operands[0].reg && x->operands[0].size >= 4)
		return 0;
	if (in->id == X86_INS_MOV && x->operands[1].type == X86_OP_IMM && x->operands[1].imm == 0 &&
	    x->operands[0].size >= 4)
		return 0;
	if (in->id == X86_INS_MOV && x->operands[1].type == X86_OP_REG &&
	    reg64(x->operands[0].reg) == r && (*src = reg64(x->operands[1].reg)) >= 0 &&
	    *src != REG_RSP)
		return 1;
	return -1;
}

static bool probeable(const struct cfg_insn *in)
{
	return in->probe_class != PROBE_NEVER && in->probe_class != PROBE_NOP5 && !in->overlap;
}

/* One loop being proved. */
struct trial {
	const struct cfg_func *f;
	const struct cfg_loops *lp;
	uint32_t l;
	int r;
	struct cfg_iv_action *acts;
	uint32_t nacts;
	size_t cap;
	const char *why;
};

static int add_act(struct trial *t, const struct cfg_func *f, uint32_t k, uint32_t block,
		   uint8_t kind, uint8_t out, int reg, uint32_t next)
{
	for (uint32_t i = 0; i < t->nacts; i++)
		if (t->acts[i].addr == f->insns[k].addr && t->acts[i].kind == kind &&
		    t->acts[i].out == out)
			return 0;
	if (array_grow((void **)&t->acts, &t->cap, t->nacts + 1, sizeof(*t->acts), 16))
		return -ENOMEM;
	t->acts[t->nacts++] = (struct cfg_iv_action){.addr = f->insns[k].addr,
						     .insn = k,
						     .block = block,
						     .kind = kind,
						     .cc = f->insns[k].cc,
						     .out = out,
						     .reg = (int8_t)reg,
						     .next = next};
	return 0;
}

static uint32_t last_index(const struct cfg_func *f, uint32_t b)
{
	return f->blocks[b].first_insn + f->blocks[b].ninsns - 1;
}

/* The action adding R's value on edge E (from block P outside the loop, which ends there)
 * to sum OUT. Returns 0, 1 when there is none (t->why says why), or -ENOMEM. */
static int edge_action(struct builder *b, struct trial *t, uint32_t e, uint8_t out)
{
	const struct cfg_func *f = t->f;
	const struct cfg_edge *ed = &f->edges[e];
	uint32_t p = ed->from, last = last_index(f, p), first = f->blocks[p].first_insn;
	long w = -1;

	if (p >= f->nblocks || !f->blocks[p].ninsns) {
		t->why = "an entry comes from outside the function";
		return 1;
	}
	if (ed->kind == EDGE_TAKEN || ed->kind == EDGE_NOT_TAKEN) {
		if (f->insns[last].flow != INSN_JCC || !probeable(&f->insns[last])) {
			t->why = "a conditional jump into or out of the loop cannot be probed";
			return 1;
		}
		return add_act(t, f, last, p, ed->kind == EDGE_TAKEN ? IV_JCC_TAKEN : IV_JCC_NOT,
			       out, t->r, ed->to);
	}
	if (f->blocks[p].nsucc != 1 || (ed->kind != EDGE_FALLTHROUGH && ed->kind != EDGE_JUMP)) {
		t->why = "an entry edge has no site of its own (a call or a multiway jump)";
		return 1;
	}
	/* The last instruction of P writing R, and a probeable one after it. */
	for (uint32_t k = first; k <= last; k++) {
		const cs_insn *ci = decoder__detail(&b->dec, f->insns[k].addr);
		uint32_t m;

		if (!ci || !written_regs(b->dec.cs, ci, &m)) {
			t->why = "an instruction before the loop cannot be decoded";
			return 1;
		}
		if (m & (1u << t->r))
			w = (long)k;
	}
	int src = NO_REG, what = -1;
	uint32_t lo;

	if (w >= 0) {
		const cs_insn *ci = decoder__detail(&b->dec, f->insns[w].addr);

		what = ci ? writes_what(ci, t->r, &src) : -1;
	}
	if (what == 0)
		return 0; /* R is 0 on this edge: nothing to add */
	/* The cheapest site: an instruction a uprobe emulates, after the last write of R; else,
	 * when P does not write R and is entered only by a conditional jump, that jump (when it
	 * goes to P); else any probeable instruction after the last write. */
	lo = w >= 0 ? (uint32_t)w + 1 : first;
	for (uint32_t k = last + 1; k-- > lo;)
		if (probeable(&f->insns[k]) && f->insns[k].probe_class == PROBE_EMULATED)
			return add_act(t, f, k, p, IV_AT, out, t->r, p);
	if (w < 0 && f->blocks[p].npred == 1 && p != f->entry_block) {
		const struct cfg_edge *in = &f->edges[f->pred[f->blocks[p].first_pred]];
		uint32_t q = in->from;

		if (q < f->nblocks && f->blocks[q].ninsns &&
		    (in->kind == EDGE_TAKEN || in->kind == EDGE_NOT_TAKEN) &&
		    !cfg_loops__contains(t->lp, t->l, q) &&
		    f->insns[last_index(f, q)].flow == INSN_JCC &&
		    f->insns[last_index(f, q)].probe_class == PROBE_EMULATED)
			return add_act(t, f, last_index(f, q), q,
				       in->kind == EDGE_TAKEN ? IV_JCC_TAKEN : IV_JCC_NOT, out,
				       t->r, p);
	}
	for (uint32_t k = last + 1; k-- > lo;)
		if (probeable(&f->insns[k]))
			return add_act(t, f, k, p, IV_AT, out, t->r, p);
	if (what == 1 && probeable(&f->insns[w]))
		return add_act(t, f, (uint32_t)w, p, IV_AT, out, src, p);
	t->why = "no instruction before the loop can read the entry value";
	return 1;
}

/* The actions of loop T (register t->r): returns 0 with t->acts filled, 1 when some edge has
 * no site (t->why), or -ENOMEM. */
static int plan_actions(struct builder *b, struct trial *t)
{
	const struct cfg_func *f = t->f;
	const struct cfg_loop *loop = &t->lp->loops[t->l];
	int err;

	t->nacts = 0;
	if (loop->header == f->entry_block) {
		t->why = "the loop is entered at the function's entry";
		return 1;
	}
	for (uint32_t k = 0; k < f->blocks[loop->header].npred; k++) {
		uint32_t e = f->pred[f->blocks[loop->header].first_pred + k];

		if (cfg_loops__contains(t->lp, t->l, f->edges[e].from))
			continue;
		if ((err = edge_action(b, t, e, 0)))
			return err;
	}
	for (uint32_t x = 0; x < loop->nexits; x++) {
		const struct cfg_edge *ed = &f->edges[loop->exits[x]];
		uint32_t xl = last_index(f, ed->from), y = ed->to;

		if (y >= f->nblocks || f->blocks[ed->from].nsucc == 1) {
			/* ret, tail jump, or the only way out of its block: before that last
			 * instruction, which runs once per exit. */
			if (f->blocks[ed->from].nsucc != 1 ||
			    (ed->kind != EDGE_RETURN && ed->kind != EDGE_TAIL_CALL &&
			     ed->kind != EDGE_JUMP && ed->kind != EDGE_FALLTHROUGH) ||
			    (ed->flags & CFG_EDGE_INDIRECT) || !probeable(&f->insns[xl]) ||
			    f->insns[xl].flow == INSN_PLAIN) {
				t->why = "an exit has no site that runs once per exit";
				return 1;
			}
			if ((err = add_act(t, f, xl, ed->from, IV_AT, 1, t->r, ed->from)))
				return err;
			continue;
		}
		/* A conditional exit: at the first instruction of its target, whose other
		 * entries from outside the loop add the same value to the entry sum. */
		if (!f->blocks[y].ninsns || !probeable(&f->insns[f->blocks[y].first_insn]) ||
		    y == f->entry_block) {
			t->why = "an exit's target cannot be probed";
			return 1;
		}
		if ((err = add_act(t, f, f->blocks[y].first_insn, y, IV_AT, 1, t->r, y)))
			return err;
		for (uint32_t k = 0; k < f->blocks[y].npred; k++) {
			uint32_t e = f->pred[f->blocks[y].first_pred + k];

			if (cfg_loops__contains(t->lp, t->l, f->edges[e].from))
				continue;
			if ((err = edge_action(b, t, e, 0)))
				return err;
		}
	}
	return 0;
}

/* The loop's body may hold no call, system call, indirect jump, trap, or edge other than
 * jumps and fall-throughs (and returns and direct tail calls out). Returns NULL or why not. */
static const char *body_why(const struct cfg_func *f, const struct cfg_loop *loop)
{
	for (uint32_t i = 0; i < loop->nblocks; i++) {
		const struct cfg_block *bl = &f->blocks[loop->blocks[i]];

		for (uint32_t k = 0; k < bl->ninsns; k++) {
			uint8_t fl = f->insns[bl->first_insn + k].flow;

			if (fl == INSN_CALL || fl == INSN_CALL_IND)
				return "the loop calls";
			if (fl == INSN_SYSCALL || fl == INSN_TRAP || fl == INSN_JMP_IND)
				return "the loop has a system call, a trap or an indirect jump";
		}
		for (uint32_t k = 0; k < bl->nsucc; k++) {
			const struct cfg_edge *e = &f->edges[f->succ[bl->first_succ + k]];

			switch (e->kind) {
			case EDGE_FALLTHROUGH:
			case EDGE_TAKEN:
			case EDGE_NOT_TAKEN:
			case EDGE_JUMP:
			case EDGE_RETURN:
			case EDGE_TAIL_CALL:
				break;
			default:
				return "the loop has an edge other than a jump, a return or a tail "
				       "call";
			}
		}
	}
	return NULL;
}

/* Proves the loops of function FI. Returns 0 or a negative errno. */
static int analyze_func(struct builder *b, const struct cfg_program *prog, uint32_t fi)
{
	const struct cfg_func *f = &prog->funcs[fi];
	struct cfg_induction *ind = b->ind;
	struct cfg_domtree dom = {0};
	struct cfg_loops lp = {0};
	bool *claimed = NULL;
	struct trial t = {.f = f, .lp = &lp};
	int err;

	err = cfg_dom__compute(&dom, f);
	if (!err)
		err = cfg_loops__compute(&lp, f, &dom);
	if (err || !lp.nloops)
		goto out;
	claimed = calloc(f->nblocks + 1, sizeof(*claimed));
	if (!claimed) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t l = 0; l < lp.nloops && !err; l++) {
		const struct cfg_loop *loop = &lp.loops[l];
		const char *why = body_why(f, loop);
		/* Per register: its writers in the body, and the step when its only one is. */
		struct {
			uint32_t writers, insn, block;
			bool step;
			int64_t by;
		} wr[16] = {0};
		bool proved = false;

		if (!why && (f->flags & (CFG_FUNC_FOREIGN_ENTRY | CFG_FUNC_UNRESOLVED)))
			why = "the function is entered elsewhere than at its entry, or unresolved";
		/* Who writes what in the body. */
		for (uint32_t i = 0; i < loop->nblocks && !why; i++) {
			const struct cfg_block *bl = &f->blocks[loop->blocks[i]];

			for (uint32_t k = 0; k < bl->ninsns && !why; k++) {
				const cs_insn *ci =
				    decoder__detail(&b->dec, f->insns[bl->first_insn + k].addr);
				uint32_t m;
				int64_t st = 0;
				int r;

				if (!ci || !written_regs(b->dec.cs, ci, &m)) {
					why = "an instruction of the loop cannot be decoded";
					break;
				}
				r = step_of(ci, &st);
				for (int q = 0; q < 16; q++)
					if (m & (1u << q))
						wr[q] =
						    (typeof(wr[0])){.writers = wr[q].writers + 1,
								    .insn = bl->first_insn + k,
								    .block = loop->blocks[i],
								    .step = q == r,
								    .by = st};
			}
		}
		for (int q = 0; q < 16 && !why && !proved; q++) {
			uint32_t k = wr[q].insn, sb = wr[q].block;

			if (wr[q].writers != 1 || !wr[q].step || claimed[sb])
				continue;
			t.l = l;
			t.r = q;
			t.why = NULL;
			err = plan_actions(b, &t);
			if (err < 0)
				break;
			if (err == 1) {
				err = 0;
				continue;
			}
			if (array_grow((void **)&ind->iv, &b->cap_iv, ind->niv + 1,
				       sizeof(*ind->iv), 16) ||
			    array_grow((void **)&ind->actions, &b->cap_act, ind->nactions + t.nacts,
				       sizeof(*ind->actions), 16) ||
			    array_grow((void **)&ind->body, &b->cap_body,
				       ind->nbody + loop->nblocks, sizeof(*ind->body), 16)) {
				err = -ENOMEM;
				break;
			}
			ind->iv[ind->niv++] = (struct cfg_iv){
			    .func = fi,
			    .header = loop->header,
			    .block = sb,
			    .step_addr = f->insns[k].addr,
			    .step = wr[q].by,
			    .reg = (int8_t)q,
			    .first_action = ind->nactions,
			    .nactions = t.nacts,
			    .first_block = ind->nbody,
			    .nblocks = loop->nblocks,
			};
			memcpy(&ind->actions[ind->nactions], t.acts, t.nacts * sizeof(*t.acts));
			ind->nactions += t.nacts;
			memcpy(&ind->body[ind->nbody], loop->blocks,
			       loop->nblocks * sizeof(*ind->body));
			ind->nbody += loop->nblocks;
			claimed[sb] = true;
			proved = true;
		}
		if (err)
			break;
		if (!proved && !why) {
			bool any = false;

			for (int q = 0; q < 16; q++)
				any |= wr[q].writers == 1 && wr[q].step;
			why = t.why && any ? t.why
			      : any	   ? "its step's block is counted by an enclosing loop"
				    : "no register is stepped by a constant once and written "
				      "nowhere else";
		}
		if (!proved)
			err = reject(b, fi, loop->header, why);
		t.why = NULL;
	}
out:
	free(t.acts);
	free(claimed);
	cfg_loops__free(&lp);
	cfg_dom__free(&dom);
	return err;
}

int cfg_induction__analyze(struct cfg_induction *ind, const struct cfg_program *prog,
			   const bool *select)
{
	struct builder b = {.ind = ind};
	int err;

	memset(ind, 0, sizeof(*ind));
	ind->first = calloc(prog->nfuncs + 1, sizeof(*ind->first));
	if (!ind->first)
		return -ENOMEM;
	err = decoder__open(&b.dec, prog->img);
	if (err) {
		cfg_induction__free(ind);
		return err;
	}
	for (uint32_t fi = 0; fi < prog->nfuncs && !err; fi++) {
		ind->first[fi] = ind->niv;
		if ((!select || select[fi]) && prog->funcs[fi].nblocks)
			err = analyze_func(&b, prog, fi);
	}
	ind->first[prog->nfuncs] = ind->niv;
	decoder__close(&b.dec);
	if (err)
		cfg_induction__free(ind);
	return err;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

bool cfg_induction__in_body(const struct cfg_induction *ind, const struct cfg_iv *iv, uint32_t b)
{
	return bsearch(&b, &ind->body[iv->first_block], iv->nblocks, sizeof(b), cmp_u32) != NULL;
}

/* Whether B holds an exit action of IV at its first instruction. */
static bool exit_block(const struct cfg_induction *ind, const struct cfg_iv *iv, uint32_t b)
{
	for (uint32_t i = 0; i < iv->nactions; i++) {
		const struct cfg_iv_action *a = &ind->actions[iv->first_action + i];

		if (a->kind == IV_AT && a->out && a->block == b &&
		    !cfg_induction__in_body(ind, iv, b))
			return true;
	}
	return false;
}

bool cfg_induction__inside(const struct cfg_induction *ind, const struct cfg_iv *iv, uint32_t b,
			   uint64_t addr, bool fired)
{
	if (cfg_induction__in_body(ind, iv, b)) {
		/* Inside, unless the exit action on this very instruction was made. */
		for (uint32_t i = 0; i < iv->nactions; i++) {
			const struct cfg_iv_action *a = &ind->actions[iv->first_action + i];

			if (a->kind == IV_AT && a->out && a->addr == addr && fired)
				return false;
		}
		return true;
	}
	for (uint32_t i = 0; i < iv->nactions; i++) {
		const struct cfg_iv_action *a = &ind->actions[iv->first_action + i];

		/* Past an entry action made at a conditional jump before the block leading to
		 * the loop (the jump never faults: an action there is made once it has run). */
		if (a->kind != IV_AT && !a->out && a->next == b && !exit_block(ind, iv, b))
			return true;
		if (a->kind != IV_AT || a->block != b)
			continue;
		/* An entry action made, the loop (or the exit block) not reached yet. */
		if (!a->out && (addr > a->addr || (addr == a->addr && fired)))
			return true;
		/* At an exit block's first instruction, its action not made yet. */
		if (a->out && addr == a->addr && !fired)
			return true;
	}
	return false;
}

void cfg_induction__free(struct cfg_induction *ind)
{
	free(ind->iv);
	free(ind->first);
	free(ind->actions);
	free(ind->body);
	free(ind->rejects);
	memset(ind, 0, sizeof(*ind));
}
