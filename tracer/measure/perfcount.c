/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The --time-unit=i clock: user-space instructions retired by the target,
   counted by a hardware counter per thread (perf_event_open), summed over
   the process's threads, plus what its exited threads and, for a forked
   child, its parent had counted. Machines without such a counter (most
   VMs) make heaptrace record milliseconds instead. */
#include "tracer/measure/measure.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int
counter_open(pid_t tid)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_INSTRUCTIONS;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	long fd = syscall(SYS_perf_event_open, &a, tid, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

bool
tracer_instructions_available(void)
{
	int fd = counter_open(0);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static uint64_t
counter_read(int fd)
{
	uint64_t v = 0;
	if (fd < 0 || read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

void
perfcount_thread_start(struct tracer *t, struct tracee *tc)
{
	tc->insn_fd = -1;
	if (t->opt->time_unit == HT_TIME_I && tc->proc)
		tc->insn_fd = counter_open(tc->tid);
}

void
perfcount_thread_end(struct tracee *tc)
{
	if (tc->insn_fd < 0)
		return;
	if (tc->proc)
		tc->proc->insn_base += (int64_t)counter_read(tc->insn_fd);
	close(tc->insn_fd);
	tc->insn_fd = -1;
}

uint64_t
perfcount_process(struct tracer *t, const struct tproc *p)
{
	int64_t sum = p->insn_base;
	size_t pos = 0;
	uint64_t key, val;
	while (u64map_next(&t->tracees, &pos, &key, &val)) {
		const struct tracee *tc = (const struct tracee *)(uintptr_t)val;
		if (tc->proc == p)
			sum += (int64_t)counter_read(tc->insn_fd);
	}
	return sum > 0 ? (uint64_t)sum : 0;
}
