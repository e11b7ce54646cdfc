// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Aggregation of call spans: per-probe latency stats, per-SQL-statement
 * stats (statements are followed from prepare to finalize by their
 * sqlite3_stmt pointer), tokens. The outputs built from them are in
 * probes_stats_out.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cycles/cycles.h"
#include "util/hashmap.h"
#include "util/json_write.h"
#include "util/vec.h"
#include "probes/probes.h"
#include "probes/probe_nest.h"
#include "probes/probes_stats_internal.h"
#include "probes/uprobe_discovery.h"

struct probe_stats *probe_stats_new(size_t max_trace_spans, size_t max_sql)
{
	struct probe_stats *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->max_spans = max_trace_spans;
	st->max_sql = max_sql ? max_sql : 1;
	st->other_sql = -1;
	st->unknown_sql = -1;
	st->last_sql = -1;
	st->nest = probe_nest_new();
	if (!st->nest) {
		free(st);
		return NULL;
	}
	ep_hashmap_init(&st->sql_idx);
	ep_hashmap_init(&st->stmt_idx);
	ep_hashmap_init(&st->thread_idx);
	return st;
}

void probe_stats_free(struct probe_stats *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->nprobes; i++)
		free(st->info[i].library);
	for (size_t i = 0; i < st->nsql; i++)
		free(st->sql[i].text);
	for (size_t i = 0; i < st->nnf * 2; i++)
		free(st->nf[i]);
	free(st->nf);
	free(st->info);
	free(st->stat);
	free(st->role);
	free(st->sql);
	free(st->stmts);
	free(st->spans);
	free(st->threads);
	probe_nest_free(st->nest);
	ep_hashmap_free(&st->sql_idx);
	ep_hashmap_free(&st->stmt_idx);
	ep_hashmap_free(&st->thread_idx);
	free(st);
}

int probe_stats_set_probe(struct probe_stats *st, uint32_t id, const struct probe_def *def,
			  const char *library)
{
	size_t old = st->cap;
	char *lib;

	if (id >= EP_PROBE_MAX)
		return -E2BIG;
	if (id < st->nprobes && st->info[id].def)
		return -EEXIST;
	lib = strdup(library ? library : "");
	if (!lib)
		return -ENOMEM;
	if (ep_vec_grow_zeroed((void **)&st->info, &st->cap, id + 1, sizeof(*st->info))) {
		free(lib);
		return -ENOMEM;
	}
	/* The three arrays share one capacity. */
	{
		size_t c = old;

		if (ep_vec_grow_zeroed((void **)&st->stat, &c, st->cap, sizeof(*st->stat))) {
			free(lib);
			return -ENOMEM;
		}
		c = old;
		if (ep_vec_grow_zeroed((void **)&st->role, &c, st->cap, sizeof(*st->role))) {
			free(lib);
			return -ENOMEM;
		}
	}
	for (size_t i = old; i < st->cap; i++)
		hist_init(&st->stat[i].hist);
	st->info[id].def = def;
	st->info[id].library = lib;
	st->role[id] = ROLE_NONE;
	if (def->kind == EP_PK_SQL_STMT) {
		if (!strcmp(def->symbol, "sqlite3_step"))
			st->role[id] = ROLE_STEP;
		else if (!strcmp(def->symbol, "sqlite3_reset"))
			st->role[id] = ROLE_RESET;
		else if (!strcmp(def->symbol, "sqlite3_finalize"))
			st->role[id] = ROLE_FINALIZE;
	}
	if (id >= st->nprobes)
		st->nprobes = id + 1;
	return 0;
}

static bool is_error(const struct probe_def *def, int64_t ret)
{
	int32_t r = (int32_t)ret;

	switch (def->err_rule) {
	case PE_NONZERO:
		return r != 0;
	case PE_NEGATIVE:
		return r < 0;
	case PE_NULL:
		return ret == 0;
	case PE_STEP:
		return r != SQLITE_ROW && r != SQLITE_DONE;
	default:
		return false;
	}
}

/* ---- SQL statements ---- */

struct sql_key {
	const char *text;
};

static bool sql_eq(uint32_t idx, const void *key, const void *ctx)
{
	const struct probe_stats *st = ctx;

	return !strcmp(st->sql[idx].text, ((const struct sql_key *)key)->text);
}

static int32_t new_sql(struct probe_stats *st, char *text, bool truncated)
{
	struct sql_stmt_stat *s;

	if (ep_vec_grow_zeroed((void **)&st->sql, &st->capsql, st->nsql + 1, sizeof(*st->sql))) {
		free(text);
		return -ENOMEM;
	}
	s = &st->sql[st->nsql];
	memset(s, 0, sizeof(*s));
	s->text = text;
	s->truncated = truncated;
	hist_init(&s->hist);
	return (int32_t)st->nsql++;
}

/* Index of the statement with this text (sanitized), creating it; beyond
 * max_sql distinct texts, the shared "(other statements)" entry. */
static int32_t intern_sql(struct probe_stats *st, const char *raw, size_t len, bool truncated)
{
	char *text, *tmp = strndup(raw, len);
	struct sql_key key;
	uint64_t h;
	int64_t found;
	int32_t idx;

	if (!tmp)
		return -ENOMEM;
	text = utf8_sanitize(tmp);
	free(tmp);
	if (!text)
		return -ENOMEM;
	key.text = text;
	h = ep_hashmap_hash_finish(ep_hashmap_hash_bytes(text, strlen(text), HASHMAP_SEED));
	found = ep_hashmap_find(&st->sql_idx, h, &key, sql_eq, st);
	if (found >= 0) {
		free(text);
		return (int32_t)found;
	}
	if (st->nsql >= st->max_sql + (st->other_sql >= 0) + (st->unknown_sql >= 0)) {
		free(text);
		if (st->other_sql < 0) {
			char *o = strdup("(other statements)");

			if (!o)
				return -ENOMEM;
			st->other_sql = new_sql(st, o, false);
		}
		return st->other_sql;
	}
	idx = new_sql(st, text, truncated);
	if (idx < 0)
		return idx;
	if (ep_hashmap_insert(&st->sql_idx, h, (uint32_t)idx))
		return -ENOMEM;
	return idx;
}

struct stmt_key {
	uint32_t pid;
	uint64_t ptr;
};

static bool stmt_eq(uint32_t idx, const void *key, const void *ctx)
{
	const struct probe_stats *st = ctx;
	const struct stmt_key *k = key;

	return st->stmts[idx].pid == k->pid && st->stmts[idx].ptr == k->ptr;
}

static uint64_t stmt_hash(uint32_t pid, uint64_t ptr)
{
	uint64_t h = ep_hashmap_hash_bytes(&pid, sizeof(pid), HASHMAP_SEED);

	return ep_hashmap_hash_finish(ep_hashmap_hash_bytes(&ptr, sizeof(ptr), h));
}

static struct stmt_ent *find_stmt(struct probe_stats *st, uint32_t pid, uint64_t ptr, bool create)
{
	struct stmt_key k = { pid, ptr };
	uint64_t h = stmt_hash(pid, ptr);
	int64_t i = ep_hashmap_find(&st->stmt_idx, h, &k, stmt_eq, st);
	struct stmt_ent *e;

	if (i >= 0)
		return &st->stmts[i];
	if (!create)
		return NULL;
	/* sqlite3_stmt addresses are reused after finalize, so the table is
	 * bounded by the number of statements alive at once. */
	if (ep_vec_grow_zeroed((void **)&st->stmts, &st->capstmts, st->nstmts + 1,
			       sizeof(*st->stmts)))
		return NULL;
	if (ep_hashmap_insert(&st->stmt_idx, h, (uint32_t)st->nstmts))
		return NULL;
	e = &st->stmts[st->nstmts++];
	e->pid = pid;
	e->ptr = ptr;
	e->sql = -1;
	return e;
}

/* The statement entry for a sqlite3_stmt whose prepare was never seen: it
 * was prepared before the probes attached (every statement a long-running
 * experiment prepared at start-up; in launch mode, those prepared before
 * libsqlite3's probes were in place). Its text cannot be known, its time
 * and rows still count, under one shared entry instead of nowhere. */
static struct stmt_ent *unseen_stmt(struct probe_stats *st, uint32_t pid, uint64_t ptr)
{
	struct stmt_ent *e;

	if (st->unknown_sql < 0) {
		char *t = strdup(PROBE_SQL_UNKNOWN_TEXT);

		if (!t)
			return NULL;
		st->unknown_sql = new_sql(st, t, false);
		if (st->unknown_sql < 0)
			return NULL;
	}
	e = find_stmt(st, pid, ptr, true);
	if (e)
		e->sql = st->unknown_sql;
	return e;
}

static void end_run(struct probe_stats *st, struct stmt_ent *e)
{
	struct sql_stmt_stat *s = &st->sql[e->sql];

	s->count++;
	hist_add(&s->hist, e->run_ns);
	e->run_ns = 0;
	e->in_run = false;
}

static void sql_account(struct probe_stats *st, uint32_t id, const struct ep_span *sp,
			const char *text, size_t text_len, bool truncated)
{
	const struct probe_def *def = st->info[id].def;
	bool nested = sp->flags & EP_SPAN_F_NESTED_SQL;
	int32_t r = (int32_t)sp->ret;
	struct stmt_ent *e;
	int32_t idx;

	switch (def->kind) {
	case EP_PK_SQL_PREPARE_V2:
	case EP_PK_SQL_PREPARE_V3:
		idx = intern_sql(st, text, text_len, truncated);
		if (idx < 0)
			return;
		if (sp->obj) {
			e = find_stmt(st, sp->hdr.pid, sp->obj, true);
			if (e) {
				e->sql = nested ? -1 : idx;
				e->in_run = false;
				e->run_ns = 0;
			}
		}
		if (nested)
			return;
		st->sql[idx].prepares++;
		st->sql[idx].total_ns += sp->dur_ns;
		if (r != 0)
			st->sql[idx].errors++;
		return;
	case EP_PK_SQL_EXEC:
		if (nested)
			return;
		idx = intern_sql(st, text, text_len, truncated);
		if (idx < 0)
			return;
		st->sql[idx].count++;
		st->sql[idx].total_ns += sp->dur_ns;
		hist_add(&st->sql[idx].hist, sp->dur_ns);
		if (r != 0)
			st->sql[idx].errors++;
		return;
	case EP_PK_SQL_STMT:
		if (nested || !sp->obj)
			return;
		e = find_stmt(st, sp->hdr.pid, sp->obj, false);
		if (!e)
			e = unseen_stmt(st, sp->hdr.pid, sp->obj);
		if (!e || e->sql < 0)
			return;
		st->sql[e->sql].total_ns += sp->dur_ns;
		switch (st->role[id]) {
		case ROLE_STEP:
			e->run_ns += sp->dur_ns;
			e->in_run = true;
			if (r == SQLITE_ROW) {
				st->sql[e->sql].rows++;
				break;
			}
			if (r != SQLITE_DONE)
				st->sql[e->sql].errors++;
			end_run(st, e);
			break;
		case ROLE_RESET:
		case ROLE_FINALIZE:
			/* Stopped before SQLITE_DONE: still one execution. */
			if (e->in_run)
				end_run(st, e);
			if (st->role[id] == ROLE_FINALIZE)
				e->sql = -1;
			break;
		default:
			break;
		}
		return;
	default:
		return;
	}
}

static void keep_span(struct probe_stats *st, const struct ep_span *sp, int32_t sql, bool open)
{
	struct probe_span_rec *r;

	if (st->nspans >= st->max_spans || ep_vec_grow_zeroed((void **)&st->spans, &st->capspans,
							      st->nspans + 1, sizeof(*st->spans))) {
		if (!st->spans_not_kept++) {
			st->first_not_kept.start_ns = sp->hdr.ts_ns;
			st->first_not_kept.pid = sp->hdr.pid;
			st->first_not_kept.tid = sp->hdr.tid;
		}
		return;
	}
	r = &st->spans[st->nspans++];
	r->start_ns = sp->hdr.ts_ns;
	r->dur_ns = sp->dur_ns;
	r->ret = sp->ret;
	r->pid = sp->hdr.pid;
	r->tid = sp->hdr.tid;
	r->probe_id = sp->probe_id;
	r->sql = sql;
	r->flags = sp->flags;
	r->open = open;
}

uint64_t probe_stats_class_ns(const struct probe_stats *st, unsigned cls, uint64_t *calls)
{
	if (calls)
		*calls = probe_nest_calls(st->nest, cls);
	return probe_nest_ns(st->nest, cls);
}

int probe_stats_add_event(struct probe_stats *st, const void *data, size_t size)
{
	const struct ep_span *sp = data;
	const struct ep_span_sql *sq = NULL;
	const struct probe_def *def;
	struct probe_stat *ps;
	int32_t sql_idx = -1;

	if (size < sizeof(*sp) || (sp->hdr.type != EP_EV_SPAN && sp->hdr.type != EP_EV_SPAN_SQL &&
				   sp->hdr.type != EP_EV_SPAN_LLAMA))
		goto bad;
	if (sp->hdr.type == EP_EV_SPAN_LLAMA && size < sizeof(struct ep_span_llama))
		goto bad;
	if (sp->hdr.type == EP_EV_SPAN_SQL) {
		if (size < sizeof(*sq))
			goto bad;
		sq = data;
	}
	if (sp->probe_id >= st->nprobes || !st->info[sp->probe_id].def)
		goto bad;
	def = st->info[sp->probe_id].def;
	ps = &st->stat[sp->probe_id];
	ps->spans++;
	hist_add(&ps->hist, sp->dur_ns);
	if (!(sp->flags & EP_SPAN_F_NESTED_SAME))
		ps->total_ns += sp->dur_ns;
	if (is_error(def, sp->ret))
		ps->errors++;
	if (sp->flags & EP_SPAN_F_NESTED_SQL)
		ps->nested_sql++;
	probe_nest_add(st->nest, sp->hdr.tid, probe_def_class(def), sp->hdr.ts_ns,
		       sp->hdr.ts_ns + sp->dur_ns, sp->depth);
	if (def->err_rule == PE_STEP) {
		if ((int32_t)sp->ret == SQLITE_ROW)
			ps->rows++;
		else if ((int32_t)sp->ret == SQLITE_DONE)
			ps->done++;
	}
	if (def->flags & PROBE_F_TOKENS) {
		if (!st->tokens || sp->hdr.ts_ns < st->tok_first_ns)
			st->tok_first_ns = sp->hdr.ts_ns;
		if (sp->hdr.ts_ns > st->tok_last_ns)
			st->tok_last_ns = sp->hdr.ts_ns;
		st->tokens++;
	}
	if ((def->flags & PROBE_F_PROMPT) && (int32_t)sp->ret > 0) {
		st->prompts++;
		if ((int32_t)sp->ret > st->max_prompt)
			st->max_prompt = (int32_t)sp->ret;
	}
	if (def->kind >= EP_PK_SQL_PREPARE_V2 && def->kind <= EP_PK_SQL_STMT) {
		const char *text = "";
		size_t len = 0;
		bool trunc = false;

		if (sq) {
			len = strnlen(sq->sql, sizeof(sq->sql));
			if (sq->sql_len < 0) {
				text = "(unreadable)";
				len = strlen(text);
			} else {
				text = sq->sql;
				/* nByte >= 0 bounds the text even without a NUL. */
				if (sq->nbyte >= 0 && (size_t)sq->nbyte < len)
					len = (size_t)sq->nbyte;
				trunc = sp->flags & EP_SPAN_F_SQL_TRUNC;
			}
		}
		sql_account(st, sp->probe_id, sp, text, len, trunc);
		if (sp->obj && def->kind == EP_PK_SQL_STMT) {
			struct stmt_ent *e = find_stmt(st, sp->hdr.pid, sp->obj, false);

			sql_idx = e ? e->sql : -1;
		} else if (sq && st->nsql) {
			struct sql_key key;
			char *t = strndup(text, len), *s = t ? utf8_sanitize(t) : NULL;

			if (s) {
				key.text = s;
				int64_t f = ep_hashmap_find(
					&st->sql_idx,
					ep_hashmap_hash_finish(
						ep_hashmap_hash_bytes(s, strlen(s), HASHMAP_SEED)),
					&key, sql_eq, st);
				sql_idx = f >= 0 ? (int32_t)f : -1;
			}
			free(s);
			free(t);
		}
	}
	keep_span(st, sp, sql_idx, false);
	st->last_sql = sql_idx;
	return 0;
bad:
	st->bad_events++;
	return -EINVAL;
}

int32_t probe_stats_last_sql(const struct probe_stats *st)
{
	return st->last_sql;
}

void probe_stats_add_open(struct probe_stats *st, uint32_t pid, uint32_t tid, uint32_t probe_id,
			  uint64_t start_ns, uint64_t end_ns)
{
	struct ep_span sp = { 0 };

	if (probe_id >= st->nprobes || !st->info[probe_id].def) {
		st->bad_events++;
		return;
	}
	st->stat[probe_id].open++;
	sp.hdr.type = EP_EV_SPAN;
	sp.hdr.pid = pid;
	sp.hdr.tid = tid;
	sp.hdr.ts_ns = start_ns;
	sp.dur_ns = end_ns > start_ns ? end_ns - start_ns : 0;
	sp.probe_id = probe_id;
	keep_span(st, &sp, -1, true);
}

void probe_stats_set_calls(struct probe_stats *st, uint32_t id, uint64_t calls)
{
	if (id < st->nprobes)
		st->stat[id].calls = calls;
}

void probe_stats_set_drops(struct probe_stats *st, const uint64_t drops[EP_PDROP__COUNT])
{
	memcpy(st->drops, drops, sizeof(st->drops));
}

void probe_stats_set_module_lost(struct probe_stats *st, uint64_t n)
{
	st->module_lost = n;
}

static bool thread_eq(uint32_t idx, const void *key, const void *ctx)
{
	const struct probe_stats *st = ctx;

	return st->threads[idx].tid == *(const uint32_t *)key;
}

static uint64_t tid_hash(uint32_t tid)
{
	return ep_hashmap_hash_finish(ep_hashmap_hash_bytes(&tid, sizeof(tid), HASHMAP_SEED));
}

bool probe_stats_knows_thread(const struct probe_stats *st, uint32_t tid)
{
	return ep_hashmap_find(&st->thread_idx, tid_hash(tid), &tid, thread_eq, st) >= 0;
}

void probe_stats_set_thread_name(struct probe_stats *st, uint32_t pid, uint32_t tid,
				 const char *name)
{
	struct thread_ent *t;

	if (probe_stats_knows_thread(st, tid))
		return;
	if (ep_vec_grow_zeroed((void **)&st->threads, &st->capthreads, st->nthreads + 1,
			       sizeof(*st->threads)) ||
	    ep_hashmap_insert(&st->thread_idx, tid_hash(tid), (uint32_t)st->nthreads))
		return;
	t = &st->threads[st->nthreads++];
	t->pid = pid;
	t->tid = tid;
	snprintf(t->name, sizeof(t->name), "%s", name ? name : "");
}

int probe_stats_add_not_found(struct probe_stats *st, const char *probe, const char *reason)
{
	char **p = realloc(st->nf, (st->nnf + 1) * 2 * sizeof(*p));

	if (!p)
		return -ENOMEM;
	st->nf = p;
	p[st->nnf * 2] = strdup(probe);
	p[st->nnf * 2 + 1] = strdup(reason);
	st->nnf++;
	return p[st->nnf * 2 - 2] && p[st->nnf * 2 - 1] ? 0 : -ENOMEM;
}

size_t probe_stats_nprobes(const struct probe_stats *st)
{
	return st->nprobes;
}

const struct probe_stat *probe_stats_get(const struct probe_stats *st, uint32_t id)
{
	return id < st->nprobes && st->info[id].def ? &st->stat[id] : NULL;
}

const struct probe_info *probe_stats_info(const struct probe_stats *st, uint32_t id)
{
	return id < st->nprobes && st->info[id].def ? &st->info[id] : NULL;
}

size_t probe_stats_nsql(const struct probe_stats *st)
{
	return st->nsql;
}

const struct sql_stmt_stat *probe_stats_sql(const struct probe_stats *st, size_t i)
{
	return i < st->nsql ? &st->sql[i] : NULL;
}

uint64_t probe_stats_bad_events(const struct probe_stats *st)
{
	return st->bad_events;
}

int64_t probe_stats_max_prompt(const struct probe_stats *st, uint64_t *calls)
{
	if (calls)
		*calls = st->prompts;
	return st->max_prompt;
}

uint64_t probe_stats_tokens(const struct probe_stats *st, double *tokens_per_s)
{
	if (tokens_per_s)
		*tokens_per_s = st->tokens >= 2 && st->tok_last_ns > st->tok_first_ns
					? (double)(st->tokens - 1) * 1e9 /
						  (double)(st->tok_last_ns - st->tok_first_ns)
					: 0;
	return st->tokens;
}
