// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* What to probe: the llama.cpp and SQLite presets and --probe strings. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/probes.h"

/* Presets name no library: the symbols are looked up in every mapped file,
 * which covers versioned sonames, per-ISA ggml CPU variants, static links
 * and extension modules alike. */
static const struct probe_def preset_defs[] = {
	{ PG_LLAMA, NULL, "llama_model_load_from_file", NULL, NULL, EP_PK_LLAMA_MODEL,
	  EP_PM_LATENCY, 0, PE_NULL, NULL },
	/* The context's parameters (n_ctx, n_batch, n_threads: the llama
	 * recommendations, user/llama/; the second is the older name) and
	 * later thread counts. Counted, not timed: their parameters are read
	 * at entry, and each uprobe costs ~3 RCU grace periods to detach at
	 * the end of the run, a return probe as much again (docs/probes.md). */
	{ PG_LLAMA, NULL, "llama_init_from_model", NULL, NULL, EP_PK_LLAMA_CTX, EP_PM_COUNT, 0,
	  PE_NULL, NULL },
	{ PG_LLAMA, NULL, "llama_new_context_with_model", NULL, NULL, EP_PK_LLAMA_CTX, EP_PM_COUNT,
	  0, PE_NULL, NULL },
	{ PG_LLAMA, NULL, "llama_set_n_threads", NULL, NULL, EP_PK_LLAMA_THREADS, EP_PM_COUNT, 0,
	  PE_NONE, NULL },
	{ PG_LLAMA, NULL, "llama_tokenize", NULL, NULL, EP_PK_PLAIN, EP_PM_LATENCY, PROBE_F_PROMPT,
	  PE_NEGATIVE, NULL },
	/* Its batch (token count, positions) is read at entry: prompts,
	 * generated tokens and the KV-cache fill (llama/llm_track.h). */
	{ PG_LLAMA, NULL, "llama_decode", NULL, NULL, EP_PK_LLAMA_DECODE, EP_PM_LATENCY, 0,
	  PE_NONZERO, NULL },
	/* KV-cache clears, by their names across releases (a build has one
	 * of them): a prompt starts again at position 0. */
	{ PG_LLAMA, NULL, "llama_memory_clear", NULL, NULL, EP_PK_PLAIN, EP_PM_LATENCY,
	  PROBE_F_KV_CLEAR, PE_NONE, NULL },
	{ PG_LLAMA, NULL, "llama_kv_self_clear", NULL, NULL, EP_PK_PLAIN, EP_PM_LATENCY,
	  PROBE_F_KV_CLEAR, PE_NONE, NULL },
	{ PG_LLAMA, NULL, "llama_kv_cache_clear", NULL, NULL, EP_PK_PLAIN, EP_PM_LATENCY,
	  PROBE_F_KV_CLEAR, PE_NONE, NULL },
	{ PG_LLAMA, NULL, "llama_sampler_sample", NULL, NULL, EP_PK_PLAIN, EP_PM_LATENCY,
	  PROBE_F_TOKENS, PE_NONE, NULL },
	{ PG_LLAMA, NULL, "ggml_graph_compute", NULL, NULL, EP_PK_PLAIN, EP_PM_LATENCY, 0,
	  PE_NONZERO, NULL },
	{ PG_LLAMA, NULL, "ggml_backend_graph_compute", NULL, NULL, EP_PK_PLAIN, EP_PM_LATENCY, 0,
	  PE_NONZERO, NULL },
	{ PG_SQLITE, NULL, "sqlite3_prepare_v2", NULL, NULL, EP_PK_SQL_PREPARE_V2, EP_PM_LATENCY, 0,
	  PE_NONZERO, NULL },
	{ PG_SQLITE, NULL, "sqlite3_prepare_v3", NULL, NULL, EP_PK_SQL_PREPARE_V3, EP_PM_LATENCY, 0,
	  PE_NONZERO, NULL },
	{ PG_SQLITE, NULL, "sqlite3_step", NULL, NULL, EP_PK_SQL_STMT, EP_PM_LATENCY, 0, PE_STEP,
	  NULL },
	{ PG_SQLITE, NULL, "sqlite3_exec", NULL, NULL, EP_PK_SQL_EXEC, EP_PM_LATENCY, 0, PE_NONZERO,
	  NULL },
	{ PG_SQLITE, NULL, "sqlite3_finalize", NULL, NULL, EP_PK_SQL_STMT, EP_PM_LATENCY, 0,
	  PE_NONZERO, NULL },
	{ PG_SQLITE, NULL, "sqlite3_reset", NULL, NULL, EP_PK_SQL_STMT, EP_PM_LATENCY, 0,
	  PE_NONZERO, NULL },
};
#define NPRESET (sizeof(preset_defs) / sizeof(preset_defs[0]))

unsigned probe_def_class(const struct probe_def *def)
{
	/* The values of enum cyc_span_kind (cycles.h): 0 inference, 1 SQL,
	 * 2 other. */
	if (def->group == PG_LLAMA)
		return 0;
	if (def->group == PG_SQLITE ||
	    (def->kind >= EP_PK_SQL_PREPARE_V2 && def->kind <= EP_PK_SQL_STMT))
		return 1;
	return 2;
}

int probe_parse_presets(const char *s, uint32_t *mask)
{
	char buf[128], *save = NULL, *tok;
	uint32_t m = 0;

	if (!s || !*s || strlen(s) >= sizeof(buf))
		return -EINVAL;
	if (!strcmp(s, "none")) {
		*mask = 0;
		return 0;
	}
	if (!strcmp(s, "all")) {
		*mask = PROBE_PRESET_ALL;
		return 0;
	}
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "llama"))
			m |= PROBE_PRESET_LLAMA;
		else if (!strcmp(tok, "sqlite"))
			m |= PROBE_PRESET_SQLITE;
		else
			return -EINVAL;
	}
	/* "llama,,": a trailing or doubled comma is a typo, not "none". */
	if (!m || s[strlen(s) - 1] == ',' || strstr(s, ",,") || s[0] == ',')
		return -EINVAL;
	*mask = m;
	return 0;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static bool valid_symbol(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!(*s == '_' || *s == '.' || *s == '$' || (*s >= '0' && *s <= '9') ||
		      (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
			return false;
	return true;
}

int probe_usdt_pair_end(const char *begin, char *out, size_t outlen)
{
	static const char *const pairs[][2] = {
		{ "entry", "return" },
		{ "start", "done" },
		{ "begin", "end" },
	};
	size_t n = begin ? strlen(begin) : 0;

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		size_t k = strlen(pairs[i][0]);

		/* The suffix must be a word of its own: "restart" is no "start". */
		if (n <= k + 1 || strcmp(begin + n - k, pairs[i][0]) || begin[n - k - 1] != '_')
			continue;
		if (n - k + strlen(pairs[i][1]) + 1 > outlen)
			return -ENAMETOOLONG;
		memcpy(out, begin, n - k);
		strcpy(out + n - k, pairs[i][1]);
		return 0;
	}
	return -ENOENT;
}

int probe_parse_spec(const char *s, struct probe_def *out, char *err, size_t errlen)
{
	char *buf, *opts, *colon, *tok, *save = NULL;
	bool pair = false;

	memset(out, 0, sizeof(*out));
	if (!s || !*s)
		return fail(err, errlen, "empty probe");
	if (strlen(s) > 4096)
		return fail(err, errlen, "probe spec too long");
	/* Room after the spec for an end-point name derived by "pair". */
	buf = malloc(2 * strlen(s) + 16);
	if (!buf)
		return -ENOMEM;
	strcpy(buf, s);
	out->owned = buf;
	out->group = PG_USER;
	out->kind = EP_PK_PLAIN;
	out->mode = EP_PM_LATENCY;
	out->err_rule = PE_NONE;
	opts = strchr(buf, ',');
	if (opts)
		*opts++ = '\0';
	if (!strncmp(buf, "usdt:", 5)) {
		char *path = buf + 5, *prov;

		colon = strrchr(path, ':');
		if (!colon)
			goto bad_usdt;
		*colon = '\0';
		prov = strrchr(path, ':');
		if (!prov)
			goto bad_usdt;
		*prov++ = '\0';
		if (!*path || !valid_symbol(prov) || !valid_symbol(colon + 1))
			goto bad_usdt;
		out->lib = path;
		out->usdt_provider = prov;
		out->symbol = colon + 1;
		out->kind = EP_PK_USDT;
	} else {
		colon = strrchr(buf, ':');
		if (!colon || colon == buf || !valid_symbol(colon + 1)) {
			fail(err, errlen,
			     "'%s': expected LIB:SYMBOL (e.g. libsqlite3:sqlite3_step)", s);
			goto out_err;
		}
		*colon = '\0';
		out->lib = buf;
		out->symbol = colon + 1;
	}
	out->label = out->symbol;
	for (tok = opts ? strtok_r(opts, ",", &save) : NULL; tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strncmp(tok, "label=", 6) && tok[6] && strlen(tok + 6) <= 64) {
			out->label = tok + 6;
		} else if (!strcmp(tok, "count")) {
			out->mode = EP_PM_COUNT;
		} else if (out->usdt_provider && !strncmp(tok, "end=", 4) && !out->usdt_end &&
			   !pair && valid_symbol(tok + 4)) {
			out->usdt_end = tok + 4;
		} else if (out->usdt_provider && !strcmp(tok, "pair") && !out->usdt_end && !pair) {
			pair = true;
		} else {
			fail(err, errlen, "'%s': unknown option '%s' (label=NAME or count%s)", s,
			     tok, out->usdt_provider ? ", and for USDT end=NAME or pair" : "");
			goto out_err;
		}
	}
	if (pair) {
		/* The derived name goes after the spec's own text in buf. */
		char *end = buf + strlen(s) + 1;

		if (probe_usdt_pair_end(out->symbol, end, strlen(s) + 15)) {
			fail(err, errlen,
			     "'%s': pair: %s does not end in _entry, _start or _begin; name the end "
			     "point with end=NAME",
			     s, out->symbol);
			goto out_err;
		}
		out->usdt_end = end;
	}
	if (out->usdt_end) {
		if (!strcmp(out->usdt_end, out->symbol)) {
			fail(err, errlen, "'%s': a span cannot begin and end at the same point", s);
			goto out_err;
		}
		out->kind = EP_PK_USDT_BEGIN;
	}
	return 0;
bad_usdt:
	fail(err, errlen, "'%s': expected usdt:PATH:PROVIDER:NAME", s);
out_err:
	free(buf);
	memset(out, 0, sizeof(*out));
	return -EINVAL;
}

void probe_specs_free(struct probe_specs *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		free(ps->defs[i].owned);
	free(ps->defs);
	ps->defs = NULL;
	ps->n = 0;
}

int probe_specs_build(struct probe_specs *ps, uint32_t mask, const char *const *specs,
		      size_t nspecs, const char *count_only, char *err, size_t errlen)
{
	size_t cap = NPRESET + nspecs;
	int rc;

	memset(ps, 0, sizeof(*ps));
	ps->defs = calloc(cap ? cap : 1, sizeof(*ps->defs));
	if (!ps->defs)
		return -ENOMEM;
	for (size_t i = 0; i < NPRESET; i++)
		if (mask & (1u << preset_defs[i].group)) {
			ps->defs[ps->n] = preset_defs[i];
			ps->defs[ps->n].label = preset_defs[i].symbol;
			ps->n++;
		}
	for (size_t i = 0; i < nspecs; i++) {
		rc = probe_parse_spec(specs[i], &ps->defs[ps->n], err, errlen);
		if (rc) {
			probe_specs_free(ps);
			return rc;
		}
		ps->n++;
	}
	if (count_only) {
		/* A name that matches nothing is a typo worth an error. */
		char *list = strdup(count_only), *save = NULL;

		if (!list) {
			probe_specs_free(ps);
			return -ENOMEM;
		}
		for (char *tok = strtok_r(list, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			bool hit = false;

			for (size_t i = 0; i < ps->n; i++)
				if (!strcmp(ps->defs[i].symbol, tok) ||
				    !strcmp(ps->defs[i].label, tok)) {
					ps->defs[i].mode = EP_PM_COUNT;
					hit = true;
				}
			if (!hit) {
				fail(err, errlen, "--probe-count-only: no probe named '%s'", tok);
				free(list);
				probe_specs_free(ps);
				return -EINVAL;
			}
		}
		free(list);
	}
	return 0;
}
