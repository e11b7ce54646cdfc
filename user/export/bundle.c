// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The result bundle (bundle.h): which files a recording writes, in which
 * order, and the report's list of them.
 */
#include "export/bundle.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cycles/cycle_sink.h"
#include "export/pprof.h"
#include "export/pprof_elf.h"
#include "report/report.h"
#include "sched/sched_view.h"
#include "util/log.h"

#define for_each_module(b, i)                   \
	for (size_t i = 0; i < (b)->nmods; i++) \
		if ((b)->mstate[i])

char *bundle_default_dir(uint32_t pid)
{
	char stamp[32], *path;
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	if (asprintf(&path, "ebpf-prof-%u-%s", pid, stamp) < 0)
		return NULL;
	return path;
}

static int write_speedscope(FILE *f, void *c)
{
	struct bundle *b = c;
	struct speedscope_part parts[1 + REC_MAX_MODULES] = { { b->prof, NULL } };
	size_t n = 1;

	/* Modules' profiles (off-CPU time) go in the same file: one frame
	 * table, so a function is one frame whichever view shows it. */
	for_each_module(b, i) {
		const char *label = NULL;
		const struct profile *p;

		if (!b->mods[i]->speedscope_profile)
			continue;
		p = b->mods[i]->speedscope_profile(b->mstate[i], &label);
		if (p)
			parts[n++] = (struct speedscope_part){ p, label };
	}
	return export_speedscope_multi(parts, n, b->ri, f);
}

static int write_folded(FILE *f, void *c)
{
	struct bundle *b = c;

	return export_folded(b->prof, f);
}

static int write_pprof(FILE *f, void *c)
{
	struct bundle *b = c;

	return export_pprof_run(b->prof, PPROF_CPU, b->ri, cycle_sink_table(b->cycles), f);
}

/* The scheduler module's off-CPU profile (sched_view.h), when it ran. */
static const struct profile *offcpu_profile(struct bundle *b)
{
	for_each_module(b, i)
		if (b->mods[i] == &sched_rec_module)
			return sched_offcpu_profile(b->mstate[i]);
	return NULL;
}

static int write_pprof_offcpu(FILE *f, void *c)
{
	struct bundle *b = c;

	return export_pprof_run(offcpu_profile(b), PPROF_OFFCPU, b->ri, cycle_sink_table(b->cycles),
				f);
}

static int write_report(FILE *f, void *c)
{
	return report_json_print(c, f);
}

static int module_trace_events(void *c, FILE *out, bool *first)
{
	struct bundle *b = c;
	int err;

	for_each_module(b, i) {
		if (!b->mods[i]->trace_events ||
		    (b->mods[i]->has_trace && !b->mods[i]->has_trace(b->mstate[i])))
			continue;
		err = b->mods[i]->trace_events(b->mstate[i], out, first);
		if (err)
			return err;
	}
	return 0;
}

static int write_trace(FILE *f, void *c)
{
	struct bundle *b = c;

	return export_trace_json(b->ri, module_trace_events, b, f);
}

/* The report lists the files of the bundle written so far and itself,
 * before it exists. */
static void set_output_files(struct bundle *b)
{
	const char **names = calloc(b->od->nwritten + 1, sizeof(*names));
	size_t n = 0;
	bool self = false;

	if (!names)
		return;
	for (size_t i = 0; i < b->od->nwritten; i++) {
		names[n++] = b->od->written[i];
		self |= !strcmp(b->od->written[i], "report.json");
	}
	if (!self)
		names[n++] = "report.json";
	free((void *)b->ri->output_files);
	b->ri->output_files = names;
	b->ri->noutput_files = n;
}

static int module_report_json(void *c, cJSON *root)
{
	struct bundle *b = c;
	int err;

	for_each_module(b, i) {
		if (!b->mods[i]->report_json)
			continue;
		err = b->mods[i]->report_json(b->mstate[i], root);
		if (err) {
			log_error("cannot add the %s section to report.json: %s", b->mods[i]->name,
				  strerror(-err));
			return err;
		}
	}
	/* A module may have written files while its section was assembled. */
	set_output_files(b);
	return report_json_set_output(root, b->ri);
}

/* report.json, and when the disk is too full for it (and may_compact),
 * the same without its large sections. */
static int write_report_json(struct output_dir *od, cJSON *report, bool may_compact)
{
	int err = output_write(od, "report.json", write_report, report);

	if ((err == -ENOSPC || err == -EDQUOT) && may_compact && !report_json_is_compact(report) &&
	    !report_json_compact(report)) {
		log_warn("report.json: %s: writing it without its large sections (flame graphs, "
			 "timelines, per-thread lists; output.left_out names them)",
			 strerror(-err));
		err = output_write(od, "report.json", write_report, report);
	}
	return err;
}

int bundle_write(struct bundle *b, struct output_dir *od)
{
	cJSON *report = NULL;
	bool trace = false, early;
	int err = 0, e;

	const struct profile *pp[2] = { b->prof, offcpu_profile(b) };

	pprof_elf_prefetch(b->ri->elf_cache, pp, 2);
	/* report.json first: the summary that report.html, cycles.csv and
	 * `ebpf-prof diff` are rebuilt from gets the space a filling disk has
	 * left. Written again at the end with the list of every file
	 * (output.complete); if that fails, this one stays. Then every other
	 * file even if one fails, so one bad exporter cannot take the
	 * others' data with it. */
	b->ri->extend_report = module_report_json;
	b->ri->extend_ctx = b;
	b->od = od;
	set_output_files(b);
	/* Kept until the modules' files are written (report.html embeds it),
	 * whatever happens. */
	e = report_json_build(b->prof, b->ri, &report);
	if (e) {
		log_error("cannot assemble report.json: %s", strerror(-e));
		err = -EIO;
	}
	early = !e && !write_report_json(od, report, true);
	if (output_write(od, "profile.speedscope.json", write_speedscope, b))
		err = -EIO;
	if (output_write(od, "stacks.folded", write_folded, b))
		err = -EIO;
	if (output_write(od, "profile.pb.gz", write_pprof, b))
		err = -EIO;
	if (offcpu_profile(b) && output_write(od, "offcpu.pb.gz", write_pprof_offcpu, b))
		err = -EIO;
	for_each_module(b, i) {
		if (b->mods[i]->write_files && b->mods[i]->write_files(b->mstate[i], od))
			err = -EIO;
		if (b->mods[i]->trace_events &&
		    (!b->mods[i]->has_trace || b->mods[i]->has_trace(b->mstate[i])))
			trace = true;
	}
	if (trace && output_write(od, "trace.json", write_trace, b))
		err = -EIO;
	if (!e) {
		b->ri->output_complete = true;
		set_output_files(b);
		/* A whole early one is worth more than a short final one. */
		if (report_json_set_output(report, b->ri) ||
		    write_report_json(od, report, !early)) {
			err = -EIO;
			if (early)
				log_warn(
					"report.json: the version written before the other files "
					"stays (output.complete false: its output.files ends there)");
		}
	}
	cJSON_Delete(report);
	/* The callback's context is the caller's: not kept past the bundle. */
	b->ri->extend_report = NULL;
	b->ri->extend_ctx = NULL;
	return err;
}
