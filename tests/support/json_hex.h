/*
 * The hex addresses of edgeprof's JSON ("0x401136"), read by the test oracles.
 */
#ifndef EDGEPROF_TESTS_SUPPORT_JSON_HEX_H
#define EDGEPROF_TESTS_SUPPORT_JSON_HEX_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>

/* Whether V is a string "0x" followed by hex digits only, whose value fits 64 bits; then sets
 * *OUT to it. */
static bool parse_hex(json_t *v, uint64_t *out)
{
	const char *s = json_string_value(v);
	char *end;

	if (!s || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return false;
	errno = 0;
	*out = strtoull(s + 2, &end, 16);
	return !errno && *end == '\0' && end != s + 2;
}

#endif
