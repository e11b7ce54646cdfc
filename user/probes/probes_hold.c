// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Launch mode's holds: every process of the launched tree stops itself
 * (bpf/probes.bpf.c hold_self) after a fork, after an exec and whenever
 * ld.so's link map is consistent (start-up, dlopen, dlclose); here it is
 * scanned, every module attaches to what it maps (rec_ctx.notify_held),
 * and it is resumed. Apart from probes_module.c because it is the one
 * place that signals the traced processes.
 *
 * Several processes may be held at once (one entry each in the `holds`
 * map). A hold costs the process one poll of the collector (<= 10 ms,
 * the recorder loop's period) plus the scan of what it newly mapped; a
 * process never waits for anything else: an exec'd static binary is held
 * once, at its exec, and never again. A child whose fork event has not
 * reached the collector yet (the sampler's ring is drained first in each
 * round, so normally it has) waits at most HOLD_UNKNOWN_NS, then is
 * scanned by this module alone.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>
#include <sys/types.h>

#include "kernel/skel_types.h"
#include "modules.skel.h"
#include "probes/probes_internal.h"
#include "util/clock.h"
#include "util/log.h"

/* How long a held process whose fork event is still missing waits for it
 * (the other modules attach only to processes they know). */
#define HOLD_UNKNOWN_NS (200ull * 1000 * 1000)

static const char *const why_name[EP_HOLD__COUNT] = { "", "fork", "exec", "link-map change",
						      "start-up" };

/* Resumes pid; its entry's held flag is cleared first (BPF_EXIST: an
 * entry its exit deleted is not made again). */
static void resume(struct probes_mod *m, uint32_t pid, struct ep_hold *h)
{
	int fd = bpf_map__fd(m->skel->maps.probe_holds);

	h->held = EP_HOLD_NONE;
	bpf_map_update_elem(fd, &pid, h, BPF_EXIST);
	if (kill((pid_t)pid, SIGCONT) && errno != ESRCH)
		log_warn("probes: cannot resume pid %u, held until probed: %s", pid,
			 strerror(errno));
}

/* One held process: scanned, the other modules told, resumed. False:
 * left held for the next poll (its fork event not seen yet). */
static bool release_one(struct probes_mod *m, uint32_t pid, struct ep_hold *h, uint64_t now)
{
	struct ptarget *t = uprobe_targets_find(&m->tg, pid);
	uint32_t why = h->held < EP_HOLD__COUNT ? h->held : EP_HOLD_NONE;
	uint64_t t0 = mono_ns(), spent;

	if (!t && now < h->since_ns + HOLD_UNKNOWN_NS)
		return false;
	if (!t) {
		struct ptarget nt = { .pid = pid, .rescan = true };

		log_info("probes: pid %u held before its fork was seen: probed by this module only",
			 pid);
		if (!uprobe_targets_add(&m->tg, &nt))
			t = uprobe_targets_find(&m->tg, pid);
	}
	if (t && !t->exited) {
		probes_scan_target(m, t);
		if (m->ctx->notify_held)
			m->ctx->notify_held(m->ctx->rec, pid);
	}
	resume(m, pid, h);
	spent = mono_ns() - t0;
	m->holds[why]++;
	/* From the stop on (the poll's wait included). */
	spent = now > h->since_ns ? spent + (now - h->since_ns) : spent;
	m->hold_ns += spent;
	if (spent > m->hold_max_ns)
		m->hold_max_ns = spent;
	log_debug("probes: pid %u held at its %s until probed: %.1f ms", pid, why_name[why],
		  spent / 1e6);
	return true;
}

/* Every process held now is scanned and resumed (force: resumed only, the
 * run is ending; hold_tree is cleared first so none stops again). Called
 * by the poll when hold_gen moved or a hold was left for later. */
void probes_release_holds(struct probes_mod *m, uint64_t now, bool force)
{
	int fd;
	uint32_t key, next, *prev = NULL;
	struct ep_hold h;

	if (!m->hold_tree || !m->skel)
		return;
	if (force)
		__atomic_store_n(&m->skel->bss->hold_tree, 0, __ATOMIC_RELEASE);
	m->seen_hold_gen = __atomic_load_n(&m->skel->bss->hold_gen, __ATOMIC_ACQUIRE);
	m->holds_waiting = false;
	fd = bpf_map__fd(m->skel->maps.probe_holds);
	/* An entry updated in place keeps its place in the walk. */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &h) || !h.held)
			continue;
		if (force)
			resume(m, key, &h);
		else if (!release_one(m, key, &h, now))
			m->holds_waiting = true;
	}
}

/* The process is gone: its entry too (its exit program deletes it while
 * holding is on; this covers the rest). */
void probes_forget_hold(struct probes_mod *m, uint32_t pid)
{
	if (m->hold_tree && m->skel)
		bpf_map_delete_elem(bpf_map__fd(m->skel->maps.probe_holds), &pid);
}
