/*
 * Patch windows (see patch_window.h): the program's entry set, each instruction's relocation
 * kind, and per instruction the count and branch classes, from the facts the decoder kept of
 * each instruction (decode.h: the CFG build's decoding, never redone) plus the flag liveness.
 */
#include "patch_window.h"

#include <errno.h>
#include <gelf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "eh_lsda.h"
#include "sort.h"

/* --- relocation kinds ------------------------------------------------------------------- */

static bool reads_rip(const cs_insn *in)
{
	for (unsigned k = 0; k < in->detail->regs_read_count; k++)
		if (in->detail->regs_read[k] == X86_REG_RIP)
			return true;
	return false;
}

static bool has_prefix(const cs_insn *in, uint8_t p)
{
	const cs_x86 *x = &in->detail->x86;

	for (int k = 0; k < 4; k++)
		if (x->prefix[k] == p)
			return true;
	return false;
}

/* The memory operand of IN, or NULL. */
static const cs_x86_op *mem_op(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	for (unsigned k = 0; k < x->op_count; k++)
		if (x->operands[k].type == X86_OP_MEM)
			return &x->operands[k];
	return NULL;
}

/* Whether IN's rip-relative displacement is where capstone says (it is rewritten there). */
static bool rip_disp_ok(const cs_insn *in, const cs_x86_op *m)
{
	const cs_x86 *x = &in->detail->x86;
	int32_t d;

	if (m->mem.index != X86_REG_INVALID || has_prefix(in, 0x67))
		return false;
	if (!x->encoding.disp_offset || x->encoding.disp_size != 4 ||
	    x->encoding.disp_offset + 4u > in->size)
		return false;
	memcpy(&d, in->bytes + x->encoding.disp_offset, 4);
	return d == m->mem.disp;
}

static bool is_jcc(unsigned id)
{
	switch (id) {
	case X86_INS_JO: case X86_INS_JNO: case X86_INS_JB: case X86_INS_JAE:
	case X86_INS_JE: case X86_INS_JNE: case X86_INS_JBE: case X86_INS_JA:
	case X86_INS_JS: case X86_INS_JNS: case X86_INS_JP: case X86_INS_JNP:
	case X86_INS_JL: case X86_INS_JGE: case X86_INS_JLE: case X86_INS_JG:
		return true;
	default:
		return false;
	}
}

enum reloc_kind patch_reloc__kind(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *op0 = x->op_count ? &x->operands[0] : NULL;
	const cs_x86_op *m = mem_op(in);

	switch (in->id) {
	case X86_INS_SYSCALL: case X86_INS_SYSENTER: case X86_INS_SYSEXIT: case X86_INS_SYSRET:
	case X86_INS_INT: case X86_INS_INT1: case X86_INS_INT3: case X86_INS_INTO:
	case X86_INS_UD2: case X86_INS_UD2B: case X86_INS_UD0: case X86_INS_HLT:
	case X86_INS_XBEGIN: case X86_INS_XABORT: case X86_INS_XEND:
	case X86_INS_LOOP: case X86_INS_LOOPE: case X86_INS_LOOPNE:
	case X86_INS_JRCXZ: case X86_INS_JECXZ: case X86_INS_JCXZ:
	case X86_INS_LJMP: case X86_INS_LCALL: case X86_INS_RETF: case X86_INS_RETFQ:
	case X86_INS_IRET: case X86_INS_IRETD: case X86_INS_IRETQ:
	case X86_INS_INVALID:
		return RELOC_NO;
	case X86_INS_JMP:
	case X86_INS_CALL:
		if (has_prefix(in, 0x66) || !op0)
			return RELOC_NO; /* rel16 / 16-bit operand: refused */
		if (op0->type == X86_OP_IMM)
			return in->id == X86_INS_JMP ? RELOC_JMP : RELOC_CALL;
		if (op0->type == X86_OP_REG) {
			if (x86_reg_family(op0->reg) < 0 || x86_reg_family(op0->reg) == 4)
				return RELOC_NO;
			return in->id == X86_INS_JMP ? RELOC_JMP_IND : RELOC_CALL_IND;
		}
		if (op0->type != X86_OP_MEM || !x->encoding.modrm_offset)
			return RELOC_NO;
		if (op0->mem.base == X86_REG_RIP && !rip_disp_ok(in, op0))
			return RELOC_NO;
		/* A call pushes before it jumps in the trampoline: an operand through rsp would
		 * read another slot. */
		if (in->id == X86_INS_CALL &&
		    (x86_reg_family(op0->mem.base) == 4 || x86_reg_family(op0->mem.index) == 4))
			return RELOC_NO;
		return in->id == X86_INS_JMP ? RELOC_JMP_IND : RELOC_CALL_IND;
	case X86_INS_RET:
		return RELOC_RET;
	default:
		break;
	}
	if (is_jcc(in->id))
		return op0 && op0->type == X86_OP_IMM && !has_prefix(in, 0x66) ? RELOC_JCC
									      : RELOC_NO;
	if (m && m->mem.base == X86_REG_RIP)
		return rip_disp_ok(in, m) ? RELOC_RIP : RELOC_NO;
	if (reads_rip(in))
		return RELOC_NO;
	return RELOC_COPY;
}

static bool ends_window_only(uint8_t k)
{
	return k >= RELOC_JMP;
}

/* --- the entry set ---------------------------------------------------------------------- */

static int add(struct patch_entries *pe, uint64_t a)
{
	if (pe->n == pe->cap) {
		size_t cap = pe->cap ? 2 * pe->cap : 4096;
		uint64_t *v = realloc(pe->addr, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		pe->addr = v;
		pe->cap = cap;
	}
	pe->addr[pe->n++] = a;
	return 0;
}

static bool in_code(const struct elf_image *img, uint64_t a)
{
	const struct elf_section *s = elf_image__section_at(img, a);

	return s && s->exec;
}

bool patch_entries__inside(const struct patch_entries *pe, const uint64_t *extra,
			   size_t nextra, uint64_t lo, uint64_t hi)
{
	return lo + 1 < hi && (sort__any_in_u64(pe->addr, pe->n, lo + 1, hi) ||
			       sort__any_in_u64(extra, nextra, lo + 1, hi));
}

/* Relative relocations (PIE function-pointer and label tables) whose value is code. */
static int add_relocs(struct patch_entries *pe, const struct elf_image *img)
{
	Elf_Scn *scn = NULL;
	int err = 0;

	if (!img->elf)
		return 0;
	while (!err && (scn = elf_nextscn(img->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && !err && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			unsigned t;

			if (!gelf_getrela(data, (int)i, &r))
				break;
			t = (unsigned)GELF_R_TYPE(r.r_info);
			if ((t == R_X86_64_RELATIVE || t == R_X86_64_IRELATIVE) &&
			    in_code(img, (uint64_t)r.r_addend))
				err = add(pe, (uint64_t)r.r_addend);
		}
	}
	return err;
}

/* Aligned 8-byte data words whose value is a code address (non-PIE pointer tables). */
static int add_data_words(struct patch_entries *pe, const struct elf_image *img)
{
	int err = 0;

	for (size_t k = 0; !err && k < img->nsecs; k++) {
		const struct elf_section *s = &img->secs[k];

		if (s->exec || !s->data)
			continue;
		for (uint64_t off = (8 - (s->addr & 7)) & 7; !err && off + 8 <= s->size; off += 8) {
			uint64_t v;

			memcpy(&v, s->data + off, 8);
			if (v && in_code(img, v))
				err = add(pe, v);
		}
	}
	return err;
}

static int add_landing_pads(struct patch_entries *pe, const struct cfg_program *prog)
{
	struct eh_callsite *v = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	for (size_t i = 0; i < prog->syms.nlsdas; i++)
		if (eh_lsda__callsites(prog->img, prog->syms.lsdas[i].lsda,
				       prog->syms.lsdas[i].start, &v, &n, &cap) == -ENOMEM)
			err = -ENOMEM;
	for (size_t i = 0; !err && i < n; i++)
		err = add(pe, v[i].lp);
	free(v);
	return err;
}

static int add_tables(struct patch_entries *pe, const struct cfg_program *prog,
		      const struct cfg_func *f)
{
	for (uint32_t t = 0; t < f->ntables; t++) {
		const struct cfg_jump_table *jt = &f->tables[t];

		for (uint32_t e = 0; e < jt->entries; e++) {
			uint64_t v;
			int err;

			if (elf_image__read(prog->img, jt->table + (uint64_t)e * jt->entry_size,
					    jt->entry_size, &v))
				break;
			if (jt->relative)
				v = jt->table + (uint64_t)(int64_t)(int32_t)(uint32_t)v;
			if ((err = add(pe, v)))
				return err;
		}
	}
	return 0;
}

unsigned patch_insn__taken(const struct elf_image *img, const cs_insn *in, uint64_t *out,
			   unsigned max)
{
	const cs_x86 *x = &in->detail->x86;
	unsigned n = 0;

	if (in->id == X86_INS_CALL || in->id == X86_INS_JMP || is_jcc(in->id))
		return 0;
	for (unsigned k = 0; k < x->op_count && n < max; k++) {
		const cs_x86_op *op = &x->operands[k];
		uint64_t a = 0;

		if (op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP && in->id == X86_INS_LEA)
			a = in->address + in->size + (uint64_t)op->mem.disp;
		else if (op->type == X86_OP_IMM)
			a = (uint64_t)op->imm;
		else if (op->type == X86_OP_MEM && op->mem.base == X86_REG_INVALID)
			a = (uint64_t)op->mem.disp; /* a table indexed by absolute address */
		if (a && in_code(img, a))
			out[n++] = a;
	}
	return n;
}

/* --- per function ----------------------------------------------------------------------- */

long patch_func__insn_at(const struct cfg_func *f, uint64_t addr)
{
	int b = cfg_func__block_containing(f, addr);

	if (b < 0)
		return -1;
	for (uint32_t k = 0; k < f->blocks[b].ninsns; k++)
		if (f->insns[f->blocks[b].first_insn + k].addr == addr)
			return (long)(f->blocks[b].first_insn + k);
	return -1;
}

/* The block holding instruction INSN of F (blocks hold contiguous ranges). */
/* The block of PF's function holding its instruction INSN, or -1 (mapped by scan_func). */
static int block_of_insn(const struct patch_func *pf, uint32_t insn)
{
	return pf->block[insn];
}

static uint8_t class_of(uint8_t live)
{
	return (live & FLAG_INC_WRITES) ? PATCH_FLAGSAVE : PATCH_PLAIN;
}

/* Whether [FIRST, LAST] of F may form a window (sizes aside) under AVOID. */
static bool window_ok(const struct patch_analysis *pa, const struct patch_func *pf,
		      const struct cfg_func *f, uint32_t first, uint32_t last, uint32_t blk_last,
		      const uint64_t *avoid, size_t navoid)
{
	uint64_t lo = f->insns[first].addr;
	uint64_t hi = f->insns[last].addr + f->insns[last].size;

	for (uint32_t k = first; k <= last; k++) {
		if (pf->reloc[k] == RELOC_NO)
			return false;
		if (ends_window_only(pf->reloc[k]) && k != last)
			return false;
		if (ends_window_only(pf->reloc[k]) && k != blk_last)
			return false;
	}
	/* The entries in the function's span: a window lies within one of its blocks. */
	const struct patch_entries own = { .addr = pa->entries.addr + pf->entries_lo,
					   .n = pf->entries_hi - pf->entries_lo };

	return !patch_entries__inside(&own, avoid, navoid, lo, hi);
}

static void outcomes(const struct patch_func *pf, const struct cfg_func *f, uint32_t blk,
		     uint8_t *taken, uint8_t *not_taken)
{
	const struct cfg_block *b = &f->blocks[blk];

	*taken = *not_taken = 0;
	for (uint32_t s = 0; s < b->nsucc; s++) {
		uint32_t e = f->succ[b->first_succ + s];
		uint8_t l = flag_liveness__edge(&pf->fl, f, e);

		if (f->edges[e].kind == EDGE_NOT_TAKEN)
			*not_taken |= l;
		else if (f->edges[e].kind == EDGE_TAKEN || f->edges[e].kind == EDGE_TAIL_CALL)
			*taken |= l;
		else
			*taken |= l, *not_taken |= l; /* anything else: both, to be safe */
	}
}

static void fill(struct patch_window *w, const struct patch_func *pf, const struct cfg_func *f,
		 size_t func, uint32_t first, uint32_t last, uint32_t blk)
{
	const struct cfg_block *b = &f->blocks[blk];

	memset(w, 0, sizeof(*w));
	w->func = (uint32_t)func;
	w->start = f->insns[first].addr;
	w->len = (uint8_t)(f->insns[last].addr + f->insns[last].size - w->start);
	w->first = first;
	w->ninsns = last - first + 1;
	w->live_entry = pf->fl.before[first];
	w->ends_block = last == b->first_insn + b->ninsns - 1;
	w->ends_jcc = pf->reloc[last] == RELOC_JCC;
	if (w->ends_jcc)
		outcomes(pf, f, blk, &w->live_taken, &w->live_not_taken);
	w->reloc_len = w->len;
	w->index_reg = -1;
	w->last = last;
}

int patch_analysis__count_window(const struct patch_analysis *pa, size_t func, uint32_t insn,
				 const uint64_t *avoid, size_t navoid, unsigned opts,
				 struct patch_window *w)
{
	const struct cfg_func *f;
	const struct patch_func *pf;
	const struct cfg_block *b;
	uint32_t blk_last, last;
	uint64_t len = 0;
	uint64_t sb;
	int blk;

	if (func >= pa->nfuncs)
		return -ENOENT;
	f = &pa->prog->funcs[func];
	pf = &pa->funcs[func];
	if (pf->refused || insn >= f->ninsns || (blk = block_of_insn(pf, insn)) < 0)
		return -ENOENT;
	b = &f->blocks[blk];
	blk_last = b->first_insn + b->ninsns - 1;
	for (last = insn; last <= blk_last; last++) {
		len += f->insns[last].size;
		if (len >= 5)
			break;
	}
	if (len < 5) {
		/* A short window: to the block's end, else the fewest instructions that hold
		 * the jmp rel8. */
		if (len < PATCH_JMP8_LEN)
			return -ENOENT;
		last = blk_last;
		if ((opts & PATCH_WINDOW_SHORTEST) ||
		    !window_ok(pa, pf, f, insn, last, blk_last, avoid, navoid)) {
			len = 0;
			for (last = insn; last <= blk_last; last++) {
				len += f->insns[last].size;
				if (len >= PATCH_JMP8_LEN)
					break;
			}
			if (!window_ok(pa, pf, f, insn, last, blk_last, avoid, navoid))
				return -ENOENT;
		}
		fill(w, pf, f, func, insn, last, (uint32_t)blk);
		w->cls = class_of(w->live_entry);
		w->short_jump = true;
		return patch_analysis__springboard(pa, w, NULL, 0, avoid, navoid, &sb);
	}
	if (len > PATCH_WINDOW_MAX || !window_ok(pa, pf, f, insn, last, blk_last, avoid, navoid))
		return -ENOENT;
	if ((opts & PATCH_WINDOW_TO_BLOCK_END) && last < blk_last &&
	    ends_window_only(pf->reloc[blk_last]) &&
	    f->insns[blk_last].addr + f->insns[blk_last].size - f->insns[insn].addr <=
		    PATCH_WINDOW_MAX &&
	    window_ok(pa, pf, f, insn, blk_last, blk_last, avoid, navoid))
		last = blk_last;
	fill(w, pf, f, func, insn, last, (uint32_t)blk);
	w->cls = class_of(w->live_entry);
	return 0;
}

int patch_analysis__branch_window(const struct patch_analysis *pa, size_t func, uint32_t insn,
				  const uint64_t *avoid, size_t navoid, struct patch_window *w)
{
	const struct cfg_func *f;
	const struct patch_func *pf;
	const struct cfg_block *b;
	uint32_t first;
	uint64_t len;
	int blk;

	if (func >= pa->nfuncs)
		return -ENOENT;
	f = &pa->prog->funcs[func];
	pf = &pa->funcs[func];
	if (pf->refused || insn >= f->ninsns || pf->reloc[insn] != RELOC_JCC ||
	    (blk = block_of_insn(pf, insn)) < 0)
		return -ENOENT;
	b = &f->blocks[blk];
	if (insn != b->first_insn + b->ninsns - 1)
		return -ENOENT;
	first = insn;
	len = f->insns[insn].size;
	while (len < 5 && first > b->first_insn) {
		first--;
		len += f->insns[first].size;
	}
	if (len < 5) {
		/* A short window: the jcc alone (2 bytes or more), to a springboard. */
		uint64_t sb;

		if (f->insns[insn].size < PATCH_JMP8_LEN ||
		    !window_ok(pa, pf, f, insn, insn, insn, avoid, navoid))
			return -ENOENT;
		fill(w, pf, f, func, insn, insn, (uint32_t)blk);
		w->cls = class_of(w->live_taken | w->live_not_taken);
		w->short_jump = true;
		return patch_analysis__springboard(pa, w, NULL, 0, avoid, navoid, &sb);
	}
	if (len > PATCH_WINDOW_MAX || !window_ok(pa, pf, f, first, insn, insn, avoid, navoid))
		return -ENOENT;
	fill(w, pf, f, func, first, insn, (uint32_t)blk);
	w->cls = class_of(w->live_taken | w->live_not_taken);
	return 0;
}

/* --- springboards ----------------------------------------------------------------------- */

size_t patch_analysis__gap_after(const struct patch_analysis *pa, uint64_t a)
{
	size_t lo = 0, hi = pa->ngaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pa->gaps[mid].hi <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void patch_window__sb_reach(uint64_t start, uint64_t *lo, uint64_t *hi)
{
	uint64_t from = start + PATCH_JMP8_LEN;

	*lo = from >= 128 ? from - 128 : 0;
	*hi = from + 127;
}

int patch_analysis__springboard(const struct patch_analysis *pa, const struct patch_window *w,
				const uint64_t *used, size_t nused, const uint64_t *avoid,
				size_t navoid, uint64_t *sb)
{
	uint64_t lo, hi, best = 0, best_d = UINT64_MAX;

	uint64_t near[64];
	size_t nnear = 0;

	if (!w->short_jump)
		return -ENOENT;
	patch_window__sb_reach(w->start, &lo, &hi);
	/* Only the used slots that overlap [lo, hi + 5) can clash: those, once (the used slots
	 * are disjoint, so few); all of them when a caller's list has more there. */
	for (size_t u = 0; u < nused && nnear <= 64; u++)
		if (used[u] < hi + PATCH_SPRING_LEN && lo < used[u] + PATCH_SPRING_LEN) {
			if (nnear < 64)
				near[nnear] = used[u];
			nnear++;
		}
	if (nnear <= 64) {
		used = near;
		nused = nnear;
	}
	for (size_t g = patch_analysis__gap_after(pa, lo); g < pa->ngaps && pa->gaps[g].lo <= hi;
	     g++) {
		const struct patch_gap *gp = &pa->gaps[g];
		uint64_t a = gp->lo > lo ? gp->lo : lo;

		for (; a <= hi && a + PATCH_SPRING_LEN <= gp->hi; a++) {
			uint64_t d = a > w->start ? a - w->start : w->start - a;
			bool clash = sort__any_in_u64(avoid, navoid, a, a + PATCH_SPRING_LEN);

			for (size_t u = 0; !clash && u < nused; u++)
				clash = used[u] < a + PATCH_SPRING_LEN &&
					a < used[u] + PATCH_SPRING_LEN;
			if (!clash && d < best_d) {
				best = a;
				best_d = d;
			}
		}
	}
	if (best_d == UINT64_MAX)
		return -ENOENT;
	*sb = best;
	return 0;
}

bool patch_analysis__springboard_ok(const struct patch_analysis *pa,
				    const struct patch_window *w, uint64_t sb)
{
	uint64_t lo, hi;
	size_t g;

	if (!w->short_jump)
		return false;
	patch_window__sb_reach(w->start, &lo, &hi);
	if (sb < lo || sb > hi)
		return false;
	g = patch_analysis__gap_after(pa, sb);
	return g < pa->ngaps && pa->gaps[g].lo <= sb && sb + PATCH_SPRING_LEN <= pa->gaps[g].hi;
}

/* --- padding gaps ----------------------------------------------------------------------- */

/* The addresses of every symbol of IMG's .symtab and .dynsym (of any type but section and
 * file) that lie in code, sorted, into *OUT (*N of them): a gap holds none. */
static int code_symbols(const struct elf_image *img, uint64_t **out, size_t *n)
{
	struct patch_entries v = { 0 };
	Elf_Scn *scn = NULL;
	int err = 0;

	*out = NULL;
	*n = 0;
	while (img->elf && !err && (scn = elf_nextscn(img->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && !err && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			unsigned t;

			if (!gelf_getsym(data, (int)i, &sym))
				break;
			t = GELF_ST_TYPE(sym.st_info);
			if (t == STT_SECTION || t == STT_FILE || sym.st_shndx == SHN_UNDEF ||
			    sym.st_shndx == SHN_ABS || !in_code(img, sym.st_value))
				continue;
			err = add(&v, sym.st_value);
		}
	}
	if (err) {
		free(v.addr);
		return err;
	}
	sort__u64(v.addr, v.n);
	*out = v.addr;
	*n = v.n;
	return 0;
}


struct span_end {
	uint64_t start, end;
	uint32_t func;
	bool stops; /* its last instruction is a jmp, an indirect jmp or a ret */
};

static bool func_refused(const struct patch_analysis *pa, uint32_t func)
{
	return func >= pa->nfuncs || pa->funcs[func].refused;
}

/* Whether [LO, HI) holds only nop and int3 instructions that tile it exactly. */
static bool all_padding(struct decoder *d, uint64_t lo, uint64_t hi)
{
	uint64_t a = lo;

	while (a < hi) {
		const struct dinsn *di = decoder__get(d, a);

		if (!di || a + di->size > hi || !di->pad)
			return false;
		a += di->size;
	}
	return true;
}

/* Whether every function whose symbol or FDE range meets [LO, HI) is one whose CFG is
 * sound (its jumps all resolved, its code all decoded). MAXEND[i] is the highest end of the
 * ranges of syms.funcs[0..i]. */
static bool ranges_sound(const struct patch_analysis *pa, const uint64_t *maxend, uint64_t lo,
			 uint64_t hi)
{
	const struct symbols *sy = &pa->prog->syms;
	size_t a = 0, z = sy->nfuncs;

	while (a < z) { /* the first function starting at HI or above */
		size_t m = a + (z - a) / 2;

		if (sy->funcs[m].addr < hi)
			a = m + 1;
		else
			z = m;
	}
	while (a > 0 && maxend[a - 1] > lo) {
		const struct func_start *fs = &sy->funcs[--a];
		const struct cfg_func *f;

		if (fs->addr + fs->size <= lo && fs->addr < lo)
			continue;
		f = cfg_program__func_at(pa->prog, fs->addr);
		if (!f || func_refused(pa, (uint32_t)(f - pa->prog->funcs)))
			return false;
	}
	return true;
}

static int add_gap(struct patch_analysis *pa, size_t *cap, uint64_t lo, uint64_t hi)
{
	if (pa->ngaps == *cap) {
		size_t c = *cap ? 2 * *cap : 256;
		struct patch_gap *v = realloc(pa->gaps, c * sizeof(*v));

		if (!v)
			return -ENOMEM;
		pa->gaps = v;
		*cap = c;
	}
	pa->gaps[pa->ngaps++] = (struct patch_gap){ lo, hi };
	pa->stats.gaps++;
	pa->stats.gap_bytes += hi - lo;
	return 0;
}

/* Finds the padding gaps of the program (see patch_window.h). Needs the sorted entry set. */
static int find_gaps(struct patch_analysis *pa, struct decoder *d)
{
	const struct cfg_program *prog = pa->prog;
	const struct symbols *sy = &prog->syms;
	struct span_end *v;
	uint64_t *maxend, *syms;
	size_t n = 0, cap = 0, nsyms;
	int err = code_symbols(prog->img, &syms, &nsyms);

	if (err)
		return err;

	for (size_t i = 0; i < prog->nfuncs; i++)
		n += prog->funcs[i].nblocks;
	v = calloc(n + 1, sizeof(*v));
	maxend = calloc(sy->nfuncs + 1, sizeof(*maxend));
	if (!v || !maxend) {
		free(v);
		free(maxend);
		free(syms);
		return -ENOMEM;
	}
	for (size_t i = 0; i < sy->nfuncs; i++) {
		uint64_t e = sy->funcs[i].addr + (sy->funcs[i].size ? sy->funcs[i].size : 1);

		maxend[i] = i && maxend[i - 1] > e ? maxend[i - 1] : e;
	}
	n = 0;
	for (size_t i = 0; i < prog->nfuncs; i++) {
		const struct cfg_func *f = &prog->funcs[i];

		for (uint32_t b = 0; b < f->nblocks; b++) {
			const struct cfg_block *bl = &f->blocks[b];
			uint8_t flow = bl->ninsns ? f->insns[bl->first_insn + bl->ninsns - 1].flow
						  : INSN_PLAIN;

			if (bl->end <= bl->start)
				continue;
			v[n++] = (struct span_end){ bl->start, bl->end, (uint32_t)i,
						    flow == INSN_JMP || flow == INSN_JMP_IND ||
							    flow == INSN_RET };
		}
	}
	/* By start, then end (two stable passes), as span_cmp orders them. */
	sort__by_key_u64(v, n, sizeof(*v), offsetof(struct span_end, end), false);
	sort__by_key_u64(v, n, sizeof(*v), offsetof(struct span_end, start), false);
	for (size_t i = 0; !err && i < n;) {
		/* The union of the spans from i on: [v[i].start, end); all of those ending at
		 * END must stop there, and their functions be sound. */
		uint64_t end = v[i].end;
		bool ok = true;
		size_t j;

		for (j = i + 1; j < n && v[j].start < end; j++)
			if (v[j].end > end)
				end = v[j].end;
		for (size_t k = i; k < j; k++)
			if (v[k].end == end && (!v[k].stops || func_refused(pa, v[k].func)))
				ok = false;
		if (ok && j < n && !func_refused(pa, v[j].func) &&
		    v[j].start - end >= PATCH_SPRING_LEN) {
			uint64_t lo = end, hi = v[j].start;
			const struct elf_section *s = elf_image__section_at(prog->img, lo);

			if (s && s->exec && s == elf_image__section_at(prog->img, hi - 1) &&
			    !sort__any_in_u64(pa->entries.addr, pa->entries.n, lo, hi) &&
			    !sort__any_in_u64(syms, nsyms, lo, hi) &&
			    ranges_sound(pa, maxend, lo, hi) && all_padding(d, lo, hi))
				err = add_gap(pa, &cap, lo, hi);
		}
		i = j;
	}
	free(v);
	free(maxend);
	free(syms);
	return err;
}

/* The table resolved at the jump at ADDR of F, or NULL. */
static const struct cfg_jump_table *table_of(const struct cfg_func *f, uint64_t addr)
{
	for (uint32_t t = 0; t < f->ntables; t++)
		if (f->tables[t].jump == addr)
			return &f->tables[t];
	return NULL;
}

int patch_analysis__indirect_window(const struct patch_analysis *pa, size_t func, uint32_t insn,
				    const uint64_t *avoid, size_t navoid, struct patch_window *w)
{
	const struct cfg_func *f;
	const struct patch_func *pf;
	const struct cfg_jump_table *jt;
	const struct cfg_block *b;
	uint32_t first, last;
	uint64_t len = 0, end;
	long kl;
	int blk;

	if (func >= pa->nfuncs)
		return -ENOENT;
	f = &pa->prog->funcs[func];
	pf = &pa->funcs[func];
	if (pf->refused || insn >= f->ninsns || pf->reloc[insn] != RELOC_JMP_IND ||
	    (blk = block_of_insn(pf, insn)) < 0)
		return -ENOENT;
	b = &f->blocks[blk];
	jt = table_of(f, f->insns[insn].addr);
	if (insn != b->first_insn + b->ninsns - 1 || !jt || !jt->load || jt->load_index < 0 ||
	    jt->load_index == 4 || !jt->entries || !jt->entry_size ||
	    (jt->load_mult != 1 && jt->load_mult != 2 && jt->load_mult != 4 &&
	     jt->load_mult != 8) ||
	    (uint64_t)jt->entries * jt->load_mult > INT32_MAX)
		return -ENOENT;
	for (uint32_t s = 0; s < b->nsucc; s++)
		if (f->edges[f->succ[b->first_succ + s]].kind != EDGE_SWITCH)
			return -ENOENT;
	kl = patch_func__insn_at(f, jt->load);
	if (kl < 0 || (uint32_t)kl < b->first_insn || (uint32_t)kl > insn)
		return -ENOENT;
	/* From the load, or from as far before it in the block as 5 bytes need. */
	first = (uint32_t)kl;
	end = f->insns[insn].addr + f->insns[insn].size;
	while (end - f->insns[first].addr < 5 && first > b->first_insn)
		first--;
	if (end - f->insns[first].addr > PATCH_INDIRECT_MAX)
		return -ENOENT;
	for (last = first; last <= insn; last++) {
		len += f->insns[last].size;
		if (len >= 5)
			break;
	}
	if (len < 5 || len > PATCH_WINDOW_MAX)
		return -ENOENT;
	for (uint32_t k = first; k <= insn; k++)
		if (pf->reloc[k] == RELOC_NO || (k != insn && ends_window_only(pf->reloc[k])) ||
		    (k > (uint32_t)kl && k < insn && !pf->quiet[k]))
			return -ENOENT;
	if (patch_entries__inside(&pa->entries, avoid, navoid, f->insns[first].addr, end))
		return -ENOENT;
	fill(w, pf, f, func, first, last, (uint32_t)blk);
	w->reloc_len = (uint8_t)(end - w->start);
	w->index_reg = jt->load_index;
	w->index_mult = jt->load_mult;
	w->index_at = jt->load;
	w->live_index = pf->fl.before[kl];
	w->last = insn;
	w->ends_block = true;
	w->cls = (w->live_index & FLAG_ALL) ? PATCH_FLAGSAVE : PATCH_PLAIN;
	return 0;
}

bool patch_insn__quiet(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	switch (in->id) {
	case X86_INS_LEA:
	case X86_INS_NOP:
		return true;
	case X86_INS_DIV: case X86_INS_IDIV: case X86_INS_PUSH: case X86_INS_POP:
	case X86_INS_PUSHFQ: case X86_INS_POPFQ: case X86_INS_CALL: case X86_INS_RET:
	case X86_INS_ENTER: case X86_INS_LEAVE:
		return false;
	default:
		break;
	}
	if (x->prefix[0] || x->prefix[1]) /* rep, lock, segment overrides */
		return false;
	for (unsigned k = 0; k < x->op_count; k++)
		if (x->operands[k].type == X86_OP_MEM)
			return false;
	return true;
}

/* Pass 1 over F: relocation kinds and the entries F contributes. */
static int scan_func(struct patch_analysis *pa, struct patch_func *pf, const struct cfg_func *f,
		     struct decoder *d)
{
	int err;

	pf->reloc = calloc(f->ninsns + 1, 1);
	pf->count_class = calloc(f->ninsns + 1, 1);
	pf->branch_class = calloc(f->ninsns + 1, 1);
	pf->indirect_class = calloc(f->ninsns + 1, 1);
	pf->quiet = calloc(f->ninsns + 1, 1);
	pf->block = malloc((f->ninsns + 1) * sizeof(*pf->block));
	if (!pf->reloc || !pf->count_class || !pf->branch_class || !pf->indirect_class ||
	    !pf->quiet || !pf->block)
		return -ENOMEM;
	/* Blocks in order, a later one's instructions taking over an earlier one's: a prefix
	 * pair's inner block is the one block_lookup finds. */
	for (uint32_t k = 0; k < f->ninsns; k++)
		pf->block[k] = -1;
	for (uint32_t b = 0; b < f->nblocks; b++)
		for (uint32_t k = f->blocks[b].first_insn;
		     k < f->blocks[b].first_insn + f->blocks[b].ninsns && k < f->ninsns; k++)
			pf->block[k] = (int32_t)b;
	pf->refused = (f->flags & (CFG_FUNC_UNRESOLVED | CFG_FUNC_BAD_CODE)) != 0;
	if ((err = add(&pa->entries, f->entry)))
		return err;
	for (uint32_t b = 0; b < f->nblocks; b++)
		if ((err = add(&pa->entries, f->blocks[b].start)))
			return err;
	if ((err = add_tables(&pa->entries, pa->prog, f)))
		return err;
	/* Call and tail-call targets (a jump into another function's middle included). */
	for (uint32_t c = 0; c < f->ncalls; c++)
		if (f->calls[c].target && (err = add(&pa->entries, f->calls[c].target)))
			return err;
	for (uint32_t e = 0; e < f->nedges; e++)
		if (f->edges[e].target && (err = add(&pa->entries, f->edges[e].target)))
			return err;
	for (uint32_t k = 0; k < f->ninsns; k++) {
		const struct cfg_insn *ci = &f->insns[k];
		long x = decoder__index(d, ci->addr);
		const struct dinsn *di;

		if (ci->flow == INSN_CALL || ci->flow == INSN_CALL_IND)
			if ((err = add(&pa->entries, ci->addr + ci->size)))
				return err;
		if (x < 0 || d->insns[x].size != ci->size) {
			pf->reloc[k] = RELOC_NO;
			continue;
		}
		di = &d->insns[x];
		if (ci->overlap) {
			/* A prefix pair (cfg.h): no window may hold either instruction, nor the
			 * bytes they share. */
			pf->reloc[k] = RELOC_NO;
			continue;
		}
		pf->reloc[k] = di->reloc;
		pf->quiet[k] = di->quiet;
		for (uint8_t t = 0; t < di->ntaken; t++)
			if ((err = add(&pa->entries, d->taken[di->taken + t])))
				return err;
	}
	return flag_liveness__compute(&pf->fl, pa->prog, f, d);
}

/* Sets PF's slice of the sorted ENTRIES: those within F's instructions' span. */
static void entries_span(struct patch_func *pf, const struct cfg_func *f,
			 const struct patch_entries *entries)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	for (uint32_t k = 0; k < f->ninsns; k++) {
		if (f->insns[k].addr < lo)
			lo = f->insns[k].addr;
		if (f->insns[k].addr + f->insns[k].size > hi)
			hi = f->insns[k].addr + f->insns[k].size;
	}
	if (lo >= hi) {
		pf->entries_lo = pf->entries_hi = 0;
		return;
	}
	pf->entries_lo = sort__lower_bound_u64(entries->addr, entries->n, lo);
	pf->entries_hi = sort__lower_bound_u64(entries->addr, entries->n, hi);
}

/* The classes of functions [lo, hi) of PA, with counts of their own (summed by
 * classify_all): one share of the work, on a thread of its own or the caller's. */
struct class_share {
	struct patch_analysis *pa;
	size_t lo, hi;
	__typeof__(((struct patch_analysis *)0)->stats) st;
};

static void *classify_share(void *arg)
{
	struct class_share *sh = arg;
	const struct patch_analysis *pa = sh->pa;

	for (size_t i = sh->lo; i < sh->hi; i++) {
		const struct cfg_func *f = &pa->prog->funcs[i];
		struct patch_func *pf = &sh->pa->funcs[i];
		struct patch_window win;

		sh->st.insns += f->ninsns;
		for (uint32_t k = 0; k < f->ninsns; k++) {
			if (!patch_analysis__count_window(pa, i, k, NULL, 0, 0, &win)) {
				pf->count_class[k] = win.cls;
				sh->st.count_plain += win.cls == PATCH_PLAIN;
				sh->st.count_flagsave += win.cls == PATCH_FLAGSAVE;
				sh->st.count_short += win.short_jump;
			}
			if (pf->reloc[k] == RELOC_JMP_IND && table_of(f, f->insns[k].addr)) {
				sh->st.table_jumps++;
				if (!patch_analysis__indirect_window(pa, i, k, NULL, 0, &win)) {
					pf->indirect_class[k] = win.cls;
					sh->st.indirect_plain += win.cls == PATCH_PLAIN;
					sh->st.indirect_flagsave += win.cls == PATCH_FLAGSAVE;
				}
			}
			if (pf->reloc[k] != RELOC_JCC)
				continue;
			sh->st.jcc_blocks++;
			if (!patch_analysis__branch_window(pa, i, k, NULL, 0, &win)) {
				pf->branch_class[k] = win.cls;
				sh->st.branch_plain += win.cls == PATCH_PLAIN;
				sh->st.branch_flagsave += win.cls == PATCH_FLAGSAVE;
				sh->st.branch_short += win.short_jump;
			}
		}
	}
	return NULL;
}

/* Functions below this many instructions are classified on one thread. */
#define CLASSIFY_SPLIT_MIN 20000

/* Every instruction's count, branch and indirect classes (the queries only read PA; each
 * share writes its own functions' classes): the functions split in two shares of about as
 * many instructions, the second on another thread when there are many. */
static void classify_all(struct patch_analysis *pa)
{
	struct class_share sh[2] = { { .pa = pa, .hi = pa->nfuncs },
				     { .pa = pa, .lo = pa->nfuncs, .hi = pa->nfuncs } };
	uint64_t total = 0, half = 0;
	pthread_t t;
	bool split = false;

	for (size_t i = 0; i < pa->nfuncs; i++)
		total += pa->prog->funcs[i].ninsns;
	if (total >= CLASSIFY_SPLIT_MIN) {
		size_t i = 0;

		while (i < pa->nfuncs && half < total / 2)
			half += pa->prog->funcs[i++].ninsns;
		sh[0].hi = sh[1].lo = i;
		split = !pthread_create(&t, NULL, classify_share, &sh[1]);
		if (!split)
			sh[0].hi = pa->nfuncs;
	}
	classify_share(&sh[0]);
	if (split)
		pthread_join(t, NULL);
	for (int k = 0; k < 2; k++) {
		pa->stats.insns += sh[k].st.insns;
		pa->stats.count_plain += sh[k].st.count_plain;
		pa->stats.count_flagsave += sh[k].st.count_flagsave;
		pa->stats.count_short += sh[k].st.count_short;
		pa->stats.table_jumps += sh[k].st.table_jumps;
		pa->stats.indirect_plain += sh[k].st.indirect_plain;
		pa->stats.indirect_flagsave += sh[k].st.indirect_flagsave;
		pa->stats.jcc_blocks += sh[k].st.jcc_blocks;
		pa->stats.branch_plain += sh[k].st.branch_plain;
		pa->stats.branch_flagsave += sh[k].st.branch_flagsave;
		pa->stats.branch_short += sh[k].st.branch_short;
	}
}

int patch_analysis__build(struct patch_analysis *pa, const struct cfg_program *prog)
{
	struct decoder own, *d = prog->dec;
	size_t w = 0;
	int err = 0;

	memset(pa, 0, sizeof(*pa));
	pa->prog = prog;
	pa->nfuncs = prog->nfuncs;
	pa->funcs = calloc(prog->nfuncs + 1, sizeof(*pa->funcs));
	if (!pa->funcs)
		return -ENOMEM;
	/* The decoding the build made (every instruction of the CFG is in it), else our own. */
	if (!d) {
		err = decoder__open(&own, prog->img);
		d = &own;
	}
	if (err) {
		free(pa->funcs);
		pa->funcs = NULL;
		return err;
	}
	for (size_t i = 0; !err && i < prog->nfuncs; i++)
		err = scan_func(pa, &pa->funcs[i], &prog->funcs[i], d);
	for (size_t i = 0; !err && i < prog->syms.nfuncs; i++)
		err = add(&pa->entries, prog->syms.funcs[i].addr);
	for (size_t i = 0; !err && i < prog->syms.nplt; i++)
		err = add(&pa->entries, prog->syms.plt[i].addr);
	if (!err)
		err = add_landing_pads(&pa->entries, prog);
	if (!err)
		err = add_relocs(&pa->entries, prog->img);
	if (!err)
		err = add_data_words(&pa->entries, prog->img);
	if (!err) {
		sort__u64(pa->entries.addr, pa->entries.n);
		for (size_t r = 0; r < pa->entries.n; r++)
			if (!w || pa->entries.addr[w - 1] != pa->entries.addr[r])
				pa->entries.addr[w++] = pa->entries.addr[r];
		pa->entries.n = w;
		pa->stats.entries = w;
		for (size_t i = 0; i < prog->nfuncs; i++)
			entries_span(&pa->funcs[i], &prog->funcs[i], &pa->entries);
		err = find_gaps(pa, d);
	}
	if (d == &own)
		decoder__close(&own);
	if (err) {
		patch_analysis__release(pa);
		return err;
	}
	classify_all(pa);
	return 0;
}

void patch_analysis__apply(const struct patch_analysis *pa, struct cfg_program *prog)
{
	static const uint8_t probe[] = { 0, PROBE_PATCH, PROBE_PATCH_FLAGS };

	for (size_t i = 0; i < pa->nfuncs && i < prog->nfuncs; i++) {
		struct cfg_func *f = &prog->funcs[i];
		const struct patch_func *pf = &pa->funcs[i];

		for (uint32_t k = 0; k < f->ninsns; k++) {
			f->insns[k].patch_count = probe[pf->count_class[k] % 3];
			f->insns[k].patch_branch = probe[pf->branch_class[k] % 3];
			f->insns[k].patch_indirect = probe[pf->indirect_class[k] % 3];
		}
	}
}

void patch_analysis__release(struct patch_analysis *pa)
{
	for (size_t i = 0; pa->funcs && i < pa->nfuncs; i++) {
		free(pa->funcs[i].reloc);
		free(pa->funcs[i].count_class);
		free(pa->funcs[i].branch_class);
		free(pa->funcs[i].indirect_class);
		free(pa->funcs[i].quiet);
		free(pa->funcs[i].block);
		flag_liveness__release(&pa->funcs[i].fl);
	}
	free(pa->funcs);
	free(pa->entries.addr);
	free(pa->gaps);
	memset(pa, 0, sizeof(*pa));
}
