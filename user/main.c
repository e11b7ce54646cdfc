// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* CLI entry point: picks the subcommand, sets the log level, runs it. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "diff/diff_cmd.h"
#include "jetson/jetson.h"
#include "kernel/check_cmd.h"
#include "util/log.h"
#include "util/sigbus_guard.h"
#include "record.h"
#include "report/report.h"
#include "report/report_cmd.h"

int main(int argc, char **argv)
{
	struct cli_opts o;
	int rc;

	/* Before any file a profiled program names is mapped (sigbus_guard.h). */
	rc = sigbus_guard_install();
	if (rc)
		fprintf(stderr, "warning: cannot install the SIGBUS guard: %s\n", strerror(-rc));
	if (argc > 1 && !strcmp(argv[1], "jetson"))
		return jetson_cmd_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "report"))
		return report_cmd_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "diff"))
		return diff_cmd_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "check"))
		return check_cmd_main(argc - 1, argv + 1);
	rc = cli_parse(argc, argv, &o, stderr);
	if (rc)
		return rc;
	if (o.show_help) {
		cli_usage(stdout);
		return 0;
	}
	if (o.show_version) {
		printf("ebpf-prof %s\n", EBPF_PROF_VERSION);
		return 0;
	}
	log_set_level(o.verbosity < 0	 ? LOG_ERROR
		      : o.verbosity == 0 ? LOG_WARN
		      : o.verbosity == 1 ? LOG_INFO
					 : LOG_DEBUG);
	return record_main(&o);
}
