// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Discovery and attach per target: the probed functions and USDT points
 * looked up in each file a traced process maps (once per file), attached
 * per process, file and function, with the probe id in the cookie or, on
 * kernels without cookies, in probe_ip_cookies. Apart from probes_module.c
 * because it is the only code that reads a target's files; poll and the
 * launch-mode holds call probes_scan_target again.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/kfeat.h"
#include "kernel/skel_types.h"
#include "llama/llama_facts.h"
#include "llama/llama_layout.h"
#include "modules.skel.h"
#include "probes/probes_internal.h"
#include "proc/proc_maps.h"
#include "util/clock.h"
#include "util/log.h"
#include "proc/target_open.h"
#include "util/vec.h"

int probes_add_name(struct probes_mod *m, const char *name, size_t *idx)
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
void probes_def_spec(const struct probe_def *def, char *out, size_t len)
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
void probes_forget_ip_cookies(struct probes_mod *m, struct ptarget *t)
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
	probes_start_draining(m);
	log_info("probes: pid %u: %s in %s (%s)", t->pid, def->label, f->path,
		 def->mode == EP_PM_COUNT ? "count only" : "latency");
}

/* Launch mode: the hook in the first ld.so seen (the system's, which the
 * launched command shares with the collector) is attached once for every
 * process (pid -1) instead of once per process of the tree: a per-pid
 * uprobe's attach walks every mapping of the file on the machine (10 ms,
 * and up to 200 ms at load 7 on 2 CPUs, per process a script starts),
 * while the program returns at once for a process not traced (two traps
 * per exec and per dlopen elsewhere on the machine, ~1-2 us each). True
 * if f is that ld.so and hooked. */
static bool ldso_hook_global(struct probes_mod *m, const struct ud_file *f, const char *path,
			     uint64_t off)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o);

	if (m->ldso_link)
		return m->ldso_dev == f->dev && m->ldso_inode == f->inode;
	if (m->ldso_global_failed)
		return false;
	m->ldso_link =
		bpf_program__attach_uprobe_opts(m->skel->progs.probe_ldso, -1, path, off, &o);
	if (!m->ldso_link) {
		log_info("probes: ld.so hook for every process: %s; attached per process instead",
			 strerror(errno));
		m->ldso_global_failed = true;
		return false;
	}
	m->ldso_dev = f->dev;
	m->ldso_inode = f->inode;
	m->skel->bss->ldso_global = 1;
	log_debug("probes: %s hooked for every process (launch mode)", path);
	return true;
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
		int err = m->ldso_global && ldso_hook_global(m, f, path, fc->offsets[m->ldso_name])
				  ? 0
				  : attach_uprobe(t, m->skel->progs.probe_ldso, path,
						  fc->offsets[m->ldso_name], 0, false);

		if (err)
			log_debug("probes: pid %u: no dlopen trigger in %s: %s", t->pid, f->path,
				  strerror(-err));
		t->ldso_hooked = t->ldso_hooked || !err;
		t->rdebug_delta = err ? 0 : fc->rdebug_delta;
	}
}

void probes_scan_target(struct probes_mod *m, struct ptarget *t)
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
