/* SPDX-License-Identifier: GPL-2.0 */
/* `stablepage-trace features`: what this kernel offers, asked of the kernel. */
#ifndef SPT_PROBE_H
#define SPT_PROBE_H

/* Prints the report on stdout. btf_path: NULL for the running kernel's. Exit code. */
int features_run(const char *btf_path);

#endif
