// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Opening the ELF file behind a mapping as the target sees it (map_files,
 * its root, our own copy of the vDSO), and the libdwfl callbacks that do
 * so for every module a pid's session reports. Apart from symbolize.c
 * because it is the one place that opens the files a target maps.
 */
#include "symbolize/symbolize_internal.h"

#include <elfutils/libdwfl.h>
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

static int open_regular(const char *path, uint64_t want_inode)
{
	struct stat st;
	int fd;

	/* stat first: opening a device node that a target mapped could block or
	 * have side effects. */
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (want_inode && (uint64_t)st.st_ino != want_inode)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Opens the file mapped at [start, end) of ps as the target sees it: the
 * same rules for libdwfl and for reading build-ids, so both see one file. */
int sym_open_mapped(struct pid_state *ps, uint64_t start, uint64_t end, const char *path,
		    uint64_t inode, bool deleted)
{
	char *mf;
	int fd;

	/* map_files names exactly the mapped file, even if deleted or replaced
	 * on disk since, and in any mount namespace; it needs CAP_SYS_ADMIN. */
	mf = sym_xasprintf("%s/%u/map_files/%" PRIx64 "-%" PRIx64, ps->s->proc_root, ps->pid, start,
			   end);
	fd = mf ? open_regular(mf, 0) : -1;
	free(mf);
	if (fd < 0 && !deleted) {
		/* The inode check rejects a file replaced on disk since it was mapped:
		 * its symbols would give wrong names. */
		char *p = sym_xasprintf("%s/%u/root%s", ps->s->proc_root, ps->pid, path);

		fd = p ? open_regular(p, inode) : -1;
		free(p);
	}
	/* Gone since its maps were read (a short command whose samples are
	 * drained after its exit): the path as we see it, if it saw the same
	 * root, and still the same inode. */
	if (fd < 0 && !deleted && ps->same_root && path[0] == '/')
		fd = open_regular(path, inode);
	return fd;
}

/* The debuginfo path of a module's symbolizer (mod_ctx), for
 * debuginfo_find. */
int sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		       const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		       char **debuginfo_file_name)
{
	const struct mod_ctx *mc = *userdata;
	const char *path = mc && mc->ps && mc->ps->s->debuginfo_path ? mc->ps->s->debuginfo_path
								     : NULL;

	return debuginfo_find(path, mod, userdata, modname, base, file_name, debuglink_file,
			      debuglink_crc, debuginfo_file_name);
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
