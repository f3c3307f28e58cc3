/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --verify[=N]: pages changed while their write request is in flight. One
 * write request in N is sampled when it is issued (block_rq_issue): the
 * content of each page segment it carries is hashed and kept with the
 * request (verify_issue.bpf.h). When the request completes
 * (block_rq_complete, which blk_update_request() fires before it ends any
 * bio, so the pages are still the request's), the segments it completed are
 * hashed again (verify_check.bpf.h); a different hash is a page the device
 * may have stored, mirrored or checksummed other than the kernel saw at
 * issue. Pages are read through the kernel's direct map
 * (verify_pages.bpf.h).
 *
 * This header: what --verify keeps (a request's segments from issue to
 * completion, the per-CPU walk, the counts user space reads, direct writes'
 * pages from submission) and the counting of a page left unverified.
 */
#ifndef SPT_VERIFY_STATE_BPF_H
#define SPT_VERIFY_STATE_BPF_H

#include "verify.h"

#define VERIFY_MAX_SEGS 64      /* hashed per request; the rest unverified */
#define VERIFY_MAX_REQS 1024    /* sampled requests in flight */
#define VERIFY_PAGE 4096

struct verify_seg {
	__u64 page;  /* struct page address */
	__u64 hash;
	__u32 end;   /* byte offset in the request just past this segment */
	__u16 off, len; /* within the page */
	__u8 kind;   /* enum spt_page_kind at issue */
	__u8 hashed; /* 0: counted unverified at issue */
	__u16 pad;
	__u32 pad2;
};

/* A sampled request, from issue to completion, keyed by its address. */
struct verify_req {
	struct spt_verify_ident id; /* at issue */
	__u32 done;        /* bytes completed so far */
	__u32 requeued;    /* block_rq_requeue seen since its issue */
	__u32 nsegs, next; /* segments kept; the next to check */
	__u32 dev, pad;
	struct verify_seg seg[VERIFY_MAX_SEGS];
};

/* Per CPU: the walk at issue, the request being built, and one hashing
 * buffer per program (an interrupt's completion can run inside an issue). */
struct verify_cpu {
	__u64 bio, vecs, page;
	__u32 idx, bvec_done, bytes_left, seg_left, off, pos;
	__u32 busy_issue, busy_complete;
	struct verify_req req;
	__u64 buf[2][VERIFY_PAGE / 8];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct verify_cpu);
} verify_cpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VERIFY_MAX_REQS);
	__type(key, __u64);
	__type(value, struct verify_req);
} verify_reqs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct spt_verify_totals);
} verify_totals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_DEVS * SPT_PAGE_KIND_MAX);
	__type(key, struct spt_verify_dev_key);
	__type(value, struct spt_verify_dev_stats);
} verify_devs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct spt_verify_change_key);
	__type(value, struct spt_verify_change);
} verify_changes SEC(".maps");

/* A direct write's page at submission: who, which file, where. */
struct verify_direct {
	__u32 tgid, file_dev;
	__u64 ino, offset;
	__u32 generation, pad;
	char comm[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct verify_direct);
} verify_direct_pages SEC(".maps");

static __always_inline struct spt_verify_totals *verify_totals_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&verify_totals, &zero);
}

/* The device's row for a page kind, created on first use. */
static __always_inline struct spt_verify_dev_stats *verify_dev(__u32 dev, __u32 kind)
{
	struct spt_verify_dev_key k = { .dev = dev, .kind = kind };
	struct spt_verify_dev_stats zero = {}, *s = bpf_map_lookup_elem(&verify_devs, &k);

	if (s)
		return s;
	bpf_map_update_elem(&verify_devs, &k, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&verify_devs, &k);
}

/* A page counted unverified (exact: totals, and the device row if it fits). */
static __always_inline void verify_count_unverified(__u32 dev, __u32 kind)
{
	struct spt_verify_totals *t = verify_totals_get();
	struct spt_verify_dev_stats *d = verify_dev(dev, kind);

	if (t)
		t->pages_unverified++;
	if (d)
		__sync_fetch_and_add(&d->unverified, 1);
}

#endif /* SPT_VERIFY_STATE_BPF_H */
