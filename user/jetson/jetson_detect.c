// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Is this a Jetson, which board, which L4T release (docs/jetson.md §1). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "jetson/jetson.h"
#include "jetson/jetson_fs.h"
#include "jetson/jetson_internal.h"

/* "# R36 (release), REVISION: 4.3, ..." -> "36.4.3" */
int jetson_parse_l4t(const char *line, char *out, size_t outlen)
{
	const char *p = strstr(line, "# R");
	const char *rev;
	unsigned major;
	char revbuf[16];
	size_t n = 0;

	if (!p || sscanf(p, "# R%u", &major) != 1 || major > 999)
		return -EINVAL;
	rev = strstr(p, "REVISION:");
	if (!rev)
		return -EINVAL;
	rev += strlen("REVISION:");
	while (*rev == ' ')
		rev++;
	while (n < sizeof(revbuf) - 1 && (isdigit((unsigned char)rev[n]) || rev[n] == '.'))
		n++;
	if (!n)
		return -EINVAL;
	memcpy(revbuf, rev, n);
	revbuf[n] = '\0';
	return jfs_path(out, outlen, "%u.%s", major, revbuf);
}

static void read_dt_string(const struct jfs *fs, const char *prop, char *out, size_t outlen)
{
	char rel[128];

	out[0] = '\0';
	/* proc/device-tree is the documented path; the sysfs one is its target. */
	snprintf(rel, sizeof(rel), "proc/device-tree/%s", prop);
	if (jfs_read(fs, rel, out, outlen) >= 0)
		return;
	snprintf(rel, sizeof(rel), "sys/firmware/devicetree/base/%s", prop);
	if (jfs_read(fs, rel, out, outlen) < 0)
		out[0] = '\0';
}

static bool find_tegra_soc(const struct jfs *fs, char *soc, size_t soclen)
{
	char buf[1024];
	int n = jfs_read_raw(fs, "proc/device-tree/compatible", buf, sizeof(buf));
	bool found = false;

	if (n < 0)
		n = jfs_read_raw(fs, "sys/firmware/devicetree/base/compatible", buf, sizeof(buf));
	if (n <= 0)
		return false;
	/* NUL-separated list, most specific first, SoC last. */
	for (int i = 0; i < n;) {
		const char *s = buf + i;
		size_t len = strnlen(s, (size_t)(n - i));
		if (len > 12 && !strncmp(s, "nvidia,tegra", 12)) {
			snprintf(soc, soclen, "%.*s", (int)(len - 7), s + 7);
			found = true;
		}
		i += (int)len + 1;
	}
	return found;
}

static void nvidia_desktop_driver(const struct jfs *fs, char *out, size_t outlen)
{
	char buf[512];
	const char *p;

	out[0] = '\0';
	if (jfs_read(fs, "proc/driver/nvidia/version", buf, sizeof(buf)) < 0)
		return;
	p = strstr(buf, "Kernel Module");
	if (!p)
		return;
	p += strlen("Kernel Module");
	while (*p == ' ')
		p++;
	size_t n = strspn(p, "0123456789.");
	if (n && n < outlen)
		snprintf(out, outlen, "%.*s", (int)n, p);
}

int jetson_detect_fs(const struct jfs *fs, struct jetson_board *b)
{
	char rel[512];
	bool has_release;
	bool has_soc;

	memset(b, 0, sizeof(*b));
	has_release = jfs_read(fs, "etc/nv_tegra_release", rel, sizeof(rel)) >= 0;
	if (has_release && jetson_parse_l4t(rel, b->l4t, sizeof(b->l4t)) < 0)
		b->l4t[0] = '\0';
	has_soc = find_tegra_soc(fs, b->soc, sizeof(b->soc));
	read_dt_string(fs, "model", b->model, sizeof(b->model));
	nvidia_desktop_driver(fs, b->nvidia_driver, sizeof(b->nvidia_driver));
	b->is_jetson = has_release || has_soc;
	if (b->is_jetson)
		snprintf(b->why, sizeof(b->why), "%s%s%s",
			 has_release ? "etc/nv_tegra_release" : "",
			 has_release && has_soc ? " and " : "",
			 has_soc ? "device-tree compatible nvidia,tegra*" : "");
	else
		snprintf(
			b->why, sizeof(b->why),
			"no etc/nv_tegra_release and no nvidia,tegra* device-tree compatible%s%s%s",
			b->nvidia_driver[0] ? " (desktop NVIDIA driver " : "", b->nvidia_driver,
			b->nvidia_driver[0] ? " present: use NVML)" : "");
	return 0;
}

int jetson_detect(const char *sysfs_root, struct jetson_board *b)
{
	struct jfs fs;
	int err = jfs_open(&fs, sysfs_root);

	if (err) {
		memset(b, 0, sizeof(*b));
		snprintf(b->why, sizeof(b->why), "cannot open %s: %s",
			 sysfs_root ? sysfs_root : "/", strerror(-err));
		return err;
	}
	err = jetson_detect_fs(&fs, b);
	jfs_close(&fs);
	return err;
}
