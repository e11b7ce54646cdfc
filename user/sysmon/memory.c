// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Memory bookkeeping and /proc parsers (see memory.h). */
#include "sysmon/memory.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_write.h"

int mem_init(struct memstate *m, size_t tl_cap)
{
	memset(m, 0, sizeof(*m));
	m->tl_cap = tl_cap ? tl_cap : MEM_TIMELINE_CAP;
	if (m->tl_cap < 2)
		m->tl_cap = 2;
	m->tl = calloc(m->tl_cap, sizeof(*m->tl));
	m->stride = 1;
	m->total_ram = -1;
	return m->tl ? 0 : -ENOMEM;
}

void mem_free(struct memstate *m)
{
	free(m->procs);
	free(m->tl);
	pid_index_free(&m->pidx);
	memset(m, 0, sizeof(*m));
}

struct mem_proc *mem_proc(struct memstate *m, uint32_t pid, bool create)
{
	/* Indexed: a scan, even newest first, was quadratic in a fork storm
	 * (a pid looked up and not there scanned every record). */
	int64_t i;

	if (!m->pidx.stride)
		pid_index_init(&m->pidx, sizeof(*m->procs), offsetof(struct mem_proc, pid));
	i = pid_index_find(&m->pidx, m->procs, pid);
	if (i >= 0)
		return &m->procs[i];
	if (!create)
		return NULL;
	if (m->nprocs == m->cap_procs) {
		size_t nc = m->cap_procs ? 2 * m->cap_procs : 8;
		struct mem_proc *nv = realloc(m->procs, nc * sizeof(*nv));

		if (!nv)
			return NULL;
		m->procs = nv;
		m->cap_procs = nc;
	}
	struct mem_proc *p = &m->procs[m->nprocs++];

	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->rss = p->vm = p->hwm = -1;
	p->anon = p->file = p->shmem = p->swap = -1;
	p->peak_rss = p->peak_vm = -1;
	p->pre_exec_peak_rss = -1;
	if (pid_index_add(&m->pidx, pid, (uint32_t)(m->nprocs - 1))) {
		m->nprocs--;
		return NULL;
	}
	return p;
}

static void tl_add(struct memstate *m, uint64_t ts, const struct mem_proc *p)
{
	if (m->skip) {
		m->skip--;
		return;
	}
	if (m->ntl == m->tl_cap) {
		/* Halve: the timeline keeps covering the whole run. */
		size_t k = 0;

		for (size_t i = 0; i < m->ntl; i += 2)
			m->tl[k++] = m->tl[i];
		m->ntl = k;
		m->stride *= 2;
	}
	/* In time order: a /proc sample is stamped when the recorder's poll
	 * began, and rss_stat events stamped after that may already be in
	 * (drained in the same poll), so it can belong a few places back. */
	size_t at = m->ntl;

	while (at > 0 && m->tl[at - 1].ts_ns > ts)
		at--;
	memmove(&m->tl[at + 1], &m->tl[at], (m->ntl - at) * sizeof(*m->tl));
	m->tl[at] = (struct mem_sample){ ts, p->pid, p->rss, p->vm };
	m->ntl++;
	m->skip = m->stride - 1;
}

static void note_peak(struct mem_proc *p, int64_t v, uint64_t ts)
{
	if (v > p->peak_rss) {
		p->peak_rss = v;
		p->peak_ts_ns = ts;
	}
}

void mem_on_rss(struct memstate *m, uint64_t ts, uint32_t pid, uint32_t mm_id,
		const int64_t sizes[4], int64_t peak)
{
	struct mem_proc *p = mem_proc(m, pid, true);

	if (!p)
		return;
	/* Late events of an image already replaced by exec. */
	if (p->execs && p->mm_id && mm_id != p->mm_id)
		return;
	if (p->mm_id != mm_id)
		p->seen = 0;
	p->mm_id = mm_id;
	p->file = sizes[0];
	p->anon = sizes[1];
	p->swap = sizes[2];
	p->shmem = sizes[3];
	/* Every image has file pages (its code) and anonymous ones (its
	 * stack): until both were reported the sum is one member, not the
	 * RSS (a timeline dip 83.9 -> 19.7 -> 83.9 MiB on attach): the /proc
	 * readings stand meanwhile. */
	p->seen |= (sizes[0] > 0 ? 1u : 0) | (sizes[1] > 0 ? 2u : 0);
	if ((p->seen & 3u) != 3u)
		return;
	p->rss = sizes[0] + sizes[1] + sizes[3];
	p->rss_events++;
	note_peak(p, p->rss, ts);
	note_peak(p, peak, ts);
	tl_add(m, ts, p);
}

void mem_on_proc(struct memstate *m, uint64_t ts, uint32_t pid, int64_t vm, int64_t rss,
		 int64_t hwm, bool faults_ok, uint64_t minflt, uint64_t majflt)
{
	struct mem_proc *p = mem_proc(m, pid, true);
	bool changed;

	if (!p)
		return;
	changed = (vm >= 0 && vm != p->vm) || (rss >= 0 && rss != p->rss);
	if (vm >= 0) {
		p->vm = vm;
		if (vm > p->peak_vm)
			p->peak_vm = vm;
	}
	/* Between rss_stat events /proc is the fresher RSS; without the
	 * tracepoint it is the only one. */
	if (rss >= 0) {
		p->rss = rss;
		note_peak(p, rss, ts);
	}
	if (hwm >= 0) {
		p->hwm = hwm;
		/* VmHWM is the kernel's own high-water mark: a peak between
		 * two samples shows up here even without the tracepoint. */
		if (hwm > p->peak_rss) {
			p->peak_rss = hwm;
			p->peak_ts_ns = ts;
		}
	}
	if (faults_ok) {
		p->faults_ok = true;
		p->minflt = minflt;
		p->majflt = majflt;
	}
	if (changed)
		tl_add(m, ts, p);
}

void mem_on_exec(struct memstate *m, uint64_t ts, uint32_t pid)
{
	struct mem_proc *p = mem_proc(m, pid, true);
	size_t k = 0;

	if (!p)
		return;
	if (p->peak_rss > p->pre_exec_peak_rss)
		p->pre_exec_peak_rss = p->peak_rss;
	p->execs++;
	p->mm_id = 0;
	p->rss = p->vm = p->hwm = -1;
	p->anon = p->file = p->shmem = p->swap = -1;
	p->peak_rss = p->peak_vm = -1;
	p->peak_ts_ns = 0;
	for (size_t i = 0; i < m->ntl; i++)
		if (m->tl[i].pid != pid || m->tl[i].ts_ns >= ts)
			m->tl[k++] = m->tl[i];
	m->ntl = k;
}

void mem_on_oom(struct memstate *m, const struct mem_oom *o)
{
	if (m->nooms < MEM_MAX_OOM)
		m->ooms[m->nooms++] = *o;
	else
		m->ooms_dropped++;
}

/* Unsigned decimal with overflow check; advances *s. */
static int parse_u64(const char **s, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*s = p;
	*out = v;
	return 0;
}

int mem_parse_statm(const char *text, long page_size, int64_t *vm, int64_t *rss)
{
	const char *p = text;
	uint64_t size, res;

	if (!text || page_size <= 0)
		return -EINVAL;
	if (parse_u64(&p, &size) || *p != ' ')
		return -EINVAL;
	p++;
	if (parse_u64(&p, &res) || (*p != ' ' && *p != '\n' && *p))
		return -EINVAL;
	/* Pages beyond 2^63 bytes are garbage, not a process. */
	if (size > (uint64_t)INT64_MAX / (uint64_t)page_size || res > size)
		return -ERANGE;
	*vm = (int64_t)(size * (uint64_t)page_size);
	*rss = (int64_t)(res * (uint64_t)page_size);
	return 0;
}

int mem_parse_stat_faults(const char *text, uint64_t *minflt, uint64_t *majflt)
{
	/* comm may contain ") " itself: the real end is the last ')'. */
	const char *p = text ? strrchr(text, ')') : NULL;
	uint64_t v[11];

	if (!p || p[1] != ' ')
		return -EINVAL;
	p += 2;
	/* state, then ppid pgrp session tty_nr tpgid flags minflt cminflt majflt */
	if (!isalpha((unsigned char)*p) || p[1] != ' ')
		return -EINVAL;
	p += 2;
	for (int i = 0; i < 9; i++) {
		if (*p == '-') /* tty_nr / tpgid may be negative */
			p++;
		if (parse_u64(&p, &v[i]) || *p != ' ')
			return -EINVAL;
		p++;
	}
	*minflt = v[6];
	*majflt = v[8];
	return 0;
}

int mem_parse_status_hwm(const char *text, int64_t *hwm)
{
	const char *p = text ? strstr(text, "\nVmHWM:") : NULL;
	uint64_t kb;

	if (!p)
		return text && !strncmp(text, "VmHWM:", 6) ? -EINVAL : -ENOENT;
	p += 7;
	while (*p == ' ' || *p == '\t')
		p++;
	if (parse_u64(&p, &kb) || strncmp(p, " kB", 3) != 0)
		return -EINVAL;
	if (kb > (uint64_t)INT64_MAX / 1024)
		return -ERANGE;
	*hwm = (int64_t)kb * 1024;
	return 0;
}

static void add_bytes(cJSON *o, const char *k, int64_t v)
{
	if (v >= 0)
		cJSON_AddNumberToObject(o, k, (double)v);
	else
		cJSON_AddNullToObject(o, k);
}

/* Exited processes by peak RSS, largest first; the earlier one first on a
 * tie (the named process before its children). */
static int cmp_exited(const void *a, const void *b, void *ctx)
{
	const struct mem_proc *procs = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (procs[x].peak_rss != procs[y].peak_rss)
		return procs[x].peak_rss > procs[y].peak_rss ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Which processes report.json lists: all live ones, and the
 * MEM_MAX_EXITED_LISTED exited ones with the largest peaks. NULL: all. */
static bool *listed_procs(const struct memstate *m, size_t *nlisted)
{
	size_t nexited = 0, *idx;
	bool *keep;

	*nlisted = m->nprocs;
	for (size_t i = 0; i < m->nprocs; i++)
		nexited += m->procs[i].exited;
	if (nexited <= MEM_MAX_EXITED_LISTED)
		return NULL;
	keep = calloc(m->nprocs, sizeof(*keep));
	idx = malloc(nexited * sizeof(*idx));
	if (!keep || !idx) {
		free(keep);
		free(idx);
		return NULL;
	}
	nexited = 0;
	for (size_t i = 0; i < m->nprocs; i++) {
		if (m->procs[i].exited)
			idx[nexited++] = i;
		else
			keep[i] = true;
	}
	qsort_r(idx, nexited, sizeof(*idx), cmp_exited, m->procs);
	for (size_t i = 0; i < MEM_MAX_EXITED_LISTED; i++)
		keep[idx[i]] = true;
	*nlisted = m->nprocs - nexited + MEM_MAX_EXITED_LISTED;
	free(idx);
	return keep;
}

cJSON *mem_report_json(const struct memstate *m, uint64_t t0)
{
	cJSON *root = cJSON_CreateObject(), *procs, *tl, *ooms, *src;
	int64_t peak_all = -1;
	size_t nlisted;
	bool *keep;

	if (!root)
		return NULL;
	src = cJSON_AddObjectToObject(root, "sources");
	cJSON_AddStringToObject(src, "rss", m->rss_tracepoint ? "kmem/rss_stat" : "/proc sampling");
	if (m->rss_tracepoint)
		cJSON_AddStringToObject(src, "rss_program", m->rss_raw ? "tp_btf" : "tracepoint");
	cJSON_AddStringToObject(src, "vm_size", "/proc/PID/statm sampling");
	cJSON_AddStringToObject(src, "faults", "/proc/PID/stat sampling");
	cJSON_AddStringToObject(src, "oom", m->oom_tracepoint ? "oom/mark_victim" : "unavailable");
	cJSON_AddNumberToObject(src, "sample_period_ms", m->sample_period_ms);
	cJSON_AddNumberToObject(src, "rss_step_bytes", (double)m->rss_step);
	add_bytes(root, "system_ram_bytes", m->total_ram);
	keep = listed_procs(m, &nlisted);
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].peak_rss > peak_all)
			peak_all = m->procs[i].peak_rss;
	cJSON_AddNumberToObject(root, "processes_not_listed", (double)(m->nprocs - nlisted));
	procs = cJSON_AddArrayToObject(root, "processes");
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct mem_proc *p = &m->procs[i];
		cJSON *o;
		cJSON *f;

		if (keep && !keep[i])
			continue;
		o = cJSON_CreateObject();
		cJSON_AddItemToArray(procs, o);
		cJSON_AddNumberToObject(o, "pid", p->pid);
		add_bytes(o, "peak_rss_bytes", p->peak_rss);
		if (p->peak_rss >= 0 && m->total_ram > 0)
			cJSON_AddNumberToObject(o, "peak_rss_pct_of_ram",
						100.0 * (double)p->peak_rss / (double)m->total_ram);
		else
			cJSON_AddNullToObject(o, "peak_rss_pct_of_ram");
		if (p->peak_rss >= 0)
			cJSON_AddNumberToObject(
				o, "peak_t_s", p->peak_ts_ns > t0 ? (p->peak_ts_ns - t0) / 1e9 : 0);
		else
			cJSON_AddNullToObject(o, "peak_t_s");
		add_bytes(o, "peak_vm_bytes", p->peak_vm);
		add_bytes(o, "vm_hwm_bytes", p->hwm);
		add_bytes(o, "last_rss_bytes", p->rss);
		add_bytes(o, "last_vm_bytes", p->vm);
		add_bytes(o, "anon_bytes", p->anon);
		add_bytes(o, "file_bytes", p->file);
		add_bytes(o, "shmem_bytes", p->shmem);
		add_bytes(o, "swap_bytes", p->swap);
		cJSON_AddNumberToObject(o, "rss_events", (double)p->rss_events);
		f = cJSON_AddObjectToObject(o, "faults");
		if (p->faults_ok) {
			cJSON_AddNumberToObject(f, "minor", (double)p->minflt);
			cJSON_AddNumberToObject(f, "major", (double)p->majflt);
		} else {
			cJSON_AddNullToObject(f, "minor");
			cJSON_AddNullToObject(f, "major");
		}
		cJSON_AddBoolToObject(o, "exited", p->exited);
		cJSON_AddNumberToObject(o, "execs", p->execs);
		add_bytes(o, "pre_exec_peak_rss_bytes", p->pre_exec_peak_rss);
	}
	free(keep);
	add_bytes(root, "peak_rss_bytes", peak_all);
	if (peak_all >= 0 && m->total_ram > 0)
		cJSON_AddNumberToObject(root, "peak_rss_pct_of_ram",
					100.0 * (double)peak_all / (double)m->total_ram);
	else
		cJSON_AddNullToObject(root, "peak_rss_pct_of_ram");
	tl = cJSON_AddArrayToObject(root, "timeline");
	for (size_t i = 0; i < m->ntl; i++) {
		const struct mem_sample *s = &m->tl[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddItemToArray(tl, o);
		cJSON_AddNumberToObject(o, "t_s", s->ts_ns > t0 ? (s->ts_ns - t0) / 1e9 : 0);
		cJSON_AddNumberToObject(o, "pid", s->pid);
		add_bytes(o, "rss_bytes", s->rss);
		add_bytes(o, "vm_bytes", s->vm);
	}
	cJSON_AddNumberToObject(root, "timeline_stride", m->stride);
	ooms = cJSON_AddArrayToObject(root, "oom_kills");
	for (size_t i = 0; i < m->nooms; i++) {
		const struct mem_oom *k = &m->ooms[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddItemToArray(ooms, o);
		cJSON_AddNumberToObject(o, "t_s", k->ts_ns > t0 ? (k->ts_ns - t0) / 1e9 : 0);
		cJSON_AddNumberToObject(o, "pid", k->pid);
		cJSON_AddStringToObject(o, "comm", k->comm);
		cJSON_AddNumberToObject(o, "total_vm_kb", (double)k->total_vm_kb);
		cJSON_AddNumberToObject(o, "anon_rss_kb", (double)k->anon_rss_kb);
		cJSON_AddNumberToObject(o, "file_rss_kb", (double)k->file_rss_kb);
		cJSON_AddNumberToObject(o, "shmem_rss_kb", (double)k->shmem_rss_kb);
	}
	cJSON_AddNumberToObject(root, "oom_kills_dropped", (double)m->ooms_dropped);
	return root;
}

int mem_trace_events(const struct memstate *m, FILE *out, bool *first)
{
	for (size_t i = 0; i < m->ntl; i++) {
		const struct mem_sample *s = &m->tl[i];

		if (s->rss < 0 && s->vm < 0)
			continue;
		if (!*first)
			fputc(',', out);
		*first = false;
		fprintf(out,
			"{\"name\":\"memory\",\"cat\":\"memory\",\"ph\":\"C\",\"ts\":%.3f,"
			"\"pid\":%" PRIu32 ",\"args\":{",
			(double)s->ts_ns / 1000.0, s->pid);
		if (s->rss >= 0)
			fprintf(out, "\"rss_mib\":%.3f", (double)s->rss / 1048576.0);
		if (s->vm >= 0)
			fprintf(out, "%s\"vm_mib\":%.3f", s->rss >= 0 ? "," : "",
				(double)s->vm / 1048576.0);
		fputs("}}\n", out);
	}
	return ferror(out) ? -EIO : 0;
}
