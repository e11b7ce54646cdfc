// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// fuzz-sources: user/unwind/cfi_table.c user/unwind/cfi_program.c
// fuzz-libs: -ldw -lelf
/* The CFI table compiler (uw_table_build) reads .eh_frame / .debug_frame of
 * any ELF object a traced process maps. A whole mutated ELF mostly stops
 * in libelf's header checks, so the input goes into the CFI sections of a
 * well-formed ELF built here; an input that is itself an ELF ("\x7fELF")
 * is taken whole. First byte: which sections get the rest (bit 0
 * .eh_frame, bit 1 .debug_frame, both: split in half), bit 2 arm64. */
#include <elf.h>
#include <gelf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi_table.h"

static const char shstr[] = "\0.shstrtab\0.eh_frame\0.debug_frame";

static void use(Elf *elf)
{
	struct uw_table t;

	if (!elf)
		return;
	if (uw_table_build(elf, &t) == 0) {
		for (uint32_t pc = 0; pc < 0x3000; pc += 0x11)
			uw_table_find(&t, pc);
		uw_table_find(&t, UINT32_MAX);
		uw_table_free(&t);
	}
	elf_end(elf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	Elf64_Ehdr eh = { 0 };
	Elf64_Shdr sh[4] = { 0 };
	size_t eh_len = 0, dbg_len = 0, off, total;
	const uint8_t *body;
	uint8_t mode;
	char *img;

	if (!init) {
		elf_version(EV_CURRENT);
		init = 1;
	}
	if (size >= 4 && !memcmp(data, ELFMAG, SELFMAG)) {
		img = malloc(size);
		if (!img)
			return 0;
		memcpy(img, data, size);
		use(elf_memory(img, size));
		free(img);
		return 0;
	}
	if (!size)
		return 0;
	mode = data[0];
	body = data + 1;
	size--;
	if ((mode & 3) == 3)
		eh_len = size / 2, dbg_len = size - eh_len;
	else if (mode & 2)
		dbg_len = size;
	else
		eh_len = size;

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = mode & 4 ? EM_AARCH64 : EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 4;
	eh.e_shstrndx = 1;
	off = sizeof(eh);
	sh[1] = (Elf64_Shdr){ .sh_name = 1,
			      .sh_type = SHT_STRTAB,
			      .sh_offset = off,
			      .sh_size = sizeof(shstr),
			      .sh_addralign = 1 };
	off += sizeof(shstr);
	sh[2] = (Elf64_Shdr){ .sh_name = 11,
			      .sh_type = SHT_PROGBITS,
			      .sh_flags = SHF_ALLOC,
			      .sh_addr = 0x2000,
			      .sh_offset = off,
			      .sh_size = eh_len,
			      .sh_addralign = 1 };
	off += eh_len;
	sh[3] = (Elf64_Shdr){ .sh_name = 21,
			      .sh_type = SHT_PROGBITS,
			      .sh_offset = off,
			      .sh_size = dbg_len,
			      .sh_addralign = 1 };
	off += dbg_len;
	off = (off + 7) & ~(size_t)7;
	eh.e_shoff = off;
	total = off + sizeof(sh);
	img = calloc(1, total);
	if (!img)
		return 0;
	memcpy(img, &eh, sizeof(eh));
	memcpy(img + sizeof(eh), shstr, sizeof(shstr));
	memcpy(img + sh[2].sh_offset, body, eh_len);
	memcpy(img + sh[3].sh_offset, body + eh_len, dbg_len);
	memcpy(img + off, sh, sizeof(sh));
	use(elf_memory(img, total));
	free(img);
	return 0;
}
