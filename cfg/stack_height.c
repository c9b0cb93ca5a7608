/*
 * Forward dataflow of the stack pointer's offset from its entry value (see stack_height.h).
 * The lattice per block entry is: not yet reached, a known height, or unknown.
 */
#include "stack_height.h"

#include <errno.h>
#include <stdlib.h>

#define NOT_REACHED (INT64_MIN + 1)

struct sh_state {
	int64_t rsp, rbp; /* rbp: the height rbp was set from (mov rbp, rsp), or unknown */
};

static int64_t add_h(int64_t h, int64_t d)
{
	/* Heights beyond a few gigabytes are not real stack frames: unknown. */
	if (h == STACK_HEIGHT_UNKNOWN || d > (1LL << 32) || d < -(1LL << 32) ||
	    h > (1LL << 40) || h < -(1LL << 40))
		return STACK_HEIGHT_UNKNOWN;
	return h + d;
}

/* Applies one instruction; sets *LABEL when it materialises an address inside [lo, hi). */
static void apply(const cs_insn *in, struct sh_state *s, uint64_t lo, uint64_t hi, bool *label)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o0 = x->op_count > 0 ? &x->operands[0] : NULL;
	const cs_x86_op *o1 = x->op_count > 1 ? &x->operands[1] : NULL;
	bool dst_rsp = o0 && o0->type == X86_OP_REG && o0->reg == X86_REG_RSP;
	bool dst_rbp = o0 && o0->type == X86_OP_REG && o0->reg == X86_REG_RBP;

	if (o1 && o1->type == X86_OP_MEM && o1->mem.base == X86_REG_RIP &&
	    o1->mem.index == X86_REG_INVALID && in->id == X86_INS_LEA) {
		uint64_t t = in->address + in->size + (uint64_t)o1->mem.disp;

		if (t >= lo && t < hi)
			*label = true;
	}
	switch (in->id) {
	case X86_INS_PUSH:
		s->rsp = add_h(s->rsp, -8);
		return;
	case X86_INS_PUSHFQ:
		s->rsp = add_h(s->rsp, -8);
		return;
	case X86_INS_POP:
		s->rsp = add_h(s->rsp, 8);
		if (dst_rbp)
			s->rbp = STACK_HEIGHT_UNKNOWN;
		return;
	case X86_INS_POPFQ:
		s->rsp = add_h(s->rsp, 8);
		return;
	case X86_INS_LEAVE:
		s->rsp = add_h(s->rbp, 8);
		s->rbp = STACK_HEIGHT_UNKNOWN;
		return;
	case X86_INS_ADD:
	case X86_INS_SUB:
		if (dst_rsp) {
			s->rsp = o1 && o1->type == X86_OP_IMM
					 ? (in->id == X86_INS_ADD ? add_h(s->rsp, o1->imm)
					    : o1->imm == INT64_MIN ? STACK_HEIGHT_UNKNOWN
								   : add_h(s->rsp, -o1->imm))
					 : STACK_HEIGHT_UNKNOWN;
			return;
		}
		break;
	case X86_INS_LEA:
		if (dst_rsp) {
			s->rsp = o1->mem.base == X86_REG_RSP && o1->mem.index == X86_REG_INVALID
					 ? add_h(s->rsp, o1->mem.disp)
				 : o1->mem.base == X86_REG_RBP && o1->mem.index == X86_REG_INVALID
					 ? add_h(s->rbp, o1->mem.disp)
					 : STACK_HEIGHT_UNKNOWN;
			return;
		}
		break;
	case X86_INS_MOV:
		if (dst_rbp && o1 && o1->type == X86_OP_REG && o1->reg == X86_REG_RSP) {
			s->rbp = s->rsp;
			return;
		}
		if (dst_rsp && o1 && o1->type == X86_OP_REG && o1->reg == X86_REG_RBP) {
			s->rsp = s->rbp;
			return;
		}
		break;
	default:
		break;
	}
	/* Any other explicit write of rsp or rbp: unknown from here. A call's push of the
	 * return address is undone by the callee's ret. */
	if (in->id == X86_INS_CALL)
		return;
	for (uint8_t i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_REG && (x->operands[i].access & CS_AC_WRITE)) {
			if (x->operands[i].reg == X86_REG_RSP)
				s->rsp = STACK_HEIGHT_UNKNOWN;
			if (x->operands[i].reg == X86_REG_RBP)
				s->rbp = STACK_HEIGHT_UNKNOWN;
		}
}

static void meet(struct sh_state *into, const struct sh_state *from, bool *changed)
{
	if (into->rsp == NOT_REACHED) {
		*into = *from;
		*changed = true;
		return;
	}
	if (into->rsp != from->rsp && into->rsp != STACK_HEIGHT_UNKNOWN) {
		into->rsp = STACK_HEIGHT_UNKNOWN;
		*changed = true;
	}
	if (into->rbp != from->rbp && into->rbp != STACK_HEIGHT_UNKNOWN) {
		into->rbp = STACK_HEIGHT_UNKNOWN;
		*changed = true;
	}
}

int stack_height__at(const struct cfg_func *f, struct decoder *d, const uint64_t *addrs,
		     size_t n, int64_t *out, bool *label_taken)
{
	struct sh_state *in = malloc((f->nblocks + 1) * sizeof(*in));
	uint32_t *work = malloc((f->nblocks + 1) * sizeof(*work));
	uint8_t *queued = calloc(f->nblocks + 1, 1);
	uint32_t nw = 0, i, k;
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t q;
	bool dummy = false;

	if (!in || !work || !queued) {
		free(in);
		free(work);
		free(queued);
		return -ENOMEM;
	}
	/* A label is "in the function" anywhere in its symbol or FDE range, not only in the
	 * blocks found so far: code reached only through that label is not decoded yet. */
	lo = f->entry;
	hi = f->entry + (f->sym_size ? f->sym_size : 1);
	for (i = 0; i < f->nblocks; i++) {
		in[i].rsp = in[i].rbp = NOT_REACHED;
		lo = f->blocks[i].start < lo ? f->blocks[i].start : lo;
		hi = f->blocks[i].end > hi ? f->blocks[i].end : hi;
	}
	if (!addrs)
		n = f->ninsns;
	for (q = 0; q < n; q++)
		out[q] = STACK_HEIGHT_UNKNOWN;
	*label_taken = false;
	if (f->nblocks == 0)
		goto done;
	in[f->entry_block] = (struct sh_state){ 0, STACK_HEIGHT_UNKNOWN };
	work[nw++] = f->entry_block;
	queued[f->entry_block] = 1;
	while (nw) {
		uint32_t v = work[--nw];
		const struct cfg_block *b = &f->blocks[v];
		struct sh_state s = in[v];

		queued[v] = 0;
		for (k = 0; k < b->ninsns; k++) {
			const cs_insn *ci = decoder__detail(d, f->insns[b->first_insn + k].addr);

			if (!ci) {
				s.rsp = s.rbp = STACK_HEIGHT_UNKNOWN;
				break;
			}
			apply(ci, &s, lo, hi, &dummy);
		}
		for (k = 0; k < b->nsucc; k++) {
			const struct cfg_edge *e = &f->edges[f->succ[b->first_succ + k]];
			bool changed = false;

			if (e->to >= f->nblocks)
				continue;
			meet(&in[e->to], &s, &changed);
			if (changed && !queued[e->to]) {
				queued[e->to] = 1;
				work[nw++] = e->to;
			}
		}
	}
	/* Second pass: heights at the queried instructions, and label materialisation. */
	for (i = 0; i < f->nblocks; i++) {
		const struct cfg_block *b = &f->blocks[i];
		struct sh_state s = in[i];

		if (s.rsp == NOT_REACHED)
			continue;
		for (k = 0; k < b->ninsns; k++) {
			uint64_t a = f->insns[b->first_insn + k].addr;
			const cs_insn *ci;

			if (!addrs)
				out[b->first_insn + k] = s.rsp;
			for (q = 0; addrs && q < n; q++)
				if (addrs[q] == a)
					out[q] = s.rsp;
			ci = decoder__detail(d, a);
			if (!ci)
				break;
			apply(ci, &s, lo, hi, label_taken);
		}
	}
done:
	free(in);
	free(work);
	free(queued);
	return 0;
}
