// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The streaming symbol lookup (user/probes/sym_scan.c) behind
 * ud_find_functions / ud_find_symbols, against a libelf reference on real
 * files (this test, libc, and Debian's node and libsqlite3 when present):
 * every 37th defined function of .symtab and .dynsym, the first of each
 * name in table order, and names stored as the tail of a longer string
 * (linkers merge string tails). Then hand-made tables: a name at the end
 * of a string longer than the read buffer, more candidates than the bound,
 * a table outside the file, an unterminated last string. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "probes/sym_scan.h"
#include "probes/uprobe_discovery.h"

#define MAXN 600

struct ref {
	char *name[MAXN];
	uint64_t off[MAXN];
	size_t n, tails;
};

static uint64_t to_offset(Elf *elf, uint64_t v)
{
	size_t nph;

	if (elf_getphdrnum(elf, &nph))
		return 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    v >= ph.p_vaddr && v - ph.p_vaddr < ph.p_filesz)
			return v - ph.p_vaddr + ph.p_offset;
	}
	return 0;
}

static bool have_name(const struct ref *r, const char *s)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->name[i], s))
			return true;
	return false;
}

/* Picks names (every 37th function, and every function whose name is a
 * string tail, up to MAXN), then their expected offsets: the first usable
 * symbol of that name in .symtab, else .dynsym, as ud_find_functions. */
static void build_ref(const char *path, struct ref *r)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;

	memset(r, 0, sizeof(*r));
	if (fd < 0)
		return;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	for (int pass = 0; elf && pass < 2; pass++) {
		Elf_Scn *scn = NULL;
		size_t seen = 0;

		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *d, *sd;

			if (!gelf_getshdr(scn, &sh) ||
			    sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB))
				continue;
			d = elf_getdata(scn, NULL);
			sd = elf_getdata(elf_getscn(elf, sh.sh_link), NULL);
			for (size_t i = 0; d && sd && i < d->d_size / sh.sh_entsize; i++) {
				GElf_Sym s;
				const char *nm;
				bool tail;

				if (!gelf_getsym(d, (int)i, &s) ||
				    GELF_ST_TYPE(s.st_info) != STT_FUNC ||
				    s.st_shndx == SHN_UNDEF || !s.st_value || !s.st_name ||
				    s.st_name >= sd->d_size)
					continue;
				nm = (const char *)sd->d_buf + s.st_name;
				tail = ((const char *)sd->d_buf)[s.st_name - 1] != '\0';
				if (r->n >= MAXN || (!tail && seen++ % 37) || have_name(r, nm))
					continue;
				r->tails += tail;
				r->name[r->n++] = strdup(nm);
			}
		}
	}
	/* Expected offsets, in the order the lookup finds them. */
	for (int pass = 0; elf && pass < 2; pass++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *d, *sd;

			if (!gelf_getshdr(scn, &sh) ||
			    sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB))
				continue;
			d = elf_getdata(scn, NULL);
			sd = elf_getdata(elf_getscn(elf, sh.sh_link), NULL);
			for (size_t i = 0; d && sd && i < d->d_size / sh.sh_entsize; i++) {
				GElf_Sym s;
				uint64_t off;

				if (!gelf_getsym(d, (int)i, &s) ||
				    GELF_ST_TYPE(s.st_info) != STT_FUNC ||
				    s.st_shndx == SHN_UNDEF || !s.st_value ||
				    s.st_name >= sd->d_size)
					continue;
				for (size_t k = 0; k < r->n; k++)
					if (!r->off[k] &&
					    !strcmp((const char *)sd->d_buf + s.st_name,
						    r->name[k]) &&
					    (off = to_offset(elf, s.st_value)))
						r->off[k] = off;
			}
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
}

static void check_file(const char *path, size_t *tails, bool must)
{
	struct ref r;
	uint64_t got[MAXN];
	size_t want = 0;
	int fd;

	build_ref(path, &r);
	if (!r.n) {
		if (must)
			CHECK(!"no function symbols in a file that has them");
		return;
	}
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	for (size_t k = 0; k < r.n; k++)
		want += r.off[k] != 0;
	CHECK_INT_EQ(ud_find_functions(fd, (const char *const *)r.name, r.n, got), (int)want);
	for (size_t k = 0; k < r.n; k++)
		if (got[k] != r.off[k]) {
			fprintf(stderr, "%s: %s: %#llx, want %#llx\n", path, r.name[k],
				(unsigned long long)got[k], (unsigned long long)r.off[k]);
			CHECK(0);
		}
	printf("%s: %zu names (%zu stored as a tail), %zu with an offset\n", path, r.n, r.tails,
	       want);
	*tails += r.tails;
	close(fd);
	for (size_t k = 0; k < r.n; k++)
		free(r.name[k]);
}

static const char *libc_path(char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];

	buf[0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		if (p && strstr(p, "/libc.so.6")) {
			p[strcspn(p, "\n")] = '\0';
			snprintf(buf, len, "%s", p);
			break;
		}
	}
	if (f)
		fclose(f);
	return buf;
}

static void test_real_files(void)
{
	char libc[512];
	size_t tails = 0;
	const char *opt[] = { "/usr/bin/node", "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0",
			      "/usr/lib/aarch64-linux-gnu/libsqlite3.so.0" };

	check_file("/proc/self/exe", &tails, true);
	CHECK(*libc_path(libc, sizeof(libc)));
	check_file(libc, &tails, true);
	for (size_t i = 0; i < sizeof(opt) / sizeof(opt[0]); i++)
		if (access(opt[i], R_OK) == 0)
			check_file(opt[i], &tails, true);
	/* The tail case must have been met, or the test proves less. */
	CHECK(tails > 0);
}

/* A file of a string table then a symbol table (ELF64), in a memfd. */
static int table_file(const char *str, size_t slen, const Elf64_Sym *syms, size_t nsym,
		      struct sym_scan_table *t)
{
	int fd = memfd_create("t", 0);

	if (fd < 0)
		return -1;
	if (write(fd, str, slen) != (ssize_t)slen ||
	    write(fd, syms, nsym * sizeof(*syms)) != (ssize_t)(nsym * sizeof(*syms))) {
		close(fd);
		return -1;
	}
	*t = (struct sym_scan_table){ .str_off = 0,
				      .str_size = slen,
				      .sym_off = slen,
				      .sym_size = nsym * sizeof(*syms),
				      .sym_entsize = sizeof(Elf64_Sym),
				      .elf64 = true };
	return fd;
}

struct hits {
	size_t n, k[8];
	uint64_t v[8];
};

static bool take(void *arg, size_t k, const struct sym_scan_sym *s)
{
	struct hits *h = arg;

	if (h->n < 8) {
		h->k[h->n] = k;
		h->v[h->n] = s->value;
	}
	h->n++;
	return false;
}

static void test_made_tables(void)
{
	const char *names[] = { "target_fn", "step" };
	struct sym_scan_table t;
	struct hits h = { 0 };
	size_t big = 300 * 1024, slen = 1 + big + 10 + 6;
	char *str = calloc(1, slen + 16);
	Elf64_Sym syms[3] = { 0 };
	int fd;

	/* "\0" + 300 KiB of x + "target_fn\0" + "xstep\0": target_fn at the
	 * end of a string longer than the buffer, step as a tail. */
	memset(str + 1, 'x', big);
	memcpy(str + 1 + big, "target_fn", 10);
	memcpy(str + 1 + big + 10, "xstep", 6);
	syms[0].st_name = (uint32_t)(1 + big);
	syms[0].st_value = 0x1111;
	syms[1].st_name = (uint32_t)(1 + big + 10 + 1);
	syms[1].st_value = 0x2222;
	syms[2].st_name = 1; /* the long string itself: no name */
	syms[2].st_value = 0x3333;
	fd = table_file(str, slen, syms, 3, &t);
	CHECK(fd >= 0);
	CHECK_INT_EQ(sym_scan(fd, slen + sizeof(syms), &t, names, 2, take, &h), 0);
	CHECK_INT_EQ(h.n, 2);
	CHECK(h.k[0] == 0 && h.v[0] == 0x1111);
	CHECK(h.k[1] == 1 && h.v[1] == 0x2222);
	/* A table outside the file. */
	t.sym_size += 24;
	CHECK_INT_EQ(sym_scan(fd, slen + sizeof(syms), &t, names, 2, take, &h), -EINVAL);
	t.sym_size -= 24;
	t.str_off = slen + sizeof(syms) + 1;
	CHECK_INT_EQ(sym_scan(fd, slen + sizeof(syms), &t, names, 2, take, &h), -EINVAL);
	close(fd);
	/* Unterminated last string: "\0step" ends the file without a NUL. */
	memcpy(str, "\0step", 5);
	syms[0].st_name = 1;
	fd = table_file(str, 5, syms, 1, &t);
	h.n = 0;
	CHECK_INT_EQ(sym_scan(fd, 5 + sizeof(Elf64_Sym), &t, names, 2, take, &h), 0);
	CHECK_INT_EQ(h.n, 0);
	close(fd);
	/* More places than the bound: the caller falls back to libelf. */
	size_t many = SYM_SCAN_MAX_CANDS + 10;
	char *s2 = malloc(1 + many * 5);
	s2[0] = '\0';
	for (size_t i = 0; i < many; i++)
		memcpy(s2 + 1 + i * 5, "step", 5);
	fd = table_file(s2, 1 + many * 5, syms, 1, &t);
	CHECK_INT_EQ(sym_scan(fd, 1 + many * 5 + sizeof(Elf64_Sym), &t, names, 2, take, &h),
		     -ENOTSUP);
	close(fd);
	/* Another entry size: not this layout. */
	t.sym_entsize = 16;
	CHECK_INT_EQ(sym_scan(-1, 1 << 20, &t, names, 2, take, &h), -ENOTSUP);
	free(s2);
	free(str);
}

int main(void)
{
	elf_version(EV_CURRENT);
	test_made_tables();
	test_real_files();
	return check_report("test_sym_scan");
}
