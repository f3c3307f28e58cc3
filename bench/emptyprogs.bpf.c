// SPDX-License-Identifier: GPL-2.0
/*
 * Empty programs on the tracepoints the tracer attaches in tracepoint mode
 * (sched_switch aside: it is attached only once a writer waits). What they
 * cost a workload is the floor under ours: the tracepoint's dispatch and a
 * program's entry and exit, before any body. make bench's "empty" windows
 * attach several copies (progcost -p) to make that cost measurable.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(tp_writeback_dirty_folio)
{
	return 0;
}

SEC("tp_btf/folio_wait_writeback")
int BPF_PROG(tp_folio_wait_writeback)
{
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(tp_block_rq_complete)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
