// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "symbolize/debuginfo.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Opens path if it is a regular ELF file whose GNU build-id is id; -1
 * otherwise. Candidates can sit in directories the traced program controls:
 * O_NONBLOCK so that a FIFO planted there cannot hang the open. */
static int open_debug_with_id(const char *path, const unsigned char *id, int id_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	const void *got = NULL;
	ssize_t n = -1;
	struct stat st;
	Elf *elf;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf)
		n = dwelf_elf_gnu_build_id(elf, &got);
	if (n != id_len || !got || memcmp(got, id, (size_t)id_len)) {
		if (elf)
			elf_end(elf);
		close(fd);
		return -1;
	}
	elf_end(elf);
	return fd;
}

/* By build-id under each absolute directory of the path, then by the
 * .gnu_debuglink next to the file, in its .debug subdirectory and under
 * those directories, each candidate checked to carry the module's build-id.
 * Modules without a build-id go to the standard search (it asks debuginfod
 * only by build-id). */
int debuginfo_find(const char *path, Dwfl_Module *mod, void **userdata, const char *modname,
		   Dwarf_Addr base, const char *file_name, const char *debuglink_file,
		   GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	const unsigned char *id;
	char dirs[PATH_MAX], cand[PATH_MAX], fdir[PATH_MAX];
	GElf_Addr id_vaddr;
	int id_len, fd;

	if (!path)
		path = "/usr/lib/debug";
	id_len = dwfl_module_build_id(mod, &id, &id_vaddr);
	if ((urls && *urls) || id_len <= 0)
		return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
						    debuglink_file, debuglink_crc,
						    debuginfo_file_name);
	/* The path as libdwfl reads it: ':'-separated, a leading '+' or '-'
	 * (CRC checking) ignored; relative entries are for debuglinks. */
	snprintf(dirs, sizeof(dirs), "%s", path);
	fdir[0] = '\0';
	if (file_name) {
		const char *slash = strrchr(file_name, '/');

		if (slash && (size_t)(slash - file_name) < sizeof(fdir)) {
			memcpy(fdir, file_name, (size_t)(slash - file_name));
			fdir[slash - file_name] = '\0';
		}
	}
	for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d;
	     d = strtok_r(NULL, ":", &save)) {
		int n = 0;

		if (*d == '+' || *d == '-')
			d++;
		if (*d != '/')
			continue;
		n = snprintf(cand, sizeof(cand), "%s/.build-id/%02x/", d, id[0]);
		for (int i = 1; i < id_len && n > 0 && (size_t)n + 3 < sizeof(cand); i++)
			n += snprintf(cand + n, sizeof(cand) - (size_t)n, "%02x", id[i]);
		if (n > 0 && (size_t)n + 7 < sizeof(cand)) {
			strcat(cand, ".debug");
			fd = open_debug_with_id(cand, id, id_len);
			if (fd >= 0)
				goto found;
		}
	}
	if (!debuglink_file || strchr(debuglink_file, '/'))
		return -1;
	snprintf(dirs, sizeof(dirs), "%s", path);
	for (int i = 0; fdir[0] && i < 2; i++) {
		if (snprintf(cand, sizeof(cand), "%s/%s%s", fdir, i ? ".debug/" : "",
			     debuglink_file) >= (int)sizeof(cand))
			continue;
		fd = open_debug_with_id(cand, id, id_len);
		if (fd >= 0)
			goto found;
	}
	for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d;
	     d = strtok_r(NULL, ":", &save)) {
		if (*d == '+' || *d == '-')
			d++;
		if (*d != '/' || !fdir[0])
			continue;
		if (snprintf(cand, sizeof(cand), "%s%s/%s", d, fdir, debuglink_file) >=
		    (int)sizeof(cand))
			continue;
		fd = open_debug_with_id(cand, id, id_len);
		if (fd >= 0)
			goto found;
	}
	return -1;
found:
	*debuginfo_file_name = strdup(cand);
	return fd;
}

int debuginfo_find_default(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			   const char *file_name, const char *debuglink_file,
			   GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	return debuginfo_find(NULL, mod, userdata, modname, base, file_name, debuglink_file,
			      debuglink_crc, debuginfo_file_name);
}
