/* Growable arrays (see array.h). */
#include "array.h"

#include <errno.h>
#include <stdlib.h>

int array_grow(void **v, size_t *cap, size_t need, size_t size, size_t first)
{
	size_t c = *cap ? *cap : (first ? first : 1);
	void *p;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	p = realloc(*v, c * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}
