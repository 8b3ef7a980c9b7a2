#include <stdlib.h>

__attribute__((noinline)) void *g(size_t n) { return malloc(n); }
__attribute__((noinline)) void *f(size_t n) { return g(n); }

int main(void)
{
    void *a[3];
    for (int i = 0; i < 3; i++)
        a[i] = malloc(1000);
    void *b = f(4000);
    void *c = g(4000);
    void *s = malloc(10);
    free(a[0]);
    void *d = calloc(1, 123);
    free(b);
    free(c);
    free(d);
    free(s);
    for (int i = 1; i < 3; i++)
        free(a[i]);
    return 0;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The worked example of massif-semantics.md, Appendix B, line for line (so
   its tree lines and this golden agree); this notice sits at the end to keep
   the line numbers. Allocation sequence: see example.events. */
