/*
 * The in-process counting backend (count.h): sites of class patch or patch-flags are counted
 * by code written into the target process itself, never into a file. For each profiled object
 * a trampoline region and a counter region are mapped into the target within rel32 reach of
 * its code (user/count/patcher.c), each site's window of whole instructions is overwritten with
 * a jmp rel32 to a trampoline that increments the site's counter and runs the displaced
 * instructions (user/count/patch_sites.c), and edgeprof reads the counters from its own
 * mapping of the same memory. Increments are plain while the process has one thread and no
 * child shares the counters, and locked from the first clone or fork on: exact either way.
 * At the end of an attach window every byte goes back and the regions are unmapped.
 */
#include "user/count/count.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <unistd.h>

#include "cfg/patch_window.h"
#include "cfg/snapshot.h"
#include "cfg/sort.h"
#include "user/count/patch_backend.h"
#include "user/count/patch_sites.h"
#include "user/count/patcher.h"
#include "user/proc/threads.h"
#include "user/util/log.h"

/* A window a check (or the reservation, patch_sites__reserve) gave a site: the same site gets
 * it again in the next check when no held thread is avoided in either (a window depends on
 * nothing else but the springboards given out, checked again). */
struct win_memo {
	uint64_t addr, start, sb;
	uint32_t func;
	uint8_t kind, len;
};

/* The most objects a backend serves (the tracer's limit). */
#define PATCH_MAX_OBJECTS 16

/* One object's part. */
struct patch_obj {
	bool used;
	uint32_t counter_base, capacity;
	struct patch_sites *ps;   /* its analysis (patch classes set in its CFG) */
	uint64_t *win_start;      /* per site of the plan checked last: its window */
	uint8_t *win_len;         /* (0: not patched) */
	uint64_t *win_sb;         /* and its springboard (ELF vaddr, 0: none) */
	size_t nwin;
	int region;               /* the patcher's region, -1 before attach */
	struct patch_blob *blobs; /* installed */
	size_t nblobs;
	struct probe_site *ind;   /* the indirect sites installed (their slots fold at read) */
	size_t nind;
	bool reserved; /* springboards reserved (patch_backend__settle) */
	struct win_memo *memo; /* the windows the last check gave (sorted by address) */
	size_t nmemo;
};

struct patch_backend {
	struct patcher *pt;
	int pid;
	bool attach_mode; /* a running process: patches come out at uncount_pid */
	bool atomic;
	bool removed;
	struct patch_obj objs[PATCH_MAX_OBJECTS];
	struct patch_stats stats;
	void (*unmatched_fn)(void *ctx, unsigned index, uint32_t func, uint64_t hits);
	void *unmatched_ctx;
};

void patch_backend__on_unmatched(struct patch_backend *b,
				 void (*fn)(void *ctx, unsigned index, uint32_t func,
					    uint64_t hits),
				 void *ctx)
{
	b->unmatched_fn = fn;
	b->unmatched_ctx = ctx;
}

int patch_backend__new(struct patch_backend **out, bool attach_mode)
{
	struct patch_backend *b = calloc(1, sizeof(*b));

	if (!b) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	b->attach_mode = attach_mode;
	for (size_t k = 0; k < PATCH_MAX_OBJECTS; k++)
		b->objs[k].region = -1;
	*out = b;
	return 0;
}

const struct patch_stats *patch_backend__stats(const struct patch_backend *b)
{
	return &b->stats;
}

int patch_backend__classify(struct patch_backend *b, unsigned index, struct cfg_program *prog)
{
	struct patch_obj *po;

	if (index >= PATCH_MAX_OBJECTS) {
		pr_err("too many objects for in-process counters");
		return -EINVAL;
	}
	po = &b->objs[index];
	if (po->ps)
		return 0;
	return patch_sites__open(&po->ps, prog);
}

static bool patch_counts_class(unsigned cls)
{
	return probe_class__in_process(cls);
}

/* The run-time range [*LO, *HI) of O's executable segments. */
static void code_range(const struct count_object *o, uint64_t *lo, uint64_t *hi)
{
	*lo = UINT64_MAX;
	*hi = 0;
	for (size_t i = 0; i < o->img->nsegs; i++) {
		const struct elf_segment *sg = &o->img->segs[i];

		if (!(sg->flags & 1 /* PF_X */))
			continue;
		if (sg->vaddr + o->bias < *lo)
			*lo = sg->vaddr + o->bias;
		if (sg->vaddr + sg->memsz + o->bias > *hi)
			*hi = sg->vaddr + sg->memsz + o->bias;
	}
}

/* Makes site S of O unpatchable in O's CFG (the plan will count it otherwise). */
static void refuse(struct count_object *o, const struct probe_site *s)
{
	struct cfg_func *f = &o->prog->funcs[s->func];
	int blk = cfg_func__block_containing(f, s->addr);

	for (uint32_t k = 0; blk >= 0 && k < f->blocks[blk].ninsns; k++) {
		struct cfg_insn *in = &f->insns[f->blocks[blk].first_insn + k];

		if (in->addr != s->addr)
			continue;
		if (s->kind == SITE_BRANCH)
			in->patch_branch = 0;
		else if (s->kind == SITE_INDIRECT)
			in->patch_indirect = 0;
		else
			in->patch_count = 0;
	}
}

/* Resume points of the held threads, as ELF vaddrs of the object. */
struct points {
	uint64_t *v;
	size_t n, cap;
	uint64_t bias, lo, hi;
	bool oom;
};

static void add_point(void *ctx, uint64_t addr)
{
	struct points *p = ctx;

	if (addr < p->lo || addr >= p->hi)
		return;
	if (p->n == p->cap) {
		uint64_t *v = realloc(p->v, (p->cap = p->cap ? 2 * p->cap : 256) * sizeof(*v));

		if (!v) {
			p->oom = true;
			return;
		}
		p->v = v;
	}
	p->v[p->n++] = addr - p->bias;
}

/* The resume points of every thread of PID in O's code, sorted, into *PTS. */
static int held_points(const struct count_object *o, int pid, struct points *pts)
{
	int *tids = NULL;
	size_t ntids = 0;
	int err;

	pts->bias = o->bias;
	code_range(o, &pts->lo, &pts->hi);
	err = proc_threads__list(pid, &tids, &ntids);
	if (!err)
		err = proc_threads__resume_points(pid, tids, ntids, pts->lo, pts->hi, add_point,
						  pts);
	free(tids);
	if (!err && pts->oom) {
		pr_err("out of memory");
		err = -ENOMEM;
	}
	if (!err)
		sort__u64(pts->v, pts->n);
	return err;
}

/* O's code as process PID has it now (its text may differ from the file: a uprobe of any
 * session on the same file is an int3 in every process that maps it). BUF NULL when it
 * cannot be read: then nothing is checked. */
struct code_copy {
	uint8_t *buf;
	uint64_t lo, hi; /* run-time addresses */
};

static void code_image(const struct count_object *o, int pid, struct code_copy *c)
{
	char path[64];
	int fd;
	ssize_t r;

	c->buf = NULL;
	code_range(o, &c->lo, &c->hi);
	if (c->hi <= c->lo || c->hi - c->lo > (1ULL << 31))
		return;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	c->buf = malloc(c->hi - c->lo);
	if (c->buf) {
		size_t done = 0;

		while (done < c->hi - c->lo) {
			r = pread(fd, c->buf + done, c->hi - c->lo - done, (off_t)(c->lo + done));
			if (r <= 0)
				break;
			done += (size_t)r;
		}
		if (done < c->hi - c->lo) {
			free(c->buf);
			c->buf = NULL;
		}
	}
	close(fd);
}

/* Are the LEN bytes at ELF vaddr START in the process (C) the file's? True when unknown. A
 * window whose bytes differ (another session's uprobe: an int3) cannot be patched: the
 * patcher would find bytes it does not expect and stop. */
static bool same_as_file(const struct count_object *o, const struct code_copy *c,
			 uint64_t start, uint8_t len, size_t *nforeign)
{
	const uint8_t *file;
	size_t avail;
	uint64_t at = start + o->bias;

	if (!c->buf || at < c->lo || at + len > c->hi)
		return true;
	file = elf_image__code(o->img, start, &avail);
	if (!file || avail < len || memcmp(file, c->buf + (at - c->lo), len) == 0)
		return true;
	++*nforeign;
	return false;
}

/* Whether the install can generate S's code over the window a check chose around held
 * threads (one chosen with none always is): else S is refused, not left to stop the attach. */
static bool emit_ok(const struct patch_obj *po, const struct probe_site *s, uint64_t start,
		    uint8_t len, uint64_t sb)
{
	if (patch_sites__emit_accepts(po->ps, s, start, len, sb))
		return true;
	pr_debug("site %#llx: its window [%#llx, +%u) around held threads cannot be generated: "
		 "not patched",
		 (unsigned long long)s->addr, (unsigned long long)start, len);
	return false;
}

/* Gives every site of O's plan a window, or refuses it (its class dropped, its function set
 * in REDO when not NULL): in process PID, or with PID 0 from the binary alone (no held thread,
 * no foreign byte can be known then). */
static int check_sites(struct patch_backend *b, struct count_object *o, int pid, size_t *nrefused,
		       bool *redo)
{
	struct code_copy mem = { 0 };
	size_t nforeign = 0;
	struct patch_obj *po;
	const struct placement *pl = o->pl;
	struct points pts = { 0 };
	uint64_t *taken = NULL; /* addresses no window may hold: uprobe sites, breakpoints */
	size_t ntaken = 0, prev = SIZE_MAX, m = 0, nmemo = 0;
	struct win_memo *memo = NULL;
	int err = 0;

	*nrefused = 0;
	if (o->index >= PATCH_MAX_OBJECTS || !b->objs[o->index].ps)
		return 0; /* not classified: no site of this object has a patch class */
	po = &b->objs[o->index];
	free(po->win_start);
	free(po->win_len);
	free(po->win_sb);
	po->win_start = calloc(pl->nsites + 1, sizeof(*po->win_start));
	po->win_len = calloc(pl->nsites + 1, sizeof(*po->win_len));
	po->win_sb = calloc(pl->nsites + 1, sizeof(*po->win_sb));
	po->nwin = pl->nsites;
	taken = malloc((pl->nsites + o->navoid + 1) * sizeof(*taken));
	memo = malloc((pl->nsites + 1) * sizeof(*memo));
	if (!po->win_start || !po->win_len || !po->win_sb || !taken || !memo) {
		free(taken);
		free(memo);
		pr_err("out of memory");
		return -ENOMEM;
	}
	if (pid > 0 && b->attach_mode && (err = held_points(o, pid, &pts)))
		goto out;
	if (pid > 0 && !o->unmapped)
		code_image(o, pid, &mem);
	for (size_t i = 0; i < pl->nsites; i++)
		if (!patch_counts_class(pl->sites[i].probe_class))
			taken[ntaken++] = pl->sites[i].addr;
	for (size_t i = 0; i < o->navoid; i++)
		taken[ntaken++] = o->avoid[i];
	sort__u64(taken, ntaken);
	patch_sites__reset_springboards(po->ps);
	/* Sites are sorted by address, windows of branch sites may reach back before theirs:
	 * a window that overlaps the last one kept is refused. */
	for (size_t i = 0; i < pl->nsites; i++) {
		const struct probe_site *s = &pl->sites[i];
		uint64_t start, end, sb;
		uint8_t len;

		if (!patch_counts_class(s->probe_class))
			continue;
		while (m < po->nmemo && po->memo[m].addr < s->addr)
			m++;
		if (!pts.n && m < po->nmemo && po->memo[m].addr == s->addr &&
		    po->memo[m].kind == s->kind && po->memo[m].func == s->func &&
		    (!po->memo[m].sb || patch_sites__slot_free(po->ps, po->memo[m].sb))) {
			start = po->memo[m].start;
			len = po->memo[m].len;
			sb = po->memo[m].sb;
		} else if (patch_sites__window(po->ps, s, pts.v, pts.n, NULL, 0, &start, &len,
					       &sb)) {
			goto refused;
		}
		/* An indirect window relocates up to its jump: no other site may lie in there. */
		if ((end = patch_sites__span_end(po->ps, s, start, len),
		     sort__any_in_u64(taken, ntaken, start, end)) ||
		    (sb && sort__any_in_u64(taken, ntaken, sb, sb + 5)) ||
		    (s->kind == SITE_INDIRECT && i > 0 && pl->sites[i - 1].addr >= start) ||
		    !same_as_file(o, &mem, start, (uint8_t)(end - start), &nforeign) ||
		    (sb && !same_as_file(o, &mem, sb, 5, &nforeign)) ||
		    (prev != SIZE_MAX && po->win_start[prev] + po->win_len[prev] > start) ||
		    (i + 1 < pl->nsites && pl->sites[i + 1].addr < start + len &&
		     pl->sites[i + 1].addr > start) ||
		    (pts.n && !emit_ok(po, s, start, len, sb))) {
		refused:
			refuse(o, s);
			if (redo)
				redo[s->func] = true;
			++*nrefused;
			continue;
		}
		po->win_start[i] = start;
		po->win_len[i] = len;
		po->win_sb[i] = sb;
		if (sb)
			patch_sites__take(po->ps, sb);
		prev = i;
		memo[nmemo++] = (struct win_memo){.addr = s->addr,
						  .start = start,
						  .sb = sb,
						  .func = s->func,
						  .kind = s->kind,
						  .len = len};
	}
	free(po->memo);
	po->memo = NULL;
	po->nmemo = 0;
	if (!pts.n) { /* windows made around held threads are not kept */
		po->memo = memo;
		po->nmemo = nmemo;
		memo = NULL;
	}
	if (nforeign)
		pr_warn("process %d: %zu patch sites of '%s' hold bytes that differ from the file "
			"(another tool's breakpoints, e.g. uprobes of another session on the same "
			"file): counted without patching them",
			pid, nforeign, o->path);
out:
	free(memo);
	free(mem.buf);
	free(pts.v);
	free(taken);
	return err;
}

static int patch_check(void *be, struct count_object *o, int pid, size_t *nrefused)
{
	return check_sites(be, o, pid, nrefused, NULL);
}

/* Keeps a window patch_sites__reserve saw as the next check's (CTX the patch_obj, its memo
 * room for every site of the plan). */
static void memo_seen(void *ctx, const struct probe_site *s, uint64_t start, uint8_t len,
		      uint64_t sb)
{
	struct patch_obj *po = ctx;

	po->memo[po->nmemo++] = (struct win_memo){
	    .addr = s->addr, .start = start, .sb = sb, .func = s->func, .kind = s->kind, .len = len};
}

int patch_backend__settle(struct patch_backend *b, struct count_object *o, bool *redo,
			  size_t *nrefused)
{
	struct patch_obj *po;
	size_t ndropped = 0;
	int err;

	*nrefused = 0;
	if (o->index >= PATCH_MAX_OBJECTS || !b->objs[o->index].ps)
		return 0;
	po = &b->objs[o->index];
	if (!po->reserved) {
		/* The windows the reservation computes are those the check would. */
		free(po->memo);
		po->nmemo = 0;
		po->memo = malloc((o->pl->nsites + 1) * sizeof(*po->memo));
		err = po->memo ? patch_sites__reserve(po->ps, o->pl, redo, &ndropped, memo_seen, po)
			       : -ENOMEM;
		if (err) {
			pr_err("out of memory");
			return err;
		}
		po->reserved = true;
		if (ndropped) {
			*nrefused = ndropped;
			return 0;
		}
	}
	return check_sites(b, o, 0, nrefused, redo);
}

/* The bytes window I of PO (checked for plan PL) writes over or relocates, and its
 * springboard's: (lo, hi) pairs into R; returns how many (0 when I is not patched). */
static size_t window_ranges(const struct patch_obj *po, const struct placement *pl, size_t i,
			    uint64_t r[4])
{
	size_t n = 0;

	if (!po->win_len[i])
		return 0;
	r[2 * n] = po->win_start[i];
	r[2 * n++ + 1] =
	    patch_sites__span_end(po->ps, &pl->sites[i], po->win_start[i], po->win_len[i]);
	if (po->win_sb[i]) {
		r[2 * n] = po->win_sb[i];
		r[2 * n++ + 1] = po->win_sb[i] + PATCH_SPRING_LEN;
	}
	return n;
}

bool patch_backend__written(const struct patch_backend *b, unsigned index,
			    const struct placement *pl, uint64_t vaddr)
{
	const struct patch_obj *po = index < PATCH_MAX_OBJECTS ? &b->objs[index] : NULL;
	uint64_t r[4];

	for (size_t i = 0; po && po->ps && i < po->nwin && i < pl->nsites; i++)
		for (size_t k = window_ranges(po, pl, i, r); k-- > 0;)
			if (r[2 * k] <= vaddr && vaddr < r[2 * k + 1])
				return true;
	return false;
}

int patch_backend__before_replan(struct patch_backend *b, unsigned index, const bool *redo)
{
	struct patch_obj *po = index < PATCH_MAX_OBJECTS ? &b->objs[index] : NULL;
	int err;

	if (!po || !po->ps || !po->reserved)
		return 0;
	err = patch_sites__reserve_funcs(po->ps, redo);
	if (err)
		pr_err("out of memory");
	return err;
}

/* How many threads process PID has (1 when it cannot tell). */
static size_t thread_count(int pid)
{
	int *tids = NULL;
	size_t n = 0;

	if (proc_threads__list(pid, &tids, &n))
		return 1;
	free(tids);
	return n;
}

/* What the trampolines of one object may copy (patch_sites.h, struct patch_conts). */
struct conts {
	struct patch_conts pc;
	struct code_copy mem;
	const struct count_object *o;
	uint64_t *stop, *lo, *hi;
	uint64_t *rsite, *rtramp; /* window starts and their trampolines (conts_shortcuts) */
	size_t nredirect;
};

static bool conts_bytes_ok(void *ctx, uint64_t vaddr, uint8_t len)
{
	struct conts *c = ctx;
	size_t none = 0;

	return same_as_file(c->o, &c->mem, vaddr, len, &none);
}

/* Sorts the N (key, value) PAIRS by key and splits them into KEYS and VALUES (N each). */
static void split_sorted(uint64_t *pairs, size_t n, uint64_t *keys, uint64_t *values)
{
	sort__by_key_u64(pairs, n, 2 * sizeof(*pairs), 0, false);
	for (size_t i = 0; i < n; i++) {
		keys[i] = pairs[2 * i];
		values[i] = pairs[2 * i + 1];
	}
}

/* Fills *C for O's checked windows in process PID: every site and avoided point a stop, every
 * window and springboard a range written over, the bytes compared with the process's. Leaves
 * C->pc.ctx NULL (no continuations) when EDGEPROF_NO_CONTINUATIONS is set (to measure what
 * they save). Returns 0 or -ENOMEM. */
static int conts_make(const struct count_object *o, const struct patch_obj *po, int pid,
		      struct conts *c)
{
	const struct placement *pl = o->pl;
	const char *env = getenv("EDGEPROF_NO_CONTINUATIONS");
	uint64_t *pairs;
	size_t ns = 0, nr = 0;

	if (env && *env && strcmp(env, "0"))
		return 0;
	c->o = o;
	c->stop = malloc((pl->nsites + o->navoid + 1) * sizeof(*c->stop));
	pairs = malloc((4 * po->nwin + 2) * sizeof(*pairs));
	c->lo = malloc((2 * po->nwin + 1) * sizeof(*c->lo));
	c->hi = malloc((2 * po->nwin + 1) * sizeof(*c->hi));
	if (!c->stop || !pairs || !c->lo || !c->hi) {
		free(pairs);
		pr_err("out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < pl->nsites; i++)
		c->stop[ns++] = pl->sites[i].addr;
	for (size_t i = 0; i < o->navoid; i++)
		c->stop[ns++] = o->avoid[i];
	sort__u64(c->stop, ns);
	for (size_t i = 0; i < po->nwin && i < pl->nsites; i++)
		nr += window_ranges(po, pl, i, pairs + 2 * nr);
	split_sorted(pairs, nr, c->lo, c->hi);
	free(pairs);
	code_image(o, pid, &c->mem);
	c->pc = (struct patch_conts){.stop = c->stop, .nstop = ns, .lo = c->lo, .hi = c->hi,
				     .nranges = nr, .bytes_ok = conts_bytes_ok, .ctx = c};
	return 0;
}

/* Sets C's jump shortcuts from the N trampolines BLOBS made for O's windows (PO, plan PL).
 * Returns 0 or -ENOMEM (then none). */
static int conts_shortcuts(struct conts *c, const struct placement *pl, const struct patch_obj *po,
			   uint64_t bias, const struct patch_blob *blobs, size_t n)
{
	uint64_t *pairs = malloc((2 * n + 2) * sizeof(*pairs));
	size_t k = 0;

	c->rsite = malloc((n + 1) * sizeof(*c->rsite));
	c->rtramp = malloc((n + 1) * sizeof(*c->rtramp));
	if (!pairs || !c->rsite || !c->rtramp) {
		free(pairs);
		return -ENOMEM;
	}
	for (size_t i = 0, j = 0; i < pl->nsites && i < po->nwin && j < n; i++) {
		if (!po->win_len[i])
			continue;
		pairs[2 * k] = po->win_start[i] + bias;
		pairs[2 * k++ + 1] = blobs[j++].tramp;
	}
	split_sorted(pairs, k, c->rsite, c->rtramp);
	free(pairs);
	c->nredirect = k;
	return 0;
}

static void conts_release(struct conts *c)
{
	free(c->rsite);
	free(c->rtramp);
	free(c->stop);
	free(c->lo);
	free(c->hi);
	free(c->mem.buf);
	memset(c, 0, sizeof(*c));
}

/* One thread's share of an install's trampolines: the windows of plan sites [FIRST, END),
 * made one after the other into BLOBS from index J, at region offsets from OFF up to LIMIT. */
struct emit_share {
	const struct count_object *o;
	const struct patch_obj *po;
	const struct patcher_region *rg;
	const struct patch_conts *pc;
	bool atomic;
	size_t first, end, j;
	struct patch_blob *blobs;
	uint64_t off, limit;
	uint64_t failed; /* the site that could not be made, when err */
	int err;
};

static void *emit_share_run(void *arg)
{
	struct emit_share *sh = arg;
	const struct placement *pl = sh->o->pl;
	const struct patch_obj *po = sh->po;

	for (size_t i = sh->first, j = sh->j; i < sh->end && !sh->err; i++) {
		if (i >= po->nwin || !po->win_len[i])
			continue;
		if (sh->off + TRAMP_MAX_LEN > sh->limit) {
			sh->err = -ENOSPC;
			break;
		}
		sh->err = patch_sites__emit(po->ps, &pl->sites[i], po->win_start[i], po->win_len[i],
					    po->win_sb[i], sh->o->bias, sh->rg->tramp_base + sh->off,
					    sh->rg->counters_base, sh->atomic, sh->pc, &sh->blobs[j]);
		if (sh->err) {
			sh->failed = pl->sites[i].addr;
			break;
		}
		sh->off += (sh->blobs[j].tramp_len + 15) & ~15u;
		j++;
	}
	trampoline__thread_done();
	return NULL;
}

/* Below this many windows one thread makes them all (starting a second costs ~0.1 ms; low
 * enough that the test programs make their trampolines on two threads too). */
#define EMIT_SPLIT_MIN 64

/* Makes the trampolines of O's N windows (PO) into BLOBS, in region RG: the first half of the
 * windows on this thread from the region's start, the second half on another thread from the
 * middle of the region (each half has room for its longest trampolines), while the target is
 * held and the machine's other core would idle. *USED gets the bytes made. Returns 0, or
 * -ENOSPC or a patch_sites__emit error (both reported). */
static int emit_all(const struct count_object *o, const struct patch_obj *po,
		    const struct patcher_region *rg, bool atomic, const struct patch_conts *pc,
		    struct patch_blob *blobs, size_t n, uint64_t *used)
{
	const uint64_t slot = (TRAMP_MAX_LEN + 15) & ~15u;
	const size_t nshares = n >= EMIT_SPLIT_MIN ? 2 : 1;
	size_t mid = o->pl->nsites;
	struct emit_share sh[2];
	pthread_t worker;
	bool threaded = false;
	int err = 0;

	if (nshares == 2) /* the plan index of the window numbered n / 2 */
		for (size_t i = 0, j = 0; i < o->pl->nsites && i < po->nwin; i++)
			if (po->win_len[i] && j++ == n / 2) {
				mid = i;
				break;
			}
	sh[0] = (struct emit_share){ .o = o, .po = po, .rg = rg, .pc = pc, .atomic = atomic,
				     .first = 0, .end = mid, .blobs = blobs,
				     .limit = nshares == 2 ? (n / 2) * slot : rg->tramp_size };
	if (sh[0].limit > rg->tramp_size)
		sh[0].limit = rg->tramp_size;
	sh[1] = sh[0];
	sh[1].first = mid;
	sh[1].end = o->pl->nsites;
	sh[1].j = n / 2;
	sh[1].off = sh[0].limit;
	sh[1].limit = rg->tramp_size;
	if (nshares == 2)
		threaded = pthread_create(&worker, NULL, emit_share_run, &sh[1]) == 0;
	emit_share_run(&sh[0]);
	if (threaded)
		pthread_join(worker, NULL);
	else if (nshares == 2)
		emit_share_run(&sh[1]);
	*used = sh[0].off + (nshares == 2 ? sh[1].off - sh[0].limit : 0);
	for (size_t k = 0; k < nshares && !err; k++) {
		err = sh[k].err;
		if (err == -ENOSPC)
			pr_err("'%s': the trampoline region is too small", o->path);
		else if (err)
			pr_err("'%s': cannot generate the counter at %#llx", o->path,
			       (unsigned long long)sh[k].failed);
	}
	return err;
}

static int patch_attach(void *be, struct count_object *o, int pid, size_t *nrefused)
{
	struct patch_backend *b = be;
	struct patch_obj *po;
	const struct placement *pl = o->pl;
	struct patcher_region reg;
	struct patch_blob *blobs;
	struct conts cs = { 0 };
	size_t n = 0, nsb = 0, ncopies = 0, nshort = 0;
	uint64_t lo, hi, cap, off;
	int err = 0, r;

	*nrefused = 0;
	if (o->index >= PATCH_MAX_OBJECTS || !b->objs[o->index].ps || o->unmapped)
		return 0; /* unmapped: installed once mapped (the windows checked are kept) */
	po = &b->objs[o->index];
	for (size_t i = 0; i < pl->nsites && i < po->nwin; i++)
		n += po->win_len[i] != 0;
	if (!n)
		return 0;
	if (!b->pt) {
		err = patcher__open(&b->pt, pid, pid);
		if (err)
			return err;
		b->pid = pid;
		if (b->attach_mode && thread_count(pid) > 1) {
			patcher__set_atomic(b->pt);
			b->atomic = true;
		}
	}
	blobs = calloc(n, sizeof(*blobs));
	if (!blobs) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	code_range(o, &lo, &hi);
	patch_sites__place_slots(po->ps, o->capacity);
	/* Room for the longest trampoline at every site (only the pages written are ever
	 * backed): the region is mapped first and each trampoline made once, in place, right
	 * after the one before. */
	cap = n * (uint64_t)((TRAMP_MAX_LEN + 15) & ~15);
	if (cap > UINT32_MAX / 2) {
		pr_err("'%s': too many sites for one trampoline region", o->path);
		err = -ENOSPC;
	}
	if (!err) {
		r = po->region >= 0 ? po->region
				    : patcher__add_region(b->pt, lo, hi,
							  o->capacity + patch_sites__nslots(po->ps),
							  (uint32_t)cap, &reg);
		if (r < 0)
			err = r;
		else
			po->region = r;
	}
	off = 0;
	if (!err)
		err = conts_make(o, po, pid, &cs);
	if (!err) {
		const struct patcher_region *rg = patcher__region(b->pt, (size_t)po->region);

		err = emit_all(o, po, rg, b->atomic, cs.pc.ctx ? &cs.pc : NULL, blobs, n, &off);
		/* Jump shortcuts, now that every trampoline's place is known: a jump to another
		 * window's start goes straight to its trampoline. */
		if (!err && cs.pc.ctx && !conts_shortcuts(&cs, pl, po, o->bias, blobs, n))
			for (size_t j = 0; j < n; j++)
				patch_blob__shortcut(&blobs[j], cs.rsite, cs.rtramp, cs.nredirect);
	}
	cap = off;
	conts_release(&cs);
	if (!err)
		err = patcher__install(b->pt, blobs, n);
	if (err) {
		for (size_t j = 0; j < n; j++)
			patch_blob__release(&blobs[j]);
		free(blobs);
		return err;
	}
	free(po->ind);
	po->ind = calloc(n + 1, sizeof(*po->ind));
	po->nind = 0;
	if (!po->ind) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < pl->nsites && i < po->nwin; i++)
		if (po->win_len[i] && pl->sites[i].kind == SITE_INDIRECT)
			po->ind[po->nind++] = pl->sites[i];
	po->used = true;
	po->blobs = blobs;
	po->nblobs = n;
	po->counter_base = o->counter_base;
	po->capacity = o->capacity;
	b->stats.sites += n;
	b->stats.tramp_bytes += cap;
	for (size_t j = 0; j < n; j++) {
		nsb += blobs[j].sb != 0;
		ncopies += blobs[j].nconts != 0;
		nshort += blobs[j].nshortcuts != 0;
	}
	b->stats.springboards += nsb;
	b->stats.with_copies += ncopies;
	b->stats.with_shortcuts += nshort;
	b->stats.indirect += po->nind;
	for (size_t i = 0; i < pl->nsites; i++)
		if (i < po->nwin && po->win_len[i] && pl->sites[i].probe_class == PROBE_PATCH_FLAGS)
			b->stats.flag_saving++;
	pr_info("'%s': %zu sites counted in process (%zu through springboards, %zu bytes of "
		"trampolines, %zu running copies of the code after their window, %zu jumping "
		"straight to another's)",
		o->path, n, nsb, (size_t)cap, ncopies, nshort);
	return 0;
}

static int patch_read(void *be, uint64_t *counters)
{
	struct patch_backend *b = be;
	size_t total = 0;
	uint64_t *v;

	if (!b->pt)
		return 0;
	for (size_t r = 0; r < patcher__nregions(b->pt); r++)
		total += patcher__region(b->pt, r)->ncounters;
	v = calloc(total + 1, sizeof(*v));
	if (!v) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	patcher__read(b->pt, v, total);
	for (size_t k = 0; k < PATCH_MAX_OBJECTS; k++) {
		const struct patch_obj *po = &b->objs[k];
		const struct patcher_region *rg;

		if (!po->used || po->region < 0)
			continue;
		rg = patcher__region(b->pt, (size_t)po->region);
		for (uint32_t i = 0; i < rg->ncounters && i < po->capacity; i++)
			counters[po->counter_base + i] += v[rg->first_counter + i];
		/* Indirect sites: their slots (after the plan's counters) per out-edge. */
		for (size_t j = 0; j < po->nind; j++) {
			uint64_t un = 0;

			patch_sites__fold(po->ps, &po->ind[j], v + rg->first_counter,
					  counters + po->counter_base, &un);
			if (un && b->unmatched_fn)
				b->unmatched_fn(b->unmatched_ctx, (unsigned)k, po->ind[j].func, un);
		}
	}
	free(v);
	return 0;
}

/* The end of an attach window: every original byte back, the regions unmapped (but those a
 * held thread's stack still points into, in a trampoline or at a springboard). */
static int patch_uncount(void *be, int pid)
{
	struct patch_backend *b = be;
	struct points pts = { 0 };
	int *tids = NULL;
	size_t ntids = 0;
	int err, kept;

	if (!b->pt || !b->attach_mode || b->removed)
		return 0;
	err = proc_threads__list(pid, &tids, &ntids);
	for (size_t r = 0; !err && r < patcher__nregions(b->pt); r++) {
		const struct patcher_region *rg = patcher__region(b->pt, r);

		pts.lo = rg->tramp_base;
		pts.hi = rg->tramp_base + rg->tramp_size;
		err = proc_threads__resume_points(pid, tids, ntids, pts.lo, pts.hi, add_point, &pts);
	}
	/* And those at a springboard (a signal frame saved right after a site's jmp rel8). */
	for (size_t k = 0; !err && k < PATCH_MAX_OBJECTS; k++) {
		const struct patch_obj *po = &b->objs[k];

		pts.lo = UINT64_MAX;
		pts.hi = 0;
		for (size_t j = 0; j < po->nblobs; j++) {
			if (!po->blobs[j].sb)
				continue;
			if (po->blobs[j].sb < pts.lo)
				pts.lo = po->blobs[j].sb;
			if (po->blobs[j].sb + 5 > pts.hi)
				pts.hi = po->blobs[j].sb + 5;
		}
		if (pts.lo < pts.hi)
			err = proc_threads__resume_points(pid, tids, ntids, pts.lo, pts.hi,
							  add_point, &pts);
	}
	if (!err) {
		kept = patcher__remove(b->pt, tids, ntids, pts.v, pts.n);
		if (kept < 0)
			err = kept;
		else if (kept > 0)
			pr_warn("process %d: %d trampoline regions stay mapped (a signal frame resumes in one)",
				pid, kept);
	}
	b->removed = true;
	free(tids);
	free(pts.v);
	return err;
}

static void patch_close(void *be)
{
	struct patch_backend *b = be;

	if (!b)
		return;
	patcher__close(b->pt);
	for (size_t k = 0; k < PATCH_MAX_OBJECTS; k++) {
		struct patch_obj *po = &b->objs[k];

		for (size_t j = 0; j < po->nblobs; j++)
			patch_blob__release(&po->blobs[j]);
		free(po->blobs);
		free(po->ind);
		free(po->win_start);
		free(po->win_len);
		free(po->win_sb);
		free(po->memo);
		patch_sites__close(po->ps);
	}
	free(b);
}

static void patch_spawned(void *be, int parent, int child, bool thread)
{
	struct patch_backend *b = be;

	if (!b->pt || b->atomic)
		return;
	/* A second thread, or a child sharing the counters: increments become locked. In an
	 * attach window a forked child is unpatched instead (patch_forked). */
	if (thread || !b->attach_mode) {
		patcher__set_atomic(b->pt);
		b->atomic = true;
		pr_debug("process %d: %s %d: in-process increments are atomic from now on", parent,
			 thread ? "thread" : "child", child);
	}
}

static void patch_before_unwind(void *be, int tid, bool step)
{
	struct patch_backend *b = be;

	if (!b->pt || b->removed)
		return;
	if (step) {
		if (patcher__move_pc(b->pt, tid) < 0)
			pr_debug("thread %d: cannot move its pc out of a trampoline", tid);
		return;
	}
	/* At its exit the thread cannot be stepped: a clean offset maps to its original
	 * address for the unwinder (with the count the trampoline owed); inside an increment
	 * sequence the unwinding fails and is counted as such (the profile says so). */
	if (patcher__move_pc_at_exit(b->pt, tid) == -EAGAIN)
		pr_debug("thread %d: exits inside an increment: its stack cannot be unwound", tid);
}

/* A signal is about to be delivered to TID: its frame should hold an original address. */
static void patch_before_signal(void *be, int tid)
{
	struct patch_backend *b = be;

	if (b->pt && !b->removed && patcher__move_pc_for_signal(b->pt, tid) == 1)
		pr_debug("thread %d: a signal's delivery: pc moved out of a trampoline", tid);
}

static int patch_orig_pc(void *be, uint64_t pc, uint64_t *orig)
{
	struct patch_backend *b = be;

	if (!b->pt || b->removed)
		return 0;
	return patcher__orig_of(b->pt, pc, orig);
}

static void patch_forked(void *be, int child)
{
	struct patch_backend *b = be;

	if (b->pt && !b->removed && patcher__unpatch_child(b->pt, child, child))
		pr_warn("process %d (forked in the window) may still count into edgeprof's counters",
			child);
}

const struct count_ops patch_count_ops = {
	.name = "in-process counters",
	.counts_class = patch_counts_class,
	.check = patch_check,
	.attach = patch_attach,
	.uncount_pid = patch_uncount,
	.read = patch_read,
	.close = patch_close,
	.spawned = patch_spawned,
	.before_unwind = patch_before_unwind,
	.before_signal = patch_before_signal,
	.forked = patch_forked,
	.orig_pc = patch_orig_pc,
};

_Static_assert(sizeof(struct patch_obj) == 120, "patch_obj changed: save it (patch_backend__save)");
_Static_assert(sizeof(struct win_memo) == 32, "win_memo changed: save it");

int patch_backend__save(const struct patch_backend *b, unsigned index, struct snap_out *o)
{
	const struct patch_obj *po = index < PATCH_MAX_OBJECTS ? &b->objs[index] : NULL;
	struct patch_obj t = { 0 };

	/* What the analysis made: no process yet, nothing installed. */
	if (!po || !po->ps || po->region >= 0 || po->nblobs || po->nind || po->used)
		return -EINVAL;
	t = (struct patch_obj){ .nwin = po->nwin, .reserved = po->reserved, .nmemo = po->nmemo };
	snap_put(o, &t, sizeof(t));
	if (patch_sites__save(po->ps, o))
		return o->err ? o->err : -EINVAL;
	snap_put_u64(o, po->win_start != NULL);
	if (po->win_start) {
		snap_put_array(o, po->win_start, po->nwin + 1, sizeof(*po->win_start));
		snap_put_array(o, po->win_len, po->nwin + 1, sizeof(*po->win_len));
		snap_put_array(o, po->win_sb, po->nwin + 1, sizeof(*po->win_sb));
	}
	snap_put_opt(o, po->memo, po->nmemo, sizeof(*po->memo));
	return o->err;
}

int patch_backend__load(struct patch_backend *b, unsigned index, struct cfg_program *prog,
			struct snap_in *in)
{
	struct patch_obj *po = index < PATCH_MAX_OBJECTS ? &b->objs[index] : NULL;
	struct patch_obj saved;

	if (!po || po->ps)
		return in->err = -EINVAL;
	if (!snap_get(in, &saved, sizeof(saved)))
		return in->err;
	*po = (struct patch_obj){ .region = -1, .nwin = saved.nwin, .reserved = saved.reserved,
				  .nmemo = saved.nmemo };
	if (patch_sites__load(&po->ps, prog, in))
		goto fail;
	if (snap_get_u64(in)) {
		po->win_start = snap_get_array(in, po->nwin + 1, sizeof(*po->win_start));
		po->win_len = snap_get_array(in, po->nwin + 1, sizeof(*po->win_len));
		po->win_sb = snap_get_array(in, po->nwin + 1, sizeof(*po->win_sb));
	} else {
		snap_check(in, !po->nwin);
	}
	po->memo = snap_get_opt(in, po->nmemo, sizeof(*po->memo));
	snap_check(in, po->memo || !po->nmemo);
	if (!in->err)
		return 0;
fail:
	patch_backend__unload(b, index);
	return in->err ? in->err : -EINVAL;
}

void patch_backend__unload(struct patch_backend *b, unsigned index)
{
	struct patch_obj *po = index < PATCH_MAX_OBJECTS ? &b->objs[index] : NULL;

	if (!po || po->region >= 0 || po->nblobs)
		return;
	patch_sites__close(po->ps);
	free(po->win_start);
	free(po->win_len);
	free(po->win_sb);
	free(po->memo);
	*po = (struct patch_obj){ .region = -1 };
}
