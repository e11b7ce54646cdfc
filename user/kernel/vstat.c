// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "vstat.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Enough for the statistics lines and the reason of a refusal; a longer
 * log (a refusal that prints more) keeps its start, and libbpf says so. */
#define VSTAT_LOG_SIZE 8192
/* BPF_LOG_STATS: the figures only, no instruction trace. */
#define VSTAT_LOG_LEVEL 4

void vstat_prepare(struct vstat *vs, struct bpf_object *obj)
{
	struct bpf_program *p;
	size_t n = 0;

	if (!vs)
		return;
	bpf_object__for_each_program(p, obj) n++;
	vs->bufs = calloc(n ? n : 1, sizeof(*vs->bufs));
	if (!vs->bufs)
		return;
	vs->nbufs = n;
	n = 0;
	bpf_object__for_each_program(p, obj)
	{
		char *buf;

		if (!bpf_program__autoload(p)) {
			n++;
			continue;
		}
		buf = calloc(1, VSTAT_LOG_SIZE);
		if (!buf)
			return; /* the rest loads without figures */
		vs->bufs[n++] = buf;
		bpf_program__set_log_buf(p, buf, VSTAT_LOG_SIZE);
		bpf_program__set_log_level(p, VSTAT_LOG_LEVEL);
	}
}

static void copy_reason(struct vstat_prog *p, const char *line, size_t len)
{
	if (len >= sizeof(p->reason))
		len = sizeof(p->reason) - 1;
	memcpy(p->reason, line, len);
	p->reason[len] = 0;
}

int vstat_parse_log(const char *log, struct vstat_prog *p)
{
	const char *line = log, *next;
	bool any = false;

	p->insns = p->insns_limit = p->total_states = p->peak_states = p->verify_us = -1;
	p->nsub = 0;
	p->have_depth = false;
	p->reason[0] = 0;
	for (; line && *line; line = next) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		long long a, b, c, d, e;
		char tmp[512];

		next = nl ? nl + 1 : NULL;
		if (!len)
			continue;
		if (len >= sizeof(tmp))
			len = sizeof(tmp) - 1;
		memcpy(tmp, line, len);
		tmp[len] = 0;
		if (sscanf(tmp,
			   "processed %lld insns (limit %lld) max_states_per_insn %lld total_states %lld peak_states %lld",
			   &a, &b, &c, &d, &e) >= 2) {
			p->insns = a;
			p->insns_limit = b;
			if (sscanf(tmp,
				   "processed %lld insns (limit %lld) max_states_per_insn %lld total_states %lld peak_states %lld",
				   &a, &b, &c, &d, &e) == 5) {
				p->total_states = d;
				p->peak_states = e;
			}
			any = true;
		} else if (sscanf(tmp, "verification time %lld usec", &a) == 1) {
			p->verify_us = a;
			any = true;
		} else if (!strncmp(tmp, "stack depth ", 12)) {
			const char *s = tmp + 12;
			uint32_t k = 0;
			bool ok = true;

			while (*s && ok) {
				char *end;
				unsigned long v;

				if (*s < '0' || *s > '9') {
					ok = false;
					break;
				}
				v = strtoul(s, &end, 10);
				if (v > 65535 || k >= VSTAT_MAX_SUBPROGS) {
					ok = false;
					break;
				}
				p->depth[k++] = (uint16_t)v;
				s = end;
				if (*s == '+')
					s++;
				else if (*s)
					ok = false;
			}
			if (ok && k) {
				p->nsub = k;
				p->have_depth = true;
				any = true;
			}
		} else if (strncmp(tmp, "func#", 5) && strncmp(tmp, "Func#", 5)) {
			/* The verifier's reason is its last line before the
			 * statistics: the lines before it are the path there
			 * (and "Func#N is global" notes, passed over). */
			copy_reason(p, tmp, len);
		}
	}
	return any ? 0 : -EINVAL;
}

static int round_up(int v, int to)
{
	return (v + to - 1) / to * to;
}

static int sub_of(const uint32_t *starts, size_t nsub, size_t insn)
{
	int k = -1;

	for (size_t i = 0; i < nsub && starts[i] <= insn; i++)
		k = (int)i;
	return k;
}

static int sub_at(const uint32_t *starts, size_t nsub, long insn)
{
	for (size_t i = 0; i < nsub; i++)
		if ((long)starts[i] == insn)
			return (int)i;
	return -1;
}

/* BPF allows 8 frames; a deeper walk means a cycle in bad input. */
#define VSTAT_MAX_FRAMES 8

struct chain_graph {
	/* calls[a][b]: 1 a calls b directly, 2 a hands b to a helper as a
	 * callback, 3 both. */
	uint8_t calls[VSTAT_MAX_SUBPROGS][VSTAT_MAX_SUBPROGS];
	const uint16_t *depth;
	size_t nsub;
};

static int deepest(const struct chain_graph *g, size_t s, bool jit, int level)
{
	int own, best = 0;

	if (jit)
		own = round_up(g->depth[s], 16);
	else
		own = round_up(g->depth[s] ? g->depth[s] : 1, 32);
	if (level >= VSTAT_MAX_FRAMES)
		return own;
	for (size_t t = 0; t < g->nsub; t++) {
		int d;

		if (!g->calls[s][t])
			continue;
		d = deepest(g, t, jit, level + 1);
		if (d > best)
			best = d;
	}
	return own + best;
}

int vstat_stack_chains(const struct bpf_insn *insns, size_t n, const uint32_t *starts,
		       const uint16_t *depth, size_t nsub, int *stack_jit, int *stack_interp)
{
	struct chain_graph *g;

	*stack_jit = *stack_interp = -1;
	if (!nsub || nsub > VSTAT_MAX_SUBPROGS || starts[0] != 0)
		return -EINVAL;
	for (size_t i = 1; i < nsub; i++)
		if (starts[i] <= starts[i - 1] || starts[i] >= n)
			return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->depth = depth;
	g->nsub = nsub;
	for (size_t i = 0; i < n; i++) {
		const struct bpf_insn *in = &insns[i];
		int from = sub_of(starts, nsub, i), to = -1;

		if (in->code == (BPF_JMP | BPF_CALL) && in->src_reg == BPF_PSEUDO_CALL) {
			/* Loaded and JIT'ed, the kernel shows the callee's index
			 * in one field and its offset in the other (which one
			 * has changed between releases): the pair must agree.
			 * Not JIT'ed, the offset in imm. */
			long rel_imm = (long)i + in->imm + 1, rel_off = (long)i + in->off + 1;

			if (in->off >= 0 && (size_t)in->off < nsub &&
			    (long)starts[in->off] == rel_imm)
				to = in->off;
			else if (in->imm >= 0 && (size_t)in->imm < nsub &&
				 (long)starts[in->imm] == rel_off)
				to = in->imm;
			else
				to = sub_at(starts, nsub, rel_imm);
			if (to < 0)
				goto bad;
			g->calls[from][to] |= 1;
		} else if (in->code == (BPF_LD | BPF_IMM | BPF_DW)) {
			if (in->src_reg == BPF_PSEUDO_FUNC) {
				to = sub_at(starts, nsub, (long)i + in->imm + 1);
				if (to < 0)
					goto bad;
				g->calls[from][to] |= 2;
			}
			i++; /* the second half of the 16-byte load */
		}
	}
	*stack_jit = deepest(g, 0, true, 1);
	*stack_interp = deepest(g, 0, false, 1);
	free(g);
	return 0;
bad:
	free(g);
	return -EINVAL;
}

/* The translated instructions and subprogram starts of a loaded program. */
static void chains_of(int fd, struct vstat_prog *vp)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info), nins, nfi, rec;
	struct bpf_insn *insns = NULL;
	struct bpf_func_info *fi = NULL;
	uint32_t starts[VSTAT_MAX_SUBPROGS];

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return;
	nins = info.xlated_prog_len / sizeof(struct bpf_insn);
	nfi = info.nr_func_info;
	rec = info.func_info_rec_size;
	if (!nins || rec < sizeof(struct bpf_func_info) || nfi != vp->nsub ||
	    nfi > VSTAT_MAX_SUBPROGS)
		return;
	insns = calloc(nins, sizeof(*insns));
	fi = calloc(nfi, rec);
	if (!insns || !fi)
		goto out;
	memset(&info, 0, sizeof(info));
	info.xlated_prog_len = nins * sizeof(struct bpf_insn);
	info.xlated_prog_insns = (uint64_t)(uintptr_t)insns;
	info.nr_func_info = nfi;
	info.func_info_rec_size = rec;
	info.func_info = (uint64_t)(uintptr_t)fi;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.nr_func_info != nfi)
		goto out;
	for (uint32_t k = 0; k < nfi; k++)
		starts[k] = ((const struct bpf_func_info *)((const char *)fi + (size_t)k * rec))
				    ->insn_off;
	vstat_stack_chains(insns, nins, starts, vp->depth, nfi, &vp->stack_jit, &vp->stack_interp);
out:
	free(insns);
	free(fi);
}

void vstat_collect(struct vstat *vs, struct bpf_object *obj, const char *object, int load_err)
{
	struct bpf_program *p;
	bool found = false;
	size_t k = 0;

	if (!vs || !vs->bufs)
		return;
	/* vstat_refused names the refusal of this load: one of an earlier
	 * load of the object (a program since left out) is history. */
	for (size_t i = 0; i < vs->n; i++)
		if (!strcmp(vs->v[i].object, object))
			vs->v[i].refused = false;
	bpf_object__for_each_program(p, obj)
	{
		char *buf = k < vs->nbufs ? vs->bufs[k] : NULL;
		struct vstat_prog *vp;
		int fd;

		k++;
		if (!buf)
			continue;
		bpf_program__set_log_buf(p, NULL, 0);
		vp = NULL;
		for (size_t i = 0; i < vs->n; i++)
			if (!strcmp(vs->v[i].name, bpf_program__name(p)) &&
			    !strcmp(vs->v[i].object, object))
				vp = &vs->v[i];
		if (!vp && vs->n == vs->cap) {
			size_t cap = vs->cap ? vs->cap * 2 : 16;
			void *nv = realloc(vs->v, cap * sizeof(*vs->v));

			if (!nv)
				continue;
			vs->v = nv;
			vs->cap = cap;
		}
		if (!vp)
			vp = &vs->v[vs->n++];
		memset(vp, 0, sizeof(*vp));
		snprintf(vp->name, sizeof(vp->name), "%s", bpf_program__name(p));
		snprintf(vp->object, sizeof(vp->object), "%s", object);
		vstat_parse_log(buf, vp);
		vp->stack_jit = vp->stack_interp = -1;
		fd = bpf_program__fd(p);
		vp->loaded = !load_err && fd >= 0;
		if (vp->loaded) {
			vp->reason[0] = 0;
			if (vp->have_depth)
				chains_of(fd, vp);
		} else {
			vp->err = load_err ? load_err : -ENOENT;
			/* libbpf loads an object's programs in turn and stops at
			 * the first refusal: the one with a reason, or the first
			 * not verified at all (refused before the verifier ran:
			 * an unknown program type). The ones before it passed,
			 * the ones after it were not tried. */
			if (!found && (vp->reason[0] || vp->insns < 0)) {
				found = vp->refused = true;
				if (!vp->reason[0])
					snprintf(vp->reason, sizeof(vp->reason),
						 "refused before verification: %s",
						 strerror(vp->err < 0 ? -vp->err : vp->err));
			} else if (!buf[0])
				snprintf(vp->reason, sizeof(vp->reason),
					 "not tried: another program of the object was refused");
			else if (!vp->reason[0])
				snprintf(vp->reason, sizeof(vp->reason),
					 "verified, unloaded with its object");
		}
	}
	for (size_t i = 0; i < vs->nbufs; i++)
		free(vs->bufs[i]);
	free(vs->bufs);
	vs->bufs = NULL;
	vs->nbufs = 0;
}

void vstat_free(struct vstat *vs)
{
	if (!vs)
		return;
	for (size_t i = 0; i < vs->nbufs; i++)
		free(vs->bufs[i]);
	free(vs->bufs);
	free(vs->v);
	memset(vs, 0, sizeof(*vs));
}

const struct vstat_prog *vstat_refused(const struct vstat *vs, const char *object)
{
	for (size_t i = 0; vs && i < vs->n; i++)
		if (vs->v[i].refused && !strcmp(vs->v[i].object, object))
			return &vs->v[i];
	return NULL;
}

void vstat_skip(struct vstat *vs, const char *object, const char *name, const char *why)
{
	for (size_t i = 0; vs && i < vs->n; i++) {
		struct vstat_prog *p = &vs->v[i];

		if (strcmp(p->object, object) || strcmp(p->name, name))
			continue;
		p->skipped = true;
		p->loaded = p->refused = false;
		snprintf(p->reason, sizeof(p->reason), "%s", why);
	}
}

void vstat_add_degraded(struct vstat *vs, const char *program, const char *reason, const char *lost)
{
	struct vstat_degraded *d;

	if (!vs || vs->ndeg >= VSTAT_MAX_DEGRADED)
		return;
	d = &vs->deg[vs->ndeg++];
	snprintf(d->program, sizeof(d->program), "%s", program);
	snprintf(d->reason, sizeof(d->reason), "%s", reason);
	snprintf(d->lost, sizeof(d->lost), "%s", lost);
}

cJSON *vstat_degraded_json(const struct vstat *vs)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; arr && vs && i < vs->ndeg; i++) {
		cJSON *o = cJSON_CreateObject();

		if (!o)
			break;
		cJSON_AddItemToArray(arr, o);
		cJSON_AddStringToObject(o, "program", vs->deg[i].program);
		cJSON_AddStringToObject(o, "reason", vs->deg[i].reason);
		cJSON_AddStringToObject(o, "lost", vs->deg[i].lost);
	}
	return arr;
}

int vstat_stack(const struct vstat_prog *p)
{
	return p->stack_jit;
}

bool vstat_within_margins(const struct vstat_prog *p)
{
	int64_t lim = p->insns_limit > 0 ? p->insns_limit : VSTAT_INSNS_LIMIT;

	if (p->skipped)
		return true;
	if (!p->loaded)
		return false;
	if (p->stack_jit > VSTAT_STACK_LIMIT - VSTAT_STACK_MARGIN ||
	    p->stack_interp > VSTAT_STACK_LIMIT)
		return false;
	if (p->insns >= 0 && p->insns > lim / VSTAT_INSNS_SHARE_MAX)
		return false;
	return true;
}

cJSON *vstat_json(const struct vstat *vs)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; arr && vs && i < vs->n; i++) {
		const struct vstat_prog *p = &vs->v[i];
		cJSON *o = cJSON_CreateObject(), *d;

		if (!o)
			break;
		cJSON_AddItemToArray(arr, o);
		cJSON_AddStringToObject(o, "name", p->name);
		cJSON_AddStringToObject(o, "object", p->object);
		cJSON_AddBoolToObject(o, "loaded", p->loaded);
		if (p->skipped) {
			cJSON_AddBoolToObject(o, "skipped", true);
			cJSON_AddStringToObject(o, "reason", p->reason);
		} else if (!p->loaded) {
			cJSON_AddStringToObject(o, "error",
						strerror(p->err < 0 ? -p->err : p->err));
			cJSON_AddStringToObject(o, "reason", p->reason);
		}
		if (p->insns >= 0) {
			cJSON_AddNumberToObject(o, "insns_processed", (double)p->insns);
			cJSON_AddNumberToObject(o, "insns_limit", (double)p->insns_limit);
			cJSON_AddNumberToObject(
				o, "insns_max",
				(double)((p->insns_limit > 0 ? p->insns_limit : VSTAT_INSNS_LIMIT) /
					 VSTAT_INSNS_SHARE_MAX));
		}
		if (p->total_states >= 0)
			cJSON_AddNumberToObject(o, "states_total", (double)p->total_states);
		if (p->peak_states >= 0)
			cJSON_AddNumberToObject(o, "states_peak", (double)p->peak_states);
		if (p->verify_us >= 0)
			cJSON_AddNumberToObject(o, "verify_us", (double)p->verify_us);
		if (p->have_depth) {
			d = cJSON_AddArrayToObject(o, "stack_depths");
			for (uint32_t k = 0; d && k < p->nsub; k++)
				cJSON_AddItemToArray(d, cJSON_CreateNumber(p->depth[k]));
		}
		if (vstat_stack(p) >= 0) {
			cJSON_AddNumberToObject(o, "stack_combined", p->stack_jit);
			cJSON_AddNumberToObject(o, "stack_combined_no_jit", p->stack_interp);
		}
		cJSON_AddNumberToObject(o, "stack_limit", VSTAT_STACK_LIMIT);
		cJSON_AddNumberToObject(o, "stack_max", VSTAT_STACK_LIMIT - VSTAT_STACK_MARGIN);
		cJSON_AddBoolToObject(o, "within_margins", vstat_within_margins(p));
	}
	return arr;
}
