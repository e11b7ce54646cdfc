// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tegrastats line parser (docs/jetson.md, "tegrastats"): a second source for
 * users who already have logs. Lines come from files users hand us, so every
 * token is validated and anything unrecognised is ignored, never trusted.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jetson/jetson.h"
#include "jetson/jetson_internal.h"

#define TS_MAX_TOKENS 512
#define TS_MAX_LINE   65536

/* Plain decimal: optional '-', digits, optional '.digits'. No inf/nan/hex/exponent. */
static bool parse_dec(const char *s, size_t len, double *out)
{
	char buf[32];
	size_t i = 0;
	bool digits = false;

	if (len == 0 || len >= sizeof(buf))
		return false;
	if (s[0] == '-')
		i++;
	for (; i < len && isdigit((unsigned char)s[i]); i++)
		digits = true;
	if (i < len && s[i] == '.') {
		i++;
		for (; i < len && isdigit((unsigned char)s[i]); i++)
			digits = true;
	}
	if (!digits || i != len)
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	*out = strtod(buf, NULL);
	return true;
}

/* "NN%" optionally followed by "@MHz" or "@[a,b,...]". */
static bool parse_pct_at(const char *tok, cJSON *obj, const char *pct_key)
{
	const char *pc = strchr(tok, '%');
	double v;

	if (!pc || !parse_dec(tok, (size_t)(pc - tok), &v))
		return false;
	cJSON_AddNumberToObject(obj, pct_key, v);
	if (pc[1] != '@')
		return true;
	if (pc[2] == '[') {
		const char *p = pc + 3, *end = strchr(p, ']');
		cJSON *arr;
		double maxv = -1;

		if (!end)
			return true;
		arr = cJSON_AddArrayToObject(obj, "gpc_mhz");
		while (p < end) {
			const char *comma = memchr(p, ',', (size_t)(end - p));
			const char *stop = comma ? comma : end;
			if (parse_dec(p, (size_t)(stop - p), &v)) {
				cJSON_AddItemToArray(arr, cJSON_CreateNumber(v));
				if (v > maxv)
					maxv = v;
			}
			p = stop + 1;
		}
		if (maxv >= 0)
			cJSON_AddNumberToObject(obj, "cur_mhz", maxv);
	} else if (parse_dec(pc + 2, strlen(pc + 2), &v)) {
		cJSON_AddNumberToObject(obj, "cur_mhz", v);
	}
	return true;
}

static bool is_ident(const char *t)
{
	if (!*t || !(isalpha((unsigned char)*t) || *t == '_'))
		return false;
	for (; *t; t++)
		if (!isalnum((unsigned char)*t) && *t != '_')
			return false;
	return true;
}

/* "123", "123mW"; returns false otherwise */
static bool parse_mw(const char *s, size_t len, double *out)
{
	if (len > 2 && !strncmp(s + len - 2, "mW", 2))
		len -= 2;
	return parse_dec(s, len, out) && *out >= 0;
}

/* "cur/avg[/peak]" in mW */
static int parse_rail(const char *tok, double v[3])
{
	int n = 0;
	const char *p = tok;

	for (;;) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		if (n == 3 || !parse_mw(p, len, &v[n]))
			return 0; /* more than cur/avg/peak is not a rail */
		n++;
		if (!slash)
			break;
		p = slash + 1;
	}
	return n >= 2 ? n : 0;
}

/* "name@45.5C" or "name@45.5C/46.0C" */
static bool parse_temp(const char *tok, char *name, size_t namelen, double *cur, double *max,
		       bool *has_max)
{
	const char *at = strchr(tok, '@');
	const char *p, *c;
	size_t nlen;

	if (!at || at == tok)
		return false;
	nlen = (size_t)(at - tok);
	if (nlen >= namelen)
		return false;
	memcpy(name, tok, nlen);
	name[nlen] = '\0';
	if (!is_ident(name) && !strchr(name, '-'))
		return false;
	p = at + 1;
	c = strchr(p, 'C');
	if (!c || !parse_dec(p, (size_t)(c - p), cur))
		return false;
	*has_max = false;
	if (c[1] == '\0')
		return true;
	if (c[1] != '/')
		return false;
	p = c + 2;
	c = strchr(p, 'C');
	if (!c || c[1] != '\0' || !parse_dec(p, (size_t)(c - p), max))
		return false;
	*has_max = true;
	return true;
}

/* "534/3964MB" */
static bool parse_mem(const char *tok, cJSON *root, const char *key)
{
	const char *slash = strchr(tok, '/');
	size_t len;
	double used, total;
	cJSON *o;

	if (!slash)
		return false;
	len = strlen(slash + 1);
	if (len < 3 || strcmp(slash + 1 + len - 2, "MB"))
		return false;
	if (!parse_dec(tok, (size_t)(slash - tok), &used) || !parse_dec(slash + 1, len - 2, &total))
		return false;
	o = cJSON_AddObjectToObject(root, key);
	cJSON_AddNumberToObject(o, "used_mb", used);
	cJSON_AddNumberToObject(o, "total_mb", total);
	return true;
}

static void parse_cpus(const char *tok, cJSON *root)
{
	size_t len = strlen(tok);
	const char *p = tok + 1, *end = tok + len - 1;
	cJSON *arr;

	if (len < 2 || tok[0] != '[' || *end != ']')
		return;
	arr = cJSON_AddArrayToObject(root, "cpus");
	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *stop = comma ? comma : end;
		char item[32];
		size_t n = (size_t)(stop - p);

		if (n < sizeof(item)) {
			memcpy(item, p, n);
			item[n] = '\0';
			if (!strcmp(item, "off")) {
				cJSON_AddItemToArray(arr, cJSON_CreateNull());
			} else {
				cJSON *o = cJSON_CreateObject();
				if (parse_pct_at(item, o, "load_pct")) {
					cJSON *m = cJSON_DetachItemFromObject(o, "cur_mhz");
					if (m)
						cJSON_AddItemToObject(o, "mhz", m);
					cJSON_AddItemToArray(arr, o);
				} else {
					cJSON_Delete(o);
				}
			}
		}
		p = stop + 1;
	}
}

cJSON *jetson_tegrastats_parse_line(const char *line)
{
	char *buf, *save = NULL, *t;
	char *tok[TS_MAX_TOKENS];
	size_t n = 0, len;
	cJSON *root, *temps, *tmax, *rails, *ravg, *rpeak, *engines;
	bool any = false;

	if (!line)
		return NULL;
	len = strnlen(line, TS_MAX_LINE + 1);
	if (len > TS_MAX_LINE)
		return NULL;
	buf = strndup(line, len);
	if (!buf)
		return NULL;
	for (t = strtok_r(buf, " \t\r\n", &save); t && n < TS_MAX_TOKENS;
	     t = strtok_r(NULL, " \t\r\n", &save))
		tok[n++] = t;

	root = cJSON_CreateObject();
	temps = cJSON_CreateObject();
	tmax = cJSON_CreateObject();
	rails = cJSON_CreateObject();
	ravg = cJSON_CreateObject();
	rpeak = cJSON_CreateObject();
	engines = cJSON_CreateObject();

	for (size_t i = 0; i < n; i++) {
		const char *k = tok[i], *v = i + 1 < n ? tok[i + 1] : NULL;
		char name[64];
		double c, cmax, rv[3];
		bool has_max;
		int nr;

		if (i == 0 && v && strlen(k) == 10 && k[2] == '-' && k[5] == '-' &&
		    strlen(v) == 8 && v[2] == ':' && v[5] == ':') {
			char ts[20];
			snprintf(ts, sizeof(ts), "%s %s", k, v);
			cJSON_AddStringToObject(root, "timestamp", ts);
			i++;
			continue;
		}
		if ((!strcmp(k, "RAM") || !strcmp(k, "SWAP")) && v) {
			if (parse_mem(v, root, !strcmp(k, "RAM") ? "ram" : "swap")) {
				any = true;
				i++;
			}
			continue;
		}
		if (!strcmp(k, "CPU") && v && v[0] == '[') {
			parse_cpus(v, root);
			any = true;
			i++;
			continue;
		}
		if ((!strcmp(k, "GR3D_FREQ") || !strcmp(k, "EMC_FREQ")) && v) {
			cJSON *o = cJSON_CreateObject();
			if (parse_pct_at(v, o, !strcmp(k, "GR3D_FREQ") ? "load_pct" : "util_pct")) {
				cJSON_AddItemToObject(root, !strcmp(k, "GR3D_FREQ") ? "gpu" : "emc",
						      o);
				any = true;
				i++;
			} else {
				cJSON_Delete(o);
			}
			continue;
		}
		if (parse_temp(k, name, sizeof(name), &c, &cmax, &has_max)) {
			cJSON_AddNumberToObject(temps, name, c);
			if (has_max)
				cJSON_AddNumberToObject(tmax, name, cmax);
			any = true;
			continue;
		}
		if (is_ident(k) && v && (nr = parse_rail(v, rv)) > 0) {
			cJSON_AddNumberToObject(rails, k, rv[0]);
			cJSON_AddNumberToObject(ravg, k, rv[1]);
			if (nr == 3)
				cJSON_AddNumberToObject(rpeak, k, rv[2]);
			any = true;
			i++;
			continue;
		}
		if (is_ident(k) && v && strcmp(k, "MTS") && strcmp(k, "fg") && strcmp(k, "bg")) {
			double mhz;
			if (!strcmp(v, "off")) {
				cJSON_AddStringToObject(engines, k, "off");
				i++;
			} else if (parse_dec(v, strlen(v), &mhz) && mhz >= 0) {
				cJSON_AddNumberToObject(engines, k, mhz);
				i++;
			}
		}
	}
	free(buf);
	if (!any) {
		cJSON_Delete(root);
		cJSON_Delete(temps);
		cJSON_Delete(tmax);
		cJSON_Delete(rails);
		cJSON_Delete(ravg);
		cJSON_Delete(rpeak);
		cJSON_Delete(engines);
		return NULL;
	}
	cJSON_AddItemToObject(root, "temps_c", temps);
	if (cJSON_GetArraySize(tmax))
		cJSON_AddItemToObject(root, "temps_max_c", tmax);
	else
		cJSON_Delete(tmax);
	cJSON_AddItemToObject(root, "rails_mw", rails);
	cJSON_AddItemToObject(root, "rails_avg_mw", ravg);
	if (cJSON_GetArraySize(rpeak))
		cJSON_AddItemToObject(root, "rails_peak_mw", rpeak);
	else
		cJSON_Delete(rpeak);
	cJSON_AddItemToObject(root, "engines", engines);
	{
		const cJSON *in = cJSON_GetObjectItemCaseSensitive(rails, "VDD_IN");
		if (!in)
			in = cJSON_GetObjectItemCaseSensitive(rails, "POM_5V_IN");
		if (in)
			cJSON_AddNumberToObject(root, "total_mw", in->valuedouble);
	}
	return root;
}

int jetson_tegrastats_read_line(FILE *f, char *buf, size_t cap)
{
	size_t n = 0;
	int c;

	if (!cap)
		return -E2BIG;
	while ((c = getc(f)) != EOF) {
		if (c == '\n')
			break;
		if (n + 1 >= cap) {
			buf[n] = '\0';
			return -E2BIG;
		}
		buf[n++] = (char)c;
	}
	buf[n] = '\0';
	if (c == EOF && !n)
		return -1;
	return (int)n;
}
