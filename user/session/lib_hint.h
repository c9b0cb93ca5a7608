/*
 * The hint for a program whose code is in a shared library: a launcher such as the python3.11
 * of pyenv, conda or Fedora (a few functions around Py_BytesMain, linked to
 * libpython3.11.so) runs almost none of its own code, and its profile alone is nearly empty.
 * When the binary ran only a handful of instructions of its own and a library it loads holds
 * far more code, the user is told which library and what `--lib` name reaches it.
 */
#ifndef EDGEPROF_USER_SESSION_LIB_HINT_H
#define EDGEPROF_USER_SESSION_LIB_HINT_H

#include <stddef.h>
#include <stdint.h>

#include "cfg/cfg.h"
#include "estimators/placement.h"
#include "estimators/propagate.h"

/* The binary "ran almost nothing of its own" at or below this many instructions. */
#define LIB_HINT_MAX_OWN_INSNS 10000
/* A library "holds the program's code" with at least this much executable code, and at least
 * LIB_HINT_MIN_RATIO times the binary's. */
#define LIB_HINT_MIN_LIB_CODE (1u << 20)
#define LIB_HINT_MIN_RATIO 16

/* The instructions PROG executed: each block's count times its instructions, over the
 * functions PL did not exclude (blocks whose count is unknown add nothing). */
uint64_t lib_hint__own_insns(const struct cfg_program *prog, const struct placement *pl,
			     const struct func_counts *counts);

/* Bytes of executable code of the ELF file at PATH (its PF_X loadable segments), 0 when it
 * cannot be read. */
uint64_t lib_hint__code_size(const char *path);

/* The library that most likely holds the program's code, when BINARY (a real path) ran
 * OWN_INSNS instructions of its own, at most LIB_HINT_MAX_OWN_INSNS: the largest library,
 * by executable code, that process PID maps (PID > 0) or the dynamic loader lists for BINARY
 * (PID 0), is not part of the C or C++ runtime, is not among PROFILED[0..NPROFILED) (real
 * paths) and passes the size test above. Returns a malloc'd real path, or NULL. */
char *lib_hint__find(const char *binary, uint64_t own_insns, int pid, char *const *profiled,
		     size_t nprofiled);

/* The `--lib` NAME to give for library PATH among the process's libraries: the start of its
 * file name up to the first '.', when that names no other library; else PATH itself.
 * Written into OUT (SIZE bytes). */
void lib_hint__lib_name(const char *path, int pid, const char *binary, char *out, size_t size);

/* Warns (unless quiet) "hint: BINARY ran N instructions' worth of its own code; its code is
 * in LIB: use --lib NAME" when lib_hint__find names a library. */
void lib_hint__report(const char *binary, uint64_t own_insns, int pid, char *const *profiled,
		      size_t nprofiled);

#endif
