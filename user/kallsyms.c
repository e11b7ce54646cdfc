// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "kallsyms.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bounds against a bogus file: real kallsyms has a few hundred thousand lines. */
#define KSYMS_MAX_LINES (8u << 20)
#define KSYMS_MAX_NAME 512
/* Kernel symbols have no size; no kernel function is this large, so an address
 * this far past the closest symbol is in a gap, not in that symbol. */
#define KSYMS_MAX_SYM_SPAN (1u << 20)

struct ksym {
	uint64_t addr;
	uint32_t name_off;
	uint32_t rank; /* lower is preferred among aliases at the same address */
	uint32_t idx;
};

struct kallsyms {
	struct ksym *syms;
	size_t n;
	char *names;
	size_t names_len;
	size_t bad_lines;
	bool restricted;
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* The lookup takes the last of equal addresses: put the preferred one last. */
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	return x->idx > y->idx ? -1 : (x->idx < y->idx);
}

static uint32_t type_rank(char t)
{
	switch (t) {
	case 'T':
		return 0;
	case 't':
		return 1;
	case 'W':
	case 'w':
		return 2;
	default:
		return 3;
	}
}

/* Parses "ADDR TYPE NAME[\t[MODULE]]". Writes the display name ("name" or
 * "name [module]") into name (cap bytes). Returns 0, or -EINVAL. */
static int parse_line(char *line, uint64_t *addr, char *type, char *name, size_t cap)
{
	char *p = line, *end, *nm, *mod = NULL;
	size_t nlen;
	int n = 0;

	*addr = 0;
	while ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F')) {
		unsigned d = *p <= '9' ? (unsigned)(*p - '0') : (unsigned)((*p | 0x20) - 'a' + 10);

		*addr = (*addr << 4) | d;
		p++;
		if (++n > 16)
			return -EINVAL;
	}
	if (n == 0 || *p != ' ')
		return -EINVAL;
	p++;
	if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) || p[1] != ' ')
		return -EINVAL;
	*type = *p;
	nm = p + 2;
	end = nm + strcspn(nm, "\t\n");
	if (*end == '\t') {
		mod = end + 1;
		mod[strcspn(mod, "\n")] = '\0';
	}
	*end = '\0';
	nlen = strlen(nm);
	if (nlen == 0 || strchr(nm, ' '))
		return -EINVAL;
	if (mod) {
		size_t mlen = strlen(mod);

		if (mlen < 3 || mod[0] != '[' || mod[mlen - 1] != ']' || strchr(mod, ' '))
			return -EINVAL;
		if (nlen + 1 + mlen + 1 > cap)
			return -EINVAL;
		memcpy(name, nm, nlen);
		name[nlen] = ' ';
		memcpy(name + nlen + 1, mod, mlen + 1);
	} else {
		if (nlen + 1 > cap)
			return -EINVAL;
		memcpy(name, nm, nlen + 1);
	}
	return 0;
}

int kallsyms_load(const char *path, struct kallsyms **out)
{
	struct kallsyms *ks;
	size_t syms_cap = 0, names_cap = 0, lines = 0;
	char *line = NULL, name[KSYMS_MAX_NAME];
	size_t line_cap = 0;
	bool any_nonzero = false;
	FILE *f;
	int err = 0;

	*out = NULL;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	ks = calloc(1, sizeof(*ks));
	if (!ks) {
		fclose(f);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t r = getline(&line, &line_cap, f);
		uint64_t addr;
		char type;
		size_t nlen;

		if (r < 0)
			break;
		if (++lines > KSYMS_MAX_LINES) {
			err = -EFBIG;
			break;
		}
		if (line[0] == '\n')
			continue;
		if ((size_t)r != strlen(line) ||
		    parse_line(line, &addr, &type, name, sizeof(name)) < 0) {
			ks->bad_lines++;
			continue;
		}
		/* Absolute and undefined symbols are not code locations. */
		if (type == 'a' || type == 'A' || type == 'U')
			continue;
		if (addr)
			any_nonzero = true;
		nlen = strlen(name) + 1;
		if (ks->n == syms_cap) {
			size_t nc = syms_cap ? syms_cap * 2 : 4096;
			struct ksym *ns = realloc(ks->syms, nc * sizeof(*ns));

			if (!ns) {
				err = -ENOMEM;
				break;
			}
			ks->syms = ns;
			syms_cap = nc;
		}
		if (ks->names_len + nlen > names_cap) {
			size_t nc = names_cap ? names_cap * 2 : 65536;
			char *nn;

			if (nc > UINT32_MAX) {
				err = -EFBIG;
				break;
			}
			nn = realloc(ks->names, nc);
			if (!nn) {
				err = -ENOMEM;
				break;
			}
			ks->names = nn;
			names_cap = nc;
		}
		memcpy(ks->names + ks->names_len, name, nlen);
		ks->syms[ks->n] = (struct ksym){ .addr = addr,
						 .name_off = (uint32_t)ks->names_len,
						 .rank = type_rank(type),
						 .idx = (uint32_t)ks->n };
		ks->names_len += nlen;
		ks->n++;
	}
	if (!err && ferror(f))
		err = -EIO;
	free(line);
	fclose(f);
	if (err) {
		kallsyms_free(ks);
		return err;
	}
	ks->restricted = ks->n > 0 && !any_nonzero;
	if (ks->n)
		qsort(ks->syms, ks->n, sizeof(*ks->syms), ksym_cmp);
	*out = ks;
	return 0;
}

void kallsyms_free(struct kallsyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->names);
	free(ks);
}

bool kallsyms_restricted(const struct kallsyms *ks)
{
	return ks->restricted;
}

size_t kallsyms_count(const struct kallsyms *ks)
{
	return ks->n;
}

size_t kallsyms_bad_lines(const struct kallsyms *ks)
{
	return ks->bad_lines;
}

const char *kallsyms_lookup(const struct kallsyms *ks, uint64_t addr, uint64_t *sym_off)
{
	size_t lo = 0, hi = ks->n;
	const struct ksym *s;

	if (ks->restricted || ks->n == 0 || addr < ks->syms[0].addr)
		return NULL;
	/* Find the last symbol with start <= addr. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	s = &ks->syms[lo];
	if (addr - s->addr >= KSYMS_MAX_SYM_SPAN)
		return NULL;
	if (sym_off)
		*sym_off = addr - s->addr;
	return ks->names + s->name_off;
}
