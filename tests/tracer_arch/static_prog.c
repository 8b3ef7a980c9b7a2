/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Linked with -static for test_elfsym: prints where its malloc is, which,
   in a non-PIE static executable, is the value .symtab gives it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int
main(void)
{
	void *(*volatile fn)(size_t) = malloc;
	void *p = fn(16);

	printf("%#llx\n", (unsigned long long)(uintptr_t)fn);
	free(p);
	return 0;
}
