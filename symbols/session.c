/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A symbol session: the owner of everything symbols/ keeps for one
   process, and the only file that re-reads its modules. It holds the
   libdwfl handle and the module list (read from /proc/PID/maps at start,
   on request, and once per code address found in no module), the record
   of every address resolved (resolve.c makes them, the symbolizer hands
   them out), and the unwinder (unwind.c), which it walks again when a walk
   meets code in no module; and it makes the copy for a forked child. The
   files below it are handed the module or table they work on, never the
   session. */
#include "session_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/synthframe.h"
#include "common/xalloc.h"
#include "frame.h"
#include "module.h"
#include "resolve.h"
#include "rules.h"
#include "synth.h"

/* libdwfl wants a pointer to the search path; NULL asks for its default
   (the object's directory, .debug/ and /usr/lib/debug). Never written. */
static char *debuginfo_path;

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

/* Read all of /proc/PID/FILE into a malloc'd buffer. Returns its length and
   stores it in *OUT, or returns -errno. */
static long
read_proc_file(pid_t pid, const char *file, char **out)
{
	char path[64];
	size_t cap = 4096, len = 0;
	char *buf;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	buf = ht_xmalloc(cap);
	for (;;) {
		size_t got = fread(buf + len, 1, cap - len - 1, f);

		len += got;
		if (len + 1 < cap)
			break;
		ht_xgrow((void **)&buf, &cap, cap + 1, 1);
	}
	if (ferror(f)) {
		int err = errno ? errno : EIO;

		fclose(f);
		free(buf);
		return -err;
	}
	fclose(f);
	buf[len] = '\0';
	*out = buf;
	return (long)len;
}

/* The process's start time in clock ticks (field 22 of /proc/PID/stat), or
   0 when unreadable. Together with the pid it names one process: a pid is
   reused only by a process started later. */
static unsigned long long
read_start_time(pid_t pid)
{
	unsigned long long t = 0;
	char *stat, *p;
	int field = 2;

	if (read_proc_file(pid, "stat", &stat) < 0)
		return 0;
	/* The command name (field 2) may hold spaces and parentheses; it
	   ends at the last ')'. */
	p = strrchr(stat, ')');
	while (p && *p && field < 22) {
		p = strchr(p + 1, ' ');
		field++;
	}
	if (p)
		t = strtoull(p, NULL, 10);
	free(stat);
	return t;
}

/* Whether SS's process still exists (and is not a later process that got
   its pid). Once gone, it stays gone. */
static bool
still_there(struct sym_session *ss)
{
	if (!ss->gone && read_start_time(ss->pid) != ss->start_time)
		ss->gone = true;
	return !ss->gone;
}

/* Give the records of SS's addresses in [LO, HI) that have none their
   lines now, from MOD, which is about to be dropped. */
static void
describe_range(struct sym_session *ss, Dwfl_Module *mod, uint64_t lo,
	       uint64_t hi)
{
	uint64_t pc, val;

	for (size_t pos = 0; u64map_next(&ss->frames, &pos, &pc, &val);) {
		struct sym_frame *f = (struct sym_frame *)(uintptr_t)val;

		if (!f->lines && pc >= lo && pc < hi)
			sym_frame_describe(f, mod, pc, &ss->stats);
	}
}

/* dwfl_report_end callback: a module dropped by a re-reading describes
   its addresses met so far and takes its tables along, and the unwinding
   rules of its addresses, since another module may be mapped there next.
   Despite the prototype, libdwfl passes the address of the module's
   userdata, as it does to dwfl_getmodules callbacks. */
static int
module_removed(Dwfl_Module *mod, void *userdata, const char *name,
	       Dwarf_Addr base, void *arg)
{
	struct sym_session *ss = arg;
	void **slot = userdata;
	Dwarf_Addr lo = base, hi = base;

	(void)name;
	dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
	/* Records named from it and not printed yet are printed after it
	   is gone, with the lines it gives them now. */
	describe_range(ss, mod, lo, hi);
	sym_rules_forget(&ss->unwinder.rules, lo, hi);
	sym_module_free(*slot);
	*slot = NULL;
	return DWARF_CB_OK;
}

/* dwfl_getmodules callback: dwfl_end frees modules without telling, so
   their tables are freed first. */
static int
module_free_table(Dwfl_Module *mod, void **userdata, const char *name,
		  Dwarf_Addr base, void *arg)
{
	(void)mod;
	(void)name;
	(void)base;
	(void)arg;
	sym_module_free(*userdata);
	*userdata = NULL;
	return DWARF_CB_OK;
}

static struct sym_session *
session_alloc(pid_t pid)
{
	struct sym_session *ss = ht_xcalloc(1, sizeof(*ss));

	ss->pid = pid;
	u64map_init(&ss->frames);
	u64map_init(&ss->refreshed);
	sym_unwinder_init(&ss->unwinder, &ss->stats);
	return ss;
}

/* Report PID's modules into a fresh Dwfl and get it ready to unwind.
   Returns 0 or a positive errno value. */
static int
session_open(struct sym_session *ss)
{
	int err;

	ss->start_time = read_start_time(ss->pid);
	ss->dwfl = dwfl_begin(&proc_callbacks);
	if (!ss->dwfl)
		return ENOMEM;
	dwfl_report_begin(ss->dwfl);
	err = dwfl_linux_proc_report(ss->dwfl, ss->pid);
	if (dwfl_report_end(ss->dwfl, NULL, NULL) != 0 && err == 0)
		err = ENOMEM;
	if (err)
		return err > 0 ? err : ENOEXEC;
	if (sym_unwinder_attach(&ss->unwinder, ss->dwfl, ss->pid) != 0)
		return ENOEXEC;
	return 0;
}

struct sym_session *
sym_session_new(pid_t pid)
{
	struct sym_session *ss = session_alloc(pid);
	int err = session_open(ss);

	if (err) {
		sym_session_free(ss);
		errno = err;
		return NULL;
	}
	return ss;
}

void
sym_session_free(struct sym_session *ss)
{
	uint64_t pc, val;

	if (!ss)
		return;
	/* The Dwfl's process state uses the unwinder's machine image, so it
	   goes first. */
	if (ss->dwfl) {
		dwfl_getmodules(ss->dwfl, module_free_table, NULL, 0);
		dwfl_end(ss->dwfl);
	}
	sym_unwinder_fini(&ss->unwinder);
	for (size_t pos = 0; u64map_next(&ss->frames, &pos, &pc, &val);)
		sym_frame_free((struct sym_frame *)(uintptr_t)val);
	u64map_fini(&ss->frames);
	u64map_fini(&ss->refreshed);
	free(ss);
}

struct sym_session *
sym_session_fork(const struct sym_session *ss, pid_t child)
{
	struct sym_session *cs = session_alloc(child);
	uint64_t pc, val;
	int err = session_open(cs);

	if (err) {
		sym_session_free(cs);
		errno = err;
		return NULL;
	}
	cs->show_below_main = ss->show_below_main;
	cs->unwinder.libdw_only = ss->unwinder.libdw_only;
	/* The child starts with the parent's mappings, so everything the
	   parent resolved or compiled holds for it too. Copied, not shared:
	   each session frees its own records. */
	sym_rules_fini(&cs->unwinder.rules);
	sym_rules_copy(&cs->unwinder.rules, &ss->unwinder.rules);
	for (size_t pos = 0; u64map_next(&ss->frames, &pos, &pc, &val);) {
		const struct sym_frame *f = (const void *)(uintptr_t)val;

		u64map_put(&cs->frames, pc,
			   (uint64_t)(uintptr_t)sym_frame_copy(f));
	}
	return cs;
}

void
sym_session_refresh(struct sym_session *ss)
{
	char *maps;
	long len;
	FILE *f;

	if (!still_there(ss))
		return;
	/* Re-reporting first marks every module unused and drops those not
	   reported again. A process that vanished (or turned zombie) in the
	   meantime would leave no modules at all, and the profile is written
	   after the exit; so keep a copy of the maps to report from if the
	   reading through libdwfl fails, and give up on an empty one. */
	len = read_proc_file(ss->pid, "maps", &maps);
	if (len <= 0) {
		if (len == 0)
			free(maps);
		ss->gone = true;
		return;
	}
	dwfl_report_begin(ss->dwfl);
	if (dwfl_linux_proc_report(ss->dwfl, ss->pid) != 0) {
		f = fmemopen(maps, (size_t)len, "r");
		if (f) {
			dwfl_linux_proc_maps_report(ss->dwfl, f);
			fclose(f);
		}
	}
	dwfl_report_end(ss->dwfl, module_removed, ss);
	free(maps);
}

Dwfl_Module *
sym_session_module(struct sym_session *ss, uint64_t pc)
{
	Dwfl_Module *mod;
	bool fresh;

	/* A Python frame lies in no module, and is no reason to re-read
	   them. */
	if (synth_frame_is(pc))
		return NULL;
	mod = dwfl_addrmodule(ss->dwfl, pc);
	if (mod || ss->gone)
		return mod;
	/* Code outside every known module is usually a library mapped since
	   the last reading. Retrying costs a read of /proc/PID/maps, so each
	   such pc gets one retry, however often it shows up. */
	u64map_slot(&ss->refreshed, pc, &fresh);
	if (!fresh)
		return NULL;
	sym_session_refresh(ss);
	return dwfl_addrmodule(ss->dwfl, pc);
}

unsigned
sym_unwind(struct sym_session *ss, const struct sym_capture *cap,
	   uint64_t *pcs, unsigned max)
{
	unsigned n, verified;

	if (max == 0)
		return 0;
	ss->stats.events++;
	n = sym_unwinder_walk(&ss->unwinder, cap, ss->gone, pcs, max,
			      &verified);
	/* A frame in code outside every module is in a library loaded since
	   the modules were read: the walk went no further than that frame,
	   or went on by frame pointers and may be wrong. sym_session_module
	   re-reads the modules once per such pc; when that finds the
	   module, walk again. */
	for (unsigned i = verified; i < n; i++) {
		if (dwfl_addrmodule(ss->dwfl, pcs[i]))
			continue;
		if (sym_session_module(ss, pcs[i]))
			n = sym_unwinder_walk(&ss->unwinder, cap, ss->gone, pcs,
					      max, &verified);
		break;
	}
	ss->stats.frames += n;
	return n;
}

void
sym_session_unwind_with_libdw(struct sym_session *ss, bool only)
{
	ss->unwinder.libdw_only = only;
}

void
sym_session_unwind_stats(const struct sym_session *ss,
			 struct sym_unwind_stats *out)
{
	*out = ss->stats;
}

/* The record of a synthetic PC: named and described by what the tracer
   interned, never by a module (it lies in none), never "below main". */
static struct sym_frame *
synth_record(uint64_t pc)
{
	struct sym_frame *f = ht_xcalloc(1, sizeof(*f));
	const char *name = sym_synth_name(pc);

	f->name = name ? ht_xstrdup(name) : NULL;
	f->lines = ht_xcalloc(1, sizeof(*f->lines));
	f->lines[0] = sym_synth_describe(pc);
	f->n_lines = 1;
	return f;
}

/* PC's record, resolved when first asked (its lines possibly not yet).
   Never NULL. */
static struct sym_frame *
frame_get(struct sym_session *ss, uint64_t pc)
{
	uint64_t *val = u64map_get(&ss->frames, pc);
	struct sym_frame *f;

	if (val)
		return (struct sym_frame *)(uintptr_t)*val;
	if (synth_frame_is(pc))
		f = synth_record(pc);
	else
		f = sym_frame_resolve(sym_session_module(ss, pc), pc,
				      &ss->stats);
	u64map_put(&ss->frames, pc, (uint64_t)(uintptr_t)f);
	return f;
}

/* PC's record with its lines. */
static const struct sym_frame *
frame_described(struct sym_session *ss, uint64_t pc)
{
	struct sym_frame *f = frame_get(ss, pc);

	/* Its module was there when it was named, and a module is not
	   dropped before its records are described (module_removed): none
	   now means none then. */
	if (!f->lines)
		sym_frame_describe(f, dwfl_addrmodule(ss->dwfl, pc), pc,
				   &ss->stats);
	return f;
}

static const char *
session_function_name(void *ctx, uint64_t pc)
{
	return frame_get(ctx, pc)->name;
}

static unsigned
session_describe(void *ctx, uint64_t pc, const char **lines, unsigned max)
{
	const struct sym_session *ss = ctx;
	const struct sym_frame *f = frame_described(ctx, pc);
	unsigned n = f->n_lines < max ? f->n_lines : max;

	for (unsigned i = 0; i < n; i++)
		lines[i] = f->lines[i];
	/* The real function is the last line, when MAX leaves room for it. */
	if (n == f->n_lines && f->below_main && !ss->show_below_main)
		lines[n - 1] = f->below_main;
	return n;
}

void
sym_session_show_below_main(struct sym_session *ss, bool show)
{
	ss->show_below_main = show;
}

/* The module holding PC, as dwfl reported it from /proc/PID/maps: its
   lowest address is where its file's offset 0 is mapped (the first
   PT_LOAD segment's), so the offset is 0. No re-reading of the modules:
   the addresses asked about were all described, with their module then
   known, and the process may be gone. */
static bool
session_mapping(void *ctx, uint64_t pc, struct ht_mapping *out)
{
	struct sym_session *ss = ctx;
	/* a Python frame lies in no object (libdwfl would answer with the
	   module nearest below it) */
	Dwfl_Module *mod = synth_frame_is(pc) ? NULL
					      : dwfl_addrmodule(ss->dwfl, pc);
	if (!mod)
		return false;
	Dwarf_Addr start, end, bias;
	const char *file = NULL;
	const char *name = dwfl_module_info(mod, NULL, &start, &end, NULL,
					    NULL, &file, NULL);
	/* the name is the path /proc/PID/maps gives, as the process sees
	   it; the file libdw opened may be another path to it */
	*out = (struct ht_mapping){ .start = start, .end = end,
				    .file = name ? name : file };
	/* the build-id is read with the ELF file, opened here when the
	   symbol cache spared its opening until now */
	if (!dwfl_module_getelf(mod, &bias))
		return true;
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &bits, &vaddr);
	if (len > 0) {
		out->build_id = bits;
		out->build_id_len = (size_t)len;
	}
	return true;
}

struct ht_symbolizer
sym_session_symbolizer(struct sym_session *ss)
{
	return (struct ht_symbolizer){
		.ctx = ss,
		.function_name = session_function_name,
		.describe = session_describe,
		.mapping = session_mapping,
	};
}
