// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* llama.cpp set-up facts (llama_facts.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "events/probes.h"
#include "llama/gguf.h"
#include "llama/llama_facts.h"
#include "llama/llama_layout.h"
#include "proc/target_open.h"
#include "util/clock.h"

/* Models and contexts kept: a program creates a few; the rest are counted. */
#define MAX_SETUPS 16
/* One model file's header: the wait for it (its open has its own
 * deadline within), the parse's share, and all models' together. */
#define GGUF_JOB_TIMEOUT_MS 2000
#define GGUF_PARSE_NS	    (1000ull * 1000000ull)
#define GGUF_ALL_BUDGET_NS  (3000ull * 1000000ull)

struct setup {
	uint32_t pid, tid, probe_id, kind;
	uint64_t ts_ns;
	int32_t blob_len;
	uint8_t blob[EP_LLAMA_BLOB_LEN];
	char *path;	 /* model: as passed */
	char *open_path; /* model: absolute, in the process's root (open_flags 0) or,
			  * relative to its working directory, in ours */
	unsigned open_flags;
	struct target_ref who; /* the process at the call: its credentials */
	/* context: the last llama_set_n_threads of its process since, and
	 * how many there were */
	int32_t set_threads, set_threads_batch;
	uint64_t nset;
};

struct llama_facts {
	char *proc_root;
	char *version[EP_PROBE_MAX];
	struct setup s[MAX_SETUPS];
	size_t n;
	uint64_t not_kept;
};

struct llama_facts *llama_facts_new(const char *proc_root)
{
	struct llama_facts *lf = calloc(1, sizeof(*lf));

	if (lf && !(lf->proc_root = strdup(proc_root ? proc_root : "/proc"))) {
		free(lf);
		lf = NULL;
	}
	return lf;
}

void llama_facts_free(struct llama_facts *lf)
{
	if (!lf)
		return;
	for (size_t i = 0; i < EP_PROBE_MAX; i++)
		free(lf->version[i]);
	for (size_t i = 0; i < lf->n; i++) {
		free(lf->s[i].path);
		free(lf->s[i].open_path);
	}
	free(lf->proc_root);
	free(lf);
}

int llama_facts_set_probe(struct llama_facts *lf, uint32_t id, const char *version)
{
	if (id >= EP_PROBE_MAX)
		return -EINVAL;
	free(lf->version[id]);
	lf->version[id] = version ? strdup(version) : NULL;
	return version && !lf->version[id] ? -ENOMEM : 0;
}

uint32_t llama_facts_n_ctx(const struct llama_facts *lf, uint32_t pid)
{
	for (size_t i = lf ? lf->n : 0; i-- > 0;) {
		const struct setup *s = &lf->s[i];
		struct llama_ctx_params cp;

		if (s->pid != pid || s->kind != EP_PK_LLAMA_CTX)
			continue;
		if (s->blob_len < 0 || s->probe_id >= EP_PROBE_MAX ||
		    !llama_ctx_decode(llama_layout_find(lf->version[s->probe_id]), s->blob,
				      (size_t)s->blob_len, &cp))
			return 0;
		return cp.n_ctx;
	}
	return 0;
}

int llama_facts_add(struct llama_facts *lf, const void *data, size_t size)
{
	const struct ep_llama_args *a = data;
	struct setup *s;
	char buf[2 * PATH_MAX + 64], cwd[PATH_MAX];
	bool gone;

	if (size < sizeof(*a) || a->hdr.type != EP_EV_LLAMA_ARGS ||
	    (a->kind != EP_PK_LLAMA_MODEL && a->kind != EP_PK_LLAMA_CTX &&
	     a->kind != EP_PK_LLAMA_THREADS) ||
	    a->probe_id >= EP_PROBE_MAX)
		return -EINVAL;
	/* Thread counts set later apply to the process's latest context (the
	 * call names it by a pointer we do not match: one context per process
	 * is the common case). Called per request by some programs: kept as
	 * the last value and a count, not as a set-up. */
	if (a->kind == EP_PK_LLAMA_THREADS) {
		for (size_t i = lf->n; i-- > 0;)
			if (lf->s[i].pid == a->hdr.pid && lf->s[i].kind == EP_PK_LLAMA_CTX) {
				memcpy(&lf->s[i].set_threads, a->blob, 4);
				memcpy(&lf->s[i].set_threads_batch, a->blob + 4, 4);
				lf->s[i].nset++;
				break;
			}
		return 0;
	}
	/* llama_new_context_with_model may forward to llama_init_from_model
	 * (both probed): the same parameters again on the same thread are
	 * one context. */
	for (size_t i = lf->n; i-- > 0;) {
		if (lf->s[i].tid != a->hdr.tid)
			continue;
		if (lf->s[i].kind == a->kind && a->kind == EP_PK_LLAMA_CTX &&
		    lf->s[i].blob_len == a->blob_len && lf->s[i].probe_id != a->probe_id &&
		    !memcmp(lf->s[i].blob, a->blob, sizeof(a->blob)))
			return 0;
		break;
	}
	if (lf->n >= MAX_SETUPS) {
		lf->not_kept++;
		return 0;
	}
	s = &lf->s[lf->n];
	memset(s, 0, sizeof(*s));
	s->pid = a->hdr.pid;
	s->tid = a->hdr.tid;
	s->probe_id = a->probe_id;
	s->kind = a->kind;
	s->ts_ns = a->hdr.ts_ns;
	s->blob_len = a->blob_len;
	memcpy(s->blob, a->blob, sizeof(s->blob));
	if (a->kind == EP_PK_LLAMA_MODEL && a->path_len > 1) {
		size_t n = strnlen(a->path, sizeof(a->path));

		s->path = strndup(a->path, n);
		if (!s->path)
			return -ENOMEM;
		/* Who named it (it may exit or change credentials before the
		 * report): the file is read with its rights alone. The
		 * kernel's, at the call, when the event carries them: the
		 * event may be handled after the process exited. */
		gone = target_ref_init(&s->who, lf->proc_root, s->pid) != 0;
		if (a->cred.flags & EP_CRED_F_OK) {
			uint32_t ng = a->cred.ngroups < EP_CRED_GROUPS ? a->cred.ngroups
								       : EP_CRED_GROUPS;

			target_cred_set(&s->who.cred, a->cred.fsuid, a->cred.fsgid, a->cred.groups,
					ng);
			if (gone && (a->cred.flags & EP_CRED_F_ROOT))
				s->who.same_root =
					target_root_is_ours(a->cred.root_dev, a->cred.root_ino);
		}
		/* The process's view of the path: its root; for a relative one
		 * its working directory, which readlink gives in our view. */
		if (s->path[0] == '/') {
			s->open_path = strdup(s->path);
		} else {
			char link[128];
			ssize_t k;

			snprintf(link, sizeof(link), "%s/%u/cwd", lf->proc_root, s->pid);
			k = readlink(link, cwd, sizeof(cwd) - 1);
			if (k > 0 && cwd[0] == '/') {
				cwd[k] = '\0';
				snprintf(buf, sizeof(buf), "%s/%s", cwd, s->path);
				s->open_path = strdup(buf);
				s->open_flags = TARGET_OUR_ROOT;
			}
		}
	}
	lf->n++;
	return 0;
}

static int add_problem(cJSON *probs, const char *fmt, const char *a, const char *b)
{
	char msg[512];

	snprintf(msg, sizeof(msg), fmt, a, b);
	return cJSON_AddItemToArray(probs, cJSON_CreateString(msg)) ? 0 : -ENOMEM;
}

/* Reading one model file's header, on a helper thread (target_run): the
 * file is named by the profiled program and may sit on storage that
 * stalls; the report is written whatever it does. */
struct gguf_job {
	struct target_ref who;
	char *proc_root, *path;
	unsigned flags;
	struct gguf_facts g;
	char err[256];
	int rc;
};

static void gguf_job_free(void *arg)
{
	struct gguf_job *j = arg;

	free(j->proc_root);
	free(j->path);
	free(j);
}

static void gguf_job_run(void *arg)
{
	struct gguf_job *j = arg;
	struct gguf_limits lim = { .max_bytes = GGUF_MAX_HEADER_BYTES };
	struct timespec ts;
	struct stat st;
	FILE *f;
	int fd;

	/* As the program could open it: its credentials, a regular file, no
	 * FIFO or device (target_open.h). */
	fd = target_open_path(&j->who, j->path, j->flags | TARGET_SLOW_OK, 0, &st);
	if (fd < 0) {
		snprintf(j->err, sizeof(j->err), "cannot open: %s", target_open_strerror(fd));
		j->rc = fd;
		return;
	}
	f = fdopen(fd, "rb");
	if (!f) {
		close(fd);
		snprintf(j->err, sizeof(j->err), "cannot read: %s", strerror(errno));
		j->rc = -ENOMEM;
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	lim.file_size = (uint64_t)st.st_size;
	lim.deadline_ns =
		(uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + GGUF_PARSE_NS;
	j->rc = gguf_read_facts_bounded(f, &lim, &j->g, j->err, sizeof(j->err));
	fclose(f);
}

/* The GGUF facts of a model, from the process's view of its path (the
 * process may be gone: then the path in our root if it shared it). */
static int read_gguf(const struct setup *s, struct gguf_facts *g, char *err, size_t errlen)
{
	struct gguf_job *j = calloc(1, sizeof(*j));
	int rc;

	if (!j || !s->open_path) {
		free(j);
		snprintf(err, errlen, "%s",
			 s->open_path ? "out of memory"
				      : "the working directory it is relative "
					"to is unknown");
		return s->open_path ? -ENOMEM : -ENOENT;
	}
	j->who = s->who;
	j->proc_root = s->who.proc_root ? strdup(s->who.proc_root) : NULL;
	j->who.proc_root = j->proc_root;
	j->path = strdup(s->open_path);
	j->flags = s->open_flags;
	if (!j->path || (s->who.proc_root && !j->proc_root)) {
		gguf_job_free(j);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = target_run(gguf_job_run, gguf_job_free, j, GGUF_JOB_TIMEOUT_MS);
	if (rc) {
		if (rc != -ETIMEDOUT)
			gguf_job_free(j);
		snprintf(err, errlen, "%s",
			 rc == -ETIMEDOUT ? "not read in time (its storage stalls?)"
					  : "cannot start a reader thread");
		return rc;
	}
	rc = j->rc;
	if (rc)
		snprintf(err, errlen, "%s", j->err);
	else
		*g = j->g;
	gguf_job_free(j);
	return rc;
}

static cJSON *model_json(const struct llama_facts *lf, const struct setup *s, cJSON *probs,
			 struct gguf_facts *g, bool *have_g, uint64_t until_ns)
{
	const struct llama_layout *l = llama_layout_find(lf->version[s->probe_id]);
	cJSON *o = cJSON_CreateObject();
	char err[256];
	int32_t ngl;

	*have_g = false;
	if (!o)
		return NULL;
	cJSON_AddNumberToObject(o, "pid", s->pid);
	cJSON_AddNumberToObject(o, "t_ns", (double)s->ts_ns);
	if (s->path)
		cJSON_AddStringToObject(o, "path", s->path);
	if (l && s->blob_len > 0 && llama_model_decode(l, s->blob, (size_t)s->blob_len, &ngl))
		cJSON_AddNumberToObject(o, "n_gpu_layers", ngl);
	if (!s->path) {
		add_problem(probs, "model path unreadable at llama_model_load_from_file%s%s", "",
			    "");
	} else if (mono_ns() > until_ns) {
		add_problem(probs,
			    "GGUF %s: not read (the models before it took the time allowed)%s",
			    s->path, "");
	} else if (read_gguf(s, g, err, sizeof(err))) {
		add_problem(probs, "GGUF %s: %s", s->path, err);
	} else {
		cJSON *gj = cJSON_AddObjectToObject(o, "gguf");
		const char *ft = gguf_ftype_name(g->file_type), *mt = gguf_type_name(g->main_type);

		*have_g = true;
		cJSON_AddNumberToObject(gj, "version", g->version);
		cJSON_AddStringToObject(gj, "architecture", g->arch);
		if (g->name[0])
			cJSON_AddStringToObject(gj, "name", g->name);
		if (g->file_type >= 0)
			cJSON_AddNumberToObject(gj, "file_type", (double)g->file_type);
		if (ft)
			cJSON_AddStringToObject(gj, "quantization", ft);
		if (mt)
			cJSON_AddStringToObject(gj, "main_tensor_type", mt);
		cJSON_AddNumberToObject(gj, "n_elements", (double)g->n_elements);
		cJSON_AddNumberToObject(gj, "n_ctx_train", (double)g->context_length);
		cJSON_AddNumberToObject(gj, "n_layer", (double)g->block_count);
		cJSON_AddNumberToObject(gj, "n_embd", (double)g->embedding_length);
		cJSON_AddNumberToObject(gj, "n_head", (double)g->head_count);
		cJSON_AddNumberToObject(gj, "n_head_kv",
					(double)(g->head_count_kv ? g->head_count_kv
								  : g->head_count));
		/* F16 K and V: llama.cpp's default cache type. */
		cJSON_AddNumberToObject(gj, "kv_bytes_per_token_f16",
					(double)gguf_kv_bytes_per_token(g, 1, 1));
	}
	return o;
}

int llama_facts_report_json(const struct llama_facts *lf, cJSON *root, int64_t max_prompt,
			    uint64_t prompts)
{
	cJSON *lj, *models, *ctxs, *probs;
	struct gguf_facts g[MAX_SETUPS];
	bool have_g[MAX_SETUPS] = { false };
	int model_of_pid = -1;
	uint64_t until_ns = mono_ns() + GGUF_ALL_BUDGET_NS;

	if (!lf || !lf->n)
		return 0;
	lj = cJSON_AddObjectToObject(root, "llama");
	if (!lj || !(models = cJSON_AddArrayToObject(lj, "models")) ||
	    !(ctxs = cJSON_AddArrayToObject(lj, "contexts")) ||
	    !(probs = cJSON_AddArrayToObject(lj, "problems")))
		return -ENOMEM;
	if (prompts) {
		cJSON_AddNumberToObject(lj, "max_prompt_tokens", (double)max_prompt);
		cJSON_AddNumberToObject(lj, "tokenize_calls", (double)prompts);
	}
	if (lf->not_kept)
		cJSON_AddNumberToObject(lj, "setups_not_kept", (double)lf->not_kept);
	for (size_t i = 0; i < lf->n; i++) {
		const struct setup *s = &lf->s[i];
		const char *ver = lf->version[s->probe_id];
		const struct llama_layout *l = llama_layout_find(ver);
		struct llama_ctx_params p;
		cJSON *o;

		if (s->blob_len < 0)
			add_problem(probs, "%s parameters unreadable from the caller's stack%s",
				    s->kind == EP_PK_LLAMA_MODEL ? "model" : "context", "");
		else if (!l)
			add_problem(
				probs,
				"llama.cpp build %s%s: parameter layout not known (report.json "
				"shows no parameters; check n_ctx, n_batch and n_threads in the "
				"program)",
				ver ? "with llama_version() " : "without llama_version()",
				ver ? ver : "");
		if (s->kind == EP_PK_LLAMA_MODEL) {
			o = model_json(lf, s, probs, &g[i], &have_g[i], until_ns);
			if (!o || !cJSON_AddItemToArray(models, o))
				return -ENOMEM;
			continue;
		}
		o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(ctxs, o))
			return -ENOMEM;
		cJSON_AddNumberToObject(o, "pid", s->pid);
		cJSON_AddNumberToObject(o, "t_ns", (double)s->ts_ns);
		if (ver)
			cJSON_AddStringToObject(o, "llama_version", ver);
		if (!l || s->blob_len <= 0)
			continue;
		if (!llama_ctx_decode(l, s->blob, (size_t)s->blob_len, &p)) {
			add_problem(probs,
				    "context parameters implausible for the %s layout: another "
				    "build with the same version string?%s",
				    ver, "");
			continue;
		}
		cJSON_AddNumberToObject(o, "n_ctx", p.n_ctx);
		cJSON_AddNumberToObject(o, "n_batch", p.n_batch);
		cJSON_AddNumberToObject(o, "n_ubatch", p.n_ubatch);
		cJSON_AddNumberToObject(o, "n_seq_max", p.n_seq_max);
		cJSON_AddNumberToObject(o, "n_threads", p.n_threads);
		cJSON_AddNumberToObject(o, "n_threads_batch", p.n_threads_batch);
		cJSON_AddStringToObject(o, "layout_source", l->source);
		if (s->nset) {
			/* What the context computes with after llama_set_n_threads. */
			cJSON_AddNumberToObject(o, "n_threads_init", p.n_threads);
			cJSON_AddNumberToObject(o, "n_threads_batch_init", p.n_threads_batch);
			cJSON_ReplaceItemInObject(o, "n_threads",
						  cJSON_CreateNumber(s->set_threads));
			cJSON_ReplaceItemInObject(o, "n_threads_batch",
						  cJSON_CreateNumber(s->set_threads_batch));
			cJSON_AddNumberToObject(o, "set_n_threads_calls", (double)s->nset);
		}
		/* The model: the last one this process loaded before. */
		model_of_pid = -1;
		for (size_t k = 0; k < i; k++)
			if (lf->s[k].kind == EP_PK_LLAMA_MODEL && lf->s[k].pid == s->pid &&
			    have_g[k])
				model_of_pid = (int)k;
		if (model_of_pid >= 0) {
			const struct gguf_facts *mg = &g[model_of_pid];
			uint64_t per = gguf_kv_bytes_per_token(mg, 1, 1);
			uint64_t n_ctx = p.n_ctx ? p.n_ctx : mg->context_length;

			if (lf->s[model_of_pid].path)
				cJSON_AddStringToObject(o, "model", lf->s[model_of_pid].path);
			cJSON_AddNumberToObject(o, "n_ctx_train", (double)mg->context_length);
			if (per) {
				cJSON_AddNumberToObject(o, "kv_bytes_per_token_f16", (double)per);
				cJSON_AddNumberToObject(o, "kv_cache_bytes_f16",
							(double)(per * n_ctx));
			}
		}
	}
	return 0;
}
