/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The bookkeeping of the modules that put uprobes on each traced process
 * (probes, cycles, alloc): per process, the files of its maps already
 * looked at, so that a rescan looks at new ones only, and the links
 * attached in them, released when it exits or at the end of the run.
 *
 * A module keeps one record per process, of its own type, holding its
 * uint32_t pid and a struct uprobe_target; struct uprobe_targets holds the
 * records (they move as it grows: pointers to them last until the next
 * add) and finds them by pid.
 */
#ifndef EBPF_PROF_UPROBE_TARGET_H
#define EBPF_PROF_UPROBE_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "overload/links.h"
#include "proc/pid_index.h"

struct bpf_link;
struct proc_maps;
struct ud_file;

struct uprobe_target {
	uint64_t (*seen)[2]; /* (dev, inode) of the files looked at */
	size_t nseen, capseen;
	struct bpf_link **links;
	size_t nlinks, caplinks;
};

/* The executable files pid has mapped (ud_exec_files): *n of them, at
 * most max_files, in *files (free it), their paths pointing into *pm
 * (proc_maps_free it); /proc/PID/maps is read up to max_maps_bytes. 0;
 * -ENOENT: pid is gone; another -errno: nothing listed, nothing to free. */
int uprobe_target_files(const char *proc_root, uint32_t pid, size_t max_maps_bytes,
			size_t max_files, struct proc_maps *pm, struct ud_file **files, size_t *n);
/* Whether f was looked at in t's maps before; from now on it has been. */
bool uprobe_target_seen(struct uprobe_target *t, const struct ud_file *f);
/* Keeps l among t's links; without memory l is destroyed. 0 or -ENOMEM. */
int uprobe_target_keep(struct uprobe_target *t, struct bpf_link *l);
/* Destroys t's links past the first n (the attaches of a probe that
 * failed halfway: n is the count before them); 0: all of them. */
void uprobe_target_unwind(struct uprobe_target *t, size_t n);
/* Hands t's links over to out (released together at the end of the run,
 * rec_module.h take_links). */
void uprobe_target_take_links(struct uprobe_target *t, struct link_list *out);
/* Destroys t's links and frees what t holds. */
void uprobe_target_free(struct uprobe_target *t);

struct uprobe_targets {
	void *v; /* the records */
	size_t n, cap;
	size_t size, ut_off; /* a record's size; the offset of its struct uprobe_target */
	struct pid_index idx;
};

/* For records of type `type`, with members pid (uint32_t) and ut. */
#define UPROBE_TARGETS_INIT(set, type, pid, ut) \
	uprobe_targets_init(set, sizeof(type), offsetof(type, pid), offsetof(type, ut))
void uprobe_targets_init(struct uprobe_targets *s, size_t size, size_t pid_off, size_t ut_off);
/* Destroys every record's links and frees the records; fini (if not NULL)
 * first frees what the module's part of each holds. */
void uprobe_targets_free(struct uprobe_targets *s, void (*fini)(void *rec));

/* Record i (< s->n). */
void *uprobe_targets_at(const struct uprobe_targets *s, size_t i);
/* The record of pid, or NULL. */
void *uprobe_targets_find(const struct uprobe_targets *s, uint32_t pid);
/* Adds a copy of rec unless a record of its pid is there already. 0 or
 * -ENOMEM. */
int uprobe_targets_add(struct uprobe_targets *s, const void *rec);
/* The struct uprobe_target of record i. */
struct uprobe_target *uprobe_targets_ut(const struct uprobe_targets *s, size_t i);

/* Every record's links handed over to out (uprobe_target_take_links). */
void uprobe_targets_take_links(struct uprobe_targets *s, struct link_list *out);
/* Every record's links destroyed. */
void uprobe_targets_destroy_links(struct uprobe_targets *s);

#endif
