/*
 * The "its code is in a library" hint (see lib_hint.h): counts the binary's executed
 * instructions from its propagated block counts, lists the libraries (the process's mappings,
 * or the dynamic loader's list for a program that has ended) and compares their executable
 * code with the binary's.
 */
#include "user/session/lib_hint.h"

#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/proc/libs.h"
#include "user/util/log.h"

uint64_t lib_hint__own_insns(const struct cfg_program *prog, const struct placement *pl,
			     const struct func_counts *counts)
{
	uint64_t n = 0;

	for (size_t i = 0; i < prog->nfuncs; i++) {
		const struct cfg_func *f = &prog->funcs[i];

		if (pl->funcs[i].status == PLAN_EXCLUDED || !counts[i].blocks)
			continue;
		for (uint32_t b = 0; b < f->nblocks; b++)
			if (counts[i].blocks[b] > 0)
				n += (uint64_t)counts[i].blocks[b] * f->blocks[b].ninsns;
	}
	return n;
}

uint64_t lib_hint__code_size(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint64_t size = 0;
	size_t nph;
	Elf *elf;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && !elf_getphdrnum(elf, &nph)) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    (ph.p_flags & PF_X))
				size += ph.p_memsz;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return size;
}

/* The C and C++ runtime: every program maps them, and they are not where a program's own
 * code would be moved to. */
static bool runtime_lib(const char *path)
{
	static const char *const names[] = {
	    "libc",	"libm",	     "libmvec",	  "ld-linux-x86-64", "libpthread",
	    "libdl",	"librt",     "libresolv", "libutil",	     "libanl",
	    "libgcc_s", "libstdc++", "libatomic",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (libs__name_matches(names[i], path))
			return true;
	return false;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

char *lib_hint__find(const char *binary, uint64_t own_insns, int pid, char *const *profiled,
		     size_t nprofiled)
{
	uint64_t own_code, best_size = 0;
	size_t best = SIZE_MAX, n;
	char **libs, *ret = NULL;
	int verbosity = log__verbosity();

	if (own_insns > LIB_HINT_MAX_OWN_INSNS)
		return NULL;
	own_code = lib_hint__code_size(binary);
	/* A hint is no reason to print errors of its own. */
	log__set_verbosity(-2);
	/* A process gone by now: what the loader lists for its binary. */
	if (libs__list(pid, binary, &libs, &n) && (pid <= 0 || libs__list(0, binary, &libs, &n))) {
		log__set_verbosity(verbosity);
		return NULL;
	}
	log__set_verbosity(verbosity);
	for (size_t i = 0; i < n; i++) {
		uint64_t size;
		bool done = false;

		for (size_t k = 0; k < nprofiled; k++)
			done |= !strcmp(profiled[k], libs[i]);
		if (done || runtime_lib(libs[i]))
			continue;
		size = lib_hint__code_size(libs[i]);
		if (size > best_size) {
			best_size = size;
			best = i;
		}
	}
	if (best != SIZE_MAX && best_size >= LIB_HINT_MIN_LIB_CODE &&
	    best_size >= LIB_HINT_MIN_RATIO * own_code)
		ret = strdup(libs[best]);
	free_list(libs, n);
	return ret;
}

void lib_hint__lib_name(const char *path, int pid, const char *binary, char *out, size_t size)
{
	const char *base = strrchr(path, '/');
	size_t len, n = 0;
	char **libs, name[NAME_MAX + 1];
	bool unique = true;
	int verbosity = log__verbosity();

	base = base ? base + 1 : path;
	len = strcspn(base, ".");
	snprintf(name, sizeof(name), "%.*s", (int)len, base);
	log__set_verbosity(-2);
	if (!len || (libs__list(pid, binary, &libs, &n) &&
		     (pid <= 0 || libs__list(0, binary, &libs, &n)))) {
		log__set_verbosity(verbosity);
		snprintf(out, size, "%s", path);
		return;
	}
	log__set_verbosity(verbosity);
	for (size_t i = 0; i < n; i++)
		if (strcmp(libs[i], path) && libs__name_matches(name, libs[i]))
			unique = false;
	free_list(libs, n);
	snprintf(out, size, "%s", unique ? name : path);
}

void lib_hint__report(const char *binary, uint64_t own_insns, int pid, char *const *profiled,
		      size_t nprofiled)
{
	char *lib = lib_hint__find(binary, own_insns, pid, profiled, nprofiled);
	char name[PATH_MAX];
	const char *bbase = strrchr(binary, '/'), *lbase;

	if (!lib)
		return;
	lbase = strrchr(lib, '/');
	lib_hint__lib_name(lib, pid, binary, name, sizeof(name));
	log__printf(LOG_WARN,
		    "hint: %s ran %" PRIu64
		    " instructions' worth of its own code; its code is in %s: use --lib %s",
		    bbase ? bbase + 1 : binary, own_insns, lbase ? lbase + 1 : lib, name);
	free(lib);
}
