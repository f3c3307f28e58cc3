/* SPDX-License-Identifier: GPL-2.0 */
/* `stablepage-trace features`: what this kernel offers, asked of the kernel. */
#ifndef SPT_PROBE_H
#define SPT_PROBE_H

#include <stdbool.h>
#include <stddef.h>

/* Prints the report on stdout. btf_path: NULL for the running kernel's. Exit code. */
int features_run(const char *btf_path);

/* Loads and attaches one program of bpf/probe.bpf.c alone ("probe_fentry"
 * ...), then unloads it. False with the reason in why. */
bool probe_program(const char *name, const char *btf_path, char *why, size_t len);

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

#endif
