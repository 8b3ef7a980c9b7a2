/* cflags: -static -nostdlib -fno-stack-protector -no-pie */
/* Page-level calls with no libc: raw syscalls from small wrappers, so the
   only mappings are the executable's, the stack and Valgrind's. */
#define SYS_brk 12
#define SYS_mmap 9
#define SYS_munmap 11
#define SYS_mremap 25
#define SYS_exit 60

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
map(long addr, long len, long flags)
{
	return sys(SYS_mmap, addr, len, 3, flags, -1, 0);
}

int
main(void)
{
	long a = map(0, 3 * 4096, 0x22);             /* 3 pages */
	long b = map(0, 5 * 4096 + 100, 0x22);       /* 6 pages */
	sys(SYS_munmap, b + 4096, 2 * 4096, 0, 0, 0, 0); /* 2 of b's */
	a = sys(SYS_mremap, a, 3 * 4096, 2 * 4096, 0, 0, 0); /* shrink */
	map(a + 2 * 4096, 4096, 0x22 | 0x10);        /* fixed, free spot */
	map(b, 4096, 0x22 | 0x10);                   /* fixed over b: double */
	long cur = sys(SYS_brk, 0, 0, 0, 0, 0, 0);
	sys(SYS_brk, cur + 100, 0, 0, 0, 0, 0);
	sys(SYS_brk, cur + 5100, 0, 0, 0, 0, 0);
	sys(SYS_brk, cur + 3 * 4096 + 1, 0, 0, 0, 0, 0);
	sys(SYS_brk, cur + 50, 0, 0, 0, 0, 0);
	sys(SYS_munmap, b, 6 * 4096, 0, 0, 0, 0);
	sys(SYS_munmap, a, 3 * 4096, 0, 0, 0, 0);
	return 0;
}

void __attribute__((naked))
_start(void)
{
	__asm__("xor %ebp, %ebp\n\tcall main\n\tmov %eax, %edi\n\tmov $60, %eax\n\tsyscall\n\thlt");
}
