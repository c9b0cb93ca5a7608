/*
 * Cached x86-64 decoding with capstone (see decode.h): control-flow classification, branch
 * condition codes and uprobe cost classes per instruction.
 */
#include "decode.h"
#include "error.h"
#include "flag_liveness.h"
#include "patch_window.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int decoder__open(struct decoder *d, const struct elf_image *img)
{
	cs_err e;

	memset(d, 0, sizeof(*d));
	d->img = img;
	e = cs_open(CS_ARCH_X86, CS_MODE_64, &d->cs);
	if (e != CS_ERR_OK)
		return cfg_error(EINVAL, "capstone: %s", cs_strerror(e));
	cs_option(d->cs, CS_OPT_DETAIL, CS_OPT_ON);
	d->scratch = cs_malloc(d->cs);
	d->nsecs = img->nsecs;
	d->chunks = calloc(img->nsecs ? img->nsecs : 1, sizeof(*d->chunks));
	d->nchunks = calloc(img->nsecs ? img->nsecs : 1, sizeof(*d->nchunks));
	if (!d->scratch || !d->chunks || !d->nchunks) {
		if (d->scratch)
			cs_free(d->scratch, 1);
		free(d->chunks);
		free(d->nchunks);
		d->chunks = NULL;
		cs_close(&d->cs);
		return -ENOMEM;
	}
	d->disjoint = true;
	for (size_t k = 0; k < img->nsecs; k++) {
		d->nchunks[k] = (img->secs[k].size + 4095) / 4096;
		if (k && img->secs[k].addr - img->secs[k - 1].addr < img->secs[k - 1].size)
			d->disjoint = false;
	}
	return 0;
}

void decoder__close(struct decoder *d)
{
	if (d->scratch)
		cs_free(d->scratch, 1);
	if (d->cs)
		cs_close(&d->cs);
	if (d->release) {
		d->release(d->release_ctx);
	} else {
		free(d->insns);
		free(d->taken);
	}
	if (d->chunks) {
		for (size_t k = 0; k < d->nsecs; k++) {
			for (size_t c = 0; d->chunks[k] && c < d->nchunks[k]; c++)
				free(d->chunks[k][c]);
			free(d->chunks[k]);
		}
		free(d->chunks);
	}
	free(d->nchunks);
	memset(d, 0, sizeof(*d));
}

const cs_insn *decoder__detail(struct decoder *d, uint64_t addr)
{
	size_t avail;
	const uint8_t *code = elf_image__code(d->img, addr, &avail);
	uint64_t a = addr;

	if (!code)
		return NULL;
	if (avail > 15)
		avail = 15;
	if (!cs_disasm_iter(d->cs, &code, &avail, &a, d->scratch))
		return NULL;
	return d->scratch;
}

static int cond_code(unsigned id)
{
	switch (id) {
	case X86_INS_JO: return 0x0;
	case X86_INS_JNO: return 0x1;
	case X86_INS_JB: return 0x2;
	case X86_INS_JAE: return 0x3;
	case X86_INS_JE: return 0x4;
	case X86_INS_JNE: return 0x5;
	case X86_INS_JBE: return 0x6;
	case X86_INS_JA: return 0x7;
	case X86_INS_JS: return 0x8;
	case X86_INS_JNS: return 0x9;
	case X86_INS_JP: return 0xa;
	case X86_INS_JNP: return 0xb;
	case X86_INS_JL: return 0xc;
	case X86_INS_JGE: return 0xd;
	case X86_INS_JLE: return 0xe;
	case X86_INS_JG: return 0xf;
	case X86_INS_JRCXZ:
	case X86_INS_JECXZ:
	case X86_INS_JCXZ: return 0x10;
	case X86_INS_LOOP: return 0x11;
	case X86_INS_LOOPE: return 0x12;
	case X86_INS_LOOPNE: return 0x13;
	default: return -1;
	}
}

/* Probe cost class from the raw bytes: what the kernel emulates without single-stepping.
 * Only unprefixed encodings are trusted (the kernel refuses to emulate most prefixed ones).
 * A 5-byte nop is never probed: kernels from 6.18 optimise a uprobe there into a call to a
 * trampoline, and the call's return address goes below the stack pointer, into the red zone
 * a leaf function may be using, in every process that maps the file (a library probed with
 * --lib is mapped by the whole machine). */
static uint8_t probe_class(const uint8_t *b, unsigned size)
{
	if (size == 5 && b[0] == 0x0f && b[1] == 0x1f && b[2] == 0x44 && b[3] == 0 && b[4] == 0)
		return PROBE_NEVER;
	if ((size == 5 && (b[0] == 0xe8 || b[0] == 0xe9)) || (size == 2 && b[0] == 0xeb) ||
	    (size == 2 && b[0] >= 0x70 && b[0] <= 0x7f) ||
	    (size == 6 && b[0] == 0x0f && b[1] >= 0x80 && b[1] <= 0x8f))
		return PROBE_EMULATED;
	if ((size == 1 && b[0] >= 0x50 && b[0] <= 0x57) ||
	    (size == 2 && b[0] == 0x41 && b[1] >= 0x50 && b[1] <= 0x57))
		return PROBE_EMULATED; /* push reg */
	if ((size == 1 && b[0] == 0x90) || (size == 2 && b[0] == 0x66 && b[1] == 0x90))
		return PROBE_EMULATED; /* nop, xchg %ax,%ax */
	/* The kernel refuses uprobes on instructions with an es, cs, ss or ds segment prefix
	 * (padding like `cs nopw`, `notrack jmp`) or a lock prefix (atomics). */
	for (unsigned i = 0; i < size && i < 4; i++) {
		if (b[i] == 0x26 || b[i] == 0x2e || b[i] == 0x36 || b[i] == 0x3e || b[i] == 0xf0)
			return PROBE_NEVER;
		if (b[i] != 0x64 && b[i] != 0x65 && b[i] != 0x66 && b[i] != 0x67 && b[i] != 0xf2 &&
		    b[i] != 0xf3)
			break;
	}
	/* ... and on many VEX, EVEX and XOP encoded ones: it checks their opcode byte against the
	 * one-byte opcode table, where 0x6e/0x6f (vmovd, vmovdqu) or 0xef (vpxor) are ins, outs
	 * and out. All of them are left alone (they are single-stepped where allowed anyway). */
	for (unsigned i = 0; i + 1 < size && i < 4; i++) {
		if (b[i] == 0x64 || b[i] == 0x65 || b[i] == 0x67)
			continue;
		if (b[i] == 0xc4 || b[i] == 0xc5 || b[i] == 0x62 ||
		    (b[i] == 0x8f && (b[i + 1] & 0x38) != 0))
			return PROBE_NEVER;
		break;
	}
	/* ... and on these (int3, int n, into, int1, hlt, iret, far transfers, in/out). */
	if (b[0] == 0xcc || b[0] == 0xcd || b[0] == 0xce || b[0] == 0xf1 || b[0] == 0xf4 ||
	    b[0] == 0xcf || b[0] == 0xca || b[0] == 0xcb || b[0] == 0xea || b[0] == 0x9a ||
	    (b[0] >= 0xe4 && b[0] <= 0xe7) || (b[0] >= 0xec && b[0] <= 0xef) ||
	    (b[0] == 0x48 && size > 1 && b[1] == 0xcf))
		return PROBE_NEVER;
	return PROBE_STEPPED;
}

static void classify(struct dinsn *di, const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *op = x->op_count ? &x->operands[0] : NULL;
	int cc;

	di->flow = INSN_PLAIN;
	switch (in->id) {
	case X86_INS_JMP:
		if (op && op->type == X86_OP_IMM) {
			di->flow = INSN_JMP;
			di->target = (uint64_t)op->imm;
		} else {
			di->flow = INSN_JMP_IND;
		}
		break;
	case X86_INS_CALL:
		if (op && op->type == X86_OP_IMM) {
			di->flow = INSN_CALL;
			di->target = (uint64_t)op->imm;
		} else {
			di->flow = INSN_CALL_IND;
		}
		break;
	case X86_INS_RET:
	case X86_INS_RETF:
	case X86_INS_RETFQ:
	case X86_INS_IRET:
	case X86_INS_IRETD:
	case X86_INS_IRETQ:
		di->flow = INSN_RET;
		break;
	case X86_INS_HLT:
	case X86_INS_UD2:
	case X86_INS_UD0:
	case X86_INS_UD2B:
	case X86_INS_INT3:
	case X86_INS_LJMP:
	case X86_INS_LCALL:
		di->flow = INSN_TRAP;
		break;
	case X86_INS_SYSCALL:
		di->flow = INSN_SYSCALL;
		break;
	default:
		cc = cond_code(in->id);
		if (cc >= 0 && op && op->type == X86_OP_IMM) {
			di->flow = INSN_JCC;
			di->cc = (uint8_t)cc;
			di->target = (uint64_t)op->imm;
		}
	}
	if ((di->flow == INSN_JMP_IND || di->flow == INSN_CALL_IND) && op &&
	    op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP && op->mem.index == X86_REG_INVALID) {
		di->rip_slot = 1;
		di->target = in->address + in->size + (uint64_t)op->mem.disp;
	}
}

/* movs, stos, lods, cmps, scas, ins, outs in every width. */
static bool is_string_insn(unsigned id)
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

/* The executable section of ADDR, or NULL when ADDR is outside every executable section. */
static const struct elf_section *section_of(struct decoder *d, uint64_t addr)
{
	const struct elf_section *s = d->last_sec;

	/* Lookups come in runs within one section: try the last one first (when no two
	 * sections overlap, it is the one the search would find). */
	if (!s || !d->disjoint || addr < s->addr || addr - s->addr >= s->size) {
		s = elf_image__section_at(d->img, addr);
		if (!s || !s->exec || !s->data)
			return NULL;
		d->last_sec = s;
	}
	return s;
}

/* The cache slot of ADDR, or NULL when ADDR is outside every executable section. */
static uint32_t *slot_of(struct decoder *d, uint64_t addr)
{
	const struct elf_section *s = section_of(d, addr);
	size_t k, off, c;

	if (!s)
		return NULL;
	k = (size_t)(s - d->img->secs);
	off = (size_t)(addr - s->addr);
	c = off / 4096;
	if (!d->chunks[k]) {
		d->chunks[k] = calloc(d->nchunks[k], sizeof(**d->chunks));
		if (!d->chunks[k])
			return NULL;
	}
	if (!d->chunks[k][c]) {
		d->chunks[k][c] = calloc(4096, sizeof(uint32_t));
		if (!d->chunks[k][c])
			return NULL;
	}
	return &d->chunks[k][c][off % 4096];
}

/* Makes D's arrays its own when they are lent (decoder__preload), before they grow: copies
 * them, then lets the lender have them back. Returns 0 or -ENOMEM. */
static int own_records(struct decoder *d)
{
	struct dinsn *insns;
	uint64_t *taken;

	if (!d->release)
		return 0;
	insns = malloc((d->cap ? d->cap : 1) * sizeof(*insns));
	taken = malloc((d->taken_cap ? d->taken_cap : 1) * sizeof(*taken));
	if (!insns || !taken) {
		free(insns);
		free(taken);
		return -ENOMEM;
	}
	memcpy(insns, d->insns, d->n * sizeof(*insns));
	memcpy(taken, d->taken, d->ntaken * sizeof(*taken));
	d->insns = insns;
	d->taken = taken;
	d->release(d->release_ctx);
	d->release = NULL;
	d->release_ctx = NULL;
	return 0;
}

/* The facts of IN the analyses after the build use (see struct dinsn). Returns 0 or
 * -ENOMEM. */
static int keep_facts(struct decoder *d, struct dinsn *di, const cs_insn *in)
{
	uint64_t taken[8];
	unsigned n;

	di->reloc = (uint8_t)patch_reloc__kind(in);
	di->quiet = patch_insn__quiet(in);
	flag_liveness__insn_effect(in, &di->flags_use, &di->flags_def);
	if (in->id == X86_INS_NOP || in->id == X86_INS_INT3)
		di->pad |= DINSN_PAD_NOP_INT3;
	if (in->size == 2 && in->bytes[0] == 0x66 && in->bytes[1] == 0x90)
		di->pad |= DINSN_PAD_XCHG_AX;
	n = patch_insn__taken(d->img, in, taken, 8);
	if (!n)
		return 0;
	if (d->ntaken + n > d->taken_cap) {
		size_t cap = d->taken_cap ? 2 * d->taken_cap : 1024;
		uint64_t *v = own_records(d) ? NULL : realloc(d->taken, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		d->taken = v;
		d->taken_cap = cap;
	}
	di->taken = (uint32_t)d->ntaken;
	di->ntaken = (uint8_t)n;
	memcpy(d->taken + d->ntaken, taken, n * sizeof(*taken));
	d->ntaken += n;
	return 0;
}

long decoder__index(struct decoder *d, uint64_t addr)
{
	uint32_t *slot = slot_of(d, addr);
	const cs_insn *in;
	struct dinsn *di;

	if (!slot || *slot == UINT32_MAX)
		return -1;
	if (*slot)
		return (long)*slot - 1;
	in = decoder__detail(d, addr);
	if (!in) {
		*slot = UINT32_MAX;
		return -1;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 4096;
		struct dinsn *ni = own_records(d) ? NULL : realloc(d->insns, cap * sizeof(*ni));

		if (!ni)
			return -1;
		d->insns = ni;
		d->cap = cap;
	}
	di = &d->insns[d->n];
	memset(di, 0, sizeof(*di));
	di->addr = addr;
	di->size = (uint8_t)in->size;
	classify(di, in);
	di->probe_class = probe_class(in->bytes, in->size);
	/* A probe on a rep-prefixed string instruction fires again for every iteration (the
	 * single-step traps after each one): never probe those. */
	if ((in->detail->x86.prefix[0] == X86_PREFIX_REP ||
	     in->detail->x86.prefix[0] == X86_PREFIX_REPNE) && is_string_insn(in->id))
		di->probe_class = PROBE_NEVER;
	/* The branch site reads rcx: jecxz/jcxz and address-size-prefixed loops test ecx/cx,
	 * so they are never probed (their edges are measured elsewhere). */
	if (di->flow == INSN_JCC && di->cc >= 0x10 &&
	    (in->id == X86_INS_JECXZ || in->id == X86_INS_JCXZ ||
	     in->detail->x86.prefix[3] == 0x67))
		di->probe_class = PROBE_NEVER;
	if (keep_facts(d, di, in))
		return -1; /* out of memory: not cached, as if undecodable this time */
	*slot = (uint32_t)++d->n;
	d->ndecoded++;
	return (long)d->n - 1;
}

void decoder__records(const struct decoder *d, const struct dinsn **insns, size_t *n,
		      const uint64_t **taken, size_t *ntaken)
{
	*insns = d->insns;
	*n = d->n;
	*taken = d->taken;
	*ntaken = d->ntaken;
}

/* Empties D's cache (its sections' chunks stay allocated, zeroed). */
static void forget(struct decoder *d)
{
	for (size_t k = 0; k < d->nsecs; k++)
		for (size_t c = 0; d->chunks[k] && c < d->nchunks[k]; c++)
			if (d->chunks[k][c])
				memset(d->chunks[k][c], 0, 4096 * sizeof(uint32_t));
	d->n = 0;
	d->ntaken = 0;
}

int decoder__preload(struct decoder *d, const struct dinsn *insns, size_t n,
		     const uint64_t *taken, size_t ntaken, void (*release)(void *ctx), void *ctx)
{
	if (d->n || d->ntaken || n >= UINT32_MAX - 1 || ntaken > UINT32_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		const struct dinsn *di = &insns[i];
		const struct elf_section *s = section_of(d, di->addr);
		uint32_t *slot;

		if (!di->size || di->size > 15 || di->flow > INSN_SYSCALL || !s ||
		    di->addr + di->size - s->addr > s->size ||
		    (uint64_t)di->taken + di->ntaken > ntaken)
			goto bad;
		slot = slot_of(d, di->addr);
		if (!slot) {
			forget(d);
			return -ENOMEM;
		}
		if (*slot)
			goto bad;
		*slot = (uint32_t)++d->n;
	}
	d->cap = n;
	d->taken_cap = ntaken;
	d->ntaken = ntaken;
	if (release) {
		d->insns = (struct dinsn *)insns;
		d->taken = (uint64_t *)taken;
		d->release = release;
		d->release_ctx = ctx;
		return 0;
	}
	d->insns = malloc((n ? n : 1) * sizeof(*d->insns));
	d->taken = malloc((ntaken ? ntaken : 1) * sizeof(*d->taken));
	if (!d->insns || !d->taken) {
		free(d->insns);
		free(d->taken);
		d->insns = NULL;
		d->taken = NULL;
		d->cap = d->taken_cap = 0;
		forget(d);
		return -ENOMEM;
	}
	memcpy(d->insns, insns, n * sizeof(*insns));
	memcpy(d->taken, taken, ntaken * sizeof(*taken));
	return 0;
bad:
	forget(d);
	return -EINVAL;
}

const struct dinsn *decoder__get(struct decoder *d, uint64_t addr)
{
	long i = decoder__index(d, addr);

	return i < 0 ? NULL : &d->insns[i];
}

int x86_reg_family(unsigned reg)
{
	switch (reg) {
	case X86_REG_RAX: case X86_REG_EAX: case X86_REG_AX: case X86_REG_AL: case X86_REG_AH:
		return 0;
	case X86_REG_RCX: case X86_REG_ECX: case X86_REG_CX: case X86_REG_CL: case X86_REG_CH:
		return 1;
	case X86_REG_RDX: case X86_REG_EDX: case X86_REG_DX: case X86_REG_DL: case X86_REG_DH:
		return 2;
	case X86_REG_RBX: case X86_REG_EBX: case X86_REG_BX: case X86_REG_BL: case X86_REG_BH:
		return 3;
	case X86_REG_RSP: case X86_REG_ESP: case X86_REG_SP: case X86_REG_SPL:
		return 4;
	case X86_REG_RBP: case X86_REG_EBP: case X86_REG_BP: case X86_REG_BPL:
		return 5;
	case X86_REG_RSI: case X86_REG_ESI: case X86_REG_SI: case X86_REG_SIL:
		return 6;
	case X86_REG_RDI: case X86_REG_EDI: case X86_REG_DI: case X86_REG_DIL:
		return 7;
	case X86_REG_R8: case X86_REG_R8D: case X86_REG_R8W: case X86_REG_R8B:
		return 8;
	case X86_REG_R9: case X86_REG_R9D: case X86_REG_R9W: case X86_REG_R9B:
		return 9;
	case X86_REG_R10: case X86_REG_R10D: case X86_REG_R10W: case X86_REG_R10B:
		return 10;
	case X86_REG_R11: case X86_REG_R11D: case X86_REG_R11W: case X86_REG_R11B:
		return 11;
	case X86_REG_R12: case X86_REG_R12D: case X86_REG_R12W: case X86_REG_R12B:
		return 12;
	case X86_REG_R13: case X86_REG_R13D: case X86_REG_R13W: case X86_REG_R13B:
		return 13;
	case X86_REG_R14: case X86_REG_R14D: case X86_REG_R14W: case X86_REG_R14B:
		return 14;
	case X86_REG_R15: case X86_REG_R15D: case X86_REG_R15W: case X86_REG_R15B:
		return 15;
	default:
		return -1;
	}
}
