/*
 * Unit tests of the trampoline code generator (user/count/trampoline.h), by execution: the
 * hand-written functions of tests/support/patch_fixtures.c are patched in place in this test
 * binary's own text (windows from cfg/patch_window.h on its own CFG), their trampolines live
 * in an RWX page mapped within rel32 reach, and each patched function must return what it
 * returned unpatched while its counters equal the executions known from its shape (a loop's
 * trip count, the calls made). Also: the trampoline decoded with capstone, the pc map, the
 * lock prefixes, and the windows the generator refuses. Short windows get their springboard
 * in padding as the backend gives them (jmp rel8 there, jmp rel32 on), and are run the same way.
 * Indirect sites: a jump-table dispatch counted per table entry (the indexed increment), by
 * execution and decoded.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <capstone/capstone.h>
#include <cmocka.h>

#include "cfg/cfg.h"
#include "cfg/flag_liveness.h"
#include "cfg/patch_window.h"
#include "tests/support/patch_fixtures.h"
#include "user/count/patch_sites.h"
#include "user/count/trampoline.h"

#define REGION_SIZE (64 * 1024)
#define COUNTERS_OFF (48 * 1024)
#define SLOT 256

static struct elf_image img;
static struct cfg_program prog;
static struct patch_analysis pa;
static uint64_t bias;
static uint8_t *region;
static uint64_t *counters;

static int setup(void **state)
{
	struct cfg_func *f;
	uint64_t code = (uint64_t)(uintptr_t)pf_loop & ~0xffffull;

	if (elf_image__open(&img, "/proc/self/exe") || cfg_program__build(&prog, &img, NULL) ||
	    patch_analysis__build(&pa, &prog))
		return -1;
	f = cfg_program__find(&prog, "pf_loop");
	if (!f)
		return -1;
	bias = (uint64_t)(uintptr_t)pf_loop - f->entry;
	/* An RWX region within rel32 of the code: below it first, then above. */
	for (uint64_t d = 1ull << 24; d < 1ull << 30 && !region; d += 1ull << 24) {
		for (int side = 0; side < 2 && !region; side++) {
			uint64_t hint = side ? code + d : code - d;
			void *p = mmap((void *)(uintptr_t)hint, REGION_SIZE,
				       PROT_READ | PROT_WRITE | PROT_EXEC,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

			if (p != MAP_FAILED)
				region = p;
		}
	}
	if (!region)
		return -1;
	counters = (uint64_t *)(region + COUNTERS_OFF);
	return 0;
}

static int teardown(void **state)
{
	if (region)
		munmap(region, REGION_SIZE);
	patch_analysis__release(&pa);
	cfg_program__free(&prog);
	elf_image__close(&img);
	return 0;
}

static size_t func_index(const char *name)
{
	const struct cfg_func *f = cfg_program__find(&prog, name);

	assert_non_null(f);
	return (size_t)(f - prog.funcs);
}

static uint32_t insn_of(size_t fi, const void *p)
{
	long k = patch_func__insn_at(&prog.funcs[fi], (uint64_t)(uintptr_t)p - bias);

	assert_true(k >= 0);
	return (uint32_t)k;
}

static void text_writable(uint64_t site, bool w)
{
	uint64_t page = site & ~(uint64_t)(getpagesize() - 1);

	assert_int_equal(mprotect((void *)(uintptr_t)page, 2 * (size_t)getpagesize(),
				  PROT_READ | PROT_EXEC | (w ? PROT_WRITE : 0)),
			 0);
}

/* The spec for window W with trampoline slot SLOTNO. */
static struct tramp_spec spec_of(const struct patch_window *w, unsigned slotno)
{
	struct tramp_spec sp = { 0 };

	sp.site = w->start + bias;
	sp.bytes = (const uint8_t *)(uintptr_t)sp.site;
	sp.len = w->len;
	sp.tramp = (uint64_t)(uintptr_t)(region + slotno * SLOT);
	sp.counters = (uint64_t)(uintptr_t)counters;
	sp.entry_counter = sp.taken_counter = sp.not_taken_counter = PATCH_NO_COUNTER;
	sp.live_entry = w->live_entry;
	sp.live_taken = w->live_taken;
	sp.live_not_taken = w->live_not_taken;
	return sp;
}

/* For a short window W: a springboard overlapping none of USED[0, *NUSED) (ELF vaddrs), put
 * into SP and added to USED. Returns false when there is none. */
static bool give_springboard(const struct patch_window *w, struct tramp_spec *sp, uint64_t *used,
			     size_t *nused)
{
	uint64_t sb;

	if (!w->short_jump)
		return true;
	if (patch_analysis__springboard(&pa, w, used, *nused, NULL, 0, &sb))
		return false;
	assert_true(patch_analysis__springboard_ok(&pa, w, sb));
	sp->springboard = sb + bias;
	sp->sb_bytes = (const uint8_t *)(uintptr_t)sp->springboard;
	if (used)
		used[(*nused)++] = sb;
	return true;
}

/* Installs the emitted B as the patcher would (the springboard first). */
static void install_blob(struct patch_blob *b)
{
	assert_true(b->tramp_len <= SLOT);
	assert_memory_equal(b->orig, (const void *)(uintptr_t)b->site, b->len);
	memcpy((void *)(uintptr_t)b->tramp, b->tramp_code, b->tramp_len);
	if (b->sb) {
		assert_memory_equal(b->sb_orig, (const void *)(uintptr_t)b->sb, 5);
		text_writable(b->sb, true);
		memcpy((void *)(uintptr_t)b->sb, b->sb_code, 5);
		text_writable(b->sb, false);
	}
	text_writable(b->site, true);
	memcpy((void *)(uintptr_t)b->site, b->code, b->len);
	text_writable(b->site, false);
}

/* Emits SP and installs it. */
static void install(const struct tramp_spec *sp, struct patch_blob *b)
{
	assert_int_equal(trampoline__emit(sp, b), 0);
	install_blob(b);
}

static void uninstall(struct patch_blob *b)
{
	text_writable(b->site, true);
	memcpy((void *)(uintptr_t)b->site, b->orig, b->len);
	text_writable(b->site, false);
	if (b->sb) {
		text_writable(b->sb, true);
		memcpy((void *)(uintptr_t)b->sb, b->sb_orig, 5);
		text_writable(b->sb, false);
	}
	patch_blob__release(b);
}

/* Flips every lock prefix of B in place (the patcher's atomic switch). */
static void set_atomic(const struct patch_blob *b, bool atomic)
{
	for (uint32_t k = 0; k < b->nlock; k++) {
		uint8_t *p = (uint8_t *)(uintptr_t)b->tramp + b->lock_offsets[k];

		assert_true(*p == 0x3e || *p == 0xf0);
		*p = atomic ? 0xf0 : 0x3e;
	}
}

static void test_loop_count(void **state)
{
	size_t fi = func_index("pf_loop");
	struct patch_window w;
	struct tramp_spec sp;
	struct patch_blob b;
	uint32_t want = pf_loop(1000);

	assert_int_equal(want, 1000u * 999u / 2u);
	assert_int_equal(patch_analysis__count_window(&pa, fi, insn_of(fi, pf_loop_body), NULL, 0,
						      0, &w),
			 0);
	assert_int_equal(w.cls, PATCH_PLAIN);
	sp = spec_of(&w, 0);
	sp.entry_counter = 0;
	counters[0] = 0;
	install(&sp, &b);
	assert_int_equal(pf_loop(1000), want);
	assert_int_equal(counters[0], 1000);
	set_atomic(&b, true);
	assert_int_equal(pf_loop(7), 21);
	assert_int_equal(counters[0], 1007);
	uninstall(&b);
	assert_int_equal(pf_loop(1000), want);
	assert_int_equal(counters[0], 1007);
}

static void test_loop_branch(void **state)
{
	size_t fi = func_index("pf_loop");
	uint32_t jb = insn_of(fi, pf_loop_body) + 3;
	struct patch_window w;
	struct tramp_spec sp;
	struct patch_blob b;

	assert_int_equal(patch_analysis__branch_window(&pa, fi, jb, NULL, 0, &w), 0);
	sp = spec_of(&w, 1);
	sp.taken_counter = 1;
	sp.not_taken_counter = 2;
	sp.atomic = true;
	counters[1] = counters[2] = 0;
	install(&sp, &b);
	assert_int_equal(b.code[0], 0xe9);
	assert_int_equal(b.code[5], 0xcc); /* int3 fill: a 7-byte window */
	assert_int_equal(pf_loop(1000), 1000u * 999u / 2u);
	assert_int_equal(counters[1], 999);
	assert_int_equal(counters[2], 1);
	assert_int_equal(pf_loop(1), 0);
	assert_int_equal(counters[1], 999);
	assert_int_equal(counters[2], 2);
	uninstall(&b);
}

/* Jump optimisation: the count window runs to the jb, the trampoline ends in the jcc itself. */
static void test_loop_to_block_end(void **state)
{
	size_t fi = func_index("pf_loop");
	struct patch_window w;
	struct tramp_spec sp;
	struct patch_blob b;
	unsigned njmp = 0;
	csh cs;
	cs_insn *in;
	size_t n;

	assert_int_equal(patch_analysis__count_window(&pa, fi, insn_of(fi, pf_loop_body), NULL, 0,
						      PATCH_WINDOW_TO_BLOCK_END, &w),
			 0);
	assert_true(w.ends_jcc);
	sp = spec_of(&w, 2);
	sp.entry_counter = 3;
	counters[3] = 0;
	install(&sp, &b);
	assert_int_equal(pf_loop(500), 500u * 499u / 2u);
	assert_int_equal(counters[3], 500);
	/* Per loop iteration the trampoline runs inc, add, add, cmp, jb: the jb (its taken
	 * outcome has no counter of its own) goes straight to the trampoline's start, which a
	 * jump to the site would reach through one more jump; no jump back on that path. */
	assert_int_equal(cs_open(CS_ARCH_X86, CS_MODE_64, &cs), CS_ERR_OK);
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	n = cs_disasm(cs, b.tramp_code, b.tramp_len, b.tramp, 0, &in);
	assert_int_equal(n, 6); /* inc add add cmp jb jmp(fall-through) */
	assert_string_equal(in[4].mnemonic, "jb");
	assert_int_equal(in[4].detail->x86.operands[0].imm, (int64_t)b.tramp);
	for (size_t k = 0; k < n; k++)
		njmp += !strcmp(in[k].mnemonic, "jmp");
	assert_int_equal(njmp, 1);
	cs_free(in, n);
	cs_close(&cs);
	uninstall(&b);
}

/* The mnemonics of B's trampoline, decoded: how many jmps, whether it has ANY. */
static unsigned count_mnemonic(const struct patch_blob *b, const char *m)
{
	unsigned k = 0;
	csh cs;
	cs_insn *in;
	size_t n;

	assert_int_equal(cs_open(CS_ARCH_X86, CS_MODE_64, &cs), CS_ERR_OK);
	n = cs_disasm(cs, b->tramp_code, b->tramp_len, b->tramp, 0, &in);
	assert_true(n > 0);
	for (size_t i = 0; i < n; i++)
		k += !strcmp(in[i].mnemonic, m);
	cs_free(in, n);
	cs_close(&cs);
	return k;
}

/* Continuations: pf_loop's entry window (xor, xor, jmp) goes on into a copy of the loop body
 * (add, add, cmp, jb, ret): the first iteration runs in the trampoline, the jb taken goes to
 * the original body, a call with one iteration returns from the trampoline itself. No jmp is
 * left in the trampoline; every copied instruction maps back to its original address. A
 * continuation that is not what it says (a ret that is an add) is dropped, not fatal. */
static void test_continuation(void **state)
{
	size_t fi = func_index("pf_loop");
	uint64_t body = (uint64_t)(uintptr_t)pf_loop_body;
	static const uint8_t sizes[] = { 2, 3, 2, 2, 1 };
	static const uint8_t kinds[] = { RELOC_COPY, RELOC_COPY, RELOC_COPY, RELOC_JCC, RELOC_RET };
	struct tramp_cont c = { .at = body, .bytes = (const uint8_t *)pf_loop_body, .len = 10,
				.ninsns = 5, .sizes = sizes, .kinds = kinds };
	static const uint8_t bad_kinds[] = { RELOC_RET }; /* over an add */
	struct tramp_cont bad = { .at = body, .bytes = (const uint8_t *)pf_loop_body, .len = 2,
				  .ninsns = 1, .sizes = sizes, .kinds = bad_kinds };
	struct patch_window w;
	struct tramp_spec sp;
	struct patch_blob b;
	bool mapped[5] = { false };

	assert_int_equal(patch_analysis__count_window(&pa, fi, insn_of(fi, (const void *)pf_loop),
						      NULL, 0, 0, &w),
			 0);
	assert_int_equal(w.len, 6); /* xor, xor, jmp rel8 */
	sp = spec_of(&w, 30);
	sp.entry_counter = 20;
	sp.cont = &c;
	sp.ncont = 1;
	counters[20] = 0;
	install(&sp, &b);
	assert_int_equal(count_mnemonic(&b, "jmp"), 0);
	assert_int_equal(count_mnemonic(&b, "ret"), 1);
	assert_int_equal(count_mnemonic(&b, "jb"), 1);
	for (uint32_t k = 0; k < b.npcs; k++)
		for (unsigned i = 0, off = 0; i < 5; off += sizes[i++])
			if (b.pcs[k].orig == body + off && b.pcs[k].clean == 1 &&
			    b.pcs[k].pending == PATCH_NO_COUNTER)
				mapped[i] = true;
	for (unsigned i = 0; i < 5; i++)
		assert_true(mapped[i]);
	assert_int_equal(pf_loop(1), 0);
	assert_int_equal(pf_loop(1000), 1000u * 999u / 2u);
	assert_int_equal(pf_loop(2), 1);
	assert_int_equal(counters[20], 3);
	uninstall(&b);
	/* Not what it says: made without it. */
	sp.cont = &bad;
	install(&sp, &b);
	assert_int_equal(count_mnemonic(&b, "jmp"), 1);
	assert_int_equal(pf_loop(10), 45);
	assert_int_equal(counters[20], 4);
	uninstall(&b);
}

/* Jump shortcuts: pf_loop's entry window jumps to the loop body, itself a window; once the
 * body's trampoline is known, the entry trampoline's jump goes straight there (and only a jump
 * to a window's start is sent). */
static void test_shortcut(void **state)
{
	size_t fi = func_index("pf_loop");
	uint64_t body = (uint64_t)(uintptr_t)pf_loop_body, other = body + 1;
	struct patch_window wa, wb;
	struct tramp_spec sa, sb;
	struct patch_blob a, b;
	int32_t d;

	assert_int_equal(patch_analysis__count_window(&pa, fi, insn_of(fi, (const void *)pf_loop),
						      NULL, 0, 0, &wa),
			 0);
	assert_int_equal(patch_analysis__count_window(&pa, fi, insn_of(fi, pf_loop_body), NULL, 0,
						      PATCH_WINDOW_TO_BLOCK_END, &wb),
			 0);
	sa = spec_of(&wa, 32);
	sa.entry_counter = 22;
	sb = spec_of(&wb, 33);
	sb.entry_counter = 23;
	counters[22] = counters[23] = 0;
	assert_int_equal(trampoline__emit(&sa, &a), 0);
	assert_int_equal(trampoline__emit(&sb, &b), 0);
	assert_int_equal(a.njumps, 1);
	assert_int_equal(a.jumps[0].to, body);
	assert_int_equal(patch_blob__shortcut(&a, &other, &b.tramp, 1), 0);
	assert_int_equal(patch_blob__shortcut(&a, &body, &b.tramp, 1), 1);
	memcpy(&d, a.tramp_code + a.jumps[0].off, 4);
	assert_int_equal(a.tramp + a.jumps[0].off + 4 + (uint64_t)(int64_t)d, b.tramp);
	install_blob(&b);
	install_blob(&a);
	assert_int_equal(pf_loop(100), 4950);
	assert_int_equal(counters[22], 1);
	assert_int_equal(counters[23], 100);
	uninstall(&a);
	uninstall(&b);
}

/* patch_sites' continuations: the same entry window as a count site of the plan, with the
 * loop body free, gets its copy (no jmp); a stop at the body (a site there), a range written
 * over there (a window) or bytes that differ from the file's each leave the jmp in. */
static bool bytes_differ(void *ctx, uint64_t vaddr, uint8_t len)
{
	return false;
}

static void test_site_continuation(void **state)
{
	size_t fi = func_index("pf_loop");
	struct patch_sites *ps;
	struct probe_site cs = { 0 };
	uint64_t start, sb, body = prog.funcs[fi].insns[insn_of(fi, pf_loop_body)].addr;
	uint64_t stop = body, lo = body + 2, hi = body + 5;
	uint8_t len;
	struct patch_conts none = { 0 }, at_stop = { .stop = &stop, .nstop = 1 },
			   written = { .lo = &lo, .hi = &hi, .nranges = 1 },
			   differ = { .bytes_ok = bytes_differ };
	const struct patch_conts *cases[] = { &none, &at_stop, &written, &differ };
	struct patch_blob b;

	assert_int_equal(patch_sites__open(&ps, &prog), 0);
	cs.addr = prog.funcs[fi].entry;
	cs.func = (uint32_t)fi;
	cs.kind = SITE_COUNT;
	cs.counter = 21;
	cs.counter2 = PLACEMENT_NO_COUNTER;
	assert_int_equal(patch_sites__window(ps, &cs, NULL, 0, NULL, 0, &start, &len, &sb), 0);
	for (unsigned k = 0; k < 4; k++) {
		counters[21] = 0;
		assert_int_equal(patch_sites__emit(ps, &cs, start, len, sb, bias,
						   (uint64_t)(uintptr_t)(region + 31 * SLOT),
						   (uint64_t)(uintptr_t)counters, false, cases[k], &b),
				 0);
		install_blob(&b);
		/* written: the copy stops before the range, at the first add (no transfer yet) */
		assert_int_equal(count_mnemonic(&b, "jmp"), k ? 1 : 0);
		assert_int_equal(pf_loop(100), 4950);
		assert_int_equal(counters[21], 1);
		uninstall(&b);
	}
	patch_sites__close(ps);
}

static void test_rip(void **state)
{
	size_t fi = func_index("pf_rip");
	struct patch_window w;
	struct tramp_spec sp;
	struct patch_blob b;

	assert_int_equal(pf_rip(6), 42);
	assert_int_equal(patch_analysis__count_window(&pa, fi, insn_of(fi, (const void *)pf_rip),
						      NULL, 0, 0, &w),
			 0);
	assert_int_equal(w.len, 7);
	sp = spec_of(&w, 3);
	sp.entry_counter = 4;
	counters[4] = 0;
	install(&sp, &b);
	assert_int_equal(pf_rip(6), 42);
	pf_data = 3;
	assert_int_equal(pf_rip(5), 15); /* the load still reads pf_data */
	pf_data = 7;
	assert_int_equal(counters[4], 2);
	uninstall(&b);
}

static void test_calls(void **state)
{
	size_t fi = func_index("pf_call"), fj = func_index("pf_callind");
	struct patch_window w;
	struct tramp_spec sp;
	struct patch_blob b, c;

	assert_int_equal(pf_call(1), (uint64_t)(uintptr_t)pf_call_ret);
	assert_int_equal(pf_callind(1, pf_retaddr), (uint64_t)(uintptr_t)pf_callind_ret);
	assert_int_equal(patch_analysis__count_window(&pa, fi, insn_of(fi, (const void *)pf_call),
						      NULL, 0, 0, &w),
			 0);
	assert_int_equal(w.len, 8); /* push, mov, call rel32 */
	sp = spec_of(&w, 4);
	sp.entry_counter = 5;
	counters[5] = 0;
	install(&sp, &b);
	assert_int_equal(patch_analysis__count_window(&pa, fj,
						      insn_of(fj, (const void *)pf_callind), NULL,
						      0, 0, &w),
			 0);
	assert_int_equal(w.len, 5); /* push, mov, call *%rsi */
	sp = spec_of(&w, 5);
	sp.entry_counter = 6;
	counters[6] = 0;
	install(&sp, &c);
	/* The callee sees the original return address, not one in a trampoline. */
	for (int k = 0; k < 3; k++) {
		assert_int_equal(pf_call(1), (uint64_t)(uintptr_t)pf_call_ret);
		assert_int_equal(pf_callind(1, pf_retaddr), (uint64_t)(uintptr_t)pf_callind_ret);
	}
	assert_int_equal(counters[5], 3);
	assert_int_equal(counters[6], 3);
	uninstall(&b);
	uninstall(&c);
}

static const int pairs[][2] = { { 1, 2 }, { 2, 2 }, { 3, 2 }, { -5, 4 }, { 7, -7 } };
#define NPAIRS (sizeof(pairs) / sizeof(pairs[0]))

/* pf_flags with its flags-live window patched by SAVE; FORCE_PLAIN drops the save (the
 * control: then a result must differ, or the test could not see a clobber). */
static unsigned flags_run(uint8_t save, bool force_plain, uint64_t *count)
{
	size_t fi = func_index("pf_flags");
	struct patch_window w;
	struct tramp_spec sp;
	struct patch_blob b;
	unsigned wrong = 0;

	assert_int_equal(patch_analysis__count_window(&pa, fi, insn_of(fi, pf_flags_b), NULL, 0,
						      0, &w),
			 0);
	assert_int_equal(w.cls, PATCH_FLAGSAVE);
	sp = spec_of(&w, 6);
	sp.entry_counter = 7;
	sp.flagsave = save;
	if (force_plain)
		sp.live_entry = 0;
	counters[7] = 0;
	install(&sp, &b);
	for (size_t k = 0; k < NPAIRS; k++)
		wrong += pf_flags(pairs[k][0], pairs[k][1]) != (pairs[k][0] < pairs[k][1] ? 1 : 2);
	*count = counters[7];
	uninstall(&b);
	return wrong;
}

static void test_flags_live(void **state)
{
	uint64_t n;

	assert_int_equal(flags_run(TRAMP_SAVE_LAHF, false, &n), 0);
	assert_int_equal(n, NPAIRS);
	assert_int_equal(flags_run(TRAMP_SAVE_PUSHF, false, &n), 0);
	assert_int_equal(n, NPAIRS);
	assert_true(flags_run(TRAMP_SAVE_LAHF, true, &n) > 0); /* the control */
}

/* A leaf's red zone survives a flag-saving increment (it saves rax below the red zone). */
static void test_red_zone(void **state)
{
	size_t fi = func_index("pf_redzone");
	struct patch_window w;
	struct tramp_spec sp;
	struct patch_blob b;

	for (int save = 0; save < 2; save++) {
		assert_int_equal(patch_analysis__count_window(&pa, fi, insn_of(fi, pf_redzone_b),
							      NULL, 0, 0, &w),
				 0);
		assert_int_equal(w.cls, PATCH_FLAGSAVE);
		sp = spec_of(&w, 12);
		sp.entry_counter = 15;
		sp.flagsave = (uint8_t)save;
		counters[15] = 0;
		install(&sp, &b);
		assert_int_equal(pf_redzone(3, 5), 1 + 3);
		assert_int_equal(pf_redzone(9, 5), 2 + 9);
		assert_int_equal(pf_redzone(-4, -4), 2 - 4);
		assert_int_equal(counters[15], 3);
		uninstall(&b);
	}
}

struct loop_arg {
	uint32_t n, reps;
};

static void *loop_thread(void *p)
{
	const struct loop_arg *a = p;

	for (uint32_t r = 0; r < a->reps; r++)
		if (pf_loop(a->n) != a->n * (a->n - 1) / 2)
			return (void *)1;
	return NULL;
}

/* Locked increments stay exact with two threads bumping one counter. */
static void test_threads_atomic(void **state)
{
	size_t fi = func_index("pf_loop");
	struct patch_window w;
	struct tramp_spec sp;
	struct patch_blob b;
	struct loop_arg a = { 1000, 2000 };
	pthread_t t[2];
	void *rc[2];

	assert_int_equal(patch_analysis__count_window(&pa, fi, insn_of(fi, pf_loop_body), NULL, 0,
						      0, &w),
			 0);
	sp = spec_of(&w, 13);
	sp.entry_counter = 16;
	sp.atomic = true;
	counters[16] = 0;
	install(&sp, &b);
	for (int k = 0; k < 2; k++)
		assert_int_equal(pthread_create(&t[k], NULL, loop_thread, &a), 0);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(pthread_join(t[k], &rc[k]), 0);
		assert_null(rc[k]);
	}
	assert_int_equal(counters[16], 2ull * a.n * a.reps);
	uninstall(&b);
}

static void test_branch_flags(void **state)
{
	size_t fi = func_index("pf_flags2");
	uint32_t jl = insn_of(fi, (const void *)pf_flags2) + 2;
	struct patch_window w;
	struct tramp_spec sp;
	struct patch_blob b;
	uint64_t lt = 0;

	assert_int_equal(patch_analysis__branch_window(&pa, fi, jl, NULL, 0, &w), 0);
	assert_int_equal(w.live_not_taken, FLAG_ZF);
	sp = spec_of(&w, 7);
	sp.taken_counter = 8;
	sp.not_taken_counter = 9;
	counters[8] = counters[9] = 0;
	install(&sp, &b);
	for (size_t k = 0; k < NPAIRS; k++) {
		int a = pairs[k][0], c = pairs[k][1];

		assert_int_equal(pf_flags2(a, c), a < c ? 1 : a == c ? 2 : 3);
		lt += a < c;
	}
	assert_int_equal(counters[8], lt);
	assert_int_equal(counters[9], NPAIRS - lt);
	uninstall(&b);
}

/* The pc map and the lock prefixes of a flag-saving branch trampoline. */
static void test_pc_map(void **state)
{
	size_t fi = func_index("pf_flags2");
	uint32_t jl = insn_of(fi, (const void *)pf_flags2) + 2;
	const struct cfg_func *f = &prog.funcs[fi];
	struct patch_window w;
	struct tramp_spec sp;
	struct patch_blob b;
	bool saw_unclean = false, saw_pending_taken = false, saw_pending_not = false;
	uint64_t taken_target = 0, fall = 0;

	assert_int_equal(patch_analysis__branch_window(&pa, fi, jl, NULL, 0, &w), 0);
	sp = spec_of(&w, 8);
	sp.taken_counter = 10;
	sp.not_taken_counter = 11;
	assert_int_equal(trampoline__emit(&sp, &b), 0);
	fall = w.start + w.len + bias;
	for (uint32_t e = 0; e < f->nedges; e++)
		if (f->edges[e].kind == EDGE_TAKEN &&
		    f->edges[e].from == (uint32_t)cfg_func__block_containing(f, f->insns[jl].addr))
			taken_target = f->blocks[f->edges[e].to].start + bias;
	assert_true(taken_target != 0);
	assert_int_equal(b.pcs[0].off, 0);
	assert_true(b.pcs[0].clean);
	assert_int_equal(b.pcs[0].orig, sp.site);
	assert_int_equal(b.pcs[0].pending, PATCH_NO_COUNTER);
	for (uint32_t k = 0; k < b.npcs; k++) {
		assert_true(b.pcs[k].off < b.tramp_len);
		if (k)
			assert_true(b.pcs[k].off > b.pcs[k - 1].off);
		saw_unclean |= !b.pcs[k].clean;
		if (b.pcs[k].clean && b.pcs[k].pending == 10) {
			saw_pending_taken = true;
			assert_int_equal(b.pcs[k].orig, taken_target);
		}
		if (b.pcs[k].clean && b.pcs[k].pending == 11) {
			saw_pending_not = true;
			assert_int_equal(b.pcs[k].orig, fall);
		}
	}
	assert_true(saw_unclean);     /* inside the flag-saving increment */
	assert_true(saw_pending_taken && saw_pending_not);
	assert_int_equal(b.nlock, 2);
	for (uint32_t k = 0; k < b.nlock; k++)
		assert_int_equal(b.tramp_code[b.lock_offsets[k]], 0x3e);
	patch_blob__release(&b);
}

static void test_refusals(void **state)
{
	static const uint8_t sys[] = { 0x89, 0xf8, 0x0f, 0x05, 0xc3 }; /* mov; syscall; ret */
	static const uint8_t nops[] = { 0x90, 0x90, 0x90, 0x90, 0x90, 0x90 };
	static const uint8_t jmp_mid[] = { 0xeb, 0x00, 0x90, 0x90, 0x90 }; /* jmp not last */
	static const uint8_t partial[] = { 0x90, 0x90, 0x90, 0x48, 0x8b };  /* a cut mov */
	struct tramp_spec sp = { 0 };
	struct patch_blob b;

	sp.site = 0x401000;
	sp.tramp = 0x402000;
	sp.counters = 0x403000;
	sp.entry_counter = 0;
	sp.taken_counter = sp.not_taken_counter = PATCH_NO_COUNTER;
	sp.bytes = sys;
	sp.len = sizeof(sys);
	assert_int_equal(trampoline__emit(&sp, &b), -EINVAL);
	sp.bytes = jmp_mid;
	sp.len = sizeof(jmp_mid);
	assert_int_equal(trampoline__emit(&sp, &b), -EINVAL);
	sp.bytes = partial;
	sp.len = sizeof(partial);
	assert_int_equal(trampoline__emit(&sp, &b), -EINVAL);
	sp.bytes = nops;
	sp.len = 4;
	assert_int_equal(trampoline__emit(&sp, &b), -EINVAL);
	sp.len = sizeof(nops);
	sp.tramp = 0x401000 + (3ull << 30); /* out of rel32 reach */
	assert_int_equal(trampoline__emit(&sp, &b), -ERANGE);
	sp.tramp = 0x402000;
	assert_int_equal(trampoline__emit(&sp, &b), 0);
	assert_int_equal(b.nlock, 1);
	patch_blob__release(&b);
}

/* Whether B's trampoline decodes whole and its pc map is well formed. */
static bool blob_ok(csh cs, const struct patch_blob *b)
{
	cs_insn *in;
	size_t n = cs_disasm(cs, b->tramp_code, b->tramp_len, b->tramp, 0, &in), bytes = 0;

	for (size_t k = 0; k < n; k++)
		bytes += in[k].size;
	if (n)
		cs_free(in, n);
	if (bytes != b->tramp_len || !b->npcs || b->pcs[0].off != 0 || !b->pcs[0].clean)
		return false;
	for (uint32_t k = 1; k < b->npcs; k++)
		if (b->pcs[k].off <= b->pcs[k - 1].off || b->pcs[k].off >= b->tramp_len)
			return false;
	for (uint32_t k = 0; k < b->nlock; k++)
		if (b->tramp_code[b->lock_offsets[k]] != 0x3e)
			return false;
	if (b->sb)
		return b->code[0] == 0xeb && b->len >= 2 && b->sb_code[0] == 0xe9 &&
		       b->site + 2 + (int64_t)(int8_t)b->code[1] == b->sb;
	return b->code[0] == 0xe9 && b->len >= 5;
}

/* Every window the analysis offers in this binary (compiler-made code: libcfg, libuser,
 * the tests) is one the generator can make, and its trampoline decodes whole. */
static void test_every_window(void **state)
{
	unsigned ncount = 0, nbranch = 0, nflagsave = 0, nshort = 0;
	csh cs;

	assert_int_equal(cs_open(CS_ARCH_X86, CS_MODE_64, &cs), CS_ERR_OK);
	for (size_t fi = 0; fi < prog.nfuncs; fi++) {
		const struct cfg_func *f = &prog.funcs[fi];

		for (uint32_t k = 0; k < f->ninsns; k++) {
			for (int br = 0; br < 2; br++) {
				struct patch_window w;
				struct tramp_spec sp;
				struct patch_blob b;
				int err;

				if (!(br ? pa.funcs[fi].branch_class[k] : pa.funcs[fi].count_class[k]))
					continue;
				err = br ? patch_analysis__branch_window(&pa, fi, k, NULL, 0, &w)
					 : patch_analysis__count_window(&pa, fi, k, NULL, 0,
									PATCH_WINDOW_TO_BLOCK_END,
									&w);
				assert_int_equal(err, 0);
				sp = spec_of(&w, 0);
				sp.tramp = sp.site - (1u << 20);
				sp.counters = sp.tramp - (1u << 16);
				{
					size_t none = 0;

					assert_true(give_springboard(&w, &sp, NULL, &none));
				}
				nshort += w.short_jump;
				if (br) {
					sp.taken_counter = 0;
					sp.not_taken_counter = 1;
				} else {
					sp.entry_counter = 0;
				}
				err = trampoline__emit(&sp, &b);
				if (err || !blob_ok(cs, &b))
					fail_msg("%s: window at %#llx (%u bytes, %s): %d", f->name,
						 (unsigned long long)w.start, w.len,
						 br ? "branch" : "count", err);
				ncount += !br;
				nbranch += br;
				nflagsave += w.cls == PATCH_FLAGSAVE;
				patch_blob__release(&b);
			}
		}
	}
	cs_close(&cs);
	print_message("%u count and %u branch windows made (%u saving flags, %u short)\n", ncount,
		      nbranch, nflagsave, nshort);
	assert_true(ncount > 1000 && nbranch > 100);
}

#define WORK_N 300

static void work_input(int *v)
{
	uint32_t x = 12345;

	for (int i = 0; i < WORK_N; i++) {
		x = x * 1103515245u + 12345u;
		v[i] = (int)(x >> 8);
	}
}

/* The oracle: pf_c_work(V) single-stepped in a forked child. Per instruction k of F, how
 * often it ran (RAN[k]) and, for a jcc, how often the next pc was its taken target
 * (TAKEN[k]). Independent of every patch. */
static void oracle(const struct cfg_func *f, const int *v, uint64_t *ran, uint64_t *taken)
{
	uint64_t lo = f->blocks[0].start + bias, hi = f->blocks[f->nblocks - 1].end + bias;
	long prev = -1;
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		pf_c_work(v, WORK_N);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSTOPPED(status));
	for (;;) {
		struct user_regs_struct r;

		assert_int_equal(ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL), 0);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (WIFEXITED(status))
			break;
		assert_int_equal(ptrace(PTRACE_GETREGS, pid, NULL, &r), 0);
		if (prev >= 0 && f->insns[prev].flow == INSN_JCC &&
		    r.rip != f->insns[prev].addr + f->insns[prev].size + bias)
			taken[prev]++;
		prev = -1;
		if (r.rip >= lo && r.rip < hi) {
			long k = patch_func__insn_at(f, r.rip - bias);

			if (k >= 0) {
				ran[k]++;
				prev = k;
			}
		}
	}
}

/* Compiler-made code patched all over: a count window at every block start that has one,
 * then a branch window at every jcc that has one (windows never overlapping), and each
 * counter equal to the single-step oracle's count, the result equal to the unpatched one. */
static void test_whole_function(void **state)
{
	size_t fi = func_index("pf_c_work");
	const struct cfg_func *f = &prog.funcs[fi];
	int v[WORK_N], want;
	uint64_t *ran = calloc(f->ninsns, sizeof(*ran)), *tk = calloc(f->ninsns, sizeof(*tk));
	struct patch_blob *b = calloc(f->ninsns, sizeof(*b));
	uint32_t *at = calloc(f->ninsns, sizeof(*at));

	assert_true(ran && tk && b && at);
	work_input(v);
	want = pf_c_work(v, WORK_N);
	oracle(f, v, ran, tk);
	assert_int_equal(ran[0 + patch_func__insn_at(f, f->entry)], 1);
	for (int branch = 0; branch < 2; branch++) {
		uint64_t end = 0, used[64];
		uint32_t nb = 0, c = 100;
		size_t nused = 0;

		for (uint32_t bl = 0; bl < f->nblocks; bl++) {
			const struct cfg_block *blk = &f->blocks[bl];
			uint32_t k = branch ? blk->first_insn + blk->ninsns - 1 : blk->first_insn;
			struct patch_window w;
			struct tramp_spec sp;
			int err = branch ? patch_analysis__branch_window(&pa, fi, k, NULL, 0, &w)
					 : patch_analysis__count_window(&pa, fi, k, NULL, 0, 0, &w);

			if (err || w.start < end)
				continue;
			sp = spec_of(&w, 16 + nb);
			if (nused == 64 || !give_springboard(&w, &sp, used, &nused))
				continue;
			end = w.start + w.len;
			if (branch) {
				sp.taken_counter = c;
				sp.not_taken_counter = c + 1;
			} else {
				sp.entry_counter = c;
			}
			counters[c] = counters[c + 1] = 0;
			at[nb] = k;
			install(&sp, &b[nb++]);
			c += 2;
		}
		assert_true(nb >= (branch ? 3u : 8u));
		assert_int_equal(pf_c_work(v, WORK_N), want);
		for (uint32_t j = 0; j < nb; j++) {
			uint32_t k = at[j], cc = 100 + 2 * j;

			if (!branch) {
				assert_int_equal(counters[cc], ran[k]);
			} else {
				assert_int_equal(counters[cc], tk[k]);
				assert_int_equal(counters[cc + 1], ran[k] - tk[k]);
			}
		}
		for (uint32_t j = 0; j < nb; j++)
			uninstall(&b[j]);
		print_message("%s windows: %u patched (%zu through springboards)\n",
			      branch ? "branch" : "count", nb, nused);
	}
	assert_int_equal(pf_c_work(v, WORK_N), want);
	free(ran);
	free(tk);
	free(b);
	free(at);
}

/* Through the plan-facing bridge: a count site and a branch site of a plan, as
 * estimators/placement.h describes them, patched together (their windows do not overlap: the
 * count window is add, add; the branch window add $1, cmp, jb would, so the branch site goes
 * on pf_flags2 instead). */
static void test_patch_sites(void **state)
{
	struct patch_sites *ps;
	size_t fi = func_index("pf_loop"), fj = func_index("pf_flags2");
	struct probe_site cs = { 0 }, bs = { 0 };
	uint64_t start[2], held, sb[2];
	uint8_t len[2];
	struct patch_blob b[2], x;

	assert_int_equal(patch_sites__open(&ps, &prog), 0);
	cs.addr = prog.funcs[fi].insns[insn_of(fi, pf_loop_body)].addr;
	cs.func = (uint32_t)fi;
	cs.kind = SITE_COUNT;
	cs.counter = 12;
	cs.counter2 = PLACEMENT_NO_COUNTER;
	bs.addr = prog.funcs[fj].insns[insn_of(fj, (const void *)pf_flags2) + 2].addr;
	bs.func = (uint32_t)fj;
	bs.kind = SITE_BRANCH;
	bs.counter = 13;
	bs.counter2 = 14;
	assert_int_equal(patch_sites__window(ps, &cs, NULL, 0, NULL, 0, &start[0], &len[0], &sb[0]),
			 0);
	assert_int_equal(patch_sites__window(ps, &bs, NULL, 0, NULL, 0, &start[1], &len[1], &sb[1]),
			 0);
	assert_int_equal(sb[0], 0);
	assert_int_equal(sb[1], 0);
	assert_int_equal(len[0], 5);
	assert_int_equal(len[1], 6);
	/* A held thread's pc inside refuses; at the window's start it does not. */
	held = start[1] + 2;
	assert_int_equal(
		patch_sites__window(ps, &bs, &held, 1, NULL, 0, &start[1], &len[1], &sb[1]),
		-ENOENT);
	held = start[1];
	assert_int_equal(
		patch_sites__window(ps, &bs, &held, 1, NULL, 0, &start[1], &len[1], &sb[1]), 0);
	counters[12] = counters[13] = counters[14] = 0;
	for (int k = 0; k < 2; k++) {
		assert_int_equal(patch_sites__emit(ps, k ? &bs : &cs, start[k], len[k], 0, bias,
						   (uint64_t)(uintptr_t)(region + (9 + k) * SLOT),
						   (uint64_t)(uintptr_t)counters, k == 1, NULL, &b[k]),
				 0);
		memcpy((void *)(uintptr_t)b[k].tramp, b[k].tramp_code, b[k].tramp_len);
		text_writable(b[k].site, true);
		memcpy((void *)(uintptr_t)b[k].site, b[k].code, b[k].len);
		text_writable(b[k].site, false);
	}
	assert_int_equal(b[1].tramp_code[b[1].lock_offsets[0]], 0xf0); /* atomic from the start */
	assert_int_equal(pf_loop(100), 4950);
	assert_int_equal(pf_flags2(1, 2), 1);
	assert_int_equal(pf_flags2(2, 2), 2);
	assert_int_equal(pf_flags2(3, 2), 3);
	assert_int_equal(counters[12], 100);
	assert_int_equal(counters[13], 1);
	assert_int_equal(counters[14], 2);
	/* A window that is not the site's is refused. */
	assert_int_equal(patch_sites__emit(ps, &cs, start[0], (uint8_t)(len[0] + 1), 0, bias,
					   b[0].tramp, (uint64_t)(uintptr_t)counters, false, NULL, &x),
			 -EINVAL);
	uninstall(&b[1]);
	uninstall(&b[0]);
	patch_sites__close(ps);
}

/* Springboards through the plan-facing bridge, patched and run: a count site on pf_short's
 * 2-byte block (inc %eax), its springboard in the padding after the function, and a branch
 * site on pf_sb_intra's 2-byte jne, its springboard in the 5 bytes of padding after the jmp
 * inside the function; the two never share a slot. Counters equal the runs known from the
 * inputs, results equal the unpatched ones, and every byte is back afterwards. */
static void test_springboard_sites(void **state)
{
	struct patch_sites *ps;
	size_t fi = func_index("pf_short"), fj = func_index("pf_sb_intra");
	struct probe_site cs = { 0 }, bs = { 0 };
	uint64_t start[2], sb[2], other;
	uint8_t len[2], before[2][16], sb_before[2][5];
	struct patch_blob b[2];
	static const int xs[] = { 0, 1, 2, 0x60, 0x160, 5, -1, 0x61, 0 };
	int want_short[9], want_intra[9];
	uint64_t nz = 0, eq = 0;

	for (int i = 0; i < 9; i++) {
		want_short[i] = pf_short(xs[i]);
		want_intra[i] = pf_sb_intra(xs[i]);
		nz += xs[i] != 0;
		eq += (xs[i] & 0xff) == 0x60;
	}
	assert_int_equal(patch_sites__open(&ps, &prog), 0);
	cs.addr = (uint64_t)(uintptr_t)pf_short_inc - bias;
	cs.func = (uint32_t)fi;
	cs.kind = SITE_COUNT;
	cs.counter = 20;
	cs.counter2 = PLACEMENT_NO_COUNTER;
	bs.addr = (uint64_t)(uintptr_t)pf_sb_intra_jne - bias;
	bs.func = (uint32_t)fj;
	bs.kind = SITE_BRANCH;
	bs.counter = 21;
	bs.counter2 = 22;
	assert_int_equal(patch_sites__window(ps, &cs, NULL, 0, NULL, 0, &start[0], &len[0], &sb[0]),
			 0);
	assert_int_equal(start[0], cs.addr);
	assert_int_equal(len[0], 2);
	/* The lowest free slot in rel8 reach (patch_sites.h): at worst the one right after
	 * the ret. */
	assert_true(sb[0] + 128 >= cs.addr + 2 && sb[0] <= cs.addr + 3);
	assert_int_equal(
		patch_sites__window(ps, &bs, NULL, 0, &sb[0], 1, &start[1], &len[1], &sb[1]), 0);
	assert_int_equal(start[1], bs.addr);
	assert_int_equal(len[1], 2);
	assert_true(sb[1] + 128 >= bs.addr + 2 &&
		    sb[1] <= (uint64_t)(uintptr_t)pf_sb_intra - bias + 4);
	assert_true(sb[1] + 5 <= sb[0] || sb[1] >= sb[0] + 5);
	/* Never shared: with both taken, pf_short's site gets another slot or none. */
	if (patch_sites__window(ps, &cs, NULL, 0, sb, 2, &start[0], &len[0], &other) == 0)
		assert_true(other + 5 <= sb[0] || other >= sb[0] + 5);
	/* A springboard that is not the window's is refused. */
	assert_int_not_equal(patch_sites__emit(ps, &cs, start[0], len[0], 0, bias,
					       (uint64_t)(uintptr_t)(region + 11 * SLOT),
					       (uint64_t)(uintptr_t)counters, false, NULL, &b[0]),
			     0);
	assert_int_not_equal(patch_sites__emit(ps, &cs, start[0], len[0], sb[0] + 200, bias,
					       (uint64_t)(uintptr_t)(region + 11 * SLOT),
					       (uint64_t)(uintptr_t)counters, false, NULL, &b[0]),
			     0);
	counters[20] = counters[21] = counters[22] = 0;
	for (int k = 0; k < 2; k++) {
		memcpy(before[k], (const void *)(uintptr_t)(start[k] + bias), len[k]);
		memcpy(sb_before[k], (const void *)(uintptr_t)(sb[k] + bias), 5);
		assert_int_equal(patch_sites__emit(ps, k ? &bs : &cs, start[k], len[k], sb[k], bias,
						   (uint64_t)(uintptr_t)(region + (11 + k) * SLOT),
						   (uint64_t)(uintptr_t)counters, false, NULL, &b[k]),
				 0);
		assert_int_equal(b[k].sb, sb[k] + bias);
		assert_int_equal(b[k].code[0], 0xeb);
		assert_int_equal(b[k].sb_code[0], 0xe9);
		install_blob(&b[k]);
	}
	for (int i = 0; i < 9; i++) {
		assert_int_equal(pf_short(xs[i]), want_short[i]);
		assert_int_equal(pf_sb_intra(xs[i]), want_intra[i]);
	}
	assert_int_equal(counters[20], nz);
	assert_int_equal(counters[21], 9 - eq); /* jne taken */
	assert_int_equal(counters[22], eq);
	for (int k = 1; k >= 0; k--)
		uninstall(&b[k]);
	for (int k = 0; k < 2; k++) {
		assert_memory_equal(before[k], (const void *)(uintptr_t)(start[k] + bias), len[k]);
		assert_memory_equal(sb_before[k], (const void *)(uintptr_t)(sb[k] + bias), 5);
	}
	for (int i = 0; i < 9; i++)
		assert_int_equal(pf_sb_intra(xs[i]), want_intra[i]);
	assert_int_equal(counters[20], nz);
	patch_sites__close(ps);
}

/* A short count window a held thread shortened (tests/attach-longjmp.sh: gcc -O2's round_of,
 * test %eax,%eax; je after the call to __sigsetjmp, a thread held at the je): pf_sb_intra's
 * entry block, mov %edi,%eax (2); jmp (2), is one short window; with a held thread's resume
 * point at the jmp the check gives the mov alone, and the install must generate exactly that
 * window (it generated the site's window with no thread held, 4 bytes, and refused the
 * mismatch: the attach stopped with "cannot generate the counter"). Patched and run, the mov
 * alone counts every call; the results are the unpatched ones and every byte comes back. */
static void test_short_window_held(void **state)
{
	struct patch_sites *ps;
	size_t fi = func_index("pf_sb_intra");
	struct probe_site cs = { 0 };
	uint64_t start, sb, held;
	uint8_t len, before[4], sb_before[5];
	struct patch_blob b;
	static const int xs[] = { 0, 0x60, 7, 0x160, -1 };
	int want[5];

	for (int i = 0; i < 5; i++)
		want[i] = pf_sb_intra(xs[i]);
	assert_int_equal(patch_sites__open(&ps, &prog), 0);
	cs.addr = (uint64_t)(uintptr_t)pf_sb_intra - bias;
	cs.func = (uint32_t)fi;
	cs.kind = SITE_COUNT;
	cs.counter = 1600;
	cs.counter2 = PLACEMENT_NO_COUNTER;
	/* No thread held: the whole block (mov, jmp). */
	assert_int_equal(patch_sites__window(ps, &cs, NULL, 0, NULL, 0, &start, &len, &sb), 0);
	assert_int_equal(start, cs.addr);
	assert_int_equal(len, 4);
	assert_int_not_equal(sb, 0);
	assert_true(patch_sites__emit_accepts(ps, &cs, start, len, sb));
	/* One held at the jmp: the mov alone, which emit takes too (but not a length that is
	 * neither window, nor the short one without its springboard). */
	held = cs.addr + 2;
	assert_int_equal(patch_sites__window(ps, &cs, &held, 1, NULL, 0, &start, &len, &sb), 0);
	assert_int_equal(start, cs.addr);
	assert_int_equal(len, 2);
	assert_int_not_equal(sb, 0);
	assert_true(patch_sites__emit_accepts(ps, &cs, start, len, sb));
	assert_false(patch_sites__emit_accepts(ps, &cs, start, 3, sb));
	assert_false(patch_sites__emit_accepts(ps, &cs, start, len, 0));
	memcpy(before, (const void *)(uintptr_t)(start + bias), 4);
	memcpy(sb_before, (const void *)(uintptr_t)(sb + bias), 5);
	assert_int_equal(patch_sites__emit(ps, &cs, start, len, sb, bias,
					   (uint64_t)(uintptr_t)(region + 160 * SLOT),
					   (uint64_t)(uintptr_t)counters, false, NULL, &b),
			 0);
	assert_int_equal(b.len, 2);
	assert_int_equal(b.code[0], 0xeb);
	counters[1600] = 0;
	install_blob(&b);
	/* The jmp (the held thread's resume point) is left as it is. */
	assert_memory_equal(before + 2, (const void *)(uintptr_t)(start + bias + 2), 2);
	for (int i = 0; i < 5; i++)
		assert_int_equal(pf_sb_intra(xs[i]), want[i]);
	assert_int_equal(counters[1600], 5);
	uninstall(&b);
	assert_memory_equal(before, (const void *)(uintptr_t)(start + bias), 4);
	assert_memory_equal(sb_before, (const void *)(uintptr_t)(sb + bias), 5);
	patch_sites__close(ps);
}

/* --- indirect sites: the indexed increment ------------------------------------------------ */

static const int sw_y[] = { -1, 0, 2, 9 };
#define NSW_X 6
#define NSW_Y (sizeof(sw_y) / sizeof(sw_y[0]))

/* pf_switch on every (x, y): how many results differ from WANT (none may be -1). */
static unsigned switch_wrong(const int want[NSW_X][NSW_Y])
{
	unsigned wrong = 0;

	for (unsigned x = 0; x < NSW_X; x++)
		for (unsigned k = 0; k < NSW_Y; k++) {
			int r = pf_switch(x, sw_y[k]);

			assert_int_not_equal(r, -1); /* red zone, rcx, rdx */
			wrong += r != want[x][k];
		}
	return wrong;
}

/* The spec of pf_switch's indirect window W: slots from counter FIRST, NSLOTS of them. */
static struct tramp_spec switch_spec(const struct patch_window *w, unsigned slotno,
				     uint32_t first, uint32_t nslots)
{
	struct tramp_spec sp = spec_of(w, slotno);

	sp.indexed = true;
	sp.len = w->reloc_len;
	sp.patch_len = w->len;
	sp.index_reg = w->index_reg;
	sp.index_at = w->index_at + bias;
	sp.live_index = w->live_index;
	sp.index_counter = first;
	sp.index_slots = nslots;
	return sp;
}

/* A jump-table dispatch counted per table entry in process, by execution: results (flags
 * live into every case, red zone, rcx and rdx) as unpatched, counters exact, plain and
 * locked; the trampoline decoded; an index out of the slots counted apart; and, as the
 * control, the same window without its flag save gives wrong results. */
static void test_indexed(void **state)
{
	size_t fi = func_index("pf_switch");
	uint32_t jmp = insn_of(fi, pf_switch_load) + 2; /* movslq, lea, jmp *%rax */
	int want[NSW_X][NSW_Y];
	struct patch_window w;
	struct tramp_spec sp;
	struct patch_blob b;
	bool saw_inc = false, saw_cmp = false, saw_step = false;
	unsigned npushf = 0, npopf = 0;
	size_t n, bytes = 0;
	cs_insn *in;
	csh cs;

	for (unsigned x = 0; x < NSW_X; x++)
		for (unsigned k = 0; k < NSW_Y; k++) {
			want[x][k] = pf_switch(x, sw_y[k]);
			assert_int_equal(want[x][k],
					 x > 3 ? 0 : (int)(10 * (x + 1)) + ((int)x < sw_y[k]));
		}
	assert_int_equal(patch_analysis__indirect_window(&pa, fi, jmp, NULL, 0, &w), 0);
	assert_int_equal(w.start, (uint64_t)(uintptr_t)pf_switch_load - bias);
	assert_int_equal(w.index_at, w.start);
	assert_int_equal(w.index_reg, 7); /* rdi */
	assert_int_equal(w.len, 8);	  /* movslq, lea */
	assert_int_equal(w.reloc_len, 10); /* ... and jmp *%rax */
	assert_int_equal(w.cls, PATCH_FLAGSAVE);
	/* A held thread inside the relocated range refuses the window. */
	{
		uint64_t held = prog.funcs[fi].insns[jmp].addr;

		assert_int_equal(patch_analysis__indirect_window(&pa, fi, jmp, &held, 1, &w),
				 -ENOENT);
		assert_int_equal(patch_analysis__indirect_window(&pa, fi, jmp, NULL, 0, &w), 0);
	}

	sp = switch_spec(&w, 150, 1500, 4);
	memset(&counters[1500], 0, 5 * sizeof(*counters));
	install(&sp, &b);
	assert_int_equal(b.len, 8);
	assert_int_equal(switch_wrong(want), 0);
	for (unsigned j = 0; j < 4; j++)
		assert_int_equal(counters[1500 + j], NSW_Y);
	assert_int_equal(counters[1504], 0); /* x > 3 never reaches the load */
	set_atomic(&b, true);
	assert_int_equal(switch_wrong(want), 0);
	for (unsigned j = 0; j < 4; j++)
		assert_int_equal(counters[1500 + j], 2 * NSW_Y);
	/* The code: every byte decodes; the flags saved below the red zone around a bounds
	 * check and `lock incq (%scratch,%rdi,8)`; the pc map clean before the increment only. */
	assert_int_equal(cs_open(CS_ARCH_X86, CS_MODE_64, &cs), CS_ERR_OK);
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	/* The installed bytes (set_atomic flipped their lock prefixes). */
	n = cs_disasm(cs, (const uint8_t *)(uintptr_t)b.tramp, b.tramp_len, b.tramp, 0, &in);
	for (size_t k = 0; k < n; k++) {
		const cs_x86 *x = &in[k].detail->x86;

		bytes += in[k].size;
		npushf += in[k].id == X86_INS_PUSHFQ;
		npopf += in[k].id == X86_INS_POPFQ;
		if (in[k].id == X86_INS_CMP && x->operands[0].type == X86_OP_REG &&
		    x->operands[0].reg == X86_REG_RDI && x->operands[1].imm == 4)
			saw_cmp = true;
		if (in[k].id == X86_INS_INC && x->operands[0].type == X86_OP_MEM &&
		    x->operands[0].mem.index == X86_REG_RDI) {
			assert_int_equal(x->operands[0].mem.scale, 8);
			assert_int_equal(x->operands[0].mem.base, X86_REG_RCX); /* not rdi */
			assert_int_equal(x->prefix[0], 0xf0);
			saw_inc = true;
		}
	}
	assert_int_equal(bytes, b.tramp_len);
	assert_true(saw_cmp && saw_inc);
	assert_int_equal(npushf, 1);
	assert_int_equal(npopf, 1);
	cs_free(in, n);
	cs_close(&cs);
	assert_int_equal(b.pcs[0].off, 0);
	assert_int_equal(b.pcs[0].clean, 1);
	assert_int_equal(b.pcs[0].orig, b.site);
	for (uint32_t k = 1; k < b.npcs; k++)
		saw_step |= b.pcs[k].clean == 0;
	assert_true(saw_step);
	assert_int_equal(b.nlock, 2);
	uninstall(&b);
	assert_int_equal(switch_wrong(want), 0);

	/* Fewer slots than entries: indices 2 and 3 count in the slot after them. */
	sp = switch_spec(&w, 151, 1510, 2);
	memset(&counters[1510], 0, 4 * sizeof(*counters));
	install(&sp, &b);
	assert_int_equal(switch_wrong(want), 0);
	assert_int_equal(counters[1510], NSW_Y);
	assert_int_equal(counters[1511], NSW_Y);
	assert_int_equal(counters[1512], 2 * NSW_Y);
	assert_int_equal(counters[1513], 0);
	uninstall(&b);

	/* Control: without the flag save the bounds check's flags reach the cases. */
	sp = switch_spec(&w, 152, 1520, 4);
	sp.live_index = 0;
	install(&sp, &b);
	assert_true(switch_wrong(want) > 0);
	uninstall(&b);
	assert_int_equal(switch_wrong(want), 0);
}

/* The indexed increment's two address forms, decoded: slots below 2 GiB are addressed
 * absolutely (`incq disp32(,%idx,8)`, no scratch, nothing on the stack when the flags are
 * dead); above, through a scratch register other than the index, saved below the red zone.
 * And the windows the generator refuses. */
static void test_indexed_forms(void **state)
{
	const uint8_t *code = (const uint8_t *)(uintptr_t)pf_switch_load;
	struct tramp_spec sp = { 0 };
	struct patch_blob b;
	csh cs;
	cs_insn *in;
	size_t n;

	assert_int_equal(cs_open(CS_ARCH_X86, CS_MODE_64, &cs), CS_ERR_OK);
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	for (int high = 0; high < 2; high++) {
		bool saw_inc = false, saw_push = false, saw_lea_rsp = false;
		uint64_t base = high ? 0x7f0000000000ull : 0x401000;
		size_t bytes = 0;

		sp.site = base;
		sp.bytes = code;
		sp.len = 10;
		sp.patch_len = 8;
		sp.tramp = base + 0x1000;
		sp.counters = base + 0x100000;
		sp.entry_counter = sp.taken_counter = sp.not_taken_counter = PATCH_NO_COUNTER;
		sp.indexed = true;
		sp.index_at = base;
		sp.index_reg = high ? 1 : 7; /* rcx: the scratch must be another */
		sp.index_counter = 3;
		sp.index_slots = 4;
		assert_int_equal(trampoline__emit(&sp, &b), 0);
		assert_int_equal(b.len, 8);
		n = cs_disasm(cs, b.tramp_code, b.tramp_len, b.tramp, 0, &in);
		for (size_t k = 0; k < n; k++) {
			const cs_x86 *x = &in[k].detail->x86;

			bytes += in[k].size;
			saw_push |= in[k].id == X86_INS_PUSH;
			saw_lea_rsp |= in[k].id == X86_INS_LEA && x->operands[0].reg == X86_REG_RSP;
			if (in[k].id == X86_INS_INC && x->operands[0].mem.index != X86_REG_INVALID) {
				const x86_op_mem *m = &x->operands[0].mem;

				assert_int_equal(m->scale, 8);
				if (high) {
					assert_int_equal(m->index, X86_REG_RCX);
					assert_int_equal(m->base, X86_REG_RDX);
					assert_int_equal(m->disp, 0);
				} else {
					assert_int_equal(m->index, X86_REG_RDI);
					assert_int_equal(m->base, X86_REG_INVALID);
					assert_int_equal(m->disp, (int64_t)(sp.counters + 3 * 8));
				}
				saw_inc = true;
			}
			/* The out-of-range slot: rip-relative, after the site's four. */
			if (in[k].id == X86_INS_INC && x->operands[0].mem.base == X86_REG_RIP)
				assert_int_equal(in[k].address + in[k].size + x->operands[0].mem.disp,
						 sp.counters + 7 * 8);
		}
		assert_int_equal(bytes, b.tramp_len);
		assert_true(saw_inc);
		assert_int_equal(saw_push, high);
		assert_int_equal(saw_lea_rsp, high);
		cs_free(in, n);
		patch_blob__release(&b);
	}
	/* gcc -O0 scales the index before the load: a register holding 4 * j is checked
	 * against 4 * slots and scaled by 2. */
	sp.site = 0x401000;
	sp.tramp = 0x402000;
	sp.counters = 0x500000;
	sp.index_at = 0x401000;
	sp.index_reg = 7;
	sp.index_mult = 4;
	assert_int_equal(trampoline__emit(&sp, &b), 0);
	n = cs_disasm(cs, b.tramp_code, b.tramp_len, b.tramp, 0, &in);
	{
		bool saw_cmp = false, saw_inc = false;

		for (size_t k = 0; k < n; k++) {
			const cs_x86 *x = &in[k].detail->x86;

			if (in[k].id == X86_INS_CMP && x->operands[0].type == X86_OP_REG) {
				assert_int_equal(x->operands[1].imm, 16);
				saw_cmp = true;
			}
			if (in[k].id == X86_INS_INC && x->operands[0].mem.index == X86_REG_RDI) {
				assert_int_equal(x->operands[0].mem.scale, 2);
				saw_inc = true;
			}
		}
		assert_true(saw_cmp && saw_inc);
	}
	cs_free(in, n);
	patch_blob__release(&b);
	sp.index_mult = 3;
	assert_int_equal(trampoline__emit(&sp, &b), -EINVAL);
	sp.index_mult = 0;
	cs_close(&cs);
	/* Refused: the index in rsp, more bytes overwritten than relocated, no slots, a window
	 * not ending with its jump, an entry counter besides. */
	sp.site = 0x401000;
	sp.tramp = 0x402000;
	sp.counters = 0x500000;
	sp.index_at = 0x401000;
	sp.index_reg = 4;
	assert_int_equal(trampoline__emit(&sp, &b), -EINVAL);
	sp.index_reg = 7;
	sp.patch_len = 11;
	assert_int_equal(trampoline__emit(&sp, &b), -EINVAL);
	sp.patch_len = 8;
	sp.index_slots = 0;
	assert_int_equal(trampoline__emit(&sp, &b), -EINVAL);
	sp.index_slots = 4;
	sp.len = 8;
	assert_int_equal(trampoline__emit(&sp, &b), -EINVAL);
	sp.len = 10;
	sp.entry_counter = 0;
	assert_int_equal(trampoline__emit(&sp, &b), -EINVAL);
	sp.entry_counter = PATCH_NO_COUNTER;
	assert_int_equal(trampoline__emit(&sp, &b), 0);
	patch_blob__release(&b);
}

/* Two plans of PROG are the same: sites, counters and every function's plan. */
static void assert_same_plan(const struct cfg_program *p, const struct placement *a,
			     const struct placement *b)
{
	assert_int_equal(a->nsites, b->nsites);
	assert_int_equal(a->ncounters, b->ncounters);
	assert_int_equal(a->nfuncs, b->nfuncs);
	for (size_t i = 0; i < a->nsites; i++) {
		const struct probe_site *x = &a->sites[i], *y = &b->sites[i];

		assert_int_equal(x->addr, y->addr);
		assert_int_equal(x->func, y->func);
		assert_int_equal(x->kind, y->kind);
		assert_int_equal(x->probe_class, y->probe_class);
		assert_int_equal(x->counter, y->counter);
		assert_int_equal(x->counter2, y->counter2);
		if (x->kind == SITE_INDIRECT)
			assert_int_equal(x->ordinal, y->ordinal);
	}
	for (uint32_t c = 0; c < a->ncounters; c++) {
		assert_int_equal(a->counters[c].func, b->counters[c].func);
		assert_int_equal(a->counters[c].what, b->counters[c].what);
		assert_int_equal(a->counters[c].id, b->counters[c].id);
		assert_int_equal(a->counters[c].site, b->counters[c].site);
	}
	for (size_t i = 0; i < a->nfuncs; i++) {
		const struct cfg_func *f = &p->funcs[i];
		const struct func_plan *x = &a->funcs[i], *y = &b->funcs[i];

		assert_int_equal(x->status, y->status);
		assert_int_equal(x->nchords, y->nchords);
		assert_true(x->est_cost == y->est_cost);
		if (x->status == PLAN_EXCLUDED)
			continue;
		for (uint32_t e = 0; e <= f->nedges; e++)
			assert_int_equal(x->edge_counter[e], y->edge_counter[e]);
		for (uint32_t e = 0; x->status == PLAN_CHORDS && e <= f->nedges; e++)
			assert_int_equal(x->in_tree[e], y->in_tree[e]);
		for (uint32_t k = 0; k < f->nblocks; k++)
			assert_int_equal(x->block_counter[k], y->block_counter[k]);
	}
}

/* placement__replan of a plan of this program: with nothing changed it gives the same plan;
 * after the classes of some functions' sites are dropped (as refused sites' are), it gives
 * what a whole new plan gives, planning only those functions again. */
static void test_replan(void **state)
{
	struct cfg_program p2 = {0};
	struct patch_sites *ps;
	struct placement_options opt = {.mode = PLACEMENT_CHORDS};
	struct placement a, b, c;
	bool *redo;
	size_t nredo = 0;

	assert_int_equal(cfg_program__build(&p2, &img, NULL), 0);
	assert_int_equal(patch_sites__open(&ps, &p2), 0);
	site_costs__defaults(&opt.costs);
	assert_int_equal(placement__plan(&a, &p2, &opt), 0);
	assert_int_equal(placement__plan(&b, &p2, &opt), 0);
	assert_true(a.nsites > 100);
	redo = calloc(p2.nfuncs + 1, sizeof(*redo));
	assert_non_null(redo);
	assert_int_equal(placement__replan(&b, &p2, &opt, redo), 0);
	assert_same_plan(&p2, &a, &b);
	for (size_t i = 0; i < a.nsites; i += 23) {
		struct cfg_func *f = &p2.funcs[a.sites[i].func];
		long k = patch_func__insn_at(f, a.sites[i].addr);

		if (k < 0 || !probe_class__in_process(a.sites[i].probe_class))
			continue;
		f->insns[k].patch_count = f->insns[k].patch_branch = 0;
		f->insns[k].patch_indirect = 0;
		nredo += !redo[a.sites[i].func];
		redo[a.sites[i].func] = true;
	}
	assert_true(nredo > 10);
	assert_int_equal(placement__plan(&c, &p2, &opt), 0);
	assert_int_equal(placement__replan(&b, &p2, &opt, redo), 0);
	assert_same_plan(&p2, &c, &b);
	print_message("replan: %zu of %zu functions planned again, %zu sites\n", nredo, p2.nfuncs,
		      b.nsites);
	placement__free(&a);
	placement__free(&b);
	placement__free(&c);
	free(redo);
	patch_sites__close(ps);
	cfg_program__free(&p2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_loop_count),
	    cmocka_unit_test(test_loop_branch),
	    cmocka_unit_test(test_loop_to_block_end),
	    cmocka_unit_test(test_rip),
	    cmocka_unit_test(test_calls),
	    cmocka_unit_test(test_flags_live),
	    cmocka_unit_test(test_branch_flags),
	    cmocka_unit_test(test_pc_map),
	    cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_patch_sites),
	    cmocka_unit_test(test_every_window),
	    cmocka_unit_test(test_whole_function),
	    cmocka_unit_test(test_red_zone),
	    cmocka_unit_test(test_threads_atomic),
	    cmocka_unit_test(test_springboard_sites),
	    cmocka_unit_test(test_short_window_held),
	    cmocka_unit_test(test_indexed),
	    cmocka_unit_test(test_indexed_forms),
	    cmocka_unit_test(test_replan),
	    cmocka_unit_test(test_continuation),
	    cmocka_unit_test(test_site_continuation),
	    cmocka_unit_test(test_shortcut),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
