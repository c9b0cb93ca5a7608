/*
 * Types and constants shared by the BPF program (edgeprof.bpf.c) and user space: how a probe
 * site is encoded in its uprobe-multi attach cookie. Only constants and inline encoders here.
 *
 * cookie bits 63..62  kind: EP_SITE_COUNT or EP_SITE_BRANCH
 * EP_SITE_COUNT:   bits 27..0   counter index, incremented on every hit
 * EP_SITE_BRANCH:  bits 60..56  condition (struct cfg_insn.cc: x86 cc 0x0-0xf,
 *                               0x10 jrcxz, 0x11 loop, 0x12 loope, 0x13 loopne)
 *                  bits 55..28  counter of the not-taken edge
 *                  bits 27..0   counter of the taken edge
 * EP_SITE_INDIRECT (an indirect jump through a resolved table): the target is recomputed
 * from the registers and counted per (site, target) in the `indirect` hash map:
 *                  bit 61       the target is loaded from memory at disp(base, index, scale)
 *                  bits 60..56  base register (x86 number 0..15; EP_REG_NONE: none)
 *                  bits 55..51  index register (likewise)
 *                  bits 50..49  log2 of the scale
 *                  bits 48..32  the site's ordinal among indirect sites
 *                  bits 31..0   displacement (signed)
 * EP_SITE_ACCUM (an induction variable's sum, cfg/induction.h): adds a register's value
 *                  bits 60..56  condition as for EP_SITE_BRANCH, or EP_CC_ALWAYS
 *                  bit 55       add when the jump is taken (else when it is not)
 *                  bits 54..51  register (x86 number 0..15)
 *                  bits 27..0   counter the value is added to (wrapping)
 * EP_IDX_NONE in an index field means "do not count".
 *
 * Loop trip counts (`edgeprof run --loop-stats`, program ep_loop, its own cookies):
 *                  bits 63..62  EP_LOOP_ITER (an instruction of the loop's header block) or
 *                               EP_LOOP_ENTER (an instruction of a block outside the loop
 *                               with an edge to its header)
 *                  bits 55..32  stack depth at the instruction: bytes rsp is below its value
 *                               at the function's entry (so rsp + depth names the frame)
 *                  bits 31..0   loop index
 */
#ifndef EDGEPROF_BPF_EDGEPROF_H
#define EDGEPROF_BPF_EDGEPROF_H

#define EP_SITE_COUNT 0ULL
#define EP_SITE_BRANCH 1ULL
#define EP_SITE_INDIRECT 2ULL
#define EP_SITE_ACCUM 3ULL
#define EP_CC_ALWAYS 0x1fULL
#define EP_REG_NONE 31ULL
#define EP_MAX_INDIRECT_SITES (1u << 17)
#define EP_MAX_INDIRECT_TARGETS 262144

/* Key of the `indirect` map: which indirect site jumped where (a run-time address). */
struct ep_indirect_key {
	unsigned int site;
	unsigned int pad;
	unsigned long long target;
};
#define EP_KIND_SHIFT 62
#define EP_CC_SHIFT 56
#define EP_CC_MASK 0x1fULL
#define EP_IDX_BITS 28
#define EP_IDX_MASK ((1ULL << EP_IDX_BITS) - 1)
#define EP_IDX_NONE EP_IDX_MASK
#define EP_MAX_COUNTERS EP_IDX_MASK /* indices 0 .. EP_IDX_MASK - 1 */
#define EP_MAX_PIDS 65536
/* The signal ep_notify sends (see bpf/edgeprof.bpf.c): ignored by default, so a program whose
 * tracer has gone away and that has no handler for it is not disturbed. */
#define EP_NOTIFY_SIGNAL 23 /* SIGURG */

#define EP_LOOP_ITER 0ULL
#define EP_LOOP_ENTER 1ULL
#define EP_LOOP_DEPTH_SHIFT 32
#define EP_LOOP_DEPTH_MASK 0xffffffULL
#define EP_LOOP_MAX_STATES 262144 /* (thread, loop, frame) trip counts held at once */
#define EP_LOOP_MAX_LOOPS (1u << 24)

/* Key of the `loop_state` map: one loop running in one frame of one thread. */
struct ep_loop_key {
	unsigned int tid;
	unsigned int loop;
	unsigned long long frame; /* rsp at the function's entry */
};

/* Per loop, per CPU: completed entries and the moments of their trip counts (the sum of
 * squares as a 128-bit value, lo + 2^64 hi). */
struct ep_loop_moments {
	unsigned long long entries, sum, sumsq_lo, sumsq_hi;
};

/* x86 EFLAGS bits read from pt_regs->flags. */
#define EP_FLAG_CF (1UL << 0)
#define EP_FLAG_PF (1UL << 2)
#define EP_FLAG_ZF (1UL << 6)
#define EP_FLAG_SF (1UL << 7)
#define EP_FLAG_OF (1UL << 11)

static inline unsigned long long ep_cookie_count(unsigned long long idx)
{
	return (EP_SITE_COUNT << EP_KIND_SHIFT) | (idx & EP_IDX_MASK);
}

static inline unsigned long long ep_cookie_branch(unsigned long long cc,
						  unsigned long long taken,
						  unsigned long long not_taken)
{
	return (EP_SITE_BRANCH << EP_KIND_SHIFT) | ((cc & EP_CC_MASK) << EP_CC_SHIFT) |
	       ((not_taken & EP_IDX_MASK) << EP_IDX_BITS) | (taken & EP_IDX_MASK);
}

static inline unsigned long long ep_cookie_accum(unsigned long long cc, int taken, unsigned reg,
						 unsigned long long counter)
{
	return (EP_SITE_ACCUM << EP_KIND_SHIFT) | ((cc & EP_CC_MASK) << EP_CC_SHIFT) |
	       ((unsigned long long)(taken != 0) << 55) | ((unsigned long long)(reg & 15) << 51) |
	       (counter & EP_IDX_MASK);
}

static inline unsigned long long ep_cookie_indirect(unsigned long long ordinal, int mem, int base,
						    int index, unsigned scale_log2, int disp)
{
	unsigned long long b = base < 0 ? EP_REG_NONE : (unsigned long long)base;
	unsigned long long x = index < 0 ? EP_REG_NONE : (unsigned long long)index;

	return (EP_SITE_INDIRECT << EP_KIND_SHIFT) | ((unsigned long long)(mem != 0) << 61) |
	       (b << 56) | (x << 51) | ((unsigned long long)(scale_log2 & 3) << 49) |
	       ((ordinal & (EP_MAX_INDIRECT_SITES - 1)) << 32) | (unsigned int)disp;
}

static inline unsigned long long ep_cookie_loop(unsigned long long kind, unsigned long long depth,
					       unsigned long long loop)
{
	return (kind << EP_KIND_SHIFT) | ((depth & EP_LOOP_DEPTH_MASK) << EP_LOOP_DEPTH_SHIFT) |
	       (loop & 0xffffffffULL);
}

#endif
