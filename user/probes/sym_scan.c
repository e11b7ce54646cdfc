// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "probes/sym_scan.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Big enough that a read costs little per byte, small enough to stay in
 * the cache and never be a fresh allocation worth faulting in twice. */
#define CHUNK (128 * 1024)

struct cand {
	uint64_t off; /* string table offset where names[name] starts */
	size_t name;
};

struct scan {
	const char *const *names;
	size_t *len;
	size_t maxlen;
	/* Names by their last byte: most strings end in a byte no name ends
	 * in, and are passed over with one load. */
	uint16_t first[256], *next;
	struct cand *c;
	size_t nc;
	/* Bit (st_name * K) >> 48 set for each candidate offset: most
	 * symbols are ruled out without a search. */
	uint64_t bloom[1024];
};

static int read_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -EIO;
		got += (size_t)r;
	}
	return 0;
}

static uint64_t bloom_bit(uint64_t off)
{
	return (off * 0x9e3779b97f4a7c15ull) >> 48; /* 0..65535 */
}

/* A whole string of the table, [s, s + len) at table offset off: every
 * name that is it or its tail is stored there. */
static int match_string(struct scan *sc, const char *s, size_t len, uint64_t off)
{
	if (!len)
		return 0;
	for (uint16_t k = sc->first[(unsigned char)s[len - 1]]; k; k = sc->next[k - 1]) {
		size_t i = k - 1, l = sc->len[i];

		if (l > len || memcmp(s + len - l, sc->names[i], l))
			continue;
		if (sc->nc >= SYM_SCAN_MAX_CANDS)
			return -ENOTSUP;
		sc->c[sc->nc++] = (struct cand){ off + len - l, i };
		uint64_t b = bloom_bit(off + len - l);
		sc->bloom[b >> 6] |= 1ull << (b & 63);
	}
	return 0;
}

static int scan_strings(struct scan *sc, int fd, const struct sym_scan_table *t, char *buf)
{
	uint64_t base = 0; /* table offset of buf[0] */
	size_t have = 0;

	while (base + have < t->str_size) {
		size_t want = CHUNK - have, i = 0;
		int err;

		if (want > t->str_size - base - have)
			want = (size_t)(t->str_size - base - have);
		err = read_full(fd, buf + have, want, t->str_off + base + have);
		if (err)
			return err;
		have += want;
		for (;;) {
			char *z = memchr(buf + i, 0, have - i);

			if (!z)
				break;
			err = match_string(sc, buf + i, (size_t)(z - (buf + i)), base + i);
			if (err)
				return err;
			i = (size_t)(z - buf) + 1;
		}
		if (i == 0 && have == CHUNK) {
			/* One string longer than the buffer: only its last maxlen
			 * bytes can hold a name. Keep them; their table offsets
			 * stay right as base moves with them. */
			size_t keep = sc->maxlen;

			memmove(buf, buf + have - keep, keep);
			base += have - keep;
			have = keep;
			continue;
		}
		memmove(buf, buf + i, have - i);
		base += i;
		have -= i;
	}
	/* An unterminated tail is no string. */
	return 0;
}

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

static void decode(const struct sym_scan_table *t, const char *p, uint32_t *name,
		   struct sym_scan_sym *out)
{
	if (t->elf64) {
		Elf64_Sym s;

		memcpy(&s, p, sizeof(s));
		*name = s.st_name;
		out->value = s.st_value;
		out->shndx = s.st_shndx;
		out->type = ELF64_ST_TYPE(s.st_info);
	} else {
		Elf32_Sym s;

		memcpy(&s, p, sizeof(s));
		*name = s.st_name;
		out->value = s.st_value;
		out->shndx = s.st_shndx;
		out->type = ELF32_ST_TYPE(s.st_info);
	}
}

static int scan_symbols(struct scan *sc, int fd, const struct sym_scan_table *t, char *buf,
			sym_scan_fn fn, void *arg)
{
	size_t es = (size_t)t->sym_entsize, per = CHUNK / es;
	uint64_t count = t->sym_size / es;

	for (uint64_t i = 0; i < count;) {
		size_t m = count - i < per ? (size_t)(count - i) : per;
		int err = read_full(fd, buf, m * es, t->sym_off + i * es);

		if (err)
			return err;
		for (size_t j = 0; j < m; j++) {
			struct sym_scan_sym s;
			uint32_t name;
			uint64_t b;

			decode(t, buf + j * es, &name, &s);
			b = bloom_bit(name);
			if (!(sc->bloom[b >> 6] & (1ull << (b & 63))))
				continue;
			/* The first candidate at this offset, then its equals:
			 * a name and its own tail cannot start at one place,
			 * but two names can share one (duplicates). */
			size_t lo = 0, hi = sc->nc;
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;

				if (sc->c[mid].off < name)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (; lo < sc->nc && sc->c[lo].off == name; lo++)
				if (fn(arg, sc->c[lo].name, &s))
					return 0;
		}
		i += m;
	}
	return 0;
}

int sym_scan(int fd, uint64_t file_size, const struct sym_scan_table *t, const char *const *names,
	     size_t n, sym_scan_fn fn, void *arg)
{
	size_t es = t->elf64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	struct scan sc = { .names = names };
	char *buf = NULL;
	int err = -ENOMEM;

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	return -ENOTSUP;
#endif
	if (t->sym_entsize != es)
		return -ENOTSUP;
	if (t->sym_off > file_size || t->sym_size > file_size - t->sym_off ||
	    t->str_off > file_size || t->str_size > file_size - t->str_off)
		return -EINVAL;
	if (!n || n >= UINT16_MAX)
		return n ? -ENOTSUP : 0;
	sc.len = calloc(n, sizeof(*sc.len));
	sc.next = calloc(n, sizeof(*sc.next));
	sc.c = malloc(SYM_SCAN_MAX_CANDS * sizeof(*sc.c));
	buf = malloc(CHUNK);
	if (!sc.len || !sc.next || !sc.c || !buf)
		goto out;
	for (size_t i = n; i-- > 0;) {
		sc.len[i] = strlen(names[i]);
		/* Longer names than half the buffer are not kept across a
		 * refill; no symbol we look for is one. */
		if (!sc.len[i] || sc.len[i] > CHUNK / 2) {
			err = -ENOTSUP;
			goto out;
		}
		if (sc.len[i] > sc.maxlen)
			sc.maxlen = sc.len[i];
		unsigned char last = (unsigned char)names[i][sc.len[i] - 1];
		sc.next[i] = sc.first[last];
		sc.first[last] = (uint16_t)(i + 1);
	}
	err = scan_strings(&sc, fd, t, buf);
	if (err || !sc.nc)
		goto out;
	qsort(sc.c, sc.nc, sizeof(*sc.c), cmp_cand);
	err = scan_symbols(&sc, fd, t, buf, fn, arg);
out:
	free(buf);
	free(sc.c);
	free(sc.next);
	free(sc.len);
	return err;
}
