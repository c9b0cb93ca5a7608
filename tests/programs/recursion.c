/*
 * Oracle test program: direct recursion (fib, a tree walk), mutual recursion (is_even/is_odd,
 * a tiny recursive-descent expression parser), and tail recursion that gcc turns into a loop.
 * With an argument N (default 1) main does its work N times and prints the last round's
 * results, the same line as one round: the benchmark (bench/bench.sh) runs it ~0.5 s that way.
 * A volatile zero read each round keeps the compiler from hoisting the work out of the loop.
 */
#include <stdio.h>
#include <stdlib.h>

struct node {
	int val;
	struct node *left, *right;
};

static struct node pool[63];

__attribute__((noinline)) static int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static struct node *build(int lo, int hi, int *next)
{
	struct node *n;
	int mid;

	if (lo > hi)
		return NULL;
	mid = (lo + hi) / 2;
	n = &pool[(*next)++];
	n->val = mid;
	n->left = build(lo, mid - 1, next);
	n->right = build(mid + 1, hi, next);
	return n;
}

__attribute__((noinline)) static int depth_sum(const struct node *n, int depth)
{
	if (!n)
		return 0;
	return n->val * depth + depth_sum(n->left, depth + 1) + depth_sum(n->right, depth + 1);
}

static int is_odd(unsigned n);

__attribute__((noinline)) static int is_even(unsigned n)
{
	return n == 0 ? 1 : is_odd(n - 1);
}

__attribute__((noinline)) static int is_odd(unsigned n)
{
	return n == 0 ? 0 : is_even(n - 1);
}

__attribute__((noinline)) static unsigned gcd(unsigned a, unsigned b)
{
	return b ? gcd(b, a % b) : a;
}

/* expr := term ('+' term)* ; term := atom ('*' atom)* ; atom := digit | '(' expr ')' */
static const char *pos;
static int expr(void);

static int atom(void)
{
	int v;

	if (*pos == '(') {
		pos++;
		v = expr();
		pos++; /* ')' */
		return v;
	}
	return *pos++ - '0';
}

static int term(void)
{
	int v = atom();

	while (*pos == '*') {
		pos++;
		v *= atom();
	}
	return v;
}

static int expr(void)
{
	int v = term();

	while (*pos == '+') {
		pos++;
		v += term();
	}
	return v;
}

static volatile int zero;

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 1;
	int next, i, fb = 0, ds = 0, ev = 0, od = 0, ex = 0;
	unsigned g = 0;

	for (long r = 0; r < rounds; r++) {
		int z = zero;
		struct node *root;

		next = 0;
		root = build(1 + z, 63, &next);
		g = 0;
		for (i = 1; i < 40; i++)
			g += gcd(i * 12 + z, 180);
		pos = "2*(3+4)+(1+2*(2+1))*5+7" + z;
		fb = fib(16 + z);
		ds = depth_sum(root, 1);
		ev = is_even(301 + z);
		od = is_odd(77 + z);
		ex = expr();
	}
	printf("%d %d %d %d %u %d\n", fb, ds, ev, od, g, ex);
	return 0;
}
