/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The reader on fake interpreter structures built in this process and
   read back through its own pid: the remote walk of 3.10, 3.11 and 3.12
   layouts (thread check, segment marks, entry frames, instruction
   indexes, bounds), code objects (names, validation, reuse), and the
   splice (segments to evaluation frames, leftovers, no evaluation frame,
   truncation). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/synthframe.h"
#include "tests/check.h"
#include "tracer/python/pypriv.h"

static _Alignas(16) uint8_t code_type[64];

/* Every fake object made, freed at the end. */
static void *fakes[64];
static size_t n_fakes;

static void *
fake(void *p)
{
	if (n_fakes < sizeof(fakes) / sizeof(fakes[0]))
		fakes[n_fakes++] = p;
	return p;
}

/* A compact str object of TEXT with STATE (kind, compact, ascii bits;
   3.11's layout: ASCII text at +48). */
static uint8_t *
make_str_state(const char *text, uint32_t state)
{
	uint8_t *o = fake(calloc(1, 48 + strlen(text) + 1));
	uint64_t len = strlen(text);

	memcpy(o + 16, &len, 8);
	memcpy(o + 32, &state, 4);
	memcpy(o + 48, text, len);
	return o;
}

/* A compact ASCII str object of TEXT. */
static uint8_t *
make_str(const char *text)
{
	return make_str_state(text, 1u << 2 | 1u << 5 | 1u << 6);
}

static uint8_t *
make_bytes(const uint8_t *b, size_t n)
{
	uint8_t *o = fake(calloc(1, 32 + n + 1));
	uint64_t len = n;

	memcpy(o + 16, &len, 8);
	memcpy(o + 32, b, n);
	return o;
}

static void
put64(uint8_t *o, size_t off, uint64_t v)
{
	memcpy(o + off, &v, 8);
}

static void
put32(uint8_t *o, size_t off, int32_t v)
{
	memcpy(o + off, &v, 4);
}

/* Line table: each code unit its own line, FIRST + 1 + index (3.11's
   code 13 entries of one unit, +1 each). */
static const uint8_t one_per_unit[] = {
	0xe8, 0x02, 0xe8, 0x02, 0xe8, 0x02, 0xe8, 0x02,
	0xe8, 0x02, 0xe8, 0x02, 0xe8, 0x02, 0xe8, 0x02,
};

/* A 3.11 code object named QUAL in FILE, first line FIRST, incomplete
   before index TRACEABLE. */
static uint8_t *
make_code(const char *qual, const char *file, int first, int traceable)
{
	uint8_t *co = fake(aligned_alloc(16, 256));

	memset(co, 0, 256);
	put64(co, 8, (uint64_t)(uintptr_t)code_type);
	put64(co, 112, (uint64_t)(uintptr_t)make_str(file));
	put64(co, 120, (uint64_t)(uintptr_t)make_str("name"));
	put64(co, 128, (uint64_t)(uintptr_t)make_str(qual));
	put32(co, 72, first);
	put64(co, 136, (uint64_t)(uintptr_t)make_bytes(one_per_unit,
						      sizeof(one_per_unit)));
	put32(co, 168, traceable);
	return co;
}

/* An interpreter of 3.MINOR's layout reading this process, its eval
   loop at [0x1000, 0x2000) and its object at [0x1000, 0x3000). */
static struct py_interp *
fake_interp(unsigned minor, uint64_t runtime)
{
	struct py_interp *py = calloc(1, sizeof(*py));

	py->pid = getpid();
	CHECK(py_layout_from_table(py, minor, runtime), "3.%u", minor);
	py->minor = minor;
	py->code_type = (uint64_t)(uintptr_t)code_type;
	py->eval_lo = 0x1000, py->eval_hi = 0x2000;
	py->obj_lo = 0x1000, py->obj_hi = 0x3000;
	return py;
}

static uint64_t
addr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static const char *
name_of(uint64_t pc)
{
	const struct synth_frame *f = synth_frame_get(pc);
	static char buf[256];

	if (!f)
		return "(native)";
	snprintf(buf, sizeof(buf), "%s (%s:%u)", f->function, f->file, f->line);
	return buf;
}

/* OUT[I] is the frame named WANT. */
#define CHECK_FRAME(out, i, want) \
	CHECK(strcmp(name_of((out)[i]), want) == 0, "frame %d: %s, want %s", \
	      (int)(i), name_of((out)[i]), want)

/* 3.11: a thread state whose innermost frames are inner (entry: the
   outermost of its C call) then outer, <module> in a second call. */
static void
check_walk_311(void)
{
	_Alignas(16) uint8_t runtime[1024] = { 0 }, ts[256] = { 0 },
		cframe[64] = { 0 }, f1[96] = { 0 }, f2[96] = { 0 },
		f3[96] = { 0 };
	uint8_t *c_inner = make_code("inner", "/app/mod.py", 10, 0);
	uint8_t *c_outer = make_code("K.outer", "/app/mod.py", 20, 0);
	uint8_t *c_main = make_code("<module>", "<string>", 1, 0);
	struct py_interp *py = fake_interp(11, addr(runtime));
	uint64_t tcb = (uint64_t)pthread_self(), words[8];

	put64(runtime, 576, addr(ts));
	put64(ts, 152, tcb);
	put64(ts, 56, addr(cframe));
	put64(cframe, 8, addr(f1));
	/* f1: inner at index 3; f2: outer at 0, entry; f3: <module> at 5. */
	put64(f1, 32, addr(c_inner));
	put64(f1, 56, addr(c_inner) + 184 + 2 * 3);
	put64(f1, 48, addr(f2));
	put64(f2, 32, addr(c_outer));
	put64(f2, 56, addr(c_outer) + 184);
	f2[68] = 1;
	put64(f2, 48, addr(f3));
	put64(f3, 32, addr(c_main));
	put64(f3, 56, addr(c_main) + 184 + 2 * 5);
	f3[68] = 1;

	unsigned n = py_walk_remote(py, getpid(), tcb, words, 8);
	CHECK(n == 3, "3.11 walk: %u words", n);
	CHECK(py_word_code(words[0]) == addr(c_inner) &&
	      py_word_index(words[0]) == 3 && !py_word_segment_end(words[0]),
	      "word 0 %#llx", (unsigned long long)words[0]);
	CHECK(py_word_index(words[1]) == 0 && py_word_segment_end(words[1]),
	      "word 1 %#llx", (unsigned long long)words[1]);
	CHECK(py_word_index(words[2]) == 5 && py_word_segment_end(words[2]),
	      "word 2 %#llx", (unsigned long long)words[2]);
	CHECK(py_walk_remote(py, getpid(), tcb + 8, words, 8) == 0,
	      "another thread's tstate gives no frames");
	CHECK(py_walk_remote(py, getpid(), tcb, words, 2) == 2, "bound MAX");

	/* Splice: native A, eval, native B (a C extension), eval, main. */
	n = py_walk_remote(py, getpid(), tcb, words, 8);
	uint64_t pcs[] = { 0x5000, 0x1100, 0x7000, 0x1200, 0x2800 }, out[16];
	unsigned k = py_splice(py, pcs, 5, words, n, out, 16);
	CHECK(k == 6, "spliced %u", k);
	CHECK(out[0] == 0x5000, "native innermost kept");
	CHECK_FRAME(out, 1, "mod.inner (/app/mod.py:14)");
	CHECK_FRAME(out, 2, "mod.K.outer (/app/mod.py:21)");
	CHECK(out[3] == 0x7000, "native between kept");
	CHECK_FRAME(out, 4, "<module> (<string>:7)");
	CHECK(out[5] == 0x2800, "native outermost kept");

	/* One evaluation frame for two segments: the rest at the outermost. */
	uint64_t one_eval[] = { 0x5000, 0x1100, 0x2800 };
	uint64_t left = py_interp_stats(py)->leftover;
	k = py_splice(py, one_eval, 3, words, n, out, 16);
	CHECK(k == 5 && out[0] == 0x5000 && out[4] == 0x2800, "leftover: %u",
	      k);
	CHECK_FRAME(out, 3, "<module> (<string>:7)");
	CHECK(py_interp_stats(py)->leftover == left + 1, "leftover counted");

	/* No evaluation frame: after the innermost run in the object. */
	uint64_t no_eval[] = { 0x5000, 0x2100, 0x2200, 0x6000 };
	k = py_splice(py, no_eval, 4, words, n, out, 16);
	CHECK(k == 7 && out[2] == 0x2200 && out[6] == 0x6000, "no eval: %u",
	      k);
	CHECK_FRAME(out, 3, "mod.inner (/app/mod.py:14)");

	/* Truncated at MAX, innermost kept. */
	k = py_splice(py, pcs, 5, words, n, out, 3);
	CHECK(k == 3 && out[0] == 0x5000, "max: %u", k);
	CHECK_FRAME(out, 2, "mod.K.outer (/app/mod.py:21)");

	/* Incomplete (before _co_firsttraceable): skipped. */
	uint8_t *c_new = make_code("starting", "/app/mod.py", 30, 2);
	uint64_t inc[] = { py_word_make(addr(c_new), 1, 0), words[1],
			   words[2] };
	k = py_splice(py, pcs, 5, inc, 3, out, 16);
	CHECK(k == 5 && out[2] == 0x7000, "incomplete frame: %u", k);
	CHECK_FRAME(out, 1, "mod.K.outer (/app/mod.py:21)");

	/* Reuse: the address now holds another function (checked again
	   once the cache's epoch, a millisecond, has passed). */
	put64(c_inner, 128, addr(make_str("other")));
	put64(c_inner, 112, addr(make_str("/app/b.py")));
	usleep(2000);
	k = py_splice(py, pcs, 5, words, n, out, 16);
	CHECK_FRAME(out, 1, "b.other (/app/b.py:14)");

	/* Not a code object any more (freed since the record was made):
	   the name cached for it stays. */
	put64(c_inner, 8, 0);
	usleep(2000);
	k = py_splice(py, pcs, 5, words, n, out, 16);
	CHECK(k == 6, "freed code: %u", k);
	CHECK_FRAME(out, 1, "b.other (/app/b.py:14)");

	/* Never a code object when first seen: dropped, counted. */
	uint64_t bad = py_interp_stats(py)->code_invalid;
	uint8_t *c_gone = make_code("gone", "/app/mod.py", 40, 0);
	put64(c_gone, 8, 0);
	uint64_t gone[] = { py_word_make(addr(c_gone), 1, 0), words[1],
			    words[2] };
	k = py_splice(py, pcs, 5, gone, 3, out, 16);
	CHECK(k == 5 && out[2] == 0x7000,
	      "invalid code: %u, %s", k, name_of(out[1]));
	CHECK_FRAME(out, 1, "mod.K.outer (/app/mod.py:21)");
	CHECK(py_interp_stats(py)->code_invalid > bad, "invalid counted");

	/* A name whose state word is garbage (memory reused: the ASCII
	   flag beside 4-byte characters, one character): not a name, and
	   nothing read past its one byte of text (ASan). */
	uint8_t *c_torn = make_code("torn", "/app/mod.py", 50, 0);
	put64(c_torn, 128, addr(make_str_state("x", 4u << 2 | 1u << 5 |
							 1u << 6)));
	bad = py_interp_stats(py)->code_invalid;
	uint64_t torn[] = { py_word_make(addr(c_torn), 1, 0), words[1],
			    words[2] };
	k = py_splice(py, pcs, 5, torn, 3, out, 16);
	CHECK(k == 5 && out[2] == 0x7000, "torn name: %u, %s", k,
	      name_of(out[1]));
	CHECK(py_interp_stats(py)->code_invalid > bad, "torn name counted");
	py_interp_free(py);
}

/* 3.12: the GIL's holder, and entry frames owned by the C stack. */
static void
check_walk_312(void)
{
	_Alignas(16) uint8_t runtime[64] = { 0 }, interp[512] = { 0 },
		gil[64] = { 0 }, ts[256] = { 0 }, cframe[64] = { 0 },
		f1[96] = { 0 }, e1[96] = { 0 }, f2[96] = { 0 }, e2[96] = { 0 };
	struct py_interp *py = fake_interp(12, addr(runtime));
	uint64_t tcb = (uint64_t)pthread_self(), words[8];

	put64(runtime, 40, addr(interp));
	put64(interp, 384, addr(gil));
	put64(gil, 8, addr(ts));
	put64(ts, 136, tcb);
	put64(ts, 56, addr(cframe));
	put64(cframe, 0, addr(f1));
	put64(f1, 0, 0x7f0000001000ull);
	put64(f1, 56, 0x7f0000001000ull + 192 + 8);
	put64(f1, 8, addr(e1));
	e1[70] = PY_OWNED_BY_CSTACK;
	put64(e1, 8, addr(f2));
	put64(f2, 0, 0x7f0000002000ull);
	put64(f2, 56, 0x7f0000002000ull - 2); /* before its first: unknown */
	put64(f2, 8, addr(e2));
	e2[70] = PY_OWNED_BY_CSTACK;
	put64(e2, 8, 0x1235); /* not followable: the walk ends */

	unsigned n = py_walk_remote(py, getpid(), tcb, words, 8);
	CHECK(n == 2, "3.12 walk: %u words", n);
	CHECK(py_word_code(words[0]) == 0x7f0000001000ull &&
	      py_word_index(words[0]) == 4 && py_word_segment_end(words[0]),
	      "word 0 %#llx", (unsigned long long)words[0]);
	CHECK(py_word_index(words[1]) == PY_WORD_INDEX_UNKNOWN &&
	      py_word_segment_end(words[1]),
	      "word 1 %#llx", (unsigned long long)words[1]);
	/* A cycle of entry frames: the walk ends all the same. */
	put64(e2, 8, addr(e2));
	n = py_walk_remote(py, getpid(), tcb, words, 8);
	CHECK(n == 2, "a cycle of entry frames: %u words", n);
	/* A code pointer that cannot be one ends the walk, as in the stub. */
	put64(f2, 0, 0x7f0000002001ull);
	n = py_walk_remote(py, getpid(), tcb, words, 8);
	CHECK(n == 1, "a misaligned code pointer: %u words", n);
	put64(gil, 8, 0);
	CHECK(py_walk_remote(py, getpid(), tcb, words, 8) == 0,
	      "no holder, no frames");
	py_interp_free(py);
}

/* 3.10: every frame a call of its own, f_lasti in code units. */
static void
check_walk_310(void)
{
	_Alignas(16) uint8_t runtime[1024] = { 0 }, ts[256] = { 0 },
		f1[128] = { 0 }, f2[128] = { 0 };
	struct py_interp *py = fake_interp(10, addr(runtime));
	uint64_t tcb = (uint64_t)pthread_self(), words[8];

	put64(runtime, 568, addr(ts));
	put64(ts, 176, tcb);
	put64(ts, 24, addr(f1));
	put64(f1, 32, 0x7f0000003000ull);
	put32(f1, 96, 7);
	put64(f1, 24, addr(f2));
	put64(f2, 32, 0x7f0000004000ull);
	put32(f2, 96, -1);

	unsigned n = py_walk_remote(py, getpid(), tcb, words, 8);
	CHECK(n == 2, "3.10 walk: %u words", n);
	CHECK(py_word_index(words[0]) == 7 && py_word_segment_end(words[0]),
	      "word 0 %#llx", (unsigned long long)words[0]);
	CHECK(py_word_index(words[1]) == PY_WORD_INDEX_UNKNOWN &&
	      py_word_segment_end(words[1]),
	      "word 1 %#llx", (unsigned long long)words[1]);
	py_interp_free(py);
}

static void
check_names(void)
{
	char buf[128];

	py_code_display_name("K.m", "/srv/app/views.py", buf, sizeof(buf));
	CHECK(strcmp(buf, "views.K.m") == 0, "%s", buf);
	py_code_display_name("<module>", "<string>", buf, sizeof(buf));
	CHECK(strcmp(buf, "<module>") == 0, "%s", buf);
	py_code_display_name("f", "/srv/pkg/__init__.py", buf, sizeof(buf));
	CHECK(strcmp(buf, "pkg.f") == 0, "%s", buf);
	py_code_display_name("f", "rel.py", buf, sizeof(buf));
	CHECK(strcmp(buf, "rel.f") == 0, "%s", buf);
}

int
main(void)
{
	check_names();
	check_walk_311();
	check_walk_312();
	check_walk_310();
	synth_frame_reset();
	while (n_fakes)
		free(fakes[--n_fakes]);
	return failures ? 1 : 0;
}
