// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The shared report.json reader (report_read.h). */
#include "report/report_read.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cycles/cycles_json.h"
#include "report/findings.h"
#include "util/json_write.h"

/* Largest double below 2^64: anything above does not fit a u64. */
#define RR_U64_LIMIT 18446744073709549568.0
/* A sample standing for more than 1000 s of CPU is not a sampling period. */
#define RR_PERIOD_MAX 1e12

enum rr_type {
	RR_OBJ,
	RR_ARR,
	RR_STR,
	RR_BOOL,
	RR_COUNT, /* counts, bytes, nanoseconds: 0 .. 2^64 */
	RR_NUM,	  /* signed (a difference) */
	RR_RATIO, /* 0 .. 1 */
	RR_PERIOD,
	RR_FRAME,    /* an index into flame.frames */
	RR_BUILD_ID, /* a GNU build-id: 2 to 128 lowercase hex digits, even */
};

/* A path: members separated by '.'; "a[]" is each element of array a; "*"
 * each member of an object. Parents come before their members: a member
 * of something of the wrong type is left to its parent's rule. */
struct rr_rule {
	const char *path;
	enum rr_type type;
	bool required;
};

/* Every field report, report.html's rebuild, the findings and diff read. */
static const struct rr_rule rules[] = {
	{ "sampling", RR_OBJ, true },
	{ "sampling.period_ns", RR_PERIOD, true },
	{ "sampling.frequency_hz", RR_COUNT, false },
	{ "samples", RR_OBJ, true },
	{ "samples.total", RR_COUNT, true },
	{ "dropped", RR_OBJ, false },
	{ "dropped.by_cause", RR_OBJ, false },
	{ "dropped.by_cause.*", RR_COUNT, false },
	{ "target", RR_OBJ, false },
	{ "target.command", RR_STR, false },
	{ "target.pids", RR_ARR, false },
	{ "target.pids[]", RR_COUNT, false },
	{ "target.processes", RR_ARR, false },
	{ "target.processes[]", RR_OBJ, false },
	{ "target.processes[].pid", RR_COUNT, false },
	{ "target.processes[].comm", RR_STR, false },
	{ "target.processes[].cmdline", RR_STR, false },
	{ "time", RR_OBJ, false },
	{ "time.duration_ns", RR_COUNT, false },
	{ "time.start_monotonic_ns", RR_COUNT, false },
	{ "time.end_monotonic_ns", RR_COUNT, false },
	{ "top_functions", RR_ARR, false },
	{ "top_functions[]", RR_OBJ, false },
	{ "top_functions[].name", RR_STR, false },
	{ "top_functions[].module", RR_STR, false },
	{ "top_functions[].kernel", RR_BOOL, false },
	{ "top_functions[].self", RR_COUNT, false },
	{ "top_functions[].total", RR_COUNT, false },
	{ "modules", RR_ARR, false },
	{ "modules[]", RR_OBJ, false },
	{ "modules[].path", RR_STR, false },
	{ "modules[].build_id", RR_BUILD_ID, false },
	{ "modules[].samples", RR_COUNT, false },
	{ "flame", RR_OBJ, false },
	{ "flame.total", RR_COUNT, false },
	{ "flame.frames", RR_ARR, false },
	{ "flame.frames[]", RR_OBJ, false },
	{ "flame.frames[].name", RR_STR, false },
	{ "flame.frames[].module", RR_STR, false },
	{ "flame.frames[].kernel", RR_BOOL, false },
	{ "flame.stacks", RR_ARR, false },
	{ "flame.stacks[]", RR_OBJ, false },
	{ "flame.stacks[].n", RR_COUNT, false },
	{ "flame.stacks[].f", RR_ARR, false },
	{ "flame.stacks[].f[]", RR_FRAME, false },
	{ "probes", RR_OBJ, false },
	{ "probes.list", RR_ARR, false },
	{ "probes.list[]", RR_OBJ, false },
	{ "probes.list[].label", RR_STR, false },
	{ "probes.list[].symbol", RR_STR, false },
	{ "probes.list[].library", RR_STR, false },
	{ "probes.list[].group", RR_STR, false },
	{ "probes.list[].count", RR_COUNT, false },
	{ "probes.list[].total_ns", RR_COUNT, false },
	{ "probes.list[].p50_ns", RR_COUNT, false },
	{ "probes.list[].p99_ns", RR_COUNT, false },
	{ "probes.list[].max_ns", RR_COUNT, false },
	{ "probes.list[].nested_sql", RR_COUNT, false },
	{ "probes.list[].mode", RR_STR, false },
	{ "probes.tokens", RR_OBJ, false },
	{ "probes.tokens.count", RR_COUNT, false },
	{ "probes.tokens.tokens_per_s", RR_COUNT, false },
	{ "probes.classes", RR_OBJ, false },
	{ "probes.classes.*", RR_OBJ, false },
	{ "probes.classes.*.ns", RR_COUNT, false },
	{ "probes.classes.*.calls", RR_COUNT, false },
	{ "sql", RR_OBJ, false },
	{ "sql.statements", RR_ARR, false },
	{ "sql.statements[]", RR_OBJ, false },
	{ "sql.statements[].text", RR_STR, false },
	{ "sql.statements[].count", RR_COUNT, false },
	{ "sql.statements[].rows", RR_COUNT, false },
	{ "sql.statements[].total_ns", RR_COUNT, false },
	{ "sql.statements[].p50_ns", RR_COUNT, false },
	{ "sql.statements[].p99_ns", RR_COUNT, false },
	{ "sql.statements[].max_ns", RR_COUNT, false },
	{ "memory", RR_OBJ, false },
	{ "memory.peak_rss_bytes", RR_COUNT, false },
	{ "memory.system_ram_bytes", RR_COUNT, false },
	{ "memory.timeline", RR_ARR, false },
	{ "memory.timeline[]", RR_OBJ, false },
	{ "memory.timeline[].t_s", RR_COUNT, false },
	{ "memory.timeline[].rss_bytes", RR_COUNT, false },
	{ "memory.timeline[].pid", RR_COUNT, false },
	{ "throttling", RR_OBJ, false },
	{ "throttling.throttled_share", RR_RATIO, false },
	{ "throttling.episodes", RR_ARR, false },
	{ "throttling.episodes[]", RR_OBJ, false },
	{ "throttling.episodes[].start_s", RR_COUNT, false },
	{ "throttling.episodes[].end_s", RR_COUNT, false },
	{ "gpu", RR_OBJ, false },
	{ "gpu.energy_j", RR_COUNT, false },
	{ "gpu.metrics", RR_OBJ, false },
	{ "gpu.metrics.total_mw", RR_OBJ, false },
	{ "gpu.metrics.total_mw.mean", RR_COUNT, false },
	{ "sched", RR_OBJ, false },
	{ "sched.off_cpu_ns", RR_COUNT, false },
	{ "sched.on_cpu_ns", RR_COUNT, false },
	{ "sched.off_cpu_by_reason", RR_OBJ, false },
	{ "sched.off_cpu_by_reason.*", RR_COUNT, false },
	{ "sched.runqueue_latency_ns", RR_OBJ, false },
	{ "sched.runqueue_latency_ns.p99", RR_COUNT, false },
	{ "sched.threads", RR_ARR, false },
	{ "sched.threads[]", RR_OBJ, false },
	{ "sched.threads[].tid", RR_COUNT, false },
	{ "sched.threads[].off_cpu_by_reason", RR_OBJ, false },
	{ "sched.threads[].off_cpu_by_reason.*", RR_COUNT, false },
	{ "overhead", RR_OBJ, false },
	{ "overhead.probe_share", RR_RATIO, false },
	{ "overhead.probe_hits", RR_COUNT, false },
	{ "overhead.probe_ns", RR_COUNT, false },
	{ "overhead.target_cpu_ns", RR_COUNT, false },
	{ "cycles_meta", RR_OBJ, false },
	{ "cycles_meta.spec", RR_STR, false },
	{ "cycles_meta.problem", RR_STR, false },
	{ "cycles_meta.py_mechanism", RR_STR, false },
	{ "cycles_whole_run", RR_BOOL, false },
};

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt,
						      ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* ---- cleaning ---- */

char *report_clean_text(const char *s)
{
	char *u = s ? utf8_sanitize(s) : NULL;
	size_t o = 0;

	if (!u)
		return NULL;
	for (size_t i = 0; u[i];) {
		unsigned char c = (unsigned char)u[i];

		if (c == '\t' || c == '\n' || c == '\r') {
			u[o++] = ' ';
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			u[o++] = '?';
			i++;
		} else if (c == 0xc2 && (unsigned char)u[i + 1] >= 0x80 &&
			   (unsigned char)u[i + 1] <= 0x9f) {
			/* U+0080..U+009F: the C1 controls (CSI is U+009B). */
			u[o++] = '?';
			i += 2;
		} else {
			u[o++] = u[i++];
		}
	}
	u[o] = '\0';
	return u;
}

static bool needs_cleaning(const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		if (*c < 0x20 || *c == 0x7f || *c >= 0x80)
			return true; /* non-ASCII: checked in full */
	return false;
}

static int clean_tree(cJSON *n)
{
	for (; n; n = n->next) {
		if (cJSON_IsString(n) && n->valuestring && needs_cleaning(n->valuestring)) {
			char *c = report_clean_text(n->valuestring);
			char *copy;

			if (!c)
				return -ENOMEM;
			copy = cJSON_malloc(strlen(c) + 1);
			if (!copy) {
				free(c);
				return -ENOMEM;
			}
			memcpy(copy, c, strlen(c) + 1);
			free(c);
			cJSON_free(n->valuestring);
			n->valuestring = copy;
		}
		if (n->child && clean_tree(n->child))
			return -ENOMEM;
	}
	return 0;
}

/* ---- checking ---- */

struct walk {
	const struct rr_rule *rule;
	int nframes; /* flame.frames, -1: none */
	char *err;
	size_t errlen;
	const char *name;
};

static int check_value(struct walk *w, const cJSON *v, const char *at)
{
	double d;

	switch (w->rule->type) {
	case RR_OBJ:
		return cJSON_IsObject(v)
			       ? 0
			       : fail(w->err, w->errlen, "%s: %s: not an object", w->name, at);
	case RR_ARR:
		return cJSON_IsArray(v)
			       ? 0
			       : fail(w->err, w->errlen, "%s: %s: not an array", w->name, at);
	case RR_STR:
		return cJSON_IsString(v) && v->valuestring
			       ? 0
			       : fail(w->err, w->errlen, "%s: %s: not a string", w->name, at);
	case RR_BOOL:
		return cJSON_IsBool(v)
			       ? 0
			       : fail(w->err, w->errlen, "%s: %s: not a boolean", w->name, at);
	case RR_BUILD_ID: {
		/* Compared as text by diff: one spelling only. */
		size_t n = cJSON_IsString(v) && v->valuestring ? strlen(v->valuestring) : 0;

		if (!n || n > 128 || n % 2 || strspn(v->valuestring, "0123456789abcdef") != n)
			return fail(w->err, w->errlen,
				    "%s: %s: not a build-id (2 to 128 lowercase hex digits)",
				    w->name, at);
		return 0;
	}
	default:
		break;
	}
	if (!cJSON_IsNumber(v))
		return fail(w->err, w->errlen, "%s: %s: not a number", w->name, at);
	d = v->valuedouble;
	switch (w->rule->type) {
	case RR_COUNT:
		if (!isfinite(d) || d < 0 || d > RR_U64_LIMIT)
			return fail(w->err, w->errlen, "%s: %s: %g out of range (0 to 2^64)",
				    w->name, at, d);
		return 0;
	case RR_NUM:
		if (!isfinite(d) || fabs(d) > 9.2e18)
			return fail(w->err, w->errlen, "%s: %s: %g out of range", w->name, at, d);
		return 0;
	case RR_RATIO:
		if (!isfinite(d) || d < 0 || d > 1)
			return fail(w->err, w->errlen, "%s: %s: %g out of range (0 to 1)", w->name,
				    at, d);
		return 0;
	case RR_PERIOD:
		if (!isfinite(d) || d <= 0 || d > RR_PERIOD_MAX)
			return fail(w->err, w->errlen, "%s: %s: %g is not a sampling period in ns",
				    w->name, at, d);
		return 0;
	case RR_FRAME:
		if (!isfinite(d) || d < 0 || d != floor(d) || d >= (double)w->nframes)
			return fail(w->err, w->errlen,
				    "%s: %s: %g is not an index of flame.frames (%d of them)",
				    w->name, at, d, w->nframes < 0 ? 0 : w->nframes);
		return 0;
	default:
		return 0;
	}
}

/* Follows path (what is left of the rule's) from node; at names where. */
static int walk(struct walk *w, const cJSON *node, const char *path, char *at, size_t atlen)
{
	size_t seg = strcspn(path, "."), used = strlen(at);
	const char *rest = path[seg] ? path + seg + 1 : NULL;
	bool each = seg >= 2 && !strncmp(path + seg - 2, "[]", 2);
	size_t nlen = each ? seg - 2 : seg;
	const cJSON *child;
	int e = 0;

	if (!cJSON_IsObject(node))
		return 0; /* reported by the parent's rule */
	if (nlen == 1 && path[0] == '*') {
		cJSON_ArrayForEach(child, node)
		{
			snprintf(at + used, atlen - used, "%s%s", used ? "." : "", child->string);
			e = rest ? walk(w, child, rest, at, atlen)
				 : (cJSON_IsNull(child) ? 0 : check_value(w, child, at));
			at[used] = '\0';
			if (e)
				return e;
		}
		return 0;
	}
	{
		char name[64];

		if (nlen >= sizeof(name))
			return 0;
		memcpy(name, path, nlen);
		name[nlen] = '\0';
		child = cJSON_GetObjectItemCaseSensitive(node, name);
		snprintf(at + used, atlen - used, "%s%s", used ? "." : "", name);
	}
	if (!child || cJSON_IsNull(child)) {
		if (w->rule->required)
			e = fail(w->err, w->errlen, "%s: %s: missing", w->name, at);
		at[used] = '\0';
		return e;
	}
	if (each) {
		const cJSON *x;
		size_t i = 0, u2 = strlen(at);

		if (!cJSON_IsArray(child)) {
			at[used] = '\0';
			return 0; /* the array's own rule says so */
		}
		cJSON_ArrayForEach(x, child)
		{
			snprintf(at + u2, atlen - u2, "[%zu]", i++);
			if (rest)
				e = cJSON_IsObject(x) ? walk(w, x, rest, at, atlen) : 0;
			else
				e = check_value(w, x, at);
			at[u2] = '\0';
			if (e)
				break;
		}
		at[used] = '\0';
		return e;
	}
	e = rest ? walk(w, child, rest, at, atlen) : check_value(w, child, at);
	at[used] = '\0';
	return e;
}

static int check_tree(const cJSON *root, const char *name, char *err, size_t errlen)
{
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema"), *x;
	const cJSON *frames = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(root, "flame"), "frames");
	struct walk w = { NULL, cJSON_IsArray(frames) ? cJSON_GetArraySize(frames) : -1, err,
			  errlen, name };
	char at[256];
	int e;

	if (!cJSON_IsString(schema) || !schema->valuestring)
		return fail(err, errlen, "%s: no \"schema\" field: not an ebpf-prof report", name);
	if (strcmp(schema->valuestring, "ebpf-prof/1"))
		return fail(err, errlen,
			    "%s: schema \"%.40s\" is not supported (this version reads "
			    "\"ebpf-prof/1\")",
			    name, schema->valuestring);
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		w.rule = &rules[i];
		at[0] = '\0';
		e = walk(&w, root, rules[i].path, at, sizeof(at));
		if (e)
			return e;
	}
	/* The cycle rows and the findings, as `report` reads them. */
	x = cJSON_GetObjectItemCaseSensitive(root, "cycles");
	if (x && !cJSON_IsNull(x)) {
		struct cycle_table t;
		char why[200] = "";

		e = cycles_from_json(x, &t, why, sizeof(why));
		if (e)
			return e == -EINVAL ? fail(err, errlen, "%s: %s", name, why) : e;
		cycle_table_free(&t);
	}
	x = cJSON_GetObjectItemCaseSensitive(root, "findings");
	if (x && !cJSON_IsNull(x)) {
		struct findings f = { 0 };
		char why[200] = "";

		e = findings_from_json(x, &f, why, sizeof(why));
		if (e)
			return e == -EINVAL ? fail(err, errlen, "%s: %s", name, why) : e;
		findings_free(&f);
	}
	return 0;
}

int report_parse(const char *name, const char *text, size_t len, cJSON **root, char *err,
		 size_t errlen)
{
	char *shown = report_clean_text(name ? name : "report.json");
	cJSON *r = NULL;
	int e;

	*root = NULL;
	if (!shown)
		return -ENOMEM;
	if (!len) {
		e = fail(err, errlen, "%s: empty file", shown);
		goto out;
	}
	r = cJSON_ParseWithLength(text, len);
	if (!r) {
		e = fail(err, errlen, "%s: not valid JSON (truncated or corrupt file, %zu bytes)",
			 shown, len);
		goto out;
	}
	if (!cJSON_IsObject(r)) {
		e = fail(err, errlen, "%s: top level is not a JSON object", shown);
		goto out;
	}
	e = clean_tree(r);
	if (e) {
		snprintf(err, errlen, "%s: out of memory", shown);
		goto out;
	}
	e = check_tree(r, shown, err, errlen);
	if (e == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", shown);
out:
	if (e)
		cJSON_Delete(r);
	else
		*root = r;
	free(shown);
	return e;
}

int report_read(const char *dir, cJSON **root, char *err, size_t errlen)
{
	char *shown = report_clean_text(dir ? dir : "?"), path[4096];
	struct stat st;
	int dfd = -1, fd = -1, e;
	char *buf = NULL;
	size_t n = 0, cap;

	*root = NULL;
	if (!shown)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/report.json", shown);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		e = -errno;
		if (e == -ENOTDIR)
			fail(err, errlen,
			     "%s: not a directory (give the result directory of a "
			     "recording)",
			     shown);
		else
			fail(err, errlen, "%s: %s", shown, strerror(-e));
		goto out;
	}
	/* O_NONBLOCK: a FIFO named report.json must not hang the open;
	 * O_NOFOLLOW: a link is refused, whatever it points to. */
	fd = openat(dfd, "report.json", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		e = -errno;
		if (e == -ENOENT)
			fail(err, errlen,
			     "%s: no report.json (not a result directory of ebpf-prof?)", shown);
		else if ((e == -ELOOP || e == -EMLINK) &&
			 !fstatat(dfd, "report.json", &st, AT_SYMLINK_NOFOLLOW) &&
			 S_ISLNK(st.st_mode))
			fail(err, errlen,
			     "%s: a symbolic link: not followed (copy the file itself into the "
			     "directory)",
			     path);
		else
			fail(err, errlen, "%s: %s", path, strerror(-e));
		goto out;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		e = fail(err, errlen, "%s: not a regular file", path);
		goto out;
	}
	if (st.st_size > (off_t)RR_MAX_BYTES) {
		e = -EFBIG;
		fail(err, errlen, "%s: %lld bytes, more than a report.json can be (%u MB)", path,
		     (long long)st.st_size, RR_MAX_BYTES >> 20);
		goto out;
	}
	cap = (size_t)st.st_size;
	buf = malloc(cap + 1);
	if (!buf) {
		e = -ENOMEM;
		fail(err, errlen, "%s: out of memory", path);
		goto out;
	}
	while (n < cap) {
		ssize_t got = read(fd, buf + n, cap - n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			e = -errno;
			fail(err, errlen, "%s: read: %s", path, strerror(-e));
			goto out;
		}
		if (!got)
			break;
		n += (size_t)got;
	}
	buf[n] = '\0';
	e = report_parse(path, buf, n, root, err, errlen);
out:
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	free(buf);
	free(shown);
	return e;
}
