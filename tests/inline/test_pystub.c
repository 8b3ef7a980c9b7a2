/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The stub's walk of Python frames (tracer/python/pyword.h), run for real
   in this process: fake thread states and frames laid out in this test's
   memory as each CPython lays them out (the offsets of
   tracer/python's tables: 3.8-3.10 direct + f_lasti + every frame an
   entry, 3.11 direct + cframe + instruction pointer + is_entry, 3.12 the
   GIL's holder + cframe + pointer + CSTACK marks, 3.13 the GIL's holder +
   current_frame + pointer + CSTACK marks), and the words the records
   carry checked one by one (code, instruction index, segment ends), in
   walked, copied and sampled records. Then what must stop a walk without
   a fault: another thread's state, pointers not to be followed, a chain
   longer than MAX_FRAMES or one that loops; and no words at all while the
   parameters are zero. */
#include <stdlib.h>
#include <string.h>

#include "stubenv.h"
#include "tests/check.h"

/* The fake interpreter's memory: thread state, interpreter, GIL and
   frames, each in a slot of its own. */
#define SLOT 512
#define NSLOTS 16
static uint8_t mem[NSLOTS * SLOT] __attribute__((aligned(64)));
static uint64_t anchor; /* what the params' ANCHOR points at */

enum { S_TS, S_INTERP, S_GIL, S_F1, S_F2, S_F3, S_F4, S_F5, S_CODE };
#define CODE_A ((uint64_t)(mem + S_CODE * SLOT))
#define CODE_B (CODE_A + 1024)
#define CODE_C (CODE_A + 2048)

static uint64_t
slot(unsigned s)
{
	return (uint64_t)(mem + s * SLOT);
}

static void
put64(uint64_t at, int32_t off, uint64_t v)
{
	memcpy((void *)(at + (uint64_t)(int64_t)off), &v, 8);
}

static void
put32(uint64_t at, int32_t off, int32_t v)
{
	memcpy((void *)(at + (uint64_t)(int64_t)off), &v, 4);
}

static void
put8(uint64_t at, int32_t off, uint8_t v)
{
	*(uint8_t *)(at + (uint64_t)(int64_t)off) = v;
}

/* ---- The layouts (research offsets, x86-64) ---- */

static struct py_walk_params
params_38_310(int minor)
{
	return (struct py_walk_params){
		.anchor = (uint64_t)&anchor,
		.tstate_rule = PY_TSTATE_DIRECT,
		.first_rule = PY_FIRST_DIRECT,
		.instr_rule = minor == 10 ? PY_INSTR_LASTI_UNITS
					  : PY_INSTR_LASTI_BYTES,
		.entry_rule = PY_ENTRY_EVERY,
		.max_frames = PY_MAX_FRAMES,
		.ts_thread_id = 176,
		.ts_frame = 24,
		.f_back = 24,
		.f_code = 32,
		.f_instr = minor == 10 ? 96 : 104,
	};
}

static struct py_walk_params
params_311(void)
{
	return (struct py_walk_params){
		.anchor = (uint64_t)&anchor,
		.tstate_rule = PY_TSTATE_DIRECT,
		.first_rule = PY_FIRST_CFRAME,
		.instr_rule = PY_INSTR_POINTER,
		.entry_rule = PY_ENTRY_FLAG,
		.max_frames = PY_MAX_FRAMES,
		.ts_thread_id = 152,
		.ts_frame = 56,
		.cframe_current = 8,
		.f_back = 48,
		.f_code = 32,
		.f_instr = 56,
		.f_entry = 68,
		.code_adaptive = 184,
	};
}

static struct py_walk_params
params_312(void)
{
	return (struct py_walk_params){
		.anchor = (uint64_t)&anchor,
		.tstate_rule = PY_TSTATE_GIL,
		.first_rule = PY_FIRST_CFRAME,
		.instr_rule = PY_INSTR_POINTER,
		.entry_rule = PY_ENTRY_CSTACK,
		.max_frames = PY_MAX_FRAMES,
		.gil = 384,
		.holder = 8,
		.ts_thread_id = 136,
		.ts_frame = 56,
		.cframe_current = 0,
		.f_back = 8,
		.f_code = 0,
		.f_instr = 56,
		.f_entry = 70,
		.code_adaptive = 192,
	};
}

static struct py_walk_params
params_313(void)
{
	return (struct py_walk_params){
		.anchor = (uint64_t)&anchor,
		.tstate_rule = PY_TSTATE_GIL,
		.first_rule = PY_FIRST_DIRECT,
		.instr_rule = PY_INSTR_POINTER,
		.entry_rule = PY_ENTRY_CSTACK,
		.max_frames = PY_MAX_FRAMES,
		.gil = 16,
		.holder = 8,
		.ts_thread_id = 152,
		.ts_frame = 72,
		.f_back = 8,
		.f_code = 0,
		.f_instr = 56,
		.f_entry = 70,
		.code_adaptive = 200,
	};
}

/* The thread state for this thread (thread id TID), reached by P's rule,
   its innermost frame FIRST. */
static void
lay_tstate(const struct py_walk_params *p, uint64_t tid, uint64_t first)
{
	memset(mem, 0, sizeof(mem));
	uint64_t ts = slot(S_TS);
	if (p->tstate_rule == PY_TSTATE_DIRECT) {
		anchor = ts;
	} else {
		anchor = slot(S_INTERP);
		put64(slot(S_INTERP), p->gil, slot(S_GIL));
		put64(slot(S_GIL), p->holder, ts);
	}
	put64(ts, p->ts_thread_id, tid);
	if (p->first_rule == PY_FIRST_CFRAME) {
		/* The cframe lives in the thread state's slot, far out. */
		uint64_t cf = ts + 256;
		put64(ts, p->ts_frame, cf);
		put64(cf, p->cframe_current, first);
	} else {
		put64(ts, p->ts_frame, first);
	}
}

/* Frame F runs CODE at instruction INDEX (-1: an f_lasti of -1, or an
   instruction pointer before the code's first); ENTRY its is_entry or
   owner byte; BACK the next frame out. */
static void
lay_frame(const struct py_walk_params *p, uint64_t f, uint64_t code,
	  int index, uint8_t entry, uint64_t back)
{
	put64(f, p->f_code, code);
	put64(f, p->f_back, back);
	if (p->entry_rule != PY_ENTRY_EVERY)
		put8(f, p->f_entry, entry);
	switch (p->instr_rule) {
	case PY_INSTR_LASTI_BYTES:
		put32(f, p->f_instr, index < 0 ? -1 : index * 2);
		break;
	case PY_INSTR_LASTI_UNITS:
		put32(f, p->f_instr, index);
		break;
	default:
		put64(f, p->f_instr,
		      index < 0 ? code : code + (uint64_t)p->code_adaptive +
						 2 * (uint64_t)index);
		break;
	}
}

/* ---- Records ---- */

#define MAX_GOT 8

struct got {
	unsigned records;
	unsigned npcs[MAX_GOT];
	enum ring_copy copied[MAX_GOT];
	unsigned nwords[MAX_GOT];
	uint64_t words[MAX_GOT][PY_MAX_FRAMES];
};
static struct got got;

/* stubenv's on_item: each allocation's addresses and words. */
static int
grab(void *arg, const struct tracer_ring_item *it)
{
	(void)arg;
	if (it->rec->kind != RING_REC_ALLOC || got.records >= MAX_GOT)
		return 0;
	unsigned i = got.records++;
	got.npcs[i] = it->npcs;
	got.copied[i] = it->copied;
	got.nwords[i] = it->npywords;
	for (unsigned k = 0; k < it->npywords && k < PY_MAX_FRAMES; k++)
		got.words[i][k] = it->pywords[k];
	return 0;
}

/* One frame for a walk that gives up at once: the rule of every frame
   leaves the return address unknown. */
static bool
one_frame_rule(uint64_t pc, struct ring_rule *out)
{
	(void)pc;
	*out = (struct ring_rule){
		.kind = RING_RULE_CFI, .cfa_reg = RING_REG_RSP, .cfa_off = 8,
		.rsp = RING_LOC_CFA, .rbp = RING_LOC_SAME,
		.ra = RING_LOC_UNDEF,
	};
	return true;
}

static uint64_t
fake_malloc(uint64_t size)
{
	return 0x7e0000000000ULL + size;
}

/* One malloc through the stub with P published (NULL: none), walking
   (WALK addresses at most) or copying (WALK 0); its record into got. */
static void
one_call(const struct py_walk_params *p, unsigned walk)
{
	memset(&got, 0, sizeof(got));
	tracer_ring_walk_set(env.r, walk);
	tracer_ring_python_set(env.r, p);
	tramp1(0, 100);
	env_sync();
}

/* W is the word for CODE at INDEX, a segment's end when END. */
static bool
word_is(uint64_t w, uint64_t code, uint64_t index, int end)
{
	return w == py_word_make(code, index, end);
}

/* Run P's layout (already laid) walked and copied: three words, A at
   IDX_A (segment end END_A), B at 7 (END_B), C at 3 (always an end). */
static void
check_three(const char *what, const struct py_walk_params *p, uint64_t idx_a,
	    int end_a, int end_b)
{
	static const unsigned walks[] = { 8, 0 };
	for (unsigned k = 0; k < 2; k++) {
		one_call(p, walks[k]);
		CHECK(got.records == 1, "%s: %u records", what, got.records);
		CHECK(walks[k] ? got.npcs[0] == 1 && got.copied[0] == 0
			       : got.npcs[0] == 0 && got.copied[0] != 0,
		      "%s walk %u: %u native, copied %d", what, walks[k],
		      got.npcs[0], got.copied[0]);
		CHECK(got.nwords[0] == 3, "%s walk %u: %u words", what,
		      walks[k], got.nwords[0]);
		if (got.nwords[0] != 3)
			continue;
		CHECK(word_is(got.words[0][0], CODE_A, idx_a, end_a),
		      "%s: word 0 %#llx", what,
		      (unsigned long long)got.words[0][0]);
		CHECK(word_is(got.words[0][1], CODE_B, 7, end_b),
		      "%s: word 1 %#llx", what,
		      (unsigned long long)got.words[0][1]);
		CHECK(word_is(got.words[0][2], CODE_C, 3, 1),
		      "%s: word 2 %#llx", what,
		      (unsigned long long)got.words[0][2]);
	}
}

/* ---- The rule combinations ---- */

static void
test_38_310(void)
{
	for (int minor = 8; minor <= 10; minor++) {
		struct py_walk_params p = params_38_310(minor);
		lay_tstate(&p, env_tcb(), slot(S_F1));
		lay_frame(&p, slot(S_F1), CODE_A, 12, 0, slot(S_F2));
		lay_frame(&p, slot(S_F2), CODE_B, 7, 0, slot(S_F3));
		lay_frame(&p, slot(S_F3), CODE_C, 3, 0, 0);
		check_three(minor == 10 ? "3.10" : "3.8/3.9", &p, 12, 1, 1);
		/* f_lasti -1: not started, its line unknown. */
		lay_frame(&p, slot(S_F1), CODE_A, -1, 0, slot(S_F2));
		check_three("lasti -1", &p, PY_WORD_INDEX_UNKNOWN, 1, 1);
	}
}

static void
test_311(void)
{
	struct py_walk_params p = params_311();
	lay_tstate(&p, env_tcb(), slot(S_F1));
	/* A and B one C call of the loop (B its entry), C another. */
	lay_frame(&p, slot(S_F1), CODE_A, 40, 0, slot(S_F2));
	lay_frame(&p, slot(S_F2), CODE_B, 7, 1, slot(S_F3));
	lay_frame(&p, slot(S_F3), CODE_C, 3, 1, 0);
	check_three("3.11", &p, 40, 0, 1);
	lay_frame(&p, slot(S_F1), CODE_A, -1, 0, slot(S_F2));
	check_three("3.11 pointer before the code", &p, PY_WORD_INDEX_UNKNOWN,
		    0, 1);
	/* An index too large for its bits. */
	lay_frame(&p, slot(S_F1), CODE_A, 0x9000, 0, slot(S_F2));
	check_three("3.11 far index", &p, PY_WORD_INDEX_UNKNOWN, 0, 1);
}

/* 3.12 and 3.13: A, B, a CSTACK mark, C, a CSTACK mark. */
static void
check_cstack(const char *what, struct py_walk_params p)
{
	lay_tstate(&p, env_tcb(), slot(S_F1));
	lay_frame(&p, slot(S_F1), CODE_A, 5, 0, slot(S_F2));
	lay_frame(&p, slot(S_F2), CODE_B, 7, 1, slot(S_F3));
	/* The mark's code is not a code object (3.13: None). */
	lay_frame(&p, slot(S_F3), 0, 0, PY_OWNED_BY_CSTACK, slot(S_F4));
	lay_frame(&p, slot(S_F4), CODE_C, 3, 0, slot(S_F5));
	lay_frame(&p, slot(S_F5), 0, 0, PY_OWNED_BY_CSTACK, 0);
	check_three(what, &p, 5, 0, 1);
}

static void
test_312_313(void)
{
	check_cstack("3.12", params_312());
	check_cstack("3.13", params_313());
}

/* ---- What stops a walk ---- */

static void
test_other_thread(void)
{
	struct py_walk_params p = params_312();
	lay_tstate(&p, env_tcb() + 64, slot(S_F1));
	lay_frame(&p, slot(S_F1), CODE_A, 5, 0, 0);
	one_call(&p, 8);
	CHECK(got.records == 1 && got.nwords[0] == 0,
	      "the GIL held by another thread: %u words", got.nwords[0]);
	p = params_311();
	lay_tstate(&p, 0, slot(S_F1));
	lay_frame(&p, slot(S_F1), CODE_A, 5, 1, 0);
	one_call(&p, 0);
	CHECK(got.records == 1 && got.nwords[0] == 0,
	      "no thread holds the GIL: %u words", got.nwords[0]);
	anchor = 0;
	one_call(&p, 0);
	CHECK(got.records == 1 && got.nwords[0] == 0,
	      "no thread state: %u words", got.nwords[0]);
}

/* Pointers that would fault if read through: the walk stops before. */
static void
test_bad_pointers(void)
{
	static const uint64_t bad[] = {
		0x800,                  /* the first page */
		0xffff800000001000ULL,  /* the kernel's */
		0x0000800000000000ULL,  /* 2^47 */
		0,                      /* set below: unaligned */
	};
	struct py_walk_params p = params_313();
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t b = bad[i] ? bad[i] : slot(S_F4) + 4;
		lay_tstate(&p, env_tcb(), slot(S_F1));
		lay_frame(&p, slot(S_F1), CODE_A, 5, 0, slot(S_F2));
		lay_frame(&p, slot(S_F2), CODE_B, 7, 0, b);
		one_call(&p, 8);
		CHECK(got.records == 1 && got.nwords[0] == 2 &&
			      word_is(got.words[0][1], CODE_B, 7, 0),
		      "previous %#llx: %u words", (unsigned long long)b,
		      got.nwords[0]);
		/* The same pointer as a code object: no word for it. */
		lay_frame(&p, slot(S_F2), b, 7, 0, 0);
		one_call(&p, 8);
		CHECK(got.records == 1 && got.nwords[0] == 1,
		      "code %#llx: %u words", (unsigned long long)b,
		      got.nwords[0]);
		/* As the thread state, the interpreter, the GIL. */
		put64(slot(S_GIL), p.holder, b);
		one_call(&p, 8);
		CHECK(got.nwords[0] == 0, "holder %#llx", (unsigned long long)b);
		put64(slot(S_INTERP), p.gil, b);
		one_call(&p, 8);
		CHECK(got.nwords[0] == 0, "gil %#llx", (unsigned long long)b);
		anchor = b;
		one_call(&p, 8);
		CHECK(got.nwords[0] == 0, "interp %#llx", (unsigned long long)b);
		struct py_walk_params q = p;
		q.anchor = b;
		one_call(&q, 8);
		CHECK(got.nwords[0] == 0, "anchor %#llx", (unsigned long long)b);
	}
	/* 3.11's cframe. */
	p = params_311();
	lay_tstate(&p, env_tcb(), slot(S_F1));
	put64(slot(S_TS), p.ts_frame, 0x10);
	one_call(&p, 0);
	CHECK(got.nwords[0] == 0, "cframe 0x10: %u words", got.nwords[0]);
}

static void
test_bounds(void)
{
	/* A frame that is its own caller: MAX_FRAMES words. */
	struct py_walk_params p = params_311();
	lay_tstate(&p, env_tcb(), slot(S_F1));
	lay_frame(&p, slot(S_F1), CODE_A, 1, 0, slot(S_F1));
	one_call(&p, 8);
	CHECK(got.nwords[0] == PY_MAX_FRAMES, "a loop: %u words",
	      got.nwords[0]);
	p.max_frames = 5;
	one_call(&p, 0);
	CHECK(got.nwords[0] == 5, "max_frames 5: %u words", got.nwords[0]);
	p.max_frames = 1000;
	one_call(&p, 0);
	CHECK(got.nwords[0] == PY_MAX_FRAMES, "max_frames 1000: %u words",
	      got.nwords[0]);
	/* A loop of CSTACK marks records nothing and ends. */
	p = params_312();
	lay_tstate(&p, env_tcb(), slot(S_F1));
	lay_frame(&p, slot(S_F1), 0, 0, PY_OWNED_BY_CSTACK, slot(S_F1));
	one_call(&p, 8);
	CHECK(got.records == 1 && got.nwords[0] == 0,
	      "a loop of marks: %u words", got.nwords[0]);
	/* Off: not a word, the layout as it was. */
	lay_frame(&p, slot(S_F1), CODE_A, 2, 0, 0);
	one_call(NULL, 8);
	CHECK(got.records == 1 && got.npcs[0] == 1 && got.nwords[0] == 0,
	      "off: %u native, %u words", got.npcs[0], got.nwords[0]);
	p.max_frames = 0;
	one_call(&p, 0);
	CHECK(got.records == 1 && got.nwords[0] == 0, "max_frames 0: %u",
	      got.nwords[0]);
}

/* A sampled allocation carries its words too. */
static void
test_sampled(void)
{
	int err = env_init(1 << 20, 4096, 16);
	if (err || tracer_ring_sampling_set(env.r, 1, 1, 0)) {
		fprintf(stderr, "env_init/sampling_set failed\n");
		exit(EXIT_HARNESS);
	}
	env_fn(0, HT_FN_MALLOC, fake_malloc, 0, 0);
	env_thread_init();
	env.on_rule = one_frame_rule;
	env.on_item = grab;
	env_consumer_start(0);
	struct py_walk_params p = params_313();
	check_cstack("3.13 sampled", p);
	env_consumer_stop(true);
	env_fini();
}

int
main(void)
{
	int err = env_init(1 << 20, 4096, 16);
	if (err) {
		fprintf(stderr, "env_init: %s\n", strerror(-err));
		return EXIT_HARNESS;
	}
	env_thread_init();
	env_fn(0, HT_FN_MALLOC, fake_malloc, 0, 0);
	env.on_rule = one_frame_rule;
	env.on_item = grab;
	env_consumer_start(0);

	test_38_310();
	test_311();
	test_312_313();
	test_other_thread();
	test_bad_pointers();
	test_bounds();

	env_consumer_stop(true);
	env_fini();
	test_sampled();
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	return failures ? 1 : 0;
}
