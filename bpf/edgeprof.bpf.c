// SPDX-License-Identifier: GPL-2.0
/*
 * edgeprof's in-kernel counting: one uprobe-multi program serves every probe site of a
 * profile. Its attach cookie (bpf/edgeprof.h) says what a hit counts: a counter, or, on a
 * conditional jump, which of two counters according to the condition evaluated from the
 * saved user registers before the jump executes. Only processes in `pids` are counted; the
 * fork tracepoint adds the children of counted processes and the exit tracepoint removes a
 * process when its last thread exits, so the map holds live processes only.
 *
 * A second uprobe-multi program, ep_loop (`edgeprof run --loop-stats`), measures the trip
 * count of every loop entry: a probe in the loop's header block counts one trip of the
 * entry running in that frame of that thread; a probe in each block outside the loop with an
 * edge to its header ends the entry last run in that frame (if any), adding it to the loop's
 * moments (entries, sum, sum of squares). A frame is named by rsp at the function's entry,
 * computed from rsp at the probe plus the instruction's stack depth (in the cookie), so
 * recursive activations of a loop do not mix.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/edgeprof.h"

char LICENSE[] SEC("license") = "GPL";

/* Counter values, added to atomically; user space sets max_entries to the plan's counter
 * count before load. A plain array, not a per-CPU one: the kernel allocates a per-CPU array
 * element by element (62 ms for sqlite3's 80,333 counters, most of which only count in
 * process), and a trap costs far more than the atomic add shared between CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} counters SEC(".maps");

/* Processes (tgids) whose hits are counted. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EP_MAX_PIDS);
	__type(key, u32);
	__type(value, u8);
} pids SEC(".maps");

/* Targets taken by indirect jumps, per site (run-time addresses). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EP_MAX_INDIRECT_TARGETS);
	__type(key, struct ep_indirect_key);
	__type(value, u64);
} indirect SEC(".maps");

/* Trip-count moments per loop (ep_loop); user space sets max_entries to the loop count. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct ep_loop_moments);
} loop_moments SEC(".maps");

/* The trip count so far of the entry of a loop running in a frame of a thread. An entry
 * whose frame was left without passing an entry probe again (return from inside the loop,
 * longjmp, thread exit) stays here until the same frame enters the loop again or user space
 * reads it at the end. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EP_LOOP_MAX_STATES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ep_loop_key);
	__type(value, u64);
} loop_state SEC(".maps");

/* Header executions whose trip count could not be held (loop_state full): the moments of
 * some loop are then not exact (user space also checks them against the edge counts). */
__u64 lost_loop_trips = 0;

/* Indirect-jump hits that could not be recorded (map full): the profile is not exact when
 * this is non-zero. */
__u64 lost_indirect = 0;

/* Children of counted processes that could not be added to `pids` (map full): their hits
 * were lost, so the profile is not exact when this is non-zero. */
__u64 lost_forks = 0;

static __always_inline void count(u64 idx)
{
	u32 key = (u32)idx;
	u64 *v;

	if (idx == EP_IDX_NONE)
		return;
	v = bpf_map_lookup_elem(&counters, &key);
	if (v)
		__sync_fetch_and_add(v, 1);
}

/* Whether the conditional jump with condition CC is taken, given the registers before it. */
static __always_inline bool jump_taken(u64 cc, const struct pt_regs *regs)
{
	u64 f = regs->flags;
	bool cf = f & EP_FLAG_CF, zf = f & EP_FLAG_ZF, sf = f & EP_FLAG_SF;
	bool of = f & EP_FLAG_OF, pf = f & EP_FLAG_PF;
	bool t;

	switch (cc) {
	case 0x10: /* jrcxz */
		return regs->cx == 0;
	case 0x11: /* loop: rcx is decremented first */
		return regs->cx != 1;
	case 0x12: /* loope */
		return regs->cx != 1 && zf;
	case 0x13: /* loopne */
		return regs->cx != 1 && !zf;
	}
	/* x86 cc: an even code tests a condition, the next odd code its negation. */
	switch (cc >> 1) {
	case 0:
		t = of;
		break;
	case 1:
		t = cf;
		break;
	case 2:
		t = zf;
		break;
	case 3:
		t = cf || zf;
		break;
	case 4:
		t = sf;
		break;
	case 5:
		t = pf;
		break;
	case 6:
		t = sf != of;
		break;
	default:
		t = zf || sf != of;
		break;
	}
	return t ^ (cc & 1);
}

/* The general registers of the saved user state by x86 number (0 rax .. 15 r15). The
 * context may only be read at constant offsets, so all of them are copied. */
static __always_inline void user_regs(const struct pt_regs *r, u64 *v)
{
	v[0] = r->ax;
	v[1] = r->cx;
	v[2] = r->dx;
	v[3] = r->bx;
	v[4] = r->sp;
	v[5] = r->bp;
	v[6] = r->si;
	v[7] = r->di;
	v[8] = r->r8;
	v[9] = r->r9;
	v[10] = r->r10;
	v[11] = r->r11;
	v[12] = r->r12;
	v[13] = r->r13;
	v[14] = r->r14;
	v[15] = r->r15;
}

/* An induction variable's sum: add the register's value to the counter, always or when the
 * conditional jump about to execute goes the site's way. */
static __always_inline void accumulate(u64 cookie, const struct pt_regs *ctx)
{
	u64 cc = (cookie >> EP_CC_SHIFT) & EP_CC_MASK, regs[16], *v;
	u32 key = (u32)(cookie & EP_IDX_MASK);

	if (cc != EP_CC_ALWAYS && jump_taken(cc, ctx) != ((cookie >> 55) & 1))
		return;
	user_regs(ctx, regs);
	v = bpf_map_lookup_elem(&counters, &key);
	if (v)
		__sync_fetch_and_add(v, regs[(cookie >> 51) & 15]);
}

/* An indirect jump about to execute: where does it go? Count that (site, target). */
static __always_inline void count_indirect(u64 cookie, const struct pt_regs *ctx)
{
	u64 base = (cookie >> 56) & 31, index = (cookie >> 51) & 31, scale = (cookie >> 49) & 3;
	s32 disp = (s32)(u32)cookie;
	struct ep_indirect_key key = { .site = (u32)(cookie >> 32) & (EP_MAX_INDIRECT_SITES - 1) };
	u64 target, zero = 0, *v, regs[16];

	user_regs(ctx, regs);
	if (cookie & (1ULL << 61)) {
		u64 addr = (u64)(s64)disp;

		if (base != EP_REG_NONE)
			addr += regs[base & 15];
		if (index != EP_REG_NONE)
			addr += regs[index & 15] << scale;
		if (bpf_probe_read_user(&target, sizeof(target), (void *)addr))
			target = 0;
	} else {
		target = regs[base & 15];
	}
	key.target = target;
	v = bpf_map_lookup_elem(&indirect, &key);
	if (!v) {
		bpf_map_update_elem(&indirect, &key, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&indirect, &key);
	}
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		__sync_fetch_and_add(&lost_indirect, 1);
}

SEC("uprobe.multi")
int ep_hit(struct pt_regs *ctx)
{
	u32 tgid = bpf_get_current_pid_tgid() >> 32;
	u64 cookie;

	if (!bpf_map_lookup_elem(&pids, &tgid))
		return 0;
	cookie = bpf_get_attach_cookie(ctx);
	if ((cookie >> EP_KIND_SHIFT) == EP_SITE_COUNT) {
		count(cookie & EP_IDX_MASK);
	} else if ((cookie >> EP_KIND_SHIFT) == EP_SITE_INDIRECT) {
		count_indirect(cookie, ctx);
	} else if ((cookie >> EP_KIND_SHIFT) == EP_SITE_ACCUM) {
		accumulate(cookie, ctx);
	} else if (jump_taken((cookie >> EP_CC_SHIFT) & EP_CC_MASK, ctx)) {
		count(cookie & EP_IDX_MASK);
	} else {
		count((cookie >> EP_IDX_BITS) & EP_IDX_MASK);
	}
	return 0;
}

/* Adds one completed loop entry of TRIPS header executions to loop LOOP's moments. */
static __always_inline void loop_flush(u32 loop, u64 trips)
{
	struct ep_loop_moments *m = bpf_map_lookup_elem(&loop_moments, &loop);
	u64 sq = trips * trips, old;

	if (!m || !trips)
		return;
	__sync_fetch_and_add(&m->entries, 1);
	__sync_fetch_and_add(&m->sum, trips);
	old = __sync_fetch_and_add(&m->sumsq_lo, sq);
	if (old + sq < old)
		__sync_fetch_and_add(&m->sumsq_hi, 1);
}

SEC("uprobe.multi")
int ep_loop(struct pt_regs *ctx)
{
	u64 id = bpf_get_current_pid_tgid(), cookie, *v, one = 1;
	u32 tgid = id >> 32;
	struct ep_loop_key key = {};

	if (!bpf_map_lookup_elem(&pids, &tgid))
		return 0;
	cookie = bpf_get_attach_cookie(ctx);
	key.tid = (u32)id;
	key.loop = (u32)cookie;
	key.frame = ctx->sp + ((cookie >> EP_LOOP_DEPTH_SHIFT) & EP_LOOP_DEPTH_MASK);
	v = bpf_map_lookup_elem(&loop_state, &key);
	if ((cookie >> EP_KIND_SHIFT) == EP_LOOP_ENTER) {
		/* About to enter (or pass by) the loop: the frame's previous entry is over. */
		if (v) {
			loop_flush(key.loop, *v);
			bpf_map_delete_elem(&loop_state, &key);
		}
		return 0;
	}
	if (v)
		*v += 1;
	else if (bpf_map_update_elem(&loop_state, &key, &one, BPF_NOEXIST))
		__sync_fetch_and_add(&lost_loop_trips, 1);
	return 0;
}

/* On entry to a C library function that leaves frames without returning (longjmp,
 * pthread_exit, the C++ unwinder) in a counted process that edgeprof attached to: stop the
 * thread for its tracer with EP_NOTIFY_SIGNAL, which unwinds it there (the tracer of
 * `edgeprof run` uses breakpoints instead; a process attached to gets no byte written). */
SEC("uprobe.multi")
int ep_notify(struct pt_regs *ctx)
{
	u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (bpf_map_lookup_elem(&pids, &tgid))
		bpf_send_signal_thread(EP_NOTIFY_SIGNAL);
	return 0;
}

/* A new process forked by a counted one is counted too; threads share the tgid already. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(ep_fork, struct task_struct *parent, struct task_struct *child)
{
	u32 ptgid = parent->tgid, ctgid = child->tgid;
	u8 one = 1;

	if (child->pid != ctgid || !bpf_map_lookup_elem(&pids, &ptgid))
		return 0;
	if (bpf_map_update_elem(&pids, &ctgid, &one, BPF_ANY))
		__sync_fetch_and_add(&lost_forks, 1);
	return 0;
}

/* The last thread of a process is exiting: forget the process (do_exit has already taken
 * it out of signal->live when this fires). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(ep_exit, struct task_struct *task)
{
	u32 tgid = task->tgid;

	if (BPF_CORE_READ(task, signal, live.counter) == 0)
		bpf_map_delete_elem(&pids, &tgid);
	return 0;
}
