/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Compiled to a relocatable object for test_elfsym: its .symtab spells
   symbol versions into names, ht_versioned@HT_1 (hidden) at ht_v1 and
   ht_versioned@@HT_2 (the default) at ht_v2. */
__asm__(".symver ht_v1, ht_versioned@HT_1\n"
	".symver ht_v2, ht_versioned@@HT_2\n");

void ht_v1(void);
void ht_v2(void);

void
ht_v1(void)
{
}

void
ht_v2(void)
{
}
