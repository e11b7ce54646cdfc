// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "alloc/alloc_report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "events/alloc.h"
#include "util/log.h"

#define TOP_STACKS 10
#define MAX_LEAKS  10

static cJSON *stack_json(const struct alloc_model *m, uint32_t stack)
{
	const struct alloc_stack *s = &m->stacks[stack];
	cJSON *a = cJSON_CreateArray();

	for (uint32_t d = 0; a && d < s->depth; d++) {
		cJSON *n = cJSON_CreateString(m->names.frames[m->pool[s->off + d]].name);

		if (!n || !cJSON_AddItemToArray(a, n)) {
			cJSON_Delete(n);
			cJSON_Delete(a);
			return NULL;
		}
	}
	return a;
}

static int cmp_inuse(const void *a, const void *b)
{
	const struct alloc_by_stack *x = a, *y = b;

	if (x->inuse_bytes != y->inuse_bytes)
		return x->inuse_bytes < y->inuse_bytes ? 1 : -1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int add_top(const struct alloc_model *m, cJSON *obj, const char *key,
		   const struct alloc_by_stack *v, size_t n, bool inuse)
{
	cJSON *arr = cJSON_AddArrayToObject(obj, key);
	size_t k = 0;

	if (!arr)
		return -ENOMEM;
	for (size_t i = 0; i < n && k < TOP_STACKS; i++) {
		cJSON *e, *st;

		if (inuse && v[i].inuse_bytes <= 0)
			break;
		e = cJSON_CreateObject();
		st = stack_json(m, v[i].stack);
		if (!e || !st || !cJSON_AddItemToArray(arr, e) ||
		    !cJSON_AddStringToObject(e, "function", alloc_model_leaf(m, v[i].stack)) ||
		    !cJSON_AddItemToObject(e, "stack", st) ||
		    !cJSON_AddNumberToObject(e, "alloc_bytes", round(v[i].alloc_bytes)) ||
		    !cJSON_AddNumberToObject(e, "alloc_bytes_se",
					     round(sqrt(v[i].alloc_bytes_var))) ||
		    !cJSON_AddNumberToObject(e, "alloc_count", round(v[i].alloc_count)) ||
		    !cJSON_AddNumberToObject(e, "inuse_bytes", round(v[i].inuse_bytes)) ||
		    !cJSON_AddNumberToObject(e, "inuse_bytes_se",
					     round(sqrt(v[i].inuse_bytes_var))) ||
		    !cJSON_AddNumberToObject(e, "inuse_count", round(v[i].inuse_count)) ||
		    !cJSON_AddNumberToObject(e, "samples", (double)v[i].samples)) {
			if (!e || !cJSON_IsObject(cJSON_GetArrayItem(arr, (int)k)))
				cJSON_Delete(e);
			cJSON_Delete(st);
			return -ENOMEM;
		}
		k++;
	}
	return 0;
}

/* Cycle ends in ascending order, with the rows they came from. Partial
 * rows (cut by the end of the run) are left out. */
struct cyc {
	uint64_t start, end;
	uint32_t index;
};

static int cmp_cyc(const void *a, const void *b)
{
	const struct cyc *x = a, *y = b;

	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int add_cycles(const struct alloc_run *run, cJSON *obj, struct alloc_results *res)
{
	const struct cycle_table *t = run->cycles;
	struct alloc_leak_cfg cfg;
	struct alloc_cycle *ac = NULL;
	struct alloc_leak *leaks = NULL;
	struct cyc *c = NULL;
	uint64_t *start = NULL, *end = NULL;
	size_t n = 0, nleaks = 0;
	cJSON *arr, *larr;
	int err = -ENOMEM;

	arr = cJSON_AddArrayToObject(obj, "cycles");
	larr = cJSON_AddArrayToObject(obj, "leaks");
	if (!arr || !larr)
		return -ENOMEM;
	if (!t || t->whole_run || !t->n)
		return 0;
	c = calloc(t->n, sizeof(*c));
	start = calloc(t->n, sizeof(*start));
	end = calloc(t->n, sizeof(*end));
	ac = calloc(t->n, sizeof(*ac));
	if (!c || !start || !end || !ac)
		goto out;
	for (size_t i = 0; i < t->n; i++)
		if (!t->rows[i].partial)
			c[n++] = (struct cyc){ t->rows[i].start_ns, t->rows[i].end_ns,
					       t->rows[i].index };
	qsort(c, n, sizeof(*c), cmp_cyc);
	for (size_t i = 0; i < n; i++) {
		start[i] = c[i].start;
		end[i] = c[i].end;
	}
	if (n && alloc_model_cycles(run->model, start, end, n, ac))
		goto out;
	for (size_t i = 0; i < n; i++) {
		cJSON *e = cJSON_CreateObject();

		if (!e || !cJSON_AddItemToArray(arr, e) ||
		    !cJSON_AddNumberToObject(e, "index", c[i].index) ||
		    !cJSON_AddNumberToObject(e, "alloc_bytes", round(ac[i].alloc_bytes)) ||
		    !cJSON_AddNumberToObject(e, "kept_bytes", round(ac[i].kept_bytes)) ||
		    !cJSON_AddNumberToObject(e, "live_at_end_bytes",
					     round(ac[i].live_at_end_bytes))) {
			if (e && !cJSON_GetArrayItem(arr, cJSON_GetArraySize(arr) - 1))
				cJSON_Delete(e);
			goto out;
		}
	}
	alloc_leak_default_cfg(&cfg);
	if (alloc_model_leaks(run->model, end, n, &cfg, MAX_LEAKS, &leaks, &nleaks))
		goto out;
	for (size_t i = 0; i < nleaks; i++) {
		const struct alloc_leak *l = &leaks[i];
		cJSON *e = cJSON_CreateObject(), *st = stack_json(run->model, l->stack), *ser;
		const char *fn = alloc_model_leaf(run->model, l->stack);

		if (!e || !st || !cJSON_AddItemToArray(larr, e)) {
			cJSON_Delete(e);
			cJSON_Delete(st);
			goto out;
		}
		double lo = l->fit.slope - ALLOC_Z95 * l->se, hi = l->fit.slope + ALLOC_Z95 * l->se;

		if (!cJSON_AddStringToObject(e, "function", fn) ||
		    !cJSON_AddItemToObject(e, "stack", st) ||
		    !cJSON_AddNumberToObject(e, "bytes_per_cycle", round(l->fit.slope)) ||
		    !cJSON_AddNumberToObject(e, "bytes_per_cycle_se", round(l->se)) ||
		    !cJSON_AddNumberToObject(e, "bytes_per_cycle_fit_se", round(l->fit.slope_se)) ||
		    !cJSON_AddNumberToObject(e, "bytes_per_cycle_sampling_se",
					     round(l->sampling_se)) ||
		    !cJSON_AddNumberToObject(e, "bytes_per_cycle_low", round(lo)) ||
		    !cJSON_AddNumberToObject(e, "bytes_per_cycle_high", round(hi)) ||
		    !cJSON_AddNumberToObject(e, "r2", round(l->fit.r2 * 1000) / 1000) ||
		    !cJSON_AddNumberToObject(e, "first_cycle", c[l->first_cycle].index) ||
		    !cJSON_AddNumberToObject(e, "last_cycle", c[l->last_cycle].index) ||
		    !cJSON_AddNumberToObject(e, "cycles", (double)n) ||
		    !cJSON_AddNumberToObject(e, "live_bytes", round(l->live_end)) ||
		    !cJSON_AddNumberToObject(e, "live_bytes_se", round(l->live_end_se)) ||
		    !(ser = cJSON_AddArrayToObject(e, "live_by_cycle")))
			goto out;
		for (size_t k = 0; k < n; k++) {
			cJSON *v = cJSON_CreateNumber(round(l->series[k]));

			if (!v || !cJSON_AddItemToArray(ser, v)) {
				cJSON_Delete(v);
				goto out;
			}
		}
		if (res->nleak < 3)
			snprintf(res->leak[res->nleak++], sizeof(res->leak[0]),
				 "%s: +%.0f KiB/cycle (95%%: %.0f..%.0f) over cycles %u..%u, "
				 "%.1f MiB live",
				 fn, l->fit.slope / 1024, lo / 1024, hi / 1024,
				 c[l->first_cycle].index, c[l->last_cycle].index,
				 l->live_end / 1048576);
	}
	err = 0;
out:
	alloc_leaks_free(leaks, nleaks);
	free(c);
	free(start);
	free(end);
	free(ac);
	return err;
}

/* Our cost in the targets: every probe hit is a trap (overhead.trap_ns,
 * measured by the overhead module) plus the programs' run time (BPF
 * statistics), over the targets' on-CPU time. */
static int add_cost(const struct alloc_run *run, cJSON *root, cJSON *obj, struct alloc_results *res)
{
	const cJSON *ov = cJSON_GetObjectItemCaseSensitive(root, "overhead");
	const cJSON *trap = cJSON_GetObjectItemCaseSensitive(ov, "trap_ns");
	const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(ov, "target_cpu_ns");
	const cJSON *progs = cJSON_GetObjectItemCaseSensitive(ov, "programs"), *p;
	uint64_t calls = run->stats[EP_AST_CALLS], frees = run->stats[EP_AST_FREES];
	/* Without BPF statistics: an entry per call and free, and a return
	 * for every call, or with uprobe sessions for the sampled ones only. */
	uint64_t hits = calls + frees + (run->session ? run->stats[EP_AST_SAMPLED] : calls);
	double run_ns = 0, runs = 0, tp_ns = 0, tp_runs = 0,
	       trap_ns = cJSON_IsNumber(trap) ? trap->valuedouble : -1;
	double cpu_ns = cJSON_IsNumber(cpu) ? cpu->valuedouble : 0;
	cJSON *c = cJSON_AddObjectToObject(obj, "cost");

	if (!c)
		return -ENOMEM;
	cJSON_ArrayForEach(p, progs)
	{
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
		const cJSON *rn = cJSON_GetObjectItemCaseSensitive(p, "run_ns");
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(p, "runs");

		if (!cJSON_IsString(name) || strncmp(name->valuestring, "alloc_", 6) ||
		    !cJSON_IsNumber(rn) || !cJSON_IsNumber(r))
			continue;
		/* The mmap/munmap tracepoints run in every process's mmap
		 * syscall, trap-free: their time is counted apart. */
		if (!strncmp(name->valuestring, "alloc_mmap", 10) ||
		    !strncmp(name->valuestring, "alloc_munmap", 12)) {
			tp_ns += rn->valuedouble;
			tp_runs += r->valuedouble;
			continue;
		}
		run_ns += rn->valuedouble;
		runs += r->valuedouble;
	}
	/* Each trap runs one of our programs once (a session's entry and its
	 * return are two runs): with BPF statistics the runs are the hits. */
	if (runs > 0)
		hits = (uint64_t)runs;
	res->cost_ns = run_ns + (trap_ns > 0 ? trap_ns * (double)hits : 0);
	res->per_call_ns = calls + frees ? res->cost_ns / (double)(calls + frees) : 0;
	res->share = trap_ns > 0 && cpu_ns > 0 ? res->cost_ns / cpu_ns : -1;
	res->trap_ns = trap_ns;
	res->hits = hits;
	res->sampled_ns = (double)run->stats[EP_AST_SAMPLE_NS];
	res->attach = run->attach;
	if (!cJSON_AddStringToObject(c, "mode", run->attach ? "attach" : "launch") ||
	    !cJSON_AddNumberToObject(c, "probe_hits", (double)hits) ||
	    !cJSON_AddNumberToObject(c, "bpf_runs", runs) ||
	    !cJSON_AddNumberToObject(c, "bpf_ns", run_ns) ||
	    !cJSON_AddNumberToObject(c, "mmap_tracepoint_runs", tp_runs) ||
	    !cJSON_AddNumberToObject(c, "mmap_tracepoint_ns", tp_ns) ||
	    !cJSON_AddNumberToObject(c, "sampled_path_ns", (double)run->stats[EP_AST_SAMPLE_NS]) ||
	    !(trap_ns > 0 ? cJSON_AddNumberToObject(c, "trap_ns", trap_ns)
			  : cJSON_AddNullToObject(c, "trap_ns")) ||
	    !cJSON_AddNumberToObject(c, "estimated_ns", round(res->cost_ns)) ||
	    !cJSON_AddNumberToObject(c, "per_call_ns", round(res->per_call_ns)) ||
	    !cJSON_AddNumberToObject(c, "target_cpu_ns", cpu_ns) ||
	    !(res->share >= 0 ? cJSON_AddNumberToObject(c, "target_cpu_share", res->share)
			      : cJSON_AddNullToObject(c, "target_cpu_share")) ||
	    !cJSON_AddNumberToObject(c, "warn_share", ALLOC_COST_WARN_SHARE) ||
	    !cJSON_AddBoolToObject(c, "warning", res->share > ALLOC_COST_WARN_SHARE))
		return -ENOMEM;
	return 0;
}

int alloc_report_json(const struct alloc_run *run, cJSON *root, struct alloc_results *res)
{
	const struct alloc_model *m = run->model;
	const uint64_t *st = run->stats;
	struct alloc_by_stack *v = NULL;
	cJSON *mem = cJSON_GetObjectItemCaseSensitive(root, "memory"), *a, *e, *d, *pf;
	uint64_t dropped;
	size_t n = 0;
	int err;

	memset(res, 0, sizeof(*res));
	if (!mem)
		mem = cJSON_AddObjectToObject(root, "memory");
	if (!mem || !(a = cJSON_AddObjectToObject(mem, "alloc")))
		return -ENOMEM;
	alloc_model_totals(m, &res->t);
	res->alloc_se = sqrt(res->t.alloc_bytes_var);
	res->inuse_se = sqrt(res->t.inuse_bytes_var);
	dropped = st[EP_AST_DROP_LIVE_FULL] + st[EP_AST_DROP_RINGBUF] + st[EP_AST_DROP_NO_THREAD] +
		  m->dropped_samples + run->collector_drops;
	res->calls = st[EP_AST_CALLS];
	res->frees = st[EP_AST_FREES];
	res->bytes = st[EP_AST_BYTES];
	res->samples = res->t.samples;
	res->rate = run->rate;
	res->dropped = dropped;
	if (!cJSON_AddNumberToObject(a, "rate_bytes", (double)run->rate) ||
	    !cJSON_AddNumberToObject(a, "max_live", run->max_live) ||
	    !cJSON_AddStringToObject(a, "stacks", run->kwalk ? "cfi-kernel" : "frame-pointers") ||
	    !cJSON_AddStringToObject(a, "return_probes", run->session ? "sampled" : "every_call") ||
	    !cJSON_AddNumberToObject(a, "probes", (double)run->nlinks) ||
	    !(pf = cJSON_AddArrayToObject(a, "probed_files")))
		return -ENOMEM;
	for (size_t i = 0; i < run->nprobed; i++) {
		cJSON *s = cJSON_CreateString(run->probed[i]);

		if (!s || !cJSON_AddItemToArray(pf, s)) {
			cJSON_Delete(s);
			return -ENOMEM;
		}
	}
	if (!cJSON_AddNumberToObject(a, "calls", (double)st[EP_AST_CALLS]) ||
	    !cJSON_AddNumberToObject(a, "frees", (double)st[EP_AST_FREES]) ||
	    !cJSON_AddNumberToObject(a, "bytes_requested", (double)st[EP_AST_BYTES]) ||
	    !cJSON_AddNumberToObject(a, "samples", (double)res->t.samples) ||
	    !cJSON_AddNumberToObject(a, "samples_live", (double)res->t.live_samples) ||
	    !cJSON_AddNumberToObject(a, "frees_of_samples", (double)st[EP_AST_TRACKED_FREES]) ||
	    !cJSON_AddNumberToObject(a, "stack_errors", (double)st[EP_AST_STACK_ERR]) ||
	    !cJSON_AddNumberToObject(a, "nested_calls", (double)st[EP_AST_NESTED]) ||
	    !cJSON_AddNumberToObject(a, "mmaps", (double)st[EP_AST_MMAPS]) ||
	    !cJSON_AddNumberToObject(a, "mmap_bytes", (double)st[EP_AST_MMAP_BYTES]) ||
	    !cJSON_AddNumberToObject(a, "mmaps_in_allocator", (double)st[EP_AST_MMAP_IN_ALLOC]) ||
	    !cJSON_AddNumberToObject(a, "munmaps_of_head", (double)st[EP_AST_MUNMAP_PART]) ||
	    !(e = cJSON_AddObjectToObject(a, "estimated")) ||
	    !cJSON_AddNumberToObject(e, "alloc_bytes", round(res->t.alloc_bytes)) ||
	    !cJSON_AddNumberToObject(e, "alloc_bytes_se", round(res->alloc_se)) ||
	    !cJSON_AddNumberToObject(e, "alloc_count", round(res->t.alloc_count)) ||
	    !cJSON_AddNumberToObject(e, "inuse_bytes", round(res->t.inuse_bytes)) ||
	    !cJSON_AddNumberToObject(e, "inuse_bytes_se", round(res->inuse_se)) ||
	    !cJSON_AddNumberToObject(e, "inuse_count", round(res->t.inuse_count)) ||
	    !(d = cJSON_AddObjectToObject(a, "dropped")) ||
	    !cJSON_AddNumberToObject(d, "total", (double)dropped) ||
	    !cJSON_AddNumberToObject(d, "live_full", (double)st[EP_AST_DROP_LIVE_FULL]) ||
	    !cJSON_AddNumberToObject(d, "ringbuf_full", (double)st[EP_AST_DROP_RINGBUF]) ||
	    !cJSON_AddNumberToObject(d, "no_thread_slot", (double)st[EP_AST_DROP_NO_THREAD]) ||
	    !cJSON_AddNumberToObject(d, "samples_over_cap", (double)m->dropped_samples) ||
	    !cJSON_AddNumberToObject(d, "collector", (double)run->collector_drops) ||
	    !cJSON_AddNumberToObject(d, "bad_events", (double)run->bad_events) ||
	    !cJSON_AddNumberToObject(d, "unmatched_frees", (double)m->unmatched_frees))
		return -ENOMEM;
	err = alloc_model_by_stack(m, &v, &n);
	if (err)
		return err;
	err = add_top(m, a, "top_alloc", v, n, false);
	for (size_t i = 0; !err && i < n && res->ntop < 3; i++) {
		snprintf(res->top[res->ntop], sizeof(res->top[0]), "%s",
			 alloc_model_leaf(m, v[i].stack));
		res->top_bytes[res->ntop++] = v[i].alloc_bytes;
	}
	if (!err) {
		qsort(v, n, sizeof(*v), cmp_inuse);
		err = add_top(m, a, "top_inuse", v, n, true);
	}
	free(v);
	if (!err)
		err = add_cycles(run, a, res);
	if (!err)
		err = add_cost(run, root, a, res);
	res->have = !err;
	return err;
}

static void human(char *buf, size_t len, double bytes)
{
	if (bytes >= 1024.0 * 1048576)
		snprintf(buf, len, "%.2f GiB", bytes / (1024.0 * 1048576));
	else if (bytes >= 1048576)
		snprintf(buf, len, "%.1f MiB", bytes / 1048576);
	else
		snprintf(buf, len, "%.0f KiB", bytes / 1024);
}

/* What the cost line says, for the summary and stderr. */
static void cost_text(const struct alloc_results *r, char *buf, size_t len)
{
	if (r->share >= 0)
		snprintf(buf, len,
			 "%llu probe hits x %.0f ns trap + BPF = %.1f ms, %.0f ns per call, "
			 "%.2f%% of the targets' CPU",
			 (unsigned long long)r->hits, r->trap_ns, r->cost_ns / 1e6, r->per_call_ns,
			 r->share * 100);
	else
		snprintf(buf, len, "%.0f ns per call of BPF time (trap cost unknown)",
			 r->per_call_ns);
}

void alloc_log_cost(const struct alloc_results *r)
{
	char t[256];

	if (!r->have)
		return;
	cost_text(r, t, sizeof(t));
	if (r->share > ALLOC_COST_WARN_SHARE)
		log_warn("alloc: the allocator probes cost %s (above %.0f%%: every call traps, "
			 "whatever --alloc-rate%s)",
			 t, ALLOC_COST_WARN_SHARE * 100,
			 r->attach ? "; launch mode samples inside the process" : "");
	else
		log_info("alloc: the allocator probes cost %s", t);
}

void alloc_print_summary(const struct alloc_results *r, FILE *out)
{
	char a[32], u[32], rq[32], rate[32], ase[32], use[32], cost[256];

	if (!r->have)
		return;
	human(a, sizeof(a), r->t.alloc_bytes);
	human(u, sizeof(u), r->t.inuse_bytes);
	human(rq, sizeof(rq), (double)r->bytes);
	human(rate, sizeof(rate), (double)r->rate);
	human(ase, sizeof(ase), ALLOC_Z95 * r->alloc_se);
	human(use, sizeof(use), ALLOC_Z95 * r->inuse_se);
	fprintf(out, "Allocations (--alloc, one stack per %s): %llu calls, %llu frees, %s asked\n",
		rate, (unsigned long long)r->calls, (unsigned long long)r->frees, rq);
	fprintf(out,
		"  estimated from %llu samples: %s allocated (+/- %s), %s still live at the end "
		"(+/- %s; 95%%, sampling)\n",
		(unsigned long long)r->samples, a, ase, u, use);
	for (size_t i = 0; i < r->ntop; i++) {
		human(a, sizeof(a), r->top_bytes[i]);
		fprintf(out, "  %-10s %s\n", a, r->top[i]);
	}
	for (size_t i = 0; i < r->nleak; i++)
		fprintf(out, "  LEAK %s\n", r->leak[i]);
	if (r->dropped)
		fprintf(out, "  dropped: %llu (report.json memory.alloc.dropped)\n",
			(unsigned long long)r->dropped);
	cost_text(r, cost, sizeof(cost));
	fprintf(out, "  cost: %s\n", cost);
	if (r->share > ALLOC_COST_WARN_SHARE)
		fprintf(out,
			"  WARNING: --alloc costs the targets more than %.0f%% of their CPU: every "
			"allocator call traps into the kernel, whatever --alloc-rate; times "
			"measured with --alloc are inflated (finding alloc_probe_cost)\n",
			ALLOC_COST_WARN_SHARE * 100);
}

void alloc_results_free(struct alloc_results *res)
{
	(void)res;
}

/* Appends a finding; takes t, e and r (freed on failure). */
static int push_finding(struct findings *f, const char *rule, enum finding_severity sev, char *t,
			char *e, char *r, double value, double threshold)
{
	struct finding *v;

	v = t && e && r ? realloc(f->v, (f->n + 1) * sizeof(*v)) : NULL;
	if (!v) {
		free(t);
		free(e);
		free(r);
		return -ENOMEM;
	}
	f->v = v;
	f->v[f->n++] = (struct finding){ rule, sev, t, e, r, value, threshold, NULL, 0 };
	return 0;
}

static int leak_finding(const cJSON *l, struct findings *f)
{
	const cJSON *fn = cJSON_GetObjectItemCaseSensitive(l, "function");
	const cJSON *sl = cJSON_GetObjectItemCaseSensitive(l, "bytes_per_cycle");
	const cJSON *se = cJSON_GetObjectItemCaseSensitive(l, "bytes_per_cycle_se");
	const cJSON *lo = cJSON_GetObjectItemCaseSensitive(l, "bytes_per_cycle_low");
	const cJSON *hi = cJSON_GetObjectItemCaseSensitive(l, "bytes_per_cycle_high");
	const cJSON *fc = cJSON_GetObjectItemCaseSensitive(l, "first_cycle");
	const cJSON *lc = cJSON_GetObjectItemCaseSensitive(l, "last_cycle");
	const cJSON *nc = cJSON_GetObjectItemCaseSensitive(l, "cycles");
	const cJSON *lb = cJSON_GetObjectItemCaseSensitive(l, "live_bytes");
	const cJSON *lbse = cJSON_GetObjectItemCaseSensitive(l, "live_bytes_se");
	double low, high, live_hw;
	char *t = NULL, *e = NULL, *r = NULL;

	if (!cJSON_IsString(fn) || !cJSON_IsNumber(sl) || !cJSON_IsNumber(se) ||
	    !cJSON_IsNumber(fc) || !cJSON_IsNumber(lc) || !cJSON_IsNumber(nc) ||
	    !cJSON_IsNumber(lb))
		return 0;
	/* Reports before the interval was stated: the slope +/- 1.96 se. */
	low = cJSON_IsNumber(lo) ? lo->valuedouble : sl->valuedouble - ALLOC_Z95 * se->valuedouble;
	high = cJSON_IsNumber(hi) ? hi->valuedouble : sl->valuedouble + ALLOC_Z95 * se->valuedouble;
	live_hw = cJSON_IsNumber(lbse) ? ALLOC_Z95 * lbse->valuedouble : 0;
	if (asprintf(&t, "%s keeps %.0f KiB more each cycle (95%%: %.0f..%.0f KiB)",
		     fn->valuestring, sl->valuedouble / 1024, low / 1024, high / 1024) < 0)
		t = NULL;
	if (asprintf(&e,
		     "sampled allocations still live at each cycle's end, allocated in %s: "
		     "least-squares growth %.0f KiB per cycle over %.0f cycles, 95%% interval "
		     "%.0f..%.0f KiB (sampling and fit); its live blocks were allocated in "
		     "cycles %.0f..%.0f; %.1f MiB (+/- %.1f) live at the last cycle's end "
		     "(report.json memory.alloc.leaks)",
		     fn->valuestring, sl->valuedouble / 1024, nc->valuedouble, low / 1024,
		     high / 1024, fc->valuedouble, lc->valuedouble, lb->valuedouble / 1048576,
		     live_hw / 1048576) < 0)
		e = NULL;
	if (asprintf(&r,
		     "Memory allocated by %s is not freed by the end of its cycle: free it "
		     "there, or bound the structure that keeps it (inuse.folded shows the "
		     "full stacks).",
		     fn->valuestring) < 0)
		r = NULL;
	return push_finding(f, "alloc_leak", FIND_WARNING, t, e, r, sl->valuedouble, 0);
}

static int cost_finding(const cJSON *c, struct findings *f)
{
	const cJSON *share = cJSON_GetObjectItemCaseSensitive(c, "target_cpu_share");
	const cJSON *mode = cJSON_GetObjectItemCaseSensitive(c, "mode");
	const cJSON *hits = cJSON_GetObjectItemCaseSensitive(c, "probe_hits");
	const cJSON *trap = cJSON_GetObjectItemCaseSensitive(c, "trap_ns");
	const cJSON *est = cJSON_GetObjectItemCaseSensitive(c, "estimated_ns");
	const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(c, "target_cpu_ns");
	const cJSON *samp = cJSON_GetObjectItemCaseSensitive(c, "sampled_path_ns");
	bool attach = cJSON_IsString(mode) && !strcmp(mode->valuestring, "attach");
	double sampled;
	char *t = NULL, *e = NULL, *r = NULL;

	if (!cJSON_IsNumber(share) || !(share->valuedouble > ALLOC_COST_WARN_SHARE) ||
	    !cJSON_IsNumber(hits) || !cJSON_IsNumber(trap) || !cJSON_IsNumber(est) ||
	    !(est->valuedouble > 0))
		return 0;
	/* The stack walks are the part a larger rate makes rarer. */
	sampled = cJSON_IsNumber(samp) ? samp->valuedouble / est->valuedouble : 0;
	if (asprintf(&t, "Allocation probes take %.1f%% of the target's CPU",
		     share->valuedouble * 100) < 0)
		t = NULL;
	if (asprintf(&e,
		     "%.0f probe hits (every allocator call and free, whatever --alloc-rate) x "
		     "%.0f ns per trap (calibrated this run) + the probes' BPF time = %.1f ms, "
		     "%.1f%% of the targets' %.1f ms on CPU (threshold %.0f%%); stack walks of "
		     "sampled calls: %.0f%% of it (report.json memory.alloc.cost)",
		     hits->valuedouble, trap->valuedouble, est->valuedouble / 1e6,
		     share->valuedouble * 100, cJSON_IsNumber(cpu) ? cpu->valuedouble / 1e6 : 0,
		     ALLOC_COST_WARN_SHARE * 100, sampled * 100) < 0)
		e = NULL;
	if (asprintf(&r, "%s%s",
		     attach ? "Start the program under ebpf-prof instead of attaching to it "
			      "(ebpf-prof --alloc -- COMMAND): launch mode samples allocations "
			      "inside the process, without a trap per call. "
			    : "Every allocator call of this run trapped into the kernel. ",
		     sampled >= 0.25
			     ? "A larger --alloc-rate (e.g. twice this one) makes the stack walks, "
			       "a large part of this cost, rarer; the times measured with --alloc "
			       "are inflated by this cost."
			     : "A larger --alloc-rate would not help much: the traps, not the "
			       "stack walks, are most of this cost; the times measured with "
			       "--alloc are inflated by it.") < 0)
		r = NULL;
	return push_finding(f, "alloc_probe_cost",
			    share->valuedouble > 0.10 ? FIND_CRITICAL : FIND_WARNING, t, e, r,
			    share->valuedouble, ALLOC_COST_WARN_SHARE);
}

int alloc_findings_from_report(const cJSON *root, struct findings *f)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(root, "memory"), "alloc");
	const cJSON *leaks = cJSON_GetObjectItemCaseSensitive(a, "leaks"), *l;
	int err = 0;

	cJSON_ArrayForEach(l, leaks)
	{
		err = leak_finding(l, f);
		if (err)
			return err;
	}
	return cost_finding(cJSON_GetObjectItemCaseSensitive(a, "cost"), f);
}
