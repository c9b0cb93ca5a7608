/*
 * A hash map from 64-bit addresses to 32-bit values (open addressing, linear probing), used
 * wherever the CFG builder needs "what do we know about this address" in O(1).
 */
#ifndef EDGEPROF_CFG_ADDR_MAP_H
#define EDGEPROF_CFG_ADDR_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One slot: key, value and generation side by side, so that a probe touches one cache line. */
struct addr_slot {
	uint64_t key;
	uint32_t val;
	uint32_t gen; /* in use when == the map's cur */
};

struct addr_map {
	struct addr_slot *slots;
	uint32_t cur;
	size_t cap, n;
};

/* Finds KEY: true with *VAL set, or false. */
bool addr_map__get(const struct addr_map *m, uint64_t key, uint32_t *val);

/* Inserts or replaces KEY -> VAL. Returns 0 or -ENOMEM. */
int addr_map__put(struct addr_map *m, uint64_t key, uint32_t val);

/* The value of KEY, inserted as 0 when absent (*FRESH says which), for reading and writing
 * in one lookup; valid until the next insertion. NULL when out of memory. */
uint32_t *addr_map__ref(struct addr_map *m, uint64_t key, bool *fresh);

/* Removes every entry in O(1), keeping the storage. */
void addr_map__clear(struct addr_map *m);

void addr_map__free(struct addr_map *m);

#endif
