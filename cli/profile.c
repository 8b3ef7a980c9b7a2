/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One profile per traced process: its symbol session (unwinding and
   naming), its snapshot engine, and, when it ends, its massif.out file and
   the summary line. A forked child starts from a copy of its parent's
   engine, as it starts from a copy of its heap. */
#include "profile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "common/u64map.h"
#include "common/xalloc.h"
#include "output/output.h"
#include "output/pprof.h"
#include "output/sites.h"
#include "leakcheck.h"
#include "report.h"
#include "snapshot_ack.h"
#include "snapshot/extra.h"
#include "snapshot/snapshot.h"
#include "symbols/session.h"
#include "symbols/table.h"
#include "tracer/target/elfsym.h"

struct profile {
	pid_t pid;
	struct sym_session *ss;
	struct sym_table *no_symbols; /* stands in when SS could not be made */
	struct ht_symbolizer sym;
	struct snap_engine *eng;
	uint64_t t_start;  /* tracer clock at the start snapshot */
	bool is_static;    /* statically linked: see loader_allocation() */
	char **argv;       /* the cmd: line */
	size_t argc;
	unsigned n_on_demand; /* snapshots written on demand (SIGUSR1) */
	char *last_on_demand; /* the last of them written, or NULL */
	bool foreign_malloc; /* its malloc is not glibc's */
	struct leakcheck_result leak; /* --leak-check's verdicts */
};

/* A profile written: the summary line's part for it. */
struct written {
	char *path;
	char *text;    /* "peak useful heap 3.0 KiB at snapshot 4 in PATH
			  (inline)" */
	char *program; /* the file name of the program it profiled */
	uint64_t peak; /* the figure `heaptrace report` shows first */
	bool first;    /* the profile of the first process (the program) */
};

struct profiler {
	const struct ht_options *opt;
	char *const *argv;
	struct u64map profiles; /* pid -> struct profile * */
	int write_failures;
	pid_t first_pid;        /* the first process profiled */
	struct written *written; /* in the order first written */
	size_t n_written;
	struct u64map counted;   /* pid -> 1: the processes profiled */
	pid_t foreign_next; /* announced another allocator than glibc's
			       before its profile started (static) */
	uint64_t first_leak_errors; /* the first process's leak errors */
	/* The last profile looked up: every event asks (twice: its feed
	   and the exec-wrapper rule's heap), nearly always for the same
	   process. NULL: none. */
	pid_t hot_pid;
	struct profile *hot;
	bool no_summary;        /* profiler_set_summary(false) */
	profiler_view_fn *view; /* NULL: snapshots go to files */
	void *view_ctx;
	pid_t view_write;       /* 0, or the process whose next request
				   writes its files too */
	char *view_said;        /* what that write came to, for the view */
	const char *snapshot_name; /* the on-demand files' base pattern when
				      the profile goes to no regular file */
};

static struct profile *
profile_get(struct profiler *prof, pid_t pid)
{
	if (prof->hot && prof->hot_pid == pid)
		return prof->hot;
	uint64_t *v = u64map_get(&prof->profiles, (uint64_t)pid);
	struct profile *pr = v ? (struct profile *)(uintptr_t)*v : NULL;
	prof->hot_pid = pid;
	prof->hot = pr;
	return pr;
}

/* Forget PID's profile (the caller frees it). */
static void
profile_forget(struct profiler *prof, pid_t pid)
{
	u64map_remove(&prof->profiles, (uint64_t)pid, NULL);
	if (prof->hot_pid == pid)
		prof->hot = NULL;
}

static void
argv_copy(struct profile *pr, char *const *argv)
{
	size_t n = 0;
	while (argv[n])
		n++;
	pr->argv = ht_xcalloc(n + 1, sizeof(*pr->argv));
	for (size_t i = 0; i < n; i++)
		pr->argv[i] = ht_xstrdup(argv[i]);
	pr->argc = n;
}

/* The command line of PID after an exec, from /proc. */
static void
argv_from_proc(struct profile *pr, pid_t pid)
{
	char path[64], buf[8192];
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	FILE *f = fopen(path, "re");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	char *words[256];
	size_t k = 0;
	for (size_t i = 0; i < n && k < 255; i += strlen(buf + i) + 1)
		words[k++] = buf + i;
	words[k] = NULL;
	argv_copy(pr, words);
}

static void
profile_free(struct profile *pr)
{
	if (!pr)
		return;
	snap_engine_free(pr->eng);
	leakcheck_result_fini(&pr->leak);
	sym_session_free(pr->ss);
	sym_table_free(pr->no_symbols);
	for (size_t i = 0; i < pr->argc; i++)
		free(pr->argv[i]);
	free(pr->argv);
	free(pr->last_on_demand);
	free(pr);
}

static bool
is_static_program(pid_t pid)
{
	char exe[64];
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	struct elf_object *obj = elf_object_open(exe);
	bool is_static = obj && !elf_object_has_interp(obj);
	elf_object_close(obj);
	return is_static;
}

/* A static glibc does at start-up, in _dl_non_dynamic_init, what ld.so
   does for a dynamically linked program, but with the real malloc where
   ld.so uses a private allocator nobody sees. Those blocks are left out so
   that the static build's profile is the dynamic build's. */
static bool
loader_allocation(const struct profile *pr, const struct ht_event *ev)
{
	if (!pr->is_static)
		return false;
	for (uint32_t i = 0; i < ev->npcs; i++) {
		const char *fn = pr->sym.function_name(pr->sym.ctx, ev->pcs[i]);
		if (fn && strcmp(fn, "_dl_non_dynamic_init") == 0)
			return true;
	}
	return false;
}

/* A started engine for PR: the extra bytes of Valgrind's arena under
   --massif-compat=yes, else glibc's chunks when GLIBC (the program's malloc
   is glibc's), else the estimate (--heap-admin plus rounding). */
static struct snap_engine *
engine_new(const struct profiler *prof, struct profile *pr, bool glibc)
{
	enum snap_extra_kind kind = prof->opt->massif_compat
		? SNAP_EXTRA_VALGRIND
		: glibc ? SNAP_EXTRA_GLIBC : SNAP_EXTRA_ESTIMATE;
	struct snap_engine *eng = snap_engine_new(
		prof->opt, &pr->sym, snap_extra_new(kind, prof->opt));
	snap_engine_start(eng, 0);
	return eng;
}

static void
on_process_start(void *ctx, pid_t pid, pid_t parent, uint64_t time)
{
	struct profiler *prof = ctx;
	struct profile *old = profile_get(prof, pid);
	if (old) {
		/* A process that exec'd: its old profile was ended already. */
		profile_forget(prof, pid);
		profile_free(old);
	}
	struct profile *pr = ht_xcalloc(1, sizeof(*pr));
	if (!prof->first_pid)
		prof->first_pid = pid;
	pr->pid = pid;
	pr->t_start = time;
	pr->is_static = is_static_program(pid);
	struct profile *from = parent && parent != pid
		? profile_get(prof, parent) : NULL;
	if (from && from->ss) {
		pr->ss = sym_session_fork(from->ss, pid);
		pr->sym = sym_session_symbolizer(pr->ss);
		pr->eng = snap_engine_clone(from->eng);
		snap_engine_set_symbolizer(pr->eng, &pr->sym);
		pr->t_start = from->t_start;
		argv_copy(pr, from->argv);
	} else {
		pr->ss = sym_session_new(pid);
		if (pr->ss) {
			sym_session_show_below_main(pr->ss,
						    prof->opt->show_below_main);
			pr->sym = sym_session_symbolizer(pr->ss);
		} else {
			ht_warn("process %d: cannot read its symbols: %s",
				(int)pid, strerror(errno));
			pr->no_symbols = sym_table_new();
			pr->sym = sym_table_symbolizer(pr->no_symbols);
		}
		pr->foreign_malloc = prof->foreign_next == pid;
		pr->eng = engine_new(prof, pr, !pr->foreign_malloc);
		if (parent == pid)
			argv_from_proc(pr, pid);
		else
			argv_copy(pr, prof->argv);
	}
	prof->foreign_next = 0;
	u64map_put(&prof->profiles, (uint64_t)pid, (uint64_t)(uintptr_t)pr);
	prof->hot = NULL; /* a miss for PID may be memoised */
}

/* PID's malloc is glibc's or not: the estimate replaces glibc's chunk
   model for another allocator, whose blocks have no glibc chunk sizes. */
static void
on_allocator(void *ctx, pid_t pid, bool glibc)
{
	struct profiler *prof = ctx;
	struct profile *pr = profile_get(prof, pid);
	if (pr)
		pr->foreign_malloc = !glibc;
	if (glibc || prof->opt->massif_compat)
		return;
	if (!pr) {
		prof->foreign_next = pid;
		return;
	}
	/* Probes are planted before any call is reported: the engine has
	   nothing yet, and starts over with the other model. */
	if (snap_engine_stats(pr->eng).events)
		return;
	snap_engine_free(pr->eng);
	pr->eng = engine_new(prof, pr, false);
}

static void
on_modules_changed(void *ctx, pid_t pid)
{
	struct profile *pr = profile_get(ctx, pid);
	if (pr && pr->ss)
		sym_session_refresh(pr->ss);
}

static unsigned
on_unwind(void *ctx, pid_t pid, const struct tracer_capture *cap,
	  uint64_t *pcs, unsigned max)
{
	struct profile *pr = profile_get(ctx, pid);
	if (!pr || !pr->ss || !max) {
		if (max)
			pcs[0] = cap->regs.rip;
		return max ? 1 : 0;
	}
	struct sym_capture sc = {
		.regs = cap->regs, .stack = cap->stack, .len = cap->len,
		.stack_addr = cap->stack_addr, .running = cap->running,
	};
	return sym_unwind(pr->ss, &sc, pcs, max);
}

static int
on_stub_rule(void *ctx, pid_t pid, uint64_t lookup_pc,
	     struct ht_unwind_rule *out)
{
	struct profile *pr = profile_get(ctx, pid);
	if (!pr || !pr->ss)
		return -ESRCH;
	return sym_stub_rule_get(pr->ss, lookup_pc, out);
}

static void
on_event(void *ctx, pid_t pid, const struct ht_event *ev)
{
	struct profile *pr = profile_get(ctx, pid);
	if (!pr)
		return;
	if (loader_allocation(pr, ev)) {
		if (ev->kind == HT_EV_REALLOC && ev->old_addr) {
			/* its BEGIN may have been fed: settle it as failed */
			struct ht_event undo = *ev;
			undo.addr = 0;
			undo.size = 1;
			snap_engine_feed(pr->eng, &undo);
		}
		return;
	}
	struct ht_event e = *ev;
	e.time = ev->time > pr->t_start ? ev->time - pr->t_start : 0;
	snap_engine_feed(pr->eng, &e);
}

static void
human_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	size_t u = 0;
	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(*units)) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%.1f %s", v, units[u]);
}

/* The figure `heaptrace report` shows first of PR's profile, and its
   name: the heap requested (without the allocator's extra bytes) at the
   peak snapshot, or at the largest one (heap and stacks) when there is
   none; the pages mapped with --pages-as-heap=yes; heap, extra and stacks
   together when only stacks are measured. AT: the snapshot, or -1 when
   there is none. */
struct peak_figure {
	const char *what;
	uint64_t bytes;
	long at;
};

static struct peak_figure
peak_figure(const struct profiler *prof, const struct profile *pr)
{
	const struct ht_options *opt = prof->opt;
	struct peak_figure f = {
		.what = opt->pages_as_heap ? "peak pages mapped"
			: opt->heap ? "peak useful heap" : "peak stacks",
		.at = snap_engine_peak_index(pr->eng),
	};
	size_t n = f.at < 0 ? snap_engine_count(pr->eng) : 0;
	uint64_t best = 0;
	for (size_t i = 0; i < n; i++) {
		const struct snap_snapshot *s = snap_engine_snapshot(pr->eng, i);
		if (i == 0 || s->heap + s->stacks > best) {
			best = s->heap + s->stacks;
			f.at = (long)i;
		}
	}
	if (f.at < 0)
		return f;
	const struct snap_snapshot *s =
		snap_engine_snapshot(pr->eng, (size_t)f.at);
	f.bytes = opt->heap ? s->heap : s->heap + s->extra + s->stacks;
	return f;
}

/* The file name of PR's program, as a user would call it ("cc1"). */
static const char *
program_name(const struct profile *pr)
{
	if (!pr->argc || !pr->argv[0][0])
		return "?";
	const char *slash = strrchr(pr->argv[0], '/');
	return slash && slash[1] ? slash + 1 : pr->argv[0];
}

/* Remember PR's part of the summary line, printed once at the end of the
   session (profiler_free): a profile written again under the same name
   (a process that exec'd, or a name without %p) replaces its part. */
static void
note_written(struct profiler *prof, const struct profile *pr,
	     const char *path, const char *backend)
{
	struct peak_figure f = peak_figure(prof, pr);
	char size[32], at[48] = "";
	human_size(f.bytes, size, sizeof(size));
	if (f.at >= 0)
		snprintf(at, sizeof(at), " at snapshot %ld", f.at);
	char *text = ht_xasprintf("%s %s%s in %s (%s)", f.what, size, at,
				  path, backend);
	struct written *w = NULL;
	for (size_t i = 0; i < prof->n_written && !w; i++)
		if (!strcmp(prof->written[i].path, path))
			w = &prof->written[i];
	if (!w) {
		prof->written = ht_xreallocarray(prof->written,
						 prof->n_written + 1,
						 sizeof(*prof->written));
		w = &prof->written[prof->n_written++];
		*w = (struct written){ .path = ht_xstrdup(path) };
	}
	free(w->text);
	free(w->program);
	w->text = text;
	w->program = ht_xstrdup(program_name(pr));
	w->peak = f.bytes;
	w->first = w->first || pr->pid == prof->first_pid;
	u64map_put(&prof->counted, (uint64_t)pr->pid, 1);
}

/* PATH as the summary line names it after LEAD: its file name alone when
   it is in LEAD's directory. */
static const char *
beside(const char *path, const char *lead)
{
	const char *ps = strrchr(path, '/'), *ms = strrchr(lead, '/');
	if (ps && ms && ps - path == ms - lead &&
	    !strncmp(path, lead, (size_t)(ps - path)))
		return ps + 1;
	return path;
}

/* The summary line's part for the other processes: how many were
   profiled, and the one of the largest peak, with its file ("" for one
   process). */
static char *
others_text(const struct profiler *prof, size_t lead)
{
	size_t n = prof->counted.count;
	if (n < 2)
		return ht_xstrdup("");
	if (prof->n_written == 1)
		return ht_xasprintf("; %zu processes, one file (the last "
				    "written)", n);
	size_t top = lead;
	for (size_t i = 0; i < prof->n_written; i++)
		if (prof->written[i].peak > prof->written[top].peak)
			top = i;
	if (top == lead)
		return ht_xasprintf("; %zu processes, this one the largest", n);
	const struct written *w = &prof->written[top];
	char size[32];
	human_size(w->peak, size, sizeof(size));
	return ht_xasprintf("; %zu processes: largest %s %s in %s", n,
			    w->program, size,
			    beside(w->path, prof->written[lead].path));
}

/* The one line a session prints of its own: where the profile went, the
   peak `heaptrace report` shows first, how many processes were profiled
   and which of them reached the most, then the notes. */
static void
print_summary(struct profiler *prof)
{
	if (!prof->n_written || prof->no_summary)
		return;
	size_t lead = 0;
	for (size_t i = 0; i < prof->n_written; i++)
		if (prof->written[i].first) {
			lead = i;
			break;
		}
	char *others = others_text(prof, lead);
	ht_info("%s%s%s", prof->written[lead].text, others, ht_notes_take());
	free(others);
}

static void
print_stats(const struct profile *pr)
{
	struct snap_stats st = snap_engine_stats(pr->eng);
	ht_error("stats: process %d: %llu events (%llu allocations, %llu frees, "
		 "%llu reallocs, %llu ignored, %llu of unknown blocks); "
		 "%llu snapshots taken (%llu detailed, %llu peaks), %llu cullings; "
		 "%llu tree nodes", (int)pr->pid,
		 (unsigned long long)st.events, (unsigned long long)st.allocs,
		 (unsigned long long)st.frees, (unsigned long long)st.reallocs,
		 (unsigned long long)st.ignored,
		 (unsigned long long)st.unknown_frees,
		 (unsigned long long)st.snapshots_taken,
		 (unsigned long long)st.detailed_taken,
		 (unsigned long long)st.peaks_taken,
		 (unsigned long long)st.cullings,
		 (unsigned long long)st.tree_nodes);
	if (!pr->ss)
		return;
	struct sym_unwind_stats us;
	sym_session_unwind_stats(pr->ss, &us);
	ht_error("stats: process %d: unwinding: %llu stacks, %llu frames; "
		 "%llu walks by libdw (%llu for rules it alone follows); "
		 "%llu rules compiled, %llu read from the symbol cache "
		 "(%llu for libdw)", (int)pr->pid,
		 (unsigned long long)us.events, (unsigned long long)us.frames,
		 (unsigned long long)us.by_libdw,
		 (unsigned long long)us.fallbacks,
		 (unsigned long long)us.rules,
		 (unsigned long long)us.cached_rules,
		 (unsigned long long)us.complex);
	ht_error("stats: process %d: symbols: %llu addresses named (%llu "
		 "from the symbol cache), %llu described (%llu from the "
		 "symbol cache)", (int)pr->pid,
		 (unsigned long long)us.named,
		 (unsigned long long)us.cached_named,
		 (unsigned long long)us.described,
		 (unsigned long long)us.cached_described);
}

static size_t
on_known_rule_pcs(void *ctx, pid_t pid, uint64_t **out)
{
	struct profile *pr = profile_get(ctx, pid);
	*out = NULL;
	return pr && pr->ss ? sym_session_cached_rule_pcs(pr->ss, out) : 0;
}

static uint64_t
on_heap_bytes(void *ctx, pid_t pid)
{
	struct profile *pr = profile_get(ctx, pid);
	return pr ? snap_engine_heap(pr->eng) : 0;
}

/* PATTERN (a --massif-out-file) expanded for PR (malloc'd), or NULL
   after an error message. */
static char *
pattern_path(const char *pattern, const struct profile *pr)
{
	char cwd[PATH_MAX], err[256], *path = NULL;
	const char *dir = getcwd(cwd, sizeof(cwd)) ? cwd : NULL;
	if (out_filename_expand(pattern, pr->pid, dir, &path, err,
				sizeof(err))) {
		ht_error("%s", err);
		return NULL;
	}
	return path;
}

/* PR's profile file name (malloc'd), or NULL after an error message. */
static char *
profile_path(struct profiler *prof, const struct profile *pr)
{
	return pattern_path(prof->opt->out_file, pr);
}

static struct out_header
profile_header(const struct profiler *prof, const struct profile *pr)
{
	return (struct out_header){
		.desc_args = prof->opt->desc_args,
		.n_desc_args = prof->opt->n_desc_args,
		.cmd_argv = pr->argv,
		.cmd_argc = pr->argc,
		.time_unit = prof->opt->time_unit,
		.pages_as_heap = prof->opt->pages_as_heap,
		.threshold = prof->opt->threshold,
		.sampling_interval = prof->opt->sampling_interval,
		.sampling_seed = prof->opt->sampling_seed,
	};
}

/* The leak kinds in the .sites file's order. */
static const enum leak_kind sites_kind_order[OUT_SITES_KINDS] = {
	LEAK_DEFINITE, LEAK_INDIRECT, LEAK_POSSIBLE, LEAK_REACHABLE,
};

/* out_sites_leak's site_bytes over a profile's leak check. */
static bool
leak_site_bytes(void *ctx, uint32_t site, uint64_t bytes[OUT_SITES_KINDS])
{
	const struct leakcheck_result *r = ctx;
	const uint64_t *row = u64map_get(&r->rows, site);
	if (!row)
		return false;
	for (int k = 0; k < OUT_SITES_KINDS; k++)
		bytes[k] = r->by_site[*row][sites_kind_order[k]];
	return true;
}

/* The per-site statistics beside the profile at PATH: PATH.sites. */
static void
write_sites(struct profiler *prof, const struct profile *pr, const char *path,
	    const struct out_header *h)
{
	struct out_sites_leak leak = { .ctx = (void *)&pr->leak,
				       .site_bytes = leak_site_bytes };
	const enum leak_kind *order = sites_kind_order;
	if (pr->leak.done) {
		leak.mode = prof->opt->leak_check == HT_LEAK_CHECK_FULL
			? "full" : "summary";
		for (int k = 0; k < OUT_SITES_KINDS; k++) {
			leak.bytes[k] = pr->leak.totals.bytes[order[k]];
			leak.blocks[k] = pr->leak.totals.blocks[order[k]];
		}
	}
	char *sites = out_sites_path(path);
	int rc = out_sites_write(sites, pr->pid, h, pr->eng, &pr->sym,
				 pr->leak.done ? &leak : NULL);
	/* the profile itself is written: a warning, not a failure */
	if (rc)
		ht_warn("cannot write %s: %s (heaptrace report will have no "
			"per-site figures)", sites, ht_strerror(rc));
	free(sites);
}

/* --html=yes: the page beside the profile (and its .sites) just written. */
static void
write_html(struct profiler *prof, const char *path)
{
	char err[PATH_MAX + 256];
	if (!prof->opt->html)
		return;
	if (report_html_beside(path, err, sizeof(err))) {
		ht_error("%s", err);
		prof->write_failures++;
	}
}

/* --pprof=yes: the profile at PATH (its .sites written beside it) as a
   pprof profile, PATH.pb.gz, in-use figures those of its end. 0, or -1
   after an error message. */
static int
write_pprof(const struct profiler *prof, const char *path)
{
	if (!prof->opt->pprof)
		return 0;
	char *out = ht_xasprintf("%s.pb.gz", path);
	char err[PATH_MAX + 256];
	int rc = pprof_write_file(path, out, PPROF_AT_END, err, sizeof(err));
	if (rc)
		ht_error("%s", err);
	free(out);
	return rc ? -1 : 0;
}

static void
write_profile(struct profiler *prof, struct profile *pr, const char *backend)
{
	char *path = profile_path(prof, pr);
	if (!path) {
		prof->write_failures++;
		return;
	}
	struct out_header h = profile_header(prof, pr);
	int rc = out_massif_write(path, &h, pr->eng, &pr->sym);
	if (rc) {
		/* The file there before, if any, stays (written atomically),
		   and so do the snapshots taken on demand. */
		if (pr->last_on_demand)
			ht_error("cannot write %s: %s (the last snapshot taken "
				 "on demand is in %s)", path, ht_strerror(rc),
				 pr->last_on_demand);
		else
			ht_error("cannot write %s: %s", path,
				 ht_strerror(rc));
		prof->write_failures++;
	} else {
		/* files beside it only beside a regular file (not /dev/null,
		   a pipe) */
		struct stat st;
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			write_sites(prof, pr, path, &h);
			write_html(prof, path);
			if (write_pprof(prof, path))
				prof->write_failures++;
		}
		if (!prof->opt->quiet)
			note_written(prof, pr, path, backend);
	}
	if (prof->opt->stats)
		print_stats(pr);
	free(path);
}

/* ---- The profile's name, checked before the program runs ---- */

/* Two pids of the largest size a pid has (pid_max is at most 2^22), whose
   digits all differ: where their expansions differ is where %p is. */
#define PID_A 1111111L
#define PID_B 2222222L
#define PID_DIGITS 7

/* Whether a file can be created in DIR: one made and removed at once, as
   sure a test as there is (access(2) knows no read-only mount, ACL or
   immutable flag). 0 or -errno. */
static int
dir_probe(const char *dir)
{
	struct stat st;
	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	for (unsigned tries = 0; tries < 100; tries++) {
		char *probe = ht_xasprintf("%s/.heaptrace.%ld.probe%u.tmp", dir,
					   (long)getpid(), tries);
		int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			      0600);
		int e = errno;
		if (fd >= 0) {
			close(fd);
			unlink(probe);
		}
		free(probe);
		if (fd >= 0)
			return 0;
		if (e != EEXIST)
			return -e;
	}
	return -EEXIST;
}

/* Whether the profile can be written to PATH (no pid in it): an existing
   device, pipe or regular file writable in place, or a new or replaced file
   in a directory heaptrace can add to, as out_file_write does it. 0 or
   -errno. */
static int
path_probe(const char *path, const char *dir)
{
	struct stat st, lst;
	if (stat(path, &st)) {
		if (errno != ENOENT)
			return -errno;
		/* a dangling symlink: its target is created when written */
		if (!lstat(path, &lst) && S_ISLNK(lst.st_mode))
			return 0;
		return dir_probe(dir);
	}
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return access(path, W_OK) ? -errno : 0;
	/* replaced through a temporary file beside it, or rewritten in place
	   when only the file is writable */
	int rc = dir_probe(dir);
	if (rc && access(path, W_OK) == 0)
		rc = 0;
	return rc;
}

int
profiler_check_out_file(const struct ht_options *opt, char *err,
			size_t errlen)
{
	char cwd[PATH_MAX], *a = NULL, *b = NULL;
	const char *here = getcwd(cwd, sizeof(cwd)) ? cwd : NULL;
	if (out_filename_expand(opt->out_file, PID_A, here, &a, err, errlen))
		return -HT_E_BADOPT;
	if (out_filename_expand(opt->out_file, PID_B, here, &b, err, errlen)) {
		free(a);
		return -HT_E_BADOPT;
	}
	/* The name as it is known now: the pid written %p. A and B have the
	   same length; they differ exactly at the pid's digits. */
	size_t len = strlen(a), first_pid = len;
	char *shown = ht_xcalloc(len + 1, 1);
	size_t k = 0;
	for (size_t i = 0; i < len;) {
		if (a[i] != b[i]) {
			if (first_pid == len)
				first_pid = i;
			memcpy(shown + k, "%p", 2);
			k += 2;
			i += PID_DIGITS;
		} else {
			shown[k++] = a[i++];
		}
	}
	char *slash = strrchr(a, '/');
	size_t dirlen = slash ? (size_t)(slash - a) : 0;
	char *dir = slash ? ht_xasprintf("%.*s", (int)(dirlen ? dirlen : 1), a)
			  : ht_xstrdup(".");
	int rc = 0;
	if (first_pid < dirlen) {
		/* The pid is in a directory's name: only the directories
		   before it are known. */
		char *known = ht_xasprintf("%.*s", (int)first_pid, a);
		char *ks = strrchr(known, '/');
		if (ks && ks != known)
			*ks = 0;
		else if (ks)
			ks[1] = 0;
		struct stat st;
		if (ks && stat(known, &st))
			rc = -errno;
		else if (ks && !S_ISDIR(st.st_mode))
			rc = -ENOTDIR;
		free(known);
	} else if (first_pid < len) {
		/* One new file per process in DIR. */
		if (strlen(slash ? slash + 1 : a) > NAME_MAX ||
		    len >= PATH_MAX)
			rc = -ENAMETOOLONG;
		else
			rc = dir_probe(dir);
	} else {
		rc = path_probe(a, dir);
	}
	if (rc)
		snprintf(err, errlen, "--massif-out-file: cannot write %s: %s",
			 shown, strerror(-rc));
	free(dir);
	free(shown);
	free(a);
	free(b);
	return rc ? -HT_E_BADOPT : 0;
}

/* ---- Snapshots on demand ---- */

/* The file of PR's on-demand snapshot number N: its profile's name with
   ".snapshot-N" appended, so that it sorts beside the profile and never
   replaces it. NULL, with *WHY set, when the profile goes to a device or
   a pipe, beside which no file can be made, and no other name was set
   (profiler_set_snapshot_name). */
static char *
on_demand_path(struct profiler *prof, const struct profile *pr, unsigned n,
	       const char **why)
{
	*why = "cannot name the file";
	char *profile = profile_path(prof, pr);
	if (!profile)
		return NULL;
	struct stat st;
	char *path = NULL;
	if (stat(profile, &st) == 0 && !S_ISREG(st.st_mode) &&
	    prof->snapshot_name) {
		free(profile);
		profile = pattern_path(prof->snapshot_name, pr);
		if (!profile)
			return NULL;
	}
	if (stat(profile, &st) == 0 && !S_ISREG(st.st_mode))
		*why = "the profile does not go to a regular file";
	else
		path = ht_xasprintf("%s.snapshot-%u", profile, n);
	free(profile);
	return path;
}

/* Write PR's profile so far, plus a detailed snapshot at TIME, to its
   next on-demand file, and acknowledge it for `heaptrace snapshot`.
   Returns what was done, malloc'd: "written to PATH", or why not. */
static char *
write_on_demand(struct profiler *prof, struct profile *pr, pid_t pid,
		uint64_t time)
{
	unsigned n = ++pr->n_on_demand;
	const char *why;
	char *path = on_demand_path(prof, pr, n, &why);
	char *failure = NULL;
	if (path) {
		struct out_header h = profile_header(prof, pr);
		struct snap_snapshot now;
		snap_engine_peek(pr->eng, time > pr->t_start ?
				 time - pr->t_start : 0, &now);
		int rc = out_massif_write_now(path, &h, pr->eng, &now,
					      &pr->sym);
		snap_snapshot_fini(&now);
		if (rc) {
			failure = ht_xasprintf("cannot write %s: %s", path,
					       ht_strerror(rc));
		} else {
			write_sites(prof, pr, path, &h);
			write_pprof(prof, path);
		}
	} else {
		failure = ht_xasprintf("snapshot of process %d not written: "
				       "%s", (int)pid, why);
	}
	if (failure) {
		ht_error("%s", failure);
	} else {
		ht_info("snapshot of process %d written to %s", (int)pid,
			path);
		free(pr->last_on_demand);
		pr->last_on_demand = ht_xstrdup(path);
	}
	int rc = snapshot_ack_publish(pid, n, !failure,
				      failure ? failure : path);
	if (rc)
		ht_debug("cannot acknowledge the snapshot of process %d: %s",
			 (int)pid, ht_strerror(rc));
	char *said = failure ? failure : ht_xasprintf("written to %s", path);
	free(path);
	return said;
}

/* A snapshot request: PR's on-demand files, or the view when one is set
   (with the files first when the view asked for them). */
static void
on_snapshot(void *ctx, pid_t pid, uint64_t time)
{
	struct profiler *prof = ctx;
	struct profile *pr = profile_get(prof, pid);
	if (!pr)
		return;
	if (!prof->view) {
		free(write_on_demand(prof, pr, pid, time));
		return;
	}
	if (prof->view_write == pid) {
		prof->view_write = 0;
		free(prof->view_said);
		prof->view_said = write_on_demand(prof, pr, pid, time);
	}
	struct out_header h = profile_header(prof, pr);
	prof->view(prof->view_ctx, pid, pr->eng, &pr->sym, &h);
}

/* The profile PR is over: its last acknowledgement goes with it. */
static void
on_demand_end(const struct profile *pr)
{
	if (pr->n_on_demand)
		snapshot_ack_remove(pr->pid);
}

static void
on_leak_check(void *ctx, pid_t pid, const struct tracer_leak_view *view)
{
	struct profiler *prof = ctx;
	struct profile *pr = profile_get(prof, pid);
	if (!pr)
		return;
	leakcheck_run(prof->opt, pid, pr->eng, &pr->sym, !pr->foreign_malloc,
		      view, &pr->leak);
	if (pid == prof->first_pid)
		prof->first_leak_errors = pr->leak.errors;
}

static void
on_process_end(void *ctx, pid_t pid, uint64_t time, const char *backend)
{
	struct profiler *prof = ctx;
	struct profile *pr = profile_get(prof, pid);
	if (!pr)
		return;
	/* Every block live at the end is in the last snapshot, however the
	   process ended; Massif's profile ends at its last interval
	   snapshot. */
	if (!prof->opt->massif_compat)
		snap_engine_finish(pr->eng, time > pr->t_start ?
				   time - pr->t_start : 0);
	write_profile(prof, pr, backend);
	on_demand_end(pr);
	profile_forget(prof, pid);
	profile_free(pr);
}

static void
on_process_drop(void *ctx, pid_t pid)
{
	struct profiler *prof = ctx;
	struct profile *pr = profile_get(prof, pid);
	if (!pr)
		return;
	on_demand_end(pr);
	profile_forget(prof, pid);
	profile_free(pr);
}

struct profiler *
profiler_new(const struct ht_options *opt, char *const argv[])
{
	struct profiler *prof = ht_xcalloc(1, sizeof(*prof));
	prof->opt = opt;
	prof->argv = argv;
	u64map_init(&prof->profiles);
	u64map_init(&prof->counted);
	sym_cache_configure(opt->symbol_cache, NULL);
	return prof;
}

void
profiler_free(struct profiler *prof)
{
	if (!prof)
		return;
	size_t pos = 0;
	uint64_t key, val;
	while (u64map_next(&prof->profiles, &pos, &key, &val)) {
		struct profile *pr = (struct profile *)(uintptr_t)val;
		write_profile(prof, pr, "unfinished");
		on_demand_end(pr);
		profile_free(pr);
	}
	u64map_fini(&prof->profiles);
	free(prof->view_said);
	print_summary(prof);
	u64map_fini(&prof->counted);
	for (size_t i = 0; i < prof->n_written; i++) {
		free(prof->written[i].path);
		free(prof->written[i].text);
		free(prof->written[i].program);
	}
	free(prof->written);
	free(prof);
}

struct tracer_sink
profiler_sink(struct profiler *prof)
{
	return (struct tracer_sink){
		.ctx = prof,
		.process_start = on_process_start,
		.modules_changed = on_modules_changed,
		.unwind = on_unwind,
		.stub_rule = on_stub_rule,
		.allocator = on_allocator,
		.event = on_event,
		.heap_bytes = on_heap_bytes,
		.known_rule_pcs = on_known_rule_pcs,
		.process_end = on_process_end,
		.process_drop = on_process_drop,
		.snapshot = on_snapshot,
		.leak_check = prof->opt->leak_check != HT_LEAK_CHECK_NO
			? on_leak_check : NULL,
	};
}

uint64_t
profiler_leak_errors(const struct profiler *prof)
{
	return prof->first_leak_errors;
}

void
profiler_set_view(struct profiler *prof, profiler_view_fn *fn, void *ctx)
{
	prof->view = fn;
	prof->view_ctx = ctx;
}

pid_t
profiler_first_pid(const struct profiler *prof)
{
	return prof->first_pid;
}

void
profiler_view_write_next(struct profiler *prof, pid_t pid)
{
	prof->view_write = pid;
}

char *
profiler_view_said(struct profiler *prof)
{
	char *s = prof->view_said;
	prof->view_said = NULL;
	return s;
}

void
profiler_set_snapshot_name(struct profiler *prof, const char *pattern)
{
	prof->snapshot_name = pattern;
}

void
profiler_set_summary(struct profiler *prof, bool summary)
{
	prof->no_summary = !summary;
}

int
profiler_write_failures(const struct profiler *prof)
{
	return prof->write_failures;
}
