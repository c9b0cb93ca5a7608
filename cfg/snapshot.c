/*
 * The analysis byte stream (see snapshot.h).
 */
#include "snapshot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static size_t padded(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

void snap_put(struct snap_out *o, const void *p, size_t n)
{
	size_t need = padded(n);

	if (o->err || !need)
		return;
	if (o->len + need > o->cap) {
		size_t cap = o->cap ? o->cap : 1 << 20;
		uint8_t *b;

		while (cap < o->len + need)
			cap *= 2;
		b = realloc(o->buf, cap);
		if (!b) {
			o->err = -ENOMEM;
			return;
		}
		o->buf = b;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, p, n);
	memset(o->buf + o->len + n, 0, need - n);
	o->len += need;
}

void snap_put_u64(struct snap_out *o, uint64_t v)
{
	snap_put(o, &v, sizeof(v));
}

void snap_put_str(struct snap_out *o, const char *s)
{
	size_t n = s ? strlen(s) + 1 : 0;

	snap_put_u64(o, n);
	if (n)
		snap_put(o, s, n);
}

void snap_put_array(struct snap_out *o, const void *p, size_t n, size_t size)
{
	snap_put_u64(o, n);
	if (n)
		snap_put(o, p, n * size);
}

void snap_put_opt(struct snap_out *o, const void *p, size_t n, size_t size)
{
	snap_put_u64(o, p != NULL);
	if (p)
		snap_put_array(o, p, n, size);
}

bool snap_check(struct snap_in *in, bool ok)
{
	if (!ok && !in->err)
		in->err = -EINVAL;
	return ok;
}

bool snap_get(struct snap_in *in, void *p, size_t n)
{
	size_t need = padded(n);

	if (in->err || !snap_check(in, need >= n && need <= in->len - in->pos)) {
		memset(p, 0, n);
		return false;
	}
	memcpy(p, in->p + in->pos, n);
	in->pos += need;
	return true;
}

uint64_t snap_get_u64(struct snap_in *in)
{
	uint64_t v = 0;

	return snap_get(in, &v, sizeof(v)) ? v : 0;
}

char *snap_get_str(struct snap_in *in)
{
	uint64_t n = snap_get_u64(in);
	char *s;

	if (!n || in->err || !snap_check(in, n <= in->len - in->pos))
		return NULL;
	s = malloc(n);
	if (!s) {
		in->err = -ENOMEM;
		return NULL;
	}
	if (!snap_get(in, s, n) || !snap_check(in, s[n - 1] == 0 && strlen(s) == n - 1)) {
		free(s);
		return NULL;
	}
	return s;
}

void *snap_get_array(struct snap_in *in, size_t n, size_t size)
{
	uint64_t stored = snap_get_u64(in);
	void *v;

	if (in->err || !snap_check(in, stored == n && (!size || n <= (in->len - in->pos) / size)))
		return NULL;
	v = n ? malloc(n * size) : calloc(1, size ? size : 1);
	if (!v) {
		in->err = -ENOMEM;
		return NULL;
	}
	if (n && !snap_get(in, v, n * size)) {
		free(v);
		return NULL;
	}
	return v;
}

void *snap_get_opt(struct snap_in *in, size_t n, size_t size)
{
	return snap_get_u64(in) ? snap_get_array(in, n, size) : NULL;
}
