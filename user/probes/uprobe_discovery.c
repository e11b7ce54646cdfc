// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "probes/uprobe_discovery.h"
#include "proc/target_open.h"

#include "probes/sym_scan.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* File offset of virtual address v, through the PT_LOAD segment holding
 * it; 0 if none does (the symbol is not in the file's code). */
static uint64_t vaddr_to_offset(Elf *elf, size_t nphdr, uint64_t v, uint64_t file_size)
{
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (v < ph.p_vaddr || v - ph.p_vaddr >= ph.p_filesz)
			continue;
		if (ph.p_offset > file_size || v - ph.p_vaddr > file_size - ph.p_offset)
			return 0;
		return v - ph.p_vaddr + ph.p_offset;
	}
	return 0;
}

/* vaddrs (ud_find_symbols): any defined function or object, its st_value;
 * else functions only, their file offset. */
static void scan_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, size_t nphdr,
			uint64_t file_size, const char *const *names, size_t n, uint64_t *offsets,
			size_t *found, bool vaddrs)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t count;

	if (!data || !sh->sh_entsize || sh->sh_entsize > data->d_size)
		return;
	count = data->d_size / sh->sh_entsize;
	for (size_t i = 0; i < count && *found < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		/* An IFUNC symbol's address is its resolver, not the function. */
		if ((GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
		     (!vaddrs || GELF_ST_TYPE(sym.st_info) != STT_OBJECT)) ||
		    sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		for (size_t k = 0; k < n; k++) {
			uint64_t off;

			if (offsets[k] || name[0] != names[k][0] || strcmp(name, names[k]))
				continue;
			off = vaddrs ? sym.st_value
				     : vaddr_to_offset(elf, nphdr, sym.st_value, file_size);
			if (off) {
				offsets[k] = off;
				(*found)++;
			}
			break;
		}
	}
}

struct find_ctx {
	Elf *elf;
	size_t nphdr, n, *found;
	uint64_t file_size, *offsets;
	bool vaddrs;
};

/* scan_symtab's test of one symbol, for sym_scan. */
static bool take_symbol(void *arg, size_t k, const struct sym_scan_sym *sym)
{
	struct find_ctx *c = arg;
	uint64_t off;

	if ((sym->type != STT_FUNC && (!c->vaddrs || sym->type != STT_OBJECT)) ||
	    sym->shndx == SHN_UNDEF || !sym->value || c->offsets[k])
		return false;
	off = c->vaddrs ? sym->value : vaddr_to_offset(c->elf, c->nphdr, sym->value, c->file_size);
	if (off) {
		c->offsets[k] = off;
		(*c->found)++;
	}
	return *c->found >= c->n;
}

/* The table through sym_scan (a small buffer), else through libelf (the
 * whole section in memory). */
static void scan_table(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const GElf_Ehdr *eh, int fd,
		       size_t nphdr, uint64_t file_size, const char *const *names, size_t n,
		       uint64_t *offsets, size_t *found, bool vaddrs)
{
	Elf_Scn *ss = elf_getscn(elf, sh->sh_link);
	GElf_Shdr ssh;

	if (eh->e_ident[EI_DATA] == ELFDATA2LSB && ss && gelf_getshdr(ss, &ssh) &&
	    ssh.sh_type == SHT_STRTAB) {
		struct sym_scan_table t = { .sym_off = sh->sh_offset,
					    .sym_size = sh->sh_size,
					    .sym_entsize = sh->sh_entsize,
					    .str_off = ssh.sh_offset,
					    .str_size = ssh.sh_size,
					    .elf64 = eh->e_ident[EI_CLASS] == ELFCLASS64 };
		struct find_ctx c = { elf, nphdr, n, found, file_size, offsets, vaddrs };

		/* A failure part way leaves names found in table order, the
		 * first of each: libelf's pass skips them and finds the rest. */
		if (!sym_scan(fd, file_size, &t, names, n, take_symbol, &c))
			return;
	}
	scan_symtab(elf, scn, sh, nphdr, file_size, names, n, offsets, found, vaddrs);
}

static int find_names(int fd, const char *const *names, size_t n, uint64_t *offsets, bool vaddrs)
{
	struct stat st;
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t nphdr, found = 0;
	GElf_Ehdr eh;

	for (size_t i = 0; i < n; i++)
		offsets[i] = 0;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	if ((uint64_t)st.st_size > UD_MAX_ELF_BYTES)
		return -EFBIG;
	elf_version(EV_CURRENT);
	/* ELF_C_READ copies the file in: a target truncating a file it
	 * mapped cannot SIGBUS us as it could through mmap. */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -ENOEXEC;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    (eh.e_type != ET_DYN && eh.e_type != ET_EXEC) || elf_getphdrnum(elf, &nphdr)) {
		elf_end(elf);
		return -ENOEXEC;
	}
	/* .symtab first: it also holds the local functions of a static
	 * build; .dynsym fills what a stripped file still exports. */
	for (int pass = 0; pass < 2 && found < n; pass++) {
		scn = NULL;
		while ((scn = elf_nextscn(elf, scn)) && found < n) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh))
				continue;
			if (sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB))
				continue;
			scan_table(elf, scn, &sh, &eh, fd, nphdr, (uint64_t)st.st_size, names, n,
				   offsets, &found, vaddrs);
		}
	}
	elf_end(elf);
	return (int)found;
}

int ud_find_functions(int fd, const char *const *names, size_t n, uint64_t *offsets)
{
	return find_names(fd, names, n, offsets, false);
}

int ud_find_symbols(int fd, const char *const *names, size_t n, uint64_t *vaddrs)
{
	return find_names(fd, names, n, vaddrs, true);
}

size_t ud_exec_files(const struct proc_maps *m, struct ud_file *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < m->n && n < max; i++) {
		const struct proc_map *p = &m->maps[i];
		uint64_t dev = makedev(p->dev_major, p->dev_minor);
		bool dup = false;

		if (p->kind != PROC_MAP_FILE || p->perms[2] != 'x' || !p->inode)
			continue;
		for (size_t k = 0; k < n && !dup; k++)
			dup = out[k].dev == dev && out[k].inode == p->inode;
		if (dup)
			continue;
		out[n] = (struct ud_file){ .dev = dev,
					   .inode = p->inode,
					   .start = p->start,
					   .end = p->end,
					   .pgoff = p->pgoff,
					   .path = p->path,
					   .deleted = p->deleted };
		n++;
	}
	return n;
}

int ud_open_mapped(const char *proc_root, uint32_t pid, const struct ud_file *f, char *path_out,
		   size_t path_len)
{
	struct target_map m = { .path = f->path,
				.start = f->start,
				.end = f->end,
				.dev = f->dev,
				.ino = f->inode,
				.deleted = f->deleted };
	struct target_ref t;
	struct stat st;
	int fd, n;

	/* Read as the process could (proc/target_open.h): its credentials,
	 * the very object it mapped, or its path with no symlink leading to
	 * the same inode. */
	target_ref_init(&t, proc_root, pid);
	fd = target_open_map(&t, &m, 0, UD_MAX_ELF_BYTES, NULL);
	if (fd < 0)
		return fd;
	/* The name the uprobe attaches to: the mapping itself while it
	 * exists (no path the process can swap), else its path. */
	n = snprintf(path_out, path_len, "%s/%u/map_files/%" PRIx64 "-%" PRIx64, proc_root, pid,
		     f->start, f->end);
	if (n >= 0 && (size_t)n < path_len && lstat(path_out, &st) == 0)
		return fd;
	n = snprintf(path_out, path_len, "%s/%u/root%s", proc_root, pid, f->path);
	if (n < 0 || (size_t)n >= path_len) {
		close(fd);
		return -ENAMETOOLONG;
	}
	return fd;
}

int ud_lib_matches(const char *pattern, const char *path)
{
	const char *base;
	size_t len, plen;

	if (!pattern || !*pattern || !path || !*path)
		return 0;
	if (pattern[0] == '/')
		return strcmp(pattern, path) == 0;
	if (strchr(pattern, '/')) {
		char real[PATH_MAX];

		/* Relative, as typed in some directory (./my-experiment,
		 * build/app): the mapped path ends with it. With "..", only
		 * our own directory can resolve it. */
		if (strstr(pattern, "../"))
			return realpath(pattern, real) && strcmp(real, path) == 0;
		while (pattern[0] == '.' && pattern[1] == '/')
			pattern += 2;
		len = strlen(pattern);
		plen = strlen(path);
		return len && len < plen && path[plen - len - 1] == '/' &&
		       strcmp(path + plen - len, pattern) == 0;
	}
	/* The name or its soname stem: libllama matches libllama.so and
	 * libllama.v0.5.0.so, not libllama-common.so (another library). */
	base = proc_maps_basename(path);
	len = strlen(pattern);
	if (strncmp(base, pattern, len))
		return 0;
	return base[len] == '\0' || base[len] == '.';
}
