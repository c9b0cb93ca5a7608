/*
 * Loading, attaching and reading the BPF counting program (see probes.h): the skeleton of
 * bpf/edgeprof.bpf.c, one uprobe-multi link per binary, the pids map, and the counters (a
 * plain array map, added to atomically). libbpf's own messages go to the log at -v / -vv;
 * each failure is reported here once, as one line saying what failed and why.
 */
#include "user/count/probes.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/edgeprof.h"
#include "edgeprof.skel.h"
#include "user/util/log.h"

/* The kernel's limit on the probes of one uprobe-multi link (MAX_UPROBE_MULTI_CNT). */
#define PROBES_MAX_PER_LINK (1u << 20)
/* Threads that destroy links at once (destroy_links). */
#define PROBES_DESTROY_THREADS 32u
/* probes__read looks up counters one by one when fewer than 1 in this many can count. */
#define PROBES_SPARSE_READ 16u
/* Counters read per batch lookup. */
#define PROBES_READ_CHUNK 4096u

#define KERNEL_BTF "/sys/kernel/btf/vmlinux"

/* A link and the process it is bound to (-1: every process mapping the file). */
struct probe_link {
	struct bpf_link *l;
	int pid;
	uint64_t watch; /* a watch's key (watch_key), 0 for counting links */
};

/* The key of a watch of PATH at FILE_OFFSET (FNV-1a of both; never 0). */
static uint64_t watch_key(const char *path, uint64_t file_offset)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (const char *c = path; *c; c++)
		h = (h ^ (uint8_t)*c) * 0x100000001b3ULL;
	for (int i = 0; i < 8; i++)
		h = (h ^ ((file_offset >> (8 * i)) & 0xff)) * 0x100000001b3ULL;
	return h ? h : 1;
}

/* What one attach_multi call attached, kept to attach it again for a forked child. */
struct probe_spec {
	struct bpf_program *prog;
	const char *what;
	char *path;
	uint64_t *offs, *cookies;
	size_t n;
};

/* A forked child with links of its own, and a pidfd that says when it is gone. */
struct probe_child {
	int pid, pidfd;
};

struct probes {
	struct edgeprof_bpf *skel;
	uint32_t ncounters;
	uint32_t nloops; /* loop_moments entries that are real loops (0: no loop stats) */
	struct probe_link *links;
	size_t nlinks, links_cap;
	int bound_pid;	   /* links attach in this process only; -1: every process */
	bool follow_forks; /* counted children get links of their own (probes__add_child) */
	struct probe_spec *specs;
	size_t nspecs;
	struct probe_child *children;
	size_t nchildren;
	uint64_t failed_children; /* counted children whose links could not be attached */
	struct detach_job *detaching; /* probes__detach_async's links, going in the background */
	uint8_t *used;	 /* [ncounters]: a cookie of ep_hit ever named the counter */
	uint32_t nused;	 /* counters marked in used */
};

_Static_assert(sizeof(unsigned long) == sizeof(uint64_t), "file offsets are 64-bit");

/* libbpf's warnings ("libbpf: ...") are details of a failure reported here: shown with -v;
 * the rest with -vv. */
static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[1024];

	if ((level == LIBBPF_WARN ? LOG_INFO : LOG_DEBUG) > log__verbosity())
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (level == LIBBPF_WARN)
		pr_info("%s", buf);
	else
		pr_debug("%s", buf);
	return 0;
}

static const char *kernel_release(void)
{
	static struct utsname u;

	return uname(&u) ? "?" : u.release;
}

/* Reports why loading failed; ERR is a negative errno. Returns ERR. */
static int report_load_error(int err)
{
	if (err == -EPERM || (err == -EACCES && geteuid() != 0))
		pr_err("cannot load the BPF program: %s (profiling needs root, or CAP_BPF, "
		       "CAP_PERFMON and CAP_SYS_ADMIN)",
		       strerror(-err));
	else if (err == -EACCES)
		pr_err("cannot load the BPF program: the kernel's verifier rejected it (kernel %s; "
		       "-vv shows its log)", kernel_release());
	else
		pr_err("cannot load the BPF program: %s (kernel %s; edgeprof needs Linux >= 6.6 "
		       "with BPF uprobe-multi links and BTF; -v shows libbpf's details)",
		       strerror(-err), kernel_release());
	return err;
}

int probes__open(struct probes **pp, uint32_t ncounters)
{
	return probes__open_loops(pp, ncounters, 0);
}

int probes__open_loops(struct probes **pp, uint32_t ncounters, uint32_t nloops)
{
	struct probes *p;
	int err;

	*pp = NULL;
	if (!ncounters || ncounters > EP_MAX_COUNTERS) {
		pr_err("cannot load the BPF program: %u counters (1 to %llu allowed)", ncounters,
		       (unsigned long long)EP_MAX_COUNTERS);
		return -EINVAL;
	}
	libbpf_set_print(libbpf_log);
	if (access(KERNEL_BTF, R_OK)) {
		err = -errno;
		pr_err("cannot load the BPF program: kernel BTF '%s' unavailable: %s (needs a "
		       "kernel built with CONFIG_DEBUG_INFO_BTF)",
		       KERNEL_BTF, strerror(errno));
		return err;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	p->ncounters = ncounters;
	p->used = calloc(ncounters, 1);
	if (!p->used) {
		free(p);
		pr_err("out of memory");
		return -ENOMEM;
	}
	/* No setrlimit(RLIMIT_MEMLOCK): the kernel charges BPF memory to the memcg, and
	 * libbpf bumps the limit itself on kernels that still need it. */
	p->bound_pid = -1;
	p->skel = edgeprof_bpf__open();
	if (!p->skel) {
		err = -errno;
		pr_err("cannot open the BPF program: %s", strerror(errno));
		goto fail;
	}
	err = bpf_map__set_max_entries(p->skel->maps.counters, ncounters);
	if (err) {
		pr_err("cannot size the BPF counters: %s", strerror(-err));
		goto fail;
	}
	if (nloops > EP_LOOP_MAX_LOOPS) {
		pr_err("cannot load the BPF program: %u loops (at most %u)", nloops,
		       EP_LOOP_MAX_LOOPS);
		err = -EINVAL;
		goto fail;
	}
	p->nloops = nloops;
	err = bpf_map__set_max_entries(p->skel->maps.loop_moments, nloops ? nloops : 1);
	if (!err && !nloops)
		err = bpf_map__set_max_entries(p->skel->maps.loop_state, 1);
	if (err) {
		pr_err("cannot size the BPF loop maps: %s", strerror(-err));
		goto fail;
	}
	err = edgeprof_bpf__load(p->skel);
	if (err) {
		report_load_error(err);
		goto fail;
	}
	p->skel->links.ep_fork = bpf_program__attach(p->skel->progs.ep_fork);
	if (!p->skel->links.ep_fork) {
		err = -errno;
		pr_err("cannot attach to the sched_process_fork tracepoint: %s", strerror(errno));
		goto fail;
	}
	p->skel->links.ep_exit = bpf_program__attach(p->skel->progs.ep_exit);
	if (!p->skel->links.ep_exit) {
		err = -errno;
		pr_err("cannot attach to the sched_process_exit tracepoint: %s", strerror(errno));
		goto fail;
	}
	*pp = p;
	return 0;
fail:
	probes__close(p);
	return err < 0 ? err : -EINVAL;
}

static bool index_ok(const struct probes *p, uint64_t idx)
{
	return idx == EP_IDX_NONE || idx < p->ncounters;
}

/* Whether COOKIE is well formed and names existing counters only. */
static bool cookie_ok(const struct probes *p, uint64_t cookie)
{
	uint64_t kind = cookie >> EP_KIND_SHIFT;

	if (kind == EP_SITE_COUNT)
		return index_ok(p, cookie & EP_IDX_MASK);
	if (kind == EP_SITE_INDIRECT) {
		uint64_t base = (cookie >> 56) & 31, index = (cookie >> 51) & 31;

		/* A register jump needs its register; a memory jump may lack either. */
		return (base < 16 || base == EP_REG_NONE) && (index < 16 || index == EP_REG_NONE) &&
		       ((cookie >> 61) & 1 ? true : base < 16);
	}
	if (kind == EP_SITE_ACCUM) {
		uint64_t cc = (cookie >> EP_CC_SHIFT) & EP_CC_MASK;

		return (cc <= 0x13 || cc == EP_CC_ALWAYS) && index_ok(p, cookie & EP_IDX_MASK);
	}
	if (kind != EP_SITE_BRANCH || ((cookie >> EP_CC_SHIFT) & EP_CC_MASK) > 0x13)
		return false;
	return index_ok(p, cookie & EP_IDX_MASK) &&
	       index_ok(p, (cookie >> EP_IDX_BITS) & EP_IDX_MASK);
}

static void mark_used(struct probes *p, uint64_t idx)
{
	if (idx != EP_IDX_NONE && idx < p->ncounters && !p->used[idx]) {
		p->used[idx] = 1;
		p->nused++;
	}
}

/* Marks the counters the N COOKIES of ep_hit probes can increment (its only writes to the
 * counters map), so that probes__read may read just those. */
static void mark_cookies(struct probes *p, const uint64_t *cookies, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t kind = cookies[i] >> EP_KIND_SHIFT;

		if (kind == EP_SITE_COUNT || kind == EP_SITE_BRANCH || kind == EP_SITE_ACCUM)
			mark_used(p, cookies[i] & EP_IDX_MASK);
		if (kind == EP_SITE_BRANCH)
			mark_used(p, (cookies[i] >> EP_IDX_BITS) & EP_IDX_MASK);
	}
}

static int add_link(struct probes *p, struct bpf_link *l, int pid)
{
	if (p->nlinks == p->links_cap) {
		size_t cap = p->links_cap ? 2 * p->links_cap : 8;
		struct probe_link *n = realloc(p->links, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->links = n;
		p->links_cap = cap;
	}
	p->links[p->nlinks++] = (struct probe_link){ l, pid, 0 };
	return 0;
}

/* Links to destroy, shared by the threads of destroy_links: each takes the next one. */
struct link_work {
	struct probe_link *links;
	size_t n;
	atomic_size_t next;
};

static void *destroy_worker(void *arg)
{
	struct link_work *w = arg;

	for (size_t i; (i = atomic_fetch_add(&w->next, 1)) < w->n;)
		bpf_link__destroy(w->links[i].l);
	return NULL;
}

/* Destroys the N LINKS. Releasing a uprobe(-multi) link waits for a grace period of the
 * kernel's uprobe machinery (RCU tasks trace), 25-75 ms each here, one after the other when
 * closed in a row (0.3 s for the 9 links of a sqlite3 run): the links are closed from up to
 * PROBES_DESTROY_THREADS threads at once, so their grace periods overlap. Every link is gone
 * on return (the calling thread takes links too, and all of them when no thread starts). */
static void destroy_links(struct probe_link *links, size_t n)
{
	struct link_work w = { .links = links, .n = n };
	pthread_t tid[PROBES_DESTROY_THREADS];
	size_t nthreads = 0;

	atomic_init(&w.next, 0);
	while (nthreads + 1 < n && nthreads < PROBES_DESTROY_THREADS &&
	       !pthread_create(&tid[nthreads], NULL, destroy_worker, &w))
		nthreads++;
	destroy_worker(&w);
	for (size_t i = 0; i < nthreads; i++)
		pthread_join(tid[i], NULL);
}

/* CLOCK_MONOTONIC in seconds (probes.o is linked alone into tests/bpf_branch_test). */
static double mono_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Links handed to a background thread by probes__detach_async. */
struct detach_job {
	pthread_t tid;
	struct probe_link *links;
	size_t n;
	double started, took; /* mono_seconds() at the start; seconds destroying the links */
};

static void *detach_thread(void *arg)
{
	struct detach_job *j = arg;

	destroy_links(j->links, j->n);
	j->took = mono_seconds() - j->started;
	return NULL;
}

void probes__detach_async(struct probes *p)
{
	struct detach_job *j;

	if (!p || !p->nlinks || p->detaching)
		return;
	j = malloc(sizeof(*j));
	if (!j)
		return; /* probes__close destroys them */
	*j = (struct detach_job){ .links = p->links, .n = p->nlinks, .started = mono_seconds() };
	if (pthread_create(&j->tid, NULL, detach_thread, j)) {
		free(j);
		return;
	}
	p->detaching = j;
	p->links = NULL;
	p->nlinks = p->links_cap = 0;
}

/* Waits for the links probes__detach_async handed over to be gone. */
static void detach_wait(struct probes *p)
{
	struct detach_job *j = p->detaching;
	double t0;

	if (!j)
		return;
	t0 = mono_seconds();
	pthread_join(j->tid, NULL);
	pr_debug("%zu links destroyed in the background in %.3f s (%.3f s waited for)", j->n,
		 j->took, mono_seconds() - t0);
	free(j->links);
	free(j);
	p->detaching = NULL;
}

/* Attaches PROG at the N FILE_OFFSETS of BINARY_PATH with COOKIES, PROBES_MAX_PER_LINK to a
 * link; WHAT names them in messages ("probes", "loop probes"). Returns 0, -ENOTSUPP (an
 * instruction the kernel refuses, not reported: the caller looks) or another negative errno
 * (reported); on failure the links it made are gone. */
static int attach_multi(struct probes *p, struct bpf_program *prog, const char *what,
			const char *binary_path, const uint64_t *file_offsets,
			const uint64_t *cookies, size_t n, int pid)
{
	size_t first_link = p->nlinks;
	int err;

	if (prog == p->skel->progs.ep_hit)
		mark_cookies(p, cookies, n);
	for (size_t done = 0; done < n;) {
		size_t cnt = n - done < PROBES_MAX_PER_LINK ? n - done : PROBES_MAX_PER_LINK;
		LIBBPF_OPTS(bpf_uprobe_multi_opts, opts,
			    .offsets = (const unsigned long *)(file_offsets + done),
			    .cookies = (const __u64 *)(cookies + done), .cnt = cnt);
		struct bpf_link *l;

		/* pid -1: every process mapping the binary; the pids map filters. */
		l = bpf_program__attach_uprobe_multi(prog, pid, binary_path, NULL, &opts);
		if (!l) {
			err = -errno;
			if (err == -ENOTSUPP)
				goto fail; /* an instruction the kernel refuses: the caller looks */
			pr_err("cannot attach %zu %s to '%s': %s%s", cnt, what, binary_path,
			       strerror(-err),
			       err == -EINVAL || err == -EOPNOTSUPP
				   ? " (an offset that is not an instruction start, or a "
				     "kernel without uprobe-multi links: Linux >= 6.6)"
				   : "");
			goto fail;
		}
		err = add_link(p, l, pid);
		if (err) {
			bpf_link__destroy(l);
			pr_err("out of memory");
			goto fail;
		}
		done += cnt;
	}
	pr_debug("attached %zu %s to '%s'", n, what, binary_path);
	return 0;
fail:
	while (p->nlinks > first_link)
		bpf_link__destroy(p->links[--p->nlinks].l);
	return err;
}

/* attach_multi for the process the links are bound to, remembered (when forked children
 * are followed) to be attached again for each counted child. */
static int attach_spec(struct probes *p, struct bpf_program *prog, const char *what,
		       const char *path, const uint64_t *offs, const uint64_t *cookies, size_t n)
{
	size_t first_link = p->nlinks;
	struct probe_spec *ns, *sp;
	int err = attach_multi(p, prog, what, path, offs, cookies, n, p->bound_pid);

	if (err || !p->follow_forks || !n)
		return err;
	ns = realloc(p->specs, (p->nspecs + 1) * sizeof(*ns));
	if (!ns)
		goto oom;
	p->specs = ns;
	sp = &p->specs[p->nspecs];
	*sp = (struct probe_spec){ .prog = prog, .what = what, .n = n, .path = strdup(path),
				   .offs = malloc(n * sizeof(*offs)),
				   .cookies = malloc(n * sizeof(*cookies)) };
	if (!sp->path || !sp->offs || !sp->cookies) {
		free(sp->path);
		free(sp->offs);
		free(sp->cookies);
		goto oom;
	}
	memcpy(sp->offs, offs, n * sizeof(*offs));
	memcpy(sp->cookies, cookies, n * sizeof(*cookies));
	p->nspecs++;
	return 0;
oom:
	while (p->nlinks > first_link)
		bpf_link__destroy(p->links[--p->nlinks].l);
	pr_err("out of memory");
	return -ENOMEM;
}

int probes__attach(struct probes *p, const char *binary_path, const uint64_t *file_offsets,
		   const uint64_t *cookies, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!cookie_ok(p, cookies[i])) {
			pr_err("'%s': invalid probe cookie %#llx at file offset %#llx", binary_path,
			       (unsigned long long)cookies[i], (unsigned long long)file_offsets[i]);
			return -EINVAL;
		}
	}
	return attach_spec(p, p->skel->progs.ep_hit, "probes", binary_path, file_offsets, cookies,
			   n);
}

int probes__attach_loops(struct probes *p, const char *binary_path, const uint64_t *file_offsets,
			 const uint64_t *cookies, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((uint32_t)cookies[i] >= p->nloops ||
		    (cookies[i] >> EP_KIND_SHIFT) > EP_LOOP_ENTER) {
			pr_err("'%s': invalid loop probe cookie %#llx", binary_path,
			       (unsigned long long)cookies[i]);
			return -EINVAL;
		}
	if (n > PROBES_MAX_PER_LINK) {
		pr_err("'%s': %zu loop probes (at most %u)", binary_path, n, PROBES_MAX_PER_LINK);
		return -E2BIG;
	}
	return attach_spec(p, p->skel->progs.ep_loop, "loop probes", binary_path, file_offsets,
			   cookies, n);
}

int probes__read_loops(struct probes *p, struct probes_loop_moments *m, uint64_t *lost)
{
	int fd = bpf_map__fd(p->skel->maps.loop_moments);
	int sfd = bpf_map__fd(p->skel->maps.loop_state);
	int ncpu = libbpf_num_possible_cpus();
	struct ep_loop_moments *vals;
	struct ep_loop_key key, next;
	bool first = true;
	uint64_t trips;

	*lost = p->skel->bss->lost_loop_trips;
	if (ncpu <= 0) {
		pr_err("cannot count the CPUs: %s", strerror(-ncpu));
		return ncpu < 0 ? ncpu : -EINVAL;
	}
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals) {
		pr_err("out of memory");
		return -ENOMEM;
	}
	for (uint32_t k = 0; k < p->nloops; k++) {
		int err = bpf_map_lookup_elem(fd, &k, vals);

		if (err) {
			err = -errno;
			pr_err("cannot read the moments of loop %u: %s", k, strerror(-err));
			free(vals);
			return err;
		}
		m[k] = (struct probes_loop_moments){ 0 };
		for (int c = 0; c < ncpu; c++) {
			m[k].entries += vals[c].entries;
			m[k].sum += vals[c].sum;
			m[k].sumsq += (unsigned __int128)vals[c].sumsq_hi << 64 | vals[c].sumsq_lo;
		}
	}
	free(vals);
	/* Entries still held: their frames were left without entering the loop again (or the
	 * thread or process ended inside it): each is a completed entry. */
	while (!bpf_map_get_next_key(sfd, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		if (key.loop < p->nloops && !bpf_map_lookup_elem(sfd, &key, &trips) && trips) {
			m[key.loop].entries++;
			m[key.loop].sum += trips;
			m[key.loop].sumsq += (unsigned __int128)trips * trips;
			m[key.loop].held++;
		}
	}
	return 0;
}

int probes__add_pid(struct probes *p, int pid)
{
	uint32_t key = (uint32_t)pid;
	uint8_t one = 1;
	int err;

	err =
	    bpf_map__update_elem(p->skel->maps.pids, &key, sizeof(key), &one, sizeof(one), BPF_ANY);
	if (err)
		pr_err("cannot count process %d: %s", pid, strerror(-err));
	return err;
}

int probes__watch(struct probes *p, int pid, const char *path, uint64_t file_offset)
{
	unsigned long off = file_offset;
	LIBBPF_OPTS(bpf_uprobe_multi_opts, opts, .offsets = &off, .cnt = 1);
	struct bpf_link *l;
	int err;

	l = bpf_program__attach_uprobe_multi(p->skel->progs.ep_notify, pid > 0 ? pid : p->bound_pid,
					     path, NULL, &opts);
	if (!l) {
		err = -errno;
		pr_debug("cannot watch '%s' at %#llx: %s", path, (unsigned long long)file_offset,
			 strerror(-err));
		return err;
	}
	err = add_link(p, l, pid > 0 ? pid : p->bound_pid);
	if (err)
		bpf_link__destroy(l);
	else
		p->links[p->nlinks - 1].watch = watch_key(path, file_offset);
	return err;
}

int probes__unwatch(struct probes *p, int pid, const char *path, uint64_t file_offset)
{
	uint64_t key = watch_key(path, file_offset);

	if (pid <= 0)
		pid = p->bound_pid;
	for (size_t i = 0; i < p->nlinks; i++)
		if (p->links[i].watch == key && p->links[i].pid == pid) {
			bpf_link__destroy(p->links[i].l);
			memmove(&p->links[i], &p->links[i + 1],
				(--p->nlinks - i) * sizeof(p->links[0]));
			return 0;
		}
	return -ENOENT;
}

void probes__bind_pid(struct probes *p, int pid)
{
	p->bound_pid = pid > 0 ? pid : -1;
}

void probes__follow_forks(struct probes *p)
{
	p->follow_forks = true;
}

/* Destroys every link bound to PID (and forgets PID as a child). */
static void drop_links(struct probes *p, int pid)
{
	size_t k = 0;

	for (size_t i = 0; i < p->nlinks; i++) {
		if (p->links[i].pid == pid)
			bpf_link__destroy(p->links[i].l);
		else
			p->links[k++] = p->links[i];
	}
	p->nlinks = k;
	k = 0;
	for (size_t i = 0; i < p->nchildren; i++) {
		if (p->children[i].pid == pid)
			close(p->children[i].pidfd);
		else
			p->children[k++] = p->children[i];
	}
	p->nchildren = k;
}

void probes__drop_pid(struct probes *p, int pid)
{
	if (pid > 0)
		drop_links(p, pid);
}

/* Destroys the links of the children that are gone (their pidfd is readable). */
static void reap_children(struct probes *p)
{
	for (size_t i = p->nchildren; i-- > 0;) {
		struct pollfd pfd = { .fd = p->children[i].pidfd, .events = POLLIN };

		if (poll(&pfd, 1, 0) == 1)
			drop_links(p, p->children[i].pid);
	}
}

int probes__add_child(struct probes *p, int pid)
{
	uint32_t key = (uint32_t)pid;
	struct probe_child *nc;
	struct timespec t0, t1;
	size_t nprobes = 0;
	uint8_t v;
	int err = 0, pidfd;

	if (!p->follow_forks || !p->nspecs || pid <= 0 ||
	    bpf_map__lookup_elem(p->skel->maps.pids, &key, sizeof(key), &v, sizeof(v), 0))
		return 0; /* not a counted process (a thread, or a child of an exec'd one) */
	reap_children(p);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	nc = pidfd >= 0 ? realloc(p->children, (p->nchildren + 1) * sizeof(*nc)) : NULL;
	if (!nc) {
		err = pidfd < 0 ? -errno : -ENOMEM;
		if (pidfd >= 0)
			close(pidfd);
		goto fail;
	}
	p->children = nc;
	p->children[p->nchildren++] = (struct probe_child){ pid, pidfd };
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i < p->nspecs && !err; i++) {
		const struct probe_spec *sp = &p->specs[i];

		err = attach_multi(p, sp->prog, sp->what, sp->path, sp->offs, sp->cookies, sp->n,
				   pid);
		nprobes += sp->n;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pr_debug("process %d: %zu probes attached for it in %.3f ms", pid, nprobes,
		 (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	if (!err)
		return 0;
	drop_links(p, pid);
fail:
	p->failed_children++;
	pr_warn("process %d: cannot attach its probes: %s (its counts are lost)", pid,
		strerror(-err));
	return err;
}

int probes__remove_pid(struct probes *p, int pid)
{
	uint32_t key = (uint32_t)pid;
	int err = bpf_map__delete_elem(p->skel->maps.pids, &key, sizeof(key), 0);

	if (err && err != -ENOENT) {
		pr_err("cannot stop counting process %d: %s", pid, strerror(-err));
		return err;
	}
	return 0;
}

/* One lookup per counter: the fallback for kernels without batch lookups on arrays (ALL), or
 * (!ALL) the counters a probe can increment when they are few (the others are 0). */
static int read_one_by_one(struct probes *p, uint64_t *counters, bool all)
{
	for (uint32_t k = 0; k < p->ncounters; k++) {
		int err;

		if (!all && !p->used[k]) {
			counters[k] = 0;
			continue;
		}
		err = bpf_map__lookup_elem(p->skel->maps.counters, &k, sizeof(k), &counters[k],
					   sizeof(counters[k]), 0);
		if (err) {
			pr_err("cannot read BPF counter %u: %s", k, strerror(-err));
			return err;
		}
	}
	return 0;
}

int probes__read(struct probes *p, uint64_t *counters)
{
	int fd = bpf_map__fd(p->skel->maps.counters);
	uint32_t *keys = NULL, in_key = 0, out_key = 0, done = 0;
	uint64_t *vals = NULL;
	bool first = true;
	int err = 0;

	keys = calloc(PROBES_READ_CHUNK, sizeof(*keys));
	vals = calloc(PROBES_READ_CHUNK, sizeof(*vals));
	if (!keys || !vals) {
		pr_err("out of memory");
		err = -ENOMEM;
		goto out;
	}
	/* Counters in process (the patch backend) have BPF counters no probe increments: a
	 * batch lookup of all 52,908 of a sqlite3 plan takes 25 ms, the 55 a probe names 0.1 ms. */
	if (p->nused < p->ncounters / PROBES_SPARSE_READ) {
		err = read_one_by_one(p, counters, false);
		goto out;
	}
	while (done < p->ncounters) {
		LIBBPF_OPTS(bpf_map_batch_opts, opts);
		__u32 cnt = p->ncounters - done < PROBES_READ_CHUNK ? p->ncounters - done
								    : PROBES_READ_CHUNK;

		err = bpf_map_lookup_batch(fd, first ? NULL : &in_key, &out_key, keys, vals, &cnt,
					   &opts);
		if (err && err != -ENOENT) {
			if (first) {
				pr_debug("batch lookup failed (%s), reading one by one",
					 strerror(-err));
				err = read_one_by_one(p, counters, true);
			} else {
				pr_err("cannot read the BPF counters: %s", strerror(-err));
			}
			goto out;
		}
		for (__u32 i = 0; i < cnt; i++)
			if (keys[i] < p->ncounters)
				counters[keys[i]] = vals[i];
		done += cnt;
		first = false;
		in_key = out_key;
		if (err == -ENOENT)
			break;
	}
	err = 0;
	if (done != p->ncounters) {
		pr_err("read %u of %u BPF counters", done, p->ncounters);
		err = -EIO;
	}
out:
	free(keys);
	free(vals);
	return err;
}

uint32_t probes__ncounters(const struct probes *p)
{
	return p->ncounters;
}

uint64_t probes__lost_forks(const struct probes *p)
{
	const volatile __u64 *lost;

	if (!p || !p->skel->bss)
		return 0;
	lost = &p->skel->bss->lost_forks;
	return *lost + p->failed_children;
}

void probes__close(struct probes *p)
{
	if (!p)
		return;
	detach_wait(p);
	destroy_links(p->links, p->nlinks);
	free(p->links);
	for (size_t i = 0; i < p->nchildren; i++)
		close(p->children[i].pidfd);
	free(p->children);
	for (size_t i = 0; i < p->nspecs; i++) {
		free(p->specs[i].path);
		free(p->specs[i].offs);
		free(p->specs[i].cookies);
	}
	free(p->specs);
	free(p->used);
	edgeprof_bpf__destroy(p->skel);
	free(p);
}

static uint64_t site_index(uint32_t counter)
{
	return counter == PLACEMENT_NO_COUNTER ? EP_IDX_NONE : counter;
}

uint64_t probes__cookie(const struct probe_site *s)
{
	if (s->kind == SITE_INDIRECT)
		return ep_cookie_indirect(s->ordinal, s->mem, s->base, s->index, s->scale_log2,
					  s->disp);
	if (s->kind == SITE_BRANCH)
		return ep_cookie_branch(s->cc, site_index(s->counter), site_index(s->counter2));
	return ep_cookie_count(site_index(s->counter));
}

int probes__read_indirect(struct probes *p, probes_indirect_fn fn, void *ctx)
{
	struct ep_indirect_key key, next;
	int fd = bpf_map__fd(p->skel->maps.indirect), rc;
	bool first = true;
	uint64_t v;

	for (;;) {
		rc = bpf_map_get_next_key(fd, first ? NULL : &key, &next);
		if (rc)
			break;
		first = false;
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &v) == 0)
			fn(ctx, key.site, key.target, v);
	}
	if (p->skel->bss->lost_indirect)
		return pr_err("%llu indirect jumps could not be recorded (too many targets)",
			      (unsigned long long)p->skel->bss->lost_indirect);
	return 0;
}

/* Tries to attach a count probe at each of OFFS[lo, hi) of PATH at once; on a refusal,
 * narrows down to the offsets the kernel refuses, appending them to *BAD. */
static int bisect_refused(struct probes *p, const char *path, const uint64_t *offs,
			  const uint64_t *cookies, size_t lo, size_t hi, uint64_t **bad,
			  size_t *nbad, int *calls)
{
	LIBBPF_OPTS(bpf_uprobe_multi_opts, opts, .offsets = (const unsigned long *)(offs + lo),
		    .cookies = (const __u64 *)(cookies + lo), .cnt = hi - lo);
	struct bpf_link *l;
	int err;

	if (lo >= hi)
		return 0;
	if (++*calls > 100000)
		return -E2BIG;
	mark_cookies(p, cookies + lo, hi - lo);
	l = bpf_program__attach_uprobe_multi(p->skel->progs.ep_hit, p->bound_pid, path, NULL,
					     &opts);
	if (l) {
		bpf_link__destroy(l);
		return 0;
	}
	err = -errno;
	if (err != -ENOTSUPP && err != -EINVAL && err != -EOPNOTSUPP)
		return err; /* not about an offset */
	if (hi - lo == 1) {
		uint64_t *nb = realloc(*bad, (*nbad + 1) * sizeof(*nb));

		if (!nb)
			return -ENOMEM;
		*bad = nb;
		(*bad)[(*nbad)++] = offs[lo];
		return 0;
	}
	err = bisect_refused(p, path, offs, cookies, lo, lo + (hi - lo) / 2, bad, nbad, calls);
	return err ? err : bisect_refused(p, path, offs, cookies, lo + (hi - lo) / 2, hi, bad,
					  nbad, calls);
}

int probes__refused(struct probes *p, const char *binary_path, const uint64_t *file_offsets,
		    size_t n, uint64_t **bad, size_t *nbad)
{
	uint64_t *cookies;
	int err = 0, calls = 0;

	*bad = NULL;
	*nbad = 0;
	if (!n)
		return 0;
	cookies = calloc(n, sizeof(*cookies)); /* count cookies of counter 0 */
	if (!cookies)
		return -ENOMEM;
	for (size_t done = 0; !err && done < n; done += PROBES_MAX_PER_LINK) {
		size_t hi = n - done < PROBES_MAX_PER_LINK ? n : done + PROBES_MAX_PER_LINK;

		err = bisect_refused(p, binary_path, file_offsets, cookies, done, hi, bad, nbad,
				     &calls);
	}
	free(cookies);
	if (err) {
		free(*bad);
		*bad = NULL;
		*nbad = 0;
		return pr_err("cannot check the probe sites of '%s': %s", binary_path,
			      strerror(-err));
	}
	return 0;
}
