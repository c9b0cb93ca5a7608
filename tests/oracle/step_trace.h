/*
 * The trace file step_trace writes and path_oracle reads: this header, the binary's path
 * (path_len bytes) and build id (build_id_len bytes), then struct trace_rec records in the
 * order the threads' instructions ran (see step_trace.c for what each kind means).
 */
#ifndef EDGEPROF_TESTS_ORACLE_STEP_TRACE_H
#define EDGEPROF_TESTS_ORACLE_STEP_TRACE_H

#include <stdint.h>

#define TRACE_MAGIC "EPSTEP1\n"
#define TRACE_VERSION 1

enum rec_kind {
	REC_STEP = 1,
	REC_LEAVE = 2,
	REC_THREAD_EXIT = 3,
	REC_PROCESS_EXIT = 4,
	REC_EXEC = 5,
};

struct trace_header {
	char magic[8];
	uint32_t version;
	uint32_t path_len;
	uint32_t build_id_len;
	uint32_t pad;
	uint64_t bias;
};

struct trace_rec {
	uint32_t tid;
	uint32_t kind;
	uint64_t vaddr;
	uint64_t sp;
};

#endif
