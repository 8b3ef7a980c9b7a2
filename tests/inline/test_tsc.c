/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The inline ring's time stamps (tracer/inline/tsc.h, RING_F_TSC): which
   CPU flags make the TSC usable, the line through calibration pairs,
   its error against CLOCK_MONOTONIC on this machine, and the drain's
   times: converted, and never before the previous record's when stamps
   come a little out of ring order (threads on different CPUs). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/check.h"
#include "tracer/inline/consumer.h"
#include "tracer/inline/tsc.h"

static uint64_t
monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
spin_ns(uint64_t ns)
{
	uint64_t end = monotonic_ns() + ns;
	while (monotonic_ns() < end)
		;
}

static void
test_flags(void)
{
	CHECK(tsc_flags_usable(" fpu tsc constant_tsc rep_good nonstop_tsc "
			       "cpuid\n"),
	      "both flags");
	CHECK(tsc_flags_usable("constant_tsc nonstop_tsc"), "only them");
	CHECK(!tsc_flags_usable(" fpu tsc constant_tsc cpuid\n"),
	      "constant_tsc alone");
	CHECK(!tsc_flags_usable(" fpu tsc nonstop_tsc\n"), "nonstop_tsc alone");
	CHECK(!tsc_flags_usable(" xconstant_tsc nonstop_tsc_x\n"),
	      "words that only contain the flags");
	CHECK(!tsc_flags_usable(""), "no flags");
	printf("flags: this machine's TSC is %susable\n",
	       tsc_usable() ? "" : "not ");
}

/* A 2.7 GHz TSC against exact pairs: readings between, before and after
   them convert to the nanosecond. */
static void
test_line(void)
{
	struct tsc_clock c = { 0 };
	CHECK(tsc_clock_ns(&c, 12345) == 0, "no pair: 0");
	tsc_clock_add(&c, 1000000, 5000000000u);
	CHECK(tsc_clock_ns(&c, 99999999) == 5000000000u,
	      "one pair: its time, whatever the reading");
	tsc_clock_add(&c, 1000000 + 2700000000u, 6000000000u);
	struct {
		uint64_t tsc, ns;
	} want[] = {
		{ 1000000, 5000000000u },              /* the far end */
		{ 1000000 + 2700000000u, 6000000000u }, /* the anchor */
		{ 1000000 + 1350000000u, 5500000000u }, /* between */
		{ 1000000 + 2699997300u, 5999999000u }, /* 1 us before */
		{ 1000000 + 2700027000u, 6000010000u }, /* 10 us after */
		{ 1000000 + 2700000000u - 27, 5999999990u },
	};
	for (unsigned i = 0; i < sizeof(want) / sizeof(*want); i++) {
		uint64_t got = tsc_clock_ns(&c, want[i].tsc);
		CHECK(got == want[i].ns, "reading %u: %llu ns, want %llu", i,
		      (unsigned long long)got, (unsigned long long)want[i].ns);
	}
	/* A new anchor moves the offset, the rate follows the whole span. */
	tsc_clock_add(&c, 1000000 + 5400000000u, 7000000100u);
	CHECK(tsc_clock_ns(&c, 1000000 + 5400000000u) == 7000000100u,
	      "new anchor");
	uint64_t got = tsc_clock_ns(&c, 1000000 + 5400000000u - 2700000);
	CHECK(got >= 6999000099u && got <= 6999000101u,
	      "1 ms before the new anchor: %llu", (unsigned long long)got);
}

/* The real clocks: readings of the TSC taken at known CLOCK_MONOTONIC
   times over 50 ms convert back to within a few microseconds, with the
   calibration's pairs read before and after them, as a drain does. */
static void
test_calibration(void)
{
	if (!tsc_usable()) {
		printf("calibration: skipped, no usable TSC\n");
		return;
	}
	enum { N = 50 };
	struct tsc_clock c = { 0 };
	uint64_t tsc[N], ns[N];
	bool sure[N];
	tsc_clock_sample(&c);
	for (int i = 0; i < N; i++) {
		spin_ns(1000000);
		uint64_t before = monotonic_ns();
		tsc[i] = ring_tsc();
		uint64_t after = monotonic_ns();
		ns[i] = before + (after - before) / 2;
		/* Preempted between the reads (a loaded VM, sanitizers): the
		   reference itself is off by that much; not a calibration
		   error. */
		sure[i] = after - before < 5000;
	}
	tsc_clock_sample(&c);
	uint64_t worst = 0;
	for (int i = 0; i < N; i++) {
		if (!sure[i])
			continue;
		uint64_t got = tsc_clock_ns(&c, tsc[i]);
		uint64_t err = got > ns[i] ? got - ns[i] : ns[i] - got;
		if (err > worst)
			worst = err;
	}
	printf("calibration: worst error over 50 ms: %llu ns\n",
	       (unsigned long long)worst);
	/* A millisecond would be a wrong --time-unit=ms figure; the bound
	   leaves room for a calibration pair taken across a preemption. */
	CHECK(worst < 100000, "worst error %llu ns",
	      (unsigned long long)worst);
}

/* Records written here as a stub would, stamped with TSC. */
static void
produce(struct ring_header *h, uint64_t a0, uint64_t tsc)
{
	uint32_t len = ring_rec_size(0, 0, 1);
	struct ring_record *r = ring_record_at(h, ring_reserve(h, len));
	r->kind = RING_REC_ALLOC;
	r->fn = HT_FN_MALLOC;
	r->tid = 42;
	r->npcs = 1;
	r->tsc = tsc;
	r->args[0] = a0;
	r->result = 0x1000 + a0;
	ring_record_pcs(r)[0] = 0x400000;
	ring_commit(r, len);
}

struct times {
	uint64_t ns[8];
	unsigned n;
};

static int
see_time(void *arg, const struct tracer_ring_item *it)
{
	struct times *t = arg;
	if (t->n < 8)
		t->ns[t->n] = it->time_ns;
	t->n++;
	return 0;
}

static void
test_drain_times(void)
{
	struct tracer_ring *r;
	if (tracer_ring_new(1 << 16, 8, 4, 8, 0, &r)) {
		fprintf(stderr, "tracer_ring_new failed\n");
		exit(EXIT_HARNESS);
	}
	struct ring_header *h = tracer_ring_header(r);
	struct times t = { 0 };
	produce(h, 1, 0);
	CHECK(tracer_ring_drain(r, 0, see_time, &t) == 1 && t.ns[0] == 0,
	      "unstamped ring: no times");
	CHECK(!(h->flags & RING_F_TSC), "no RING_F_TSC before stamping");
	if (!tsc_usable()) {
		printf("drain: skipped, no usable TSC\n");
		tracer_ring_free(r);
		return;
	}

	tracer_ring_stamp(r);
	CHECK(h->flags & RING_F_TSC, "RING_F_TSC");
	spin_ns(2000000);
	uint64_t when0 = monotonic_ns();
	uint64_t tsc0 = ring_tsc();
	spin_ns(1000000);
	uint64_t when1 = monotonic_ns();
	uint64_t tsc1 = ring_tsc();
	spin_ns(1000000);
	/* Made in this order, reserved in this one: the third's stamp is
	   behind the second's, as another CPU's may be; the fourth is the
	   first's again, far behind. */
	produce(h, 1, tsc0);
	produce(h, 2, tsc1);
	produce(h, 3, tsc1 - 500);
	produce(h, 4, tsc0);
	uint64_t tsc2 = ring_tsc();
	uint64_t when2 = monotonic_ns();
	produce(h, 5, tsc2);
	t.n = 0;
	CHECK(tracer_ring_drain(r, 0, see_time, &t) == 5, "5 records");
	/* Far below a millisecond, with room for a preemption between a
	   reference read and its TSC read on a loaded VM. */
	uint64_t slack = 100000;
	CHECK(t.ns[0] + slack > when0 && t.ns[0] < when0 + slack,
	      "first: %lld ns off", (long long)(t.ns[0] - when0));
	CHECK(t.ns[1] + slack > when1 && t.ns[1] < when1 + slack,
	      "second: %lld ns off", (long long)(t.ns[1] - when1));
	CHECK(t.ns[2] == t.ns[1], "a stamp behind the previous: its time");
	CHECK(t.ns[3] == t.ns[1], "far behind: still the previous time");
	CHECK(t.ns[4] + slack > when2 && t.ns[4] < when2 + slack,
	      "last: %lld ns off", (long long)(t.ns[4] - when2));
	printf("drain: times %lld, %lld and %lld ns off the clock\n",
	       (long long)(t.ns[0] - when0), (long long)(t.ns[1] - when1),
	       (long long)(t.ns[4] - when2));

	/* The next drain goes on from the last time given. */
	uint64_t last = t.ns[4];
	produce(h, 6, tsc0);
	t.n = 0;
	CHECK(tracer_ring_drain(r, 0, see_time, &t) == 1 && t.ns[0] == last,
	      "across drains: never back");
	tracer_ring_free(r);
}

static void
test_stack_copy_limit(void)
{
	struct tracer_ring *r;
	CHECK(tracer_ring_new(1 << 20, 8, 4, 8, RING_MAX_STACK_COPY + 1, &r) ==
		      -EINVAL,
	      "a stack copy too long for STACK_LEN");
	CHECK(tracer_ring_new(1 << 20, 8, 4, 8, RING_MAX_STACK_COPY, &r) == 0,
	      "the longest stack copy");
	tracer_ring_free(r);
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_flags();
	test_line();
	test_calibration();
	test_drain_times();
	test_stack_copy_limit();
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	return failures ? 1 : 0;
}
