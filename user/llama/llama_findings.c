// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* llama.cpp recommendations from the parameters in use (llama_findings.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama/llama_findings.h"

uint32_t llama_ctx_suggest(uint64_t need)
{
	uint64_t s = need + (need + 3) / 4;

	s = (s + 255) / 256 * 256;
	if (s < 256)
		s = 256;
	return s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static double num(const cJSON *o, const char *k, double dflt)
{
	const cJSON *x = get(o, k);

	return cJSON_IsNumber(x) ? x->valuedouble : dflt;
}

static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

static int add(struct findings *f, const char *rule, enum finding_severity sev, char *t, char *e,
	       char *r, double value, double thr)
{
	struct finding *v;

	if (!t || !e || !r)
		goto nomem;
	v = realloc(f->v, (f->n + 1) * sizeof(*v));
	if (!v)
		goto nomem;
	f->v = v;
	f->v[f->n++] = (struct finding){ rule, sev, t, e, r, value, thr, NULL, 0 };
	return 0;
nomem:
	free(t);
	free(e);
	free(r);
	return -ENOMEM;
}

/* Bytes in a unit that fits: a tiny test model's KV cache is KiB, a
 * real one's MiB or GiB. */
struct bytes_str {
	char s[32];
};

static struct bytes_str human(double b)
{
	struct bytes_str r;

	if (b < 1048576.0)
		snprintf(r.s, sizeof(r.s), "%.0f KiB", b / 1024.0);
	else if (b < 1073741824.0)
		snprintf(r.s, sizeof(r.s), "%.1f MiB", b / 1048576.0);
	else
		snprintf(r.s, sizeof(r.s), "%.2f GiB", b / 1073741824.0);
	return r;
}

/* Most tokens sampled in one complete cycle; the run's total without
 * cycles (every token could be in one sequence). */
static uint64_t max_generated(const cJSON *root, const struct cycle_table *t, bool *per_cycle)
{
	uint64_t m = 0;

	*per_cycle = false;
	if (t && !t->whole_run && t->n) {
		for (size_t i = 0; i < t->n; i++)
			if (!t->rows[i].partial && t->rows[i].tokens > m)
				m = t->rows[i].tokens;
		*per_cycle = true;
		return m;
	}
	return (uint64_t)num(get(get(root, "probes"), "tokens"), "count", 0);
}

static int ctx_rules(const cJSON *root, const cJSON *c, const struct cycle_table *t, uint32_t ncpus,
		     struct findings *f)
{
	const cJSON *lj = get(root, "llama");
	double n_ctx = num(c, "n_ctx", -1), n_batch = num(c, "n_batch", -1);
	double n_threads = num(c, "n_threads", -1), n_tb = num(c, "n_threads_batch", -1);
	double train = num(c, "n_ctx_train", 0), per = num(c, "kv_bytes_per_token_f16", 0);
	double prompt = num(lj, "max_prompt_tokens", 0), pid = num(c, "pid", 0);
	bool per_cycle;
	uint64_t gen = max_generated(root, t, &per_cycle);
	int e = 0;

	if (n_ctx < 0)
		return 0;
	if (n_ctx == 0 && train > 0)
		n_ctx = train; /* 0 = the model's training context */
	if (prompt > 0 && n_ctx > 0) {
		uint64_t need = (uint64_t)prompt + gen;
		uint32_t s = llama_ctx_suggest(need);

		if (s * 2 <= n_ctx) {
			char *ev =
				fmt("context of pid %.0f: n_ctx %.0f; largest prompt %.0f tokens "
				    "(llama_tokenize); at most %llu tokens generated %s; "
				    "%llu tokens needed",
				    pid, n_ctx, prompt, (unsigned long long)gen,
				    per_cycle ? "per cycle" : "in the whole run",
				    (unsigned long long)need);
			char *rec;

			if (per > 0)
				rec = fmt(
					"Set n_ctx to %u (the tokens needed plus a quarter, a "
					"multiple of 256): the KV cache (F16) shrinks from %s to %s, "
					"saving ~%s (%.0f bytes per token: report.json "
					"llama.contexts).",
					s, human(per * n_ctx).s, human(per * s).s,
					human(per * (n_ctx - s)).s, per);
			else
				rec = fmt(
					"Set n_ctx to %u (the tokens needed plus a quarter, a "
					"multiple of 256). The model file was not read, so the "
					"saving is not computed: llama.cpp logs the KV cache size "
					"(\"llama_kv_cache: size = ...\") at context creation.",
					s);
			e = add(f, "llama_ctx_oversized",
				per * (n_ctx - s) >= 256.0 * 1048576 ? FIND_WARNING : FIND_INFO,
				fmt("n_ctx is %.0f while prompts never exceed %.0f tokens", n_ctx,
				    prompt),
				ev, rec, n_ctx, s);
			if (e)
				return e;
		}
	}
	if (train > 0 && n_ctx > train) {
		e = add(f, "llama_ctx_over_train", FIND_WARNING,
			fmt("n_ctx %.0f exceeds the model's training context (%.0f)", n_ctx, train),
			fmt("context of pid %.0f: n_ctx %.0f, GGUF context_length %.0f", pid, n_ctx,
			    train),
			fmt("Set n_ctx to at most %.0f, or use RoPE scaling made for longer "
			    "contexts: beyond its training length the model's output degrades and "
			    "the extra KV cache costs memory.",
			    train),
			n_ctx, train);
		if (e)
			return e;
	}
	if (ncpus && (n_threads > ncpus || n_tb > ncpus)) {
		e = add(f, "llama_threads_oversubscribed", FIND_WARNING,
			fmt("n_threads %.0f (batch %.0f) on %u CPUs", n_threads, n_tb, ncpus),
			fmt("context of pid %.0f: n_threads %.0f, n_threads_batch %.0f; %u CPUs "
			    "online",
			    pid, n_threads, n_tb, ncpus),
			fmt("Set n_threads and n_threads_batch to at most %u (the physical cores "
			    "if fewer): ggml's threads wait for each other at every graph node, "
			    "and a thread without a CPU stalls all of them.",
			    ncpus),
			n_threads > n_tb ? n_threads : n_tb, ncpus);
		if (e)
			return e;
	}
	if (prompt > 0 && n_batch > 0 && prompt > n_batch) {
		e = add(f, "llama_batch_small", FIND_INFO,
			fmt("n_batch %.0f is smaller than the largest prompt (%.0f tokens)",
			    n_batch, prompt),
			fmt("context of pid %.0f: n_batch %.0f, n_ubatch %.0f; largest prompt %.0f "
			    "tokens: at least %.0f llama_decode calls per prompt",
			    pid, n_batch, num(c, "n_ubatch", 0), prompt,
			    floor((prompt + n_batch - 1) / n_batch)),
			fmt("Set n_batch to %.0f or more so a prompt is evaluated in one call.",
			    prompt),
			n_batch, prompt);
	}
	return e;
}

/* The run's facts after the generic advice, so it names numbers. */
static int make_concrete(const cJSON *root, struct findings *f)
{
	const cJSON *lj = get(root, "llama"), *c, *m;
	struct finding *inf = NULL;
	char *extra, *r;

	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].rule, "inference_dominates"))
			inf = &f->v[i];
	c = cJSON_GetArrayItem(get(lj, "contexts"), 0);
	m = cJSON_GetArrayItem(get(lj, "models"), 0);
	if (!inf)
		return 0;
	if (!c && !m) {
		/* The set-up calls were not seen: say what to check instead. */
		r = fmt("%s The parameters in use (n_ctx, n_batch, n_threads, n_gpu_layers, the "
			"model's quantization) were not read: the model and context were set up "
			"before ebpf-prof attached. Start the program under ebpf-prof (ebpf-prof -- "
			"CMD) to have them read, or check them where the program sets them.",
			inf->recommendation);
		if (!r)
			return -ENOMEM;
		free(inf->recommendation);
		inf->recommendation = r;
		return 0;
	}
	const cJSON *g = get(m, "gguf");
	const cJSON *q = get(g, "quantization"), *mt = get(g, "main_tensor_type");
	/* Only what was read: an unknown layout leaves the numbers out. */
	char nums[160] = "", weights[200] = "";
	const char *names[] = { "n_ctx", "n_batch", "n_threads" };
	size_t len = 0;

	/* %.12g: a hostile report.json cannot overflow the buffer with 1e300. */
	for (size_t k = 0; k < 4; k++) {
		const cJSON *o = k < 3 ? c : m;
		const char *nm = k < 3 ? names[k] : "n_gpu_layers";
		int w;

		if (!cJSON_IsNumber(get(o, nm)))
			continue;
		w = snprintf(nums + len, sizeof(nums) - len, "%s%s %.12g", len ? ", " : "", nm,
			     num(o, nm, 0));
		len = w < 0 || (size_t)w >= sizeof(nums) - len ? sizeof(nums) - 1 : len + (size_t)w;
	}
	if (cJSON_IsString(q) || cJSON_IsString(mt))
		snprintf(weights, sizeof(weights), "model weights %s%s%s (%.0f M elements)%s",
			 cJSON_IsString(q) ? q->valuestring : "",
			 cJSON_IsString(q) && cJSON_IsString(mt) ? ", mostly " : "",
			 cJSON_IsString(mt) ? mt->valuestring : "", num(g, "n_elements", 0) / 1e6,
			 cJSON_IsString(mt) && (!strcmp(mt->valuestring, "F32") ||
						!strcmp(mt->valuestring, "F16") ||
						!strcmp(mt->valuestring, "BF16"))
				 ? ": unquantized; Q4_K_M reads ~4x (F16) to ~8x (F32) fewer bytes "
				   "per token"
				 : "");
	if (!nums[0] && !weights[0])
		return 0; /* report.json llama.problems says why */
	extra = fmt(" In this run: %s%s%s.", nums, nums[0] && weights[0] ? "; " : "", weights);
	if (!extra)
		return -ENOMEM;
	r = fmt("%s%s", inf->recommendation, extra);
	free(extra);
	if (!r)
		return -ENOMEM;
	free(inf->recommendation);
	inf->recommendation = r;
	return 0;
}

/* Mean ms per generated token of the cycles in v[lo, hi). */
struct kv_pt {
	double kv, ms_per_tok;
};

static int cmp_kv(const void *a, const void *b)
{
	double x = ((const struct kv_pt *)a)->kv, y = ((const struct kv_pt *)b)->kv;

	return x < y ? -1 : x > y;
}

static double mean_ms(const struct kv_pt *v, size_t lo, size_t hi)
{
	double s = 0;

	for (size_t i = lo; i < hi; i++)
		s += v[i].ms_per_tok;
	return hi > lo ? s / (double)(hi - lo) : 0;
}

/* Generation steps slower with a fuller KV cache: attention reads every
 * cached token at each step. Over the complete cycles with steps and a
 * known fill, sorted by fill: the third with the fullest cache against
 * the emptiest third, when the fill at least doubles between them. */
static int kv_slowdown(const struct cycle_table *t, struct findings *f)
{
	struct kv_pt *v;
	size_t n = 0, k;
	double lo_ms, hi_ms, lo_kv, hi_kv;
	int e = 0;

	if (!t || !t->n)
		return 0;
	v = malloc(t->n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		const struct cycle_llm *l = &t->rows[i].llm;

		if (!t->rows[i].partial && l->has && l->generated_tokens && l->kv_used > 0)
			v[n++] = (struct kv_pt){ (double)l->kv_used,
						 (double)l->decode_ns / 1e6 /
							 (double)l->generated_tokens };
	}
	if (n < 6)
		goto out;
	qsort(v, n, sizeof(*v), cmp_kv);
	k = n / 3;
	lo_ms = mean_ms(v, 0, k);
	hi_ms = mean_ms(v, n - k, n);
	lo_kv = v[k - 1].kv;
	hi_kv = v[n - k].kv;
	if (hi_kv < 2 * lo_kv || lo_ms <= 0 || hi_ms < 1.25 * lo_ms)
		goto out;
	e = add(f, "llm_decode_slows_with_kv", FIND_INFO,
		fmt("Generation %.0f%% slower per token with a fuller KV cache",
		    (hi_ms / lo_ms - 1) * 100),
		fmt("%.3f ms per generated token in the %zu cycles with a KV fill up to %.0f, "
		    "%.3f ms in the %zu cycles from %.0f (%.1f vs %.1f tokens/s)",
		    lo_ms, k, lo_kv, hi_ms, k, hi_kv, 1e3 / lo_ms, 1e3 / hi_ms),
		fmt("Each generation step reads the whole KV cache: keep the context short "
		    "(clear it between independent prompts, drop old turns), or use flash "
		    "attention and a quantized KV cache (type_k/type_v q8_0) to read less per "
		    "step."),
		hi_ms / lo_ms, 1.25);
out:
	free(v);
	return e;
}

/* Rules on the LLM timing (report.json "llm", cycles[].llm): prompt
 * processing dominating with a batch smaller than the prompts, a context
 * near full, generation slowing as the KV cache fills. */
static int llm_rules(const cJSON *root, const struct cycle_table *t, uint32_t ncpus,
		     struct findings *f)
{
	const cJSON *l = get(root, "llm"),
		    *c = cJSON_GetArrayItem(get(get(root, "llama"), "contexts"), 0);
	double prefill = num(l, "prefill_ms", 0), decode = num(l, "decode_ms", 0);
	double prompts = num(l, "prompts", 0), ptok = num(l, "prompt_tokens", 0);
	double kv = num(l, "kv_used_max", -1), size = num(l, "kv_size", 0);
	double n_batch = num(c, "n_batch", 0), n_ubatch = num(c, "n_ubatch", 0);
	double mean = prompts > 0 ? ptok / prompts : 0;
	double largest = num(get(root, "llama"), "max_prompt_tokens", 0);
	int e;

	if (!l)
		return 0;
	if (largest < mean)
		largest = mean;
	if (size <= 0)
		size = num(c, "n_ctx", 0);
	if (prefill + decode > 0 && prefill > 0.5 * (prefill + decode) && largest > 0 &&
	    ((n_ubatch > 0 && n_ubatch < largest) || (n_batch > 0 && n_batch < largest))) {
		double ub = n_ubatch > 0 && n_ubatch < n_batch ? n_ubatch : n_batch;

		e = add(f, "llm_prefill_dominates", FIND_WARNING,
			fmt("Prompt processing takes %.0f%% of llama_decode time with n_ubatch %.0f "
			    "below the prompts' %.0f tokens",
			    100 * prefill / (prefill + decode), n_ubatch, largest),
			fmt("prefill %.1f ms for %.0f prompt tokens (%.0f tokens/s, %.0f per prompt "
			    "on average), generation %.1f ms; n_batch %.0f, n_ubatch %.0f: at least "
			    "%.0f graph evaluations per prompt",
			    prefill, ptok, prefill > 0 ? ptok * 1e3 / prefill : 0, mean, decode,
			    n_batch, n_ubatch, ub > 0 ? floor((largest + ub - 1) / ub) : 0),
			fmt("Set n_batch and n_ubatch to %.0f or more: a prompt is then evaluated "
			    "as one graph, whose larger matrix products run nearer the hardware's "
			    "peak than several small ones.",
			    largest),
			100 * prefill / (prefill + decode), 50);
		if (e)
			return e;
	}
	/* llama.cpp runs a batch of more than one token on n_threads_batch
	 * threads, a generation step on n_threads. */
	double tb = num(c, "n_threads_batch", 0), tg = num(c, "n_threads", 0);
	if (ncpus && tb > 0 && tb < ncpus && tb < tg && prefill + decode > 0 &&
	    prefill > 0.5 * (prefill + decode)) {
		e = add(f, "llm_prefill_threads", FIND_INFO,
			fmt("Prompt processing runs on %.0f threads (n_threads_batch), generation "
			    "on %.0f, while prompts take %.0f%% of llama_decode time",
			    tb, tg, 100 * prefill / (prefill + decode)),
			fmt("n_threads_batch %.0f, n_threads %.0f, %u CPUs online; prefill %.1f ms, "
			    "generation %.1f ms",
			    tb, tg, ncpus, prefill, decode),
			fmt("Set n_threads_batch to %.0f or more (up to the physical cores): prompt "
			    "processing is compute-bound and scales with threads, unlike the "
			    "memory-bound generation steps.",
			    tg),
			tb, tg);
		if (e)
			return e;
	}
	if (kv >= 0 && size > 0 && kv >= 0.9 * size) {
		e = add(f, "llm_context_near_full", FIND_WARNING,
			fmt("The KV cache filled to %.0f of %.0f cells (%.0f%%)", kv, size,
			    100 * kv / size),
			fmt("after a llama_decode: %.0f cells in use, n_ctx %.0f; prompts of %.0f "
			    "tokens on average",
			    kv, size, mean),
			fmt("The next tokens will not fit: llama_decode then fails, or the program "
			    "truncates the prompt or shifts the context (dropping the oldest "
			    "tokens, which the model then no longer sees). Raise n_ctx, clear the "
			    "cache between independent prompts, or cap the generated tokens."),
			kv / size, 0.9);
		if (e)
			return e;
	}
	return kv_slowdown(t, f);
}

int llama_findings_from_report(const cJSON *root, const struct cycle_table *t, uint32_t ncpus,
			       struct findings *f)
{
	const cJSON *c;
	int e;

	e = llm_rules(root, t, ncpus, f);
	if (e)
		return e;
	if (!get(root, "llama"))
		return make_concrete(root, f);
	cJSON_ArrayForEach(c, get(get(root, "llama"), "contexts"))
	{
		e = ctx_rules(root, c, t, ncpus, f);
		if (e)
			return e;
	}
	return make_concrete(root, f);
}
