// SPDX-License-Identifier: GPL-2.0
/*
 * stablepage-trace: writes that land in page-cache folios under writeback.
 *
 * Tracepoint attach mode (works without trampolines):
 *   writeback:writeback_dirty_folio  fires when a folio goes clean -> dirty.
 *       A folio under writeback was cleaned for the I/O, so the first write
 *       after writeback started fires it exactly once per writeback cycle:
 *       that is the unit of counting.
 *   writeback:folio_wait_writeback   fires once per sleep waiting for
 *       writeback; counted by the kind of the sleeping context.
 * The handlers are static functions so that other attach points (fentry on
 * page_mkwrite etc.) can be added as thin SEC() wrappers.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "stablepage.h"
#include "core_fixes.bpf.h"

#define MAX_DEVS 256
#define MAX_PIDS 1024

/* include/linux/sched.h */
#define PF_IO_WORKER 0x00000010
#define PF_KTHREAD 0x00200000
#define ENOSYS 38

const volatile bool filter_pid = false;
const volatile bool filter_dev = false;
const volatile bool filter_comm = false;
const volatile bool filter_cgroup = false;
const volatile bool stream_events = true;
const volatile char target_comm[SPT_COMM_LEN] = {};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PIDS);
	__type(key, __u32);
	__type(value, __u8);
} pid_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_DEVS);
	__type(key, __u32);
	__type(value, __u8);
} dev_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps");

#define RINGBUF_BYTES (256 * 1024)
#define RINGBUF_WAKEUP_BYTES (RINGBUF_BYTES / 4)

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RINGBUF_BYTES);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct spt_totals);
} totals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_DEVS);
	__type(key, __u32);
	__type(value, struct spt_dev_stats);
} dev_stats SEC(".maps");

/* Sizes are set by the loader (set_max_entries). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct spt_proc_stats);
} proc_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct spt_file_key);
	__type(value, struct spt_file_stats);
} file_stats SEC(".maps");

static __always_inline struct spt_totals *get_totals(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&totals, &zero);
}

static __always_inline bool comm_matches(const char *comm)
{
	for (int i = 0; i < SPT_COMM_LEN; i++) {
		if (comm[i] != target_comm[i])
			return false;
		if (!comm[i])
			return true;
	}
	return true;
}

static __always_inline bool task_selected(void)
{
	if (filter_pid) {
		__u32 tgid = bpf_get_current_pid_tgid() >> 32;

		if (!bpf_map_lookup_elem(&pid_filter, &tgid))
			return false;
	}
	if (filter_comm) {
		char comm[SPT_COMM_LEN];

		bpf_get_current_comm(comm, sizeof(comm));
		if (!comm_matches(comm))
			return false;
	}
	if (filter_cgroup && bpf_current_task_under_cgroup(&cgroup_filter, 0) != 1)
		return false;
	return true;
}

static __always_inline bool dev_selected(__u32 dev, __u32 bdev)
{
	if (!filter_dev)
		return true;
	return bpf_map_lookup_elem(&dev_filter, &dev) ||
	       (bdev && bpf_map_lookup_elem(&dev_filter, &bdev));
}

/*
 * What brought the current task into the kernel? Read from the user
 * register frame the entry code saved (x86-64):
 * - syscall entry stores the syscall number in orig_ax and -ENOSYS in ax
 *   until the syscall returns (what ptrace and seccomp rely on);
 * - a page fault stores its error code in orig_ax and the user's rax in ax;
 *   a write fault from user mode has X86_PF_WRITE | X86_PF_USER set.
 * No syscall hooks needed, so nothing runs on the syscall hot path.
 * 32-bit (compat) syscalls are classified "other".
 */
#define X86_PF_WRITE 0x2
#define X86_PF_USER 0x4

static __always_inline __u32 current_kind(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs;
	long nr;

	if (task->flags & (PF_KTHREAD | PF_IO_WORKER))
		return SPT_KIND_OTHER;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return SPT_KIND_OTHER;
	nr = regs->orig_ax;
	if ((long)regs->ax == -ENOSYS) {
		switch (nr) {
		case 1:   /* write */
		case 18:  /* pwrite64 */
		case 20:  /* writev */
		case 296: /* pwritev */
		case 328: /* pwritev2 */
			return SPT_KIND_WRITE;
		default:
			return SPT_KIND_OTHER;
		}
	}
	if ((nr & (X86_PF_WRITE | X86_PF_USER)) == (X86_PF_WRITE | X86_PF_USER))
		return SPT_KIND_MMAP;
	return SPT_KIND_OTHER;
}

static __always_inline struct spt_dev_stats *dev_stats_of(__u32 dev, struct super_block *sb,
							 struct address_space *mapping)
{
	struct spt_dev_stats *ds = bpf_map_lookup_elem(&dev_stats, &dev);
	struct spt_dev_stats init = {};
	struct block_device *bdev;

	if (ds)
		return ds;
	bdev = BPF_CORE_READ(sb, s_bdev);
	if (bdev)
		init.bdev = BPF_CORE_READ(bdev, bd_dev);
	init.stable = mapping_stable_writes(mapping, sb);
	bpf_probe_read_kernel_str(init.fstype, sizeof(init.fstype), BPF_CORE_READ(sb, s_type, name));
	bpf_probe_read_kernel_str(init.devname, sizeof(init.devname), sb->s_id);
	bpf_map_update_elem(&dev_stats, &dev, &init, BPF_NOEXIST);
	return bpf_map_lookup_elem(&dev_stats, &dev);
}

static __always_inline void count_violation(struct spt_totals *t, __u32 kind, __u32 dev,
					    struct super_block *sb, struct address_space *mapping,
					    struct inode *inode, __u32 generation)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct spt_file_key fkey = { .dev = dev, .ino = BPF_CORE_READ(inode, i_ino) };
	struct spt_dev_stats *ds;
	struct spt_proc_stats *ps;
	struct spt_file_stats *fs;

	t->violations[kind]++;

	ds = dev_stats_of(dev, sb, mapping);
	if (ds)
		__sync_fetch_and_add(&ds->violations[kind], 1);
	else
		t->agg_dropped++;

	ps = bpf_map_lookup_elem(&proc_stats, &tgid);
	if (!ps) {
		struct spt_proc_stats init = {};

		bpf_get_current_comm(init.comm, sizeof(init.comm));
		bpf_map_update_elem(&proc_stats, &tgid, &init, BPF_NOEXIST);
		ps = bpf_map_lookup_elem(&proc_stats, &tgid);
	}
	if (ps)
		__sync_fetch_and_add(&ps->violations[kind], 1);
	else
		t->agg_dropped++;

	fs = bpf_map_lookup_elem(&file_stats, &fkey);
	if (!fs) {
		struct spt_file_stats init = { .generation = generation };

		bpf_map_update_elem(&file_stats, &fkey, &init, BPF_NOEXIST);
		fs = bpf_map_lookup_elem(&file_stats, &fkey);
	}
	if (fs) {
		__sync_fetch_and_add(&fs->violations[kind], 1);
		fs->last_pid = tgid;
	} else {
		t->agg_dropped++;
	}
}

static __always_inline void stream_violation(struct spt_totals *t, __u32 kind, __u32 dev,
					     struct super_block *sb, struct inode *inode,
					     __u32 generation, struct folio *folio)
{
	struct block_device *bdev;
	struct spt_event *e;
	__u64 id;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		t->events_lost++;
		return;
	}
	id = bpf_get_current_pid_tgid();
	e->ts_ns = bpf_ktime_get_ns();
	e->cgroup_id = bpf_get_current_cgroup_id();
	e->ino = BPF_CORE_READ(inode, i_ino);
	e->index = BPF_CORE_READ(folio, index);
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->dev = dev;
	bdev = BPF_CORE_READ(sb, s_bdev);
	e->bdev = bdev ? BPF_CORE_READ(bdev, bd_dev) : 0;
	e->generation = generation;
	e->kind = kind;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	/*
	 * A wakeup per event costs an irq_work and a consumer wakeup each: it
	 * made streaming 5x dearer per event than aggregating (bench). Wake the
	 * consumer only when a quarter of the ring is filled; it also drains
	 * the ring every 100 ms by itself.
	 */
	bpf_ringbuf_submit(e, bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= RINGBUF_WAKEUP_BYTES ?
				      BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

/* A folio goes clean -> dirty (mapping->i_pages xa_lock held, IRQs off). */
static __always_inline int handle_folio_dirtied(struct folio *folio, struct address_space *mapping)
{
	struct super_block *sb;
	struct spt_totals *t;
	struct inode *inode;
	__u32 dev, bdev_dev = 0, kind, generation;
	struct block_device *bdev;

	if (!mapping || !folio_under_writeback(folio))
		return 0;
	inode = BPF_CORE_READ(mapping, host);
	sb = BPF_CORE_READ(inode, i_sb);
	dev = BPF_CORE_READ(sb, s_dev);
	bdev = BPF_CORE_READ(sb, s_bdev);
	if (bdev)
		bdev_dev = BPF_CORE_READ(bdev, bd_dev);
	if (!dev_selected(dev, bdev_dev) || !task_selected())
		return 0;
	t = get_totals();
	if (!t)
		return 0;

	if (mapping_stable_writes(mapping, sb)) {
		/* page_mkwrite dirties first and waits right after: not a violation. */
		struct spt_dev_stats *ds = dev_stats_of(dev, sb, mapping);

		t->stable_dirtied++;
		if (ds)
			__sync_fetch_and_add(&ds->stable_dirtied, 1);
		return 0;
	}

	kind = current_kind();
	generation = BPF_CORE_READ(inode, i_generation);
	count_violation(t, kind, dev, sb, mapping, inode, generation);
	if (stream_events)
		stream_violation(t, kind, dev, sb, inode, generation, folio);
	return 0;
}

/* A task sleeps until a folio's writeback ends. */
static __always_inline int handle_writeback_wait(struct folio *folio, struct address_space *mapping)
{
	struct spt_dev_stats *ds;
	struct spt_proc_stats *ps;
	struct super_block *sb;
	struct spt_totals *t;
	struct block_device *bdev;
	__u32 dev, bdev_dev = 0, kind, tgid;

	if (!mapping)
		return 0;
	sb = BPF_CORE_READ(mapping, host, i_sb);
	if (!sb)
		return 0;
	dev = BPF_CORE_READ(sb, s_dev);
	bdev = BPF_CORE_READ(sb, s_bdev);
	if (bdev)
		bdev_dev = BPF_CORE_READ(bdev, bd_dev);
	if (!dev_selected(dev, bdev_dev) || !task_selected())
		return 0;
	t = get_totals();
	if (!t)
		return 0;
	kind = current_kind();
	t->waits[kind]++;
	ds = dev_stats_of(dev, sb, mapping);
	if (ds)
		__sync_fetch_and_add(&ds->waits[kind], 1);
	if (kind == SPT_KIND_OTHER)
		return 0;
	tgid = bpf_get_current_pid_tgid() >> 32;
	ps = bpf_map_lookup_elem(&proc_stats, &tgid);
	if (!ps) {
		struct spt_proc_stats init = {};

		bpf_get_current_comm(init.comm, sizeof(init.comm));
		bpf_map_update_elem(&proc_stats, &tgid, &init, BPF_NOEXIST);
		ps = bpf_map_lookup_elem(&proc_stats, &tgid);
	}
	if (ps)
		__sync_fetch_and_add(&ps->waits[kind], 1);
	return 0;
}

SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(tp_writeback_dirty_folio, struct folio *folio, struct address_space *mapping)
{
	return handle_folio_dirtied(folio, mapping);
}

SEC("tp_btf/folio_wait_writeback")
int BPF_PROG(tp_folio_wait_writeback, struct folio *folio, struct address_space *mapping)
{
	return handle_writeback_wait(folio, mapping);
}

char LICENSE[] SEC("license") = "GPL";
