/*
 * A hash map from 64-bit addresses to 32-bit values (open addressing, linear probing), used
 * wherever the CFG builder needs "what do we know about this address" in O(1).
 */
#ifndef EDGEPROF_CFG_ADDR_MAP_H
#define EDGEPROF_CFG_ADDR_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct addr_map {
	uint64_t *keys;
	uint32_t *vals;
	uint32_t *gen; /* per slot: in use when == cur */
	uint32_t cur;
	size_t cap, n;
};

/* Finds KEY: true with *VAL set, or false. */
bool addr_map__get(const struct addr_map *m, uint64_t key, uint32_t *val);

/* Inserts or replaces KEY -> VAL. Returns 0 or -ENOMEM. */
int addr_map__put(struct addr_map *m, uint64_t key, uint32_t val);

/* Removes every entry in O(1), keeping the storage. */
void addr_map__clear(struct addr_map *m);

void addr_map__free(struct addr_map *m);

#endif
