/*
 * Flag liveness per instruction (see flag_liveness.h): each instruction's reads and sure
 * writes of OF SF ZF AF PF CF from capstone's detail (kept by the decoder, decode.h), corrected where capstone 4 reports a
 * reader as a plain writer (adc, sbb, rcl, rcr, cmc: their TEST bits are missing) or a
 * conditional writer as a sure one (shifts by %cl, rep cmps/scas), then a backward fixpoint
 * over the blocks.
 */
#include "flag_liveness.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint8_t map_bits(uint64_t ef, uint64_t of, uint64_t sf, uint64_t zf, uint64_t af,
			uint64_t pf, uint64_t cf)
{
	return (uint8_t)(((ef & of) ? FLAG_OF : 0) | ((ef & sf) ? FLAG_SF : 0) |
			 ((ef & zf) ? FLAG_ZF : 0) | ((ef & af) ? FLAG_AF : 0) |
			 ((ef & pf) ? FLAG_PF : 0) | ((ef & cf) ? FLAG_CF : 0));
}

static bool reads_reg(const cs_insn *in, unsigned reg)
{
	for (unsigned k = 0; k < in->detail->regs_read_count; k++)
		if (in->detail->regs_read[k] == reg)
			return true;
	return false;
}

static bool is_string(unsigned id)
{
	switch (id) {
	case X86_INS_MOVSB: case X86_INS_MOVSW: case X86_INS_MOVSD: case X86_INS_MOVSQ:
	case X86_INS_STOSB: case X86_INS_STOSW: case X86_INS_STOSD: case X86_INS_STOSQ:
	case X86_INS_LODSB: case X86_INS_LODSW: case X86_INS_LODSD: case X86_INS_LODSQ:
	case X86_INS_CMPSB: case X86_INS_CMPSW: case X86_INS_CMPSD: case X86_INS_CMPSQ:
	case X86_INS_SCASB: case X86_INS_SCASW: case X86_INS_SCASD: case X86_INS_SCASQ:
	case X86_INS_INSB: case X86_INS_INSW: case X86_INS_INSD:
	case X86_INS_OUTSB: case X86_INS_OUTSW: case X86_INS_OUTSD:
		return true;
	default:
		return false;
	}
}

/* Shifts and rotates leave every flag alone when their count is 0: a count in %cl, or an
 * immediate that masks to 0, writes nothing for sure. */
static bool is_shift(unsigned id)
{
	switch (id) {
	case X86_INS_SHL: case X86_INS_SHR: case X86_INS_SAR: case X86_INS_SAL:
	case X86_INS_ROL: case X86_INS_ROR: case X86_INS_RCL: case X86_INS_RCR:
	case X86_INS_SHLD: case X86_INS_SHRD:
		return true;
	default:
		return false;
	}
}

static bool count_may_be_zero(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *last;

	if (!x->op_count)
		return true;
	last = &x->operands[x->op_count - 1];
	if (last->type == X86_OP_IMM)
		return (last->imm & (x->operands[0].size == 8 ? 0x3f : 0x1f)) == 0;
	if (x->op_count == 1)
		return false; /* shl %eax (by 1) */
	return true;   /* by %cl */
}

void flag_liveness__insn_effect(const cs_insn *in, uint8_t *use, uint8_t *def)
{
	const cs_x86 *x = &in->detail->x86;
	uint64_t ef = x->eflags;

	*use = map_bits(ef, X86_EFLAGS_TEST_OF, X86_EFLAGS_TEST_SF, X86_EFLAGS_TEST_ZF,
			X86_EFLAGS_TEST_AF, X86_EFLAGS_TEST_PF, X86_EFLAGS_TEST_CF);
	*def = map_bits(ef, X86_EFLAGS_MODIFY_OF | X86_EFLAGS_RESET_OF | X86_EFLAGS_RESET_0F |
				    X86_EFLAGS_SET_OF | X86_EFLAGS_UNDEFINED_OF,
			X86_EFLAGS_MODIFY_SF | X86_EFLAGS_RESET_SF | X86_EFLAGS_SET_SF |
				X86_EFLAGS_UNDEFINED_SF,
			X86_EFLAGS_MODIFY_ZF | X86_EFLAGS_RESET_ZF | X86_EFLAGS_SET_ZF |
				X86_EFLAGS_UNDEFINED_ZF,
			X86_EFLAGS_MODIFY_AF | X86_EFLAGS_RESET_AF | X86_EFLAGS_SET_AF |
				X86_EFLAGS_UNDEFINED_AF,
			X86_EFLAGS_MODIFY_PF | X86_EFLAGS_RESET_PF | X86_EFLAGS_SET_PF |
				X86_EFLAGS_UNDEFINED_PF,
			X86_EFLAGS_MODIFY_CF | X86_EFLAGS_RESET_CF | X86_EFLAGS_SET_CF |
				X86_EFLAGS_UNDEFINED_CF);
	/* A reader of rflags without TEST bits (adc, sbb, pushf, lahf, adox, ...): all. */
	if (!*use && reads_reg(in, X86_REG_EFLAGS))
		*use = FLAG_ALL;
	switch (in->id) {
	case X86_INS_CALL:
	case X86_INS_LCALL:
		*use = 0;
		*def = FLAG_ALL; /* the callee may write any flag, and reads none */
		return;
	case X86_INS_RET:
		*use = 0;
		*def = 0;
		return;
	case X86_INS_SYSCALL:
		/* The kernel returns with the arithmetic flags as they were (sysret restores
		 * them from r11): they pass through, neither read nor written. */
		*use = 0;
		*def = 0;
		return;
	case X86_INS_SYSENTER:
	case X86_INS_INT:
	case X86_INS_INT1:
	case X86_INS_INT3:
	case X86_INS_INTO:
	case X86_INS_UD2:
	case X86_INS_HLT:
	case X86_INS_PUSHF:
	case X86_INS_PUSHFD:
	case X86_INS_PUSHFQ:
	case X86_INS_LAHF:
		*use = FLAG_ALL; /* the kernel, a signal handler or the stack sees them */
		*def = 0;
		return;
	case X86_INS_CMC:
		*use |= FLAG_CF;
		break;
	case X86_INS_ADC:
	case X86_INS_SBB:
	case X86_INS_ADCX:
		*use = FLAG_CF; /* capstone 4: no TEST bits, rflags read (all) */
		break;
	case X86_INS_ADOX:
		*use = FLAG_OF;
		break;
	case X86_INS_LOOPE:
	case X86_INS_LOOPNE:
		*use |= FLAG_ZF;
		break;
	default:
		break;
	}
	if (in->id == X86_INS_RCL || in->id == X86_INS_RCR)
		*use |= FLAG_CF;
	if (is_shift(in->id) && count_may_be_zero(in))
		*def = 0;
	if (is_string(in->id)) {
		/* They read DF only (never written by an increment); rep cmps/scas may run zero
		 * times and then write nothing. */
		*use = 0;
		if (x->prefix[0] == X86_PREFIX_REP || x->prefix[0] == X86_PREFIX_REPNE)
			*def = 0;
	}
}

/* Whether ADDR starts a cold fragment (flags may be live across a jump there). */
static bool is_fragment(const struct cfg_program *prog, uint64_t addr)
{
	const struct func_start *fs;

	if (!prog || !addr)
		return false;
	fs = symbols__func_at(&prog->syms, addr);
	return fs && fs->fragment;
}

/* Live flags on an edge to EXIT, by kind. */
static uint8_t exit_edge_live(const struct cfg_program *prog, const struct cfg_func *f,
			      const struct cfg_edge *e)
{
	const struct cfg_block *b = &f->blocks[e->from];
	const struct cfg_insn *last = b->ninsns ? &f->insns[b->first_insn + b->ninsns - 1] : NULL;

	switch (e->kind) {
	case EDGE_RETURN:
		return 0;
	case EDGE_TAIL_CALL:
		return is_fragment(prog, e->target) ? FLAG_ALL : 0;
	case EDGE_NORETURN:
		return last && (last->flow == INSN_CALL || last->flow == INSN_CALL_IND) ? 0
										     : FLAG_ALL;
	default:
		return FLAG_ALL;
	}
}

static uint8_t edge_live(const struct cfg_program *prog, const struct flag_liveness *fl,
			 const struct cfg_func *f, uint32_t e)
{
	const struct cfg_edge *ed = &f->edges[e];

	if (ed->to >= f->nblocks)
		return exit_edge_live(prog, f, ed);
	return fl->block_in[ed->to];
}

uint8_t flag_liveness__edge(const struct flag_liveness *fl, const struct cfg_func *f,
			    uint32_t e)
{
	return e < fl->nedges ? fl->edge[e] : FLAG_ALL;
}

void flag_liveness__release(struct flag_liveness *fl)
{
	free(fl->before);
	free(fl->block_in);
	free(fl->edge);
	memset(fl, 0, sizeof(*fl));
}

int flag_liveness__compute(struct flag_liveness *fl, const struct cfg_program *prog,
			   const struct cfg_func *f, struct decoder *d)
{
	struct decoder own;
	uint8_t *use = NULL, *def = NULL, *out = NULL;
	bool changed = true;
	int err = 0;

	memset(fl, 0, sizeof(*fl));
	if (!d && prog)
		d = prog->dec; /* the build's decoding */
	if (!d) {
		err = decoder__open(&own, prog->img);
		if (err)
			return err;
		d = &own;
	}
	fl->ninsns = f->ninsns;
	fl->nblocks = f->nblocks;
	fl->before = calloc(f->ninsns + 1, 1);
	fl->block_in = calloc(f->nblocks + 1, 1);
	fl->nedges = f->nedges;
	fl->edge = calloc(f->nedges + 1, 1);
	use = calloc(f->ninsns + 1, 1);
	def = calloc(f->ninsns + 1, 1);
	out = calloc(f->nblocks + 1, 1);
	if (!fl->before || !fl->block_in || !fl->edge || !use || !def || !out) {
		err = -ENOMEM;
		goto done;
	}
	for (uint32_t k = 0; k < f->ninsns; k++) {
		long x = decoder__index(d, f->insns[k].addr);

		if (x < 0 || d->insns[x].size != f->insns[k].size) {
			use[k] = FLAG_ALL; /* cannot tell: everything live */
			def[k] = 0;
			continue;
		}
		use[k] = d->insns[x].flags_use;
		def[k] = d->insns[x].flags_def;
	}
	/* Backward fixpoint; blocks sorted by address, visited from the last. */
	while (changed) {
		changed = false;
		for (uint32_t bi = f->nblocks; bi-- > 0;) {
			const struct cfg_block *b = &f->blocks[bi];
			uint8_t live = 0;

			for (uint32_t s = 0; s < b->nsucc; s++)
				live |= edge_live(prog, fl, f, f->succ[b->first_succ + s]);
			/* A block without successors ends in something the builder did not
			 * follow: keep everything. */
			if (!b->nsucc)
				live = FLAG_ALL;
			out[bi] = live;
			for (uint32_t k = b->ninsns; k-- > 0;) {
				uint32_t ii = b->first_insn + k;

				live = (uint8_t)((live & ~def[ii]) | use[ii]);
				fl->before[ii] = live;
			}
			if (b->ninsns == 0)
				live = out[bi];
			if (live != fl->block_in[bi]) {
				fl->block_in[bi] = live;
				changed = true;
			}
		}
	}
	for (uint32_t e = 0; e < f->nedges; e++)
		fl->edge[e] = edge_live(prog, fl, f, e);
done:
	free(use);
	free(def);
	free(out);
	if (d == &own)
		decoder__close(&own);
	if (err)
		flag_liveness__release(fl);
	return err;
}
