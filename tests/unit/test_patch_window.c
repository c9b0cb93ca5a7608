/*
 * Unit tests of flag liveness (cfg/flag_liveness.h) and patch windows (cfg/patch_window.h) on
 * the hand-written functions of tests/support/patch_fixtures.c, analysed in this test binary
 * itself (/proc/self/exe): the shapes each window must be refused for (a 2-byte block, a jump
 * into the middle, a syscall, a call not at the end, a held thread's pc), the flags each must
 * keep, and relocation kinds of single instructions. Indirect windows: from the table load the
 * jump-table analysis proves (with the register holding the entry index) to the jump.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cfg/cfg.h"
#include "cfg/flag_liveness.h"
#include "cfg/patch_window.h"
#include "tests/support/patch_fixtures.h"

static struct elf_image img;
static struct cfg_program prog;
static struct patch_analysis pa;
static uint64_t bias; /* run-time minus ELF address of this binary's code */

static int setup(void **state)
{
	struct cfg_func *f;

	if (elf_image__open(&img, "/proc/self/exe") || cfg_program__build(&prog, &img, NULL) ||
	    patch_analysis__build(&pa, &prog))
		return -1;
	f = cfg_program__find(&prog, "pf_loop");
	if (!f)
		return -1;
	bias = (uint64_t)(uintptr_t)pf_loop - f->entry;
	return 0;
}

static int teardown(void **state)
{
	patch_analysis__release(&pa);
	cfg_program__free(&prog);
	elf_image__close(&img);
	return 0;
}

/* The function named NAME, its index in *FI. */
static const struct cfg_func *func(const char *name, size_t *fi)
{
	const struct cfg_func *f = cfg_program__find(&prog, name);

	assert_non_null(f);
	if (fi)
		*fi = (size_t)(f - prog.funcs);
	return f;
}

/* The instruction index of the run-time address P in F. */
static uint32_t insn_of(const struct cfg_func *f, const void *p)
{
	long k = patch_func__insn_at(f, (uint64_t)(uintptr_t)p - bias);

	assert_true(k >= 0);
	return (uint32_t)k;
}

static void test_loop_windows(void **state)
{
	size_t fi;
	const struct cfg_func *f = func("pf_loop", &fi);
	uint32_t body = insn_of(f, pf_loop_body);
	struct patch_window w;

	/* add %ecx,%eax (2) + add $1,%ecx (3): flags dead (the add writes them all). */
	assert_int_equal(pa.funcs[fi].count_class[body], PATCH_PLAIN);
	assert_int_equal(patch_analysis__count_window(&pa, fi, body, NULL, 0, 0, &w), 0);
	assert_int_equal(w.len, 5);
	assert_int_equal(w.ninsns, 2);
	assert_false(w.ends_jcc);
	/* With the block-end extension the window runs to the jb (9 bytes). */
	assert_int_equal(patch_analysis__count_window(&pa, fi, body, NULL, 0,
						      PATCH_WINDOW_TO_BLOCK_END, &w), 0);
	assert_int_equal(w.len, 9);
	assert_true(w.ends_jcc && w.ends_block);
	/* The branch window of the jb rel8: add $1 (3) cmp (2) jb (2). */
	assert_int_equal(pa.funcs[fi].branch_class[body + 3], PATCH_PLAIN);
	assert_int_equal(patch_analysis__branch_window(&pa, fi, body + 3, NULL, 0, &w), 0);
	assert_int_equal(w.start, f->insns[body + 1].addr);
	assert_int_equal(w.len, 7);
	assert_int_equal(w.live_taken, 0);
	assert_int_equal(w.live_not_taken, 0);
	/* A held thread at the cmp refuses both. */
	{
		uint64_t avoid[] = { f->insns[body + 2].addr };

		assert_int_equal(patch_analysis__branch_window(&pa, fi, body + 3, avoid, 1, &w),
				 -ENOENT);
		assert_int_equal(patch_analysis__count_window(&pa, fi, body, avoid, 1,
							      PATCH_WINDOW_TO_BLOCK_END, &w),
				 0); /* the 5-byte window ends before it */
		assert_int_equal(w.len, 5);
	}
	/* The jb is not a count window of its own (2 bytes, then the next block). */
	assert_int_equal(pa.funcs[fi].count_class[body + 3], PATCH_NONE);
}

static void test_refused(void **state)
{
	size_t fi;
	const struct cfg_func *f;

	/* A 2-byte block. */
	f = func("pf_short", &fi);
	assert_int_equal(pa.funcs[fi].count_class[insn_of(f, pf_short_inc)], PATCH_NONE);
	/* A jump from another function into the middle. */
	f = func("pf_mid", &fi);
	assert_int_equal(pa.funcs[fi].count_class[insn_of(f, (const char *)pf_mid)], PATCH_NONE);
	assert_int_equal(pa.funcs[fi].count_class[insn_of(f, pf_mid_in)], PATCH_PLAIN);
	/* A syscall inside. */
	f = func("pf_sys", &fi);
	assert_int_equal(pa.funcs[fi].count_class[insn_of(f, pf_sys)], PATCH_NONE);
	assert_int_equal(pa.funcs[fi].reloc[insn_of(f, pf_sys) + 1], RELOC_NO);
	/* A call not at the end: the window from the nop would cover the return address. */
	f = func("pf_callmid", &fi);
	assert_int_equal(pa.funcs[fi].count_class[insn_of(f, pf_callmid)], PATCH_NONE);
	/* A call at the end is fine. */
	f = func("pf_call", &fi);
	assert_int_equal(pa.funcs[fi].count_class[0 + insn_of(f, (const char *)pf_call)],
			 PATCH_PLAIN);
}

static void test_flags(void **state)
{
	size_t fi;
	const struct cfg_func *f;
	struct patch_window w;
	uint32_t k;

	/* SF and OF of the cmp live across the block at pf_flags_b. */
	f = func("pf_flags", &fi);
	k = insn_of(f, pf_flags_b);
	assert_int_equal(pa.funcs[fi].fl.before[k], FLAG_SF | FLAG_OF);
	assert_int_equal(pa.funcs[fi].count_class[k], PATCH_FLAGSAVE);
	/* Before the cmp nothing is live (it writes every flag). */
	assert_int_equal(pa.funcs[fi].fl.before[insn_of(f, (const char *)pf_flags)], 0);
	/* Only CF live (adc reads CF alone): the increment keeps it, so plain. */
	f = func("pf_carry", &fi);
	k = insn_of(f, pf_carry_b);
	assert_int_equal(pa.funcs[fi].fl.before[k], FLAG_CF);
	assert_int_equal(pa.funcs[fi].count_class[k], PATCH_PLAIN);
	/* A branch whose not-taken outcome reads ZF. */
	f = func("pf_flags2", &fi);
	k = insn_of(f, (const char *)pf_flags2) + 2; /* the jl (its label is not taken: an
							 * address taken inside refuses windows) */
	assert_int_equal(patch_analysis__branch_window(&pa, fi, k, NULL, 0, &w), 0);
	assert_int_equal(w.len, 6);
	assert_int_equal(w.live_not_taken, FLAG_ZF);
	assert_int_equal(w.live_taken, 0);
	assert_int_equal(w.cls, PATCH_FLAGSAVE);
	/* A shift by %cl may write no flag: the test's ZF stays live before it. */
	f = func("pf_shift", &fi);
	assert_true(pa.funcs[fi].fl.before[insn_of(f, pf_shift_shl)] & FLAG_ZF);
	/* Dead at a tail call. */
	f = func("pf_tail", &fi);
	assert_int_equal(pa.funcs[fi].fl.before[insn_of(f, pf_tail_jmp)], 0);
	/* Block and edge views agree with the instructions'. */
	f = func("pf_flags", &fi);
	{
		int b = cfg_func__block_at(f, (uint64_t)(uintptr_t)pf_flags_b - bias);

		assert_true(b >= 0);
		assert_int_equal(flag_liveness__block(&pa.funcs[fi].fl, (uint32_t)b),
				 FLAG_SF | FLAG_OF);
		for (uint32_t p = 0; p < f->blocks[b].npred; p++)
			assert_int_equal(flag_liveness__edge(&pa.funcs[fi].fl, f,
							     f->pred[f->blocks[b].first_pred + p]),
					 FLAG_SF | FLAG_OF);
	}
}

/* The relocation kind of BYTES. */
static int kind_of(const uint8_t *bytes, size_t n)
{
	csh cs;
	cs_insn *in;
	size_t cnt;
	int k;

	assert_int_equal(cs_open(CS_ARCH_X86, CS_MODE_64, &cs), CS_ERR_OK);
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	cnt = cs_disasm(cs, bytes, n, 0x401000, 1, &in);
	assert_int_equal(cnt, 1);
	k = patch_reloc__kind(in);
	cs_free(in, cnt);
	cs_close(&cs);
	return k;
}

static void test_reloc_kinds(void **state)
{
	static const uint8_t call_rsp[] = { 0xff, 0x54, 0x24, 0x08 };   /* call *8(%rsp) */
	static const uint8_t call_rax[] = { 0xff, 0xd0 };               /* call *%rax */
	static const uint8_t call_mem[] = { 0x41, 0xff, 0x14, 0xc4 };   /* call *(%r12,%rax,8) */
	static const uint8_t call_rip[] = { 0xff, 0x15, 1, 2, 3, 4 };   /* call *x(%rip) */
	static const uint8_t loop[] = { 0xe2, 0xfe };                   /* loop . */
	static const uint8_t jrcxz[] = { 0xe3, 0xfe };                  /* jrcxz . */
	static const uint8_t lea_rip[] = { 0x48, 0x8d, 0x05, 1, 2, 3, 4 };
	static const uint8_t cmp_rip_imm[] = { 0x83, 0x3d, 1, 2, 3, 4, 5 }; /* cmpl $5,x(%rip) */
	static const uint8_t jmp8[] = { 0xeb, 0x10 };
	static const uint8_t jcc32[] = { 0x0f, 0x84, 0, 1, 0, 0 };
	static const uint8_t jmp_rel16[] = { 0x66, 0xe9, 0x10, 0x00 };
	static const uint8_t syscall[] = { 0x0f, 0x05 };
	static const uint8_t int3[] = { 0xcc };
	static const uint8_t ret[] = { 0xc3 };
	static const uint8_t notrack_jmp[] = { 0x3e, 0xff, 0xe0 };      /* notrack jmp *%rax */
	static const uint8_t xbegin[] = { 0xc7, 0xf8, 0, 0, 0, 0 };

	assert_int_equal(kind_of(call_rsp, sizeof(call_rsp)), RELOC_NO);
	assert_int_equal(kind_of(call_rax, sizeof(call_rax)), RELOC_CALL_IND);
	assert_int_equal(kind_of(call_mem, sizeof(call_mem)), RELOC_CALL_IND);
	assert_int_equal(kind_of(call_rip, sizeof(call_rip)), RELOC_CALL_IND);
	assert_int_equal(kind_of(loop, sizeof(loop)), RELOC_NO);
	assert_int_equal(kind_of(jrcxz, sizeof(jrcxz)), RELOC_NO);
	assert_int_equal(kind_of(lea_rip, sizeof(lea_rip)), RELOC_RIP);
	assert_int_equal(kind_of(cmp_rip_imm, sizeof(cmp_rip_imm)), RELOC_RIP);
	assert_int_equal(kind_of(jmp8, sizeof(jmp8)), RELOC_JMP);
	assert_int_equal(kind_of(jcc32, sizeof(jcc32)), RELOC_JCC);
	assert_int_equal(kind_of(jmp_rel16, sizeof(jmp_rel16)), RELOC_NO);
	assert_int_equal(kind_of(syscall, sizeof(syscall)), RELOC_NO);
	assert_int_equal(kind_of(int3, sizeof(int3)), RELOC_NO);
	assert_int_equal(kind_of(ret, sizeof(ret)), RELOC_RET);
	assert_int_equal(kind_of(notrack_jmp, sizeof(notrack_jmp)), RELOC_JMP_IND);
	assert_int_equal(kind_of(xbegin, sizeof(xbegin)), RELOC_NO);
}

/* Capstone 4's flag effects with the corrections flag_liveness applies. */
static void test_insn_effects(void **state)
{
	static const struct {
		uint8_t b[6];
		uint8_t n, use, def;
	} t[] = {
		{ { 0x11, 0xc8 }, 2, FLAG_CF, FLAG_ALL },      /* adc: reads CF (capstone: none) */
		{ { 0xd1, 0xd0 }, 2, FLAG_CF, FLAG_CF | FLAG_OF }, /* rcl $1: reads CF */
		{ { 0xf5 }, 1, FLAG_CF, FLAG_CF },             /* cmc */
		{ { 0xd3, 0xe0 }, 2, 0, 0 },                    /* shl %cl: may write none */
		{ { 0xc1, 0xe0, 0x20 }, 3, 0, 0 },              /* shl $32,%eax: masked to 0 */
		{ { 0x48, 0xc1, 0xe8, 0x20 }, 4, 0, FLAG_ALL }, /* shr $32,%rax: writes */
		{ { 0xf3, 0xa6 }, 2, 0, 0 },                    /* repe cmpsb: may run 0 times */
		{ { 0x9c }, 1, FLAG_ALL, 0 },                   /* pushfq */
		{ { 0x48, 0xff, 0xc0 }, 3, 0, FLAG_INC_WRITES }, /* inc keeps CF */
		{ { 0x0f, 0x92, 0xc0 }, 3, FLAG_CF, 0 },        /* setb */
		{ { 0x74, 0x00 }, 2, FLAG_ZF, 0 },              /* je */
		{ { 0x0f, 0x05 }, 2, 0, 0 },                    /* syscall: passes them */
		{ { 0xcd, 0x80 }, 2, FLAG_ALL, 0 },             /* int $0x80 */
		{ { 0xe8, 0, 0, 0, 0 }, 5, 0, FLAG_ALL },       /* call */
	};
	csh cs;

	assert_int_equal(cs_open(CS_ARCH_X86, CS_MODE_64, &cs), CS_ERR_OK);
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		cs_insn *in;
		uint8_t use, def;
		size_t cnt = cs_disasm(cs, t[i].b, t[i].n, 0x1000, 1, &in);

		assert_int_equal(cnt, 1);
		flag_liveness__insn_effect(in, &use, &def);
		if (use != t[i].use || def != t[i].def)
			fail_msg("case %zu (%s %s): use %#x def %#x, expected %#x %#x", i,
				 in->mnemonic, in->op_str, use, def, t[i].use, t[i].def);
		cs_free(in, cnt);
	}
	cs_close(&cs);
}

/* The classes land in the CFG's instructions. */
/* The table load and index register of a jump-table dispatch, its indirect window, and the
 * windows refused: a held thread in the relocated range, a memory read after the load. */
static void test_indirect(void **state)
{
	const struct cfg_func *f = cfg_program__find(&prog, "pf_switch");
	const struct cfg_func *g = cfg_program__find(&prog, "pf_switch_loud");
	uint64_t load = (uint64_t)(uintptr_t)pf_switch_load - bias, held;
	struct patch_window w;
	long k;

	assert_non_null(f);
	assert_non_null(g);
	patch_analysis__apply(&pa, &prog);
	assert_int_equal(pf_switch(2, 0), 30);
	assert_int_equal(pf_switch_loud(1), 2);
	assert_int_equal(f->ntables, 1);
	assert_int_equal(f->tables[0].entries, 4);
	assert_int_equal(f->tables[0].entry_size, 4);
	assert_true(f->tables[0].relative);
	assert_int_equal(f->tables[0].rel_base, f->tables[0].table);
	assert_int_equal(f->tables[0].load, load);
	assert_int_equal(f->tables[0].load_index, 7); /* rdi */
	k = patch_func__insn_at(f, f->tables[0].jump);
	assert_true(k >= 0);
	assert_int_equal(patch_analysis__indirect_window(&pa, (size_t)(f - prog.funcs), (uint32_t)k,
							 NULL, 0, &w),
			 0);
	assert_int_equal(w.start, load);
	assert_int_equal(w.index_at, load);
	assert_int_equal(w.len, 8);
	assert_int_equal(w.reloc_len, 10);
	assert_int_equal(w.cls, PATCH_FLAGSAVE); /* the cmp's flags reach every case */
	assert_true(w.live_index & FLAG_SF);
	assert_int_equal(f->insns[k].patch_indirect, PROBE_PATCH_FLAGS);
	/* No count or branch window at the jump itself. */
	assert_int_equal(f->insns[k].patch_count, 0);
	held = f->insns[k].addr;
	assert_int_equal(patch_analysis__indirect_window(&pa, (size_t)(f - prog.funcs), (uint32_t)k,
							 &held, 1, &w),
			 -ENOENT);
	/* The loud one: resolved, its load known, but no window. */
	assert_int_equal(g->ntables, 1);
	assert_true(g->tables[0].load != 0);
	k = patch_func__insn_at(g, g->tables[0].jump);
	assert_true(k >= 0);
	assert_int_equal(patch_analysis__indirect_window(&pa, (size_t)(g - prog.funcs), (uint32_t)k,
							 NULL, 0, &w),
			 -ENOENT);
	assert_int_equal(g->insns[k].patch_indirect, 0);
}

static void test_apply(void **state)
{
	size_t fi;
	const struct cfg_func *f = func("pf_flags", &fi);
	uint32_t k = insn_of(f, pf_flags_b);

	patch_analysis__apply(&pa, &prog);
	assert_int_equal(f->insns[k].patch_count, PROBE_PATCH_FLAGS);
	f = func("pf_loop", &fi);
	assert_int_equal(f->insns[insn_of(f, pf_loop_body)].patch_count, PROBE_PATCH);
	assert_int_equal(f->insns[insn_of(f, pf_loop_body) + 3].patch_branch, PROBE_PATCH);
	f = func("pf_short", &fi);
	assert_int_equal(f->insns[insn_of(f, pf_short_inc)].patch_count, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loop_windows), cmocka_unit_test(test_refused),
		cmocka_unit_test(test_flags),        cmocka_unit_test(test_reloc_kinds),
		cmocka_unit_test(test_insn_effects), cmocka_unit_test(test_apply),
		cmocka_unit_test(test_indirect),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
