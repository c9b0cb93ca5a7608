/*
 * Driver for tests/bpf-branch.sh: checks the BPF program's branch evaluation against the CPU.
 * Small assembly functions each compare their arguments and run one conditional jump (every
 * x86 condition, rel8 and rel32 forms, jrcxz, loop, loope, loopne), returning 1 when the jump
 * was taken. The driver puts a branch probe on each jump of its own executable, runs every
 * function on many operand pairs and requires the taken / not-taken counters to equal what
 * the CPU did, exactly, and the CPU to do what it did without probes. It also checks a known
 * split (a jb taken 300 times in 1000), a count site on a 5-byte nop, and that hits in a
 * thread and in a forked child are counted. Exit 0 pass, 77 BPF unavailable, 1 fail.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf/edgeprof.h"
#include "user/count/probes.h"

/* f(a, b, c): flags from `cmp b, a` (a - b), rcx = a for the rcx forms (ZF from cmp c, b
 * for loope/loopne); returns 1 iff the probed jump at label NAME_j was taken. */
#define JCC_FN(name, insn)                                                                \
	".globl " #name "\n.globl " #name "_j\n.type " #name ",@function\n" #name ":\n"    \
	"\tcmp %rsi, %rdi\n" #name "_j:\n\t" insn " 1f\n\txor %eax, %eax\n\tret\n"       \
	"1:\tmov $1, %eax\n\tret\n"
#define RCX_FN(name, insn)                                                                \
	".globl " #name "\n.globl " #name "_j\n.type " #name ",@function\n" #name ":\n"    \
	"\tmov %rdi, %rcx\n\tcmp %rdx, %rsi\n" #name "_j:\n\t" insn " 1f\n"               \
	"\txor %eax, %eax\n\tret\n1:\tmov $1, %eax\n\tret\n"

#define JCC_PAIR(cc)                                                                       \
	JCC_FN(t8_##cc, "j" #cc)                                                           \
	JCC_FN(t32_##cc, "{disp32} j" #cc)

__asm__(".text\n"
	JCC_PAIR(o) JCC_PAIR(no) JCC_PAIR(b) JCC_PAIR(ae) JCC_PAIR(e) JCC_PAIR(ne)
	JCC_PAIR(be) JCC_PAIR(a) JCC_PAIR(s) JCC_PAIR(ns) JCC_PAIR(p) JCC_PAIR(np)
	JCC_PAIR(l) JCC_PAIR(ge) JCC_PAIR(le) JCC_PAIR(g)
	JCC_FN(t_known, "jb")
	RCX_FN(t_jrcxz, "jrcxz") RCX_FN(t_loop, "loop") RCX_FN(t_loope, "loope")
	RCX_FN(t_loopne, "loopne")
	".globl t_nop5\n.type t_nop5,@function\nt_nop5:\n\tnopl 0x0(%rax,%rax,1)\n\tret\n");

typedef int jump_fn(long a, long b, long c);

#define DECL_PAIR(cc)                                                                      \
	extern jump_fn t8_##cc, t32_##cc;                                                  \
	extern const char t8_##cc##_j[], t32_##cc##_j[];
DECL_PAIR(o) DECL_PAIR(no) DECL_PAIR(b) DECL_PAIR(ae) DECL_PAIR(e) DECL_PAIR(ne)
DECL_PAIR(be) DECL_PAIR(a) DECL_PAIR(s) DECL_PAIR(ns) DECL_PAIR(p) DECL_PAIR(np)
DECL_PAIR(l) DECL_PAIR(ge) DECL_PAIR(le) DECL_PAIR(g)
extern jump_fn t_known, t_jrcxz, t_loop, t_loope, t_loopne;
extern const char t_known_j[], t_jrcxz_j[], t_loop_j[], t_loope_j[], t_loopne_j[];
extern void t_nop5(void);

struct site {
	const char *name;
	jump_fn *fn;
	const void *jump;
	unsigned cc;
	uint64_t taken, not_taken; /* what the CPU did */
	uint64_t unprobed_taken;   /* the same calls without probes */
};

#define SITE_PAIR(cc, code)                                                                \
	{ "j" #cc, t8_##cc, t8_##cc##_j, code, 0, 0, 0 },                                      \
	{ "j" #cc " rel32", t32_##cc, t32_##cc##_j, code, 0, 0, 0 },
static struct site sites[] = {
	SITE_PAIR(o, 0x0) SITE_PAIR(no, 0x1) SITE_PAIR(b, 0x2) SITE_PAIR(ae, 0x3)
	SITE_PAIR(e, 0x4) SITE_PAIR(ne, 0x5) SITE_PAIR(be, 0x6) SITE_PAIR(a, 0x7)
	SITE_PAIR(s, 0x8) SITE_PAIR(ns, 0x9) SITE_PAIR(p, 0xa) SITE_PAIR(np, 0xb)
	SITE_PAIR(l, 0xc) SITE_PAIR(ge, 0xd) SITE_PAIR(le, 0xe) SITE_PAIR(g, 0xf)
	{ "jrcxz", t_jrcxz, t_jrcxz_j, 0x10, 0, 0, 0 },
	{ "loop", t_loop, t_loop_j, 0x11, 0, 0, 0 },
	{ "loope", t_loope, t_loope_j, 0x12, 0, 0, 0 },
	{ "loopne", t_loopne, t_loopne_j, 0x13, 0, 0, 0 },
	{ "jb 300/1000", t_known, t_known_j, 0x2, 0, 0, 0 },
};
#define NSITES (sizeof(sites) / sizeof(sites[0]))
#define KNOWN (NSITES - 1)
#define NOP5_COUNTER (2 * NSITES)
#define NCOUNTERS (2 * NSITES + 1)

static const long values[] = {
	0, 1, 2, 3, 0x7f, 0x80, 0xff, 0x100, 300, -1, -2, -300, LONG_MAX, LONG_MAX - 1,
	LONG_MIN, LONG_MIN + 1, 0x5555555555555555L, (long)0xaaaaaaaaaaaaaaaaUL, 0x1234567,
};
#define NVALUES (sizeof(values) / sizeof(values[0]))

/* The file offset of ADDR in its mapping of this executable, from /proc/self/maps. */
static int file_offset(const void *addr, uint64_t *off)
{
	uintptr_t a = (uintptr_t)addr;
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end, pgoff;

		if (sscanf(line, "%lx-%lx %*s %lx", &start, &end, &pgoff) == 3 && a >= start &&
		    a < end) {
			*off = a - start + pgoff;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

static void run_all(int rounds)
{
	for (int r = 0; r < rounds; r++)
		for (size_t s = 0; s < KNOWN; s++)
			for (size_t i = 0; i < NVALUES; i++)
				for (size_t j = 0; j < NVALUES; j++) {
					long c = values[(i + j + r) % NVALUES];

					if (sites[s].fn(values[i], values[j], c))
						sites[s].taken++;
					else
						sites[s].not_taken++;
				}
}

static void *thread_main(void *arg)
{
	for (int i = 0; i < 500; i++)
		t_nop5();
	return arg;
}

int main(int argc, char **argv)
{
	uint64_t offs[NSITES + 1], cookies[NSITES + 1], counters[NCOUNTERS];
	struct probes *p;
	pthread_t th;
	int status, fails = 0;
	char exe[PATH_MAX];
	ssize_t len;
	pid_t child;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len < 0) {
		perror("readlink /proc/self/exe");
		return 1;
	}
	exe[len] = '\0';
	for (size_t s = 0; s < NSITES; s++) {
		if (file_offset(sites[s].jump, &offs[s])) {
			fprintf(stderr, "no mapping for %s\n", sites[s].name);
			return 1;
		}
		cookies[s] = ep_cookie_branch(sites[s].cc, 2 * s, 2 * s + 1);
	}
	if (file_offset((const void *)t_nop5, &offs[NSITES]))
		return 1;
	cookies[NSITES] = ep_cookie_count(NOP5_COUNTER);

	/* The reference: what the jumps do without probes (a probe must not change that). */
	run_all(3);
	for (size_t s = 0; s < NSITES; s++) {
		sites[s].unprobed_taken = sites[s].taken;
		sites[s].taken = sites[s].not_taken = 0;
	}

	if (probes__open(&p, NCOUNTERS)) {
		printf("SKIP: BPF unavailable (probes__open failed, see above)\n");
		return 77;
	}
	if (probes__attach(p, exe, offs, cookies, NSITES + 1) || probes__add_pid(p, getpid())) {
		probes__close(p);
		return 1;
	}

	run_all(3);
	for (long i = 0; i < 1000; i++) {
		if (sites[KNOWN].fn(i, 300, 0))
			sites[KNOWN].taken++;
		else
			sites[KNOWN].not_taken++;
	}
	for (int i = 0; i < 1234; i++)
		t_nop5();
	if (pthread_create(&th, NULL, thread_main, NULL) || pthread_join(th, NULL)) {
		fprintf(stderr, "pthread failed\n");
		return 1;
	}
	child = fork();
	if (child == 0) {
		for (int i = 0; i < 1000; i++)
			t_nop5();
		_exit(0);
	}
	if (child < 0 || waitpid(child, &status, 0) != child || status) {
		fprintf(stderr, "fork/wait failed\n");
		return 1;
	}
	if (probes__read(p, counters)) {
		probes__close(p);
		return 1;
	}

	for (size_t s = 0; s < NSITES; s++) {
		uint64_t t = counters[2 * s], n = counters[2 * s + 1];
		int ok = t == sites[s].taken && n == sites[s].not_taken &&
			 (s == KNOWN || sites[s].taken == sites[s].unprobed_taken);

		printf("%-12s cc %#04x  taken %6" PRIu64 "/%-6" PRIu64 " not taken %6" PRIu64
		       "/%-6" PRIu64 "  %s\n",
		       sites[s].name, sites[s].cc, t, sites[s].taken, n, sites[s].not_taken,
		       ok ? "ok" : "MISMATCH");
		fails += !ok;
	}
	if (sites[KNOWN].taken != 300 || counters[2 * KNOWN] != 300 ||
	    counters[2 * KNOWN + 1] != 700) {
		printf("jb 300/1000: expected taken 300, not taken 700: MISMATCH\n");
		fails++;
	}
	printf("nop5 count site: %" PRIu64 " (expected 1234 + 500 in a thread + 1000 in a "
	       "forked child = 2734)  %s\n",
	       counters[NOP5_COUNTER], counters[NOP5_COUNTER] == 2734 ? "ok" : "MISMATCH");
	fails += counters[NOP5_COUNTER] != 2734;
	if (probes__lost_forks(p)) {
		printf("lost forks: %" PRIu64 "\n", probes__lost_forks(p));
		fails++;
	}
	probes__close(p);
	printf("%s: %d mismatches\n", fails ? "FAIL" : "PASS", fails);
	(void)argc;
	(void)argv;
	return fails ? 1 : 0;
}
