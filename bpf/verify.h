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

/*
 * A sampled request (verify_reqs, keyed by its struct request's address) is
 * known by what that struct held at its issue. The two tests below are pure
 * (unit-tested, tests/unit/).
 */
struct spt_verify_ident {
	__u64 bio;    /* rq->bio: its first bio */
	__u64 sector; /* rq->__sector */
	__u32 bytes;  /* rq->__data_len */
	__u32 epoch;  /* the pause epoch */
};

/*
 * At issue, an entry already kept under the request's address: the same
 * request issued again only when block_rq_requeue marked it, nothing of it
 * completed and it starts with the same bio, sector and size. Unmarked, it
 * is an earlier request whose completion went unseen (the 6.18 host: a few
 * per 10^5 requests, no recursion miss counted); the request issued now
 * reuses its struct, often with the same bio (the freed bio reallocated)
 * and, rewriting a block, the same sector and size, but other content: the
 * old hashes would make a false "changed".
 */
static inline int spt_verify_is_requeue(const struct spt_verify_ident *kept, __u32 done,
					__u32 requeued, const struct spt_verify_ident *now)
{
	return requeued && !done && kept->epoch == now->epoch && kept->bio == now->bio &&
	       kept->sector == now->sector && kept->bytes == now->bytes;
}

/*
 * At completion (block_rq_complete fires before blk_update_request moves
 * anything): the request is still the kept one, @done bytes of it
 * completed, only if it starts @done bytes further with the rest left, and
 * with its first bio when nothing completed yet. A completion that went
 * unseen leaves @done behind: the entry no longer matches.
 */
static inline int spt_verify_completes_kept(const struct spt_verify_ident *kept, __u32 done,
					    const struct spt_verify_ident *now)
{
	if (kept->epoch != now->epoch || done >= kept->bytes)
		return 0;
	if (now->sector != kept->sector + done / 512 || now->bytes != kept->bytes - done)
		return 0;
	return done || now->bio == kept->bio;
}

#endif /* SPT_VERIFY_H */
