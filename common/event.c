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
	[HT_FN_PYARENA_ALLOC] = "pymalloc arena",
	[HT_FN_PYARENA_FREE] = "pymalloc arena free",
};

static uint64_t
product(uint64_t a, uint64_t b, bool *overflow)
{
	*overflow = b && a > UINT64_MAX / b;
	return *overflow ? UINT64_MAX : a * b;
}

bool
ht_event_from_call(enum ht_alloc_fn fn, const uint64_t args[3],
		   uint64_t result, struct ht_event *ev)
{
	bool overflow = false;
	ev->kind = HT_EV_ALLOC;
	ev->fn = fn;
	ev->addr = result;
	ev->old_addr = 0;
	ev->align = 0;
	switch (fn) {
	case HT_FN_REALLOC:
	case HT_FN_REALLOCARRAY:
		ev->kind = HT_EV_REALLOC;
		ev->old_addr = args[0];
		ev->size = fn == HT_FN_REALLOC
			? args[1] : product(args[1], args[2], &overflow);
		return args[0] || result;
	case HT_FN_CALLOC:
		ev->size = product(args[0], args[1], &overflow);
		break;
	case HT_FN_MEMALIGN:
	case HT_FN_ALIGNED_ALLOC:
		ev->align = args[0];
		ev->size = args[1];
		break;
	case HT_FN_POSIX_MEMALIGN:
		ev->align = args[1];
		ev->size = args[2];
		break;
	case HT_FN_PYARENA_ALLOC:
		ev->size = args[1];
		break;
	case HT_FN_VALLOC:
	case HT_FN_PVALLOC:
		ev->align = 4096;
		ev->size = args[0];
		break;
	case HT_FN_NEW_ALIGNED:
	case HT_FN_NEW_ARRAY_ALIGNED:
		/* (size, std::align_val_t[, const std::nothrow_t &]) */
		ev->align = args[1];
		ev->size = args[0];
		break;
	default:
		ev->size = args[0];
		break;
	}
	return result != 0 && !overflow;
}

unsigned
ht_alloc_fn_ptr_arg(enum ht_alloc_fn fn)
{
	return fn == HT_FN_PYARENA_FREE ? 1 : 0;
}

unsigned
ht_alloc_fn_internal_callers(enum ht_alloc_fn fn)
{
	return fn == HT_FN_PYARENA_ALLOC ? 1 : 0;
}

const char *
ht_alloc_fn_name(enum ht_alloc_fn fn)
{
	if ((unsigned)fn < HT_FN_COUNT && names[fn])
		return names[fn];
	return "?";
}
