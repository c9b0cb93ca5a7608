#!/usr/bin/env bash
# Builds the seed corpus of the profile-reader fuzz target (tests/fuzz/corpus/profile/): small
# valid profiles of tests/programs/switch.c and a loop program, written by user/profile/profile.c from
# a real CFG and placement (chords and naive) with made-up counter values (some consistent,
# some leading to violations). The results are committed; rerun only to regenerate them.
# Needs build/libcfg.a and build/libestimators.a (make).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=tests/fuzz/corpus/profile
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$OUT"
[ -f build/libcfg.a ] && [ -f build/libestimators.a ] || { echo "run make first" >&2; exit 1; }

cat >"$tmp/gen.c" <<'SRC'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/cfg.h"
#include "cfg/elf_image.h"
#include "cfg/block_lines.h"
#include "estimators/placement.h"
#include "estimators/propagate.h"
#include "user/util/log.h"
#include "user/profile/profile.h"

/* gen BINARY OUT MODE(chords|naive) SEED */
int main(int argc, char **argv)
{
	struct elf_image img = { .fd = -1 };
	struct cfg_program prog = { 0 };
	struct placement_options opt = { 0 };
	struct placement pl = { 0 };
	struct func_counts *counts;
	struct block_lines bl;
	uint64_t *ctr;
	unsigned seed = (unsigned)atoi(argv[4]);
	char *run_argv[] = { argv[1], "input.txt", NULL };

	if (argc != 5 || elf_image__open(&img, argv[1]) || cfg_program__build(&prog, &img, NULL))
		return 1;
	opt.mode = strcmp(argv[3], "naive") ? PLACEMENT_CHORDS : PLACEMENT_NAIVE;
	site_costs__defaults(&opt.costs);
	if (placement__plan(&pl, &prog, &opt))
		return 1;
	ctr = calloc(pl.ncounters + 1, sizeof(*ctr));
	counts = calloc(prog.nfuncs, sizeof(*counts));
	srand(seed);
	for (uint32_t c = 0; c < pl.ncounters; c++)
		ctr[c] = seed ? (uint64_t)(rand() % 50) : 0;
	for (size_t i = 0; i < prog.nfuncs; i++)
		if (pl.funcs[i].status != PLAN_EXCLUDED &&
		    propagate__func(&prog.funcs[i], i, &pl, ctr, NULL, 0, &counts[i]))
			return 1;
	block_lines__build(&bl, &prog, argv[1]); /* empty without line tables */
	if (profile__write(argv[2], &(struct profile_input){
		    .binary_path = "prog", .prog = &prog, .pl = &pl, .counters = ctr,
		    .counts = counts, .costs = &opt.costs, .blines = &bl, .argv = run_argv,
		    .wait_status = seed << 8, .seconds = 0.25, .nprocesses = 1, .nthreads = 1 }))
		return 1;
	return 0;
}
SRC
gcc -std=gnu11 -O1 -g -I. -D_GNU_SOURCE "$tmp/gen.c" user/profile/profile.c user/profile/profile_dest.c user/util/log.c user/util/progress.c user/util/clock.c user/util/json_out.c \
	build/libestimators.a build/libcfg.a -o "$tmp/gen" -lelf -ldw -lcapstone -ljansson -lm

cat >"$tmp/loop.c" <<'SRC'
int main(int argc, char **argv)
{
	int s = 0;

	for (int i = 0; i < argc * 3; i++)
		s += i & 1 ? i : -i;
	return s > 0;
}
SRC
gcc -O1 -g -nostartfiles -static -nostdlib -Wl,-e,main -ffile-prefix-map="$tmp"=. \
	-o "$tmp/loop" "$tmp/loop.c"
gcc -O2 -g -ffile-prefix-map="$PWD"=. -o "$tmp/switch" tests/programs/switch.c

"$tmp/gen" "$tmp/loop" "$OUT/loop-chords-zero.json" chords 0
"$tmp/gen" "$tmp/loop" "$OUT/loop-chords.json" chords 3
"$tmp/gen" "$tmp/loop" "$OUT/loop-naive.json" naive 5
"$tmp/gen" "$tmp/switch" "$OUT/switch-chords.json" chords 7
ls -l "$OUT"
