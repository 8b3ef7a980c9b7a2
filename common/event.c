/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Names of allocation entry points. */
#include "event.h"

static const char *const names[HT_FN_COUNT] = {
	[HT_FN_MALLOC] = "malloc",
	[HT_FN_CALLOC] = "calloc",
	[HT_FN_REALLOC] = "realloc",
	[HT_FN_REALLOCARRAY] = "reallocarray",
	[HT_FN_MEMALIGN] = "memalign",
	[HT_FN_POSIX_MEMALIGN] = "posix_memalign",
	[HT_FN_ALIGNED_ALLOC] = "aligned_alloc",
	[HT_FN_VALLOC] = "valloc",
	[HT_FN_PVALLOC] = "pvalloc",
	[HT_FN_NEW] = "operator new",
	[HT_FN_NEW_ARRAY] = "operator new[]",
	[HT_FN_NEW_ALIGNED] = "operator new(align_val_t)",
	[HT_FN_NEW_ARRAY_ALIGNED] = "operator new[](align_val_t)",
	[HT_FN_FREE] = "free",
	[HT_FN_DELETE] = "operator delete",
	[HT_FN_DELETE_ARRAY] = "operator delete[]",
};

const char *
ht_alloc_fn_name(enum ht_alloc_fn fn)
{
	if ((unsigned)fn < HT_FN_COUNT && names[fn])
		return names[fn];
	return "?";
}
