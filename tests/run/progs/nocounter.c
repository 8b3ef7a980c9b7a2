/* SPDX-License-Identifier: GPL-2.0-or-later */
/* LD_PRELOAD'ed into heaptrace by summary.sh: a machine without a hardware
   instruction counter (most VMs), on any machine. perf_event_open through
   syscall(2) fails with ENOENT, as where the CPU has no such event; every
   other call passes through. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>

long syscall(long number, ...);

long syscall(long number, ...)
{
	static long (*real)(long, ...);
	va_list ap;
	long a[6];

	if (number == SYS_perf_event_open) {
		errno = ENOENT;
		return -1;
	}
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
