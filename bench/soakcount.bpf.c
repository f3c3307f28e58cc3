// SPDX-License-Identifier: GPL-2.0
/*
 * The soak benchmark's second count (bench/soakcount.c loads it): every
 * folio of one device that goes clean -> dirty while PG_writeback is set,
 * counted on the same tracepoint as the tracer but by code that shares
 * nothing with bpf/. The tracer splits these dirtyings into violations and
 * stable_dirtied (docs/semantics.md), so in tracepoint mode
 *     violations_total + stable_dirtied == files + bdev_cache
 * must hold exactly when both were attached over the same activity.
 *
 * Every read goes through bpf_probe_read_kernel() (BPF_CORE_READ), where
 * the tracer uses direct loads from BTF pointers: a different path to the
 * same kernel state.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

/* The device to count: a filesystem's s_dev, or a block device's own
 * cache (the inode's i_rdev). Set before load. */
const volatile __u32 target_dev = 0;

enum { C_FILES, C_BDEV_CACHE, C_DIRTIED, C_MAX };

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, C_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

/* Dirtyings under writeback by comm: which writers they came from. A comm
 * that finds the table full is counted only in counts. */
struct comm_key {
	char comm[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct comm_key);
	__type(value, __u64);
} by_comm SEC(".maps");

/* 6.18 wraps folio->flags in memdesc_flags_t; before, a plain word. */
struct folio___plain {
	unsigned long flags;
} __attribute__((preserve_access_index));

static __always_inline bool under_writeback(struct folio *folio)
{
	int bit = bpf_core_enum_value(enum pageflags, PG_writeback);
	unsigned long word;

	if (bpf_core_type_exists(memdesc_flags_t))
		word = BPF_CORE_READ(folio, flags.f);
	else
		word = BPF_CORE_READ((struct folio___plain *)folio, flags);
	return (word >> bit) & 1;
}

static __always_inline void bump(__u32 idx)
{
	__u64 *c = bpf_map_lookup_elem(&counts, &idx);

	if (c)
		(*c)++;
}

SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(soak_dirty_folio, struct folio *folio, struct address_space *mapping)
{
	struct comm_key key = {};
	struct inode *host;
	__u64 one = 1, *n;
	bool bdev_cache;
	umode_t mode;
	__u32 dev;

	if (!mapping)
		return 0;
	host = BPF_CORE_READ(mapping, host);
	if (!host)
		return 0;
	mode = BPF_CORE_READ(host, i_mode);
	/* S_IFMT and S_IFBLK (uapi stat.h) */
	bdev_cache = (mode & 0170000) == 0060000;
	dev = bdev_cache ? BPF_CORE_READ(host, i_rdev) : BPF_CORE_READ(host, i_sb, s_dev);
	if (dev != target_dev)
		return 0;
	bump(C_DIRTIED);
	if (!under_writeback(folio))
		return 0;
	bump(bdev_cache ? C_BDEV_CACHE : C_FILES);
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	n = bpf_map_lookup_elem(&by_comm, &key);
	/* NOEXIST fails when another CPU made the row meanwhile: add to it */
	if (!n && !bpf_map_update_elem(&by_comm, &key, &one, BPF_NOEXIST))
		return 0;
	n = n ?: bpf_map_lookup_elem(&by_comm, &key);
	if (n)
		__sync_fetch_and_add(n, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
