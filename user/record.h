/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The recording run: find or launch the target, sample until told to stop,
 * write the result bundle. */
#ifndef EBPF_PROF_RECORD_H
#define EBPF_PROF_RECORD_H

#include "cli.h"

/* Returns the process exit code: 0 ok, 1 runtime error. */
int record_main(const struct cli_opts *o);

#endif
