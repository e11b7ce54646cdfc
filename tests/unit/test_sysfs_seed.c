// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sysfs seeding against fake trees: tests/fixtures/sysfs (values stated in its
 * README and below) and the shared Jetson fixtures (oracle: expected/NAME.json). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "sysmon/sysfs_seed.h"
#include "sysmon/throttle.h"

static char *path_of(const char *env, const char *rel)
{
	const char *base = getenv(env);
	char *p = NULL;

	if (!base)
		return NULL;
	if (asprintf(&p, "%s/%s", base, rel) < 0)
		return NULL;
	return p;
}

static const struct seed_cpu *cpu_of(const struct sysfs_seed *s, int cpu)
{
	for (size_t i = 0; i < s->ncpus; i++)
		if (s->cpus[i].cpu == cpu)
			return &s->cpus[i];
	return NULL;
}

static const struct seed_zone *zone_by_type(const struct sysfs_seed *s, const char *type)
{
	for (size_t i = 0; i < s->nzones; i++)
		if (!strcmp(s->zones[i].type, type))
			return &s->zones[i];
	return NULL;
}

static void test_x86_tree(void)
{
	char *root = path_of("EP_SOURCE_DIR", "tests/fixtures/sysfs/x86-4cpu");
	struct sysfs_seed s;
	const struct seed_cpu *c;
	const struct seed_zone *z;

	CHECK(root != NULL);
	if (!root)
		return;
	CHECK_INT_EQ(sysfs_seed_read(root, &s), 0);
	CHECK_INT_EQ(s.ncpus, 4);   /* cpu0-3; cpufoo, cpufreq, cpuidle are not CPUs */
	CHECK_INT_EQ(s.skipped, 1); /* cpu99999999: beyond SEED_MAX_CPUS */
	CHECK(s.cpufreq_available);
	CHECK(s.throttle_counters_available);
	c = cpu_of(&s, 1); /* through the policy0 symlink */
	CHECK(c && c->has_cpufreq && c->cur_khz.ok && c->cur_khz.v == 3500000);
	CHECK(c && c->hw_max_khz.ok && c->hw_max_khz.v == 3600000);
	CHECK(c && c->min_khz.ok && c->min_khz.v == 800000);
	CHECK(c && !strcmp(c->governor, "schedutil") && !strcmp(c->driver, "acpi-cpufreq"));
	c = cpu_of(&s, 2);
	CHECK(c && !c->cur_khz.ok && c->cur_khz.err == -EINVAL); /* "abc" */
	CHECK(c && c->max_khz.ok);
	c = cpu_of(&s, 3);
	CHECK(c && !c->max_khz.ok && c->max_khz.err == -ERANGE); /* > 100 GHz */
	CHECK(c && c->cur_khz.ok && c->cur_khz.v == 1200000);
	CHECK(c && c->counters[SEED_CORE_THROTTLE].ok && c->counters[SEED_CORE_THROTTLE].v == 30);
	CHECK(c && c->counters[SEED_PKG_PL].ok && c->counters[SEED_PKG_PL].v == 3);

	CHECK(s.thermal_available);
	CHECK_INT_EQ(s.nzones, 2);
	z = zone_by_type(&s, "x86_pkg_temp");
	CHECK(z && z->id == 0 && z->temp_mc.ok && z->temp_mc.v == 71000);
	CHECK(z && z->ntrips == 2);
	if (z && z->ntrips == 2) {
		CHECK_INT_EQ(z->trips[0].temp_mc.v, 95000);
		CHECK_INT_EQ(z->trips[0].ttype, THR_TRIP_PASSIVE);
		CHECK_INT_EQ(z->trips[1].ttype, THR_TRIP_CRITICAL);
		CHECK(!z->trips[1].hyst_mc.ok); /* no hyst file */
	}
	z = zone_by_type(&s, "acpitz");
	CHECK(z && !z->temp_mc.ok && z->temp_mc.err == -ENOENT); /* dangling symlink */
	CHECK(z && z->ntrips == 2);
	if (z && z->ntrips == 2) {
		CHECK(!z->trips[0].temp_mc.ok); /* a directory where a file should be */
		CHECK(z->trips[1].temp_mc.ok && z->trips[1].hyst_mc.v == 5000);
	}
	CHECK_INT_EQ(s.ncdevs, 3);
	if (s.ncdevs == 3) {
		CHECK_STR_EQ(s.cdevs[0].type, "Processor");
		CHECK(s.cdevs[1].cur_state.ok && s.cdevs[1].cur_state.v == 2);
		CHECK(!s.cdevs[2].cur_state.ok && s.cdevs[2].type[0] == '\0'); /* dangling */
	}

	/* Seed events: a 71 C zone under a 95 C trip, CPUs at their policy max
	 * or idle-unknown, a fan: nothing throttles; busy data is missing so
	 * the CPU side is not judged, the thermal side is. */
	struct thr_event *ev = NULL;
	size_t n = 0, cap = 0;
	struct thr_result r;
	struct thr_opts o = { .start_ns = 1000, .end_ns = 2000 };

	CHECK(sysfs_seed_to_events(&s, 0, &ev, &n, &cap) > 0);
	CHECK_INT_EQ(throttle_analyze(ev, n, &o, &r), 0);
	CHECK_INT_EQ(r.nepisodes, 0);
	CHECK(r.inputs & THR_IN_ZONES);
	CHECK(r.inputs & THR_IN_FREQ);
	CHECK(!(r.inputs & THR_IN_BUSY));
	throttle_result_free(&r);

	/* Counters re-read later and risen: a throttle between the readings. */
	s.cpus[0].counters[SEED_CORE_THROTTLE].v += 4;
	CHECK(sysfs_seed_counters_to_events(&s, 1500, &ev, &n, &cap) == 16);
	CHECK_INT_EQ(throttle_analyze(ev, n, &o, &r), 0);
	CHECK_INT_EQ(r.nepisodes, 1);
	if (r.nepisodes == 1) {
		CHECK_INT_EQ(r.episodes[0].start_ns, 1000);
		CHECK_INT_EQ(r.episodes[0].end_ns, 1500);
		CHECK_INT_EQ(r.episodes[0].causes, THR_CAUSE_HW_THERMAL);
	}
	throttle_result_free(&r);
	/* The re-read restores the file's value. */
	CHECK_INT_EQ(sysfs_seed_read_counters(root, &s), 0);
	CHECK_INT_EQ(s.cpus[0].counters[SEED_CORE_THROTTLE].v, 0);
	free(ev);
	sysfs_seed_free(&s);
	free(root);
}

static void test_vm_tree(void)
{
	char *root = path_of("EP_SOURCE_DIR", "tests/fixtures/sysfs/vm-none");
	struct sysfs_seed s;
	struct thr_event *ev = NULL;
	size_t n = 0, cap = 0;

	if (!root)
		return;
	CHECK_INT_EQ(sysfs_seed_read(root, &s), 0);
	CHECK_INT_EQ(s.ncpus, 2);
	CHECK(!s.cpufreq_available);
	CHECK(!s.thermal_available);
	CHECK(!s.throttle_counters_available);
	CHECK(s.ncpus == 2 && !s.cpus[0].has_cpufreq && !s.cpus[0].cur_khz.ok);
	CHECK_INT_EQ(sysfs_seed_to_events(&s, 0, &ev, &n, &cap), 0);
	free(ev);
	sysfs_seed_free(&s);
	free(root);

	CHECK_INT_EQ(sysfs_seed_read("/nonexistent/ep-root", &s), -ENOENT);
	sysfs_seed_free(&s);
}

/* Jetson trees: zone temperatures against the oracle's temps_c, powered-down
 * zones unreadable, and the throttled board judged throttled by the gpu trip
 * and the gpu-throttle-alert cooling device, as the oracle says. */
static void test_jetson_tree(const char *name, bool throttled)
{
	char *root = path_of("EP_SHARED_DIR", "fixtures/jetson");
	char *tree = NULL, *exp = NULL, *text = NULL;
	struct sysfs_seed s;
	cJSON *j = NULL, *temps, *t;
	FILE *f;
	long len;

	if (!root) {
		fprintf(stderr, "EP_SHARED_DIR not set\n");
		CHECK(0);
		return;
	}
	if (asprintf(&tree, "%s/%s", root, name) < 0 ||
	    asprintf(&exp, "%s/expected/%s.json", root, name) < 0)
		exit(2);
	f = fopen(exp, "rb");
	CHECK(f != NULL);
	if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
		text = calloc(1, (size_t)len + 1);
		if (text && fread(text, 1, (size_t)len, f) == (size_t)len)
			j = cJSON_Parse(text);
	}
	if (f)
		fclose(f);
	CHECK(j != NULL);
	CHECK_INT_EQ(sysfs_seed_read(tree, &s), 0);
	CHECK(!s.cpufreq_available); /* the fixtures carry no cpufreq */
	temps = cJSON_GetObjectItem(j, "temps_c");
	int ncmp = 0;

	cJSON_ArrayForEach(t, temps)
	{
		const struct seed_zone *z = zone_by_type(&s, t->string);

		CHECK(z && z->temp_mc.ok);
		if (z && z->temp_mc.ok)
			CHECK_NEAR(z->temp_mc.v / 1000.0, t->valuedouble, 1e-9);
		ncmp++;
	}
	CHECK(ncmp >= 2);
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(j, "unreadable_zones"))
	{
		const struct seed_zone *z = zone_by_type(&s, t->valuestring);

		CHECK(z && !z->temp_mc.ok);
	}

	struct thr_event *ev = NULL;
	size_t n = 0, cap = 0;
	struct thr_result r;
	struct thr_opts o = { .start_ns = 0, .end_ns = 1000000000 };

	CHECK(sysfs_seed_to_events(&s, 0, &ev, &n, &cap) > 0);
	CHECK_INT_EQ(throttle_analyze(ev, n, &o, &r), 0);
	if (throttled) {
		bool gpu_zone = false, alert = false;

		CHECK_INT_EQ(r.nepisodes, 1);
		CHECK(r.causes & THR_CAUSE_THERMAL_TRIP);
		CHECK(r.causes & THR_CAUSE_COOLING);
		for (size_t i = 0; r.nepisodes && i < r.episodes[0].naffected; i++) {
			const struct thr_entity *e = &r.episodes[0].affected[i];

			gpu_zone |= e->kind == THR_ENT_ZONE && !strcmp(e->name, "gpu-thermal");
			alert |= e->kind == THR_ENT_CDEV && !strcmp(e->name, "gpu-throttle-alert");
			/* tj-thermal is only above active (fan) trips */
			CHECK(strcmp(e->name, "tj-thermal") != 0);
		}
		CHECK(gpu_zone);
		CHECK(alert);
	} else {
		CHECK_INT_EQ(r.nepisodes, 0);
		CHECK_STR_EQ(thr_verdict_name(r.verdict), "not-throttled");
	}
	throttle_result_free(&r);
	free(ev);
	sysfs_seed_free(&s);
	cJSON_Delete(j);
	free(text);
	free(tree);
	free(exp);
	free(root);
}

int main(void)
{
	test_x86_tree();
	test_vm_tree();
	test_jetson_tree("jp6-agx-orin-throttled", true);
	test_jetson_tree("jp6-agx-orin", false);
	test_jetson_tree("not-a-jetson", false);
	CHECK_INT_EQ(seed_trip_type("passive"), THR_TRIP_PASSIVE);
	CHECK_INT_EQ(seed_trip_type("Passive"), -1);
	return check_report("test_sysfs_seed");
}
