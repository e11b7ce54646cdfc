// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `ebpf-prof jetson`: show what the Jetson module sees, as a table or JSON. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jetson/jetson.h"
#include "jetson/jetson_fs.h"
#include "jetson/jetson_internal.h"
#include "util/log.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ebpf-prof jetson [--sysfs-root DIR] [--json] [--interval MS --count N]\n"
		"       ebpf-prof jetson --parse-tegrastats FILE|-\n"
		"\n"
		"Prints everything the Jetson module reads (GPU load/clocks, INA3221 rails,\n"
		"thermal zones and trips, cooling devices, fan, EMC, nvpmodel power mode,\n"
		"throttling evidence) once, or N times every MS milliseconds.\n"
		"\n"
		"  --sysfs-root DIR        read every path relative to DIR (default /)\n"
		"  --json                  JSON output (one object per line when --count > 1)\n"
		"  --interval MS           period between snapshots (default %d)\n"
		"  --count N               number of snapshots (default 1)\n"
		"  --no-debugfs            behave as a non-root user for debugfs (EMC)\n"
		"  --parse-tegrastats F    parse tegrastats lines from F ('-' = stdin) and\n"
		"                          print one JSON object per line\n"
		"  -v                      verbose\n"
		"  -h, --help              this help\n",
		JETSON_DEFAULT_INTERVAL_MS);
}

static int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	long long v;

	if (jfs_parse_ll(s, &v) || v < 0 || (unsigned long long)v > max)
		return -EINVAL;
	*out = (unsigned long long)v;
	return 0;
}

static void print_val_ll(const char *fmt, const struct jetson_val *v)
{
	if (v->ok)
		printf(fmt, v->v);
	else
		printf("n/a (%s)", strerror(-v->err));
}

static void print_table(const struct jetson_snapshot *s)
{
	const struct jetson_board *b = &s->board;
	struct jetson_throttle_signal sig[JETSON_MAX_SIGNALS];
	size_t nsig;

	if (!b->is_jetson) {
		printf("not a Jetson: %s\n", b->why);
	} else {
		printf("board      %s (%s, L4T %s)\n", b->model[0] ? b->model : "?",
		       b->soc[0] ? b->soc : "?", b->l4t[0] ? b->l4t : "?");
		if (s->power_mode_id.ok)
			printf("power mode %lld %s\n", s->power_mode_id.v,
			       s->power_mode_name[0] ? s->power_mode_name : "(name unknown)");
		if (s->gpu.present) {
			printf("gpu        %s (of_node %s, governor %s)\n", s->gpu.devfreq,
			       s->gpu.of_node_name[0] ? s->gpu.of_node_name : "-",
			       s->gpu.governor[0] ? s->gpu.governor : "-");
			printf("  load     ");
			if (s->gpu.load_permille.ok)
				printf("%.1f %%\n", s->gpu.load_permille.v / 10.0);
			else
				printf("n/a (%s)\n", strerror(-s->gpu.load_permille.err));
			printf("  freq     ");
			if (s->gpu.cur_hz.ok)
				printf("%.2f MHz", jetson_mhz(s->gpu.cur_hz.v));
			else
				printf("n/a");
			if (s->gpu.min_hz.ok && s->gpu.max_hz.ok)
				printf(" (min %.2f, max %.2f)", jetson_mhz(s->gpu.min_hz.v),
				       jetson_mhz(s->gpu.max_hz.v));
			printf("\n");
		} else {
			printf("gpu        not found in sys/class/devfreq\n");
		}
		printf("emc        ");
		if (s->emc_hz.ok)
			printf("%.1f MHz", jetson_mhz(s->emc_hz.v));
		else
			printf("n/a (%s)",
			       s->emc_hz.err == -EACCES ? "needs root" : strerror(-s->emc_hz.err));
		if (s->emc_hz.ok && s->emc_mc_all.ok)
			printf(", util %.1f %%", jetson_emc_util_pct(s->emc_mc_all.v, s->emc_hz.v));
		printf("\n");
		for (size_t i = 0; i < s->nrails; i++) {
			const struct jetson_rail *r = &s->rails[i];
			printf("rail       %-18s ", r->name);
			if (r->power_uw.ok)
				printf("%10.3f mW", jetson_mw(r->power_uw.v));
			else
				printf("n/a (%s)", strerror(-r->power_uw.err));
			if (r->mv.ok && r->ma.ok)
				printf("  (%lld mV x %lld mA)", r->mv.v, r->ma.v);
			printf("\n");
		}
		if (s->total_uw.ok)
			printf("total      %.3f mW%s\n", jetson_mw(s->total_uw.v),
			       s->total_rail >= 0 ? "" : " (sum of rails)");
		for (size_t i = 0; i < s->nfans; i++) {
			printf("fan        %s pwm ", s->fans[i].source);
			print_val_ll("%lld", &s->fans[i].pwm);
			if (s->fans[i].pwm.ok)
				printf(" (%.1f %%)", jetson_fan_pct(s->fans[i].pwm.v));
			printf(" rpm ");
			print_val_ll("%lld", &s->fans[i].rpm);
			printf("\n");
		}
	}
	for (size_t i = 0; i < s->nzones; i++) {
		const struct jetson_zone *z = &s->zones[i];
		printf("zone       %-18s ", z->type);
		if (z->state == JETSON_ZONE_OK)
			printf("%8.3f C", jetson_c(z->temp_mc));
		else if (z->state == JETSON_ZONE_OFFLINE)
			printf("offline (-256 C)");
		else
			printf("unavailable (%s)", strerror(-z->err));
		for (size_t k = 0; k < z->ntrips; k++)
			printf("%s%s %.1f", k ? ", " : "  trips: ", z->trips[k].type,
			       jetson_c(z->trips[k].temp_mc));
		printf("\n");
	}
	for (size_t i = 0; i < s->ncooling; i++) {
		printf("cooling    %-18s cur_state ", s->cooling[i].type);
		print_val_ll("%lld", &s->cooling[i].cur_state);
		printf("\n");
	}
	if (b->is_jetson) {
		nsig = jetson_throttle_signals(s, sig, JETSON_MAX_SIGNALS);
		printf("throttled  %s\n", nsig ? "yes" : "no");
		for (size_t i = 0; i < nsig && i < JETSON_MAX_SIGNALS; i++)
			printf("  - %s\n", sig[i].detail);
		if (s->debugfs_denied)
			printf("note       EMC needs root (debugfs)\n");
	}
}

static int parse_tegrastats(const char *file)
{
	FILE *f = strcmp(file, "-") ? fopen(file, "re") : stdin;
	char *line = malloc(JETSON_TEGRASTATS_LINE_MAX);
	int n, rc = 0;

	if (!f || !line) {
		log_error("cannot open %s: %s", file, strerror(f ? ENOMEM : errno));
		free(line);
		if (f && f != stdin)
			fclose(f);
		return 1;
	}
	while ((n = jetson_tegrastats_read_line(f, line, JETSON_TEGRASTATS_LINE_MAX)) != -1) {
		cJSON *o;
		char *txt;

		if (n == -E2BIG) {
			log_error("%s: a line longer than %d bytes: not tegrastats output", file,
				  JETSON_TEGRASTATS_LINE_MAX - 1);
			rc = 1;
			break;
		}
		o = jetson_tegrastats_parse_line(line);
		if (!o)
			continue;
		txt = cJSON_PrintUnformatted(o);
		if (txt) {
			puts(txt);
			free(txt);
		} else {
			rc = 1;
		}
		cJSON_Delete(o);
	}
	if (ferror(f)) {
		log_error("cannot read %s: %s", file, strerror(errno));
		rc = 1;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return rc;
}

int jetson_cmd_main(int argc, char **argv)
{
	const char *root = "/", *tegra = NULL;
	unsigned long long interval = JETSON_DEFAULT_INTERVAL_MS, count = 1;
	bool json = false, no_debugfs = false, interval_set = false;
	struct jetson_reader_opts ro = { 0 };
	struct jetson_reader *r;
	struct jetson_snapshot *s;
	struct timespec next;
	int err;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool has_next = i + 1 < argc;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--json")) {
			json = true;
		} else if (!strcmp(a, "--no-debugfs")) {
			no_debugfs = true;
		} else if (!strcmp(a, "-v")) {
			if (log_get_level() < LOG_INFO)
				log_set_level(LOG_INFO);
		} else if (!strcmp(a, "--sysfs-root") && has_next) {
			root = argv[++i];
		} else if (!strcmp(a, "--parse-tegrastats") && has_next) {
			tegra = argv[++i];
		} else if (!strcmp(a, "--interval") && has_next) {
			if (parse_uint(argv[++i], 3600000, &interval) ||
			    interval < JETSON_MIN_INTERVAL_MS) {
				fprintf(stderr,
					"jetson: --interval wants %d..3600000 ms, got '%s'\n",
					JETSON_MIN_INTERVAL_MS, argv[i]);
				return 2;
			}
			interval_set = true;
		} else if (!strcmp(a, "--count") && has_next) {
			if (parse_uint(argv[++i], 1000000, &count) || count == 0) {
				fprintf(stderr, "jetson: --count wants 1..1000000, got '%s'\n",
					argv[i]);
				return 2;
			}
		} else {
			fprintf(stderr, "jetson: unknown or incomplete option '%s'\n", a);
			usage(stderr);
			return 2;
		}
	}
	(void)interval_set;
	if (tegra)
		return parse_tegrastats(tegra);

	ro.sysfs_root = root;
	ro.deny_debugfs = no_debugfs;
	err = jetson_reader_open(&r, &ro);
	if (err)
		return 1;
	if (!jetson_reader_board(r)->is_jetson)
		log_info("jetson: not a Jetson (%s)", jetson_reader_board(r)->why);
	s = malloc(sizeof(*s));
	if (!s) {
		jetson_reader_close(r);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (unsigned long long k = 0; k < count; k++) {
		if (k) {
			next.tv_nsec += (long)(interval % 1000) * 1000000L;
			next.tv_sec += (time_t)(interval / 1000);
			if (next.tv_nsec >= 1000000000L) {
				next.tv_nsec -= 1000000000L;
				next.tv_sec++;
			}
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) ==
			       EINTR)
				;
		}
		jetson_reader_sample(r, s);
		if (json) {
			cJSON *o = jetson_snapshot_json(s);
			char *txt = o ? (count > 1 ? cJSON_PrintUnformatted(o) : cJSON_Print(o))
				      : NULL;
			cJSON_Delete(o);
			if (!txt) {
				err = -ENOMEM;
				break;
			}
			puts(txt);
			free(txt);
		} else {
			if (k)
				printf("\n");
			print_table(s);
		}
		fflush(stdout);
	}
	free(s);
	jetson_reader_close(r);
	return err ? 1 : 0;
}
