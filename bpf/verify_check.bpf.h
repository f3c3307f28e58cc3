/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --verify at completion: the segments a write request completed hashed
 * again and compared with their hashes at issue; a changed page counted
 * against its device and kind, and attributed to a process and file.
 */
#ifndef SPT_VERIFY_CHECK_BPF_H
#define SPT_VERIFY_CHECK_BPF_H

/*
 * The process, file and offset of a changed page. A file's page: the
 * violation waiting for this folio's I/O names its writer (inflight.bpf.h);
 * a direct write's page: its submission (verify_direct_pages); otherwise
 * the offset is the segment's on the device.
 */
static __always_inline void verify_attribute(const struct verify_req *r, const struct verify_seg *s,
					     struct spt_verify_change_key *k, struct spt_verify_change *v,
					     __u32 tgid)
{
	__u64 folio = page_folio_addr(s->page);
	struct spt_proc_stats *ps;
	struct verify_direct *d;
	struct inode *host;

	v->offset = r->id.sector * 512 + s->end - s->len;
	k->tgid = tgid;
	if (s->kind == SPT_PAGE_FILE || s->kind == SPT_PAGE_MMAP) {
		__u64 sub = (s->page - folio) / bpf_core_type_size(struct page);

		host = BPF_CORE_READ((struct folio *)folio, mapping, host);
		k->file_dev = BPF_CORE_READ(host, i_sb, s_dev);
		k->ino = BPF_CORE_READ(host, i_ino);
		v->generation = BPF_CORE_READ(host, i_generation);
		v->offset = (BPF_CORE_READ((struct folio *)folio, index) + sub) * VERIFY_PAGE + s->off;
	} else if (s->kind == SPT_PAGE_DIRECT) {
		d = bpf_map_lookup_elem(&verify_direct_pages, &s->page);
		if (d) {
			k->tgid = d->tgid;
			k->file_dev = d->file_dev;
			k->ino = d->ino;
			v->generation = d->generation;
			v->offset = d->offset + s->off;
			__builtin_memcpy(v->comm, d->comm, sizeof(v->comm));
			return;
		}
	}
	ps = k->tgid ? bpf_map_lookup_elem(&proc_stats, &k->tgid) : NULL;
	if (ps)
		__builtin_memcpy(v->comm, ps->comm, sizeof(v->comm));
}

/* A changed page: its row (device, kind, process, file), created on first use. */
static __always_inline void verify_record_change(const struct verify_req *r,
						 const struct verify_seg *s, __u32 kind, __u32 tgid,
						 struct spt_verify_totals *t)
{
	struct spt_verify_change_key k = { .dev = r->dev, .kind = kind };
	struct spt_verify_change v = {}, *row;

	verify_attribute(r, s, &k, &v, tgid);
	row = bpf_map_lookup_elem(&verify_changes, &k);
	if (!row) {
		bpf_map_update_elem(&verify_changes, &k, &v, BPF_NOEXIST);
		row = bpf_map_lookup_elem(&verify_changes, &k);
		if (!row) {
			t->rows_dropped++;
			return;
		}
	}
	__sync_fetch_and_add(&row->pages, 1);
	row->offset = v.offset;
}

/* A file page violated through a mapping in this cycle is an mmap page;
 * the violation names its writer (*tgid, else 0). */
static __always_inline __u32 verify_file_kind(const struct verify_seg *s, __u32 *tgid)
{
	__u64 folio = page_folio_addr(s->page);
	struct inflight_violation *v;

	*tgid = 0;
	if (s->kind != SPT_PAGE_FILE)
		return s->kind;
	v = inflight_slot(folio);
	if (!v || v->folio != folio)
		return SPT_PAGE_FILE;
	*tgid = v->tgid;
	return v->kind == SPT_KIND_MMAP ? SPT_PAGE_MMAP : SPT_PAGE_FILE;
}

struct verify_check_ctx {
	struct verify_req *r;
	__u64 *buf;
	__u32 limit;   /* check the segments that end at or before this byte */
	__u32 abandon; /* count every hashed segment left unverified */
};

/* The next segment of a completing request: hashed again and compared. */
static long verify_check_step(__u64 i, struct verify_check_ctx *x)
{
	struct verify_req *r = x->r;
	struct spt_verify_totals *t = verify_totals_get();
	struct spt_verify_dev_stats *d;
	struct verify_seg *s;
	__u64 j = r->next; /* 64-bit, as in verify_issue_seg() */
	__u32 kind, tgid;
	__u64 hash;

	if (!t || j >= r->nsegs || j >= VERIFY_MAX_SEGS)
		return 1;
	s = &r->seg[j & (VERIFY_MAX_SEGS - 1)];
	if (!x->abandon && s->end > x->limit)
		return 1;
	r->next = j + 1;
	if (!s->hashed)
		return 0; /* counted unverified at issue */
	__sync_fetch_and_add(&n_verify_pending, -1);
	kind = verify_file_kind(s, &tgid);
	if (x->abandon || !x->buf || !hash_segment(s->page, s->off, s->len, x->buf, &hash)) {
		verify_count_unverified(r->dev, kind);
		return 0;
	}
	t->pages_verified++;
	d = verify_dev(r->dev, kind);
	if (d)
		__sync_fetch_and_add(&d->verified, 1);
	if (hash == s->hash)
		return 0;
	t->pages_changed++;
	if (d)
		__sync_fetch_and_add(&d->changed, 1);
	verify_record_change(r, s, kind, tgid, t);
	return 0;
}

/* The request's hashed segments not checked yet: unverified. */
static __always_inline void verify_abandon(struct verify_req *r)
{
	struct verify_check_ctx x = { .r = r, .abandon = 1 };

	bpf_loop(VERIFY_MAX_SEGS, verify_check_step, &x, 0);
}

/* What the request at an address is now (struct spt_verify_ident). */
static __always_inline void verify_ident_of(struct request *rq, struct spt_verify_ident *id)
{
	id->bio = (__u64)rq->bio;
	id->sector = rq->__sector;
	id->bytes = rq->__data_len;
	id->epoch = pause_epoch;
}

/* A write request's first @nr_bytes (of those left) completed. */
static __always_inline int handle_verify_complete(struct request *rq, __u32 nr_bytes)
{
	__u64 key = btf_ptr_addr(rq);
	struct verify_req *r = bpf_map_lookup_elem(&verify_reqs, &key);
	struct verify_check_ctx x = {};
	struct spt_verify_ident now;
	struct verify_cpu *c;
	__u32 zero = 0;

	if (!r)
		return 0;
	c = bpf_map_lookup_elem(&verify_cpus, &zero);
	verify_ident_of(rq, &now);
	/* Issued before a pause, or not the request kept (a completion
	 * passed unseen, the address maybe reused): nothing to compare. */
	if (!c || !spt_verify_completes_kept(&r->id, r->done, &now)) {
		verify_abandon(r);
		bpf_map_delete_elem(&verify_reqs, &key);
		return 0;
	}
	x.r = r;
	x.limit = r->done + nr_bytes;
	/* A completion nested in another on this CPU (an interrupt) finds
	 * the buffer in use: its pages are unverified. */
	if (!c->busy_complete) {
		c->busy_complete = 1;
		x.buf = c->buf[1];
	}
	bpf_loop(VERIFY_MAX_SEGS, verify_check_step, &x, 0);
	if (x.buf)
		c->busy_complete = 0;
	r->done += nr_bytes;
	if (r->done >= r->id.bytes) {
		verify_abandon(r);
		bpf_map_delete_elem(&verify_reqs, &key);
	}
	return 0;
}

/* A kept request put back to be issued again: its hashes at first issue
 * stay (spt_verify_is_requeue()). */
static __always_inline int handle_verify_requeue(struct request *rq)
{
	__u64 key = btf_ptr_addr(rq);
	struct verify_req *r = bpf_map_lookup_elem(&verify_reqs, &key);

	if (r)
		r->requeued = 1;
	return 0;
}

#endif /* SPT_VERIFY_CHECK_BPF_H */
