// SPDX-License-Identifier: GPL-2.0-or-later
// Every operator new and delete an allocator may provide itself (jemalloc
// and tcmalloc do, without going through malloc): plain, [], nothrow,
// aligned, aligned nothrow; delete plain, sized, nothrow, aligned, sized
// aligned, aligned nothrow, each for objects and arrays. Twelve blocks of
// distinct sizes are live at once, 15,804 bytes:
//   1000 + 2000 + 3000 + 4000 (new, new[], nothrow new, nothrow new[])
//   + 512 + 1536 (aligned 64: new, new[])
//   + 768 + 1280 (aligned 256, nothrow: new, new[])
//   + 100 + 200 (new Obj, new char[]) + 384 + 1024 (aligned 128 and 64
//   objects by new expressions)
// then all are freed, each by a different operator delete. A last block of
// 1000 bytes is allocated and freed where the first was, so that a free
// reported twice would be seen. Output: none; exit 0 when every
// allocation succeeded.
#include <cstddef>
#include <new>

#define NOINLINE __attribute__((noinline))

struct Obj {
	char bytes[100];
};

struct alignas(128) Line128 {
	char bytes[300]; // sizeof 384
};

struct alignas(64) Line64 {
	char bytes[500]; // sizeof 512
};

static const std::align_val_t al64{64}, al128{128}, al256{256};

struct Blocks {
	void *n1, *n2, *n3, *n4, *n5, *n6, *n7, *n8;
	Obj *e1;
	char *e2;
	Line128 *e3;
	Line64 *e4;
};

// Keeps the compiler from pairing or eliding the calls.
NOINLINE static void *use(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

NOINLINE static void plain(Blocks &b)
{
	b.n1 = use(::operator new(1000));
	b.n2 = use(::operator new[](2000));
}

NOINLINE static void nothrow(Blocks &b)
{
	b.n3 = use(::operator new(3000, std::nothrow));
	b.n4 = use(::operator new[](4000, std::nothrow));
}

NOINLINE static void aligned(Blocks &b)
{
	b.n5 = use(::operator new(512, al64));
	b.n6 = use(::operator new[](1536, al64));
	b.n7 = use(::operator new(768, al256, std::nothrow));
	b.n8 = use(::operator new[](1280, al256, std::nothrow));
}

NOINLINE static void expressions(Blocks &b)
{
	b.e1 = static_cast<Obj *>(use(new Obj));
	b.e2 = static_cast<char *>(use(new char[200]));
	b.e3 = static_cast<Line128 *>(use(new Line128));
	b.e4 = static_cast<Line64 *>(use(new Line64[2]));
}

NOINLINE static void release(Blocks &b)
{
	::operator delete(b.n1);
	::operator delete[](b.n2);
	::operator delete(b.n3, std::nothrow);
	::operator delete[](b.n4, std::nothrow);
	::operator delete(b.n5, al64);
	::operator delete[](b.n6, al64);
	::operator delete(b.n7, al256, std::nothrow);
	::operator delete[](b.n8, al256, std::nothrow);
	::operator delete(b.e1, sizeof(Obj));
	::operator delete[](b.e2, 200);
	::operator delete(b.e3, sizeof(Line128), al128);
	::operator delete[](b.e4, 2 * sizeof(Line64), al64);
}

NOINLINE static bool again()
{
	void *p = use(::operator new(1000));
	::operator delete(p, 1000);
	return p != nullptr;
}

int main()
{
	Blocks b;

	plain(b);
	nothrow(b);
	aligned(b);
	expressions(b);
	bool ok = b.n1 && b.n2 && b.n3 && b.n4 && b.n5 && b.n6 && b.n7 &&
		  b.n8 && b.e1 && b.e2 && b.e3 && b.e4;
	release(b);
	return ok && again() ? 0 : 1;
}
