/*
 * The in-process counting backend's process side (see patcher.h). Regions are found in the
 * gaps of /proc/PID/maps, mapped in the target with remote mmap (MAP_FIXED_NOREPLACE, so an
 * address taken meanwhile fails rather than being overwritten) and mapped into edgeprof through
 * /proc/PID/map_files; trampolines are written through edgeprof's mapping, sites through
 * /proc/PID/mem, in chunks (one pread and one pwrite per run of sites less than a page apart).
 * Installed sites are kept sorted by trampoline address, so that a pc is translated to its
 * original address by a binary search.
 */
#include "user/count/patcher.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <unistd.h>

#include "cfg/sort.h"
#include "user/proc/remote.h"
#include "user/util/log.h"

#define PAGE 4096ull
#define REL32_SPAN ((1ull << 31) - 1)
#define USER_TOP 0x7ffffffff000ull
#define USER_BOTTOM 0x100000ull
#define BRK_RESERVE (1ull << 30)
#define STACK_RESERVE (256ull << 20)
#define MAX_STEPS 64
#define MAX_TRIES 8

struct region {
	struct patcher_region info;
	uint64_t counters_size;	  /* bytes, pages */
	uint8_t *tramp_local;	  /* edgeprof's mapping of the trampolines */
	uint64_t *counters_local; /* and of the counters */
	bool unmapped;		  /* in the target */
};

struct site {
	uint64_t site, tramp;
	uint8_t len, region;
	uint8_t code[16], orig[16];
	uint64_t sb; /* its springboard [sb, sb + 5), or 0 */
	uint8_t sb_code[5], sb_orig[5];
	bool keep_sb; /* a signal frame resumes at sb: its bytes stay at the removal */
	uint32_t tramp_len;
	struct patch_pc *pcs;
	uint32_t npcs;
	uint32_t *locks;
	uint32_t nlock;
};

struct patcher {
	int pid, tid;
	int mem; /* /proc/PID/mem */
	uint64_t scratch;
	struct region *regions;
	size_t nregions;
	struct site *sites; /* sorted by tramp */
	size_t nsites;
	uint32_t ncounters;
	bool atomic, removed;
};

static uint64_t page_up(uint64_t x)
{
	return (x + PAGE - 1) & ~(PAGE - 1);
}

int patcher__open(struct patcher **out, int pid, int tid)
{
	struct patcher *p = calloc(1, sizeof(*p));
	char path[64];
	int err;

	*out = NULL;
	if (!p) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	p->pid = pid;
	p->tid = tid;
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	p->mem = open(path, O_RDWR | O_CLOEXEC);
	if (p->mem < 0) {
		err = -errno;
		pr_err("process %d: cannot open %s: %s", pid, path, strerror(errno));
		free(p);
		return err;
	}
	p->scratch = remote__scratch(tid);
	if (!p->scratch) {
		close(p->mem);
		free(p);
		return -ENOENT;
	}
	*out = p;
	return 0;
}

size_t patcher__nregions(const struct patcher *p)
{
	return p->nregions;
}

const struct patcher_region *patcher__region(const struct patcher *p, size_t i)
{
	return i < p->nregions ? &p->regions[i].info : NULL;
}

/* --- finding a free range ----------------------------------------------------------------- */

struct range {
	uint64_t lo, hi;
};

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The program break's start (field 47 of /proc/PID/stat), or 0. */
static uint64_t start_brk(int pid)
{
	char path[64], buf[2048], *s;
	unsigned long long v = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	s = strrchr(buf, ')'); /* the command name may hold anything */
	for (int field = 3; s && field <= 47; field++) {
		s = strchr(s, ' ');
		if (s && field == 47)
			v = strtoull(s + 1, NULL, 10);
		if (s)
			s++;
	}
	return v;
}

static int range_add(struct range **r, size_t *n, size_t *cap, uint64_t lo, uint64_t hi)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		struct range *nr = realloc(*r, c * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		*r = nr;
		*cap = c;
	}
	(*r)[(*n)++] = (struct range){lo, hi};
	return 0;
}

/* The occupied ranges of PID (its mappings and the reserves), sorted, in *OUT. */
static int occupied(int pid, struct range **out, size_t *n)
{
	char path[64], line[4096];
	struct range *r = NULL;
	size_t cnt = 0, cap = 0;
	uint64_t brk = start_brk(pid);
	int err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f) {
		err = -errno;
		pr_err("process %d: cannot read %s: %s", pid, path, strerror(errno));
		return err;
	}
	while (!err && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;

		if (sscanf(line, "%llx-%llx", &lo, &hi) != 2)
			continue;
		err = range_add(&r, &cnt, &cap, lo, hi);
		if (!err && strstr(line, "[stack]"))
			err = range_add(&r, &cnt, &cap, lo > STACK_RESERVE ? lo - STACK_RESERVE : 0,
					lo);
	}
	fclose(f);
	if (!err && brk)
		err = range_add(&r, &cnt, &cap, brk, brk + BRK_RESERVE);
	if (err) {
		free(r);
		pr_err("out of memory");
		return err;
	}
	qsort(r, cnt, sizeof(*r), range_cmp);
	*out = r;
	*n = cnt;
	return 0;
}

/* The bytes from the lowest to the highest of [LO, HI) and [A, A + SIZE). */
static uint64_t span(uint64_t lo, uint64_t hi, uint64_t a, uint64_t size)
{
	uint64_t l = a < lo ? a : lo, h = a + size > hi ? a + size : hi;

	return h - l;
}

/* The start of a free SIZE-byte range (page-aligned) nearest to [LO, HI), such that every
 * byte of both is within rel32 reach of every other, and not in SKIP (tried and refused); 0
 * when there is none. Each gap offers its two ends. */
static uint64_t find_free(const struct range *occ, size_t n, uint64_t lo, uint64_t hi,
			  uint64_t size, const uint64_t *skip, size_t nskip)
{
	uint64_t best = 0, best_span = UINT64_MAX, prev_end = USER_BOTTOM;

	for (size_t i = 0; i <= n; i++) {
		uint64_t g0 = page_up(prev_end), g1 = i < n ? occ[i].lo : USER_TOP;

		if (i < n && occ[i].hi > prev_end)
			prev_end = occ[i].hi;
		if (g1 <= g0 || g1 - g0 < size)
			continue;
		for (int end = 0; end < 2; end++) {
			uint64_t a = end ? (g1 - size) & ~(PAGE - 1) : g0, s;
			bool skipped = false;

			for (size_t k = 0; k < nskip; k++)
				skipped |= skip[k] == a;
			s = span(lo, hi, a, size);
			if (!skipped && a >= g0 && s <= REL32_SPAN && s < best_span) {
				best = a;
				best_span = s;
			}
		}
	}
	return best;
}

/* Maps edgeprof's own view of the target's anonymous shared mapping [LO, HI). */
static void *map_local(int pid, uint64_t lo, uint64_t hi)
{
	char path[96];
	struct stat st;
	void *m;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, lo, hi);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		pr_err("process %d: cannot open %s: %s", pid, path, strerror(errno));
		return NULL;
	}
	/* Never a file with a name: writing through this mapping would change the file. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 0 ||
	    (uint64_t)st.st_size < hi - lo) {
		pr_err("process %d: %s is not the anonymous shared memory mapped there", pid, path);
		close(fd);
		return NULL;
	}
	m = mmap(NULL, hi - lo, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		pr_err("process %d: cannot map %s: %s", pid, path, strerror(errno));
		m = NULL;
	}
	close(fd);
	return m;
}

static int remote_call(struct patcher *p, int tid, long nr, uint64_t a0, uint64_t a1, uint64_t a2,
		       uint64_t a3, int64_t *ret)
{
	const uint64_t args[6] = {a0, a1, a2, a3, (uint64_t)-1, 0};

	return remote__syscall_at(tid, p->scratch, nr, args, ret);
}

static int remote_munmap(struct patcher *p, int tid, uint64_t a, uint64_t len)
{
	int64_t ret;
	int err = remote_call(p, tid, SYS_munmap, a, len, 0, 0, &ret);

	if (!err && ret < 0) {
		err = (int)ret;
		pr_err("thread %d: munmap(%#" PRIx64 ", %" PRIu64 ") failed: %s", tid, a, len,
		       strerror(-err));
	}
	return err;
}

/* Maps SIZE bytes with PROT at exactly A in the target: 0, -EEXIST (taken), or -errno. */
static int remote_map_at(struct patcher *p, uint64_t a, uint64_t size, int prot)
{
	int64_t ret;
	int err = remote_call(p, p->tid, SYS_mmap, a, size, (uint64_t)prot,
			      MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, &ret);

	if (err)
		return err;
	if (ret == -EEXIST)
		return -EEXIST;
	if (ret < 0 && ret > -4096) {
		pr_err("process %d: mmap at %#" PRIx64 " failed: %s", p->pid, a,
		       strerror((int)-ret));
		return (int)ret;
	}
	if ((uint64_t)ret != a) { /* a kernel without MAP_FIXED_NOREPLACE took it as a hint */
		remote_munmap(p, p->tid, (uint64_t)ret, size);
		return -EEXIST;
	}
	return 0;
}

int patcher__add_region(struct patcher *p, uint64_t lo, uint64_t hi, uint32_t ncounters,
			uint32_t tramp_capacity, struct patcher_region *info)
{
	uint64_t tsize = page_up(tramp_capacity ? tramp_capacity : 1);
	uint64_t csize = page_up(ncounters ? 8ull * ncounters : 8);
	uint64_t tried[MAX_TRIES], a = 0;
	size_t ntried = 0;
	struct region *r;
	int err = -ENOSPC;

	if (p->removed || hi <= lo || p->nregions >= 255) {
		pr_err("process %d: cannot add a region for [%#" PRIx64 ", %#" PRIx64 ")", p->pid,
		       lo, hi);
		return -EINVAL;
	}
	r = realloc(p->regions, (p->nregions + 1) * sizeof(*r));
	if (!r) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	p->regions = r;
	r = &p->regions[p->nregions];
	memset(r, 0, sizeof(*r));
	while (ntried < MAX_TRIES) {
		struct range *occ;
		size_t nocc;

		err = occupied(p->pid, &occ, &nocc);
		if (err)
			return err;
		a = find_free(occ, nocc, lo, hi, tsize + csize, tried, ntried);
		free(occ);
		if (!a) {
			err = -ENOSPC;
			break;
		}
		tried[ntried++] = a;
		err = remote_map_at(p, a, tsize, PROT_READ | PROT_EXEC);
		if (err == -EEXIST)
			continue;
		if (err)
			return err;
		err = remote_map_at(p, a + tsize, csize, PROT_READ | PROT_WRITE);
		if (err) {
			remote_munmap(p, p->tid, a, tsize);
			if (err == -EEXIST)
				continue;
			return err;
		}
		break;
	}
	if (err) {
		pr_err("process %d: no free range of %" PRIu64 " bytes within 2 GiB of [%#" PRIx64
		       ", %#" PRIx64 ")",
		       p->pid, tsize + csize, lo, hi);
		return err;
	}
	r->info = (struct patcher_region){
	    .lo = lo,
	    .hi = hi,
	    .tramp_base = a,
	    .tramp_size = tsize,
	    .counters_base = a + tsize,
	    .ncounters = ncounters,
	    .first_counter = p->ncounters,
	};
	r->counters_size = csize;
	r->tramp_local = map_local(p->pid, a, a + tsize);
	r->counters_local = r->tramp_local ? map_local(p->pid, a + tsize, a + tsize + csize) : NULL;
	if (!r->counters_local) {
		if (r->tramp_local)
			munmap(r->tramp_local, tsize);
		remote_munmap(p, p->tid, a, tsize + csize);
		return -EIO;
	}
	p->ncounters += ncounters;
	*info = r->info;
	pr_debug("process %d: regions at %#" PRIx64 " (%" PRIu64 " bytes of trampolines, %u "
		 "counters) for [%#" PRIx64 ", %#" PRIx64 ")",
		 p->pid, a, tsize, ncounters, lo, hi);
	return (int)p->nregions++;
}

/* --- installing ----------------------------------------------------------------------------- */

static int region_of_tramp(const struct patcher *p, uint64_t addr, uint64_t len)
{
	for (size_t i = 0; i < p->nregions; i++) {
		const struct patcher_region *r = &p->regions[i].info;

		if (addr >= r->tramp_base && addr - r->tramp_base <= r->tramp_size &&
		    len <= r->tramp_size - (addr - r->tramp_base))
			return (int)i;
	}
	return -1;
}

static int site_cmp_tramp(const void *a, const void *b)
{
	const struct site *x = a, *y = b;

	return x->tramp < y->tramp ? -1 : x->tramp > y->tramp;
}

static int site_cmp_site(const void *a, const void *b)
{
	const struct site *x = *(const struct site *const *)a, *y = *(const struct site *const *)b;

	return x->site < y->site ? -1 : x->site > y->site;
}

static void site_free(struct site *s)
{
	free(s->pcs);
	free(s->locks);
}

/* Checks blob B and makes its record in *S (with its own copies of pcs and lock offsets). */
static int site_make(const struct patcher *p, const struct patch_blob *b, struct site *s)
{
	int32_t disp;
	int reg;

	memset(s, 0, sizeof(*s));
	if (b->len < (b->sb ? 2 : 5) || b->len > 16 || !b->tramp_code || !b->tramp_len ||
	    !b->pcs || !b->npcs || b->pcs[0].off != 0 || (b->nlock && !b->lock_offsets))
		goto bad;
	if (b->sb) {
		/* jmp rel8 to the springboard, there jmp rel32 to the trampoline, clear of the
		 * window. */
		if (b->code[0] != 0xeb || b->site + 2 + (int64_t)(int8_t)b->code[1] != b->sb ||
		    b->sb_code[0] != 0xe9 || (b->sb < b->site + b->len && b->site < b->sb + 5))
			goto bad;
		memcpy(&disp, b->sb_code + 1, 4);
		if (b->sb + 5 + (int64_t)disp != b->tramp)
			goto bad;
	} else {
		if (b->code[0] != 0xe9)
			goto bad;
		memcpy(&disp, b->code + 1, 4);
		if (b->site + 5 + (int64_t)disp != b->tramp)
			goto bad;
	}
	reg = region_of_tramp(p, b->tramp, b->tramp_len);
	if (reg < 0)
		goto bad;
	for (uint32_t k = 0; k < b->npcs; k++) {
		if ((k && b->pcs[k].off <= b->pcs[k - 1].off) || b->pcs[k].off >= b->tramp_len)
			goto bad;
		if (b->pcs[k].clean == 1 && b->pcs[k].pending != PATCH_NO_COUNTER &&
		    b->pcs[k].pending >= p->regions[reg].info.ncounters)
			goto bad;
	}
	for (uint32_t k = 0; k < b->nlock; k++)
		if (b->lock_offsets[k] >= b->tramp_len ||
		    (b->tramp_code[b->lock_offsets[k]] != 0x3e &&
		     b->tramp_code[b->lock_offsets[k]] != 0xf0))
			goto bad;
	*s = (struct site){.site = b->site,
			   .tramp = b->tramp,
			   .len = b->len,
			   .region = (uint8_t)reg,
			   .tramp_len = b->tramp_len,
			   .npcs = b->npcs,
			   .nlock = b->nlock};
	memcpy(s->code, b->code, b->len);
	memcpy(s->orig, b->orig, b->len);
	s->sb = b->sb;
	memcpy(s->sb_code, b->sb_code, 5);
	memcpy(s->sb_orig, b->sb_orig, 5);
	s->pcs = malloc(b->npcs * sizeof(*s->pcs));
	s->locks = malloc((b->nlock ? b->nlock : 1) * sizeof(*s->locks));
	if (!s->pcs || !s->locks) {
		site_free(s);
		pr_err("out of memory");
		return -ENOMEM;
	}
	memcpy(s->pcs, b->pcs, b->npcs * sizeof(*s->pcs));
	if (b->nlock)
		memcpy(s->locks, b->lock_offsets, b->nlock * sizeof(*s->locks));
	return 0;
bad:
	pr_err("process %d: malformed patch for the site at %#" PRIx64, p->pid, b->site);
	return -EINVAL;
}

/* The pcs of every thread of the process, each checked to be stopped under our ptrace. */
static int thread_pcs(struct patcher *p, uint64_t **out, size_t *n)
{
	char path[64];
	struct dirent *de;
	uint64_t *pcs = NULL;
	size_t cnt = 0;
	DIR *d;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", p->pid);
	d = opendir(path);
	if (!d) {
		err = -errno;
		pr_err("process %d: cannot list its threads: %s", p->pid, strerror(errno));
		return err;
	}
	while ((de = readdir(d))) {
		struct user_regs_struct regs;
		int tid = atoi(de->d_name);
		uint64_t *np;

		if (tid <= 0)
			continue;
		if (ptrace(PTRACE_GETREGS, tid, NULL, &regs) < 0) {
			err = -ESRCH;
			pr_err("process %d: thread %d is not stopped under our ptrace: %s", p->pid,
			       tid, strerror(errno));
			break;
		}
		np = realloc(pcs, (cnt + 1) * sizeof(*pcs));
		if (!np) {
			err = -ENOMEM;
			pr_err("out of memory");
			break;
		}
		pcs = np;
		pcs[cnt++] = regs.rip;
	}
	closedir(d);
	if (err) {
		free(pcs);
		return err;
	}
	*out = pcs;
	*n = cnt;
	return 0;
}

static int mem_write(int fd, uint64_t addr, const void *buf, size_t len)
{
	ssize_t w = pwrite(fd, buf, len, (off_t)addr);

	return w == (ssize_t)len ? 0 : w < 0 ? -errno : -EIO;
}

static int mem_read(int fd, uint64_t addr, void *buf, size_t len)
{
	ssize_t r = pread(fd, buf, len, (off_t)addr);

	return r == (ssize_t)len ? 0 : r < 0 ? -errno : -EIO;
}

/* Bytes one site writes: its window, or its springboard. */
struct span {
	uint64_t addr;
	uint8_t len;
	const uint8_t *code, *orig;
};

/* The spans of SITES[0, N) (windows and springboards; a kept springboard is left out when
 * SKIP_KEPT), sorted by address, into *OUT (*NOUT of them). */
static int spans_of(struct site *const *sites, size_t n, bool skip_kept, struct span **out,
		    size_t *nout)
{
	struct span *v = malloc((2 * n + 1) * sizeof(*v));
	size_t k = 0;

	if (!v) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct site *s = sites[i];

		v[k++] = (struct span){ s->site, s->len, s->code, s->orig };
		if (s->sb && !(skip_kept && s->keep_sb))
			v[k++] = (struct span){ s->sb, 5, s->sb_code, s->sb_orig };
	}
	sort__by_key_u64(v, k, sizeof(*v), offsetof(struct span, addr), false);
	*out = v;
	*nout = k;
	return 0;
}

struct chunk {
	uint64_t lo, hi;
	size_t first, end; /* its sites, in the sorted array */
	size_t at;	   /* its bytes in the buffers */
};

/* Rewrites the sites SORTED[0, N) (by address, not overlapping) in the memory behind MEM
 * (of process PID): each site holding its FROM bytes (code, or orig when TO_ORIG) gets its TO
 * bytes. Sites less than GAP apart are read and written as one chunk (GAP = a page: every page
 * written holds a site), with one pread and one pwrite per chunk; a chunk that cannot be read
 * sets *READ_FAILED before anything is written (reported only when GAP is 0: the caller tries
 * again with each site alone, in case of a hole between two sites). STRICT (install): every site
 * must hold FROM (else -EILSEQ, nothing written), and a failed write undoes the chunks
 * written before it. Not strict (restore): a site already holding TO is left, one holding
 * neither is reported and left (-EILSEQ at the end), the others are written. */
static int rewrite_chunks(int pid, int mem, const struct span *sorted, size_t n, bool to_orig,
			  bool strict, uint64_t gap, bool *read_failed)
{
	struct chunk *chunks = calloc(n ? n : 1, sizeof(*chunks));
	uint8_t *old = NULL, *new = NULL;
	size_t nchunks = 0, total = 0;
	int err = 0;

	if (!chunks) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct span *s = &sorted[i];

		if (nchunks && s->addr < chunks[nchunks - 1].hi + gap) {
			chunks[nchunks - 1].hi = s->addr + s->len;
			chunks[nchunks - 1].end = i + 1;
		} else {
			chunks[nchunks++] = (struct chunk){s->addr, s->addr + s->len, i, i + 1, 0};
		}
	}
	for (size_t c = 0; c < nchunks; c++) {
		chunks[c].at = total;
		total += chunks[c].hi - chunks[c].lo;
	}
	old = malloc(total ? total : 1);
	new = malloc(total ? total : 1);
	if (!old || !new) {
		err = -ENOMEM;
		pr_err("out of memory");
		goto out;
	}
	/* Read and check everything, and build the new bytes. */
	for (size_t c = 0; c < nchunks; c++) {
		const struct chunk *k = &chunks[c];
		int e = mem_read(mem, k->lo, old + k->at, k->hi - k->lo);

		if (e) {
			*read_failed = true;
			err = e;
			if (!gap)
				pr_err("process %d: cannot read %#" PRIx64 ": %s", pid, k->lo,
				       strerror(-e));
			goto out;
		}
		memcpy(new + k->at, old + k->at, k->hi - k->lo);
		for (size_t i = k->first; i < k->end; i++) {
			const struct span *s = &sorted[i];
			const uint8_t *from = to_orig ? s->code : s->orig;
			const uint8_t *to = to_orig ? s->orig : s->code;
			size_t at = k->at + (s->addr - k->lo);

			if (memcmp(old + at, from, s->len) == 0) {
				memcpy(new + at, to, s->len);
				continue;
			}
			if (!strict && memcmp(old + at, to, s->len) == 0)
				continue;
			pr_err("process %d: the bytes at %#" PRIx64 " are not the expected ones%s",
			       pid, s->addr, strict ? "" : ": left as they are");
			err = -EILSEQ;
			if (strict)
				goto out;
		}
	}
	/* Write the chunks that change. */
	for (size_t c = 0; c < nchunks; c++) {
		const struct chunk *k = &chunks[c];
		int e;

		if (memcmp(old + k->at, new + k->at, k->hi - k->lo) == 0)
			continue;
		e = mem_write(mem, k->lo, new + k->at, k->hi - k->lo);
		if (!e)
			continue;
		pr_err("process %d: cannot write %#" PRIx64 ": %s", pid, k->lo, strerror(-e));
		err = err ? err : e;
		if (!strict)
			continue;
		/* Undo this chunk (it may be written in part) and the ones before. */
		for (size_t u = 0; u <= c; u++)
			mem_write(mem, chunks[u].lo, old + chunks[u].at,
				  chunks[u].hi - chunks[u].lo);
		break;
	}
out:
	free(chunks);
	free(old);
	free(new);
	return err;
}

/* rewrite_chunks with sites less than a page apart in one chunk, or each site alone when
 * such a chunk cannot be read. */
static int rewrite_sites(int pid, int mem, struct site *const *sites, size_t n, bool to_orig,
			 bool strict)
{
	bool read_failed = false;
	struct span *sorted;
	size_t ns;
	int err = spans_of(sites, n, to_orig, &sorted, &ns);

	if (err)
		return err;
	err = rewrite_chunks(pid, mem, sorted, ns, to_orig, strict, PAGE, &read_failed);
	if (read_failed) /* nothing was written yet */
		err = rewrite_chunks(pid, mem, sorted, ns, to_orig, strict, 0, &read_failed);
	free(sorted);
	return err;
}

/* Writes S's trampoline into its region's local mapping, lock prefixes as ATOMIC says. */
static void write_tramp(struct patcher *p, const struct site *s, const struct patch_blob *b)
{
	struct region *r = &p->regions[s->region];
	uint8_t *dst = r->tramp_local + (s->tramp - r->info.tramp_base);

	memcpy(dst, b->tramp_code, s->tramp_len);
	for (uint32_t k = 0; k < s->nlock; k++)
		dst[s->locks[k]] = p->atomic ? 0xf0 : 0x3e;
}

int patcher__install(struct patcher *p, const struct patch_blob *blobs, size_t n)
{
	struct site *all = NULL, *news = NULL;
	struct site **by_site = NULL;
	struct span *spans = NULL;
	uint64_t *pcs = NULL;
	size_t npcs = 0, made = 0, total = p->nsites + n, nspans = 0;
	int err;

	if (p->removed) {
		pr_err("process %d: patches already removed", p->pid);
		return -EINVAL;
	}
	if (!n)
		return 0;
	news = calloc(n, sizeof(*news));
	all = calloc(total, sizeof(*all));
	by_site = calloc(total, sizeof(*by_site));
	if (!news || !all || !by_site) {
		err = -ENOMEM;
		pr_err("out of memory");
		goto out;
	}
	for (made = 0; made < n; made++) {
		err = site_make(p, &blobs[made], &news[made]);
		if (err)
			goto out;
	}
	/* ALL: the installed records and the new ones (shallow copies). */
	if (p->nsites)
		memcpy(all, p->sites, p->nsites * sizeof(*all));
	memcpy(all + p->nsites, news, n * sizeof(*all));
	/* No two windows or springboards and no two trampolines overlap (a springboard is
	 * never shared). */
	for (size_t i = 0; i < total; i++)
		by_site[i] = &all[i];
	err = spans_of(by_site, total, false, &spans, &nspans);
	if (err)
		goto out;
	for (size_t i = 1; i < nspans; i++)
		if (spans[i - 1].addr + spans[i - 1].len > spans[i].addr) {
			err = -EINVAL;
			pr_err("process %d: patches at %#" PRIx64 " and %#" PRIx64 " overlap",
			       p->pid, spans[i - 1].addr, spans[i].addr);
			goto out;
		}
	qsort(all, total, sizeof(*all), site_cmp_tramp);
	for (size_t i = 1; i < total; i++)
		if (all[i - 1].tramp + all[i - 1].tramp_len > all[i].tramp) {
			err = -EINVAL;
			pr_err("process %d: trampolines at %#" PRIx64 " and %#" PRIx64 " overlap",
			       p->pid, all[i - 1].tramp, all[i].tramp);
			goto out;
		}
	/* Every thread is held, and none inside a window. */
	err = thread_pcs(p, &pcs, &npcs);
	if (err)
		goto out;
	for (size_t i = 0; i < n; i++)
		for (size_t t = 0; t < npcs; t++)
			if ((pcs[t] > blobs[i].site && pcs[t] < blobs[i].site + blobs[i].len) ||
			    (blobs[i].sb && pcs[t] >= blobs[i].sb && pcs[t] < blobs[i].sb + 5)) {
				err = -EBUSY;
				pr_err("process %d: a thread is stopped at %#" PRIx64
				       ", inside the patch at %#" PRIx64,
				       p->pid, pcs[t], blobs[i].site);
				goto out;
			}
	/* Trampolines first (nothing reaches them yet), then the sites, checked. */
	for (size_t i = 0; i < n; i++)
		write_tramp(p, &news[i], &blobs[i]);
	for (size_t i = 0; i < n; i++)
		by_site[i] = &news[i];
	sort__keyed(by_site, n, sizeof(*by_site), site_cmp_site);
	err = rewrite_sites(p->pid, p->mem, by_site, n, false, true);
	if (err)
		goto out;
	free(p->sites);
	p->sites = all;
	p->nsites = total;
	all = NULL;
	made = 0; /* the records are kept */
out:
	for (size_t i = 0; i < made; i++)
		site_free(&news[i]);
	free(news);
	free(all);
	free(by_site);
	free(spans);
	free(pcs);
	return err;
}

size_t patcher__read(const struct patcher *p, uint64_t *counters, size_t n)
{
	size_t done = 0;

	for (size_t i = 0; i < p->nregions && done < n; i++) {
		const struct region *r = &p->regions[i];

		for (uint32_t c = 0; c < r->info.ncounters && done < n; c++)
			counters[done++] = __atomic_load_n(&r->counters_local[c], __ATOMIC_RELAXED);
	}
	return done;
}

void patcher__set_atomic(struct patcher *p)
{
	p->atomic = true;
	for (size_t i = 0; i < p->nsites; i++) {
		const struct site *s = &p->sites[i];
		struct region *r = &p->regions[s->region];
		uint8_t *dst = r->tramp_local + (s->tramp - r->info.tramp_base);

		for (uint32_t k = 0; k < s->nlock; k++)
			dst[s->locks[k]] = 0xf0;
	}
}

/* --- pcs ---------------------------------------------------------------------------------- */

/* The installed site whose trampoline holds ADDR, or NULL. */
static const struct site *site_at(const struct patcher *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nsites;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->sites[mid].tramp <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr - p->sites[lo - 1].tramp < p->sites[lo - 1].tramp_len)
		return &p->sites[lo - 1];
	return NULL;
}

static const struct patch_pc *stretch_at(const struct site *s, uint64_t addr)
{
	uint32_t x = (uint32_t)(addr - s->tramp), k = 0;

	while (k + 1 < s->npcs && s->pcs[k + 1].off <= x)
		k++;
	return &s->pcs[k];
}

int patcher__orig_of(const struct patcher *p, uint64_t addr, uint64_t *orig)
{
	const struct site *s = site_at(p, addr);
	const struct patch_pc *pc;

	*orig = addr;
	if (!s)
		return 0;
	pc = stretch_at(s, addr);
	*orig = pc->orig;
	return pc->clean == 1 || pc->clean == PATCH_PC_FIRED ? 1 : -EAGAIN;
}

/* patcher__move_pc for thread TID of process PID, adding the pending counts when COUNT. */
static int move_pc(struct patcher *p, int pid, int tid, bool count, bool may_step)
{
	struct user_regs_struct regs;
	uint64_t held = 0;
	int err = 0, moved = 0;

	if (ptrace(PTRACE_GETREGS, tid, NULL, &regs) < 0) {
		err = -errno;
		pr_err("thread %d: not stopped under our ptrace: %s", tid, strerror(errno));
		return err;
	}
	/* Between the jmp rel8 and the springboard's jmp: the site has not fired, the thread
	 * is where it was before the jmp rel8. */
	for (size_t i = 0; i < p->nsites; i++) {
		if (!p->sites[i].sb || regs.rip != p->sites[i].sb)
			continue;
		regs.rip = p->sites[i].site;
		if (ptrace(PTRACE_SETREGS, tid, NULL, &regs) < 0) {
			err = -errno;
			pr_err("thread %d: cannot set its pc: %s", tid, strerror(errno));
			return err;
		}
		return 1;
	}
	for (int step = 0;; step++) {
		const struct site *s = site_at(p, regs.rip);
		const struct patch_pc *pc;

		if (!s)
			break; /* in no trampoline, or stepped out of it */
		pc = stretch_at(s, regs.rip);
		if (pc->clean == 1 || (pc->clean == PATCH_PC_FIRED && !may_step)) {
			struct region *r = &p->regions[s->region];

			if (count && pc->pending != PATCH_NO_COUNTER)
				__atomic_fetch_add(&r->counters_local[pc->pending], 1,
						   __ATOMIC_RELAXED);
			regs.rip = pc->orig;
			if (ptrace(PTRACE_SETREGS, tid, NULL, &regs) < 0) {
				err = -errno;
				pr_err("thread %d: cannot set its pc: %s", tid, strerror(errno));
			}
			moved = 1;
			break;
		}
		if (!may_step) {
			err = -EAGAIN; /* not clean, and the thread cannot run (its exit) */
			break;
		}
		if (step == MAX_STEPS) {
			err = -ELOOP;
			pr_err("thread %d: still in a trampoline at %#" PRIx64 " after %d steps",
			       tid, (uint64_t)regs.rip, MAX_STEPS);
			break;
		}
		err = remote__single_step(tid, &held);
		if (!err && ptrace(PTRACE_GETREGS, tid, NULL, &regs) < 0)
			err = -errno;
		if (err)
			break;
		moved = 1;
	}
	remote__resend(pid, tid, held);
	return err ? err : moved;
}

/* Whether original address A lies inside a window (past its start, where its bytes are not
 * the program's while installed) or at a springboard. */
static bool inside_window(const struct patcher *p, uint64_t a)
{
	for (size_t i = 0; i < p->nsites; i++)
		if ((a > p->sites[i].site && a < p->sites[i].site + p->sites[i].len) ||
		    (p->sites[i].sb && a >= p->sites[i].sb && a < p->sites[i].sb + 5))
			return true;
	return false;
}

int patcher__move_pc_for_signal(struct patcher *p, int tid)
{
	struct user_regs_struct regs;
	const struct site *s;
	const struct patch_pc *pc;

	if (p->removed || ptrace(PTRACE_GETREGS, tid, NULL, &regs) < 0)
		return 0;
	s = site_at(p, regs.rip);
	if (!s)
		return 0;
	pc = stretch_at(s, regs.rip);
	if (pc->clean != 1 || inside_window(p, pc->orig))
		return 0;
	if (pc->pending != PATCH_NO_COUNTER)
		__atomic_fetch_add(&p->regions[s->region].counters_local[pc->pending], 1,
				   __ATOMIC_RELAXED);
	regs.rip = pc->orig;
	if (ptrace(PTRACE_SETREGS, tid, NULL, &regs) < 0) {
		if (pc->pending != PATCH_NO_COUNTER) /* not moved: not owed either */
			__atomic_fetch_sub(&p->regions[s->region].counters_local[pc->pending], 1,
					   __ATOMIC_RELAXED);
		return 0;
	}
	return 1;
}

int patcher__move_pc(struct patcher *p, int tid)
{
	return move_pc(p, p->pid, tid, true, true);
}

int patcher__move_pc_at_exit(struct patcher *p, int tid)
{
	return move_pc(p, p->pid, tid, true, false);
}

/* --- removing ------------------------------------------------------------------------------ */

/* Puts the original bytes back at every site in the memory behind MEM (of process PID).
 * Returns 0, or -EILSEQ when a site held neither its code nor its original bytes. */
static int restore_sites(struct patcher *p, int pid, int mem)
{
	struct site **sorted = malloc((p->nsites ? p->nsites : 1) * sizeof(*sorted));
	int err;

	if (!sorted) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->nsites; i++)
		sorted[i] = &p->sites[i];
	sort__keyed(sorted, p->nsites, sizeof(*sorted), site_cmp_site);
	err = rewrite_sites(pid, mem, sorted, p->nsites, true, false);
	free(sorted);
	return err;
}

/* The region whose trampolines hold PC, or -1. */
static int region_of_pc(const struct patcher *p, uint64_t pc)
{
	for (size_t i = 0; i < p->nregions; i++) {
		const struct patcher_region *r = &p->regions[i].info;

		if (pc >= r->tramp_base && pc < r->counters_base)
			return (int)i;
	}
	return -1;
}

int patcher__remove(struct patcher *p, const int *tids, size_t ntids, const uint64_t *frame_pcs,
		    size_t nframe_pcs)
{
	bool *keep;
	int err = 0, kept = 0, e;

	if (p->removed || !ntids) {
		pr_err("process %d: patches already removed, or no thread given", p->pid);
		return -EINVAL;
	}
	keep = calloc(p->nregions ? p->nregions : 1, sizeof(*keep));
	if (!keep) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	for (size_t t = 0; t < ntids; t++) {
		struct user_regs_struct regs;
		int r;

		e = move_pc(p, p->pid, tids[t], true, true);
		if (e >= 0)
			continue;
		err = err ? err : e;
		if (ptrace(PTRACE_GETREGS, tids[t], NULL, &regs) == 0 &&
		    (r = region_of_pc(p, regs.rip)) >= 0)
			keep[r] = true;
	}
	for (size_t i = 0; i < nframe_pcs; i++) {
		int r = region_of_pc(p, frame_pcs[i]);

		for (size_t k = 0; r < 0 && k < p->nsites; k++) {
			if (!p->sites[k].sb || p->sites[k].sb != frame_pcs[i])
				continue;
			/* A signal frame resumes at the springboard: it stays, and so does
			 * its trampoline (which runs the window and jumps back to the
			 * original code). */
			p->sites[k].keep_sb = true;
			r = p->sites[k].region;
		}

		if (r >= 0 && !keep[r]) {
			keep[r] = true;
			pr_warn("process %d: a signal frame resumes in a trampoline at %#" PRIx64
				": its region stays mapped",
				p->pid, frame_pcs[i]);
		}
	}
	e = restore_sites(p, p->pid, p->mem);
	err = err ? err : e;
	for (size_t i = 0; i < p->nregions; i++) {
		struct region *r = &p->regions[i];

		if (keep[i]) {
			kept++;
			continue;
		}
		if (r->unmapped)
			continue;
		e = remote_munmap(p, tids[0], r->info.tramp_base,
				  r->info.tramp_size + r->counters_size);
		if (e)
			err = err ? err : e;
		else
			r->unmapped = true;
	}
	p->removed = true;
	free(keep);
	return err ? err : kept;
}

int patcher__unpatch_child(struct patcher *p, int child, int child_tid)
{
	char path[64];
	int mem, err;

	err = move_pc(p, child, child_tid, false, true);
	if (err < 0)
		return err;
	snprintf(path, sizeof(path), "/proc/%d/mem", child);
	mem = open(path, O_RDWR | O_CLOEXEC);
	if (mem < 0) {
		err = -errno;
		pr_err("process %d: cannot open %s: %s", child, path, strerror(errno));
		return err;
	}
	err = restore_sites(p, child, mem);
	close(mem);
	for (size_t i = 0; i < p->nregions && !err; i++) {
		const struct region *r = &p->regions[i];

		if (!r->unmapped)
			err = remote_munmap(p, child_tid, r->info.tramp_base,
					    r->info.tramp_size + r->counters_size);
	}
	return err;
}

void patcher__close(struct patcher *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nregions; i++) {
		struct region *r = &p->regions[i];

		munmap(r->tramp_local, r->info.tramp_size);
		munmap(r->counters_local, r->counters_size);
	}
	for (size_t i = 0; i < p->nsites; i++)
		site_free(&p->sites[i]);
	free(p->sites);
	free(p->regions);
	close(p->mem);
	free(p);
}
