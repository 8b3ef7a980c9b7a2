/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Plain C, no stdio: blocks allocated through f3..f0 (each in its own file),
   through shorter chains and directly in main, kept, then freed in an order
   that leaves one clear peak. Live heap just before free(b), the peak:
   1000 + 2000 + 300 + 10 + 20 x 100 = 5310 bytes. Built dynamically (stack)
   and statically (stack_static); both must give the same profile. */
#include <stdlib.h>

#include "stack.h"

int main(void)
{
	void *small[20];
	void *a = f3(1000);
	void *b = f2(2000);
	void *c = f0(300);
	void *d = malloc(10);

	for (int i = 0; i < 20; i++)
		small[i] = f1(100);
	free(b);
	for (int i = 0; i < 20; i += 2)
		free(small[i]);
	free(a);
	for (int i = 1; i < 20; i += 2)
		free(small[i]);
	free(c);
	free(d);
	return 0;
}
