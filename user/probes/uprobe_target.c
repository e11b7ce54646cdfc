// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "probes/uprobe_target.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/uprobe_discovery.h"
#include "proc/proc_maps.h"
#include "util/vec.h"

int uprobe_target_files(const char *proc_root, uint32_t pid, size_t max_maps_bytes,
			size_t max_files, struct proc_maps *pm, struct ud_file **files, size_t *n)
{
	char path[128], *buf = NULL;
	size_t len;
	int err;

	*files = NULL;
	*n = 0;
	memset(pm, 0, sizeof(*pm));
	snprintf(path, sizeof(path), "%s/%u/maps", proc_root, pid);
	err = proc_maps_read_file(path, max_maps_bytes, &buf, &len);
	if (err)
		return err;
	err = proc_maps_parse_buf(buf, len, 1u << 20, pm);
	free(buf);
	if (err)
		return err;
	*files = calloc(max_files, sizeof(**files));
	if (!*files) {
		proc_maps_free(pm);
		return -ENOMEM;
	}
	*n = ud_exec_files(pm, *files, max_files);
	return 0;
}

bool uprobe_target_seen(struct uprobe_target *t, const struct ud_file *f)
{
	uint64_t k[2] = { f->dev, f->inode };

	for (size_t i = 0; i < t->nseen; i++)
		if (t->seen[i][0] == f->dev && t->seen[i][1] == f->inode)
			return true;
	/* Without memory it is looked at again at the next scan. */
	ep_vec_push((void **)&t->seen, &t->nseen, &t->capseen, sizeof(k), k);
	return false;
}

int uprobe_target_keep(struct uprobe_target *t, struct bpf_link *l)
{
	int err = ep_vec_push((void **)&t->links, &t->nlinks, &t->caplinks, sizeof(l), &l);

	if (err)
		bpf_link__destroy(l);
	return err;
}

void uprobe_target_unwind(struct uprobe_target *t, size_t n)
{
	while (t->nlinks > n)
		bpf_link__destroy(t->links[--t->nlinks]);
}

void uprobe_target_take_links(struct uprobe_target *t, struct link_list *out)
{
	for (size_t i = 0; i < t->nlinks; i++)
		link_list_push(out, t->links[i]);
	t->nlinks = 0;
}

void uprobe_target_free(struct uprobe_target *t)
{
	uprobe_target_unwind(t, 0);
	free(t->links);
	free(t->seen);
	memset(t, 0, sizeof(*t));
}

void uprobe_targets_init(struct uprobe_targets *s, size_t size, size_t pid_off, size_t ut_off)
{
	memset(s, 0, sizeof(*s));
	s->size = size;
	s->ut_off = ut_off;
	pid_index_init(&s->idx, size, pid_off);
}

void uprobe_targets_free(struct uprobe_targets *s, void (*fini)(void *rec))
{
	for (size_t i = 0; i < s->n; i++) {
		if (fini)
			fini(uprobe_targets_at(s, i));
		uprobe_target_free(uprobe_targets_ut(s, i));
	}
	free(s->v);
	pid_index_free(&s->idx);
	s->v = NULL;
	s->n = s->cap = 0;
}

void *uprobe_targets_at(const struct uprobe_targets *s, size_t i)
{
	return (char *)s->v + i * s->size;
}

struct uprobe_target *uprobe_targets_ut(const struct uprobe_targets *s, size_t i)
{
	return (struct uprobe_target *)((char *)uprobe_targets_at(s, i) + s->ut_off);
}

void *uprobe_targets_find(const struct uprobe_targets *s, uint32_t pid)
{
	int64_t i = pid_index_find(&s->idx, s->v, pid);

	return i >= 0 ? uprobe_targets_at(s, (size_t)i) : NULL;
}

int uprobe_targets_add(struct uprobe_targets *s, const void *rec)
{
	uint32_t pid;
	int err;

	memcpy(&pid, (const char *)rec + s->idx.pid_off, sizeof(pid));
	if (uprobe_targets_find(s, pid))
		return 0;
	if (s->n >= UINT32_MAX)
		return -ENOMEM;
	err = ep_vec_push(&s->v, &s->n, &s->cap, s->size, rec);
	if (!err && (err = pid_index_add(&s->idx, pid, (uint32_t)(s->n - 1))))
		s->n--;
	return err;
}

void uprobe_targets_take_links(struct uprobe_targets *s, struct link_list *out)
{
	for (size_t i = 0; i < s->n; i++)
		uprobe_target_take_links(uprobe_targets_ut(s, i), out);
}

void uprobe_targets_destroy_links(struct uprobe_targets *s)
{
	for (size_t i = 0; i < s->n; i++)
		uprobe_target_unwind(uprobe_targets_ut(s, i), 0);
}
