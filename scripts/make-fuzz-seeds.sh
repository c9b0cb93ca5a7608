#!/usr/bin/env bash
# Builds the seed corpus of the ELF/CFG fuzz target (tests/fuzz/corpus/elf_cfg/): a handful
# of small real x86-64 ELF files, a few KB each, so libFuzzer starts from valid headers,
# sections, symbols, .eh_frame, PLT stubs and jump tables. The results are committed;
# rerun this script only to regenerate them (gcc -Os, deterministic flags).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=tests/fuzz/corpus/elf_cfg
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$OUT"

# Flags for small, reproducible files: no separate code pages, no paths in the binary.
SMALL="-Os -Wl,-z,noseparate-code -Wl,--hash-style=gnu -ffile-prefix-map=$tmp=. -fno-ident"

# 1. Freestanding static program: a loop, a switch (jump table), a no-return exit.
cat >"$tmp/freestanding.c" <<'SRC'
static long sys3(long n, long a, long b, long c)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return r;
}

__attribute__((noreturn, noinline)) static void quit(int code)
{
	for (;;)
		sys3(60, code, 0, 0);
}

__attribute__((noinline)) static int step(int op, int x)
{
	switch (op) {
	case 0: return x + 7;
	case 1: return x * 3;
	case 2: return x ^ 0x5a;
	case 3: return x >> 1;
	case 4: return x - 11;
	case 5: return x | 0x100;
	case 6: return ~x;
	default: return x;
	}
}

__attribute__((noinline)) static int walk(int depth, int x)
{
	if (depth <= 0)
		return x;
	return walk(depth - 1, step(depth % 9, x)) + 1;
}

void _start(void)
{
	int acc = 0;

	for (int i = 0; i < 100; i++) {
		acc = step(i % 9, acc);
		if (acc == 12345)
			break;
	}
	acc += walk(5, acc);
	sys3(1, 1, (long)"ok\n", 3);
	quit(acc & 1);
}
SRC
gcc $SMALL -static -nostdlib -fno-stack-protector -o "$OUT/static-nostdlib" "$tmp/freestanding.c"
# 2. The same, stripped: functions come from .eh_frame only.
gcc $SMALL -static -nostdlib -fno-stack-protector -s -o "$OUT/static-nostdlib-stripped" "$tmp/freestanding.c"

# 3. A dynamic PIE using libc through the PLT, stripped.
cat >"$tmp/dyn.c" <<'SRC'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static int classify(int c)
{
	switch (c) {
	case 'a': case 'e': case 'i': case 'o': case 'u': return 1;
	case '0' ... '9': return 2;
	case ' ': case '\t': case '\n': return 3;
	case '.': case ',': case ';': return 4;
	default: return 0;
	}
}

int main(int argc, char **argv)
{
	int counts[5] = { 0 };

	for (int i = 1; i < argc; i++)
		for (size_t j = 0; j < strlen(argv[i]); j++)
			counts[classify(argv[i][j])]++;
	if (counts[4] > 100)
		abort();
	printf("%d %d %d %d %d\n", counts[0], counts[1], counts[2], counts[3], counts[4]);
	return 0;
}
SRC
gcc $SMALL -s -o "$OUT/dynamic-pie-stripped" "$tmp/dyn.c"
# 4. The same as a non-PIE executable with its symbol table.
gcc $SMALL -no-pie -o "$OUT/dynamic-nopie" "$tmp/dyn.c"

# 5. A small shared object with an exported function and a local helper.
cat >"$tmp/lib.c" <<'SRC'
__attribute__((noinline)) static int helper(int x)
{
	while (x > 10)
		x = (x & 1) ? 3 * x + 1 : x / 2;
	return x;
}

int seed_api(int op, int x)
{
	switch (op) {
	case 0: return helper(x);
	case 1: return helper(x + 1) * 2;
	case 2: return helper(x - 1) - 2;
	case 3: return x * x;
	case 4: return -x;
	case 5: return helper(x >> 2);
	default: return 0;
	}
}
SRC
gcc $SMALL -shared -fPIC -s -o "$OUT/shared-object.so" "$tmp/lib.c"

ls -l "$OUT"
