/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The input as a file (fuzz.h): a memfd, so that tens of thousands of
   inputs a second cost no disk, reopened by its /proc/self/fd path the
   way the readers open a profile. */
#include "fuzz/fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

const char *
fuzz_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	size_t done = 0;

	if (fd < 0) {
		fd = memfd_create("heaptrace-fuzz", MFD_CLOEXEC);
		if (fd < 0) {
			perror("fuzz: memfd_create");
			exit(1);
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) != 0) {
		perror("fuzz: ftruncate");
		exit(1);
	}
	while (done < size) {
		ssize_t n = pwrite(fd, data + done, size - done, (off_t)done);

		if (n <= 0) {
			perror("fuzz: write");
			exit(1);
		}
		done += (size_t)n;
	}
	return path;
}
