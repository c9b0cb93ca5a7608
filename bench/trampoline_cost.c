/*
 * What an in-process counter costs per hit (user/count/trampoline.h): a tight loop of this
 * program's own text (the loop block add, add, cmp, jb rel8) is patched in place with each kind
 * of trampoline the generator makes, and timed against the unpatched loop. Prints, per variant,
 * the median of 5 runs of ns per iteration and the difference to the unpatched loop. Not a
 * test: `make build/bench/trampoline_cost && build/bench/trampoline_cost [iterations]`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cfg/cfg.h"
#include "cfg/flag_liveness.h"
#include "cfg/patch_window.h"
#include "user/count/trampoline.h"

uint32_t bench_loop(uint32_t n);
extern const char bench_body[];

__asm__(".text\n.globl bench_loop\n.type bench_loop,@function\n.p2align 6\n"
	"bench_loop:\n"
	"  xor %eax,%eax\n"
	"  xor %ecx,%ecx\n"
	"  jmp bench_body\n"
	".globl bench_body\n.p2align 4\nbench_body:\n"
	"  add %ecx,%eax\n"
	"  add $1,%ecx\n"
	"  cmp %edi,%ecx\n"
	"  .byte 0x72, 0xf7\n" /* jb bench_body */
	"  ret\n"
	".size bench_loop,.-bench_loop\n");

/* Compiler-made code for the spread-out case: counters bumped far apart. */
static __attribute__((noinline, noclone)) int bench_helper(int x)
{
	return x % 7 == 3 ? x / 2 : x * 3;
}

static __attribute__((noinline, noclone)) int bench_work(const int *v, int n)
{
	int acc = 0;

	for (int i = 0; i < n; i++) {
		switch (v[i] & 7) {
		case 0:
			acc += 3;
			break;
		case 1:
			acc ^= v[i];
			break;
		case 2:
			acc -= i;
			break;
		case 3:
			acc = acc * 5 + 1;
			break;
		case 5:
			acc += bench_helper(v[i]);
			break;
		default:
			acc--;
		}
		if (acc > 1000)
			acc /= 3;
		else if (acc < -1000)
			acc = -acc / 2;
	}
	return acc;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of 5 runs, ns per iteration. */
static double measure(uint32_t n)
{
	double v[5];

	for (int r = 0; r < 5; r++) {
		double t0 = now();
		volatile uint32_t sink = bench_loop(n);

		(void)sink;
		v[r] = (now() - t0) * 1e9 / n;
	}
	qsort(v, 5, sizeof(v[0]), cmp_d);
	return v[2];
}

static void set_text(uint64_t site, int prot)
{
	uint64_t page = site & ~(uint64_t)(getpagesize() - 1);

	if (mprotect((void *)(uintptr_t)page, 2 * (size_t)getpagesize(), prot)) {
		perror("mprotect");
		exit(1);
	}
}

#define WORK_N 4096
#define WORK_REPS 2000

/* Median of 5, ns per bench_work call over V. */
static double time_work(const int *v)
{
	double t[5];

	for (int r = 0; r < 5; r++) {
		double t0 = now();
		volatile int sink = 0;

		for (int k = 0; k < WORK_REPS; k++)
			sink += bench_work(v, WORK_N);
		t[r] = (now() - t0) * 1e9 / WORK_REPS;
	}
	qsort(t, 5, sizeof(t[0]), cmp_d);
	return t[2];
}

/* bench_work patched at every block start that has a count window (plain, then locked):
 * ns per hit = (patched - unpatched) / hits per call. */
static void spread(const struct patch_analysis *pa, const struct cfg_program *prog,
		   uint64_t bias, uint8_t *region)
{
	const struct cfg_func *f = cfg_program__find(prog, "bench_work");
	static int v[WORK_N];
	struct patch_blob b[64];
	uint32_t x = 12345, nb = 0;
	uint64_t end = 0, *c = (uint64_t *)(region + 32768);
	size_t fi;
	double base;

	if (!f)
		return;
	fi = (size_t)(f - prog->funcs);
	for (int i = 0; i < WORK_N; i++) {
		x = x * 1103515245u + 12345u;
		v[i] = (int)(x >> 8);
	}
	base = time_work(v);
	for (uint32_t bl = 0; bl < f->nblocks && nb < 64; bl++) {
		struct patch_window w;
		struct tramp_spec sp = { 0 };

		if (patch_analysis__count_window(pa, fi, f->blocks[bl].first_insn, NULL, 0, 0, &w) ||
		    w.short_jump || w.start < end)
			continue;
		end = w.start + w.len;
		sp.site = w.start + bias;
		sp.bytes = (const uint8_t *)(uintptr_t)sp.site;
		sp.len = w.len;
		sp.tramp = (uint64_t)(uintptr_t)region + 256 * (nb + 1);
		sp.counters = (uint64_t)(uintptr_t)c;
		sp.entry_counter = nb;
		sp.taken_counter = sp.not_taken_counter = PATCH_NO_COUNTER;
		sp.live_entry = w.live_entry;
		if (trampoline__emit(&sp, &b[nb]))
			return;
		nb++;
	}
	for (int atomic = 0; atomic < 2; atomic++) {
		uint64_t hits = 0;
		double t;

		for (uint32_t k = 0; k < nb; k++) {
			c[k] = 0;
			memcpy((void *)(uintptr_t)b[k].tramp, b[k].tramp_code, b[k].tramp_len);
			for (uint32_t l = 0; l < b[k].nlock; l++)
				((uint8_t *)(uintptr_t)b[k].tramp)[b[k].lock_offsets[l]] =
					atomic ? 0xf0 : 0x3e;
			set_text(b[k].site, PROT_READ | PROT_WRITE | PROT_EXEC);
			memcpy((void *)(uintptr_t)b[k].site, b[k].code, b[k].len);
			set_text(b[k].site, PROT_READ | PROT_EXEC);
		}
		t = time_work(v);
		for (uint32_t k = 0; k < nb; k++) {
			hits += c[k];
			set_text(b[k].site, PROT_READ | PROT_WRITE | PROT_EXEC);
			memcpy((void *)(uintptr_t)b[k].site, b[k].orig, b[k].len);
			set_text(b[k].site, PROT_READ | PROT_EXEC);
		}
		hits /= 5 * WORK_REPS; /* per call */
		printf("gcc -O2 loop, %u block starts patched (%s): %.0f ns/call vs %.0f unpatched, "
		       "%llu hits/call: %.2f ns per hit\n",
		       nb, atomic ? "lock" : "plain", t, base, (unsigned long long)hits,
		       (t - base) / (double)hits);
	}
	for (uint32_t k = 0; k < nb; k++)
		patch_blob__release(&b[k]);
}

int main(int argc, char **argv)
{
	uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 100000000u;
	struct elf_image img;
	struct cfg_program prog;
	struct patch_analysis pa;
	struct cfg_func *f;
	uint8_t *region = NULL;
	uint64_t bias, code = (uint64_t)(uintptr_t)bench_loop & ~0xffffull;
	long body;
	size_t fi;
	double base;
	struct variant {
		const char *name;
		bool branch, to_end, atomic;
		int live; /* -1: the analysis' */
		uint8_t save;
	} vs[] = {
		{ "count, plain incq (ds prefix)", false, false, false, -1, 0 },
		{ "count, lock incq", false, false, true, -1, 0 },
		{ "count, flag-saving: lahf+seto, rax saved", false, false, false, FLAG_ALL,
		  TRAMP_SAVE_LAHF },
		{ "count, flag-saving: lahf (OF dead), rax saved", false, false, false, FLAG_ZF,
		  TRAMP_SAVE_LAHF },
		{ "count, flag-saving: pushfq/popfq", false, false, false, FLAG_ALL,
		  TRAMP_SAVE_PUSHF },
		{ "count, lock incq + lahf+seto", false, false, true, FLAG_ALL, TRAMP_SAVE_LAHF },
		{ "count to block end (jump optimisation), plain", false, true, false, -1, 0 },
		{ "branch split, both outcomes counted, plain", true, false, false, -1, 0 },
	};

	if (elf_image__open(&img, "/proc/self/exe") || cfg_program__build(&prog, &img, NULL) ||
	    patch_analysis__build(&pa, &prog)) {
		fprintf(stderr, "trampoline_cost: cannot analyse /proc/self/exe\n");
		return 1;
	}
	f = cfg_program__find(&prog, "bench_loop");
	if (!f) {
		fprintf(stderr, "trampoline_cost: bench_loop not found\n");
		return 1;
	}
	fi = (size_t)(f - prog.funcs);
	bias = (uint64_t)(uintptr_t)bench_loop - f->entry;
	body = patch_func__insn_at(f, (uint64_t)(uintptr_t)bench_body - bias);
	for (uint64_t d = 1ull << 24; d < 1ull << 30 && !region; d += 1ull << 24) {
		void *p = mmap((void *)(uintptr_t)(code - d), 65536,
			       PROT_READ | PROT_WRITE | PROT_EXEC,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

		if (p != MAP_FAILED)
			region = p;
	}
	if (body < 0 || !region) {
		fprintf(stderr, "trampoline_cost: no loop body or no region\n");
		return 1;
	}
	base = measure(n);
	printf("%-50s %6.2f ns/iter\n", "unpatched loop", base);
	for (size_t v = 0; v < sizeof(vs) / sizeof(vs[0]); v++) {
		struct patch_window w;
		struct tramp_spec sp = { 0 };
		struct patch_blob b;
		int err = vs[v].branch
				  ? patch_analysis__branch_window(&pa, fi, (uint32_t)body + 3, NULL, 0, &w)
				  : patch_analysis__count_window(&pa, fi, (uint32_t)body, NULL, 0,
							 vs[v].to_end ? PATCH_WINDOW_TO_BLOCK_END : 0,
							 &w);
		double t;

		if (err) {
			fprintf(stderr, "trampoline_cost: no window for '%s'\n", vs[v].name);
			return 1;
		}
		sp.site = w.start + bias;
		sp.bytes = (const uint8_t *)(uintptr_t)sp.site;
		sp.len = w.len;
		sp.tramp = (uint64_t)(uintptr_t)region;
		sp.counters = (uint64_t)(uintptr_t)region + 32768;
		sp.entry_counter = vs[v].branch ? PATCH_NO_COUNTER : 0;
		sp.taken_counter = vs[v].branch ? 1 : PATCH_NO_COUNTER;
		sp.not_taken_counter = vs[v].branch ? 2 : PATCH_NO_COUNTER;
		sp.live_entry = vs[v].live < 0 ? w.live_entry : (uint8_t)vs[v].live;
		sp.live_taken = w.live_taken;
		sp.live_not_taken = w.live_not_taken;
		sp.atomic = vs[v].atomic;
		sp.flagsave = vs[v].save;
		if (trampoline__emit(&sp, &b)) {
			fprintf(stderr, "trampoline_cost: cannot emit '%s'\n", vs[v].name);
			return 1;
		}
		memset(region + 32768, 0, 64);
		memcpy(region, b.tramp_code, b.tramp_len);
		set_text(b.site, PROT_READ | PROT_WRITE | PROT_EXEC);
		memcpy((void *)(uintptr_t)b.site, b.code, b.len);
		t = measure(n);
		memcpy((void *)(uintptr_t)b.site, b.orig, b.len);
		set_text(b.site, PROT_READ | PROT_EXEC);
		{
			const uint64_t *c = (const uint64_t *)(region + 32768);
			uint64_t got = vs[v].branch ? c[1] + c[2] : c[0];

			printf("%-50s %6.2f ns/iter  (+%.2f)  counted %llu of %llu\n", vs[v].name, t,
			       t - base, (unsigned long long)got, 5ull * n);
		}
		patch_blob__release(&b);
	}
	spread(&pa, &prog, bias, region);
	patch_analysis__release(&pa);
	cfg_program__free(&prog);
	elf_image__close(&img);
	return 0;
}
