/*
 * JSON writing helpers (see json_out.h).
 */
#include "user/util/json_out.h"

#include <inttypes.h>
#include <stdio.h>

#include "user/util/log.h"

const char *jout_addr(char *buf, uint64_t addr)
{
	snprintf(buf, HEXLEN, "0x%" PRIx64, addr);
	return buf;
}

json_t *jout_hex(uint64_t addr)
{
	char h[HEXLEN];

	return json_string(jout_addr(h, addr));
}

void jout_set(json_t *o, const char *key, json_t *v, int *err)
{
	if (!v || json_object_set_new(o, key, v))
		(*err)++;
}

void jout_push(json_t *a, json_t *v, int *err)
{
	if (!v || json_array_append_new(a, v))
		(*err)++;
}

int jout_print(json_t *o, int err)
{
	if (err || json_dumpf(o, stdout, JSON_COMPACT | JSON_REAL_PRECISION(6))) {
		json_decref(o);
		return pr_err("out of memory writing JSON");
	}
	putchar('\n');
	json_decref(o);
	return 0;
}
