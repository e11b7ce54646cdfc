// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "util/clock.h"
#include "ktables.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "events/unwind.h"
#include "util/log.h"
#include "proc/proc_maps.h"
#include "proc/target_open.h"
#include "unwind/cfi_table.h"
#include "util/vec.h"

#define KT_DEFAULT_BUDGET (128ull << 20)
#define KT_MAX_SEGS	  8
#define KT_MAPS_MAX_BYTES (16u << 20)
#define KT_MAPS_MAX_LINES 65536
/* A pc in no known mapping re-reads the maps at most this often: a JIT that
 * maps code outside every mapping we know would otherwise re-scan on every
 * sample. */
#define KT_RESCAN_MIN_NS (20 * 1000000ull)
/* A new shard has room for a quarter more than the scan that made it
 * needs, and at least this many blocks (768 KiB): a dlopen of a library or
 * two then lands in it without another RCU wait. */
#define KT_SHARD_MIN_BLOCKS 256

struct kt_seg {
	uint64_t vaddr, off, filesz;
};

struct kt_obj {
	uint64_t dev, ino;
	bool vdso;
	uint32_t kind; /* enum ep_uw_kind: CFI or FP */
	uint32_t shard, blk_lo, nblk, sblk;
	int nseg;
	struct kt_seg seg[KT_MAX_SEGS];
	struct uw_table pending; /* built, waiting for its place in a shard */
};

struct kt_shard {
	uint32_t base; /* first global block */
	uint32_t size, used;
	int fd;
};

struct kt_proc {
	uint32_t pid;
	uint64_t last_scan_ns;
};

struct ktables {
	struct ktables_opts o;
	struct uw_cache *cache;
	struct kt_obj *objs;
	size_t nobjs, cap_objs;
	struct kt_proc *procs;
	size_t nprocs, cap_procs;
	struct kt_shard shards[EP_UW_MAX_SHARDS];
	uint32_t nshards, next_blk;
	uint64_t row_bytes;
	struct ktables_stats st;
	struct ep_uw_proc *pv; /* scratch for one process's list (20 KiB) */
};

int ktables_new(struct ktables **out, const struct ktables_opts *o)
{
	struct ktables *k = calloc(1, sizeof(*k));
	int err;

	if (!k)
		return -ENOMEM;
	k->o = *o;
	if (!k->o.max_bytes)
		k->o.max_bytes = KT_DEFAULT_BUDGET;
	k->pv = malloc(sizeof(*k->pv));
	if (!k->pv) {
		free(k);
		return -ENOMEM;
	}
	elf_version(EV_CURRENT);
	err = uw_cache_open(&k->cache, o->cache_dir);
	if (err) {
		/* Tables are then compiled each time: slower, not wrong. */
		log_warn("unwind tables: no disk cache (%s)", strerror(-err));
		k->cache = NULL;
	}
	k->st.map_bytes = (uint64_t)EP_UW_MAX_BLOCKS * sizeof(__u32);
	*out = k;
	return 0;
}

void ktables_free(struct ktables *k)
{
	if (!k)
		return;
	uw_cache_free(k->cache);
	for (uint32_t i = 0; i < k->nshards; i++)
		close(k->shards[i].fd);
	for (size_t i = 0; i < k->nobjs; i++)
		uw_table_free(&k->objs[i].pending);
	free(k->objs);
	free(k->procs);
	free(k->pv);
	free(k);
}

/* The executable object's PT_LOAD segments, to turn a mapping into a load
 * bias. */
static int read_segs(Elf *elf, struct kt_obj *ob)
{
	size_t n;

	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (size_t i = 0; i < n && ob->nseg < KT_MAX_SEGS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		ob->seg[ob->nseg++] = (struct kt_seg){ ph.p_vaddr, ph.p_offset, ph.p_filesz };
	}
	return ob->nseg ? 0 : -ENOEXEC;
}

/* A shard with room for nblk blocks: the last one, or a new one of want
 * blocks (at least nblk). */
static struct kt_shard *shard_for(struct ktables *k, uint32_t nblk, uint32_t want)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = BPF_F_INNER_MAP);
	struct kt_shard *sh = k->nshards ? &k->shards[k->nshards - 1] : NULL;
	uint64_t bytes;
	uint32_t id;

	if (sh && sh->size - sh->used >= nblk)
		return sh;
	if (want < nblk)
		want = nblk;
	if (want < KT_SHARD_MIN_BLOCKS)
		want = KT_SHARD_MIN_BLOCKS;
	if (k->next_blk + want > EP_UW_MAX_BLOCKS)
		want = EP_UW_MAX_BLOCKS - k->next_blk;
	bytes = (uint64_t)want * sizeof(struct ep_uw_block);
	if (k->row_bytes + bytes > k->o.max_bytes)
		want = (uint32_t)((k->o.max_bytes - k->row_bytes) / sizeof(struct ep_uw_block));
	if (k->nshards >= EP_UW_MAX_SHARDS || want < nblk)
		return NULL;
	id = k->nshards;
	sh = &k->shards[id];
	sh->fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "uw_rows", sizeof(__u32),
				sizeof(struct ep_uw_block), want, &mo);
	if (sh->fd < 0) {
		log_warn("unwind tables: cannot create a BPF array of %u blocks: %s", want,
			 strerror(errno));
		return NULL;
	}
	/* The one RCU wait per shard. */
	if (bpf_map_update_elem(k->o.objs_fd, &id, &sh->fd, BPF_ANY)) {
		log_warn("unwind tables: cannot insert a shard: %s", strerror(errno));
		close(sh->fd);
		return NULL;
	}
	sh->base = k->next_blk;
	sh->size = want;
	sh->used = 0;
	k->next_blk += want;
	k->row_bytes += (uint64_t)want * sizeof(struct ep_uw_block);
	k->st.map_bytes += (uint64_t)want * sizeof(struct ep_uw_block);
	k->nshards++;
	return sh;
}

static uint32_t blocks_of(const struct uw_table *t)
{
	return (t->n + EP_UW_BLOCK_ROWS - 1) / EP_UW_BLOCK_ROWS;
}

/* Copies ob's pending rows into a shard, in blocks, and their first pcs
 * into the global block index; frees them. want: blocks for a new shard. */
static int place_rows(struct ktables *k, struct kt_obj *ob, uint32_t want)
{
	const struct uw_table *t = &ob->pending;
	uint32_t nblk = blocks_of(t), count;
	size_t bytes = (size_t)nblk * sizeof(struct ep_uw_block);
	struct ep_uw_block *blocks = NULL;
	uint32_t *keys = NULL, *gkeys = NULL, *first = NULL;
	struct kt_shard *sh = shard_for(k, nblk, want);
	int err;

	if (!sh) {
		k->st.over_budget++;
		err = -E2BIG;
		goto out;
	}
	blocks = malloc(bytes);
	keys = malloc(nblk * sizeof(*keys));
	gkeys = malloc(nblk * sizeof(*gkeys));
	first = malloc(nblk * sizeof(*first));
	err = -ENOMEM;
	if (!blocks || !keys || !gkeys || !first)
		goto out;
	/* Tail rows past the table's end sort after every pc. */
	memset(blocks, 0xff, bytes);
	for (uint32_t b = 0; b < nblk; b++) {
		uint32_t lo = b * EP_UW_BLOCK_ROWS, n = t->n - lo;

		if (n > EP_UW_BLOCK_ROWS)
			n = EP_UW_BLOCK_ROWS;
		memcpy(blocks[b].rows, t->rows + lo, n * sizeof(struct ep_uw_row));
		for (uint32_t r = n; r < EP_UW_BLOCK_ROWS; r++)
			blocks[b].rows[r].cfa = EP_UW_CFA_NONE;
		keys[b] = sh->used + b;
		gkeys[b] = sh->base + sh->used + b;
		first[b] = t->rows[lo].pc;
	}
	count = nblk;
	if (bpf_map_update_batch(sh->fd, keys, blocks, &count, NULL)) {
		err = -errno;
		goto out;
	}
	count = nblk;
	if (bpf_map_update_batch(k->o.blk_pc_fd, gkeys, first, &count, NULL)) {
		err = -errno;
		goto out;
	}
	ob->shard = (uint32_t)(sh - k->shards);
	ob->sblk = sh->used;
	ob->blk_lo = sh->base + sh->used;
	ob->nblk = nblk;
	ob->kind = EP_UW_MAP_CFI;
	sh->used += nblk;
	k->st.rows += t->n;
	k->st.objects_cfi++;
	err = 0;
out:
	if (err && err != -E2BIG) {
		k->st.errors++;
		log_warn("unwind tables: cannot load %u rows into the kernel: %s", t->n,
			 strerror(-err));
	}
	uw_table_free(&ob->pending);
	free(blocks);
	free(keys);
	free(gkeys);
	free(first);
	return err;
}

/* Places the tables built by one scan: one new shard for all of them
 * when the last one is too full. */
static void place_pending(struct ktables *k)
{
	uint64_t need = 0;

	for (size_t i = 0; i < k->nobjs; i++)
		need += blocks_of(&k->objs[i].pending);
	if (!need)
		return;
	need += need / 4;
	if (need > EP_UW_MAX_BLOCKS)
		need = EP_UW_MAX_BLOCKS;
	for (size_t i = 0; i < k->nobjs; i++)
		if (k->objs[i].pending.n)
			place_rows(k, &k->objs[i], (uint32_t)need);
}

/* The table of the object open at fd (or of elf for the vdso). */
static void load_object(struct ktables *k, struct kt_obj *ob, int fd, Elf *mem_elf,
			const char *what)
{
	struct uw_table t = { 0 };
	uint64_t t0 = mono_ns();
	bool cached = false;
	Elf *elf = mem_elf;
	int err;

	ob->kind = EP_UW_MAP_FP;
	if (!elf) {
		/* Read, not mapped: a file its owner (the profiled program)
		 * truncates meanwhile is a short read, not a SIGBUS. */
		elf = elf_begin(fd, ELF_C_READ, NULL);
		if (!elf) {
			k->st.errors++;
			return;
		}
	}
	err = read_segs(elf, ob);
	if (!err)
		err = mem_elf || !k->cache ? uw_table_build(elf, &t)
					   : uw_cache_get(k->cache, fd, &t, &cached);
	if (!mem_elf)
		elf_end(elf);
	if (err)
		k->st.errors++;
	if (cached)
		k->st.from_cache++;
	k->st.build_ns += mono_ns() - t0;
	log_debug("unwind table of %s: %u rows, %s, %.1f ms", what, t.n,
		  cached ? "from cache" : "compiled", (double)(mono_ns() - t0) / 1e6);
	if (!err && t.n)
		ob->pending = t; /* placed by place_pending */
	else
		uw_table_free(&t);
}

static struct kt_obj *find_obj(struct ktables *k, uint64_t dev, uint64_t ino, bool vdso)
{
	for (size_t i = 0; i < k->nobjs; i++)
		if (k->objs[i].vdso == vdso &&
		    (vdso || (k->objs[i].dev == dev && k->objs[i].ino == ino)))
			return &k->objs[i];
	return NULL;
}

static struct kt_obj *new_obj(struct ktables *k)
{
	struct kt_obj *ob;

	if (ep_vec_grow((void **)&k->objs, &k->cap_objs, k->nobjs + 1, sizeof(*k->objs)))
		return NULL;
	ob = &k->objs[k->nobjs++];
	memset(ob, 0, sizeof(*ob));
	k->st.objects++;
	return ob;
}

static struct kt_obj *file_obj(struct ktables *k, uint32_t pid, const struct proc_map *m)
{
	uint64_t dev = ((uint64_t)m->dev_major << 32) | m->dev_minor;
	struct kt_obj *ob = find_obj(k, dev, m->inode, false);
	const char *root = k->o.proc_root ? k->o.proc_root : "/proc";
	struct target_map tm = { .path = m->path,
				 .start = m->start,
				 .end = m->end,
				 .ino = m->inode,
				 .deleted = m->deleted };
	struct target_ref who;
	int fd;

	if (ob)
		return ob;
	ob = new_obj(k);
	if (!ob)
		return NULL;
	ob->dev = dev;
	ob->ino = m->inode;
	ob->kind = EP_UW_MAP_FP;
	/* map_files names the very file mapped, even deleted or in another
	 * mount namespace; the path through the process's root otherwise
	 * (no symlink, the mapped inode). Read as the process could read it
	 * (proc/target_open.h): no FIFO, device or file it may not read. */
	target_ref_init(&who, root, pid);
	fd = target_open_map(&who, &tm, 0, TARGET_ELF_MAX_BYTES, NULL);
	if (fd < 0) {
		log_debug("unwind table of %s: %s", m->path, target_open_strerror(fd));
		k->st.errors++;
		return ob;
	}
	load_object(k, ob, fd, NULL, m->path);
	close(fd);
	return ob;
}

/* The vdso is the same image in every process of this kernel: ours. */
static struct kt_obj *vdso_obj(struct ktables *k)
{
	struct kt_obj *ob = find_obj(k, 0, 0, true);
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	struct proc_maps self = { 0 };
	size_t len = 0, size = 0;
	char *buf = NULL;
	Elf *elf;

	if (ob)
		return ob;
	ob = new_obj(k);
	if (!ob)
		return NULL;
	ob->vdso = true;
	ob->kind = EP_UW_MAP_FP;
	if (!base || proc_maps_read_file("/proc/self/maps", KT_MAPS_MAX_BYTES, &buf, &len) ||
	    proc_maps_parse_buf(buf, len, KT_MAPS_MAX_LINES, &self)) {
		free(buf);
		return ob;
	}
	for (size_t i = 0; i < self.n; i++)
		if (self.maps[i].kind == PROC_MAP_VDSO && self.maps[i].start == base)
			size = self.maps[i].end - self.maps[i].start;
	proc_maps_free(&self);
	free(buf);
	if (!size)
		return ob;
	elf = elf_memory((char *)base, size);
	if (elf) {
		load_object(k, ob, -1, elf, "[vdso]");
		elf_end(elf);
	}
	return ob;
}

static bool map_bias(const struct kt_obj *ob, const struct proc_map *m, uint64_t *bias)
{
	for (int i = 0; i < ob->nseg; i++) {
		const struct kt_seg *s = &ob->seg[i];
		uint64_t pg = s->off & ~0xfffull;

		if (m->pgoff >= pg && m->pgoff < s->off + s->filesz) {
			*bias = m->start + s->off - m->pgoff - s->vaddr;
			return true;
		}
	}
	return false;
}

static struct kt_proc *find_proc(struct ktables *k, uint32_t pid, bool add)
{
	for (size_t i = 0; i < k->nprocs; i++)
		if (k->procs[i].pid == pid)
			return &k->procs[i];
	if (!add ||
	    ep_vec_grow((void **)&k->procs, &k->cap_procs, k->nprocs + 1, sizeof(*k->procs)))
		return NULL;
	k->procs[k->nprocs] = (struct kt_proc){ .pid = pid };
	k->st.map_bytes += sizeof(struct ep_uw_proc);
	return &k->procs[k->nprocs++];
}

int ktables_scan(struct ktables *k, uint32_t pid, uint64_t now_ns)
{
	const char *root = k->o.proc_root ? k->o.proc_root : "/proc";
	struct ep_uw_proc *pv = k->pv;
	struct proc_maps maps = { 0 };
	struct kt_proc *kp;
	char path[64], *buf = NULL;
	ssize_t *oi;
	size_t len = 0;
	int err;

	uint64_t t0 = mono_ns();

	snprintf(path, sizeof(path), "%s/%u/maps", root, pid);
	err = proc_maps_read_file(path, KT_MAPS_MAX_BYTES, &buf, &len);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	err = proc_maps_parse_buf(buf, len, KT_MAPS_MAX_LINES, &maps);
	free(buf);
	if (err)
		return err;
	k->st.scans++;
	/* Objects first (building the tables of new ones), then one place in
	 * the kernel for all new tables, then the mapping list. */
	oi = malloc((maps.n ? maps.n : 1) * sizeof(*oi));
	if (!oi) {
		proc_maps_free(&maps);
		return -ENOMEM;
	}
	for (size_t i = 0; i < maps.n; i++) {
		const struct proc_map *m = &maps.maps[i];
		struct kt_obj *ob = NULL;

		oi[i] = -1;
		if (m->perms[2] != 'x')
			continue;
		if (m->kind == PROC_MAP_FILE)
			ob = file_obj(k, pid, m);
		else if (m->kind == PROC_MAP_VDSO)
			ob = vdso_obj(k);
		if (ob)
			oi[i] = ob - k->objs;
	}
	place_pending(k);
	memset(pv, 0, sizeof(*pv));
	for (size_t i = 0; i < maps.n; i++) {
		const struct proc_map *m = &maps.maps[i];
		const struct kt_obj *ob = oi[i] >= 0 ? &k->objs[oi[i]] : NULL;
		struct ep_uw_map *e;
		uint64_t bias;

		if (m->perms[2] != 'x')
			continue;
		if (m->kind == PROC_MAP_OTHER)
			continue; /* [vsyscall], [uprobes]: the walker knows the trampoline */
		if (k->o.fault_unmapped && m->path && strstr(m->path, k->o.fault_unmapped))
			continue;
		if (pv->n >= EP_UW_MAX_MAPS) {
			k->st.maps_over++;
			continue;
		}
		e = &pv->m[pv->n++];
		*e = (struct ep_uw_map){ .start = m->start, .end = m->end, .kind = EP_UW_MAP_FP };
		if (m->kind == PROC_MAP_ANON)
			e->kind = EP_UW_MAP_JIT;
		if (ob && ob->kind == EP_UW_MAP_CFI && map_bias(ob, m, &bias)) {
			e->bias = bias;
			e->kind = EP_UW_MAP_CFI;
			e->shard = ob->shard;
			e->blk_lo = ob->blk_lo;
			e->nblk = ob->nblk;
			e->sblk = ob->sblk;
		}
	}
	free(oi);
	proc_maps_free(&maps);
	kp = find_proc(k, pid, true);
	if (!kp)
		return -ENOMEM;
	kp->last_scan_ns = now_ns;
	err = bpf_map_update_elem(k->o.procs_fd, &pid, pv, BPF_ANY) ? -errno : 0;
	k->st.scan_ns += mono_ns() - t0;
	return err;
}

int ktables_fork(struct ktables *k, uint32_t parent, uint32_t pid, uint64_t now_ns)
{
	struct kt_proc *kp;

	if (!parent || !find_proc(k, parent, false) ||
	    bpf_map_lookup_elem(k->o.procs_fd, &parent, k->pv))
		return ktables_scan(k, pid, now_ns);
	kp = find_proc(k, pid, true);
	if (!kp)
		return -ENOMEM;
	kp->last_scan_ns = now_ns;
	k->st.forks_copied++;
	return bpf_map_update_elem(k->o.procs_fd, &pid, k->pv, BPF_ANY) ? -errno : 0;
}

int ktables_miss(struct ktables *k, uint32_t pid, uint64_t now_ns)
{
	struct kt_proc *kp = find_proc(k, pid, false);

	if (kp && now_ns - kp->last_scan_ns < KT_RESCAN_MIN_NS)
		return 0;
	k->st.rescans++;
	ktables_scan(k, pid, now_ns);
	return 1;
}

void ktables_forget(struct ktables *k, uint32_t pid)
{
	for (size_t i = 0; i < k->nprocs; i++) {
		if (k->procs[i].pid != pid)
			continue;
		/* map_bytes keeps counting it: the report gives the most
		 * the run held, give or take processes that came and went. */
		k->procs[i] = k->procs[--k->nprocs];
		break;
	}
	bpf_map_delete_elem(k->o.procs_fd, &pid);
}

int ktables_cache_dirfd(const struct ktables *k)
{
	return k ? uw_cache_dirfd(k->cache) : -1;
}

void ktables_get_stats(const struct ktables *k, struct ktables_stats *st)
{
	*st = k->st;
}
