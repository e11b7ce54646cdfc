// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "cycles/cycle_spec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A C (or mangled C++) symbol name. */
static bool c_ident(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9') || strlen(s) > 1024)
		return false;
	for (; *s; s++)
		if (!(*s == '_' || *s == '.' || *s == '$' || (*s >= '0' && *s <= '9') ||
		      (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
			return false;
	return true;
}

int cycle_spec_parse(const char *s, bool every, struct cycle_spec *out, char *err, size_t errlen)
{
	const char *opt = every ? "--cycle-every" : "--cycle";
	int rc;

	memset(out, 0, sizeof(*out));
	out->every = every;
	out->text = s;
	if (!s)
		return 0;
	if (!strcmp(s, "marker")) {
		if (every) {
			snprintf(err, errlen,
				 "%s marker: the marker has begin and end; use --cycle marker",
				 opt);
			return -EINVAL;
		}
		out->src = CYC_SRC_MARKER;
		return 0;
	}
	if (!strncmp(s, "py:", 3)) {
		char why[256];

		if (py_fnspec_parse(s + 3, &out->py, why, sizeof(why))) {
			snprintf(err, errlen, "%s '%s': %s", opt, s, why);
			return -EINVAL;
		}
		if (strlen(out->py.last) >= sizeof(out->py_name)) {
			snprintf(err, errlen,
				 "%s '%s': a Python function name of at most %d characters is "
				 "supported",
				 opt, s, EP_CYC_PY_NAME_LEN - 1);
			return -EINVAL;
		}
		out->src = CYC_SRC_PY;
		strcpy(out->py_name, out->py.last);
		return 0;
	}
	if (!strchr(s, ':') && c_ident(s)) {
		/* A bare function name: looked up in every file the target
		 * maps, as the probe presets are (docs/cycles.md). */
		out->def.owned = strdup(s);
		if (!out->def.owned)
			return -ENOMEM;
		out->def.group = PG_USER;
		out->def.symbol = out->def.label = out->def.owned;
		out->def.kind = EP_PK_PLAIN;
		out->def.mode = EP_PM_LATENCY;
		out->src = CYC_SRC_UPROBE;
		return 0;
	}
	{
		char why[256] = "";

		rc = probe_parse_spec(s, &out->def, why, sizeof(why));
		if (rc) {
			snprintf(err, errlen, "%s %s", opt, why);
			return rc;
		}
	}
	if (out->def.mode != EP_PM_LATENCY) {
		snprintf(err, errlen, "%s '%s': a cycle probe cannot be count-only", opt, s);
		cycle_spec_free(out);
		return -EINVAL;
	}
	if (out->def.usdt_provider) {
		if (!every) {
			snprintf(err, errlen,
				 "%s '%s': a USDT point has no return; use --cycle-every, or the "
				 "marker's begin/end",
				 opt, s);
			cycle_spec_free(out);
			return -EINVAL;
		}
		out->src = CYC_SRC_USDT;
	} else {
		out->src = CYC_SRC_UPROBE;
	}
	return 0;
}

void cycle_spec_free(struct cycle_spec *c)
{
	free(c->def.owned);
	c->def.owned = NULL;
}
