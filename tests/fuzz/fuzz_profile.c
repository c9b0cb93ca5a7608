/*
 * libFuzzer target for the profile reader (user/profile/profile.c) on untrusted bytes: parse and
 * validate the input as a profile, and on success walk what was read (edges, violations,
 * sites, counter definitions, function lookup) so every index the reader accepted is used.
 * Any crash, leak or undefined behaviour is a finding; rejections are expected. The fuzz
 * rule of the Makefile builds only cfg/ and estimators/, so the user/ files the reader
 * needs (the log, JSON output, the profile and its destination) are compiled in here. Their one-line diagnostics go to /dev/null.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "user/util/clock.c"
#include "user/util/log.c"
#include "user/util/progress.c"
#include "user/util/json_out.c"
#include "user/profile/profile_dest.c"
#include "user/profile/profile.c"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int devnull = -1;
volatile uint64_t fuzz_profile_sink; /* keeps the walk from being optimised away */

/* libFuzzer initialisation: opens /dev/null for the reader's diagnostics. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	return 0;
}

static uint64_t walk(const struct profile *p)
{
	uint64_t sum = p->hits + p->naive_hits;

	for (size_t i = 0; i < p->nfuncs; i++) {
		const struct profile_func *f = &p->funcs[i];

		for (uint32_t e = 0; e < f->nedges; e++) {
			sum += f->blocks[f->edges[e].from].addr;
			if (f->edges[e].to < f->nblocks)
				sum += f->blocks[f->edges[e].to].end;
		}
		for (uint32_t k = 0; k < f->nviolations; k++)
			if (f->violations[k] < f->nblocks)
				sum += f->blocks[f->violations[k]].addr;
		if (f->entry_block < f->nblocks)
			sum += (uint64_t)f->blocks[f->entry_block].line;
		sum += profile__func_at(p, f->addr) != NULL;
		if (f->file != PROFILE_NO_FILE)
			sum += (unsigned char)profile__file(p, f->file)[0];
	}
	for (size_t s = 0; s < p->nsites; s++)
		sum += p->counters[p->sites[s].counter] + p->funcs[p->sites[s].func].addr;
	for (uint32_t c = 0; c < p->ncounters; c++) {
		const struct profile_counter *d = &p->counter_defs[c];

		sum += p->sites[d->site].addr + p->funcs[d->func].nblocks;
	}
	return sum;
}

/* libFuzzer entry point: reads DATA[0..SIZE) as a profile. Always returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile p;
	int saved = -1;

	if (devnull >= 0) {
		fflush(stderr);
		saved = dup(2);
		dup2(devnull, 2);
	}
	if (profile__read_buffer((const char *)data, size, "fuzz-input", &p) == 0) {
		fuzz_profile_sink = walk(&p);
		profile__release(&p);
	}
	if (saved >= 0) {
		dup2(saved, 2);
		close(saved);
	}
	return 0;
}
