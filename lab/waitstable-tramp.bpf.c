// SPDX-License-Identifier: GPL-2.0
/*
 * Empty fentry and fexit programs on folio_wait_stable(), which every
 * buffered write() calls. Attached and detached under writers (progcost -a
 * -p, driven by lab/patch-cycles.sh) they hung the 6.1 guest under QEMU's
 * multi-threaded TCG within two cycles: the reproducer behind the lab's
 * single-threaded TCG (docs/lab/2026-12-06-tcg-trampoline-lockup.md).
 * Loads only where trampolines do.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("fentry/folio_wait_stable")
int BPF_PROG(fentry_folio_wait_stable)
{
	return 0;
}

SEC("fexit/folio_wait_stable")
int BPF_PROG(fexit_folio_wait_stable)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
