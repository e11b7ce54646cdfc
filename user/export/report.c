// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * report.json: the machine-readable summary of a run, schema documented in
 * docs/report-schema.md. Small, so built as a cJSON tree. 64-bit counters
 * and nanosecond timestamps are emitted as raw decimal text because cJSON
 * stores numbers as doubles, which lose precision above 2^53 (monotonic ns
 * pass that after ~104 days of uptime).
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_write.h"
#include "export/pprof_elf.h"
#include "kernel/vstat.h"
#include "report/report.h"

#define REPORT_TOP_FUNCTIONS 50
/* Module files listed with their build-id: the heaviest; a process maps
 * a few hundred at most. */
#define REPORT_MODULES 256

struct builder {
	bool failed;
};

static cJSON *check(struct builder *b, cJSON *item)
{
	if (!item)
		b->failed = true;
	return item;
}

static void add(struct builder *b, cJSON *obj, const char *key, cJSON *item)
{
	if (!item) {
		b->failed = true;
		return;
	}
	if (cJSON_IsArray(obj))
		cJSON_AddItemToArray(obj, item);
	else
		cJSON_AddItemToObject(obj, key, item);
}

static cJSON *u64(uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return cJSON_CreateRaw(buf);
}

/* A percentage (or other ratio) with a fixed number of decimals; 0 when the
 * denominator is 0 so the file never holds NaN (invalid JSON). */
static cJSON *ratio(uint64_t num, uint64_t den, double scale, int decimals)
{
	char buf[48];
	double v = den ? (double)num * scale / (double)den : 0.0;
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	return cJSON_CreateRaw(buf);
}

/* Strings from the target (comm, cmdline, symbols) may be any bytes; cJSON
 * would copy invalid UTF-8 through and produce an unreadable file. */
static cJSON *str(const char *s)
{
	if (!s)
		return cJSON_CreateNull();
	char *clean = utf8_sanitize(s);
	if (!clean)
		return NULL;
	cJSON *r = cJSON_CreateString(clean);
	free(clean);
	return r;
}

static void format_wall(const struct timespec *ts, char *buf, size_t len)
{
	struct tm tm;
	time_t sec = ts->tv_sec;
	if (!gmtime_r(&sec, &tm)) {
		snprintf(buf, len, "1970-01-01T00:00:00.000Z");
		return;
	}
	long ms = ts->tv_nsec / 1000000;
	if (ms < 0 || ms > 999)
		ms = 0;
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

static cJSON *build_target(struct builder *b, const struct run_info *ri)
{
	cJSON *t = check(b, cJSON_CreateObject());
	if (!t)
		return NULL;
	cJSON *pids = check(b, cJSON_CreateArray());
	cJSON *procs = check(b, cJSON_CreateArray());
	add(b, t, "pids", pids);
	add(b, t, "processes", procs);
	size_t nexited = 0, nlisted = 0;
	for (size_t i = 0; pids && procs && i < ri->ntargets; i++) {
		const struct report_target *rt = &ri->targets[i];
		char comm[PROF_COMM_LEN];
		size_t n = strnlen(rt->comm, PROF_COMM_LEN - 1);
		/* A fork storm's children past the first few are counted, not
		 * listed: tens of thousands of entries cost seconds and hundreds
		 * of MB to write. */
		if (!report_target_listed(rt, &nexited))
			continue;
		nlisted++;
		memcpy(comm, rt->comm, n);
		comm[n] = '\0';
		add(b, pids, NULL, cJSON_CreateNumber(rt->pid));
		cJSON *pr = check(b, cJSON_CreateObject());
		if (!pr)
			continue;
		add(b, procs, NULL, pr);
		add(b, pr, "pid", cJSON_CreateNumber(rt->pid));
		add(b, pr, "comm", str(comm));
		add(b, pr, "cmdline", str(rt->cmdline));
		add(b, pr, "parent_pid", cJSON_CreateNumber(rt->parent_pid));
		add(b, pr, "exited", cJSON_CreateBool(rt->exited));
	}
	add(b, t, "processes_followed", cJSON_CreateNumber((double)ri->ntargets));
	add(b, t, "processes_not_listed", cJSON_CreateNumber((double)(ri->ntargets - nlisted)));
	add(b, t, "forks_not_read", u64(ri->forks_unread));
	add(b, t, "launched", cJSON_CreateBool(ri->launched));
	add(b, t, "command", str(ri->launched ? ri->command : NULL));
	if (ri->launched && ri->exit_status >= 0)
		add(b, t, "exit_status", cJSON_CreateNumber(ri->exit_status));
	else
		add(b, t, "exit_status", cJSON_CreateNull());
	return t;
}

static cJSON *build_time(struct builder *b, const struct run_info *ri)
{
	char buf[64];
	cJSON *t = check(b, cJSON_CreateObject());
	if (!t)
		return NULL;
	add(b, t, "start_monotonic_ns", u64(ri->start_mono_ns));
	add(b, t, "end_monotonic_ns", u64(ri->end_mono_ns));
	add(b, t, "duration_ns",
	    u64(ri->end_mono_ns > ri->start_mono_ns ? ri->end_mono_ns - ri->start_mono_ns : 0));
	format_wall(&ri->start_wall, buf, sizeof(buf));
	add(b, t, "start_wall", cJSON_CreateString(buf));
	format_wall(&ri->end_wall, buf, sizeof(buf));
	add(b, t, "end_wall", cJSON_CreateString(buf));
	add(b, t, "first_sample_monotonic_ns",
	    ri->first_sample_ns ? u64(ri->first_sample_ns) : cJSON_CreateNull());
	return t;
}

static cJSON *build_top(struct builder *b, const struct profile *p)
{
	struct prof_func_stat *st = NULL;
	size_t n = 0;
	cJSON *arr = check(b, cJSON_CreateArray());
	if (!arr)
		return NULL;
	if (profile_func_stats(p, &st, &n)) {
		b->failed = true;
		return arr;
	}
	for (size_t i = 0; i < n && i < REPORT_TOP_FUNCTIONS; i++) {
		const struct prof_frame *f = &p->frames[st[i].frame];
		cJSON *o = check(b, cJSON_CreateObject());
		if (!o)
			break;
		add(b, arr, NULL, o);
		add(b, o, "name", str(f->name));
		add(b, o, "module", str(f->module));
		add(b, o, "kernel", cJSON_CreateBool(f->kernel));
		add(b, o, "self", u64(st[i].self));
		add(b, o, "total", u64(st[i].total));
		add(b, o, "self_pct", ratio(st[i].self, p->total_samples, 100.0, 2));
		add(b, o, "total_pct", ratio(st[i].total, p->total_samples, 100.0, 2));
	}
	free(st);
	return arr;
}

struct mod_count {
	const char *path;
	uint64_t samples, stamp;
};

static int cmp_mod(const void *a, const void *b)
{
	const struct mod_count *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* The ELF files the samples ran in (samples with a frame of the file on
 * their stack) with their GNU build-id, so that `ebpf-prof diff` can tell
 * another build of a program from the same one, whatever its path. The
 * build-id is read from the file at its path when the report is written
 * (the run's ELF cache: the pprof export reads the same), null when the
 * file has none or cannot be read. */
static cJSON *build_modules(struct builder *b, const struct profile *p, const struct run_info *ri)
{
	cJSON *arr = check(b, cJSON_CreateArray());
	int32_t *fm = NULL;
	struct mod_count *mods = NULL;
	size_t nmods = 0;

	if (!arr || !p->nframes)
		return arr;
	fm = malloc(p->nframes * sizeof(*fm));
	mods = malloc(p->nframes * sizeof(*mods));
	if (!fm || !mods) {
		b->failed = true;
		goto out;
	}
	for (size_t i = 0; i < p->nframes; i++) {
		const struct prof_frame *f = &p->frames[i];
		size_t k = 0;

		fm[i] = -1;
		if (f->kernel || !f->module || f->module[0] != '/')
			continue;
		while (k < nmods && strcmp(mods[k].path, f->module))
			k++;
		if (k == nmods)
			mods[nmods++] = (struct mod_count){ f->module, 0, 0 };
		fm[i] = (int32_t)k;
	}
	for (size_t s = 0; s < p->nstacks; s++) {
		const struct prof_stack *st = &p->stacks[s];

		for (uint32_t d = 0; d < st->depth; d++) {
			uint32_t fi = st->frames[d];
			struct mod_count *m;

			if (fi >= p->nframes || fm[fi] < 0)
				continue;
			m = &mods[fm[fi]];
			if (m->stamp != s + 1) {
				m->stamp = s + 1;
				m->samples += st->count;
			}
		}
	}
	qsort(mods, nmods, sizeof(*mods), cmp_mod);
	for (size_t i = 0; i < nmods && i < REPORT_MODULES; i++) {
		char hex[2 * PPROF_BUILD_ID_MAX + 1];
		cJSON *o;

		if (!mods[i].samples)
			break;
		if (pprof_elf_build_id_cached(ri->elf_cache, mods[i].path, hex, sizeof(hex)) ||
		    !hex[0])
			hex[0] = '\0';
		if (!(o = check(b, cJSON_CreateObject())))
			break;
		add(b, arr, NULL, o);
		add(b, o, "path", str(mods[i].path));
		add(b, o, "build_id", hex[0] ? cJSON_CreateString(hex) : cJSON_CreateNull());
		add(b, o, "samples", u64(mods[i].samples));
	}
out:
	free(fm);
	free(mods);
	return arr;
}

static int cmp_thread(const void *a, const void *b)
{
	const struct prof_thread *x = *(const struct prof_thread *const *)a;
	const struct prof_thread *y = *(const struct prof_thread *const *)b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : (x->tid > y->tid);
}

static cJSON *build_threads(struct builder *b, const struct profile *p)
{
	cJSON *arr = check(b, cJSON_CreateArray());
	if (!arr || !p->nthreads)
		return arr;
	const struct prof_thread **order = malloc(p->nthreads * sizeof(*order));
	if (!order) {
		b->failed = true;
		return arr;
	}
	for (size_t i = 0; i < p->nthreads; i++)
		order[i] = &p->threads[i];
	qsort(order, p->nthreads, sizeof(*order), cmp_thread);
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct prof_thread *t = order[i];
		cJSON *o = check(b, cJSON_CreateObject());
		if (!o)
			break;
		add(b, arr, NULL, o);
		add(b, o, "pid", cJSON_CreateNumber(t->pid));
		add(b, o, "tid", cJSON_CreateNumber(t->tid));
		add(b, o, "comm", str(t->comm));
		add(b, o, "samples", u64(t->samples));
		add(b, o, "pct", ratio(t->samples, p->total_samples, 100.0, 2));
	}
	free(order);
	return arr;
}

/* The in-kernel walker's figures (--unwind cfi-kernel): docs/unwinding.md. */
static cJSON *build_kernel_walk(struct builder *b, const struct run_unwind *u)
{
	static const char *const ends[] = { "none",	    "root",
					    "fp_root",	    "depth",
					    "jit",	    "unknown_mapping",
					    "no_tables",    "read_error",
					    "bad_frame",    "unsupported_cfi",
					    "no_registers", "uretprobe_unmatched" };
	cJSON *o = check(b, cJSON_CreateObject()), *e;
	const struct ktables_stats *k = &u->kt;

	if (!o)
		return NULL;
	e = check(b, cJSON_CreateObject());
	for (size_t i = 1; e && i < sizeof(ends) / sizeof(ends[0]); i++)
		add(b, e, ends[i], u64(u->kw_end[i]));
	add(b, o, "ends", e);
	add(b, o, "uretprobe_fixed", u64(u->kw_uretprobe_fixed));
	/* Measured in the program around the walk (CPU samples only). */
	add(b, o, "walk_ns_per_sample", u64(u->kw_walks ? u->kw_walk_ns / u->kw_walks : 0));
	add(b, o, "frames_per_sample",
	    cJSON_CreateNumber(u->kw_walks ? (double)u->kw_frames / (double)u->kw_walks : 0));
	/* Samples walked by frame pointers because their process had no
	 * tables yet, or that met a pc outside the known mappings (each such
	 * miss re-reads the maps, rate limited). */
	add(b, o, "fallback_no_tables", u64(u->kw_end[6]));
	add(b, o, "unknown_pc", u64(u->kw_end[5]));
	add(b, o, "objects", u64(k->objects));
	add(b, o, "objects_with_cfi", u64(k->objects_cfi));
	add(b, o, "rows", u64(k->rows));
	add(b, o, "bpf_map_bytes", u64(k->map_bytes));
	add(b, o, "table_ms", cJSON_CreateNumber((double)k->build_ns / 1e6));
	add(b, o, "scan_ms", cJSON_CreateNumber((double)k->scan_ns / 1e6));
	add(b, o, "tables_from_cache", u64(k->from_cache));
	add(b, o, "table_errors", u64(k->errors));
	add(b, o, "tables_over_budget", u64(k->over_budget));
	add(b, o, "maps_scans", u64(k->scans));
	add(b, o, "maps_rescans", u64(k->rescans));
	add(b, o, "forks_copied", u64(k->forks_copied));
	add(b, o, "maps_over_limit", u64(k->maps_over));
	return o;
}

static cJSON *build_unwind(struct builder *b, const struct run_unwind *u)
{
	cJSON *o = check(b, cJSON_CreateObject());
	uint64_t stacks = u->cfi + u->fp;

	if (!o)
		return NULL;
	add(b, o, "mode", str(u->mode));
	add(b, o, "stack_bytes", u64(u->stack_bytes));
	add(b, o, "cfi_stacks", u64(u->cfi));
	add(b, o, "fp_stacks", u64(u->fp));
	add(b, o, "fp_fallback", u64(u->fp_fallback));
	add(b, o, "no_window", u64(u->no_window));
	add(b, o, "window_copy_errors", u64(u->copy_errors));
	add(b, o, "user_regs_errors", u64(u->regs_errors));
	add(b, o, "truncated", u64(u->truncated));
	add(b, o, "truncated_share", ratio(u->truncated, stacks, 1.0, 4));
	add(b, o, "errors", u64(u->errors));
	add(b, o, "error_share", ratio(u->errors, stacks, 1.0, 4));
	add(b, o, "unwind_ns_per_stack", u64(u->timed ? u->unwind_ns / u->timed : 0));
	if (u->kernel_walk)
		add(b, o, "kernel_walk", build_kernel_walk(b, u));
	return o;
}

/* docs/python.md: how many samples got Python frames, and the walk's cost. */
static cJSON *build_python(struct builder *b, const struct run_python *py)
{
	const struct pyframes_stats *s = &py->st;
	const uint64_t *w = s->bpf;
	cJSON *o = check(b, cJSON_CreateObject()), *walk, *off;

	if (!o)
		return NULL;
	add(b, o, "mode", str(py->mode));
	add(b, o, "samples", u64(s->samples));
	add(b, o, "with_python", u64(s->with_python));
	add(b, o, "with_python_share", ratio(s->with_python, s->samples, 1.0, 4));
	add(b, o, "frames", u64(s->frames));
	add(b, o, "frames_skipped", u64(s->frames_skipped));
	add(b, o, "code_objects_read", u64(s->code_reads));
	add(b, o, "code_object_errors", u64(s->code_errors));
	add(b, o, "stacks_without_sample", u64(s->unpaired));
	walk = check(b, cJSON_CreateObject());
	if (walk) {
		add(b, walk, "walks", u64(w[EP_PY_ST_WALKS]));
		add(b, walk, "walk_ns_per_sample",
		    u64(w[EP_PY_ST_WALKS] ? w[EP_PY_ST_WALK_NS] / w[EP_PY_ST_WALKS] : 0));
		add(b, walk, "frames_per_walk",
		    cJSON_CreateNumber(w[EP_PY_ST_WALKS] ? (double)w[EP_PY_ST_FRAMES] /
								   (double)w[EP_PY_ST_WALKS]
							 : 0));
		add(b, walk, "no_thread_state", u64(w[EP_PY_ST_NO_TSTATE]));
		add(b, walk, "idle", u64(w[EP_PY_ST_IDLE]));
		add(b, walk, "read_errors", u64(w[EP_PY_ST_READ_ERR]));
		add(b, walk, "truncated", u64(w[EP_PY_ST_TRUNCATED]));
		add(b, walk, "lost", u64(w[EP_PY_ST_RINGBUF_FULL]));
	}
	add(b, o, "walk", walk);
	off = check(b, cJSON_CreateObject());
	if (off) {
		add(b, off, "episodes_with_python", u64(s->offcpu_with_python));
		add(b, off, "frames", u64(s->offcpu_frames));
	}
	add(b, o, "offcpu", off);
	return o;
}

static cJSON *build_report(struct builder *b, const struct profile *p, const struct run_info *ri)
{
	cJSON *root = check(b, cJSON_CreateObject());
	if (!root)
		return NULL;
	add(b, root, "schema", cJSON_CreateString(REPORT_SCHEMA));
	add(b, root, "version", cJSON_CreateString(EBPF_PROF_VERSION));
	add(b, root, "target", build_target(b, ri));
	add(b, root, "time", build_time(b, ri));

	cJSON *s = check(b, cJSON_CreateObject());
	add(b, root, "sampling", s);
	if (s) {
		add(b, s, "frequency_hz", cJSON_CreateNumber(p->freq_hz));
		add(b, s, "period_ns", u64(p->period_ns));
		/* -F as given: above frequency_hz when the overload guard took
		 * the samples at its limit (dropped.by_cause.rate_limited). */
		add(b, s, "requested_hz",
		    cJSON_CreateNumber(ri->requested_hz ? ri->requested_hz : p->freq_hz));
		add(b, s, "kernel_frames", cJSON_CreateBool(ri->kernel_frames));
		/* The timeline's bound (profile.h, max_runs): 0 while every
		 * sample is in the order taken. */
		add(b, s, "timeline_bucket_ns", u64(p->bucket_ns));
		add(b, s, "timeline_merged_until_monotonic_ns",
		    p->bucket_ns ? u64(p->merged_until_ns) : cJSON_CreateNull());
	}
	add(b, root, "stop_reason", str(ri->stop_reason));
	if (ri->tracepoint_programs) {
		cJSON *k = check(b, cJSON_CreateObject());

		add(b, root, "kernel", k);
		if (k) {
			add(b, k, "btf", cJSON_CreateBool(ri->kernel_btf));
			add(b, k, "btf_file", str(ri->btf_file));
			add(b, k, "tracepoint_programs", str(ri->tracepoint_programs));
			if (ri->vstat) {
				add(b, k, "bpf_programs", check(b, vstat_json(ri->vstat)));
				add(b, k, "bpf_degraded", check(b, vstat_degraded_json(ri->vstat)));
			}
		}
	}
	if (ri->unwind.mode)
		add(b, root, "unwind", build_unwind(b, &ri->unwind));
	if (ri->python.mode && ri->python.st.samples)
		add(b, root, "python", build_python(b, &ri->python));

	cJSON *sm = check(b, cJSON_CreateObject());
	add(b, root, "samples", sm);
	if (sm) {
		add(b, sm, "total", u64(p->total_samples));
		add(b, sm, "user", u64(p->user_samples));
		add(b, sm, "kernel", u64(p->kernel_samples));
		add(b, sm, "kernel_share", ratio(p->kernel_samples, p->total_samples, 1.0, 4));
	}

	cJSON *d = check(b, cJSON_CreateObject());
	add(b, root, "dropped", d);
	if (d) {
		uint64_t total = 0;
		for (int i = 0; i < PROF_DROP__COUNT; i++)
			total += p->drops[i];
		add(b, d, "total", u64(total));
		cJSON *bc = check(b, cJSON_CreateObject());
		add(b, d, "by_cause", bc);
		for (int i = 0; bc && i < PROF_DROP__COUNT; i++)
			add(b, bc, profile_drop_name((enum prof_drop)i), u64(p->drops[i]));
	}

	add(b, root, "top_functions", build_top(b, p));
	add(b, root, "modules", build_modules(b, p, ri));
	add(b, root, "threads", build_threads(b, p));

	cJSON *o = check(b, cJSON_CreateObject());
	add(b, root, "output", o);
	if (o) {
		add(b, o, "dir", str(ri->output_dir));
		cJSON *files = check(b, cJSON_CreateArray());
		add(b, o, "files", files);
		for (size_t i = 0; files && i < ri->noutput_files; i++)
			add(b, files, NULL, str(ri->output_files[i]));
		add(b, o, "complete", cJSON_CreateBool(ri->output_complete));
	}
	return root;
}

int report_json_build(const struct profile *p, const struct run_info *ri, cJSON **out)
{
	struct builder b = { false };
	cJSON *root;

	*out = NULL;
	if (!ri)
		return -EINVAL;
	root = build_report(&b, p, ri);
	if (!root || b.failed) {
		cJSON_Delete(root);
		return -ENOMEM;
	}
	/* Handed over even when a module failed: modules may keep pointers
	 * into it until their files are written (the caller deletes it). */
	*out = root;
	return ri->extend_report ? ri->extend_report(ri->extend_ctx, root) : 0;
}

int report_json_print(const cJSON *root, FILE *out)
{
	char *text = cJSON_Print(root);

	if (!text)
		return -ENOMEM;
	fputs(text, out);
	fputc('\n', out);
	cJSON_free(text);
	return ferror(out) ? -EIO : 0;
}

int report_json_set_output(cJSON *root, const struct run_info *ri)
{
	cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "output");
	cJSON *files = cJSON_CreateArray(), *done = cJSON_CreateBool(ri->output_complete);

	if (!cJSON_IsObject(o) || !files || !done)
		goto fail;
	for (size_t i = 0; i < ri->noutput_files; i++) {
		cJSON *name = cJSON_CreateString(ri->output_files[i]);

		if (!name || !cJSON_AddItemToArray(files, name)) {
			cJSON_Delete(name);
			goto fail;
		}
	}
	if (!cJSON_ReplaceItemInObjectCaseSensitive(o, "files", files)) {
		if (!cJSON_AddItemToObject(o, "files", files))
			goto fail;
	}
	files = NULL;
	if (!cJSON_ReplaceItemInObjectCaseSensitive(o, "complete", done) &&
	    !cJSON_AddItemToObject(o, "complete", done))
		goto fail;
	return 0;
fail:
	cJSON_Delete(files);
	cJSON_Delete(done);
	return -ENOMEM;
}

/* What can grow with the run and is not needed to rebuild the summary,
 * the cycles and the findings (`report`, `diff`): section, then member of
 * it or NULL for the whole section. */
static const char *const large_parts[][2] = {
	{ "flame", NULL },
	{ "offcpu_flame", NULL },
	{ "threads", NULL },
	{ "memory", "timeline" },
	{ "sched", "threads" },
	{ "kernel", "bpf_programs" },
	{ "kernel", "bpf_degraded" },
};

int report_json_compact(cJSON *root)
{
	cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "output"), *left;
	char name[64];

	if (!cJSON_IsObject(o))
		return -EINVAL;
	left = cJSON_CreateArray();
	if (!left)
		return -ENOMEM;
	for (size_t i = 0; i < sizeof(large_parts) / sizeof(large_parts[0]); i++) {
		cJSON *sec = cJSON_GetObjectItemCaseSensitive(root, large_parts[i][0]);

		if (!sec || (large_parts[i][1] && !cJSON_IsObject(sec)))
			continue;
		if (large_parts[i][1]) {
			if (!cJSON_GetObjectItemCaseSensitive(sec, large_parts[i][1]))
				continue;
			cJSON_DeleteItemFromObjectCaseSensitive(sec, large_parts[i][1]);
			snprintf(name, sizeof(name), "%s.%s", large_parts[i][0], large_parts[i][1]);
		} else {
			cJSON_DeleteItemFromObjectCaseSensitive(root, large_parts[i][0]);
			snprintf(name, sizeof(name), "%s", large_parts[i][0]);
		}
		cJSON_AddItemToArray(left, cJSON_CreateString(name));
	}
	cJSON_DeleteItemFromObjectCaseSensitive(o, "compact");
	cJSON_DeleteItemFromObjectCaseSensitive(o, "left_out");
	if (!cJSON_AddBoolToObject(o, "compact", true) ||
	    !cJSON_AddItemToObject(o, "left_out", left)) {
		cJSON_Delete(left);
		return -ENOMEM;
	}
	return 0;
}

bool report_json_is_compact(const cJSON *root)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "output");

	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "compact"));
}

int export_report_json(const struct profile *p, const struct run_info *ri, FILE *out)
{
	cJSON *root;
	int err = report_json_build(p, ri, &root);

	if (!err)
		err = report_json_print(root, out);
	cJSON_Delete(root);
	return err;
}
