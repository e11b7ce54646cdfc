// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* When the summary tells how to get JS names: Node code seen, unnamed JIT
 * frames, no perf map. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "profile/profile.h"
#include "symbolize/jit_hint.h"

static void add(struct profile *p, const char *const *names, const char *const *mods, int n,
		int count)
{
	uint32_t fr[8];
	int64_t t = profile_thread(p, 1, 1, "node");

	for (int i = 0; i < n; i++)
		fr[i] = (uint32_t)profile_intern_frame(p, names[i], mods[i], false);
	for (int c = 0; c < count; c++)
		CHECK_INT_EQ(profile_add_sample(p, (uint32_t)t, (uint64_t)c, fr, (uint32_t)n, 0,
						false),
			     0);
}

int main(void)
{
	static const char *const js_names[] = { "_start", "uv_run", "[unknown] [anon]+0x10" };
	static const char *const js_mods[] = { "/usr/bin/node", "/usr/bin/node", NULL };
	static const char *const deb_names[] = { "main", "uv_run", "[unknown] [anon]+0x10" };
	static const char *const deb_mods[] = { "/usr/bin/node",
						"/usr/lib/x86_64-linux-gnu/libnode.so.108", NULL };
	static const char *const c_names[] = { "main", "[unknown] [anon]+0x10" };
	static const char *const c_mods[] = { "/usr/bin/python3", NULL };
	static const char *const pm_names[] = { "uv_run", "JS:*hot /x.js:1:1" };
	static const char *const pm_mods[] = { "/usr/bin/node", "[perf-map]" };
	struct profile p;
	struct jit_hint h;

	/* Node with unnamed JIT code: hint. */
	CHECK_INT_EQ(profile_init(&p, 99), 0);
	add(&p, js_names, js_mods, 3, 3);
	add(&p, js_names, js_mods, 2, 1);
	jit_hint_compute(&p, &h);
	CHECK_INT_EQ(h.node_samples, 4);
	CHECK_INT_EQ(h.anon_unknown, 3);
	CHECK(jit_hint_wanted(&h));
	/* A perf map named some frames: no hint. */
	add(&p, pm_names, pm_mods, 2, 1);
	jit_hint_compute(&p, &h);
	CHECK_INT_EQ(h.perfmap_samples, 1);
	CHECK(!jit_hint_wanted(&h));
	profile_free(&p);

	/* Debian's nodejs: the code is in libnode.so.N. */
	CHECK_INT_EQ(profile_init(&p, 99), 0);
	add(&p, deb_names, deb_mods, 3, 2);
	jit_hint_compute(&p, &h);
	CHECK(jit_hint_wanted(&h));
	profile_free(&p);

	/* Not node (anonymous code in another program), or nothing at all. */
	CHECK_INT_EQ(profile_init(&p, 99), 0);
	jit_hint_compute(&p, &h);
	CHECK(!jit_hint_wanted(&h));
	add(&p, c_names, c_mods, 2, 5);
	jit_hint_compute(&p, &h);
	CHECK_INT_EQ(h.node_samples, 0);
	CHECK(!jit_hint_wanted(&h));
	profile_free(&p);
	return check_report("test_jit_hint");
}
