// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Snapshot -> JSON in the shape of shared/fixtures/jetson/expected/<tree>.json. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "jetson/jetson.h"
#include "jetson/jetson_internal.h"

static const char *errstr(int err)
{
	if (err == -EINVAL)
		return "not a number";
	if (err == -ERANGE)
		return "value out of range";
	if (err == -EFBIG)
		return "file too large";
	return strerror(err < 0 ? -err : err);
}

static void unavailable(cJSON *list, const char *what, int err)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "what", what);
	if (err == -EACCES || err == -EPERM)
		cJSON_AddStringToObject(o, "why", "needs root (debugfs)");
	else
		cJSON_AddStringToObject(o, "why", errstr(err));
	cJSON_AddItemToArray(list, o);
}

static void add_val(cJSON *o, const char *key, const struct jetson_val *v, double num)
{
	if (v->ok)
		cJSON_AddNumberToObject(o, key, num);
	else
		cJSON_AddNullToObject(o, key);
}

static cJSON *gpu_json(const struct jetson_gpu *g, cJSON *unav)
{
	cJSON *o;

	if (!g->present) {
		unavailable(unav, "gpu", -ENOENT);
		return cJSON_CreateNull();
	}
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "devfreq", g->devfreq);
	cJSON_AddStringToObject(o, "of_node_name", g->of_node_name);
	cJSON_AddStringToObject(o, "governor", g->governor);
	add_val(o, "load_pct", &g->load_permille, g->load_permille.v / 10.0);
	add_val(o, "cur_mhz", &g->cur_hz, jetson_mhz(g->cur_hz.v));
	add_val(o, "min_mhz", &g->min_hz, jetson_mhz(g->min_hz.v));
	add_val(o, "max_mhz", &g->max_hz, jetson_mhz(g->max_hz.v));
	if (!g->load_permille.ok)
		unavailable(unav, "gpu.load", g->load_permille.err);
	if (!g->cur_hz.ok)
		unavailable(unav, "gpu.cur_freq", g->cur_hz.err);
	return o;
}

static void rails_json(const struct jetson_snapshot *s, cJSON *root, cJSON *unav)
{
	cJSON *mw = cJSON_AddObjectToObject(root, "rails_mw");
	cJSON *list = cJSON_AddArrayToObject(root, "rails");
	bool iio = false;

	for (size_t i = 0; i < s->nrails; i++) {
		const struct jetson_rail *r = &s->rails[i];
		cJSON *o = cJSON_CreateObject();
		char what[96];

		iio |= r->layout == JETSON_RAIL_IIO;
		cJSON_AddStringToObject(o, "name", r->name);
		cJSON_AddStringToObject(o, "device", r->device);
		cJSON_AddNumberToObject(o, "channel", r->channel);
		add_val(o, "mv", &r->mv, (double)r->mv.v);
		add_val(o, "ma", &r->ma, (double)r->ma.v);
		add_val(o, "mw", &r->power_uw, jetson_mw(r->power_uw.v));
		cJSON_AddItemToArray(list, o);
		if (r->power_uw.ok) {
			cJSON_AddNumberToObject(mw, r->name, jetson_mw(r->power_uw.v));
		} else {
			snprintf(what, sizeof(what), "rail %s", r->name);
			unavailable(unav, what, r->power_uw.err);
		}
	}
	if (!s->board.is_jetson)
		return;
	cJSON_AddStringToObject(root, "rails_source",
				iio ? "in_powerN_input (driver-computed, integer mW)"
				    : "inN_input (mV) * currN_input (mA) / 1000");
	add_val(root, "total_mw", &s->total_uw, jetson_mw(s->total_uw.v));
	if (s->total_rail >= 0) {
		char rule[96];
		snprintf(rule, sizeof(rule), "%s is the module input",
			 s->rails[s->total_rail].name);
		cJSON_AddStringToObject(root, "total_rule", rule);
	} else {
		cJSON_AddStringToObject(
			root, "total_rule",
			"no VDD_IN/POM_5V_IN rail: sum of all rails (approximation)");
	}
	if (!s->total_uw.ok)
		unavailable(unav, "total power", s->total_uw.err);
}

static const char *zone_state(enum jetson_zone_state st)
{
	return st == JETSON_ZONE_OK ? "ok" : st == JETSON_ZONE_OFFLINE ? "offline" : "unavailable";
}

static void thermal_json(const struct jetson_snapshot *s, cJSON *root)
{
	cJSON *temps = cJSON_AddObjectToObject(root, "temps_c");
	cJSON *offline = cJSON_CreateArray();
	cJSON *unread = cJSON_CreateArray();
	cJSON *zones = cJSON_CreateArray();
	cJSON *cool = cJSON_CreateArray();
	bool pmic = false;

	for (size_t i = 0; i < s->nzones; i++) {
		const struct jetson_zone *z = &s->zones[i];
		cJSON *o = cJSON_CreateObject(), *trips;

		cJSON_AddStringToObject(o, "type", z->type);
		cJSON_AddStringToObject(o, "node", z->node);
		cJSON_AddStringToObject(o, "state", zone_state(z->state));
		if (z->state == JETSON_ZONE_OK) {
			cJSON_AddNumberToObject(o, "temp_c", jetson_c(z->temp_mc));
			cJSON_AddNumberToObject(temps, z->type, jetson_c(z->temp_mc));
		} else {
			cJSON_AddNullToObject(o, "temp_c");
		}
		if (z->state == JETSON_ZONE_OFFLINE)
			cJSON_AddItemToArray(offline, cJSON_CreateString(z->type));
		if (z->state == JETSON_ZONE_UNAVAILABLE) {
			cJSON_AddStringToObject(o, "error", errstr(z->err));
			cJSON_AddItemToArray(unread, cJSON_CreateString(z->type));
		}
		pmic |= !strcmp(z->type, "PMIC-Die");
		trips = cJSON_AddArrayToObject(o, "trips");
		for (size_t k = 0; k < z->ntrips; k++) {
			cJSON *t = cJSON_CreateObject();
			cJSON_AddNumberToObject(t, "temp_c", jetson_c(z->trips[k].temp_mc));
			cJSON_AddNumberToObject(t, "hyst_c", jetson_c(z->trips[k].hyst_mc));
			cJSON_AddStringToObject(t, "type", z->trips[k].type);
			cJSON_AddItemToArray(trips, t);
		}
		cJSON_AddItemToArray(zones, o);
	}
	cJSON_AddItemToObject(root, "offline_zones_minus_256", offline);
	cJSON_AddItemToObject(root, "unreadable_zones", unread);
	if (pmic) {
		cJSON *ign = cJSON_AddArrayToObject(root, "ignore_for_throttle");
		cJSON_AddItemToArray(ign, cJSON_CreateString("PMIC-Die"));
	}
	cJSON_AddItemToObject(root, "zones", zones);
	for (size_t i = 0; i < s->ncooling; i++) {
		const struct jetson_cooling *c = &s->cooling[i];
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "type", c->type);
		cJSON_AddStringToObject(o, "node", c->node);
		add_val(o, "cur_state", &c->cur_state, (double)c->cur_state.v);
		add_val(o, "max_state", &c->max_state, (double)c->max_state.v);
		cJSON_AddItemToArray(cool, o);
	}
	cJSON_AddItemToObject(root, "cooling_devices", cool);
}

static cJSON *fan_json(const struct jetson_fan *f)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "source", f->source);
	add_val(o, "pwm", &f->pwm, (double)f->pwm.v);
	add_val(o, "pct", &f->pwm, jetson_fan_pct(f->pwm.v));
	add_val(o, "rpm", &f->rpm, (double)f->rpm.v);
	return o;
}

cJSON *jetson_snapshot_json(const struct jetson_snapshot *s)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *unav = cJSON_CreateArray();
	const struct jetson_board *b = &s->board;
	struct jetson_throttle_signal sig[JETSON_MAX_SIGNALS];
	size_t nsig;

	if (!root || !unav) {
		cJSON_Delete(root);
		cJSON_Delete(unav);
		return NULL;
	}
	cJSON_AddBoolToObject(root, "is_jetson", b->is_jetson);
	cJSON_AddStringToObject(root, "why", b->why);
	if (b->nvidia_driver[0]) {
		char drv[128];
		snprintf(drv, sizeof(drv), "%s (use NVML, not sysfs)", b->nvidia_driver);
		cJSON_AddStringToObject(root, "nvidia_discrete_driver", drv);
	}
	cJSON_AddNumberToObject(root, "mono_ns", (double)s->mono_ns);
	if (b->is_jetson) {
		cJSON_AddStringToObject(root, "model", b->model);
		cJSON_AddStringToObject(root, "soc", b->soc);
		cJSON_AddStringToObject(root, "l4t", b->l4t);
		cJSON_AddItemToObject(root, "gpu", gpu_json(&s->gpu, unav));
	} else {
		cJSON_AddNullToObject(root, "gpu");
	}
	rails_json(s, root, unav);
	thermal_json(s, root);
	if (b->is_jetson) {
		cJSON *fans = cJSON_AddArrayToObject(root, "fans");
		cJSON *emc;

		for (size_t i = 0; i < s->nfans; i++)
			cJSON_AddItemToArray(fans, fan_json(&s->fans[i]));
		if (s->nfans)
			cJSON_AddItemToObject(root, "fan", fan_json(&s->fans[0]));
		else
			cJSON_AddNullToObject(root, "fan");

		emc = cJSON_AddObjectToObject(root, "emc");
		add_val(emc, "cur_mhz", &s->emc_hz, jetson_mhz(s->emc_hz.v));
		if (s->emc_hz.ok && s->emc_mc_all.ok && s->emc_hz.v >= 1000)
			cJSON_AddNumberToObject(emc, "util_pct",
						jetson_emc_util_pct(s->emc_mc_all.v, s->emc_hz.v));
		else
			cJSON_AddNullToObject(emc, "util_pct");
		add_val(emc, "mc_all", &s->emc_mc_all, (double)s->emc_mc_all.v);
		if (!s->emc_hz.ok)
			unavailable(unav, "emc.cur_mhz", s->emc_hz.err);
		if (!s->emc_mc_all.ok)
			unavailable(unav, "emc.mc_all", s->emc_mc_all.err);

		if (s->noc) {
			cJSON *oc = cJSON_AddObjectToObject(root, "soctherm_oc_event_cnt");
			for (size_t k = 0; k < s->noc; k++) {
				char key[32];
				snprintf(key, sizeof(key), "oc%zu", k + 1);
				add_val(oc, key, &s->oc_event_cnt[k], (double)s->oc_event_cnt[k].v);
			}
		}
		if (s->power_mode_id.ok) {
			cJSON *pm = cJSON_AddObjectToObject(root, "power_mode");
			cJSON_AddNumberToObject(pm, "id", (double)s->power_mode_id.v);
			if (s->power_mode_name[0])
				cJSON_AddStringToObject(pm, "name", s->power_mode_name);
			else
				cJSON_AddNullToObject(pm, "name");
		} else {
			cJSON_AddNullToObject(root, "power_mode");
			unavailable(unav, "power_mode", s->power_mode_id.err);
		}
	} else {
		cJSON_AddNullToObject(root, "power_mode");
	}

	nsig = jetson_throttle_signals(s, sig, JETSON_MAX_SIGNALS);
	if (!b->is_jetson) {
		cJSON_AddNullToObject(root, "throttled");
	} else {
		cJSON *reasons = cJSON_CreateArray();
		cJSON *sigs = cJSON_CreateArray();
		cJSON_AddBoolToObject(root, "throttled", nsig > 0);
		for (size_t i = 0; i < nsig && i < JETSON_MAX_SIGNALS; i++) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddItemToArray(reasons, cJSON_CreateString(sig[i].detail));
			cJSON_AddStringToObject(o, "kind", jetson_throttle_kind_name(sig[i].kind));
			cJSON_AddStringToObject(o, "source", sig[i].source);
			cJSON_AddNumberToObject(o, "value", (double)sig[i].value);
			cJSON_AddNumberToObject(o, "limit", (double)sig[i].limit);
			cJSON_AddItemToArray(sigs, o);
		}
		cJSON_AddItemToObject(root, "throttle_reasons", reasons);
		cJSON_AddItemToObject(root, "throttle_signals", sigs);
	}
	cJSON_AddItemToObject(root, "unavailable", unav);
	return root;
}
