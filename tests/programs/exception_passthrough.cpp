/*
 * Oracle test program: a C++ exception passes through a frame that has no landing pad
 * (middle), so that frame is left without returning; edgeprof follows the throw and must
 * still count every edge exactly.
 */
#include <cstdio>
#include <stdexcept>
__attribute__((noinline)) int thrower(int x) { if (x % 5 == 2) throw std::runtime_error("x"); return x * 3; }
__attribute__((noinline)) int middle(int x) { int r = thrower(x); if (r & 1) r += 7; return r; }
int main() {
	long s = 0;
	for (int i = 0; i < 300; i++) {
		try { s += middle(i); } catch (const std::exception &) { s -= 1; }
	}
	std::printf("%ld\n", s);
	return 0;
}
