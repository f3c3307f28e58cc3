/* SPDX-License-Identifier: GPL-2.0 */
/* `stablepage-trace features`: what this kernel offers, asked of the kernel. */
#ifndef SPT_PROBE_H
#define SPT_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include "stablepage.h"

/* Prints the report on stdout. btf_path: NULL for the running kernel's. Exit code. */
int features_run(const char *btf_path);

/* Loads and attaches one program of bpf/probe.bpf.c alone ("probe_fentry"
 * ...), then unloads it. False with the reason in why. */
bool probe_program(const char *name, const char *btf_path, char *why, size_t len);

/* Is "bpf" in the kernel's list of active LSMs (securityfs, mounted for the read)? */
bool probe_bpf_lsm_active(void);

/* The tracepoints the tracer attaches to (as tp_btf), and the Linux
 * release that gave them BTF (btf_trace_* typedefs). */
struct spt_tracepoint {
	const char *btf_name, *name, *since;
};
#define SPT_NTRACEPOINTS 4
extern const struct spt_tracepoint spt_tracepoints[SPT_NTRACEPOINTS];

/* The first of them that the kernel BTF lacks, or NULL. */
struct btf;
const struct spt_tracepoint *probe_missing_tracepoint(const struct btf *btf);

/*
 * The fentry mode's attach points: program name in bpf/stablepage.bpf.c,
 * kernel function, and what it is for (enum spt_fentry_role).
 */

struct spt_fentry_point {
	const char *prog, *func;
	enum spt_fentry_role role;
};
#define SPT_NFENTRY 16
/* Where the two that other parts depend on sit in spt_fentry_points. */
#define SPT_FENTRY_END_WRITEBACK 0   /* fentry_folio_end_writeback */
#define SPT_FENTRY_START_WRITEBACK 1 /* fentry_folio_start_writeback */
extern const struct spt_fentry_point spt_fentry_points[SPT_NFENTRY];

/* present[i]: spt_fentry_points[i].func is in the kernel's BTF (vmlinux or
 * a loaded module's; only btf_path's when one is given). */
void probe_fentry_functions(const char *btf_path, bool present[SPT_NFENTRY]);

#endif
