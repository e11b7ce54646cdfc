// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `ebpf-prof diff` (see diff_cmd.h). */
#include "diff/diff_cmd.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff_html.h"
#include "diff/diff_load.h"
#include "diff/diff_model.h"
#include "diff/diff_text.h"
#include "report/output.h"

void diff_cmd_usage(FILE *f)
{
	fputs("usage: ebpf-prof diff [OPTIONS] BASE_DIR NEW_DIR\n"
	      "       ebpf-prof diff [OPTIONS] BASE_DIR... -- NEW_DIR...\n"
	      "  Compares two result directories (their report.json) and reports what got\n"
	      "  slower or faster in NEW: per-cycle times (wall, inference, SQL, GC, off-CPU,\n"
	      "  unattributed), tokens/s, memory, throttling, Jetson power, functions (self and\n"
	      "  total CPU, matched by name and module), probes and SQL statements. A change is a\n"
	      "  regression only when it moved the wrong way by more than the threshold and\n"
	      "  is significant beyond run-to-run noise: per-cycle values by Mann-Whitney U\n"
	      "  and a block-bootstrap interval (cycles that drift together count as one),\n"
	      "  function samples by a rate/share test scaled by their dispersion, and every\n"
	      "  change's interval widened by --run-noise for what no single run shows.\n"
	      "  A per-cycle time under 5% of the cycle is measured against 5% of the cycle\n"
	      "  (printed with what it adds to the cycle): a part that small must move the\n"
	      "  cycle, not only itself.\n"
	      "  Without cycles, two runs of the same command (same arguments, both ran to\n"
	      "  completion) are compared as fixed work: the run's and each function's CPU\n"
	      "  time gate. A function whose total grew while its self time did not gates\n"
	      "  as a regression along its call path (\"beta (via spin)\").\n"
	      "  Several runs per side (BASE_DIR... -- NEW_DIR...): each side's profiles are\n"
	      "  summed and its figures are per run (the mean); the run-to-run noise of\n"
	      "  whole-run figures (CPU and wall time, functions' CPU time, per-cycle\n"
	      "  medians) then comes from the runs' spread (at least --run-noise), and\n"
	      "  the summary prints each side's CPU time with its spread over the runs.\n"
	      "  report.json names the program's GNU build-id: the summary says whether\n"
	      "  NEW is another build of it, even rebuilt in place at the same path.\n"
	      "  Writes diff.html (differential flame graph) into NEW_DIR (the first one),\n"
	      "  or -o DIR; with --json only when -o is given.\n"
	      "\n"
	      "Options:\n"
	      "      --threshold PCT   smallest change that counts, in percent (default 10)\n"
	      "      --run-noise PCT   run-to-run noise assumed per run, in percent of a\n"
	      "                        figure (default 2); raise it on a machine whose runs\n"
	      "                        differ more (tools/bench/diff_null.sh measures it)\n"
	      "      --min-share PCT   compare functions with at least PCT% of the samples in\n"
	      "                        either run (default 1)\n"
	      "      --json            print the comparison as JSON (docs/report-schema.md)\n"
	      "                        instead of the summary\n"
	      "  -o, --output DIR      write diff.html in DIR (default: the first NEW_DIR; with --json,\n"
	      "                        none unless -o)\n"
	      "      --no-html         do not write diff.html\n"
	      "  -h, --help            this text\n"
	      "\n"
	      "Exit status: 0 no regression, 3 regressions found, 1 error, 2 usage error.\n",
	      f);
}

static int parse_pct(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (end != s && *end == '%')
		end++;
	if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
		return -EINVAL;
	*out = v / 100;
	return 0;
}

struct html_ctx {
	cJSON *diff;
	const struct dl_run *b, *n;
};

static int write_html(FILE *f, void *p)
{
	struct html_ctx *c = p;
	cJSON *d = c->diff;

	c->diff = NULL; /* taken over */
	return diff_html_write(f, d, c->b, c->n);
}

int diff_cmd_main(int argc, char **argv)
{
	enum { OPT_THRESHOLD = 256, OPT_JSON, OPT_NO_HTML, OPT_MIN_SHARE, OPT_RUN_NOISE };
	static const struct option longopts[] = {
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "min-share", required_argument, NULL, OPT_MIN_SHARE },
		{ "run-noise", required_argument, NULL, OPT_RUN_NOISE },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "output", required_argument, NULL, 'o' },
		{ "no-html", no_argument, NULL, OPT_NO_HTML },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dm_opts opts;
	const char *outdir = NULL;
	bool json = false, html = true;
	int c, sep = -1, nargs = argc;

	dm_default_opts(&opts);
	/* BASE... -- NEW...: options are read before the "--" only (getopt
	 * would drop it and with it where the sides part). */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			sep = i;
			nargs = i;
			break;
		}
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(nargs, argv, ":o:h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_THRESHOLD:
			if (parse_pct(optarg, 0.1, 1000, &opts.threshold)) {
				fprintf(stderr,
					"ebpf-prof diff: invalid --threshold '%s': expected a percentage "
					"0.1..1000\n",
					optarg);
				return DIFF_EXIT_USAGE;
			}
			break;
		case OPT_MIN_SHARE:
			if (parse_pct(optarg, 0, 100, &opts.min_share)) {
				fprintf(stderr,
					"ebpf-prof diff: invalid --min-share '%s': expected a percentage "
					"0..100\n",
					optarg);
				return DIFF_EXIT_USAGE;
			}
			break;
		case OPT_RUN_NOISE:
			if (parse_pct(optarg, 0, 100, &opts.run_noise)) {
				fprintf(stderr,
					"ebpf-prof diff: invalid --run-noise '%s': expected a percentage "
					"0..100\n",
					optarg);
				return DIFF_EXIT_USAGE;
			}
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_NO_HTML:
			html = false;
			break;
		case 'o':
			if (!*optarg) {
				fprintf(stderr, "ebpf-prof diff: -o needs a directory\n");
				return DIFF_EXIT_USAGE;
			}
			outdir = optarg;
			break;
		case 'h':
			diff_cmd_usage(stdout);
			return DIFF_EXIT_OK;
		case ':':
			fprintf(stderr, "ebpf-prof diff: option '%s' needs a value\n",
				argv[optind - 1]);
			return DIFF_EXIT_USAGE;
		default:
			fprintf(stderr,
				"ebpf-prof diff: unknown option '%s' (see ebpf-prof diff --help)\n",
				argv[optind - 1]);
			return DIFF_EXIT_USAGE;
		}
	}
	const char **bases = (const char **)argv + optind, **news;
	size_t nb, nn;

	if (sep < 0) {
		if (argc - optind != 2) {
			fprintf(stderr, "ebpf-prof diff: expected two result directories, BASE_DIR "
					"NEW_DIR, or BASE_DIR... -- NEW_DIR... (see ebpf-prof diff "
					"--help)\n");
			return DIFF_EXIT_USAGE;
		}
		nb = nn = 1;
		news = bases + 1;
	} else {
		nb = (size_t)(nargs - optind);
		news = (const char **)argv + sep + 1;
		nn = (size_t)(argc - sep - 1);
		if (!nb || !nn) {
			fprintf(stderr,
				"ebpf-prof diff: expected BASE_DIR... -- NEW_DIR..., at least "
				"one result directory on each side of \"--\"\n");
			return DIFF_EXIT_USAGE;
		}
	}
	struct dl_run b, n;
	char err[512];
	int rc = DIFF_EXIT_ERROR;

	if (dl_load_side(bases, nb, &b, err, sizeof(err))) {
		fprintf(stderr, "ebpf-prof diff: %s\n", err);
		return DIFF_EXIT_ERROR;
	}
	if (dl_load_side(news, nn, &n, err, sizeof(err))) {
		fprintf(stderr, "ebpf-prof diff: %s\n", err);
		dl_free(&b);
		return DIFF_EXIT_ERROR;
	}
	struct dm_result r;
	if (dl_align_keys(&b, &n) || dm_compare(&b, &n, &opts, &r)) {
		fprintf(stderr, "ebpf-prof diff: out of memory\n");
		goto out_runs;
	}
	/* Warnings also go to stderr with --json, where stdout is a document. */
	if (json)
		for (size_t i = 0; i < r.nwarnings; i++)
			fprintf(stderr, "ebpf-prof diff: warning: %s\n", r.warnings[i]);
	/* Files only where asked: -o, else the NEW run's own directory (not
	 * the current one, a CI job's working tree); --json writes none
	 * unless -o names a place. */
	bool default_out = !outdir;
	if (!outdir && json)
		html = false;
	if (!outdir)
		outdir = news[0];
	if (html) {
		struct output_dir od;
		struct html_ctx hc = { diff_to_json(&b, &n, &r), &b, &n };

		if (!hc.diff) {
			fprintf(stderr, "ebpf-prof diff: out of memory\n");
			goto out;
		}
		int e = output_dir_open(&od, outdir);
		if (!e) {
			e = output_write(&od, "diff.html", write_html, &hc);
			output_dir_close(&od);
		}
		cJSON_Delete(hc.diff);
		/* The page was not asked for by name: the comparison stands
		 * (a baseline directory may be read-only). */
		if (e && !default_out)
			goto out;
		if (e) {
			fprintf(stderr,
				"ebpf-prof diff: warning: diff.html not written into %s (-o DIR "
				"chooses where)\n",
				outdir);
			html = false;
		}
	}
	if (json) {
		cJSON *j = diff_to_json(&b, &n, &r);
		char *s = j ? cJSON_Print(j) : NULL;

		cJSON_Delete(j);
		if (!s) {
			fprintf(stderr, "ebpf-prof diff: out of memory\n");
			goto out;
		}
		puts(s);
		free(s);
	} else {
		diff_print_summary(stdout, &b, &n, &r, 10);
		if (html)
			printf("Wrote %s/diff.html\n", outdir);
	}
	if (fflush(stdout)) {
		fprintf(stderr, "ebpf-prof diff: writing the output failed\n");
		goto out;
	}
	rc = r.regressions ? DIFF_EXIT_REGRESSIONS : DIFF_EXIT_OK;
out:
	dm_result_free(&r);
out_runs:
	dl_free(&b);
	dl_free(&n);
	return rc;
}
