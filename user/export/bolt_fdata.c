/*
 * The BOLT fdata export (see bolt_fdata.h): BOLT's names from the ELF symbol table, then per
 * function its branch and fall-through records from the profile's edge counts, its call
 * records from the block counts, and at the end the entry records.
 */
#include "user/export/bolt_fdata.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/sort.h"

/* A symbol as BOLT names it. */
struct bolt_sym {
	uint64_t addr, size;
	const char *name; /* in the ELF string table */
	bool local, func;
	uint32_t nth; /* local: how many local symbols of this name come before, plus 1 */
};

struct names {
	struct bolt_sym *syms; /* sorted by address */
	size_t n;
};

struct exporter {
	FILE *out;
	const struct profile *p;
	const struct cfg_program *prog;
	struct names names;
	uint64_t *called; /* [prog->nfuncs]: calls recorded into each function */
	struct bolt_fdata_stats *st;
	const struct elf_image *img;
	csh cs;		  /* capstone, for BOLT's linear view of a function's bytes */
	uint64_t *jumped; /* the direct jump targets in the current function symbol, sorted */
	size_t njumped, jumped_cap;
	int err;
};

static int cmp_sym(const void *a, const void *b)
{
	const struct bolt_sym *x = a, *y = b;
	int c;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	c = strcmp(x->name, y->name);
	return c ? c : (x->func != y->func ? (x->func ? -1 : 1) : 0);
}

static int cmp_str(const void *a, const void *b)
{
	const struct bolt_sym *const *x = a, *const *y = b;
	int c = strcmp((*x)->name, (*y)->name);

	if (c)
		return c;
	return cmp_sym(*x, *y);
}

/* The defined symbols of IMG's .symtab (.dynsym when there is none), and each local one's
 * ordinal among the local symbols of its name. */
static int load_names(struct names *nm, const struct elf_image *img)
{
	Elf_Scn *scn = NULL, *tab = NULL;
	GElf_Shdr sh;
	Elf_Data *data;
	struct bolt_sym **by_name = NULL;
	size_t count;

	memset(nm, 0, sizeof(*nm));
	while ((scn = elf_nextscn(img->elf, scn)))
		if (gelf_getshdr(scn, &sh) &&
		    (sh.sh_type == SHT_SYMTAB || (!tab && sh.sh_type == SHT_DYNSYM)))
			tab = scn;
	if (!tab || !gelf_getshdr(tab, &sh) || !sh.sh_entsize || !(data = elf_getdata(tab, NULL)))
		return 0;
	count = sh.sh_size / sh.sh_entsize;
	nm->syms = calloc(count ? count : 1, sizeof(*nm->syms));
	if (!nm->syms)
		return -ENOMEM;
	for (size_t i = 1; i < count; i++) {
		GElf_Sym s;
		const char *name;
		unsigned type;

		if (!gelf_getsym(data, (int)i, &s) || s.st_shndx == SHN_UNDEF || !s.st_value)
			continue;
		type = GELF_ST_TYPE(s.st_info);
		if (type == STT_FILE || type == STT_SECTION)
			continue;
		name = elf_strptr(img->elf, sh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		nm->syms[nm->n++] =
		    (struct bolt_sym){.addr = s.st_value,
				      .size = s.st_size,
				      .name = name,
				      .local = GELF_ST_BIND(s.st_info) == STB_LOCAL,
				      .func = type == STT_FUNC || type == STT_GNU_IFUNC};
	}
	qsort(nm->syms, nm->n, sizeof(*nm->syms), cmp_sym);
	/* A function symbol without a size (crtstuff's, _init) reaches the next one. */
	for (size_t i = 0; i < nm->n; i++) {
		if (!nm->syms[i].func || nm->syms[i].size)
			continue;
		for (size_t j = i + 1; j < nm->n; j++)
			if (nm->syms[j].func && nm->syms[j].addr > nm->syms[i].addr) {
				nm->syms[i].size = nm->syms[j].addr - nm->syms[i].addr;
				break;
			}
	}
	/* Local ordinals: the locals of one name in address order, counted from 1. */
	by_name = calloc(nm->n ? nm->n : 1, sizeof(*by_name));
	if (!by_name)
		return -ENOMEM;
	for (size_t i = 0; i < nm->n; i++)
		by_name[i] = &nm->syms[i];
	qsort(by_name, nm->n, sizeof(*by_name), cmp_str);
	for (size_t i = 0, k = 0; i < nm->n; i++) {
		if (!by_name[i]->local)
			continue;
		if (i && k && !strcmp(by_name[i]->name, by_name[k - 1]->name))
			by_name[i]->nth = by_name[k - 1]->nth + 1;
		else
			by_name[i]->nth = 1;
		k = i + 1;
	}
	free(by_name);
	return 0;
}

/* BOLT's name of the function at ADDR into BUF: its global symbol, else its local one with
 * "/N". NULL when no function symbol starts there. */
static const char *bolt_name(const struct names *nm, uint64_t addr, char *buf, size_t size)
{
	size_t lo = 0, hi = nm->n;
	const struct bolt_sym *local = NULL;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (nm->syms[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < nm->n && nm->syms[lo].addr == addr; lo++) {
		const struct bolt_sym *s = &nm->syms[lo];

		if (!s->func)
			continue;
		if (!s->local) {
			snprintf(buf, size, "%s", s->name);
			return buf;
		}
		if (!local)
			local = s;
	}
	if (!local)
		return NULL;
	snprintf(buf, size, "%s/%" PRIu32, local->name, local->nth);
	return buf;
}

/* The function symbol whose [addr, addr + size) holds ADDR (the last one starting at or
 * before it), or NULL. */
static const struct bolt_sym *containing(const struct names *nm, uint64_t addr)
{
	size_t lo = 0, hi = nm->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (nm->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo--) {
		const struct bolt_sym *s = &nm->syms[lo];

		if (s->func)
			return addr < s->addr + (s->size ? s->size : 1) ? s : NULL;
	}
	return NULL;
}

/* An edge of F's CFG from instruction FROM to address TO, COUNT times, as BOLT writes it: a
 * branch within one function symbol; between two (a part of F under a symbol of its own,
 * such as gcc's "f.cold"), a call record into the other's start. */
static void edge_record(struct exporter *x, uint64_t from, uint64_t to, uint64_t count)
{
	const struct bolt_sym *a = containing(&x->names, from), *b = containing(&x->names, to);
	char an[512], bn[512];

	if (!a || !b || !bolt_name(&x->names, a->addr, an, sizeof(an)) ||
	    !bolt_name(&x->names, b->addr, bn, sizeof(bn)))
		return;
	if (fprintf(x->out, "1 %s %" PRIx64 " 1 %s %" PRIx64 " 0 %" PRIu64 "\n", an, from - a->addr,
		    bn, a == b ? to - b->addr : 0, count) < 0)
		x->err = -EIO;
	if (a == b)
		x->st->branches++;
	else
		x->st->calls++;
}

/* Whether ADDR is the target of a direct jump of the current function symbol (X->jumped). */
static bool jumped_to(const struct exporter *x, uint64_t addr)
{
	size_t i = sort__lower_bound_u64(x->jumped, x->njumped, addr);

	return i < x->njumped && x->jumped[i] == addr;
}

/* Whether block B of F starts a block of BOLT's: not when the only way in is from the block
 * before it, as the return point of the call ending that block (a call ends no block of
 * BOLT's), or as the fall-through of its jcc into a lone direct jmp (BOLT's block ends with
 * both: `jcc A; jmp B`, the jmp standing for the fall-through). A target of a direct jump
 * anywhere in the function symbol's bytes always starts one: BOLT decodes them all, code
 * after a call that does not return included. */
static bool bolt_leader(const struct exporter *x, const struct cfg_func *f, uint32_t b)
{
	const struct cfg_block *bl = &f->blocks[b];
	bool lone_jmp = false;

	if (b == f->entry_block || jumped_to(x, bl->start))
		return true;
	if (bl->ninsns == 1 && bl->nsucc == 1) {
		uint8_t k = f->edges[f->succ[bl->first_succ]].kind;

		lone_jmp = k == EDGE_JUMP;
	}
	for (uint32_t k = 0; k < bl->npred; k++) {
		uint8_t kind = f->edges[f->pred[bl->first_pred + k]].kind;

		if (kind != EDGE_CALL_RETURN && !(kind == EDGE_NOT_TAKEN && lone_jmp))
			return true;
	}
	return false;
}

/* Whether the counts of profiled function PF are exact where known (conserved). */
static bool counts_exact(const struct profile_func *pf)
{
	return pf->status != PLAN_EXCLUDED && !pf->nviolations;
}

/* Whether the profile's function PF has F's blocks and edges. */
static bool same_cfg(const struct profile_func *pf, const struct cfg_func *f)
{
	if (pf->nblocks != f->nblocks || pf->nedges != f->nedges)
		return false;
	for (uint32_t b = 0; b < f->nblocks; b++)
		if (pf->blocks[b].addr != f->blocks[b].start ||
		    pf->blocks[b].end != f->blocks[b].end)
			return false;
	for (uint32_t e = 0; e < f->nedges; e++)
		if (pf->edges[e].from != f->edges[e].from || pf->edges[e].to != f->edges[e].to ||
		    pf->edges[e].kind != f->edges[e].kind)
			return false;
	return true;
}

/* The count BOLT gives a fall-through out of the block of its that ends with F's block B: the
 * executions of that block's first part (BOLT counts it before the calls inside, so a call
 * that does not return, by exit or exception, still counts), or -1 when unknown. */
static int64_t bolt_block_count(const struct exporter *x, const struct cfg_func *f,
				const struct profile_func *pf, uint32_t b)
{
	while (b > 0 && !bolt_leader(x, f, b) && f->blocks[b - 1].end == f->blocks[b].start)
		b--;
	return pf->blocks[b].count;
}

/* Whether BOLT takes the call at AT in F, which the CFG knows does not return, for one that
 * does: all but calls to the C library's exit, _exit and abort and the C++ runtime's
 * __cxa_throw, __cxa_rethrow and _Unwind_Resume (as measured against llvm-bolt 19). */
static bool bolt_returns(const struct cfg_func *f, uint64_t at)
{
	static const char *const noreturn[] = {"exit",	      "_exit",	       "abort",
					       "__cxa_throw", "__cxa_rethrow", "_Unwind_Resume"};

	for (uint32_t j = 0; j < f->ncalls; j++) {
		const struct cfg_call *c = &f->calls[j];

		if (c->site != at || c->indirect || c->tail)
			continue;
		for (size_t k = 0;
		     c->external && c->name && k < sizeof(noreturn) / sizeof(*noreturn); k++)
			if (!strcmp(c->name, noreturn[k]))
				return false;
		return true;
	}
	return false;
}

static const struct cfg_insn *last_insn(const struct cfg_func *f, uint32_t b)
{
	return &f->insns[f->blocks[b].first_insn + f->blocks[b].ninsns - 1];
}

/* The index of the function of the program whose entry is ADDR, or -1. */
static long func_index(const struct cfg_program *prog, uint64_t addr)
{
	const struct cfg_func *f = cfg_program__func_at(prog, addr);

	return f ? (long)(f - prog->funcs) : -1;
}

/* Collects into X->jumped the targets of the direct jumps in the bytes of the function
 * symbol holding ADDR, decoded one after another as BOLT does. */
static void sweep(struct exporter *x, uint64_t addr)
{
	const struct bolt_sym *s = containing(&x->names, addr);
	const uint8_t *code;
	uint64_t pc;
	size_t avail, size;
	cs_insn *in;

	x->njumped = 0;
	if (!s || !x->cs || !(code = elf_image__code(x->img, s->addr, &avail)))
		return;
	size = s->size < avail ? s->size : avail;
	pc = s->addr;
	in = cs_malloc(x->cs);
	if (!in)
		return;
	while (size) {
		if (!cs_disasm_iter(x->cs, &code, &size, &pc, in)) {
			code++, size--, pc++; /* not an instruction: as BOLT, go on */
			continue;
		}
		if (!cs_insn_group(x->cs, in, CS_GRP_JUMP) || !in->detail ||
		    in->detail->x86.op_count != 1 || in->detail->x86.operands[0].type != X86_OP_IMM)
			continue;
		if (x->njumped == x->jumped_cap) {
			size_t cap = x->jumped_cap ? 2 * x->jumped_cap : 64;
			uint64_t *j = realloc(x->jumped, cap * sizeof(*j));

			if (!j) {
				x->err = -ENOMEM;
				break;
			}
			x->jumped = j;
			x->jumped_cap = cap;
		}
		x->jumped[x->njumped++] = (uint64_t)in->detail->x86.operands[0].imm;
	}
	cs_free(in, 1);
	sort__u64(x->jumped, x->njumped);
}

/* A call or tail call at AT to TARGET (or the PLT stub of EXT_NAME), COUNT times. */
static void call_record(struct exporter *x, uint64_t at, uint64_t target, const char *ext_name,
			uint64_t count)
{
	const struct bolt_sym *a = containing(&x->names, at);
	char caller[512], callee[512];
	long g = -1;

	if (!count || !a || !bolt_name(&x->names, a->addr, caller, sizeof(caller)))
		return;
	if (ext_name) {
		snprintf(callee, sizeof(callee), "%s@PLT", ext_name);
	} else {
		g = func_index(x->prog, target);
		if (g < 0 || !bolt_name(&x->names, target, callee, sizeof(callee)))
			return;
	}
	if (fprintf(x->out, "1 %s %" PRIx64 " 1 %s 0 0 %" PRIu64 "\n", caller, at - a->addr, callee,
		    count) < 0)
		x->err = -EIO;
	if (g >= 0)
		x->called[g] += count;
	x->st->calls++;
}

/* A fall-through of BOLT's from instruction FROM to TO, counted as BOLT counts it: COUNT, the
 * executions of its block (bolt_block_count; -1 when unknown: left out, and counted). */
static void fallthrough(struct exporter *x, uint64_t from, uint64_t to, int64_t count)
{
	if (count < 0)
		x->st->unknown_records++;
	else if (count > 0)
		edge_record(x, from, to, (uint64_t)count);
}

static void export_func(struct exporter *x, size_t fi, const struct profile_func *pf)
{
	const struct cfg_func *f = &x->prog->funcs[fi];
	char name[512];
	uint64_t before = x->st->branches + x->st->calls;

	if (!bolt_name(&x->names, f->entry, name, sizeof(name)))
		return;
	sweep(x, f->entry);
	for (uint32_t b = 0; b < f->nblocks && !x->err; b++) {
		const struct cfg_insn *last = last_insn(f, b);
		int64_t bb = bolt_block_count(x, f, pf, b);

		/* A jump target inside the block (from code the CFG does not reach) splits
		 * BOLT's block there: a fall-through. */
		for (uint32_t k = 1; k < f->blocks[b].ninsns; k++) {
			const struct cfg_insn *in = &f->insns[f->blocks[b].first_insn + k];

			if (jumped_to(x, in->addr))
				fallthrough(x, (in - 1)->addr, in->addr, bb);
		}

		for (uint32_t k = 0; k < f->blocks[b].nsucc; k++) {
			uint32_t e = f->succ[f->blocks[b].first_succ + k];
			const struct cfg_edge *ed = &f->edges[e];
			uint64_t c = (uint64_t)pf->edges[e].count;

			/* Records of these kinds carry the edge's own count. */
			if (pf->edges[e].count < 0 &&
			    (ed->kind == EDGE_TAKEN || ed->kind == EDGE_NOT_TAKEN ||
			     ed->kind == EDGE_JUMP || ed->kind == EDGE_SWITCH ||
			     ed->kind == EDGE_TAIL_CALL)) {
				x->st->unknown_records++;
				continue;
			}

			switch (ed->kind) {
			case EDGE_FALLTHROUGH:
				if (ed->to < f->nblocks)
					fallthrough(x, last->addr, f->blocks[ed->to].start, bb);
				break;
			case EDGE_NORETURN:
				/* A call BOLT takes for one that returns: its fall-through, when
				 * a block of BOLT's follows. */
				if (last->flow == INSN_CALL && bolt_returns(f, last->addr) &&
				    b + 1 < f->nblocks &&
				    f->blocks[b + 1].start == f->blocks[b].end &&
				    bolt_leader(x, f, b + 1))
					fallthrough(x, last->addr, f->blocks[b + 1].start, bb);
				break;
			case EDGE_NOT_TAKEN:
				if (ed->to < f->nblocks && !bolt_leader(x, f, ed->to))
					break;
				/* fall through */
			case EDGE_TAKEN:
			case EDGE_JUMP:
			case EDGE_SWITCH:
				if (c && ed->to < f->nblocks)
					edge_record(x, last->addr, f->blocks[ed->to].start, c);
				break;
			case EDGE_CALL_RETURN:
				/* A fall-through of BOLT's only where the return point starts a
				 * block of BOLT's; counted as the call's executions. */
				if (ed->to < f->nblocks && bolt_leader(x, f, ed->to))
					fallthrough(x, last->addr, f->blocks[ed->to].start, bb);
				break;
			case EDGE_TAIL_CALL: {
				/* A jump to a PLT stub is named after the call's callee. */
				const char *ext = NULL;

				for (uint32_t j = 0; j < f->ncalls; j++)
					if (f->calls[j].site == last->addr && f->calls[j].tail &&
					    f->calls[j].external && !f->calls[j].indirect)
						ext = f->calls[j].name;
				if (ext || ed->target)
					call_record(x, last->addr, ed->target, ext, c);
				break;
			}
			default:
				break;
			}
		}
	}
	for (uint32_t k = 0; k < f->ncalls && !x->err; k++) {
		const struct cfg_call *c = &f->calls[k];

		if (c->tail || c->indirect || c->block >= f->nblocks)
			continue;
		if (pf->blocks[c->block].count < 0) {
			x->st->unknown_records++;
			continue;
		}
		call_record(x, c->site, c->target, c->external ? c->name : NULL,
			    (uint64_t)pf->blocks[c->block].count);
	}
	if (x->st->branches + x->st->calls > before)
		x->st->funcs++;
}

int bolt_fdata__write(FILE *out, const struct profile *p, const struct cfg_program *prog,
		      const struct elf_image *img, struct bolt_fdata_stats *st)
{
	struct exporter x = {.out = out, .p = p, .prog = prog, .st = st, .img = img};
	const struct profile_func **pfs;
	int err;

	memset(st, 0, sizeof(*st));
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &x.cs) == CS_ERR_OK)
		cs_option(x.cs, CS_OPT_DETAIL, CS_OPT_ON);
	else
		x.cs = 0;
	err = load_names(&x.names, img);
	x.called = calloc(prog->nfuncs ? prog->nfuncs : 1, sizeof(*x.called));
	pfs = calloc(prog->nfuncs ? prog->nfuncs : 1, sizeof(*pfs));
	if (err || !x.called || !pfs) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t fi = 0; fi < prog->nfuncs; fi++) {
		const struct profile_func *pf = profile__func_at(p, prog->funcs[fi].entry);

		if (!pf || pf->status == PLAN_EXCLUDED)
			continue;
		if (!same_cfg(pf, &prog->funcs[fi])) {
			st->mismatched_funcs++;
			continue;
		}
		if (!counts_exact(pf)) {
			st->unknown_funcs++;
			continue;
		}
		pfs[fi] = pf;
	}
	for (size_t fi = 0; fi < prog->nfuncs && !x.err; fi++)
		if (pfs[fi])
			export_func(&x, fi, pfs[fi]);
	/* Entries no recorded call explains: from outside the binary, indirect calls. */
	for (size_t fi = 0; fi < prog->nfuncs && !x.err; fi++) {
		char name[512];
		uint64_t n;

		if (pfs[fi] && pfs[fi]->count < 0)
			st->unknown_records++;
		if (!pfs[fi] || pfs[fi]->count < 0 || (uint64_t)pfs[fi]->count <= x.called[fi] ||
		    !bolt_name(&x.names, prog->funcs[fi].entry, name, sizeof(name)))
			continue;
		n = (uint64_t)pfs[fi]->count - x.called[fi];
		if (fprintf(out, "0 [unknown] 0 1 %s 0 0 %" PRIu64 "\n", name, n) < 0)
			x.err = -EIO;
		st->entries++;
	}
	err = x.err;
out:
	if (x.cs)
		cs_close(&x.cs);
	free(x.jumped);
	free(x.names.syms);
	free(x.called);
	free(pfs);
	return err;
}
