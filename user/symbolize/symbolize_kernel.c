// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernel addresses: kallsyms read from this boot's cache, the iterator or
 * whole (optionally on its own thread), BPF functions named from program
 * info, and the kernel address cache lookups. Apart from symbolize.c
 * because it shares only the string table and the cache code with the
 * per-pid user-space path.
 */
#include "symbolize/symbolize_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/bpf_ksyms.h"
#include "symbolize/kallsyms.h"
#include "symbolize/ksym_cache.h"
#include "util/clock.h"
#include "util/log.h"

/* BPF program symbols of table (read before the program info) that a
 * second read of path, after it, still has at the same address: *stable.
 * Returns how many of those the program info names alike (same address
 * and name). Programs loaded or unloaded around the info read (other
 * tools, our own modules) are left out instead of counting as a
 * difference (CI: "70 alike, 69 named alike"). The info is read twice,
 * before and after the second read: a program being loaded has its
 * functions in kallsyms before it has an ID (so before the program info
 * can list it), and one unloaded right after the second read is gone from
 * a later info read; each is compared with the info read that has it. */
static size_t check_bpf_info(const struct kallsyms *table, const char *path, size_t *stable)
{
	struct kallsyms *after = NULL;
	struct bpf_ksyms *b, *b2 = NULL;
	size_t alike = 0;
	uint64_t a, off;
	const char *n, *m;

	*stable = 0;
	if (bpf_ksyms_load(&b))
		return 0;
	if (kallsyms_load(path, &after)) {
		bpf_ksyms_free(b);
		return 0;
	}
	if (bpf_ksyms_load(&b2))
		b2 = NULL;
	for (size_t i = 0; (n = kallsyms_at(table, i, &a)); i++) {
		size_t l = strlen(n);

		if (l <= 6 || strcmp(n + l - 6, " [bpf]") || strncmp(n, "bpf_prog_", 9))
			continue;
		m = kallsyms_lookup(after, a, &off);
		if (!m || off || strcmp(m, n))
			continue;
		/* Known to neither info read: its program has lost its ID and
		 * is being freed (a program of an earlier run, torn down
		 * slowly by the kernel), its symbols not yet removed: not
		 * loaded throughout. */
		if (!bpf_ksyms_lookup(b, a, &off) && !(b2 && bpf_ksyms_lookup(b2, a, &off)))
			continue;
		(*stable)++;
		if (((m = bpf_ksyms_lookup(b, a, &off)) && !off && !strcmp(m, n)) ||
		    (b2 && (m = bpf_ksyms_lookup(b2, a, &off)) && !off && !strcmp(m, n)))
			alike++;
		else
			log_debug("kallsyms check: %s at 0x%llx, program info: %s", n,
				  (unsigned long long)a, m ? m : "(none)");
	}
	kallsyms_free(after);
	bpf_ksyms_free(b);
	bpf_ksyms_free(b2);
	return alike;
}

/* From this boot's cache and the iterator when they can be used, else
 * whole (and then the cache is written for the next run). */
static int load_kernel_syms(struct symbolizer *s, struct kallsyms **out)
{
	struct kallsyms *full;
	bool check = getenv("EBPF_PROF_KSYM_CHECK");

	/* The core kernel alone, unless the tests compare whole tables: the
	 * iterator makes the kernel expand all ~120k core names, ~10% of the
	 * collector's CPU on a short run, for modules, trampolines and BPF
	 * programs that most profiles never meet (docs/performance.md). */
	if (!check && s->ks_iter_fd >= 0) {
		s->ks_cache_err = ksym_cache_load_core(s->ks_dirfd, s->kallsyms_path, out);
		if (!s->ks_cache_err) {
			s->ks_core_only = kallsyms_at(*out, 0, &s->ks_lo) &&
					  kallsyms_at(*out, kallsyms_count(*out) - 1, &s->ks_hi);
			return 0;
		}
	}
	s->ks_cache_err = ksym_cache_load(s->ks_dirfd, s->ks_iter_fd, out);
	if (!s->ks_cache_err) {
		/* The tests' proof that the two ways give one table, and that
		 * program info names BPF functions as the kernel does. */
		if (check && !kallsyms_load(s->kallsyms_path, &full)) {
			s->ks_check_diff = ksym_cache_diff(*out, full, &s->ks_check_bpf);
			s->ks_check_info =
				check_bpf_info(full, s->kallsyms_path, &s->ks_check_stable);
			/* Programs load and unload while the tables are read
			 * (ours among them, on other threads): a difference is
			 * looked at again once; a naming that is wrong stays. */
			if (s->ks_check_info != s->ks_check_stable) {
				kallsyms_free(full);
				full = NULL;
				if (!kallsyms_load(s->kallsyms_path, &full))
					s->ks_check_info = check_bpf_info(full, s->kallsyms_path,
									  &s->ks_check_stable);
			}
			s->ks_checked = true;
			kallsyms_free(full);
		}
		return 0;
	}
	/* A good file that only lacks the iterator is not written again. */
	return ksym_cache_full_load(s->ks_cache_err == -ENOTSUP ? -1 : s->ks_dirfd,
				    s->kallsyms_path, out);
}

static void log_kernel_syms(const struct symbolizer *s)
{
	if (s->ks_iter_fd < 0 && s->ks_dirfd < 0)
		return;
	if (!s->ks_cache_err && s->ks_core_only)
		log_info("kallsyms: core kernel from this boot's cache; BPF programs from their "
			 "info and the rest from the kernel's iterator when a frame needs them");
	else if (!s->ks_cache_err)
		log_info("kallsyms: core kernel from this boot's cache, the rest from the kernel's "
			 "iterator");
	else
		log_info("kallsyms: read whole (boot cache: %s)", strerror(-s->ks_cache_err));
	if (s->ks_checked)
		log_info("kallsyms check: %zu entries unlike /proc/kallsyms, %zu [bpf] symbols "
			 "alike, %zu named alike by program info of %zu loaded throughout",
			 s->ks_check_diff, s->ks_check_bpf, s->ks_check_info, s->ks_check_stable);
}

/* An address outside the core kernel with only the core loaded: a BPF
 * function named from its program's info (read once), else the rest of
 * the table from the iterator (read once, kept beside the core rather than
 * merged with it: a merged copy doubled the core's ~4 MB for a moment, and
 * a long run's collector kept the step). */
static const char *beyond_core(struct symbolizer *s, uint64_t addr, uint64_t *off)
{
	const char *name;
	int err;

	if (!s->bpfks_tried) {
		s->bpfks_tried = true;
		err = bpf_ksyms_load(&s->bpfks);
		if (err)
			log_info("kallsyms: BPF program info not read (%s)", strerror(-err));
		else
			log_info("kallsyms: %zu BPF functions from program info",
				 bpf_ksyms_count(s->bpfks));
	}
	name = s->bpfks ? bpf_ksyms_lookup(s->bpfks, addr, off) : NULL;
	if (name)
		return name;
	if (!s->ks_rest_tried) {
		s->ks_rest_tried = true;
		err = ksym_cache_read_rest(s->ks, s->ks_iter_fd, &s->ks_rest);
		if (err) {
			log_warn("kallsyms: cannot read the module and BPF symbols (%s): kernel "
				 "frames outside the core kernel are [unknown]",
				 strerror(-err));
			return NULL;
		}
		log_info(
			"kallsyms: modules and the rest (%zu symbols) read for a frame at 0x%" PRIx64,
			kallsyms_count(s->ks_rest), addr);
	}
	return s->ks_rest ? kallsyms_lookup(s->ks_rest, addr, off) : NULL;
}

static int resolve_kernel(struct symbolizer *s, uint64_t addr, struct sym_result *out)
{
	const char *name;
	uint64_t off = 0;
	char buf[64];

	if (!s->ks_tried) {
		int err;

		if (s->ks_loading) {
			uint64_t t0 = mono_ns();

			pthread_join(s->ks_thread, NULL);
			s->ks_loading = false;
			s->ks = s->ks_pending;
			s->ks_pending = NULL;
			err = s->ks_err;
			log_info("kallsyms: loaded in %.1f ms off the recorder thread; the first "
				 "kernel frame waited %.1f ms for it",
				 (double)s->ks_load_ns / 1e6, (double)(mono_ns() - t0) / 1e6);
		} else {
			err = load_kernel_syms(s, &s->ks);
		}
		log_kernel_syms(s);
		s->ks_tried = true;
		if (err < 0)
			log_warn(
				"cannot read %s: %s; kernel frames will show as [unknown] [kernel]",
				s->kallsyms_path, strerror(-err));
		else if (kallsyms_restricted(s->ks))
			log_warn(
				"%s shows only zero addresses (kernel.kptr_restrict); kernel frames "
				"will show as [unknown] [kernel]",
				s->kallsyms_path);
	}
	if (!s->ks || kallsyms_restricted(s->ks))
		return sym_set_result(s, out, "[unknown] [kernel]", "[kernel.kallsyms]", addr, 0,
				      false);
	if (s->ks_core_only && (addr < s->ks_lo || addr > s->ks_hi))
		name = beyond_core(s, addr, &off);
	else
		name = kallsyms_lookup(s->ks, addr, &off);
	if (name)
		return sym_set_result(s, out, name, "[kernel.kallsyms]", addr, off, true);
	snprintf(buf, sizeof(buf), "[unknown] [kernel]+0x%" PRIx64, addr);
	return sym_set_result(s, out, buf, "[kernel.kallsyms]", addr, 0, false);
}

static void *kallsyms_thread(void *arg)
{
	struct symbolizer *s = arg;
	uint64_t t0 = mono_ns();

	s->ks_err = load_kernel_syms(s, &s->ks_pending);
	/* Logged by the joining thread: lines from two threads could mix. */
	s->ks_load_ns = mono_ns() - t0;
	return NULL;
}

void symbolizer_set_kernel_cache(struct symbolizer *s, int dirfd, int iter_link_fd)
{
	s->ks_dirfd = dirfd;
	s->ks_iter_fd = iter_link_fd;
}

int symbolizer_preload_kernel(struct symbolizer *s)
{
	int err;

	if (s->ks_tried || s->ks_loading)
		return 0;
	err = pthread_create(&s->ks_thread, NULL, kallsyms_thread, s);
	if (err)
		return -err; /* the first kernel frame loads it, as without preload */
	s->ks_loading = true;
	return 0;
}

int symbolizer_kernel(struct symbolizer *s, uint64_t addr, struct sym_result *out)
{
	struct cache_ent *e;
	int err;

	s->st.lookups++;
	/* A hash probe instead of a binary search plus interning the name. */
	e = sym_cache_slot(&s->kcache, addr);
	if (e->used) {
		s->st.cache_hits++;
		*out = e->res;
	} else {
		err = resolve_kernel(s, addr, out);
		if (err)
			return err;
		sym_cache_put(&s->kcache, addr, out, false);
	}
	if (!out->resolved)
		s->st.unresolved++;
	return 0;
}
