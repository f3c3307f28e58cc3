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
 * PG_writeback is bit 15 up to 6.5 and bit 1 from 6.6 ("mm: rearrange
 * page flags", Matthew Wilcox, 6.6: moved into the low byte with
 * PG_locked and PG_waiters, so that a later change could clear it and test
 * for waiters in one atomic op; folio_end_writeback() does so since 6.7).
 * Never hard-code it.
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
static __always_inline unsigned long folio_ptr_flags_word(__u64 addr)
{
	if (bpf_core_type_exists(memdesc_flags_t))
		return BPF_CORE_READ((struct folio *)addr, flags.f);
	return BPF_CORE_READ((struct folio___flags_ulong *)addr, flags);
}

static __always_inline bool folio_ptr_under_writeback(__u64 addr)
{
	int bit = bpf_core_enum_value(enum pageflags, PG_writeback);

	return (folio_ptr_flags_word(addr) >> bit) & 1;
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
 * - 6.7+ (backported to 6.6.4 and 6.1.72): AS_STABLE_WRITES in
 *   mapping->flags, copied from the superblock at inode init and set per
 *   inode by some filesystems ("filemap: add a per-mapping stable writes
 *   flag", Christoph Hellwig). Whether a kernel has it is read from its
 *   BTF at load time, not inferred from its version.
 * - 5.10+: SB_I_STABLE_WRITES in sb->s_iflags, computed when the
 *   superblock is created ("bdi: replace BDI_CAP_STABLE_WRITES with a queue
 *   and a sb flag", Christoph Hellwig, 5.10). It is a #define, absent from
 *   BTF; it is 0x8 from 5.10 through the 6.x releases checked, which covers
 *   every kernel that takes this fallback (those without AS_STABLE_WRITES).
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
 * A block device's own page cache (what write() to /dev/sdX, mkfs and the
 * filesystems' buffer heads go through) belongs to the device's inode in
 * the bdev pseudo-filesystem. That inode lives in struct bdev_inode beside
 * its struct block_device (block/bdev.c, 5.4 through 6.18: { bdev,
 * vfs_inode }), so container_of() gives the device; the offset is
 * relocated (CO-RE), not assumed. Its i_rdev and bd_dev are the device's
 * number on every supported kernel (bdev_add() sets both). @inode is a
 * BTF pointer of a block device inode (S_ISBLK: only bdev inodes have a
 * page cache of their own; a /dev node's i_mapping points to it).
 */
static __always_inline struct block_device *bdev_of_inode(struct inode *inode)
{
	return (void *)inode - bpf_core_field_offset(struct bdev_inode, vfs_inode);
}

/*
 * The filesystem mounted on a block device, or NULL: whose metadata the
 * device's own page cache holds.
 * - Up to 6.5: bdev->bd_super, set by mount_bdev()/get_tree_bdev() once the
 *   superblock is set up (6.1 checked); gone in 6.6, whose rework of how
 *   filesystems claim their devices (Christoph Hellwig) made the
 *   superblock the holder.
 * - Since then: a filesystem claims its device with its superblock as
 *   holder and fs_holder_ops (bd_holder_ops: "block: introduce holder
 *   ops", Christoph Hellwig, 6.5; 6.18 checked); other exclusive openers
 *   (mkfs's O_EXCL, dm, md) pass no holder ops.
 * Read with probe reads: @bdev comes from pointer arithmetic.
 */
struct block_device___bd_super {
	struct super_block *bd_super;
} __attribute__((preserve_access_index));

static __always_inline struct super_block *bdev_fs_owner(struct block_device *bdev)
{
	if (bpf_core_field_exists(struct block_device___bd_super, bd_super))
		return BPF_CORE_READ((struct block_device___bd_super *)bdev, bd_super);
	if (bpf_core_field_exists(bdev->bd_holder_ops) && BPF_CORE_READ(bdev, bd_holder_ops))
		return BPF_CORE_READ(bdev, bd_holder);
	return NULL;
}

/* More than one page: PG_head, read from the running kernel's enum as
 * PG_writeback is. */
static __always_inline bool folio_is_large(struct folio *folio)
{
	return (folio_flags_word(folio) >> bpf_core_enum_value(enum pageflags, PG_head)) & 1;
}

static __always_inline bool folio_ptr_is_large(__u64 addr)
{
	return (folio_ptr_flags_word(addr) >> bpf_core_enum_value(enum pageflags, PG_head)) & 1;
}

/*
 * Pages in a folio. A large folio has PG_head set and its page count in
 * the first tail page's space: folio->_folio_nr_pages (64-bit only) up to
 * 6.14, renamed folio->_nr_pages in 6.15 ("mm: let _folio_nr_pages overlay
 * memcg_data in first tail page", David Hildenbrand), which also made the
 * field exist only with CONFIG_MEMCG or CONFIG_SLAB_OBJ_EXT
 * (NR_PAGES_IN_LARGE_FOLIO). Only the 6.1 and 6.18 shapes have been
 * tested. @folio is a BTF pointer.
 */
struct folio___nr_pages_6_1 {
	unsigned int _folio_nr_pages;
} __attribute__((preserve_access_index));

static __always_inline __u32 folio_nr_pages_of(struct folio *folio)
{
	if (!folio_is_large(folio))
		return 1;
	if (bpf_core_field_exists(folio->_nr_pages))
		return BPF_CORE_READ(folio, _nr_pages);
	return BPF_CORE_READ((struct folio___nr_pages_6_1 *)folio, _folio_nr_pages);
}

/*
 * The same count for a folio known to be large (a tail page points to it),
 * by address: read through bpf_probe_read_kernel(). 0 where the kernel has
 * neither field (the caller then visits every page).
 */
static __always_inline __u32 folio_ptr_nr_pages(__u64 addr)
{
	if (bpf_core_field_exists(((struct folio *)0)->_nr_pages))
		return BPF_CORE_READ((struct folio *)addr, _nr_pages);
	if (bpf_core_field_exists(((struct folio___nr_pages_6_1 *)0)->_folio_nr_pages))
		return BPF_CORE_READ((struct folio___nr_pages_6_1 *)addr, _folio_nr_pages);
	return 0;
}

/*
 * folio->mapping of an anonymous folio points to its anon_vma with bit 0
 * set: PAGE_MAPPING_ANON, renamed FOLIO_MAPPING_ANON in 6.17 ("mm: rename
 * PAGE_MAPPING_* to FOLIO_MAPPING_*", David Hildenbrand), value 0x1
 * unchanged.
 * A #define, absent from BTF. @mapping: the pointer's value as a number.
 */
#define FOLIO_MAPPING_ANON 0x1

static __always_inline bool mapping_is_anon(__u64 mapping)
{
	return mapping & FOLIO_MAPPING_ANON;
}

/*
 * Tasks whose saved user register frame does not say why they are in the
 * kernel: kernel threads (PF_KTHREAD) and io_uring workers (PF_IO_WORKER,
 * since "io-wq: small threadpool implementation for io_uring", Jens Axboe,
 * 5.5). Since 5.12 ("io-wq: fork worker threads from original task", Jens
 * Axboe; 5.10.y got the same with its import of 5.15's io_uring in
 * 5.10.162) io workers are threads of the ring's process rather than
 * kernel threads, so only PF_IO_WORKER tells them apart; they never return
 * to user space, and what their frame holds is not a syscall or fault of
 * theirs. include/linux/sched.h #defines, absent from BTF. PF_KTHREAD is
 * 0x00200000 throughout; PF_IO_WORKER was 0x20000000 until 5.9 and is
 * 0x00000010 since 5.10 ("sched: Bring the PF_IO_WORKER and PF_WQ_WORKER
 * bits closer together", Sebastian Andrzej Siewior), so both values hold
 * on every supported kernel. @task is a BTF pointer.
 */
#define PF_IO_WORKER 0x00000010
#define PF_KTHREAD 0x00200000

static __always_inline bool task_no_user_frame(struct task_struct *task)
{
	return task->flags & (PF_KTHREAD | PF_IO_WORKER);
}

/*
 * task->bpf_storage: a task's BPF local storage, NULL until a program
 * stores something for it ("bpf: Implement task local storage", KP Singh,
 * 5.11; present with CONFIG_BPF_SYSCALL). True only when the field exists
 * and is NULL: a bpf_task_storage_get() would find nothing. Where the
 * field is absent, ask the helper.
 */
static __always_inline bool task_has_no_storage(struct task_struct *task)
{
	return bpf_core_field_exists(task->bpf_storage) && !task->bpf_storage;
}

/*
 * A request's operation is the low REQ_OP_BITS (8) bits of cmd_flags since
 * "block: better op and flags encoding" (Christoph Hellwig; after 4.9, long
 * before 5.10), and REQ_OP_WRITE is 1 (an op's low bit gives its data
 * direction since "block: add a proper block layer data direction
 * encoding", Christoph Hellwig); 6.0 typed cmd_flags blk_opf_t ("block:
 * Introduce the type blk_opf_t", Bart Van Assche), same bits.
 * REQ_OP_MASK is a #define, absent from BTF. @rq is a BTF pointer.
 */
#define REQ_OP_MASK_4_10 0xff
#define REQ_OP_WRITE_4_10 1

static __always_inline bool rq_is_write(struct request *rq)
{
	return (rq->cmd_flags & REQ_OP_MASK_4_10) == REQ_OP_WRITE_4_10;
}

/*
 * block_rq_complete's status: an errno (an int, negative on error) until
 * "block: don't call blk_status_to_errno in blk_update_request" (Christoph
 * Hellwig, 5.16) passed the blk_status_t itself (a u8, positive on error);
 * 0 on success in both. The tracepoint widens either to its u64 argument
 * slot (sign- or zero-extended), so the low 32 bits are non-zero exactly on
 * error, whichever the kernel passed (6.1 and 6.18: blk_status_t).
 */
static __always_inline __u32 rq_complete_error(__u64 arg)
{
	return (__u32)arg;
}

/*
 * page_mkwrite's result. A vm_fault_t handler succeeded when none of the
 * failure bits is set: the fault goes on to make the page writable, no
 * error, no retry. The bits are enum vm_fault_reason since "mm: create the
 * new vm_fault_t type" (Souptick Joarder, 5.1), read from the kernel's BTF
 * rather than hard-coded (later releases added reasons, e.g.
 * VM_FAULT_COMPLETED in 5.19). block_page_mkwrite() returns 0 / -errno
 * instead (its callers convert it), hence @errno_ret (SPT_MKWRITE_FUNCS).
 */
static __always_inline bool vm_fault_ok(__u64 ret)
{
	__u64 fail = bpf_core_enum_value(enum vm_fault_reason, VM_FAULT_OOM) |
		     bpf_core_enum_value(enum vm_fault_reason, VM_FAULT_SIGBUS) |
		     bpf_core_enum_value(enum vm_fault_reason, VM_FAULT_SIGSEGV) |
		     bpf_core_enum_value(enum vm_fault_reason, VM_FAULT_HWPOISON) |
		     bpf_core_enum_value(enum vm_fault_reason, VM_FAULT_HWPOISON_LARGE) |
		     bpf_core_enum_value(enum vm_fault_reason, VM_FAULT_FALLBACK) |
		     bpf_core_enum_value(enum vm_fault_reason, VM_FAULT_NOPAGE) |
		     bpf_core_enum_value(enum vm_fault_reason, VM_FAULT_RETRY);

	return !(ret & fail);
}

static __always_inline bool mkwrite_ret_ok(__u64 ret, bool errno_ret)
{
	return errno_ret ? (int)ret == 0 : vm_fault_ok(ret);
}

/*
 * Changes that need no accessor, for the record:
 * - __folio_start_writeback() returns bool up to 6.7 and void from 6.8
 *   ("mm: return void from folio_start_writeback() and related functions",
 *   Matthew Wilcox): its fentry program reads only the folio.
 * - iomap_page_mkwrite() has two arguments on 6.1 and three on 6.18
 *   ("iomap: pass private data to iomap_page_mkwrite", Christoph Hellwig,
 *   6.15): the fexit programs read the return value with
 *   bpf_get_func_ret() ("bpf: Add get_func_[arg|ret|arg_cnt] helpers", Jiri
 *   Olsa, 5.17), not at a fixed argument slot.
 * - sched_switch gained a fourth argument, prev_state, in 5.18
 *   ("sched/tracing: Append prev_state to tp args instead", Delyan
 *   Kratunov): the program reads the first three.
 * - Verifier: since 6.7, and 6.6.15 by backport ("bpf: verify callbacks
 *   as if they are called unknown number of times", Eduard Zingerman), a
 *   bpf_loop() callback is verified for every state it can be called in;
 *   before, once with the values at the call, dropping code dead for those.
 *   Either way the request walk keeps its state in a map value
 *   (walk.bpf.h).
 */

#endif /* CORE_FIXES_BPF_H */
