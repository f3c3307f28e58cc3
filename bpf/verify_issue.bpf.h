/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --verify at issue: a sampled write request's page segments walked and
 * hashed (bpf_loop over its bios and bio_vecs), the request kept until it
 * completes (verify_check.bpf.h).
 *
 * Direct writes: the page is a user buffer that no page-cache hook sees.
 * block_bio_queue runs in the submitter's context for a write syscall's
 * bios (iomap and the block layer submit from the syscall); there the
 * syscall frame gives the file and offset, remembered per page until the
 * request is checked.
 */
#ifndef SPT_VERIFY_ISSUE_BPF_H
#define SPT_VERIFY_ISSUE_BPF_H

#define VERIFY_WALK_STEPS 4096
#define VERIFY_BIO_VECS 16      /* bio_vecs of a direct write remembered at submission */
#define O_DIRECT_X86 00040000   /* include/uapi/asm-generic/fcntl.h (x86) */
#define REQ_OP_MASK_X 0xff      /* as rq_is_write(), for bios */

/* One page segment of the request being issued: kept and hashed, or
 * counted unverified (beyond VERIFY_MAX_SEGS, unreadable). */
static __always_inline void verify_issue_seg(struct verify_cpu *c, struct spt_verify_totals *t,
					     __u64 page, __u32 off, __u32 len)
{
	struct verify_req *r = &c->req;
	__u64 folio = page_folio_addr(page);
	__u64 i = r->nsegs; /* 64-bit: a 32-bit spill loses its bounds on 6.1 */
	struct verify_seg seg = { .page = page, .off = off, .len = len };

	c->pos += len;
	t->pages_seen++;
	seg.kind = page_kind(folio);
	seg.end = c->pos;
	if (dm_state != 2 && seg.kind != SPT_PAGE_DIRECT && seg.kind != SPT_PAGE_KERNEL)
		dm_learn(folio);
	if (i >= VERIFY_MAX_SEGS) {
		verify_count_unverified(r->dev, seg.kind);
		return;
	}
	seg.hashed = hash_segment(page, off, len, c->buf[0], &seg.hash);
	if (seg.hashed)
		__sync_fetch_and_add(&n_verify_pending, 1);
	else
		verify_count_unverified(r->dev, seg.kind);
	i = r->nsegs;
	if (i < VERIFY_MAX_SEGS) {
		r->seg[i] = seg;
		r->nsegs = i + 1;
	}
}

/* Load the next bio of the request; 1 (stop) when there is none. */
static __always_inline long verify_next_bio(struct verify_cpu *c)
{
	struct bio *bio = (struct bio *)c->bio;

	if (!bio)
		return 1;
	c->vecs = (__u64)BPF_CORE_READ(bio, bi_io_vec);
	c->idx = BPF_CORE_READ(bio, bi_iter.bi_idx);
	c->bvec_done = BPF_CORE_READ(bio, bi_iter.bi_bvec_done);
	c->bytes_left = BPF_CORE_READ(bio, bi_iter.bi_size);
	c->bio = (__u64)BPF_CORE_READ(bio, bi_next);
	return 0;
}

/*
 * One step of the walk at issue: load a bio, a bio_vec, or take one page
 * segment of the current bio_vec. At issue each bio's iterator is whole, so
 * it says exactly which bytes of a shared table (a split, a clone) are its
 * own.
 */
static long verify_issue_step(__u64 i, void *ctx)
{
	__u32 zero = 0;
	struct verify_cpu *c = bpf_map_lookup_elem(&verify_cpus, &zero);
	struct spt_verify_totals *t = verify_totals_get();
	struct bio_vec bv;
	__u32 start, n;

	if (!c || !t)
		return 1;
	if (c->seg_left) {
		n = VERIFY_PAGE - c->off;
		if (n > c->seg_left)
			n = c->seg_left;
		verify_issue_seg(c, t, c->page, c->off, n);
		c->page += bpf_core_type_size(struct page);
		c->off = 0;
		c->seg_left -= n;
		return 0;
	}
	if (!c->bytes_left)
		return verify_next_bio(c);
	if (bpf_probe_read_kernel(&bv, sizeof(bv),
				  (void *)(c->vecs + c->idx * bpf_core_type_size(struct bio_vec))) ||
	    bv.bv_len <= c->bvec_done) {
		c->bytes_left = 0;
		return 0;
	}
	start = bv.bv_offset + c->bvec_done;
	n = bv.bv_len - c->bvec_done;
	if (n > c->bytes_left)
		n = c->bytes_left;
	c->bvec_done = 0;
	c->idx++;
	c->bytes_left -= n;
	c->page = (__u64)bv.bv_page + (start / VERIFY_PAGE) * bpf_core_type_size(struct page);
	c->off = start % VERIFY_PAGE;
	c->seg_left = n;
	return 0;
}

/* The request built at issue, kept until it completes; if it cannot be
 * kept, its hashed pages are unverified. */
static __always_inline void verify_keep(struct verify_cpu *c, __u64 key)
{
	if (!c->req.nsegs)
		return;
	if (bpf_map_update_elem(&verify_reqs, &key, &c->req, BPF_ANY))
		verify_abandon(&c->req);
}

/*
 * Direct writes: a write syscall's bio queued by the submitting task. Its
 * anonymous pages are remembered with the process, the file and each
 * page's offset in the file: the syscall's position plus the page's user
 * address (an anonymous folio's index, exact unless the buffer was moved
 * by mremap) minus the buffer's (the first iovec's for vector writes).
 */
static __always_inline struct file *current_fd_file(__u64 fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds, *file = NULL;

	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	bpf_probe_read_kernel(&file, sizeof(file), &fds[fd & 0xffffff]);
	return file;
}

static __always_inline void verify_remember_page(__u64 page, struct verify_direct *d, __u64 pos,
						 __u64 buf, __u64 count)
{
	__u64 folio = page_folio_addr(page), uaddr;
	__u64 mapping = (__u64)BPF_CORE_READ((struct folio *)folio, mapping);

	if (!mapping_is_anon(mapping))
		return;
	uaddr = (BPF_CORE_READ((struct folio *)folio, index) +
		 (page - folio) / bpf_core_type_size(struct page)) * VERIFY_PAGE;
	/* The page's start in the file; a buffer not found where the frame
	 * says gives the syscall's position. */
	d->offset = uaddr + VERIFY_PAGE > buf && uaddr < buf + count ? pos + uaddr - buf : pos;
	if (bpf_map_update_elem(&verify_direct_pages, &page, d, BPF_ANY)) {
		struct spt_verify_totals *t = verify_totals_get();

		if (t)
			t->direct_untracked++;
	}
}

static __always_inline int handle_verify_bio_queue(struct bio *bio)
{
	struct pt_regs *regs;
	struct verify_direct d = {};
	struct inode *inode;
	struct file *file;
	__u64 pos, count, buf, vecs;
	__u32 vcnt;

	if ((bio->bi_opf & REQ_OP_MASK_X) != REQ_OP_WRITE_4_10 || current_kind() != SPT_KIND_WRITE)
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	file = current_fd_file(regs->di);
	if (!file || !(BPF_CORE_READ(file, f_flags) & O_DIRECT_X86) || !write_range(file, &pos, &count))
		return 0;
	buf = regs->si;
	if (regs->orig_ax != NR_WRITE_X86 && regs->orig_ax != NR_PWRITE64_X86 &&
	    bpf_probe_read_user(&buf, sizeof(buf), (void *)regs->si))
		return 0; /* a vector write: the first iovec's base */
	inode = BPF_CORE_READ(file, f_inode);
	d.tgid = bpf_get_current_pid_tgid() >> 32;
	d.file_dev = BPF_CORE_READ(inode, i_sb, s_dev);
	d.ino = BPF_CORE_READ(inode, i_ino);
	d.generation = BPF_CORE_READ(inode, i_generation);
	bpf_get_current_comm(d.comm, sizeof(d.comm));
	vecs = (__u64)bio->bi_io_vec;
	vcnt = bio->bi_vcnt;
	for (__u32 i = 0; i < VERIFY_BIO_VECS && i < vcnt; i++) {
		struct bio_vec bv;

		if (bpf_probe_read_kernel(&bv, sizeof(bv),
					  (void *)(vecs + i * bpf_core_type_size(struct bio_vec))))
			break;
		for (__u32 p = 0; p < 16 && p * VERIFY_PAGE < bv.bv_offset + bv.bv_len; p++)
			if ((p + 1) * VERIFY_PAGE > bv.bv_offset)
				verify_remember_page((__u64)bv.bv_page +
						     p * bpf_core_type_size(struct page),
						     &d, pos, buf, count);
	}
	return 0;
}

/*
 * An entry kept under the request's address: a requeued request issued
 * again keeps it, the hashes of its first issue (true: not sampled again);
 * any other is a request whose completion went unseen, its hashed pages
 * unverified. Checked before sampling: a request not sampled must not find
 * an old entry at its completion.
 */
static __always_inline bool verify_kept_requeue(struct request *rq, __u64 key)
{
	struct verify_req *old = bpf_map_lookup_elem(&verify_reqs, &key);
	struct spt_verify_ident now;

	if (!old)
		return false;
	verify_ident_of(rq, &now);
	if (spt_verify_is_requeue(&old->id, old->done, old->requeued, &now)) {
		old->requeued = 0;
		return true;
	}
	verify_abandon(old);
	bpf_map_delete_elem(&verify_reqs, &key);
	return false;
}

/* A write request is issued: sample 1 in verify_every, hash its pages. */
static __always_inline int handle_verify_issue(struct request *rq)
{
	struct block_device *part = rq->part;
	__u64 key = btf_ptr_addr(rq);
	struct spt_verify_totals *t;
	struct verify_cpu *c;
	__u32 zero = 0, dev;

	if (!rq_is_write(rq) || !rq->bio || !rq->__data_len || !part)
		return 0;
	dev = part->bd_dev;
	t = verify_totals_get();
	c = bpf_map_lookup_elem(&verify_cpus, &zero);
	if (!t || !c || !dev_selected(dev))
		return 0;
	if (verify_kept_requeue(rq, key))
		return 0;
	if (t->requests_seen++ % verify_every)
		return 0;
	if (dm_state == 0)
		dm_from_ksyms();
	if (c->busy_issue)
		return 0; /* nested on this CPU: not sampled */
	c->busy_issue = 1;
	t->requests_sampled++;
	/* The segments are written up to nsegs: only the header is reset. */
	c->req.done = c->req.requeued = c->req.nsegs = c->req.next = 0;
	verify_ident_of(rq, &c->req.id);
	c->req.dev = dev;
	c->bio = (__u64)rq->bio;
	c->bytes_left = c->seg_left = c->pos = 0;
	bpf_loop(VERIFY_WALK_STEPS, verify_issue_step, NULL, 0);
	verify_keep(c, key);
	c->busy_issue = 0;
	return 0;
}

#endif /* SPT_VERIFY_ISSUE_BPF_H */
