// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The "new build" of fixed_work (see there): beta() does twice the work. */
#define BETA_FACTOR 2
#include "fixed_work.c"
