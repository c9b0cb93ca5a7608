/*
 * Oracle test program: calls that do not return although nothing in the binary says so.
 * GNU error(status, ...) exits when status is not 0: with optimisation glibc's <error.h>
 * tells gcc so, and gcc emits nothing after `call error` (the next bytes are padding or the
 * next function). die() is declared no-return but made of an indirect call to exit, so its
 * own code shows no exit either, and its callers end at `call die`. Each such call is placed
 * right before a function that runs often (hot_*), so that a CFG that lets the call fall
 * through takes in the hot function's code and miscounts it. error(0, ...) returns and runs,
 * also where the status is computed (maybe_warn: 0 at run time, not a constant).
 */
#include <error.h>
#include <stdio.h>
#include <stdlib.h>

void (*volatile exit_fn)(int) = exit;
volatile int sink;
volatile int fail_hard; /* 0: maybe_warn's status is 0 on the path that runs */

__attribute__((noreturn)) void die(const char *msg);

__attribute__((noinline)) int check_error(int x)
{
	if (x < 0)
		error(1, 0, "negative value %d", x); /* never runs */
	return x * 3;
}

__attribute__((noinline)) int hot_after_error(int x)
{
	int s = 0;

	for (int i = 0; i < (x & 7); i++)
		s += i * x;
	return s;
}

/* The status is 1 or 0 depending on a variable: not a constant. The call runs (status 0, on
 * each '{' of the input) and returns. */
__attribute__((noinline)) int maybe_warn(int x)
{
	int st;

	if (x == '{') {
		if (fail_hard)
			st = 1;
		else
			st = 0;
		error(st, 0, "saw a brace");
	}
	return x - 1;
}

__attribute__((noinline)) int check_at_line(int x)
{
	if (x > 1000000)
		error_at_line(2, 0, __FILE__, __LINE__, "too big %d", x); /* never runs */
	return x + 1;
}

__attribute__((noinline)) int hot_after_at_line(int x)
{
	return (x & 1) ? x / 3 : x * 5;
}

__attribute__((noinline)) void die(const char *msg)
{
	fputs(msg, stderr);
	exit_fn(4); /* an indirect call: the CFG cannot see that it does not return */
	__builtin_unreachable();
}

__attribute__((noinline)) int hot_after_die(int x)
{
	return x % 5 == 0 ? x + 2 : x - 2;
}

__attribute__((noinline)) int check_die(int x)
{
	if (x == -12345)
		die("impossible\n"); /* never runs */
	return x ^ 0x55;
}

__attribute__((noinline)) int hot_after_check_die(int x)
{
	return x > 100 ? 1 : 0;
}

int main(void)
{
	long n = 0, s = 0;
	int c;

	while ((c = getchar()) != EOF) {
		n++;
		s += check_error(c);
		s += hot_after_error(c);
		s += maybe_warn(c);
		s += check_at_line(c);
		s += hot_after_at_line(c);
		s += check_die(c);
		s += hot_after_die(c);
		s += hot_after_check_die(c);
	}
	sink = (int)s;
	error(0, 0, "read %ld characters", n); /* status 0: returns */
	printf("%ld %ld\n", n, s);
	return 0;
}
