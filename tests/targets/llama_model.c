// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Runs a real (tiny, generated) GGUF model through the prebuilt llama.cpp
 * libraries of @node-llama-cpp/linux-x64 for the probes test:
 * llama_model DIR MODEL N prints "ready <pid>"; SIGUSR1 -> dlopen the
 * libraries from DIR and register the baseline CPU backend, "loaded";
 * SIGUSR1 -> load MODEL, tokenize N_TOKENIZE texts, decode the prompt, then
 * N times: sample a token and decode it (N samples, N + 1 decodes), and
 * print the counts and its own CLOCK_MONOTONIC timing of each kind of call
 * (sum of call durations; start of the first and last sampler call), and
 * of each call: "span KIND START_NS END_NS CPU_NS", its clock reads right
 * around the call and the thread's CPU time between them
 * (CLOCK_THREAD_CPUTIME_ID, read just outside), so that the wall time the
 * thread did not run in the call (preempted, or the host stalling the
 * vCPU) is known too.
 *
 * EP_LLAMA_PARAMS="N_CTX N_BATCH N_UBATCH N_THREADS N_THREADS_BATCH NGL"
 * sets those parameters at the offsets of this build (libllama.v0.5.0.so,
 * llama_version() "0.5.0-dev": user/llama/llama_layout.c) and prints what
 * the context reports through its own accessors (llama_n_ctx, ...), so the
 * test checks both the values ebpf-prof reads and the offsets themselves.
 *
 * Only the stable C API is used. llama_batch and the first field of
 * llama_context_params (n_ctx) have kept their layout for many releases
 * (later fields differ between builds); the other structs passed by value
 * get more room than any version needs (the callee reads its own layout).
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define N_TOKENIZE 2
#define MAX_TOKENS 256
/* Calls timed one by one: N_TOKENIZE tokenizations, the prompt's decode,
 * then up to 200 x (sample + decode). */
#define MAX_SPANS (N_TOKENIZE + 1 + 2 * 200)

struct big {
	unsigned char b[1024];
};

struct llama_batch {
	int32_t n_tokens;
	int32_t *token;
	float *embd;
	int32_t *pos;
	int32_t *n_seq_id;
	int32_t **seq_id;
	int8_t *logits;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct span {
	const char *kind;
	uint64_t start, end, cpu;
};

static struct span spans[MAX_SPANS];
static int nspans;

/* Opens a call's timing: the CPU clock first, so the wall-clock window
 * (start..end) lies inside the CPU-time window. */
static struct span *span_begin(const char *kind)
{
	struct span *s = &spans[nspans < MAX_SPANS - 1 ? nspans++ : MAX_SPANS - 1];

	s->kind = kind;
	s->cpu = thread_cpu_ns();
	s->start = now_ns();
	return s;
}

static uint64_t span_end(struct span *s)
{
	s->end = now_ns();
	s->cpu = thread_cpu_ns() - s->cpu;
	return s->end - s->start;
}

static void *open_lib(const char *dir, const char *name)
{
	char path[4096];
	void *h;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	if (!h)
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
	return h;
}

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p)
		fprintf(stderr, "dlsym %s: %s\n", name, dlerror());
	return p;
}

static void quiet_log(int level, const char *text, void *data)
{
	(void)level;
	(void)text;
	(void)data;
}

int main(int argc, char **argv)
{
	sigset_t set;
	int sig, n_gen;
	void *ggml, *llama;
	char cpu_path[4096];

	if (argc < 4 || (n_gen = atoi(argv[3])) < 2 || n_gen > 200) {
		fprintf(stderr, "usage: llama_model DIR MODEL N (2 <= N <= 200)\n");
		return 2;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;
	if (!open_lib(argv[1], "libggml-base.so"))
		return 1;
	ggml = open_lib(argv[1], "libggml.v0.5.0.so");
	llama = open_lib(argv[1], "libllama.v0.5.0.so");
	if (!ggml || !llama)
		return 1;

	void *(*backend_load)(const char *) =
		(void *(*)(const char *))sym(ggml, "ggml_backend_load");
	void (*log_set)(void (*)(int, const char *, void *), void *) =
		(void (*)(void (*)(int, const char *, void *), void *))sym(llama, "llama_log_set");
	void (*backend_init)(void) = (void (*)(void))sym(llama, "llama_backend_init");
	struct big (*model_defp)(void) =
		(struct big(*)(void))sym(llama, "llama_model_default_params");
	void *(*model_load)(const char *, struct big) =
		(void *(*)(const char *, struct big))sym(llama, "llama_model_load_from_file");
	struct big (*ctx_defp)(void) =
		(struct big(*)(void))sym(llama, "llama_context_default_params");
	void *(*init_ctx)(void *, struct big) =
		(void *(*)(void *, struct big))sym(llama, "llama_init_from_model");
	void *(*get_vocab)(void *) = (void *(*)(void *))sym(llama, "llama_model_get_vocab");
	int32_t (*tokenize)(void *, const char *, int32_t, int32_t *, int32_t, bool, bool) =
		(int32_t(*)(void *, const char *, int32_t, int32_t *, int32_t, bool,
			    bool))sym(llama, "llama_tokenize");
	struct llama_batch (*batch_one)(int32_t *, int32_t) =
		(struct llama_batch(*)(int32_t *, int32_t))sym(llama, "llama_batch_get_one");
	int32_t (*decode)(void *, struct llama_batch) =
		(int32_t(*)(void *, struct llama_batch))sym(llama, "llama_decode");
	void *(*greedy)(void) = (void *(*)(void))sym(llama, "llama_sampler_init_greedy");
	int32_t (*sample)(void *, void *, int32_t) =
		(int32_t(*)(void *, void *, int32_t))sym(llama, "llama_sampler_sample");
	void (*sampler_free)(void *) = (void (*)(void *))sym(llama, "llama_sampler_free");
	void (*ctx_free)(void *) = (void (*)(void *))sym(llama, "llama_free");
	void (*model_free)(void *) = (void (*)(void *))sym(llama, "llama_model_free");
	void (*set_threads)(void *, int32_t, int32_t) =
		(void (*)(void *, int32_t, int32_t))sym(llama, "llama_set_n_threads");
	int32_t (*n_threads)(void *) = (int32_t(*)(void *))sym(llama, "llama_n_threads");

	if (!backend_load || !log_set || !backend_init || !model_defp || !model_load || !ctx_defp ||
	    !init_ctx || !get_vocab || !tokenize || !batch_one || !decode || !greedy || !sample ||
	    !sampler_free || !ctx_free || !model_free || !set_threads || !n_threads)
		return 1;
	/* The libraries are built to load their CPU variants at runtime; the
	 * baseline x64 one runs on any x86-64 CPU. */
	snprintf(cpu_path, sizeof(cpu_path), "%s/libggml-cpu-x64.so", argv[1]);
	if (!backend_load(cpu_path)) {
		fprintf(stderr, "cannot load the CPU backend %s\n", cpu_path);
		return 1;
	}
	if (!getenv("EP_LLAMA_VERBOSE"))
		log_set(quiet_log, NULL);
	backend_init();
	printf("loaded\n");
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;

	struct big mp = model_defp();
	const char *wantm = getenv("EP_LLAMA_PARAMS");
	int ngl;

	if (wantm && sscanf(wantm, "%*u %*u %*u %*u %*u %d", &ngl) == 1)
		memcpy(mp.b + 0x10, &ngl, 4);
	void *model = model_load(argv[2], mp);

	if (!model) {
		fprintf(stderr, "cannot load model %s\n", argv[2]);
		return 1;
	}
	struct big cp = ctx_defp();
	const char *want = getenv("EP_LLAMA_PARAMS");
	unsigned w[6];

	/* n_ctx is the first field in every version: a small context. */
	*(uint32_t *)cp.b = 256;
	if (want &&
	    sscanf(want, "%u %u %u %u %u %u", &w[0], &w[1], &w[2], &w[3], &w[4], &w[5]) == 6) {
		memcpy(cp.b + 0x00, &w[0], 4);
		memcpy(cp.b + 0x04, &w[1], 4);
		memcpy(cp.b + 0x08, &w[2], 4);
		memcpy(cp.b + 0x1c, &w[3], 4);
		memcpy(cp.b + 0x20, &w[4], 4);
	}
	void *ctx = init_ctx(model, cp);
	void *vocab = get_vocab(model);
	void *smpl = greedy();

	if (!ctx || !vocab || !smpl) {
		fprintf(stderr, "cannot create a context/sampler\n");
		return 1;
	}
	if (want) {
		uint32_t (*u)(void *);
		int32_t (*i)(void *);

		printf("ctx_params");
		static const char *const un[] = { "llama_n_ctx", "llama_n_batch",
						  "llama_n_ubatch" };
		static const char *const in[] = { "llama_n_threads", "llama_n_threads_batch" };
		for (size_t k = 0; k < 3; k++) {
			if (!(*(void **)&u = sym(llama, un[k])))
				return 1;
			printf(" %u", u(ctx));
		}
		for (size_t k = 0; k < 2; k++) {
			if (!(*(void **)&i = sym(llama, in[k])))
				return 1;
			printf(" %d", i(ctx));
		}
		printf("\n");
		fflush(stdout);
	}
	/* One compute thread: the default (4) spins in ggml_barrier on this
	 * 2-core machine and turns a sub-millisecond decode into ~200 ms. */
	set_threads(ctx, 1, 1);
	if (n_threads(ctx) != 1) {
		fprintf(stderr, "llama_set_n_threads had no effect\n");
		return 1;
	}
	static const char *const texts[N_TOKENIZE] = { "hello world, the probe counts every token",
						       "a b" };
	int32_t toks[MAX_TOKENS], n_prompt = 0, bad = 0;
	uint64_t tok_ns = 0, dec_ns = 0, smp_ns = 0, first_smp = 0, last_smp = 0;
	struct span *sp;

	for (int i = N_TOKENIZE - 1; i >= 0; i--) {
		sp = span_begin("tokenize");
		n_prompt = tokenize(vocab, texts[i], (int32_t)strlen(texts[i]), toks, MAX_TOKENS,
				    true, false);
		tok_ns += span_end(sp);
		bad += n_prompt <= 0;
	}
	if (n_prompt <= 0 || n_prompt + n_gen >= 256)
		return 1;
	/* The batch is built outside the timed call, as llama_decode's probe
	 * sees it. */
	struct llama_batch batch = batch_one(toks, n_prompt);

	sp = span_begin("decode");
	bad += decode(ctx, batch) != 0;
	dec_ns += span_end(sp);
	for (int i = 0; i < n_gen; i++) {
		int32_t tok;

		sp = span_begin("sample");
		tok = sample(smpl, ctx, -1);
		smp_ns += span_end(sp);
		if (!i)
			first_smp = sp->start;
		last_smp = sp->start;
		batch = batch_one(&tok, 1);
		sp = span_begin("decode");
		bad += decode(ctx, batch) != 0;
		dec_ns += span_end(sp);
	}
	printf("n_prompt %d\ntokenize_calls %d\ndecode_calls %d\nsample_calls %d\n", n_prompt,
	       N_TOKENIZE, n_gen + 1, n_gen);
	printf("tokenize_ns %" PRIu64 "\ndecode_ns %" PRIu64 "\nsample_ns %" PRIu64 "\n", tok_ns,
	       dec_ns, smp_ns);
	printf("first_sample_ns %" PRIu64 "\nlast_sample_ns %" PRIu64 "\n", first_smp, last_smp);
	for (int i = 0; i < nspans; i++)
		printf("span %s %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", spans[i].kind,
		       spans[i].start, spans[i].end, spans[i].cpu);
	sampler_free(smpl);
	ctx_free(ctx);
	model_free(model);
	printf("bad %d\ndone\n", bad);
	fflush(stdout);
	return 0;
}
