// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "util/clock.h"
#include "proc/pid_index.h"
#include "python/pyframes.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "events/cycles.h"
#include "events/unwind.h"
#include "util/hashmap.h"
#include "util/log.h"
#include "proc/proc_maps.h"
#include "python/py_code.h"
#include "python/py_layout.h"
#include "python/py_merge.h"
#include "python/py_proc.h"

/* How often a process without a (ready) interpreter is looked at again:
 * often while it starts (ld.so, then Py_Initialize, take milliseconds and
 * every sample until then stays native), rarely after. "Looked at" is a
 * readlink of its executable; its maps are read only once it looks like
 * Python (that name, or a sample with a frame in libpython). Found but not
 * yet initialized, it is checked every tick (two reads of its memory). */
#define RETRY_FAST_NS  (10ull * 1000 * 1000)
#define RETRY_SLOW_NS  (500ull * 1000 * 1000)
#define FAST_PERIOD_NS (3000ull * 1000 * 1000)
/* How long a failing layout check is retried before the process is given
 * up on (it may have been read mid-initialization). */
#define BAD_LAYOUT_NS (1000ull * 1000 * 1000)
/* Code objects remembered per process; a process that makes more (code
 * generated in a loop, or a hostile one) has its cache emptied and refilled. */
#define MAX_CODES 65536
/* Records kept waiting for their samples: one per CPU. */
#define MAX_CPUS 4096

enum pid_state {
	PS_NONE,    /* no interpreter found (yet) */
	PS_PENDING, /* found, not initialized: checked again later */
	PS_ACTIVE,  /* registered with the BPF walk */
	PS_OFF,	    /* unsupported version or layout: native frames only */
};

struct code_ent {
	uint64_t addr;
	uint32_t csum;
	int err; /* 0, or why it could not be read (then named generically) */
	struct py_code code;
};

struct py_pid {
	uint32_t pid;
	enum pid_state state;
	uint64_t next_try_ns;
	uint64_t first_seen_ns;
	/* A sample had a frame in libpython or a python executable: worth
	 * reading its maps (they are not read for every process: a maps read
	 * takes the process's mmap lock and slows its mmap()s, e.g. dlopen). */
	bool hinted;
	uint64_t first_bad_ns; /* first failed layout check */
	uint64_t active_ns;    /* when it was registered */
	const struct py_layout *l;
	struct py_layout own; /* the table's, with what the interpreter publishes */
	struct py_proc_info info;
	int memfd;
	struct code_ent *codes;
	size_t ncodes, cap_codes;
	struct hashmap code_idx;
	/* pyframes_find_code: code objects already looked at, direct-mapped
	 * by address (allocated at the first scan). */
	uint64_t *scan_seen;
};

/* Per profile frame id: 0 unknown, else py_ncls + 1, for the interpreter
 * module `module`. */
struct cls_cache {
	const struct profile *prof;
	uint8_t *cls;
	size_t ncls;
	char *module;
};

/* The CPU profile's, the off-CPU one's and the allocations' name tables. */
#define PY_CLS_SLOTS 3

struct stash {
	bool valid;
	struct ep_pystack ps;
};

/* Interpreters are looked for on a thread of their own: the collector's
 * first samples of a process can stall it for most of a second (loading
 * the symbols of libpython), and every sample the process makes before its
 * registration stays native. `lock` guards pids[] (the array and the
 * states); a pid's layout, memfd and codes are the watcher's until it sets
 * PS_ACTIVE, the sampling side's after. */
struct pyframes {
	struct pyframes_opts o;
	pthread_mutex_t lock;
	pthread_t watcher;
	bool watcher_started;
	bool stop; /* under lock */
	struct py_pid *pids;
	size_t npids, cap_pids;
	struct pid_index pidx; /* pid -> pids[] */
	struct stash *stash;   /* per CPU, allocated at first use */
	size_t nstash;
	/* Frame classes of the CPU profile and of the others (off-CPU,
	 * allocations), one slot each. */
	struct cls_cache cls[PY_CLS_SLOTS];
	/* As deep as a CPU sample's native stack can be (the kernel's frames
	 * and the walker's): a deeper one was left without its Python frames. */
	uint32_t nat[EP_MAX_STACK_DEPTH + EP_UW_MAX_FRAMES + 8];
	uint8_t ncl[EP_MAX_STACK_DEPTH + EP_UW_MAX_FRAMES + 8];
	uint32_t py[EP_PY_MAX_FRAMES];
	bool entry[EP_PY_MAX_FRAMES];
	uint32_t out[EP_MAX_STACK_DEPTH + EP_UW_MAX_FRAMES + 8 + EP_PY_MAX_FRAMES];
	struct pyframes_stats st;
	/* pyframes_on_code */
	struct py_fnspec code_spec;
	pyframes_code_fn code_fn;
	void *code_ctx;
};

int pyframes_new(struct pyframes **out, const struct pyframes_opts *o)
{
	struct pyframes *pf = calloc(1, sizeof(*pf));

	if (!pf)
		return -ENOMEM;
	pf->o = *o;
	if (!pf->o.proc_root)
		pf->o.proc_root = "/proc";
	pthread_mutex_init(&pf->lock, NULL);
	*out = pf;
	return 0;
}

static void pid_reset(struct py_pid *p)
{
	for (size_t i = 0; i < p->ncodes; i++)
		py_code_free(&p->codes[i].code);
	free(p->codes);
	p->codes = NULL;
	p->ncodes = p->cap_codes = 0;
	ep_hashmap_free(&p->code_idx);
	ep_hashmap_init(&p->code_idx);
	free(p->scan_seen);
	p->scan_seen = NULL;
	if (p->memfd >= 0)
		close(p->memfd);
	p->memfd = -1;
	py_proc_info_free(&p->info);
	p->l = NULL;
}

void pyframes_free(struct pyframes *pf)
{
	if (!pf)
		return;
	if (pf->watcher_started) {
		pthread_mutex_lock(&pf->lock);
		pf->stop = true;
		pthread_mutex_unlock(&pf->lock);
		pthread_join(pf->watcher, NULL);
	}
	pthread_mutex_destroy(&pf->lock);
	for (size_t i = 0; i < pf->npids; i++)
		pid_reset(&pf->pids[i]);
	free(pf->pids);
	pid_index_free(&pf->pidx);
	free(pf->stash);
	for (size_t i = 0; i < PY_CLS_SLOTS; i++) {
		free(pf->cls[i].cls);
		free(pf->cls[i].module);
	}
	free(pf);
}

static struct py_pid *find_pid(struct pyframes *pf, uint32_t pid, bool create)
{
	int64_t i;

	if (!pf->pidx.stride)
		pid_index_init(&pf->pidx, sizeof(*pf->pids), offsetof(struct py_pid, pid));
	i = pid_index_find(&pf->pidx, pf->pids, pid);
	if (i >= 0)
		return &pf->pids[i];
	if (!create)
		return NULL;
	if (pf->npids == pf->cap_pids) {
		size_t cap = pf->cap_pids ? 2 * pf->cap_pids : 8;
		void *p = realloc(pf->pids, cap * sizeof(*pf->pids));

		if (!p)
			return NULL;
		pf->pids = p;
		pf->cap_pids = cap;
	}
	if (pid_index_add(&pf->pidx, pid, (uint32_t)pf->npids))
		return NULL;
	struct py_pid *p = &pf->pids[pf->npids++];

	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->memfd = -1;
	ep_hashmap_init(&p->code_idx);
	return p;
}

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct py_pid *p = ctx;
	ssize_t n;

	if (p->memfd < 0 || addr > (uint64_t)INT64_MAX - len)
		return -EFAULT;
	n = pread(p->memfd, buf, len, (off_t)addr);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static void try_detect(struct pyframes *pf, struct py_pid *p, uint64_t now);

#define WATCH_TICK_NS (2ull * 1000 * 1000)
#define WATCH_IDLE_NS (20ull * 1000 * 1000)

static void *watch_main(void *arg)
{
	struct pyframes *pf = arg;

	for (;;) {
		uint64_t now = mono_ns(), next = now + WATCH_IDLE_NS;
		struct timespec ts;

		pthread_mutex_lock(&pf->lock);
		if (pf->stop) {
			pthread_mutex_unlock(&pf->lock);
			return NULL;
		}
		for (size_t i = 0; i < pf->npids; i++) {
			struct py_pid *p = &pf->pids[i];

			if (p->state != PS_NONE && p->state != PS_PENDING)
				continue;
			if (now >= p->next_try_ns)
				try_detect(pf, p, now);
			if ((p->state == PS_NONE || p->state == PS_PENDING) &&
			    p->next_try_ns < next)
				next = p->next_try_ns;
		}
		pthread_mutex_unlock(&pf->lock);
		/* Sleep to the next attempt due, at least a tick, at most
		 * WATCH_IDLE_NS (a pid added meanwhile waits that long). */
		next = next < now + WATCH_TICK_NS ? WATCH_TICK_NS : next - now;
		ts.tv_sec = (time_t)(next / 1000000000ull);
		ts.tv_nsec = (long)(next % 1000000000ull);
		nanosleep(&ts, NULL);
	}
}

int pyframes_watch(struct pyframes *pf, uint32_t pid, uint64_t delay_ns)
{
	struct py_pid *p;
	int err = 0;

	pthread_mutex_lock(&pf->lock);
	p = find_pid(pf, pid, true);
	if (!p)
		err = -ENOMEM;
	else if (!p->first_seen_ns && p->state == PS_NONE) {
		/* Not looked at yet: a sample (delay 0) brings a delayed
		 * child's first look forward. */
		uint64_t at = delay_ns ? mono_ns() + delay_ns : 0;

		if (!p->next_try_ns || at < p->next_try_ns)
			p->next_try_ns = at;
	}
	if (!err && !pf->watcher_started) {
		err = -pthread_create(&pf->watcher, NULL, watch_main, pf);
		pf->watcher_started = !err;
	}
	pthread_mutex_unlock(&pf->lock);
	return err;
}

static bool name_is_python(const char *path)
{
	const char *base = proc_maps_basename(path);

	return !strncmp(base, "python", 6) || !strncmp(base, "libpython", 9);
}

/* The executable is an interpreter (launch mode: known right at exec, before
 * a sample). readlink takes no mmap lock. */
static bool exe_is_python(struct pyframes *pf, uint32_t pid, bool *gone)
{
	char path[PATH_MAX], exe[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%u/exe", pf->o.proc_root, pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	*gone = n < 0 && errno == ENOENT;
	if (n <= 0)
		return false;
	exe[n] = '\0';
	return name_is_python(exe);
}

static void try_detect(struct pyframes *pf, struct py_pid *p, uint64_t now)
{
	char path[PATH_MAX];
	struct ep_py_proc cfg;
	int err;

	if (!p->first_seen_ns)
		p->first_seen_ns = now;
	p->next_try_ns =
		now + (now - p->first_seen_ns < FAST_PERIOD_NS ? RETRY_FAST_NS : RETRY_SLOW_NS);
	if (p->state == PS_NONE) {
		bool gone = false;

		if (!p->hinted && !exe_is_python(pf, p->pid, &gone)) {
			/* Exited, its exit event not read yet (a fork storm's
			 * child): a retry every 10 ms until then was 13k
			 * readlinks a second. */
			if (gone)
				p->state = PS_OFF;
			return;
		}
		err = py_proc_detect(pf->o.proc_root, p->pid, &p->info);
		if (err)
			return;
		p->next_try_ns = now; /* now the check, every tick until ready */
		p->l = py_layout_find(p->info.major, p->info.minor);
		if (!p->l) {
			log_warn(
				"python: pid %u runs CPython %u.%u (%s), which has no frame layout "
				"here (3.8-3.13): its stacks stay native",
				p->pid, p->info.major, p->info.minor, p->info.module);
			p->state = PS_OFF;
			return;
		}
		snprintf(path, sizeof(path), "%s/%u/mem", pf->o.proc_root, p->pid);
		p->memfd = open(path, O_RDONLY | O_CLOEXEC);
		if (p->memfd < 0) {
			log_warn("python: cannot open %s: %s: stacks of pid %u stay native", path,
				 strerror(errno), p->pid);
			p->state = PS_OFF;
			return;
		}
		/* 3.13 says where its fields are: trust that over the table
		 * (a build with other options, a patched interpreter). */
		if (p->info.major == 3 && p->info.minor == 13) {
			uint8_t dbg[PY_DEBUG_OFFSETS_LEN];

			p->own = *p->l;
			if (!mem_read(p, p->info.runtime, dbg, sizeof(dbg)) &&
			    !py_layout_apply_debug_offsets(dbg, sizeof(dbg), &p->own)) {
				if (memcmp(&p->own, p->l, sizeof(p->own)))
					log_info("python: pid %u: _Py_DebugOffsets differ from "
						 "the 3.13 table: using the interpreter's",
						 p->pid);
				p->l = &p->own;
			} else {
				log_debug("python: pid %u: no usable _Py_DebugOffsets, using "
					  "the 3.13 table",
					  p->pid);
			}
		}
		p->state = PS_PENDING;
	}
	err = py_proc_check(p->l, p->info.runtime, mem_read, p);
	/* While the interpreter initializes, its first thread state may not
	 * point back at it yet: a mismatch is final only once it lasts. */
	if (err && err != -EAGAIN) {
		if (!p->first_bad_ns)
			p->first_bad_ns = now;
		if (now - p->first_bad_ns < BAD_LAYOUT_NS)
			err = -EAGAIN;
	}
	if (err == -EAGAIN) {
		if (now - p->first_seen_ns < FAST_PERIOD_NS)
			p->next_try_ns = now;
		return;
	}
	if (err) {
		log_warn("python: pid %u: CPython %u.%u in %s does not have the expected layout "
			 "(%s): its stacks stay native",
			 p->pid, p->info.major, p->info.minor, p->info.module, strerror(-err));
		p->state = PS_OFF;
		return;
	}
	py_layout_to_proc(p->l, p->info.runtime, &cfg);
	if (bpf_map_update_elem(pf->o.procs_fd, &p->pid, &cfg, BPF_ANY)) {
		log_warn("python: cannot register pid %u with the frame walk: %s", p->pid,
			 strerror(errno));
		p->state = PS_OFF;
		return;
	}
	log_info("python: pid %u runs CPython %u.%u (%s): walking its frames", p->pid,
		 p->info.major, p->info.minor, p->info.module);
	p->state = PS_ACTIVE;
	p->active_ns = mono_ns();
}

void pyframes_forget_pid(struct pyframes *pf, uint32_t pid, bool exited, uint64_t ts_ns)
{
	struct py_pid *p;

	pthread_mutex_lock(&pf->lock);
	p = find_pid(pf, pid, false);
	/* The watcher may have found the new image's interpreter before the
	 * exec event got here: that registration stays. */
	if (p && !exited && p->state == PS_ACTIVE && p->active_ns > ts_ns)
		p = NULL;
	if (p) {
		if (p->state == PS_ACTIVE)
			bpf_map_delete_elem(pf->o.procs_fd, &pid);
		pid_reset(p);
		p->state = exited ? PS_OFF : PS_NONE;
		p->next_try_ns = 0;
		p->first_seen_ns = 0;
		p->first_bad_ns = 0;
		p->hinted = false;
	}
	pthread_mutex_unlock(&pf->lock);
}

void pyframes_on_event(struct pyframes *pf, const void *data, size_t size)
{
	const struct ep_pystack *ps = data;
	struct stash *s;
	size_t n;

	if (size < EP_PYSTACK_HDR_SIZE || ps->hdr.cpu >= MAX_CPUS)
		return;
	n = ps->nframes;
	if (n > EP_PY_MAX_FRAMES || EP_PYSTACK_HDR_SIZE + n * sizeof(ps->frames[0]) > size)
		return;
	if (ps->hdr.cpu >= pf->nstash) {
		size_t want = ps->hdr.cpu + 1;
		void *p = realloc(pf->stash, want * sizeof(*pf->stash));

		if (!p)
			return;
		pf->stash = p;
		memset(pf->stash + pf->nstash, 0, (want - pf->nstash) * sizeof(*pf->stash));
		pf->nstash = want;
	}
	s = &pf->stash[ps->hdr.cpu];
	if (s->valid)
		pf->st.unpaired++;
	memcpy(&s->ps, ps, EP_PYSTACK_HDR_SIZE + n * sizeof(ps->frames[0]));
	s->valid = true;
}

struct code_key {
	uint64_t addr;
	uint32_t csum;
};

static bool code_eq(uint32_t idx, const void *key, const void *ctx)
{
	const struct py_pid *p = ctx;
	const struct code_key *k = key;

	return p->codes[idx].addr == k->addr && p->codes[idx].csum == k->csum;
}

/* CO_NEWLOCALS: a function's body (a class body's code runs in the class
 * namespace: no flag). */
#define PY_CO_NEWLOCALS 0x2

/* The qualified name of code object c defined in the body of a code whose
 * qualified name is parent ("" for a module, NULL unknown), before 3.11
 * where code objects carry only their own name: Class.method under a
 * class body, f.<locals>.g under a function. */
static void nested_qual(char *out, size_t len, const char *parent, bool parent_fn, const char *name)
{
	int n;

	if (!parent)
		n = snprintf(out, len, "%s", "");
	else if (!parent[0])
		n = snprintf(out, len, "%s", name);
	else
		n = snprintf(out, len, "%s%s%s", parent, parent_fn ? ".<locals>." : ".", name);
	/* Longer than PY_NAME_MAX: cut, as the names themselves are. */
	if (n < 0)
		out[0] = '\0';
}

static void code_check(struct pyframes *pf, struct py_pid *p, uint64_t addr,
		       const struct py_code *c, const char *qual)
{
	if (py_fnspec_match(&pf->code_spec, qual, c->name, c->filename))
		pf->code_fn(pf->code_ctx, p->pid, addr, qual ? qual : c->name, c->filename,
			    c->firstlineno);
}

/* pyframes_on_code: the code object c just read at addr, and those its
 * body defines, three levels down (a module's classes' methods, a
 * function's inner functions): a module on a stack (the main script's
 * <module>) gives away FUNCTION before its first call. At most
 * NESTED_READS objects read per object named. Before 3.11 the qualified
 * names come from that walk: known below a module's code, not for a code
 * object met alone. */
#define NESTED_READS 128
static void find_named_code(struct pyframes *pf, struct py_pid *p, uint64_t addr,
			    const struct py_code *c)
{
	struct nq {
		uint64_t addr;
		int depth;
		int parent; /* index in q of the code defining it, -1: c */
		bool fn;    /* a function's body (CO_NEWLOCALS) */
		bool known; /* qual below is its qualified name */
		char qual[PY_NAME_MAX];
	} * q;
	uint64_t nested[NESTED_READS];
	size_t head = 0, tail = 0;
	bool has_qual = c->flags < 0;
	bool root_known = has_qual || !strcmp(c->name, "<module>");
	const char *root_qual = has_qual ? c->name : root_known ? "" : NULL;
	bool root_fn = c->flags >= 0 && (c->flags & PY_CO_NEWLOCALS);
	int n;

	code_check(pf, p, addr, c, has_qual ? c->name : NULL);
	q = malloc(NESTED_READS * sizeof(*q));
	if (!q)
		return;
	n = py_code_nested(mem_read, p, c, nested, NESTED_READS);
	for (int i = 0; i < n && tail < NESTED_READS; i++)
		q[tail++] = (struct nq){ .addr = nested[i], .depth = 1, .parent = -1 };
	while (head < tail) {
		struct py_code nc;
		struct nq *e = &q[head++];
		const char *pq;
		bool pfn;

		if (py_code_read(p->l, mem_read, p, e->addr, &nc))
			continue;
		if (e->parent < 0) {
			pq = root_qual;
			pfn = root_fn;
		} else {
			pq = q[e->parent].known ? q[e->parent].qual : NULL;
			pfn = q[e->parent].fn;
		}
		if (has_qual) {
			e->known = false;
		} else {
			nested_qual(e->qual, sizeof(e->qual), pq, pfn, nc.name);
			e->known = pq != NULL;
			e->fn = nc.flags >= 0 && (nc.flags & PY_CO_NEWLOCALS);
		}
		code_check(pf, p, e->addr, &nc, has_qual ? nc.name : e->known ? e->qual : NULL);
		if (e->depth < 3) {
			int parent = (int)(e - q);

			n = py_code_nested(mem_read, p, &nc, nested, NESTED_READS - tail);
			for (int i = 0; i < n && tail < NESTED_READS; i++)
				q[tail++] = (struct nq){ .addr = nested[i],
							 .depth = e->depth + 1,
							 .parent = parent };
		}
		py_code_free(&nc);
	}
	free(q);
}

static struct code_ent *get_code(struct pyframes *pf, struct py_pid *p, uint64_t addr,
				 uint32_t csum)
{
	struct code_key k = { addr, csum };
	uint64_t h = ep_hashmap_hash_bytes(&k, sizeof(k), HASHMAP_SEED);
	int64_t idx = ep_hashmap_find(&p->code_idx, h, &k, code_eq, p);
	struct code_ent *e;

	if (idx >= 0)
		return &p->codes[idx];
	if (p->ncodes >= MAX_CODES) {
		for (size_t i = 0; i < p->ncodes; i++)
			py_code_free(&p->codes[i].code);
		p->ncodes = 0;
		ep_hashmap_free(&p->code_idx);
		ep_hashmap_init(&p->code_idx);
	}
	if (p->ncodes == p->cap_codes) {
		size_t cap = p->cap_codes ? 2 * p->cap_codes : 64;
		void *n = realloc(p->codes, cap * sizeof(*p->codes));

		if (!n)
			return NULL;
		p->codes = n;
		p->cap_codes = cap;
	}
	e = &p->codes[p->ncodes];
	memset(e, 0, sizeof(*e));
	e->addr = addr;
	e->csum = csum;
	pf->st.code_reads++;
	e->err = py_code_read(p->l, mem_read, p, addr, &e->code);
	/* Read between the walk and now, the object may have been freed or
	 * changed: a checksum that no longer matches names nothing. */
	if (!e->err && e->code.csum != csum) {
		py_code_free(&e->code);
		e->err = -ESTALE;
	}
	if (e->err) {
		pf->st.code_errors++;
		log_debug("python: pid %u: code object at 0x%llx (checksum %08x): %s", p->pid,
			  (unsigned long long)addr, csum, strerror(-e->err));
	}
	if (e->err == -ENOMEM)
		return NULL;
	if (ep_hashmap_insert(&p->code_idx, h, (uint32_t)p->ncodes))
		return NULL;
	p->ncodes++;
	if (!e->err && pf->code_fn)
		find_named_code(pf, p, addr, &e->code);
	return e;
}

/* Bounds of pyframes_find_code's walk: a thread-state list or frame chain
 * in a process's memory may loop (hostile, or changing under the read),
 * and a process of many threads must not cost a scan of all its frames
 * each time: frames read per scan, code objects read per scan (those
 * looked at before are skipped: SCAN_SEEN slots). */
#define SCAN_THREADS 256
#define SCAN_FRAMES  1024
#define SCAN_CODES   64
#define SCAN_SEEN    512

int pyframes_find_code(struct pyframes *pf, uint32_t pid)
{
	const struct py_layout *l;
	uint64_t interp = 0, ts = 0;
	int frames = 0, codes = 0;
	struct py_pid *p;

	if (!pf->code_fn)
		return 0;
	pthread_mutex_lock(&pf->lock);
	p = find_pid(pf, pid, false);
	if (p && p->state != PS_ACTIVE)
		p = NULL;
	pthread_mutex_unlock(&pf->lock);
	if (!p)
		return -EAGAIN;
	l = p->l;
	if (!p->scan_seen && !(p->scan_seen = calloc(SCAN_SEEN, sizeof(*p->scan_seen))))
		return -ENOMEM;
	if (mem_read(p, p->info.runtime + l->runtime_interp_head, &interp, 8) || !interp ||
	    mem_read(p, interp + l->interp_tstate_head, &ts, 8))
		return -EFAULT;
	for (int t = 0; t < SCAN_THREADS && ts; t++) {
		uint64_t f = 0, next = 0;

		if (mem_read(p, ts + l->tstate_frame, &f, 8))
			break;
		if (f && l->cframe_frame != EP_PY_NO_OFF && mem_read(p, f + l->cframe_frame, &f, 8))
			f = 0;
		for (; frames < SCAN_FRAMES && f; frames++) {
			uint64_t code = 0, *slot;
			struct py_code c;

			if (mem_read(p, f + l->frame_code, &code, 8))
				break;
			slot = &p->scan_seen[(code >> 4) % SCAN_SEEN];
			if (code && *slot != code && codes < SCAN_CODES) {
				*slot = code;
				codes++;
				/* Entry and shim frames hold no code object:
				 * the reader refuses them. */
				if (!py_code_read(l, mem_read, p, code, &c)) {
					find_named_code(pf, p, code, &c);
					py_code_free(&c);
				}
			}
			if (mem_read(p, f + l->frame_back, &f, 8))
				break;
		}
		if (mem_read(p, ts + l->tstate_next, &next, 8) || next == ts)
			break;
		ts = next;
	}
	return 0;
}

void pyframes_on_code(struct pyframes *pf, const struct py_fnspec *spec, pyframes_code_fn fn,
		      void *ctx)
{
	if (spec)
		pf->code_spec = *spec;
	else
		memset(&pf->code_spec, 0, sizeof(pf->code_spec));
	pf->code_fn = fn;
	pf->code_ctx = ctx;
}

static int64_t intern_py_frame(struct pyframes *pf, struct profile *prof, struct py_pid *p,
			       const struct ep_py_frame *f)
{
	struct code_ent *e = get_code(pf, p, f->code & ~EP_PY_F_ENTRY, f->csum);
	char name[2 * PY_NAME_MAX + 32];
	const char *base;
	int line;

	if (!e)
		return -ENOMEM;
	if (e->err)
		return -ENOENT;
	base = proc_maps_basename(e->code.filename);
	line = py_code_line(p->l, &e->code, f->instr);
	if (line >= 0)
		snprintf(name, sizeof(name), "%s (%s:%d)", e->code.name, base, line);
	else
		snprintf(name, sizeof(name), "%s (%s)", e->code.name, base);
	return profile_intern_frame(prof, name, e->code.filename, false);
}

static uint8_t classify(struct cls_cache *cc, const struct py_pid *p, uint32_t id)
{
	const struct prof_frame *fr;
	uint8_t c;

	if (!cc->module || strcmp(cc->module, p->info.module)) {
		/* Another interpreter file: the interpreter-frame class differs. */
		char *m = strdup(p->info.module);

		if (!m)
			return PY_N_OTHER;
		free(cc->module);
		cc->module = m;
		if (cc->cls)
			memset(cc->cls, 0, cc->ncls);
	}
	if (id >= cc->ncls) {
		size_t want = (size_t)id + 1024;
		void *n = realloc(cc->cls, want);

		if (!n)
			return PY_N_OTHER;
		cc->cls = n;
		memset(cc->cls + cc->ncls, 0, want - cc->ncls);
		cc->ncls = want;
	}
	if (cc->cls[id])
		return cc->cls[id] - 1;
	if (id >= cc->prof->nframes)
		return PY_N_OTHER;
	fr = &cc->prof->frames[id];
	if (!strncmp(fr->name, "_PyEval_EvalFrameDefault", 24))
		c = PY_N_EVAL;
	else if (fr->module && p->info.module && !strcmp(fr->module, p->info.module))
		c = PY_N_INTERP;
	else
		c = PY_N_OTHER;
	cc->cls[id] = c + 1;
	return c;
}

/* The class cache of prof: the CPU profile's, or the other slot that is
 * prof's, else a free one, else the last (emptied when another profile
 * takes it). */
static struct cls_cache *cls_cache_of(struct pyframes *pf, const struct profile *prof)
{
	size_t i = 0;

	if (prof != pf->o.prof) {
		for (i = 1; i < PY_CLS_SLOTS && pf->cls[i].prof != prof; i++)
			;
		if (i == PY_CLS_SLOTS)
			for (i = 1; i < PY_CLS_SLOTS - 1 && pf->cls[i].prof; i++)
				;
	}
	struct cls_cache *cc = &pf->cls[i];

	if (cc->prof != prof) {
		cc->prof = prof;
		if (cc->cls)
			memset(cc->cls, 0, cc->ncls);
	}
	return cc;
}

void pyframes_profile_replaced(struct pyframes *pf, const struct profile *prof)
{
	/* A profile freed and set up again at the same address (--rotate)
	 * numbers its frames anew: the classes cached by frame index would
	 * describe the old profile's frames. */
	for (size_t i = 0; i < sizeof(pf->cls) / sizeof(pf->cls[0]); i++)
		if (pf->cls[i].prof == prof)
			pf->cls[i].prof = NULL;
}

/* Watches pid and returns it when its frames are walked (under the lock
 * only to look: only the recorder thread moves an active pid, or the
 * array). A sample with a frame in an interpreter hints at one. */
static struct py_pid *active_pid(struct pyframes *pf, struct profile *prof, uint32_t pid,
				 const uint32_t *frames, size_t nnat)
{
	enum pid_state state;
	struct py_pid *p;

	if (pyframes_watch(pf, pid, 0))
		return NULL;
	pthread_mutex_lock(&pf->lock);
	p = find_pid(pf, pid, false);
	state = p ? p->state : PS_NONE;
	if (p && state == PS_NONE && !p->hinted) {
		for (size_t i = 0; i < nnat; i++) {
			const struct prof_frame *fr =
				frames[i] < prof->nframes ? &prof->frames[frames[i]] : NULL;

			if (fr && fr->module && name_is_python(fr->module)) {
				p->hinted = true;
				p->next_try_ns = 0;
				break;
			}
		}
	}
	pthread_mutex_unlock(&pf->lock);
	return state == PS_ACTIVE ? p : NULL;
}

/* Merges the walked frames ps into frames[0..*n) (ids in prof); *leaf: the
 * innermost frame that is not the interpreter's own C code. The Python
 * frames merged in (0: frames unchanged), or a negative errno. */
static int merge_walk(struct pyframes *pf, struct profile *prof, struct py_pid *p,
		      const struct ep_pystack *ps, uint32_t *frames, size_t *n, size_t cap,
		      size_t *leaf)
{
	size_t npy = ps->nframes, nnat = *n, nout;
	struct cls_cache *cc;

	if (!npy || npy > EP_PY_MAX_FRAMES || nnat > sizeof(pf->nat) / sizeof(pf->nat[0]))
		return 0;
	/* Leaf first from the walk, root first here. A frame whose code
	 * object is gone (freed since the walk, or a frame caught while being
	 * pushed) is left out; the run it began then begins at the next. A run
	 * of that frame alone keeps a placeholder: the runs must stay as many
	 * as the evaluator calls they pair with. */
	size_t k = 0;
	bool carry = false;

	for (size_t i = 0; i < npy; i++) {
		const struct ep_py_frame *f = &ps->frames[npy - 1 - i];
		bool entry = i == 0 || (f->code & EP_PY_F_ENTRY);
		int64_t id = intern_py_frame(pf, prof, p, f);

		if (id == -ENOENT) {
			bool alone = entry && (i + 1 == npy ||
					       (ps->frames[npy - 2 - i].code & EP_PY_F_ENTRY));

			pf->st.frames_skipped++;
			if (!alone) {
				carry |= entry;
				continue;
			}
			id = profile_intern_frame(prof, "[python: code object gone]", NULL, false);
		}
		if (id < 0)
			return (int)id;
		pf->py[k] = (uint32_t)id;
		pf->entry[k] = k == 0 || carry || (f->code & EP_PY_F_ENTRY);
		carry = false;
		k++;
	}
	npy = k;
	if (!npy)
		return 0;
	cc = cls_cache_of(pf, prof);
	for (size_t i = 0; i < nnat; i++) {
		pf->nat[i] = frames[i];
		pf->ncl[i] = classify(cc, p, frames[i]);
	}
	nout = py_merge(pf->nat, pf->ncl, nnat, pf->py, pf->entry, npy, pf->o.mode == PY_MODE_ONLY,
			pf->out);
	if (nout > cap)
		return -ENOSPC;
	memcpy(frames, pf->out, nout * sizeof(*frames));
	*n = nout;
	if (leaf) {
		size_t i = nout;

		while (i > 1 && classify(cc, p, frames[i - 1]) != PY_N_OTHER)
			i--;
		*leaf = i - 1;
	}
	return (int)npy;
}

int pyframes_merge(struct pyframes *pf, const struct ep_event_hdr *hdr, uint32_t *frames, size_t *n,
		   size_t cap, size_t *leaf)
{
	struct py_pid *p = active_pid(pf, pf->o.prof, hdr->pid, frames, *n);
	struct stash *s;
	int err;

	if (!p)
		return 0;
	pf->st.samples++;
	if (hdr->cpu >= pf->nstash)
		return 0;
	s = &pf->stash[hdr->cpu];
	if (!s->valid || s->ps.hdr.tid != hdr->tid || s->ps.hdr.ts_ns != hdr->ts_ns ||
	    s->ps.hdr.pid != hdr->pid)
		return 0;
	s->valid = false;
	err = merge_walk(pf, pf->o.prof, p, &s->ps, frames, n, cap, leaf);
	if (err <= 0)
		return err;
	pf->st.with_python++;
	pf->st.frames += (uint64_t)err;
	return 0;
}

int pyframes_merge_walk(struct pyframes *pf, struct profile *prof, const struct ep_pystack *ps,
			size_t size, uint32_t *frames, size_t *n, size_t cap)
{
	struct py_pid *p;

	if (size < EP_PYSTACK_HDR_SIZE || ps->nframes > EP_PY_MAX_FRAMES ||
	    EP_PYSTACK_HDR_SIZE + ps->nframes * sizeof(ps->frames[0]) > size)
		return -EINVAL;
	p = active_pid(pf, prof, ps->hdr.pid, frames, *n);
	if (!p)
		return 0;
	return merge_walk(pf, prof, p, ps, frames, n, cap, NULL);
}

int pyframes_merge_stack(struct pyframes *pf, struct profile *prof, const struct ep_pystack *ps,
			 size_t size, uint32_t *frames, size_t *n, size_t cap)
{
	int err = pyframes_merge_walk(pf, prof, ps, size, frames, n, cap);

	if (err <= 0)
		return err;
	pf->st.offcpu_with_python++;
	pf->st.offcpu_frames += (uint64_t)err;
	return 0;
}

void pyframes_get_stats(struct pyframes *pf, struct pyframes_stats *st)
{
	int ncpus = libbpf_num_possible_cpus();

	*st = pf->st;
	if (pf->o.stats_fd < 0 || ncpus <= 0)
		return;
	uint64_t *v = calloc((size_t)ncpus, sizeof(*v));

	if (!v)
		return;
	for (uint32_t k = 0; k < EP_PY_ST__COUNT; k++) {
		if (bpf_map_lookup_elem(pf->o.stats_fd, &k, v))
			continue;
		for (int c = 0; c < ncpus; c++)
			st->bpf[k] += v[c];
	}
	free(v);
}
