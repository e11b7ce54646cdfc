// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "kernel/bpf_parts.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>

#include "kernel/vstat.h"
#include "util/log.h"
#include "kernel/skel_types.h"
#include "modules.skel.h"

static bool has_prefix(const char *name, const char *prefix)
{
	return !strncmp(name, prefix, strlen(prefix));
}

/* Maps every part may use: the traced-process set, libbpf's USDT spec
 * maps ("__bpf_usdt_*"), global data, the stack walker's and the Python
 * walk's ("uw_*", "py_*"). */
static bool shared_map(const struct bpf_map *m)
{
	const char *name = bpf_map__name(m);

	return bpf_map__is_internal(m) || !strcmp(name, "targets") || !strncmp(name, "__", 2) ||
	       !strncmp(name, "uw_", 3) || !strncmp(name, "py_", 3);
}

/* Opens a copy of the object with every part off. */
static int open_obj(struct modules_bpf **out, int targets_fd, const char *btf_path)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = btf_path);
	struct modules_bpf *skel = modules_bpf__open_opts(&oo);
	struct bpf_program *p;
	struct bpf_map *m;
	int err;

	*out = NULL;
	if (!skel)
		return errno ? -errno : -ENOMEM;
	bpf_object__for_each_program(p, skel->obj) bpf_program__set_autoload(p, false);
	bpf_object__for_each_map(m, skel->obj)
	{
		if (!shared_map(m))
			bpf_map__set_autocreate(m, false);
	}
	/* The stack walker's maps (bpf/uwalk.h) are the CPU sampler's when a
	 * part walks stacks (its setup reuses them); small placeholders
	 * otherwise. */
	bpf_object__for_each_map(m, skel->obj)
	{
		if (!strncmp(bpf_map__name(m), "uw_", 3))
			bpf_map__set_max_entries(m, 1);
	}
	/* Likewise the Python walk's process and thread maps (the arrays keep
	 * their size: a few KiB). */
	bpf_map__set_max_entries(skel->maps.py_procs, 1);
	bpf_map__set_max_entries(skel->maps.py_tstates, 1);
	err = bpf_map__reuse_fd(skel->maps.targets, targets_fd);
	if (err) {
		modules_bpf__destroy(skel);
		return err;
	}
	*out = skel;
	return 0;
}

static void enable(struct modules_bpf *skel, const char *prefix, bool on)
{
	struct bpf_program *p;
	struct bpf_map *m;

	bpf_object__for_each_program(p, skel->obj)
	{
		if (has_prefix(bpf_program__name(p), prefix))
			bpf_program__set_autoload(p, on);
	}
	bpf_object__for_each_map(m, skel->obj)
	{
		if (!shared_map(m) && has_prefix(bpf_map__name(m), prefix))
			bpf_map__set_autocreate(m, on);
	}
}

/* Fault injection: a program type the kernel refuses makes the part fail
 * at load, as a missing kernel feature would. fault is the part's prefix
 * (its first program refused) or "PREFIX:PROGRAM[,PROGRAM...]" (the first
 * of those programs that is to load: each load of the part refuses one
 * more, as a kernel refusing both a program and its twin would). */
static void break_part(struct modules_bpf *skel, const char *prefix, const char *fault)
{
	const char *colon = fault ? strchr(fault, ':') : NULL;
	struct bpf_program *p;

	if (!fault || strncmp(fault, prefix, colon ? (size_t)(colon - fault) : strlen(fault) + 1) ||
	    (colon && strlen(prefix) != (size_t)(colon - fault)))
		return;
	if (colon) {
		for (const char *q = colon + 1; *q;) {
			const char *c = strchr(q, ',');
			size_t k = c ? (size_t)(c - q) : strlen(q);
			char name[128];

			if (k < sizeof(name)) {
				memcpy(name, q, k);
				name[k] = '\0';
				p = bpf_object__find_program_by_name(skel->obj, name);
				if (p && has_prefix(name, prefix) && bpf_program__autoload(p)) {
					bpf_program__set_type(p, BPF_PROG_TYPE_UNSPEC);
					return;
				}
			}
			q += k + (c ? 1 : 0);
		}
		return;
	}
	bpf_object__for_each_program(p, skel->obj)
	{
		if (!has_prefix(bpf_program__name(p), prefix) || !bpf_program__autoload(p))
			continue;
		bpf_program__set_type(p, BPF_PROG_TYPE_UNSPEC);
		return;
	}
}

static int load_obj(struct modules_bpf *skel, struct vstat *vs)
{
	int err;

	vstat_prepare(vs, skel->obj);
	err = modules_bpf__load(skel);
	vstat_collect(vs, skel->obj, "modules", err);
	return err;
}

/* Opens, sets up and loads one copy holding part i alone. *skel is NULL
 * when the part did not want to take part after all. */
static int load_alone(const struct bpf_part *part, int targets_fd, const char *btf_path,
		      const char *fault, struct modules_bpf **skel, struct vstat *vs)
{
	int err = open_obj(skel, targets_fd, btf_path);

	if (err)
		return err;
	enable(*skel, part->prefix, true);
	err = part->setup(part->state, *skel);
	if (err <= 0) {
		modules_bpf__destroy(*skel);
		*skel = NULL;
		return err;
	}
	break_part(*skel, part->prefix, fault);
	err = load_obj(*skel, vs);
	if (err) {
		modules_bpf__destroy(*skel);
		*skel = NULL;
	}
	return err;
}

/* Part alone, again without each program the kernel refuses while the
 * part can do without it. Each refusal turns one program off (for a twin
 * or for nothing): 8 is more than any part has programs to give up. */
#define MAX_REFUSED 8

static int load_degrading(const struct bpf_part *part, int targets_fd, const char *btf_path,
			  const char *fault, struct modules_bpf **skel, struct vstat *vs)
{
	const char *what = part->what ? part->what : part->prefix;
	struct vstat_degraded gave[MAX_REFUSED];
	size_t ngave = 0;
	int err = 0;

	for (int k = 0; k <= MAX_REFUSED; k++) {
		const struct vstat_prog *bad;
		const char *lost, *reason;

		err = load_alone(part, targets_fd, btf_path, fault, skel, vs);
		if (err >= 0)
			break;
		/* The whole part broken on purpose: as a kernel without
		 * something all of it needs, nothing to do without. */
		if (!part->refused || (fault && !strcmp(fault, part->prefix)))
			return err;
		bad = vstat_refused(vs, "modules");
		if (!bad || !has_prefix(bad->name, part->prefix))
			return err;
		reason = bad->reason[0] ? bad->reason : strerror(-err);
		lost = k < MAX_REFUSED ? part->refused(part->state, bad->name) : NULL;
		if (!lost) {
			/* What the part gave up on the way is moot: all of it
			 * is lost now (its loaded hook says so). */
			log_warn("%s: this kernel refuses BPF program %s (%s), which it cannot do "
				 "without",
				 what, bad->name, reason);
			return err;
		}
		snprintf(gave[ngave].program, sizeof(gave[ngave].program), "%s", bad->name);
		snprintf(gave[ngave].reason, sizeof(gave[ngave].reason), "%s", reason);
		snprintf(gave[ngave].lost, sizeof(gave[ngave].lost), "%s", lost);
		ngave++;
	}
	/* Said once the part is in: each program given up, and what for. */
	for (size_t i = 0; *skel && i < ngave; i++) {
		log_warn("%s: this kernel refuses BPF program %s (%s): %s", what, gave[i].program,
			 gave[i].reason, gave[i].lost);
		vstat_add_degraded(vs, gave[i].program, gave[i].reason, gave[i].lost);
	}
	return err;
}

int bpf_parts_load(const struct bpf_part *parts, size_t n, int targets_fd, const char *btf_path,
		   const char *fault_prefix, struct bpf_parts_objs *objs, struct vstat *vs)
{
	const size_t max = sizeof(objs->obj) / sizeof(objs->obj[0]);
	struct modules_bpf *skel;
	bool want[sizeof(objs->obj) / sizeof(objs->obj[0])] = { false };
	size_t nwant = 0;
	int err, rc;

	objs->n = 0;
	if (n > max)
		return -E2BIG;
	err = open_obj(&skel, targets_fd, btf_path);
	if (err) {
		log_warn("cannot open the modules' BPF object: %s", strerror(-err));
		for (size_t i = 0; i < n; i++) {
			rc = parts[i].loaded(parts[i].state, NULL, err);
			if (rc)
				return rc;
		}
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		enable(skel, parts[i].prefix, true);
		rc = parts[i].setup(parts[i].state, skel);
		if (rc < 0) {
			modules_bpf__destroy(skel);
			return rc;
		}
		if (!rc) {
			enable(skel, parts[i].prefix, false);
			continue;
		}
		want[i] = true;
		nwant++;
		break_part(skel, parts[i].prefix, fault_prefix);
	}
	if (!nwant) {
		modules_bpf__destroy(skel);
		return 0;
	}
	err = load_obj(skel, vs);
	if (!err) {
		objs->obj[objs->n++] = skel;
		for (size_t i = 0; i < n; i++) {
			if (!want[i])
				continue;
			rc = parts[i].loaded(parts[i].state, skel, 0);
			if (rc)
				return rc;
		}
		return 0;
	}
	modules_bpf__destroy(skel);
	/* One load that fails costs every part: find which by loading them
	 * one by one (libbpf's log, under -vv, says why). */
	log_info("BPF: the modules' programs did not load together (%s); loading each part alone",
		 strerror(-err));
	for (size_t i = 0; i < n; i++) {
		if (!want[i])
			continue;
		err = load_degrading(&parts[i], targets_fd, btf_path, fault_prefix, &skel, vs);
		if (err < 0) {
			rc = parts[i].loaded(parts[i].state, NULL, err);
			if (rc)
				return rc;
			continue;
		}
		if (!skel)
			continue;
		objs->obj[objs->n++] = skel;
		rc = parts[i].loaded(parts[i].state, skel, 0);
		if (rc)
			return rc;
	}
	return 0;
}

void bpf_parts_close(struct bpf_parts_objs *objs)
{
	for (size_t i = 0; i < objs->n; i++)
		modules_bpf__destroy(objs->obj[i]);
	objs->n = 0;
}
