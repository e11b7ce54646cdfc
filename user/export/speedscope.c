// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * speedscope file format (docs formats.md §1): one shared frame table and
 * one "sampled" profile per thread, weights in nanoseconds. Written as a
 * stream: a long run can hold millions of runs and a DOM would multiply its
 * memory several times.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_write.h"
#include "report/report.h"

#define SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"

static void write_group_name(FILE *out, const struct run_info *ri)
{
	char buf[256];
	if (ri && ri->launched && ri->command) {
		json_write_str(out, ri->command);
		return;
	}
	if (ri && ri->ntargets) {
		size_t off = 0;
		buf[0] = '\0';
		for (size_t i = 0; i < ri->ntargets && off < sizeof(buf); i++) {
			/* comm is a kernel copy that may fill all 16 bytes */
			int n = snprintf(buf + off, sizeof(buf) - off, "%s%.*s (pid %" PRIu32 ")",
					 i ? ", " : "", PROF_COMM_LEN, ri->targets[i].comm,
					 ri->targets[i].pid);
			if (n < 0)
				break;
			off += (size_t)n;
		}
		json_write_str(out, buf);
		return;
	}
	json_write_str(out, "ebpf-prof profile");
}

static void write_frames(FILE *out, const struct profile *p)
{
	fputs("\"shared\":{\"frames\":[", out);
	for (size_t i = 0; i < p->nframes; i++) {
		const struct prof_frame *f = &p->frames[i];
		const char *file = f->module;
		if (!file && f->kernel)
			file = "[kernel.kallsyms]";
		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
		json_write_str(out, f->name);
		if (file) {
			fputs(",\"file\":", out);
			json_write_str(out, file);
		}
		fputc('}', out);
	}
	fputs("]}", out);
}

/* remap: frame index in the written table per index in p (NULL: same);
 * label: prefix of the profile name, or NULL. */
static void write_thread(FILE *out, const struct profile *p, const struct prof_thread *t,
			 uint64_t start_ns, bool multi_pid, const uint32_t *remap,
			 const char *label)
{
	char name[160];
	const char *lsep = label ? ": " : "";
	if (!label)
		label = "";
	if (multi_pid)
		snprintf(name, sizeof(name), "%.40s%s%s (pid %" PRIu32 ", tid %" PRIu32 ")", label,
			 lsep, t->comm, t->pid, t->tid);
	else
		snprintf(name, sizeof(name), "%.40s%s%s (tid %" PRIu32 ")", label, lsep, t->comm,
			 t->tid);

	/* A profile of bytes has no time axis: its values start at 0. */
	uint64_t start = t->first_ts_ns > start_ns && !p->unit ? t->first_ts_ns - start_ns : 0;
	uint64_t sum = 0;
	for (size_t r = 0; r < t->nruns; r++)
		sum += (uint64_t)t->runs[r].count * p->period_ns;

	fputs("{\"type\":\"sampled\",\"name\":", out);
	json_write_str(out, name);
	fprintf(out, ",\"unit\":\"%s\",\"startValue\":%" PRIu64 ",\"endValue\":%" PRIu64,
		p->unit ? p->unit : "nanoseconds", start, start + sum);
	fputs(",\n\"samples\":[", out);
	for (size_t r = 0; r < t->nruns; r++) {
		const struct prof_stack *s = &p->stacks[t->runs[r].stack];
		fputs(r ? ",[" : "[", out);
		for (uint32_t i = 0; i < s->depth; i++)
			fprintf(out, i ? ",%" PRIu32 : "%" PRIu32,
				remap ? remap[s->frames[i]] : s->frames[i]);
		fputc(']', out);
	}
	fputs("],\n\"weights\":[", out);
	for (size_t r = 0; r < t->nruns; r++)
		fprintf(out, r ? ",%" PRIu64 : "%" PRIu64,
			(uint64_t)t->runs[r].count * p->period_ns);
	fputs("]}", out);
}

int export_speedscope(const struct profile *p, const struct run_info *ri, FILE *out)
{
	bool multi_pid = false;
	size_t active = 0, nprof = 0;
	uint64_t best = 0;
	uint32_t first_pid = 0;
	uint64_t start_ns = ri ? ri->start_mono_ns : 0;

	for (size_t i = 0; i < p->nthreads; i++) {
		const struct prof_thread *t = &p->threads[i];
		if (!t->samples)
			continue;
		if (nprof && t->pid != first_pid)
			multi_pid = true;
		first_pid = nprof ? first_pid : t->pid;
		if (t->samples > best) {
			best = t->samples;
			active = nprof;
		}
		nprof++;
	}

	fputs("{\"$schema\":\"" SPEEDSCOPE_SCHEMA "\",\n", out);
	fputs("\"exporter\":\"ebpf-prof@" EBPF_PROF_VERSION "\",\n\"name\":", out);
	write_group_name(out, ri);
	fprintf(out, ",\n\"activeProfileIndex\":%zu,\n", active);
	write_frames(out, p);
	fputs(",\n\"profiles\":[", out);
	if (!nprof) {
		/* speedscope rejects an empty profile list: say why it is empty. */
		fputs("{\"type\":\"sampled\",\"name\":\"no samples\",\"unit\":\"nanoseconds\","
		      "\"startValue\":0,\"endValue\":0,\"samples\":[],\"weights\":[]}",
		      out);
	}
	size_t k = 0;
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct prof_thread *t = &p->threads[i];
		if (!t->samples)
			continue;
		if (k++)
			fputs(",\n", out);
		write_thread(out, p, t, start_ns, multi_pid, NULL, NULL);
	}
	fputs("]}\n", out);
	return ferror(out) ? -EIO : 0;
}

static void write_frame_table(FILE *out, const struct prof_frame *frames, size_t n)
{
	fputs("\"shared\":{\"frames\":[", out);
	for (size_t i = 0; i < n; i++) {
		const struct prof_frame *f = &frames[i];
		const char *file = f->module;
		if (!file && f->kernel)
			file = "[kernel.kallsyms]";
		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
		json_write_str(out, f->name);
		if (file) {
			fputs(",\"file\":", out);
			json_write_str(out, file);
		}
		fputc('}', out);
	}
	fputs("]}", out);
}

int export_speedscope_multi(const struct speedscope_part *parts, size_t n,
			    const struct run_info *ri, FILE *out)
{
	struct profile table;
	uint32_t **remap;
	bool multi_pid = false;
	size_t active = 0, nprof = 0;
	uint64_t best = 0;
	uint32_t first_pid = 0;
	uint64_t start_ns = ri ? ri->start_mono_ns : 0;
	int err = -ENOMEM;

	if (!parts || !n)
		return -EINVAL;
	/* The shared table: every part's frames interned once, through a
	 * scratch profile (only its frame index is used). */
	if (profile_init(&table, 1))
		return -ENOMEM;
	remap = calloc(n, sizeof(*remap));
	if (!remap)
		goto out;
	for (size_t k = 0; k < n; k++) {
		const struct profile *p = parts[k].p;
		remap[k] = malloc((p->nframes ? p->nframes : 1) * sizeof(**remap));
		if (!remap[k])
			goto out;
		for (size_t i = 0; i < p->nframes; i++) {
			int64_t fi = profile_intern_frame(&table, p->frames[i].name,
							  p->frames[i].module, p->frames[i].kernel);
			if (fi < 0)
				goto out;
			remap[k][i] = (uint32_t)fi;
		}
		for (size_t i = 0; i < p->nthreads; i++) {
			const struct prof_thread *t = &p->threads[i];
			if (!t->samples)
				continue;
			if (nprof && t->pid != first_pid)
				multi_pid = true;
			first_pid = nprof ? first_pid : t->pid;
			if (k == 0 && t->samples > best) {
				best = t->samples;
				active = nprof;
			}
			nprof++;
		}
	}

	fputs("{\"$schema\":\"" SPEEDSCOPE_SCHEMA "\",\n", out);
	fputs("\"exporter\":\"ebpf-prof@" EBPF_PROF_VERSION "\",\n\"name\":", out);
	write_group_name(out, ri);
	fprintf(out, ",\n\"activeProfileIndex\":%zu,\n", active);
	write_frame_table(out, table.frames, table.nframes);
	fputs(",\n\"profiles\":[", out);
	if (!nprof)
		fputs("{\"type\":\"sampled\",\"name\":\"no samples\",\"unit\":\"nanoseconds\","
		      "\"startValue\":0,\"endValue\":0,\"samples\":[],\"weights\":[]}",
		      out);
	size_t w = 0;
	for (size_t k = 0; k < n; k++) {
		const struct profile *p = parts[k].p;
		for (size_t i = 0; i < p->nthreads; i++) {
			const struct prof_thread *t = &p->threads[i];
			if (!t->samples)
				continue;
			if (w++)
				fputs(",\n", out);
			write_thread(out, p, t, start_ns, multi_pid, remap[k], parts[k].label);
		}
	}
	fputs("]}\n", out);
	err = ferror(out) ? -EIO : 0;
out:
	if (remap)
		for (size_t k = 0; k < n; k++)
			free(remap[k]);
	free(remap);
	profile_free(&table);
	return err;
}
