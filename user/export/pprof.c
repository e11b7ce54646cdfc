// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * profile.pb.gz / offcpu.pb.gz (see pprof.h). The message is built with
 * protobuf-c's generated structs and packed by the library; only the
 * mapping from our profile model to pprof's is written here.
 *
 * Model mapping: one Location per interned frame (a frame is (name,
 * module, kernel), the identity the profile already keeps); one Function
 * per native frame and one per Python function (its frames, one per line,
 * are Locations of it: pprof_py_frame); one Mapping per distinct module
 * file. Samples are aggregated per (thread,
 * stack, cycle): a thread's run of identical consecutive samples is placed
 * in the cycle of its first sample.
 */
#include "export/pprof.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "export/pprof_elf.h"
#include "export/profile.pb-c.h"
#include "util/interner.h"
#include "report/report.h"

typedef Perftools__Profiles__Profile PProfile;
typedef Perftools__Profiles__ValueType PValueType;
typedef Perftools__Profiles__Sample PSample;
typedef Perftools__Profiles__Label PLabel;
typedef Perftools__Profiles__Mapping PMapping;
typedef Perftools__Profiles__Location PLocation;
typedef Perftools__Profiles__Line PLine;
typedef Perftools__Profiles__Function PFunction;

/* ---- string table: index 0 is "", every string once (an interner) ---- */

/* Labels are strings, numbers included: Pyroscope and Parca turn string
 * labels into series labels and ignore numeric ones, and pprof drops a
 * numeric label whose value is 0 (cycle 0). */
static int64_t str_num(struct interner *t, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return interner_add(t, buf);
}

/* ---- samples ---- */

struct agg {
	uint32_t thread, stack;
	int64_t cycle; /* -1: none */
	uint64_t count;
};

static int cmp_agg(const void *a, const void *b)
{
	const struct agg *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	if (x->cycle != y->cycle)
		return x->cycle < y->cycle ? -1 : 1;
	return 0;
}

int64_t pprof_cycle_of(const struct pprof_cycle *c, size_t n, uint64_t ts_ns)
{
	size_t lo = 0, hi = n;

	/* Last cycle starting at or before ts. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c[mid].start_ns <= ts_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || ts_ns >= c[lo - 1].end_ns)
		return -1;
	return c[lo - 1].index;
}

/* Aggregated (thread, stack, cycle) counts, sorted. */
static int aggregate(const struct profile *p, const struct pprof_opts *o, struct agg **out,
		     size_t *nout)
{
	size_t n = 0, m = 0;
	struct agg *a;

	for (size_t t = 0; t < p->nthreads; t++)
		n += p->threads[t].nruns;
	a = malloc((n ? n : 1) * sizeof(*a));
	if (!a)
		return -ENOMEM;
	for (size_t t = 0; t < p->nthreads; t++) {
		const struct prof_thread *th = &p->threads[t];

		for (size_t r = 0; r < th->nruns; r++)
			a[m++] = (struct agg){
				.thread = (uint32_t)t,
				.stack = th->runs[r].stack,
				.cycle = pprof_cycle_of(o->cycles, o->ncycles,
							th->runs[r].first_ts_ns),
				.count = th->runs[r].count,
			};
	}
	if (m)
		qsort(a, m, sizeof(*a), cmp_agg);
	n = 0;
	for (size_t i = 0; i < m; i++) {
		if (n && !cmp_agg(&a[n - 1], &a[i]))
			a[n - 1].count += a[i].count;
		else
			a[n++] = a[i];
	}
	*out = a;
	*nout = n;
	return 0;
}

/* ---- the message ---- */

struct build {
	const struct profile *p;
	const struct pprof_opts *o;
	struct interner st;
	PProfile prof;
	PValueType vt[2], period_type;
	PValueType *vtp[2];
	PMapping *maps;
	PMapping **mapp;
	uint32_t *frame_map; /* per frame: mapping id, 0 = none */
	PFunction *funcs;
	PFunction **funcp;
	PLocation *locs;
	PLocation **locp;
	PLine *lines;
	PLine **linep;
	uint32_t *func_of; /* per frame: index of its Function in funcs */
	bool *is_py;	   /* per frame: a Python frame (pprof_py_frame) */
	PSample *samples;
	PSample **samplep;
	PLabel *labels;
	PLabel **labelp;
	uint64_t *locids;
	int64_t *values;
	int64_t comment;
};

#define S(b, str)                                           \
	({                                                  \
		int64_t _i = interner_add(&(b)->st, (str)); \
		if (_i < 0)                                 \
			return -ENOMEM;                     \
		_i;                                         \
	})

static bool is_file_module(const char *m)
{
	return m && m[0] == '/';
}

static int build_mappings(struct build *b)
{
	const struct profile *p = b->p;
	size_t nmaps = 0;
	char hex[2 * PPROF_BUILD_ID_MAX + 1];

	b->frame_map = calloc(p->nframes ? p->nframes : 1, sizeof(*b->frame_map));
	b->maps = calloc(p->nframes ? p->nframes : 1, sizeof(*b->maps));
	b->mapp = calloc(p->nframes ? p->nframes : 1, sizeof(*b->mapp));
	if (!b->frame_map || !b->maps || !b->mapp)
		return -ENOMEM;
	/* Few modules, many frames: a linear scan of the mappings so far per
	 * frame is cheap, and keeps mapping ids in order of first use. */
	for (size_t f = 0; f < p->nframes; f++) {
		const char *mod = p->frames[f].module;
		int64_t fi;
		size_t k;

		if (!mod)
			continue;
		fi = S(b, mod);
		for (k = 0; k < nmaps; k++)
			if (b->maps[k].filename == fi)
				break;
		if (k == nmaps) {
			PMapping *m = &b->maps[nmaps++];

			perftools__profiles__mapping__init(m);
			m->id = k + 1;
			m->filename = fi;
			m->has_functions = true;
			hex[0] = '\0';
			if (b->o->read_elf) {
				if (!strcmp(mod, "[kernel.kallsyms]"))
					pprof_kernel_build_id(hex, sizeof(hex));
				else if (is_file_module(mod))
					pprof_elf_build_id_cached(b->o->elf_cache, mod, hex,
								  sizeof(hex));
			}
			if (hex[0])
				m->build_id = S(b, hex);
			b->mapp[k] = m;
		}
		b->frame_map[f] = (uint32_t)(k + 1);
	}
	b->prof.n_mapping = nmaps;
	b->prof.mapping = b->mapp;
	return 0;
}

/* A Python frame, as user/python/pyframes.c names it: "QUAL (BASE:LINE)"
 * or "QUAL (BASE)", BASE the file name of its module (the source file).
 * The qualified name's length in *qlen and the line (0: unknown) in
 * *line. Native frames never end so: their module is an ELF file, named
 * in their name only as "[unknown] libfoo.so+0x1a2b". */
bool pprof_py_frame(const char *name, const char *module, bool kernel, size_t *qlen, int64_t *line)
{
	const char *base, *open, *p;
	size_t n, bn;

	if (kernel || !name || !module || !module[0])
		return false;
	base = strrchr(module, '/');
	base = base ? base + 1 : module;
	bn = strlen(base);
	n = strlen(name);
	if (!bn || n < bn + 4 || name[n - 1] != ')')
		return false;
	/* Back from the ')' over the digits of ":LINE", if any. */
	p = name + n - 1;
	*line = 0;
	if (p > name && p[-1] >= '0' && p[-1] <= '9') {
		const char *d = p;
		int64_t v = 0, mul = 1;

		while (d > name && d[-1] >= '0' && d[-1] <= '9' && p - d < 10) {
			d--;
			v += (d[0] - '0') * mul;
			mul *= 10;
		}
		if (d == name || d[-1] != ':')
			return false;
		*line = v;
		p = d - 1;
	}
	/* p: just after BASE; then " (" before it, and a name before that. */
	if ((size_t)(p - name) < bn + 3)
		return false;
	open = p - bn;
	if (memcmp(open, base, bn) || open[-1] != '(' || open[-2] != ' ')
		return false;
	*qlen = (size_t)(open - 2 - name);
	return *qlen > 0;
}

/* Source file and first line of each native function, from the modules'
 * DWARF. Frames keep no address, so the line of the sampled instruction
 * is not known: the Location's line is the function's own first line,
 * the best file:line there is for `pprof -lines` and source views. */
static int fill_sources(struct build *b)
{
	const struct profile *p = b->p;
	struct pprof_src *src = calloc(p->nframes ? p->nframes : 1, sizeof(*src));
	int err = -ENOMEM;

	if (!src)
		return -ENOMEM;
	pprof_elf_sources(p, src, b->o->elf_cache);
	for (size_t f = 0; f < p->nframes; f++) {
		uint32_t mid = b->frame_map[f];
		PFunction *fn = &b->funcs[b->func_of[f]];
		int64_t fi;

		if (!src[f].file || b->is_py[f])
			continue;
		fi = interner_add(&b->st, src[f].file);
		if (fi < 0)
			goto out;
		fn->filename = fi;
		fn->start_line = src[f].line;
		b->lines[f].line = src[f].line;
		if (mid)
			b->maps[mid - 1].has_filenames = true;
	}
	err = 0;
out:
	for (size_t f = 0; f < p->nframes; f++)
		free(src[f].file);
	free(src);
	return err;
}

/* One Location per interned frame; one Function per native frame, and
 * per Python function (qualified name and file): the frames of its lines
 * are Locations of one Function, each with its line, as pprof means them
 * (`-lines`, source views; flame graphs merge the lines). */
static int build_functions(struct build *b)
{
	const struct profile *p = b->p;
	size_t n = p->nframes ? p->nframes : 1, nfn = 0;
	struct interner pyfn; /* "file\n" "qual" -> function index */
	uint32_t *pyfn_idx = NULL;
	char *key = NULL;
	size_t keycap = 0;
	int err = -ENOMEM;

	interner_init(&pyfn, 0);
	b->funcs = calloc(n, sizeof(*b->funcs));
	b->funcp = calloc(n, sizeof(*b->funcp));
	b->locs = calloc(n, sizeof(*b->locs));
	b->locp = calloc(n, sizeof(*b->locp));
	b->lines = calloc(n, sizeof(*b->lines));
	b->linep = calloc(n, sizeof(*b->linep));
	b->func_of = calloc(n, sizeof(*b->func_of));
	b->is_py = calloc(n, sizeof(*b->is_py));
	pyfn_idx = calloc(n, sizeof(*pyfn_idx));
	if (!b->funcs || !b->funcp || !b->locs || !b->locp || !b->lines || !b->linep ||
	    !b->func_of || !b->is_py || !pyfn_idx)
		goto out;
	for (size_t f = 0; f < p->nframes; f++) {
		const struct prof_frame *fr = &p->frames[f];
		const char *name = fr->name && fr->name[0] ? fr->name : "[unknown]";
		PLocation *l = &b->locs[f];
		PLine *ln = &b->lines[f];
		size_t qlen = 0;
		int64_t line = 0, k;
		PFunction *fn;

		perftools__profiles__line__init(ln);
		if (pprof_py_frame(fr->name, fr->module, fr->kernel, &qlen, &line)) {
			size_t ml = strlen(fr->module), need = ml + 1 + qlen + 1;

			if (need > keycap) {
				char *nk = realloc(key, need);

				if (!nk)
					goto out;
				key = nk;
				keycap = need;
			}
			memcpy(key, fr->module, ml);
			key[ml] = '\n';
			memcpy(key + ml + 1, name, qlen);
			key[ml + 1 + qlen] = '\0';
			k = interner_add(&pyfn, key);
			if (k < 0)
				goto out;
			b->is_py[f] = true;
			ln->line = line;
			if (pyfn_idx[k]) {
				b->func_of[f] = pyfn_idx[k] - 1;
				goto loc;
			}
			fn = &b->funcs[nfn];
			perftools__profiles__function__init(fn);
			fn->id = nfn + 1;
			fn->name = interner_add(&b->st, key + ml + 1);
			if (fn->name < 0)
				goto out;
			fn->filename = interner_add(&b->st, fr->module);
			if (fn->filename < 0)
				goto out;
			pyfn_idx[k] = (uint32_t)nfn + 1;
		} else {
			fn = &b->funcs[nfn];
			perftools__profiles__function__init(fn);
			fn->id = nfn + 1;
			fn->name = interner_add(&b->st, name);
			if (fn->name < 0)
				goto out;
		}
		fn->system_name = fn->name;
		b->funcp[nfn] = fn;
		b->func_of[f] = (uint32_t)nfn++;
loc:
		ln->function_id = b->func_of[f] + 1;
		b->linep[f] = ln;
		perftools__profiles__location__init(l);
		l->id = f + 1;
		l->mapping_id = b->frame_map[f];
		l->n_line = 1;
		l->line = &b->linep[f];
		b->locp[f] = l;
	}
	b->prof.n_function = nfn;
	b->prof.function = b->funcp;
	b->prof.n_location = p->nframes;
	b->prof.location = b->locp;
	err = b->o->read_elf ? fill_sources(b) : 0;
out:
	interner_free(&pyfn);
	free(pyfn_idx);
	free(key);
	return err;
}

#define NLABELS 4 /* pid, thread_id, thread_name, cycle */

static int build_samples(struct build *b)
{
	const struct profile *p = b->p;
	bool cpu = b->o->kind == PPROF_CPU;
	size_t nvals = cpu ? 2 : 1, nloc = 0, li = 0, vi = 0, lbi = 0, n;
	struct agg *a = NULL;
	int64_t k_pid, k_tid, k_tname, k_cycle;
	int err = aggregate(p, b->o, &a, &n);

	if (err)
		return err;
	k_pid = interner_add(&b->st, "pid");
	k_tid = interner_add(&b->st, "thread_id");
	k_tname = interner_add(&b->st, "thread_name");
	k_cycle = interner_add(&b->st, "cycle");
	if (k_pid < 0 || k_tid < 0 || k_tname < 0 || k_cycle < 0)
		goto nomem;
	for (size_t i = 0; i < n; i++)
		nloc += p->stacks[a[i].stack].depth;
	b->samples = calloc(n ? n : 1, sizeof(*b->samples));
	b->samplep = calloc(n ? n : 1, sizeof(*b->samplep));
	b->locids = calloc(nloc ? nloc : 1, sizeof(*b->locids));
	b->values = calloc((n ? n : 1) * nvals, sizeof(*b->values));
	b->labels = calloc((n ? n : 1) * NLABELS, sizeof(*b->labels));
	b->labelp = calloc((n ? n : 1) * NLABELS, sizeof(*b->labelp));
	if (!b->samples || !b->samplep || !b->locids || !b->values || !b->labels || !b->labelp)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		const struct prof_stack *st = &p->stacks[a[i].stack];
		const struct prof_thread *th = &p->threads[a[i].thread];
		char comm[PROF_COMM_LEN + 1];
		PSample *s = &b->samples[i];
		int64_t tname;

		perftools__profiles__sample__init(s);
		s->location_id = &b->locids[li];
		s->n_location_id = st->depth;
		for (uint32_t d = st->depth; d-- > 0;)
			b->locids[li++] = (uint64_t)st->frames[d] + 1;
		s->value = &b->values[vi];
		s->n_value = nvals;
		if (cpu) {
			b->values[vi++] = (int64_t)a[i].count;
			b->values[vi++] = (int64_t)(a[i].count * p->period_ns);
		} else {
			b->values[vi++] = (int64_t)(a[i].count * p->period_ns);
		}
		memcpy(comm, th->comm, PROF_COMM_LEN);
		comm[PROF_COMM_LEN] = '\0';
		tname = interner_add(&b->st, comm);
		if (tname < 0)
			goto nomem;
		s->label = &b->labelp[lbi];
		for (int k = 0; k < NLABELS; k++) {
			PLabel *l = &b->labels[lbi];

			if (k == 3 && a[i].cycle < 0)
				break;
			perftools__profiles__label__init(l);
			switch (k) {
			case 0:
				l->key = k_pid;
				l->str = str_num(&b->st, th->pid);
				break;
			case 1:
				l->key = k_tid;
				l->str = str_num(&b->st, th->tid);
				break;
			case 2:
				l->key = k_tname;
				l->str = tname;
				break;
			default:
				l->key = k_cycle;
				l->str = str_num(&b->st, (uint64_t)a[i].cycle);
			}
			if (l->str < 0)
				goto nomem;
			b->labelp[lbi++] = l;
			s->n_label++;
		}
		b->samplep[i] = s;
	}
	b->prof.n_sample = n;
	b->prof.sample = b->samplep;
	free(a);
	return 0;
nomem:
	free(a);
	return -ENOMEM;
}

static int build_header(struct build *b)
{
	bool cpu = b->o->kind == PPROF_CPU;
	int64_t ns = S(b, "nanoseconds");

	for (int i = 0; i < 2; i++) {
		perftools__profiles__value_type__init(&b->vt[i]);
		b->vtp[i] = &b->vt[i];
	}
	perftools__profiles__value_type__init(&b->period_type);
	if (cpu) {
		b->vt[0].type = S(b, "samples");
		b->vt[0].unit = S(b, "count");
		b->vt[1].type = S(b, "cpu");
		b->vt[1].unit = ns;
		b->prof.n_sample_type = 2;
		b->period_type.type = b->vt[1].type;
		b->prof.default_sample_type = b->vt[1].type;
	} else if (b->o->kind == PPROF_OFFCPU) {
		b->vt[0].type = S(b, "off_cpu");
		b->vt[0].unit = ns;
		b->prof.n_sample_type = 1;
		b->period_type.type = b->vt[0].type;
		b->prof.default_sample_type = b->vt[0].type;
	} else {
		/* pprof's heap profile names (go tool pprof -sample_index). */
		b->vt[0].type =
			S(b, b->o->kind == PPROF_ALLOC_SPACE ? "alloc_space" : "inuse_space");
		b->vt[0].unit = S(b, "bytes");
		b->prof.n_sample_type = 1;
		b->period_type.type = b->vt[0].type;
		b->prof.default_sample_type = b->vt[0].type;
		ns = b->vt[0].unit;
	}
	b->period_type.unit = ns;
	b->prof.sample_type = b->vtp;
	b->prof.period_type = &b->period_type;
	/* CPU: one sample stands for period_ns of CPU time (1e9 / -F).
	 * Off-CPU: values are measured durations, in units of period_ns. */
	b->prof.period = (int64_t)b->p->period_ns;
	b->prof.time_nanos = b->o->time_nanos;
	b->prof.duration_nanos = b->o->duration_nanos;
	b->comment = S(b, "ebpf-prof " EBPF_PROF_VERSION);
	b->prof.comment = &b->comment;
	b->prof.n_comment = 1;
	return 0;
}

static void build_free(struct build *b)
{
	interner_free(&b->st);
	free(b->maps);
	free(b->mapp);
	free(b->frame_map);
	free(b->funcs);
	free(b->funcp);
	free(b->locs);
	free(b->locp);
	free(b->lines);
	free(b->linep);
	free(b->func_of);
	free(b->is_py);
	free(b->samples);
	free(b->samplep);
	free(b->labels);
	free(b->labelp);
	free(b->locids);
	free(b->values);
}

int pprof_encode(const struct profile *p, const struct pprof_opts *o, uint8_t **out, size_t *len)
{
	struct build b = { .p = p, .o = o };
	int err;

	*out = NULL;
	*len = 0;
	interner_init(&b.st, 0);
	perftools__profiles__profile__init(&b.prof);
	if (interner_add(&b.st, "") != 0) {
		err = -ENOMEM;
		goto out;
	}
	err = build_header(&b);
	if (!err)
		err = build_mappings(&b);
	if (!err)
		err = build_functions(&b);
	if (!err)
		err = build_samples(&b);
	if (err)
		goto out;
	b.prof.n_string_table = b.st.n;
	b.prof.string_table = b.st.s;
	*len = perftools__profiles__profile__get_packed_size(&b.prof);
	*out = malloc(*len ? *len : 1);
	if (!*out) {
		err = -ENOMEM;
		goto out;
	}
	perftools__profiles__profile__pack(&b.prof, *out);
out:
	build_free(&b);
	return err;
}

int pprof_write_gz(FILE *f, const uint8_t *buf, size_t len)
{
	unsigned char chunk[16384];
	z_stream z = { 0 };
	int zr;

	/* windowBits 15 + 16: a gzip header and trailer, not a zlib one. */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)buf;
	z.avail_in = (uInt)len;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR || fwrite(chunk, 1, sizeof(chunk) - z.avail_out, f) !=
						    sizeof(chunk) - z.avail_out) {
			deflateEnd(&z);
			return -EIO;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return ferror(f) ? -EIO : 0;
}

int export_pprof(const struct profile *p, const struct pprof_opts *o, FILE *f)
{
	uint8_t *buf;
	size_t len;
	int err = pprof_encode(p, o, &buf, &len);

	if (err)
		return err;
	err = pprof_write_gz(f, buf, len);
	free(buf);
	return err;
}
