/* SPDX-License-Identifier: GPL-2.0 */
/* `stablepage-trace features`: what this kernel offers, asked of the kernel. */
#ifndef SPT_PROBE_H
#define SPT_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include "points.h"

/* Prints the report on stdout. btf_path: NULL for the running kernel's. Exit code. */
int features_run(const char *btf_path);

/* Loads and attaches one program of bpf/probe.bpf.c alone ("probe_fentry"
 * ...), then unloads it. False with the reason in why. */
bool probe_program(const char *name, const char *btf_path, char *why, size_t len);

/* Is "bpf" in the kernel's list of active LSMs (securityfs, mounted for the read)? */
bool probe_bpf_lsm_active(void);

/* The first of spt_tracepoints that the kernel BTF lacks, or NULL. */
struct btf;
const struct spt_tracepoint *probe_missing_tracepoint(const struct btf *btf);

/* present[i]: spt_fentry_points[i].func is in the kernel's BTF (vmlinux or
 * a loaded module's; only btf_path's when one is given). */
void probe_fentry_functions(const char *btf_path, bool present[SPT_NFENTRY]);

#endif
