// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Hostile and changing sysfs trees: garbage and huge numbers, oversized
 * files, FIFOs, permission denied, symlink loops, links escaping the root,
 * and sources that vanish or move between samples.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "jetson/jetson.h"
#include "jetson/jetson_fs.h"

static char root[256];

static void mkdirs(const char *rel)
{
	char p[1024];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	for (char *s = p + strlen(root) + 1; *s; s++) {
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	}
	mkdir(p, 0755);
}

static void put(const char *rel, const char *content)
{
	char p[1024];
	FILE *f;
	char *slash;

	snprintf(p, sizeof(p), "%s", rel);
	slash = strrchr(p, '/');
	if (slash) {
		*slash = '\0';
		mkdirs(p);
	}
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	f = fopen(p, "we");
	if (!f) {
		perror(p);
		return;
	}
	fputs(content, f);
	fclose(f);
}

static void link_at(const char *rel, const char *target)
{
	char p[1024];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	unlink(p);
	if (symlink(target, p))
		perror(p);
}

static void rm(const char *rel)
{
	char cmd[1200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s/%s'", root, rel);
	if (system(cmd))
		fprintf(stderr, "rm failed\n");
}

/* A small JP6-like tree with real symlinks. */
static void build_tree(void)
{
	put("etc/nv_tegra_release", "# R36 (release), REVISION: 4.3, GCID: 1, BOARD: generic\n");
	mkdirs("sys/class/devfreq");
	mkdirs("sys/class/thermal");
	mkdirs("sys/bus/i2c/devices");
	put("sys/firmware/devicetree/base/gpu@17000000/name", "gpu");
	put("sys/devices/gpuA/load", "500\n");
	put("sys/devices/gpuA/devfreq/17000000.gpu/cur_freq", "918000000\n");
	put("sys/devices/gpuA/devfreq/17000000.gpu/max_freq", "1300500000\n");
	put("sys/devices/gpuA/devfreq/17000000.gpu/min_freq", "306000000\n");
	link_at("sys/devices/gpuA/devfreq/17000000.gpu/device", "../..");
	link_at("sys/devices/gpuA/of_node", "../../firmware/devicetree/base/gpu@17000000");
	link_at("sys/class/devfreq/17000000.gpu", "../../devices/gpuA/devfreq/17000000.gpu");
	put("sys/devices/virtual/thermal/thermal_zone0/type", "gpu-thermal\n");
	put("sys/devices/virtual/thermal/thermal_zone0/temp", "50000\n");
	link_at("sys/class/thermal/thermal_zone0", "../../devices/virtual/thermal/thermal_zone0");
	put("sys/devices/i2c/1-0040/name", "ina3221\n");
	put("sys/devices/i2c/1-0040/hwmon/hwmon1/in1_label", "VDD_IN\n");
	put("sys/devices/i2c/1-0040/hwmon/hwmon1/in1_input", "5000\n");
	put("sys/devices/i2c/1-0040/hwmon/hwmon1/curr1_input", "1000\n");
	link_at("sys/bus/i2c/devices/1-0040", "../../../devices/i2c/1-0040");
}

static void test_parse(void)
{
	long long v;

	CHECK_INT_EQ(jfs_parse_ll("42", &v), 0);
	CHECK_INT_EQ(v, 42);
	CHECK_INT_EQ(jfs_parse_ll("  -256000\n", &v), 0);
	CHECK_INT_EQ(v, -256000);
	CHECK_INT_EQ(jfs_parse_ll("", &v), -EINVAL);
	CHECK_INT_EQ(jfs_parse_ll("12abc", &v), -EINVAL);
	CHECK_INT_EQ(jfs_parse_ll("0x10", &v), -EINVAL);
	CHECK_INT_EQ(jfs_parse_ll("1 2", &v), -EINVAL);
	CHECK_INT_EQ(jfs_parse_ll("99999999999999999999999", &v), -ERANGE);
	CHECK_INT_EQ(jfs_parse_ll("-99999999999999999999999", &v), -ERANGE);
}

static void test_fs(void)
{
	struct jfs fs;
	char buf[64], out[512];
	long long v;
	char big[8192];

	CHECK_INT_EQ(jfs_open(&fs, root), 0);
	put("t/garbage", "abc\n");
	CHECK_INT_EQ(jfs_read_ll(&fs, "t/garbage", &v), -EINVAL);
	put("t/binary", "\x01\x02\xff\xfe");
	CHECK_INT_EQ(jfs_read_ll(&fs, "t/binary", &v), -EINVAL);
	put("t/empty", "");
	CHECK_INT_EQ(jfs_read_ll(&fs, "t/empty", &v), -EINVAL);
	memset(big, '7', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	put("t/huge", big);
	CHECK_INT_EQ(jfs_read_ll(&fs, "t/huge", &v), -EINVAL);
	CHECK_INT_EQ(jfs_read(&fs, "t/huge", buf, sizeof(buf)), -EFBIG);

	/* a FIFO must be refused, not block the sampler forever */
	{
		char p[512];
		snprintf(p, sizeof(p), "%s/t/fifo", root);
		CHECK_INT_EQ(mkfifo(p, 0644), 0);
		CHECK_INT_EQ(jfs_read_ll(&fs, "t/fifo", &v), -EINVAL);
	}

	/* symlink loops, real and as link stubs */
	link_at("t/loop_a", "loop_b");
	link_at("t/loop_b", "loop_a");
	CHECK_INT_EQ(jfs_resolve(&fs, "t/loop_a/x", false, out, sizeof(out)), -ELOOP);
	CHECK_INT_EQ(jfs_read_ll(&fs, "t/loop_a", &v), -ELOOP);
	link_at("t/self", ".");
	CHECK_INT_EQ(jfs_resolve(&fs, "t/self/self/self", true, out, sizeof(out)), 0);
	CHECK_STR_EQ(out, "t");
	put("t/stub_a", "stub_b");
	put("t/stub_b", "stub_a");
	CHECK_INT_EQ(jfs_resolve(&fs, "t/stub_a/name", false, out, sizeof(out)), -ELOOP);

	/* links cannot leave the root */
	link_at("t/escape", "../../../../../../../../etc");
	CHECK_INT_EQ(jfs_resolve(&fs, "t/escape", true, out, sizeof(out)), -ENOENT);
	link_at("t/abs", "/t");
	CHECK_INT_EQ(jfs_resolve(&fs, "t/abs/garbage", false, out, sizeof(out)), 0);
	CHECK_STR_EQ(out, "t/garbage");
	CHECK_INT_EQ(jfs_resolve(&fs, "../../..", true, out, sizeof(out)), 0);
	CHECK_STR_EQ(out, ".");

	/* a dangling stub (unreadable sensor) reads as missing, not as its text */
	put("t/dangling", "../nonexistent/sensor");
	CHECK_INT_EQ(jfs_read_ll(&fs, "t/dangling", &v), -ENOENT);
	jfs_close(&fs);
}

/* Root reads everything; drop to nobody in a child to see EACCES handled. */
static void test_permission(void)
{
	char p[512];
	pid_t pid;
	int status = 0;

	put("perm/secret", "1234\n");
	snprintf(p, sizeof(p), "%s/perm/secret", root);
	chmod(p, 0600);
	chmod(root, 0755);
	pid = fork();
	if (pid == 0) {
		struct jfs fs;
		long long v;
		int err;
		if (setgid(65534) || setuid(65534))
			_exit(77);
		if (jfs_open(&fs, root))
			_exit(3);
		err = jfs_read_ll(&fs, "perm/secret", &v);
		jfs_close(&fs);
		_exit(err == -EACCES ? 0 : 1);
	}
	CHECK(pid > 0);
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		fprintf(stderr, "permission test skipped (cannot drop privileges)\n");
		return;
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_vanish(void)
{
	struct jetson_reader_opts o = { .sysfs_root = root };
	struct jetson_reader *r;
	struct jetson_snapshot *s = calloc(1, sizeof(*s));

	build_tree();
	CHECK_INT_EQ(jetson_reader_open(&r, &o), 0);
	if (!r) {
		free(s);
		return;
	}
	jetson_reader_sample(r, s);
	CHECK(s->board.is_jetson);
	CHECK(s->gpu.present && s->gpu.load_permille.ok && s->gpu.load_permille.v == 500);
	CHECK_INT_EQ(s->nrails, 1);
	CHECK(s->total_uw.ok && s->total_uw.v == 5000000);
	CHECK_INT_EQ(s->nzones, 1);

	/* garbage and absurd values: unavailable, never 0 */
	put("sys/devices/gpuA/load", "banana\n");
	put("sys/devices/gpuA/devfreq/17000000.gpu/cur_freq", "999999999999999999\n");
	put("sys/devices/virtual/thermal/thermal_zone0/temp", "99999999999\n");
	jetson_reader_sample(r, s);
	CHECK(!s->gpu.load_permille.ok && s->gpu.load_permille.err == -EINVAL);
	CHECK(!s->gpu.cur_hz.ok && s->gpu.cur_hz.err == -ERANGE);
	CHECK_INT_EQ(s->zones[0].state, JETSON_ZONE_UNAVAILABLE);

	/* file vanishes between samples: unavailable this time, back next time */
	rm("sys/devices/i2c/1-0040/hwmon/hwmon1/curr1_input");
	jetson_reader_sample(r, s);
	CHECK(!s->rails[0].power_uw.ok && s->rails[0].power_uw.err == -ENOENT);
	CHECK(!s->total_uw.ok);
	put("sys/devices/i2c/1-0040/hwmon/hwmon1/curr1_input", "2000\n");
	jetson_reader_sample(r, s);
	CHECK(s->rails[0].power_uw.ok && s->rails[0].power_uw.v == 10000000);

	/* the GPU device moves (driver rebind): found again at its new path */
	rm("sys/devices/gpuA");
	put("sys/devices/gpuB/load", "700\n");
	put("sys/devices/gpuB/devfreq/17000000.gpu/cur_freq", "612000000\n");
	put("sys/devices/gpuB/devfreq/17000000.gpu/max_freq", "1300500000\n");
	link_at("sys/devices/gpuB/devfreq/17000000.gpu/device", "../..");
	link_at("sys/devices/gpuB/of_node", "../../firmware/devicetree/base/gpu@17000000");
	link_at("sys/class/devfreq/17000000.gpu", "../../devices/gpuB/devfreq/17000000.gpu");
	jetson_reader_sample(r, s); /* notices the loss */
	jetson_reader_sample(r, s); /* re-probed */
	CHECK(s->gpu.present && s->gpu.load_permille.ok && s->gpu.load_permille.v == 700);
	CHECK(s->gpu.cur_hz.ok && s->gpu.cur_hz.v == 612000000);

	/* a zone disappears entirely: dropped after re-probe, no stale value */
	rm("sys/devices/virtual/thermal/thermal_zone0");
	jetson_reader_sample(r, s);
	CHECK(s->nzones == 0 || s->zones[0].state == JETSON_ZONE_UNAVAILABLE);
	jetson_reader_sample(r, s);
	CHECK_INT_EQ(s->nzones, 0);

	/* symlink loop where the devfreq class entry should be */
	link_at("sys/class/devfreq/17000000.gpu", "17000000.gpu");
	rm("sys/devices/gpuB");
	jetson_reader_sample(r, s);
	jetson_reader_sample(r, s);
	CHECK(!s->gpu.present);

	jetson_reader_close(r);
	free(s);
}

static bool printable_ascii(const char *t)
{
	for (; *t; t++)
		if ((unsigned char)*t < 0x20 || (unsigned char)*t > 0x7e)
			return false;
	return true;
}

/* Names from the device tree and sysfs reach the terminal and JSON: an
 * escape sequence or invalid UTF-8 in them must not. */
static void test_hostile_names(void)
{
	struct jetson_reader_opts o = { .sysfs_root = root };
	struct jetson_reader *r;
	struct jetson_snapshot *s = calloc(1, sizeof(*s));
	cJSON *j;
	char *txt;

	rm("sys");
	build_tree();
	put("sys/firmware/devicetree/base/gpu@17000000/name", "gpu\x1b]0;owned\x07\xff\xfe\x1b[2J");
	put("sys/devices/i2c/1-0040/hwmon/hwmon1/in1_label", "VDD_\x1b[31mIN\xc3\n");
	CHECK_INT_EQ(jetson_reader_open(&r, &o), 0);
	if (!r) {
		free(s);
		return;
	}
	jetson_reader_sample(r, s);
	CHECK(s->gpu.present);
	CHECK(printable_ascii(s->gpu.of_node_name));
	CHECK_STR_EQ(s->gpu.of_node_name, "gpu?]0;owned????[2J");
	CHECK(printable_ascii(s->gpu.devfreq));
	CHECK_INT_EQ(s->nrails, 1);
	CHECK(printable_ascii(s->rails[0].name));
	j = jetson_snapshot_json(s);
	txt = j ? cJSON_PrintUnformatted(j) : NULL;
	CHECK(txt && printable_ascii(txt));
	free(txt);
	cJSON_Delete(j);
	jetson_reader_close(r);
	free(s);
}

int main(void)
{
	snprintf(root, sizeof(root), "/tmp/ep-jetson-bad.XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	test_parse();
	test_fs();
	test_permission();
	test_vanish();
	test_hostile_names();
	rm("");
	return check_report("test_jetson_badinput");
}
