// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Discovery of Jetson telemetry sources and per-sample reading. Sources are
 * found by name (devfreq of_node name, i2c/hwmon `name`, thermal `type`),
 * remembered by canonical path, and searched again when their directory
 * disappears.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jetson/jetson.h"
#include "jetson/jetson_fs.h"
#include "jetson/jetson_internal.h"
#include "util/clock.h"
#include "util/log.h"

#define JR_PATH 512

struct jr_rail {
	char dir[JR_PATH];
	char name[JETSON_NAME_LEN];
	char device[JETSON_NAME_LEN];
	int channel;
	enum jetson_rail_layout layout;
};

struct jr_node {
	char dir[JR_PATH];
	char node[24];
	char type[JETSON_NAME_LEN];
	size_t ntrips;
	struct jetson_trip trips[JETSON_MAX_TRIPS];
};

struct jr_fan {
	char pwm[JR_PATH]; /* file */
	char rpm[JR_PATH]; /* file, "" if none */
	char source[JETSON_NAME_LEN];
};

struct jetson_reader {
	struct jfs fs;
	struct jetson_board board;

	bool gpu_found;
	char gpu_devfreq[JR_PATH];
	char gpu_dev[JR_PATH];
	char gpu_name[JETSON_NAME_LEN];
	char gpu_of_node[JETSON_NAME_LEN];

	size_t nrails;
	struct jr_rail rails[JETSON_MAX_RAILS];
	size_t nzones;
	struct jr_node zones[JETSON_MAX_ZONES];
	size_t ncool;
	struct jr_node cool[JETSON_MAX_COOLING];
	size_t nfans;
	struct jr_fan fans[JETSON_MAX_FANS];
	char oc_dir[JR_PATH];

	size_t nmodes;
	struct jetson_mode_name modes[JETSON_MAX_MODES];

	int emc_rate_idx, emc_act_idx; /* last candidate that worked, -1 none */
	bool reprobe_gpu, reprobe_rails, reprobe_thermal, reprobe_hwmon;
	bool told_root;
};

double jetson_mhz(long long hz)
{
	return (double)hz / 1e6;
}

double jetson_mw(long long uw)
{
	return (double)uw / 1e3;
}

double jetson_c(long long mc)
{
	return (double)mc / 1e3;
}

double jetson_fan_pct(long long pwm)
{
	/* one decimal, as the oracle (jtop) rounds */
	return round((double)pwm * 1000.0 / 255.0) / 10.0;
}

double jetson_emc_util_pct(long long mc_all, long long emc_hz)
{
	long long khz = emc_hz / 1000;

	if (khz <= 0)
		return NAN;
	return (double)mc_all * 100.0 / (double)khz;
}

/* Values past these are not physical readings on any Jetson: treat as garbage. */
#define JR_MAX_HZ 100000000000LL /* 100 GHz */
#define JR_MAX_MV 100000LL
#define JR_MAX_MA 1000000LL
#define JR_MAX_MC 1000000LL /* 1000 C */

static struct jetson_val read_val(const struct jfs *fs, const char *dir, const char *file,
				  long long lo, long long hi)
{
	struct jetson_val v = { 0 };
	char rel[JR_PATH + 64];
	long long x;
	int err;

	if (jfs_path(rel, sizeof(rel), "%s/%s", dir, file)) {
		v.err = -ENAMETOOLONG;
		return v;
	}
	err = jfs_read_ll(fs, rel, &x);
	if (err) {
		v.err = err;
		return v;
	}
	if (x < lo || x > hi) {
		v.err = -ERANGE;
		return v;
	}
	v.ok = true;
	v.v = x;
	return v;
}

static int read_str(const struct jfs *fs, const char *dir, const char *file, char *out, size_t len)
{
	char rel[JR_PATH + 64];
	char buf[256];
	int n;

	out[0] = '\0';
	if (jfs_path(rel, sizeof(rel), "%s/%s", dir, file))
		return -ENAMETOOLONG;
	n = jfs_read(fs, rel, buf, sizeof(buf));
	if (n < 0)
		return n;
	jstrcpy(out, len, buf);
	return 0;
}

static bool gone(int err)
{
	return err == -ENOENT || err == -ENODEV || err == -ENXIO || err == -ESTALE ||
	       err == -ENOTDIR;
}

static bool dir_lost(const struct jfs *fs, const char *dir)
{
	char canon[JR_PATH];

	return jfs_resolve(fs, dir, true, canon, sizeof(canon)) != 0;
}

/* ---- discovery ---- */

static bool gpu_node_name(const char *n)
{
	static const char *const names[] = { "gpu", "gp10b", "gv11b", "ga10b", "gb10b" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(n, names[i]))
			return true;
	return strstr(n, "gpu") != NULL;
}

static void probe_gpu(struct jetson_reader *r)
{
	char **ents;
	size_t n;

	r->gpu_found = false;
	if (jfs_list(&r->fs, "sys/class/devfreq", &ents, &n))
		return;
	for (size_t i = 0; i < n && !r->gpu_found; i++) {
		char rel[JR_PATH], name[JETSON_NAME_LEN] = "";

		if (jfs_path(rel, sizeof(rel), "sys/class/devfreq/%s/device/of_node/name", ents[i]))
			continue;
		if (jfs_read(&r->fs, rel, name, sizeof(name)) < 0) {
			/* Thor: no of_node; the devfreq name itself says gpu-gpc-0 */
			if (!strstr(ents[i], "gpu"))
				continue;
		} else if (!gpu_node_name(name)) {
			continue; /* vic, nvenc, ... */
		}
		if (jfs_path(rel, sizeof(rel), "sys/class/devfreq/%s", ents[i]) ||
		    jfs_resolve(&r->fs, rel, true, r->gpu_devfreq, sizeof(r->gpu_devfreq)))
			continue;
		if (jfs_path(rel, sizeof(rel), "sys/class/devfreq/%s/device", ents[i]) ||
		    jfs_resolve(&r->fs, rel, true, r->gpu_dev, sizeof(r->gpu_dev)))
			r->gpu_dev[0] = '\0';
		jstrcpy_printable(r->gpu_name, sizeof(r->gpu_name), ents[i]);
		jstrcpy_printable(r->gpu_of_node, sizeof(r->gpu_of_node), name);
		r->gpu_found = true;
	}
	jfs_free_list(ents, n);
}

static bool rail_label_ok(const char *label)
{
	/* jtop skips the shunt sum and DT labels "NC" (not connected) */
	return label[0] && !strstr(label, "sum of shunt") && !strstr(label, "NC");
}

static void add_rail(struct jetson_reader *r, const char *dir, const char *dev, int ch,
		     enum jetson_rail_layout layout, const char *label)
{
	struct jr_rail *rl;

	if (r->nrails >= JETSON_MAX_RAILS)
		return;
	rl = &r->rails[r->nrails++];
	jstrcpy(rl->dir, sizeof(rl->dir), dir);
	jstrcpy(rl->device, sizeof(rl->device), dev);
	jstrcpy_printable(rl->name, sizeof(rl->name), label);
	rl->channel = ch;
	rl->layout = layout;
}

static void probe_ina_hwmon(struct jetson_reader *r, const char *hwdir, const char *dev)
{
	for (int ch = 1; ch <= 3; ch++) {
		char file[32], label[JETSON_NAME_LEN];
		struct jetson_val en;

		snprintf(file, sizeof(file), "in%d_label", ch);
		if (read_str(&r->fs, hwdir, file, label, sizeof(label)) || !rail_label_ok(label))
			continue; /* no label: channel disabled in the DT */
		snprintf(file, sizeof(file), "in%d_enable", ch);
		en = read_val(&r->fs, hwdir, file, 0, 1);
		if (en.ok && en.v == 0)
			continue;
		add_rail(r, hwdir, dev, ch, JETSON_RAIL_HWMON, label);
	}
}

static void probe_ina_iio(struct jetson_reader *r, const char *iiodir, const char *dev)
{
	for (int ch = 0; ch <= 2; ch++) {
		char file[32], label[JETSON_NAME_LEN];

		snprintf(file, sizeof(file), "rail_name_%d", ch);
		if (read_str(&r->fs, iiodir, file, label, sizeof(label)) || !rail_label_ok(label))
			continue;
		add_rail(r, iiodir, dev, ch, JETSON_RAIL_IIO, label);
	}
}

static void probe_rails(struct jetson_reader *r)
{
	char **devs;
	size_t ndev;

	r->nrails = 0;
	if (jfs_list(&r->fs, "sys/bus/i2c/devices", &devs, &ndev))
		return;
	for (size_t i = 0; i < ndev; i++) {
		char devdir[JR_PATH], name[JETSON_NAME_LEN], sub[JR_PATH], canon[JR_PATH];
		char **ents;
		size_t nent;

		if (jfs_path(devdir, sizeof(devdir), "sys/bus/i2c/devices/%s", devs[i]) ||
		    read_str(&r->fs, devdir, "name", name, sizeof(name)) ||
		    !strstr(name, "ina3221"))
			continue;
		/* JP5+: hwmon/hwmonN; JP4: iio:deviceN directly under the i2c device */
		if (jfs_path(sub, sizeof(sub), "%s/hwmon", devdir) == 0 &&
		    jfs_list(&r->fs, sub, &ents, &nent) == 0) {
			for (size_t k = 0; k < nent; k++) {
				char hw[JR_PATH];
				if (jfs_path(hw, sizeof(hw), "%s/%s", sub, ents[k]) == 0 &&
				    jfs_resolve(&r->fs, hw, true, canon, sizeof(canon)) == 0)
					probe_ina_hwmon(r, canon, devs[i]);
			}
			jfs_free_list(ents, nent);
		}
		if (jfs_list(&r->fs, devdir, &ents, &nent) == 0) {
			for (size_t k = 0; k < nent; k++) {
				char iio[JR_PATH];
				if (strncmp(ents[k], "iio:device", 10))
					continue;
				if (jfs_path(iio, sizeof(iio), "%s/%s", devdir, ents[k]) == 0 &&
				    jfs_resolve(&r->fs, iio, true, canon, sizeof(canon)) == 0)
					probe_ina_iio(r, canon, devs[i]);
			}
			jfs_free_list(ents, nent);
		}
	}
	jfs_free_list(devs, ndev);
}

static void read_trips(struct jetson_reader *r, struct jr_node *z)
{
	z->ntrips = 0;
	for (int k = 0; k < JETSON_MAX_TRIPS; k++) {
		char file[40];
		struct jetson_val t, h;
		struct jetson_trip *tp;

		snprintf(file, sizeof(file), "trip_point_%d_temp", k);
		t = read_val(&r->fs, z->dir, file, -JR_MAX_MC, JR_MAX_MC);
		if (!t.ok)
			break;
		tp = &z->trips[z->ntrips++];
		tp->temp_mc = t.v;
		snprintf(file, sizeof(file), "trip_point_%d_hyst", k);
		h = read_val(&r->fs, z->dir, file, 0, JR_MAX_MC);
		tp->hyst_mc = h.ok ? h.v : 0;
		snprintf(file, sizeof(file), "trip_point_%d_type", k);
		if (read_str(&r->fs, z->dir, file, tp->type, sizeof(tp->type)))
			snprintf(tp->type, sizeof(tp->type), "unknown");
	}
}

static void probe_thermal(struct jetson_reader *r)
{
	char **ents;
	size_t n;

	r->nzones = 0;
	r->ncool = 0;
	if (jfs_list(&r->fs, "sys/class/thermal", &ents, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		bool zone = !strncmp(ents[i], "thermal_zone", 12);
		bool cool = !strncmp(ents[i], "cooling_device", 14);
		char rel[JR_PATH];
		struct jr_node *z;

		if (!zone && !cool)
			continue;
		if (zone && r->nzones >= JETSON_MAX_ZONES)
			continue;
		if (cool && r->ncool >= JETSON_MAX_COOLING)
			continue;
		z = zone ? &r->zones[r->nzones] : &r->cool[r->ncool];
		memset(z, 0, sizeof(*z));
		if (jfs_path(rel, sizeof(rel), "sys/class/thermal/%s", ents[i]) ||
		    jfs_resolve(&r->fs, rel, true, z->dir, sizeof(z->dir)))
			continue;
		jstrcpy(z->node, sizeof(z->node), ents[i]);
		if (read_str(&r->fs, z->dir, "type", z->type, sizeof(z->type)))
			jstrcpy(z->type, sizeof(z->type), ents[i]);
		if (zone) {
			read_trips(r, z);
			r->nzones++;
		} else {
			r->ncool++;
		}
	}
	jfs_free_list(ents, n);
}

static void probe_hwmon(struct jetson_reader *r)
{
	char **ents;
	size_t n, ntach = 0;
	char tach[JETSON_MAX_FANS][JR_PATH];

	r->nfans = 0;
	r->oc_dir[0] = '\0';
	if (jfs_list(&r->fs, "sys/class/hwmon", &ents, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			char rel[JR_PATH], dir[JR_PATH], name[JETSON_NAME_LEN];

			if (jfs_path(rel, sizeof(rel), "sys/class/hwmon/%s", ents[i]) ||
			    jfs_resolve(&r->fs, rel, true, dir, sizeof(dir)) ||
			    read_str(&r->fs, dir, "name", name, sizeof(name)))
				continue;
			if (!strcmp(name, "pwmfan") && r->nfans < JETSON_MAX_FANS) {
				struct jr_fan *f = &r->fans[r->nfans++];
				jfs_path(f->pwm, sizeof(f->pwm), "%s/pwm1", dir);
				f->rpm[0] = '\0';
				snprintf(f->source, sizeof(f->source), "pwmfan %s", ents[i]);
			} else if ((!strcmp(name, "pwm_tach") ||
				    !strcmp(name, "generic_pwm_tachometer")) &&
				   ntach < JETSON_MAX_FANS) {
				jfs_path(tach[ntach++], JR_PATH, "%s/rpm", dir);
			} else if (!strcmp(name, "soctherm_oc")) {
				jstrcpy(r->oc_dir, sizeof(r->oc_dir), dir);
			}
		}
		jfs_free_list(ents, n);
	}
	/* JP4: NVIDIA pwm-fan driver attributes directly on the platform device */
	if (r->nfans == 0) {
		char canon[JR_PATH];
		if (jfs_resolve(&r->fs, "sys/devices/pwm-fan", true, canon, sizeof(canon)) == 0) {
			struct jr_fan *f = &r->fans[r->nfans++];
			jfs_path(f->pwm, sizeof(f->pwm), "%s/target_pwm", canon);
			jfs_path(f->rpm, sizeof(f->rpm), "%s/rpm_measured", canon);
			snprintf(f->source, sizeof(f->source), "pwm-fan");
		}
	}
	/* Pair the k-th tachometer with the k-th fan (names repeat with two fans). */
	for (size_t k = 0; k < ntach && k < r->nfans; k++)
		if (!r->fans[k].rpm[0] || strcmp(r->fans[k].source, "pwm-fan"))
			jstrcpy(r->fans[k].rpm, sizeof(r->fans[k].rpm), tach[k]);
}

size_t jetson_parse_nvpmodel_conf(const char *text, struct jetson_mode_name *out, size_t max)
{
	size_t n = 0;
	const char *p = text;

	while (p && *p && n < max) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char line[256];
		int id;
		char name[JETSON_NAME_LEN];

		if (len < sizeof(line)) {
			memcpy(line, p, len);
			line[len] = '\0';
			if (sscanf(line, " < POWER_MODEL ID=%d NAME=%63[^ >\t] >", &id, name) ==
				    2 &&
			    id >= 0) {
				out[n].id = id;
				jstrcpy(out[n].name, sizeof(out[n].name), name);
				n++;
			}
		}
		p = eol ? eol + 1 : NULL;
	}
	return n;
}

int jetson_parse_pmode(const char *text, long long *id)
{
	const char *p = strstr(text, "pmode:");
	char num[16];
	size_t n;

	if (!p)
		return -EINVAL;
	p += 6;
	n = strspn(p, "0123456789");
	if (!n || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, p, n);
	num[n] = '\0';
	return jfs_parse_ll(num, id);
}

static void load_modes(struct jetson_reader *r)
{
	/* the conf can be long (many PARAM blocks); read it through stdio */
	char path[PATH_MAX + 32], canon[PATH_MAX];
	FILE *f;
	char *text;
	size_t len;

	r->nmodes = 0;
	if (jfs_resolve(&r->fs, "etc/nvpmodel.conf", false, canon, sizeof(canon)))
		return;
	if (jfs_path(path, sizeof(path), "%s/%s", r->fs.root, canon))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	text = calloc(1, 1 << 20);
	if (text) {
		len = fread(text, 1, (1 << 20) - 1, f);
		text[len] = '\0';
		r->nmodes = jetson_parse_nvpmodel_conf(text, r->modes, JETSON_MAX_MODES);
		free(text);
	}
	fclose(f);
}

int jetson_reader_open(struct jetson_reader **out, const struct jetson_reader_opts *opts)
{
	struct jetson_reader *r = calloc(1, sizeof(*r));
	int err;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	err = jfs_open(&r->fs, opts ? opts->sysfs_root : NULL);
	if (err) {
		log_error("jetson: cannot open sysfs root %s: %s",
			  opts && opts->sysfs_root ? opts->sysfs_root : "/", strerror(-err));
		free(r);
		return err;
	}
	r->fs.deny_debugfs = opts && opts->deny_debugfs;
	jetson_detect_fs(&r->fs, &r->board);
	r->emc_rate_idx = r->emc_act_idx = -1;
	if (r->board.is_jetson) {
		probe_gpu(r);
		probe_rails(r);
		probe_hwmon(r);
		load_modes(r);
	}
	/* zones exist on every Linux box; the snapshot shows them even off-Jetson */
	probe_thermal(r);
	*out = r;
	return 0;
}

void jetson_reader_close(struct jetson_reader *r)
{
	if (!r)
		return;
	jfs_close(&r->fs);
	free(r);
}

const struct jetson_board *jetson_reader_board(const struct jetson_reader *r)
{
	return &r->board;
}

static const char *const emc_rate_paths[] = {
	"sys/kernel/debug/bpmp/debug/clk/emc/rate",   /* t186/t194/t234 */
	"sys/kernel/debug/clk/override.emc/clk_rate", /* t210 */
	"sys/kernel/debug/clk/emc/clk_rate",	      /* t210 fallback */
	"sys/class/devfreq/bwmgr/cur_freq",	      /* t264 Thor */
};
static const char *const emc_act_paths[] = {
	"sys/kernel/actmon_avg_activity/mc_all",		  /* JP4/JP5 */
	"sys/kernel/debug/cactmon/mc_all",			  /* JP6 */
	"sys/kernel/debug/bpmp/debug/actmon/mc_all_avg_activity", /* JP7 */
};

static bool denied(int err)
{
	return err == -EACCES || err == -EPERM;
}

static struct jetson_val read_first(struct jetson_reader *r, const char *const *paths, size_t n,
				    int *idx, bool *was_denied)
{
	struct jetson_val v = { .err = -ENOENT };
	size_t start = *idx >= 0 ? (size_t)*idx : 0;

	for (size_t k = 0; k < n; k++) {
		size_t i = (start + k) % n;
		long long x;
		int err = jfs_read_ll(&r->fs, paths[i], &x);

		if (!err) {
			if (x < 0 || x > JR_MAX_HZ) {
				v.err = -ERANGE;
				continue;
			}
			*idx = (int)i;
			v.ok = true;
			v.err = 0;
			v.v = x;
			return v;
		}
		if (denied(err)) {
			*was_denied = true;
			v.err = err;
		} else if (v.err == -ENOENT) {
			v.err = err;
		}
	}
	*idx = -1;
	return v;
}

static void sample_gpu(struct jetson_reader *r, struct jetson_gpu *g)
{
	memset(g, 0, sizeof(*g));
	if (r->reprobe_gpu || !r->gpu_found) {
		probe_gpu(r);
		r->reprobe_gpu = false;
	}
	if (!r->gpu_found)
		return;
	g->present = true;
	jstrcpy(g->devfreq, sizeof(g->devfreq), r->gpu_name);
	jstrcpy(g->of_node_name, sizeof(g->of_node_name), r->gpu_of_node);
	read_str(&r->fs, r->gpu_devfreq, "governor", g->governor, sizeof(g->governor));
	g->cur_hz = read_val(&r->fs, r->gpu_devfreq, "cur_freq", 0, JR_MAX_HZ);
	g->min_hz = read_val(&r->fs, r->gpu_devfreq, "min_freq", 0, JR_MAX_HZ);
	g->max_hz = read_val(&r->fs, r->gpu_devfreq, "max_freq", 0, JR_MAX_HZ);
	if (r->gpu_dev[0])
		g->load_permille = read_val(&r->fs, r->gpu_dev, "load", 0, 1000);
	else
		g->load_permille.err = -ENOENT;
	if ((gone(g->cur_hz.err) && dir_lost(&r->fs, r->gpu_devfreq)) ||
	    (r->gpu_dev[0] && gone(g->load_permille.err) && dir_lost(&r->fs, r->gpu_dev)))
		r->reprobe_gpu = true;
}

static void sample_rails(struct jetson_reader *r, struct jetson_snapshot *s)
{
	long long sum = 0;
	bool all_ok = true;

	if (r->reprobe_rails) {
		probe_rails(r);
		r->reprobe_rails = false;
	}
	s->nrails = r->nrails;
	s->total_rail = -1;
	for (size_t i = 0; i < r->nrails; i++) {
		const struct jr_rail *src = &r->rails[i];
		struct jetson_rail *d = &s->rails[i];
		char f[40];

		memset(d, 0, sizeof(*d));
		jstrcpy(d->name, sizeof(d->name), src->name);
		jstrcpy(d->device, sizeof(d->device), src->device);
		d->channel = src->channel;
		d->layout = src->layout;
		if (src->layout == JETSON_RAIL_HWMON) {
			snprintf(f, sizeof(f), "in%d_input", src->channel);
			d->mv = read_val(&r->fs, src->dir, f, 0, JR_MAX_MV);
			snprintf(f, sizeof(f), "curr%d_input", src->channel);
			d->ma = read_val(&r->fs, src->dir, f, 0, JR_MAX_MA);
			if (d->mv.ok && d->ma.ok) {
				d->power_uw.ok = true;
				d->power_uw.v = d->mv.v * d->ma.v;
			} else {
				d->power_uw.err = d->mv.ok ? d->ma.err : d->mv.err;
			}
		} else {
			struct jetson_val p;
			snprintf(f, sizeof(f), "in_voltage%d_input", src->channel);
			d->mv = read_val(&r->fs, src->dir, f, 0, JR_MAX_MV);
			snprintf(f, sizeof(f), "in_current%d_input", src->channel);
			d->ma = read_val(&r->fs, src->dir, f, 0, JR_MAX_MA);
			snprintf(f, sizeof(f), "in_power%d_input", src->channel);
			p = read_val(&r->fs, src->dir, f, 0, JR_MAX_MV * JR_MAX_MA / 1000);
			d->power_uw = p;
			if (p.ok)
				d->power_uw.v = p.v * 1000;
		}
		if (gone(d->power_uw.err) && dir_lost(&r->fs, src->dir))
			r->reprobe_rails = true;
		if (s->total_rail < 0 &&
		    (!strcmp(d->name, "VDD_IN") || !strcmp(d->name, "POM_5V_IN")))
			s->total_rail = (int)i;
		if (d->power_uw.ok)
			sum += d->power_uw.v;
		else
			all_ok = false;
	}
	memset(&s->total_uw, 0, sizeof(s->total_uw));
	if (s->total_rail >= 0) {
		s->total_uw = s->rails[s->total_rail].power_uw;
	} else if (r->nrails == 0) {
		s->total_uw.err = -ENOENT;
	} else if (all_ok) {
		s->total_uw.ok = true;
		s->total_uw.v = sum;
	} else {
		s->total_uw.err = -ENODATA; /* a partial sum would understate power */
	}
}

static void sample_thermal(struct jetson_reader *r, struct jetson_snapshot *s)
{
	bool lost = false;

	if (r->reprobe_thermal) {
		probe_thermal(r);
		r->reprobe_thermal = false;
	}
	s->nzones = r->nzones;
	for (size_t i = 0; i < r->nzones; i++) {
		const struct jr_node *src = &r->zones[i];
		struct jetson_zone *z = &s->zones[i];
		struct jetson_val t;

		memset(z, 0, sizeof(*z));
		jstrcpy(z->type, sizeof(z->type), src->type);
		jstrcpy(z->node, sizeof(z->node), src->node);
		z->ntrips = src->ntrips;
		memcpy(z->trips, src->trips, sizeof(z->trips));
		t = read_val(&r->fs, src->dir, "temp", -JR_MAX_MC, JR_MAX_MC);
		if (!t.ok) {
			z->state = JETSON_ZONE_UNAVAILABLE;
			z->err = t.err;
			if (gone(t.err) && dir_lost(&r->fs, src->dir))
				lost = true;
		} else if (t.v == JETSON_TEMP_OFFLINE_MC) {
			z->state = JETSON_ZONE_OFFLINE;
			z->temp_mc = t.v;
		} else {
			z->state = JETSON_ZONE_OK;
			z->temp_mc = t.v;
		}
	}
	s->ncooling = r->ncool;
	for (size_t i = 0; i < r->ncool; i++) {
		const struct jr_node *src = &r->cool[i];
		struct jetson_cooling *c = &s->cooling[i];

		memset(c, 0, sizeof(*c));
		jstrcpy(c->type, sizeof(c->type), src->type);
		jstrcpy(c->node, sizeof(c->node), src->node);
		c->cur_state = read_val(&r->fs, src->dir, "cur_state", 0, 1LL << 40);
		c->max_state = read_val(&r->fs, src->dir, "max_state", 0, 1LL << 40);
		if (gone(c->cur_state.err) && dir_lost(&r->fs, src->dir))
			lost = true;
	}
	if (lost)
		r->reprobe_thermal = true;
}

static struct jetson_val read_file_val(const struct jfs *fs, const char *path, long long lo,
				       long long hi)
{
	struct jetson_val v = { 0 };
	long long x;
	int err = jfs_read_ll(fs, path, &x);

	if (err)
		v.err = err;
	else if (x < lo || x > hi)
		v.err = -ERANGE;
	else {
		v.ok = true;
		v.v = x;
	}
	return v;
}

static void sample_hwmon(struct jetson_reader *r, struct jetson_snapshot *s)
{
	bool lost = false;

	if (r->reprobe_hwmon) {
		probe_hwmon(r);
		r->reprobe_hwmon = false;
	}
	s->nfans = r->nfans;
	for (size_t i = 0; i < r->nfans; i++) {
		struct jetson_fan *f = &s->fans[i];

		memset(f, 0, sizeof(*f));
		jstrcpy(f->source, sizeof(f->source), r->fans[i].source);
		f->pwm = read_file_val(&r->fs, r->fans[i].pwm, 0, 255);
		if (!f->pwm.ok && !strcmp(r->fans[i].source, "pwm-fan")) {
			char alt[JR_PATH + 16];
			jstrcpy(alt, sizeof(alt), r->fans[i].pwm);
			char *slash = strrchr(alt, '/');
			if (slash) {
				strcpy(slash + 1, "cur_pwm");
				f->pwm = read_file_val(&r->fs, alt, 0, 255);
			}
		}
		if (r->fans[i].rpm[0])
			f->rpm = read_file_val(&r->fs, r->fans[i].rpm, 0, 1000000);
		else
			f->rpm.err = -ENOENT;
		if (gone(f->pwm.err))
			lost = true;
	}
	s->noc = 0;
	if (r->oc_dir[0]) {
		for (int k = 1; k <= JETSON_MAX_OC; k++) {
			char file[32];
			struct jetson_val v;

			snprintf(file, sizeof(file), "oc%d_event_cnt", k);
			v = read_val(&r->fs, r->oc_dir, file, 0, 1LL << 62);
			if (!v.ok && gone(v.err))
				break;
			s->oc_event_cnt[s->noc++] = v;
		}
		if (s->noc == 0 && dir_lost(&r->fs, r->oc_dir))
			lost = true;
	}
	if (lost)
		r->reprobe_hwmon = true;
}

static void sample_emc(struct jetson_reader *r, struct jetson_snapshot *s)
{
	bool den = false;

	s->emc_hz = read_first(r, emc_rate_paths,
			       sizeof(emc_rate_paths) / sizeof(emc_rate_paths[0]), &r->emc_rate_idx,
			       &den);
	s->emc_mc_all = read_first(r, emc_act_paths,
				   sizeof(emc_act_paths) / sizeof(emc_act_paths[0]),
				   &r->emc_act_idx, &den);
	s->debugfs_denied = den;
	if (den && !r->told_root) {
		r->told_root = true;
		log_info("jetson: EMC frequency/utilisation live in debugfs (/sys/kernel/debug) "
			 "and need root; reporting them as unavailable");
	}
}

static void sample_power_mode(struct jetson_reader *r, struct jetson_snapshot *s)
{
	char buf[128];
	long long id;
	int err;

	s->power_mode_name[0] = '\0';
	memset(&s->power_mode_id, 0, sizeof(s->power_mode_id));
	err = jfs_read(&r->fs, "var/lib/nvpmodel/status", buf, sizeof(buf));
	if (err >= 0)
		err = jetson_parse_pmode(buf, &id);
	if (err >= 0 && (id < 0 || id > 1000))
		err = -ERANGE;
	if (err < 0) {
		s->power_mode_id.err = err;
		return;
	}
	s->power_mode_id.ok = true;
	s->power_mode_id.v = id;
	for (size_t i = 0; i < r->nmodes; i++)
		if (r->modes[i].id == id)
			jstrcpy_printable(s->power_mode_name, sizeof(s->power_mode_name),
					  r->modes[i].name);
}

int jetson_reader_sample(struct jetson_reader *r, struct jetson_snapshot *s)
{
	memset(s, 0, sizeof(*s));
	s->board = r->board;
	s->total_rail = -1;
	if (r->board.is_jetson) {
		sample_gpu(r, &s->gpu);
		sample_rails(r, s);
		sample_hwmon(r, s);
		sample_emc(r, s);
		sample_power_mode(r, s);
	} else {
		s->total_uw.err = -ENODEV;
		s->emc_hz.err = s->emc_mc_all.err = -ENODEV;
		s->power_mode_id.err = -ENODEV;
	}
	sample_thermal(r, s);
	s->mono_ns = mono_ns();
	return 0;
}

/* ---- throttling ---- */

const char *jetson_throttle_kind_name(enum jetson_throttle_kind k)
{
	switch (k) {
	case JETSON_THR_GPU_BUSY_BELOW_MAX:
		return "gpu_busy_below_max_freq";
	case JETSON_THR_ZONE_TRIP:
		return "zone_trip";
	case JETSON_THR_COOLING_ALERT:
		return "cooling_alert";
	}
	return "unknown";
}

static bool throttle_trip(const char *type)
{
	/* active trips are fan steps, not throttling */
	return !strcmp(type, "passive") || !strcmp(type, "hot") || !strcmp(type, "critical");
}

static bool alert_cdev(const char *type)
{
	size_t n = strlen(type), sfx = strlen("-throttle-alert");

	return (n >= sfx && !strcmp(type + n - sfx, "-throttle-alert")) ||
	       !strcmp(type, "hot-surface-alert");
}

size_t jetson_throttle_signals(const struct jetson_snapshot *s, struct jetson_throttle_signal *out,
			       size_t max)
{
	size_t n = 0;

#define PUSH(...)                                                    \
	do {                                                         \
		if (n < max) {                                       \
			struct jetson_throttle_signal *sg = &out[n]; \
			memset(sg, 0, sizeof(*sg));                  \
			__VA_ARGS__;                                 \
		}                                                    \
		n++;                                                 \
	} while (0)

	if (!s->board.is_jetson)
		return 0;
	for (size_t i = 0; i < s->nzones; i++) {
		const struct jetson_zone *z = &s->zones[i];
		const struct jetson_trip *worst = NULL;

		if (z->state != JETSON_ZONE_OK || !strcmp(z->type, "PMIC-Die"))
			continue;
		for (size_t k = 0; k < z->ntrips; k++) {
			const struct jetson_trip *t = &z->trips[k];
			if (throttle_trip(t->type) && z->temp_mc >= t->temp_mc &&
			    (!worst || t->temp_mc > worst->temp_mc))
				worst = t;
		}
		if (worst)
			PUSH(sg->kind = JETSON_THR_ZONE_TRIP;
			     jstrcpy(sg->source, sizeof(sg->source), z->type);
			     sg->value = z->temp_mc; sg->limit = worst->temp_mc;
			     snprintf(sg->detail, sizeof(sg->detail), "%s %.3f C >= %s trip %.3f C",
				      z->type, jetson_c(z->temp_mc), worst->type,
				      jetson_c(worst->temp_mc)));
	}
	for (size_t i = 0; i < s->ncooling; i++) {
		const struct jetson_cooling *c = &s->cooling[i];

		if (alert_cdev(c->type) && c->cur_state.ok && c->cur_state.v > 0)
			PUSH(sg->kind = JETSON_THR_COOLING_ALERT;
			     jstrcpy(sg->source, sizeof(sg->source), c->type);
			     sg->value = c->cur_state.v;
			     snprintf(sg->detail, sizeof(sg->detail), "%s %s cur_state=%lld",
				      c->node, c->type, c->cur_state.v));
	}
	if (s->gpu.present && s->gpu.load_permille.ok && s->gpu.cur_hz.ok && s->gpu.max_hz.ok &&
	    s->gpu.load_permille.v >= JETSON_GPU_BUSY_PERMILLE && s->gpu.cur_hz.v < s->gpu.max_hz.v)
		PUSH(sg->kind = JETSON_THR_GPU_BUSY_BELOW_MAX;
		     snprintf(sg->source, sizeof(sg->source), "gpu");
		     sg->value = s->gpu.load_permille.v; sg->limit = s->gpu.max_hz.v;
		     snprintf(sg->detail, sizeof(sg->detail),
			      "GPU load %.1f %% at %.2f MHz while max_freq is %.2f MHz",
			      s->gpu.load_permille.v / 10.0, jetson_mhz(s->gpu.cur_hz.v),
			      jetson_mhz(s->gpu.max_hz.v)));
#undef PUSH
	return n;
}

int jetson_snapshot_throttled(const struct jetson_snapshot *s)
{
	if (!s->board.is_jetson)
		return -1;
	return jetson_throttle_signals(s, NULL, 0) > 0;
}
