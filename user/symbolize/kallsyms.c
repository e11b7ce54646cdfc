// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Compact /proc/kallsyms table. The file is read line by line (never held
 * whole), only text symbols are kept (sampled IPs are code, so a data symbol
 * must never name one), and each kept symbol costs 12 bytes plus its name in
 * one arena: two parallel arrays (address, name offset) rather than an array
 * of padded structs. Arrays grow geometrically and are shrunk to size at the
 * end; sorting is an in-place heapsort, so no temporary copy exists at the
 * peak (qsort may allocate a full-size buffer).
 */
#include "symbolize/kallsyms.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/vec.h"

/* Bounds against a bogus file: real kallsyms has a few hundred thousand lines. */
#define KSYMS_MAX_LINES (8u << 20)
#define KSYMS_MAX_NAME	512
/* Kernel symbols have no size; no kernel function is this large, so an address
 * this far past the closest symbol is in a gap, not in that symbol. */
#define KSYMS_MAX_SYM_SPAN (1u << 20)
/* While loading, the top two bits of a name offset hold the alias rank; the
 * arena is therefore limited to 1 GiB (real files need a few MiB). */
#define RANK_SHIFT 30
#define OFF_MASK   ((1u << RANK_SHIFT) - 1)
#define READ_BUF   (64u << 10)

struct kallsyms {
	uint64_t *addrs;
	uint32_t *offs; /* name offsets into names */
	size_t n;
	char *names;
	size_t names_len;
	size_t bad_lines;
	size_t skipped;
	bool restricted;
};

/* Lower is preferred among aliases at one address: global text first. */
static int type_rank(char t)
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
		return -1; /* not code: dropped */
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

static int add_sym(struct kallsyms *ks, size_t *syms_cap, size_t *names_cap, uint64_t addr,
		   int rank, const char *name)
{
	size_t nlen = strlen(name) + 1;
	int err;

	if (ks->n == *syms_cap) {
		size_t c = *syms_cap;

		err = ep_vec_grow((void **)&ks->addrs, &c, c + 1, sizeof(*ks->addrs));
		if (!err)
			err = ep_vec_grow((void **)&ks->offs, syms_cap, *syms_cap + 1,
					  sizeof(*ks->offs));
		if (err)
			return err;
	}
	while (ks->names_len + nlen > *names_cap) {
		if (*names_cap * 2 > OFF_MASK + 1u)
			return -EFBIG;
		err = ep_vec_grow((void **)&ks->names, names_cap, *names_cap + 1, 1);
		if (err)
			return err;
	}
	memcpy(ks->names + ks->names_len, name, nlen);
	ks->addrs[ks->n] = addr;
	ks->offs[ks->n] = (uint32_t)ks->names_len | (uint32_t)rank << RANK_SHIFT;
	ks->names_len += nlen;
	ks->n++;
	return 0;
}

static void swap_syms(struct kallsyms *ks, size_t i, size_t j)
{
	uint64_t a = ks->addrs[i];
	uint32_t o = ks->offs[i];

	ks->addrs[i] = ks->addrs[j];
	ks->offs[i] = ks->offs[j];
	ks->addrs[j] = a;
	ks->offs[j] = o;
}

/* Heap over [lo, lo + n). */
static void sift_down(struct kallsyms *ks, size_t lo, size_t root, size_t n)
{
	for (;;) {
		size_t c = 2 * root + 1;

		if (c >= n)
			return;
		if (c + 1 < n && ks->addrs[lo + c + 1] > ks->addrs[lo + c])
			c++;
		if (ks->addrs[lo + root] >= ks->addrs[lo + c])
			return;
		swap_syms(ks, lo + root, lo + c);
		root = c;
	}
}

static void heap_sort(struct kallsyms *ks, size_t lo, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(ks, lo, i, n);
	for (size_t end = n; end > 1; end--) {
		swap_syms(ks, lo, lo + end - 1);
		sift_down(ks, lo, 0, end - 1);
	}
}

/* By address only: alias order within one address is settled by dedup().
 * The core kernel (~95% of the lines) comes first and in order; only the
 * modules and BPF programs after it are not. Sorting just that tail and
 * merging is linear in the rest: a heap sort of all 120k lines was 2.5% of
 * the collector's CPU for a 5 s capture. */
static void sort_by_addr(struct kallsyms *ks)
{
	size_t mid = 1, n = ks->n, nt;
	uint64_t *taddrs;
	uint32_t *toffs;

	while (mid < n && ks->addrs[mid - 1] <= ks->addrs[mid])
		mid++;
	if (mid >= n)
		return;
	nt = n - mid;
	heap_sort(ks, mid, nt);
	/* Merge from the back with only the tail copied out: a copy of the
	 * whole table would raise the collector's peak RSS by ~1.5 MB. */
	taddrs = malloc(nt * sizeof(*taddrs));
	toffs = malloc(nt * sizeof(*toffs));
	if (!taddrs || !toffs) {
		free(taddrs);
		free(toffs);
		heap_sort(ks, 0, n);
		return;
	}
	memcpy(taddrs, ks->addrs + mid, nt * sizeof(*taddrs));
	memcpy(toffs, ks->offs + mid, nt * sizeof(*toffs));
	for (size_t i = mid, j = nt, w = n; j > 0;) {
		w--;
		if (i > 0 && ks->addrs[i - 1] > taddrs[j - 1]) {
			i--;
			ks->addrs[w] = ks->addrs[i];
			ks->offs[w] = ks->offs[i];
		} else {
			j--;
			ks->addrs[w] = taddrs[j];
			ks->offs[w] = toffs[j];
		}
	}
	free(taddrs);
	free(toffs);
}

/* Keeps one symbol per address: lowest rank, then earliest in the file (a
 * smaller name offset was read first). Also strips the rank bits. */
static void dedup(struct kallsyms *ks)
{
	size_t w = 0;

	for (size_t i = 0; i < ks->n;) {
		uint32_t best = ks->offs[i];
		size_t j = i + 1;

		for (; j < ks->n && ks->addrs[j] == ks->addrs[i]; j++) {
			uint32_t o = ks->offs[j];

			if ((o >> RANK_SHIFT) < (best >> RANK_SHIFT) ||
			    ((o >> RANK_SHIFT) == (best >> RANK_SHIFT) && o < best))
				best = o;
		}
		ks->addrs[w] = ks->addrs[i];
		ks->offs[w] = best & OFF_MASK;
		w++;
		i = j;
	}
	ks->n = w;
}

static void shrink(void **p, size_t bytes)
{
	void *np = realloc(*p, bytes ? bytes : 1);

	if (np)
		*p = np;
}

int kallsyms_load(const char *path, struct kallsyms **out)
{
	FILE *f;
	int err;

	*out = NULL;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	/* Fewer read() calls: each one makes the kernel re-walk its seq_file. */
	setvbuf(f, NULL, _IOFBF, READ_BUF);
	err = kallsyms_load_streams(&f, 1, NULL, out);
	fclose(f);
	return err;
}

int kallsyms_load_streams(FILE *const *fs, size_t nfs, FILE *core_out, struct kallsyms **out)
{
	struct kallsyms *ks;
	size_t syms_cap = 0, names_cap = 0, lines = 0, fi = 0;
	char *line = NULL, name[KSYMS_MAX_NAME];
	size_t line_cap = 0;
	bool sorted = true, any_text = false;
	int err = 0;

	*out = NULL;
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return -ENOMEM;
	while (fi < nfs) {
		ssize_t r = getline(&line, &line_cap, fs[fi]);
		uint64_t addr;
		char type;
		int rank;

		if (r < 0) {
			if (ferror(fs[fi])) {
				err = -EIO;
				break;
			}
			fi++;
			continue;
		}
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
		rank = type_rank(type);
		if (rank < 0) {
			ks->skipped++;
			continue;
		}
		any_text = true;
		/* Address 0 is never kernel text: it means kptr_restrict hides it. */
		if (!addr) {
			ks->skipped++;
			continue;
		}
		if (ks->n && addr < ks->addrs[ks->n - 1])
			sorted = false;
		err = add_sym(ks, &syms_cap, &names_cap, addr, rank, name);
		if (err)
			break;
		/* The core kernel's lines: parse_line kept no "[module]". */
		if (core_out && !strchr(name, ' ') &&
		    fprintf(core_out, "%016" PRIx64 " %c %s\n", addr, type, name) < 0) {
			err = -EIO;
			break;
		}
	}
	free(line);
	if (err) {
		kallsyms_free(ks);
		return err;
	}
	ks->restricted = any_text && ks->n == 0;
	/* The core kernel is listed in address order; modules and BPF programs
	 * may not be. */
	if (!sorted)
		sort_by_addr(ks);
	dedup(ks);
	shrink((void **)&ks->addrs, ks->n * sizeof(*ks->addrs));
	shrink((void **)&ks->offs, ks->n * sizeof(*ks->offs));
	shrink((void **)&ks->names, ks->names_len);
	*out = ks;
	return 0;
}

void kallsyms_free(struct kallsyms *ks)
{
	if (!ks)
		return;
	free(ks->addrs);
	free(ks->offs);
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

size_t kallsyms_skipped(const struct kallsyms *ks)
{
	return ks->skipped;
}

size_t kallsyms_bytes(const struct kallsyms *ks)
{
	return ks->n * (sizeof(*ks->addrs) + sizeof(*ks->offs)) + ks->names_len;
}

/* ---- the core kernel's table as a file (ksym_cache.h) ---- */

static const char core_magic[8] = "EPKSYM1";

struct core_hdr {
	char magic[8];
	uint64_t n;
	uint64_t names_len;
};

int kallsyms_save(const struct kallsyms *ks, FILE *f)
{
	struct core_hdr h = { .n = ks->n, .names_len = ks->names_len };

	memcpy(h.magic, core_magic, sizeof(h.magic));
	if (fwrite(&h, sizeof(h), 1, f) != 1 ||
	    fwrite(ks->addrs, sizeof(*ks->addrs), ks->n, f) != ks->n ||
	    fwrite(ks->offs, sizeof(*ks->offs), ks->n, f) != ks->n ||
	    fwrite(ks->names, 1, ks->names_len, f) != ks->names_len)
		return -EIO;
	return 0;
}

static bool read_all(int fd, void *buf, size_t len)
{
	for (size_t got = 0; got < len;) {
		ssize_t r = read(fd, (char *)buf + got, len - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

int kallsyms_load_saved(int fd, size_t size, struct kallsyms **out)
{
	struct core_hdr h;
	struct kallsyms *ks;
	char extra;

	*out = NULL;
	if (size < sizeof(h) || !read_all(fd, &h, sizeof(h)) ||
	    memcmp(h.magic, core_magic, sizeof(h.magic)) || h.n == 0 || h.n > KSYMS_MAX_LINES ||
	    h.names_len == 0 || h.names_len > OFF_MASK ||
	    size != sizeof(h) + h.n * (sizeof(uint64_t) + sizeof(uint32_t)) + h.names_len)
		return -EINVAL;
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return -ENOMEM;
	ks->n = h.n;
	ks->names_len = h.names_len;
	ks->addrs = malloc(h.n * sizeof(*ks->addrs));
	ks->offs = malloc(h.n * sizeof(*ks->offs));
	ks->names = malloc(h.names_len);
	if (!ks->addrs || !ks->offs || !ks->names) {
		kallsyms_free(ks);
		return -ENOMEM;
	}
	if (!read_all(fd, ks->addrs, h.n * sizeof(*ks->addrs)) ||
	    !read_all(fd, ks->offs, h.n * sizeof(*ks->offs)) ||
	    !read_all(fd, ks->names, h.names_len) || read(fd, &extra, 1) != 0 ||
	    ks->names[h.names_len - 1] != '\0') {
		kallsyms_free(ks);
		return -EINVAL;
	}
	/* What a load leaves: one symbol per address, ascending, none at 0,
	 * names inside the arena and not empty. */
	for (size_t i = 0; i < ks->n; i++) {
		if (!ks->addrs[i] || (i && ks->addrs[i] <= ks->addrs[i - 1]) ||
		    ks->offs[i] >= ks->names_len || !ks->names[ks->offs[i]]) {
			kallsyms_free(ks);
			return -EINVAL;
		}
	}
	*out = ks;
	return 0;
}

int kallsyms_merge(struct kallsyms *a, struct kallsyms *b, struct kallsyms **out)
{
	struct kallsyms *m = calloc(1, sizeof(*m));
	size_t n = a->n + b->n, i = 0, j = 0;

	*out = NULL;
	if (!m)
		return -ENOMEM;
	m->n = n;
	m->names_len = a->names_len + b->names_len;
	m->addrs = malloc((n ? n : 1) * sizeof(*m->addrs));
	m->offs = malloc((n ? n : 1) * sizeof(*m->offs));
	m->names = malloc(m->names_len ? m->names_len : 1);
	if (!m->addrs || !m->offs || !m->names || m->names_len > OFF_MASK) {
		int err = m->names_len > OFF_MASK ? -EFBIG : -ENOMEM;

		kallsyms_free(m);
		return err;
	}
	memcpy(m->names, a->names, a->names_len);
	memcpy(m->names + a->names_len, b->names, b->names_len);
	for (size_t k = 0; k < n; k++) {
		bool from_a = j >= b->n || (i < a->n && a->addrs[i] < b->addrs[j]);

		/* One address in both: which alias a whole file keeps depends
		 * on ranks the tables no longer hold. */
		if (i < a->n && j < b->n && a->addrs[i] == b->addrs[j]) {
			kallsyms_free(m);
			return -EEXIST;
		}
		if (from_a) {
			m->addrs[k] = a->addrs[i];
			m->offs[k] = a->offs[i++];
		} else {
			m->addrs[k] = b->addrs[j];
			m->offs[k] = b->offs[j++] + (uint32_t)a->names_len;
		}
	}
	m->bad_lines = a->bad_lines + b->bad_lines;
	m->skipped = a->skipped + b->skipped;
	*out = m;
	return 0;
}

const char *kallsyms_at(const struct kallsyms *ks, size_t i, uint64_t *addr)
{
	if (i >= ks->n)
		return NULL;
	*addr = ks->addrs[i];
	return ks->names + ks->offs[i];
}

const char *kallsyms_lookup(const struct kallsyms *ks, uint64_t addr, uint64_t *sym_off)
{
	size_t lo = 0, hi = ks->n;

	if (ks->restricted || ks->n == 0 || addr < ks->addrs[0])
		return NULL;
	/* Find the last symbol with start <= addr. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->addrs[mid] <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (addr - ks->addrs[lo] >= KSYMS_MAX_SYM_SPAN)
		return NULL;
	if (sym_off)
		*sym_off = addr - ks->addrs[lo];
	return ks->names + ks->offs[lo];
}
