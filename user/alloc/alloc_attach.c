// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "util/vec.h"
#include "alloc/alloc_attach.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "alloc/alloc_syms.h"
#include "alloc/probe_point.h"
#include "events/alloc.h"
#include "events/alloc_preload.h"
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

static void note_probed(struct alloc_probes *m, const char *path)
{
	bool known = false;

	for (size_t i = 0; i < m->nprobed; i++)
		known = known || !strcmp(m->probed[i], path);
	if (!known && m->nprobed < sizeof(m->probed) / sizeof(m->probed[0]))
		snprintf(m->probed[m->nprobed++], sizeof(m->probed[0]), "%s", path);
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
		note_probed(m, f->path);
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

/* The preloaded library's probed function in the file open at fd (path:
 * what the kernel attaches to, name: what is said). 0 or -errno. */
static int attach_preload_fd(struct alloc_probes *m, struct alloc_target *t, int fd,
			     const char *path, const char *name)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o);
	const char *names[1] = { EP_PRELOAD_FUNC };
	uint64_t off = 0;
	struct bpf_link *l;

	if (ud_find_functions(fd, names, 1, &off) <= 0 || !off) {
		log_warn("alloc: pid %u: no %s in %s: its allocations are not seen", t->pid,
			 EP_PRELOAD_FUNC, name);
		return -ENOENT;
	}
	l = bpf_program__attach_uprobe_opts(m->preload_prog, (pid_t)t->pid, path, off, &o);
	if (!l || uprobe_target_keep(&t->ut, l)) {
		int err = l ? -ENOMEM : -errno;

		log_warn("alloc: pid %u: cannot probe %s in %s: %s", t->pid, EP_PRELOAD_FUNC, name,
			 strerror(-err));
		return err;
	}
	m->nlinks++;
	log_info("alloc: pid %u: sampled inside the process, %s probed in %s", t->pid,
		 EP_PRELOAD_FUNC, name);
	note_probed(m, name);
	return 0;
}

/* The preloaded library's probed function, in the library t maps. */
static void attach_preload(struct alloc_probes *m, struct alloc_target *t, const struct ud_file *f)
{
	char path[512];
	int fd;

	fd = ud_open_mapped(m->proc_root, t->pid, f, path, sizeof(path));
	if (fd < 0)
		return;
	attach_preload_fd(m, t, fd, path, f->path);
	close(fd);
}

int alloc_preload_target(struct alloc_probes *m, struct alloc_target *t, const char *lib)
{
	struct ud_file f = { .path = lib };
	struct stat st;
	int fd, err;

	fd = open(lib, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	f.dev = st.st_dev;
	f.inode = st.st_ino;
	err = attach_preload_fd(m, t, fd, lib, lib);
	close(fd);
	if (err)
		return err;
	/* Found in its maps later: already probed. */
	uprobe_target_seen(&t->ut, &f);
	t->via = ALLOC_VIA_PRELOAD;
	return 0;
}

/* A process changes how it is seen (an exec with or without the library):
 * what was attached for the other way goes, and every file is looked at
 * again. */
static void switch_via(struct alloc_probes *m, struct alloc_target *t, enum alloc_via via)
{
	if (t->via != ALLOC_VIA_NONE && t->via != via) {
		alloc_target_detach(t);
		t->ut.nseen = 0;
		if (t->via == ALLOC_VIA_PRELOAD && m->pl_tls_fd >= 0)
			bpf_map_delete_elem(m->pl_tls_fd, &t->pid);
	}
	t->via = via;
}

/* Whether a process maps its dynamic loader but not yet the C library:
 * between its exec and its start-up libraries. */
static bool starting(const struct ud_file *files, size_t n)
{
	bool ldso = false;

	for (size_t i = 0; i < n; i++) {
		const char *b = proc_maps_basename(files[i].path);

		if (!strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5))
			return false;
		ldso = ldso || !strncmp(b, "ld-", 3);
	}
	return ldso;
}

void alloc_scan_target(struct alloc_probes *m, struct alloc_target *t)
{
	const struct ud_file *pl = NULL;
	struct proc_maps pm;
	struct ud_file *files;
	uint64_t before;
	size_t n;

	if (uprobe_target_files(m->proc_root, t->pid, MAX_MAPS_BYTES, MAX_EXEC_FILES, &pm, &files,
				&n))
		return; /* gone: on_exit follows */
	read_comm(m, t);
	for (size_t i = 0; m->preload_prog && i < n && !pl; i++)
		if (!strcmp(proc_maps_basename(files[i].path), EP_PRELOAD_LIB))
			pl = &files[i];
	if (pl) {
		/* Its allocator calls go through the library: probing them
		 * too would count them twice (and trap on each). */
		switch_via(m, t, ALLOC_VIA_PRELOAD);
		t->pl_lo = pl->start;
		t->pl_hi = pl->end;
		if (!uprobe_target_seen(&t->ut, pl))
			attach_preload(m, t, pl);
	} else if (t->via == ALLOC_VIA_PRELOAD && starting(files, n)) {
		/* Exec'd, its libraries not mapped yet (the exec hold): the
		 * library may still come; nothing to attach until then. */
	} else {
		switch_via(m, t, ALLOC_VIA_UPROBE);
		before = m->nlinks;
		for (size_t i = 0; i < n; i++)
			if (!uprobe_target_seen(&t->ut, &files[i]))
				scan_file(m, t, &files[i]);
		if (m->preload_expected && m->nlinks > before && !m->fallback_said) {
			m->fallback_said = true;
			log_warn("--alloc: pid %u (%s) runs without %s (setuid, static, or its "
				 "LD_PRELOAD replaced): its allocations are seen by uprobes, every "
				 "call traps",
				 t->pid, t->comm, EP_PRELOAD_LIB);
		}
	}
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
