/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel layout and semantics that changed between versions, one accessor
 * per change. vmlinux/x86/vmlinux.h is generated from a 6.18 kernel; every
 * older shape is a "___flavor" type that libbpf relocates against the
 * running kernel's BTF. Keep all version knowledge in this file.
 */
#ifndef CORE_FIXES_BPF_H
#define CORE_FIXES_BPF_H

#include <bpf/bpf_core_read.h>

/*
 * folio->flags: "unsigned long flags" up to 6.17; 6.18 wraps it in
 * memdesc_flags_t { unsigned long f; } ("mm: introduce memdesc_flags_t",
 * Matthew Wilcox, 6.18). Both are one word holding enum pageflags bits.
 */
struct folio___flags_ulong {
	unsigned long flags;
} __attribute__((preserve_access_index));

/*
 * Hot path: runs on every clean->dirty transition. @folio is a BTF pointer
 * (tp_btf/fentry argument), so read it directly: a plain load with exception
 * fixup, not a bpf_probe_read_kernel() helper call.
 */
static __always_inline unsigned long folio_flags_word(struct folio *folio)
{
	if (bpf_core_type_exists(memdesc_flags_t))
		return folio->flags.f;
	return ((struct folio___flags_ulong *)folio)->flags;
}

/*
 * PG_writeback is bit 15 up to 6.5 and bit 1 from 6.6 (PG_writeback moved
 * next to PG_locked so folio_end_writeback() can clear it and test for
 * waiters in one atomic op). Never hard-code it.
 */
static __always_inline bool folio_under_writeback(struct folio *folio)
{
	int bit = bpf_core_enum_value(enum pageflags, PG_writeback);

	return (folio_flags_word(folio) >> bit) & 1;
}

/*
 * The same test on a folio pointer kept in a map (no longer a BTF pointer
 * to the verifier): read through bpf_probe_read_kernel(), which is safe
 * even if the folio has been freed since.
 */
static __always_inline bool folio_ptr_under_writeback(__u64 addr)
{
	int bit = bpf_core_enum_value(enum pageflags, PG_writeback);
	unsigned long word;

	if (bpf_core_type_exists(memdesc_flags_t))
		word = BPF_CORE_READ((struct folio *)addr, flags.f);
	else
		word = BPF_CORE_READ((struct folio___flags_ulong *)addr, flags);
	return (word >> bit) & 1;
}

/*
 * page_folio(): a tail page stores its head page's address + 1 in
 * page->compound_head (5.16 folios through 6.18 keep this encoding).
 */
static __always_inline __u64 folio_of_page(__u64 page, __u64 compound_head)
{
	return compound_head & 1 ? compound_head - 1 : page;
}

static __always_inline __u64 page_folio_addr(__u64 page)
{
	return folio_of_page(page, BPF_CORE_READ((struct page *)page, compound_head));
}

/*
 * Does the kernel wait for writeback before letting this mapping's folios
 * change ("stable pages")?
 * - 6.7+ (backported to 6.6.4 and 6.1.y): AS_STABLE_WRITES in
 *   mapping->flags, copied from the superblock at inode init and set per
 *   inode by some filesystems ("filemap: add a per-mapping stable writes
 *   flag", Christoph Hellwig).
 * - 5.10+: SB_I_STABLE_WRITES in sb->s_iflags, computed when the
 *   superblock is created ("bdi: replace BDI_CAP_STABLE_WRITES with a queue
 *   and a sb flag", Christoph Hellwig, 5.10). It is a #define, absent from
 *   BTF; its value 0x8 has not changed since.
 * Kernels before 5.10 (BDI_CAP_STABLE_WRITES) are not supported.
 */
#define SB_I_STABLE_WRITES___5_10 0x00000008

/* @mapping and @sb are BTF pointers: direct loads. */
static __always_inline bool mapping_stable_writes(struct address_space *mapping,
						  struct super_block *sb)
{
	if (bpf_core_enum_value_exists(enum mapping_flags, AS_STABLE_WRITES)) {
		int bit = bpf_core_enum_value(enum mapping_flags, AS_STABLE_WRITES);

		return (mapping->flags >> bit) & 1;
	}
	return sb->s_iflags & SB_I_STABLE_WRITES___5_10;
}

/*
 * Pages in a folio. A large folio has PG_head set and its page count in
 * the first tail page's space: folio->_folio_nr_pages on 6.1, named
 * folio->_nr_pages in 6.18's layout (the rename came with the folio layout
 * rework between them; only these two shapes have been checked).
 * @folio is a BTF pointer.
 */
struct folio___nr_pages_6_1 {
	unsigned int _folio_nr_pages;
} __attribute__((preserve_access_index));

static __always_inline __u32 folio_nr_pages_of(struct folio *folio)
{
	int head = bpf_core_enum_value(enum pageflags, PG_head);

	if (!((folio_flags_word(folio) >> head) & 1))
		return 1;
	if (bpf_core_field_exists(folio->_nr_pages))
		return BPF_CORE_READ(folio, _nr_pages);
	return BPF_CORE_READ((struct folio___nr_pages_6_1 *)folio, _folio_nr_pages);
}

#endif /* CORE_FIXES_BPF_H */
