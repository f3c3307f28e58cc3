/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --verify: types shared by bpf/verify_*.bpf.h and user space (user/verify*.c).
 * A written page's content is hashed when its write request is issued and
 * again when the request completes; a difference is a page changed in flight.
 */
#ifndef SPT_VERIFY_H
#define SPT_VERIFY_H

/* What a verified page is, decided from the page itself (not how it was
 * written, enum spt_kind). */
enum spt_page_kind {
	SPT_PAGE_FILE = 0,     /* a file's page-cache page (not violated through a mapping) */
	SPT_PAGE_MMAP = 1,     /* a file page whose violation in this cycle was a store through mmap */
	SPT_PAGE_DIRECT = 2,   /* an anonymous user page: a direct-I/O buffer */
	SPT_PAGE_METADATA = 3, /* the block device's own cache, the device held by a filesystem (or dm/md) */
	SPT_PAGE_SWAP = 4,     /* a page in the swap cache */
	SPT_PAGE_BDEV = 5,     /* the block device's own cache, nothing holding the device */
	SPT_PAGE_KERNEL = 6,   /* no mapping: a kernel buffer (journal copies, bounce pages) */
	SPT_PAGE_KIND_MAX = 7,
};

/* Totals, a per-CPU array entry summed by user space. Exact:
 * pages_seen == pages_verified + pages_unverified + pages in flight. */
struct spt_verify_totals {
	__u64 requests_seen;    /* write requests with data issued */
	__u64 requests_sampled; /* of which hashed (1 in N) */
	__u64 pages_seen;       /* page segments of the sampled requests */
	__u64 pages_verified;   /* hashed at issue and again at completion */
	__u64 pages_changed;    /* of the verified: the hashes differ */
	__u64 pages_unverified; /* not hashed at one of the two ends */
	__u64 rows_dropped;     /* a changed page whose row did not fit (counted in totals) */
	__u64 direct_untracked; /* direct-write page not remembered at submission (table full) */
};

/* Per device (the request's block device) and page kind. */
struct spt_verify_dev_key {
	__u32 dev;  /* kernel dev_t of the request's block device */
	__u32 kind; /* enum spt_page_kind */
};

struct spt_verify_dev_stats {
	__u64 verified, changed, unverified;
};

/* Changed pages by device, kind, process and file. */
struct spt_verify_change_key {
	__u32 dev;      /* the request's block device */
	__u32 kind;     /* enum spt_page_kind */
	__u32 tgid;     /* last known writer; 0 when unknown */
	__u32 file_dev; /* the file's superblock s_dev; 0 when not a file page */
	__u64 ino;      /* 0 when not a file page */
};

struct spt_verify_change {
	__u64 pages;
	__u64 offset;     /* the latest changed page: byte offset in the file, or on the device */
	__u32 generation; /* inode i_generation, for path lookup */
	__u32 pad;
	char comm[16];
};

#endif /* SPT_VERIFY_H */
