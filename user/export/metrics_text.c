// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Snapshot and exposition text of the metrics endpoint (metrics.h). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "export/metrics.h"
#include "report/report.h"

void metrics_snap_fill(struct metrics_snap *s, const struct live_metrics *l,
		       const struct profile *p, const struct run_info *ri)
{
	s->live = *l;
	s->npids = 0;
	/* Targets first, in the order they were seen, so a pid keeps its
	 * series from scrape to scrape. */
	for (size_t i = 0; i < ri->ntargets && s->npids < LIVE_MAX_PIDS; i++) {
		struct metrics_pid *mp = &s->pids[s->npids++];

		mp->pid = ri->targets[i].pid;
		memcpy(mp->comm, ri->targets[i].comm, sizeof(mp->comm));
		mp->comm[sizeof(mp->comm) - 1] = '\0';
		mp->samples = 0;
	}
	for (size_t t = 0; t < p->nthreads; t++)
		for (size_t i = 0; i < s->npids; i++)
			if (s->pids[i].pid == p->threads[t].pid) {
				s->pids[i].samples += p->threads[t].samples;
				break;
			}
}

/* A label value: backslash, double quote and newline escaped; other
 * control bytes (a comm may hold anything) become spaces. */
static void put_value(FILE *o, const char *v)
{
	const unsigned char *c = (const unsigned char *)v;

	/* Nearly every value is plain: one write for the plain stretches.
	 * Unlocked calls: the stream is a memstream of one thread, and
	 * scrape cost is a target (docs/metrics.md). */
	while (*c) {
		size_t n = 0;

		while (c[n] && c[n] != '\\' && c[n] != '"' && c[n] >= 0x20 && c[n] != 0x7f)
			n++;
		fwrite_unlocked(c, 1, n, o);
		c += n;
		if (!*c)
			break;
		if (*c == '\\')
			fputs_unlocked("\\\\", o);
		else if (*c == '"')
			fputs_unlocked("\\\"", o);
		else if (*c == '\n')
			fputs_unlocked("\\n", o);
		else
			fputc_unlocked(' ', o);
		c++;
	}
}

enum mtype { M_COUNTER, M_GAUGE, M_HISTOGRAM };

/* HELP and TYPE of a family. OpenMetrics names a counter family without
 * its _total suffix; the Prometheus text format names it with it. */
static void family(FILE *o, bool om, const char *name, enum mtype t, const char *help)
{
	static const char *const tn[] = { "counter", "gauge", "histogram" };
	size_t len = strlen(name);

	if (om && t == M_COUNTER && len > 6 && !strcmp(name + len - 6, "_total"))
		len -= 6;
	fprintf(o, "# HELP %.*s %s\n# TYPE %.*s %s\n", (int)len, name, help, (int)len, name, tn[t]);
}

/* Prints a sample value: integers exactly, others with enough digits to
 * round-trip. */
static void value(FILE *o, double v)
{
	if (isnan(v))
		fputs("NaN", o);
	else if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", o);
	else if (v == floor(v) && fabs(v) < 9e15)
		fprintf(o, "%.0f", v);
	else
		fprintf(o, "%.17g", v);
}

static void u64(FILE *o, uint64_t v)
{
	char b[24], *p = b + sizeof(b);

	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10));
	fwrite_unlocked(p, 1, (size_t)(b + sizeof(b) - p), o);
}

/* name{k1="v1",k2="v2",le="le"}: each label only when its key (le: its
 * value) is not NULL. */
static void series_le(FILE *o, const char *name, const char *suffix, const char *k1, const char *v1,
		      const char *k2, const char *v2, const char *le)
{
	const char *sep = "{";

	fputs_unlocked(name, o);
	if (suffix)
		fputs_unlocked(suffix, o);
	if (k1) {
		fputs_unlocked(sep, o);
		fputs_unlocked(k1, o);
		fputs_unlocked("=\"", o);
		put_value(o, v1);
		fputc_unlocked('"', o);
		sep = ",";
	}
	if (k2) {
		fputs_unlocked(sep, o);
		fputs_unlocked(k2, o);
		fputs_unlocked("=\"", o);
		put_value(o, v2);
		fputc_unlocked('"', o);
		sep = ",";
	}
	if (le) {
		fputs_unlocked(sep, o);
		fputs_unlocked("le=\"", o);
		fputs_unlocked(le, o);
		fputc_unlocked('"', o);
		sep = ",";
	}
	fputs_unlocked(*sep == ',' ? "} " : " ", o);
}

static void series(FILE *o, const char *name, const char *suffix, const char *k1, const char *v1,
		   const char *k2, const char *v2)
{
	series_le(o, name, suffix, k1, v1, k2, v2, NULL);
}

static void histogram(FILE *o, const char *name, const char *k1, const char *v1, const char *k2,
		      const char *v2, const struct live_hist *h)
{
	/* live_hist_le(i) as floats ("1.0", not "1": what OpenMetrics
	 * asks of le). */
	static const char *const le[LIVE_HIST_NB] = { "1e-06", "1e-05", "0.0001", "0.0005", "0.001",
						      "0.005", "0.01",	"0.05",	  "0.1",    "0.25",
						      "0.5",   "1.0",	"5.0",	  "10.0" };

	for (int i = 0; i < LIVE_HIST_NB; i++) {
		series_le(o, name, "_bucket", k1, v1, k2, v2, le[i]);
		u64(o, h->le[i]);
		fputc_unlocked('\n', o);
	}
	series_le(o, name, "_bucket", k1, v1, k2, v2, "+Inf");
	u64(o, h->count);
	fputc_unlocked('\n', o);
	series(o, name, "_count", k1, v1, k2, v2);
	u64(o, h->count);
	fputc_unlocked('\n', o);
	series(o, name, "_sum", k1, v1, k2, v2);
	value(o, h->sum_s);
	fputc_unlocked('\n', o);
}

static const char *const drop_src[LIVE_SRC__COUNT] = { "sampler", "sysmon", "sched", "probes",
						       "jetson" };
static const char *const cyc_part[LIVE_CYC_PARTS] = { "inference", "sql", "off_cpu", "probes",
						      "other" };

int metrics_render(const struct metrics_snap *s, bool om, FILE *o)
{
	const struct live_metrics *l = &s->live;
	char a[32], b[32];

	family(o, om, "ebpf_prof_samples_total", M_COUNTER, "CPU samples taken, per process.");
	for (size_t i = 0; i < s->npids; i++) {
		snprintf(a, sizeof(a), "%u", s->pids[i].pid);
		series(o, "ebpf_prof_samples_total", NULL, "pid", a, "comm", s->pids[i].comm);
		u64(o, s->pids[i].samples);
		fputc_unlocked('\n', o);
	}
	family(o, om, "ebpf_prof_dropped_total", M_COUNTER,
	       "Events lost (samples, spans, scheduler or system readings), per source.");
	for (int i = 0; i < LIVE_SRC__COUNT; i++) {
		if (l->drops[i] < 0)
			continue;
		series(o, "ebpf_prof_dropped_total", NULL, "cause", drop_src[i], NULL, NULL);
		u64(o, (uint64_t)l->drops[i]);
		fputc_unlocked('\n', o);
	}
	family(o, om, "ebpf_prof_probe_calls_total", M_COUNTER, "Calls of each probed function.");
	for (size_t i = 0; i < l->nprobes && i < LIVE_MAX_PROBES; i++) {
		series(o, "ebpf_prof_probe_calls_total", NULL, "probe", l->probes[i].name,
		       "library", l->probes[i].library);
		u64(o, l->probes[i].calls);
		fputc_unlocked('\n', o);
	}
	family(o, om, "ebpf_prof_probe_duration_seconds", M_HISTOGRAM,
	       "Duration of the calls of each timed probe.");
	for (size_t i = 0; i < l->nprobes && i < LIVE_MAX_PROBES; i++)
		if (l->probes[i].timed)
			histogram(o, "ebpf_prof_probe_duration_seconds", "probe", l->probes[i].name,
				  "library", l->probes[i].library, &l->probes[i].dur);
	family(o, om, "ebpf_prof_cycles_total", M_COUNTER, "Experiment cycles closed.");
	series(o, "ebpf_prof_cycles_total", NULL, NULL, NULL, NULL, NULL);
	u64(o, l->cycles_closed);
	fputc_unlocked('\n', o);
	family(o, om, "ebpf_prof_cycle_duration_seconds", M_HISTOGRAM,
	       "Wall time of the experiment cycles.");
	histogram(o, "ebpf_prof_cycle_duration_seconds", NULL, NULL, NULL, NULL, &l->cycle_wall);
	family(o, om, "ebpf_prof_cycle_component_seconds_total", M_COUNTER,
	       "Wall time of the attributed cycles, per component.");
	for (int k = 0; k < LIVE_CYC_PARTS; k++) {
		/* Off-CPU time is measured by the scheduler view, which reports
		 * its drop count once it runs: without it the time is unknown,
		 * not zero, and is left out. */
		if (k == LIVE_CYC_OFFCPU && l->drops[LIVE_SRC_SCHED] < 0)
			continue;
		series(o, "ebpf_prof_cycle_component_seconds_total", NULL, "component", cyc_part[k],
		       NULL, NULL);
		value(o, l->cycle_part_s[k]);
		fputc_unlocked('\n', o);
	}
	if (l->llm_on) {
		family(o, om, "ebpf_prof_llm_tokens_total", M_COUNTER,
		       "Tokens through llama_decode, by phase (prompt processing, generation).");
		series(o, "ebpf_prof_llm_tokens_total", NULL, "phase", "prompt", NULL, NULL);
		u64(o, l->llm_prompt_tokens);
		fputc_unlocked('\n', o);
		series(o, "ebpf_prof_llm_tokens_total", NULL, "phase", "generated", NULL, NULL);
		u64(o, l->llm_generated_tokens);
		fputc_unlocked('\n', o);
		family(o, om, "ebpf_prof_llm_prompts_total", M_COUNTER, "Prompts started.");
		series(o, "ebpf_prof_llm_prompts_total", NULL, NULL, NULL, NULL, NULL);
		u64(o, l->llm_prompts);
		fputc_unlocked('\n', o);
		family(o, om, "ebpf_prof_llm_time_to_first_token_seconds", M_HISTOGRAM,
		       "Time to first token per prompt.");
		histogram(o, "ebpf_prof_llm_time_to_first_token_seconds", NULL, NULL, NULL, NULL,
			  &l->llm_ttft);
		family(o, om, "ebpf_prof_llm_inter_token_seconds", M_HISTOGRAM,
		       "Time between consecutive generated tokens.");
		histogram(o, "ebpf_prof_llm_inter_token_seconds", NULL, NULL, NULL, NULL,
			  &l->llm_itl);
		if (!isnan(l->llm_kv_used)) {
			family(o, om, "ebpf_prof_llm_kv_cells", M_GAUGE,
			       "KV-cache cells in use after the last decode.");
			series(o, "ebpf_prof_llm_kv_cells", NULL, NULL, NULL, NULL, NULL);
			value(o, l->llm_kv_used);
			fputc_unlocked('\n', o);
		}
		if (!isnan(l->llm_kv_size)) {
			family(o, om, "ebpf_prof_llm_kv_size_cells", M_GAUGE,
			       "KV-cache size of the context (n_ctx).");
			series(o, "ebpf_prof_llm_kv_size_cells", NULL, NULL, NULL, NULL, NULL);
			value(o, l->llm_kv_size);
			fputc_unlocked('\n', o);
		}
	}
	family(o, om, "ebpf_prof_rss_bytes", M_GAUGE, "Resident set size of each live target.");
	for (size_t i = 0; i < l->nrss && i < LIVE_MAX_PIDS; i++) {
		snprintf(a, sizeof(a), "%u", l->rss[i].pid);
		series(o, "ebpf_prof_rss_bytes", NULL, "pid", a, NULL, NULL);
		value(o, l->rss[i].bytes);
		fputc_unlocked('\n', o);
	}
	family(o, om, "ebpf_prof_cpu_frequency_hertz", M_GAUGE, "Current frequency of each CPU.");
	for (size_t i = 0; i < l->ncpu_freq && i < LIVE_MAX_CPUS; i++) {
		snprintf(a, sizeof(a), "%d", l->cpu_freq[i].cpu);
		series(o, "ebpf_prof_cpu_frequency_hertz", NULL, "cpu", a, NULL, NULL);
		value(o, l->cpu_freq[i].hz);
		fputc_unlocked('\n', o);
	}
	family(o, om, "ebpf_prof_temperature_celsius", M_GAUGE,
	       "Temperature of each thermal zone.");
	for (size_t i = 0; i < l->nzones && i < LIVE_MAX_ZONES; i++) {
		snprintf(b, sizeof(b), "thermal_zone%d", l->zones[i].id);
		series(o, "ebpf_prof_temperature_celsius", NULL, "zone", b, "type",
		       l->zones[i].name);
		value(o, l->zones[i].c);
		fputc_unlocked('\n', o);
	}
	family(o, om, "ebpf_prof_throttled", M_GAUGE,
	       "1 while the CPU or GPU is throttled, else 0.");
	if (l->throttled >= 0) {
		series(o, "ebpf_prof_throttled", NULL, NULL, NULL, NULL, NULL);
		u64(o, (uint64_t)l->throttled);
		fputc_unlocked('\n', o);
	}
	family(o, om, "ebpf_prof_gpu_load_ratio", M_GAUGE, "GPU load (Jetson), 0..1.");
	if (!isnan(l->gpu_load_pct)) {
		series(o, "ebpf_prof_gpu_load_ratio", NULL, NULL, NULL, NULL, NULL);
		value(o, l->gpu_load_pct / 100.0);
		fputc_unlocked('\n', o);
	}
	family(o, om, "ebpf_prof_power_watts", M_GAUGE, "Power drawn per rail (Jetson).");
	if (!isnan(l->gpu_power_w)) {
		series(o, "ebpf_prof_power_watts", NULL, "rail", "gpu", NULL, NULL);
		value(o, l->gpu_power_w);
		fputc_unlocked('\n', o);
	}
	if (om)
		fputs("# EOF\n", o);
	return ferror(o) ? -EIO : 0;
}
