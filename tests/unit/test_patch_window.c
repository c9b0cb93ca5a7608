/*
 * Unit tests of flag liveness (cfg/flag_liveness.h) and patch windows (cfg/patch_window.h) on
 * the hand-written functions of tests/support/patch_fixtures.c, analysed in this test binary
 * itself (/proc/self/exe): the shapes each window must be refused for (a 2-byte block with no
 * padding in reach, a jump into the middle, a syscall, a call not at the end, a held thread's
 * pc), the flags each must keep, relocation kinds of single instructions, and the springboards
 * of short windows: found in the padding after a function and after a jmp inside one, refused
 * where the padding is reachable (jumped into, a symbol in it, a jump-table target in it) or out
 * of jmp rel8 reach. Indirect windows: from the table load the jump-table analysis proves
 * (with the register holding the entry index) to the jump. The facts the build's decoder keeps
 * per instruction (shared with flag liveness and the patch analysis) are checked against a
 * fresh capstone decoding, and an analysis without them against one with them.
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
#include "cfg/decode.h"
#include "cfg/flag_liveness.h"
#include "cfg/patch_window.h"
#include "estimators/placement.h"
#include "estimators/site_costs.h"
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
	/* A count window at the jb (2 bytes to the block's end) is a short one, with a
	 * springboard in padding nearby. */
	assert_int_equal(patch_analysis__count_window(&pa, fi, body + 3, NULL, 0, 0, &w), 0);
	assert_true(w.short_jump);
	assert_int_equal(w.len, 2);
}

static void test_refused(void **state)
{
	size_t fi;
	const struct cfg_func *f;

	/* A 2-byte block with no padding within jmp rel8 reach. */
	f = func("pf_sb_far", &fi);
	assert_int_equal(pa.funcs[fi].count_class[insn_of(f, pf_sb_far_inc)], PATCH_NONE);
	/* A jump from another function into the middle. */
	f = func("pf_mid", &fi);
	{
		struct patch_window w;

		/* No 5-byte window over it; the 2 nops before it are a short one. */
		if (patch_analysis__count_window(&pa, fi, insn_of(f, (const char *)pf_mid), NULL, 0,
						 0, &w) == 0) {
			assert_true(w.short_jump);
			assert_true(w.start + w.len <= (uint64_t)(uintptr_t)pf_mid_in - bias);
		}
	}
	assert_int_equal(pa.funcs[fi].count_class[insn_of(f, pf_mid_in)], PATCH_PLAIN);
	/* A syscall inside. */
	f = func("pf_sys", &fi);
	assert_int_equal(pa.funcs[fi].count_class[insn_of(f, pf_sys)], PATCH_NONE);
	assert_int_equal(pa.funcs[fi].reloc[insn_of(f, pf_sys) + 1], RELOC_NO);
	/* A call not at the end: the window from the nop would cover the return address. */
	f = func("pf_callmid", &fi);
	{
		struct patch_window w;

		/* No 5-byte window; nop, call *%rax ending at the return address is a short
		 * one. */
		if (patch_analysis__count_window(&pa, fi, insn_of(f, pf_callmid), NULL, 0, 0,
						 &w) == 0) {
			assert_true(w.short_jump);
			assert_int_equal(w.len, 3);
		}
	}
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
	/* No 5-byte count window at the jump itself (a short one, through a springboard in the
	 * padding after the function, may be). */
	if (f->insns[k].patch_count) {
		struct patch_window cw;

		assert_int_equal(patch_analysis__count_window(&pa, (size_t)(f - prog.funcs),
							      (uint32_t)k, NULL, 0, 0, &cw),
				 0);
		assert_true(cw.short_jump && cw.len < 5);
	}
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
	f = func("pf_sb_far", &fi);
	assert_int_equal(f->insns[insn_of(f, pf_sb_far_inc)].patch_count, 0);
	f = func("pf_short", &fi);
	assert_int_equal(f->insns[insn_of(f, pf_short_inc)].patch_count, PROBE_PATCH);
}

/* The gap holding ELF vaddr A, or NULL. */
static const struct patch_gap *gap_at(uint64_t a)
{
	for (size_t g = 0; g < pa.ngaps; g++)
		if (pa.gaps[g].lo <= a && a < pa.gaps[g].hi)
			return &pa.gaps[g];
	return NULL;
}

/* The ELF vaddr of the run-time address P. */
static uint64_t vaddr(const void *p)
{
	return (uint64_t)(uintptr_t)p - bias;
}

/* Springboards in the padding after a function (pf_short: its 2-byte block inc %eax, then ret
 * and the alignment to pf_mid) and in the padding after a jmp inside one (pf_sb_intra: 5 bytes
 * of nopl between its jmp and the 4-byte block cmp; jne). */
static void test_springboards(void **state)
{
	size_t fi;
	const struct cfg_func *f = func("pf_short", &fi);
	uint32_t k = insn_of(f, pf_short_inc);
	uint64_t ret_end = vaddr(pf_short_inc) + 3; /* inc (2), ret (1) */
	uint64_t mid = vaddr((const void *)pf_mid), intra = vaddr((const void *)pf_sb_intra) + 4;
	const struct patch_gap *g = gap_at(ret_end);
	struct patch_window w;
	uint64_t sb, sb2, used[2];

	/* Between functions: from the ret's end up to pf_mid, all of it. */
	assert_non_null(g);
	assert_int_equal(g->lo, ret_end);
	assert_int_equal(g->hi, mid);
	assert_int_equal(pa.funcs[fi].count_class[k], PATCH_PLAIN);
	assert_int_equal(patch_analysis__count_window(&pa, fi, k, NULL, 0, 0, &w), 0);
	assert_true(w.short_jump);
	assert_int_equal(w.start, vaddr(pf_short_inc));
	assert_int_equal(w.len, 2);
	assert_int_equal(w.ninsns, 1);
	assert_int_equal(patch_analysis__springboard(&pa, &w, NULL, 0, NULL, 0, &sb), 0);
	assert_int_equal(sb, ret_end);
	assert_true(patch_analysis__springboard_ok(&pa, &w, sb));
	/* Never shared: with it used, the next slot is the one after it, if the gap holds it. */
	used[0] = sb;
	if (mid - ret_end >= 10) {
		assert_int_equal(patch_analysis__springboard(&pa, &w, used, 1, NULL, 0, &sb2), 0);
		assert_true(sb2 >= sb + 5);
	}
	/* A held thread's resume point in the padding (it cannot be, but it is avoided). */
	{
		uint64_t avoid[] = { ret_end + 1 };

		assert_int_equal(patch_analysis__springboard(&pa, &w, NULL, 0, avoid, 1, &sb2), 0);
		assert_true(sb2 >= ret_end + 2);
	}
	/* A slot outside the gap, or the gap's end reaching past it, is no springboard. */
	assert_false(patch_analysis__springboard_ok(&pa, &w, ret_end - 1));
	assert_false(patch_analysis__springboard_ok(&pa, &w, mid - 4));

	/* Inside a function, after its jmp: exactly the nopl's 5 bytes. */
	f = func("pf_sb_intra", &fi);
	k = insn_of(f, pf_sb_intra_jne);
	g = gap_at(intra);
	assert_non_null(g);
	assert_int_equal(g->lo, intra);
	assert_int_equal(g->hi, intra + 5);
	assert_int_not_equal(pa.funcs[fi].branch_class[k], PATCH_NONE);
	assert_int_equal(patch_analysis__branch_window(&pa, fi, k, NULL, 0, &w), 0);
	assert_true(w.short_jump && w.ends_jcc);
	assert_int_equal(w.start, vaddr(pf_sb_intra_jne));
	assert_int_equal(w.len, 2);
	assert_int_equal(patch_analysis__springboard(&pa, &w, NULL, 0, NULL, 0, &sb), 0);
	assert_int_equal(sb, intra);
	/* The gap holds one springboard: with it taken, another gap's slot (the padding before
	 * and after the function are in reach) or none. */
	used[0] = sb;
	if (patch_analysis__springboard(&pa, &w, used, 1, NULL, 0, &sb2) == 0)
		assert_true(sb2 + 5 <= intra || sb2 >= intra + 5);
	/* Its entry block (mov, jmp: 4 bytes) may use the same padding as a count window. */
	k = insn_of(f, (const void *)pf_sb_intra);
	assert_int_equal(patch_analysis__count_window(&pa, fi, k, NULL, 0, 0, &w), 0);
	assert_true(w.short_jump);
	assert_int_equal(w.len, 4);
	assert_true(w.ends_block);
}

/* Padding that is not a gap: jumped into (pf_sb_jumper's jmp lands in it), a symbol in it
 * (pf_sb_symlab), a jump-table target in it (pf_sb_tab's second case); and padding out of jmp
 * rel8 reach (pf_sb_far's, 150 bytes after its 2-byte block). Each 2-byte block has no
 * springboard, so no window. */
static void test_springboard_refused(void **state)
{
	static const struct {
		const char *func;
		const char *inc;
		bool gap; /* its padding is a gap (only too far) */
	} t[] = {
		{ "pf_sb_jump", pf_sb_jump_inc, false },
		{ "pf_sb_sym", pf_sb_sym_inc, false },
		{ "pf_sb_tab", pf_sb_tab_inc, false },
		{ "pf_sb_far", pf_sb_far_inc, true },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		size_t fi;
		const struct cfg_func *f = func(t[i].func, &fi);
		uint32_t k = insn_of(f, t[i].inc);
		const struct cfg_block *last = &f->blocks[f->nblocks - 1];
		struct patch_window w;

		/* The padding right after the function's last block (its ret). */
		if (t[i].gap)
			assert_non_null(gap_at(last->end));
		else if (gap_at(last->end))
			fail_msg("%s: the padding at %#llx is taken for a gap", t[i].func,
				 (unsigned long long)last->end);
		assert_int_equal(pa.funcs[fi].count_class[k], PATCH_NONE);
		assert_int_equal(patch_analysis__count_window(&pa, fi, k, NULL, 0, 0, &w),
				 -ENOENT);
	}
	/* The symbol lies in pf_sb_sym's padding, and the table was resolved (its target
	 * in the padding is an entry, not an unresolved jump). */
	assert_true(vaddr(pf_sb_symlab) > vaddr(pf_sb_sym_inc));
	assert_int_equal(func("pf_sb_tab", NULL)->ntables, 1);
	assert_int_equal(func("pf_sb_tab", NULL)->flags & CFG_FUNC_UNRESOLVED, 0);
}

/* Every instruction of the CFG: the facts the build's decoder kept (cfg_program.dec) are those
 * a fresh capstone decoding of its bytes gives; and a patch analysis made after the program
 * dropped them (decoding on its own) is the one made from them. */
static void test_shared_decoding(void **state)
{
	struct cfg_program p2;
	struct patch_analysis a1, a2;
	csh cs;
	cs_insn *in;
	size_t checked = 0;

	assert_int_equal(cfg_program__build(&p2, &img, NULL), 0);
	assert_non_null(p2.dec);
	assert_int_equal(cs_open(CS_ARCH_X86, CS_MODE_64, &cs), CS_ERR_OK);
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	for (size_t i = 0; i < p2.nfuncs; i++) {
		const struct cfg_func *f = &p2.funcs[i];

		for (uint32_t k = 0; k < f->ninsns; k++) {
			size_t avail = 0;
			const uint8_t *code = elf_image__code(&img, f->insns[k].addr, &avail);
			long x = decoder__index(p2.dec, f->insns[k].addr);
			const struct dinsn *di;
			uint8_t use, def;
			uint64_t taken[8];
			unsigned nt;

			assert_non_null(code);
			assert_true(x >= 0);
			di = &p2.dec->insns[x];
			assert_int_equal(cs_disasm(cs, code, avail < 15 ? avail : 15,
						   f->insns[k].addr, 1, &in), 1);
			assert_int_equal(di->size, in->size);
			assert_int_equal(di->reloc, patch_reloc__kind(in));
			assert_int_equal(di->quiet, patch_insn__quiet(in));
			flag_liveness__insn_effect(in, &use, &def);
			assert_int_equal(di->flags_use, use);
			assert_int_equal(di->flags_def, def);
			assert_int_equal(!!(di->pad & DINSN_PAD_NOP_INT3),
					 in->id == X86_INS_NOP || in->id == X86_INS_INT3);
			nt = patch_insn__taken(&img, in, taken, 8);
			assert_int_equal(di->ntaken, nt);
			if (nt)
				assert_memory_equal(&p2.dec->taken[di->taken], taken,
						    nt * sizeof(*taken));
			cs_free(in, 1);
			checked++;
		}
	}
	cs_close(&cs);
	assert_true(checked > 1000);

	assert_int_equal(patch_analysis__build(&a1, &p2), 0);
	cfg_program__drop_decoding(&p2);
	assert_null(p2.dec);
	assert_int_equal(patch_analysis__build(&a2, &p2), 0);
	assert_int_equal(a1.entries.n, a2.entries.n);
	assert_memory_equal(a1.entries.addr, a2.entries.addr, a1.entries.n * sizeof(uint64_t));
	assert_int_equal(a1.ngaps, a2.ngaps);
	if (a1.ngaps)
		assert_memory_equal(a1.gaps, a2.gaps, a1.ngaps * sizeof(*a1.gaps));
	assert_memory_equal(&a1.stats, &a2.stats, sizeof(a1.stats));
	for (size_t i = 0; i < p2.nfuncs; i++) {
		const struct cfg_func *f = &p2.funcs[i];
		const struct patch_func *x = &a1.funcs[i], *y = &a2.funcs[i];
		size_t n = f->ninsns;

		assert_int_equal(x->refused, y->refused);
		if (!n)
			continue;
		assert_memory_equal(x->reloc, y->reloc, n);
		assert_memory_equal(x->quiet, y->quiet, n);
		assert_memory_equal(x->count_class, y->count_class, n);
		assert_memory_equal(x->branch_class, y->branch_class, n);
		assert_memory_equal(x->indirect_class, y->indirect_class, n);
		assert_memory_equal(x->fl.before, y->fl.before, n);
		assert_memory_equal(x->fl.block_in, y->fl.block_in, f->nblocks + 1);
		if (f->nedges)
			assert_memory_equal(x->fl.edge, y->fl.edge, f->nedges);
	}
	patch_analysis__release(&a1);
	patch_analysis__release(&a2);
	cfg_program__free(&p2);
}

/* A build with the decoding of an earlier one preloaded (what the decode cache gives `run`)
 * decodes nothing and builds the same CFG; records that cannot be this image's are refused. */
static void test_preloaded_decoding(void **state)
{
	struct cfg_program p2, p3;
	struct cfg_options o = { 0 };
	const struct dinsn *insns;
	const uint64_t *taken;
	struct dinsn *copy;
	size_t n, ntaken;

	(void)state;
	decoder__records(prog.dec, &insns, &n, &taken, &ntaken);
	assert_true(n > 1000);
	assert_int_equal(prog.dec->ndecoded, n);
	o = (struct cfg_options){ .insns = insns, .ninsns = n, .taken = taken, .ntaken = ntaken };
	assert_int_equal(cfg_program__build(&p2, &img, &o), 0);
	assert_non_null(p2.dec);
	assert_int_equal(p2.dec->ndecoded, 0);
	assert_int_equal(p2.dec->n, n);
	assert_int_equal(p2.nfuncs, prog.nfuncs);
	for (size_t i = 0; i < prog.nfuncs; i++) {
		const struct cfg_func *f = &prog.funcs[i], *g = &p2.funcs[i];

		assert_int_equal(f->entry, g->entry);
		assert_int_equal(f->flags, g->flags);
		assert_int_equal(f->nblocks, g->nblocks);
		assert_int_equal(f->nedges, g->nedges);
		assert_int_equal(f->ninsns, g->ninsns);
		if (f->nblocks)
			assert_memory_equal(f->blocks, g->blocks, f->nblocks * sizeof(*f->blocks));
		for (uint32_t k = 0; k < f->nedges; k++) {
			assert_int_equal(f->edges[k].from, g->edges[k].from);
			assert_int_equal(f->edges[k].to, g->edges[k].to);
			assert_int_equal(f->edges[k].kind, g->edges[k].kind);
			assert_int_equal(f->edges[k].flags, g->edges[k].flags);
			assert_int_equal(f->edges[k].target, g->edges[k].target);
		}
		for (uint32_t k = 0; k < f->ninsns; k++)
			assert_int_equal(f->insns[k].addr, g->insns[k].addr);
	}
	cfg_program__free(&p2);

	/* Not this image's: an address outside the code, one given twice, a bad taken index. */
	copy = malloc(n * sizeof(*copy));
	assert_non_null(copy);
	o.insns = copy;
	memcpy(copy, insns, n * sizeof(*copy));
	copy[n / 2].addr = 8;
	assert_int_equal(cfg_program__build(&p3, &img, &o), -EINVAL);
	memcpy(copy, insns, n * sizeof(*copy));
	copy[n / 2] = copy[n / 3];
	assert_int_equal(cfg_program__build(&p3, &img, &o), -EINVAL);
	memcpy(copy, insns, n * sizeof(*copy));
	copy[n / 2].ntaken = 1;
	copy[n / 2].taken = (uint32_t)ntaken;
	assert_int_equal(cfg_program__build(&p3, &img, &o), -EINVAL);
	free(copy);
}

/* The springboard query looks at the used slots near the window only: a long list of slots
 * far away changes nothing, the near one still counts. */
static void test_springboard_many_used(void **state)
{
	size_t fi;
	const struct cfg_func *f = func("pf_short", &fi);
	uint32_t k = insn_of(f, pf_short_inc);
	struct patch_window w;
	uint64_t sb, sb1, sb2, *used = malloc(1001 * sizeof(*used));
	int r1, r2;

	assert_non_null(used);
	assert_int_equal(patch_analysis__count_window(&pa, fi, k, NULL, 0, 0, &w), 0);
	assert_true(w.short_jump);
	assert_int_equal(patch_analysis__springboard(&pa, &w, NULL, 0, NULL, 0, &sb), 0);
	for (size_t u = 0; u < 1000; u++)
		used[u] = u % 2 ? w.start + 4096 + 5 * u : w.start - 4096 - 5 * u;
	assert_int_equal(patch_analysis__springboard(&pa, &w, used, 1000, NULL, 0, &sb1), 0);
	assert_int_equal(sb1, sb);
	used[1000] = sb;
	r1 = patch_analysis__springboard(&pa, &w, used, 1001, NULL, 0, &sb1);
	r2 = patch_analysis__springboard(&pa, &w, &used[1000], 1, NULL, 0, &sb2);
	assert_int_equal(r1, r2);
	if (!r1)
		assert_int_equal(sb1, sb2);
	free(used);
}

/* Whether [A, A + N) meets [LO, HI). */
static bool meets(uint64_t a, uint64_t n, uint64_t lo, uint64_t hi)
{
	return a < hi && lo < a + n;
}

/* A jump over a lock prefix (pf_lock_skip: `je 1f; lock; 1: cmpxchg`): the CFG holds both
 * decodings, each a block of its own ending at the same address (not bad code), and no probe
 * site, patch window, indirect window or springboard gap of the whole program meets the locked
 * instruction's bytes; the plan (chords) measures the pair's edges elsewhere. The pair's
 * addresses come from the fixture's bytes (the lock byte at pf_lock_out), not from the CFG. */
static void test_prefix_pair(void **state)
{
	size_t fi;
	const struct cfg_func *f = func("pf_lock_skip", &fi);
	const uint8_t *lock = (const uint8_t *)pf_lock_out;
	uint64_t out = (uint64_t)(uintptr_t)pf_lock_out - bias, in = out + 1, end = out + 5;
	uint64_t v = 10, sb;
	struct placement_options opt = { .mode = PLACEMENT_CHORDS };
	struct placement pl;
	struct patch_window w;
	int bo, bi;

	/* The fixture: f0 48 0f b1 17 (lock cmpxchg %rdx,(%rdi)), and it runs both ways. */
	assert_int_equal(lock[0], 0xf0);
	assert_int_equal(lock[1], 0x48);
	assert_int_equal(pf_lock_skip(&v, 10, 11, 1), 10);
	assert_int_equal(v, 11);
	assert_int_equal(pf_lock_skip(&v, 11, 12, 0), 11);
	assert_int_equal(v, 12);
	assert_int_equal(pf_lock_skip(&v, 5, 13, 0), 12);
	assert_int_equal(v, 12);

	assert_false(f->flags & CFG_FUNC_BAD_CODE);
	bo = cfg_func__block_at(f, out);
	bi = cfg_func__block_at(f, in);
	assert_true(bo >= 0 && bi == bo + 1);
	assert_true(cfg_func__prefix_pair(f, (uint32_t)bi));
	assert_true(cfg_func__blocks_ok(f));
	assert_int_equal(f->blocks[bo].end, end);
	assert_int_equal(f->blocks[bi].end, end);
	assert_int_equal(cfg_func__block_containing(f, in), bi);
	assert_int_equal(cfg_func__block_containing(f, out), bo);
	assert_true(cfg_func__is_insn_start(f, out) && cfg_func__is_insn_start(f, in));
	assert_true(cfg_func__block_at(f, end) >= 0);
	/* Both flow on to the block at END, and only there. */
	for (int b = bo; b <= bi; b++) {
		assert_int_equal(f->blocks[b].nsucc, 1);
		assert_int_equal(f->blocks[f->edges[f->succ[f->blocks[b].first_succ]].to].start,
				 end);
	}

	for (size_t g = 0; g < prog.nfuncs; g++) {
		const struct cfg_func *h = &prog.funcs[g];

		for (uint32_t k = 0; k < h->ninsns; k++) {
			const struct cfg_insn *ci = &h->insns[k];

			if (meets(ci->addr, ci->size, out, end)) {
				assert_true(ci->addr == out || ci->addr == in);
				assert_int_equal(ci->probe_class, PROBE_NEVER);
				assert_true(ci->overlap);
				assert_int_equal(pa.funcs[g].count_class[k], PATCH_NONE);
				assert_int_equal(pa.funcs[g].branch_class[k], PATCH_NONE);
				assert_int_equal(pa.funcs[g].indirect_class[k], PATCH_NONE);
			}
			for (unsigned o = 0; o < 4; o++) /* every combination of query options */
				if (!patch_analysis__count_window(&pa, g, k, NULL, 0, o, &w))
					assert_false(meets(w.start, w.reloc_len, out, end));
			if (!patch_analysis__branch_window(&pa, g, k, NULL, 0, &w))
				assert_false(meets(w.start, w.reloc_len, out, end));
			if (!patch_analysis__indirect_window(&pa, g, k, NULL, 0, &w))
				assert_false(meets(w.start, w.reloc_len, out, end));
		}
	}
	for (size_t g = 0; g < pa.ngaps; g++)
		assert_false(meets(pa.gaps[g].lo, pa.gaps[g].hi - pa.gaps[g].lo, out, end));
	/* The control that makes the above mean something: a short window of the 4 bytes at IN
	 * would have a springboard in the padding after the ret. */
	w = (struct patch_window){ .start = in, .len = 4, .short_jump = true };
	assert_int_equal(patch_analysis__springboard(&pa, &w, NULL, 0, NULL, 0, &sb), 0);

	site_costs__defaults(&opt.costs);
	assert_int_equal(placement__plan(&pl, &prog, &opt), 0);
	assert_int_equal(pl.funcs[fi].status, PLAN_CHORDS);
	for (size_t k = 0; k < pl.nsites; k++)
		assert_false(pl.sites[k].addr >= out && pl.sites[k].addr < end);
	placement__free(&pl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loop_windows), cmocka_unit_test(test_refused),
		cmocka_unit_test(test_flags),        cmocka_unit_test(test_reloc_kinds),
		cmocka_unit_test(test_insn_effects), cmocka_unit_test(test_apply),
		cmocka_unit_test(test_springboards), cmocka_unit_test(test_springboard_refused),
		cmocka_unit_test(test_indirect),     cmocka_unit_test(test_shared_decoding),
		cmocka_unit_test(test_preloaded_decoding),
		cmocka_unit_test(test_springboard_many_used), cmocka_unit_test(test_prefix_pair),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
