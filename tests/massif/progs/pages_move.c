/* cflags: -static -nostdlib -fno-stack-protector -no-pie */
/* Moving mremaps under --pages-as-heap, with no libc (as pages.c): a
   mapping grown with MREMAP_MAYMOVE that cannot grow in place (a page
   split off its end by mprotect is in the way), so it moves; then moved
   again and shrunk with MREMAP_FIXED to a free place (mapped, then
   unmapped); then everything unmapped. */
#define SYS_mmap 9
#define SYS_mprotect 10
#define SYS_munmap 11
#define SYS_mremap 25

#define MREMAP_MAYMOVE 1
#define MREMAP_FIXED 2

static long __attribute__((noinline))
sys(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

static long __attribute__((noinline))
map(long len)
{
	return sys(SYS_mmap, 0, len, 3, 0x22, -1, 0);
}

int
main(void)
{
	long a = map(3 * 4096);                             /* 3 pages */
	sys(SYS_mprotect, a + 2 * 4096, 4096, 0, 0, 0, 0);  /* the guard */
	long b = sys(SYS_mremap, a, 2 * 4096, 5 * 4096,     /* 2 -> 5, moves */
		     MREMAP_MAYMOVE, 0, 0);
	long to = map(4096);                                /* a free page */
	sys(SYS_munmap, to, 4096, 0, 0, 0, 0);
	long c = sys(SYS_mremap, b, 5 * 4096, 4096,         /* 5 -> 1, moves */
		     MREMAP_MAYMOVE | MREMAP_FIXED, to, 0);
	sys(SYS_munmap, c, 4096, 0, 0, 0, 0);
	sys(SYS_munmap, a + 2 * 4096, 4096, 0, 0, 0, 0);
	return b == a || c != to;
}

void __attribute__((naked))
_start(void)
{
	__asm__("xor %ebp, %ebp\n\tcall main\n\tmov %eax, %edi\n\tmov $60, %eax\n\tsyscall\n\thlt");
}
