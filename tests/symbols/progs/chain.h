/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The test call chain main -> f0 -> f1 -> f2 -> f3 -> raise(SIGSTOP). */
#ifndef HT_TESTS_SYMBOLS_CHAIN_H
#define HT_TESTS_SYMBOLS_CHAIN_H

#include "mark.h"

void f0(void);
void f1(void);
void f2(void);
void f3(void);

#endif
