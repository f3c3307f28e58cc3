// SPDX-License-Identifier: GPL-2.0
/*
 * Empty programs, one per kind of attach point stablepage-trace can use.
 * `stablepage-trace features` loads and attaches each alone to learn what
 * this kernel allows; the answer is the kernel's, not a version table's.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(probe_tp_btf)
{
	return 0;
}

SEC("fentry/folio_end_writeback")
int BPF_PROG(probe_fentry)
{
	return 0;
}

SEC("fexit/filemap_page_mkwrite")
int BPF_PROG(probe_fexit)
{
	return 0;
}

SEC("fmod_ret/security_file_permission")
int BPF_PROG(probe_fmod_ret)
{
	return 0;
}

SEC("lsm/file_permission")
int BPF_PROG(probe_lsm)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
