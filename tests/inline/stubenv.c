/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The in-process stand-in for the tracer (stubenv.h). */
#include "stubenv.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "tracer/inline/stub_blob.h"
#include "tracer/inline/tramp.h"

struct env env;
__thread struct env_self env_self;
struct collector coll;

/* Trampolines are written every TRAMP_STRIDE bytes after the blob. */
#define TRAMP_STRIDE 32

/* The MISS handler of several threads may run at once; the tracer is one
   thread, and the table's writer must be too. */
static volatile int table_lock;

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

void
env_thread_init(void)
{
	pthread_attr_t a;
	void *addr;
	size_t size;
	env_self.tid = (uint32_t)gettid();
	if (pthread_getattr_np(pthread_self(), &a) == 0) {
		pthread_attr_getstack(&a, &addr, &size);
		pthread_attr_destroy(&a);
		env_self.stack_lo = (uint64_t)addr;
		env_self.stack_hi = (uint64_t)addr + size;
		env_self.known = true;
	}
}

static void
say(const char *msg)
{
	ssize_t n = write(2, msg, strlen(msg));
	(void)n;
}

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

long
env_drain(uint64_t wait_ns)
{
	return tracer_ring_drain(env.r, wait_ns, collect, NULL);
}

void
env_collect_reset(void)
{
	coll.n = 0;
	coll.overflow = 0;
}

static void
on_miss(greg_t *g)
{
	uint64_t tcb = (uint64_t)g[REG_RDI];
	__atomic_fetch_add(&env.miss_stops, 1, __ATOMIC_RELAXED);
	if (!env_self.known) {
		g[REG_RAX] = RING_RESUME_PASS;
		return;
	}
	while (__atomic_exchange_n(&table_lock, 1, __ATOMIC_ACQUIRE))
		;
	int err = tracer_ring_thread_set(env.r, tcb, env_self.tid,
					 env_self.stack_lo, env_self.stack_hi);
	__atomic_store_n(&table_lock, 0, __ATOMIC_RELEASE);
	if (err) {
		say("stubenv: thread table full\n");
		abort();
	}
}

static void
on_full(greg_t *g)
{
	uint64_t need = (uint64_t)g[REG_RDI];
	__atomic_fetch_add(&env.full_stops, 1, __ATOMIC_RELAXED);
	if (env.drain_inline) {
		/* Only this thread produces: everything before its own
		   reservation is committed. */
		if (env_drain(0) < 0) {
			say("stubenv: drain failed in the trap\n");
			abort();
		}
	} else {
		while (__atomic_load_n(&env.h->tail, __ATOMIC_ACQUIRE) < need) {
			struct timespec ts = { .tv_nsec = 20000 };
			nanosleep(&ts, NULL);
		}
	}
	if (env.on_full)
		env.on_full();
}

static void
on_rule(greg_t *g)
{
	uint64_t pc = (uint64_t)g[REG_RDI];
	struct ring_rule ru;
	__atomic_fetch_add(&env.rule_stops, 1, __ATOMIC_RELAXED);
	while (__atomic_exchange_n(&table_lock, 1, __ATOMIC_ACQUIRE))
		;
	bool ok = env.on_rule && env.on_rule(pc, &ru);
	int err = ok ? tracer_ring_rule_set(env.r, pc, &ru) : 0;
	if (err == -ENOSPC) {
		tracer_ring_rules_reset(env.r);
		err = tracer_ring_rule_set(env.r, pc, &ru);
	}
	__atomic_store_n(&table_lock, 0, __ATOMIC_RELEASE);
	if (!ok || err)
		g[REG_RAX] = RING_RESUME_COPY;
}

void
env_rules_reset(void)
{
	while (__atomic_exchange_n(&table_lock, 1, __ATOMIC_ACQUIRE))
		;
	tracer_ring_rules_reset(env.r);
	__atomic_store_n(&table_lock, 0, __ATOMIC_RELEASE);
}

static void
on_sigtrap(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)si;
	greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;
	uint64_t pc = (uint64_t)g[REG_RIP] - 1;
	uint64_t blob = (uint64_t)env.code;
	if (pc < blob || pc >= blob + STUB_BLOB_LEN) {
		say("stubenv: SIGTRAP outside the blob\n");
		abort();
	}
	switch ((uint64_t)g[REG_RAX]) {
	case RING_TRAP_MISS:
		on_miss(g);
		break;
	case RING_TRAP_FULL:
		on_full(g);
		break;
	case RING_TRAP_RULE:
		on_rule(g);
		break;
	default:
		say("stubenv: SIGTRAP in the blob with an unknown code\n");
		abort();
	}
}

int
env_init(uint64_t ring_size, uint32_t stack_copy, uint64_t cap)
{
	memset(&env, 0, sizeof(env));
	int err = tracer_ring_new(ring_size, 64, 1024, stack_copy, &env.r);
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
	uint64_t entry = (uint64_t)env.code + STUB_BLOB_ENTRY;
	for (unsigned i = 0; i < RING_MAX_FNS; i++) {
		uint64_t off = tramp_off + i * TRAMP_STRIDE;
		env.tramp[i] = (uint64_t)env.code + off;
		tracer_tramp_encode(env.code + off, env.tramp[i], entry, i);
	}
	if (mprotect(env.code, env.code_len, PROT_READ | PROT_EXEC) < 0)
		return -errno;

	struct sigaction sa = { .sa_sigaction = on_sigtrap,
				.sa_flags = SA_SIGINFO | SA_RESTART };
	/* The tests' own signal may not interrupt the tracer's part. */
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR1);
	if (sigaction(SIGTRAP, &sa, NULL) < 0)
		return -errno;

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
	signal(SIGTRAP, SIG_DFL);
	munmap(env.code, env.code_len);
	tracer_ring_free(env.r);
	free(coll.v);
	memset(&coll, 0, sizeof(coll));
	memset(&env, 0, sizeof(env));
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
