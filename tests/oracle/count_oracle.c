/*
 * count_oracle: checks the counts of an edgeprof profile exactly against valgrind callgrind.
 *
 *   count_oracle --profile JSON --callgrind OUT [--callgrind OUT...] --binary PATH [--all]
 *
 * JSON is the output of `edgeprof report --json`; each OUT a callgrind output of the same run
 * (--dump-instr=yes --collect-jumps=yes --skip-plt=no; one file per process, which are summed).
 * For every function of the profile with a non-null count, every non-null block and edge count
 * must equal a figure computed from callgrind alone (the block boundaries come from the profile,
 * the instructions from decoding PATH with capstone, not from edgeprof's CFG library):
 *
 *   block        executions of its first instruction
 *   fallthrough  executions of the block's last instruction
 *   taken        jumps (jcnd=/jump=, or calls= for a jump callgrind took for a call) from the
 *                last instruction to the edge's target
 *   not_taken    executions of the jcc minus every transfer out of it
 *   jump, return executions of the last instruction
 *   switch       jumps from the indirect jump to the edge's target
 *   tail_call    executions of the last instruction; for a jcc, the transfers out of it
 *   noreturn     as tail_call, less what the block's exception edges carry
 *   call_return  the flow into the target's first instruction that callgrind's recorded jumps
 *                and calls into it do not explain (count - jumps in - calls in)
 *   exception    executions of the call less the block's call_return figure
 *   unresolved   executions of the last instruction less the block's other edges
 *   function     (its count = invocations) executions of the entry less the figures of the
 *                function's own edges into its entry block
 *
 * "Executions" of a rep-prefixed string instruction are its callgrind count less its self-jumps
 * (callgrind counts n + 1 for n iterations). Functions with code outside .text (_init, _fini)
 * are not checked: callgrind files that code under an anonymous object at run-time addresses
 * (as it does the PLT). The profile's "violations" must be 0 and its
 * build id, when given, must be PATH's. Prints a summary line and up to 50 differences; exits 0
 * when there is none, 1 on any difference, 2 on a usage or load error.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>
#include <jansson.h>

#include "support/json_hex.h"
#include "support/callgrind.h"

#define MAX_PRINTED 50
static unsigned long max_printed = MAX_PRINTED; /* --all: every difference is printed */
#define MAX_CG_FILES 256
#define EXIT_ADDR UINT64_MAX

/* What the last (or first) instruction of a block does. */
enum insn_class {
	IC_OTHER = 0,
	IC_JCC,
	IC_JMP,
	IC_JMP_IND,
	IC_CALL,
	IC_RET,
};

struct binary {
	uint8_t *data;
	size_t size;
	const Elf64_Phdr *phdr;
	unsigned nphdr;
	char build_id[129]; /* hex, "" when absent */
	uint64_t text_lo, text_hi; /* .text: what callgrind attributes to the object */
	csh cs;
	bool cs_open;
};

/* Summed callgrind data with two extra indexes: jumps by target, calls into the object by
 * target. */
struct cgdata {
	struct cg_profile p;    /* insns, jumps, calls sorted and merged (see callgrind.h) */
	struct cg_jump *jby_to; /* non-self jumps sorted by to */
	size_t njby_to;
	struct cg_call *cby_to; /* target_in calls sorted by target */
	size_t ncby_to;
};

struct pblock {
	uint64_t start, end;
	bool has_count;
	uint64_t count;
	/* decoded */
	bool decoded;
	uint64_t last;    /* address of the last instruction */
	int last_class;
	/* From the profile's virtual edges (flow the program's frames carried without call or
	 * return, which edgeprof measured by unwinding): */
	uint64_t faulted; /* frames that stopped inside it (a fatal signal): entered, but
			   * callgrind drops the counts of a whole superblock whose execution
			   * faults, so its first instruction is short by that many */
	uint64_t mid;     /* frames resumed inside it (a forked child waiting on its call):
			   * they leave it without executing its instructions */
};

struct pedge {
	uint64_t from, to; /* to == EXIT_ADDR for "exit" */
	const char *kind;
	bool has_count;
	uint64_t count;
	int from_block;
};

struct oracle {
	struct binary bin;
	struct cgdata cg;
	const char *profile_path;
	unsigned long funcs, blocks, edges, null_blocks, null_edges, skipped_funcs;
	unsigned long outside_funcs; /* with code outside .text: callgrind has no counts */
	unsigned long diffs, printed;
	uint64_t covered_ir;
};

static void usage(void)
{
	fprintf(stderr, "usage: count_oracle --profile JSON --callgrind OUT [--callgrind OUT...] "
			"--binary PATH [--all]\n");
}

/* ---- the binary: loadable segments, build id, decoding ---------------------------------- */

static int load_binary(struct binary *b, const char *path)
{
	const Elf64_Ehdr *eh;
	FILE *f = fopen(path, "rb");
	long len;
	unsigned i;

	if (!f) {
		fprintf(stderr, "count_oracle: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "count_oracle: %s: cannot size\n", path);
		fclose(f);
		return -1;
	}
	b->size = (size_t)len;
	b->data = malloc(b->size ? b->size : 1);
	if (!b->data || fread(b->data, 1, b->size, f) != b->size) {
		fprintf(stderr, "count_oracle: %s: read error\n", path);
		fclose(f);
		return -1;
	}
	fclose(f);
	eh = (const Elf64_Ehdr *)b->data;
	if (b->size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_machine != EM_X86_64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > b->size) {
		fprintf(stderr, "count_oracle: %s: not an x86-64 ELF64 file\n", path);
		return -1;
	}
	b->phdr = (const Elf64_Phdr *)(b->data + eh->e_phoff);
	b->nphdr = eh->e_phnum;
	for (i = 0; i < b->nphdr; i++) {
		const Elf64_Phdr *ph = &b->phdr[i];
		uint64_t off = ph->p_offset, end = ph->p_offset + ph->p_filesz;

		if (ph->p_type != PT_NOTE || end > b->size)
			continue;
		while (off + sizeof(Elf64_Nhdr) <= end) {
			const Elf64_Nhdr *nh = (const Elf64_Nhdr *)(b->data + off);
			uint64_t name = off + sizeof(*nh);
			uint64_t desc = name + ((nh->n_namesz + 3) & ~3u);
			uint64_t next = desc + ((nh->n_descsz + 3) & ~3u);
			uint32_t k;

			if (next > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(b->data + name, "GNU", 4) && nh->n_descsz <= 64) {
				for (k = 0; k < nh->n_descsz; k++)
					sprintf(b->build_id + 2 * k, "%02x", b->data[desc + k]);
			}
			off = next;
		}
	}
	if (eh->e_shentsize == sizeof(Elf64_Shdr) && eh->e_shstrndx < eh->e_shnum &&
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) <= b->size) {
		const Elf64_Shdr *sh = (const Elf64_Shdr *)(b->data + eh->e_shoff);
		const Elf64_Shdr *strs = &sh[eh->e_shstrndx];

		for (i = 0; i < eh->e_shnum; i++) {
			uint64_t off = strs->sh_offset + sh[i].sh_name;

			if (off + 6 <= b->size && off + 6 <= strs->sh_offset + strs->sh_size &&
			    !memcmp(b->data + off, ".text", 6)) {
				b->text_lo = sh[i].sh_addr;
				b->text_hi = sh[i].sh_addr + sh[i].sh_size;
			}
		}
	}
	if (b->text_hi <= b->text_lo) {
		fprintf(stderr, "count_oracle: %s: no .text section\n", path);
		return -1;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &b->cs) != CS_ERR_OK) {
		fprintf(stderr, "count_oracle: cannot open capstone\n");
		return -1;
	}
	b->cs_open = true;
	cs_option(b->cs, CS_OPT_DETAIL, CS_OPT_ON);
	return 0;
}

static void free_binary(struct binary *b)
{
	if (b->cs_open)
		cs_close(&b->cs);
	free(b->data);
}

/* The file bytes at vaddr ADDR and how many follow in the same segment, or NULL. */
static const uint8_t *code_at(const struct binary *b, uint64_t addr, size_t *avail)
{
	unsigned i;

	for (i = 0; i < b->nphdr; i++) {
		const Elf64_Phdr *ph = &b->phdr[i];

		if (ph->p_type != PT_LOAD || addr < ph->p_vaddr ||
		    addr >= ph->p_vaddr + ph->p_filesz || ph->p_offset + ph->p_filesz > b->size)
			continue;
		*avail = ph->p_vaddr + ph->p_filesz - addr;
		return b->data + ph->p_offset + (addr - ph->p_vaddr);
	}
	return NULL;
}

static bool in_group(const cs_insn *in, uint8_t grp)
{
	uint8_t k;

	for (k = 0; k < in->detail->groups_count; k++)
		if (in->detail->groups[k] == grp)
			return true;
	return false;
}

static int classify(const cs_insn *in)
{
	if (in_group(in, CS_GRP_CALL))
		return IC_CALL;
	if (in_group(in, CS_GRP_RET))
		return IC_RET;
	if (in_group(in, CS_GRP_JUMP)) {
		if (in->id == X86_INS_JMP || in->id == X86_INS_LJMP) {
			const cs_x86 *x = &in->detail->x86;

			return x->op_count == 1 && x->operands[0].type == X86_OP_IMM ? IC_JMP :
										       IC_JMP_IND;
		}
		return IC_JCC; /* jcc, jrcxz, loop* */
	}
	return IC_OTHER;
}

/* Decodes [start, end) linearly; sets the last instruction. False when the range does not
 * decode into whole instructions ending exactly at END. */
static bool decode_block(struct binary *b, struct pblock *bl)
{
	const uint8_t *code;
	size_t avail, len;
	uint64_t addr = bl->start;
	cs_insn *in;
	bool ok = false;

	if (bl->end <= bl->start)
		return false;
	code = code_at(b, bl->start, &avail);
	if (!code || avail < bl->end - bl->start)
		return false;
	len = bl->end - bl->start;
	in = cs_malloc(b->cs);
	if (!in)
		return false;
	while (len && cs_disasm_iter(b->cs, &code, &len, &addr, in)) {
		if (!len) {
			bl->last = in->address;
			bl->last_class = classify(in);
			ok = addr == bl->end;
		}
	}
	cs_free(in, 1);
	return ok;
}

/* ---- callgrind data ------------------------------------------------------------------------ */

static int cmp_jump_to(const void *a, const void *b)
{
	const struct cg_jump *x = a, *y = b;

	return x->to < y->to ? -1 : x->to > y->to;
}

static int cmp_call_target(const void *a, const void *b)
{
	const struct cg_call *x = a, *y = b;

	return x->target < y->target ? -1 : x->target > y->target;
}

static int load_callgrind(struct cgdata *cg, const char **files, int nfiles, const char *object)
{
	struct cg_profile one;
	size_t i;
	int k;

	memset(&cg->p, 0, sizeof(cg->p));
	for (k = 0; k < nfiles; k++) {
		if (cg_profile__load(&one, files[k], object)) {
			fprintf(stderr, "count_oracle: %s\n", one.error);
			cg_profile__free(&one);
			return -1;
		}
		if (!cg_profile__whole(&one)) {
			fprintf(stderr, "count_oracle: %s: parsed Ir total %" PRIu64
				" != summary %" PRIu64 "\n", files[k], one.total_ir, one.summary_ir);
			cg_profile__free(&one);
			return -1;
		}
		if (cg_profile__add(&cg->p, &one)) {
			fprintf(stderr, "count_oracle: out of memory\n");
			cg_profile__free(&one);
			return -1;
		}
		cg_profile__free(&one);
	}
	if (!cg->p.ninsns) {
		fprintf(stderr, "count_oracle: no callgrind costs for object '%s'\n", object);
		return -1;
	}
	cg->jby_to = malloc((cg->p.njumps + 1) * sizeof(*cg->jby_to));
	cg->cby_to = malloc((cg->p.ncalls + 1) * sizeof(*cg->cby_to));
	if (!cg->jby_to || !cg->cby_to) {
		fprintf(stderr, "count_oracle: out of memory\n");
		return -1;
	}
	for (i = 0; i < cg->p.njumps; i++)
		if (cg->p.jumps[i].from != cg->p.jumps[i].to)
			cg->jby_to[cg->njby_to++] = cg->p.jumps[i];
	for (i = 0; i < cg->p.ncalls; i++)
		if (cg->p.calls[i].target_in)
			cg->cby_to[cg->ncby_to++] = cg->p.calls[i];
	qsort(cg->jby_to, cg->njby_to, sizeof(*cg->jby_to), cmp_jump_to);
	qsort(cg->cby_to, cg->ncby_to, sizeof(*cg->cby_to), cmp_call_target);
	return 0;
}

static void free_callgrind(struct cgdata *cg)
{
	free(cg->jby_to);
	free(cg->cby_to);
	cg_profile__free(&cg->p);
}

/* Taken count of the jumps from FROM to itself (a rep instruction's iterations). */
static uint64_t self_jumps(const struct cgdata *cg, uint64_t from)
{
	long k = cg_profile__first_jump(&cg->p, from);
	uint64_t n = 0;

	for (; k >= 0 && (size_t)k < cg->p.njumps && cg->p.jumps[k].from == from; k++)
		if (cg->p.jumps[k].to == from)
			n += cg->p.jumps[k].taken;
	return n;
}

/* How often the instruction at ADDR ran: its count less its self-jumps (rep iterations). */
static uint64_t execs(const struct cgdata *cg, uint64_t addr)
{
	return cg_profile__count(&cg->p, addr) - self_jumps(cg, addr);
}

/* First call index with site_in and site == SITE, or p.ncalls. */
static size_t first_call_from(const struct cgdata *cg, uint64_t site)
{
	size_t lo = 0, hi = cg->p.ncalls;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct cg_call *c = &cg->p.calls[mid];

		if (!c->site_in || c->site < site)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Transfers (non-self jumps and calls) from FROM to TO, or to anywhere when TO is EXIT_ADDR. */
static uint64_t transfers(const struct cgdata *cg, uint64_t from, uint64_t to)
{
	long k = cg_profile__first_jump(&cg->p, from);
	uint64_t n = 0;
	size_t c;

	for (; k >= 0 && (size_t)k < cg->p.njumps && cg->p.jumps[k].from == from; k++) {
		const struct cg_jump *j = &cg->p.jumps[k];

		if (j->to != from && (to == EXIT_ADDR || j->to == to))
			n += j->taken;
	}
	for (c = first_call_from(cg, from); c < cg->p.ncalls && cg->p.calls[c].site == from; c++)
		if (to == EXIT_ADDR || (cg->p.calls[c].target_in && cg->p.calls[c].target == to))
			n += cg->p.calls[c].count;
	return n;
}

/* Jumps (not self) and calls recorded into TO. */
static uint64_t inflow(const struct cgdata *cg, uint64_t to)
{
	size_t lo = 0, hi = cg->njby_to, i;
	uint64_t n = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cg->jby_to[mid].to < to)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < cg->njby_to && cg->jby_to[i].to == to; i++)
		n += cg->jby_to[i].taken;
	lo = 0;
	hi = cg->ncby_to;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cg->cby_to[mid].target < to)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < cg->ncby_to && cg->cby_to[i].target == to; i++)
		n += cg->cby_to[i].count;
	return n;
}

/* ---- the profile ---------------------------------------------------------------------------- */

/* A count: non-negative integer, or null. False when malformed. */
static bool parse_count(json_t *v, bool *has, uint64_t *out)
{
	*out = 0;
	if (!v || json_is_null(v)) {
		*has = false;
		return true;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*has = true;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

static void diff(struct oracle *o, const char *func, const char *what, uint64_t a, uint64_t b,
		 const char *kind, uint64_t have, int64_t want)
{
	o->diffs++;
	if (o->printed++ >= max_printed)
		return;
	if (b == EXIT_ADDR)
		printf("diff %s: %s 0x%" PRIx64 " -> exit %s: profile %" PRIu64 ", callgrind %"
		       PRId64 "\n", func, what, a, kind, have, want);
	else if (b)
		printf("diff %s: %s 0x%" PRIx64 " -> 0x%" PRIx64 " %s: profile %" PRIu64
		       ", callgrind %" PRId64 "\n", func, what, a, b, kind, have, want);
	else
		printf("diff %s: %s 0x%" PRIx64 "%s%s: profile %" PRIu64 ", callgrind %" PRId64 "\n",
		       func, what, a, *kind ? " " : "", kind, have, want);
}

static int block_index(const struct pblock *bl, size_t n, uint64_t addr)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (bl[i].start == addr)
			return (int)i;
	return -1;
}

/* The call_return figure of block B: flow into TO no recorded transfer explains. */
static int64_t call_return_fig(const struct oracle *o, uint64_t to)
{
	return (int64_t)execs(&o->cg, to) - (int64_t)inflow(&o->cg, to);
}

/* The callgrind figure of edge E (of blocks BL, edges ES of one function). */
static int64_t edge_fig(const struct oracle *o, const struct pblock *bl, const struct pedge *es,
			size_t nes, const struct pedge *e, int depth)
{
	const struct pblock *b = &bl[e->from_block];
	const struct cgdata *cg = &o->cg;
	int64_t x = (int64_t)execs(cg, b->last), other = 0;
	size_t k;

	x += (int64_t)b->mid;
	if (!strcmp(e->kind, "fallthrough") || !strcmp(e->kind, "jump") ||
	    !strcmp(e->kind, "return"))
		return x;
	if (!strcmp(e->kind, "taken") || !strcmp(e->kind, "switch"))
		return e->to == EXIT_ADDR ? (int64_t)transfers(cg, b->last, EXIT_ADDR) :
					    (int64_t)transfers(cg, b->last, e->to);
	if (!strcmp(e->kind, "not_taken"))
		return x - (int64_t)transfers(cg, b->last, EXIT_ADDR);
	if (!strcmp(e->kind, "call_return"))
		return e->to == EXIT_ADDR ? x : call_return_fig(o, e->to);
	if (!strcmp(e->kind, "tail_call") || !strcmp(e->kind, "noreturn")) {
		if (b->last_class == IC_JCC)
			x = (int64_t)transfers(cg, b->last, EXIT_ADDR);
		if (e->kind[0] == 'n' && depth == 0)
			for (k = 0; k < nes; k++)
				if (es[k].from_block == e->from_block &&
				    !strcmp(es[k].kind, "exception"))
					x -= edge_fig(o, bl, es, nes, &es[k], depth + 1);
		return x;
	}
	if (!strcmp(e->kind, "exception")) {
		for (k = 0; k < nes; k++)
			if (es[k].from_block == e->from_block && !strcmp(es[k].kind, "call_return"))
				return x - call_return_fig(o, es[k].to);
		return x;
	}
	/* unresolved: what the block's other edges do not carry */
	if (depth == 0)
		for (k = 0; k < nes; k++)
			if (es[k].from_block == e->from_block && &es[k] != e)
				other += edge_fig(o, bl, es, nes, &es[k], depth + 1);
	return x - other;
}

static const char *const known_kinds[] = { "fallthrough", "taken",     "not_taken", "jump",
					   "switch",      "call_return", "tail_call", "return",
					   "noreturn",    "unresolved", "exception" };

static bool known_kind(const char *k)
{
	size_t i;

	for (i = 0; i < sizeof(known_kinds) / sizeof(known_kinds[0]); i++)
		if (!strcmp(k, known_kinds[i]))
			return true;
	return false;
}

/* Checks one function; returns -1 on a malformed entry (load error). */
static int check_func(struct oracle *o, json_t *jf, size_t fi)
{
	json_t *jblocks = json_object_get(jf, "blocks"), *jedges = json_object_get(jf, "edges");
	const char *name = json_string_value(json_object_get(jf, "name"));
	struct pblock *bl = NULL;
	struct pedge *es = NULL;
	size_t nb, ne, i;
	uint64_t entry = 0, fcount = 0;
	bool has_fcount;
	int ret = -1;
	char fname[200];

	snprintf(fname, sizeof(fname), "%s", name ? name : "?");
	if (!parse_hex(json_object_get(jf, "addr"), &entry) ||
	    !parse_count(json_object_get(jf, "count"), &has_fcount, &fcount) ||
	    !json_is_array(jblocks) || !json_is_array(jedges)) {
		fprintf(stderr, "count_oracle: %s: function %zu (%s): bad addr, count, blocks or "
			"edges\n", o->profile_path, fi, fname);
		return -1;
	}
	if (!has_fcount) {
		o->skipped_funcs++;
		return 0;
	}
	nb = json_array_size(jblocks);
	ne = json_array_size(jedges);
	bl = calloc(nb + 1, sizeof(*bl));
	es = calloc(ne + 1, sizeof(*es));
	if (!bl || !es) {
		fprintf(stderr, "count_oracle: out of memory\n");
		goto out;
	}
	for (i = 0; i < nb; i++) {
		json_t *jb = json_array_get(jblocks, i);

		if (!parse_hex(json_object_get(jb, "addr"), &bl[i].start) ||
		    !parse_hex(json_object_get(jb, "end"), &bl[i].end) ||
		    !parse_count(json_object_get(jb, "count"), &bl[i].has_count, &bl[i].count)) {
			fprintf(stderr, "count_oracle: %s: %s: block %zu malformed\n",
				o->profile_path, fname, i);
			goto out;
		}
		bl[i].decoded = decode_block(&o->bin, &bl[i]);
		if (!bl[i].decoded) {
			fprintf(stderr, "count_oracle: %s: %s: block [0x%" PRIx64 ", 0x%" PRIx64
				") does not decode into whole instructions of %s\n",
				o->profile_path, fname, bl[i].start, bl[i].end, "the binary");
			goto out;
		}
	}
	for (i = 0; i < ne; i++) {
		json_t *je = json_array_get(jedges, i), *jto = json_object_get(je, "to");
		struct pedge *e = &es[i];

		e->kind = json_string_value(json_object_get(je, "kind"));
		if (json_is_string(jto) && !strcmp(json_string_value(jto), "exit"))
			e->to = EXIT_ADDR;
		else if (!parse_hex(jto, &e->to))
			e->kind = NULL;
		if (!e->kind || !known_kind(e->kind) ||
		    !parse_hex(json_object_get(je, "from"), &e->from) ||
		    !parse_count(json_object_get(je, "count"), &e->has_count, &e->count)) {
			fprintf(stderr, "count_oracle: %s: %s: edge %zu malformed\n",
				o->profile_path, fname, i);
			goto out;
		}
		e->from_block = block_index(bl, nb, e->from);
		if (e->from_block < 0 ||
		    (e->to != EXIT_ADDR && block_index(bl, nb, e->to) < 0)) {
			fprintf(stderr, "count_oracle: %s: %s: edge %zu (0x%" PRIx64 " %s) does not "
				"join blocks of the function\n", o->profile_path, fname, i, e->from,
				e->kind);
			goto out;
		}
	}
	for (i = 0; i < nb; i++) {
		if (bl[i].start < o->bin.text_lo || bl[i].end > o->bin.text_hi) {
			/* Callgrind files code outside .text (.init, .fini, .plt) under an
			 * anonymous object at run-time addresses: nothing to compare with. */
			o->outside_funcs++;
			ret = 0;
			goto out;
		}
	}
	if (block_index(bl, nb, entry) < 0) {
		fprintf(stderr, "count_oracle: %s: %s: entry 0x%" PRIx64 " is not a block\n",
			o->profile_path, fname, entry);
		goto out;
	}
	{
		json_t *jv = json_object_get(jf, "virtual");

		for (i = 0; json_is_array(jv) && i < json_array_size(jv); i++) {
			json_t *v = json_array_get(jv, i);
			uint64_t from = EXIT_ADDR, to = EXIT_ADDR, at = 0, count;
			bool has;
			int bi;

			if (!json_is_string(json_object_get(v, "to")) ||
			    strcmp(json_string_value(json_object_get(v, "to")), "exit"))
				parse_hex(json_object_get(v, "to"), &to);
			if (!json_is_string(json_object_get(v, "from")) ||
			    strcmp(json_string_value(json_object_get(v, "from")), "exit"))
				parse_hex(json_object_get(v, "from"), &from);
			if (!parse_count(json_object_get(v, "count"), &has, &count) || !has)
				continue;
			if (parse_hex(json_object_get(v, "stopped_at"), &at) &&
			    (bi = block_index(bl, nb, from)) >= 0 && at >= bl[bi].start &&
			    at < bl[bi].end)
				bl[bi].faulted += count;
			if (parse_hex(json_object_get(v, "resumed_at"), &at) &&
			    (bi = block_index(bl, nb, to)) >= 0 && bl[bi].start != at)
				bl[bi].mid += count;
		}
	}

	o->funcs++;
	for (i = 0; i < nb; i++) {
		uint64_t want;

		if (!bl[i].has_count) {
			o->null_blocks++;
			continue;
		}
		o->blocks++;
		want = execs(&o->cg, bl[i].start) + bl[i].faulted;
		if (want != bl[i].count)
			diff(o, fname, "block", bl[i].start, 0, "", bl[i].count, (int64_t)want);
	}
	{
		/* Invocations: entries less the function's own flow into its entry block. */
		int64_t want = (int64_t)execs(&o->cg, entry);

		for (i = 0; i < ne; i++)
			if (es[i].to == entry)
				want -= edge_fig(o, bl, es, ne, &es[i], 0);
		if (want != (int64_t)fcount)
			diff(o, fname, "function", entry, 0, "invocations", fcount, want);
	}
	for (i = 0; i < ne; i++) {
		int64_t want;

		if (!es[i].has_count) {
			o->null_edges++;
			continue;
		}
		o->edges++;
		want = edge_fig(o, bl, es, ne, &es[i], 0);
		if (want != (int64_t)es[i].count)
			diff(o, fname, "edge", es[i].from, es[i].to, es[i].kind, es[i].count, want);
	}
	ret = 0;
out:
	free(bl);
	free(es);
	return ret;
}

/* Executed instructions of the object inside the checked functions' blocks, for the summary
 * (a profile that leaves out what ran is visible there). */
static int cmp_range(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

static int coverage(struct oracle *o, json_t *funcs)
{
	size_t n = 0, cap = 0, fi, bi, i, r = 0;
	uint64_t *rg = NULL;
	json_t *jf;

	json_array_foreach(funcs, fi, jf) {
		json_t *jb, *bls = json_object_get(jf, "blocks");

		if (json_is_null(json_object_get(jf, "count")))
			continue;
		json_array_foreach(bls, bi, jb) {
			uint64_t s, e;

			if (!parse_hex(json_object_get(jb, "addr"), &s) ||
			    !parse_hex(json_object_get(jb, "end"), &e))
				continue;
			if (n == cap) {
				uint64_t *nr = realloc(rg, (cap = cap ? 2 * cap : 1024) * 2 *
							       sizeof(*rg));

				if (!nr) {
					free(rg);
					return -1;
				}
				rg = nr;
			}
			rg[2 * n] = s;
			rg[2 * n + 1] = e;
			n++;
		}
	}
	qsort(rg, n, 2 * sizeof(*rg), cmp_range);
	for (i = 0; i < o->cg.p.ninsns; i++) {
		uint64_t a = o->cg.p.insns[i].addr;

		while (r < n && rg[2 * r + 1] <= a)
			r++;
		if (r < n && rg[2 * r] <= a)
			o->covered_ir += o->cg.p.insns[i].count;
	}
	free(rg);
	return 0;
}

int main(int argc, char **argv)
{
	const char *files[MAX_CG_FILES], *profile = NULL, *binary = NULL;
	struct oracle o;
	json_error_t jerr;
	json_t *root = NULL, *funcs, *jf, *jb;
	int nfiles = 0, i, ret = 2;
	size_t fi;
	bool has_viol;
	uint64_t viol = 0;

	for (i = 1; i < argc; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "--profile")) {
			profile = argv[++i];
		} else if (i + 1 < argc && !strcmp(argv[i], "--binary")) {
			binary = argv[++i];
		} else if (i + 1 < argc && !strcmp(argv[i], "--callgrind")) {
			if (nfiles == MAX_CG_FILES) {
				fprintf(stderr, "count_oracle: too many --callgrind files\n");
				return 2;
			}
			files[nfiles++] = argv[++i];
		} else if (!strcmp(argv[i], "--all")) {
			max_printed = (unsigned long)-1;
		} else {
			usage();
			return 2;
		}
	}
	if (!profile || !binary || !nfiles) {
		usage();
		return 2;
	}
	memset(&o, 0, sizeof(o));
	o.profile_path = profile;
	if (load_binary(&o.bin, binary))
		goto out;
	if (load_callgrind(&o.cg, files, nfiles, binary))
		goto out;
	root = json_load_file(profile, 0, &jerr);
	if (!root) {
		fprintf(stderr, "count_oracle: %s:%d: %s\n", profile, jerr.line, jerr.text);
		goto out;
	}
	funcs = json_object_get(root, "functions");
	if (!json_is_array(funcs)) {
		fprintf(stderr, "count_oracle: %s: no \"functions\" array\n", profile);
		goto out;
	}
	jb = json_object_get(json_object_get(root, "binary"), "build_id");
	if (json_is_string(jb) && o.bin.build_id[0] &&
	    strcasecmp(json_string_value(jb), o.bin.build_id)) {
		fprintf(stderr, "count_oracle: %s: build id %s is not %s's (%s)\n", profile,
			json_string_value(jb), binary, o.bin.build_id);
		goto out;
	}
	if (!parse_count(json_object_get(root, "violations"), &has_viol, &viol) || !has_viol) {
		fprintf(stderr, "count_oracle: %s: \"violations\" missing or not a count\n",
			profile);
		goto out;
	}
	if (viol)
		diff(&o, "(profile)", "violations", 0, 0, "", viol, 0);
	json_array_foreach(funcs, fi, jf) {
		if (check_func(&o, jf, fi))
			goto out;
	}
	if (coverage(&o, funcs)) {
		fprintf(stderr, "count_oracle: out of memory\n");
		goto out;
	}
	if (o.printed > max_printed)
		printf("... %lu more differences not shown\n", o.printed - max_printed);
	printf("count_oracle %s: functions %lu, blocks %lu, edges %lu checked (null: functions "
	       "%lu, blocks %lu, edges %lu; outside .text: functions %lu; executed instructions "
	       "covered %.1f%%); differences %lu %s\n", profile, o.funcs, o.blocks, o.edges,
	       o.skipped_funcs, o.null_blocks, o.null_edges, o.outside_funcs, o.cg.p.object_ir ? 100.0 * (double)o.covered_ir /
	       (double)o.cg.p.object_ir : 0.0, o.diffs, o.diffs ? "FAIL" : "ok");
	ret = o.diffs ? 1 : 0;
out:
	json_decref(root);
	free_callgrind(&o.cg);
	free_binary(&o.bin);
	return ret;
}
