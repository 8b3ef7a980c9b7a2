/* SPDX-License-Identifier: GPL-2.0-or-later */
/* void *named_alloc(size_t n): malloc(n * 3), for test xcu-lto. Its line
   table is written by hand: file 1 is "sub/named.c" in directory "gen",
   a file name with a directory in it, as rustc's tables name the standard
   library's files ("library/alloc/src/alloc.rs"). Valgrind prints the
   name as the table records it, without the directory. */
	.file 1 "gen" "sub/named.c"
	.text
	.globl	named_alloc
	.type	named_alloc, @function
named_alloc:
	.cfi_startproc
	.loc 1 41
	subq	$8, %rsp
	.cfi_def_cfa_offset 16
	.loc 1 43
	leaq	(%rdi,%rdi,2), %rdi
	call	malloc@PLT
	.loc 1 44
	addq	$8, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	named_alloc, .-named_alloc
	.section .note.GNU-stack,"",@progbits
