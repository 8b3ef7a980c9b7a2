/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the exit-time leak check (snapshot/leak.h) needs from the tracer:
   the root ranges of a stopped target, a reader of its memory, and its
   threads' registers, chosen as memcheck 3.19 chooses them.

   memcheck's roots (mc_leakcheck.c, scan_memory_root_set and
   MC_(detect_memory_leaks)): every client segment (file, anonymous or
   shared mapping) that is both readable and writable, except its own
   client-heap segments and character/block device mappings other than
   /dev/zero; then the general registers of every live thread. Only
   addressable words are scanned, so a stack is scanned from its thread's
   SP minus the red zone (128 bytes on x86-64, VG_STACK_REDZONE_SZB) up:
   memcheck marks what lies below as no-access as the stack shrinks. */
#ifndef HT_TRACER_LEAKROOTS_H
#define HT_TRACER_LEAKROOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "snapshot/leak.h"

/* x86-64's red zone below SP, kept addressable by memcheck. */
#define LEAKROOTS_REDZONE 128u

/* General registers memcheck scans per thread (VG_(apply_to_GP_regs) on
   amd64): rax rcx rdx rbx rsi rdi rsp rbp r8..r15. Not rip, flags, segment
   registers, fs/gs base nor vector registers. */
#define LEAKROOTS_NREGS 16u

/* A half-open address range [lo, hi). */
struct leakroots_range {
	uint64_t lo, hi;
};

/* The root ranges of a target whose /proc/PID/maps reads MAPS (text, NUL
   terminated), in address order, in *OUT (malloc'd, *NOUT entries; free
   it). A mapping is a root when readable and writable (private or
   shared: data, bss, anonymous, [heap], [stack]...), not [vvar],
   [vvar_vclock], [vdso], [vsyscall] nor [uprobes], and not a device file
   other than /dev/zero (a path under /dev/, /dev/shm/ excepted). Cut out
   of the roots:
   - EXCLUDE[0..NEXCLUDE) in any order: heaptrace's own pages in the
     target (inline ring, scratch/stub pages);
   - BLOCKS[0..NBLOCKS) in any order (their addr and size only): the live
     heap blocks, scanned only once reached;
   - in each anonymous or [stack]/[stack:N] mapping holding one of the
     thread stack pointers SPS[0..NSPS), everything below the lowest such
     SP minus LEAKROOTS_REDZONE. Mappings no SP falls in (cached stacks of
     exited threads...) are scanned whole; file mappings are never cut.
   Empty pieces are dropped. Returns 0, or -ENOMEM. */
int leakroots_from_maps(const char *maps,
			const struct leakroots_range *exclude, size_t nexclude,
			const uint64_t *sps, size_t nsps,
			const struct leak_block *blocks, size_t nblocks,
			struct leak_root **out, size_t *nout);

/* /proc/PID/maps's text into *TEXT (malloc'd, NUL terminated). Returns 0,
   -errno or -ENOMEM. */
int leakroots_read_maps(pid_t pid, char **text);

/* leakroots_from_maps on /proc/PID/maps itself. Returns 0, -errno or
   -ENOMEM. */
int leakroots_of_pid(pid_t pid,
		     const struct leakroots_range *exclude, size_t nexclude,
		     const uint64_t *sps, size_t nsps,
		     const struct leak_block *blocks, size_t nblocks,
		     struct leak_root **out, size_t *nout);

/* A leak_read_fn context: the target, and /proc/PID/mem for when
   process_vm_readv is refused. */
struct leakroots_reader {
	pid_t pid;
	int mem_fd; /* -1 until needed (opened lazily), then kept */
	int use_mem; /* 1 once process_vm_readv failed with ENOSYS/EPERM */
	/* Local copies of ranges read often (leakroots_reader_copy), in
	   address order. */
	struct leakroots_copy {
		uint64_t lo, hi;
		uint8_t *data;
	} *copies;
	size_t n_copies;
	size_t copied; /* bytes held */
};

/* The most bytes a reader copies in (leakroots_reader_copy): beyond it,
   ranges are read from the target word by word as asked. */
#define LEAKROOTS_COPY_MAX ((size_t)2 << 30)

/* Starts a reader of PID's memory. */
void leakroots_reader_init(struct leakroots_reader *r, pid_t pid);
/* Closes what the reader opened. */
void leakroots_reader_fini(struct leakroots_reader *r);

/* Copy [LO, HI) of the target into R at once (as much of it as can be
   read, within LEAKROOTS_COPY_MAX), so that reads there cost no system
   call: the blocks the scan reaches lie all over the heap, and one
   process_vm_readv per block costs tens of times what copying the heap
   does. Ranges must be added in address order, not overlapping. Returns
   0, or -ENOMEM when it cannot be held (reads then go to the target). */
int leakroots_reader_copy(struct leakroots_reader *r, uint64_t lo,
			  uint64_t hi);

/* leak_view_fn over a struct leakroots_reader: its copy of [ADDR,
   ADDR + LEN), or NULL when no one copy holds all of it. */
const void *leakroots_view(void *ctx, uint64_t addr, size_t len);

/* glibc malloc's own memory among MAPS (read through R): the [heap]
   (the main arena's chunks, its tcache) and the heaps of the other arenas
   (64 MiB aligned, each starting with glibc's heap_info, found by reading
   it), in address order, into *OUT (malloc'd, *NOUT entries). Under
   memcheck none of it exists (its blocks come from its own arena, which
   it never scans); natively the free chunks there still hold what the
   program last wrote, so the caller excludes these from the roots, and
   reads its blocks there from a copy. Large blocks' own mappings are
   not listed: they hold nothing but the block. Returns 0 or -ENOMEM. */
int leakroots_glibc_heaps(const char *maps, struct leakroots_reader *r,
			  struct leakroots_range **out, size_t *nout);

/* leak_read_fn over a struct leakroots_reader: reads up to LEN bytes at
   ADDR of the target, through process_vm_readv, else pread on
   /proc/PID/mem. Returns the bytes read from ADDR on (fewer when an
   unreadable page follows), 0 when LEN is 0, -1 when none can be. */
ssize_t leakroots_read(void *ctx, uint64_t addr, void *buf, size_t len);

/* The file mappings of a target, for telling vtables (memcheck's
   multipleinheritance heuristic). */
struct leakroots_map {
	uint64_t lo, hi;
	bool readable, executable;
};
struct leakroots_maps {
	struct leakroots_map *v; /* in address order */
	size_t n;
};

/* The file mappings of MAPS (a /proc/PID/maps text) into *IX. Returns 0
   or -ENOMEM. */
int leakroots_index_maps(const char *maps, struct leakroots_maps *ix);
/* Frees what IX holds. */
void leakroots_maps_fini(struct leakroots_maps *ix);
/* memcheck's vtable test: ADDR lies in a readable file mapping of IX and
   2 of the (up to) 20 words from ADDR, read through R, point into
   executable file mappings. */
bool leakroots_is_vtable(const struct leakroots_maps *ix,
			 struct leakroots_reader *r, uint64_t addr);

/* Whether P, found in a root and pointing inside the live block at LO,
   is glibc's own pointer to the chunk that follows the block (the
   arena's top or a bin pointing at a free chunk, whose header overlaps
   the block's last bytes): the block's chunk size is read through R. */
bool leakroots_glibc_chunk_pointer(struct leakroots_reader *r, uint64_t p,
				   uint64_t lo);

/* The LEAKROOTS_NREGS root words of a ptrace-stopped thread TID, in
   memcheck's order, into REGS; its SP into *SP when not NULL. Returns 0
   or -errno (PTRACE_GETREGS). */
int leakroots_thread_regs(pid_t tid, uint64_t regs[LEAKROOTS_NREGS],
			  uint64_t *sp);

#endif
