/*
 * libFuzzer target for the whole static pipeline on untrusted bytes: open the input as an
 * in-memory ELF image, build the program CFG, compute dominators, post-dominators and loops
 * of every function, the call graph and the static profile (Wu and Larus: branch heuristics
 * decoded from the image, Dempster-Shafer, local and global frequencies), then free
 * everything. Any crash, leak or undefined
 * behaviour (ASan/UBSan) is a finding; errors returned by the library are expected.
 */
#include <stddef.h>
#include <stdint.h>

#include "cfg/callgraph.h"
#include "cfg/cfg.h"
#include "cfg/dominators.h"
#include "cfg/elf_image.h"
#include "cfg/loops.h"
#include "estimators/static_profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void analyze_func(const struct cfg_func *f)
{
	struct cfg_domtree dom = { 0 }, pdom = { 0 };
	struct cfg_loops loops = { 0 };

	if (f->nblocks == 0)
		return;
	if (cfg_dom__compute(&dom, f) == 0) {
		if (cfg_loops__compute(&loops, f, &dom) == 0) {
			/* Touch the results so the analyses cannot be optimised away. */
			for (uint32_t l = 0; l < loops.nloops; l++)
				(void)cfg_loops__contains(&loops, l, loops.loops[l].header);
			cfg_loops__free(&loops);
		}
		(void)cfg_dom__dominates(&dom, f->entry_block, f->nblocks - 1);
		cfg_dom__free(&dom);
	}
	if (cfg_postdom__compute(&pdom, f) == 0) {
		(void)cfg_dom__dominates(&pdom, cfg_func__exit(f), f->entry_block);
		cfg_dom__free(&pdom);
	}
}

/* libFuzzer entry point: runs the pipeline on DATA[0..SIZE). Always returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_image img = { .fd = -1 };
	struct cfg_program prog = { 0 };
	struct cfg_callgraph cg = { 0 };
	struct static_profile sp = { 0 };

	if (elf_image__open_memory(&img, data, size, "fuzz-input"))
		goto out;
	if (cfg_program__build(&prog, &img, NULL))
		goto out;
	for (size_t i = 0; i < prog.nfuncs; i++) {
		const struct cfg_func *f = &prog.funcs[i];

		analyze_func(f);
		(void)cfg_func__block_containing(f, f->entry);
		(void)cfg_func__is_insn_start(f, f->entry);
	}
	if (cfg_callgraph__build(&cg, &prog) == 0)
		cfg_callgraph__free(&cg);
	if (static_profile__compute(&sp, &prog, NULL) == 0)
		static_profile__free(&sp);
out:
	cfg_program__free(&prog);
	elf_image__close(&img);
	return 0;
}
