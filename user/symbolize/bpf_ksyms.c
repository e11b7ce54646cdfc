// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "symbolize/bpf_ksyms.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Functions in one program: the kernel allows 256 subprograms. */
#define MAX_FUNCS 256
/* Programs read: far above what a machine runs; a bound all the same. */
#define MAX_PROGS 65536

struct ent {
	uint64_t addr;
	uint32_t len;
	uint32_t name; /* offset into names */
};

struct bpf_ksyms {
	struct ent *e;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
};

struct btf_slot {
	uint32_t id;
	struct btf *btf;
};

#define MAX_BTFS 512

/* What one program's info is read into. */
struct scratch {
	uint64_t ksyms[MAX_FUNCS];
	uint32_t lens[MAX_FUNCS];
	uint8_t tags[MAX_FUNCS][BPF_TAG_SIZE];
	struct bpf_func_info fi[MAX_FUNCS];
	struct btf_slot slots[MAX_BTFS];
	size_t nslots;
};

static int add(struct bpf_ksyms *b, uint64_t addr, uint32_t len, const char *name)
{
	size_t nl = strlen(name) + 1;

	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		struct ent *e = realloc(b->e, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		b->e = e;
		b->cap = cap;
	}
	if (b->names_len + nl > b->names_cap) {
		size_t cap = b->names_cap ? 2 * b->names_cap : 4096;
		char *p;

		while (cap < b->names_len + nl)
			cap *= 2;
		if (cap > UINT32_MAX || !(p = realloc(b->names, cap)))
			return -ENOMEM;
		b->names = p;
		b->names_cap = cap;
	}
	memcpy(b->names + b->names_len, name, nl);
	b->e[b->n++] = (struct ent){ addr, len, (uint32_t)b->names_len };
	b->names_len += nl;
	return 0;
}

/* The program's BTF, loaded once per id (programs of one object share it). */
static const struct btf *btf_of(struct scratch *sc, uint32_t id)
{
	for (size_t i = 0; i < sc->nslots; i++)
		if (sc->slots[i].id == id)
			return sc->slots[i].btf;
	if (sc->nslots >= MAX_BTFS)
		return NULL;
	struct btf *btf = btf__load_from_kernel_by_id(id);

	sc->slots[sc->nslots].id = id;
	sc->slots[sc->nslots].btf = btf;
	sc->nslots++;
	return btf;
}

/* One program's functions, named as kernel/bpf/core.c names them. */
static int add_prog(struct bpf_ksyms *b, int fd, struct scratch *sc)
{
	uint64_t *ksyms = sc->ksyms;
	uint32_t *lens = sc->lens;
	uint8_t(*tags)[BPF_TAG_SIZE] = sc->tags;
	struct bpf_func_info *fi = sc->fi;
	struct bpf_prog_info info;
	uint32_t len = sizeof(info), nk, nl, nt, nf;
	const struct btf *btf = NULL;
	int err;

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0; /* gone meanwhile */
	nk = info.nr_jited_ksyms;
	nl = info.nr_jited_func_lens;
	nt = info.nr_prog_tags;
	nf = info.nr_func_info;
	if (!nk || nk > MAX_FUNCS || nl != nk)
		return 0; /* not JITed, or hidden from us */
	if (nt > MAX_FUNCS)
		nt = 0;
	if (nf > MAX_FUNCS || info.func_info_rec_size != sizeof(struct bpf_func_info))
		nf = 0;
	uint32_t btf_id = info.btf_id;
	char pname[sizeof(info.name) + 1];

	memcpy(pname, info.name, sizeof(info.name));
	pname[sizeof(info.name)] = '\0';
	memset(&info, 0, sizeof(info));
	info.nr_jited_ksyms = nk;
	info.jited_ksyms = (uint64_t)(uintptr_t)ksyms;
	info.nr_jited_func_lens = nk;
	info.jited_func_lens = (uint64_t)(uintptr_t)lens;
	info.nr_prog_tags = nt;
	info.prog_tags = (uint64_t)(uintptr_t)tags;
	info.nr_func_info = nf;
	info.func_info_rec_size = sizeof(struct bpf_func_info);
	info.func_info = (uint64_t)(uintptr_t)fi;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.nr_jited_ksyms != nk)
		return 0;
	if (nf && btf_id)
		btf = btf_of(sc, btf_id);
	for (uint32_t i = 0; i < nk; i++) {
		char name[600], tag[2 * BPF_TAG_SIZE + 1];
		const char *fn = i ? "F" : pname;

		if (!ksyms[i])
			continue;
		if (btf && i < nf) {
			const struct btf_type *t = btf__type_by_id(btf, fi[i].type_id);
			const char *s = t ? btf__name_by_offset(btf, t->name_off) : NULL;

			if (s && *s)
				fn = s;
		}
		/* The whole program's tag for its main function (as
		 * jit_subprogs registers it), each subprogram's own after. */
		const uint8_t *tg = i && nt > i ? tags[i] : info.tag;

		for (int k = 0; k < BPF_TAG_SIZE; k++)
			snprintf(tag + 2 * k, 3, "%02x", tg[k]);
		/* The kernel leaves off "_NAME" when there is none. */
		snprintf(name, sizeof(name), "bpf_prog_%s%s%s [bpf]", tag, *fn ? "_" : "", fn);
		err = add(b, ksyms[i], lens[i], name);
		if (err)
			return err;
	}
	return 0;
}

static int cmp_ent(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int bpf_ksyms_load(struct bpf_ksyms **out)
{
	struct bpf_ksyms *b = calloc(1, sizeof(*b));
	struct scratch *sc = calloc(1, sizeof(*sc));
	size_t nprogs = 0;
	uint32_t id = 0;
	int err = 0;

	*out = NULL;
	if (!b || !sc) {
		free(b);
		free(sc);
		return -ENOMEM;
	}
	while (nprogs++ < MAX_PROGS) {
		int fd;

		if (bpf_prog_get_next_id(id, &id)) {
			if (errno != ENOENT)
				err = -errno;
			break;
		}
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0) {
			if (errno == EPERM || errno == EACCES) {
				err = -errno;
				break;
			}
			continue; /* unloaded meanwhile */
		}
		err = add_prog(b, fd, sc);
		close(fd);
		if (err)
			break;
	}
	for (size_t i = 0; i < sc->nslots; i++)
		btf__free(sc->slots[i].btf);
	free(sc);
	if (err) {
		bpf_ksyms_free(b);
		return err;
	}
	if (b->n)
		qsort(b->e, b->n, sizeof(*b->e), cmp_ent);
	*out = b;
	return 0;
}

void bpf_ksyms_free(struct bpf_ksyms *b)
{
	if (!b)
		return;
	free(b->e);
	free(b->names);
	free(b);
}

size_t bpf_ksyms_count(const struct bpf_ksyms *b)
{
	return b ? b->n : 0;
}

const char *bpf_ksyms_lookup(const struct bpf_ksyms *b, uint64_t addr, uint64_t *off)
{
	size_t lo = 0, hi = b ? b->n : 0;

	/* The last function starting at or before addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->e[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr - b->e[lo - 1].addr >= b->e[lo - 1].len)
		return NULL;
	*off = addr - b->e[lo - 1].addr;
	return b->names + b->e[lo - 1].name;
}

const char *bpf_ksyms_at(const struct bpf_ksyms *b, size_t i, uint64_t *addr)
{
	if (!b || i >= b->n)
		return NULL;
	*addr = b->e[i].addr;
	return b->names + b->e[i].name;
}
