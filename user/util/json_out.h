/*
 * Small helpers for writing JSON with jansson, shared by the profile writer and the report:
 * addresses as "0x.." strings, and setters that take ownership of a value and count failures
 * (an allocation that returned NULL included) instead of checking each call.
 */
#ifndef EDGEPROF_USER_JSON_OUT_H
#define EDGEPROF_USER_JSON_OUT_H

#include <jansson.h>
#include <stdint.h>

#define HEXLEN 24 /* "0x" + 16 hex digits + NUL, with room to spare */

/* Formats ADDR as lowercase "0x.." into BUF (HEXLEN bytes); returns BUF. */
const char *jout_addr(char *buf, uint64_t addr);

/* A JSON string "0x.." for ADDR, or NULL when out of memory. */
json_t *jout_hex(uint64_t addr);

/* Sets KEY of O to V (stolen); counts a failure (V == NULL included) in *ERR. */
void jout_set(json_t *o, const char *key, json_t *v, int *err);

/* Appends V (stolen) to the array A; counts a failure (V == NULL included) in *ERR. */
void jout_push(json_t *a, json_t *v, int *err);

/* Prints O on stdout, compact with reals to 6 significant digits, and a newline, and releases
 * O. ERR is the count of failures building it (jout_set, jout_push). Returns 0, or -1 with
 * one line reported when ERR is non-zero or O cannot be printed. */
int jout_print(json_t *o, int err);

#endif
