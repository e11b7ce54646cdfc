// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The probes recording module: finds probed functions in what each traced
 * process has mapped, attaches uprobes/uretprobes (one link per process,
 * file and function; the probe id travels in the attach cookie), drains the
 * span ring buffer and aggregates it (probes_stats.c).
 *
 * Attachment is per process, not system-wide: a uprobe on libsqlite3 with
 * pid -1 would trap in every process on the machine that uses SQLite. The
 * in-kernel `targets` filter is still checked, so a child forked by a
 * target (which inherits the breakpoints in its copied memory) is covered
 * exactly when the sampler follows it, and re-scanned on add_target.
 *
 * New libraries are found by re-reading /proc/PID/maps when ld.so reports a
 * link-map change (a uprobe on _dl_debug_state, called after every dlopen
 * and at startup; on a kernel that refuses that program, when the sampler
 * sees a target map an executable file) and, as a backstop for loaders
 * that bypass ld.so, every RESCAN_PERIOD_NS.
 *
 * Once a probe is attached, the span ring is drained by a thread of its own,
 * every DRAIN_PERIOD_MS:
 * the recorder thread stalls for hundreds of milliseconds now and then (the
 * first symbolization of a large binary, e.g. 700 ms for python3.11 on this
 * VM), and spans arriving at 200k/s would overflow the ring meanwhile.
 * `lock` guards what the drain thread and the recorder's hooks share: the
 * stats and the targets' rescan flags (and the arrays holding both).
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/vec.h"
#include "overload/links.h"
#include "cycles/cycle_sink.h"
#include "kernel/kfeat.h"
#include "kernel/vstat.h"
#include "util/log.h"
#include "overload/priority.h"
#include "probes/probes.h"
#include "top/top_live.h"
#include "events/probes.h"
#include "kernel/skel_types.h"
#include "modules.skel.h"
#include "proc/proc_info.h"
#include "proc/proc_maps.h"
#include "probes/uprobe_discovery.h"
#include "probes/uprobe_target.h"
#include "proc/target_open.h"
#include "llama/llama_facts.h"
#include "llama/llama_layout.h"

/* A maps re-read of a 300-line process costs ~60 us (docs/probes.md); the
 * ld.so trigger catches dlopen within one 10 ms poll, so the timer only
 * covers exotic loaders and can be slow. */
#define RESCAN_PERIOD_NS   (500 * 1000000ull)
#define MAX_MAPS_BYTES	   (64u << 20)
#define MAX_EXEC_FILES	   4096
#define MAX_SQL_STATEMENTS 2048
/* Without the ld.so trigger (its program refused): a rescan as soon as the
 * sampler saw a target map an executable file, at most this often (a maps
 * read is ~60 us; the cycles module paces its own the same way). */
#define MAPPED_RESCAN_NS (20 * 1000000ull)

#define LDSO_SYMBOL "_dl_debug_state"
/* A forked child's first maps scan waits this long (a /proc/PID/maps read
 * per child of a fork storm, issue 17); its calls before are not timed,
 * as they were not before its first scan at the next poll. */
#define PROBES_CHILD_DELAY_NS (20ull * 1000 * 1000)
#define DEAD_LINKS_MAX	      128
/* The drain thread's period: the ring holds ~20 ms of spans per 256 KiB at
 * 200k spans/s, so 10 ms keeps it mostly empty at negligible CPU cost. */
#define DRAIN_PERIOD_MS 10
/* The drain thread's nice value. It needs little CPU but needs it on time:
 * at load 5-6 on 2 CPUs, at nice 0 its longest gap between drains was
 * 70-212 ms per run, at -10 54-75 ms (docs/performance.md). */
#define DRAIN_NICE (-10)

struct file_cache {
	uint64_t dev, inode;
	uint64_t *offsets;	/* per m->names; NULL if the file was unusable */
	char llama_version[32]; /* llama_version() of a llama library, "" */
	/* ld.so: &_r_debug - &_dl_debug_state (its link-map state, read by
	 * the launch-mode dlopen hold); 0 if either is missing. */
	uint64_t rdebug_delta;
};

struct id_ent {
	uint64_t dev, inode;
	size_t def;
	uint32_t id;
};

struct ptarget {
	uint32_t pid;
	bool exited, rescan;
	/* A child followed during the run is first scanned once it has
	 * lived PROBES_CHILD_DELAY_NS: most of a fork storm's never are. */
	uint64_t scan_after_ns;
	struct uprobe_target ut;
	uint64_t rdebug_delta; /* its ld.so's file_cache.rdebug_delta */
	bool ldso_hooked;      /* probe_ldso is attached in its ld.so */
	/* Without attach cookies: the addresses whose cookies it stored in
	 * probe_ip_cookies, removed when it exits. */
	uint64_t *ips;
	size_t nips, capips;
};

struct probes_mod {
	const struct rec_ctx *ctx;
	struct probe_specs specs;
	const char **names; /* distinct function names to look up */
	size_t nnames;
	size_t *def_name; /* def -> index in names */
	size_t ldso_name;
	bool *def_matched, *def_warned;
	/* No bpf_get_attach_cookie (before 5.15): function probes go through
	 * probe_entry_nc/probe_return_nc, which find the cookie by process
	 * and probed address in probe_ip_cookies (and match returns by stack
	 * pointer); USDT probes through libbpf's own address lookup. */
	bool no_cookie;
	bool cookie_refused;	  /* the kernel refused the cookie programs: the _nc twins */
	struct modules_bpf *skel; /* owned by record.c (bpf_parts.h) */
	/* Other programs the kernel refused (pm_bpf_refused), left out of
	 * the next load and done without: USDT probes are not attached; no
	 * ld.so trigger (libraries found by rescans when the sampler sees a
	 * new mapping, no launch-mode holds); the thread-exit program (its
	 * raw_tp twin, else reclaim_slots). */
	bool usdt_refused, ldso_refused, exit_refused, exit_raw_refused;
	bool exit_hooked; /* a thread-exit program is attached */
	char lost[VSTAT_REASON_LEN];
	uint64_t seen_gen, last_gen_scan; /* rec_ctx.mmap_gen at the last rescan, and when */
	uint64_t slots_freed;		  /* by reclaim_slots */
	bool prepared;
	struct ring_buffer *rb;
	struct probe_stats *st;
	struct llama_facts *llama; /* parameters read at llama.cpp set-up calls */
	struct file_cache *fc;
	size_t nfc;
	struct id_ent *ids;
	size_t nids;
	struct uprobe_targets tg; /* of struct ptarget */
	uint64_t next_rescan_ns;
	/* live view (top_live.h): spans per probe at the last update */
	uint64_t live_spans[EP_PROBE_MAX], live_ns, live_drops_ns; /* by probe id */
	uint64_t nrescans, rescan_ns;
	/* drain health, written by the drain thread alone (read after the
	 * join): the ring overflows when drains are further apart than its
	 * capacity lasts (thread starved of CPU), shown with -v */
	uint64_t last_poll_ns, max_poll_gap_ns, long_poll_gaps, ndrains;
	int max_drained;
	uint64_t max_poll_ns; /* longest poll hook (recorder thread) */
	pthread_mutex_t lock;
	bool lock_ok;
	pthread_t drainer;
	bool draining, drain_failed;
	atomic_bool drain_stop;
	/* Other modules' requests (probe_bus): def index -> request (-1: the
	 * user's or a preset), probe id -> request; their spans wait in
	 * `pending` (under lock) until the recorder thread's next poll. */
	int32_t *def_req, *id_req;
	struct bus_span {
		struct probe_span_ev ev;
		size_t req;
	} * pending, *spare;
	size_t npending, cappending, capspare;
	/* Cycle facts built on the drain thread (queue_cycle_fact). */
	struct cyc_span *cyc, *cycspare;
	size_t ncyc, capcyc, capcycspare;
	uint64_t bus_lost;
	/* Launch mode: the command held at its startup (bpf/probes.bpf.c
	 * hold_pid) until its libraries are scanned; 0 once resumed or if
	 * not holding. */
	uint32_t hold_pid;
	/* ...and after start-up at each change of its link map (dlopen,
	 * dlclose: bpf/probes.bpf.c dl_hold_pid): holds, and the time the
	 * command spent stopped by them (from the poll that saw the stop). */
	uint32_t dl_hold_pid;
	uint64_t dl_holds, dl_hold_ns, dl_hold_max_ns;
	/* Stop: the links being destroyed by `detacher` (joined at close). */
	struct bpf_link **detach;
	size_t ndetach;
	uint64_t detach_t0;
	pthread_t detacher;
	bool detaching;
	int nice_err; /* drain thread: setpriority's errno, read after the join */
	size_t nattached;
	bool stopped;
	bool attached;	       /* targets added from now on are forked children */
	struct link_list dead; /* exited targets' links, released at stop */
};

static int add_name(struct probes_mod *m, const char *name, size_t *idx)
{
	const char **p;

	for (size_t i = 0; i < m->nnames; i++)
		if (!strcmp(m->names[i], name)) {
			*idx = i;
			return 0;
		}
	p = realloc(m->names, (m->nnames + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	m->names = p;
	m->names[m->nnames] = name;
	*idx = m->nnames++;
	return 0;
}

/* A definition as the user wrote it: LIB:SYMBOL, usdt:LIB:PROVIDER:NAME. */
static void def_spec(const struct probe_def *def, char *out, size_t len)
{
	if (def->usdt_provider)
		snprintf(out, len, "usdt:%s:%s:%s", def->lib ? def->lib : "", def->usdt_provider,
			 def->symbol);
	else
		snprintf(out, len, "%s:%s", def->lib ? def->lib : "", def->symbol);
}

/* Where the user's trace goes when a process has the library mapped but
 * not the function: once per definition. */
static void not_found(struct probes_mod *m, size_t d, const char *path)
{
	const struct probe_def *def = &m->specs.defs[d];
	char probe[512], reason[1024];

	if (m->def_warned[d])
		return;
	m->def_warned[d] = true;
	snprintf(probe, sizeof(probe), "%s:%s", def->lib, def->symbol);
	snprintf(reason, sizeof(reason), "symbol %s not found in %s (searched .symtab and .dynsym)",
		 def->symbol, path);
	log_warn("probe %s: %s", probe, reason);
	probe_stats_add_not_found(m->st, probe, reason);
}

static struct file_cache *file_lookup(struct probes_mod *m, uint32_t pid, const struct ud_file *f,
				      char *path, size_t pathlen)
{
	struct file_cache *fc = NULL, nf = { f->dev, f->inode, NULL };
	size_t cap = m->nfc;
	int fd, n;

	/* The attach path is needed for each process anyway. */
	fd = ud_open_mapped(m->ctx->opts->proc_root, pid, f, path, pathlen);
	for (size_t i = 0; i < m->nfc; i++)
		if (m->fc[i].dev == f->dev && m->fc[i].inode == f->inode)
			fc = &m->fc[i];
	if (fc || fd < 0) {
		if (fd >= 0)
			close(fd);
		if (fd < 0 && !fc)
			log_debug("probes: pid %u: cannot open %s: %s", pid, f->path,
				  target_open_strerror(fd));
		return fd < 0 ? NULL : fc;
	}
	nf.offsets = calloc(m->nnames ? m->nnames : 1, sizeof(*nf.offsets));
	if (nf.offsets) {
		n = ud_find_functions(fd, m->names, m->nnames, nf.offsets);
		if (n < 0) {
			log_debug("probes: %s: not a usable ELF file: %s", f->path, strerror(-n));
			free(nf.offsets);
			nf.offsets = NULL;
		}
	}
	if (nf.offsets && !strncmp(proc_maps_basename(f->path), "ld-", 3)) {
		static const char *const rd[] = { LDSO_SYMBOL, "_r_debug" };
		uint64_t v[2];

		if (ud_find_symbols(fd, rd, 2, v) == 2)
			nf.rdebug_delta = v[1] - v[0];
	}
	/* A library whose set-up calls we read: its build picks the layout
	 * of their parameter structs (user/llama/llama_layout.c). */
	for (size_t d = 0; nf.offsets && d < m->specs.n; d++) {
		uint32_t k = m->specs.defs[d].kind;

		if ((k == EP_PK_LLAMA_MODEL || k == EP_PK_LLAMA_CTX) &&
		    nf.offsets[m->def_name[d]]) {
			if (llama_version_read(fd, nf.llama_version, sizeof(nf.llama_version)))
				nf.llama_version[0] = '\0';
			log_debug("probes: %s: llama_version() \"%s\"", f->path, nf.llama_version);
			break;
		}
	}
	close(fd);
	if (ep_vec_push((void **)&m->fc, &m->nfc, &cap, sizeof(nf), &nf)) {
		free(nf.offsets);
		return NULL;
	}
	return &m->fc[m->nfc - 1];
}

static int probe_id_for(struct probes_mod *m, size_t d, const struct ud_file *f, uint32_t *id)
{
	struct id_ent e = { f->dev, f->inode, d, (uint32_t)m->nids };
	size_t cap = m->nids;
	int err;

	for (size_t i = 0; i < m->nids; i++)
		if (m->ids[i].def == d && m->ids[i].dev == f->dev && m->ids[i].inode == f->inode) {
			*id = m->ids[i].id;
			return 0;
		}
	if (m->nids >= EP_PROBE_MAX)
		return -E2BIG;
	err = probe_stats_set_probe(m->st, e.id, &m->specs.defs[d], f->path);
	if (err)
		return err;
	for (size_t i = 0; i < m->nfc; i++)
		if (m->fc[i].dev == f->dev && m->fc[i].inode == f->inode &&
		    m->fc[i].llama_version[0] &&
		    (err = llama_facts_set_probe(m->llama, e.id, m->fc[i].llama_version)))
			return err;
	err = ep_vec_push((void **)&m->ids, &m->nids, &cap, sizeof(e), &e);
	if (err)
		return err;
	m->id_req[e.id] = m->def_req[d];
	*id = e.id;
	return 0;
}

static int attach_uprobe(struct ptarget *t, const struct bpf_program *prog, const char *path,
			 uint64_t off, uint64_t cookie, bool ret)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = cookie, .retprobe = ret);
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, (pid_t)t->pid, path, off, &o);

	return l ? uprobe_target_keep(&t->ut, l) : -errno;
}

/* Without attach cookies: the cookie of a probe at file offset off of f,
 * under the address where t has it mapped (f's executable mapping). */
static int store_ip_cookie(struct probes_mod *m, struct ptarget *t, const struct ud_file *f,
			   uint64_t off, uint64_t cookie)
{
	struct ep_probe_ip_key k = { .tgid = t->pid };
	size_t cap = t->capips;
	int err;

	if (off < f->pgoff || off - f->pgoff >= f->end - f->start)
		return -ERANGE; /* not in the mapping we know: no address */
	k.ip = f->start + (off - f->pgoff);
	if (bpf_map_update_elem(bpf_map__fd(m->skel->maps.probe_ip_cookies), &k, &cookie, BPF_ANY))
		return -errno;
	err = ep_vec_push((void **)&t->ips, &t->nips, &cap, sizeof(k.ip), &k.ip);
	t->capips = cap;
	return err;
}

/* Its addresses' cookies go with it: a later process with its pid must not
 * find them. */
static void forget_ip_cookies(struct probes_mod *m, struct ptarget *t)
{
	for (size_t i = 0; m->skel && i < t->nips; i++) {
		struct ep_probe_ip_key k = { .tgid = t->pid, .ip = t->ips[i] };

		bpf_map_delete_elem(bpf_map__fd(m->skel->maps.probe_ip_cookies), &k);
	}
	t->nips = 0;
}

static int attach_usdt(struct probes_mod *m, struct ptarget *t, const char *path,
		       const char *provider, const char *name, uint64_t cookie)
{
	LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = cookie);
	/* libbpf matches the path against /proc/PID/maps for shared
	 * libraries, so it needs the name as mapped. */
	struct bpf_link *l = bpf_program__attach_usdt(m->skel->progs.probe_usdt, (pid_t)t->pid,
						      path, provider, name, &uo);
	int err;

	if (!l) {
		err = -errno;
		log_debug("probes: USDT %s:%s in %s (pid %u): %s", provider, name, path, t->pid,
			  strerror(-err));
		return err;
	}
	return uprobe_target_keep(&t->ut, l);
}

static void *drain_thread(void *arg);

/* Starts the drain thread with the first probe attached: until then only
 * the dynamic linker's rare events can arrive, and pm_poll drains those on
 * the recorder thread, so a process with nothing to probe costs no extra
 * wakeups (100 a second, ~4% of the collector's CPU time). Called on the
 * recorder thread, like pm_poll, so the two never drain at once. */
static void start_draining(struct probes_mod *m)
{
	int err;

	if (m->draining || m->drain_failed)
		return;
	atomic_store(&m->drain_stop, false);
	err = pthread_create(&m->drainer, NULL, drain_thread, m);
	if (err) {
		/* pm_poll goes on draining on the recorder thread. */
		log_warn("probes: no drain thread (%s): spans are drained between the recorder's "
			 "other work",
			 strerror(err));
		m->drain_failed = true;
		return;
	}
	m->draining = true;
}

static void attach_def(struct probes_mod *m, struct ptarget *t, size_t d, const struct ud_file *f,
		       const char *path, uint64_t off)
{
	const struct probe_def *def = &m->specs.defs[d];
	uint32_t id;
	uint64_t cookie;
	size_t before = t->ut.nlinks;
	int err;

	err = probe_id_for(m, d, f, &id);

	if (err) {
		log_warn("probes: cannot add %s in %s: %s", def->label, f->path, strerror(-err));
		return;
	}
	cookie = EP_PROBE_COOKIE_WITH_CLASS(EP_PROBE_COOKIE(id, def->kind, def->mode),
					    probe_def_class(def));
	if (def->usdt_provider) {
		/* The end point of a pair pops the frame the begin point pushed;
		 * count-only needs the begin point alone. End first: a span in
		 * progress at attach then ends unmatched (counted) instead of
		 * leaving a begin whose end was missed open on the stack. */
		if (def->usdt_end && def->mode == EP_PM_LATENCY)
			err = attach_usdt(m, t, f->path, def->usdt_provider, def->usdt_end,
					  EP_PROBE_COOKIE(id, EP_PK_USDT_END, def->mode));
		if (!err)
			err = attach_usdt(m, t, f->path, def->usdt_provider, def->symbol, cookie);
	} else {
		/* Return first, as the USDT pairs: a call entered between the
		 * two attaches would leave a frame no return pops. */
		bool nc = m->no_cookie;

		err = nc ? store_ip_cookie(m, t, f, off, cookie) : 0;
		if (!err && def->mode == EP_PM_LATENCY)
			err = attach_uprobe(t,
					    nc ? m->skel->progs.probe_return_nc
					       : m->skel->progs.probe_return,
					    path, off, nc ? 0 : cookie, true);
		if (!err)
			err = attach_uprobe(
				t, nc ? m->skel->progs.probe_entry_nc : m->skel->progs.probe_entry,
				path, off, nc ? 0 : cookie, false);
	}
	if (err) {
		uprobe_target_unwind(&t->ut, before);
		if (def->usdt_end)
			log_warn("probes: cannot attach %s in %s (pid %u): %s (USDT pair %s / %s: "
				 "both points must exist)",
				 def->label, f->path, t->pid, strerror(-err), def->symbol,
				 def->usdt_end);
		else
			log_warn("probes: cannot attach %s in %s (pid %u): %s", def->label, f->path,
				 t->pid, strerror(-err));
		return;
	}
	m->nattached++;
	start_draining(m);
	log_info("probes: pid %u: %s in %s (%s)", t->pid, def->label, f->path,
		 def->mode == EP_PM_COUNT ? "count only" : "latency");
}

static bool preset_lib(const char *path, enum probe_group g)
{
	if (g == PG_LLAMA)
		return ud_lib_matches("libllama", path) ||
		       !strncmp(proc_maps_basename(path), "libggml", 7);
	return ud_lib_matches("libsqlite3", path);
}

static void scan_file(struct probes_mod *m, struct ptarget *t, const struct ud_file *f)
{
	char path[512], missing[512];
	struct file_cache *fc = NULL;
	bool need_elf = false;

	for (size_t d = 0; d < m->specs.n && !need_elf; d++) {
		const struct probe_def *def = &m->specs.defs[d];

		need_elf = !def->lib || (!def->usdt_provider && ud_lib_matches(def->lib, f->path));
	}
	need_elf = need_elf || !strncmp(proc_maps_basename(f->path), "ld-", 3);
	if (need_elf) {
		fc = file_lookup(m, t->pid, f, path, sizeof(path));
		if (!fc)
			return;
	} else {
		snprintf(path, sizeof(path), "%s", f->path);
	}
	for (int g = PG_LLAMA; g <= PG_SQLITE; g++) {
		bool any = false, relevant = preset_lib(f->path, g);
		size_t len = 0;

		missing[0] = '\0';
		for (size_t d = 0; d < m->specs.n; d++) {
			const struct probe_def *def = &m->specs.defs[d];

			if (def->group != (enum probe_group)g)
				continue;
			if (fc && fc->offsets && fc->offsets[m->def_name[d]]) {
				any = true;
				attach_def(m, t, d, f, path, fc->offsets[m->def_name[d]]);
			} else if (len < sizeof(missing) - 1) {
				int n = snprintf(missing + len, sizeof(missing) - len, "%s%s",
						 len ? ", " : "", def->symbol);

				len += n > 0 ? (size_t)n : 0;
			}
		}
		/* Say which preset functions a llama/SQLite library lacks (an
		 * older or newer API), once per file and process. */
		if ((any || relevant) && missing[0] && fc && fc->offsets)
			log_info("probes: %s: not found in %s: %s",
				 g == PG_LLAMA ? "llama" : "sqlite", f->path, missing);
	}
	for (size_t d = 0; d < m->specs.n; d++) {
		const struct probe_def *def = &m->specs.defs[d];

		if (def->group != PG_USER || !ud_lib_matches(def->lib, f->path))
			continue;
		m->def_matched[d] = true;
		if (def->usdt_provider) {
			if (!m->usdt_refused) /* else reported at attach */
				attach_def(m, t, d, f, path, 0);
		} else if (fc && fc->offsets && fc->offsets[m->def_name[d]])
			attach_def(m, t, d, f, path, fc->offsets[m->def_name[d]]);
		else
			not_found(m, d, f->path);
	}
	if (!m->ldso_refused && fc && fc->offsets && fc->offsets[m->ldso_name] &&
	    !strncmp(proc_maps_basename(f->path), "ld-", 3)) {
		int err = attach_uprobe(t, m->skel->progs.probe_ldso, path,
					fc->offsets[m->ldso_name], 0, false);

		if (err)
			log_debug("probes: pid %u: no dlopen trigger in %s: %s", t->pid, f->path,
				  strerror(-err));
		t->ldso_hooked = t->ldso_hooked || !err;
		t->rdebug_delta = err ? 0 : fc->rdebug_delta;
		if (t->pid == m->dl_hold_pid && m->skel->bss)
			m->skel->bss->dl_rdebug_delta = (int64_t)t->rdebug_delta;
	}
}

static void scan_target(struct probes_mod *m, struct ptarget *t)
{
	struct proc_maps pm;
	struct ud_file *files;
	size_t n;
	uint64_t t0 = mono_ns();
	int err;

	t->rescan = false;
	err = uprobe_target_files(m->ctx->opts->proc_root, t->pid, MAX_MAPS_BYTES, MAX_EXEC_FILES,
				  &pm, &files, &n);
	if (err == -ENOENT) {
		/* Gone. Its exit event may have been lost (a fork storm fills
		 * the ring): never scanned again either way. */
		t->exited = true;
		return;
	}
	if (err)
		return;
	for (size_t i = 0; i < n; i++)
		if (!uprobe_target_seen(&t->ut, &files[i]))
			scan_file(m, t, &files[i]);
	free(files);
	proc_maps_free(&pm);
	m->nrescans++;
	t0 = mono_ns() - t0;
	m->rescan_ns += t0;
	if (t0 > 20000000)
		log_debug("probes: pid %u: maps scan took %.1f ms", t->pid, t0 / 1e6);
}

static void thread_name(struct probes_mod *m, uint32_t pid, uint32_t tid)
{
	char path[128], name[EP_COMM_LEN + 8] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u/task/%u/comm", m->ctx->opts->proc_root, pid, tid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(name, sizeof(name), f))
			name[strcspn(name, "\n")] = '\0';
		fclose(f);
	}
	if (!name[0])
		snprintf(name, sizeof(name), "tid %u", tid);
	probe_stats_set_thread_name(m->st, pid, tid, name);
}

/* Spans waiting for the recorder thread: 10 ms of them at 200k/s fit in
 * 2k; more means the recorder is stalled and they are counted instead. */
#define MAX_PENDING_BUS_SPANS (1u << 16)

static void queue_bus_span(struct probes_mod *m, const struct ep_span *sp, size_t req)
{
	struct bus_span b = {
		.ev = {
			.pid = sp->hdr.pid,
			.tid = sp->hdr.tid,
			.start_ns = sp->hdr.ts_ns,
			.dur_ns = sp->dur_ns,
			.ret = sp->ret,
			.obj = sp->obj,
			.depth = sp->depth,
			.nested_same = sp->flags & EP_SPAN_F_NESTED_SAME,
		},
		.req = req,
	};

	if (m->npending >= MAX_PENDING_BUS_SPANS ||
	    ep_vec_push((void **)&m->pending, &m->npending, &m->cappending, sizeof(b), &b))
		m->bus_lost++;
}

/* Cycle facts go the same way as bus spans: the sink belongs to the
 * recorder thread. Same bound, same reason. */
static void queue_cycle_fact(struct probes_mod *m, const void *data, size_t size)
{
	struct cyc_span c;

	if (!probes_cycle_span(m->st, data, size, &c))
		return;
	if (m->ncyc >= MAX_PENDING_BUS_SPANS ||
	    ep_vec_push((void **)&m->cyc, &m->ncyc, &m->capcyc, sizeof(c), &c))
		m->bus_lost++;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct probes_mod *m = ctx;
	const struct ep_event_hdr *h = data;

	if (size < sizeof(*h))
		return 0;
	pthread_mutex_lock(&m->lock);
	if (h->type == EP_EV_LIBLOAD) {
		struct ptarget *t = uprobe_targets_find(&m->tg, h->pid);

		if (t)
			t->rescan = true;
	} else if (h->type == EP_EV_LLAMA_ARGS) {
		if (llama_facts_add(m->llama, data, size) == -ENOMEM)
			log_warn("probes: llama parameters: out of memory");
	} else if (!probe_stats_add_event(m->st, data, size)) {
		/* add_event accepted it: a whole ep_span at least */
		const struct ep_span *sp = data;

		if (sp->probe_id < EP_PROBE_MAX && m->id_req[sp->probe_id] >= 0)
			queue_bus_span(m, sp, (size_t)m->id_req[sp->probe_id]);
		if (m->ctx->cycles)
			queue_cycle_fact(m, data, size);
		if (!probe_stats_knows_thread(m->st, h->tid))
			thread_name(m, h->pid, h->tid);
	}
	pthread_mutex_unlock(&m->lock);
	return 0;
}

/* Hands the queued spans of other modules' requests to their callbacks, on
 * the calling (recorder) thread and outside the lock. */
static void deliver_bus_spans(struct probes_mod *m)
{
	struct bus_span *b;
	struct cyc_span *c;
	size_t n, cap, nc, capc;

	pthread_mutex_lock(&m->lock);
	b = m->pending;
	n = m->npending;
	cap = m->cappending;
	m->pending = m->spare;
	m->cappending = m->capspare;
	m->npending = 0;
	m->spare = NULL;
	m->capspare = 0;
	c = m->cyc;
	nc = m->ncyc;
	capc = m->capcyc;
	m->cyc = m->cycspare;
	m->capcyc = m->capcycspare;
	m->ncyc = 0;
	m->cycspare = NULL;
	m->capcycspare = 0;
	pthread_mutex_unlock(&m->lock);
	for (size_t i = 0; i < n; i++)
		probe_bus_deliver(m->ctx->probe_bus, b[i].req, &b[i].ev);
	for (size_t i = 0; i < nc; i++)
		cycle_sink_span(m->ctx->cycles, &c[i]);
	pthread_mutex_lock(&m->lock);
	m->spare = b;
	m->capspare = cap;
	m->cycspare = c;
	m->capcycspare = capc;
	pthread_mutex_unlock(&m->lock);
}

/* Drains the ring until told to stop. Spans are submitted without a
 * wakeup, so the poll mostly times out and the consume does the work. */
static void *drain_thread(void *arg)
{
	struct probes_mod *m = arg;

	/* It drains flat out under overload: not at the recorder's
	 * real-time priority (overload/priority.h). */
	collector_thread_not_realtime();
	/* Per thread on Linux. Failure (no CAP_SYS_NICE) leaves nice 0. */
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), DRAIN_NICE))
		m->nice_err = errno;
	while (!atomic_load(&m->drain_stop)) {
		uint64_t now;
		int n;

		ring_buffer__poll(m->rb, DRAIN_PERIOD_MS);
		n = ring_buffer__consume(m->rb);
		now = mono_ns();
		if (m->last_poll_ns && now - m->last_poll_ns > m->max_poll_gap_ns)
			m->max_poll_gap_ns = now - m->last_poll_ns;
		/* 50 ms: 5 drain periods, 10k spans at the 200k/s design rate */
		if (m->last_poll_ns && now - m->last_poll_ns > 50000000ull)
			m->long_poll_gaps++;
		m->last_poll_ns = now;
		m->ndrains++;
		if (n > m->max_drained)
			m->max_drained = n;
	}
	return NULL;
}

/* Joins the drain thread; the caller then owns the ring alone. */
static void stop_draining(struct probes_mod *m)
{
	if (!m->draining)
		return;
	atomic_store(&m->drain_stop, true);
	pthread_join(m->drainer, NULL);
	m->draining = false;
}

static void pm_close(void *state);

static int pm_open(void **state, const struct rec_ctx *ctx)
{
	const struct cli_opts *o = ctx->opts;
	struct probes_mod *m;
	uint32_t mask = PROBE_PRESET_ALL;
	char err[256] = "";
	int rc;

	*state = NULL;
	if (o->probe_presets && probe_parse_presets(o->probe_presets, &mask))
		return -EINVAL; /* cli_parse has validated it */
	/* Without a probe bus nobody can ask for probes later. */
	if (!mask && !o->nprobe_specs && !ctx->probe_bus)
		return -ENODEV;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->ctx = ctx;
	UPROBE_TARGETS_INIT(&m->tg, struct ptarget, pid, ut);
	if (pthread_mutex_init(&m->lock, NULL)) {
		free(m);
		return -ENOMEM;
	}
	m->lock_ok = true;
	rc = probe_specs_build(&m->specs, mask, (const char *const *)o->probe_specs,
			       (size_t)o->nprobe_specs, o->probe_count_only, err, sizeof(err));
	if (rc) {
		log_error("probes: %s", err[0] ? err : strerror(-rc));
		goto fail;
	}
	rc = -ENOMEM;
	m->st = probe_stats_new(o->trace_max_spans, MAX_SQL_STATEMENTS);
	m->llama = llama_facts_new(o->proc_root);
	if (!m->st || !m->llama)
		goto fail;
	/* The BPF side loads after every module's open hook (bpf_parts.h),
	 * once the other modules have made their requests. */
	*state = m;
	return 0;
fail:
	pm_close(m);
	return rc;
}

/* Adds the other modules' requests to the probe list. Their strings stay
 * owned by the bus. */
static int add_bus_requests(struct probes_mod *m)
{
	size_t nb = probe_bus_count(m->ctx->probe_bus), n = m->specs.n;
	struct probe_def *defs;

	m->def_req = malloc((n + nb + 1) * sizeof(*m->def_req));
	if (!m->def_req)
		return -ENOMEM;
	for (size_t d = 0; d < n; d++)
		m->def_req[d] = -1;
	if (!nb)
		return 0;
	defs = realloc(m->specs.defs, (n + nb) * sizeof(*defs));
	if (!defs)
		return -ENOMEM;
	m->specs.defs = defs;
	for (size_t i = 0; i < nb; i++) {
		defs[n + i] = *probe_bus_def(m->ctx->probe_bus, i);
		defs[n + i].owned = NULL;
		m->def_req[n + i] = (int32_t)i;
	}
	m->specs.n = n + nb;
	return 0;
}

/* Adds the other modules' requests and builds the name tables, once:
 * before the BPF load, which runs only when there is something to probe. */
static int prepare(struct probes_mod *m)
{
	int rc;

	if (m->prepared)
		return 0;
	rc = add_bus_requests(m);
	if (rc)
		return rc;
	m->prepared = true;
	if (!m->specs.n)
		return 0;
	rc = -ENOMEM;
	m->def_name = calloc(m->specs.n + 1, sizeof(*m->def_name));
	m->def_matched = calloc(m->specs.n + 1, sizeof(bool));
	m->def_warned = calloc(m->specs.n + 1, sizeof(bool));
	m->id_req = malloc(EP_PROBE_MAX * sizeof(*m->id_req));
	if (!m->def_name || !m->def_matched || !m->def_warned || !m->id_req)
		return rc;
	for (size_t i = 0; i < EP_PROBE_MAX; i++)
		m->id_req[i] = -1;
	for (size_t d = 0; d < m->specs.n; d++)
		if (!m->specs.defs[d].usdt_provider &&
		    add_name(m, m->specs.defs[d].symbol, &m->def_name[d]))
			return rc;
	if (add_name(m, LDSO_SYMBOL, &m->ldso_name))
		return rc;
	return 0;
}

static int pm_bpf_setup(void *state, struct modules_bpf *skel)
{
	struct probes_mod *m = state;
	int rc = prepare(m);
	bool usdt = false, btf_exit;

	if (rc)
		return rc;
	m->no_cookie = !m->ctx->kf->have[KFEAT_ATTACH_COOKIE] || m->cookie_refused;
	/* One pair of function programs: with cookies, or by address. */
	bpf_program__set_autoload(skel->progs.probe_entry, !m->no_cookie);
	bpf_program__set_autoload(skel->progs.probe_return, !m->no_cookie);
	bpf_program__set_autoload(skel->progs.probe_entry_nc, m->no_cookie);
	bpf_program__set_autoload(skel->progs.probe_return_nc, m->no_cookie);
	/* --probes none, no --probe, no request: stay idle, load nothing. */
	if (!m->specs.n)
		return 0;
	/* The list is final here. Without a USDT point the USDT program is
	 * never attached: verifying it cost ~5 ms of every run's CPU. */
	for (size_t d = 0; d < m->specs.n && !usdt; d++)
		usdt = m->specs.defs[d].usdt_provider != NULL;
	bpf_program__set_autoload(skel->progs.probe_usdt, usdt && !m->usdt_refused);
	bpf_program__set_autoload(skel->progs.probe_ldso, !m->ldso_refused);
	/* The raw_tp twin on a kernel without BTF (kfeat.h), or when this one
	 * refuses the tp_btf program. */
	btf_exit = m->ctx->kf->btf && !m->exit_refused;
	bpf_program__set_autoload(skel->progs.probe_thread_exit, btf_exit);
	bpf_program__set_autoload(skel->progs.probe_thread_exit_raw,
				  !btf_exit && !m->exit_raw_refused);
	return 1;
}

/* What a run without a thread-exit program does instead. */
#define NO_THREAD_EXIT                                                                       \
	"thread exits not seen: the call-stack slots of exited threads are freed by a scan " \
	"every 0.5 s instead (a thread-heavy target may fill the 8192 slots in between)"

/* "USDT probes not attached: usdt:..., ...": the run's USDT definitions,
 * as many as fit. */
static const char *usdt_lost(struct probes_mod *m)
{
	size_t len = (size_t)snprintf(m->lost, sizeof(m->lost), "USDT probes not attached:");
	size_t nlisted = 0, nleft = 0;

	for (size_t d = 0; d < m->specs.n; d++) {
		char spec[160];
		int n;

		if (!m->specs.defs[d].usdt_provider)
			continue;
		def_spec(&m->specs.defs[d], spec, sizeof(spec));
		/* Room for this one and for the tail below. */
		if (nleft || len + 2 + strlen(spec) + 40 >= sizeof(m->lost)) {
			nleft++;
			continue;
		}
		n = snprintf(m->lost + len, sizeof(m->lost) - len, "%s %s", nlisted ? "," : "",
			     spec);
		len += n > 0 ? (size_t)n : 0;
		nlisted++;
	}
	if (!nlisted)
		snprintf(m->lost, sizeof(m->lost), "%zu USDT probe(s) not attached", nleft);
	else if (nleft)
		snprintf(m->lost + len, sizeof(m->lost) - len, " and %zu more", nleft);
	len = strlen(m->lost);
	snprintf(m->lost + len, sizeof(m->lost) - len, " (function probes kept)");
	return m->lost;
}

static const char *pm_bpf_refused(void *state, const char *prog)
{
	struct probes_mod *m = state;

	if (!m->cookie_refused && (!strcmp(prog, "probe_entry") || !strcmp(prog, "probe_return"))) {
		m->cookie_refused = true;
		return "its twins without attach cookies loaded instead (calls matched by probed "
		       "address): the same calls timed";
	}
	if (!m->usdt_refused && !strcmp(prog, "probe_usdt")) {
		m->usdt_refused = true;
		return usdt_lost(m);
	}
	if (!m->ldso_refused && !strcmp(prog, "probe_ldso")) {
		m->ldso_refused = true;
		return "no ld.so trigger: a launched command is not held until probed, and "
		       "libraries are probed once the sampler sees them mapped (~20 ms): their "
		       "first calls can go untimed";
	}
	if (!m->exit_refused && !strcmp(prog, "probe_thread_exit")) {
		m->exit_refused = true;
		return m->exit_raw_refused ? NO_THREAD_EXIT
					   : "its raw_tp twin probe_thread_exit_raw sees the same "
					     "thread exits instead";
	}
	if (!m->exit_raw_refused && !strcmp(prog, "probe_thread_exit_raw")) {
		m->exit_raw_refused = true;
		return NO_THREAD_EXIT;
	}
	return NULL;
}

static int pm_bpf_loaded(void *state, struct modules_bpf *skel, int err)
{
	struct probes_mod *m = state;

	/* Probes are an addition to the CPU profile: a kernel that cannot
	 * load them costs the probe data, not the run. */
	if (!skel)
		log_warn("probes disabled: cannot load the BPF programs: %s (run with -vv for the "
			 "verifier log)",
			 strerror(-err));
	m->skel = skel;
	return 0;
}

/* Sets up the loaded BPF side: its ring buffer and the thread-exit hook
 * (a program that loaded but cannot be attached is done without, as one
 * the kernel refused). */
static int setup_bpf(struct probes_mod *m)
{
	struct bpf_program *exit_prog = NULL;
	char why[64];
	int rc;

	m->rb = ring_buffer__new(bpf_map__fd(m->skel->maps.probe_events), on_event, m, NULL);
	if (!m->rb) {
		rc = -errno;
		log_error("probes: cannot set up the ring buffer: %s", strerror(-rc));
		return rc;
	}
	if (bpf_program__autoload(m->skel->progs.probe_thread_exit)) {
		exit_prog = m->skel->progs.probe_thread_exit;
		m->skel->links.probe_thread_exit = bpf_program__attach(exit_prog);
	} else if (bpf_program__autoload(m->skel->progs.probe_thread_exit_raw)) {
		exit_prog = m->skel->progs.probe_thread_exit_raw;
		m->skel->links.probe_thread_exit_raw = bpf_program__attach(exit_prog);
	}
	m->exit_hooked = m->skel->links.probe_thread_exit || m->skel->links.probe_thread_exit_raw;
	if (exit_prog && !m->exit_hooked) {
		snprintf(why, sizeof(why), "attach: %s", strerror(errno));
		log_warn("probes: cannot attach BPF program %s (%s): %s",
			 bpf_program__name(exit_prog), why, NO_THREAD_EXIT);
		vstat_add_degraded(m->ctx->vs, bpf_program__name(exit_prog), why, NO_THREAD_EXIT);
	}
	return 0;
}

static int pm_add_target(void *state, uint32_t pid)
{
	struct probes_mod *m = state;
	struct ptarget t = { .pid = pid, .rescan = true };
	int err = 0;

	if (m->attached)
		t.scan_after_ns = mono_ns() + PROBES_CHILD_DELAY_NS;
	pthread_mutex_lock(&m->lock);
	err = uprobe_targets_add(&m->tg, &t);
	pthread_mutex_unlock(&m->lock);
	if (err)
		return err;
	/* A forked child is scanned at the next poll, after record.c
	 * registered it; before attach, the first scan happens in attach. */
	return 0;
}

static int pm_attach(void *state)
{
	struct probes_mod *m = state;
	const struct ptarget *t0;
	bool any_preset = false;
	int err;

	err = prepare(m);
	if (err)
		return err;
	if (!m->specs.n || !m->skel)
		return 0; /* nothing to probe, or probes unavailable here: stay idle */
	err = setup_bpf(m);
	if (err)
		return err;

	for (size_t i = 0; i < m->tg.n; i++)
		scan_target(m, uprobe_targets_at(&m->tg, i));
	/* Launch mode: the command is not running yet (the recorder releases
	 * it after every module attached) and is target 0. Hold it at its
	 * startup if the dynamic linker's hook is in place (a static binary
	 * has none, nor a kernel that refused it: it runs through, its probes
	 * come from the exec rescan). */
	t0 = m->tg.n ? uprobe_targets_at(&m->tg, 0) : NULL;
	if (m->ctx->opts->command && t0 && t0->ldso_hooked && m->skel->bss) {
		m->hold_pid = t0->pid;
		m->dl_hold_pid = m->hold_pid;
		m->skel->bss->dl_rdebug_delta = (int64_t)t0->rdebug_delta;
		m->skel->bss->dl_hold_pid = m->hold_pid;
		m->skel->bss->hold_pid = m->hold_pid;
	}
	for (size_t d = 0; d < m->specs.n; d++)
		any_preset = any_preset || m->specs.defs[d].group != PG_USER;
	/* Asked for and never attached: in the report with the probes whose
	 * symbol was not found (the degradation line said why). */
	for (size_t d = 0; m->usdt_refused && d < m->specs.n; d++) {
		char probe[512];

		if (!m->specs.defs[d].usdt_provider)
			continue;
		def_spec(&m->specs.defs[d], probe, sizeof(probe));
		probe_stats_add_not_found(
			m->st, probe,
			"this kernel refuses the USDT probes' BPF program probe_usdt "
			"(kernel.bpf_degraded)");
	}
	if (!m->nattached && any_preset)
		log_info("probes: no llama.cpp or SQLite functions mapped yet; they are probed if "
			 "a library that has them is loaded later");
	m->next_rescan_ns = mono_ns() + RESCAN_PERIOD_NS;
	m->attached = true;
	return 0;
}

/* Rates, latency quantiles (since the start), the slowest statement and
 * tokens/s for the live view and alerts, once a second when shown. */
static void update_live(struct probes_mod *m, uint64_t now)
{
	struct live_metrics *l = m->ctx->live;
	const struct sql_stmt_stat *slow = NULL;
	size_t n = probe_stats_nprobes(m->st);
	double dt = (double)(now - m->live_ns) / 1e9;

	if (!l || !cli_live_wanted(m->ctx->opts) || now < m->live_ns + 1000000000ull)
		return;
	/* The busiest probes first, those never called left out: the pane
	 * has room for a few, and the presets' unused functions (listed by
	 * id, llama before SQLite) used to fill it. */
	l->nprobes = 0;
	for (uint32_t id = 0; id < n && id < EP_PROBE_MAX; id++) {
		const struct probe_stat *ps = probe_stats_get(m->st, id);
		const struct probe_info *pi = probe_stats_info(m->st, id);
		struct live_probe lp;
		size_t k;

		if (!ps || !pi || !pi->def || (!ps->spans && !ps->calls))
			continue;
		snprintf(lp.name, sizeof(lp.name), "%s",
			 pi->def->label ? pi->def->label : pi->def->symbol);
		/* Count-only probes have no spans, only the in-kernel count. */
		lp.calls = ps->calls > ps->spans ? ps->calls : ps->spans;
		lp.rate_hz = m->live_ns && dt > 0 ? (double)(lp.calls - m->live_spans[id]) / dt
						  : NAN;
		m->live_spans[id] = lp.calls;
		lp.timed = pi->def->mode != EP_PM_COUNT;
		snprintf(lp.library, sizeof(lp.library), "%s",
			 pi->library && strrchr(pi->library, '/') ? strrchr(pi->library, '/') + 1
			 : pi->library				  ? pi->library
								  : "");
		live_hist_from(&lp.dur, &ps->hist);
		lp.p50_ns = ps->spans ? (double)hist_quantile(&ps->hist, 0.5) : NAN;
		lp.p99_ns = ps->spans ? (double)hist_quantile(&ps->hist, 0.99) : NAN;
		/* Insertion by rate (unknown rates last), kept to the pane's max. */
		k = l->nprobes;
		while (k > 0 && (isnan(l->probes[k - 1].rate_hz) ||
				 (!isnan(lp.rate_hz) && l->probes[k - 1].rate_hz < lp.rate_hz))) {
			if (k < LIVE_MAX_PROBES)
				l->probes[k] = l->probes[k - 1];
			k--;
		}
		if (k < LIVE_MAX_PROBES) {
			l->probes[k] = lp;
			if (l->nprobes < LIVE_MAX_PROBES)
				l->nprobes++;
		}
	}
	for (size_t i = 0; i < probe_stats_nsql(m->st); i++) {
		const struct sql_stmt_stat *q = probe_stats_sql(m->st, i);

		if (q && q->count && q->text &&
		    (!slow || q->total_ns / q->count > slow->total_ns / slow->count))
			slow = q;
	}
	if (slow) {
		snprintf(l->slowest_sql, sizeof(l->slowest_sql), "%s", slow->text);
		l->slowest_sql_ns = (double)slow->total_ns / (double)slow->count;
	}
	{
		double tps = NAN;

		if (probe_stats_tokens(m->st, &tps))
			l->tokens_per_s = tps;
	}
	m->live_ns = now;
}

/* Spans and calls lost so far (kernel counters + malformed records) for the
 * live view and --alert drops>0, every 250 ms; the final figures are read at
 * stop. */
static void update_live_drops(struct probes_mod *m, uint64_t now)
{
	struct live_metrics *l = m->ctx->live;
	int fd = bpf_map__fd(m->skel->maps.probe_drops);
	int ncpu = libbpf_num_possible_cpus();
	uint64_t v[512], sum = probe_stats_bad_events(m->st) + m->bus_lost;

	if (!l || !cli_live_wanted(m->ctx->opts) || ncpu <= 0 || ncpu > 512 ||
	    now < m->live_drops_ns + 250000000ull)
		return;
	m->live_drops_ns = now;
	for (uint32_t k = 0; k < EP_PDROP__COUNT; k++) {
		/* Returns of calls entered before the attach: nothing lost. */
		if (k == EP_PDROP_UNMATCHED_RET)
			continue;
		if (bpf_map_lookup_elem(fd, &k, v))
			return;
		for (int c = 0; c < ncpu; c++)
			sum += v[c];
	}
	l->drops[LIVE_SRC_PROBES] = (int64_t)sum;
}

/* Resumes the held command once the BPF side has stopped it (hold_pid
 * cleared there) and, with `scanned`, its libraries have been scanned
 * since; read before the scan, so a stop seen means the scan saw every
 * startup library. force: resume whatever the state (end of the run). */
static void release_hold(struct probes_mod *m, bool stopped_before_scan, bool force)
{
	if (!m->hold_pid || (!stopped_before_scan && !force))
		return;
	if (force && m->skel->bss->hold_pid) {
		m->skel->bss->hold_pid = 0; /* not stopped yet: never will be */
		m->hold_pid = 0;
		return;
	}
	/* The other modules' boundaries (the cycle marker) must be in place
	 * before main runs too, or the first cycles are lost. */
	if (m->ctx->notify_held && !force)
		m->ctx->notify_held(m->ctx->rec, m->hold_pid);
	if (kill((pid_t)m->hold_pid, SIGCONT) && errno != ESRCH)
		log_warn("probes: cannot resume pid %u after attaching at its start-up: %s",
			 m->hold_pid, strerror(errno));
	else
		log_info("probes: pid %u held at start-up until its libraries were probed",
			 m->hold_pid);
	m->hold_pid = 0;
}

/* The command stopped itself at a dlopen/dlclose (after start-up): its
 * maps are scanned (under m->lock) and the other modules attach to what it
 * mapped before it resumes. dl_held is cleared before SIGCONT: the stopped
 * command cannot set it again in between. force: resume and stop holding
 * (end of the run). */
static void release_dl_hold(struct probes_mod *m, bool force)
{
	uint64_t t0;
	struct ptarget *t;

	if (!m->dl_hold_pid)
		return;
	if (force)
		m->skel->bss->dl_hold_pid = 0;
	if (!__atomic_load_n(&m->skel->bss->dl_held, __ATOMIC_ACQUIRE)) {
		if (force)
			m->dl_hold_pid = 0;
		return;
	}
	t0 = mono_ns();
	t = uprobe_targets_find(&m->tg, m->dl_hold_pid);
	if (!force && t && !t->exited) {
		scan_target(m, t);
		if (m->ctx->notify_held)
			m->ctx->notify_held(m->ctx->rec, m->dl_hold_pid);
	}
	__atomic_store_n(&m->skel->bss->dl_held, 0, __ATOMIC_RELEASE);
	if (kill((pid_t)m->dl_hold_pid, SIGCONT) && errno != ESRCH)
		log_warn("probes: cannot resume pid %u after its dlopen: %s", m->dl_hold_pid,
			 strerror(errno));
	m->dl_holds++;
	t0 = mono_ns() - t0;
	m->dl_hold_ns += t0;
	if (t0 > m->dl_hold_max_ns)
		m->dl_hold_max_ns = t0;
	if (force)
		m->dl_hold_pid = 0;
}

/* Without a thread-exit program: frees the slots (probe_threads) of
 * threads that are gone with nothing open, as the program would at their
 * exit. A slot whose thread id was reused meanwhile by a thread of a
 * traced process that already entered a probe could go with it (its
 * return then counted unmatched): a tid reused within one period. */
static void reclaim_slots(struct probes_mod *m)
{
	int fd = bpf_map__fd(m->skel->maps.probe_threads);
	uint32_t key, next, *prev = NULL, *gone = NULL;
	size_t ngone = 0, cap = 0, freed = 0;
	struct ep_probe_thread t;
	char path[160];

	/* Deleted after the walk: a key deleted under get_next_key would
	 * restart it from the first key. */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &t) || t.depth || t.overflow)
			continue;
		snprintf(path, sizeof(path), "%s/%u/task/%u", m->ctx->opts->proc_root, t.tgid, key);
		if (access(path, F_OK) && errno == ENOENT &&
		    ep_vec_push((void **)&gone, &ngone, &cap, sizeof(key), &key))
			break;
	}
	for (size_t i = 0; i < ngone; i++)
		freed += !bpf_map_delete_elem(fd, &gone[i]);
	free(gone);
	m->slots_freed += freed;
	if (freed)
		log_debug("probes: %zu call-stack slots of exited threads freed (%" PRIu64
			  " in all)",
			  freed, m->slots_freed);
}

static int pm_poll(void *state, uint64_t now)
{
	struct probes_mod *m = state;
	bool timer = now >= m->next_rescan_ns, mapped = false;
	uint64_t t0 = mono_ns(), t1;
	bool held;
	int n;

	if (m->stopped || !m->skel)
		return 0;
	n = m->draining ? 0 : ring_buffer__consume(m->rb);
	if (timer) {
		m->next_rescan_ns = now + RESCAN_PERIOD_NS;
		if (!m->exit_hooked)
			reclaim_slots(m);
	}
	/* No ld.so trigger: a new executable mapping is the cue instead. */
	if (m->ldso_refused && m->ctx->mmap_gen && *m->ctx->mmap_gen != m->seen_gen &&
	    now >= m->last_gen_scan + MAPPED_RESCAN_NS) {
		m->seen_gen = *m->ctx->mmap_gen;
		m->last_gen_scan = now;
		mapped = true;
	}
	/* Scans register new probe ids in the stats: the drain thread waits
	 * meanwhile (a first scan of a library is ~20 ms; the ring holds
	 * longer). */
	held = m->hold_pid && !__atomic_load_n(&m->skel->bss->hold_pid, __ATOMIC_ACQUIRE);
	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < m->tg.n; i++) {
		struct ptarget *t = uprobe_targets_at(&m->tg, i);

		if (!t->exited && now >= t->scan_after_ns &&
		    (t->rescan || timer || mapped || (held && t->pid == m->hold_pid)))
			scan_target(m, t);
	}
	release_hold(m, held, false);
	if (!m->hold_pid)
		release_dl_hold(m, false);
	update_live(m, now);
	update_live_drops(m, now);
	pthread_mutex_unlock(&m->lock);
	deliver_bus_spans(m);
	t1 = mono_ns();
	if (t1 - t0 > m->max_poll_ns)
		m->max_poll_ns = t1 - t0;
	return n < 0 ? n : 0;
}

static void pm_on_exit(void *state, uint32_t pid, uint64_t ts)
{
	struct probes_mod *m = state;
	struct ptarget *t = uprobe_targets_find(&m->tg, pid);

	(void)ts;
	if (!t || !m->skel)
		return;
	/* Its spans are in the ring already; the links only hold a dead
	 * task's perf events from now on. */
	if (!m->draining)
		ring_buffer__consume(m->rb);
	t->exited = true;
	forget_ip_cookies(m, t);
	/* Each uprobe link's release waited 0.3-0.4 s on the recorder thread
	 * under load, per exiting child of a fork storm that had lived long
	 * enough to be probed (issue 17): kept, disabled, for the release at
	 * stop (take_links), up to DEAD_LINKS_MAX (two fds each): the task
	 * is gone, its perf events fire no more. */
	for (size_t i = 0; i < t->ut.nlinks; i++) {
		if (m->dead.n < DEAD_LINKS_MAX)
			link_list_push(&m->dead, t->ut.links[i]);
		else
			bpf_link__destroy(t->ut.links[i]);
	}
	t->ut.nlinks = 0;
}

static void read_counters(struct probes_mod *m)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v, drops[EP_PDROP__COUNT] = { 0 };
	int fd;

	if (ncpu <= 0)
		return;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return;
	fd = bpf_map__fd(m->skel->maps.probe_counts);
	for (uint32_t id = 0; id < m->nids; id++) {
		uint64_t sum = 0;

		if (bpf_map_lookup_elem(fd, &id, v))
			continue;
		for (int c = 0; c < ncpu; c++)
			sum += v[c];
		probe_stats_set_calls(m->st, id, sum);
	}
	fd = bpf_map__fd(m->skel->maps.probe_drops);
	for (uint32_t r = 0; r < EP_PDROP__COUNT; r++) {
		if (bpf_map_lookup_elem(fd, &r, v))
			continue;
		for (int c = 0; c < ncpu; c++)
			drops[r] += v[c];
	}
	probe_stats_set_drops(m->st, drops);
	free(v);
}

static void collect_open_calls(struct probes_mod *m, uint64_t end)
{
	int fd = bpf_map__fd(m->skel->maps.probe_threads);
	uint32_t key, next, *prev = NULL;
	struct ep_probe_thread t;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &t))
			continue;
		for (uint32_t i = 0; i < t.depth && i < EP_PROBE_STACK_DEPTH; i++)
			probe_stats_add_open(m->st, t.tgid, key, t.f[i].probe_id, t.f[i].start_ns,
					     end);
	}
}

/* The probes' links, handed over by pm_stop (their programs are off). */
static void *detach_links(void *arg)
{
	struct probes_mod *m = arg;

	links_destroy_parallel(m->detach, m->ndetach);
	log_debug("probes: %zu links destroyed in %.1f ms (in the background)", m->ndetach,
		  (mono_ns() - m->detach_t0) / 1e6);
	free(m->detach);
	m->detach = NULL;
	return NULL;
}

/* Each uprobe link's release waits for a grace period: one after the other
 * they were most of a stop (3.2 s of the demo's 4.2 s, issue 17); handed
 * over, they are released together, beside the outputs. */
static void pm_take_links(void *state, struct link_list *out)
{
	struct probes_mod *m = state;

	for (size_t i = 0; i < m->dead.n; i++)
		link_list_push(out, m->dead.v[i]);
	m->dead.n = 0;
	uprobe_targets_take_links(&m->tg, out);
}

static void pm_stop(void *state)
{
	struct probes_mod *m = state;
	uint64_t end = mono_ns();

	if (m->stopped)
		return;
	if (!m->skel) {
		m->stopped = true;
		return;
	}
	/* Every program returns at once from here on (probe_off): counts,
	 * open calls and the ring are final now. The links' detach waits for
	 * three grace periods per uprobe, one uprobe at a time in the kernel
	 * (docs/probes.md, "Cost": 3 s for 31 uprobes under load), so it runs
	 * in a thread while the other modules stop and the outputs are
	 * written, and pm_close joins it. Inline if no thread can be had. */
	__atomic_store_n(&m->skel->bss->probe_off, 1, __ATOMIC_RELEASE);
	{
		/* Without memory for the list a link is destroyed at once. */
		struct link_list l = { 0 };

		uprobe_targets_take_links(&m->tg, &l);
		m->detach = l.v;
		m->ndetach = l.n;
		if (m->ndetach) {
			m->detach_t0 = end;
			m->detaching = !pthread_create(&m->detacher, NULL, detach_links, m);
			if (!m->detaching)
				detach_links(m);
		}
	}
	/* No program runs, no stop can come any more: never leave it stopped. */
	release_hold(m, !m->skel->bss->hold_pid, true);
	release_dl_hold(m, true);
	if (m->dl_holds)
		log_info("probes: pid held at %" PRIu64 " dlopen/dlclose call(s) of ld.so until "
			 "probed: %.1f ms in all, longest %.1f ms",
			 m->dl_holds, m->dl_hold_ns / 1e6, m->dl_hold_max_ns / 1e6);
	stop_draining(m);
	log_debug("probes: drain thread stopped at %.1f ms", (mono_ns() - end) / 1e6);
	if (m->nice_err)
		log_info("probes: drain thread ran at nice 0: %s", strerror(m->nice_err));
	ring_buffer__consume(m->rb);
	deliver_bus_spans(m);
	if (m->bus_lost)
		log_warn("probes: %" PRIu64
			 " spans of other modules' probes not delivered (recorder "
			 "thread too far behind)",
			 m->bus_lost);
	probe_stats_set_module_lost(m->st, m->bus_lost);
	read_counters(m);
	collect_open_calls(m, end);
	for (size_t d = 0; d < m->specs.n; d++) {
		const struct probe_def *def = &m->specs.defs[d];
		char probe[512];

		if (def->group != PG_USER || m->def_matched[d] ||
		    (def->usdt_provider && m->usdt_refused))
			continue;
		def_spec(def, probe, sizeof(probe));
		log_warn("probe %s: no traced process mapped a file matching '%s'", probe,
			 def->lib);
		probe_stats_add_not_found(m->st, probe, "library never mapped by a traced process");
	}
	if (!m->exit_hooked)
		log_info("probes: no thread-exit program: %" PRIu64
			 " call-stack slots of exited threads freed by the periodic scan",
			 m->slots_freed);
	if (m->nrescans)
		log_info("probes: %" PRIu64 " maps scans, %.1f us each on average", m->nrescans,
			 (double)m->rescan_ns / 1e3 / (double)m->nrescans);
	if (m->last_poll_ns)
		log_info(
			"probes: drain thread: %" PRIu64 " drains, longest gap between drains %.1f "
			"ms, %" PRIu64 " gaps over 50 ms, most spans in one drain %d; longest poll "
			"hook %.1f ms",
			m->ndrains, (double)m->max_poll_gap_ns / 1e6, m->long_poll_gaps,
			m->max_drained, (double)m->max_poll_ns / 1e6);
	m->stopped = true;
}

static int pm_report(void *state, cJSON *root)
{
	struct probes_mod *m = state;

	if (!m->skel)
		return 0;
	int64_t max_prompt;
	uint64_t prompts;
	int e = probe_stats_report_json(m->st, root);

	if (e)
		return e;
	max_prompt = probe_stats_max_prompt(m->st, &prompts);
	return llama_facts_report_json(m->llama, root, max_prompt, prompts);
}

static int pm_trace(void *state, FILE *out, bool *first)
{
	struct probes_mod *m = state;

	return probe_stats_trace_events(m->st, out, first);
}

static bool pm_has_trace(void *state)
{
	struct probes_mod *m = state;

	if (!m->skel)
		return false;
	return probe_stats_has_trace(m->st);
}

static void pm_summary(void *state, FILE *out)
{
	struct probes_mod *m = state;

	if (!m->skel)
		return;
	probe_stats_summary(m->st, out);
}

static void free_ptarget(void *rec)
{
	struct ptarget *t = rec;

	free(t->ips);
}

static void pm_close(void *state)
{
	struct probes_mod *m = state;

	if (!m)
		return;
	if (m->detaching) {
		uint64_t t0 = mono_ns();

		pthread_join(m->detacher, NULL);
		m->detaching = false;
		log_debug("probes: waited %.1f ms at close for the links' detach",
			  (mono_ns() - t0) / 1e6);
	}
	stop_draining(m);
	uprobe_targets_free(&m->tg, free_ptarget);
	/* Not handed over (a run that failed before its stop). */
	links_destroy_parallel(m->dead.v, m->dead.n);
	free(m->dead.v);
	ring_buffer__free(m->rb);
	if (m->skel) {
		bpf_link__destroy(m->skel->links.probe_thread_exit);
		m->skel->links.probe_thread_exit = NULL;
		bpf_link__destroy(m->skel->links.probe_thread_exit_raw);
		m->skel->links.probe_thread_exit_raw = NULL;
	}
	for (size_t i = 0; i < m->nfc; i++)
		free(m->fc[i].offsets);
	free(m->fc);
	free(m->ids);
	free(m->names);
	free(m->def_name);
	free(m->def_matched);
	free(m->def_warned);
	free(m->def_req);
	free(m->id_req);
	free(m->pending);
	free(m->spare);
	free(m->cyc);
	free(m->cycspare);
	probe_stats_free(m->st);
	llama_facts_free(m->llama);
	probe_specs_free(&m->specs);
	if (m->lock_ok)
		pthread_mutex_destroy(&m->lock);
	free(m);
}

const struct rec_module probes_rec_module = {
	.name = "probes",
	.open = pm_open,
	.bpf_part = "probe_",
	.bpf_setup = pm_bpf_setup,
	.bpf_loaded = pm_bpf_loaded,
	.bpf_refused = pm_bpf_refused,
	.add_target = pm_add_target,
	.attach = pm_attach,
	.poll = pm_poll,
	.on_exit = pm_on_exit,
	.take_links = pm_take_links,
	.stop = pm_stop,
	.report_json = pm_report,
	.trace_events = pm_trace,
	.has_trace = pm_has_trace,
	.summary = pm_summary,
	.close = pm_close,
};
