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
 * EP_IDX_NONE in an index field means "do not count".
 */
#ifndef EDGEPROF_BPF_EDGEPROF_H
#define EDGEPROF_BPF_EDGEPROF_H

#define EP_SITE_COUNT 0ULL
#define EP_SITE_BRANCH 1ULL
#define EP_KIND_SHIFT 62
#define EP_CC_SHIFT 56
#define EP_CC_MASK 0x1fULL
#define EP_IDX_BITS 28
#define EP_IDX_MASK ((1ULL << EP_IDX_BITS) - 1)
#define EP_IDX_NONE EP_IDX_MASK
#define EP_MAX_COUNTERS EP_IDX_MASK /* indices 0 .. EP_IDX_MASK - 1 */
#define EP_MAX_PIDS 65536

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

#endif
