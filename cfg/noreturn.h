/*
 * Callees that never return: the libc and C++ runtime functions known to end the thread or
 * unwind past their caller. Functions of the binary itself are judged by inference in
 * build.c (all their exits are no-return calls or traps).
 */
#ifndef EDGEPROF_CFG_NORETURN_H
#define EDGEPROF_CFG_NORETURN_H

#include <stdbool.h>

/* True when NAME (a symbol name without version suffix) is a known no-return function. */
bool noreturn__known(const char *name);

#endif
