/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The tracer's side of the inline ring: the memfd and its double mapping,
   the descriptors and thread table the stubs read, and the in-order drain
   that turns records into events. */
#include "tracer/inline/consumer.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "common/monotonic.h"
#include "common/xalloc.h"
#include "tracer/inline/sample.h"
#include "tracer/inline/tsc.h"

struct tracer_ring {
	struct ring_header *h; /* at the start of the mapping */
	int fd;
	uint64_t map_len;
	uint64_t file_len;
	uint32_t rule_count;   /* entries in the rule table */
	uint32_t *rule_slots;  /* their indexes, for tracer_ring_rules_reset */
	size_t rule_slots_cap;
	uint32_t thread_segs_max; /* thread-table segments laid out */
	uint32_t thread_used[RING_THREAD_SEGS_MAX]; /* per segment: entries
				  not empty (live, or tombstones) */
	bool stamped;          /* RING_F_TSC is set */
	struct tsc_clock clock;
	uint64_t last_ns;      /* the time of the last record delivered */
	uint64_t sample_seed;  /* --sampling-seed */
	uint32_t sample_proc;  /* the process's ordinal among those profiled */
	uint32_t sample_threads; /* thread entries made so far: the next
				    one's ordinal */
	struct tracer_ring_stats st;
};

/* Spins on an uncommitted record before the first sleep: a producer
   between reserve and commit normally finishes within a few hundred ns. */
#define COMMIT_SPINS 2000
#define COMMIT_SLEEP_NS 20000
/* Bytes ahead of the tail fetched early: a few records. */
#define PREFETCH_AHEAD 512
/* Room in the ring's file for the largest sampled-address set
   (sample.h): 2 MiB, memory only where keys were written; the set used
   is sized by the interval (tracer_ring_sampling_set). */
#define SAMPLE_SET_SHIFT RING_SET_SHIFT_MIN

static bool
is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

/* ---- The consumer's liveness (ring.h, "The stub never stops for the
   tracer") ----

   Every ring's CONSUMER word holds our tid and is linked into this
   thread's robust futex list, so that the kernel marks it
   RING_CONSUMER_DIED when we die, however we die: the stubs then pass
   every call through, and nothing in the target waits for us. The list's
   futex offset is one for all its entries, so each entry is the ring's
   own CONSUMER_NODE, at a fixed distance from its CONSUMER. heaptrace
   uses no robust mutex of its own, so the list replaces glibc's (the
   rings are made and freed by the tracer's one thread). */
static struct robust_list_head consumers = {
	.list = { .next = &consumers.list },
	.futex_offset = (long)offsetof(struct ring_header, consumer) -
			(long)offsetof(struct ring_header, consumer_node),
};
static bool consumers_registered;

static void
consumer_link(struct ring_header *h)
{
	struct robust_list *node = (struct robust_list *)&h->consumer_node;
	if (!consumers_registered &&
	    syscall(SYS_set_robust_list, &consumers, sizeof(consumers)) == 0)
		consumers_registered = true;
	__atomic_store_n(&h->consumer, (uint32_t)syscall(SYS_gettid) &
					       RING_CONSUMER_TID,
			 __ATOMIC_RELEASE);
	node->next = consumers.list.next;
	consumers.list.next = node;
}

/* Gone for the stubs: they pass every call through from now on. */
static void
consumer_unlink(struct ring_header *h)
{
	struct robust_list *node = (struct robust_list *)&h->consumer_node;
	for (struct robust_list **at = &consumers.list.next;
	     *at != &consumers.list; at = &(*at)->next) {
		if (*at == node) {
			*at = node->next;
			break;
		}
	}
	__atomic_store_n(&h->consumer, RING_CONSUMER_DIED, __ATOMIC_RELEASE);
}

static void
futex_wake_all(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Hand the bytes before TAIL back to the producers, waking those that
   wait for room. */
static void
publish_tail(struct ring_header *h, uint64_t tail)
{
	ring_publish_tail(h, tail);
	/* Pairs with the stub's count of sleepers before its last look at
	   the tail (stub.c, wait_for_room). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&h->sleepers, __ATOMIC_RELAXED)) {
		__atomic_add_fetch(&h->drained, 1, __ATOMIC_RELEASE);
		futex_wake_all(&h->drained);
	}
}

static int
map_ring(struct tracer_ring *r, uint64_t data_off, uint64_t size)
{
	int anon = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
	uint8_t *base = mmap(NULL, r->map_len, PROT_NONE, anon, -1, 0);
	if (base == MAP_FAILED)
		return -errno;
	/* The data area twice, back to back, after the header: a record
	   that runs past the end continues at the start. Populated by the
	   target's mapping, which allocates the pages (so that its stubs do
	   not take the first lap's faults); here they are only faulted in as
	   records reach them, so that a quiet target does not cost the whole
	   ring in the tracer's RSS. */
	int flags = MAP_SHARED | MAP_FIXED;
	if (mmap(base, r->file_len, PROT_READ | PROT_WRITE, flags, r->fd,
		 0) == MAP_FAILED ||
	    mmap(base + r->file_len, size, PROT_READ | PROT_WRITE, flags,
		 r->fd, (off_t)data_off) == MAP_FAILED) {
		int err = -errno;
		munmap(base, r->map_len);
		return err;
	}
	r->h = (struct ring_header *)base;
	return 0;
}

/* Thread-table segments to lay out, the first of THREAD_CAP entries, so
   that THREAD_MAX threads fit with every segment at most half full; 0
   when that takes more than RING_THREAD_SEGS_MAX, or entries a 32-bit
   index cannot count. */
static uint32_t
thread_segs_for(uint32_t thread_cap, uint32_t thread_max)
{
	uint64_t room = 0;
	for (uint32_t segs = 1; segs <= RING_THREAD_SEGS_MAX; segs++) {
		uint64_t cap = (uint64_t)thread_cap << (segs - 1);
		if (cap > (1ULL << 31))
			return 0;
		room += cap / 2;
		if (room >= thread_max)
			return segs;
	}
	return 0;
}

int
tracer_ring_new(uint64_t size, uint32_t thread_cap, uint32_t thread_max,
		uint32_t rule_cap, uint32_t stack_copy,
		struct tracer_ring **out)
{
	int fd = memfd_create("heaptrace-ring", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	return tracer_ring_new_on(fd, size, thread_cap, thread_max, rule_cap,
				  stack_copy, out);
}

/* The sampled-address set of H: 2^(64 - SHIFT) buckets at its set_off. */
static void
set_size(struct ring_header *h, uint32_t shift)
{
	h->set_shift = shift;
	h->set_homed_off = h->set_off + ((uint64_t)sizeof(struct sample_bucket)
					 << (64 - shift));
}

int
tracer_ring_new_on(int fd, uint64_t size, uint32_t thread_cap,
		   uint32_t thread_max, uint32_t rule_cap, uint32_t stack_copy,
		   struct tracer_ring **out)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint32_t segs = thread_segs_for(thread_cap, thread_max);
	if (!is_pow2(size) || size < page || size > (1ULL << 40) ||
	    !is_pow2(thread_cap) || thread_cap < 8 || thread_cap > (1u << 20) ||
	    !segs ||
	    !is_pow2(rule_cap) || rule_cap < 8 || rule_cap > (1u << 24) ||
	    stack_copy > size / 4 || stack_copy > RING_MAX_STACK_COPY) {
		close(fd);
		return -EINVAL;
	}
	/* Every segment has its place; none of it is memory until a
	   thread's entry is written there. */
	uint64_t rule_off = RING_HDR_FIXED +
			    (uint64_t)thread_cap * ((1ULL << segs) - 1) *
				    sizeof(struct ring_thread);
	uint64_t set_off = rule_off +
			   (uint64_t)rule_cap * sizeof(struct ring_rule);
	set_off = (set_off + page - 1) & ~(page - 1);
	uint64_t memo_off = set_off + sample_set_bytes(SAMPLE_SET_SHIFT);
	memo_off = (memo_off + page - 1) & ~(page - 1);
	/* A memo for each entry of the first segment (few threads walk at
	   once; those of later entries walk every frame): memory only where
	   a thread's walks wrote. */
	uint32_t memo_slots = thread_cap < RING_MEMO_SLOTS_MAX
				      ? thread_cap
				      : RING_MEMO_SLOTS_MAX;
	uint64_t data_off = memo_off +
			    (uint64_t)memo_slots * sizeof(struct ring_memo);
	data_off = (data_off + page - 1) & ~(page - 1);

	struct tracer_ring *r = ht_xcalloc(1, sizeof(*r));
	r->thread_segs_max = segs;
	r->file_len = data_off + size;
	r->map_len = r->file_len + size;
	r->fd = fd;
	int err = 0;
	if (ftruncate(r->fd, (off_t)r->file_len) < 0)
		err = -errno;
	if (!err)
		err = map_ring(r, data_off, size);
	if (err) {
		close(r->fd);
		free(r);
		return err;
	}

	struct ring_header *h = r->h;
	h->version = RING_VERSION;
	h->size = size;
	h->data_off = data_off;
	h->stack_copy = stack_copy;
	h->thread_cap = thread_cap;
	h->thread_shift = 64 - (uint32_t)__builtin_ctz(thread_cap);
	h->thread_segs = 1;
	h->rule_off = rule_off;
	h->rule_cap = rule_cap;
	h->rule_shift = 64 - (uint32_t)__builtin_ctz(rule_cap);
	h->set_off = set_off;
	set_size(h, SAMPLE_SET_SHIFT);
	h->memo_off = memo_off;
	h->memo_slots = memo_slots;
	h->walk_memo = RING_MEMO_ON;
	consumer_link(h);
	__atomic_store_n(&h->magic, RING_MAGIC, __ATOMIC_RELEASE);
	*out = r;
	return 0;
}

void
tracer_ring_free(struct tracer_ring *r)
{
	if (!r)
		return;
	consumer_unlink(r->h);
	futex_wake_all(&r->h->drained);
	futex_wake_all(&r->h->notify_ack);
	munmap(r->h, r->map_len);
	close(r->fd);
	free(r->rule_slots);
	free(r);
}

int
tracer_ring_fd(const struct tracer_ring *r)
{
	return r->fd;
}

void
tracer_ring_layout(const struct tracer_ring *r, struct tracer_ring_layout *out)
{
	*out = (struct tracer_ring_layout){
		.map_len = r->map_len,
		.file_len = r->file_len,
		.data_off = r->h->data_off,
		.size = r->h->size,
	};
}

struct ring_header *
tracer_ring_header(struct tracer_ring *r)
{
	return r->h;
}

enum ring_class
tracer_ring_fn_class(enum ht_alloc_fn fn)
{
	switch (fn) {
	case HT_FN_FREE:
	case HT_FN_DELETE:
	case HT_FN_DELETE_ARRAY:
	case HT_FN_PYARENA_FREE:
		return RING_CLASS_FREE;
	case HT_FN_REALLOC:
	case HT_FN_REALLOCARRAY:
		return RING_CLASS_REALLOC;
	case HT_FN_POSIX_MEMALIGN:
		return RING_CLASS_POSIX_MEMALIGN;
	default:
		return RING_CLASS_ALLOC;
	}
}

/* Which of FN's arguments hold the size it asks for: *MUL is the one
   multiplied into it (RING_NO_ARG: none). */
static void
fn_size_args(enum ht_alloc_fn fn, uint8_t *arg, uint8_t *mul)
{
	*mul = RING_NO_ARG;
	switch (fn) {
	case HT_FN_CALLOC:
		*arg = 0;
		*mul = 1;
		return;
	case HT_FN_REALLOCARRAY:
		*arg = 1;
		*mul = 2;
		return;
	case HT_FN_REALLOC:
	case HT_FN_MEMALIGN:
	case HT_FN_ALIGNED_ALLOC:
	case HT_FN_PYARENA_ALLOC:
		*arg = 1;
		return;
	case HT_FN_POSIX_MEMALIGN:
		*arg = 2;
		return;
	default: /* malloc, valloc, pvalloc, operator new (size first) */
		*arg = 0;
		return;
	}
}

int
tracer_ring_fn_set(struct tracer_ring *r, unsigned idx, enum ht_alloc_fn fn,
		   uint64_t entry, uint64_t orig, uint64_t lo, uint64_t hi)
{
	if (idx >= RING_MAX_FNS || (unsigned)fn >= HT_FN_COUNT)
		return -EINVAL;
	uint8_t arg, mul;
	fn_size_args(fn, &arg, &mul);
	r->h->fns[idx] = (struct ring_fn){
		.orig = orig,
		.entry = entry,
		.obj_lo = lo,
		.obj_hi = hi,
		.fn = (uint16_t)fn,
		.cls = (uint16_t)tracer_ring_fn_class(fn),
		.size_arg = arg,
		.size_mul = mul,
		.ptr_arg = (uint8_t)ht_alloc_fn_ptr_arg(fn),
		/* A few arenas a run: each recorded, never sampled. */
		.sample_interval = fn == HT_FN_PYARENA_ALLOC ||
					   fn == HT_FN_PYARENA_FREE
					   ? 0
					   : r->h->sample_interval,
		.set_homed_off = r->h->set_homed_off,
		.set_home_mask = sample_set_mask(r->h->set_shift),
	};
	return 0;
}

int
tracer_ring_sampling_set(struct tracer_ring *r, uint64_t interval,
			 uint64_t seed, uint32_t proc)
{
	if (interval > SAMPLE_INTERVAL_MAX)
		return -EINVAL;
	r->sample_seed = seed;
	r->sample_proc = proc;
	r->h->sample_interval = interval;
	set_size(r->h, sample_set_shift_for(interval));
	return 0;
}

struct sample_bucket *
tracer_ring_sample_set(struct tracer_ring *r, uint32_t *shift)
{
	*shift = r->h->set_shift;
	return (struct sample_bucket *)((uint8_t *)r->h + r->h->set_off);
}

/* Insert every key of the set S (2^(64 - SS) buckets) into D (2^(64 -
   DS)), D empty, the sets of different sizes; FLAGS gets RING_F_SET_FULL if one has
   no room. */
static void
set_copy_keys(struct sample_bucket *d, uint32_t ds,
	      const struct sample_bucket *s, uint32_t ss, uint32_t *flags)
{
	uint64_t n = 1ULL << (64 - ss);
	for (uint64_t i = 0; i < n; i++)
		for (unsigned w = 0; w < SAMPLE_SET_WAYS; w++)
			if (s[i].key[w] &&
			    sample_set_insert(d, ds, s[i].key[w]) < 0)
				__atomic_fetch_or(flags, RING_F_SET_FULL,
						  __ATOMIC_RELAXED);
}

/* Copy the set S into D, both of 2^(64 - SHIFT) buckets, D empty. */
static void
set_copy_same(struct sample_bucket *d, struct sample_bucket *s,
	      uint32_t shift)
{
	/* Bucket by bucket, the empty ones left alone: they are holes in
	   the child's file, and writing zeroes would make them memory. */
	uint64_t n = 1ULL << (64 - shift);
	for (uint64_t i = 0; i < n; i++) {
		const uint64_t *w = (const uint64_t *)&s[i];
		for (unsigned j = 0; j < 8; j++) {
			if (w[j]) {
				d[i] = s[i];
				break;
			}
		}
	}
	memcpy(sample_set_homed(d, shift),
	       sample_set_homed(s, shift), n);
}

void
tracer_ring_sample_set_copy(struct tracer_ring *dst, struct tracer_ring *src)
{
	uint32_t ds, ss;
	struct sample_bucket *d = tracer_ring_sample_set(dst, &ds);
	struct sample_bucket *s = tracer_ring_sample_set(src, &ss);
	if (ds != ss)
		set_copy_keys(d, ds, s, ss, &dst->h->flags);
	else
		set_copy_same(d, s, ss);
	__atomic_fetch_or(&dst->h->flags,
			  __atomic_load_n(&src->h->flags, __ATOMIC_RELAXED) &
				  RING_F_SET_FULL,
			  __ATOMIC_RELAXED);
}

int
tracer_ring_hook_set(struct tracer_ring *r, unsigned idx, enum ring_class cls,
		     unsigned fn, uint64_t entry, uint64_t orig, uint64_t lo,
		     uint64_t hi)
{
	bool page = cls == RING_CLASS_PAGE || cls == RING_CLASS_PAGE_ENTRY;
	if (idx >= RING_MAX_FNS || (page && fn >= RING_PAGE_N) ||
	    (!page && cls != RING_CLASS_NOTIFY && cls != RING_CLASS_EXIT))
		return -EINVAL;
	r->h->fns[idx] = (struct ring_fn){
		.orig = orig,
		.entry = entry,
		.obj_lo = lo,
		.obj_hi = hi,
		.fn = (uint16_t)(page ? fn : 0),
		.cls = (uint16_t)cls,
	};
	return 0;
}

void
tracer_ring_freeres_set(struct tracer_ring *r, uint64_t cxx, uint64_t libc)
{
	__atomic_store_n(&r->h->freeres[0], cxx, __ATOMIC_RELAXED);
	__atomic_store_n(&r->h->freeres[1], libc, __ATOMIC_RELAXED);
}

void
tracer_ring_notify_ack(struct tracer_ring *r, uint64_t pos)
{
	/* Never lowered: a question answered twice (a retried drain) must
	   not take back the answers given after it. */
	if (__atomic_load_n(&r->h->answered, __ATOMIC_RELAXED) <= pos)
		__atomic_store_n(&r->h->answered, pos + 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&r->h->notify_ack, 1, __ATOMIC_RELEASE);
	futex_wake_all(&r->h->notify_ack);
}

/* Memo M's counters into OUT (a live thread's stub may be bumping them:
   each read is whole). */
static void
memo_sum(const struct ring_memo *m, struct tracer_ring_stats *out)
{
	out->memo_walks += __atomic_load_n(&m->walks, __ATOMIC_RELAXED);
	out->memo_hits += __atomic_load_n(&m->hits, __ATOMIC_RELAXED);
	out->memo_reused += __atomic_load_n(&m->reused, __ATOMIC_RELAXED);
	out->memo_differed += __atomic_load_n(&m->differed,
					      __ATOMIC_RELAXED);
	out->memo_walked += __atomic_load_n(&m->walked, __ATOMIC_RELAXED);
}

/* Entry T's memo counters into R's totals, and its memo emptied for a
   new thread (a dead one's walk may have left it busy). */
static void
memo_retire(struct tracer_ring *r, struct ring_thread *t)
{
	struct ring_memo *m = ring_memo(r->h, t);
	if (!m)
		return;
	memo_sum(m, &r->st);
	m->walks = m->hits = m->reused = m->differed = m->walked = 0;
	m->n = 0;
	m->busy = 0;
}

/* Entry T is another thread's from now on: nothing of the previous one's
   calls is in progress. */
static void
thread_retag(struct tracer_ring *r, struct ring_thread *t, uint32_t tid)
{
	if (t->tid == tid)
		return;
	r->st.internal += t->internal;
	r->st.sample_skipped += t->sample_calls;
	t->internal = 0;
	t->sample_calls = 0;
	t->outer_rsp = 0;
	t->tid = tid;
	memo_retire(r, t);
}

/* A free entry for a new key TCB in segment SEG: the first tombstone of
   its chain, else the empty entry that ends it, while the segment has no
   more than LIMIT entries in use (live or tombstones); NULL when there is
   none. */
static struct ring_thread *
thread_slot(struct tracer_ring *r, uint32_t seg, uint64_t tcb, uint32_t limit)
{
	struct ring_header *h = r->h;
	struct ring_thread *t = ring_thread_seg(h, seg);
	uint32_t cap = h->thread_cap << seg, mask = cap - 1;
	uint32_t i = ring_thread_hash(h, tcb, seg);
	for (uint32_t n = 0; n < cap; n++, i = (i + 1) & mask) {
		if (t[i].tcb == RING_TCB_DEAD)
			return &t[i];
		if (t[i].tcb == 0) {
			if (r->thread_used[seg] + 1 > limit)
				return NULL;
			r->thread_used[seg]++;
			return &t[i];
		}
	}
	return NULL;
}

/* A free entry for a new key TCB: in the first segment at most half full
   (chains stay short), starting one when those before are; once every
   segment laid out is half full (only threads that died, leaving
   tombstones that lie in no new thread's chain, can bring that about:
   the segments hold twice the threads a process can have), in the first
   with room at all, as the single table of old filled up. */
static struct ring_thread *
thread_free_slot(struct tracer_ring *r, uint64_t tcb)
{
	struct ring_header *h = r->h;
	for (uint32_t seg = 0; seg < r->thread_segs_max; seg++) {
		if (seg == h->thread_segs)
			/* Those before are half full: one more, counted
			   before any key is written to it. */
			__atomic_store_n(&h->thread_segs, seg + 1,
					 __ATOMIC_RELEASE);
		struct ring_thread *slot = thread_slot(r, seg, tcb,
						       (h->thread_cap << seg) / 2);
		if (slot)
			return slot;
	}
	for (uint32_t seg = 0; seg < r->thread_segs_max; seg++) {
		struct ring_thread *slot = thread_slot(r, seg, tcb,
						       h->thread_cap << seg);
		if (slot)
			return slot;
	}
	return NULL;
}

int
tracer_ring_thread_set(struct tracer_ring *r, uint64_t tcb, uint32_t tid,
		       uint64_t stack_lo, uint64_t stack_hi)
{
	if (tcb == 0 || tcb == RING_TCB_DEAD)
		return -EINVAL;
	struct ring_thread *slot = ring_thread_lookup(r->h, tcb);
	if (slot) {
		/* The same thread again, or a new one on a dead one's TCB. */
		thread_retag(r, slot, tid);
		slot->stack_lo = stack_lo;
		slot->stack_hi = stack_hi;
		return 0;
	}
	slot = thread_free_slot(r, tcb);
	if (!slot)
		return -ENOSPC;
	slot->stack_lo = stack_lo;
	slot->stack_hi = stack_hi;
	slot->tid = tid;
	slot->outer_rsp = 0;
	slot->outer_lo = 0;
	slot->outer_hi = 0;
	slot->internal = 0;
	slot->sample_calls = 0;
	memo_retire(r, slot);
	if (r->h->sample_interval) {
		/* Its own stream, the same in every run with this seed. */
		slot->sample_rng = sample_stream(r->sample_seed, r->sample_proc,
						 r->sample_threads++);
		slot->sample_left = (int64_t)sample_gap(&slot->sample_rng,
							r->h->sample_interval);
	}
	/* Readers match the key only once the rest is in place. */
	__atomic_store_n(&slot->tcb, tcb, __ATOMIC_RELEASE);
	return 0;
}

int
tracer_ring_thread_retag(struct tracer_ring *r, uint64_t tcb, uint32_t tid)
{
	if (tcb == 0 || tcb == RING_TCB_DEAD)
		return -ENOENT;
	struct ring_thread *t = ring_thread_lookup(r->h, tcb);
	if (!t)
		return -ENOENT;
	thread_retag(r, t, tid);
	return 0;
}

/* The segment holding entry T. */
static uint32_t
thread_seg_of(struct tracer_ring *r, const struct ring_thread *t)
{
	uint32_t seg = 0;
	while (seg + 1 < r->h->thread_segs &&
	       t >= ring_thread_seg(r->h, seg + 1))
		seg++;
	return seg;
}

void
tracer_ring_thread_remove(struct tracer_ring *r, uint64_t tcb)
{
	if (tcb == 0 || tcb == RING_TCB_DEAD)
		return;
	struct ring_header *h = r->h;
	struct ring_thread *t = ring_thread_lookup(h, tcb);
	if (!t)
		return;
	r->st.internal += t->internal;
	r->st.sample_skipped += t->sample_calls;
	t->internal = 0;
	t->sample_calls = 0;
	memo_retire(r, t);
	__atomic_store_n(&t->tcb, RING_TCB_DEAD, __ATOMIC_RELEASE);
	/* Tombstones that end a probe chain can become empty: no key lies
	   past them, so no lookup can need to walk over them. */
	uint32_t seg = thread_seg_of(r, t);
	struct ring_thread *all = ring_thread_seg(h, seg);
	uint32_t cap = h->thread_cap << seg, mask = cap - 1;
	uint32_t i = (uint32_t)(t - all);
	for (uint32_t n = 0; n < cap; n++, i = (i - 1) & mask) {
		if (all[i].tcb != RING_TCB_DEAD || all[(i + 1) & mask].tcb != 0)
			break;
		__atomic_store_n(&all[i].tcb, 0, __ATOMIC_RELEASE);
		r->thread_used[seg]--;
	}
}

void
tracer_ring_memo_set(struct tracer_ring *r, enum ring_memo_mode mode)
{
	r->h->walk_memo = mode;
}

int
tracer_ring_walk_set(struct tracer_ring *r, uint32_t max)
{
	if (max > RING_MAX_PCS ||
	    ring_rec_size(0, 0, max + PY_MAX_FRAMES) > r->h->size / 4)
		return -EINVAL;
	r->h->walk_max = max;
	return 0;
}

void
tracer_ring_python_set(struct tracer_ring *r, const struct py_walk_params *pp)
{
	struct py_walk_params *dst = &r->h->python;
	/* Stubs read the fields only once MAX_FRAMES says so: it goes to 0
	   first and takes its value last. */
	__atomic_store_n(&dst->max_frames, 0, __ATOMIC_RELEASE);
	if (!pp || pp->tstate_rule == PY_TSTATE_OFF || !pp->max_frames)
		return;
	struct py_walk_params v = *pp;
	v.max_frames = 0;
	*dst = v;
	uint32_t max = pp->max_frames < PY_MAX_FRAMES ? pp->max_frames
						      : PY_MAX_FRAMES;
	__atomic_store_n(&dst->max_frames, max, __ATOMIC_RELEASE);
}

void
tracer_ring_stamp(struct tracer_ring *r)
{
	/* The first pair: every stamp comes after it, so a record's time is
	   interpolated between it and the drain's pair, never extrapolated
	   far from either. */
	tsc_clock_sample(&r->clock);
	r->stamped = true;
	__atomic_fetch_or(&r->h->flags, RING_F_TSC, __ATOMIC_RELEASE);
}

int
tracer_ring_rule_set(struct tracer_ring *r, uint64_t pc,
		     const struct ring_rule *rule)
{
	struct ring_header *h = r->h;
	if (pc == 0)
		return -EINVAL;
	if (ring_rule_lookup(h, pc))
		return 0;
	/* At most half full, so that a miss ends at an empty entry soon. */
	if (r->rule_count + 1 > h->rule_cap / 2)
		return -ENOSPC;
	struct ring_rule *all = ring_rules(h);
	uint32_t mask = h->rule_cap - 1;
	uint32_t i = ring_rule_hash(h, pc);
	while (all[i].pc)
		i = (i + 1) & mask;
	struct ring_rule *e = &all[i];
	e->cfa_off = rule->cfa_off;
	e->rsp_off = rule->rsp_off;
	e->rbp_off = rule->rbp_off;
	e->ra_off = rule->ra_off;
	e->kind = rule->kind;
	e->cfa_reg = rule->cfa_reg;
	e->rsp = rule->rsp;
	e->rbp = rule->rbp;
	e->ra = rule->ra;
	/* Stubs match the key only once the rest is in place. */
	__atomic_store_n(&e->pc, pc, __ATOMIC_RELEASE);
	ht_xgrow((void **)&r->rule_slots, &r->rule_slots_cap,
		 (size_t)r->rule_count + 1, sizeof(*r->rule_slots));
	r->rule_slots[r->rule_count++] = i;
	r->st.rules++;
	return 0;
}

void
tracer_ring_rules_reset(struct tracer_ring *r)
{
	struct ring_header *h = r->h;
	if (!r->rule_count)
		return;
	/* A seqlock's writer: a walk that read any entry while they were
	   being zeroed sees RULE_GEN odd or changed at its end. */
	__atomic_store_n(&h->rule_gen, h->rule_gen + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* The entries written, not the whole table: its 2 MiB are the
	   ring's file, whose pages a memset would all allocate (here and,
	   as the stubs read them, in the target), where a start-up's
	   rules touch some. */
	struct ring_rule *all = ring_rules(h);
	for (uint32_t k = 0; k < r->rule_count; k++)
		memset(&all[r->rule_slots[k]], 0, sizeof(*all));
	__atomic_store_n(&h->rule_gen, h->rule_gen + 1, __ATOMIC_RELEASE);
	r->rule_count = 0;
	r->st.resets++;
}

bool
tracer_ring_record_event(const struct ring_record *rec, struct ht_event *ev)
{
	const uint64_t *a = rec->args;
	*ev = (struct ht_event){
		.kind = HT_EV_ALLOC,
		.fn = (enum ht_alloc_fn)rec->fn,
		.addr = rec->result,
		.tid = rec->tid,
	};
	switch (rec->kind) {
	case RING_REC_FREE:
		ev->kind = HT_EV_FREE;
		ev->addr = a[ht_alloc_fn_ptr_arg(ev->fn) % 3];
		return ev->addr != 0;
	case RING_REC_REALLOC_BEGIN:
		ev->kind = HT_EV_REALLOC_BEGIN;
		ev->addr = 0;
		ev->old_addr = a[0];
		return a[0] != 0;
	case RING_REC_REALLOC:
	case RING_REC_ALLOC:
		/* The stub stored *memptr as posix_memalign's result. */
		return ht_event_from_call(ev->fn, a, rec->result, ev);
	default:
		return false;
	}
}

/* True when REC, committed with LEN, is one the stub can have written. */
static bool
record_valid(const struct ring_header *h, const struct ring_record *rec,
	     uint32_t len)
{
	return len <= h->size && rec->stack_len <= h->stack_copy &&
	       rec->npcs <= RING_MAX_WORDS &&
	       len == ring_rec_size(rec->copied, rec->stack_len, rec->npcs) &&
	       rec->kind >= RING_REC_ALLOC && rec->kind <= RING_REC_RULE &&
	       rec->copied < RING_COPY_N && rec->fn < HT_FN_COUNT;
}

/* The time of REC's call. Each CPU's TSC is read at the reservation, in
   ring order, but CPUs' reads may be a few cycles out of step, and the
   calibration moves with each drain: a time before the previous record's
   is taken as that one, so that times never go back. */
static uint64_t
record_time(struct tracer_ring *r, const struct ring_record *rec)
{
	uint64_t ns = tsc_clock_ns(&r->clock, rec->tsc);
	if (ns < r->last_ns)
		ns = r->last_ns;
	r->last_ns = ns;
	return ns;
}

/* EV, from REC of a ring that samples every INTERVAL bytes: a sampled
   block's weight (the bytes it stands for), and a realloc whose new block
   was not sampled made the free of its old one (its REALLOC_BEGIN came
   because the old block was sampled). */
static void
sampled_event(uint64_t interval, const struct ring_record *rec,
	      struct ht_event *ev)
{
	if (ev->kind != HT_EV_ALLOC && ev->kind != HT_EV_REALLOC)
		return;
	if (rec->sample == 0) {
		if (ev->kind == HT_EV_REALLOC && ev->addr) {
			ev->addr = 0;
			ev->size = 0;
		}
		return;
	}
	ev->weight = sample_weight(rec->sample, interval, ev->size);
}

/* How many of REC's N words PCS are native addresses: those before its
   Python words (pyword.h), which the stub appends after them. Counted
   from the end, so that a record without any (every record of a program
   that is no Python) costs one look. The answer to a RULE question
   carries other words: all native. */
static unsigned
words_native(const struct ring_record *rec, const uint64_t *pcs, unsigned n)
{
	if (rec->kind == RING_REC_RULE)
		return n;
	while (n && py_word_is(pcs[n - 1]))
		n--;
	return n;
}

/* Fill IT for REC. IT is the drain's one item, zeroed when the drain
   begins: every field but CAP is set here for each record, and CAP,
   all 0 but for copied records, is filled here and zeroed again after
   (item_done). Zeroing the whole item for each record (half a KiB, the
   registers mostly) was a tenth of the drain's time. */
static void
item_fill(struct tracer_ring *ring, struct tracer_ring_item *it,
	  struct ring_record *rec)
{
	it->rec = rec;
	/* Read once: the target could scribble over the record meanwhile. */
	unsigned n = rec->npcs <= RING_MAX_WORDS ? rec->npcs : 0;
	it->copied = rec->copied < RING_COPY_N ? rec->copied : RING_COPY_NONE;
	it->pcs = ring_record_pcs(rec);
	it->npcs = words_native(rec, it->pcs, n);
	it->pywords = it->pcs + it->npcs;
	it->npywords = n - it->npcs;
	it->has_event = tracer_ring_record_event(rec, &it->ev);
	if (it->has_event && ring->h->sample_interval)
		sampled_event(ring->h->sample_interval, rec, &it->ev);
	it->time_ns = ring->stamped ? record_time(ring, rec) : 0;
	if (!it->copied)
		return;
	const uint64_t *r = ring_record_regs(rec);
	struct user_regs_struct *regs = &it->cap.regs;
	regs->rip = r[RING_REG_RIP];
	regs->rsp = r[RING_REG_RSP];
	regs->rbp = r[RING_REG_RBP];
	regs->rbx = r[RING_REG_RBX];
	regs->r12 = r[RING_REG_R12];
	regs->r13 = r[RING_REG_R13];
	regs->r14 = r[RING_REG_R14];
	regs->r15 = r[RING_REG_R15];
	it->cap.stack = ring_record_stack(rec);
	it->cap.len = rec->stack_len;
	it->cap.stack_addr = regs->rsp;
}

/* IT, filled by item_fill, is done with: all 0 again where item_fill
   leaves fields alone. */
static void
item_done(struct tracer_ring_item *it)
{
	if (it->copied)
		memset(&it->cap, 0, sizeof(it->cap));
}


/* Wait for the record at TAIL to be committed, until *DEADLINE (set on the
   first wait of a drain, from WAIT_NS). Returns false on timeout. */
static bool
wait_commit(struct tracer_ring *r, uint64_t tail, uint64_t wait_ns,
	    uint64_t *deadline)
{
	struct ring_record *rec = ring_record_at(r->h, tail);
	r->st.waits++;
	if (!wait_ns)
		return false;
	for (int i = 0; i < COMMIT_SPINS; i++) {
		if (__atomic_load_n(&rec->commit, __ATOMIC_ACQUIRE))
			return true;
		__builtin_ia32_pause();
	}
	uint64_t now = ht_monotonic_ns();
	if (!*deadline)
		*deadline = now + wait_ns;
	while (now < *deadline) {
		struct timespec ts = { .tv_nsec = COMMIT_SLEEP_NS };
		nanosleep(&ts, NULL);
		r->st.sleeps++;
		if (__atomic_load_n(&rec->commit, __ATOMIC_ACQUIRE))
			return true;
		now = ht_monotonic_ns();
	}
	return false;
}

long
tracer_ring_drain(struct tracer_ring *r, uint64_t wait_ns,
		  tracer_ring_item_fn fn, void *arg)
{
	struct ring_header *h = r->h;
	uint64_t head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
	uint64_t tail = h->tail; /* written only here */
	uint64_t deadline = 0;
	uint64_t published = tail;
	uint64_t batch = h->size / 16;
	long n = 0;
	int ret = 0;
	struct tracer_ring_item it; /* item_fill's */
	memset(&it, 0, sizeof(it));
	if (head - tail > r->st.max_fill)
		r->st.max_fill = head - tail;
	/* A fresh pair for this drain's records: every one was reserved,
	   and so stamped, before the head was read. */
	if (r->stamped && head != tail)
		tsc_clock_sample(&r->clock);
	while (tail != head) {
		uint32_t len;
		struct ring_record *rec = ring_peek(h, tail, &len);
		if (!rec) {
			/* The record's writer may be waiting for room. */
			publish_tail(h, tail);
			published = tail;
			if (!wait_commit(r, tail, wait_ns, &deadline))
				break;
			continue;
		}
		if (!record_valid(h, rec, len)) {
			ret = -HT_E_FORMAT;
			break;
		}
		/* Records are read once, in order, long after another CPU
		   wrote them: fetch the next ones while this one is used. */
		__builtin_prefetch(ring_record_at(h, tail + PREFETCH_AHEAD));
		__builtin_prefetch(ring_record_at(h, tail + PREFETCH_AHEAD + 64));
		item_fill(r, &it, rec);
		ret = fn(arg, &it);
		if (ret)
			break;
		if (it.rec->kind == RING_REC_ALLOC ||
		    it.rec->kind == RING_REC_REALLOC) {
			if (it.npcs)
				r->st.walked++;
			else
				r->st.copied[it.copied]++;
		}
		item_done(&it);
		ring_zero(h, tail, len);
		tail += len;
		if (tail - published >= batch) {
			publish_tail(h, tail);
			published = tail;
		}
		r->st.records++;
		r->st.bytes += len;
		n++;
	}
	if (published != tail)
		publish_tail(h, tail);
	if (ret)
		return ret;
	return n;
}

uint64_t
tracer_ring_pending(struct tracer_ring *r)
{
	return __atomic_load_n(&r->h->head, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(&r->h->tail, __ATOMIC_ACQUIRE);
}

void
tracer_ring_stats(struct tracer_ring *r, struct tracer_ring_stats *out)
{
	*out = r->st;
	/* The segments in use only: the others were never written, and
	   reading them would make them memory. */
	for (uint32_t seg = 0; seg < r->h->thread_segs; seg++) {
		const struct ring_thread *t = ring_thread_seg(r->h, seg);
		for (uint32_t i = 0; i < r->h->thread_cap << seg; i++)
			if (t[i].tcb && t[i].tcb != RING_TCB_DEAD) {
				out->internal += __atomic_load_n(
					&t[i].internal, __ATOMIC_RELAXED);
				out->sample_skipped += __atomic_load_n(
					&t[i].sample_calls, __ATOMIC_RELAXED);
				const struct ring_memo *m =
					ring_memo(r->h, &t[i]);
				if (m)
					memo_sum(m, out);
			}
	}
}
