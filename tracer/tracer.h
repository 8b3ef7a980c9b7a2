/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The tracer: runs or attaches to a target and produces struct ht_event
   values. Event sources are interchangeable backends behind this header. */
#ifndef HT_TRACER_TRACER_H
#define HT_TRACER_TRACER_H

#endif
