// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "kernel/check_cmd.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cli.h"
#include "util/log.h"
#include "record.h"

void check_result_fill(struct check_result *c, const struct kfeat *kf, const struct vstat *vs)
{
	c->kf = *kf;
	c->vs.n = c->vs.cap = 0;
	c->vs.v = vs->n ? malloc(vs->n * sizeof(*vs->v)) : NULL;
	if (c->vs.v) {
		memcpy(c->vs.v, vs->v, vs->n * sizeof(*vs->v));
		c->vs.n = c->vs.cap = vs->n;
	}
	memcpy(c->vs.deg, vs->deg, sizeof(vs->deg));
	c->vs.ndeg = vs->ndeg;
	c->done = true;
}

static void usage(FILE *out)
{
	fputs("usage: ebpf-prof check [--json] [--btf FILE] [-v]\n"
	      "\n"
	      "What this kernel supports, before anyone records: loads and attaches every BPF\n"
	      "program a run would (CPU sampling, scheduler, probes, --alloc, Python frames)\n"
	      "against a command that is held and never runs, then prints the kernel release,\n"
	      "its BTF, the BPF features found, each program's verifier figures against the\n"
	      "limits (instructions processed, combined stack of its deepest call chain) and\n"
	      "what a recording would lose here. Run it first on a new board or kernel.\n"
	      "\n"
	      "  --json       one JSON object on stdout instead of the table\n"
	      "  --btf FILE   kernel BTF for a kernel without /sys/kernel/btf/vmlinux\n"
	      "  -v           the recorder's messages (verifier logs of refused programs)\n"
	      "\n"
	      "Margins kept (docs/design.md): combined stack <= 448 of 512 bytes as JIT'ed\n"
	      "kernels count it (and within 512 without JIT), instructions processed <= a\n"
	      "fifth of the verifier's limit.\n"
	      "Exit status: 0 everything loads within the margins and nothing is lost,\n"
	      "1 something does not or is, 2 usage error. Needs root (or CAP_BPF+CAP_PERFMON).\n",
	      out);
}

static bool all_ok(const struct check_result *c)
{
	if (!c->done || !c->vs.n || c->vs.ndeg)
		return false;
	for (size_t i = 0; i < c->vs.n; i++)
		if (!vstat_within_margins(&c->vs.v[i]))
			return false;
	return true;
}

static void print_table(const struct check_result *c, const struct utsname *u, const char *btf)
{
	char buf[512];

	printf("kernel      %s %s\n", u->release, u->machine);
	printf("BTF         %s\n", c->kf.btf ? "/sys/kernel/btf/vmlinux"
				   : btf     ? btf
					     : "none (give one with --btf FILE)");
	printf("tracepoints %s\n", kfeat_prog_kind(&c->kf));
	printf("features   ");
	for (int i = 0; i < KFEAT_COUNT; i++)
		printf(" %s%s", c->kf.have[i] ? "+" : "-", kfeat_name((enum kfeat_id)i));
	printf("\n");
	kfeat_missing(&c->kf, ~0u, buf, sizeof(buf));
	if (buf[0])
		printf("missing     %s\n", buf);
	printf("\n%-8s %-24s %-6s %9s %7s %7s  %s\n", "object", "program", "loaded", "insns",
	       "stack", "no-JIT", "margins");
	for (size_t i = 0; i < c->vs.n; i++) {
		const struct vstat_prog *p = &c->vs.v[i];
		char insns[24] = "?", st[16] = "?", sti[16] = "?";

		if (p->insns >= 0)
			snprintf(insns, sizeof(insns), "%lld", (long long)p->insns);
		if (p->stack_jit >= 0)
			snprintf(st, sizeof(st), "%d", p->stack_jit);
		if (p->stack_interp >= 0)
			snprintf(sti, sizeof(sti), "%d", p->stack_interp);
		printf("%-8s %-24s %-6s %9s %7s %7s  %s%s%s\n", p->object, p->name,
		       p->loaded    ? "yes"
		       : p->skipped ? "skip"
				    : "NO",
		       insns, st, sti,
		       p->skipped		 ? "not needed"
		       : vstat_within_margins(p) ? "ok"
		       : p->loaded		 ? "NEAR A LIMIT"
						 : "-",
		       p->loaded ? "" : ": ", p->loaded ? "" : p->reason);
	}
	printf("\nlimits: stack %d bytes (kept <= %d), instructions %d (kept <= %d)\n",
	       VSTAT_STACK_LIMIT, VSTAT_STACK_LIMIT - VSTAT_STACK_MARGIN, VSTAT_INSNS_LIMIT,
	       VSTAT_INSNS_LIMIT / VSTAT_INSNS_SHARE_MAX);
	for (size_t i = 0; i < c->vs.ndeg; i++)
		printf("degraded: %s refused (%s): %s\n", c->vs.deg[i].program, c->vs.deg[i].reason,
		       c->vs.deg[i].lost);
	printf("%s\n", all_ok(c) ? "ok: every program loads within the margins"
				 : "NOT OK: see the programs and lines above");
}

static int print_json(const struct check_result *c, const struct utsname *u, const char *btf)
{
	cJSON *root = cJSON_CreateObject(), *k, *f;
	char buf[512], *txt;

	if (!root)
		return -ENOMEM;
	k = cJSON_AddObjectToObject(root, "kernel");
	cJSON_AddStringToObject(k, "release", u->release);
	cJSON_AddStringToObject(k, "machine", u->machine);
	cJSON_AddBoolToObject(k, "btf", c->kf.btf);
	if (btf)
		cJSON_AddStringToObject(k, "btf_file", btf);
	else
		cJSON_AddNullToObject(k, "btf_file");
	cJSON_AddStringToObject(k, "tracepoint_programs", kfeat_prog_kind(&c->kf));
	f = cJSON_AddObjectToObject(root, "features");
	for (int i = 0; f && i < KFEAT_COUNT; i++)
		cJSON_AddBoolToObject(f, kfeat_name((enum kfeat_id)i), c->kf.have[i]);
	kfeat_missing(&c->kf, ~0u, buf, sizeof(buf));
	cJSON_AddStringToObject(root, "missing_features", buf);
	cJSON_AddItemToObject(root, "programs", vstat_json(&c->vs));
	cJSON_AddItemToObject(root, "degraded", vstat_degraded_json(&c->vs));
	f = cJSON_AddObjectToObject(root, "limits");
	cJSON_AddNumberToObject(f, "stack", VSTAT_STACK_LIMIT);
	cJSON_AddNumberToObject(f, "stack_max", VSTAT_STACK_LIMIT - VSTAT_STACK_MARGIN);
	cJSON_AddNumberToObject(f, "insns", VSTAT_INSNS_LIMIT);
	cJSON_AddNumberToObject(f, "insns_max", VSTAT_INSNS_LIMIT / VSTAT_INSNS_SHARE_MAX);
	cJSON_AddBoolToObject(root, "ok", all_ok(c));
	txt = cJSON_Print(root);
	cJSON_Delete(root);
	if (!txt)
		return -ENOMEM;
	puts(txt);
	free(txt);
	return 0;
}

int check_cmd_main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "btf", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *btf = NULL;
	bool json = false;
	int verbose = 0, c, rc;
	char dir[] = "/tmp/ebpf-prof-check.XXXXXX";
	struct check_result res = { 0 };
	struct cli_opts o;
	struct utsname u;
	/* A recording's own command line, so that the run loads what a real
	 * one would: --alloc adds its programs, Python frames are on by
	 * default. */
	char *rargv[16];
	int rargc = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", lopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'b':
			btf = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ebpf-prof check: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (!mkdtemp(dir)) {
		fprintf(stderr, "ebpf-prof check: cannot create a scratch directory: %s\n",
			strerror(errno));
		return 1;
	}
	rargv[rargc++] = "ebpf-prof";
	rargv[rargc++] = "--alloc";
	rargv[rargc++] = "-o";
	rargv[rargc++] = dir;
	if (btf) {
		rargv[rargc++] = "--btf";
		rargv[rargc++] = (char *)btf;
	}
	rargv[rargc++] = "--";
	rargv[rargc++] = "/bin/true";
	rargv[rargc] = NULL;
	rc = cli_parse(rargc, rargv, &o, stderr);
	if (rc) {
		rmdir(dir);
		return 2;
	}
	o.check = &res;
	o.verbosity = verbose;
	log_set_level(verbose == 0 ? LOG_WARN : verbose == 1 ? LOG_INFO : LOG_DEBUG);
	rc = record_main(&o);
	rmdir(dir);
	uname(&u);
	if (rc || !res.done) {
		fprintf(stderr, "ebpf-prof check: the recorder did not get as far as attaching "
				"everything (see above)\n");
		vstat_free(&res.vs);
		return 1;
	}
	if (json)
		rc = print_json(&res, &u, btf) ? 1 : 0;
	else
		print_table(&res, &u, btf);
	rc = rc || !all_ok(&res);
	vstat_free(&res.vs);
	return rc;
}
