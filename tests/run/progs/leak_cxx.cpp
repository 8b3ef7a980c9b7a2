// SPDX-License-Identifier: GPL-2.0-or-later
// A lost C++ object owning a buffer: make_owner news an Owner (16 bytes)
// whose constructor new[]s a 256-byte char buffer, and drops the object:
// definitely lost 16 bytes in 1 block, indirectly lost 256 in 1. And
// make_holder news a Holder (16 bytes) that owns an array of 4 Items with
// a destructor: new[] allocates 8 + 4 x 24 bytes and returns the address
// 8 bytes in (the count's cookie), the only pointer to that block, from
// a lost block; memcheck's newarray heuristic is about such pointers.
// libstdc++ allocates its 72,704-byte emergency exception pool before
// main, still reachable (--run-cxx-freeres=no). No output.
#include <cstddef>
#include <cstdlib>
#include <cstring>

#define NOINLINE __attribute__((noinline))

// Zeroes stack below the caller's frame (see leak_common.h).
NOINLINE static void scrub_stack()
{
	volatile unsigned char pad[32768];

	for (std::size_t i = 0; i < sizeof(pad); i++)
		pad[i] = 0;
}

struct Owner {
	char *buf;
	std::size_t len;

	Owner() : buf(new char[256]), len(256)
	{
		std::memset(buf, 0x5a, len);
	}
	~Owner() { delete[] buf; }
};

struct Item {
	long a, b, c;

	Item() : a(0x5a5a), b(0x5a5a), c(0x5a5a) {}
	~Item() { a = 0; }
};

struct Holder {
	Item *items;
	long count;

	Holder() : items(new Item[4]), count(4) {}
	~Holder() { delete[] items; }
};

NOINLINE static void make_owner()
{
	Owner *o = new Owner;

	o = nullptr;
	(void)o;
}

NOINLINE static void make_holder()
{
	Holder *h = new Holder;

	h = nullptr;
	(void)h;
}

int main()
{
	make_owner();
	make_holder();
	scrub_stack();
	return 0;
}
