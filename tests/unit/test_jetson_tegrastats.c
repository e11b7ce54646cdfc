// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* tegrastats parser on the real lines in shared/fixtures/jetson/tegrastats,
 * expected values from the fixture README table, plus garbage lines. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "jetson/jetson.h"

static char *line_of(const char *shared, const char *file, int lineno)
{
	char path[1024], *line = NULL;
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/fixtures/jetson/tegrastats/%s", shared, file);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	for (int i = 1; getline(&line, &cap, f) >= 0; i++)
		if (i == lineno) {
			fclose(f);
			return line;
		}
	free(line);
	fclose(f);
	return NULL;
}

static double num(const cJSON *o, const char *a, const char *b)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);

	if (b)
		x = cJSON_GetObjectItemCaseSensitive(x, b);
	return cJSON_IsNumber(x) ? x->valuedouble : -12345.0;
}

static bool has(const cJSON *o, const char *a, const char *b)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);

	return b ? cJSON_GetObjectItemCaseSensitive(x, b) != NULL : x != NULL;
}

static cJSON *parse(const char *shared, const char *file, int lineno)
{
	char *l = line_of(shared, file, lineno);
	cJSON *o = l ? jetson_tegrastats_parse_line(l) : NULL;

	free(l);
	CHECK(o != NULL);
	return o ? o : cJSON_CreateObject();
}

int main(void)
{
	const char *sh = ep_shared_dir("test_jetson_tegrastats");
	cJSON *o;

	if (!sh)
		return 77;

	o = parse(sh, "jp4.txt", 1);
	CHECK(num(o, "gpu", "load_pct") == 0 && num(o, "gpu", "cur_mhz") == 76);
	CHECK(num(o, "emc", "util_pct") == 0 && num(o, "emc", "cur_mhz") == 204);
	CHECK(num(o, "temps_c", "PLL") == 34 && num(o, "temps_c", "CPU") == 36.5);
	CHECK(num(o, "temps_c", "PMIC") == 100 && num(o, "temps_c", "GPU") == 36);
	CHECK(num(o, "temps_c", "AO") == 39.5 && num(o, "temps_c", "thermal") == 36.25);
	CHECK(num(o, "rails_mw", "POM_5V_IN") == 1022 &&
	      num(o, "rails_avg_mw", "POM_5V_IN") == 1022);
	CHECK(num(o, "rails_mw", "POM_5V_GPU") == 0 && num(o, "rails_mw", "POM_5V_CPU") == 204);
	CHECK(num(o, "total_mw", NULL) == 1022);
	CHECK(num(o, "ram", "used_mb") == 534 && num(o, "ram", "total_mb") == 3964);
	CHECK_INT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(o, "cpus")), 4);
	/* RAM/SWAP/IRAM are not rails */
	CHECK(!has(o, "rails_mw", "RAM") && !has(o, "rails_mw", "SWAP") &&
	      !has(o, "rails_mw", "IRAM"));
	cJSON_Delete(o);

	o = parse(sh, "jp4.txt", 2);
	CHECK(num(o, "emc", "cur_mhz") == 1600 && num(o, "temps_c", "PMIC") == 50);
	CHECK(num(o, "rails_mw", "POM_5V_IN") == 1750 &&
	      num(o, "rails_avg_mw", "POM_5V_IN") == 1628);
	CHECK(num(o, "rails_mw", "POM_5V_CPU") == 366 &&
	      num(o, "rails_avg_mw", "POM_5V_CPU") == 406);
	cJSON_Delete(o);

	o = parse(sh, "jp4.txt", 3);
	CHECK(num(o, "gpu", "load_pct") == 62 && num(o, "gpu", "cur_mhz") == 306);
	CHECK(num(o, "emc", "util_pct") == 10 && num(o, "emc", "cur_mhz") == 1600);
	CHECK(num(o, "rails_mw", "VDD_IN") == 4067 && num(o, "rails_mw", "VDD_CPU_GPU_CV") == 738);
	CHECK(num(o, "rails_mw", "VDD_SOC") == 1353);
	CHECK(!has(o, "engines", "MTS") && !has(o, "rails_mw", "fg"));
	cJSON_Delete(o);

	/* AGX Xavier: rails named like temperatures */
	o = parse(sh, "jp4.txt", 4);
	CHECK(num(o, "gpu", "cur_mhz") == 318);
	CHECK(num(o, "rails_mw", "GPU") == 0 && num(o, "rails_mw", "CPU") == 311);
	CHECK(num(o, "rails_mw", "SOC") == 932 && num(o, "rails_mw", "CV") == 0);
	CHECK(num(o, "rails_mw", "VDDRQ") == 621 && num(o, "rails_mw", "SYS5V") == 1482);
	CHECK(num(o, "temps_c", "GPU") == 37.5 && num(o, "temps_c", "CPU") == 37.5);
	{
		const cJSON *cpus = cJSON_GetObjectItem(o, "cpus");
		CHECK_INT_EQ(cJSON_GetArraySize(cpus), 8);
		CHECK(cJSON_IsNull(cJSON_GetArrayItem(cpus, 7)));
	}
	cJSON_Delete(o);

	o = parse(sh, "jp5.txt", 1);
	CHECK_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(o, "timestamp")),
		     "07-09-2024 13:31:31");
	CHECK(num(o, "gpu", "load_pct") == 0 && num(o, "gpu", "cur_mhz") == 114);
	CHECK(num(o, "emc", "util_pct") == 2 && num(o, "emc", "cur_mhz") == 204);
	CHECK(num(o, "rails_mw", "VDD_IN") == 2763 && num(o, "rails_avg_mw", "VDD_IN") == 2846);
	CHECK(num(o, "rails_mw", "VDD_CPU_GPU_CV") == 650 &&
	      num(o, "rails_avg_mw", "VDD_SOC") == 711);
	cJSON_Delete(o);

	o = parse(sh, "jp5.txt", 2);
	CHECK(num(o, "gpu", "cur_mhz") == 611 && num(o, "emc", "cur_mhz") == 2133);
	CHECK(num(o, "temps_c", "CV0") == 45.812 && num(o, "temps_c", "tj") == 48.875);
	CHECK(num(o, "rails_mw", "VDD_IN") == 5299 && num(o, "rails_mw", "VDD_SOC") == 1424);
	cJSON_Delete(o);

	o = parse(sh, "jp6.txt", 1);
	CHECK(num(o, "gpu", "load_pct") == 0 && num(o, "gpu", "cur_mhz") == 305);
	CHECK_INT_EQ(
		cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "gpu"), "gpc_mhz")),
		2);
	CHECK(num(o, "emc", "util_pct") == 1 && num(o, "emc", "cur_mhz") == 2133);
	CHECK(num(o, "temps_c", "cpu") == 53.062 && num(o, "temps_c", "soc2") == 48.25);
	CHECK(num(o, "temps_c", "gpu") == 47.812 && num(o, "temps_c", "soc1") == 48.968);
	CHECK(num(o, "rails_mw", "VDD_GPU_SOC") == 3205 &&
	      num(o, "rails_mw", "VDD_CPU_CV") == 4405);
	CHECK(num(o, "rails_mw", "VIN_SYS_5V0") == 4767);
	CHECK_STR_EQ(cJSON_GetStringValue(
			     cJSON_GetObjectItem(cJSON_GetObjectItem(o, "engines"), "NVENC")),
		     "off");
	cJSON_Delete(o);

	/* non-root: no EMC_FREQ, GR3D without MHz */
	o = parse(sh, "jp6.txt", 2);
	CHECK(!has(o, "emc", NULL));
	CHECK(num(o, "gpu", "load_pct") == 0 && !has(o, "gpu", "cur_mhz"));
	CHECK(num(o, "rails_mw", "VDD_GPU_SOC") == 4940 &&
	      num(o, "rails_mw", "VIN_SYS_5V0") == 4442);
	cJSON_Delete(o);

	o = parse(sh, "jp7.txt", 1);
	CHECK(num(o, "gpu", "load_pct") == 12 && num(o, "gpu", "cur_mhz") == 1300);
	CHECK(num(o, "emc", "util_pct") == 3 && num(o, "emc", "cur_mhz") == 3199);
	CHECK(num(o, "temps_c", "cpu") == 52.968 && num(o, "temps_max_c", "cpu") == 52.968);
	CHECK(num(o, "rails_mw", "VDD_GPU_SOC") == 5139 &&
	      num(o, "rails_peak_mw", "VDD_GPU_SOC") == 5139);
	cJSON_Delete(o);

	/* garbage */
	CHECK(jetson_tegrastats_parse_line("") == NULL);
	CHECK(jetson_tegrastats_parse_line("hello world") == NULL);
	CHECK(jetson_tegrastats_parse_line("\x01\x02\xff") == NULL);
	CHECK(jetson_tegrastats_parse_line(NULL) == NULL);
	o = jetson_tegrastats_parse_line("GR3D_FREQ 1e999%@nan EMC_FREQ -%@ X@infC Y@12C/ "
					 "VDD_IN 1/2/3/4 CPU [ RAM /MB SWAP 1/MB");
	CHECK(o == NULL || !has(o, "gpu", NULL));
	CHECK(o == NULL || !has(o, "rails_mw", "VDD_IN"));
	CHECK(o == NULL || !has(o, "temps_c", "X"));
	cJSON_Delete(o);
	{
		/* a very long line must neither crash nor be accepted beyond the limit */
		size_t n = 200000;
		char *big = malloc(n + 1);
		for (size_t i = 0; i < n; i++)
			big[i] = (i % 7 == 6) ? ' ' : 'A';
		big[n] = '\0';
		CHECK(jetson_tegrastats_parse_line(big) == NULL);
		memcpy(big, "VDD_IN 5/5 ", 11);
		big[20000] = '\0';
		o = jetson_tegrastats_parse_line(big);
		CHECK(o && num(o, "rails_mw", "VDD_IN") == 5);
		cJSON_Delete(o);
		free(big);
	}
	{
		/* Lines are read within a fixed buffer (/dev/zero grew
		 * getline's to 3.7 GB): fits, exactly full, too long, no final
		 * newline, end of input. */
		static const char in[] = "ab\n\nxyz1\n123456789\ntail";
		char buf[5];
		FILE *f = fmemopen((void *)in, sizeof(in) - 1, "r");

		CHECK(f != NULL);
		CHECK_INT_EQ(jetson_tegrastats_read_line(f, buf, sizeof(buf)), 2);
		CHECK_STR_EQ(buf, "ab");
		CHECK_INT_EQ(jetson_tegrastats_read_line(f, buf, sizeof(buf)), 0);
		CHECK_INT_EQ(jetson_tegrastats_read_line(f, buf, sizeof(buf)), 4);
		CHECK_STR_EQ(buf, "xyz1");
		CHECK_INT_EQ(jetson_tegrastats_read_line(f, buf, sizeof(buf)), -E2BIG);
		CHECK_STR_EQ(buf, "1234");
		fclose(f);
		f = fmemopen((void *)"tail", 4, "r");
		CHECK_INT_EQ(jetson_tegrastats_read_line(f, buf, sizeof(buf)), 4);
		CHECK_STR_EQ(buf, "tail");
		CHECK_INT_EQ(jetson_tegrastats_read_line(f, buf, sizeof(buf)), -1);
		fclose(f);
		/* An endless line costs the buffer, not memory: /dev/zero. */
		f = fopen("/dev/zero", "r");
		if (f) {
			char *big = malloc(JETSON_TEGRASTATS_LINE_MAX);

			CHECK_INT_EQ(jetson_tegrastats_read_line(f, big,
								 JETSON_TEGRASTATS_LINE_MAX),
				     -E2BIG);
			free(big);
			fclose(f);
		}
	}
	return check_report("test_jetson_tegrastats");
}
