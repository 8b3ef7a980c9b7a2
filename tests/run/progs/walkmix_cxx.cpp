// SPDX-License-Identifier: GPL-2.0-or-later
// C++ exceptions through frames that allocate, for the exactness test of
// the inline stub's walk memo (walk_memo.sh): each throw unwinds a
// different number of frames of level_a and level_b (one body, so one
// frame size: one function's frame where the other's was), caught at a
// level that changes with the descent, sometimes rethrown to an outer
// catch; allocations before the throw, during the unwinding (destructors)
// and after the catch land on stack addresses that held other frames.
//
// 120 descents, depth 1 + i % 30 (four times 1..30). Every level holds a
// vector of 1000 + level bytes; the bottom allocates three blocks in
// leaf_new (2000 + ..., operator new), then throws an Err (its what():
// 5000 + ... bytes) unless i % 4 == 3; each level's Guard allocates a
// string of 3000 + level bytes in its destructor while the exception
// passes; the catching level (i * 7 % (depth + 1)) allocates 4000 + ...
// bytes after its catch and rethrows when i % 5 == 0, to run_descent's
// catch, which allocates 6000 + ... bytes. Block sizes thus name their
// part (the thousands).
//
// leaf_new's second and third calls share with the walk just before them
// every frame from bottom up: bottom, depth + 1 levels, run_descent, main
// and what calls main: at least depth + 4 return addresses, so over the
// 120 descents 240 walks and at least 2 * 4 * (465 + 4 * 30) = 4,680
// frames. Output: the number of blocks, throws, catches and a checksum;
// exit 0.
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#if defined(__clang__)
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noipa))
#endif

namespace {

struct Descent {
	int depth, catch_at, k;
	bool throws, rethrow;
};

struct Err {
	int k;
	std::string what;
};

struct Counts {
	unsigned long blocks = 0, throws = 0, catches = 0, sum = 0;
};

Counts counts;
volatile unsigned long sink;

// Three blocks from one frame: the second and third walks share all of
// the first's frames from the caller up.
KEEP void
leaf_new(int k)
{
	std::size_t n = 2000 + static_cast<std::size_t>(k % 50);
	auto *a = static_cast<unsigned char *>(::operator new(n));
	auto *b = static_cast<unsigned char *>(::operator new(n + 100));
	auto *c = static_cast<unsigned char *>(::operator new(n + 200));
	std::memset(a, k & 0xff, n);
	std::memset(b, (k + 1) & 0xff, n + 100);
	std::memset(c, (k + 2) & 0xff, n + 200);
	counts.sum += a[n - 1] + b[n + 99] + c[n + 199];
	counts.blocks += 3;
	::operator delete(a);
	::operator delete(b);
	::operator delete(c);
}

// Allocates in its destructor while an exception passes through its
// frame.
struct Guard {
	int level;
	explicit Guard(int l) : level(l) {}
	~Guard()
	{
		if (std::uncaught_exceptions() == 0)
			return;
		std::string s(3000 + static_cast<std::size_t>(level), 'g');
		counts.sum += static_cast<unsigned char>(s[static_cast<std::size_t>(level)]);
		counts.blocks++;
	}
};

KEEP void
bottom(const Descent &ds)
{
	leaf_new(ds.k);
	if (!ds.throws)
		return;
	counts.throws++;
	throw Err{ds.k, std::string(5000 + static_cast<std::size_t>(ds.k % 50), 'e')};
}

KEEP void
after_catch(const Err &e, int level)
{
	std::vector<char> v(4000 + static_cast<std::size_t>(level), 'c');
	counts.sum += static_cast<unsigned char>(v.back()) + e.what.size();
	counts.blocks++;
	counts.catches++;
}

// The level below LEVEL: a and b alternate, starting with b or a as the
// descent's k says.
int
next_level(const Descent &ds, int level);

KEEP int
level_a(const Descent &ds, int level)
{
	Guard g(level);
	std::vector<char> v(1000 + static_cast<std::size_t>(level), 'v');
	counts.blocks++;
	int r = 1;
	if (level >= ds.depth) {
		bottom(ds);
	} else if (level == ds.catch_at) {
		try {
			r = next_level(ds, level);
		} catch (const Err &e) {
			after_catch(e, level);
			if (ds.rethrow)
				throw;
		}
	} else {
		r = next_level(ds, level);
	}
	sink += static_cast<unsigned long>(v[static_cast<std::size_t>(level)]);
	return r + 1;
}

KEEP int
level_b(const Descent &ds, int level)
{
	Guard g(level);
	std::vector<char> v(1000 + static_cast<std::size_t>(level), 'v');
	counts.blocks++;
	int r = 1;
	if (level >= ds.depth) {
		bottom(ds);
	} else if (level == ds.catch_at) {
		try {
			r = next_level(ds, level);
		} catch (const Err &e) {
			after_catch(e, level);
			if (ds.rethrow)
				throw;
		}
	} else {
		r = next_level(ds, level);
	}
	sink += static_cast<unsigned long>(v[static_cast<std::size_t>(level)]);
	return r + 1;
}

int
next_level(const Descent &ds, int level)
{
	return (level + ds.k) % 2 ? level_a(ds, level + 1) : level_b(ds, level + 1);
}

KEEP void
run_descent(int i)
{
	int depth = 1 + i % 30;
	Descent ds{depth, (i * 7) % (depth + 1), i, i % 4 != 3, i % 5 == 0};
	try {
		sink += static_cast<unsigned long>(i % 2 ? level_a(ds, 0) : level_b(ds, 0));
	} catch (const Err &e) {
		std::vector<char> v(6000 + static_cast<std::size_t>(e.k % 50), 'o');
		counts.sum += static_cast<unsigned char>(v[0]);
		counts.blocks++;
		counts.catches++;
	}
}

} // namespace

int
main()
{
	for (int i = 0; i < 120; i++)
		run_descent(i);
	std::printf("%lu blocks, %lu throws, %lu catches, sum %lu\n",
		    counts.blocks, counts.throws, counts.catches, counts.sum);
	return 0;
}
