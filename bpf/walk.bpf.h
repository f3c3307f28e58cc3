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
 */
#ifndef SPT_WALK_BPF_H
#define SPT_WALK_BPF_H

#define WALK_MAX_STEPS 4096

/*
 * The walk's state lives in a map value, not on the stack: the verifier
 * tracks no values in map memory, so it checks walk_step() once for any
 * state. With the state on the stack it follows the values: from 6.7 on
 * through every step, a long verification at every start; before, only as
 * they are at the call (all 0), dropping as dead the code that finds
 * folios (core_fixes.bpf.h, "Verifier").
 */
struct walk_state {
	__u64 now;
	__u64 bio;             /* next bio to load */
	__u64 vecs;            /* current bio's bi_io_vec */
	__u32 vec_idx;
	__u32 vecs_left;       /* bio_vecs left in an owned table, or 0 */
	__u32 bytes_left;      /* for a clone: bytes left from vecs[vec_idx] on */
	__u32 have_vec;
	__u64 vec_page;        /* current bio_vec's first page */
	__u32 page_idx, page_end; /* pages of the current bio_vec still to visit */
	__u64 last_folio;
	__u32 busy;            /* a walk is running on this CPU */
	__u32 pad;
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

/* A folio of a completed write request: its writeback ends now. */
static __always_inline void folio_io_ended(__u64 folio, __u64 *now)
{
	end_violation(folio, now);
	release_holders(folio, now);
}

/* Load the next bio: 1 (stop) when the request has no more. */
static __always_inline long walk_next_bio(struct walk_state *c)
{
	struct bio *bio = (struct bio *)c->bio;

	if (!bio)
		return 1;
	c->vecs = (__u64)BPF_CORE_READ(bio, bi_io_vec);
	c->vecs_left = BPF_CORE_READ(bio, bi_vcnt);
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

/* The current bio_vec's next page; its folio, once per run of pages. */
static __always_inline void walk_next_page(struct walk_state *c)
{
	__u64 folio = page_folio_addr(c->vec_page + c->page_idx * bpf_core_type_size(struct page));

	if (++c->page_idx > c->page_end)
		c->have_vec = 0;
	if (folio != c->last_folio) {
		c->last_folio = folio;
		folio_io_ended(folio, &c->now);
	}
}

static long walk_step(__u64 i, struct walk_ctx *ctx)
{
	struct walk_state *c = ctx->s;

	if (!c->have_vec) {
		struct bio_vec bv;
		__u32 len;

		if (!c->vecs_left && !c->bytes_left)
			return walk_next_bio(c);
		if (bpf_probe_read_kernel(&bv, sizeof(bv),
					  (void *)(c->vecs + c->vec_idx * bpf_core_type_size(struct bio_vec))) ||
		    !bv.bv_len) {
			c->vecs_left = c->bytes_left = 0;
			return 0;
		}
		len = bv.bv_len;
		if (c->vecs_left) {
			c->vecs_left--;
		} else {
			if (len > c->bytes_left)
				len = c->bytes_left;
			c->bytes_left -= len;
		}
		c->vec_idx++;
		c->vec_page = (__u64)bv.bv_page;
		c->page_idx = bv.bv_offset >> PAGE_SHIFT_X86;
		c->page_end = (bv.bv_offset + len - 1) >> PAGE_SHIFT_X86;
		c->have_vec = 1;
		return 0;
	}
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

/* End the writeback of the request's folios (at *now, read if 0). */
static __always_inline void walk_request(struct request *rq, __u64 *now)
{
	__u64 folio = single_page_folio(rq);
	__u32 zero = 0;
	struct walk_state *ws;
	struct walk_ctx c;

	if (folio) {
		folio_io_ended(folio, now);
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
	bpf_loop(WALK_MAX_STEPS, walk_step, &c, 0);
	ws->busy = 0;
}

#endif /* SPT_WALK_BPF_H */
