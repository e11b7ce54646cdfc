// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* GGUF header facts (gguf.h). Layout: "GGUF", u32 version, u64 tensor
 * count, u64 key/value count, the pairs (string key, u32 type, value), then
 * per tensor: name, u32 dims, u64 x dims, u32 ggml type, u64 offset. All
 * little-endian; strings are a u64 length and bytes. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "llama/gguf.h"
#include "util/clock.h"

enum {
	T_U8 = 0,
	T_I8,
	T_U16,
	T_I16,
	T_U32,
	T_I32,
	T_F32,
	T_BOOL,
	T_STR,
	T_ARR,
	T_U64,
	T_I64,
	T_F64,
	T__COUNT
};

static const unsigned scalar_size[T__COUNT] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };

struct rd {
	FILE *f;
	char *err;
	size_t errlen;
	int e;
	const struct gguf_limits *lim;
	uint64_t pos;	/* bytes of the header read or skipped so far */
	unsigned calls; /* reads since the clock was last looked at */
};

static int fail(struct rd *r, int e, const char *fmt, ...)
{
	va_list ap;

	if (r->e)
		return r->e;
	r->e = e;
	if (r->err && r->errlen) {
		va_start(ap, fmt);
		vsnprintf(r->err, r->errlen, fmt, ap);
		va_end(ap);
	}
	return e;
}

/* The budget for n more bytes: the header's size, the file's, the time. */
static int spend(struct rd *r, uint64_t n)
{
	const struct gguf_limits *l = r->lim;

	if (r->e)
		return r->e;
	if (n > l->max_bytes || r->pos > l->max_bytes - n)
		return fail(r, -EFBIG, "header larger than %llu MiB (read no further)",
			    (unsigned long long)(l->max_bytes >> 20));
	if (l->file_size && (n > l->file_size || r->pos > l->file_size - n))
		return fail(r, -EINVAL, "file ends inside the header");
	if (l->deadline_ns && ++r->calls >= 1024) {
		r->calls = 0;
		if (mono_ns() > l->deadline_ns)
			return fail(r, -ETIMEDOUT, "header not read in time (read no further)");
	}
	r->pos += n;
	return 0;
}

static int get(struct rd *r, void *p, size_t n)
{
	if (spend(r, n))
		return r->e;
	if (fread(p, 1, n, r->f) != n)
		return fail(r, ferror(r->f) ? -EIO : -EINVAL, "file ends inside the header");
	return 0;
}

static int skip(struct rd *r, uint64_t n)
{
	unsigned char buf[4096];

	if (r->lim->file_size) {
		/* A regular file of known size: the budget says whether the
		 * bytes are there, a seek passes them. */
		if (spend(r, n))
			return r->e;
		if (fseeko(r->f, (off_t)n, SEEK_CUR))
			return fail(r, -EIO, "cannot seek in the header");
		return 0;
	}
	/* fread, not fseek: a pipe or a short file must fail here, not later. */
	while (n && !r->e) {
		size_t k = n < sizeof(buf) ? (size_t)n : sizeof(buf);

		get(r, buf, k);
		n -= k;
	}
	return r->e;
}

static uint64_t u64(struct rd *r)
{
	unsigned char b[8] = { 0 };
	uint64_t v = 0;

	get(r, b, 8);
	for (int i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

static uint32_t u32(struct rd *r)
{
	unsigned char b[4] = { 0 };

	get(r, b, 4);
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* A string: copied (cut, NUL-ended) to out when out is given, else skipped. */
static int str(struct rd *r, char *out, size_t outlen, uint64_t max)
{
	uint64_t n = u64(r);

	if (r->e)
		return r->e;
	if (n > max)
		return fail(r, -EINVAL, "string of %llu bytes (max %llu)", (unsigned long long)n,
			    (unsigned long long)max);
	if (!out)
		return skip(r, n);
	size_t keep = n < outlen - 1 ? (size_t)n : outlen - 1;
	get(r, out, keep);
	out[keep] = '\0';
	return skip(r, n - keep);
}

/* An integer scalar of type t as u64 (negative values: 0); *ok false for
 * a non-integer type. */
static uint64_t int_val(struct rd *r, uint32_t t, bool *ok)
{
	unsigned char b[8] = { 0 };
	uint64_t v = 0;

	*ok = t < T__COUNT && t != T_F32 && t != T_F64 && scalar_size[t];
	if (t >= T__COUNT || !scalar_size[t])
		return 0;
	get(r, b, scalar_size[t]);
	for (int i = (int)scalar_size[t] - 1; i >= 0; i--)
		v = v << 8 | b[i];
	if ((t == T_I8 && (b[0] & 0x80)) || (t == T_I16 && (b[1] & 0x80)) ||
	    (t == T_I32 && (b[3] & 0x80)) || (t == T_I64 && (b[7] & 0x80)))
		return 0;
	return v;
}

/* Reads or skips one value of type t. Integer scalars and integer arrays
 * (their maximum) go to *num when num is given. */
static int value(struct rd *r, uint32_t t, uint64_t *num, char *s, size_t slen)
{
	bool ok;

	if (t >= T__COUNT)
		return fail(r, -EINVAL, "unknown value type %u", t);
	if (t == T_STR)
		return str(r, s, slen ? slen : 1, GGUF_MAX_STR);
	if (t == T_ARR) {
		uint32_t et = u32(r);
		uint64_t n = u64(r), max = 0;

		if (r->e)
			return r->e;
		if (et >= T__COUNT || et == T_ARR)
			return fail(r, -EINVAL, "array of type %u", et);
		if (n > GGUF_MAX_ARRAY)
			return fail(r, -EINVAL, "array of %llu elements", (unsigned long long)n);
		if (et != T_STR && !num)
			return skip(r, n * scalar_size[et]); /* at most 2^35: no overflow */
		for (uint64_t i = 0; i < n && !r->e; i++) {
			if (et == T_STR) {
				str(r, NULL, 0, GGUF_MAX_STR);
				continue;
			}
			uint64_t v = int_val(r, et, &ok);
			if (ok && v > max)
				max = v;
		}
		if (num && !r->e)
			*num = max;
		return r->e;
	}
	uint64_t v = int_val(r, t, &ok);
	if (num && ok && !r->e)
		*num = v;
	return r->e;
}

/* Where a {arch}.* key's number goes (NULL: not one we keep). */
static uint64_t *arch_key(struct gguf_facts *g, const char *key)
{
	static const struct {
		const char *suffix;
		size_t off;
	} keys[] = {
		{ ".context_length", offsetof(struct gguf_facts, context_length) },
		{ ".block_count", offsetof(struct gguf_facts, block_count) },
		{ ".embedding_length", offsetof(struct gguf_facts, embedding_length) },
		{ ".attention.head_count", offsetof(struct gguf_facts, head_count) },
		{ ".attention.head_count_kv", offsetof(struct gguf_facts, head_count_kv) },
		{ ".attention.key_length", offsetof(struct gguf_facts, key_length) },
		{ ".attention.value_length", offsetof(struct gguf_facts, value_length) },
	};
	size_t al = strlen(g->arch);

	if (!al || strncmp(key, g->arch, al))
		return NULL;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(key + al, keys[i].suffix))
			return (uint64_t *)((char *)g + keys[i].off);
	return NULL;
}

#define GGML_TYPES 64

int gguf_read_facts(FILE *f, struct gguf_facts *out, char *err, size_t errlen)
{
	struct gguf_limits lim = { .max_bytes = GGUF_MAX_HEADER_BYTES };

	return gguf_read_facts_bounded(f, &lim, out, err, errlen);
}

int gguf_read_facts_bounded(FILE *f, const struct gguf_limits *lim, struct gguf_facts *out,
			    char *err, size_t errlen)
{
	struct rd r = { f, err, errlen, 0, lim, 0, 0 };
	unsigned char magic[4];
	uint64_t per_type[GGML_TYPES] = { 0 };
	char key[256];

	memset(out, 0, sizeof(*out));
	out->file_type = -1;
	out->main_type = -1;
	if (get(&r, magic, 4) || memcmp(magic, "GGUF", 4))
		return fail(&r, -EINVAL, "not a GGUF file (magic)");
	out->version = u32(&r);
	if (!r.e && out->version == 1)
		return fail(&r, -ENOTSUP, "GGUF version 1 (32-bit counts) not read");
	if (!r.e && (out->version < 2 || out->version > 3))
		return fail(&r, -EINVAL, "GGUF version %u", out->version);
	out->n_tensors = u64(&r);
	out->n_kv = u64(&r);
	if (r.e)
		return r.e;
	if (out->n_kv > GGUF_MAX_KV || out->n_tensors > GGUF_MAX_TENSORS)
		return fail(&r, -EINVAL, "%llu keys, %llu tensors: beyond the bounds",
			    (unsigned long long)out->n_kv, (unsigned long long)out->n_tensors);
	for (uint64_t i = 0; i < out->n_kv && !r.e; i++) {
		uint64_t num = UINT64_MAX, *dst;
		uint32_t t;

		if (str(&r, key, sizeof(key), 65535))
			break;
		t = u32(&r);
		if (r.e)
			break;
		/* general.architecture comes first in every writer we know;
		 * {arch}.* keys before it are not recognised. */
		if (!strcmp(key, "general.architecture") && t == T_STR) {
			value(&r, t, NULL, out->arch, sizeof(out->arch));
		} else if (!strcmp(key, "general.name") && t == T_STR) {
			value(&r, t, NULL, out->name, sizeof(out->name));
		} else if (!strcmp(key, "general.file_type")) {
			value(&r, t, &num, NULL, 0);
			if (num != UINT64_MAX && num < 1024)
				out->file_type = (int64_t)num;
		} else if ((dst = arch_key(out, key))) {
			value(&r, t, &num, NULL, 0);
			if (num != UINT64_MAX)
				*dst = num;
		} else {
			value(&r, t, NULL, NULL, 0);
		}
	}
	for (uint64_t i = 0; i < out->n_tensors && !r.e; i++) {
		uint64_t n = 1;
		uint32_t nd, type;

		str(&r, NULL, 0, 65535);
		nd = u32(&r);
		if (!r.e && (nd == 0 || nd > 8))
			return fail(&r, -EINVAL, "tensor %llu has %u dimensions",
				    (unsigned long long)i, nd);
		for (uint32_t d = 0; d < nd && !r.e; d++) {
			uint64_t dim = u64(&r);

			n = dim && n > UINT64_MAX / dim ? UINT64_MAX : n * dim;
		}
		type = u32(&r);
		(void)u64(&r); /* data offset */
		if (r.e)
			break;
		if (type < GGML_TYPES)
			per_type[type] = per_type[type] > UINT64_MAX - n ? UINT64_MAX
									 : per_type[type] + n;
		out->n_elements = out->n_elements > UINT64_MAX - n ? UINT64_MAX
								   : out->n_elements + n;
	}
	if (r.e)
		return r.e;
	for (int t = 0; t < GGML_TYPES; t++)
		if (per_type[t] && (out->main_type < 0 || per_type[t] > per_type[out->main_type]))
			out->main_type = t;
	return 0;
}

const char *gguf_ftype_name(int64_t ft)
{
	/* enum llama_ftype (llama.h); 4-6, 33-35 were removed upstream. */
	static const char *const names[] = {
		[0] = "F32",	    [1] = "F16",     [2] = "Q4_0",    [3] = "Q4_1",
		[7] = "Q8_0",	    [8] = "Q5_0",    [9] = "Q5_1",    [10] = "Q2_K",
		[11] = "Q3_K_S",    [12] = "Q3_K_M", [13] = "Q3_K_L", [14] = "Q4_K_S",
		[15] = "Q4_K_M",    [16] = "Q5_K_S", [17] = "Q5_K_M", [18] = "Q6_K",
		[19] = "IQ2_XXS",   [20] = "IQ2_XS", [21] = "Q2_K_S", [22] = "IQ3_XS",
		[23] = "IQ3_XXS",   [24] = "IQ1_S",  [25] = "IQ4_NL", [26] = "IQ3_S",
		[27] = "IQ3_M",	    [28] = "IQ2_S",  [29] = "IQ2_M",  [30] = "IQ4_XS",
		[31] = "IQ1_M",	    [32] = "BF16",   [36] = "TQ1_0",  [37] = "TQ2_0",
		[38] = "MXFP4_MOE",
	};

	if (ft < 0 || ft >= (int64_t)(sizeof(names) / sizeof(names[0])))
		return NULL;
	return names[ft];
}

static const struct {
	const char *name;
	double bytes; /* per element, block overhead included */
} ggml_types[] = {
	[0] = { "F32", 4 },
	[1] = { "F16", 2 },
	[2] = { "Q4_0", 18.0 / 32 },
	[3] = { "Q4_1", 20.0 / 32 },
	[6] = { "Q5_0", 22.0 / 32 },
	[7] = { "Q5_1", 24.0 / 32 },
	[8] = { "Q8_0", 34.0 / 32 },
	[9] = { "Q8_1", 36.0 / 32 },
	[10] = { "Q2_K", 0 },
	[11] = { "Q3_K", 0 },
	[12] = { "Q4_K", 0 },
	[13] = { "Q5_K", 0 },
	[14] = { "Q6_K", 0 },
	[15] = { "Q8_K", 0 },
	[16] = { "IQ2_XXS", 0 },
	[17] = { "IQ2_XS", 0 },
	[18] = { "IQ3_XXS", 0 },
	[19] = { "IQ1_S", 0 },
	[20] = { "IQ4_NL", 18.0 / 32 },
	[21] = { "IQ3_S", 0 },
	[22] = { "IQ2_S", 0 },
	[23] = { "IQ4_XS", 0 },
	[24] = { "I8", 1 },
	[25] = { "I16", 2 },
	[26] = { "I32", 4 },
	[27] = { "I64", 8 },
	[28] = { "F64", 8 },
	[29] = { "IQ1_M", 0 },
	[30] = { "BF16", 2 },
	[34] = { "TQ1_0", 0 },
	[35] = { "TQ2_0", 0 },
	[39] = { "MXFP4", 0 },
};

const char *gguf_type_name(int64_t t)
{
	if (t < 0 || t >= (int64_t)(sizeof(ggml_types) / sizeof(ggml_types[0])))
		return NULL;
	return ggml_types[t].name;
}

double gguf_type_bytes(int64_t t)
{
	if (t < 0 || t >= (int64_t)(sizeof(ggml_types) / sizeof(ggml_types[0])))
		return 0;
	return ggml_types[t].bytes;
}

uint64_t gguf_kv_bytes_per_token(const struct gguf_facts *g, int64_t type_k, int64_t type_v)
{
	double bk = gguf_type_bytes(type_k), bv = gguf_type_bytes(type_v);
	uint64_t hk = g->head_count_kv ? g->head_count_kv : g->head_count;
	uint64_t dk = g->key_length, dv = g->value_length;

	if (!dk && g->head_count)
		dk = g->embedding_length / g->head_count;
	if (!dv && g->head_count)
		dv = g->embedding_length / g->head_count;
	if (!g->block_count || !hk || !dk || !dv || bk <= 0 || bv <= 0 ||
	    g->block_count > (1u << 16) || hk > (1u << 16) || dk > (1u << 20) || dv > (1u << 20))
		return 0;
	return (uint64_t)((double)g->block_count * (double)hk *
				  ((double)dk * bk + (double)dv * bv) +
			  0.5);
}
