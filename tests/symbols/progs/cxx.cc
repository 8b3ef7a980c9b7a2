/* SPDX-License-Identifier: GPL-2.0-or-later */
/* C++ names: a static member of a class template in a namespace, called
   from a function in the same namespace, for the demangling test. */
#include "mark.h"

#include <csignal>

namespace ns {

template <typename T> struct Widget {
	T value;

	NOINLINE static Widget *
	make(unsigned long n)
	{
		CALL(std::raise(SIGSTOP));
		return n ? nullptr : nullptr;
	}
};

NOINLINE void
helper(int x)
{
	CALL(Widget<int>::make((unsigned long)x));
}

} /* namespace ns */

int
main()
{
	CALL(ns::helper(1));
	return 0;
}
