// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Opening the ELF file behind a mapping as the target sees it (map_files,
 * its root, our own copy of the vDSO), and the libdwfl callbacks that do
 * so for every module a pid's session reports. Apart from symbolize.c
 * because it is the one place that opens the files a target maps.
 */
#include "symbolize/symbolize_internal.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/debuginfo.h"
#include "util/log.h"
#include "util/vec.h"
#include "proc/target_open.h"

/* ---- vDSO ---- */

static void load_own_vdso(struct symbolizer *s)
{
	const unsigned char *base = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	struct proc_maps self;
	const struct proc_map *m;
	char *buf;
	size_t len;

	s->vdso_tried = true;
	if (!base || proc_maps_read_file("/proc/self/maps", MAPS_MAX_BYTES, &buf, &len) < 0)
		return;
	if (proc_maps_parse_buf(buf, len, MAPS_MAX_ENTRIES, &self) == 0) {
		m = proc_maps_find(&self, (uint64_t)(uintptr_t)base);
		if (m && m->kind == PROC_MAP_VDSO && m->end - m->start <= VDSO_MAX_SIZE &&
		    (uint64_t)(uintptr_t)base == m->start) {
			s->vdso_img = malloc(m->end - m->start);
			if (s->vdso_img) {
				memcpy(s->vdso_img, base, m->end - m->start);
				s->vdso_img_size = m->end - m->start;
				s->vdso_map_size = s->vdso_img_size;
			}
		}
		proc_maps_free(&self);
	}
	free(buf);
}

/* ---- libdwfl callbacks ---- */

static bool modfile_eq(uint32_t idx, const void *key, const void *ctx)
{
	const struct symbolizer *s = ctx;

	return !strcmp(s->modfiles[idx].path, key);
}

static uint64_t path_hash(const char *p)
{
	return ep_hashmap_hash_finish(ep_hashmap_hash_bytes(p, strlen(p), HASHMAP_SEED));
}

/* Remembers how path was last opened, for symbolizer_module_file. */
static void modfile_note(struct pid_state *ps, const struct target_map *m, const struct stat *st)
{
	struct symbolizer *s = ps->s;
	const char *path = sym_intern(&s->strs, m->path);
	uint64_t h;
	int64_t i;

	if (!path)
		return;
	h = path_hash(path);
	i = ep_hashmap_find(&s->modfiles_idx, h, path, modfile_eq, s);
	if (i < 0) {
		if (s->n_modfiles >= MODFILE_MAX ||
		    ep_vec_grow((void **)&s->modfiles, &s->cap_modfiles, s->n_modfiles + 1,
				sizeof(*s->modfiles)) < 0 ||
		    ep_hashmap_insert(&s->modfiles_idx, h, (uint32_t)s->n_modfiles) < 0)
			return;
		i = (int64_t)s->n_modfiles++;
	}
	s->modfiles[i] = (struct modfile){ .path = path,
					   .who = ps->who,
					   .start = m->start,
					   .end = m->end,
					   .dev = (uint64_t)st->st_dev,
					   .ino = (uint64_t)st->st_ino,
					   .deleted = m->deleted };
}

int symbolizer_module_file(void *sym, const char *path, struct target_ref *t, struct target_map *m)
{
	struct symbolizer *s = sym;
	int64_t i =
		s && path ? ep_hashmap_find(&s->modfiles_idx, path_hash(path), path, modfile_eq, s)
			  : -1;
	const struct modfile *f;

	if (i < 0)
		return -ENOENT;
	f = &s->modfiles[i];
	*t = f->who;
	*m = (struct target_map){ .path = f->path,
				  .start = f->start,
				  .end = f->end,
				  .dev = f->dev,
				  .ino = f->ino,
				  .deleted = f->deleted };
	return 0;
}

/* Opens the file mapped at [start, end) of ps as the target sees it: the
 * same rules for libdwfl and for reading build-ids, so both see one file.
 * map_files names exactly the mapped file, even if deleted or replaced on
 * disk since, and in any mount namespace; else its path in the process's
 * root (ours once it is gone, if it shared ours) must still lead to the
 * inode mapped: a file replaced since would give wrong names. Always with
 * the process's permissions (target_open.h). */
int sym_open_mapped(struct pid_state *ps, uint64_t start, uint64_t end, const char *path,
		    uint64_t inode, bool deleted)
{
	struct target_map m = {
		.path = path, .start = start, .end = end, .ino = inode, .deleted = deleted
	};
	struct stat st;
	int fd = target_open_map(&ps->who, &m, 0, TARGET_ELF_MAX_BYTES, &st);

	if (fd < 0) {
		if (fd != -ENOENT)
			log_debug("symbolize: pid %u: %s: %s", ps->pid, path,
				  target_open_strerror(fd));
		return -1;
	}
	modfile_note(ps, &m, &st);
	return fd;
}

/* Debug files of a module are looked for as the process that mapped it
 * (debuginfo.h), in the symbolizer's debuginfo path. */
int sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		       const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		       char **debuginfo_file_name)
{
	const struct mod_ctx *mc = *userdata;
	struct debuginfo_ctx c;
	int fd;

	if (!mc || !mc->ps)
		return -1;
	debuginfo_ctx_init(&c, mc->ps->s->debuginfo_path, &mc->ps->who, mc->path);
	fd = debuginfo_find(&c, mod, userdata, modname, base, file_name, debuglink_file,
			    debuglink_crc, debuginfo_file_name);
	debuginfo_ctx_clear(&c);
	return fd;
}

int sym_find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		 char **file_name, Elf **elfp)
{
	struct mod_ctx *mc = *userdata;
	struct pid_state *ps;
	char *rp;
	int fd;

	(void)mod;
	(void)modname;
	(void)base;
	if (!mc)
		return -1;
	ps = mc->ps;
	if (mc->vdso) {
		struct symbolizer *s = ps->s;

		if (!s->vdso_tried)
			load_own_vdso(s);
		/* A vDSO of another size is not ours (e.g. a 32-bit process). */
		if (!s->vdso_img || mc->end - mc->start != s->vdso_map_size)
			return -1;
		*elfp = elf_memory((char *)s->vdso_img, s->vdso_img_size);
		return -1;
	}
	rp = ps->same_root && !mc->deleted
		     ? strdup(mc->path)
		     : sym_xasprintf("%s/%u/root%s", ps->s->proc_root, ps->pid, mc->path);
	if (!rp)
		return -1;
	fd = sym_open_mapped(ps, mc->start, mc->end, mc->path, mc->inode, mc->deleted);
	if (fd < 0) {
		log_debug("symbolize: pid %u: cannot open %s%s (no map_files access?)", ps->pid,
			  mc->path, mc->deleted ? " (deleted)" : "");
		free(rp);
		return -1;
	}
	/* The name is where libdwfl looks for .gnu_debuglink siblings. */
	*file_name = rp;
	ps->s->st.elf_opens++;
	return fd;
}
