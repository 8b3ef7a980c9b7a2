/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Moving bytes in and out of a tracee. Data goes through process_vm_readv
   and process_vm_writev, one system call whatever the size; code pages are
   read-only, so code goes through /proc/PID/mem (the kernel's FOLL_FORCE
   path for tracers) with PTRACE_POKEDATA as the fallback. */
#include "tracer/target/target.h"

#include <errno.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <unistd.h>

#define PAGE 4096ULL

ssize_t
mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	/* One remote iovec per page: a transfer never splits an iovec, so
	   this returns everything up to the first unmapped page. */
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote[64];
	size_t n = 0, done = 0;
	uint64_t a = addr;
	while (done < len && n < 64) {
		size_t chunk = (size_t)(PAGE - (a & (PAGE - 1)));
		if (chunk > len - done)
			chunk = len - done;
		remote[n].iov_base = (void *)(uintptr_t)a;
		remote[n].iov_len = chunk;
		n++;
		a += chunk;
		done += chunk;
	}
	local.iov_len = done;
	ssize_t r = process_vm_readv(pid, &local, 1, remote, n, 0);
	if (r < 0)
		return -errno;
	return r;
}

int
mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { .iov_base = (void *)buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr,
				.iov_len = len };
	ssize_t r = process_vm_writev(pid, &local, 1, &remote, 1, 0);
	if (r < 0)
		return -errno;
	return (size_t)r == len ? 0 : -EFAULT;
}

static int
poke_code(pid_t tid, uint64_t addr, const uint8_t *buf, size_t len)
{
	while (len) {
		uint64_t base = addr & ~7ULL;
		size_t off = (size_t)(addr - base);
		errno = 0;
		long word = ptrace(PTRACE_PEEKDATA, tid, (void *)(uintptr_t)base,
				   NULL);
		if (errno)
			return -errno;
		size_t n = 8 - off < len ? 8 - off : len;
		memcpy((uint8_t *)&word + off, buf, n);
		if (ptrace(PTRACE_POKEDATA, tid, (void *)(uintptr_t)base,
			   (void *)word) < 0)
			return -errno;
		addr += n;
		buf += n;
		len -= n;
	}
	return 0;
}

int
mem_write_code(struct tproc *p, pid_t tid, uint64_t addr, const void *buf,
	       size_t len)
{
	if (p->mem_fd >= 0) {
		ssize_t w = pwrite(p->mem_fd, buf, len, (off_t)addr);
		if (w == (ssize_t)len)
			return 0;
	}
	return poke_code(tid, addr, buf, len);
}
