// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A whole-run cycle rebuilt from a report.json that has no `cycles` section
 * (a run without cycle boundaries), so `ebpf-prof report` can still show the
 * breakdown and findings. Exact where the report has timestamps (RSS
 * timeline, throttling episodes); from totals otherwise (probes, off-CPU of
 * the main thread), with the partition filled in rule order up to the wall
 * time: an approximation, documented in docs/cycles.md.
 */
#include "cycles/cycles_json.h"
#include "cycles/cycle_facts.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/satmath.h"

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

bool cycles_json_number(const cJSON *x, double *v)
{
	double d;
	if (cJSON_IsNumber(x)) {
		d = x->valuedouble;
	} else if (cJSON_IsRaw(x) && x->valuestring) {
		/* A live report holds u64 values as raw decimal text
		 * (export/report.c); only plain digits are a number here. */
		const char *p = x->valuestring;
		size_t n = strspn(p, "0123456789");
		if (!n || p[n] || n > 20)
			return false;
		d = strtod(p, NULL);
	} else {
		return false;
	}
	if (!isfinite(d) || d < 0 || d >= 1.8e19)
		return false;
	*v = d;
	return true;
}

static bool num(const cJSON *x, double *v)
{
	return cycles_json_number(x, v);
}

static uint64_t u64_of(const cJSON *x)
{
	double v;
	return num(x, &v) ? (uint64_t)v : 0;
}

/* A time of report.json llm in ms, as ns; false when absent or null. */
static bool llm_ns(const cJSON *l, const char *k, uint64_t *ns)
{
	double v;

	if (!num(get(l, k), &v) || v > 1.8e13)
		return false;
	*ns = (uint64_t)(v * 1e6 + 0.5);
	return true;
}

/* The whole run's LLM timing from report.json llm (every decode): its
 * tokens and times; the time to first token is per prompt there, not from
 * the run's start, and the KV fill at the end is not kept: both unknown. */
static void whole_run_llm(const cJSON *l, struct cycle_row *r)
{
	struct cycle_llm *c = &r->llm;
	double v;

	memset(c, 0, sizeof(*c));
	c->kv_used = -1;
	if (!cJSON_IsObject(l) || !num(get(l, "prompt_tokens"), &v))
		return;
	c->has = true;
	c->prompt_tokens = (uint64_t)v;
	c->generated_tokens = u64_of(get(l, "generated_tokens"));
	c->prompts = (uint32_t)(u64_of(get(l, "prompts")) & UINT32_MAX);
	llm_ns(l, "prefill_ms", &c->prefill_ns);
	llm_ns(l, "decode_ms", &c->decode_ns);
	c->has_itl = llm_ns(l, "itl_p50_ms", &c->itl_p50_ns) &&
		     llm_ns(l, "itl_p99_ms", &c->itl_p99_ns);
	if (num(get(l, "kv_size"), &v) && v <= UINT32_MAX)
		c->kv_size = (uint32_t)v;
	/* Tokens from the batches, as in the cycles. */
	r->tokens = c->generated_tokens;
}

void cycles_findings_ctx(const cJSON *root, struct findings_ctx *ctx)
{
	const cJSON *ov = get(root, "overhead"), *meta = get(root, "cycles_meta"), *x;
	double v;

	memset(ctx, 0, sizeof(*ctx));
	if (num(get(get(root, "memory"), "system_ram_bytes"), &v) && v > 0)
		ctx->mem_total_bytes = (uint64_t)v;
	if (num(get(get(get(root, "sched"), "runqueue_latency_ns"), "p99"), &v) && v > 0)
		ctx->runq_p99_ns = (uint64_t)v;
	if (num(get(ov, "probe_share"), &v) && v <= 1)
		ctx->probe_share = v;
	if (num(get(ov, "probe_hits"), &v))
		ctx->probe_hits = (uint64_t)v;
	if (num(get(ov, "probe_ns"), &v))
		ctx->probe_ns = v;
	if (num(get(ov, "target_cpu_ns"), &v))
		ctx->target_cpu_ns = (uint64_t)v;
	x = get(get(get(root, "memory"), "alloc"), "cost");
	if (num(get(x, "target_cpu_share"), &v) && v > 0 && v <= 1 &&
	    num(get(x, "warn_share"), &ctx->alloc_probe_threshold)) {
		ctx->alloc_probe_share = v;
		if (num(get(x, "probe_hits"), &v) && v >= 0)
			ctx->alloc_probe_hits = (uint64_t)v;
		if (num(get(x, "estimated_ns"), &v) && v >= 0)
			ctx->alloc_probe_ns = v;
	}
	{
		size_t n = (size_t)cJSON_GetArraySize(get(get(root, "sched"), "threads"));
		ctx->nthreads = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
	}
	{
		/* Samples lost whole; a sample kept without its stack, or a tick
		 * the overload guard did not take, is not one. */
		static const char *const lost[] = { "ringbuf_full", "collector", "unread_at_stop" };
		const cJSON *by = get(get(root, "dropped"), "by_cause");

		ctx->samples_total = u64_of(get(get(root, "samples"), "total"));
		for (size_t i = 0; i < sizeof(lost) / sizeof(lost[0]); i++)
			ctx->samples_lost += u64_of(get(by, lost[i]));
	}
	x = get(meta, "spec");
	if (cJSON_IsString(x))
		ctx->cycle_spec = x->valuestring;
	x = get(meta, "problem");
	if (cJSON_IsString(x))
		ctx->cycle_problem = x->valuestring;
	x = get(meta, "py_mechanism");
	ctx->py_watch = cJSON_IsString(x) && !strcmp(x->valuestring, "watchpoint");
}

static uint64_t take(uint64_t *left, uint64_t want)
{
	uint64_t t = want < *left ? want : *left;
	*left -= t;
	return t;
}

int cycles_whole_run_from_report(const cJSON *root, struct cycle_table *out, char *err,
				 size_t errlen)
{
	memset(out, 0, sizeof(*out));
	const cJSON *time = get(root, "time");
	double t0, t1;
	if (!num(get(time, "start_monotonic_ns"), &t0) ||
	    !num(get(time, "end_monotonic_ns"), &t1) || t1 < t0) {
		snprintf(err, errlen,
			 "time.start_monotonic_ns/end_monotonic_ns missing or invalid");
		return -EINVAL;
	}
	uint32_t main_pid = 0;
	const cJSON *pids = get(get(root, "target"), "pids");
	if (cJSON_IsArray(pids))
		main_pid = (uint32_t)(u64_of(cJSON_GetArrayItem(pids, 0)) & 0xffffffffu);

	struct cycles_input *in = cycles_input_new();
	if (!in)
		return -ENOMEM;
	int e = 0;
	const cJSON *p;
	cJSON_ArrayForEach(p, get(get(root, "memory"), "timeline"))
	{
		double ts, rss;
		double pid = 0;
		if (!num(get(p, "t_s"), &ts) || !num(get(p, "rss_bytes"), &rss))
			continue;
		/* One process's RSS: the first target's (children have their own). */
		if (main_pid && num(get(p, "pid"), &pid) && (uint32_t)pid != main_pid)
			continue;
		if (!e && ts < 1e9)
			e = cycle_facts_add_rss(cycles_input_facts(in),
						sat_add_u64((uint64_t)t0, (uint64_t)(ts * 1e9)),
						(uint64_t)rss);
	}
	cJSON_ArrayForEach(p, get(get(root, "throttling"), "episodes"))
	{
		double s, f;
		if (!num(get(p, "start_s"), &s) || !num(get(p, "end_s"), &f) || f < s || f > 1e9)
			continue;
		if (!e)
			e = cycle_facts_add_throttle(cycles_input_facts(in),
						     sat_add_u64((uint64_t)t0, (uint64_t)(s * 1e9)),
						     sat_add_u64((uint64_t)t0,
								 (uint64_t)(f * 1e9)));
	}
	struct cycles_cfg cfg = { .run_start_ns = (uint64_t)t0, .run_end_ns = (uint64_t)t1 };
	if (!e)
		e = cycles_compute(in, &cfg, out);
	cycles_input_free(in);
	if (e) {
		snprintf(err, errlen, "%s", e == -ENOMEM ? "out of memory" : "invalid run data");
		return e;
	}
	struct cycle_row *r = &out->rows[0];

	r->samples = u64_of(get(get(root, "samples"), "total"));
	/* Values from the file: products and sums stop at 2^64 - 1. */
	r->on_cpu_ns = sat_mul_u64(r->samples, u64_of(get(get(root, "sampling"), "period_ns")));

	/* Off-CPU of the main thread when the scheduler view has it. */
	const cJSON *sched = get(root, "sched"), *by = NULL, *t;
	cJSON_ArrayForEach(t, get(sched, "threads"))
	{
		if (main_pid && u64_of(get(t, "tid")) == main_pid)
			by = get(t, "off_cpu_by_reason");
	}
	bool main_known = by != NULL;
	if (!by)
		by = get(sched, "off_cpu_by_reason");
	for (unsigned k = 0; k < CYC_OFF_REASONS; k++) {
		r->off_cpu_ns[k] = u64_of(get(by, cycles_off_reason_name(k)));
		r->off_cpu_total_ns = sat_add_u64(r->off_cpu_total_ns, r->off_cpu_ns[k]);
	}

	const cJSON *probes = get(root, "probes");
	/* Per class with nested calls counted once (llama_decode's ggml
	 * computes, sqlite3_exec's steps): reports since probes.classes. */
	const cJSON *cls = get(probes, "classes");
	if (cJSON_IsObject(cls)) {
		r->inference_ns = u64_of(get(get(cls, "inference"), "ns"));
		uint64_t c = u64_of(get(get(cls, "inference"), "calls"));
		r->inference_calls = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
		r->sql_ns = u64_of(get(get(cls, "sql"), "ns"));
		/* SQLite API calls started, the outermost ones: what a cycle
		 * counts (not executions, which follow the resets). */
		c = u64_of(get(get(cls, "sql"), "calls"));
		r->sql_count = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
		r->probe_other_ns = u64_of(get(get(cls, "other"), "ns"));
		c = u64_of(get(get(cls, "other"), "calls"));
		r->probe_other_calls = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
	}
	cJSON_ArrayForEach(p, get(probes, "list"))
	{
		if (cJSON_IsObject(cls))
			break; /* older reports: the sum of the probes below */
		const cJSON *g = get(p, "group");
		uint64_t ns = u64_of(get(p, "total_ns")), calls = u64_of(get(p, "count"));
		if (calls > UINT32_MAX)
			calls = UINT32_MAX;
		const char *grp = cJSON_IsString(g) ? g->valuestring : "";
		if (!strcmp(grp, "llama")) {
			r->inference_ns = sat_add_u64(r->inference_ns, ns);
			r->inference_calls = sat_add_u32(r->inference_calls, calls);
		} else if (!strcmp(grp, "sqlite")) {
			uint64_t nested = u64_of(get(p, "nested_sql"));

			r->sql_ns = sat_add_u64(r->sql_ns, ns);
			r->sql_count = sat_add_u32(r->sql_count,
						   (uint32_t)(calls > nested ? calls - nested : 0));
		} else {
			r->probe_other_ns = sat_add_u64(r->probe_other_ns, ns);
			r->probe_other_calls = sat_add_u32(r->probe_other_calls, calls);
		}
	}
	r->tokens = u64_of(get(get(probes, "tokens"), "count"));
	whole_run_llm(get(root, "llm"), r);
	if (r->inference_ns)
		r->tokens_per_s = (double)r->tokens * 1e9 / (double)r->inference_ns;
	/* The slowest SQL call: the longest single call of a SQLite probe
	 * (exact), as a cycle's is its longest call. Its statement: the one
	 * whose slowest execution is the longest (older reports: the highest
	 * p99), not the costliest in total (many fast runs). */
	cJSON_ArrayForEach(p, get(probes, "list"))
	{
		const cJSON *g = get(p, "group"), *m = get(p, "mode");

		if (cJSON_IsString(g) && !strcmp(g->valuestring, "sqlite") &&
		    !(cJSON_IsString(m) && !strcmp(m->valuestring, "count"))) {
			uint64_t mx = u64_of(get(p, "max_ns"));
			if (mx > r->sql_slowest_ns)
				r->sql_slowest_ns = mx;
		}
	}
	const cJSON *st, *slow = NULL;
	uint64_t slow_ns = 0;
	cJSON_ArrayForEach(st, get(get(root, "sql"), "statements"))
	{
		const cJSON *mx = get(st, "max_ns");
		uint64_t v = u64_of(mx ? mx : get(st, "p99_ns"));

		if (cJSON_IsString(get(st, "text")) && (!slow || v > slow_ns)) {
			slow = st;
			slow_ns = v;
		}
	}
	if (slow) {
		r->sql_slowest = strdup(get(slow, "text")->valuestring);
		if (!r->sql_slowest) {
			cycle_table_free(out);
			return -ENOMEM;
		}
		if (!r->sql_slowest_ns)
			r->sql_slowest_ns = slow_ns;
	}

	/* Partition from totals. How they overlap is unknown here: sleep
	 * (a thread that chose to wait) is rarely inside a probed call, so it
	 * goes first; then the attribution's priority order, where I/O waits
	 * (fsync in a COMMIT) and preemption (inside inference) are mostly
	 * inside the probed calls already counted. */
	uint64_t left = r->wall_ns;
	if (main_known)
		r->part_off_cpu_ns[CYC_OFF_SLEEP] = take(&left, r->off_cpu_ns[CYC_OFF_SLEEP]);
	r->part_sql_ns = take(&left, r->sql_ns);
	r->part_inference_ns = take(&left, r->inference_ns);
	r->part_probe_ns = take(&left, r->probe_other_ns);
	for (unsigned k = 0; main_known && k < CYC_OFF_REASONS; k++)
		if (k != CYC_OFF_SLEEP)
			r->part_off_cpu_ns[k] = take(&left, r->off_cpu_ns[k]);
	r->other_ns = left;

	const cJSON *f;
	cJSON_ArrayForEach(f, get(root, "top_functions"))
	{
		const cJSON *nm = get(f, "name");
		if (r->n_top >= CYC_TOP_FUNCS)
			break;
		if (!cJSON_IsString(nm))
			continue;
		char *d = strdup(nm->valuestring);
		if (!d) {
			cycle_table_free(out);
			return -ENOMEM;
		}
		r->top[r->n_top++] = (struct cycle_func){ d, u64_of(get(f, "self")) };
	}
	return 0;
}
