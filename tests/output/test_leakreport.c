/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of output/leakreport.c: the leak report against real memcheck
   text. Each case builds by hand the classified blocks of a small C
   program (its source below), as leak_classify would leave them, and
   compares the report with what valgrind-3.19.0 printed for that program
   (`valgrind --leak-check=... --show-leak-kinds=... --run-libc-freeres=no
   ./prog`, x86-64), from the blank line before HEAP SUMMARY to the one
   before "For lists of detected...". memcheck's pid is replaced by 1234;
   the frame addresses and descriptions are memcheck's, given back by the
   stack callback.

   defs.c:
     1 #include <stdlib.h>
     2 void *keep;
     3 static void *leak(size_t n) { return malloc(n); }
     4 int main(void) {
     5   for (int i = 0; i < 3; i++) leak(40);        // 3 definite, one site
     6   void **a = malloc(16); void **b = malloc(24); void **c = malloc(32);
         a[0] = b; b[0] = c; a = 0; b = 0; c = 0;     // A->B->C chain
     8   keep = malloc(100);                          // still reachable
     9   char *p = malloc(2000); ...
    10   static char *q; q = p + 10; p = 0;           // possible (interior)
    11   void *f = malloc(5); free(f); ...
   (--leak-check=no too, for noleak.c and onlydef.c.)
   noleak.c: void *p = malloc(10); free(p);
   big.c:
     6   for (int i = 0; i < 1000; i++) malloc(1234); // 1,234,000 definite
     7   uint64_t *l = malloc(8 + 50); l[0] = 50; q = (char *)(l + 1);
                                                      // length64 heuristic
     8   keep = malloc(7);
   onlydef.c: 2 int main(void){ malloc(40); return 0; }
   reach.c (no -g): void *k; int main(void){k=malloc(3);return 0;}
   ties.c (equal total sizes: kind, then block count, then stack age):
     4   malloc(40);                                  // definite 40
     5   keep = malloc(40);                           // reachable 40
     6   q = (char*)malloc(40) + 1;                   // possible 40
     7   keep2[0] = malloc(20); keep2[1] = malloc(20);// both lost by line 8
     8   for (int i = 0; i < 2; i++) keep2[i] = malloc(20); // reachable 2x20
     9   void **a = malloc(8); a[0] = malloc(32); a = 0;    // 8 + 32 ind.

   Usage: test_leakreport CASE; exit 0 pass, 1 fail. */
#include "output/leakreport.h"

#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                        \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "%s:%d: %s: CHECK(%s) failed\n",   \
				__FILE__, __LINE__, __func__, #cond);      \
			failures++;                                        \
		}                                                          \
	} while (0)

/* memcheck's text, pid 1234. */
static const char exp_big_all[] =
	"==1234== \n"
	"==1234== HEAP SUMMARY:\n"
	"==1234==     in use at exit: 1,234,065 bytes in 1,002 blocks\n"
	"==1234==   total heap usage: 1,002 allocs, 0 frees, 1,234,065 bytes allocated\n"
	"==1234== \n"
	"==1234== 7 bytes in 1 blocks are still reachable in loss record 1 of 3\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x109192: main (big.c:8)\n"
	"==1234== \n"
	"==1234== 58 bytes in 1 blocks are still reachable in loss record 2 of 3\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x10916A: main (big.c:7)\n"
	"==1234== \n"
	"==1234== 1,234,000 bytes in 1,000 blocks are definitely lost in loss record 3 of 3\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x109153: main (big.c:6)\n"
	"==1234== \n"
	"==1234== LEAK SUMMARY:\n"
	"==1234==    definitely lost: 1,234,000 bytes in 1,000 blocks\n"
	"==1234==    indirectly lost: 0 bytes in 0 blocks\n"
	"==1234==      possibly lost: 0 bytes in 0 blocks\n"
	"==1234==    still reachable: 65 bytes in 2 blocks\n"
	"==1234==                       of which reachable via heuristic:\n"
	"==1234==                         length64           : 58 bytes in 1 blocks\n"
	"==1234==         suppressed: 0 bytes in 0 blocks\n"
	"==1234== \n"
	;

static const char exp_big_def[] =
	"==1234== \n"
	"==1234== HEAP SUMMARY:\n"
	"==1234==     in use at exit: 1,234,065 bytes in 1,002 blocks\n"
	"==1234==   total heap usage: 1,002 allocs, 0 frees, 1,234,065 bytes allocated\n"
	"==1234== \n"
	"==1234== 1,234,000 bytes in 1,000 blocks are definitely lost in loss record 3 of 3\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x109153: main (big.c:6)\n"
	"==1234== \n"
	"==1234== LEAK SUMMARY:\n"
	"==1234==    definitely lost: 1,234,000 bytes in 1,000 blocks\n"
	"==1234==    indirectly lost: 0 bytes in 0 blocks\n"
	"==1234==      possibly lost: 0 bytes in 0 blocks\n"
	"==1234==    still reachable: 65 bytes in 2 blocks\n"
	"==1234==                       of which reachable via heuristic:\n"
	"==1234==                         length64           : 58 bytes in 1 blocks\n"
	"==1234==         suppressed: 0 bytes in 0 blocks\n"
	"==1234== Reachable blocks (those to which a pointer was found) are not shown.\n"
	"==1234== To see them, rerun with: --leak-check=full --show-leak-kinds=all\n"
	"==1234== \n"
	;

static const char exp_big_sum[] =
	"==1234== \n"
	"==1234== HEAP SUMMARY:\n"
	"==1234==     in use at exit: 1,234,065 bytes in 1,002 blocks\n"
	"==1234==   total heap usage: 1,002 allocs, 0 frees, 1,234,065 bytes allocated\n"
	"==1234== \n"
	"==1234== LEAK SUMMARY:\n"
	"==1234==    definitely lost: 1,234,000 bytes in 1,000 blocks\n"
	"==1234==    indirectly lost: 0 bytes in 0 blocks\n"
	"==1234==      possibly lost: 0 bytes in 0 blocks\n"
	"==1234==    still reachable: 65 bytes in 2 blocks\n"
	"==1234==                       of which reachable via heuristic:\n"
	"==1234==                         length64           : 58 bytes in 1 blocks\n"
	"==1234==         suppressed: 0 bytes in 0 blocks\n"
	"==1234== Rerun with --leak-check=full to see details of leaked memory\n"
	"==1234== \n"
	;

static const char exp_defs_all[] =
	"==1234== \n"
	"==1234== HEAP SUMMARY:\n"
	"==1234==     in use at exit: 2,292 bytes in 8 blocks\n"
	"==1234==   total heap usage: 9 allocs, 1 frees, 2,297 bytes allocated\n"
	"==1234== \n"
	"==1234== 24 bytes in 1 blocks are indirectly lost in loss record 1 of 6\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x10919F: main (defs.c:6)\n"
	"==1234== \n"
	"==1234== 32 bytes in 1 blocks are indirectly lost in loss record 2 of 6\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x1091AD: main (defs.c:6)\n"
	"==1234== \n"
	"==1234== 72 (16 direct, 56 indirect) bytes in 1 blocks are definitely lost in loss record 3 of 6\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x109191: main (defs.c:6)\n"
	"==1234== \n"
	"==1234== 100 bytes in 1 blocks are still reachable in loss record 4 of 6\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x1091E9: main (defs.c:8)\n"
	"==1234== \n"
	"==1234== 120 bytes in 3 blocks are definitely lost in loss record 5 of 6\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x109160: leak (defs.c:3)\n"
	"==1234==    by 0x10917D: main (defs.c:5)\n"
	"==1234== \n"
	"==1234== 2,000 bytes in 1 blocks are possibly lost in loss record 6 of 6\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x1091FA: main (defs.c:9)\n"
	"==1234== \n"
	"==1234== LEAK SUMMARY:\n"
	"==1234==    definitely lost: 136 bytes in 4 blocks\n"
	"==1234==    indirectly lost: 56 bytes in 2 blocks\n"
	"==1234==      possibly lost: 2,000 bytes in 1 blocks\n"
	"==1234==    still reachable: 100 bytes in 1 blocks\n"
	"==1234==         suppressed: 0 bytes in 0 blocks\n"
	"==1234== \n"
	;

static const char exp_defs_def[] =
	"==1234== \n"
	"==1234== HEAP SUMMARY:\n"
	"==1234==     in use at exit: 2,292 bytes in 8 blocks\n"
	"==1234==   total heap usage: 9 allocs, 1 frees, 2,297 bytes allocated\n"
	"==1234== \n"
	"==1234== 72 (16 direct, 56 indirect) bytes in 1 blocks are definitely lost in loss record 3 of 6\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x109191: main (defs.c:6)\n"
	"==1234== \n"
	"==1234== 120 bytes in 3 blocks are definitely lost in loss record 5 of 6\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x109160: leak (defs.c:3)\n"
	"==1234==    by 0x10917D: main (defs.c:5)\n"
	"==1234== \n"
	"==1234== 2,000 bytes in 1 blocks are possibly lost in loss record 6 of 6\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x1091FA: main (defs.c:9)\n"
	"==1234== \n"
	"==1234== LEAK SUMMARY:\n"
	"==1234==    definitely lost: 136 bytes in 4 blocks\n"
	"==1234==    indirectly lost: 56 bytes in 2 blocks\n"
	"==1234==      possibly lost: 2,000 bytes in 1 blocks\n"
	"==1234==    still reachable: 100 bytes in 1 blocks\n"
	"==1234==         suppressed: 0 bytes in 0 blocks\n"
	"==1234== Reachable blocks (those to which a pointer was found) are not shown.\n"
	"==1234== To see them, rerun with: --leak-check=full --show-leak-kinds=all\n"
	"==1234== \n"
	;

static const char exp_defs_sum[] =
	"==1234== \n"
	"==1234== HEAP SUMMARY:\n"
	"==1234==     in use at exit: 2,292 bytes in 8 blocks\n"
	"==1234==   total heap usage: 9 allocs, 1 frees, 2,297 bytes allocated\n"
	"==1234== \n"
	"==1234== LEAK SUMMARY:\n"
	"==1234==    definitely lost: 136 bytes in 4 blocks\n"
	"==1234==    indirectly lost: 56 bytes in 2 blocks\n"
	"==1234==      possibly lost: 2,000 bytes in 1 blocks\n"
	"==1234==    still reachable: 100 bytes in 1 blocks\n"
	"==1234==         suppressed: 0 bytes in 0 blocks\n"
	"==1234== Rerun with --leak-check=full to see details of leaked memory\n"
	"==1234== \n"
	;

static const char exp_noleak_all[] =
	"==1234== \n"
	"==1234== HEAP SUMMARY:\n"
	"==1234==     in use at exit: 0 bytes in 0 blocks\n"
	"==1234==   total heap usage: 1 allocs, 1 frees, 10 bytes allocated\n"
	"==1234== \n"
	"==1234== All heap blocks were freed -- no leaks are possible\n"
	"==1234== \n"
	;

static const char exp_noleak_def[] =
	"==1234== \n"
	"==1234== HEAP SUMMARY:\n"
	"==1234==     in use at exit: 0 bytes in 0 blocks\n"
	"==1234==   total heap usage: 1 allocs, 1 frees, 10 bytes allocated\n"
	"==1234== \n"
	"==1234== All heap blocks were freed -- no leaks are possible\n"
	"==1234== \n"
	;

static const char exp_noleak_sum[] =
	"==1234== \n"
	"==1234== HEAP SUMMARY:\n"
	"==1234==     in use at exit: 0 bytes in 0 blocks\n"
	"==1234==   total heap usage: 1 allocs, 1 frees, 10 bytes allocated\n"
	"==1234== \n"
	"==1234== All heap blocks were freed -- no leaks are possible\n"
	"==1234== \n"
	;

static const char exp_onlydef_def[] =
	"==1234== \n"
	"==1234== HEAP SUMMARY:\n"
	"==1234==     in use at exit: 40 bytes in 1 blocks\n"
	"==1234==   total heap usage: 1 allocs, 0 frees, 40 bytes allocated\n"
	"==1234== \n"
	"==1234== 40 bytes in 1 blocks are definitely lost in loss record 1 of 1\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x109146: main (onlydef.c:2)\n"
	"==1234== \n"
	"==1234== LEAK SUMMARY:\n"
	"==1234==    definitely lost: 40 bytes in 1 blocks\n"
	"==1234==    indirectly lost: 0 bytes in 0 blocks\n"
	"==1234==      possibly lost: 0 bytes in 0 blocks\n"
	"==1234==    still reachable: 0 bytes in 0 blocks\n"
	"==1234==         suppressed: 0 bytes in 0 blocks\n"
	"==1234== \n"
	;

static const char exp_reach_all[] =
	"==1234== \n"
	"==1234== HEAP SUMMARY:\n"
	"==1234==     in use at exit: 3 bytes in 1 blocks\n"
	"==1234==   total heap usage: 1 allocs, 0 frees, 3 bytes allocated\n"
	"==1234== \n"
	"==1234== 3 bytes in 1 blocks are still reachable in loss record 1 of 1\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x109146: main (in /tmp/lrep/reach)\n"
	"==1234== \n"
	"==1234== LEAK SUMMARY:\n"
	"==1234==    definitely lost: 0 bytes in 0 blocks\n"
	"==1234==    indirectly lost: 0 bytes in 0 blocks\n"
	"==1234==      possibly lost: 0 bytes in 0 blocks\n"
	"==1234==    still reachable: 3 bytes in 1 blocks\n"
	"==1234==         suppressed: 0 bytes in 0 blocks\n"
	"==1234== \n"
	;

static const char exp_reach_none[] =
	"==1234== \n"
	"==1234== HEAP SUMMARY:\n"
	"==1234==     in use at exit: 3 bytes in 1 blocks\n"
	"==1234==   total heap usage: 1 allocs, 0 frees, 3 bytes allocated\n"
	"==1234== \n"
	"==1234== LEAK SUMMARY:\n"
	"==1234==    definitely lost: 0 bytes in 0 blocks\n"
	"==1234==    indirectly lost: 0 bytes in 0 blocks\n"
	"==1234==      possibly lost: 0 bytes in 0 blocks\n"
	"==1234==    still reachable: 3 bytes in 1 blocks\n"
	"==1234==         suppressed: 0 bytes in 0 blocks\n"
	"==1234== Reachable blocks (those to which a pointer was found) are not shown.\n"
	"==1234== To see them, rerun with: --leak-check=full --show-leak-kinds=all\n"
	"==1234== \n"
	;

static const char exp_reach_sum[] =
	"==1234== \n"
	"==1234== HEAP SUMMARY:\n"
	"==1234==     in use at exit: 3 bytes in 1 blocks\n"
	"==1234==   total heap usage: 1 allocs, 0 frees, 3 bytes allocated\n"
	"==1234== \n"
	"==1234== LEAK SUMMARY:\n"
	"==1234==    definitely lost: 0 bytes in 0 blocks\n"
	"==1234==    indirectly lost: 0 bytes in 0 blocks\n"
	"==1234==      possibly lost: 0 bytes in 0 blocks\n"
	"==1234==    still reachable: 3 bytes in 1 blocks\n"
	"==1234==         suppressed: 0 bytes in 0 blocks\n"
	"==1234== Rerun with --leak-check=full to see details of leaked memory\n"
	"==1234== \n"
	;

static const char exp_ties_all[] =
	"==1234== \n"
	"==1234== HEAP SUMMARY:\n"
	"==1234==     in use at exit: 240 bytes in 9 blocks\n"
	"==1234==   total heap usage: 9 allocs, 0 frees, 240 bytes allocated\n"
	"==1234== \n"
	"==1234== 20 bytes in 1 blocks are definitely lost in loss record 1 of 8\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x10917A: main (ties.c:7)\n"
	"==1234== \n"
	"==1234== 20 bytes in 1 blocks are definitely lost in loss record 2 of 8\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x10918B: main (ties.c:7)\n"
	"==1234== \n"
	"==1234== 32 bytes in 1 blocks are indirectly lost in loss record 3 of 8\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x1091E2: main (ties.c:9)\n"
	"==1234== \n"
	"==1234== 40 bytes in 1 blocks are still reachable in loss record 4 of 8\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x109154: main (ties.c:5)\n"
	"==1234== \n"
	"==1234== 40 bytes in 2 blocks are still reachable in loss record 5 of 8\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x1091A5: main (ties.c:8)\n"
	"==1234== \n"
	"==1234== 40 bytes in 1 blocks are possibly lost in loss record 6 of 8\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x109165: main (ties.c:6)\n"
	"==1234== \n"
	"==1234== 40 bytes in 1 blocks are definitely lost in loss record 7 of 8\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x10914A: main (ties.c:4)\n"
	"==1234== \n"
	"==1234== 40 (8 direct, 32 indirect) bytes in 1 blocks are definitely lost in loss record 8 of 8\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x1091D4: main (ties.c:9)\n"
	"==1234== \n"
	"==1234== LEAK SUMMARY:\n"
	"==1234==    definitely lost: 88 bytes in 4 blocks\n"
	"==1234==    indirectly lost: 32 bytes in 1 blocks\n"
	"==1234==      possibly lost: 40 bytes in 1 blocks\n"
	"==1234==    still reachable: 80 bytes in 3 blocks\n"
	"==1234==         suppressed: 0 bytes in 0 blocks\n"
	"==1234== \n"
	;

static const char exp_ties_definite[] =
	"==1234== \n"
	"==1234== HEAP SUMMARY:\n"
	"==1234==     in use at exit: 240 bytes in 9 blocks\n"
	"==1234==   total heap usage: 9 allocs, 0 frees, 240 bytes allocated\n"
	"==1234== \n"
	"==1234== 20 bytes in 1 blocks are definitely lost in loss record 1 of 8\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x10917A: main (ties.c:7)\n"
	"==1234== \n"
	"==1234== 20 bytes in 1 blocks are definitely lost in loss record 2 of 8\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x10918B: main (ties.c:7)\n"
	"==1234== \n"
	"==1234== 40 bytes in 1 blocks are definitely lost in loss record 7 of 8\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x10914A: main (ties.c:4)\n"
	"==1234== \n"
	"==1234== 40 (8 direct, 32 indirect) bytes in 1 blocks are definitely lost in loss record 8 of 8\n"
	"==1234==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)\n"
	"==1234==    by 0x1091D4: main (ties.c:9)\n"
	"==1234== \n"
	"==1234== LEAK SUMMARY:\n"
	"==1234==    definitely lost: 88 bytes in 4 blocks\n"
	"==1234==    indirectly lost: 32 bytes in 1 blocks\n"
	"==1234==      possibly lost: 40 bytes in 1 blocks\n"
	"==1234==    still reachable: 80 bytes in 3 blocks\n"
	"==1234==         suppressed: 0 bytes in 0 blocks\n"
	"==1234== Reachable blocks (those to which a pointer was found) are not shown.\n"
	"==1234== To see them, rerun with: --leak-check=full --show-leak-kinds=all\n"
	"==1234== \n"
	;

static const char exp_onlydef_no[] =
	"==1234== \n"
	"==1234== HEAP SUMMARY:\n"
	"==1234==     in use at exit: 40 bytes in 1 blocks\n"
	"==1234==   total heap usage: 1 allocs, 0 frees, 40 bytes allocated\n"
	"==1234== \n"
	"==1234== For a detailed leak analysis, rerun with: --leak-check=full\n"
	"==1234== \n"
	;

static const char exp_noleak_no[] =
	"==1234== \n"
	"==1234== HEAP SUMMARY:\n"
	"==1234==     in use at exit: 0 bytes in 0 blocks\n"
	"==1234==   total heap usage: 1 allocs, 1 frees, 10 bytes allocated\n"
	"==1234== \n"
	"==1234== For a detailed leak analysis, rerun with: --leak-check=full\n"
	"==1234== \n"
	;

#define MALLOC_DESC                                                         \
	"malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)"

/* An allocation stack: malloc, then the caller's frames. */
struct stack {
	uint64_t key;
	size_t n;
	struct leakreport_frame f[3];
};

#define STACK(k, ...)                                                      \
	{ k, 1 + sizeof((struct leakreport_frame[]){ __VA_ARGS__ }) /      \
		     sizeof(struct leakreport_frame),                      \
	  { { 0x48417B4, MALLOC_DESC }, __VA_ARGS__ } }

static uint64_t
stack_key(void *ctx, void *id)
{
	(void)ctx;
	return ((const struct stack *)id)->key;
}

static size_t
stack_frames(void *ctx, void *id, const struct leakreport_frame **frames)
{
	const struct stack *s = id;

	(void)ctx;
	*frames = s->f;
	return s->n;
}

static const struct leakreport_stacks stacks = { stack_key, stack_frames,
						 NULL };

/* A block of SIZE bytes at stack S. */
static struct leak_block
blk(struct stack *s, uint64_t size, enum leak_kind kind)
{
	static uint64_t addr = 0x4a00000;
	struct leak_block b = { .addr = addr, .size = size, .id = s,
				.kind = kind, .parent = LEAK_NO_BLOCK };

	addr += (size + 15) / 16 * 16 + 16;
	return b;
}

/* The totals leak_classify writes for BLOCKS. */
static struct leak_totals
totals_of(const struct leak_block *b, size_t n)
{
	struct leak_totals t;

	memset(&t, 0, sizeof t);
	for (size_t i = 0; i < n; i++) {
		t.bytes[b[i].kind] += b[i].size;
		t.blocks[b[i].kind]++;
		if (b[i].heuristic != LEAK_HEUR_NONE) {
			t.heur_bytes[b[i].heuristic] += b[i].size;
			t.heur_blocks[b[i].heuristic]++;
		}
	}
	return t;
}

/* Writes the report of BLOCKS and compares it with EXP. */
static void
expect(const char *what, const struct leak_block *blocks, size_t n,
       enum leakreport_mode mode, unsigned kinds, uint64_t allocs,
       uint64_t frees, uint64_t bytes, const char *exp)
{
	struct leak_totals t = totals_of(blocks, n);
	struct leakreport_opts o = { .pid = 1234, .mode = mode,
				     .show_kinds = kinds, .allocs = allocs,
				     .frees = frees,
				     .bytes_allocated = bytes };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK(f != NULL);
	if (!f)
		return;
	CHECK(leakreport_write(f, blocks, n, &t, &stacks, &o) == 0);
	fclose(f);
	if (strcmp(text, exp) != 0) {
		fprintf(stderr, "%s: mismatch\n--- expected\n%s--- got\n%s",
			what, exp, text);
		failures++;
	}
	free(text);
}

/* defs.c */
static struct stack d_leak =
	STACK(1, { 0x109160, "leak (defs.c:3)" },
	      { 0x10917D, "main (defs.c:5)" });
static struct stack d_a = STACK(2, { 0x109191, "main (defs.c:6)" });
static struct stack d_b = STACK(3, { 0x10919F, "main (defs.c:6)" });
static struct stack d_c = STACK(4, { 0x1091AD, "main (defs.c:6)" });
static struct stack d_keep = STACK(5, { 0x1091E9, "main (defs.c:8)" });
static struct stack d_p = STACK(6, { 0x1091FA, "main (defs.c:9)" });

static size_t
defs_blocks(struct leak_block *b)
{
	size_t n = 0;

	for (int i = 0; i < 3; i++)
		b[n++] = blk(&d_leak, 40, LEAK_DEFINITE);
	b[n] = blk(&d_a, 16, LEAK_DEFINITE);
	b[n].indirect_bytes = 24 + 32;
	b[n++].indirect_blocks = 2;
	b[n] = blk(&d_b, 24, LEAK_INDIRECT);
	b[n++].parent = 3;
	b[n] = blk(&d_c, 32, LEAK_INDIRECT);
	b[n++].parent = 4;
	b[n++] = blk(&d_keep, 100, LEAK_REACHABLE);
	b[n++] = blk(&d_p, 2000, LEAK_POSSIBLE);
	return n;
}

static void
test_defs(void)
{
	struct leak_block b[8];
	size_t n = defs_blocks(b);

	expect("defs all", b, n, LEAKREPORT_FULL, LEAKREPORT_SHOW_ALL, 9, 1,
	       2297, exp_defs_all);
	expect("defs default", b, n, LEAKREPORT_FULL, LEAKREPORT_SHOW_DEFAULT,
	       9, 1, 2297, exp_defs_def);
	expect("defs summary", b, n, LEAKREPORT_SUMMARY,
	       LEAKREPORT_SHOW_DEFAULT, 9, 1, 2297, exp_defs_sum);
	/* summary mode ignores the kinds shown */
	expect("defs summary all", b, n, LEAKREPORT_SUMMARY,
	       LEAKREPORT_SHOW_ALL, 9, 1, 2297, exp_defs_sum);
}

/* The records do not depend on the blocks' order when no tie needs the
   stacks' age: defs in a scrambled order. */
static void
test_order(void)
{
	struct leak_block b[8], s[8];
	static const size_t perm[8] = { 7, 2, 5, 0, 6, 3, 1, 4 };
	size_t n = defs_blocks(b);

	for (size_t i = 0; i < n; i++)
		s[i] = b[perm[i]];
	expect("defs scrambled", s, n, LEAKREPORT_FULL, LEAKREPORT_SHOW_ALL, 9,
	       1, 2297, exp_defs_all);
}

static void
test_noleak(void)
{
	expect("noleak all", NULL, 0, LEAKREPORT_FULL, LEAKREPORT_SHOW_ALL, 1,
	       1, 10, exp_noleak_all);
	expect("noleak default", NULL, 0, LEAKREPORT_FULL,
	       LEAKREPORT_SHOW_DEFAULT, 1, 1, 10, exp_noleak_def);
	expect("noleak summary", NULL, 0, LEAKREPORT_SUMMARY,
	       LEAKREPORT_SHOW_DEFAULT, 1, 1, 10, exp_noleak_sum);
	/* --leak-check=no does not say all was freed */
	expect("noleak no", NULL, 0, LEAKREPORT_NO, LEAKREPORT_SHOW_DEFAULT,
	       1, 1, 10, exp_noleak_no);
}

static struct stack b_loop = STACK(10, { 0x109153, "main (big.c:6)" });
static struct stack b_l = STACK(11, { 0x10916A, "main (big.c:7)" });
static struct stack b_keep = STACK(12, { 0x109192, "main (big.c:8)" });

static void
test_big(void)
{
	static struct leak_block b[1002];
	size_t n = 0;

	for (int i = 0; i < 1000; i++)
		b[n++] = blk(&b_loop, 1234, LEAK_DEFINITE);
	b[n] = blk(&b_l, 58, LEAK_REACHABLE);
	b[n++].heuristic = LEAK_HEUR_LENGTH64;
	b[n++] = blk(&b_keep, 7, LEAK_REACHABLE);
	expect("big all", b, n, LEAKREPORT_FULL, LEAKREPORT_SHOW_ALL, 1002, 0,
	       1234065, exp_big_all);
	expect("big default", b, n, LEAKREPORT_FULL, LEAKREPORT_SHOW_DEFAULT,
	       1002, 0, 1234065, exp_big_def);
	expect("big summary", b, n, LEAKREPORT_SUMMARY,
	       LEAKREPORT_SHOW_DEFAULT, 1002, 0, 1234065, exp_big_sum);
}

static struct stack o_s = STACK(20, { 0x109146, "main (onlydef.c:2)" });
static struct stack r_s = STACK(30, { 0x109146, "main (in /tmp/lrep/reach)" });

static void
test_small(void)
{
	struct leak_block o = blk(&o_s, 40, LEAK_DEFINITE);
	struct leak_block r = blk(&r_s, 3, LEAK_REACHABLE);

	/* no reachable blocks: no hint about them */
	expect("onlydef default", &o, 1, LEAKREPORT_FULL,
	       LEAKREPORT_SHOW_DEFAULT, 1, 0, 40, exp_onlydef_def);
	expect("onlydef no", &o, 1, LEAKREPORT_NO, LEAKREPORT_SHOW_DEFAULT, 1,
	       0, 40, exp_onlydef_no);
	expect("reach summary", &r, 1, LEAKREPORT_SUMMARY,
	       LEAKREPORT_SHOW_DEFAULT, 1, 0, 3, exp_reach_sum);
	expect("reach none", &r, 1, LEAKREPORT_FULL, 0, 1, 0, 3,
	       exp_reach_none);
	expect("reach all", &r, 1, LEAKREPORT_FULL, LEAKREPORT_SHOW_ALL, 1, 0,
	       3, exp_reach_all);
}

static struct stack t4 = STACK(44, { 0x10914A, "main (ties.c:4)" });
static struct stack t5 = STACK(45, { 0x109154, "main (ties.c:5)" });
static struct stack t6 = STACK(46, { 0x109165, "main (ties.c:6)" });
/* keys in the opposite order of age: the age must win */
static struct stack t7a = STACK(49, { 0x10917A, "main (ties.c:7)" });
static struct stack t7b = STACK(47, { 0x10918B, "main (ties.c:7)" });
static struct stack t8 = STACK(48, { 0x1091A5, "main (ties.c:8)" });
static struct stack t9a = STACK(50, { 0x1091D4, "main (ties.c:9)" });
static struct stack t9b = STACK(51, { 0x1091E2, "main (ties.c:9)" });

static void
test_ties(void)
{
	struct leak_block b[9];
	size_t n = 0;

	b[n++] = blk(&t4, 40, LEAK_DEFINITE);
	b[n++] = blk(&t5, 40, LEAK_REACHABLE);
	b[n++] = blk(&t6, 40, LEAK_POSSIBLE);
	b[n++] = blk(&t7a, 20, LEAK_DEFINITE);
	b[n++] = blk(&t7b, 20, LEAK_DEFINITE);
	b[n++] = blk(&t8, 20, LEAK_REACHABLE);
	b[n++] = blk(&t8, 20, LEAK_REACHABLE);
	b[n] = blk(&t9a, 8, LEAK_DEFINITE);
	b[n].indirect_bytes = 32;
	b[n++].indirect_blocks = 1;
	b[n] = blk(&t9b, 32, LEAK_INDIRECT);
	b[n++].parent = 7;
	expect("ties all", b, n, LEAKREPORT_FULL, LEAKREPORT_SHOW_ALL, 9, 0,
	       240, exp_ties_all);
	expect("ties definite", b, n, LEAKREPORT_FULL,
	       LEAKREPORT_KIND_BIT(LEAK_DEFINITE), 9, 0, 240,
	       exp_ties_definite);

	/* The block count decides before the age: line 8's blocks first. */
	struct leak_block c[9] = { b[5], b[6], b[0], b[1], b[2],
				   b[3], b[4], b[7], b[8] };
	expect("ties 2 blocks first", c, n, LEAKREPORT_FULL,
	       LEAKREPORT_SHOW_ALL, 9, 0, 240, exp_ties_all);
}

/* End to end with the classifier: the programs' heaps laid out in a fake
   target memory, classified by leak_classify, then reported. */
struct fake {
	uint64_t base;
	unsigned char *mem;
	size_t len;
};

static ssize_t
fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct fake *f = ctx;

	if (addr < f->base || addr >= f->base + f->len)
		return -1;
	if (len > f->base + f->len - addr)
		len = f->base + f->len - addr;
	memcpy(buf, f->mem + (addr - f->base), len);
	return (ssize_t)len;
}

static void
poke(struct fake *f, uint64_t addr, uint64_t v)
{
	memcpy(f->mem + (addr - f->base), &v, sizeof v);
}

/* Lays B's blocks out from F's base + 4096 (the first page holds the
   roots: ROOTS words), classifies them, and compares the report. */
static void
classify_expect(const char *what, struct fake *f, struct leak_block *b,
		size_t n, size_t roots, enum leakreport_mode mode,
		unsigned kinds, uint64_t allocs, uint64_t frees,
		uint64_t bytes, const char *exp)
{
	struct leak_root root = { f->base, roots * 8 };
	struct leak_input in = { .blocks = b, .nblocks = n, .roots = &root,
				 .nroots = 1, .read = fake_read, .ctx = f,
				 .heuristics = LEAK_HEUR_ALL };
	struct leak_totals t;
	struct leakreport_opts o = { .pid = 1234, .mode = mode,
				     .show_kinds = kinds, .allocs = allocs,
				     .frees = frees,
				     .bytes_allocated = bytes };
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	leak_classify(&in, &t);
	out = open_memstream(&text, &len);
	CHECK(out != NULL);
	if (!out)
		return;
	CHECK(leakreport_write(out, b, n, &t, &stacks, &o) == 0);
	fclose(out);
	if (strcmp(text, exp) != 0) {
		fprintf(stderr, "%s: mismatch\n--- expected\n%s--- got\n%s",
			what, exp, text);
		failures++;
	}
	free(text);
}

/* Places block I of B (sizes and ids set) in F, 16-aligned. */
static void
place(struct fake *f, struct leak_block *b, size_t n)
{
	uint64_t a = f->base + 4096;

	for (size_t i = 0; i < n; i++) {
		b[i].addr = a;
		a += (b[i].size + 15) / 16 * 16 + 16;
	}
	f->len = a - f->base;
	f->mem = calloc(1, f->len);
}

static void
test_classify(void)
{
	struct fake f = { .base = 0x10000000 };
	struct leak_block b[8];
	static struct leak_block g[1002];
	size_t n = defs_blocks(b);

	/* defs.c: A->B->C, keep, q = p + 10 */
	place(&f, b, n);
	if (!f.mem)
		return;
	poke(&f, b[3].addr, b[4].addr);
	poke(&f, b[4].addr, b[5].addr);
	poke(&f, f.base, b[6].addr);
	poke(&f, f.base + 8, b[7].addr + 10);
	classify_expect("defs classified", &f, b, n, 2, LEAKREPORT_FULL,
			LEAKREPORT_SHOW_ALL, 9, 1, 2297, exp_defs_all);
	classify_expect("defs classified default", &f, b, n, 2,
			LEAKREPORT_FULL, LEAKREPORT_SHOW_DEFAULT, 9, 1, 2297,
			exp_defs_def);
	free(f.mem);

	/* big.c: l[0] = 50, q = l + 1 (length64), keep */
	n = 0;
	for (int i = 0; i < 1000; i++)
		g[n++] = blk(&b_loop, 1234, LEAK_DEFINITE);
	g[n++] = blk(&b_l, 58, LEAK_DEFINITE);
	g[n++] = blk(&b_keep, 7, LEAK_DEFINITE);
	place(&f, g, n);
	if (!f.mem)
		return;
	poke(&f, g[1000].addr, 50);
	poke(&f, f.base, g[1001].addr);
	poke(&f, f.base + 8, g[1000].addr + 8);
	classify_expect("big classified", &f, g, n, 2, LEAKREPORT_FULL,
			LEAKREPORT_SHOW_ALL, 1002, 0, 1234065, exp_big_all);
	classify_expect("big classified summary", &f, g, n, 2,
			LEAKREPORT_SUMMARY, LEAKREPORT_SHOW_DEFAULT, 1002, 0,
			1234065, exp_big_sum);
	free(f.mem);
}

/* A stream that fails: the error is reported. */
static void
test_write_error(void)
{
	FILE *f = fopen("/dev/full", "w");
	struct leak_block o = blk(&o_s, 40, LEAK_DEFINITE);
	struct leak_totals t = totals_of(&o, 1);
	struct leakreport_opts opts = { .pid = 1, .mode = LEAKREPORT_FULL,
					.show_kinds = LEAKREPORT_SHOW_ALL };

	if (!f)
		return;
	setvbuf(f, NULL, _IONBF, 0);
	CHECK(leakreport_write(f, &o, 1, &t, &stacks, &opts) == -1);
	fclose(f);
}

int
main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} cases[] = {
		{ "defs", test_defs },   { "order", test_order },
		{ "noleak", test_noleak }, { "big", test_big },
		{ "small", test_small }, { "ties", test_ties },
		{ "classify", test_classify }, { "write-error", test_write_error },
	};

	if (argc != 2) {
		fprintf(stderr, "usage: test_leakreport CASE\n");
		return 1;
	}
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if (strcmp(argv[1], cases[i].name) == 0) {
			cases[i].fn();
			return failures ? 1 : 0;
		}
	fprintf(stderr, "unknown case %s\n", argv[1]);
	return 1;
}
