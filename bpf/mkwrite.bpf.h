/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fentry mode: page_mkwrite calls, and the folios' writeback cycles they
 * are checked against. The user's store lands only after the fault
 * returns, so a folio still under writeback when the outermost hooked
 * handler returns successfully is the exact mmap violation; the dirtying
 * the tracepoint sees can come before the handler's wait, or after it
 * returned (ext4's mapped-buffers path).
 */
#ifndef SPT_MKWRITE_BPF_H
#define SPT_MKWRITE_BPF_H

/* A thread inside a hooked page_mkwrite handler. Handlers nest (ext4 ->
 * block_page_mkwrite, xfs -> iomap_page_mkwrite): the outermost return
 * decides. */
struct mkwrite_call {
	__u32 depth;
	__u32 dirtied; /* the folio went clean -> dirty under writeback inside */
	__u32 epoch;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct mkwrite_call);
} mkwrite_calls SEC(".maps");

/* When each folio's writeback started, keyed by folio. LRU: a folio freed
 * after its writeback leaves its entry behind. */
struct writeback_start {
	__u64 ts_ns;
	__u32 dev;
	__u32 epoch;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct writeback_start);
} writeback_started SEC(".maps");

/*
 * Was the folio violated already in its current writeback cycle? A
 * violation recorded while its folio's writeback was ending (on another
 * CPU, which did not find it yet) stays behind: it is older than the
 * cycle's start, and the new violation replaces it (would_stall_untimed).
 */
static __always_inline bool violated_this_cycle(__u64 folio)
{
	struct inflight_violation *v = inflight_slot(folio);
	struct writeback_start *ws;

	if (!v || v->folio != folio || v->epoch != pause_epoch)
		return false;
	ws = bpf_map_lookup_elem(&writeback_started, &folio);
	/* No start seen: the cycle began before tracing, as did no entry. */
	return !ws || v->ts_ns >= ws->ts_ns;
}

static __always_inline int handle_mkwrite_entry(void)
{
	__u32 tid = bpf_get_current_pid_tgid();
	struct mkwrite_call *call = bpf_map_lookup_elem(&mkwrite_calls, &tid);
	struct mkwrite_call first = { .depth = 1, .epoch = pause_epoch };

	if (call && call->epoch == pause_epoch)
		call->depth++;
	else
		bpf_map_update_elem(&mkwrite_calls, &tid, &first, BPF_ANY);
	return 0;
}

#endif /* SPT_MKWRITE_BPF_H */
