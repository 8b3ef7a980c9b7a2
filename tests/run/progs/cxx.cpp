// SPDX-License-Identifier: GPL-2.0-or-later
// C++: standard containers (vector growth, long and short strings, a map),
// every form of operator new and delete (plain, [], nothrow, aligned, sized),
// and an exception, whose object libstdc++ allocates with malloc. libstdc++
// also allocates its 72,704-byte emergency exception pool before main and
// frees it at exit (__gnu_cxx::__freeres). No output.
#include <cstddef>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#define NOINLINE __attribute__((noinline))

struct alignas(64) Line {
	char bytes[200];
};

NOINLINE static std::size_t grow_vector()
{
	std::vector<int> v;

	for (int i = 0; i < 100; i++)
		v.push_back(i);
	return v.size();
}

NOINLINE static std::size_t fill_map()
{
	std::map<int, std::string> m;

	for (int i = 0; i < 20; i++)
		m[i] = std::string(static_cast<std::size_t>(10 + i * 3), 'x');
	std::size_t n = 0;
	for (const auto &kv : m)
		n += kv.second.size();
	return n;
}

NOINLINE static int throw_one(int x)
{
	if (x > 0)
		throw std::runtime_error("an exception message longer than fifteen characters");
	return x;
}

NOINLINE static int catch_one()
{
	try {
		return throw_one(1);
	} catch (const std::exception &e) {
		return static_cast<int>(std::string(e.what()).size());
	}
}

int main()
{
	std::string s_short("short");
	std::string s_long("a string that does not fit in the small buffer");
	int *one = new int(42);
	int *arr = new int[500];
	char *nt = new (std::nothrow) char[3000];
	double *ntd = new (std::nothrow) double(1.5);
	Line *al = new Line;
	Line *alarr = new Line[4];
	Line *alnt = new (std::nothrow) Line;
	std::size_t total = grow_vector() + fill_map();

	total += static_cast<std::size_t>(catch_one());
	s_long += s_short;
	total += s_long.size();
	delete one;
	delete[] arr;
	delete[] nt;
	delete ntd;
	delete al;
	delete[] alarr;
	delete alnt;
	/* 100 + (20 x 10 + 3 x 190) + 51 + (46 + 5) */
	return total == 972 ? 0 : 1;
}
