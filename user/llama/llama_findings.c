// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* llama.cpp recommendations from the parameters in use (llama_findings.h). */
#include <errno.h>
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
			    (prompt + n_batch - 1) / n_batch),
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

int llama_findings_from_report(const cJSON *root, const struct cycle_table *t, uint32_t ncpus,
			       struct findings *f)
{
	const cJSON *c;
	int e;

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
