/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A compute-bound program with few allocations: what a profiler costs when
   the target hardly allocates. */
#include <stdio.h>
#include <stdlib.h>

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 700000000;
	double *v = malloc(1024 * sizeof(*v));
	for (int i = 0; i < 1024; i++)
		v[i] = i * 0.5;
	double acc = 0;
	for (long i = 0; i < n; i++)
		acc += v[i & 1023] * (double)(i % 7);
	free(v);
	printf("%.1f\n", acc);
	return 0;
}
