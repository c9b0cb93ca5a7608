/*
 * `--lib NAME|PATH`: which shared objects to profile besides the main binary. A PATH (it has
 * a '/') names the file itself; a NAME matches a library by the start of its file name
 * ("libc" matches libc.so.6, "libz.so.1" itself). For a running process the candidates are
 * the files it maps (/proc/PID/maps); for a program about to run, the libraries its dynamic
 * loader would load (the loader's --list, like ldd, without running the program).
 */
#ifndef EDGEPROF_USER_LIBS_H
#define EDGEPROF_USER_LIBS_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/* Whether the file name of PATH starts with NAME (which has no '/') followed by its end, '.'
 * or '-': "libc" matches libc.so.6 and libc-2.36.so, not libcrypt.so.1. */
bool libs__name_matches(const char *name, const char *path);

/* Resolves the N names NAMES against the objects process PID maps: fills PATHS[0 .. N) with
 * malloc'd real paths. Returns 0, or -1 with one line reported (a name that matches nothing,
 * or the main executable). */
int libs__resolve_mapped(int pid, char *const *names, size_t n, char **paths);

/* The same for the program at PROG (a real path) before it runs: against the libraries its
 * dynamic loader (PT_INTERP) lists for it. */
int libs__resolve_needed(const char *prog, char *const *names, size_t n, char **paths);

/* Every shared object process PID maps (PID > 0; files only, the executable left out), or
 * for PID 0 the libraries the dynamic loader lists for PROG: *PATHS (malloc'd array of
 * malloc'd real paths, the caller frees both) and *N. Returns 0 or -1 (reported). */
int libs__list(int pid, const char *prog, char ***paths, size_t *n);

/* The dynamic loader's debugger rendezvous (glibc's, as gdb uses it): the function it calls
 * after each change of its list of objects and the struct r_debug whose r_state says which. */
struct libs_rendezvous {
	uint64_t state_fn;     /* ELF vaddr of _dl_debug_state */
	uint64_t state_fn_off; /* its file offset */
	uint64_t r_debug;      /* ELF vaddr of _r_debug */
	uint64_t span;         /* the end of its highest loadable segment (ELF vaddr) */
};

/* Offset of r_state in glibc's struct r_debug (x86-64: int r_version, r_map, r_brk), and its
 * value once the loader's list of objects is complete again. */
#define LIBS_R_STATE_OFFSET 24
#define LIBS_RT_CONSISTENT 0

/* Looks up the rendezvous in the dynamic loader at LDSO (its .dynsym). Returns 0, or -1 when
 * it has none (not reported). */
int libs__rendezvous(const char *ldso, struct libs_rendezvous *r);

/* The functions of the shared library at PATH the dynamic loader may run before it
 * announces that the program's initial objects are mapped (RT_CONSISTENT, see tracer.c):
 * ifunc resolvers (STT_GNU_IFUNC symbols, IRELATIVE relocations) and glibc's
 * __libc_early_init, as ELF vaddrs in *ROOTS (malloc'd, *N of them, maybe 0). Returns 0, or
 * -1 when PATH cannot be read or the loader writes into its code (DT_TEXTREL): then nothing
 * of it may be patched. */
int libs__load_roots(const char *path, uint64_t **roots, size_t *n);

/* The defined function symbols (STT_FUNC, STT_GNU_IFUNC) of a shared object, by name. */
struct libs_syms {
	char **names;    /* sorted */
	uint64_t *addrs; /* ELF vaddrs, like names */
	size_t n;
};

/* Loads the function symbols of PATH (.dynsym and .symtab) into *S. Returns 0, or -1 when
 * PATH cannot be read or memory runs out (not reported); free *S in any case. */
int libs__syms_load(const char *path, struct libs_syms *s);

/* The address of the function NAME in S ("malloc"; a version or "@plt" suffix is ignored),
 * or 0. */
uint64_t libs__syms_find(const struct libs_syms *s, const char *name);

void libs__syms_free(struct libs_syms *s);

#endif
