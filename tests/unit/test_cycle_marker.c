// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The cycle marker (tools/cycle_marker) compiled into this test: its USDT
 * notes name the provider, probes and semaphores a tracer needs, and the
 * markers run as plain calls while untraced. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "../../tools/cycle_marker/ebpf_prof_cycle.c"

struct note {
	uint64_t loc, sem;
	int seen;
};

static void scan(struct note *b, struct note *e)
{
	elf_version(EV_CURRENT);
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	CHECK(elf != NULL);
	Elf_Scn *scn = NULL;
	size_t shstrndx = 0;
	if (elf)
		elf_getshdrstrndx(elf, &shstrndx);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".note.stapsdt"))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;
		while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			const char *desc = (const char *)d->d_buf + doff;
			if (nh.n_type != 3 || nh.n_descsz < 3 * 8 + 4)
				continue;
			uint64_t a[3];
			memcpy(a, desc, sizeof(a));
			const char *prov = desc + 24;
			const char *probe = prov + strnlen(prov, nh.n_descsz - 24) + 1;
			if (strcmp(prov, "ebpf_prof"))
				continue;
			struct note *n = !strcmp(probe, "cycle_begin") ? b
					 : !strcmp(probe, "cycle_end") ? e
								       : NULL;
			if (n) {
				n->loc = a[0];
				n->sem = a[2];
				n->seen++;
			}
		}
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	struct note b = { 0 }, e = { 0 };
	scan(&b, &e);
	CHECK_INT_EQ(b.seen, 1);
	CHECK_INT_EQ(e.seen, 1);
	CHECK(b.sem != 0 && e.sem != 0);
	/* The notes point at our two semaphores: same distance apart as at run
	 * time (the load bias cancels out). */
	CHECK_INT_EQ((int64_t)(b.sem - e.sem),
		     (int64_t)((uintptr_t)&ebpf_prof_cycle_begin_semaphore -
			       (uintptr_t)&ebpf_prof_cycle_end_semaphore));
	CHECK(b.loc != e.loc);

	/* Untraced: the calls return, and say nobody is attached. */
	CHECK_INT_EQ(ebpf_prof_cycle_traced(), 0);
	ebpf_prof_cycle_begin(1);
	ebpf_prof_cycle_end(1);
	/* As a tracer would: with the semaphore set the probe site (a nop) runs. */
	ebpf_prof_cycle_begin_semaphore++;
	CHECK_INT_EQ(ebpf_prof_cycle_traced(), 1);
	ebpf_prof_cycle_begin(2);
	ebpf_prof_cycle_begin_semaphore--;
	return check_report("test_cycle_marker");
}
