/*
 * Hand-written x86-64 fixture functions for the in-process counter tests (see
 * patch_fixtures.c for each one's shape).
 */
#ifndef EDGEPROF_TESTS_PATCH_FIXTURES_H
#define EDGEPROF_TESTS_PATCH_FIXTURES_H

#include <stdint.h>

extern uint64_t pf_data;

uint32_t pf_loop(uint32_t n);
uint64_t pf_rip(uint64_t x);
uint64_t pf_retaddr(void);
uint64_t pf_call(uint32_t x);
uint64_t pf_callind(uint32_t x, uint64_t (*fn)(void));
int pf_flags(int a, int b);
int pf_flags2(int a, int b);
int pf_short(int x);
int pf_mid(void);
int pf_mid_jumper(void);
int pf_carry(unsigned a, unsigned b);
int pf_shift(unsigned x, unsigned c);
uint64_t pf_tail(int x);
int pf_redzone(int a, int b);
int pf_sb_intra(int x);
int pf_sb_jump(int x);
int pf_sb_sym(int x);
int pf_sb_far(int x);
int pf_sb_tab(int x);
int pf_switch(unsigned x, int y);
int pf_switch_loud(unsigned x);
uint64_t pf_lock_skip(uint64_t *p, uint64_t old, uint64_t new_val, int lock);

int pf_c_helper(int x);
int pf_c_work(const int *v, int n);

/* Labels inside them (addresses only). */
extern const char pf_loop_body[], pf_call_ret[], pf_callind_ret[], pf_flags_b[],
	pf_short_inc[], pf_mid_in[], pf_sys[], pf_callmid[], pf_carry_b[],
	pf_shift_shl[], pf_tail_jmp[], pf_redzone_b[], pf_sb_intra_jne[], pf_sb_jump_inc[],
	pf_sb_sym_inc[], pf_sb_far_inc[], pf_sb_tab_inc[], pf_sb_symlab[], pf_switch_load[],
	pf_lock_out[];

#endif
