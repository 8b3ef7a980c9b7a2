/* SPDX-License-Identifier: GPL-2.0-or-later */
/* operator new, new[], delete and delete[] from C++. libstdc++ allocates
   its 72,704-byte emergency exception pool before main and
   __gnu_cxx::__freeres frees it at exit, so those two events frame the
   program's own. Allocation sequence: see newdel.events. */
#include <cstddef>
#include <new>

struct node {
	node *next;
	char payload[56];
};

__attribute__((noinline)) static node *make(node *next)
{
	node *n = new node;

	n->next = next;
	return n;
}

int main()
{
	node *list = nullptr;

	for (int i = 0; i < 4; i++)
		list = make(list);
	char *buf = new char[1000];
	int *nums = new (std::nothrow) int[250];
	delete[] buf;
	while (list) {
		node *next = list->next;

		delete list;
		list = next;
	}
	delete[] nums;
	return 0;
}
