// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "symidx.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct symidx_ent {
	uint64_t start, size;
	uint64_t maxend; /* max of start + size over this entry and those before it */
	bool abs;	 /* shndx past SHN_LORESERVE: matches its own address only */
	const char *name;
	GElf_Sym sym;
	uint32_t order; /* index in the module's symbol table */
	uint8_t rank;	/* binding strength */
};

struct symidx_tab {
	struct symidx_ent *e;
	size_t n;
};

struct symidx_sec {
	uint64_t start, end;
};

struct symidx {
	struct symidx_tab glob, loc;
	/* The main ELF's allocated sections, sorted (adjusted addresses): a
	 * sizeless symbol counts only in the section holding the address. */
	struct symidx_sec *sec;
	size_t nsec;
};

/* A lookup whose walk back over symbols containing the address goes on
 * longer than this (a huge symbol spanning the text) is left to libdwfl. */
#define SYMIDX_MAX_WALK 4096

/* libdwfl's order: GNU_UNIQUE and the OS/processor bindings rank below
 * LOCAL there. */
static uint8_t binding_rank(const GElf_Sym *s)
{
	switch (GELF_ST_BIND(s->st_info)) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	case STB_LOCAL:
		return 1;
	default:
		return 0;
	}
}

static int ent_cmp(const void *a, const void *b)
{
	const struct symidx_ent *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int tab_push(struct symidx_tab *t, size_t *cap, const struct symidx_ent *e)
{
	if (t->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		struct symidx_ent *ne = realloc(t->e, nc * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		t->e = ne;
		*cap = nc;
	}
	t->e[t->n++] = *e;
	return 0;
}

struct sort_key {
	uint64_t start;
	uint32_t idx;
};

/* ent_cmp's order by a stable LSD radix sort on start: entries are pushed
 * in table order, so equal starts keep ascending order. qsort of the
 * ~80-byte entries was half of building Node's 110k-symbol index (~20 ms
 * per run, perf of the collector); this is a few ms. false: no memory
 * (the caller falls back to qsort). */
static bool radix_sort(struct symidx_tab *t)
{
	struct sort_key *a = malloc(t->n * sizeof(*a)), *b = malloc(t->n * sizeof(*b)), *tmp;
	struct symidx_ent *out = malloc(t->n * sizeof(*out));
	size_t count[256];

	if (!a || !b || !out) {
		free(a);
		free(b);
		free(out);
		return false;
	}
	for (size_t i = 0; i < t->n; i++)
		a[i] = (struct sort_key){ t->e[i].start, (uint32_t)i };
	for (unsigned shift = 0; shift < 64; shift += 8) {
		size_t pos = 0;

		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < t->n; i++)
			count[(a[i].start >> shift) & 0xff]++;
		/* A byte all keys share (the high ones, mostly) moves nothing. */
		if (count[(a[0].start >> shift) & 0xff] == t->n)
			continue;
		for (size_t k = 0; k < 256; k++) {
			size_t c = count[k];

			count[k] = pos;
			pos += c;
		}
		for (size_t i = 0; i < t->n; i++)
			b[count[(a[i].start >> shift) & 0xff]++] = a[i];
		tmp = a;
		a = b;
		b = tmp;
	}
	for (size_t i = 0; i < t->n; i++)
		out[i] = t->e[a[i].idx];
	free(t->e);
	t->e = out;
	free(a);
	free(b);
	return true;
}

static void tab_finish(struct symidx_tab *t)
{
	uint64_t m = 0;

	/* Table order is ascending: the radix sort's ties keep it. */
	if (t->n && !radix_sort(t))
		qsort(t->e, t->n, sizeof(*t->e), ent_cmp);
	for (size_t i = 0; i < t->n; i++) {
		uint64_t end = t->e[i].start + t->e[i].size;

		if (end > m)
			m = end;
		t->e[i].maxend = m;
	}
}

static int sec_cmp(const void *a, const void *b)
{
	const struct symidx_sec *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The module's allocated sections (not TLS: .tbss overlaps what follows). */
static int load_sections(Dwfl_Module *mod, struct symidx *x)
{
	Dwarf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	Elf_Scn *scn = NULL;
	size_t cap = 0;

	while (elf && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);

		if (!sh || !(sh->sh_flags & SHF_ALLOC) || (sh->sh_flags & SHF_TLS))
			continue;
		if (x->nsec == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct symidx_sec *ns = realloc(x->sec, nc * sizeof(*ns));

			if (!ns)
				return -ENOMEM;
			x->sec = ns;
			cap = nc;
		}
		x->sec[x->nsec].start = sh->sh_addr + bias;
		x->sec[x->nsec].end = sh->sh_addr + bias + sh->sh_size;
		x->nsec++;
	}
	if (x->nsec)
		qsort(x->sec, x->nsec, sizeof(*x->sec), sec_cmp);
	return 0;
}

/* Which section holds a, as libdwfl finds it (its end counts as inside
 * unless the next section starts there); -1 for none. */
static long section_of(const struct symidx *x, uint64_t a)
{
	size_t lo = 0, hi = x->nsec;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a < x->sec[mid].start) {
			hi = mid;
		} else if (a > x->sec[mid].end) {
			lo = mid + 1;
		} else {
			if (a == x->sec[mid].end && mid + 1 < x->nsec && a == x->sec[mid + 1].start)
				mid++;
			return (long)mid;
		}
	}
	return -1;
}

int symidx_build(Dwfl_Module *mod, struct symidx **out)
{
	int n = dwfl_module_getsymtab(mod), first_global;
	size_t gcap = 0, lcap = 0;
	struct symidx *x;

	*out = NULL;
	if (n <= 0)
		return -ENOENT;
	first_global = dwfl_module_getsymtab_first_global(mod);
	if (first_global < 0)
		first_global = 0;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	for (int i = 1; i < n; i++) {
		struct symidx_ent e = { 0 };
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name;
		int type;

		name = dwfl_module_getsym_info(mod, i, &e.sym, &addr, &shndx, NULL, NULL);
		if (!name || !*name || e.sym.st_shndx == SHN_UNDEF)
			continue;
		type = GELF_ST_TYPE(e.sym.st_info);
		if (type == STT_SECTION || type == STT_FILE || type == STT_TLS)
			continue;
		e.start = addr;
		e.size = e.sym.st_size;
		e.sym.st_value = addr;
		e.name = name;
		e.order = (uint32_t)i;
		e.rank = binding_rank(&e.sym);
		e.abs = shndx >= SHN_LORESERVE;
		if (tab_push(i >= first_global ? &x->glob : &x->loc,
			     i >= first_global ? &gcap : &lcap, &e) < 0) {
			symidx_free(x);
			return -ENOMEM;
		}
	}
	if (load_sections(mod, x) < 0) {
		symidx_free(x);
		return -ENOMEM;
	}
	tab_finish(&x->glob);
	tab_finish(&x->loc);
	*out = x;
	return 0;
}

/* Sized symbols containing one address: seldom more than a few (aliases
 * and nested objects); more and the lookup is left to libdwfl. */
#define SYMIDX_MAX_HOLDERS 32

struct search {
	uint64_t addr;
	uint64_t min_label; /* the highest end of any symbol at or below addr */
	const struct symidx_ent *closest, *sizeless;
	bool too_long;
};

/* Index of the last entry starting at or below addr, or -1. */
static long last_le(const struct symidx_tab *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->e[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

static int order_cmp(const void *a, const void *b)
{
	const struct symidx_ent *const *x = a, *const *y = b;

	return (*x)->order < (*y)->order ? -1 : (*x)->order > (*y)->order;
}

/* libdwfl's replacement rule for sized symbols, met in table order: a
 * higher start or a stronger binding replaces; at the same start a smaller
 * size with no weaker binding, or a stronger one with no larger size. */
static bool replaces(const struct symidx_ent *e, const struct symidx_ent *cur)
{
	if (!cur || cur->start < e->start || cur->rank < e->rank)
		return true;
	return cur->start == e->start && ((cur->size > e->size && cur->rank <= e->rank) ||
					  (cur->size >= e->size && cur->rank < e->rank));
}

static bool same_section(const struct symidx *x, const struct symidx_ent *e, uint64_t addr)
{
	if (e->abs)
		return e->start == addr;
	return e->start == addr || section_of(x, addr) == section_of(x, e->start);
}

/* second: the locals, met after every global. */
static void search_tab(const struct symidx *x, const struct symidx_tab *t, struct search *s,
		       bool second)
{
	const struct symidx_ent *hold[SYMIDX_MAX_HOLDERS];
	size_t nh = 0;
	long i = last_le(t, s->addr), steps = 0;

	if (i < 0)
		return;
	if (t->e[i].maxend > s->min_label)
		s->min_label = t->e[i].maxend;
	/* Walk down while anything below can still reach addr. */
	for (long j = i; j >= 0 && t->e[j].maxend > s->addr; j--) {
		const struct symidx_ent *e = &t->e[j];

		if (++steps > SYMIDX_MAX_WALK) {
			s->too_long = true;
			return;
		}
		if (!e->size || s->addr - e->start >= e->size)
			continue;
		if (nh == SYMIDX_MAX_HOLDERS) {
			s->too_long = true;
			return;
		}
		hold[nh++] = e;
	}
	if (nh) {
		qsort(hold, nh, sizeof(hold[0]), order_cmp);
		for (size_t k = 0; k < nh; k++)
			if (replaces(hold[k], s->closest))
				s->closest = hold[k];
		return;
	}
	/* A sizeless one can only win at the highest start (any symbol met
	 * later raises the bound past lower ones), and the last met there
	 * does. */
	for (long j = i; j >= 0 && t->e[j].start == t->e[i].start; j--) {
		const struct symidx_ent *e = &t->e[j];

		if (!e->size && same_section(x, e, s->addr) &&
		    (!s->sizeless || e->start > s->sizeless->start ||
		     (e->start == s->sizeless->start && (second || e->order > s->sizeless->order))))
			s->sizeless = e;
	}
}

int symidx_lookup(const struct symidx *x, uint64_t addr, const char **name, uint64_t *off,
		  GElf_Sym *sym)
{
	struct search s = { .addr = addr };
	const struct symidx_ent *e;

	search_tab(x, &x->glob, &s, false);
	/* Locals only when no global holds addr, unless a global label sits
	 * exactly on it. */
	if (!s.closest && !s.too_long && !(s.sizeless && s.sizeless->start == addr))
		search_tab(x, &x->loc, &s, true);
	if (s.too_long)
		return -E2BIG;
	e = s.closest;
	if (!e && s.sizeless && s.sizeless->start >= s.min_label)
		e = s.sizeless;
	if (!e)
		return 0;
	*name = e->name;
	*off = addr - e->start;
	*sym = e->sym;
	return 1;
}

void symidx_free(struct symidx *x)
{
	if (!x)
		return;
	free(x->glob.e);
	free(x->loc.e);
	free(x->sec);
	free(x);
}
