/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --verify[=N]: pages changed while their write request is in flight. One
 * write request in N is sampled when it is issued (block_rq_issue): the
 * content of each page segment it carries is hashed and kept with the
 * request. When the request completes (block_rq_complete, which
 * blk_update_request() fires before it ends any bio, so the pages are still
 * the request's), the segments it completed are hashed again; a different
 * hash is a page the device may have stored, mirrored or checksummed other
 * than the kernel saw at issue.
 *
 * A page is read through the kernel's direct map: its struct page's
 * distance from a known struct page, times 4 KiB, from that page's address
 * (dm_virt_of()). Where the kernel names page_offset_base and vmemmap_base
 * in kallsyms (KALLSYMS_ALL, the 6.1 guest) they give the pair; elsewhere
 * (the 6.18 host) a buffer_head does: the first buffer of a folio with
 * buffers has b_page == the folio and b_data == its address. A pair is used
 * only once a second one agrees with it. Until then, and for any page that
 * cannot be read, pages are counted unverified, never unchanged.
 *
 * Direct writes: the page is a user buffer that no page-cache hook sees.
 * block_bio_queue runs in the submitter's context for a write syscall's
 * bios (iomap and the block layer submit from the syscall); there the
 * syscall frame gives the file and offset, remembered per page until the
 * request is checked.
 */
#ifndef SPT_VERIFY_BPF_H
#define SPT_VERIFY_BPF_H

#include "verify.h"

#define VERIFY_MAX_SEGS 64      /* hashed per request; the rest unverified */
#define VERIFY_MAX_REQS 1024    /* sampled requests in flight */
#define VERIFY_WALK_STEPS 4096
#define VERIFY_PAGE 4096
#define VERIFY_BIO_VECS 16      /* bio_vecs of a direct write remembered at submission */
#define BDEVFS_MAGIC_X 0x62646576 /* include/uapi/linux/magic.h, unchanged since 2.6 */
#define O_DIRECT_X86 00040000   /* include/uapi/asm-generic/fcntl.h (x86) */
#define REQ_OP_MASK_X 0xff      /* as rq_is_write(), for bios */


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
	__u64 first_bio;
	__u64 sector;     /* at issue; advances with partial completions */
	__u32 bytes, done; /* its data bytes; completed so far */
	__u32 nsegs, next; /* segments kept; the next to check */
	__u32 dev, epoch;
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

/*
 * The direct map: a (struct page, address) pair, dm_state 2 once a second
 * pair agrees (1: one pair, 3: a CPU is storing one). Pages in the vmemmap
 * array are bpf_core_type_size(struct page) apart, one per 4 KiB frame.
 */
static __always_inline __u64 dm_virt_from(__u64 page, __u64 page0, __u64 virt0)
{
	__u64 size = bpf_core_type_size(struct page);

	if (page >= page0)
		return virt0 + (page - page0) / size * VERIFY_PAGE;
	return virt0 - (page0 - page) / size * VERIFY_PAGE;
}

static __always_inline __u64 dm_virt_of(__u64 page)
{
	return dm_state == 2 ? dm_virt_from(page, dm_page0, dm_virt0) : 0;
}

/* The kallsyms pair, where the kernel has one. */
static __always_inline void dm_from_ksyms(void)
{
	__u64 pob = 0, vmb = 0;

	/* The direct map's and the struct page array's bases
	 * (arch/x86/kernel/head64.c, randomised with CONFIG_RANDOMIZE_MEMORY),
	 * where kallsyms names them (ksym_*: the settings block). */
	if (!ksym_page_offset_base || !ksym_vmemmap_base)
		return;
	if (bpf_probe_read_kernel(&pob, sizeof(pob), (void *)ksym_page_offset_base) ||
	    bpf_probe_read_kernel(&vmb, sizeof(vmb), (void *)ksym_vmemmap_base) || !pob || !vmb)
		return;
	if (__sync_val_compare_and_swap(&dm_state, 0, 3) != 0)
		return;
	dm_page0 = vmb;
	dm_virt0 = pob;
	__sync_lock_test_and_set(&dm_state, 2);
}

/*
 * A folio with buffers: its first buffer_head maps the folio's start
 * (folio_set_bh(), set_bh_page() before 6.4: b_data = its address + 0).
 * b_page and b_folio are one field (a union since 6.4). A folio whose
 * private data is not a buffer_head (iomap, btrfs) fails the b_page test.
 */
static __always_inline void dm_learn(__u64 folio)
{
	struct buffer_head *bh;
	__u64 virt, bpage;
	__u64 state = dm_state;

	if (state == 2 || state == 3)
		return;
	bh = (struct buffer_head *)BPF_CORE_READ((struct folio *)folio, private);
	if (!bh)
		return;
	bpage = (__u64)BPF_CORE_READ(bh, b_page);
	virt = (__u64)BPF_CORE_READ(bh, b_data);
	if (bpage != folio || !virt || (virt & (VERIFY_PAGE - 1)) || virt < 0xffff800000000000ULL)
		return;
	if (state == 0) {
		if (__sync_val_compare_and_swap(&dm_state, 0, 3) != 0)
			return;
		dm_page0 = folio;
		dm_virt0 = virt;
		__sync_lock_test_and_set(&dm_state, 1);
		return;
	}
	if (folio == dm_page0)
		return;
	/* A second pair: agreeing confirms the first, else start again. */
	if (dm_virt_from(folio, dm_page0, dm_virt0) == virt)
		__sync_val_compare_and_swap(&dm_state, 1, 2);
	else
		__sync_val_compare_and_swap(&dm_state, 1, 0);
}

/* A 64-bit hash of @len bytes in @w (two lanes, multiply-xorshift). */
static __always_inline __u64 hash_buf(const __u64 *w, __u32 len)
{
	__u64 a = 0x9E3779B97F4A7C15ULL ^ len, b = 0xC2B2AE3D27D4EB4FULL;
	__u32 nw = len / 8;

	for (__u32 i = 0; i + 1 < VERIFY_PAGE / 8; i += 2) {
		if (i + 1 >= nw)
			break;
		a = (a ^ w[i]) * 0xff51afd7ed558ccdULL;
		b = (b ^ w[i + 1]) * 0xc4ceb9fe1a85ec53ULL;
		a ^= a >> 29;
		b ^= b >> 31;
	}
	if (nw & 1 && nw <= VERIFY_PAGE / 8)
		a ^= w[(nw - 1) & (VERIFY_PAGE / 8 - 1)] * 0x9E3779B97F4A7C15ULL;
	a ^= b * 0xff51afd7ed558ccdULL;
	return a ^ (a >> 32);
}

/* The segment's content hash, through the direct map. False: unreadable.
 * Segments are 512-byte multiples in practice; a tail of other length is
 * left out of the hash (never a false "changed"). */
static __always_inline bool hash_segment(__u64 page, __u32 off, __u32 len, __u64 *buf, __u64 *out)
{
	__u64 virt = dm_virt_of(page);

	if (!virt || !len || off + len > VERIFY_PAGE)
		return false;
	len &= VERIFY_PAGE * 2 - 1;
	if (len > VERIFY_PAGE || len < 8)
		return false;
	if (bpf_probe_read_kernel(buf, len, (void *)(virt + off)))
		return false;
	*out = hash_buf(buf, len);
	return true;
}

/*
 * What the page is (enum spt_page_kind), from its folio: the swap cache,
 * an anonymous page (a direct-I/O user buffer), no mapping (a kernel
 * buffer), the block device's own cache, or a file's page (MMAP is told
 * apart at completion, verify_file_kind()).
 */
static __always_inline __u32 page_kind(__u64 folio)
{
	unsigned long flags = folio_ptr_flags_word(folio);
	int swapcache = bpf_core_enum_value(enum pageflags, PG_swapcache);
	int swapbacked = bpf_core_enum_value(enum pageflags, PG_swapbacked);
	__u64 mapping = (__u64)BPF_CORE_READ((struct folio *)folio, mapping);
	struct super_block *sb;
	struct inode *host;

	if ((flags >> swapcache & 1) && (flags >> swapbacked & 1))
		return SPT_PAGE_SWAP;
	if (!mapping)
		return SPT_PAGE_KERNEL;
	if (mapping_is_anon(mapping))
		return SPT_PAGE_DIRECT;
	host = BPF_CORE_READ((struct address_space *)mapping, host);
	sb = BPF_CORE_READ(host, i_sb);
	if (BPF_CORE_READ(sb, s_magic) != BDEVFS_MAGIC_X)
		return SPT_PAGE_FILE;
	/* The bdev inode sits in struct bdev_inode after its block_device. */
	if (BPF_CORE_READ((struct block_device *)((__u64)host - bpf_core_field_offset(struct bdev_inode,
										   vfs_inode)),
			  bd_holder))
		return SPT_PAGE_METADATA;
	return SPT_PAGE_BDEV;
}

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

	v->offset = r->sector * 512 + s->end - s->len;
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

/* A write request's first @nr_bytes (of those left) completed. */
static __always_inline int handle_verify_complete(struct request *rq, __u32 nr_bytes)
{
	__u64 key = btf_ptr_addr(rq);
	struct verify_req *r = bpf_map_lookup_elem(&verify_reqs, &key);
	struct verify_check_ctx x = {};
	struct verify_cpu *c;
	__u32 zero = 0;

	if (!r)
		return 0;
	c = bpf_map_lookup_elem(&verify_cpus, &zero);
	/* Issued before a pause, or not the request kept (its completion
	 * passed unseen and the address was reused): nothing to compare. */
	if (!c || r->epoch != pause_epoch || rq->__sector != r->sector + r->done / 512) {
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
	if (r->done >= r->bytes) {
		verify_abandon(r);
		bpf_map_delete_elem(&verify_reqs, &key);
	}
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

/* Is the kept request the one issued again (a requeue)? */
static __always_inline bool verify_same_req(const struct verify_req *r, struct request *rq)
{
	return r->epoch == pause_epoch && !r->done && r->first_bio == (__u64)rq->bio &&
	       r->sector == rq->__sector && r->bytes == rq->__data_len;
}

/* A write request is issued: sample 1 in verify_every, hash its pages. */
static __always_inline int handle_verify_issue(struct request *rq)
{
	struct block_device *part = rq->part;
	__u64 key = btf_ptr_addr(rq);
	struct spt_verify_totals *t;
	struct verify_req *old;
	struct verify_cpu *c;
	__u32 zero = 0, dev;

	if (!rq_is_write(rq) || !rq->bio || !rq->__data_len || !part)
		return 0;
	dev = part->bd_dev;
	t = verify_totals_get();
	c = bpf_map_lookup_elem(&verify_cpus, &zero);
	if (!t || !c || !dev_selected(dev))
		return 0;
	if (t->requests_seen++ % verify_every)
		return 0;
	if (dm_state == 0)
		dm_from_ksyms();
	old = bpf_map_lookup_elem(&verify_reqs, &key);
	if (old) {
		if (verify_same_req(old, rq))
			return 0; /* requeued: keep the hashes of its first issue */
		verify_abandon(old);
	}
	if (c->busy_issue)
		return 0; /* nested on this CPU: not sampled */
	c->busy_issue = 1;
	t->requests_sampled++;
	/* The segments are written up to nsegs: only the header is reset. */
	c->req.done = c->req.nsegs = c->req.next = 0;
	c->req.first_bio = (__u64)rq->bio;
	c->req.sector = rq->__sector;
	c->req.bytes = rq->__data_len;
	c->req.dev = dev;
	c->req.epoch = pause_epoch;
	c->bio = (__u64)rq->bio;
	c->bytes_left = c->seg_left = c->pos = 0;
	bpf_loop(VERIFY_WALK_STEPS, verify_issue_step, NULL, 0);
	verify_keep(c, key);
	c->busy_issue = 0;
	return 0;
}

#endif /* SPT_VERIFY_BPF_H */
