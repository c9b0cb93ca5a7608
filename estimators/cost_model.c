/*
 * The x86-64 instruction cost table (see cost_model.h). The `cycles` defaults are in one place,
 * `default_cycles` below: reciprocal throughputs rounded from Agner Fog's tables for recent
 * Intel and AMD cores, with a memory operand charged as an L1 hit. They are a model, not a
 * measurement: replace them with `edgeprof report --time --cost FILE`.
 */
#include <errno.h>
#include <string.h>

#include "cost_model.h"

static const char *const class_names[COST_CLASS_COUNT] = {
    "alu",    "mem",  "push_pop", "mul",    "div",    "fp",	 "fp_div",
    "branch", "call", "ret",	  "string", "atomic", "syscall", "nop",
};

/* Cycles per execution, by class. */
static const double default_cycles[COST_CLASS_COUNT] = {
    [COST_ALU] = 1,    [COST_MEM] = 2,	   [COST_PUSH_POP] = 1,	 [COST_MUL] = 3,    [COST_DIV] = 25,
    [COST_FP] = 4,     [COST_FP_DIV] = 15, [COST_BRANCH] = 1,	 [COST_CALL] = 2,   [COST_RET] = 2,
    [COST_STRING] = 8, [COST_ATOMIC] = 20, [COST_SYSCALL] = 200, [COST_NOP] = 0.25,
};

const char *cost_class__name(unsigned c)
{
	return c < COST_CLASS_COUNT ? class_names[c] : "?";
}

int cost_class__from_name(const char *name)
{
	for (unsigned c = 0; c < COST_CLASS_COUNT; c++)
		if (!strcmp(name, class_names[c]))
			return (int)c;
	return -1;
}

int cost_model__init(struct cost_model *m, bool cycles)
{
	memset(m, 0, sizeof(*m));
	for (unsigned c = 0; c < COST_CLASS_COUNT; c++)
		m->cost[c] = cycles ? default_cycles[c] : 1.0;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &m->cs) != CS_ERR_OK)
		return -EINVAL;
	cs_option(m->cs, CS_OPT_DETAIL, CS_OPT_ON);
	m->cs_open = true;
	return 0;
}

void cost_model__release(struct cost_model *m)
{
	if (m->cs_open)
		cs_close(&m->cs);
	m->cs_open = false;
}

static bool in_group(const cs_insn *in, unsigned grp)
{
	const cs_detail *d = in->detail;

	for (unsigned i = 0; d && i < d->groups_count; i++)
		if (d->groups[i] == grp)
			return true;
	return false;
}

static bool has_mem_operand(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	for (unsigned i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM)
			return true;
	return false;
}

static enum cost_class classify(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	switch (in->id) {
	case X86_INS_NOP:
	case X86_INS_ENDBR64:
	case X86_INS_ENDBR32:
		return COST_NOP;
	case X86_INS_PUSH:
	case X86_INS_POP:
		return COST_PUSH_POP;
	case X86_INS_IMUL:
	case X86_INS_MUL:
	case X86_INS_MULX:
		return COST_MUL;
	case X86_INS_DIV:
	case X86_INS_IDIV:
		return COST_DIV;
	case X86_INS_DIVSS:
	case X86_INS_DIVSD:
	case X86_INS_DIVPS:
	case X86_INS_DIVPD:
	case X86_INS_VDIVSS:
	case X86_INS_VDIVSD:
	case X86_INS_VDIVPS:
	case X86_INS_VDIVPD:
	case X86_INS_SQRTSS:
	case X86_INS_SQRTSD:
	case X86_INS_SQRTPS:
	case X86_INS_SQRTPD:
	case X86_INS_VSQRTSS:
	case X86_INS_VSQRTSD:
	case X86_INS_FDIV:
	case X86_INS_FSQRT:
		return COST_FP_DIV;
	case X86_INS_MOVSB:
	case X86_INS_MOVSW:
	case X86_INS_MOVSD:
	case X86_INS_MOVSQ:
	case X86_INS_STOSB:
	case X86_INS_STOSW:
	case X86_INS_STOSD:
	case X86_INS_STOSQ:
	case X86_INS_CMPSB:
	case X86_INS_CMPSW:
	case X86_INS_CMPSD:
	case X86_INS_CMPSQ:
	case X86_INS_SCASB:
	case X86_INS_SCASW:
	case X86_INS_SCASD:
	case X86_INS_SCASQ:
	case X86_INS_LODSB:
	case X86_INS_LODSW:
	case X86_INS_LODSD:
	case X86_INS_LODSQ:
		/* MOVSD/CMPSD with operands are the SSE forms */
		if (x->op_count && x->operands[0].type == X86_OP_REG &&
		    x->operands[0].reg >= X86_REG_XMM0 && x->operands[0].reg <= X86_REG_XMM31)
			return COST_FP;
		return COST_STRING;
	case X86_INS_CMPXCHG:
	case X86_INS_CMPXCHG8B:
	case X86_INS_CMPXCHG16B:
		return COST_ATOMIC;
	case X86_INS_XCHG:
		return has_mem_operand(in) ? COST_ATOMIC : COST_ALU;
	case X86_INS_SYSCALL:
	case X86_INS_SYSENTER:
	case X86_INS_INT:
	case X86_INS_CPUID:
	case X86_INS_RDTSC:
	case X86_INS_RDTSCP:
	case X86_INS_HLT:
	case X86_INS_UD2:
	case X86_INS_INT3:
		return COST_SYSCALL;
	default:
		break;
	}
	if (x->prefix[0] == X86_PREFIX_LOCK)
		return COST_ATOMIC;
	if (in_group(in, CS_GRP_CALL))
		return COST_CALL;
	if (in_group(in, CS_GRP_RET))
		return COST_RET;
	if (in_group(in, CS_GRP_JUMP))
		return COST_BRANCH;
	if (in_group(in, X86_GRP_SSE1) || in_group(in, X86_GRP_SSE2) ||
	    in_group(in, X86_GRP_SSE3) || in_group(in, X86_GRP_SSSE3) ||
	    in_group(in, X86_GRP_SSE41) || in_group(in, X86_GRP_SSE42) ||
	    in_group(in, X86_GRP_AVX) || in_group(in, X86_GRP_AVX2) ||
	    in_group(in, X86_GRP_AVX512) || in_group(in, X86_GRP_FPU) || in_group(in, X86_GRP_FMA))
		return COST_FP;
	return has_mem_operand(in) && in->id != X86_INS_LEA ? COST_MEM : COST_ALU;
}

enum cost_class cost_model__classify_bytes(const struct cost_model *m, const uint8_t *code,
					   size_t len, bool *rep)
{
	enum cost_class c = COST_ALU;
	cs_insn *in;

	if (rep)
		*rep = false;
	if (!m->cs_open || !code || !len)
		return COST_ALU;
	if (cs_disasm(m->cs, code, len < 16 ? len : 16, 0, 1, &in) == 1) {
		uint8_t pfx = in->detail->x86.prefix[0];

		c = classify(in);
		if (rep)
			*rep =
			    c == COST_STRING && (pfx == X86_PREFIX_REP || pfx == X86_PREFIX_REPE ||
						 pfx == X86_PREFIX_REPNE);
		cs_free(in, 1);
	}
	return c;
}

enum cost_class cost_model__classify(const struct cost_model *m, const struct elf_image *img,
				     uint64_t addr)
{
	size_t avail = 0;
	const uint8_t *code = elf_image__code(img, addr, &avail);

	return cost_model__classify_bytes(m, code, avail, NULL);
}

bool cost_model__is_rep(const struct cost_model *m, const struct elf_image *img, uint64_t addr)
{
	size_t avail = 0;
	const uint8_t *code = elf_image__code(img, addr, &avail);
	bool rep;

	cost_model__classify_bytes(m, code, avail, &rep);
	return rep;
}

double cost_model__block(const struct cost_model *m, const struct elf_image *img,
			 const struct cfg_func *f, uint32_t b)
{
	const struct cfg_block *bl = &f->blocks[b];
	double sum = 0;
	bool all_one = true;

	for (unsigned c = 0; c < COST_CLASS_COUNT; c++)
		all_one &= m->cost[c] == 1.0;
	if (all_one || !img)
		return all_one ? (double)bl->ninsns : 0.0;
	for (uint32_t i = 0; i < bl->ninsns; i++)
		sum += m->cost[cost_model__classify(m, img, f->insns[bl->first_insn + i].addr)];
	return sum;
}
