// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Continuous mode (rotate.h). */
#include "export/rotate.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "export/pprof.h"
#include "export/pprof_elf.h"
#include "util/log.h"
#include "report/report.h"

#define TOP_FUNCS 10

struct rotator {
	struct output_dir *od;
	uint64_t interval_ns;
	uint32_t keep;
	uint32_t seq; /* intervals written */
	uint64_t start_ns;
	uint64_t drops[PROF_DROP__COUNT]; /* at the start of the interval */
	struct pprof_elf_cache *elf;	  /* build-ids and sources, across intervals */
};

int rotator_new(struct rotator **out, struct output_dir *od, double interval_s, int keep,
		uint64_t start_ns)
{
	struct rotator *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r)
		return -ENOMEM;
	if (pprof_elf_cache_new(&r->elf)) {
		free(r);
		return -ENOMEM;
	}
	r->od = od;
	r->interval_ns = (uint64_t)(interval_s * 1e9);
	r->keep = keep > 0 ? (uint32_t)keep : 1;
	r->start_ns = start_ns;
	*out = r;
	return 0;
}

void rotator_free(struct rotator *r)
{
	if (r)
		pprof_elf_cache_free(r->elf);
	free(r);
}

bool rotator_due(const struct rotator *r, uint64_t ts_ns)
{
	return r && ts_ns >= r->start_ns + r->interval_ns;
}

uint32_t rotator_count(const struct rotator *r)
{
	return r ? r->seq : 0;
}

struct interval {
	struct rotator *r;
	const struct profile *p;
	const struct run_info *ri;
	uint64_t start_ns, end_ns;
	int64_t start_wall_ns;
	char pb[64];
};

static int64_t wall_of(const struct run_info *ri, uint64_t mono_ns)
{
	return (int64_t)ri->start_wall.tv_sec * 1000000000 + ri->start_wall.tv_nsec +
	       (int64_t)(mono_ns - ri->start_mono_ns);
}

static int write_pb(FILE *f, void *c)
{
	struct interval *iv = c;
	struct pprof_opts o = {
		.kind = PPROF_CPU,
		.time_nanos = iv->start_wall_ns,
		.duration_nanos = (int64_t)(iv->end_ns - iv->start_ns),
		.read_elf = iv->ri->elf_cache != NULL,
		.elf_cache = iv->r->elf,
	};

	/* Module files are read as the recording's own cache reads them
	 * (none: not read). */
	pprof_elf_cache_share_locate(iv->r->elf, iv->ri->elf_cache);

	return export_pprof(iv->p, &o, f);
}

static bool add_u64(cJSON *o, const char *k, uint64_t v)
{
	return cJSON_AddNumberToObject(o, k, (double)v) != NULL;
}

static bool add_wall(cJSON *o, const char *k, int64_t ns)
{
	time_t sec = (time_t)(ns / 1000000000);
	char buf[96];
	struct tm tm;

	if (!gmtime_r(&sec, &tm))
		return false;
	snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (int)(ns % 1000000000 / 1000000));
	return cJSON_AddStringToObject(o, k, buf) != NULL;
}

/* A small summary next to the profile: enough to pick intervals without
 * decoding them (docs/pprof.md). */
static cJSON *interval_json(struct interval *iv)
{
	const struct profile *p = iv->p;
	struct prof_func_stat *fs = NULL;
	cJSON *o = cJSON_CreateObject(), *s, *d, *top;
	uint64_t dropped = 0;
	size_t nfs = 0;
	bool ok;

	for (int i = 0; i < PROF_DROP__COUNT; i++)
		dropped += p->drops[i] - iv->r->drops[i];
	ok = o && cJSON_AddStringToObject(o, "schema", "ebpf-prof-interval/1") &&
	     add_u64(o, "seq", iv->r->seq + 1) && cJSON_AddStringToObject(o, "profile", iv->pb) &&
	     add_wall(o, "start_wall", iv->start_wall_ns) &&
	     add_wall(o, "end_wall", iv->start_wall_ns + (int64_t)(iv->end_ns - iv->start_ns)) &&
	     add_u64(o, "start_ns", iv->start_ns) && add_u64(o, "end_ns", iv->end_ns) &&
	     add_u64(o, "duration_ns", iv->end_ns - iv->start_ns) &&
	     add_u64(o, "freq_hz", p->freq_hz);
	s = ok ? cJSON_AddObjectToObject(o, "samples") : NULL;
	ok = s && add_u64(s, "total", p->total_samples) && add_u64(s, "user", p->user_samples) &&
	     add_u64(s, "kernel", p->kernel_samples);
	d = ok ? cJSON_AddObjectToObject(o, "dropped") : NULL;
	ok = d && add_u64(d, "total", dropped);
	for (int i = 0; ok && i < PROF_DROP__COUNT; i++)
		ok = add_u64(d, profile_drop_name((enum prof_drop)i),
			     p->drops[i] - iv->r->drops[i]);
	top = ok ? cJSON_AddArrayToObject(o, "top_functions") : NULL;
	ok = top && !profile_func_stats(p, &fs, &nfs);
	for (size_t i = 0; ok && i < nfs && i < TOP_FUNCS; i++) {
		const struct prof_frame *f = &p->frames[fs[i].frame];
		cJSON *e = cJSON_CreateObject();

		ok = e && cJSON_AddItemToArray(top, e) &&
		     cJSON_AddStringToObject(e, "name", f->name ? f->name : "") &&
		     (f->module ? cJSON_AddStringToObject(e, "module", f->module)
				: cJSON_AddNullToObject(e, "module")) &&
		     add_u64(e, "self", fs[i].self) && add_u64(e, "total", fs[i].total);
	}
	free(fs);
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static int write_json(FILE *f, void *c)
{
	cJSON *o = interval_json(c);
	char *text;
	int err = 0;

	if (!o)
		return -ENOMEM;
	text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!text)
		return -ENOMEM;
	if (fputs(text, f) == EOF || fputc('\n', f) == EOF)
		err = -EIO;
	cJSON_free(text);
	return err;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int rotator_write(struct rotator *r, const struct profile *p, const struct run_info *ri)
{
	uint64_t end = r->start_ns + r->interval_ns, t0 = thread_cpu_ns();
	struct interval iv = { r, p, ri, r->start_ns, end, wall_of(ri, r->start_ns), "" };
	char json[64];
	int err = 0;

	snprintf(iv.pb, sizeof(iv.pb), "interval-%06u.pb.gz", r->seq + 1);
	snprintf(json, sizeof(json), "interval-%06u.json", r->seq + 1);
	if (output_write(r->od, iv.pb, write_pb, &iv))
		err = -EIO;
	if (output_write(r->od, json, write_json, &iv))
		err = -EIO;
	r->seq++;
	if (r->seq > r->keep) {
		uint32_t old = r->seq - r->keep;

		snprintf(iv.pb, sizeof(iv.pb), "interval-%06u.pb.gz", old);
		snprintf(json, sizeof(json), "interval-%06u.json", old);
		int e1 = output_remove(r->od, iv.pb), e2 = output_remove(r->od, json);

		/* Gone already (moved away by an uploader): fine. */
		if ((e1 && e1 != -ENOENT) || (e2 && e2 != -ENOENT))
			log_warn("rotate: cannot delete interval %06u: %s", old,
				 strerror(-(e1 && e1 != -ENOENT ? e1 : e2)));
	}
	r->start_ns = end;
	memcpy(r->drops, p->drops, sizeof(r->drops));
	/* The recorder thread does this work: ring buffers wait meanwhile. */
	log_debug("rotate: interval %u (%llu samples) written in %.1f ms of CPU", r->seq,
		  (unsigned long long)p->total_samples, (double)(thread_cpu_ns() - t0) / 1e6);
	return err;
}
