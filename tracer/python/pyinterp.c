/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Finding CPython in a loaded object: _PyRuntime, the version (3.13's
   debug offsets, else Py_Version, else the file's name), the evaluation
   loop's extent and PyCode_Type, from .dynsym alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "tracer/python/pypriv.h"
#include "tracer/target/elfsym.h"
#include "tracer/target/target.h"

/* 3.MINOR from "python3.MINOR" in PATH (libpython3.9.so.1.0,
   /usr/bin/python3.9), else 0. */
static unsigned
minor_from_path(const char *path)
{
	const char *base = strrchr(path, '/');
	const char *p = strstr(base ? base : path, "python3.");
	char *end;
	unsigned long minor;

	if (!p)
		return 0;
	minor = strtoul(p + 8, &end, 10);
	return end != p + 8 && minor < 100 ? (unsigned)minor : 0;
}

/* 3.MINOR from the Py_Version OBJ defines (3.11+), else 0. */
static unsigned
minor_from_py_version(const struct elf_object *obj)
{
	struct elf_symbol sym;
	uint32_t hex;

	if (elf_object_find_data(obj, "Py_Version", &sym) ||
	    elf_object_read(obj, sym.vaddr, &hex, 4) != 4 || hex >> 24 != 3)
		return 0;
	return hex >> 16 & 0xff;
}

/* What the interpreter's symbols give: PyCode_Type, the eval loop, the
   object's extent. False (NOTE set) when one is missing. */
static bool
find_symbols(struct py_interp *py, const struct elf_object *obj,
	     uint64_t bias, const char *path, char *note, size_t notelen)
{
	struct elf_symbol type, eval;

	if (elf_object_find_data(obj, "PyCode_Type", &type) ||
	    elf_object_find(obj, "_PyEval_EvalFrameDefault", &eval) ||
	    !eval.size) {
		snprintf(note, notelen, "%s: no PyCode_Type or "
			 "_PyEval_EvalFrameDefault", path);
		return false;
	}
	py->code_type = bias + type.vaddr;
	py->eval_lo = bias + eval.vaddr;
	py->eval_hi = py->eval_lo + eval.size;
	maps_extent(py->pid, path, &py->obj_lo, &py->obj_hi);
	return true;
}

struct py_interp *
py_interp_find(pid_t pid, const struct elf_object *obj, uint64_t bias,
	       const char *path, char *note, size_t notelen)
{
	struct elf_symbol rt;
	struct py_interp *py;
	unsigned minor;

	if (notelen)
		note[0] = 0;
	if (elf_object_find_data(obj, "_PyRuntime", &rt))
		return NULL;
	py = ht_xcalloc(1, sizeof(*py));
	py->pid = pid;
	minor = minor_from_py_version(obj);
	if (!minor)
		minor = minor_from_path(path);
	if (minor >= 13) {
		if (py_layout_from_debug_offsets(py, bias + rt.vaddr, note,
						 notelen))
			goto fail;
	} else if (!py_layout_from_table(py, minor, bias + rt.vaddr)) {
		if (minor)
			snprintf(note, notelen, "Python 3.%u is not one "
				 "heaptrace reads (3.8 to 3.13)", minor);
		else
			snprintf(note, notelen, "%s: Python of unknown "
				 "version", path);
		goto fail;
	}
	py->minor = py->code.minor;
	snprintf(py->version, sizeof(py->version), "3.%u", py->minor);
	if (!find_symbols(py, obj, bias, path, note, notelen))
		goto fail;
	return py;
fail:
	free(py);
	return NULL;
}

void
py_interp_free(struct py_interp *py)
{
	if (!py)
		return;
	py_code_cache_free(&py->cache);
	free(py);
}

struct py_interp *
py_interp_clone(const struct py_interp *py, pid_t child)
{
	struct py_interp *c;

	if (!py)
		return NULL;
	c = ht_xmalloc(sizeof(*c));
	*c = *py;
	c->pid = child;
	py_code_cache_copy(&c->cache, &py->cache);
	memset(&c->stats, 0, sizeof(c->stats));
	return c;
}

const char *
py_interp_version(const struct py_interp *py)
{
	return py->version;
}

const struct py_walk_params *
py_interp_params(const struct py_interp *py)
{
	return &py->params;
}

bool
py_interp_is_eval(const struct py_interp *py, uint64_t pc)
{
	return pc >= py->eval_lo && pc < py->eval_hi;
}

const struct py_stats *
py_interp_stats(const struct py_interp *py)
{
	return &py->stats;
}
