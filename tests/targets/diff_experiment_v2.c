// ep-target-libs: -lsqlite3
// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A second build of diff_experiment (see there): crunch_b does twice the
 * work by default and every function sits at another address. The diff
 * tests run it under the first build's file name in another directory. */
#define DIFF_B_DEFAULT	  2
#define DIFF_SECOND_BUILD 1
#include "diff_experiment.c"
