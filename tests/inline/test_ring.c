/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The tracer's side of the inline ring without the stub: creation and the
   double mapping, the thread table, records written here with ring.h's
   producer helpers and drained in order (uncommitted records, callbacks
   that stop, corrupt records, wrap-around), record-to-event conversion,
   trampoline encoding; and what the stubs wait on: the consumer word and
   its robust-list link, hooks, answers and the wake-ups of producers
   waiting for room. */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "tests/check.h"
#include "tracer/inline/consumer.h"
#include "tracer/inline/tramp.h"

/* A ring whose thread table is one segment of CAP entries. */
static struct tracer_ring *
ring(uint64_t size, uint32_t cap, uint32_t stack_copy)
{
	struct tracer_ring *r;
	int err = tracer_ring_new(size, cap, cap / 2, 64, stack_copy, &r);
	if (err) {
		fprintf(stderr, "tracer_ring_new: %s\n", strerror(-err));
		exit(EXIT_HARNESS);
	}
	return r;
}

/* Reserve and fill one record as the stub would; commit it unless told
   not to. Returns it. */
static struct ring_record *
produce(struct ring_header *h, uint16_t kind, uint64_t a0, uint32_t slen,
	bool commit)
{
	uint32_t len = ring_rec_size(1, slen, 0);
	uint64_t pos = ring_reserve(h, len);
	struct ring_record *r = ring_record_at(h, pos);
	r->kind = kind;
	r->fn = kind == RING_REC_FREE ? HT_FN_FREE : HT_FN_MALLOC;
	r->tid = 42;
	r->stack_len = slen;
	r->copied = RING_COPY_OFF;
	r->args[0] = a0;
	r->result = a0 + 1;
	ring_record_regs(r)[RING_REG_RSP] = 0x7ff000;
	for (uint32_t i = 0; i < slen; i++)
		ring_record_stack(r)[i] = (uint8_t)(a0 + i);
	if (commit)
		ring_commit(r, len);
	return r;
}

struct seen {
	uint64_t a0[64];
	unsigned n;
	unsigned stop_at; /* return 7 at this count, if nonzero */
	unsigned bad_stack;
};

static int
see(void *arg, const struct tracer_ring_item *it)
{
	struct seen *s = arg;
	if (s->stop_at && s->n == s->stop_at)
		return 7;
	struct ring_record *r = (struct ring_record *)it->rec;
	for (uint32_t i = 0; i < r->stack_len; i++)
		s->bad_stack += it->cap.stack[i] != (uint8_t)(r->args[0] + i);
	s->bad_stack += it->cap.len != r->stack_len ||
			it->cap.stack != ring_record_stack(r) ||
			it->cap.stack_addr != 0x7ff000 ||
			it->cap.regs.rsp != 0x7ff000;
	if (s->n < 64)
		s->a0[s->n] = r->args[0];
	s->n++;
	return 0;
}

static void
test_new(void)
{
	struct tracer_ring *r;
	CHECK(tracer_ring_new(3 << 12, 8, 4, 8, 0, &r) == -EINVAL,
	      "size not 2^n");
	CHECK(tracer_ring_new(1024, 8, 4, 8, 0, &r) == -EINVAL,
	      "size below a page");
	CHECK(tracer_ring_new(1 << 16, 4, 2, 8, 0, &r) == -EINVAL, "4 threads");
	CHECK(tracer_ring_new(1 << 16, 24, 12, 8, 0, &r) == -EINVAL,
	      "24 threads");
	CHECK(tracer_ring_new(1 << 16, 1 << 20, UINT32_MAX, 8, 0, &r) ==
		      -EINVAL,
	      "more threads than segments can hold");
	CHECK(tracer_ring_new(1 << 16, 8, 4, 4, 0, &r) == -EINVAL, "4 rules");
	CHECK(tracer_ring_new(1 << 16, 8, 4, 48, 0, &r) == -EINVAL, "48 rules");
	CHECK(tracer_ring_new(1 << 16, 8, 4, 8, (1 << 14) + 1, &r) == -EINVAL,
	      "stack copy above size / 4");

	r = ring(1 << 16, 128, 512);
	struct ring_header *h = tracer_ring_header(r);
	struct tracer_ring_layout l;
	tracer_ring_layout(r, &l);
	CHECK(h->magic == RING_MAGIC && h->version == RING_VERSION, "magic");
	CHECK(h->size == 1 << 16 && h->stack_copy == 512 &&
		      h->thread_cap == 128 && h->thread_shift == 57 &&
		      h->thread_segs == 1,
	      "header fields");
	CHECK(h->rule_off == RING_HDR_FIXED + 128 * sizeof(struct ring_thread) && h->rule_cap == 64 &&
		      h->rule_shift == 58 && h->walk_max == 0 &&
		      h->rule_gen == 0,
	      "rule table fields");
	CHECK(l.data_off == h->data_off && l.data_off % 4096 == 0 &&
		      l.data_off >= h->rule_off + 64 * 32,
	      "data offset %llu", (unsigned long long)l.data_off);
	CHECK(l.file_len == l.data_off + l.size &&
		      l.map_len == l.file_len + l.size,
	      "layout");
	CHECK(tracer_ring_fd(r) >= 0, "memfd");

	/* The second mapping continues the first. */
	uint8_t *end = (uint8_t *)ring_record_at(h, h->size - 8);
	memcpy(end, "0123456789abcdef", 16);
	CHECK(!memcmp(ring_record_at(h, 0), "89abcdef", 8),
	      "bytes past the end land at the start");
	memset(end, 0, 16);
	tracer_ring_free(r);
	tracer_ring_free(NULL);
}

static unsigned
live_entries(struct ring_header *h)
{
	unsigned n = 0;
	for (uint32_t i = 0; i < h->thread_cap; i++)
		n += ring_threads(h)[i].tcb != 0;
	return n;
}

static void
test_threads(void)
{
	struct tracer_ring *r = ring(1 << 16, 8, 0);
	struct ring_header *h = tracer_ring_header(r);
	CHECK(tracer_ring_thread_set(r, 0, 1, 0, 0) == -EINVAL, "tcb 0");
	CHECK(tracer_ring_thread_set(r, RING_TCB_DEAD, 1, 0, 0) == -EINVAL,
	      "tombstone key");
	for (uint64_t i = 0; i < 8; i++)
		CHECK(tracer_ring_thread_set(r, 0x7f0000001000 + i * 0x1000,
					     (uint32_t)(100 + i), i,
					     i + 1) == 0,
		      "insert %llu", (unsigned long long)i);
	CHECK(tracer_ring_thread_set(r, 0x1000, 1, 0, 0) == -ENOSPC, "full");
	for (uint64_t i = 0; i < 8; i++) {
		struct ring_thread *t =
			ring_thread_lookup(h, 0x7f0000001000 + i * 0x1000);
		CHECK(t && t->tid == 100 + i && t->stack_lo == i &&
			      t->stack_hi == i + 1,
		      "lookup %llu", (unsigned long long)i);
	}
	CHECK(!ring_thread_lookup(h, 0x1000), "absent key, full table");

	/* An update of the same thread keeps its own state; a new thread on
	   a dead one's TCB does not inherit it. */
	struct ring_thread *t = ring_thread_lookup(h, 0x7f0000001000);
	t->internal = 5;
	t->outer_rsp = 0x1234;
	tracer_ring_thread_set(r, 0x7f0000001000, 100, 10, 20);
	CHECK(t->internal == 5 && t->outer_rsp == 0x1234 && t->stack_hi == 20,
	      "same thread updated in place");
	struct tracer_ring_stats st;
	tracer_ring_stats(r, &st);
	CHECK(st.internal == 5, "live internal calls counted");
	tracer_ring_thread_set(r, 0x7f0000001000, 999, 10, 20);
	CHECK(t->internal == 0 && t->outer_rsp == 0 && t->tid == 999,
	      "new thread, fresh state");
	tracer_ring_stats(r, &st);
	CHECK(st.internal == 5, "the old thread's count is kept");

	tracer_ring_thread_remove(r, 0x7f0000003000);
	CHECK(!ring_thread_lookup(h, 0x7f0000003000), "removed");
	CHECK(tracer_ring_thread_set(r, 0x1000, 7, 0, 0) == 0,
	      "the tombstone is reused");
	CHECK(ring_thread_lookup(h, 0x1000)->tid == 7, "found");
	tracer_ring_thread_remove(r, 0x5555);
	tracer_ring_free(r);

	/* Removing everything leaves an empty table when chains end in
	   empty slots. */
	r = ring(1 << 16, 64, 0);
	h = tracer_ring_header(r);
	for (uint64_t i = 0; i < 20; i++)
		tracer_ring_thread_set(r, 0x7f0000001000 + i * 0x1000, 1, 0, 0);
	for (uint64_t i = 0; i < 20; i++)
		CHECK(ring_thread_lookup(h, 0x7f0000001000 + i * 0x1000),
		      "lookup %llu among 20", (unsigned long long)i);
	for (uint64_t i = 0; i < 20; i++)
		tracer_ring_thread_remove(r, 0x7f0000001000 + i * 0x1000);
	CHECK(live_entries(h) == 0, "%u entries left", live_entries(h));
	tracer_ring_free(r);
}

/* The table grows by segments, none moved: 8 entries, then 16, 32...,
   each at most half full, as many as THREAD_MAX threads need. */
static void
test_thread_segments(void)
{
	struct tracer_ring *r;
	CHECK(tracer_ring_new(1 << 16, 8, 100, 64, 0, &r) == 0, "new");
	struct ring_header *h = tracer_ring_header(r);
	/* 4 + 8 + 16 + 32 + 64 = 124 >= 100: five segments */
	CHECK(h->rule_off == RING_HDR_FIXED + 8 * 31 * sizeof(struct ring_thread),
	      "rule table after 5 segments: %llu",
	      (unsigned long long)h->rule_off);
	uint64_t key0 = 0x7f0000001000;
	for (uint64_t i = 0; i < 124; i++) {
		CHECK(tracer_ring_thread_set(r, key0 + i * 0x1000,
					     (uint32_t)i, 0, 0) == 0,
		      "insert %llu", (unsigned long long)i);
		if (i == 3)
			CHECK(h->thread_segs == 1, "4 in the first segment");
		if (i == 4)
			CHECK(h->thread_segs == 2, "the 5th in the second");
	}
	CHECK(h->thread_segs == 5, "%u segments", h->thread_segs);
	/* Every segment half full (tombstones can bring that about): then
	   they fill up. */
	for (uint64_t i = 124; i < 248; i++)
		CHECK(tracer_ring_thread_set(r, key0 + i * 0x1000,
					     (uint32_t)i, 0, 0) == 0,
		      "insert %llu", (unsigned long long)i);
	CHECK(h->thread_segs == 5, "still %u segments", h->thread_segs);
	CHECK(tracer_ring_thread_set(r, 0x1000, 1, 0, 0) == -ENOSPC,
	      "every segment full");
	for (uint64_t i = 0; i < 248; i++) {
		struct ring_thread *t = ring_thread_lookup(h, key0 + i * 0x1000);
		CHECK(t && t->tid == i, "lookup %llu", (unsigned long long)i);
	}
	CHECK(!ring_thread_lookup(h, 0x1000), "absent key");
	struct ring_thread *last = ring_thread_lookup(h, key0 + 4 * 0x1000);
	CHECK(last >= ring_thread_seg(h, 1), "a later segment's entry");
	last->internal = 3;
	struct tracer_ring_stats st;
	tracer_ring_stats(r, &st);
	CHECK(st.internal == 3, "every segment's internal calls counted");
	/* Everything removed and inserted again: tombstones reused or
	   cleared, the counts right. */
	for (uint64_t i = 0; i < 248; i++)
		tracer_ring_thread_remove(r, key0 + i * 0x1000);
	for (uint64_t i = 0; i < 248; i++)
		CHECK(!ring_thread_lookup(h, key0 + i * 0x1000), "removed %llu",
		      (unsigned long long)i);
	for (uint64_t i = 0; i < 248; i++)
		CHECK(tracer_ring_thread_set(r, key0 + (i + 1000) * 0x1000,
					     (uint32_t)i, 0, 0) == 0,
		      "insert again %llu", (unsigned long long)i);
	for (uint64_t i = 0; i < 248; i++)
		CHECK(ring_thread_lookup(h, key0 + (i + 1000) * 0x1000),
		      "lookup again %llu", (unsigned long long)i);
	tracer_ring_free(r);
}

static void
test_rules(void)
{
	struct tracer_ring *r = ring(1 << 16, 8, 0);
	struct ring_header *h = tracer_ring_header(r);
	struct ring_rule ru = {
		.kind = RING_RULE_CFI, .cfa_reg = RING_REG_RSP, .cfa_off = 16,
		.rsp = RING_LOC_CFA, .rbp = RING_LOC_AT_CFA, .rbp_off = -16,
		.ra = RING_LOC_AT_CFA, .ra_off = -8,
	};
	CHECK(tracer_ring_rule_set(r, 0, &ru) == -EINVAL, "pc 0");
	CHECK(tracer_ring_walk_set(r, RING_MAX_PCS + 1) == -EINVAL,
	      "walk deeper than a record holds");
	CHECK(tracer_ring_walk_set(r, 80) == 0 && h->walk_max == 80,
	      "walk set");
	for (uint64_t i = 0; i < 32; i++) {
		ru.cfa_off = (int32_t)i;
		CHECK(tracer_ring_rule_set(r, 0x401000 + i * 7, &ru) == 0,
		      "rule %llu", (unsigned long long)i);
	}
	ru.cfa_off = 99;
	CHECK(tracer_ring_rule_set(r, 0x401000, &ru) == 0 &&
		      ring_rule_lookup(h, 0x401000)->cfa_off == 0,
	      "an entry, once there, stays as it is");
	CHECK(tracer_ring_rule_set(r, 0x500000, &ru) == -ENOSPC,
	      "half full is full");
	for (uint64_t i = 0; i < 32; i++) {
		const struct ring_rule *e =
			ring_rule_lookup(h, 0x401000 + i * 7);
		CHECK(e && e->cfa_off == (int32_t)i &&
			      e->kind == RING_RULE_CFI &&
			      e->rbp == RING_LOC_AT_CFA && e->rbp_off == -16 &&
			      e->ra_off == -8,
		      "lookup %llu", (unsigned long long)i);
	}
	CHECK(!ring_rule_lookup(h, 0x500000), "absent");
	tracer_ring_rules_reset(r);
	CHECK(h->rule_gen == 2 && !ring_rule_lookup(h, 0x401000),
	      "reset: generation %llu", (unsigned long long)h->rule_gen);
	CHECK(tracer_ring_rule_set(r, 0x500000, &ru) == 0 &&
		      ring_rule_lookup(h, 0x500000),
	      "room again");
	tracer_ring_rules_reset(r);
	tracer_ring_rules_reset(r);
	struct tracer_ring_stats st;
	tracer_ring_stats(r, &st);
	CHECK(st.rules == 33 && st.resets == 2 && h->rule_gen == 4,
	      "%llu rules, %llu resets (an empty table is not reset)",
	      (unsigned long long)st.rules, (unsigned long long)st.resets);
	tracer_ring_free(r);

	/* A tiny ring cannot take records of 256 addresses, nor of 80 and
	   the Python words that may follow them. */
	r = ring(4096, 8, 0);
	CHECK(tracer_ring_walk_set(r, 256) == -EINVAL &&
		      tracer_ring_walk_set(r, 80) == -EINVAL &&
		      tracer_ring_walk_set(r, 48) == 0,
	      "walk bounded by the ring");
	tracer_ring_free(r);
}

/* Records with addresses, as a walking stub writes them. */
static int
see_pcs(void *arg, const struct tracer_ring_item *it)
{
	unsigned *bad = arg;
	const struct ring_record *rec = it->rec;
	*bad += it->npcs != rec->npcs || it->copied != rec->copied ||
		it->cap.len != rec->stack_len;
	for (unsigned i = 0; i < it->npcs; i++)
		*bad += it->pcs[i] != rec->args[0] + i;
	for (unsigned i = 0; i < rec->stack_len; i++)
		*bad += it->cap.stack[i] != (uint8_t)i;
	return 0;
}

static void
test_drain_pcs(void)
{
	struct tracer_ring *r = ring(4096, 8, 1024);
	struct ring_header *h = tracer_ring_header(r);
	unsigned bad = 0;
	for (uint32_t i = 0; i < 50; i++) {
		uint32_t npcs = i % 7, slen = npcs ? 0 : i % 13;
		uint8_t copied = npcs ? RING_COPY_NONE : RING_COPY_BOUNDS;
		uint32_t len = ring_rec_size(copied, slen, npcs);
		struct ring_record *rec =
			ring_record_at(h, ring_reserve(h, len));
		rec->kind = RING_REC_ALLOC;
		rec->fn = HT_FN_MALLOC;
		rec->args[0] = 0x1000 * i;
		rec->result = 1;
		rec->stack_len = slen;
		rec->npcs = (uint16_t)npcs;
		rec->copied = copied;
		for (uint32_t k = 0; k < slen; k++)
			ring_record_stack(rec)[k] = (uint8_t)k;
		for (uint32_t k = 0; k < npcs; k++)
			ring_record_pcs(rec)[k] = 0x1000 * i + k;
		ring_commit(rec, len);
		CHECK(tracer_ring_drain(r, 0, see_pcs, &bad) == 1,
		      "record %u", i);
	}
	CHECK(!bad, "%u bad fields", bad);
	struct tracer_ring_stats st;
	tracer_ring_stats(r, &st);
	CHECK(st.walked == 42 && st.copied[RING_COPY_BOUNDS] == 8,
	      "walked %llu, copied %llu", (unsigned long long)st.walked,
	      (unsigned long long)st.copied[RING_COPY_BOUNDS]);

	/* More addresses than a record may hold. */
	uint32_t len = ring_rec_size(0, 0, RING_MAX_WORDS + 1);
	struct ring_record *rec = ring_record_at(h, ring_reserve(h, len));
	rec->kind = RING_REC_ALLOC;
	rec->npcs = RING_MAX_WORDS + 1;
	ring_commit(rec, len);
	CHECK(tracer_ring_drain(r, 0, see_pcs, &bad) == -HT_E_FORMAT,
	      "too many addresses refused");
	tracer_ring_free(r);
}

static void
test_drain(void)
{
	struct tracer_ring *r = ring(4096, 8, 1024);
	struct ring_header *h = tracer_ring_header(r);
	struct seen s = { 0 };

	produce(h, RING_REC_ALLOC, 1, 16, true);
	struct ring_record *late = produce(h, RING_REC_ALLOC, 2, 0, false);
	produce(h, RING_REC_FREE, 3, 5, true);
	CHECK(tracer_ring_drain(r, 0, see, &s) == 1 && s.a0[0] == 1,
	      "stops at the uncommitted record");
	CHECK(h->tail == ring_rec_size(1, 16, 0), "tail after one record");
	CHECK(tracer_ring_drain(r, 2000000, see, &s) == 0, "timed out");
	struct tracer_ring_stats st;
	tracer_ring_stats(r, &st);
	CHECK(st.waits == 2 && st.sleeps > 0, "waits %llu sleeps %llu",
	      (unsigned long long)st.waits, (unsigned long long)st.sleeps);
	ring_commit(late, ring_rec_size(1, 0, 0));
	CHECK(tracer_ring_drain(r, 0, see, &s) == 2 && s.a0[1] == 2 &&
		      s.a0[2] == 3,
	      "then the rest, in order");
	CHECK(tracer_ring_pending(r) == 0, "empty");

	/* A callback that says stop: the record stays. */
	produce(h, RING_REC_ALLOC, 4, 0, true);
	produce(h, RING_REC_ALLOC, 5, 0, true);
	s.stop_at = s.n + 1;
	CHECK(tracer_ring_drain(r, 0, see, &s) == 7 && s.a0[3] == 4,
	      "the callback's value after one record");
	s.stop_at = 0;
	CHECK(tracer_ring_drain(r, 0, see, &s) == 1 && s.a0[4] == 5,
	      "resumed at the record it refused");

	/* Round the ring many times with records of odd sizes: each
	   arrives whole, and consumed bytes are zero. */
	unsigned before = s.n;
	for (uint64_t i = 0; i < 40; i++) {
		produce(h, RING_REC_ALLOC, 100 + i, (uint32_t)(i * 37 % 1000),
			true);
		produce(h, RING_REC_FREE, 200 + i, (uint32_t)(i * 91 % 900),
			true);
		tracer_ring_drain(r, 0, see, &s);
	}
	CHECK(s.n == before + 80 && !s.bad_stack, "%u records, %u bad bytes",
	      s.n - before, s.bad_stack);
	const uint8_t *data = (const uint8_t *)ring_record_at(h, 0);
	unsigned nonzero = 0;
	for (unsigned i = 0; i < 4096; i++)
		nonzero += data[i] != 0;
	CHECK(!nonzero, "%u bytes left nonzero", nonzero);

	/* A record the stub cannot have written. */
	struct ring_record *bad = produce(h, RING_REC_ALLOC, 9, 8, false);
	ring_commit(bad, ring_rec_size(1, 16, 0));
	CHECK(tracer_ring_drain(r, 0, see, &s) == -HT_E_FORMAT,
	      "corrupt record refused");
	tracer_ring_free(r);
}

static void
test_events(void)
{
	static const struct {
		uint16_t kind, fn;
		uint64_t a[3], result;
		bool has;
		enum ht_event_kind ev_kind;
		uint64_t addr, old, size, align;
	} cases[] = {
		{ RING_REC_ALLOC, HT_FN_MALLOC, { 10 }, 0x100, true,
		  HT_EV_ALLOC, 0x100, 0, 10, 0 },
		{ RING_REC_ALLOC, HT_FN_MALLOC, { 10 }, 0, false,
		  HT_EV_ALLOC, 0, 0, 10, 0 },
		{ RING_REC_ALLOC, HT_FN_CALLOC, { 3, 7 }, 0x100, true,
		  HT_EV_ALLOC, 0x100, 0, 21, 0 },
		{ RING_REC_ALLOC, HT_FN_CALLOC, { 1ULL << 40, 1ULL << 40 },
		  0x100, false, HT_EV_ALLOC, 0x100, 0, 0, 0 },
		{ RING_REC_ALLOC, HT_FN_MEMALIGN, { 64, 100 }, 0x140, true,
		  HT_EV_ALLOC, 0x140, 0, 100, 64 },
		{ RING_REC_ALLOC, HT_FN_ALIGNED_ALLOC, { 32, 96 }, 0x160, true,
		  HT_EV_ALLOC, 0x160, 0, 96, 32 },
		{ RING_REC_ALLOC, HT_FN_POSIX_MEMALIGN, { 0x7ff0, 16, 50 },
		  0x180, true, HT_EV_ALLOC, 0x180, 0, 50, 16 },
		{ RING_REC_ALLOC, HT_FN_POSIX_MEMALIGN, { 0x7ff0, 16, 50 }, 0,
		  false, HT_EV_ALLOC, 0, 0, 50, 16 },
		{ RING_REC_ALLOC, HT_FN_VALLOC, { 5 }, 0x1000, true,
		  HT_EV_ALLOC, 0x1000, 0, 5, 4096 },
		{ RING_REC_ALLOC, HT_FN_NEW, { 24 }, 0x200, true, HT_EV_ALLOC,
		  0x200, 0, 24, 0 },
		{ RING_REC_FREE, HT_FN_FREE, { 0x200 }, 0, true, HT_EV_FREE,
		  0x200, 0, 0, 0 },
		{ RING_REC_FREE, HT_FN_DELETE, { 0 }, 0, false, HT_EV_FREE, 0,
		  0, 0, 0 },
		/* pymalloc's arenas: alloc(ctx, size), free(ctx, ptr, size) */
		{ RING_REC_ALLOC, HT_FN_PYARENA_ALLOC, { 0, 1 << 20 }, 0x7000,
		  true, HT_EV_ALLOC, 0x7000, 0, 1 << 20, 0 },
		{ RING_REC_ALLOC, HT_FN_PYARENA_ALLOC, { 0, 1 << 20 }, 0,
		  false, HT_EV_ALLOC, 0, 0, 1 << 20, 0 },
		{ RING_REC_FREE, HT_FN_PYARENA_FREE, { 0, 0x7000, 1 << 20 }, 0,
		  true, HT_EV_FREE, 0x7000, 0, 0, 0 },
		{ RING_REC_FREE, HT_FN_PYARENA_FREE, { 0x7000, 0, 1 << 20 }, 0,
		  false, HT_EV_FREE, 0, 0, 0, 0 },
		{ RING_REC_REALLOC_BEGIN, HT_FN_REALLOC, { 0x300, 8 }, 0, true,
		  HT_EV_REALLOC_BEGIN, 0, 0x300, 0, 0 },
		{ RING_REC_REALLOC_BEGIN, HT_FN_REALLOC, { 0, 8 }, 0, false,
		  HT_EV_REALLOC_BEGIN, 0, 0, 0, 0 },
		{ RING_REC_REALLOC, HT_FN_REALLOC, { 0x300, 8 }, 0x400, true,
		  HT_EV_REALLOC, 0x400, 0x300, 8, 0 },
		{ RING_REC_REALLOC, HT_FN_REALLOC, { 0x300, 0 }, 0, true,
		  HT_EV_REALLOC, 0, 0x300, 0, 0 },
		{ RING_REC_REALLOC, HT_FN_REALLOC, { 0x300, 8 }, 0, true,
		  HT_EV_REALLOC, 0, 0x300, 8, 0 },
		{ RING_REC_REALLOC, HT_FN_REALLOC, { 0, 8 }, 0, false,
		  HT_EV_REALLOC, 0, 0, 8, 0 },
		{ RING_REC_REALLOC, HT_FN_REALLOC, { 0, 8 }, 0x500, true,
		  HT_EV_REALLOC, 0x500, 0, 8, 0 },
		{ RING_REC_REALLOC, HT_FN_REALLOCARRAY, { 0x300, 4, 6 }, 0x600,
		  true, HT_EV_REALLOC, 0x600, 0x300, 24, 0 },
		{ RING_REC_REALLOC, HT_FN_REALLOCARRAY,
		  { 0x300, 1ULL << 40, 1ULL << 40 }, 0, true, HT_EV_REALLOC,
		  0, 0x300, UINT64_MAX, 0 },
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ring_record rec = {
			.kind = cases[i].kind,
			.fn = cases[i].fn,
			.tid = 77,
			.args = { cases[i].a[0], cases[i].a[1], cases[i].a[2] },
			.result = cases[i].result,
		};
		struct ht_event ev;
		bool has = tracer_ring_record_event(&rec, &ev);
		CHECK(has == cases[i].has, "case %u: has %d", i, has);
		if (!has)
			continue;
		CHECK(ev.kind == cases[i].ev_kind && ev.addr == cases[i].addr &&
			      ev.old_addr == cases[i].old &&
			      ev.size == cases[i].size &&
			      ev.align == cases[i].align && ev.tid == 77 &&
			      ev.fn == cases[i].fn && !ev.npcs && !ev.pcs,
		      "case %u: kind %d addr %#llx old %#llx size %llu align "
		      "%llu",
		      i, ev.kind, (unsigned long long)ev.addr,
		      (unsigned long long)ev.old_addr,
		      (unsigned long long)ev.size,
		      (unsigned long long)ev.align);
	}
}

static void
test_fns(void)
{
	struct tracer_ring *r = ring(1 << 16, 8, 0);
	struct ring_header *h = tracer_ring_header(r);
	CHECK(tracer_ring_fn_set(r, RING_MAX_FNS, HT_FN_MALLOC, 1, 2, 0, 0) ==
		      -EINVAL,
	      "index out of range");
	CHECK(tracer_ring_fn_set(r, 0, HT_FN_COUNT, 1, 2, 0, 0) == -EINVAL,
	      "bad fn");
	CHECK(tracer_ring_fn_set(r, 3, HT_FN_POSIX_MEMALIGN, 0x10, 0x20, 0x30,
				 0x40) == 0 &&
		      h->fns[3].entry == 0x10 && h->fns[3].orig == 0x20 &&
		      h->fns[3].obj_lo == 0x30 && h->fns[3].obj_hi == 0x40 &&
		      h->fns[3].fn == HT_FN_POSIX_MEMALIGN &&
		      h->fns[3].cls == RING_CLASS_POSIX_MEMALIGN,
	      "descriptor");
	/* pymalloc's arena calls: the pointer freed and the size in the
	   second argument, recorded whole when sampling */
	CHECK(tracer_ring_sampling_set(r, 4096, 1, 1) == 0 &&
		      tracer_ring_fn_set(r, 4, HT_FN_PYARENA_ALLOC, 1, 2, 0,
					 0) == 0 &&
		      tracer_ring_fn_set(r, 5, HT_FN_PYARENA_FREE, 1, 2, 0,
					 0) == 0 &&
		      tracer_ring_fn_set(r, 6, HT_FN_FREE, 1, 2, 0, 0) == 0 &&
		      h->fns[4].cls == RING_CLASS_ALLOC &&
		      h->fns[4].size_arg == 1 && !h->fns[4].sample_interval &&
		      h->fns[5].cls == RING_CLASS_FREE &&
		      h->fns[5].ptr_arg == 1 && !h->fns[5].sample_interval &&
		      h->fns[6].ptr_arg == 0 &&
		      h->fns[6].sample_interval == 4096,
	      "arena descriptors");
	CHECK(tracer_ring_fn_class(HT_FN_DELETE_ARRAY) == RING_CLASS_FREE &&
		      tracer_ring_fn_class(HT_FN_REALLOCARRAY) ==
			      RING_CLASS_REALLOC &&
		      tracer_ring_fn_class(HT_FN_NEW_ALIGNED) ==
			      RING_CLASS_ALLOC,
	      "classes");
	tracer_ring_free(r);
}

static void
test_tramp(void)
{
	uint8_t b[TRACER_TRAMP_MAX];
	static const uint8_t near[] = { 0x41, 0xbb, 7, 0, 0, 0,
					0xe9, 0xf5, 0x0f, 0, 0 };
	CHECK(tracer_tramp_encode(b, 0x10000, 0x11000, 7) == 11 &&
		      !memcmp(b, near, 11),
	      "mov r11d, 7; jmp rel32");
	static const uint8_t back[] = { 0xe9, 0xf5, 0xef, 0xff, 0xff };
	CHECK(tracer_tramp_encode(b, 0x11000, 0x10000, 7) == 11 &&
		      !memcmp(b + 6, back, 5),
	      "backward jump");
	static const uint8_t far[] = { 0x41, 0xbb, 1, 0, 0, 0, 0xff, 0x25,
				       0, 0, 0, 0, 0x00, 0x10, 0, 0,
				       0, 0x7f, 0, 0 };
	CHECK(tracer_tramp_encode(b, 0x10000, 0x7f0000001000, 1) == 20 &&
		      !memcmp(b, far, 20),
	      "jmp [rip] when out of reach");
}

/* ---- What the stubs wait on ---- */

/* A new ring's consumer is the thread that made it: its tid in
   CONSUMER, the ring linked first in its robust list (so the kernel marks
   CONSUMER when it dies), recording until PASS or the mark; freeing a
   ring unlinks it from the middle of the list. */
static void
test_consumer(void)
{
	struct tracer_ring *r1 = ring(1 << 16, 8, 0);
	struct tracer_ring *r2 = ring(1 << 16, 8, 0);
	struct ring_header *h1 = tracer_ring_header(r1);
	struct ring_header *h2 = tracer_ring_header(r2);
	uint32_t tid = (uint32_t)gettid() & RING_CONSUMER_TID;
	CHECK(h1->consumer == tid && h2->consumer == tid && ring_recording(h2),
	      "CONSUMER: this thread's tid (%#x)", h2->consumer);
	CHECK(h2->consumer_node == (uint64_t)(uintptr_t)&h1->consumer_node,
	      "the second ring's link leads to the first's");
	uint64_t after = h1->consumer_node;
	tracer_ring_free(r1);
	CHECK(h2->consumer_node == after, "the first unlinked");

	h2->flags |= RING_F_PASS;
	CHECK(!ring_recording(h2), "not recording with PASS");
	h2->flags &= ~RING_F_PASS;
	h2->consumer = tid | RING_CONSUMER_DIED;
	CHECK(!ring_recording(h2), "not recording once the consumer died");
	h2->consumer = 0;
	CHECK(!ring_recording(h2), "not recording without a consumer");
	h2->consumer = tid;
	tracer_ring_free(r2);
}

static void
test_hooks(void)
{
	struct tracer_ring *r = ring(1 << 16, 8, 0);
	struct ring_header *h = tracer_ring_header(r);
	CHECK(tracer_ring_hook_set(r, RING_MAX_FNS, RING_CLASS_NOTIFY, 0, 1, 2,
				   0, 0) == -EINVAL,
	      "index out of range");
	CHECK(tracer_ring_hook_set(r, 0, RING_CLASS_ALLOC, 0, 1, 2, 0, 0) ==
		      -EINVAL,
	      "an allocator's class");
	CHECK(tracer_ring_hook_set(r, 0, RING_CLASS_PAGE, RING_PAGE_N, 1, 2, 0,
				   0) == -EINVAL,
	      "a page call past the last");
	CHECK(tracer_ring_hook_set(r, 5, RING_CLASS_NOTIFY, 3, 0x10, 0x20, 0x30,
				   0x40) == 0 &&
		      h->fns[5].entry == 0x10 && h->fns[5].orig == 0x20 &&
		      h->fns[5].obj_lo == 0x30 && h->fns[5].obj_hi == 0x40 &&
		      h->fns[5].fn == 0 && h->fns[5].cls == RING_CLASS_NOTIFY,
	      "NOTIFY hook");
	CHECK(tracer_ring_hook_set(r, 6, RING_CLASS_EXIT, 0, 0x50, 0x60, 0,
				   0) == 0 &&
		      h->fns[6].cls == RING_CLASS_EXIT &&
		      h->fns[6].orig == 0x60,
	      "EXIT hook");
	CHECK(tracer_ring_hook_set(r, 7, RING_CLASS_PAGE_ENTRY,
				   RING_PAGE_MUNMAP, 0x70, 0x80, 0, 0) == 0 &&
		      h->fns[7].cls == RING_CLASS_PAGE_ENTRY &&
		      h->fns[7].fn == RING_PAGE_MUNMAP,
	      "page-call hook");
	tracer_ring_freeres_set(r, 0x111, 0x222);
	CHECK(h->freeres[0] == 0x111 && h->freeres[1] == 0x222, "freeres");
	tracer_ring_free(r);
}

static uint64_t
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A stub's wait on a futex word (as stub.c's, shared), at most 5 s,
   counted in *SLEEPERS when not NULL; TOOK_NS gets how long it lasted. */
struct waiter {
	uint32_t *word;
	uint32_t seen;
	uint32_t *sleepers;
	uint64_t took_ns;
};

static void *
futex_waiter(void *arg)
{
	struct waiter *w = arg;
	struct timespec ts = { .tv_sec = 5 };
	uint64_t t0 = now_ns();
	if (w->sleepers)
		__atomic_fetch_add(w->sleepers, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, w->word, FUTEX_WAIT, w->seen, &ts, NULL, 0);
	if (w->sleepers)
		__atomic_fetch_sub(w->sleepers, 1, __ATOMIC_SEQ_CST);
	w->took_ns = now_ns() - t0;
	return NULL;
}

static void
waiter_start(pthread_t *th, struct waiter *w)
{
	if (pthread_create(th, NULL, futex_waiter, w)) {
		fprintf(stderr, "pthread_create failed\n");
		exit(EXIT_HARNESS);
	}
	usleep(50000); /* asleep by now, as a rule */
}

/* An answer wakes the stubs waiting for it. */
static void
test_notify_ack(void)
{
	struct tracer_ring *r = ring(1 << 16, 8, 0);
	struct ring_header *h = tracer_ring_header(r);
	struct waiter w = { .word = &h->notify_ack };
	pthread_t th;
	waiter_start(&th, &w);
	tracer_ring_notify_ack(r, 3);
	pthread_join(th, NULL);
	CHECK(h->answered == 4 && h->notify_ack == 1 &&
		      w.took_ns < 2000000000u,
	      "the question at 3 answered (answered %llu), the waiter back "
	      "after %.1f ms",
	      (unsigned long long)h->answered, w.took_ns / 1e6);
	/* An earlier question answered again (a retried drain) takes back
	   nothing: the stubs compare their own position with ANSWERED. */
	tracer_ring_notify_ack(r, 2);
	CHECK(h->answered == 4 && h->notify_ack == 2,
	      "answered again: still past 3 (%llu), woken again",
	      (unsigned long long)h->answered);
	tracer_ring_free(r);
}

/* The drain's published tail wakes the producers waiting for room
   (bumping DRAINED), only when SLEEPERS says some wait. */
static void
test_drained(void)
{
	struct tracer_ring *r = ring(4096, 8, 0);
	struct ring_header *h = tracer_ring_header(r);
	struct seen s = { 0 };
	for (int i = 0; i < 8; i++)
		produce(h, RING_REC_ALLOC, (uint64_t)i, 0, true);
	tracer_ring_drain(r, 0, see, &s);
	CHECK(s.n == 8 && h->drained == 0, "no sleeper, no bump (%u)",
	      h->drained);

	for (int i = 0; i < 8; i++)
		produce(h, RING_REC_ALLOC, (uint64_t)i, 0, true);
	struct waiter w = { .word = &h->drained, .sleepers = &h->sleepers };
	pthread_t th;
	waiter_start(&th, &w);
	/* Counted, it is asleep or about to find DRAINED changed. */
	while (!__atomic_load_n(&h->sleepers, __ATOMIC_SEQ_CST))
		usleep(1000);
	tracer_ring_drain(r, 0, see, &s);
	pthread_join(th, NULL);
	CHECK(s.n == 16 && h->drained > 0 && w.took_ns < 2000000000u,
	      "a sleeper: bumped %u, the waiter back after %.1f ms",
	      h->drained, w.took_ns / 1e6);
	tracer_ring_free(r);
}

int
main(void)
{
	test_new();
	test_threads();
	test_thread_segments();
	test_rules();
	test_drain();
	test_drain_pcs();
	test_events();
	test_fns();
	test_tramp();
	test_consumer();
	test_hooks();
	test_notify_ack();
	test_drained();
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	return failures ? 1 : 0;
}
