/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --verify: reading a page. A page is read through the kernel's direct map:
 * its struct page's distance from a known struct page, times 4 KiB, from
 * that page's address (dm_virt_of()). Where the kernel names
 * page_offset_base and vmemmap_base in kallsyms (KALLSYMS_ALL, the 6.1
 * guest) they give the pair; elsewhere (the 6.18 host) a buffer_head does:
 * the first buffer of a folio with buffers has b_page == the folio and
 * b_data == its address. A pair is used only once a second one agrees with
 * it. Until then, and for any page that cannot be read, pages are counted
 * unverified, never unchanged.
 *
 * Then a page segment's content hashed, and what kind of page it is.
 */
#ifndef SPT_VERIFY_PAGES_BPF_H
#define SPT_VERIFY_PAGES_BPF_H

#define BDEVFS_MAGIC_X 0x62646576 /* include/uapi/linux/magic.h, unchanged since 2.6 */

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

#endif /* SPT_VERIFY_PAGES_BPF_H */
