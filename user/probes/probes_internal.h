/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The probes module's state (struct probes_mod), shared by the files that
 * implement it: probes_module.c (lifecycle, BPF set-up, poll, stop),
 * probes_attach.c (discovery and attach per target), probes_drain.c (the
 * span ring and its drain thread), probes_hold.c (launch-mode holds) and
 * probes_output.c (live view and report outputs). Not part of the
 * interface: see probes.h.
 */
#ifndef EP_PROBES_INTERNAL_H
#define EP_PROBES_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "events/probes.h"
#include "kernel/vstat.h"
#include "overload/links.h"
#include "probes/probes.h"
#include "probes/uprobe_discovery.h"
#include "probes/uprobe_target.h"

#include <cjson/cJSON.h>

struct modules_bpf;

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
 * per child of a fork storm, most of which never live that long); its
 * calls before are not timed, as they were not before its first scan at
 * the next poll. */
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
	bool usdt_refused, ldso_refused, exit_refused, exit_raw_refused, hold_refused;
	bool fork_hold_refused;
	bool exit_hooked; /* a thread-exit program is attached */
	char lost[VSTAT_REASON_LEN];
	uint64_t seen_gen, last_gen_scan; /* rec_ctx.mmap_gen at the last rescan, and when */
	uint64_t slots_freed;		  /* by reclaim_slots */
	bool prepared;
	struct ring_buffer *rb;
	struct probe_stats *st;
	struct llama_facts *llama; /* parameters read at llama.cpp set-up calls */
	struct llm_tracker *llm;   /* decodes as prompts and tokens (drain thread, under lock) */
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
	/* Launch mode: every process of the launched tree is held until
	 * probed (bpf/probes.bpf.c holds, probes_hold.c); hold_gen as last
	 * walked; holds_waiting: one was left for the next poll. Holds by
	 * enum ep_hold_why, those at a dlopen/dlclose (not a start-up), and
	 * the time the processes spent stopped by them (from the stop). */
	bool hold_tree, holds_waiting, hold_wake;
	/* Launch mode with nothing to probe: loaded for the holds alone. */
	bool holds_only;
	/* Launch mode: ld.so's hook attached for every process (probe_ldso
	 * filters by target) in that file (probes_attach.c). */
	bool ldso_global, ldso_global_failed;
	struct bpf_link *ldso_link;
	uint64_t ldso_dev, ldso_inode;
	uint64_t seen_hold_gen;
	uint64_t holds[EP_HOLD__COUNT], hold_ns, hold_max_ns;
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

/* probes_attach.c: names looked up, and the per-target scan. */
int probes_add_name(struct probes_mod *m, const char *name, size_t *idx);
void probes_def_spec(const struct probe_def *def, char *out, size_t len);
void probes_forget_ip_cookies(struct probes_mod *m, struct ptarget *t);
void probes_scan_target(struct probes_mod *m, struct ptarget *t);

/* probes_drain.c: the ring's callback and the drain thread. */
void probes_start_draining(struct probes_mod *m);
int probes_on_event(void *ctx, void *data, size_t size);
void probes_deliver_bus_spans(struct probes_mod *m);
void probes_stop_draining(struct probes_mod *m);

/* probes_hold.c: resuming the held processes of the launched tree. */
void probes_release_holds(struct probes_mod *m, uint64_t now, bool force);
void probes_forget_hold(struct probes_mod *m, uint32_t pid);

/* probes_output.c: the live view, and the rec_module output hooks. */
void probes_update_live(struct probes_mod *m, uint64_t now);
void probes_update_live_drops(struct probes_mod *m, uint64_t now);
int pm_report(void *state, cJSON *root);
int pm_trace(void *state, FILE *out, bool *first);
bool pm_has_trace(void *state);
void pm_summary(void *state, FILE *out);

#endif
