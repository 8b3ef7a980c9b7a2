/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A symbol session's life: the libdwfl handle on one process, its module
   list (read from /proc/PID/maps at start, on request, and once per code
   address found in no module), and the copy made for a forked child. */
#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/xalloc.h"
#include "sym_priv.h"

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

/* dwfl_report_end callback: a module dropped by a re-reading describes
   its addresses met so far and takes its tables along, and the unwinding rules of its addresses, since another
   module may be mapped there next. Despite the prototype, libdwfl passes
   the address of the module's userdata, as it does to dwfl_getmodules
   callbacks. */
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
	sym_frames_describe(ss, mod, lo, hi);
	sym_rules_forget(&ss->rules, lo, hi);
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
	ss->uw.page_addr = 1;
	u64map_init(&ss->frames);
	u64map_init(&ss->refreshed);
	sym_rules_init(&ss->rules);
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
	if (sym_unwind_attach(ss) != 0)
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
	/* The Dwfl's process state uses ARCH_ELF, so it goes first. */
	if (ss->dwfl) {
		dwfl_getmodules(ss->dwfl, module_free_table, NULL, 0);
		dwfl_end(ss->dwfl);
	}
	if (ss->arch_elf)
		elf_end(ss->arch_elf);
	for (size_t pos = 0; u64map_next(&ss->frames, &pos, &pc, &val);)
		sym_frame_free((struct sym_frame *)(uintptr_t)val);
	u64map_fini(&ss->frames);
	u64map_fini(&ss->refreshed);
	sym_rules_fini(&ss->rules);
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
	cs->libdw_only = ss->libdw_only;
	/* The child starts with the parent's mappings, so everything the
	   parent resolved or compiled holds for it too. Copied, not shared:
	   each session frees its own records. */
	sym_rules_fini(&cs->rules);
	sym_rules_copy(&cs->rules, &ss->rules);
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
	Dwfl_Module *mod = dwfl_addrmodule(ss->dwfl, pc);
	bool fresh;

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
