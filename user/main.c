// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* placeholder until the CLI lands */
int main(void) { return 0; }
