/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoint mode: the folios of a completed write request, whose writeback
 * ends right after block_rq_complete. Each one ends its violation's
 * would-stall and releases its holders.
 *
 * The walk goes over bios, their bio_vecs (a bio_vec may span several
 * pages, and so several folios), pages: one page, bio_vec or bio per
 * bpf_loop() step. A bio that owns its bio_vec table (what filesystems
 * submit) has bi_vcnt entries in it; by completion its iterator may already
 * be consumed (bi_iter.bi_size can be 0 at block_rq_complete: seen on loop
 * devices). A clone (a split, dm) shares its parent's table and has
 * bi_vcnt 0: only its iterator says which part is its own.
 *
 * A request can complete in parts (several block_rq_complete calls, each
 * for the next nr_bytes: SCSI ends the good bytes before a failed rest).
 * A bio ends (and its folios' writeback with it) in the call that
 * completes its last byte, with that call's status: a partial call walks
 * only the bios it completes whole, from the request's first one not yet
 * ended, by their iterators' remaining sizes (blk_update_request() fires
 * the tracepoint before it advances them). A request completing whole (the
 * common case) is walked whole, iterators unread.
 *
 * A request that completed with an error marks its folios' violations as
 * failed (in tracepoint mode as it ends them; in fentry mode without
 * ending them: folio_end_writeback() ends them after).
 */
#ifndef SPT_WALK_BPF_H
#define SPT_WALK_BPF_H

#define WALK_MAX_STEPS 4096
/* bio_vecs read at once from a bio's own table (its bi_vcnt bounds them) */
#define WALK_VECS 8
/* bytes of struct pages read at once: 8 pages of 64 bytes (x86-64) */
#define WALK_PAGE_BYTES 512

/*
 * The walk's state lives in a map value, not on the stack: the verifier
 * tracks no values in map memory, so it checks walk_step() once for any
 * state. With the state on the stack it follows the values: from 6.7 on
 * through every step, a long verification at every start; before, only as
 * they are at the call (all 0), dropping as dead the code that finds
 * folios (core_fixes.bpf.h, "Verifier").
 *
 * Helper reads are most of a page's cost, so each one covers several:
 * WALK_VECS bio_vecs of an owned table at once, and the struct pages of
 * up to WALK_PAGE_BYTES of a bio_vec at once (a bio_vec's pages are
 * physically contiguous, so their struct pages are adjacent in the
 * vmemmap, as the kernel's own bvec iteration assumes). A large folio
 * that runs past what was read is skipped to its end.
 */
struct walk_state {
	__u64 now;
	__u64 bio;             /* next bio to load */
	__u64 vecs;            /* current bio's bi_io_vec */
	__u32 vec_idx;         /* next bio_vec of the table to read */
	__u32 vecs_left;       /* bio_vecs left in an owned table, or 0 */
	__u32 bytes_left;      /* for a clone: bytes left from vecs[vec_idx] on */
	__u32 have_vec;
	__u32 buf_next, buf_len; /* vec_buf entries taken and read */
	__u64 vec_page;        /* current bio_vec's first page */
	__u32 page_idx, page_end; /* pages of the current bio_vec still to visit */
	__u32 buf_first, buf_end; /* pages of the current bio_vec in page_buf */
	__u64 last_folio;
	__u64 budget;          /* bytes this completion ends, ~0: all */
	__u32 busy;            /* a walk is running on this CPU */
	__u8 failed;           /* the request completed with an error */
	__u8 mark_only;        /* fentry mode: mark failures, end nothing */
	__u8 pages_are_folios; /* no large folio to find: a page is its folio */
	__u8 pad;
	struct end_batch ended; /* flushed when the walk ends */
	struct bio_vec vec_buf[WALK_VECS];
	__u8 page_buf[WALK_PAGE_BYTES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct walk_state);
} walk_states SEC(".maps");

struct walk_ctx {
	struct walk_state *s;
};

/* A folio of a completed write request: its writeback ends now (or, with
 * @mark_only, at folio_end_writeback(), and the request failed). */
static __always_inline void folio_io_ended(__u64 folio, __u64 *now, bool failed, bool mark_only,
					   struct end_batch *b)
{
	if (mark_only) {
		mark_violation_failed(folio);
		return;
	}
	end_violation(folio, now, failed, b);
	release_holders(folio, now);
}

/* Load the next bio: 1 (stop) when the request has no more. */
static __always_inline long walk_next_bio(struct walk_state *c)
{
	struct bio *bio = (struct bio *)c->bio;

	if (!bio)
		return 1;
	if (~c->budget) {
		__u32 size = BPF_CORE_READ(bio, bi_iter.bi_size);

		/* Not completed by this call: it ends in a later one. */
		if (size > c->budget)
			return 1;
		c->budget -= size;
	}
	c->vecs = (__u64)BPF_CORE_READ(bio, bi_io_vec);
	c->vecs_left = BPF_CORE_READ(bio, bi_vcnt);
	c->buf_next = c->buf_len = 0;
	if (c->vecs_left) {
		c->vec_idx = 0;
	} else {
		c->vec_idx = BPF_CORE_READ(bio, bi_iter.bi_idx);
		c->bytes_left = BPF_CORE_READ(bio, bi_iter.bi_size) +
				BPF_CORE_READ(bio, bi_iter.bi_bvec_done);
	}
	c->bio = (__u64)BPF_CORE_READ(bio, bi_next);
	return 0;
}

/*
 * Refill vec_buf from the table: up to WALK_VECS of an owned table, one of
 * a clone's (whose table size is its parent's, unknown here). 0 when none
 * could be read.
 */
static __always_inline __u32 walk_read_vecs(struct walk_state *c)
{
	__u32 n = c->vecs_left ? c->vecs_left : 1;
	__u64 size = bpf_core_type_size(struct bio_vec);

	if (n > WALK_VECS)
		n = WALK_VECS;
	if (size != sizeof(struct bio_vec) ||
	    bpf_probe_read_kernel(c->vec_buf, n * sizeof(struct bio_vec),
				  (void *)(c->vecs + c->vec_idx * size)))
		return 0;
	c->vec_idx += n;
	c->buf_next = 0;
	c->buf_len = n;
	return n;
}

/* Take the current bio's next bio_vec as the one to visit: 1 when it has
 * none left. */
static __always_inline long walk_next_vec(struct walk_state *c)
{
	struct bio_vec *bv;
	__u32 i, len;

	if (!c->vecs_left && !c->bytes_left)
		return 1;
	if (c->buf_next >= c->buf_len && !walk_read_vecs(c))
		goto end_bio;
	i = c->buf_next++;
	if (i >= WALK_VECS)
		goto end_bio;
	bv = &c->vec_buf[i];
	len = bv->bv_len;
	if (!len)
		goto end_bio;
	if (c->vecs_left) {
		c->vecs_left--;
	} else {
		if (len > c->bytes_left)
			len = c->bytes_left;
		c->bytes_left -= len;
	}
	c->vec_page = (__u64)bv->bv_page;
	c->page_idx = bv->bv_offset >> PAGE_SHIFT_X86;
	c->page_end = (bv->bv_offset + len - 1) >> PAGE_SHIFT_X86;
	c->buf_first = c->buf_end = 0;
	c->have_vec = 1;
	return 0;
end_bio:
	c->vecs_left = c->bytes_left = 0;
	return 1;
}

/*
 * Read the struct pages of the current bio_vec from page_idx on, as many as
 * WALK_PAGE_BYTES holds (their compound_head words are what is used).
 * false when they could not be read.
 */
static __always_inline bool walk_read_pages(struct walk_state *c)
{
	__u64 psize = bpf_core_type_size(struct page);
	__u64 first = c->vec_page + c->page_idx * psize;
	__u32 n = c->page_end - c->page_idx + 1;
	__u64 size;

	if (n > WALK_PAGE_BYTES / psize)
		n = WALK_PAGE_BYTES / psize;
	size = (n - 1) * psize + sizeof(__u64);
	if (!n || size > WALK_PAGE_BYTES ||
	    bpf_probe_read_kernel(c->page_buf, size,
				  (void *)(first + bpf_core_field_offset(struct page, compound_head))))
		return false;
	c->buf_first = c->page_idx;
	c->buf_end = c->page_idx + n;
	return true;
}

/*
 * The folio of the current bio_vec's next page, read from page_buf (filled
 * when it does not hold the page). A tail page that is the last one read
 * skips the rest of its folio. 0 when it could not be read.
 */
static __always_inline __u64 walk_read_folio(struct walk_state *c, __u64 page)
{
	__u64 psize = bpf_core_type_size(struct page), off, head, folio;

	if ((c->page_idx < c->buf_first || c->page_idx >= c->buf_end) && !walk_read_pages(c))
		return 0;
	off = (c->page_idx - c->buf_first) * psize;
	if (off > WALK_PAGE_BYTES - sizeof(__u64))
		return 0;
	head = *(__u64 *)(c->page_buf + off);
	folio = folio_of_page(page, head);
	if (++c->page_idx == c->buf_end && head & 1 && c->page_idx <= c->page_end) {
		__u32 nr = folio_ptr_nr_pages(folio), in_folio = (page - folio) / psize + 1;

		if (nr > in_folio)
			c->page_idx += nr - in_folio;
	}
	return folio;
}

/*
 * The current bio_vec's next page; its folio, once per run of pages. With
 * no large folio in flight or held (pages_are_folios), a page that is not
 * its own folio is a tail page no violation or hold is on, so the page is
 * looked up as it is, unread.
 */
static __always_inline void walk_next_page(struct walk_state *c)
{
	__u64 page = c->vec_page + c->page_idx * bpf_core_type_size(struct page), folio;

	if (c->pages_are_folios) {
		folio = page;
		c->page_idx++;
	} else if (!(folio = walk_read_folio(c, page))) {
		c->have_vec = 0;
		return;
	}
	if (c->page_idx > c->page_end)
		c->have_vec = 0;
	if (folio != c->last_folio) {
		c->last_folio = folio;
		folio_io_ended(folio, &c->now, c->failed, c->mark_only, &c->ended);
	}
}

static long walk_step(__u64 i, struct walk_ctx *ctx)
{
	struct walk_state *c = ctx->s;

	if (!c->have_vec && walk_next_vec(c))
		return walk_next_bio(c);
	walk_next_page(c);
	return 0;
}

/*
 * The folio of a request that is one bio with one segment inside one page
 * (a 4 KiB write, the msync of a page), by direct loads only, where the walk
 * takes a bpf_loop() and helper reads. 0: the request needs the walk.
 */
static __always_inline __u64 single_page_folio(struct request *rq)
{
	struct bio *bio = rq->bio;
	struct bio_vec *bv;
	struct page *page;
	__u32 offset, len;

	if (!bio || bio->bi_next || bio->bi_vcnt != 1)
		return 0;
	bv = bio->bi_io_vec;
	page = bv->bv_page;
	offset = bv->bv_offset;
	len = bv->bv_len;
	if (!page || !len || offset + len > (1U << PAGE_SHIFT_X86))
		return 0;
	/* compound_head by a direct load is typed as the union's first member
	 * (lru.next, a pointer), hence the conversion */
	return folio_of_page(btf_ptr_addr(page), btf_ptr_addr((void *)page->compound_head));
}

/*
 * End the writeback of the folios in the request's next @nr_bytes (at
 * *now, read if 0); @failed: it completed with an error. With @mark_only,
 * only mark their violations failed.
 */
static __always_inline void walk_request(struct request *rq, __u64 *now, __u32 nr_bytes,
					 bool failed, bool mark_only)
{
	bool whole = nr_bytes >= rq->__data_len;
	__u64 folio = single_page_folio(rq);
	__u32 zero = 0;
	struct walk_state *ws;
	struct walk_ctx c;

	if (folio) {
		/* Its one bio ends only in the call that completes it. */
		if (!whole && nr_bytes < rq->bio->bi_iter.bi_size)
			return;
		folio_io_ended(folio, now, failed, mark_only, NULL);
		return;
	}
	ws = bpf_map_lookup_elem(&walk_states, &zero);
	c.s = ws;

	/* A completion nested in another on this CPU (an interrupt) leaves
	 * its folios in flight: untimed later, still counted. */
	if (!ws || ws->busy)
		return;
	__builtin_memset(ws, 0, sizeof(*ws));
	ws->busy = 1;
	ws->now = *now;
	ws->bio = (__u64)rq->bio;
	ws->failed = failed;
	ws->mark_only = mark_only;
	/* A large folio violated or held after this, while the walk runs,
	 * is still found at its head page, which is its address; missed
	 * only in a request that has its tail pages alone. */
	ws->pages_are_folios = !n_large_inflight && !n_held_folios;
	ws->budget = whole ? ~0ULL : nr_bytes;
	bpf_loop(WALK_MAX_STEPS, walk_step, &c, 0);
	flush_end_batch(&ws->ended);
	ws->busy = 0;
}

#endif /* SPT_WALK_BPF_H */
