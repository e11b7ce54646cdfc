// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "util/vec.h"
#include "alloc/alloc_attach.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "alloc/alloc_syms.h"
#include "alloc/probe_point.h"
#include "events/alloc.h"
#include "util/log.h"
#include "proc/proc_maps.h"
#include "probes/uprobe_discovery.h"

#define MAX_MAPS_BYTES (16u << 20)
#define MAX_EXEC_FILES 1024

/* BPF_LINK_CREATE for a uprobe session, in the layout of the kernel's
 * union bpf_attr (link_create.uprobe_multi), which Debian 12's headers and
 * libbpf 1.1 predate. */
#define EP_BPF_LINK_CREATE 28
struct ep_link_create_uprobe_multi {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, mflags, pid;
	uint8_t zero[128 - 52]; /* the rest of union bpf_attr: zero */
};

static int attach_session(int prog_fd, uint32_t pid, const char *path, uint64_t off,
			  uint64_t cookie)
{
	struct ep_link_create_uprobe_multi a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)prog_fd;
	a.attach_type = EP_BPF_TRACE_UPROBE_SESSION;
	a.path = (uint64_t)(uintptr_t)path;
	a.offsets = (uint64_t)(uintptr_t)&off;
	a.cookies = (uint64_t)(uintptr_t)&cookie;
	a.cnt = 1;
	a.pid = pid;
	fd = syscall(__NR_bpf, EP_BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : (int)fd;
}

static int attach_one(struct alloc_probes *m, struct alloc_target *t, const char *path,
		      uint64_t off, enum ep_alloc_kind kind)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = kind);
	struct bpf_link *l;

	if (kind == EP_AK_NONE) {
		l = bpf_program__attach_uprobe_opts(m->free_prog, (pid_t)t->pid, path, off, &o);
		if (!l)
			return -errno;
		if (uprobe_target_keep(&t->ut, l))
			return -ENOMEM;
		m->nlinks++;
		return 0;
	}
	if (m->session_fd >= 0) {
		int fd = attach_session(m->session_fd, t->pid, path, off, kind);

		if (fd < 0)
			return fd;
		if (ep_vec_push((void **)&t->sess_fds, &t->nsess, &t->capsess, sizeof(fd), &fd)) {
			close(fd);
			return -ENOMEM;
		}
		m->nlinks++;
		return 0;
	}
	l = bpf_program__attach_uprobe_opts(m->entry, (pid_t)t->pid, path, off, &o);
	if (!l)
		return -errno;
	if (uprobe_target_keep(&t->ut, l))
		return -ENOMEM;
	o.retprobe = true;
	o.bpf_cookie = 0;
	l = bpf_program__attach_uprobe_opts(m->ret, (pid_t)t->pid, path, off, &o);
	if (!l)
		return -errno;
	if (uprobe_target_keep(&t->ut, l))
		return -ENOMEM;
	m->nlinks += 2;
	return 0;
}

/* Bytes to move a probe at file offset off so that the kernel emulates the
 * probed instruction (probe_point.h); 0 where it cannot be read. */
static uint64_t emulated_skip(int fd, uint64_t off)
{
#if defined(__x86_64__)
	uint8_t code[16];
	ssize_t n = pread(fd, code, sizeof(code), (off_t)off);

	return n > 0 ? alloc_probe_skip_x86(code, (size_t)n) : 0;
#else
	(void)fd;
	(void)off;
	return 0;
#endif
}

/* Where the function at file offset off jumps first (a tail call), or 0. */
static uint64_t tail_jump(int fd, uint64_t off)
{
#if defined(__x86_64__)
	uint8_t code[8];
	ssize_t n = pread(fd, code, sizeof(code), (off_t)off);

	return n > 0 ? alloc_tail_jump_x86(code, (size_t)n, off) : 0;
#else
	(void)fd;
	(void)off;
	return 0;
#endif
}

static void scan_file(struct alloc_probes *m, struct alloc_target *t, const struct ud_file *f)
{
	const char *names[64];
	uint64_t off[64] = { 0 }, jump[64];
	bool probe[64];
	char path[512];
	int fd, n, attached = 0;

	/* ld.so's own minimal allocator serves only the loader. */
	if (!strncmp(proc_maps_basename(f->path), "ld-", 3) || alloc_nsyms > 64)
		return;
	for (size_t i = 0; i < alloc_nsyms; i++)
		names[i] = alloc_syms[i].name;
	fd = ud_open_mapped(m->proc_root, t->pid, f, path, sizeof(path));
	if (fd < 0)
		return;
	n = ud_find_functions(fd, names, alloc_nsyms, off);
	if (n <= 0 || !alloc_pick_syms(off, probe)) {
		close(fd);
		return;
	}
	for (size_t i = 0; i < alloc_nsyms; i++)
		jump[i] = probe[i] ? tail_jump(fd, off[i]) : 0;
	alloc_drop_tail_wrappers(off, jump, probe);
	for (size_t i = 0; i < alloc_nsyms; i++) {
		int err;

		if (!probe[i])
			continue;
		err = attach_one(m, t, path, off[i] + emulated_skip(fd, off[i]),
				 alloc_syms[i].kind);
		if (err)
			log_warn("alloc: pid %u: cannot probe %s in %s: %s", t->pid,
				 alloc_syms[i].name, f->path, strerror(-err));
		else
			attached++;
	}
	close(fd);
	if (attached) {
		log_info("alloc: pid %u: %d allocator functions probed in %s", t->pid, attached,
			 f->path);
		bool known = false;

		for (size_t i = 0; i < m->nprobed; i++)
			known = known || !strcmp(m->probed[i], f->path);
		if (!known && m->nprobed < sizeof(m->probed) / sizeof(m->probed[0]))
			snprintf(m->probed[m->nprobed++], sizeof(m->probed[0]), "%s", f->path);
	}
}

static void read_comm(struct alloc_probes *m, struct alloc_target *t)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%u/comm", m->proc_root, t->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	n = read(fd, t->comm, sizeof(t->comm) - 1);
	close(fd);
	if (n <= 0)
		return;
	t->comm[n] = '\0';
	t->comm[strcspn(t->comm, "\n")] = '\0';
}

void alloc_scan_target(struct alloc_probes *m, struct alloc_target *t)
{
	struct proc_maps pm;
	struct ud_file *files;
	size_t n;

	if (uprobe_target_files(m->proc_root, t->pid, MAX_MAPS_BYTES, MAX_EXEC_FILES, &pm, &files,
				&n))
		return; /* gone: on_exit follows */
	read_comm(m, t);
	for (size_t i = 0; i < n; i++)
		if (!uprobe_target_seen(&t->ut, &files[i]))
			scan_file(m, t, &files[i]);
	free(files);
	proc_maps_free(&pm);
}

void alloc_target_detach(struct alloc_target *t)
{
	uprobe_target_unwind(&t->ut, 0);
	for (size_t i = 0; i < t->nsess; i++)
		close(t->sess_fds[i]);
	t->nsess = 0;
}

void alloc_target_free(void *rec)
{
	struct alloc_target *t = rec;

	alloc_target_detach(t);
	free(t->sess_fds);
	t->sess_fds = NULL;
}
