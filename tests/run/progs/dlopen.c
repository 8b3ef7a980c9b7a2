/* SPDX-License-Identifier: GPL-2.0-or-later */
/* dlopen: load the library named by argv[1] (dlalloc.c), call its
   allocating function, release, dlclose (unless argv[2] is "keep"), then
   allocate again in main. dlopen and dlclose allocate and free ld.so's own
   records with malloc. Massif names frames when it writes the file, at
   exit: the frames of a library unloaded by then print as "???". */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

NOINLINE static void *main_alloc(size_t n)
{
	void *p = malloc(n);

	return p;
}

int main(int argc, char **argv)
{
	void *before = main_alloc(700);
	void *after;
	void *h;
	int (*work)(void);
	void (*release)(void);

	if (argc != 2 && argc != 3)
		return 2;
	h = dlopen(argv[1], RTLD_NOW);
	if (!h)
		return 3;
	work = (int (*)(void))dlsym(h, "dl_work");
	release = (void (*)(void))dlsym(h, "dl_release");
	if (!work || !release)
		return 4;
	if (work() != 2500)
		return 5;
	release();
	if (argc == 2 || strcmp(argv[2], "keep") != 0)
		if (dlclose(h) != 0)
			return 6;
	after = main_alloc(900);
	free(before);
	free(after);
	return 0;
}
