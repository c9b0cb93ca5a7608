/*
 * Open-addressing hash map from addresses to 32-bit values (see addr_map.h). A slot is in use
 * when its generation stamp equals the map's current generation, so clearing the map for the
 * next function is O(1) however large it once grew.
 */
#include "addr_map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MIN_CAP 64

static size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

/* Moves M's entries into a new table of CAP slots (a power of two, at least 2 * n). */
static int resize(struct addr_map *m, size_t cap)
{
	struct addr_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		size_t s;

		if (m->slots[i].gen != m->cur)
			continue;
		for (s = slot_of(m->slots[i].key, cap); slots[s].gen == 1; s = (s + 1) & (cap - 1))
			;
		slots[s] = m->slots[i];
		slots[s].gen = 1;
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	m->cur = 1;
	return 0;
}

bool addr_map__get(const struct addr_map *m, uint64_t key, uint32_t *val)
{
	size_t s;

	if (!m->n)
		return false;
	for (s = slot_of(key, m->cap); m->slots[s].gen == m->cur; s = (s + 1) & (m->cap - 1))
		if (m->slots[s].key == key) {
			*val = m->slots[s].val;
			return true;
		}
	return false;
}

int addr_map__put(struct addr_map *m, uint64_t key, uint32_t val)
{
	size_t s;

	if ((m->n + 1) * 2 > m->cap && resize(m, m->cap ? 2 * m->cap : MIN_CAP))
		return -ENOMEM;
	for (s = slot_of(key, m->cap); m->slots[s].gen == m->cur; s = (s + 1) & (m->cap - 1))
		if (m->slots[s].key == key) {
			m->slots[s].val = val;
			return 0;
		}
	m->slots[s] = (struct addr_slot){ .key = key, .val = val, .gen = m->cur };
	m->n++;
	return 0;
}

void addr_map__clear(struct addr_map *m)
{
	m->n = 0;
	if (!m->cap)
		return;
	if (++m->cur == 0) { /* generation wrapped: really clear once */
		for (size_t i = 0; i < m->cap; i++)
			m->slots[i].gen = 0;
		m->cur = 1;
	}
}

uint32_t *addr_map__ref(struct addr_map *m, uint64_t key, bool *fresh)
{
	size_t s;

	if ((m->n + 1) * 2 > m->cap && resize(m, m->cap ? 2 * m->cap : MIN_CAP))
		return NULL;
	for (s = slot_of(key, m->cap); m->slots[s].gen == m->cur; s = (s + 1) & (m->cap - 1))
		if (m->slots[s].key == key) {
			*fresh = false;
			return &m->slots[s].val;
		}
	m->slots[s] = (struct addr_slot){ .key = key, .val = 0, .gen = m->cur };
	m->n++;
	*fresh = true;
	return &m->slots[s].val;
}

void addr_map__free(struct addr_map *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
