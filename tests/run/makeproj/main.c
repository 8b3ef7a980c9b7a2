/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The program make builds and runs: peak heap exactly 4,000,000 B (four
   blocks of 1,000,000 B; nothing else allocates: no stdio), then exits
   with the status blocks_hold returns. */
#include "blocks.h"

int main(void)
{
	return blocks_hold(4, 1000000);
}
