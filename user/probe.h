/* SPDX-License-Identifier: GPL-2.0 */
/* `stablepage-trace features`: what this kernel offers, asked of the kernel. */
#ifndef SPT_PROBE_H
#define SPT_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include "points.h"

/* The features command (features.c): the report on stdout, as text or one
 * JSON object. btf_path: NULL for the running kernel's. Exit code. */
int features_run(const char *btf_path, bool json);

/* Loads and attaches one program of bpf/probe.bpf.c alone ("probe_fentry"
 * ...), then unloads it. False with the reason in why. */
bool probe_program(const char *name, const char *btf_path, char *why, size_t len);

/* Is "bpf" in the kernel's list of active LSMs (securityfs, mounted for the read)? */
bool probe_bpf_lsm_active(void);
/* The address /proc/kallsyms gives a data symbol; 0 when it is not there,
 * hidden (no CAP_SYSLOG: all zeros) or the file cannot be read. */
unsigned long long probe_kallsyms_addr(const char *name);

/* The active LSMs, from securityfs (mounted for the read if it was not);
 * false, with "unknown (...)" in buf, when it cannot be read. */
bool probe_active_lsms(char *buf, size_t len);
/* Is name one of the comma-separated LSMs? */
bool probe_lsm_listed(const char *lsms, const char *name);

struct btf;
bool probe_tracepoint_in_btf(const struct btf *btf, const struct spt_tracepoint *tp);

/* The first of spt_tracepoints that the kernel BTF lacks, or NULL. */
const struct spt_tracepoint *probe_missing_tracepoint(const struct btf *btf);

/* present[i]: spt_fentry_points[i].func is in the kernel's BTF (vmlinux or
 * a loaded module's; only btf_path's when one is given). */
void probe_fentry_functions(const char *btf_path, bool present[SPT_NFENTRY]);

#endif
