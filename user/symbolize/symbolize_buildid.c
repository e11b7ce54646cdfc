// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The build-id tables shared by all pids: file identity -> build-id, and
 * (build-id, file offset) -> name, so a library another process already
 * symbolized costs no libdwfl session of its own. Apart from symbolize.c
 * because they are the one state that outlives every pid.
 */
#include "symbolize/symbolize_internal.h"

#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/vec.h"

/* ---- build-id cache ---- */

static bool bid_id_eq(uint32_t idx, const void *key, const void *ctx)
{
	const struct bid_tables *bt = ctx;
	const struct build_id *k = key;

	return bt->ids[idx].len == k->len && memcmp(bt->ids[idx].b, k->b, k->len) == 0;
}

static bool file_id_eq(uint32_t idx, const void *key, const void *ctx)
{
	const struct bid_tables *bt = ctx;
	const struct file_id *a = &bt->files[idx], *b = key;

	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_s == b->mtime_s && a->mtime_ns == b->mtime_ns && a->ctime_s == b->ctime_s &&
	       a->ctime_ns == b->ctime_ns;
}

struct bid_key {
	uint64_t foff;
	uint32_t bid;
};

static bool bid_ent_eq(uint32_t idx, const void *key, const void *ctx)
{
	const struct bid_tables *bt = ctx;
	const struct bid_key *k = key;

	return bt->ents[idx].foff == k->foff && bt->ents[idx].bid == k->bid;
}

static uint64_t file_id_hash(const struct file_id *f)
{
	uint64_t v[7] = { f->dev,
			  f->ino,
			  f->size,
			  (uint64_t)f->mtime_s,
			  (uint64_t)f->mtime_ns,
			  (uint64_t)f->ctime_s,
			  (uint64_t)f->ctime_ns };

	return ep_hashmap_hash_finish(ep_hashmap_hash_bytes(v, sizeof(v), HASHMAP_SEED));
}

static uint64_t bid_key_hash(const struct bid_key *k)
{
	uint64_t v[2] = { k->foff, k->bid };

	return ep_hashmap_hash_finish(ep_hashmap_hash_bytes(v, sizeof(v), HASHMAP_SEED));
}

/* Index of the interned build-id, or BID_NONE if the table is full. */
static int32_t bid_intern(struct bid_tables *bt, const void *id, size_t len)
{
	struct build_id k = { .len = (uint32_t)len };
	uint64_t h;
	int64_t i;

	memcpy(k.b, id, len);
	h = ep_hashmap_hash_finish(ep_hashmap_hash_bytes(k.b, len, HASHMAP_SEED));
	i = ep_hashmap_find(&bt->ids_idx, h, &k, bid_id_eq, bt);
	if (i >= 0)
		return (int32_t)i;
	if (bt->n_ids >= BID_MAX_IDS ||
	    ep_vec_grow((void **)&bt->ids, &bt->cap_ids, bt->n_ids + 1, sizeof(*bt->ids)) < 0 ||
	    ep_hashmap_insert(&bt->ids_idx, h, (uint32_t)bt->n_ids) < 0)
		return BID_NONE;
	bt->ids[bt->n_ids] = k;
	return (int32_t)bt->n_ids++;
}

/* The GNU build-id note of an opened ELF file; 0 if it has none. The file is
 * outside input: libelf bounds-checks the notes against the file size. Read,
 * not mapped: a file its owner truncates meanwhile is a short read, not a
 * SIGBUS. */
static ssize_t read_build_id(int fd, unsigned char *out, size_t cap)
{
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	const void *id = NULL;
	ssize_t n;

	if (!elf)
		return 0;
	n = elf_kind(elf) == ELF_K_ELF ? dwelf_elf_gnu_build_id(elf, &id) : 0;
	/* Too short to identify a build, or longer than any real one. */
	if (n < 8 || (size_t)n > cap)
		n = 0;
	else
		memcpy(out, id, (size_t)n);
	elf_end(elf);
	return n;
}

/* Build-id index of the file behind maps entry idx, computed once per entry
 * and, across pids, once per file identity. */
int32_t sym_map_build_id(struct pid_state *ps, size_t idx)
{
	struct symbolizer *s = ps->s;
	struct bid_tables *bt = &s->bt;
	const struct proc_map *m = &ps->maps.maps[idx];
	unsigned char id[BID_MAX_LEN];
	struct file_id k = { 0 };
	struct stat st;
	int32_t bid = BID_NONE;
	uint64_t h;
	int64_t fi;
	ssize_t n;
	int fd;

	if (!ps->map_bid)
		return BID_NONE;
	if (ps->map_bid[idx] != BID_UNKNOWN)
		return ps->map_bid[idx];
	fd = sym_open_mapped(ps, m->start, m->end, m->path, m->inode, m->deleted);
	if (fd < 0 || fstat(fd, &st) < 0)
		goto out;
	k.dev = (uint64_t)st.st_dev;
	k.ino = (uint64_t)st.st_ino;
	k.size = (uint64_t)st.st_size;
	k.mtime_s = st.st_mtim.tv_sec;
	k.mtime_ns = st.st_mtim.tv_nsec;
	k.ctime_s = st.st_ctim.tv_sec;
	k.ctime_ns = st.st_ctim.tv_nsec;
	h = file_id_hash(&k);
	fi = ep_hashmap_find(&bt->files_idx, h, &k, file_id_eq, bt);
	if (fi >= 0) {
		bid = bt->files[fi].bid;
		goto out;
	}
	s->st.buildid_reads++;
	n = read_build_id(fd, id, sizeof(id));
	if (n > 0)
		bid = bid_intern(bt, id, (size_t)n);
	k.bid = bid;
	if (bt->n_files < FILE_ID_MAX &&
	    ep_vec_grow((void **)&bt->files, &bt->cap_files, bt->n_files + 1, sizeof(*bt->files)) ==
		    0 &&
	    ep_hashmap_insert(&bt->files_idx, h, (uint32_t)bt->n_files) == 0)
		bt->files[bt->n_files++] = k;
out:
	if (fd >= 0)
		close(fd);
	ps->map_bid[idx] = bid;
	return bid;
}

const struct bid_ent *sym_bid_cache_find(const struct bid_tables *bt, uint32_t bid, uint64_t foff)
{
	struct bid_key k = { .foff = foff, .bid = bid };
	int64_t i = ep_hashmap_find(&bt->ents_idx, bid_key_hash(&k), &k, bid_ent_eq, bt);

	return i >= 0 ? &bt->ents[i] : NULL;
}

void sym_bid_cache_put(struct symbolizer *s, uint32_t bid, uint64_t foff, const char *name,
		       uint64_t sym_off)
{
	struct bid_tables *bt = &s->bt;
	struct bid_key k = { .foff = foff, .bid = bid };
	uint64_t h = bid_key_hash(&k);

	if (bt->n_ents >= BID_CACHE_MAX) {
		/* Start over rather than grow past the bound. */
		ep_hashmap_free(&bt->ents_idx);
		bt->n_ents = 0;
		s->st.buildid_resets++;
	}
	/* A failed insert only costs a later libdwfl lookup. */
	if (ep_vec_grow((void **)&bt->ents, &bt->cap_ents, bt->n_ents + 1, sizeof(*bt->ents)) < 0 ||
	    ep_hashmap_insert(&bt->ents_idx, h, (uint32_t)bt->n_ents) < 0)
		return;
	bt->ents[bt->n_ents++] = (struct bid_ent){
		.foff = foff, .bid = bid, .resolved = name != NULL, .name = name, .sym_off = sym_off
	};
}

void sym_bid_tables_free(struct bid_tables *bt)
{
	free(bt->ids);
	free(bt->files);
	free(bt->ents);
	ep_hashmap_free(&bt->ids_idx);
	ep_hashmap_free(&bt->files_idx);
	ep_hashmap_free(&bt->ents_idx);
}
