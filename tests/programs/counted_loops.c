/*
 * Oracle test program: loops whose trip counts follow from a register stepped by a constant
 * (issue 15, `edgeprof run --induction`): array sums, a matrix multiply, a memcpy-like copy,
 * nested counted loops, a count-down loop, a pointer walk, a loop with early exits, a counted
 * loop in a recursive function and in 4 threads. Every loop is counted by induction where
 * its machine code allows it and by chords elsewhere; the counts must equal callgrind's
 * either way. With an argument N (default 1) main does its work N times.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 48

static long a[N * N], b[N * N], c[N * N];
static unsigned char src[4096], dst[4096];
static volatile int zero;

__attribute__((noinline)) static long array_sum(const long *v, long n)
{
	long s = 0;

	for (long i = 0; i < n; i++)
		s += v[i];
	return s;
}

__attribute__((noinline)) static void matmul(long n)
{
	for (long i = 0; i < n; i++)
		for (long j = 0; j < n; j++) {
			long s = 0;

			for (long k = 0; k < n; k++)
				s += a[i * n + k] * b[k * n + j];
			c[i * n + j] = s;
		}
}

__attribute__((noinline)) static void copy_bytes(unsigned char *d, const unsigned char *s,
						 unsigned long n)
{
	while (n--)
		*d++ = *s++;
}

__attribute__((noinline)) static long count_down(long n)
{
	long s = 0;

	for (long i = n; i > 0; i--)
		s += i & 3;
	return s;
}

__attribute__((noinline)) static long pointer_walk(const long *p, const long *end)
{
	long s = 0;

	for (; p != end; p++)
		s ^= *p;
	return s;
}

__attribute__((noinline)) static long find_value(const long *v, long n, long want)
{
	for (long i = 0; i < n; i++) {
		if (v[i] == want)
			return i;
		if (v[i] < 0)
			return -2;
	}
	return -1;
}

__attribute__((noinline)) static long nested_triangle(long n)
{
	long s = 0;

	for (long i = 0; i < n; i++)
		for (long j = 0; j < i; j++)
			s += (i ^ j) & 7;
	return s;
}

__attribute__((noinline)) static long recurse(long depth, long n)
{
	long s = 0;

	for (long i = 0; i < n; i++)
		s += a[i] + depth;
	if (depth > 0)
		s += recurse(depth - 1, n + 3);
	return s;
}

static void *thread_main(void *arg)
{
	long id = (long)arg, s = 0;

	for (int r = 0; r < 20; r++)
		s += array_sum(b + id, 100 + 17 * id + r);
	return (void *)s;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1;
	long total = 0;

	for (long i = 0; i < N * N; i++) {
		a[i] = i % 7;
		b[i] = (i * 3) % 11;
	}
	for (int i = 0; i < 4096; i++)
		src[i] = (unsigned char)i;
	for (int r = 0; r < rounds; r++) {
		pthread_t t[4];

		total = zero;
		total += array_sum(a, N * N);
		matmul(N + zero);
		total += c[5];
		copy_bytes(dst, src, 3000 + zero);
		total += dst[2999];
		total += count_down(1000 + zero);
		total += pointer_walk(b, b + 500 + zero);
		total += find_value(a, N * N, 6 + zero);
		total += find_value(a, 3 + zero, 99);
		total += nested_triangle(30 + zero);
		total += recurse(5, 40);
		for (long k = 0; k < 4; k++)
			pthread_create(&t[k], NULL, thread_main, (void *)k);
		for (int k = 0; k < 4; k++) {
			void *v;

			pthread_join(t[k], &v);
			total += (long)v;
		}
	}
	printf("%ld\n", total);
	return 0;
}
