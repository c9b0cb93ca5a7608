/*
 * Open-addressing hash map from addresses to 32-bit values (see addr_map.h). A slot is in use
 * when its generation stamp equals the map's current generation, so clearing the map for the
 * next function is O(1) however large it once grew.
 */
#include "addr_map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

static int grow(struct addr_map *m)
{
	size_t cap = m->cap ? 2 * m->cap : 64, i;
	uint64_t *keys = malloc(cap * sizeof(*keys));
	uint32_t *vals = malloc(cap * sizeof(*vals));
	uint32_t *gen = calloc(cap, sizeof(*gen));

	if (!keys || !vals || !gen) {
		free(keys);
		free(vals);
		free(gen);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++) {
		size_t s;

		if (m->gen[i] != m->cur)
			continue;
		for (s = slot_of(m->keys[i], cap); gen[s] == 1; s = (s + 1) & (cap - 1))
			;
		keys[s] = m->keys[i];
		vals[s] = m->vals[i];
		gen[s] = 1;
	}
	free(m->keys);
	free(m->vals);
	free(m->gen);
	m->keys = keys;
	m->vals = vals;
	m->gen = gen;
	m->cap = cap;
	m->cur = 1;
	return 0;
}

bool addr_map__get(const struct addr_map *m, uint64_t key, uint32_t *val)
{
	size_t s;

	if (!m->cap)
		return false;
	for (s = slot_of(key, m->cap); m->gen[s] == m->cur; s = (s + 1) & (m->cap - 1))
		if (m->keys[s] == key) {
			*val = m->vals[s];
			return true;
		}
	return false;
}

int addr_map__put(struct addr_map *m, uint64_t key, uint32_t val)
{
	size_t s;

	if ((m->n + 1) * 2 > m->cap && grow(m))
		return -ENOMEM;
	for (s = slot_of(key, m->cap); m->gen[s] == m->cur; s = (s + 1) & (m->cap - 1))
		if (m->keys[s] == key) {
			m->vals[s] = val;
			return 0;
		}
	m->keys[s] = key;
	m->vals[s] = val;
	m->gen[s] = m->cur;
	m->n++;
	return 0;
}

void addr_map__clear(struct addr_map *m)
{
	m->n = 0;
	if (!m->cap)
		return;
	if (++m->cur == 0) { /* generation wrapped: really clear once */
		memset(m->gen, 0, m->cap * sizeof(*m->gen));
		m->cur = 1;
	}
}

void addr_map__free(struct addr_map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->gen);
	memset(m, 0, sizeof(*m));
}
