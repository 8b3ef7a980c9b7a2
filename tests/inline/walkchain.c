/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The dispatch between a chain's frames (walkchain.h), shared by the
   tests that walk chains. */
#include "walkchain.h"

uint64_t
walk_next(struct walk_chain *c, unsigned i)
{
	uint64_t r;
	switch (c->kinds[i]) {
	case 'F':
		r = walk_fp(c, i);
		break;
	case 'N':
		r = walk_nofp(c, i);
		break;
	case 'V':
		r = walk_vla(c, i);
		break;
	case 'C':
		r = walk_nocfi(c, i);
		break;
	default:
		r = c->leaf(c);
		break;
	}
	c->sum += r; /* not a tail call: this frame stays */
	return r;
}
