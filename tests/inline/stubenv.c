/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The in-process stand-in for the tracer (stubenv.h). Its answers to the
   stubs' questions follow tracer/inline/inline.c (answer, on_notify, on_rule,
   rule_lookahead, rules_from_copy), with this process's own threads and
   rules in place of a target's. */
#include "stubenv.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "tracer/inline/stub_blob.h"
#include "tracer/inline/tramp.h"

struct env env;
__thread struct env_self env_self;
struct collector coll;

/* Trampolines are written every TRAMP_STRIDE bytes after the blob. */
#define TRAMP_STRIDE 32

/* Most of a waiting thread's stack a RULE answer reads, as the tracer's
   look-ahead (LOOKAHEAD_STACK in tracer/inline/inline.c). */
#define LOOKAHEAD_STACK (64 * 1024)

/* How long a test may wait for the consumer before the harness gives up
   on it: far beyond any wait the stub makes. */
#define STUCK_NS 30000000000ULL

/* The tables have one writer in the tracer; here test threads set their
   own entries and the drainer answers questions, so they take turns. */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

/* The threads the "tracer" knows (env_thread_describe), as it would
   from /proc: a THREAD or NOTIFY question of theirs gets them an entry. */
#define KNOWN_MAX 64
static struct env_self known[KNOWN_MAX];
static unsigned n_known;

/* Registers at callee entry: see struct callctx for the offsets. */
__asm__(
	"	.text\n"
	"	.globl	call_with_regs\n"
	"	.hidden	call_with_regs\n"
	"	.type	call_with_regs, @function\n"
	"call_with_regs:\n"
	"	pushq	%rbp\n"
	"	pushq	%rbx\n"
	"	pushq	%r12\n"
	"	pushq	%r13\n"
	"	pushq	%r14\n"
	"	pushq	%r15\n"
	"	pushq	%rdi\n"
	"	pushq	152(%rdi)\n"
	"	pushq	144(%rdi)\n"
	"	movq	32(%rdi), %rbx\n"
	"	movq	40(%rdi), %rbp\n"
	"	movq	48(%rdi), %r12\n"
	"	movq	56(%rdi), %r13\n"
	"	movq	64(%rdi), %r14\n"
	"	movq	72(%rdi), %r15\n"
	"	movq	0(%rdi), %rax\n"
	"	movq	16(%rdi), %rsi\n"
	"	movq	24(%rdi), %rdx\n"
	"	movq	8(%rdi), %rdi\n"
	"	call	*%rax\n"
	"	.globl	call_with_regs_ret\n"
	"	.hidden	call_with_regs_ret\n"
	"call_with_regs_ret:\n"
	"	movq	16(%rsp), %rdi\n"
	"	movq	%rbx, 80(%rdi)\n"
	"	movq	%rbp, 88(%rdi)\n"
	"	movq	%r12, 96(%rdi)\n"
	"	movq	%r13, 104(%rdi)\n"
	"	movq	%r14, 112(%rdi)\n"
	"	movq	%r15, 120(%rdi)\n"
	"	movq	%rax, 128(%rdi)\n"
	"	leaq	-8(%rsp), %rax\n"
	"	movq	%rax, 136(%rdi)\n"
	"	addq	$24, %rsp\n"
	"	popq	%r15\n"
	"	popq	%r14\n"
	"	popq	%r13\n"
	"	popq	%r12\n"
	"	popq	%rbx\n"
	"	popq	%rbp\n"
	"	ret\n"
	"	.size	call_with_regs, . - call_with_regs\n");

_Static_assert(__builtin_offsetof(struct callctx, out) == 80, "asm offsets");
_Static_assert(__builtin_offsetof(struct callctx, pat) == 144, "asm offsets");

uint64_t
env_tcb(void)
{
	uint64_t tcb;
	__asm__("movq %%fs:0, %0" : "=r"(tcb));
	return tcb;
}

uint64_t
env_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
say(const char *msg)
{
	ssize_t n = write(2, msg, strlen(msg));
	(void)n;
}

static void
sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---- Threads ---- */

void
env_thread_describe(void)
{
	pthread_attr_t a;
	void *addr;
	size_t size;
	env_self.tid = (uint32_t)gettid();
	env_self.tcb = env_tcb();
	if (pthread_getattr_np(pthread_self(), &a) != 0) {
		say("stubenv: no stack bounds\n");
		abort();
	}
	pthread_attr_getstack(&a, &addr, &size);
	pthread_attr_destroy(&a);
	env_self.stack_lo = (uint64_t)addr;
	env_self.stack_hi = (uint64_t)addr + size;
	pthread_mutex_lock(&table_lock);
	unsigned i = 0;
	while (i < n_known && known[i].tcb != env_self.tcb)
		i++;
	if (i == KNOWN_MAX) {
		say("stubenv: too many threads\n");
		abort();
	}
	known[i] = env_self;
	if (i == n_known)
		n_known++;
	pthread_mutex_unlock(&table_lock);
}

/* Give thread TCB its entry, with the table locked. */
static void
entry_set(uint64_t tcb, uint32_t tid, uint64_t lo, uint64_t hi)
{
	if (tracer_ring_thread_set(env.r, tcb, tid, lo, hi)) {
		say("stubenv: thread table full\n");
		abort();
	}
}

void
env_thread_set(uint64_t lo, uint64_t hi)
{
	pthread_mutex_lock(&table_lock);
	entry_set(env_self.tcb, env_self.tid, lo, hi);
	pthread_mutex_unlock(&table_lock);
}

void
env_thread_init(void)
{
	env_thread_describe();
	env_thread_set(env_self.stack_lo, env_self.stack_hi);
}

void
env_rules_reset(void)
{
	pthread_mutex_lock(&table_lock);
	tracer_ring_rules_reset(env.r);
	pthread_mutex_unlock(&table_lock);
}

/* ---- The tracer's answers (tracer/inline/inline.c, answer) ---- */

/* Publish the rule of lookup pc PC, from env.on_rule (rule_publish).
   False when there is none. */
static bool
rule_publish(uint64_t pc)
{
	struct ring_rule ru;
	if (!env.on_rule || !env.on_rule(pc, &ru))
		return false;
	int err = tracer_ring_rule_set(env.r, pc, &ru);
	if (err == -ENOSPC) {
		tracer_ring_rules_reset(env.r);
		err = tracer_ring_rule_set(env.r, pc, &ru);
	}
	return err == 0;
}

/* Walk on from W, at lookup pc AT, by the stubs' own steps, publishing
   the rule of every frame that has none; *COUNT gets the rules added
   (the loop of rule_lookahead and rules_from_copy). */
static void
walk_publish(struct ring_walk w, uint64_t at, uint64_t *count)
{
	struct ring_header *h = env.h;
	for (uint32_t k = 0; at && k < h->walk_max; k++) {
		const struct ring_rule *ru = ring_rule_lookup(h, at);
		if (!ru && rule_publish(at)) {
			ru = ring_rule_lookup(h, at);
			(*count)++;
		}
		if (!ru || ru->kind == RING_RULE_COPY ||
		    ring_walk_step(&w, ru) <= 0 || w.ra == 0)
			break;
		at = w.ra - 1;
	}
}

/* A RULE question (on_rule, rule_lookahead): the rule of lookup pc
   args[1] and those of the frames above, read from the asking thread's
   stack, which does not move while it waits. Read as the tracer reads a
   target, with process_vm_readv: the frames belong to another thread. */
static void
answer_rule(const struct tracer_ring_item *it)
{
	const struct ring_record *rec = it->rec;
	if (!env.on_rule || it->npcs != 3)
		return; /* no rules to give: the answer alone */
	struct ring_walk w = {
		.rsp = rec->args[2],
		.rbp = rec->result,
		.ra = it->pcs[0],
		.known = (uint32_t)it->pcs[1] &
			 (RING_WALK_RSP | RING_WALK_RBP | RING_WALK_RA),
		.lo = rec->args[2],
		.hi = it->pcs[2],
	};
	uint64_t len = w.hi > w.lo ? w.hi - w.lo : 0;
	if (len > LOOKAHEAD_STACK)
		len = LOOKAHEAD_STACK;
	uint8_t *copy = malloc(LOOKAHEAD_STACK);
	if (!copy)
		abort();
	struct iovec local = { copy, len };
	struct iovec remote = { (void *)(uintptr_t)w.lo, len };
	ssize_t n = len ? process_vm_readv(getpid(), &local, 1, &remote, 1, 0)
			: 0;
	w.hi = w.lo + (uint64_t)(n > 0 ? n : 0);
	w.bias = (uint64_t)(uintptr_t)copy - w.lo;
	walk_publish(w, rec->args[1], &env.ahead_rules);
	free(copy);
}

/* A stack copied for want of a rule (rules_from_copy): walking the copy
   as the stubs would teaches them the rules of its frames. */
static void
learn_from_copy(const struct tracer_capture *cap)
{
	uint64_t rsp = cap->regs.rsp;
	struct ring_walk w = {
		.rsp = rsp,
		.rbp = cap->regs.rbp,
		.ra = cap->regs.rip,
		.known = RING_WALK_RSP | RING_WALK_RBP | RING_WALK_RA,
		.lo = rsp,
		.hi = rsp + cap->len,
		.bias = (uint64_t)(uintptr_t)cap->stack - rsp,
	};
	walk_publish(w, cap->regs.rip, &env.copy_rules);
}

/* A NOTIFY or THREAD question (on_notify): a known thread without an
   entry gets one. */
static void
answer_notify(const struct ring_record *rec)
{
	for (unsigned i = 0; rec->args[1] && i < n_known; i++)
		if (known[i].tcb == rec->args[1])
			entry_set(known[i].tcb, known[i].tid, known[i].stack_lo,
				  known[i].stack_hi);
}

/* What the tracer does with IT before its event: answer a question
   (every record before it delivered, as the tracer answers in ring
   order), or learn from a copy. */
static void
answer(const struct tracer_ring_item *it)
{
	const struct ring_record *rec = it->rec;
	bool notify = rec->kind == RING_REC_NOTIFY ||
		      rec->kind == RING_REC_THREAD;
	bool rule = rec->kind == RING_REC_RULE;
	bool ack = (notify && !env.notify_silent) ||
		   (rule && !env.rules_silent);
	if (ack && notify && env.answer_delay_ns)
		sleep_ns(env.answer_delay_ns);
	pthread_mutex_lock(&table_lock);
	if (ack && rule)
		answer_rule(it);
	else if (ack)
		answer_notify(rec);
	else if (it->copied == RING_COPY_RULE && env.on_rule)
		learn_from_copy(&it->cap);
	pthread_mutex_unlock(&table_lock);
	if (ack) {
		env.answered[rec->kind]++;
		tracer_ring_notify_ack(env.r, rec->args[0]);
	}
}

/* ---- Draining ---- */

static int
collect(void *arg, const struct tracer_ring_item *it)
{
	(void)arg;
	if (coll.n >= coll.cap) {
		coll.overflow++;
		return 0;
	}
	const struct ring_record *rec = it->rec;
	struct rec_copy *c = &coll.v[coll.n++];
	c->kind = rec->kind;
	c->fn = rec->fn;
	c->tid = rec->tid;
	c->stack_len = rec->stack_len;
	c->sp = rec->sp;
	memcpy(c->args, rec->args, sizeof(c->args));
	c->result = rec->result;
	c->tsc = rec->tsc;
	c->time_ns = it->time_ns;
	c->copied = it->copied;
	c->npcs = it->npcs;
	memset(c->regs, 0, sizeof(c->regs));
	if (it->copied)
		memcpy(c->regs, ring_record_regs((struct ring_record *)rec),
		       sizeof(c->regs));
	memset(c->stack_head, 0, sizeof(c->stack_head));
	if (it->cap.len)
		memcpy(c->stack_head, it->cap.stack,
		       it->cap.len < sizeof(c->stack_head)
			       ? it->cap.len
			       : sizeof(c->stack_head));
	c->has_event = it->has_event;
	c->ev = it->ev;
	return 0;
}

static int
deliver(void *arg, const struct tracer_ring_item *it)
{
	(void)arg;
	answer(it);
	return (env.on_item ? env.on_item : collect)(env.item_arg, it);
}

long
env_drain(uint64_t wait_ns)
{
	long n = tracer_ring_drain(env.r, wait_ns, deliver, NULL);
	if (n < 0) {
		say("stubenv: the ring is corrupted\n");
		abort();
	}
	return n;
}

void
env_collect_reset(void)
{
	coll.n = 0;
	coll.overflow = 0;
}

/* ---- The consumer thread ---- */

static pthread_t consumer;
static bool consumer_running;
static volatile int consumer_stop;
static uint64_t consumer_delay_ns;

/* Sleep until a stub rings the doorbell, at most 1 ms: records that ask
   nothing are picked up at the next look (the tracer's idle wait). */
static void
doorbell_wait(uint32_t seen)
{
	struct timespec ts = { .tv_nsec = 1000000 };
	syscall(SYS_futex, &env.h->doorbell, FUTEX_WAIT, seen, &ts, NULL, 0);
}

static void *
consumer_main(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&consumer_stop, __ATOMIC_ACQUIRE)) {
		uint32_t bell = __atomic_load_n(&env.h->doorbell,
						__ATOMIC_ACQUIRE);
		long n = env_drain(1000000);
		if (consumer_delay_ns)
			sleep_ns(consumer_delay_ns);
		else if (n == 0)
			doorbell_wait(bell);
	}
	if (__atomic_load_n(&consumer_stop, __ATOMIC_ACQUIRE) == 2) {
		uint64_t deadline = env_now_ns() + STUCK_NS;
		while (tracer_ring_pending(env.r)) {
			env_drain(100000000);
			if (env_now_ns() > deadline) {
				say("stubenv: records never committed\n");
				abort();
			}
		}
	}
	return NULL;
}

void
env_consumer_start(uint64_t delay_ns)
{
	consumer_stop = 0;
	consumer_delay_ns = delay_ns;
	if (pthread_create(&consumer, NULL, consumer_main, NULL)) {
		say("stubenv: pthread_create failed\n");
		abort();
	}
	consumer_running = true;
}

void
env_consumer_stop(bool finish)
{
	if (!consumer_running)
		return;
	__atomic_store_n(&consumer_stop, finish ? 2 : 1, __ATOMIC_RELEASE);
	pthread_join(consumer, NULL);
	consumer_running = false;
}

void
env_sync(void)
{
	uint64_t head = __atomic_load_n(&env.h->head, __ATOMIC_ACQUIRE);
	uint64_t deadline = env_now_ns() + STUCK_NS;
	while (__atomic_load_n(&env.h->tail, __ATOMIC_ACQUIRE) < head) {
		if (env_now_ns() > deadline) {
			say("stubenv: the consumer is stuck\n");
			abort();
		}
		sleep_ns(20000);
	}
}

/* ---- Set-up ---- */

/* The stub never traps: a SIGTRAP is a bug, said plainly. */
static void
on_sigtrap(int sig)
{
	(void)sig;
	say("stubenv: SIGTRAP: the stub must never trap\n");
	abort();
}

int
env_init(uint64_t ring_size, uint32_t stack_copy, uint64_t cap)
{
	memset(&env, 0, sizeof(env));
	n_known = 0;
	int err = tracer_ring_new(ring_size, 64, 32, 1024, stack_copy, &env.r);
	if (err)
		return err;
	env.h = tracer_ring_header(env.r);

	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t tramp_off = (STUB_BLOB_LEN + 15) & ~15ULL;
	env.code_len = (tramp_off + RING_MAX_FNS * TRAMP_STRIDE + page - 1) &
		       ~(page - 1);
	env.code = mmap(NULL, env.code_len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (env.code == MAP_FAILED)
		return -errno;
	memcpy(env.code, stub_blob, STUB_BLOB_LEN);
	uint64_t hdr = (uint64_t)env.h;
	memcpy(env.code + STUB_BLOB_RING, &hdr, 8);
	uint64_t entry = (uint64_t)env.code + STUB_BLOB_FAST;
	for (unsigned i = 0; i < RING_MAX_FNS; i++) {
		uint64_t off = tramp_off + i * TRAMP_STRIDE;
		env.tramp[i] = (uint64_t)env.code + off;
		tracer_tramp_encode(env.code + off, env.tramp[i], entry, i);
	}
	if (mprotect(env.code, env.code_len, PROT_READ | PROT_EXEC) < 0)
		return -errno;
	signal(SIGTRAP, on_sigtrap);

	coll.v = calloc(cap, sizeof(*coll.v));
	if (!coll.v)
		return -ENOMEM;
	coll.cap = cap;
	env_collect_reset();
	return 0;
}

void
env_fini(void)
{
	if (consumer_running) {
		say("stubenv: env_fini with the consumer running\n");
		abort();
	}
	signal(SIGTRAP, SIG_DFL);
	munmap(env.code, env.code_len);
	tracer_ring_free(env.r);
	free(coll.v);
	memset(&coll, 0, sizeof(coll));
	memset(&env, 0, sizeof(env));
	n_known = 0;
}

void
env_fn(unsigned idx, enum ht_alloc_fn fn, const void *orig, uint64_t lo,
       uint64_t hi)
{
	if (tracer_ring_fn_set(env.r, idx, fn, (uint64_t)orig, (uint64_t)orig,
			       lo, hi)) {
		say("stubenv: bad descriptor\n");
		abort();
	}
}

void
env_hook(unsigned idx, enum ring_class cls, const void *orig)
{
	if (tracer_ring_hook_set(env.r, idx, cls, 0, (uint64_t)orig,
				 (uint64_t)orig, 0, 0)) {
		say("stubenv: bad hook\n");
		abort();
	}
}
