/*
 * Oracle test program (C++): exceptions thrown a few frames deep and caught higher up, a
 * rethrow, destructors run during unwinding, and a catch-all. The landing pads are entered
 * by the unwinder, not by any jump or call in the program.
 */
#include <cstdio>
#include <stdexcept>
#include <string>

static int destroyed;

struct guard {
	int id;
	explicit guard(int i) : id(i) {}
	~guard() { destroyed += id; }
};

__attribute__((noinline)) static int deep(int x)
{
	guard g(x);

	if (x % 5 == 0)
		throw std::runtime_error("five");
	if (x % 7 == 0)
		throw x;
	return x * 2;
}

__attribute__((noinline)) static int middle(int x)
{
	guard g(1);

	try {
		return deep(x) + 1;
	} catch (const std::runtime_error &) {
		if (x > 20)
			throw; /* rethrow to main */
		return -1;
	}
}

int main()
{
	long s = 0;
	int caught_int = 0, caught_other = 0;

	for (int i = 1; i < 40; i++) {
		try {
			s += middle(i);
		} catch (int v) {
			caught_int += v;
		} catch (...) {
			caught_other++;
		}
	}
	std::printf("%ld %d %d %d\n", s, caught_int, caught_other, destroyed);
	return 0;
}
