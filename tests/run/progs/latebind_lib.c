/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The library latebind.c dlopens once its threads run: it only has to
   appear in the link map (heaptrace binds the allocator then, under
   HEAPTRACE_TEST_BIND_WITH), and to be callable. */
int latebind_marker(void);

int latebind_marker(void)
{
	return 42;
}
