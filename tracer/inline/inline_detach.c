/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Taking the inline path out of a process that runs on (detach.c, with
   every thread stopped): docs/inline-backend.md, "Detaching".

   1. The ring is drained: every record committed so far is delivered.
   2. The original bytes go back at every patched entry: no thread enters
      the stub any more.
   3. Every thread still inside the inline code runs free until it has
      left it (see "Running threads out of the stub"): its pc in the
      blob, a trampoline or a relocated prologue, or an *activation* of
      the stub on its stack (stub_entry's return address from stub_call,
      with the frame stub_entry pushed above it, or stub_lean's from an
      original, with the descriptor index above it: a thread inside the
      original allocator, called from the stub, returns through it), or
      a signal frame on its stack that resumes outside any activation in
      code of ours (a trampoline, a relocated prologue, stub_fast,
      stub_entry, stub_lean: a handler interrupted a thread there, and
      returns into it).
      The ring is drained between the slices they run, so that a thread
      in the middle of a record, or waiting for room for one, commits
      it.
   4. RING_F_PASS is set as soon as no thread is past the stub's check
      of it (none in the middle of a record): from then on every stub
      call goes straight to the original, and a stub that comes back
      from one touches nothing of the ring but its first page (ring.h).
      Set earlier, it would make a stub waiting for room give its
      record up, a hole the drain cannot get past ("The last drain").
      The ring is drained for the last time.
   5. The ring's mapping in the target goes, but its first page when a
      thread may still come back through the stub (it reads the header
      only); the first page goes too, with the blob, the trampolines and
      the relocated prologues (the scratch pages detach.c unmaps), when no
      thread can come back into any of them. Otherwise those stay mapped
      as a pass-through: harmless, and said in a debug line only.

   A thread that does not leave (blocked inside the allocator on a lock
   that a stopped thread outside the stub holds, at a group-stop, in a
   signal handler on another stack, or in one that does not return)
   leaves the code mapped; one whose pc stays in the stub past its check
   of the flag, or whose stack holds a signal frame saved there, may
   still write records, and a handler's return into stub_fast or
   stub_lean reads the ring past its first page: the whole ring stays
   mapped then. Nothing here depends on heaptrace surviving it: a
   SIGKILL at any point leaves the stubs passing every call through (the
   kernel marks the consumer dead), no thread single-stepped or at a
   breakpoint, and nothing unmapped that a thread can reach. */
#include "tracer/inline/inline_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "common/monotonic.h"
#include "common/xalloc.h"
#include "tracer/inline/stub_blob.h"
#include "tracer/inline/tramp.h"
#include "tracer/target/target.h"

#define RECORD_WAIT_NS 2000000ULL /* a thread mid-record finishes quickly */
#define RUN_OUT_MS 2000           /* for all threads together */
#define STACK_SCAN_MAX (8u << 20) /* bytes above a stack pointer searched */
#define RING_PAGE 4096            /* what stays of the ring: its header */


/* ---- Where the inline code is ---- */

/* The stub's code in a target at BLOB, and what stub_entry's bytes say of
   its frame (read from the blob itself, so that it follows stub.c). */
struct code {
	const struct inline_proc *ip;
	uint64_t blob;
	uint64_t entry_lo, entry_hi; /* stub_entry: pushes, call, pops */
	uint64_t r0;        /* the return address of stub_entry's call of
			       stub_call: every activation's mark; 0 when
			       not found (then everything stays mapped) */
	int idx_word;       /* words above the mark to the saved r11 (the
			       descriptor index); -1 unknown */
	uint64_t lean;      /* the return address of stub_lean's call of an
			       original: the mark of its activations, with
			       the descriptor index in the word above */
	uint64_t fast, lean_end; /* stub_fast, stub_entry, stub_lean */
	uint64_t lo, hi;    /* every byte of the blob, the trampolines and
			       the relocated copies is in [LO, HI): most
			       stack words are tested against this alone */
	unsigned boxed;     /* patches [LO, HI) covers (a drain's answer
			       may add more) */
};

static void
code_init(struct code *c, const struct inline_proc *ip)
{
	*c = (struct code){ .ip = ip, .blob = ip->blob, .idx_word = -1,
			    .lean = ip->blob + STUB_BLOB_LEAN_RET,
			    .fast = ip->blob + STUB_BLOB_FAST,
			    .lean_end = ip->blob + STUB_BLOB_LEAN_END };
	const uint8_t *b = stub_blob;
	size_t at = STUB_BLOB_ENTRY, end = STUB_BLOB_LEN;
	int pushes = 0, r11 = -1;
	bool plain = true; /* nothing but pushes and mov %rsp, %rdi */
	while (at < end && at < STUB_BLOB_ENTRY + 96) {
		if (b[at] >= 0x50 && b[at] <= 0x57) {
			pushes++;
			at++;
		} else if (b[at] == 0x41 && at + 1 < end && b[at + 1] >= 0x50 &&
			   b[at + 1] <= 0x57) {
			if (b[at + 1] == 0x53)
				r11 = pushes;
			pushes++;
			at += 2;
		} else if (b[at] == 0x48 && at + 2 < end && b[at + 1] == 0x89 &&
			   b[at + 2] == 0xe7) {
			at += 3;
		} else if (b[at] == 0xe8 && at + 5 <= end) {
			c->r0 = ip->blob + at + 5;
			break;
		} else {
			plain = false;
			at++;
		}
	}
	c->entry_lo = ip->blob + STUB_BLOB_ENTRY;
	c->entry_hi = c->r0 ? c->r0 + 64 : c->entry_lo + 96;
	for (size_t i = c->r0 ? c->r0 - ip->blob : end; i < end; i++) {
		if (b[i] == 0xc3) { /* its ret */
			c->entry_hi = ip->blob + i + 1;
			break;
		}
	}
	/* The first register pushed is the highest word of the frame. */
	if (c->r0 && plain && r11 >= 0)
		c->idx_word = 1 + (pushes - 1 - r11);
	c->lo = ip->blob;
	c->hi = ip->blob + STUB_BLOB_LEN;
	for (unsigned i = 0; i < ip->n_patches; i++) {
		const struct inline_patch *pa = &ip->patches[i];
		uint64_t lo = pa->tramp < pa->orig_code ? pa->tramp
							: pa->orig_code;
		uint64_t hi = pa->tramp + TRACER_TRAMP_MAX > pa->orig_code +
					ARCH_RELOC_MAX
				? pa->tramp + TRACER_TRAMP_MAX
				: pa->orig_code + ARCH_RELOC_MAX;
		c->lo = lo < c->lo ? lo : c->lo;
		c->hi = hi > c->hi ? hi : c->hi;
	}
	c->boxed = ip->n_patches;
}

static bool
in_blob(const struct code *c, uint64_t a)
{
	return a >= c->blob && a < c->blob + STUB_BLOB_LEN;
}

/* A trampoline or a relocated prologue (one area per patch). */
static bool
in_tramp(const struct code *c, uint64_t a)
{
	for (unsigned i = 0; i < c->ip->n_patches; i++) {
		uint64_t t = c->ip->patches[i].tramp;
		if (a >= t && a < t + TRACER_TRAMP_MAX)
			return true;
	}
	return false;
}

static bool
in_copy(const struct code *c, uint64_t a)
{
	for (unsigned i = 0; i < c->ip->n_patches; i++) {
		uint64_t o = c->ip->patches[i].orig_code;
		if (a >= o && a < o + ARCH_RELOC_MAX)
			return true;
	}
	return false;
}

static bool
in_code(const struct code *c, uint64_t a)
{
	if ((a < c->lo || a >= c->hi) && c->ip->n_patches == c->boxed)
		return false;
	return in_blob(c, a) || in_tramp(c, a) || in_copy(c, a);
}

/* A pc that goes on to the stub's check of RING_F_PASS, or to the
   original, touching nothing of the ring but its header: a trampoline,
   stub_entry, a relocated prologue. */
static bool
before_the_check(const struct code *c, uint64_t a)
{
	return in_tramp(c, a) || in_copy(c, a) ||
	       (a >= c->entry_lo && a < c->entry_hi);
}

/* Code a thread runs outside any activation, where a signal may
   interrupt it: a trampoline, a relocated prologue (stub_fast jumps to
   it), stub_fast, stub_entry, stub_lean. */
static bool
frameless(const struct code *c, uint64_t a)
{
	return (a >= c->fast && a < c->lean_end) || in_tramp(c, a) ||
	       in_copy(c, a);
}

/* stub_fast or stub_lean: past their look at the header's flags they
   read the ring beyond its first page (the set's counts, the thread
   table), and stub_lean writes its thread's entry. */
static bool
reads_the_ring(const struct code *c, uint64_t a)
{
	return a >= c->fast && a < c->lean_end &&
	       !(a >= c->entry_lo && a < c->entry_hi);
}

/* A return address of the stub's indirect calls (ff /2: of an original,
   of the exit-time frees), after which it only looks at the header
   before it returns. */
static bool
after_indirect_call(const struct code *c, uint64_t a)
{
	if (!in_blob(c, a))
		return false;
	size_t off = (size_t)(a - c->blob);
	for (size_t len = 2; len <= 8 && len <= off; len++) {
		const uint8_t *b = stub_blob + off - len;
		size_t i = b[0] >= 0x40 && b[0] <= 0x4f; /* REX */
		if (i + 2 > len || b[i] != 0xff || ((b[i + 1] >> 3) & 7) != 2)
			continue;
		uint8_t mod = b[i + 1] >> 6, rm = b[i + 1] & 7;
		size_t n = i + 2;
		if (mod != 3 && rm == 4) {
			if (n >= len)
				continue;
			if (mod == 0 && (b[n] & 7) == 5)
				n += 4;
			n++;
		}
		if (mod == 0 && rm == 5)
			n += 4;
		else if (mod == 1)
			n += 1;
		else if (mod == 2)
			n += 4;
		if (n == len)
			return true;
	}
	return false;
}

/* ---- What a thread can still do there ---- */

struct reach {
	bool unknown;     /* its registers or stack could not be read, or
			     it runs on a stack it was not known with (a
			     signal handler on an alternate stack) */
	bool pc_in;       /* its pc is in the inline code */
	bool pc_records;  /* ... past the stub's check: it may write to the
			     ring */
	uint64_t outer;   /* the outermost activation's mark (a stack
			     address), 0: none */
	bool unsafe;      /* inside an activation, a signal frame whose pc
			     resumes past the stub's check */
	bool reenter;     /* outside activations, a signal frame whose pc
			     resumes in code of ours (frameless()) */
	bool reads;       /* ... in stub_fast or stub_lean, which may read
			     the ring past its first page */
	uint64_t pc, sp;
};

/* P's mappings, read at the first need: a thread's stack top comes from
   its thread-table entry, and the mappings are read only for a thread
   that has none. */
struct lazy_maps {
	pid_t pid;
	bool loaded;
	struct maps_snap snap;
};

static const struct maps_range *
lazy_find(struct lazy_maps *lm, uint64_t addr)
{
	if (!lm->loaded) {
		maps_snap_load(lm->pid, &lm->snap);
		lm->loaded = true;
	}
	return maps_snap_find(&lm->snap, addr);
}

static void
lazy_free(struct lazy_maps *lm)
{
	maps_snap_free(&lm->snap);
	lm->loaded = false;
}

/* TC's stack words from SP up to TOP (at most STACK_SCAN_MAX bytes) into
   *WORDS (malloc'd). Returns how many, or -1 when they could not be
   read. */
static ssize_t
read_stack(struct tracee *tc, uint64_t top, uint64_t sp, uint64_t **words)
{
	*words = NULL;
	sp &= ~7ULL;
	if (top <= sp)
		return -1;
	uint64_t len = top - sp;
	if (len > STACK_SCAN_MAX)
		len = STACK_SCAN_MAX;
	*words = ht_xmalloc(len);
	ssize_t n = mem_read(tc->tid, sp, *words, len);
	if (n < 0) {
		free(*words);
		*words = NULL;
		return -1;
	}
	return n / 8;
}

/* The word at W[I] marks an activation: stub_entry's return address,
   with a descriptor index where stub_entry saved r11; or stub_lean's,
   with the index in the word above it. */
static bool
is_mark(const struct code *c, const uint64_t *w, size_t n, size_t i)
{
	if (w[i] == c->lean)
		return i + 1 < n && w[i + 1] < RING_MAX_FNS;
	if (!c->r0 || w[i] != c->r0)
		return false;
	if (c->idx_word < 0)
		return true; /* unknown frame: every copy counts */
	size_t k = i + (size_t)c->idx_word;
	return k < n && w[k] < RING_MAX_FNS;
}

/* W[I] is the rip of a signal frame's saved context (struct sigcontext:
   ..., rsp, rip, eflags, cs|gs|fs|ss, ...), W[] read from BASE to TOP:
   its rsp points higher up this stack, its eflags has the bits always
   set in user mode (bit 1, IF), its code segment is the 64-bit user
   one. Copies of such words in dead frames are rarely all three. */
static bool
saved_context(const uint64_t *w, size_t n, size_t i, uint64_t base,
	      uint64_t top)
{
	return i >= 1 && i + 2 < n && w[i - 1] > base + (uint64_t)i * 8 &&
	       w[i - 1] < top && (w[i + 1] & 0x202) == 0x202 &&
	       (w[i + 2] & 0xffff) == 0x33;
}

/* The thread so placed may still run code of ours. */
static bool
inside(const struct reach *re)
{
	return re->pc_in || re->outer || re->reenter;
}

/* TC waits in vfork, not stopped (detach.c's quiesce does not wait for
   it): its user registers, where the system call will return, from
   /proc (those that matter here: pc, stack pointer, thread pointer). */
static bool
parked_regs(struct tracee *tc, struct user_regs_struct *regs)
{
	if (ptrace(PTRACE_GETREGS, tc->tid, NULL, regs) == 0)
		return true; /* it stopped after all */
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall",
		 (int)tc->proc->pid, (int)tc->tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	long nr;
	unsigned long long a[6], sp, pc;
	if (!ok || sscanf(buf, "%ld %llx %llx %llx %llx %llx %llx %llx %llx",
			  &nr, &a[0], &a[1], &a[2], &a[3], &a[4], &a[5], &sp,
			  &pc) != 9)
		return false; /* "running" */
	*regs = (struct user_regs_struct){ .rip = pc, .rsp = sp };
	return true; /* fs_base 0: not checked against its entry */
}

/* Where thread TC stands with respect to C's code: its stack ends where
   its thread-table entry says, else at the end of its mapping in MAPS
   (read with every thread that may stand there stopped). */
static void
reach_of(const struct code *c, const struct ring_header *h,
	 struct lazy_maps *maps, struct tracee *tc, struct reach *r)
{
	*r = (struct reach){ 0 };
	struct user_regs_struct regs;
	if ((!tc->detach_stopped && !(tc->in_vfork && parked_regs(tc, &regs))) ||
	    (tc->detach_stopped &&
	     ptrace(PTRACE_GETREGS, tc->tid, NULL, &regs) < 0)) {
		/* gone, it reaches nothing; running (it did not stop), it
		   may be anywhere */
		r->unknown = !task_is_zombie(tc->proc->pid, tc->tid);
		return;
	}
	r->pc = regs.rip;
	r->sp = regs.rsp;
	r->pc_in = in_code(c, regs.rip);
	r->pc_records = r->pc_in && !before_the_check(c, regs.rip);
	/* On a stack it was not known with, its own stack (where a signal
	   handler's interrupted frames are) is not the one read here. */
	const struct ring_thread *th =
		regs.fs_base ? ring_thread_lookup((struct ring_header *)h,
						  regs.fs_base)
			     : NULL;
	if (th && (regs.rsp < th->stack_lo || regs.rsp >= th->stack_hi)) {
		r->unknown = true;
		return;
	}
	const struct maps_range *m = th ? NULL : lazy_find(maps, regs.rsp);
	uint64_t *w;
	ssize_t n = th || m ? read_stack(tc, th ? th->stack_hi : m->hi,
					 regs.rsp, &w)
			    : -1;
	if (n < 0) {
		r->unknown = true;
		return;
	}
	uint64_t base = regs.rsp & ~7ULL;
	ssize_t outer = -1;
	for (ssize_t i = 0; i < n; i++)
		if (is_mark(c, w, (size_t)n, (size_t)i))
			outer = i;
	if (outer >= 0)
		r->outer = base + (uint64_t)outer * 8;
	uint64_t top = base + (uint64_t)n * 8;
	for (ssize_t i = 1; i < n; i++) {
		uint64_t a = w[i];
		/* Only a signal frame makes a thread resume at a pc that is
		   not a return address (saved_context()). Other copies of
		   such addresses are stale (dead frames' words). */
		if (!in_code(c, a) ||
		    !saved_context(w, (size_t)n, (size_t)i, base, top))
			continue;
		if (i < outer && !after_indirect_call(c, a) &&
		    !before_the_check(c, a))
			r->unsafe = true; /* resumes inside a record */
		else if (i > outer && frameless(c, a)) {
			/* resumes into the stub (its handler returns there) */
			r->reenter = true;
			r->reads |= reads_the_ring(c, a);
		}
		/* Elsewhere the blob's code (stub_call's) runs inside
		   activations only: stale. */
	}
	free(w);
}

/* TC runs in P's memory: a thread of P, or of a vfork child of P that
   shares OWN, P's ring. */
static bool
runs_here(const struct tracee *tc, const struct tproc *p,
	  const struct inline_proc *own)
{
	return tc->proc && (tc->proc == p || (own && tc->proc->inl == own));
}

/* ---- Draining with every thread held ---- */

/* The original bytes back at every entry still patched as IP left it. */
static void
unpatch(struct tproc *p, pid_t tid, const struct inline_proc *ip)
{
	unsigned restored = 0;
	for (unsigned i = 0; i < ip->n_patches; i++) {
		const struct inline_patch *pa = &ip->patches[i];
		uint8_t want[ARCH_RELOC_MAX_COVERED], now[ARCH_RELOC_MAX_COVERED];
		memset(want, 0xcc, sizeof(want));
		if (arch_encode_patch_jump(pa->addr, pa->tramp, want) ||
		    mem_read(tid, pa->addr, now, pa->covered) !=
			    (ssize_t)pa->covered) {
			ht_debug("process %d: 0x%llx is gone: not restored",
				 (int)p->pid, (unsigned long long)pa->addr);
			continue;
		}
		if (memcmp(now, pa->orig, pa->covered) == 0)
			continue;
		if (memcmp(now, want, pa->covered) != 0) {
			ht_debug("process %d: the code at 0x%llx is not our "
				 "patch any more: left as it is", (int)p->pid,
				 (unsigned long long)pa->addr);
			continue;
		}
		int err = mem_write_code(p, tid, pa->addr, pa->orig,
					 pa->covered);
		if (err)
			ht_warn("detach: process %d: cannot restore the code "
				"at 0x%llx: %s", (int)p->pid,
				(unsigned long long)pa->addr, ht_strerror(err));
		else
			restored++;
	}
	if (restored)
		ht_debug("process %d: %u inline patches taken out",
			 (int)p->pid, restored);
}

/* What a drain's answers put into P's code (a NOTIFY's new library:
   patched, or probed where it cannot be) comes out before any thread
   runs again: a thread let run must meet neither a patch (a way back
   into the stub) nor an int3 (a SIGTRAP with nobody to take it).
   detach.c writes the probes' bytes again after us (P->n_probes
   changed): the same bytes. */
static void
take_out_new(struct tproc *p, pid_t by, unsigned patches, size_t probes)
{
	if (p->inl && p->inl->n_patches != patches)
		unpatch(p, by, p->inl);
	for (size_t i = probes; i < p->n_probes; i++) {
		const struct probe *pr = &p->probes[i];
		int err = mem_write_code(p, by, pr->addr, pr->d.orig,
					 arch_breakpoint_len);
		if (err)
			ht_debug("process %d: the probe at 0x%llx planted while "
				 "detaching stays until detach.c's restore: %s",
				 (int)p->pid, (unsigned long long)pr->addr,
				 ht_strerror(err));
	}
}

/* Drain P's own ring, its code written through BY. A record may make
   the loader probe a library (a NOTIFY in the ring): its threads are
   all held already, as t->holding tells patching (the threads held are
   those stopped here: one that would not stop runs on, ours no more). */
static void
drain(struct tracer *t, struct tproc *p, pid_t by, uint64_t wait_ns)
{
	if (!p->inl)
		return;
	struct stopall s = { .resume_req = t->resume_req };
	size_t pos = 0;
	uint64_t key, val;
	while (u64map_next(&t->tracees, &pos, &key, &val)) {
		struct tracee *tc = (struct tracee *)(uintptr_t)val;
		if (!runs_here(tc, p, p->inl) || !tc->detach_stopped)
			continue;
		ht_xgrow((void **)&s.threads, &s.cap, s.n + 1,
			 sizeof(*s.threads));
		s.threads[s.n++] = (struct stopall_thread){
			.tid = tc->tid, .state = STOPALL_HERE,
		};
	}
	unsigned patches = p->inl->n_patches;
	size_t probes = p->n_probes;
	struct stopall *was = t->holding;
	t->holding = &s;
	inline_drain(t, p, wait_ns);
	t->holding = was;
	free(s.threads); /* never stopall_end: detach.c lets them go */
	take_out_new(p, by, patches, probes);
}

/* ---- The last drain ---- */

/* The record at AT, before HEAD, is committed and whole by its own
   account. */
static bool
committed_at(struct ring_header *h, uint64_t at, uint64_t head)
{
	struct ring_record *rec = ring_record_at(h, at);
	uint32_t len = __atomic_load_n(&rec->commit, __ATOMIC_ACQUIRE);
	return len && len <= head - at &&
	       len == ring_rec_size(rec->copied, rec->stack_len, rec->npcs);
}

/* Past the record at the tail of H's ring that a stub gave up (it saw
   RING_F_PASS while waiting for room: never to be committed), to the
   next one. Only once no thread can write to the ring, since a record
   still being written looks the same at its start. A stub that gives a
   record up writes nothing into it, and the drain zeroes what it
   consumes, so its bytes are all zero; every committed record starts
   with its commit word, never zero. So the next record starts at the
   first nonzero word (records and their sizes are multiples of 8
   bytes), or there is none before the head. Returns the bytes skipped,
   0 when the tail is not at such a record or what follows is no record
   (then the drain stops there, as before). */
static uint64_t
skip_given_up(struct ring_header *h)
{
	uint64_t head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
	uint64_t tail = h->tail, at = tail;
	while (at != head &&
	       *(const uint64_t *)(const void *)ring_record_at(h, at) == 0)
		at += 8;
	if (at == tail || (at != head && !committed_at(h, at, head)))
		return 0;
	ring_publish_tail(h, at); /* the drain starts from the tail */
	return at - tail;
}

/* The last drain of P's ring: every record committed is delivered, and
   nothing is drained after (the ring is left to the stubs' pass-through).
   With no thread that can still write (CAN_WRITE false), records given
   up do not hide those after them. */
static void
last_drain(struct tracer *t, struct tproc *p, pid_t by, bool can_write)
{
	struct inline_proc *ip = p->inl;
	struct ring_header *h = tracer_ring_header(ip->ring);
	uint64_t skipped = 0, n;
	/* A thread that can write may be finishing a record; the others
	   are held or gone. */
	drain(t, p, by, can_write ? RECORD_WAIT_NS : 0);
	while (!can_write && !ip->broken && (n = skip_given_up(h)) != 0) {
		skipped += n;
		drain(t, p, by, 0);
	}
	if (skipped)
		ht_debug("process %d: %llu bytes of records given up skipped "
			 "in the ring", (int)p->pid,
			 (unsigned long long)skipped);
	uint64_t left = tracer_ring_pending(ip->ring);
	if (left && !ip->broken)
		ht_debug("process %d: %llu bytes left in the ring after its "
			 "last drain (a record not committed)", (int)p->pid,
			 (unsigned long long)left);
	ip->broken = true;
}

/* ---- Running threads out of the stub ----

   With the patches out, nothing enters the stub any more: a thread
   inside it only has to run on for a while to leave it (a call of the
   allocator takes microseconds). So those threads, and only those, run
   free for a slice (1 ms, doubling up to 50 ms), are interrupted, and
   looked at again, until none is inside or RUN_OUT_MS have passed. They
   run as they would once detached: nothing of ours can stop them
   (no single step, no breakpoint: were heaptrace killed meanwhile, they
   would just run on), and the threads they create and the processes
   they fork are not followed (their options are cleared first). A thread
   blocked on a lock that a stopped thread holds stays inside: then the
   code stays mapped.

   The stubs go on recording until no thread is past their check of
   RING_F_PASS (in the middle of a record, or about to reserve one), and
   the ring is drained between slices meanwhile: a stub waiting for room
   gets it and commits, one waiting for an answer gets it (the drain's
   answers are inline.c's, as at any drain). A stub that saw the flag
   while waiting for room would give its record up (stub.c,
   wait_for_room), and every record after it would be lost to the
   drain. Should some still write at RUN_OUT_MS, the flag is set all
   the same, and the others get RUN_OUT_MS more to leave. */

static void
keep_signal(struct tracee *tc, int sig)
{
	if (!tc->detach_sig)
		tc->detach_sig = sig; /* handed back at PTRACE_DETACH */
	else if (sig != tc->detach_sig)
		syscall(SYS_tgkill, tc->proc->pid, tc->tid, sig);
}

/* TC's tracing options go: what it does while running free reports
   nothing (a new thread, a fork, an exec). */
static void
quiet(struct tracee *tc)
{
	/* TRACESYSGOOD stays: inject.c needs it for the munmaps to come. */
	ptrace(PTRACE_SETOPTIONS, tc->tid, NULL,
	       (void *)(long)PTRACE_O_TRACESYSGOOD);
}

struct runner {
	struct tracee *tc;
	bool running;   /* resumed, its stop not seen yet */
	bool out;       /* out of the stub (and runs on with the others) */
	bool stuck;     /* staying as it is: not to be resumed */
	bool gone;      /* exited */
	bool interrupted;
};

/* STATUS of R's thread, reaped while it runs free. */
static void
runner_status(struct runner *r, int status)
{
	struct tracee *tc = r->tc;
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		r->running = false;
		r->gone = true; /* reaches nothing */
		tc->detach_stopped = false;
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	int event = status >> 16, sig = WSTOPSIG(status);
	if (status_is_group_stop(status)) {
		r->running = false;
		r->stuck = true; /* stays stopped, as the process is */
		tc->detach_injectable = false;
		return;
	}
	if (event == PTRACE_EVENT_STOP && r->interrupted) {
		r->running = false;
		return;
	}
	if (event == 0 && !r->interrupted) {
		/* a signal: delivered, as it would be */
		ptrace(PTRACE_CONT, tc->tid, NULL, (void *)(uintptr_t)sig);
		return;
	}
	if (event == 0)
		keep_signal(tc, sig);
	/* a late interrupt, an event, a signal while we stop it: on */
	ptrace(PTRACE_CONT, tc->tid, NULL, NULL);
}

/* Reap what RS's threads report until none of them runs, or DEADLINE. */
static void
reap(struct runner *rs, size_t n, const sigset_t *chld, uint64_t deadline)
{
	for (;;) {
		size_t running = 0;
		for (size_t i = 0; i < n; i++) {
			struct runner *r = &rs[i];
			if (!r->running)
				continue;
			int status;
			pid_t got = waitpid(r->tc->tid, &status, __WALL | WNOHANG);
			if (got == r->tc->tid)
				runner_status(r, status);
			else if (got < 0 && errno == ECHILD)
				runner_status(r, 0); /* gone: "exited" */
			running += r->running;
		}
		if (!running || ht_monotonic_ms() >= deadline)
			return;
		struct timespec ts = { .tv_nsec = 1000000L };
		sigtimedwait(chld, NULL, &ts);
	}
}

/* From now on the stubs pass every call through. */
static void
set_pass(struct ring_header *h)
{
	__atomic_fetch_or(&h->flags, RING_F_PASS, __ATOMIC_SEQ_CST);
}

static bool
passing(const struct ring_header *h)
{
	return __atomic_load_n(&h->flags, __ATOMIC_SEQ_CST) & RING_F_PASS;
}

/* A thread so placed may still reserve or commit a record. */
static bool
writes(const struct reach *re)
{
	return re->pc_records || re->unsafe;
}

/* What of the inline code and ring thread TC, standing at RE, may still
   reach once everything else is done: into *KEEP_RING, *KEEP_CODE. */
static void
note_reach(const struct tracee *tc, const struct reach *re, bool *keep_ring,
	   bool *keep_code)
{
	if (re->unknown || writes(re) || re->reads)
		*keep_ring = true;
	if (!re->unknown && !inside(re))
		return;
	*keep_code = true;
	ht_debug("thread %d: pc 0x%llx sp 0x%llx may still come back through "
		 "the stub%s%s%s%s", (int)tc->tid, (unsigned long long)re->pc,
		 (unsigned long long)re->sp,
		 re->unknown ? " (its stack is not known)" : "",
		 re->outer ? " (inside the allocator)" : "",
		 re->reenter ? " (a signal handler returns into it)" : "",
		 writes(re) ? " (may still write a record)" : "");
}

/* The threads of P to run out of the stub, into *RS (malloc'd; *N of
   them), their tracing options cleared. Returns how many of them write
   (writes()). The others stay as they are, held, until the end: what
   they can reach goes into *KEEP_RING and *KEEP_CODE now, and their tids
   into SETTLED, so that they are not looked at again (two looks at a
   thousand threads' stacks were a third of a detach's pause). */
static size_t
runners_of(struct tracer *t, struct tproc *p, const struct inline_proc *own,
	   const struct code *c, const struct ring_header *h,
	   struct runner **rs, size_t *n, struct u64map *settled,
	   bool *keep_ring, bool *keep_code)
{
	size_t cap = 0, writing = 0;
	size_t pos = 0;
	uint64_t key, val;
	*rs = NULL;
	*n = 0;
	struct lazy_maps maps = { .pid = p->pid };
	while (u64map_next(&t->tracees, &pos, &key, &val)) {
		struct tracee *tc = (struct tracee *)(uintptr_t)val;
		if (!runs_here(tc, p, own) || !tc->detach_stopped)
			continue;
		struct reach re;
		reach_of(c, h, &maps, tc, &re);
		/* A thread at a group-stop (not ours to run) or a zombie
		   stays as it is; so do unknown stacks. */
		if (re.unknown || !inside(&re) || !tc->detach_injectable) {
			note_reach(tc, &re, keep_ring, keep_code);
			u64map_put(settled, (uint64_t)tc->tid, 1);
			continue;
		}
		if (re.reenter)
			ht_debug("thread %d: a signal handler on its stack "
				 "returns into the inline stub", (int)tc->tid);
		ht_xgrow((void **)rs, &cap, *n + 1, sizeof(**rs));
		(*rs)[(*n)++] = (struct runner){ .tc = tc };
		writing += writes(&re);
		quiet(tc);
	}
	lazy_free(&maps);
	return writing;
}

/* One round: RS's threads (but those stuck or gone) run free for SLICE
   ms and are interrupted. One that would not stop runs on, stuck. */
static void
run_slice(struct runner *rs, size_t n, pid_t pid, const sigset_t *chld,
	  unsigned slice)
{
	for (size_t i = 0; i < n; i++) {
		/* Those already out run too: one may have taken a lock in
		   the allocator (natively: the patches are out) that
		   another waits for. */
		struct runner *r = &rs[i];
		if (r->stuck || r->gone)
			continue;
		r->interrupted = false;
		r->running = ptrace(PTRACE_CONT, r->tc->tid, NULL, NULL) == 0;
		if (!r->running) {
			r->gone = task_is_zombie(pid, r->tc->tid);
			r->stuck = !r->gone;
		}
	}
	reap(rs, n, chld, ht_monotonic_ms() + slice);
	for (size_t i = 0; i < n; i++) {
		struct runner *r = &rs[i];
		if (!r->running)
			continue;
		r->interrupted = true;
		if (ptrace(PTRACE_INTERRUPT, r->tc->tid, NULL, NULL) < 0)
			r->running = false;
	}
	/* An interrupt is taken at once, but by a thread in an
	   uninterruptible sleep. */
	reap(rs, n, chld, ht_monotonic_ms() + 1000);
	for (size_t i = 0; i < n; i++) {
		struct runner *r = &rs[i];
		if (r->running) {
			/* it would not stop: it runs on, ours no more to
			   look at */
			r->tc->detach_stopped = false;
			r->running = false;
			r->stuck = true;
		}
	}
}

/* Look at RS's threads again: *LEFT gets how many are still inside;
   returns how many of those write. While the stubs record, those out
   are looked at too: a signal frame may have brought one back in. */
static size_t
look(const struct code *c, const struct ring_header *h, pid_t pid,
     struct runner *rs, size_t n, size_t *left)
{
	bool recording = !passing(h);
	size_t writing = 0;
	*left = 0;
	struct lazy_maps maps = { .pid = pid };
	for (size_t i = 0; i < n; i++) {
		struct runner *r = &rs[i];
		if (r->stuck || r->gone || (r->out && !recording))
			continue;
		struct reach re;
		reach_of(c, h, &maps, r->tc, &re);
		if (r->out && (re.unknown || !inside(&re)))
			continue;
		r->out = false;
		if (re.unknown)
			r->stuck = true;
		else if (!inside(&re))
			r->out = true; /* for good once passing: no way in */
		else {
			(*left)++;
			writing += writes(&re);
		}
	}
	lazy_free(&maps);
	return writing;
}

/* Let the threads inside the stub run out of it, draining OWN's ring
   (P's, NULL: not ours to drain) between slices, its code written
   through BY; RING_F_PASS set on the way (see above). */
static void
run_out(struct tracer *t, struct tproc *p, const struct inline_proc *own,
	const struct code *c, struct ring_header *h, pid_t by,
	struct u64map *settled, bool *keep_ring, bool *keep_code)
{
	struct runner *rs;
	size_t n;
	size_t writing = runners_of(t, p, own, c, h, &rs, &n, settled,
				    keep_ring, keep_code);
	if (!writing)
		set_pass(h); /* nothing in flight: before anything runs */
	if (!n)
		return;
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	uint64_t t0 = ht_monotonic_ms(), deadline = t0 + RUN_OUT_MS, pass_ms = 0;
	unsigned slice = 1, rounds = 0;
	for (size_t left = n; left && ht_monotonic_ms() < deadline; rounds++) {
		bool recording = !passing(h);
		run_slice(rs, n, p->pid, &chld, slice);
		if (own)
			drain(t, p, by, 0); /* all held: no record to wait for */
		writing = look(c, h, p->pid, rs, n, &left);
		if (recording && (!writing || ht_monotonic_ms() >= deadline)) {
			set_pass(h);
			pass_ms = ht_monotonic_ms() - t0;
			deadline = ht_monotonic_ms() + RUN_OUT_MS;
			if (writing)
				ht_debug("process %d: %zu threads still inside "
					 "a record after %llu ms: the stubs pass "
					 "all the same", (int)p->pid, writing,
					 (unsigned long long)pass_ms);
		}
		slice = slice * 2 > 50 ? 50 : slice * 2;
	}
	if (!passing(h)) {
		set_pass(h); /* none left inside, the last look told */
		pass_ms = ht_monotonic_ms() - t0;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	size_t out = 0;
	for (size_t i = 0; i < n; i++) {
		out += rs[i].out || rs[i].gone;
		if (!rs[i].out && !rs[i].gone)
			ht_debug("thread %d: still inside the inline stub",
				 (int)rs[i].tc->tid);
	}
	if (pass_ms)
		ht_debug("process %d: the stubs recorded for %llu ms more, "
			 "until no thread was in the middle of a record",
			 (int)p->pid, (unsigned long long)pass_ms);
	ht_debug("process %d: %zu of %zu threads ran out of the inline stub "
		 "in %u rounds, %llu ms", (int)p->pid, out, n, rounds,
		 (unsigned long long)(ht_monotonic_ms() - t0));
	free(rs);
}

/* ---- Code and mappings ---- */

static int
unmap(struct tproc *p, pid_t tid, uint64_t addr, uint64_t len)
{
	uint64_t args[6] = { addr, len }, ret;
	int err = inject_syscall(p, tid, SYS_munmap, args, &ret);
	if (!err && ret)
		err = (int)(int64_t)ret;
	if (err == -ESRCH)
		ht_debug("process %d: exited: nothing to unmap", (int)p->pid);
	else if (err)
		ht_warn("detach: process %d: cannot unmap heaptrace's ring at "
			"0x%llx: %s", (int)p->pid, (unsigned long long)addr,
			ht_strerror(err));
	return err;
}

/* Some thread still runs in P's memory (it may have exited while its
   threads ran out of the stub). */
static bool
alive(struct tracer *t, const struct tproc *p, const struct inline_proc *own)
{
	size_t pos = 0;
	uint64_t key, val;
	while (u64map_next(&t->tracees, &pos, &key, &val)) {
		struct tracee *tc = (struct tracee *)(uintptr_t)val;
		if (runs_here(tc, p, own) &&
		    !task_is_zombie(tc->proc->pid, tc->tid))
			return true;
	}
	return false;
}

/* The inline state whose code and ring P's memory holds, and whether it
   is P's own: P's ring; or its parent's, P being a fork child held at its
   first stop since before it got its own (the detach came first; it ran
   nothing). NULL when P's memory is another process's (a vfork child:
   its owner does the work) or holds nothing of ours. *CHILD gets that
   child's thread. */
static struct inline_proc *
state_of(struct tracer *t, struct tproc *p, struct tracee **child)
{
	*child = NULL;
	if (p->inl)
		return p->inl->owner == p || !p->inl->owner ? p->inl : NULL;
	size_t pos = 0;
	uint64_t key, val;
	while (u64map_next(&t->tracees, &pos, &key, &val)) {
		struct tracee *tc = (struct tracee *)(uintptr_t)val;
		if (tc->proc != p || !tc->ring_parent)
			continue;
		/* the parent is still one of ours (not freed at its exit) */
		size_t pp = 0;
		uint64_t k2, v2;
		while (u64map_next(&t->procs, &pp, &k2, &v2)) {
			struct tproc *q = (struct tproc *)(uintptr_t)v2;
			if (q == tc->ring_parent && q->inl) {
				*child = tc;
				return q->inl;
			}
		}
	}
	return NULL;
}

void
inline_detach(struct tracer *t, struct tproc *p, pid_t tid)
{
	struct tracee *child;
	struct inline_proc *ip = state_of(t, p, &child);
	if (!ip) {
		/* A vfork child: its memory is its parent's, whose detach
		   decides what is unmapped there. */
		if (p->inl)
			p->n_scratch = 0;
		return;
	}
	bool own = ip == p->inl;
	if (child)
		ht_debug("process %d: forked before it got a ring of its own: "
			 "its parent's inline code taken out", (int)p->pid);
	struct ring_header *h = tracer_ring_header(ip->ring);
	if (child && !tid && !child->detach_injectable) {
		/* at its first stop, past its fork's exit: injectable */
		child->detach_injectable = true;
		tid = child->tid;
	}
	pid_t by = tid ? tid : child ? child->tid : p->pid;
	if (own)
		drain(t, p, by, RECORD_WAIT_NS);
	else
		set_pass(h); /* the parent's ring: the child writes nothing
				to it (it ran nothing of ours) */

	/* No thread can enter the stub from now on; those inside it leave
	   it, and the stubs pass from then on. */
	unpatch(p, by, ip);
	struct code c;
	code_init(&c, ip);
	bool keep_ring = !c.r0, keep_code = !c.r0;
	struct u64map settled; /* threads held all along, looked at once */
	u64map_init(&settled);
	run_out(t, p, own ? ip : NULL, &c, h, by, &settled, &keep_ring,
		&keep_code);
	set_pass(h); /* when nothing had to run out */
	if (!alive(t, p, own ? ip : NULL)) {
		ht_debug("process %d: exited while detaching", (int)p->pid);
		u64map_fini(&settled);
		if (own)
			last_drain(t, p, by, false);
		p->n_scratch = 0;
		return;
	}

	/* What the threads that ran (or could not be looked at) can still
	   reach, now. */
	struct lazy_maps maps = { .pid = p->pid };
	size_t pos = 0;
	uint64_t key, val;
	while (u64map_next(&t->tracees, &pos, &key, &val)) {
		struct tracee *tc = (struct tracee *)(uintptr_t)val;
		if (!runs_here(tc, p, own ? ip : NULL) ||
		    u64map_get(&settled, (uint64_t)tc->tid))
			continue;
		struct reach re;
		reach_of(&c, h, &maps, tc, &re);
		note_reach(tc, &re, &keep_ring, &keep_code);
	}
	lazy_free(&maps);
	u64map_fini(&settled);
	/* The ring stays whole exactly while a thread may write to it. */
	if (own)
		last_drain(t, p, by, keep_ring);

	struct tracer_ring_layout l;
	tracer_ring_layout(ip->ring, &l);
	if (!tid) {
		ht_debug("process %d: no thread to unmap from: the inline "
			 "stub and ring stay mapped, passing calls through",
			 (int)p->pid);
		keep_ring = keep_code = true;
	}
	if (!keep_code) {
		/* one system call for the whole ring */
		unmap(p, tid, ip->ring_addr, l.map_len);
		ht_debug("process %d: inline stub and ring unmapped",
			 (int)p->pid);
		return;
	}
	if (!keep_ring &&
	    unmap(p, tid, ip->ring_addr + RING_PAGE, l.map_len - RING_PAGE) == 0 &&
	    own) {
		/* The target keeps the header page, and with it the memfd:
		   the rest of its memory is not needed (but the thread
		   table, which --stats reads at the profile's end). */
		uint64_t from = h->rule_off;
		if (from < l.file_len &&
		    fallocate(tracer_ring_fd(ip->ring),
			      FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      (off_t)from, (off_t)(l.file_len - from)) < 0)
			ht_debug("process %d: ring memory not released: %s",
				 (int)p->pid, strerror(errno));
	}
	/* The stub stays, passing calls through: so do the scratch pages
	   it is in (detach.c unmaps only what P->scratch lists). */
	ht_debug("process %d: the inline stub page%s left mapped as a "
		 "pass-through (%zu scratch pages)", (int)p->pid,
		 keep_ring ? " and the whole ring" : " and the ring's first "
						      "page",
		 p->n_scratch);
	p->n_scratch = 0;
}

/* ---- A process's end ---- */

/* A vfork child of IP's process still runs in its memory, and may write
   to its ring. */
static bool
vfork_child_in(const struct inline_proc *ip)
{
	for (size_t i = 0; i < ip->n_vforks; i++)
		if (ip->vforks[i].proc)
			return true;
	return false;
}

/* Past the record at the tail of H's ring that a thread was killed
   writing (its commit word still 0, its header written), once no thread
   can write: its size follows from its header, and what follows it must
   be the head, a committed record or a record never written (zeroes).
   Returns the bytes skipped, 0 when the tail is no such record. */
static uint64_t
skip_killed(struct ring_header *h)
{
	uint64_t head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
	uint64_t tail = h->tail;
	if (tail == head)
		return 0;
	const struct ring_record *rec = ring_record_at(h, tail);
	if (rec->commit || rec->kind < RING_REC_ALLOC ||
	    rec->kind > RING_REC_RULE || rec->copied >= RING_COPY_N)
		return 0;
	uint64_t len = ring_rec_size(rec->copied, rec->stack_len, rec->npcs);
	uint64_t next = tail + len;
	if (len > head - tail ||
	    (next != head && !committed_at(h, next, head) &&
	     *(const uint64_t *)(const void *)ring_record_at(h, next) != 0))
		return 0;
	ring_zero(h, tail, (uint32_t)len); /* as the drain leaves it */
	ring_publish_tail(h, next);
	return len;
}

void
inline_drain_final(struct tracer *t, struct tproc *p)
{
	struct inline_proc *ip = p->inl;
	if (!ip || ip->broken)
		return;
	bool can_write = vfork_child_in(ip);
	inline_drain(t, p, can_write ? RECORD_WAIT_NS : 0);
	/* A thread killed while it waited for room (the ring full: the
	   process died in a burst of calls), or while it wrote a record,
	   left one never to be committed; the drain would stop there, and
	   every record after it be lost. With no thread left to write,
	   it is skipped: zeroes (skip_given_up), or a header that says how
	   long it is (skip_killed). */
	struct ring_header *h = tracer_ring_header(ip->ring);
	uint64_t skipped = 0, n;
	while (!can_write && !ip->broken &&
	       ((n = skip_given_up(h)) != 0 || (n = skip_killed(h)) != 0)) {
		skipped += n;
		inline_drain(t, p, 0);
	}
	if (skipped)
		ht_debug("process %d: %llu bytes of records its dead threads "
			 "never wrote skipped in the ring", (int)p->pid,
			 (unsigned long long)skipped);
	uint64_t left = tracer_ring_pending(ip->ring);
	if (left && !ip->broken)
		ht_warn("process %d: %llu bytes of records lost in the ring at "
			"its end (a record a thread was killed writing)",
			(int)p->pid, (unsigned long long)left);
}
