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
	struct bundle *b = c;

	return export_report_json(b->prof, b->ri, f);
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

/* The report lists every file of the bundle, report.json included, before
 * report.json exists; modules may add files (report.html) while the report
 * is being assembled, so the list is taken again after they ran. */
static void set_output_files(struct bundle *b)
{
	const char **names = calloc(b->od->nwritten + 1, sizeof(*names));

	if (!names)
		return;
	for (size_t i = 0; i < b->od->nwritten; i++)
		names[i] = b->od->written[i];
	names[b->od->nwritten] = "report.json";
	free((void *)b->ri->output_files);
	b->ri->output_files = names;
	b->ri->noutput_files = b->od->nwritten + 1;
}

static int module_report_json(void *c, cJSON *root)
{
	struct bundle *b = c;
	cJSON *out, *files;
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
	set_output_files(b);
	out = cJSON_GetObjectItemCaseSensitive(root, "output");
	files = cJSON_CreateArray();
	if (!out || !files) {
		cJSON_Delete(files);
		return out ? -ENOMEM : 0;
	}
	for (size_t i = 0; i < b->ri->noutput_files; i++) {
		cJSON *name = cJSON_CreateString(b->ri->output_files[i]);

		if (!name || !cJSON_AddItemToArray(files, name)) {
			cJSON_Delete(name);
			cJSON_Delete(files);
			return -ENOMEM;
		}
	}
	if (!cJSON_ReplaceItemInObjectCaseSensitive(out, "files", files)) {
		cJSON_Delete(files);
		return -ENOMEM;
	}
	return 0;
}

int bundle_write(struct bundle *b, struct output_dir *od)
{
	bool trace = false;
	int err = 0;

	const struct profile *pp[2] = { b->prof, offcpu_profile(b) };

	pprof_elf_prefetch(b->ri->elf_cache, pp, 2);
	/* Write every file even if one fails, so one bad exporter cannot take
	 * the others' data with it. report.json goes last: it lists the rest. */
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
	b->ri->extend_report = module_report_json;
	b->ri->extend_ctx = b;
	b->od = od;
	set_output_files(b);
	if (output_write(od, "report.json", write_report, b))
		err = -EIO;
	/* The callback's context is the caller's: not kept past the bundle. */
	b->ri->extend_report = NULL;
	b->ri->extend_ctx = NULL;
	return err;
}
