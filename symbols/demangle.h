/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Symbol-table names as Massif (Valgrind 3.19) prints them: C++ names
   through libstdc++'s demangler, Rust names (legacy "_ZN...17h<hash>E" and
   v0 "_R...") through libiberty's Rust demangler, the one Valgrind itself
   carries, so the spelling is the same byte for byte. */
#ifndef HT_SYMBOLS_DEMANGLE_H
#define HT_SYMBOLS_DEMANGLE_H

/* RAW demangled, in a new malloc'd string (a copy of RAW when it is not a
   mangled name, or one that does not demangle). A symbol version
   ("@@GLIBCXX_3.4") is not part of the mangling: it is cut off before
   demangling and appended again, as Massif prints it. */
char *sym_demangle(const char *raw);

#endif
