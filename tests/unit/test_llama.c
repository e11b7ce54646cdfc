// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* user/llama/: the GGUF header parser on good and hostile input, the
 * parameter layouts' decoding, and the findings built from report.json
 * "llama". */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "events/probes.h"
#include "llama/gguf.h"
#include "llama/llama_facts.h"
#include "llama/llama_findings.h"
#include "llama/llama_layout.h"

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static void put(struct buf *b, const void *d, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void u32(struct buf *b, uint32_t v)
{
	put(b, &v, 4); /* the test hosts are little-endian, like GGUF */
}

static void u64(struct buf *b, uint64_t v)
{
	put(b, &v, 8);
}

static void str(struct buf *b, const char *s)
{
	u64(b, strlen(s));
	put(b, s, strlen(s));
}

static void kv_u32(struct buf *b, const char *k, uint32_t v)
{
	str(b, k);
	u32(b, 4);
	u32(b, v);
}

static void kv_str(struct buf *b, const char *k, const char *v)
{
	str(b, k);
	u32(b, 8);
	str(b, v);
}

static void tensor(struct buf *b, const char *name, uint64_t d0, uint64_t d1, uint32_t type)
{
	str(b, name);
	u32(b, 2);
	u64(b, d0);
	u64(b, d1);
	u32(b, type);
	u64(b, 0);
}

/* A 2-layer model: 8 heads of 16, 2 KV heads given per layer (array), a
 * 3-token vocabulary, Q4_K_M, weights mostly Q4_K. */
static struct buf good_file(void)
{
	struct buf b = { 0 };

	put(&b, "GGUF", 4);
	u32(&b, 3);
	u64(&b, 3); /* tensors */
	u64(&b, 9); /* keys */
	kv_str(&b, "general.architecture", "llama");
	kv_str(&b, "general.name", "unit model");
	kv_u32(&b, "general.file_type", 15);
	kv_u32(&b, "llama.context_length", 4096);
	kv_u32(&b, "llama.block_count", 2);
	kv_u32(&b, "llama.embedding_length", 128);
	kv_u32(&b, "llama.attention.head_count", 8);
	str(&b, "llama.attention.head_count_kv"); /* per layer: the largest counts */
	u32(&b, 9);
	u32(&b, 5);
	u64(&b, 2);
	u32(&b, 1);
	u32(&b, 2);
	str(&b, "tokenizer.ggml.tokens");
	u32(&b, 9);
	u32(&b, 8);
	u64(&b, 3);
	str(&b, "a");
	str(&b, "bb");
	str(&b, "ccc");
	tensor(&b, "token_embd.weight", 128, 3, 14 /* Q6_K */);
	tensor(&b, "blk.0.attn_q.weight", 128, 128, 12 /* Q4_K */);
	tensor(&b, "output_norm.weight", 128, 1, 0 /* F32 */);
	return b;
}

static int parse(const uint8_t *p, size_t n, struct gguf_facts *g, char *err, size_t errlen)
{
	FILE *f = fmemopen((void *)p, n ? n : 1, "rb");
	int e;

	if (!f)
		return -ENOMEM;
	if (!n) { /* fmemopen refuses size 0: an empty stream */
		fgetc(f);
	}
	e = gguf_read_facts(f, g, err, errlen);
	fclose(f);
	return e;
}

static void test_good(void)
{
	struct buf b = good_file();
	struct gguf_facts g;
	char err[256] = "";

	CHECK_INT_EQ(parse(b.p, b.n, &g, err, sizeof(err)), 0);
	CHECK_STR_EQ(g.arch, "llama");
	CHECK_STR_EQ(g.name, "unit model");
	CHECK_INT_EQ(g.version, 3);
	CHECK_INT_EQ(g.file_type, 15);
	CHECK_STR_EQ(gguf_ftype_name(g.file_type), "Q4_K_M");
	CHECK_INT_EQ(g.context_length, 4096);
	CHECK_INT_EQ(g.block_count, 2);
	CHECK_INT_EQ(g.embedding_length, 128);
	CHECK_INT_EQ(g.head_count, 8);
	CHECK_INT_EQ(g.head_count_kv, 2);
	CHECK_INT_EQ(g.main_type, 12);
	CHECK_STR_EQ(gguf_type_name(g.main_type), "Q4_K");
	CHECK_INT_EQ(g.n_elements, 128 * 3 + 128 * 128 + 128);
	/* 2 layers x 2 KV heads x (16 + 16) x 2 bytes (F16) */
	CHECK_INT_EQ(gguf_kv_bytes_per_token(&g, 1, 1), 2 * 2 * 32 * 2);
	CHECK_INT_EQ(gguf_kv_bytes_per_token(&g, 0, 0), 2 * 2 * 32 * 4);
	CHECK_INT_EQ(gguf_kv_bytes_per_token(&g, 12, 12), 0); /* no per-element size */
	/* Every cut of a good file is an error, never a crash or a success. */
	for (size_t n = 0; n < b.n; n++)
		CHECK(parse(b.p, n, &g, err, sizeof(err)) < 0);
	free(b.p);
}

static void expect_bad(const struct buf *b, int want, const char *what)
{
	struct gguf_facts g;
	char err[256] = "";
	int e = parse(b->p, b->n, &g, err, sizeof(err));

	if (e != want)
		fprintf(stderr, "%s: got %d (%s), want %d\n", what, e, err, want);
	CHECK_INT_EQ(e, want);
	CHECK(err[0] != '\0');
}

static struct buf header(uint32_t version, uint64_t nt, uint64_t nkv)
{
	struct buf b = { 0 };

	put(&b, "GGUF", 4);
	u32(&b, version);
	u64(&b, nt);
	u64(&b, nkv);
	return b;
}

static void test_bad(void)
{
	struct buf b = { 0 };

	put(&b, "GGML\3\0\0\0", 8);
	expect_bad(&b, -EINVAL, "magic");
	free(b.p);
	b = header(1, 0, 0);
	expect_bad(&b, -ENOTSUP, "version 1");
	free(b.p);
	b = header(9, 0, 0);
	expect_bad(&b, -EINVAL, "version 9");
	free(b.p);
	b = header(3, 0, (uint64_t)GGUF_MAX_KV + 1);
	expect_bad(&b, -EINVAL, "too many keys");
	free(b.p);
	b = header(3, (uint64_t)GGUF_MAX_TENSORS + 1, 0);
	expect_bad(&b, -EINVAL, "too many tensors");
	free(b.p);
	b = header(3, 0, 1);
	u64(&b, UINT64_MAX); /* key length */
	expect_bad(&b, -EINVAL, "key length");
	free(b.p);
	b = header(3, 0, 1);
	str(&b, "general.name");
	u32(&b, 8);
	u64(&b, (uint64_t)GGUF_MAX_STR + 1);
	expect_bad(&b, -EINVAL, "string length");
	free(b.p);
	b = header(3, 0, 1);
	str(&b, "x");
	u32(&b, 13);
	expect_bad(&b, -EINVAL, "value type");
	free(b.p);
	b = header(3, 0, 1);
	str(&b, "x");
	u32(&b, 9);
	u32(&b, 9); /* array of arrays */
	u64(&b, 1);
	expect_bad(&b, -EINVAL, "nested array");
	free(b.p);
	b = header(3, 0, 1);
	str(&b, "x");
	u32(&b, 9);
	u32(&b, 4);
	u64(&b, (uint64_t)1 << 40);
	expect_bad(&b, -EINVAL, "array length");
	free(b.p);
	b = header(3, 0, 1);
	str(&b, "x");
	u32(&b, 9);
	u32(&b, 4);
	u64(&b, 1000); /* declares 4000 bytes, has none */
	expect_bad(&b, -EINVAL, "array past the end");
	free(b.p);
	for (uint32_t nd = 0; nd <= 9; nd += 9) {
		b = header(3, 1, 0);
		str(&b, "t");
		u32(&b, nd);
		for (uint32_t d = 0; d < nd; d++)
			u64(&b, 1);
		u32(&b, 0);
		u64(&b, 0);
		expect_bad(&b, -EINVAL, "tensor dimensions");
		free(b.p);
	}
	/* A dimension product overflowing 64 bits saturates. */
	{
		struct gguf_facts g;
		char err[128];

		b = header(3, 1, 0);
		str(&b, "t");
		u32(&b, 2);
		u64(&b, UINT64_MAX);
		u64(&b, 3);
		u32(&b, 0);
		u64(&b, 0);
		CHECK_INT_EQ(parse(b.p, b.n, &g, err, sizeof(err)), 0);
		CHECK(g.n_elements == UINT64_MAX);
		free(b.p);
	}
	/* Keys of another architecture, wrong types: ignored, not misread. */
	{
		struct gguf_facts g;
		char err[128];

		b = header(3, 0, 4);
		kv_str(&b, "general.architecture", "qwen2");
		kv_u32(&b, "llama.context_length", 99);
		kv_str(&b, "qwen2.block_count", "12");
		str(&b, "qwen2.context_length");
		u32(&b, 5);
		u32(&b, 0xffffffffu); /* I32 -1 */
		CHECK_INT_EQ(parse(b.p, b.n, &g, err, sizeof(err)), 0);
		CHECK_INT_EQ(g.context_length, 0);
		CHECK_INT_EQ(g.block_count, 0);
		CHECK_INT_EQ(gguf_kv_bytes_per_token(&g, 1, 1), 0);
		free(b.p);
	}
}

static void test_layout(void)
{
	const struct llama_layout *l = llama_layout_find("0.5.0-dev");
	uint8_t blob[256] = { 0 };
	struct llama_ctx_params p;
	uint32_t v[] = { 4096, 512, 128, 1, 0, 0, 1, 6, 8 };
	int32_t ngl = 99;

	CHECK(llama_layout_find("0.0.0-unknown") == NULL);
	CHECK(llama_layout_find(NULL) == NULL);
	if (!l) {
		CHECK(l != NULL);
		return;
	}
	memcpy(blob, v, sizeof(v));
	CHECK(llama_ctx_decode(l, blob, sizeof(blob), &p));
	CHECK_INT_EQ(p.n_ctx, 4096);
	CHECK_INT_EQ(p.n_batch, 512);
	CHECK_INT_EQ(p.n_ubatch, 128);
	CHECK_INT_EQ(p.n_seq_max, 1);
	CHECK_INT_EQ(p.n_threads, 6);
	CHECK_INT_EQ(p.n_threads_batch, 8);
	CHECK(!llama_ctx_decode(l, blob, l->ctx_size - 1, &p)); /* short copy */
	blob[0x1c] = 0;						/* n_threads 0: another layout */
	CHECK(!llama_ctx_decode(l, blob, sizeof(blob), &p));
	memset(blob, 0, sizeof(blob));
	memcpy(blob + l->n_gpu_layers, &ngl, 4);
	CHECK(llama_model_decode(l, blob, sizeof(blob), &ngl) && ngl == 99);
	ngl = -5;
	memcpy(blob + l->n_gpu_layers, &ngl, 4);
	CHECK(!llama_model_decode(l, blob, sizeof(blob), &ngl));
	CHECK_INT_EQ(llama_ctx_suggest(0), 256);
	CHECK_INT_EQ(llama_ctx_suggest(65), 256);
	CHECK_INT_EQ(llama_ctx_suggest(600), 768); /* 750 -> 768 */
	CHECK_INT_EQ(llama_ctx_suggest(1000), 1280);
}

static const struct finding *find(const struct findings *f, const char *rule)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].rule, rule))
			return &f->v[i];
	return NULL;
}

static void test_findings(void)
{
	/* 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes = 128 KiB/token. */
	const char *js =
		"{\"llama\":{\"max_prompt_tokens\":600,\"tokenize_calls\":12,"
		"\"models\":[{\"pid\":7,\"n_gpu_layers\":0,\"gguf\":{\"quantization\":\"F16\","
		"\"main_tensor_type\":\"F16\",\"n_elements\":8e9}}],"
		"\"contexts\":[{\"pid\":7,\"n_ctx\":4096,\"n_batch\":512,\"n_ubatch\":512,"
		"\"n_threads\":8,\"n_threads_batch\":8,\"n_ctx_train\":8192,"
		"\"kv_bytes_per_token_f16\":131072}]},"
		"\"probes\":{\"tokens\":{\"count\":5000}}}";
	cJSON *root = cJSON_Parse(js);
	struct cycle_row rows[3] = { 0 };
	struct cycle_table t = { rows, 3, false, 0, 0 };
	struct findings f = { 0 };
	const struct finding *x;

	rows[0].tokens = 90;
	rows[1].tokens = 100;
	rows[2].tokens = 4000;
	rows[2].partial = true; /* cut by the run's end: not a cycle's count */
	f.v = calloc(1, sizeof(*f.v));
	f.n = 1;
	f.v[0] = (struct finding){ "inference_dominates",
				   FIND_WARNING,
				   strdup("t"),
				   strdup("e"),
				   strdup("Use a smaller context."),
				   0.9,
				   0.6,
				   NULL,
				   0 };
	CHECK_INT_EQ(llama_findings_from_report(root, &t, 4, &f), 0);
	x = find(&f, "llama_ctx_oversized");
	CHECK(x != NULL);
	if (x) {
		CHECK_STR_EQ(x->title, "n_ctx is 4096 while prompts never exceed 600 tokens");
		/* need 700 -> 875 -> 1024; KV 512 MiB -> 128 MiB */
		CHECK(strstr(x->recommendation, "Set n_ctx to 1024 ") != NULL);
		CHECK(strstr(x->recommendation, "from 512.0 MiB to 128.0 MiB, saving ~384.0 MiB") !=
		      NULL);
		CHECK(strstr(x->evidence, "at most 100 tokens generated per cycle") != NULL);
		CHECK_INT_EQ(x->severity, FIND_WARNING);
	}
	x = find(&f, "llama_threads_oversubscribed");
	CHECK(x != NULL);
	if (x)
		CHECK(strstr(x->recommendation, "at most 4 ") != NULL);
	CHECK(find(&f, "llama_ctx_over_train") == NULL);
	x = find(&f, "llama_batch_small"); /* 600 > 512: two decodes */
	CHECK(x != NULL);
	if (x)
		CHECK(strstr(x->evidence, "at least 2 llama_decode calls per prompt") != NULL);
	x = find(&f, "inference_dominates");
	CHECK(x != NULL);
	if (x)
		CHECK(strstr(x->recommendation,
			     "In this run: n_ctx 4096, n_batch 512, n_threads 8, "
			     "n_gpu_layers 0; model weights F16, mostly F16 "
			     "(8000 M elements): unquantized") != NULL);
	findings_free(&f);
	/* No cycles: the run's tokens bound what one sequence needs. */
	memset(&f, 0, sizeof(f));
	t.whole_run = true;
	CHECK_INT_EQ(llama_findings_from_report(root, &t, 16, &f), 0);
	x = find(&f, "llama_ctx_oversized");
	CHECK(x == NULL); /* 600 + 5000 needs the 4096 and more */
	CHECK(find(&f, "llama_threads_oversubscribed") == NULL);
	findings_free(&f);
	cJSON_Delete(root);
	/* No set-up seen (attached later): the advice says what to check. */
	root = cJSON_Parse("{\"probes\":{}}");
	memset(&f, 0, sizeof(f));
	f.v = calloc(1, sizeof(*f.v));
	f.n = 1;
	f.v[0] = (struct finding){ "inference_dominates",
				   FIND_WARNING,
				   strdup("t"),
				   strdup("e"),
				   strdup("Use a smaller context."),
				   0.9,
				   0.6,
				   NULL,
				   0 };
	CHECK_INT_EQ(llama_findings_from_report(root, &t, 4, &f), 0);
	CHECK_INT_EQ(f.n, 1);
	CHECK(strstr(f.v[0].recommendation, "were not read: the model and context were set up "
					    "before ebpf-prof attached") != NULL);
	findings_free(&f);
	cJSON_Delete(root);
}

/* llama_facts from synthetic events: a model (path of a GGUF file written
 * here), two copies of one context's parameters (llama_new_context_with_model
 * forwarding to llama_init_from_model: one context), a later
 * llama_set_n_threads, then report.json "llama". */
static void test_facts(void)
{
	struct llama_facts *lf = llama_facts_new("/proc");
	struct ep_llama_args a;
	struct buf b = good_file();
	char path[] = "/tmp/ep-test-llama-XXXXXX";
	int fd = mkstemp(path);
	uint32_t v[9] = { 4096, 512, 128, 1, 0, 0, 1, 6, 8 };
	int32_t thr[2] = { 2, 3 }, ngl = 7;
	cJSON *root = cJSON_CreateObject(), *c, *m;

	CHECK(lf != NULL && fd >= 0);
	if (!lf || fd < 0)
		return;
	CHECK((size_t)write(fd, b.p, b.n) == b.n);
	close(fd);
	CHECK_INT_EQ(llama_facts_set_probe(lf, 1, "0.5.0-dev"), 0);
	CHECK_INT_EQ(llama_facts_set_probe(lf, 2, "0.5.0-dev"), 0);
	CHECK_INT_EQ(llama_facts_set_probe(lf, 3, "0.5.0-dev"), 0);
	memset(&a, 0, sizeof(a));
	a.hdr.type = EP_EV_LLAMA_ARGS;
	a.hdr.pid = a.hdr.tid = (uint32_t)getpid(); /* read with our own credentials */
	a.probe_id = 1;
	a.kind = EP_PK_LLAMA_MODEL;
	a.blob_len = sizeof(a.blob);
	memcpy(a.blob + 0x10, &ngl, 4);
	snprintf(a.path, sizeof(a.path), "%s", path);
	a.path_len = (int32_t)strlen(path) + 1;
	CHECK_INT_EQ(llama_facts_add(lf, &a, sizeof(a)), 0);
	memset(a.blob, 0, sizeof(a.blob));
	memcpy(a.blob, v, sizeof(v));
	a.kind = EP_PK_LLAMA_CTX;
	a.path[0] = '\0';
	a.path_len = 0;
	a.probe_id = 2;
	CHECK_INT_EQ(llama_facts_add(lf, &a, sizeof(a)), 0);
	a.probe_id = 3; /* the same parameters through the other name */
	CHECK_INT_EQ(llama_facts_add(lf, &a, sizeof(a)), 0);
	memset(a.blob, 0, sizeof(a.blob));
	memcpy(a.blob, thr, sizeof(thr));
	a.kind = EP_PK_LLAMA_THREADS;
	a.blob_len = sizeof(thr);
	CHECK_INT_EQ(llama_facts_add(lf, &a, sizeof(a)), 0);
	CHECK_INT_EQ(llama_facts_add(lf, &a, sizeof(a) - 1), -EINVAL); /* short */
	a.kind = 77;
	CHECK_INT_EQ(llama_facts_add(lf, &a, sizeof(a)), -EINVAL);
	CHECK_INT_EQ(llama_facts_report_json(lf, root, 600, 12), 0);
	c = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "llama"), "contexts"),
			       0);
	m = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "llama"), "models"),
			       0);
	CHECK_INT_EQ(cJSON_GetArraySize(
			     cJSON_GetObjectItem(cJSON_GetObjectItem(root, "llama"), "contexts")),
		     1);
	CHECK_INT_EQ(cJSON_GetObjectItem(c, "n_ctx")->valuedouble, 4096);
	CHECK_INT_EQ(cJSON_GetObjectItem(c, "n_threads")->valuedouble, 2);
	CHECK_INT_EQ(cJSON_GetObjectItem(c, "n_threads_batch")->valuedouble, 3);
	CHECK_INT_EQ(cJSON_GetObjectItem(c, "n_threads_init")->valuedouble, 6);
	/* 2 layers x 2 KV heads x 32 x 2 B = 256 B per token, x 4096 */
	CHECK_INT_EQ(cJSON_GetObjectItem(c, "kv_cache_bytes_f16")->valuedouble, 256 * 4096);
	CHECK_INT_EQ(cJSON_GetObjectItem(m, "n_gpu_layers")->valuedouble, 7);
	CHECK_STR_EQ(
		cJSON_GetObjectItem(cJSON_GetObjectItem(m, "gguf"), "quantization")->valuestring,
		"Q4_K_M");
	CHECK_INT_EQ(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "llama"), "max_prompt_tokens")
			     ->valuedouble,
		     600);
	cJSON_Delete(root);
	/* An unknown build: a problem line, no numbers. */
	root = cJSON_CreateObject();
	CHECK_INT_EQ(llama_facts_set_probe(lf, 2, "9.9.9-other"), 0);
	CHECK_INT_EQ(llama_facts_report_json(lf, root, 0, 0), 0);
	c = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "llama"), "contexts"),
			       0);
	CHECK(cJSON_GetObjectItem(c, "n_ctx") == NULL);
	CHECK(cJSON_GetArraySize(
		      cJSON_GetObjectItem(cJSON_GetObjectItem(root, "llama"), "problems")) >= 1);
	cJSON_Delete(root);
	unlink(path);
	free(b.p);
	llama_facts_free(lf);
}

static int parse_bounded(const struct buf *b, const struct gguf_limits *lim, char *err,
			 size_t errlen)
{
	struct gguf_facts g;
	FILE *f = fmemopen(b->p, b->n, "rb");
	int e;

	if (!f)
		return -ENOMEM;
	e = gguf_read_facts_bounded(f, lim, &g, err, errlen);
	fclose(f);
	return e;
}

/* The byte and time budgets: a header declaring 2^32-element arrays (a
 * sparse file of 64 GiB) fails at once instead of reading 32 GiB; a file
 * shorter than what the header declares fails where it ends; a deadline
 * passed stops the read. */
static void test_budgets(void)
{
	struct buf good = good_file(), huge = header(3, 0, 2);
	struct gguf_limits lim = { .max_bytes = GGUF_MAX_HEADER_BYTES };
	char err[256] = "";
	struct timespec t0, t1;

	/* Two u64 arrays of 2^32 elements, then nothing: the file's size
	 * (as from fstat) says 64 GiB. */
	str(&huge, "a.first");
	u32(&huge, 9);
	u32(&huge, 10);
	u64(&huge, 1ull << 32);
	lim.file_size = 64ull << 30;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK_INT_EQ(parse_bounded(&huge, &lim, err, sizeof(err)), -EFBIG);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(strstr(err, "MiB") != NULL);
	CHECK((t1.tv_sec - t0.tv_sec) * 1000000000l + (t1.tv_nsec - t0.tv_nsec) < 100000000l);
	/* Within a budget that holds it: the same good facts as unbounded. */
	lim.file_size = good.n;
	CHECK_INT_EQ(parse_bounded(&good, &lim, err, sizeof(err)), 0);
	/* One byte short of the header, by the file size. */
	lim.file_size = good.n - 1;
	CHECK_INT_EQ(parse_bounded(&good, &lim, err, sizeof(err)), -EINVAL);
	/* A byte budget smaller than the header. */
	lim.file_size = good.n;
	lim.max_bytes = good.n - 1;
	CHECK_INT_EQ(parse_bounded(&good, &lim, err, sizeof(err)), -EFBIG);
	/* A deadline already passed: checked every 1024 reads, so a header of
	 * many small values stops there. */
	{
		struct buf many = header(3, 0, 1);

		str(&many, "tokenizer.ggml.tokens");
		u32(&many, 9);
		u32(&many, 8);
		u64(&many, 4096);
		for (int i = 0; i < 4096; i++)
			str(&many, "t");
		lim.max_bytes = GGUF_MAX_HEADER_BYTES;
		lim.file_size = many.n;
		lim.deadline_ns = 1; /* long past */
		CHECK_INT_EQ(parse_bounded(&many, &lim, err, sizeof(err)), -ETIMEDOUT);
		lim.deadline_ns = 0;
		CHECK_INT_EQ(parse_bounded(&many, &lim, err, sizeof(err)), 0);
		free(many.p);
	}
	free(good.p);
	free(huge.p);
}

/* A model load event of a process that no longer exists. */
static void gone_model_event(struct ep_llama_args *a, const char *path)
{
	memset(a, 0, sizeof(*a));
	a->hdr.type = EP_EV_LLAMA_ARGS;
	a->hdr.pid = a->hdr.tid = 999999999; /* no such process */
	a->probe_id = 1;
	a->kind = EP_PK_LLAMA_MODEL;
	a->blob_len = sizeof(a->blob);
	snprintf(a->path, sizeof(a->path), "%s", path);
	a->path_len = (int32_t)strlen(a->path) + 1;
}

/* A model named by a process whose credentials were never read (gone
 * before its event was handled): not read, said so. */
static void test_facts_unknown_process(void)
{
	struct llama_facts *lf = llama_facts_new("/proc");
	struct ep_llama_args a;
	cJSON *root = cJSON_CreateObject(), *probs;
	char *text;

	CHECK(lf != NULL);
	if (!lf)
		return;
	gone_model_event(&a, "/etc/hostname");
	CHECK_INT_EQ(llama_facts_add(lf, &a, sizeof(a)), 0);
	CHECK_INT_EQ(llama_facts_report_json(lf, root, 0, 0), 0);
	probs = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "llama"), "problems");
	text = cJSON_PrintUnformatted(probs);
	CHECK(text && strstr(text, "credentials are unknown"));
	free(text);
	cJSON_Delete(root);
	llama_facts_free(lf);
}

/* A model named by a process gone before its event was handled, with the
 * credentials and root the kernel gave at the call: read with those. */
static void test_facts_gone_with_creds(void)
{
	struct buf b = good_file();
	char path[] = "/tmp/ep-test-llama-gone-XXXXXX";
	int fd = mkstemp(path);
	struct stat root;
	struct {
		uint32_t uid, gid;
		bool same_root;
		const char *want; /* in problems; NULL: the file was read */
	} cases[] = {
		{ (uint32_t)geteuid(), (uint32_t)getegid(), true, NULL },
		/* Not ours at the call: its rights, not ours, decide (the file
		 * is 0600 and ours; needs root to take another identity). */
		{ 65534, 65534, true, "may not read it" },
		/* Another root: its paths do not name our files. */
		{ (uint32_t)geteuid(), (uint32_t)getegid(), false, "root directory was not ours" },
	};

	CHECK(fd >= 0 && stat("/", &root) == 0);
	if (fd < 0)
		return;
	CHECK((size_t)write(fd, b.p, b.n) == b.n);
	close(fd);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct llama_facts *lf = llama_facts_new("/proc");
		struct ep_llama_args a;
		cJSON *root_json = cJSON_CreateObject(), *l, *probs, *m;
		char *text;
		uint32_t groups[1] = { cases[i].gid };

		if (i == 1 && geteuid() != 0) {
			printf("skip: taking another identity needs root\n");
			cJSON_Delete(root_json);
			llama_facts_free(lf);
			continue;
		}
		CHECK(lf != NULL);
		if (!lf)
			break;
		gone_model_event(&a, path);
		a.cred.flags = EP_CRED_F_OK | EP_CRED_F_ROOT;
		a.cred.fsuid = cases[i].uid;
		a.cred.fsgid = cases[i].gid;
		a.cred.ngroups = 1;
		memcpy(a.cred.groups, groups, sizeof(groups));
		a.cred.root_dev = (uint32_t)(major(root.st_dev) << 20 | minor(root.st_dev));
		a.cred.root_ino = (uint64_t)root.st_ino + (cases[i].same_root ? 0 : 1);
		CHECK_INT_EQ(llama_facts_add(lf, &a, sizeof(a)), 0);
		CHECK_INT_EQ(llama_facts_report_json(lf, root_json, 0, 0), 0);
		l = cJSON_GetObjectItem(root_json, "llama");
		probs = cJSON_GetObjectItem(l, "problems");
		text = probs ? cJSON_PrintUnformatted(probs) : NULL;
		m = cJSON_GetArrayItem(cJSON_GetObjectItem(l, "models"), 0);
		if (!cases[i].want) {
			CHECK(!text || !strstr(text, path));
			CHECK(cJSON_GetObjectItem(m, "gguf") != NULL);
		} else {
			CHECK(text && strstr(text, cases[i].want));
			CHECK(cJSON_GetObjectItem(m, "gguf") == NULL);
		}
		if (text && (cases[i].want ? !strstr(text, cases[i].want) : !!strstr(text, path)))
			printf("case %zu: problems %s\n", i, text);
		free(text);
		cJSON_Delete(root_json);
		llama_facts_free(lf);
	}
	unlink(path);
	free(b.p);
}

int main(void)
{
	test_good();
	test_bad();
	test_budgets();
	test_facts_unknown_process();
	test_facts_gone_with_creds();
	test_layout();
	test_findings();
	test_facts();
	return check_report("test_llama");
}
