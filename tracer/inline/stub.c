/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The code heaptrace writes into a target. A patched allocator function
   jumps to its trampoline, which jumps here; this records the call in the
   ring (ring.h) and calls the relocated original. Compiled freestanding
   into one position-independent blob (meson.build, gen_blob.py): no libc,
   no relocations, no data but the ring pointer slot the tracer fills. It is
   re-entrant (signal handlers allocate) and never depends on the tracer
   being there: it never traps, its only waits (for room in the ring, for
   the answer to a NOTIFY) are futex waits with a timeout that end when the
   consumer is gone (ring.h, "The stub never stops for the tracer"). */
#include <stdint.h>

#include "tracer/inline/ring.h"
#include "tracer/inline/sample.h"

#define HIDDEN __attribute__((visibility("hidden")))

/* What stub_entry pushes, lowest address first. The caller's return
   address follows, so &ret is rsp as it was at F's entry. */
struct stub_frame {
	uint64_t arg[6]; /* rdi rsi rdx rcx r8 r9 */
	uint64_t rbp, rbx, r12, r13, r14, r15;
	uint64_t idx;    /* r11: the descriptor index the trampoline set */
	uint64_t ret;
};

uint64_t stub_call(struct stub_frame *f) HIDDEN;

/* Defined by the assembly below and by the linker script. */
extern struct ring_header *stub_ring HIDDEN;
extern const uint8_t stub_blob_start[] HIDDEN;
extern const uint8_t stub_blob_end[] HIDDEN;

/* Offsets stub_fast reads (checked below). */
#define OFF_FLAGS 12
#define OFF_CONSUMER 48
#define OFF_FNS 256
#define OFF_FN_CLS 34
#define OFF_FN_INTERVAL 40
#define OFF_FN_HOMED 48
#define OFF_FN_MASK 56
#define OFF_FN_OBJ_LO 16
#define OFF_FN_OBJ_HI 24
#define OFF_FN_SIZE_ARGS 36
#define OFF_TSHIFT 44
#define OFF_THREADS 4096
#define OFF_T_OUTER_RSP 32
#define OFF_T_OUTER_LO 40
#define OFF_T_OUTER_HI 48
#define OFF_T_LEFT 64
#define OFF_T_CALLS 80
_Static_assert(__builtin_offsetof(struct ring_header, flags) == OFF_FLAGS,
	       "flags");
_Static_assert(__builtin_offsetof(struct ring_header, consumer) ==
		       OFF_CONSUMER,
	       "consumer");
_Static_assert(__builtin_offsetof(struct ring_header, fns) == OFF_FNS, "fns");
_Static_assert(__builtin_offsetof(struct ring_fn, cls) == OFF_FN_CLS, "cls");
_Static_assert(__builtin_offsetof(struct ring_fn, orig) == 0, "orig");
_Static_assert(sizeof(struct ring_fn) == 64, "descriptor stride");
_Static_assert(__builtin_offsetof(struct ring_fn, sample_interval) ==
		       OFF_FN_INTERVAL,
	       "sample_interval");
_Static_assert(__builtin_offsetof(struct ring_fn, set_homed_off) ==
		       OFF_FN_HOMED,
	       "set_homed_off");
_Static_assert(__builtin_offsetof(struct ring_fn, set_home_mask) ==
		       OFF_FN_MASK,
	       "set_home_mask");
_Static_assert(__builtin_offsetof(struct ring_fn, obj_lo) == OFF_FN_OBJ_LO &&
		       __builtin_offsetof(struct ring_fn, obj_hi) ==
			       OFF_FN_OBJ_HI &&
		       __builtin_offsetof(struct ring_fn, size_arg) ==
			       OFF_FN_SIZE_ARGS &&
		       __builtin_offsetof(struct ring_fn, size_mul) ==
			       OFF_FN_SIZE_ARGS + 1,
	       "the descriptor's fields stub_lean reads");
_Static_assert(__builtin_offsetof(struct ring_header, thread_shift) ==
			       OFF_TSHIFT &&
		       RING_HDR_FIXED == OFF_THREADS &&
		       sizeof(struct ring_thread) == 128,
	       "the thread table as stub_lean finds it");
_Static_assert(__builtin_offsetof(struct ring_thread, tcb) == 0 &&
		       __builtin_offsetof(struct ring_thread, outer_rsp) ==
			       OFF_T_OUTER_RSP &&
		       __builtin_offsetof(struct ring_thread, outer_lo) ==
			       OFF_T_OUTER_LO &&
		       __builtin_offsetof(struct ring_thread, outer_hi) ==
			       OFF_T_OUTER_HI &&
		       __builtin_offsetof(struct ring_thread, sample_left) ==
			       OFF_T_LEFT &&
		       __builtin_offsetof(struct ring_thread, sample_calls) ==
			       OFF_T_CALLS,
	       "the thread entry's fields stub_lean writes");
_Static_assert(RING_CLASS_ALLOC == 0 && RING_NO_ARG == 0xff,
	       "the constants stub_lean uses");
_Static_assert(RING_CLASS_FREE == 1 && RING_F_PASS == 1 &&
		       RING_F_SET_FULL == 4 &&
		       RING_CONSUMER_TID == 0x3fffffff &&
		       RING_CONSUMER_DIED == 0x40000000 &&
		       SAMPLE_SET_HASH_SHIFT == 49,
	       "the constants stub_fast uses");
#define STR(x) #x
#define XSTR(x) STR(x)

/* stub_fast: reached by `jmp` from a trampoline with r11 = descriptor
   index and every register as F's caller left it. When sampling, the
   free of a block not sampled, nearly every free, goes straight to the
   original with no frame at all (what stub_call would do, in rax, r10
   and r11 only, which a call may clobber: ring_recording and the set not
   overflowed on the header's first line, the free's descriptor, which
   holds what else it needs, the count at the block's home in the
   sampled-address set, sample.h's sample_set_may_hold, the home masked
   to the set's size by the descriptor's copy of the mask); pushing and
   popping the frame was half of such a free's cost. An allocation goes
   to stub_lean (below), everything else on to stub_entry (its own
   symbol: detaching reads its pushes), r11 as it came. stub_entry pushes struct stub_frame (rsp is 16-byte aligned
   after the 13 pushes, as the call needs), lets stub_call do the work,
   then restores the callee-saved registers it captured (stub_call
   preserves them anyway) and returns F's rax to F's caller. stub_ring is the slot the tracer
   fills with the header's address; it lives in the blob so the code
   reaches it RIP-relative, as the hash's multiplier does.

   stub_lean: an allocation when sampling, not sampled, nearly every one,
   also without stub_entry's frame: what stub_alloc_fast does, for the
   classes whose size is rdi, rdi * rsi (both below 2^32, else the full
   path) or rsi. Recording, the thread at its home in the first segment
   with no call in progress (outer_rsp 0: an internal call, or a signal
   handler's while the thread is in one, goes the whole way), the size
   below the interval and the counter left above it: the counter goes
   down, outer_* mark the call in progress as call_outer would, and the
   original is called with every argument register as it came, the
   descriptor index pushed first (it aligns the stack, and marks the
   frame for detaching: stub_lean_ret, then that index, then the
   caller's return address; inline_detach.c). After it, outer_rsp is
   cleared only while recording (a detach may have unmapped the thread
   table), the entry found again from fs:0 (entries do not move while
   their thread lives). Anything else goes to stub_entry with every
   register as it came, r11 again the index; rcx and rdx, pushed for
   scratch, are popped first. */
__asm__(
	"	.text\n"
	"	.globl	stub_fast\n"
	"	.hidden	stub_fast\n"
	"	.type	stub_fast, @function\n"
	"	.balign	16\n"
	"stub_fast:\n"
	"	movq	stub_ring(%rip), %rax\n"
	"	movq	%r11, %r10\n"
	"	shlq	$6, %r10\n"
	"	cmpq	$0, " XSTR(OFF_FNS) " + " XSTR(OFF_FN_INTERVAL) "(%rax,%r10)\n"
	"	je	stub_entry\n"
	"	cmpw	$1, " XSTR(OFF_FNS) " + " XSTR(OFF_FN_CLS) "(%rax,%r10)\n"
	"	jne	stub_lean\n"
	"	movl	" XSTR(OFF_CONSUMER) "(%rax), %r11d\n"
	"	testl	$0x3fffffff, %r11d\n"
	"	je	3f\n"
	"	testl	$0x40000000, %r11d\n"
	"	jne	3f\n"
	"	testl	$5, " XSTR(OFF_FLAGS) "(%rax)\n"
	"	jne	3f\n"
	"	testq	%rdi, %rdi\n"
	"	je	2f\n"
	"	movq	%rdi, %r11\n"
	"	shrq	$4, %r11\n"
	"	imulq	stub_golden(%rip), %r11\n"
	"	shrq	$49, %r11\n"
	"	andq	" XSTR(OFF_FNS) " + " XSTR(OFF_FN_MASK) "(%rax,%r10), %r11\n"
	"	addq	" XSTR(OFF_FNS) " + " XSTR(OFF_FN_HOMED) "(%rax,%r10), %r11\n"
	"	cmpb	$0, (%rax,%r11)\n"
	"	jne	3f\n"
	"2:	jmpq	*" XSTR(OFF_FNS) "(%rax,%r10)\n"
	"3:	movq	%r10, %r11\n"
	"	shrq	$6, %r11\n"
	"	.size	stub_fast, . - stub_fast\n"
	"	.globl	stub_entry\n"
	"	.hidden	stub_entry\n"
	"	.type	stub_entry, @function\n"
	"stub_entry:\n"
	"	pushq	%r11\n"
	"	pushq	%r15\n"
	"	pushq	%r14\n"
	"	pushq	%r13\n"
	"	pushq	%r12\n"
	"	pushq	%rbx\n"
	"	pushq	%rbp\n"
	"	pushq	%r9\n"
	"	pushq	%r8\n"
	"	pushq	%rcx\n"
	"	pushq	%rdx\n"
	"	pushq	%rsi\n"
	"	pushq	%rdi\n"
	"	movq	%rsp, %rdi\n"
	"	call	stub_call\n"
	"	addq	$48, %rsp\n"
	"	popq	%rbp\n"
	"	popq	%rbx\n"
	"	popq	%r12\n"
	"	popq	%r13\n"
	"	popq	%r14\n"
	"	popq	%r15\n"
	"	addq	$8, %rsp\n"
	"	ret\n"
	"	.size	stub_entry, . - stub_entry\n"
	"	.type	stub_lean, @function\n"
	"stub_lean:\n"
	"	cmpw	$0, " XSTR(OFF_FNS) " + " XSTR(OFF_FN_CLS) "(%rax,%r10)\n"
	"	jne	18f\n"
	"	movl	" XSTR(OFF_CONSUMER) "(%rax), %r11d\n"
	"	testl	$0x3fffffff, %r11d\n"
	"	je	18f\n"
	"	testl	$0x40000000, %r11d\n"
	"	jne	18f\n"
	"	testl	$1, " XSTR(OFF_FLAGS) "(%rax)\n"
	"	jne	18f\n"
	"	pushq	%rcx\n"
	"	pushq	%rdx\n"
	"	movq	%fs:0, %rdx\n"
	"	movq	%rdx, %r11\n"
	"	imulq	stub_golden(%rip), %r11\n"
	"	movl	" XSTR(OFF_TSHIFT) "(%rax), %ecx\n"
	"	shrq	%cl, %r11\n"
	"	shlq	$7, %r11\n"
	"	addq	%rax, %r11\n"
	"	cmpq	%rdx, " XSTR(OFF_THREADS) "(%r11)\n"
	"	jne	17f\n"
	"	cmpq	$0, " XSTR(OFF_THREADS) " + " XSTR(OFF_T_OUTER_RSP) "(%r11)\n"
	"	jne	17f\n"
	"	movzwl	" XSTR(OFF_FNS) " + " XSTR(OFF_FN_SIZE_ARGS) "(%rax,%r10), %ecx\n"
	"	movq	%rdi, %rdx\n"
	"	cmpl	$0xff00, %ecx\n"
	"	je	13f\n"
	"	cmpl	$0x0100, %ecx\n"
	"	jne	12f\n"
	"	orq	%rsi, %rdx\n"
	"	shrq	$32, %rdx\n"
	"	jne	17f\n"
	"	movq	%rdi, %rdx\n"
	"	imulq	%rsi, %rdx\n"
	"	jmp	13f\n"
	"12:	cmpl	$0xff01, %ecx\n"
	"	jne	17f\n"
	"	movq	%rsi, %rdx\n"
	"13:	cmpq	" XSTR(OFF_FNS) " + " XSTR(OFF_FN_INTERVAL) "(%rax,%r10), %rdx\n"
	"	jae	17f\n"
	"	movq	" XSTR(OFF_THREADS) " + " XSTR(OFF_T_LEFT) "(%r11), %rcx\n"
	"	cmpq	%rdx, %rcx\n"
	"	jle	17f\n"
	"	subq	%rdx, %rcx\n"
	"	movq	%rcx, " XSTR(OFF_THREADS) " + " XSTR(OFF_T_LEFT) "(%r11)\n"
	"	addq	$1, " XSTR(OFF_THREADS) " + " XSTR(OFF_T_CALLS) "(%r11)\n"
	"	movq	" XSTR(OFF_FNS) " + " XSTR(OFF_FN_OBJ_LO) "(%rax,%r10), %rcx\n"
	"	movq	%rcx, " XSTR(OFF_THREADS) " + " XSTR(OFF_T_OUTER_LO) "(%r11)\n"
	"	movq	" XSTR(OFF_FNS) " + " XSTR(OFF_FN_OBJ_HI) "(%rax,%r10), %rcx\n"
	"	movq	%rcx, " XSTR(OFF_THREADS) " + " XSTR(OFF_T_OUTER_HI) "(%r11)\n"
	"	leaq	16(%rsp), %rcx\n"
	"	movq	%rcx, " XSTR(OFF_THREADS) " + " XSTR(OFF_T_OUTER_RSP) "(%r11)\n"
	"	popq	%rdx\n"
	"	popq	%rcx\n"
	"	movq	%r10, %r11\n"
	"	shrq	$6, %r11\n"
	"	pushq	%r11\n"
	"	call	*" XSTR(OFF_FNS) "(%rax,%r10)\n"
	"	.globl	stub_lean_ret\n"
	"	.hidden	stub_lean_ret\n"
	"stub_lean_ret:\n"
	"	addq	$8, %rsp\n"
	"	movq	stub_ring(%rip), %r10\n"
	"	movl	" XSTR(OFF_CONSUMER) "(%r10), %ecx\n"
	"	testl	$0x3fffffff, %ecx\n"
	"	je	15f\n"
	"	testl	$0x40000000, %ecx\n"
	"	jne	15f\n"
	"	testl	$1, " XSTR(OFF_FLAGS) "(%r10)\n"
	"	jne	15f\n"
	"	movq	%fs:0, %r11\n"
	"	imulq	stub_golden(%rip), %r11\n"
	"	movl	" XSTR(OFF_TSHIFT) "(%r10), %ecx\n"
	"	shrq	%cl, %r11\n"
	"	shlq	$7, %r11\n"
	"	movq	$0, " XSTR(OFF_THREADS) " + " XSTR(OFF_T_OUTER_RSP) "(%r10,%r11)\n"
	"15:	ret\n"
	"17:	popq	%rdx\n"
	"	popq	%rcx\n"
	"18:	movq	%r10, %r11\n"
	"	shrq	$6, %r11\n"
	"	jmp	stub_entry\n"
	"	.globl	stub_lean_end\n"
	"	.hidden	stub_lean_end\n"
	"stub_lean_end:\n"
	"	.size	stub_lean, . - stub_lean\n"
	"	.balign	8\n"
	"stub_golden:\n"
	"	.quad	0x9e3779b97f4a7c15\n"
	"	.globl	stub_ring\n"
	"	.hidden	stub_ring\n"
	"	.type	stub_ring, @object\n"
	"stub_ring:\n"
	"	.quad	0\n"
	"	.size	stub_ring, 8\n");

typedef uint64_t (*orig_fn)(uint64_t, uint64_t, uint64_t, uint64_t,
			    uint64_t, uint64_t);

static inline uint64_t
call_orig(const struct ring_fn *d, const struct stub_frame *f)
{
	return ((orig_fn)d->orig)(f->arg[0], f->arg[1], f->arg[2], f->arg[3],
				  f->arg[4], f->arg[5]);
}

/* A raw system call: the stub has no libc. */
static inline int64_t
sys3(int64_t nr, uint64_t a, uint64_t b, uint64_t c)
{
	int64_t ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}

#define SYS_FUTEX 202
#define SYS_GETTID 186
#define SYS_ARCH_PRCTL 158
#define ARCH_GET_FS 0x1003
#define FUTEX_WAIT 0 /* shared: the word is in a MAP_SHARED file */

struct stub_timespec {
	int64_t sec, nsec;
};

/* Sleep while *WORD is SEEN, at most NS (or until a signal). */
static void
futex_wait(uint32_t *word, uint32_t seen, uint64_t ns)
{
	struct stub_timespec ts = { (int64_t)(ns / 1000000000ULL),
				    (int64_t)(ns % 1000000000ULL) };
	register uint64_t r10 __asm__("r10") = (uint64_t)&ts;
	int64_t ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"((int64_t)SYS_FUTEX), "D"(word),
			   "S"((uint64_t)FUTEX_WAIT), "d"((uint64_t)seen),
			   "r"(r10)
			 : "rcx", "r11", "memory");
	(void)ret;
}

static inline void
stat_add(uint64_t *counter)
{
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

/* Copy without a call: the compiler may not synthesise memcpy here. */
static inline void
copy_bytes(void *dst, const void *src, uint64_t n)
{
	__asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n)
			 : : "memory");
}

static void ask(struct ring_header *h, const struct stub_frame *f,
		const struct ring_fn *d, uint16_t kind);

/* The calling thread's entry. The tracer fills every thread's entry
   before it runs, when it can: a thread whose thread pointer was not set
   up then (the main thread of a static program) asks for it once. 0 when
   there is still none: that call is made unrecorded. */
static struct ring_thread *
thread_find(struct ring_header *h, const struct stub_frame *f,
	    const struct ring_fn *d)
{
	uint64_t tcb;
	__asm__("movq %%fs:0, %0" : "=r"(tcb));
	struct ring_thread *t = ring_thread_lookup(h, tcb);
	if (t)
		return t;
	ask(h, f, d, RING_REC_THREAD);
	t = ring_thread_lookup(h, tcb);
	if (!t)
		stat_add(&h->stats.miss_pass);
	return t;
}

/* A call made while one of ours is in progress lower on this thread's
   stack, returning into that call's object or into this blob (a tail call
   from an original), is part of that call: Massif reports the outermost.
   A signal handler's call returns into user code and is its own. */
static inline int
is_internal(const struct ring_thread *t, uint64_t ret, uint64_t rsp)
{
	if (t->outer_rsp <= rsp)
		return 0;
	return (ret >= t->outer_lo && ret < t->outer_hi) ||
	       (ret >= (uint64_t)stub_blob_start &&
		ret < (uint64_t)stub_blob_end);
}

/* Mark a call in progress (RSP 0: none) for is_internal, saving the
   previous state in *SAVED when not 0. Only a signal handler on this thread
   reads these concurrently, so compiler ordering is enough: rsp, which
   validates the range, is cleared first and set last. */
static inline void
outer_set(struct ring_thread *t, uint64_t rsp, uint64_t lo, uint64_t hi,
	  struct ring_thread *saved)
{
	volatile struct ring_thread *vt = t;
	if (saved) {
		saved->outer_rsp = vt->outer_rsp;
		saved->outer_lo = vt->outer_lo;
		saved->outer_hi = vt->outer_hi;
	}
	vt->outer_rsp = 0;
	vt->outer_lo = lo;
	vt->outer_hi = hi;
	vt->outer_rsp = rsp;
}

/* ---- Walking the stack (docs/inline-backend.md, "Unwinding in the stub")
   ---- */

static void ask_rule(struct ring_header *h, const struct ring_thread *t,
		     const struct stub_frame *f, const struct ring_fn *d,
		     uint64_t at, const struct ring_walk *w);

/* The rule for lookup pc AT of the frame W is in; a miss asks the tracer
   for it. 0 when there is still none: the stack is to be copied instead
   (the tracer then publishes the rules of its frames as it unwinds it). */
static const struct ring_rule *
rule_find(struct ring_header *h, const struct ring_thread *t,
	  const struct stub_frame *f, const struct ring_fn *d, uint64_t at,
	  const struct ring_walk *w)
{
	if (!at)
		return 0; /* the table's empty key; only garbage leads here */
	const struct ring_rule *ru = ring_rule_lookup(h, at);
	if (ru)
		return ru;
	stat_add(&h->stats.rule_misses);
	ask_rule(h, t, f, d, at, w);
	return ring_rule_lookup(h, at);
}

/* Copy a memo frame without a call (no memcpy in the stub). */
static inline void
memo_frame_copy(struct ring_memo_frame *dst, const struct ring_memo_frame *src)
{
	const uint64_t *s = (const uint64_t *)src;
	uint64_t *d = (uint64_t *)dst;
	for (unsigned i = 0; i < sizeof(*src) / 8; i++)
		d[i] = s[i];
}

/* The memo M of thread T for a walk from entry rsp RSP, marked busy, or 0
   when there is none, or a walk lower on this stack is using it. */
static inline struct ring_memo *
memo_claim(struct ring_header *h, const struct ring_thread *t, uint64_t rsp)
{
	if (!h->walk_memo)
		return 0;
	struct ring_memo *m = ring_memo(h, t);
	if (!m)
		return 0;
	volatile struct ring_memo *vm = m;
	uint64_t busy = vm->busy;
	if (busy && rsp < busy)
		return 0; /* we interrupt that walk */
	if (busy)
		vm->n = 0; /* left half done, or in use above: drop it */
	vm->busy = rsp;
	vm->seq++;
	__asm__ volatile("" ::: "memory");
	return m;
}

static inline void
memo_release(struct ring_memo *m)
{
	__asm__ volatile("" ::: "memory");
	((volatile struct ring_memo *)m)->busy = 0;
}

/* The memo's side of a walk: the memo as the walk found it (its own copy
   of the counts, so that a nested walk changing them cannot make it read
   outside), where it stands (frames not yet passed, the first frame known
   not to hold), and what it gave. */
struct memo_walk {
	struct ring_memo *m;
	uint64_t seq;    /* m->seq after the claim */
	uint32_t n;      /* m->n, m->outer and m->cur then */
	uint32_t outer;
	uint32_t cur;
	uint32_t cursor; /* memo frames 0..CURSOR-1 still ahead */
	uint32_t limit;  /* a match must lie below this frame */
	uint32_t match;  /* the memo frame matched, plus one; 0: none */
	uint32_t taken;  /* frames the walk took from the memo */
	int recording;   /* the walk's frames go to the free inner part */
};

/* The memo's frame I (below MW->n), counted from the outermost. */
static inline const struct ring_memo_frame *
memo_at(const struct memo_walk *mw, uint32_t i)
{
	return i < mw->outer ? &mw->m->f[i]
			     : &mw->m->inner[mw->cur][mw->n - 1 - i];
}

/* Whether memo frame MF is the frame W stands in, whose address is PC
   (INNER: it is the walk's first). */
static inline int
memo_frame_same(const struct ring_memo_frame *mf, uint64_t pc,
		const struct ring_walk *w, uint8_t inner)
{
	return mf->pc == pc && mf->rsp == w->rsp && mf->rbp == w->rbp &&
	       mf->known == (uint8_t)(w->known | inner);
}

/* Whether the words memo frame MF read still hold their values, each at
   or above LO: 0 if so. A word below LO is read all the same, branch-free:
   an earlier walk of this stack (the memo's stack top is the thread's)
   read it between that walk's entry rsp and the top, memory a thread's
   stack keeps mapped while the thread lives. */
static inline uint64_t
memo_frame_differs(const struct ring_memo_frame *mf, uint64_t lo)
{
	uint64_t differ = 0;
	for (unsigned r = 0; r < mf->nreads; r++) {
		uint64_t at = mf->rsp + (uint64_t)(int64_t)mf->off[r];
		differ |= (uint64_t)(at < lo);
		differ |= *(const volatile uint64_t *)(uintptr_t)at ^
			  mf->val[r];
	}
	return differ;
}

/* Whether every word the memo's frames 0..J read still holds, each at or
   above LO. Returns J + 1 if so, else the first frame whose words do not
   (no walk that shares it can use the memo). */
static inline uint32_t
memo_check(const struct memo_walk *mw, uint32_t j, uint64_t lo)
{
	for (uint32_t i = 0; i <= j; i++)
		if (memo_frame_differs(memo_at(mw, i), lo))
			return i;
	return j + 1;
}

/* At frame N - 1 of a walk (state W, address PCS[N - 1]): when the memo
   has that frame and every word from there on holds, its outer frames
   into PCS (up to MAX in all) and the new count; else 0 (walk on). */
static inline uint32_t
memo_try(struct memo_walk *mw, const struct ring_walk *w, uint64_t *pcs,
	 uint32_t n, uint32_t max, uint8_t inner)
{
	const struct ring_memo *m = mw->m;
	while (mw->cursor && memo_at(mw, mw->cursor - 1)->rsp < w->rsp)
		mw->cursor--;
	if (!mw->cursor || mw->cursor > mw->limit)
		return 0;
	uint32_t j = mw->cursor - 1;
	if (!memo_frame_same(memo_at(mw, j), pcs[n - 1], w, inner))
		return 0;
	/* A capped memo knows nothing past its frame 0: enough only if the
	   walk would stop at MAX before it. */
	if (m->capped && n + j < max)
		return 0;
	uint32_t ok = memo_check(mw, j, w->lo);
	if (ok <= j) {
		mw->limit = ok;
		return 0;
	}
	uint32_t k = j < max - n ? j : max - n;
	for (uint32_t i = 0; i < k; i++)
		pcs[n + i] = memo_at(mw, j - 1 - i)->pc;
	mw->match = j + 1;
	mw->taken = k;
	return n + k;
}

/* Note the state of frame N - 1 (address PC) in the free inner part, its
   reads to follow; stop recording past its room. */
static inline void
memo_note_frame(struct memo_walk *mw, struct ring_walk *w, uint32_t n,
		uint64_t pc, uint8_t inner)
{
	if (!mw->recording)
		return;
	if (n > RING_MEMO_FRAMES) {
		mw->recording = 0;
		w->rec = 0;
		return;
	}
	struct ring_memo_frame *r = &mw->m->inner[!mw->cur][n - 1];
	r->pc = pc;
	r->rsp = w->rsp;
	r->rbp = w->rbp;
	r->known = (uint8_t)(w->known | inner);
	r->nreads = 0;
	w->rec = r;
}

/* Make the memo the memo's frames 0..KEEP-1 and, inside them, the OWN
   frames just noted (gen GEN, stack top HI, CAPPED as the outermost
   frame's walk was). */
static inline void
memo_store(const struct memo_walk *mw, uint32_t keep, uint32_t own,
	   uint8_t capped, uint64_t gen, uint64_t hi)
{
	struct ring_memo *m = mw->m;
	m->n = 0; /* a nested walk finds none while this is half done */
	__asm__ volatile("" ::: "memory");
	/* The kept frames of the inner part join the outer one. */
	for (uint32_t i = mw->outer; i < keep; i++)
		memo_frame_copy(&m->f[i], &m->inner[mw->cur][mw->n - 1 - i]);
	m->outer = (uint16_t)keep;
	m->cur = (uint8_t)!mw->cur;
	m->gen = gen;
	m->hi = hi;
	m->capped = capped;
	__asm__ volatile("" ::: "memory");
	m->n = keep + own;
	__asm__ volatile("" ::: "memory");
	/* A handler's walk that took the memo before the count was stored
	   may have written any part of it: none is trusted. */
	if (((volatile struct ring_memo *)m)->seq != mw->seq)
		m->n = 0;
}

/* After a walk of N frames that is to be trusted: the memo made to hold
   it, when it fits (a walk cut short at MAX that took memo frames leaves
   the memo as it was: its outer frames are not the memo's). */
static void
memo_after(struct memo_walk *mw, const struct ring_walk *w, uint32_t n,
	   uint32_t max, uint64_t gen, uint64_t hi)
{
	struct ring_memo *m = mw->m;
	m->walks++;
	m->walked += n;
	if (mw->match) {
		uint32_t j = mw->match - 1;
		m->hits++;
		m->reused += mw->taken;
		uint32_t own = n - mw->taken - 1; /* before the matched frame */
		if (mw->taken == j && mw->recording && !w->rec_bad &&
		    j + 1 + own <= RING_MEMO_FRAMES)
			memo_store(mw, j + 1, own, m->capped, gen, hi);
		return;
	}
	if (mw->recording && !w->rec_bad)
		memo_store(mw, 0, n, n == max, gen, hi);
}

/* Walk the stack of the call F (entry registers in FR) into PCS, at most
   MAX addresses: F's entry, then each caller's return address, exactly as
   far as the tracer's unwinder goes. Returns how many, or 0 and *WHY when
   the stack is to be copied for the tracer to unwind instead; *HIT is set
   when frames came from the memo M (0: walk every frame). Runs at F's
   return: nothing F did changed the stack above its entry rsp. */
static uint32_t
walk(struct ring_header *h, const struct ring_thread *t,
     const struct stub_frame *fr, const struct ring_fn *d, uint64_t *pcs,
     uint32_t max, uint8_t *why, struct ring_memo *m, int *hit)
{
	uint64_t gen = __atomic_load_n(&h->rule_gen, __ATOMIC_ACQUIRE);
	uint64_t rsp = (uint64_t)&fr->ret;
	struct ring_walk w = {
		.rsp = rsp,
		.rbp = fr->rbp,
		.ra = d->entry,
		.known = RING_WALK_RSP | RING_WALK_RBP | RING_WALK_RA,
		.lo = rsp,
		.hi = t->stack_hi,
		.bias = 0, /* the stack itself */
	};
	struct memo_walk mw = { .m = m };
	if (m) {
		mw.seq = m->seq;
		mw.n = m->n;
		mw.outer = m->outer;
		mw.cur = m->cur & 1;
		if (mw.n > RING_MEMO_FRAMES || mw.outer > mw.n)
			mw.n = mw.outer = 0; /* torn by a handler: none */
		int fresh = m->gen == gen && m->hi == t->stack_hi;
		mw.cursor = fresh ? mw.n : 0;
		mw.limit = mw.cursor;
		mw.recording = 1;
	}
	uint64_t at = d->entry; /* the innermost frame: at its pc */
	uint8_t inner = RING_MEMO_INNERMOST;
	uint32_t n = 0;
	*why = RING_COPY_NONE;
	*hit = 0;
	pcs[n++] = d->entry;
	for (;;) {
		if (m) {
			uint32_t got = memo_try(&mw, &w, pcs, n, max, inner);
			if (got) {
				n = got;
				*hit = 1;
				break;
			}
			memo_note_frame(&mw, &w, n, pcs[n - 1], inner);
		}
		if (n >= max)
			break;
		const struct ring_rule *ru = rule_find(h, t, fr, d, at, &w);
		if (!ru || ru->kind == RING_RULE_COPY) {
			*why = RING_COPY_RULE;
			break;
		}
		int ok = ring_walk_step(&w, ru);
		if (ok < 0) {
			*why = RING_COPY_BOUNDS;
			break;
		}
		if (!ok || w.ra == 0)
			break;
		pcs[n++] = w.ra;
		at = w.ra - 1; /* inside the call instruction */
		inner = 0;
	}
	/* Every rule read above came from one state of the table, or what
	   they led to is not to be trusted, the reason to copy included. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if ((gen & 1) ||
	    __atomic_load_n(&h->rule_gen, __ATOMIC_RELAXED) != gen)
		*why = RING_COPY_RESET;
	if (*why != RING_COPY_NONE)
		return 0;
	if (m) {
		__asm__ volatile("" ::: "memory");
		if (((volatile struct ring_memo *)m)->seq != mw.seq) {
			/* A walk in a handler took the memo meanwhile: what
			   this one took or noted may be its. */
			*hit = -1;
			return n;
		}
		memo_after(&mw, &w, n, max, gen, t->stack_hi);
	}
	return n;
}

/* A walk into PCS (MAX) by the memo M of the thread when it has one; under
   RING_MEMO_CHECK, a walk that took the memo's frames is made again
   without it, and that one is kept (a difference counted). */
static uint32_t
walk_stack(struct ring_header *h, const struct ring_thread *t,
	   const struct stub_frame *fr, const struct ring_fn *d, uint64_t *pcs,
	   uint32_t max, uint8_t *why)
{
	struct ring_memo *m = memo_claim(h, t, (uint64_t)&fr->ret);
	int hit;
	uint32_t n = walk(h, t, fr, d, pcs, max, why, m, &hit);
	if (hit < 0) {
		/* Interrupted by a walk that took the memo: again, without. */
		n = walk(h, t, fr, d, pcs, max, why, 0, &hit);
		return n; /* the memo is the handler's now: not released */
	}
	if (m && hit && h->walk_memo == RING_MEMO_CHECK) {
		uint64_t full[max];
		int again;
		uint32_t k = walk(h, t, fr, d, full, max, why, 0, &again);
		int same = k == n;
		for (uint32_t i = 0; same && i < n; i++)
			same = full[i] == pcs[i];
		/* K 0: the table was emptied meanwhile, and *WHY says so:
		   the record copies, and there was nothing to compare. */
		if (!same && k)
			m->differed++;
		if (!same) {
			for (uint32_t i = 0; i < k; i++)
				pcs[i] = full[i];
			n = k;
		}
	}
	if (m)
		memo_release(m);
	return n;
}

/* ---- Python frames (tracer/python/pyword.h) ----

   Unlike the native walk, which reads only the thread's own stack
   between bounds known to be mapped, this one follows pointers into the
   target's heap. It reads only the chain of the allocating thread, and
   only when the interpreter says that thread holds the GIL (the thread
   state's thread id is the thread's own fs:0): CPython links a frame
   into that chain only once it is whole, so the chain is consistent at
   every allocation the thread makes. Every pointer is checked (aligned,
   out of the first page, below 2^47) before it is read through, and the
   walk is bounded. What is left is docs/inline-backend.md's "Python
   frames: residual risk": a thread state freed while still named by the
   GIL's last holder (3.12+). */

/* True when P may be read through: 8-byte aligned, past the first page,
   a user address. */
static inline int
py_ptr_ok(uint64_t p)
{
	return (p & 7) == 0 && p >= 4096 && p < (1ULL << 47);
}

/* The word at BASE + OFF (BASE checked by the caller). */
static inline uint64_t
py_load(uint64_t base, int32_t off)
{
	return *(const volatile uint64_t *)(uintptr_t)(base +
						       (uint64_t)(int64_t)off);
}

/* The thread state of the thread whose thread pointer is TCB when it
   holds the GIL, else 0. */
static inline uint64_t
py_tstate(const struct py_walk_params *pp, uint64_t tcb)
{
	uint64_t ts = 0;
	if (!py_ptr_ok(pp->anchor))
		return 0;
	if (pp->tstate_rule == PY_TSTATE_DIRECT) {
		ts = py_load(pp->anchor, 0);
	} else if (pp->tstate_rule == PY_TSTATE_GIL) {
		uint64_t interp = py_load(pp->anchor, 0);
		if (!py_ptr_ok(interp))
			return 0;
		uint64_t gil = py_load(interp, pp->gil);
		if (!py_ptr_ok(gil))
			return 0;
		ts = py_load(gil, pp->holder);
	}
	if (!py_ptr_ok(ts) || py_load(ts, pp->ts_thread_id) != tcb)
		return 0;
	return ts;
}

/* The innermost frame of thread state TS, or 0. */
static inline uint64_t
py_first(const struct py_walk_params *pp, uint64_t ts)
{
	uint64_t f = py_load(ts, pp->ts_frame);
	if (pp->first_rule == PY_FIRST_CFRAME && py_ptr_ok(f))
		f = py_load(f, pp->cframe_current);
	return f;
}

/* The instruction index of frame F running CODE (pyword.h). */
static inline uint64_t
py_index(const struct py_walk_params *pp, uint64_t f, uint64_t code)
{
	if (pp->instr_rule == PY_INSTR_POINTER) {
		uint64_t at = py_load(f, pp->f_instr);
		uint64_t base = code + (uint64_t)(int64_t)pp->code_adaptive;
		return at >= base ? (at - base) / 2 : PY_WORD_INDEX_UNKNOWN;
	}
	int32_t lasti = *(const volatile int32_t *)(uintptr_t)(
		f + (uint64_t)(int64_t)pp->f_instr);
	if (lasti < 0)
		return PY_WORD_INDEX_UNKNOWN;
	return pp->instr_rule == PY_INSTR_LASTI_BYTES ? (uint64_t)lasti / 2
						      : (uint64_t)lasti;
}

/* Append the Python frames of the thread whose thread pointer is TCB to
   WORDS, at most MAX: returns how many. PP is the header's, published
   fields first and MAX_FRAMES last. */
static __attribute__((noinline)) uint32_t
py_walk(const struct py_walk_params *pp, uint64_t tcb, uint64_t *words,
	uint32_t max)
{
	uint32_t limit = __atomic_load_n(&pp->max_frames, __ATOMIC_ACQUIRE);
	if (limit > PY_MAX_FRAMES)
		limit = PY_MAX_FRAMES;
	if (limit > max)
		limit = max;
	/* A copy in registers: WORDS may alias the header for all the
	   compiler knows, which made it load every offset again per frame. */
	const struct py_walk_params params = *pp;
	pp = &params;
	uint64_t ts = py_tstate(pp, tcb);
	if (!ts)
		return 0;
	uint64_t f = py_first(pp, ts);
	uint32_t n = 0;
	/* CSTACK marks are not recorded but are stepped over: a chain of
	   them alone is bounded too. */
	for (uint32_t steps = 0; n < limit && steps < 2 * limit + 1; steps++) {
		if (!py_ptr_ok(f))
			break;
		uint8_t entry = 0;
		if (pp->entry_rule != PY_ENTRY_EVERY)
			entry = *(const volatile uint8_t *)(uintptr_t)(
				f + (uint64_t)(int64_t)pp->f_entry);
		if (pp->entry_rule == PY_ENTRY_CSTACK &&
		    entry == PY_OWNED_BY_CSTACK) {
			if (n)
				words[n - 1] |= PY_WORD_SEGMENT_END;
		} else {
			uint64_t code = py_load(f, pp->f_code);
			if (!py_ptr_ok(code))
				break;
			int end = pp->entry_rule == PY_ENTRY_EVERY ||
				  (pp->entry_rule == PY_ENTRY_FLAG && entry);
			words[n++] = py_word_make(code, py_index(pp, f, code),
						  end);
		}
		f = py_load(f, pp->f_back);
	}
	return n;
}

/* Python words for a record of thread T, into WORDS (room for MAX): none
   unless the tracer published parameters, a load and a branch. */
static inline uint32_t
py_words(struct ring_header *h, const struct ring_thread *t, uint64_t *words,
	 uint32_t max)
{
	if (__builtin_expect(
		    __atomic_load_n(&h->python.max_frames, __ATOMIC_RELAXED) ==
			    0,
		    1))
		return 0;
	return py_walk(&h->python, t->tcb, words, max);
}

/* ---- Records ---- */

/* Wait until the LEN bytes reserved at POS are free. False when they
   never will be: the consumer is gone, or asked the stubs to pass (a
   detach), and the record is given up (never committed: nothing reads
   the ring any more). */
static void ring_doorbell(struct ring_header *h);

static int
wait_for_room(struct ring_header *h, uint64_t pos, uint32_t len)
{
	stat_add(&h->stats.full_waits);
	/* A tracer that sleeps between rare records (a sampled ring: up to
	   20 ms, tracer/loop.c) drains now, not when its sleep ends. */
	ring_doorbell(h);
	while (!ring_has_room(h, pos, len)) {
		if (!ring_recording(h))
			return 0;
		uint32_t seen = __atomic_load_n(&h->drained, __ATOMIC_ACQUIRE);
		/* Counted before the last look, which the tracer's bump of
		   DRAINED (after its tail) cannot then slip past unseen. */
		__atomic_fetch_add(&h->sleepers, 1, __ATOMIC_SEQ_CST);
		if (!ring_has_room(h, pos, len))
			futex_wait(&h->drained, seen, RING_FULL_WAIT_NS);
		__atomic_fetch_sub(&h->sleepers, 1, __ATOMIC_SEQ_CST);
	}
	return 1;
}

/* The time stamp of a call recorded now: the TSC when the tracer asks
   for stamps, else 0. */
static inline uint64_t
call_stamp(const struct ring_header *h)
{
	return __atomic_load_n(&h->flags, __ATOMIC_RELAXED) & RING_F_TSC
		       ? ring_tsc()
		       : 0;
}

/* Reserve, fill and commit one record: with COPIED (enum ring_copy) set,
   F's entry registers and SLEN stack bytes copied from its entry rsp; then
   NPCS addresses from PCS; stamped TSC (call_stamp). Waits while the ring
   has no room for it: nothing is dropped while the consumer lives. */
static uint64_t
emit_args(struct ring_header *h, uint32_t tid, const struct stub_frame *f,
	  const struct ring_fn *d, uint16_t kind, const uint64_t args[3],
	  uint64_t result, uint8_t copied, uint32_t slen, const uint64_t *pcs,
	  uint32_t npcs, uint8_t sample, uint64_t tsc)
{
	uint32_t len = ring_rec_size(copied, slen, npcs);
	uint64_t pos = ring_reserve(h, len);
	if (!ring_has_room(h, pos, len) && !wait_for_room(h, pos, len))
		return pos; /* nobody will read it */
	struct ring_record *r = ring_record_at(h, pos);
	uint64_t rsp = (uint64_t)&f->ret;
	r->kind = kind;
	r->fn = (uint8_t)d->fn;
	r->sample = sample;
	r->tid = tid;
	r->stack_len = (uint16_t)slen; /* stack_copy fits */
	r->npcs = (uint16_t)npcs;
	r->copied = copied;
	r->tsc = tsc;
	r->sp = rsp;
	/* A question's number is its place in the ring (wait_answer). */
	r->args[0] = ring_rec_is_question(kind) ? pos : args[0];
	r->args[1] = args[1];
	r->args[2] = args[2];
	r->result = result;
	if (copied) {
		uint64_t *regs = ring_record_regs(r);
		regs[RING_REG_RIP] = d->entry;
		regs[RING_REG_RSP] = rsp;
		regs[RING_REG_RBP] = f->rbp;
		regs[RING_REG_RBX] = f->rbx;
		regs[RING_REG_R12] = f->r12;
		regs[RING_REG_R13] = f->r13;
		regs[RING_REG_R14] = f->r14;
		regs[RING_REG_R15] = f->r15;
		if (slen)
			copy_bytes(ring_record_stack(r), (const void *)rsp,
				   slen);
	}
	uint64_t *dst = ring_record_pcs(r);
	for (uint32_t i = 0; i < npcs; i++)
		dst[i] = pcs[i];
	ring_commit(r, len);
	return pos;
}

/* emit_args with F's own arguments: a record of the call itself. */
static void
emit(struct ring_header *h, uint32_t tid, const struct stub_frame *f,
     const struct ring_fn *d, uint16_t kind, uint64_t result, uint8_t copied,
     uint32_t slen, const uint64_t *pcs, uint32_t npcs)
{
	emit_args(h, tid, f, d, kind, f->arg, result, copied, slen, pcs, npcs,
		  0, call_stamp(h));
}

/* A record that comes with its stack (allocations, at return): the
   addresses walked here, or, when the walk cannot be trusted to match the
   tracer's unwinder, a copy of up to stack_copy bytes from F's entry rsp
   (up to the thread's stack top, none when rsp is not on the known stack,
   e.g. on a sigaltstack, since reading further might fault). */
static void
emit_with_stack_args(struct ring_header *h, const struct ring_thread *t,
		     const struct stub_frame *f, const struct ring_fn *d,
		     uint16_t kind, const uint64_t args[3], uint64_t result,
		     uint8_t sample)
{
	uint64_t rsp = (uint64_t)&f->ret;
	uint32_t max = h->walk_max;
	uint8_t why = RING_COPY_OFF;
	/* The call's time is now, before the walk: a rule it asks for is
	   answered after the tracer drained every record before the
	   question, which may take it many milliseconds (docs/inline-backend.md,
	   "Time stamps"). */
	uint64_t tsc = call_stamp(h);
	uint64_t words[PY_MAX_FRAMES];
	if (rsp < t->stack_lo || rsp >= t->stack_hi) {
		stat_add(&h->stats.no_stack);
		uint32_t nw = py_words(h, t, words, PY_MAX_FRAMES);
		emit_args(h, t->tid, f, d, kind, args, result,
			  RING_COPY_NO_STACK, 0, words, nw, sample, tsc);
		return;
	}
	if (max && max <= RING_MAX_PCS) {
		/* On the stack walked, below its lo; the Python words
		   follow the addresses. */
		uint64_t pcs[max + PY_MAX_FRAMES];
		uint32_t n = walk_stack(h, t, f, d, pcs, max, &why);
		if (n) {
			n += py_words(h, t, pcs + n, PY_MAX_FRAMES);
			emit_args(h, t->tid, f, d, kind, args, result,
				  RING_COPY_NONE, 0, pcs, n, sample, tsc);
			return;
		}
	}
	uint64_t n = t->stack_hi - rsp;
	uint32_t slen = (uint32_t)(n < h->stack_copy ? n : h->stack_copy);
	uint32_t nw = py_words(h, t, words, PY_MAX_FRAMES);
	emit_args(h, t->tid, f, d, kind, args, result, why, slen, words, nw,
		  sample, tsc);
}

/* emit_with_stack_args with F's own arguments, not sampled. */
static void
emit_with_stack(struct ring_header *h, const struct ring_thread *t,
		const struct stub_frame *f, const struct ring_fn *d,
		uint16_t kind, uint64_t result)
{
	emit_with_stack_args(h, t, f, d, kind, f->arg, result, 0);
}

/* ---- Hooks that record no allocation ---- */

#define SYS_FUTEX_WAKE 1 /* FUTEX_WAKE, shared */

/* Wake an idle tracer: a question is in the ring. */
static void
ring_doorbell(struct ring_header *h)
{
	__atomic_add_fetch(&h->doorbell, 1, __ATOMIC_RELEASE);
	sys3(SYS_FUTEX, (uint64_t)&h->doorbell, SYS_FUTEX_WAKE, 1);
}

/* Wait at most WAIT_NS for the answer to the question at ring position
   POS. The tracer answers in ring order, so ANSWERED past POS is this
   question's answer: a number taken apart from the position could be
   answered before its own record was read, when another thread's question
   took a later number but an earlier place. */
static void
wait_answer(struct ring_header *h, uint64_t pos, uint64_t wait_ns)
{
	for (uint64_t n = 0; n < wait_ns / RING_FULL_WAIT_NS; n++) {
		/* The word first: the tracer raises ANSWERED before it bumps
		   the word, so an answer between the two reads is not slept
		   through. */
		uint32_t ack = __atomic_load_n(&h->notify_ack, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&h->answered, __ATOMIC_ACQUIRE) > pos ||
		    !ring_recording(h))
			return;
		futex_wait(&h->notify_ack, ack, RING_FULL_WAIT_NS);
	}
	stat_add(&h->stats.notify_timeouts);
}

/* Put a question (KIND, with ARGS; args[0] is overwritten with the
   record's ring position, its number), ring the doorbell and wait at most
   WAIT_NS for the answer. F's entry rsp goes in the record as for any
   call. */
static void
question(struct ring_header *h, uint32_t tid, const struct stub_frame *f,
	 const struct ring_fn *d, uint16_t kind, const uint64_t args[3],
	 uint64_t result, const uint64_t *more, uint32_t nmore,
	 uint64_t wait_ns)
{
	__atomic_add_fetch(&h->notify_seq, 1, __ATOMIC_RELAXED);
	uint64_t pos = emit_args(h, tid, f, d, kind, args, result,
				 RING_COPY_NONE, 0, more, nmore, 0,
				 call_stamp(h));
	ring_doorbell(h);
	wait_answer(h, pos, wait_ns);
}

/* Ask the tracer something and wait for its answer, as a debugger's
   breakpoint would hold the thread, but never longer than
   RING_NOTIFY_WAIT_NS nor once the consumer is gone: a KIND record
   (RING_REC_NOTIFY, RING_REC_THREAD) carrying its number, the thread
   pointer (0 when not set up yet: ld.so's first calls) and the entry
   rsp, so that the tracer can describe the thread too. */
static void
ask(struct ring_header *h, const struct stub_frame *f,
    const struct ring_fn *d, uint16_t kind)
{
	uint32_t tid = (uint32_t)sys3(SYS_GETTID, 0, 0, 0);
	uint64_t fs = 0;
	sys3(SYS_ARCH_PRCTL, ARCH_GET_FS, (uint64_t)&fs, 0);
	uint64_t args[3] = { 0, fs, (uint64_t)&f->ret };
	question(h, tid, f, d, kind, args, 0, 0, 0, RING_NOTIFY_WAIT_NS);
}

/* Ask for the rule of lookup pc AT, where the walk W stands (a RULE
   record), and wait for the answer. */
static void
ask_rule(struct ring_header *h, const struct ring_thread *t,
	 const struct stub_frame *f, const struct ring_fn *d, uint64_t at,
	 const struct ring_walk *w)
{
	uint64_t args[3] = { 0, at, w->rsp };
	uint64_t more[3] = { w->ra, w->known, w->hi };
	question(h, t->tid, f, d, RING_REC_RULE, args, w->rbp, more, 3,
		 RING_RULE_WAIT_NS);
}

typedef void (*void_fn)(void);

/* _exit: the C library's exit-time frees first (--massif-compat=yes,
   as Valgrind runs them), recorded like any other call. */
static void
exit_frees(struct ring_header *h)
{
	for (int i = 0; i < 2; i++) {
		/* Once per process, as Valgrind runs them. */
		uint64_t fn = __atomic_exchange_n(&h->freeres[i], 0,
						  __ATOMIC_ACQ_REL);
		if (fn && ring_recording(h))
			((void_fn)fn)();
	}
}

/* ---- Sampling (--sampling-interval; docs/inline-backend.md,
   "Sampling") ---- */

static inline struct sample_bucket *
sample_set(struct ring_header *h)
{
	return (struct sample_bucket *)((uint8_t *)h + h->set_off);
}

/* The bytes F asks for. */
static inline uint64_t
call_size(const struct ring_fn *d, const struct stub_frame *f)
{
	uint64_t s = f->arg[d->size_arg];
	if (d->size_mul != RING_NO_ARG &&
	    __builtin_mul_overflow(s, f->arg[d->size_mul], &s))
		s = ~0ULL; /* the call fails; no sample point is used */
	return s;
}

/* Remember the sampled block ADDR, so that its free is recorded; when the
   set has no room, every free is recorded from now on (the tracer ignores
   frees of blocks it does not know). */
static void
sampled_insert(struct ring_header *h, uint64_t addr)
{
	if (addr && sample_set_insert(sample_set(h), h->set_shift, addr) < 0 &&
	    !(__atomic_fetch_or(&h->flags, RING_F_SET_FULL, __ATOMIC_RELAXED) &
	      RING_F_SET_FULL))
		stat_add(&h->stats.set_full);
}

/* Whether the free of ADDR is to be recorded: ADDR was sampled (and is
   forgotten now, before the allocator can hand it out again), or the set
   overflowed once. */
static inline int
sampled_forget(struct ring_header *h, uint64_t addr)
{
	return sample_set_remove(sample_set(h), h->set_shift, addr) ||
	       (__atomic_load_n(&h->flags, __ATOMIC_RELAXED) & RING_F_SET_FULL);
}

/* A free-like call when sampling: only the free of a sampled block is
   recorded, at entry as ever; the others cost one look at the set. */
static __attribute__((noinline)) uint64_t
sampled_free(struct ring_header *h, struct stub_frame *f,
	     const struct ring_fn *d)
{
	if (!sampled_forget(h, f->arg[0]))
		return call_orig(d, f);
	struct ring_thread *t = thread_find(h, f, d);
	uint32_t tid = t ? t->tid : (uint32_t)sys3(SYS_GETTID, 0, 0, 0);
	emit(h, tid, f, d, RING_REC_FREE, 0, RING_COPY_NONE, 0, 0, 0);
	if (!t)
		return call_orig(d, f);
	struct ring_thread saved;
	outer_set(t, (uint64_t)&f->ret, d->obj_lo, d->obj_hi, &saved);
	uint64_t rv = call_orig(d, f);
	if (ring_recording(h))
		outer_set(t, saved.outer_rsp, saved.outer_lo, saved.outer_hi,
			  0);
	return rv;
}

/* Call F's original as a call in progress on T (for is_internal). */
static inline uint64_t
call_outer(struct ring_header *h, struct ring_thread *t, struct stub_frame *f,
	   const struct ring_fn *d, int *recording)
{
	struct ring_thread saved;
	outer_set(t, (uint64_t)&f->ret, d->obj_lo, d->obj_hi, &saved);
	uint64_t rv = call_orig(d, f);
	*recording = ring_recording(h);
	if (*recording)
		outer_set(t, saved.outer_rsp, saved.outer_lo, saved.outer_hi,
			  0);
	return rv;
}

/* A realloc-like call when sampling. The old block's record (BEGIN at
   entry, as ever) only when it was sampled; the new size gets a sampling
   decision of its own. What the tracer is told keeps its blocks those
   sampled: both sampled, a realloc; only the old, a realloc whose new
   block the consumer turns into none (SAMPLE 0: the old block freed);
   only the new, a realloc(NULL, n), an allocation; neither, nothing. */
static uint64_t
sampled_realloc(struct ring_header *h, struct ring_thread *t,
		struct stub_frame *f, const struct ring_fn *d)
{
	uint64_t old = f->arg[0], size = call_size(d, f);
	int old_sampled = old && sampled_forget(h, old);
	uint32_t k = size ? sample_take(&t->sample_left, &t->sample_rng,
					h->sample_interval, size)
			  : 0;
	int recording;
	if (!old_sampled && !k) {
		t->sample_calls++;
		return call_outer(h, t, f, d, &recording);
	}
	if (old_sampled)
		emit(h, t->tid, f, d, RING_REC_REALLOC_BEGIN, 0,
		     RING_COPY_NONE, 0, 0, 0);
	uint64_t rv = call_outer(h, t, f, d, &recording);
	if (!recording)
		return rv;
	if (!rv && size) {
		/* Failed: the old block is as it was. */
		if (old_sampled) {
			sampled_insert(h, old);
			emit_with_stack(h, t, f, d, RING_REC_REALLOC, rv);
		}
		return rv;
	}
	if (rv && k)
		sampled_insert(h, rv);
	if (old_sampled) {
		emit_with_stack_args(h, t, f, d, RING_REC_REALLOC, f->arg, rv,
				     rv ? (uint8_t)k : 0);
	} else if (rv) {
		uint64_t args[3] = { 0, f->arg[1], f->arg[2] };
		emit_with_stack_args(h, t, f, d, RING_REC_REALLOC, args, rv,
				     (uint8_t)k);
	}
	return rv;
}

/* An allocating call when sampling: the common case, a call not
   sampled, is a subtraction and a branch before the original. */
static uint64_t
sampled_alloc(struct ring_header *h, struct ring_thread *t,
	      struct stub_frame *f, const struct ring_fn *d)
{
	uint32_t k = sample_take(&t->sample_left, &t->sample_rng,
				 h->sample_interval, call_size(d, f));
	int recording;
	uint64_t rv = call_outer(h, t, f, d, &recording);
	if (!k) {
		t->sample_calls++;
		return rv;
	}
	if (!recording)
		return rv;
	uint64_t block = rv;
	if (d->cls == RING_CLASS_POSIX_MEMALIGN)
		block = rv ? 0 : *(const uint64_t *)f->arg[0];
	/* In the set before the record is committed: the block's free,
	   whatever thread makes it, then finds it. */
	sampled_insert(h, block);
	emit_with_stack_args(h, t, f, d, RING_REC_ALLOC, f->arg, block,
			     (uint8_t)k);
	return rv;
}

/* Called by stub_entry with the saved frame; returns what F returns.
   Nothing of the ring but its first page (header, descriptors) is read
   before ring_recording says to record, and nothing at all after the
   original returns unless it still says so: a detach unmaps the rest of
   the ring while threads may still be inside an original. */
static __attribute__((noinline)) uint64_t
stub_call_full(struct stub_frame *f)
{
	struct ring_header *h = stub_ring;
	const struct ring_fn *d = &h->fns[f->idx];
	if (!ring_recording(h) ||
	    (d->cls == RING_CLASS_FREE && !f->arg[d->ptr_arg % 3]))
		return call_orig(d, f);
	/* _dl_debug_state: the link map changed. The tracer reads it,
	   probes new objects and forgets stale unwinding rules. */
	if (d->cls == RING_CLASS_NOTIFY) {
		ask(h, f, d, RING_REC_NOTIFY);
		return call_orig(d, f);
	}
	if (d->cls == RING_CLASS_EXIT) {
		exit_frees(h);
		return call_orig(d, f);
	}

	/* The descriptor's interval: 0 for a call recorded whole. */
	int sampling = d->sample_interval != 0 &&
		       d->cls <= RING_CLASS_POSIX_MEMALIGN;
	if (sampling && d->cls == RING_CLASS_FREE)
		return sampled_free(h, f, d);

	uint64_t rsp = (uint64_t)&f->ret;
	struct ring_thread *t = thread_find(h, f, d);
	if (!t)
		return call_orig(d, f);
	if (is_internal(t, f->ret, rsp)) {
		__asm__ volatile("addq $1, %0" : "+m"(t->internal));
		return call_orig(d, f);
	}
	if (sampling)
		return d->cls == RING_CLASS_REALLOC ? sampled_realloc(h, t, f, d)
						    : sampled_alloc(h, t, f, d);

	/* Entry records need no stack: the tracer unwinds allocations only. */
	if (d->cls == RING_CLASS_FREE)
		emit(h, t->tid, f, d, RING_REC_FREE, 0, RING_COPY_NONE, 0, 0,
		     0);
	else if (d->cls == RING_CLASS_PAGE_ENTRY)
		emit(h, t->tid, f, d, RING_REC_PAGE, 0, RING_COPY_NONE, 0, 0,
		     0);
	else if (d->cls == RING_CLASS_REALLOC && f->arg[0])
		emit(h, t->tid, f, d, RING_REC_REALLOC_BEGIN, 0, RING_COPY_NONE,
		     0, 0, 0);

	struct ring_thread saved;
	outer_set(t, rsp, d->obj_lo, d->obj_hi, &saved);
	uint64_t rv = call_orig(d, f);
	if (!ring_recording(h))
		return rv;
	outer_set(t, saved.outer_rsp, saved.outer_lo, saved.outer_hi, 0);

	switch (d->cls) {
	case RING_CLASS_FREE:
	case RING_CLASS_PAGE_ENTRY:
		break;
	case RING_CLASS_PAGE:
		emit_with_stack(h, t, f, d, RING_REC_PAGE, rv);
		break;
	case RING_CLASS_REALLOC:
		emit_with_stack(h, t, f, d, RING_REC_REALLOC, rv);
		break;
	case RING_CLASS_POSIX_MEMALIGN:
		emit_with_stack(h, t, f, d, RING_REC_ALLOC,
				rv ? 0 : *(const uint64_t *)f->arg[0]);
		break;
	default:
		emit_with_stack(h, t, f, d, RING_REC_ALLOC, rv);
		break;
	}
	return rv;
}

static __attribute__((noinline)) struct ring_thread *
thread_lookup_slow(struct ring_header *h, uint64_t tcb)
{
	return ring_thread_lookup(h, tcb);
}

/* The entry of the thread whose thread pointer is TCB, or 0: nearly
   always at its home in the first segment (ring_thread_lookup's first
   probe), else the whole lookup. */
static inline struct ring_thread *
thread_fast(struct ring_header *h, uint64_t tcb)
{
	struct ring_thread *t = ring_threads(h) + ring_thread_hash(h, tcb, 0);
	if (__builtin_expect(__atomic_load_n(&t->tcb, __ATOMIC_ACQUIRE) == tcb,
			     1))
		return t;
	return thread_lookup_slow(h, tcb);
}

/* An allocation when sampling, on its way: the common case, not sampled
   on a thread with no call in progress, costs the thread's counter and
   is_internal's fields around the original; the others go the whole
   way. */
static __attribute__((noinline)) uint64_t
stub_alloc_fast(struct ring_header *h, const struct ring_fn *d,
		struct stub_frame *f)
{
	uint64_t tcb;
	__asm__("movq %%fs:0, %0" : "=r"(tcb));
	struct ring_thread *t = thread_fast(h, tcb);
	if (!t || t->outer_rsp)
		return stub_call_full(f); /* unknown, or maybe internal */
	uint64_t size = call_size(d, f);
	int64_t left = t->sample_left - (int64_t)size;
	if (size >= d->sample_interval || left <= 0)
		return stub_call_full(f); /* sampled */
	t->sample_left = left;
	t->sample_calls++;
	volatile struct ring_thread *vt = t;
	vt->outer_lo = d->obj_lo;
	vt->outer_hi = d->obj_hi;
	vt->outer_rsp = (uint64_t)&f->ret;
	uint64_t rv = call_orig(d, f);
	if (ring_recording(h))
		vt->outer_rsp = 0;
	return rv;
}

/* The common calls when sampling are kept apart from stub_call_full, so
   that they pay for none of its frame: the free of a block not sampled
   (one byte of the set read, then a jump to the original), and an
   allocation (stub_alloc_fast). Realloc and everything else go the
   whole way. */
uint64_t
stub_call(struct stub_frame *f)
{
	struct ring_header *h = stub_ring;
	const struct ring_fn *d = &h->fns[f->idx];
	if (!d->sample_interval || d->cls > RING_CLASS_POSIX_MEMALIGN ||
	    d->cls == RING_CLASS_REALLOC || !ring_recording(h))
		return stub_call_full(f);
	if (d->cls != RING_CLASS_FREE)
		return stub_alloc_fast(h, d, f);
	if (!f->arg[0] ||
	    (!sample_set_may_hold(sample_set(h), h->set_shift, f->arg[0]) &&
	     !(__atomic_load_n(&h->flags, __ATOMIC_RELAXED) & RING_F_SET_FULL)))
		return call_orig(d, f);
	return sampled_free(h, f, d);
}
