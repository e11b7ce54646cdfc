// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "python/py_proc.h"
#include "proc/target_open.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/proc_maps.h"

#define MAPS_MAX_BYTES (64u << 20)
#define TSTATE_INTERP  16 /* PyThreadState.interp, 3.8-3.13 */

int py_version_from_name(const char *base, unsigned *major, unsigned *minor)
{
	const char *p = base;
	unsigned a, b;
	int n = 0;

	if (!strncmp(p, "lib", 3))
		p += 3;
	if (strncmp(p, "python", 6))
		return -EINVAL;
	if (sscanf(p + 6, "%u.%u%n", &a, &b, &n) != 2 || n <= 0 || a != 3 || b > 99)
		return -EINVAL;
	/* After the version: nothing, ".so...", or an ABI flag ("3.12d"). */
	p += 6 + n;
	if (*p && *p != '.' && *p != 'd' && *p != 't' && *p != 'm')
		return -EINVAL;
	*major = a;
	*minor = b;
	return 0;
}

struct elf_syms {
	uint64_t runtime, version; /* symbol values, 0 = absent */
	uint64_t first_load_vaddr;
	bool have_load;
};

static void scan_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct elf_syms *out)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n;

	if (!data || !sh->sh_entsize)
		return;
	n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym) || !sym.st_value || sym.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || (name[0] != '_' && name[0] != 'P'))
			continue;
		if (!strcmp(name, "_PyRuntime"))
			out->runtime = sym.st_value;
		else if (!strcmp(name, "Py_Version"))
			out->version = sym.st_value;
	}
}

static int read_elf_syms(int fd, struct elf_syms *out)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t nph;
	Elf *elf;
	int err = 0;

	memset(out, 0, sizeof(*out));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		err = -ENOEXEC;
		goto out;
	}
	if (!elf_getphdrnum(elf, &nph)) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
				out->first_load_vaddr = ph.p_vaddr - ph.p_offset;
				out->have_load = true;
				break;
			}
		}
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) &&
		    (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM))
			scan_symtab(elf, scn, &sh, out);
	}
	if (!out->runtime || !out->have_load)
		err = -ENOENT;
out:
	if (elf)
		elf_end(elf);
	return err;
}

/* Candidate files: a libpython first (the interpreter of an embedding
 * program or of pyenv's python), else the executable if it is named like
 * an interpreter. */
static bool is_candidate(const char *base, bool exe)
{
	unsigned a, b;

	if (!strncmp(base, "libpython", 9))
		return !py_version_from_name(base, &a, &b);
	return exe && !py_version_from_name(base, &a, &b);
}

static int try_module(const char *proc_root, uint32_t pid, const struct proc_maps *m,
		      const struct proc_map *pm, struct py_proc_info *info)
{
	struct target_map tm = { .path = pm->path,
				 .start = pm->start,
				 .end = pm->end,
				 .ino = pm->inode,
				 .deleted = pm->deleted };
	struct elf_syms syms;
	struct target_ref who;
	uint64_t bias;
	int err, fd;

	/* The file the process mapped, even in another mount namespace, read
	 * as it could read it (proc/target_open.h). */
	target_ref_init(&who, proc_root, pid);
	fd = target_open_map(&who, &tm, 0, TARGET_ELF_MAX_BYTES, NULL);
	if (fd < 0)
		return fd;
	err = read_elf_syms(fd, &syms);
	close(fd);
	if (err)
		return err;
	/* The mapping of the file's start: load bias = where the first
	 * segment landed minus where it was linked (0 for non-PIE). */
	bias = 0;
	for (size_t i = 0; i < m->n; i++) {
		if (m->maps[i].kind == PROC_MAP_FILE && !strcmp(m->maps[i].path, pm->path) &&
		    m->maps[i].pgoff == 0) {
			bias = m->maps[i].start - syms.first_load_vaddr;
			break;
		}
	}
	if (py_version_from_name(proc_maps_basename(pm->path), &info->major, &info->minor) &&
	    !syms.version)
		return -ENOENT;
	info->runtime = syms.runtime + bias;
	info->module = strdup(pm->path);
	if (!info->module)
		return -ENOMEM;
	/* Py_Version (3.11+) names the version exactly, whatever the file's
	 * name: read it in the process. */
	if (syms.version) {
		char mem[PATH_MAX];
		uint32_t hex = 0;
		int fd;

		snprintf(mem, sizeof(mem), "%s/%u/mem", proc_root, pid);
		fd = open(mem, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (pread(fd, &hex, 4, (off_t)(syms.version + bias)) == 4 &&
			    (hex >> 24) == 3) {
				info->major = 3;
				info->minor = (hex >> 16) & 0xff;
			}
			close(fd);
		}
		if (!info->major) {
			py_proc_info_free(info);
			return -ENOENT;
		}
	}
	return 0;
}

int py_proc_detect(const char *proc_root, uint32_t pid, struct py_proc_info *info)
{
	char path[PATH_MAX], exe[PATH_MAX];
	struct proc_maps m = { 0 };
	char *buf = NULL;
	size_t len;
	ssize_t n;
	int err;

	memset(info, 0, sizeof(*info));
	snprintf(path, sizeof(path), "%s/%u/exe", proc_root, pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	snprintf(path, sizeof(path), "%s/%u/maps", proc_root, pid);
	err = proc_maps_read_file(path, MAPS_MAX_BYTES, &buf, &len);
	if (err)
		return err;
	err = proc_maps_parse_buf(buf, len, 1u << 20, &m);
	free(buf);
	if (err)
		return err;
	err = -ENOENT;
	for (int pass = 0; pass < 2 && err; pass++) {
		for (size_t i = 0; i < m.n && err; i++) {
			const struct proc_map *pm = &m.maps[i];
			bool is_exe = exe[0] && !strcmp(pm->path, exe);

			if (pm->kind != PROC_MAP_FILE || pm->pgoff != 0)
				continue;
			/* pass 0: libpython; pass 1: the executable */
			if ((pass == 0) == is_exe ||
			    !is_candidate(proc_maps_basename(pm->path), is_exe))
				continue;
			err = try_module(proc_root, pid, &m, pm, info);
		}
	}
	proc_maps_free(&m);
	return err;
}

void py_proc_info_free(struct py_proc_info *info)
{
	free(info->module);
	memset(info, 0, sizeof(*info));
}

int py_proc_check(const struct py_layout *l, uint64_t runtime, py_read_fn rd, void *ctx)
{
	uint64_t interp = 0, tstate = 0, back = 0;
	int err;

	err = rd(ctx, runtime + l->runtime_interp_head, &interp, sizeof(interp));
	if (err)
		return err;
	if (!interp)
		return -EAGAIN;
	err = rd(ctx, interp + l->interp_tstate_head, &tstate, sizeof(tstate));
	if (err)
		return err == -EFAULT || err == -EIO ? -EPROTO : err;
	if (!tstate)
		return -EAGAIN;
	if (rd(ctx, tstate + TSTATE_INTERP, &back, sizeof(back)))
		return -EPROTO;
	return back == interp ? 0 : -EPROTO;
}
