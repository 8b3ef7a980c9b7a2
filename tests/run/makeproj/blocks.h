/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef BLOCKS_H
#define BLOCKS_H

/* N blocks of SIZE bytes each, all live at once, then all freed; 0 when
   every allocation succeeded. */
int blocks_hold(int n, int size);

#endif
