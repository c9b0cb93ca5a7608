/*
 * COST(u) of Sarkar's method for x86-64 code: the local execution time of a basic block as the
 * sum of a per-instruction cost by instruction class (from capstone's instruction id, groups
 * and operands). Two models: `insns` (every instruction costs 1: instructions executed,
 * comparable with callgrind's Ir) and `cycles` (the default table below, rough throughput
 * figures for a current out-of-order core, in cycles). The table is plain data: a caller may
 * replace any class's cost (e.g. from a file).
 */
#ifndef EDGEPROF_ESTIMATORS_COST_MODEL_H
#define EDGEPROF_ESTIMATORS_COST_MODEL_H

#include <capstone/capstone.h>
#include <stdint.h>

#include "cfg/cfg.h"
#include "cfg/elf_image.h"

enum cost_class {
	COST_ALU = 0, /* integer arithmetic, logic, moves, lea, setcc, cmov: register only */
	COST_MEM,     /* any of those with a memory operand (load or store) */
	COST_PUSH_POP,
	COST_MUL,    /* imul, mul */
	COST_DIV,    /* div, idiv */
	COST_FP,     /* x87, SSE, AVX arithmetic and moves */
	COST_FP_DIV, /* divss/sd/ps/pd, sqrt* */
	COST_BRANCH, /* jcc, jmp */
	COST_CALL,   /* call (the callee's time is added separately) */
	COST_RET,
	COST_STRING,  /* movs, stos, cmps, scas, lods (per execution; rep iterations unknown) */
	COST_ATOMIC,  /* lock prefix, xchg with memory, cmpxchg */
	COST_SYSCALL, /* syscall, int, cpuid, rdtsc and other serialising instructions */
	COST_NOP,     /* nop, endbr64 */
	COST_CLASS_COUNT
};

struct cost_model {
	double cost[COST_CLASS_COUNT];
	csh cs; /* capstone handle with detail, opened by cost_model__init */
	bool cs_open;
};

/* Sets M to the `insns` model (every class 1) or the default `cycles` table, and opens
 * capstone. Returns 0 or -EINVAL (capstone could not be opened). */
int cost_model__init(struct cost_model *m, bool cycles);

void cost_model__release(struct cost_model *m);

/* The class named NAME ("alu", "mem", ...) or -1. */
int cost_class__from_name(const char *name);

/* The name of class C. */
const char *cost_class__name(unsigned c);

/* The class of the instruction at ADDR in IMG (COST_ALU when it cannot be decoded). */
enum cost_class cost_model__classify(const struct cost_model *m, const struct elf_image *img,
				     uint64_t addr);

/* The class of the instruction encoded in the LEN bytes at CODE (COST_ALU when they do not
 * decode); sets *REP when it is a rep-prefixed string instruction (REP may be NULL). */
enum cost_class cost_model__classify_bytes(const struct cost_model *m, const uint8_t *code,
					   size_t len, bool *rep);

/* True when the instruction at ADDR is a rep-prefixed string instruction (it runs its
 * iterations as one instruction: one cost per execution here, n + 1 instructions in callgrind's
 * Ir for n iterations). */
bool cost_model__is_rep(const struct cost_model *m, const struct elf_image *img, uint64_t addr);

/* The sum of the costs of block B of F's instructions (callees not included). */
double cost_model__block(const struct cost_model *m, const struct elf_image *img,
			 const struct cfg_func *f, uint32_t b);

#endif
