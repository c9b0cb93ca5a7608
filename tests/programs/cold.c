/*
 * Oracle test program: __builtin_expect marks unlikely paths so that gcc -O2 moves them into
 * separate NAME.cold parts (outside the function's main body); some cold paths run, so the
 * CFG must include the cold part's blocks and the jumps into and out of it.
 */
#include <stdio.h>
#include <string.h>

static char log_buf[256];
static int log_len;

__attribute__((noinline)) static void note(const char *s)
{
	size_t n = strlen(s);

	if (log_len + n < sizeof(log_buf)) {
		memcpy(log_buf + log_len, s, n);
		log_len += (int)n;
	}
}

__attribute__((noinline)) static int process(int x)
{
	if (__builtin_expect(x % 17 == 0, 0)) {
		note("seventeen;");
		printf("cold path %d\n", x);
		return -x;
	}
	if (__builtin_expect(x > 90, 0)) {
		note("big;");
		return x / 2;
	}
	return x + 1;
}

__attribute__((noinline, cold)) static int slow_path(int x)
{
	note("slow;");
	return x * 5;
}

__attribute__((noinline)) static int step(int x)
{
	if (__builtin_expect(x == 33, 0))
		return slow_path(x) + 1;
	return x - 1;
}

int main(void)
{
	long s = 0;

	for (int i = 0; i < 100; i++)
		s += process(i) + step(i);
	printf("%ld %s\n", s, log_buf);
	return 0;
}
