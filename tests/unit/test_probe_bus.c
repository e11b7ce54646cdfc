// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The probe bus (probes.h): requests are parsed like --probe and bounded;
 * as root, the probes module attaches a request made by another module
 * (here: this test) to a real target, tests/targets/usdt_pairs, and hands
 * each of its spans to the callback on the thread that calls the module's
 * hooks, with the end point's argument in ret and the begin point's in obj.
 * Without root the BPF part is skipped (and fails under CI=true).
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kernel/bpf_parts.h"
#include "check.h"
#include "cli.h"
#include "events/common.h"
#include "kernel/kfeat.h"
#include "probes/probes.h"
#include "rec_module.h"

#define N_WORK 100 /* per thread, usdt_pairs.c */

struct got {
	pthread_t thread;
	bool wrong_thread;
	size_t n;
	uint32_t tids[4];
	size_t ntids;
	long next[4]; /* next expected argument per thread */
	bool bad_args, bad_dur;
};

static void on_span(void *arg, const struct probe_span_ev *ev)
{
	struct got *g = arg;
	size_t t;

	if (!pthread_equal(pthread_self(), g->thread))
		g->wrong_thread = true;
	g->n++;
	for (t = 0; t < g->ntids && g->tids[t] != ev->tid; t++)
		;
	if (t == g->ntids) {
		if (t == 4)
			return;
		g->tids[g->ntids++] = ev->tid;
	}
	/* work__start(i) .. work__done(-i), i = 0..N_WORK-1 in order */
	if ((long)ev->obj != g->next[t] || ev->ret != -g->next[t])
		g->bad_args = true;
	g->next[t]++;
	if (ev->dur_ns < 200000 || ev->depth != 0 || ev->nested_same)
		g->bad_dur = true;
}

static void nop_span(void *arg, const struct probe_span_ev *ev)
{
	(void)arg;
	(void)ev;
}

static void test_requests(void)
{
	struct probe_bus *b;
	char err[256];
	int n;

	CHECK_INT_EQ(probe_bus_new(&b), 0);
	CHECK_INT_EQ(probe_bus_count(b), 0);
	CHECK(probe_bus_def(b, 0) == NULL);
	CHECK_INT_EQ(probe_bus_request(b, "usdt:/x:p:a_start,pair", nop_span, NULL, err,
				       sizeof(err)),
		     0);
	CHECK_INT_EQ(probe_bus_request(b, "libfoo:bar,label=B", nop_span, NULL, err, sizeof(err)),
		     1);
	CHECK_STR_EQ(probe_bus_def(b, 0)->usdt_end, "a_done");
	CHECK_STR_EQ(probe_bus_def(b, 1)->label, "B");
	/* Bad specs, no callback: refused with a reason, nothing added. */
	err[0] = '\0';
	CHECK_INT_EQ(probe_bus_request(b, "usdt:/x:p:tick,pair", nop_span, NULL, err, sizeof(err)),
		     -EINVAL);
	CHECK(err[0] != '\0');
	CHECK_INT_EQ(probe_bus_request(b, "lib:f", NULL, NULL, err, sizeof(err)), -EINVAL);
	CHECK_INT_EQ(probe_bus_request(NULL, "lib:f", nop_span, NULL, err, sizeof(err)), -EINVAL);
	CHECK_INT_EQ(probe_bus_count(b), 2);
	/* Bounded. */
	n = 2;
	while (probe_bus_request(b, "lib:f", nop_span, NULL, err, sizeof(err)) >= 0 && n < 1000)
		n++;
	CHECK_INT_EQ(n, 64);
	CHECK_INT_EQ(probe_bus_request(b, "lib:f", nop_span, NULL, err, sizeof(err)), -E2BIG);
	probe_bus_free(b);
	probe_bus_free(NULL);
}

static pid_t start_target(const char *bin, int *out_fd)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execl(bin, bin, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	*out_fd = p[0];
	return pid;
}

static void test_module(void)
{
	const char *dir = getenv("EP_TARGETS_DIR");
	struct cli_opts o = { 0 };
	struct rec_ctx ctx = { 0 };
	struct kfeat kf;
	struct probe_bus *b = NULL;
	struct got g = { .thread = pthread_self() };
	struct bpf_part part = { 0 };
	struct bpf_parts_objs objs = { 0 };
	char bin[1024], spec[1200], err[256], line[128] = "";
	void *st = NULL;
	int fd, tfd = -1, status = 0;
	uint32_t key;
	uint8_t one = 1;
	pid_t pid;
	ssize_t n;
	struct timespec tick = { 0, 10 * 1000000 };

	if (geteuid() != 0 || !dir) {
		fprintf(stderr,
			"test_probe_bus: BPF part skipped (needs root and EP_TARGETS_DIR)\n");
		CHECK(!getenv("CI") || strcmp(getenv("CI"), "true"));
		return;
	}
	snprintf(bin, sizeof(bin), "%s/usdt_pairs", dir);
	snprintf(spec, sizeof(spec), "usdt:%s:ep_pair:work__start,pair,label=bus_work", bin);
	CHECK_INT_EQ(probe_bus_new(&b), 0);
	CHECK_INT_EQ(probe_bus_request(b, spec, on_span, &g, err, sizeof(err)), 0);
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "targets", sizeof(__u32), sizeof(__u8),
			    EP_MAX_TARGETS, NULL);
	CHECK(fd >= 0);
	pid = start_target(bin, &tfd);
	CHECK(pid > 0);
	if (fd < 0 || pid <= 0)
		goto out;
	n = read(tfd, line, sizeof(line) - 1);
	CHECK(n > 0 && !strncmp(line, "ready ", 6));
	key = (uint32_t)pid;
	CHECK_INT_EQ(bpf_map_update_elem(fd, &key, &one, BPF_ANY), 0);
	o.proc_root = "/proc";
	o.probe_presets = "none"; /* only the bus request */
	ctx.opts = &o;
	kfeat_probe(&kf); /* as the preflight does */
	ctx.kf = &kf;
	ctx.targets_map_fd = fd;
	ctx.probe_bus = b;
	CHECK_INT_EQ(probes_rec_module.open(&st, &ctx), 0);
	if (!st)
		goto out;
	/* As record/modules.c does: the probes' part of the modules' BPF object. */
	part.prefix = probes_rec_module.bpf_part;
	part.setup = probes_rec_module.bpf_setup;
	part.loaded = probes_rec_module.bpf_loaded;
	part.state = st;
	CHECK_INT_EQ(bpf_parts_load(&part, 1, fd, NULL, NULL, &objs, NULL), 0);
	CHECK_INT_EQ(objs.n, 1);
	CHECK_INT_EQ(probes_rec_module.add_target(st, key), 0);
	CHECK_INT_EQ(probes_rec_module.attach(st), 0);
	kill(pid, SIGUSR1);
	/* Poll as the recorder does until the target is gone (bounded). */
	for (int i = 0; i < 3000 && waitpid(pid, &status, WNOHANG) == 0; i++) {
		probes_rec_module.poll(st, (uint64_t)i * 10000000ull);
		nanosleep(&tick, NULL);
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	pid = -1;
	probes_rec_module.stop(st);
	/* 2 threads x N_WORK pairs; the orphan work__done at the start is not
	 * a span. */
	CHECK_INT_EQ(g.n, 2 * N_WORK);
	CHECK_INT_EQ(g.ntids, 2);
	CHECK(!g.bad_args);
	CHECK(!g.bad_dur);
	CHECK(!g.wrong_thread);
	probes_rec_module.close(st);
	bpf_parts_close(&objs);
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (tfd >= 0)
		close(tfd);
	if (fd >= 0)
		close(fd);
	probe_bus_free(b);
}

int main(void)
{
	test_requests();
	test_module();
	return check_report("test_probe_bus");
}
