/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `ebpf-prof diff BASE_DIR NEW_DIR`: compares two recordings' report.json
 * and says whether NEW regressed, for people (terminal, diff.html) and for
 * CI jobs (--json, exit status).
 */
#ifndef EP_DIFF_CMD_H
#define EP_DIFF_CMD_H

#include <stdio.h>

/* Exit statuses: a CI job gates on them. */
#define DIFF_EXIT_OK	      0
#define DIFF_EXIT_ERROR	      1
#define DIFF_EXIT_USAGE	      2
#define DIFF_EXIT_REGRESSIONS 3

/* argv[0] is "diff". Returns one of the exit statuses above. */
int diff_cmd_main(int argc, char **argv);
void diff_cmd_usage(FILE *f);

#endif
