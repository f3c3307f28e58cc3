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
 *   sched:sched_switch               times those sleeps: the waiter going
 *       to sleep while the folio is still under writeback, and running
 *       again (a look at the two tasks' own wait entries).
 *   block:block_rq_complete          ends the would-stall time of violated
 *       folios carried by a completed write request (only while some are
 *       in flight), and times write requests for the writeback histogram
 *       where the tool shows histograms.
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
/*
 * Each of the counters below on its own cache line: sched_switch reads
 * n_held_folios on every context switch and block_rq_complete reads it and
 * n_inflight_violations on every write request, while the violation, wait
 * and I/O-end paths of the other CPU write the others; sharing a line made
 * each switch a cache miss.
 */
#define SPT_OWN_CACHE_LINE __attribute__((aligned(64)))
#define MAX_PIDS 1024

/* include/linux/sched.h */
#define PF_IO_WORKER 0x00000010
#define PF_KTHREAD 0x00200000
#define ENOSYS 38
#define PAGE_SHIFT_X86 12
/* include/linux/page-flags.h: folio->mapping of an anonymous folio */
#define PAGE_MAPPING_ANON_BIT 0x1

const volatile bool filter_pid = false;
const volatile bool filter_dev = false;
const volatile bool filter_comm = false;
const volatile bool filter_cgroup = false;
const volatile bool stream_events = true;
/* Tracepoint mode: would-stall ends where a completed request's pages are
 * found (block_rq_complete walk). fentry mode: at folio_end_writeback. */
const volatile bool walk_requests = true;
/*
 * The write requests' latency histogram (SPT_HIST_WRITEBACK), which the
 * tool asks for only where it shows histograms (--hist, --json,
 * --prom-file). Without it a write request reads the clock only when it
 * ends a violation's would-stall: on profile A the clock was a third of
 * block_rq_complete's run time, and only about a third of its write
 * requests carry a violated folio (89k violations to 244k requests).
 */
const volatile bool time_requests = true;
/* fentry mode: mmap violations are decided where page_mkwrite returns, and
 * waits are timed from entry to return of folio_wait_writeback(). */
const volatile bool hook_mkwrite = false;
const volatile bool time_wait_calls = false;
/*
 * Tracepoint mode: waits are timed by sched_switch, which runs on every
 * context switch of the machine (~0.2 us each here, most of it the
 * tracepoint's dispatch, not the program). Unless asked to time every
 * wait, the tool attaches it only once a writer has waited (a stable
 * wait): the first such wait sets switch_wanted, the tool attaches
 * sched_switch and sets switch_attached; until then waits are counted
 * and untimed.
 */
bool switch_attached = false;
__u32 switch_wanted = 0;
/*
 * Pausing (SIGUSR1) detaches the tracepoint programs and sets
 * tracing_paused, which the fentry/fexit programs (fentry mode) return at:
 * their trampolines stay, as attaching them again on a function writers
 * are running hung the 6.1 test guest (see docs/semantics.md). The tool
 * increments pause_epoch while paused. What spans the pause (a violation waiting
 * for its I/O, a wait being timed, a page_mkwrite call, a writeback start)
 * may have had its end pass unseen, so each such entry records the epoch it
 * began in, and whoever meets one from an earlier epoch drops it, untimed.
 */
__u32 pause_epoch = 0;
bool tracing_paused = false;
/* enforce (BPF): enum spt_hold_action for writers in scope (the task
 * filters); the folios under writeback are indexed by file offset for the
 * write() check (fentry mode: __folio_start_writeback). */
const volatile __u32 hold_action = SPT_ACTION_NONE;
const volatile __u64 max_delay_ns = 1000000000ULL;
const volatile bool index_writeback = false;
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

/* A row that does not fit is counted in agg_dropped. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct spt_proc_stats);
} proc_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct spt_writer_key);
	__type(value, struct spt_writer_stats);
} writer_stats SEC(".maps");

/*
 * Histograms: a direct-mapped table first, the hash map for a key whose row
 * another key holds. Every write request and every violation's end adds a
 * sample; an array lookup is a few instructions where a hash lookup hashes
 * and walks a bucket (~15% of block_rq_complete on profile A).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << SPT_HIST_TABLE_LOG2);
	__type(key, __u32);
	__type(value, struct spt_hist_entry);
} hist_table SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct spt_hist_key);
	__type(value, struct spt_hist);
} hists SEC(".maps");

/*
 * Violated folios waiting for the end of their I/O: a direct-mapped table,
 * one slot per hash of the folio's address, not a hash map. Every violation
 * inserts and every page of a completed write request looks up; a hash map
 * insert (bucket lock, free-list pop across CPUs) cost ~450 ns a violation
 * on profile A, a slot is claimed with one compare-and-swap and an array
 * lookup is a few instructions. A violated folio whose slot another one
 * takes is evicted, untimed; folio is 0 in a free slot and INFLIGHT_BUSY
 * while one CPU fills or empties it, so no entry is lost or counted twice.
 */
struct inflight_violation {
	__u64 folio;
	__u64 ts_ns;
	__u32 tgid;
	__u32 tid;
	__u32 dev;
	__u32 kind;
	__u32 epoch;
	__u32 pad;
};

#define INFLIGHT_SLOTS_LOG2 16
#define INFLIGHT_BUSY 1ULL /* a struct folio is never at an odd address */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << INFLIGHT_SLOTS_LOG2);
	__type(key, __u32);
	__type(value, struct inflight_violation);
} inflight_violations SEC(".maps");

/*
 * Per thread: the end of the last would-stall it was charged for, in a
 * 2-way set-associative table by thread id, not a hash map: every
 * violation's end looks its thread up (an LRU hash lookup was ~9 ns of each
 * write request's program on profile A; a set is a few instructions). A
 * thread that finds neither way its own takes the one that ended longer
 * ago; the thread that had it loses its horizon and is charged its next
 * interval whole: that only forgets an overlap, and it takes three threads
 * live in one of 4096 sets (~n^3/10^8 triples of n threads with random ids:
 * 0.003 of 64; a direct-mapped row lost to any pair, n^2/16384: 0.25 of
 * 64). Two threads of one set ending violations on two CPUs at the same
 * moment may leave one's horizon under the other's id, which charges the
 * next end of that one less by at most their overlap (docs/metrics.md).
 */
struct stall_horizon {
	__u32 tid;
	__u32 pad;
	__u64 end_ns;
};

struct stall_horizon_set {
	struct stall_horizon way[2];
};

#define STALL_HORIZON_SETS_LOG2 12

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << STALL_HORIZON_SETS_LOG2);
	__type(key, __u32);
	__type(value, struct stall_horizon_set);
} stall_horizons SEC(".maps");

/* A task in folio_wait_writeback(): a task waits for at most one folio at a
 * time. Task-local storage, not a hash by thread id: sched_switch looks up
 * both tasks on every switch, and a task's own storage is a pointer away
 * where a hash costs a jhash and a bucket walk. The entry stays with the
 * task (freed when it exits); folio == 0 is "not waiting". Only the task's
 * own context and the switch to or from it touch an entry, never two CPUs
 * at once. */
struct writeback_wait {
	__u64 folio;
	__u64 ts_ns;
	__u32 dev;
	__u32 kind;
	__u32 tgid;
	__u32 slept;
	__u32 epoch;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct writeback_wait);
} waiting SEC(".maps");

/* fentry mode: a thread inside a hooked page_mkwrite handler. Handlers
 * nest (ext4 -> block_page_mkwrite, xfs -> iomap_page_mkwrite): the
 * outermost return decides. */
struct mkwrite_call {
	__u32 depth;
	__u32 dirtied; /* the folio went clean -> dirty under writeback inside */
	__u32 epoch;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct mkwrite_call);
} mkwrite_calls SEC(".maps");

/* fentry mode: when each folio's writeback started, keyed by folio. LRU: a
 * folio freed after its writeback leaves its entry behind. */
struct writeback_start {
	__u64 ts_ns;
	__u32 dev;
	__u32 epoch;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct writeback_start);
} writeback_started SEC(".maps");

/* enforce (BPF): folios under writeback by (mapping, index of their first
 * page), so that a write() can be checked before its copy. */
struct wb_head_key {
	__u64 mapping;
	__u64 index;
};

struct wb_head {
	__u64 folio;
	__u32 nr_pages;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct wb_head_key);
	__type(value, struct wb_head);
} wb_heads SEC(".maps");

/* enforce (BPF): held threads (see struct spt_hold), and the folios they
 * wait for, whose end of writeback resumes them. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct spt_hold);
} holds SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u8);
} held_folios SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} hold_events SEC(".maps");

__u64 n_held_folios SPT_OWN_CACHE_LINE;

/*
 * Occupied slots of inflight_violations, and waits being timed in waiting.
 * Incremented only by the insert (or the wait's start) that created one and
 * decremented only by the take or eviction (or the wait's end) that removed
 * it, so they are exact. block_rq_complete walks requests only while the
 * first is not 0; sched_switch does not read the second (see tp_sched_switch).
 */
__u64 n_inflight_violations SPT_OWN_CACHE_LINE;
__u64 n_waiting SPT_OWN_CACHE_LINE;

static struct spt_hist zero_hist;

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

/*
 * Every write request and every dirtying under writeback asks: a few
 * compares of constants the verifier knows (n_filter_devs) where a hash
 * lookup hashes and walks a bucket. n_filter_devs is 0 when more devices
 * are selected than fit: dev_filter holds them all.
 */
const volatile __u32 n_filter_devs = 0;
const volatile __u32 filter_devs[SPT_FILTER_DEVS_INLINE] = {};

static __always_inline bool dev_selected(__u32 dev)
{
	if (!filter_dev)
		return true;
	if (!n_filter_devs)
		return bpf_map_lookup_elem(&dev_filter, &dev);
	for (int i = 0; i < SPT_FILTER_DEVS_INLINE && i < n_filter_devs; i++)
		if (filter_devs[i] == dev)
			return true;
	return false;
}

/* A filesystem is selected by its s_dev or by its block device (btrfs
 * gives s_dev an anonymous number); the second is read only if needed. */
static __always_inline bool sb_selected(struct super_block *sb, __u32 dev)
{
	struct block_device *bdev;

	if (dev_selected(dev))
		return true;
	bdev = sb->s_bdev;
	return bdev && dev_selected(bdev->bd_dev);
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

static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) r += 1;
	return r;
}

/* Fibonacci hashing: the top @bits bits of @v times 2^64 / phi, which
 * spreads keys that differ in any bits over the direct-mapped tables. */
static __always_inline __u32 fib_hash(__u64 v, __u32 bits)
{
	return (v * 0x9E3779B97F4A7C15ULL) >> (64 - bits);
}

/* The key's row in hist_table, claimed now if it is free; NULL if another
 * key holds it. */
static __always_inline struct spt_hist *hist_table_row(__u64 key_word)
{
	__u32 i = fib_hash(key_word, SPT_HIST_TABLE_LOG2);
	struct spt_hist_entry *e = bpf_map_lookup_elem(&hist_table, &i);
	__u64 cur;

	if (!e || !key_word)
		return NULL;
	cur = e->key_word;
	if (!cur)
		cur = __sync_val_compare_and_swap(&e->key_word, 0, key_word);
	return !cur || cur == key_word ? &e->h : NULL;
}

static __always_inline void hist_add(__u32 dev, __u16 type, __u16 kind, __u64 ns)
{
	union {
		struct spt_hist_key key;
		__u64 word;
	} k = { .key = { .dev = dev, .type = type, .kind = kind } };
	struct spt_hist *h = hist_table_row(k.word);
	__u64 us = ns / 1000;
	__u32 slot;

	if (!h)
		h = bpf_map_lookup_elem(&hists, &k.key);
	if (!h) {
		bpf_map_update_elem(&hists, &k.key, &zero_hist, BPF_NOEXIST);
		h = bpf_map_lookup_elem(&hists, &k.key);
		if (!h)
			return;
	}
	slot = us ? log2_u64(us) : 0;
	if (slot >= SPT_HIST_SLOTS)
		slot = SPT_HIST_SLOTS - 1;
	__sync_fetch_and_add(&h->slots[slot], 1);
	__sync_fetch_and_add(&h->sum_ns, ns);
}

static __always_inline struct spt_proc_stats *proc_stats_of_current(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct spt_proc_stats *ps = bpf_map_lookup_elem(&proc_stats, &tgid);
	struct spt_proc_stats init = {};

	if (ps)
		return ps;
	bpf_get_current_comm(init.comm, sizeof(init.comm));
	bpf_map_update_elem(&proc_stats, &tgid, &init, BPF_NOEXIST);
	return bpf_map_lookup_elem(&proc_stats, &tgid);
}

/*
 * A BTF pointer's address as a number, for hashing and its low bits. The
 * verifier allows no arithmetic on such a pointer but adding an offset, yet
 * lets a privileged program subtract one pointer from another (a number;
 * adjust_reg_min_max_vals(), allow_ptr_leaks, since 4.14): the distance to
 * this global, plus the global's own address, read once.
 * Two instructions where a bpf_probe_read_kernel() of the pointer was a
 * helper call. The barrier keeps the compiler from folding the two into a
 * scalar minus a pointer, which the verifier rejects.
 */
__u64 ptr_base_addr;

static __always_inline __u64 btf_ptr_addr(const void *ptr)
{
	__u64 dist = (__u64)ptr;

	if (!ptr_base_addr) {
		const void *base = &ptr_base_addr;

		bpf_probe_read_kernel(&ptr_base_addr, sizeof(ptr_base_addr), &base);
	}
	dist -= (__u64)&ptr_base_addr;
	barrier_var(dist);
	return dist + ptr_base_addr;
}

/* The folio's slot in inflight_violations. Fibonacci hashing of its struct
 * page index: large folios are aligned to their size, so the low bits
 * alone would put them all on a few slots. */
static __always_inline struct inflight_violation *inflight_slot(__u64 folio)
{
	__u32 i = fib_hash(folio >> 6, INFLIGHT_SLOTS_LOG2);

	return bpf_map_lookup_elem(&inflight_violations, &i);
}

/*
 * The file, superblock and device of a page-cache folio's mapping, if the
 * device passes the filter (writeback start: done by flushers, so no task
 * filter) or the device and the current task do.
 */
struct folio_file {
	struct inode *inode;
	struct super_block *sb;
	__u32 dev;
};

/* A violation, as its counters and streams see it. */
struct violation {
	__u64 now;      /* bpf_ktime_get_ns() */
	__u64 pid_tgid;
	__u32 kind;
	__u32 generation;
};

/*
 * Remember when the folio was violated, to time it at the end of its I/O.
 * The slot's occupant is evicted, untimed: the folio itself from an earlier
 * cycle whose end was not seen (a folio is violated at most once a cycle),
 * or another folio. A slot another CPU holds at this moment leaves this
 * violation untimed.
 */
static __always_inline void track_violation(struct spt_totals *t, const struct violation *v,
					    __u64 key, __u32 dev)
{
	struct inflight_violation *s = inflight_slot(key);
	__u64 cur;

	if (!s) {
		t->would_stall_untimed++;
		return;
	}
	cur = s->folio;
	if (cur == INFLIGHT_BUSY ||
	    __sync_val_compare_and_swap(&s->folio, cur, INFLIGHT_BUSY) != cur) {
		t->would_stall_untimed++;
		return;
	}
	if (cur)
		t->would_stall_untimed++;
	else
		__sync_fetch_and_add(&n_inflight_violations, 1);
	s->ts_ns = v->now;
	s->tgid = v->pid_tgid >> 32;
	s->tid = (__u32)v->pid_tgid;
	s->dev = dev;
	s->kind = v->kind;
	s->epoch = pause_epoch;
	/* Publish: an atomic exchange orders the stores above before it. */
	__sync_lock_test_and_set(&s->folio, key);
}

/* Take the folio's entry out of inflight_violations, if it is there. False
 * also for an entry from before a pause: it leaves, untimed. */
static __always_inline bool take_violation(__u64 folio, struct inflight_violation *out)
{
	struct inflight_violation *s = inflight_slot(folio);
	struct spt_totals *t;

	if (!s || s->folio != folio ||
	    __sync_val_compare_and_swap(&s->folio, folio, INFLIGHT_BUSY) != folio)
		return false;
	*out = *s;
	__sync_lock_test_and_set(&s->folio, 0);
	__sync_fetch_and_add(&n_inflight_violations, -1);
	if (out->epoch == pause_epoch)
		return true;
	t = get_totals();
	if (t)
		t->would_stall_untimed++;
	return false;
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

/*
 * The row of the current process on the violated file. Its creation also
 * records the device's and the process's descriptions, so that the hot path
 * is one lookup. NULL when the table is full: the violation is then counted
 * for its device and its process directly.
 */
static __always_inline struct spt_writer_stats *
writer_row(struct spt_totals *t, const struct violation *v, struct folio_file *ff,
	   struct address_space *mapping)
{
	struct spt_writer_key key = { .dev = ff->dev, .tgid = v->pid_tgid >> 32,
				      .ino = ff->inode->i_ino };
	struct spt_writer_stats *w = bpf_map_lookup_elem(&writer_stats, &key);
	struct spt_writer_stats init = { .generation = v->generation };
	struct spt_dev_stats *ds;
	struct spt_proc_stats *ps;

	if (w)
		return w;
	ds = dev_stats_of(ff->dev, ff->sb, mapping);
	ps = proc_stats_of_current();
	/* NOEXIST: another CPU may have made it meanwhile */
	bpf_map_update_elem(&writer_stats, &key, &init, BPF_NOEXIST);
	w = bpf_map_lookup_elem(&writer_stats, &key);
	if (w && ds && ps)
		return w;
	t->agg_dropped++;
	if (w)
		return w;
	if (ds)
		__sync_fetch_and_add(&ds->violations[v->kind], 1);
	if (ps)
		__sync_fetch_and_add(&ps->violations[v->kind], 1);
	return NULL;
}

static __always_inline void count_violation(struct spt_totals *t, const struct violation *v,
					    struct folio_file *ff, struct address_space *mapping)
{
	struct spt_writer_stats *w = writer_row(t, v, ff, mapping);

	t->violations[v->kind]++;
	if (w) {
		__sync_fetch_and_add(&w->violations[v->kind], 1);
		w->last_ns = v->now;
	}
}

static __always_inline void stream_violation(struct spt_totals *t, const struct violation *v,
					     struct folio_file *ff, struct folio *folio)
{
	struct block_device *bdev;
	struct spt_event *e;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		t->events_lost++;
		return;
	}
	e->ts_ns = v->now;
	e->cgroup_id = bpf_get_current_cgroup_id();
	e->ino = ff->inode->i_ino;
	/* fentry mode's page_mkwrite return has the folio as a number */
	e->index = BPF_CORE_READ(folio, index);
	e->pid = v->pid_tgid >> 32;
	e->tid = (__u32)v->pid_tgid;
	e->dev = ff->dev;
	bdev = ff->sb->s_bdev;
	e->bdev = bdev ? bdev->bd_dev : 0;
	e->generation = v->generation;
	e->kind = v->kind;
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

/*
 * @mapping is a BTF pointer (every caller has one), so the chain is read by
 * direct loads: a plain load each, where bpf_probe_read_kernel() is a
 * helper call (~120 ns less per violation on profile A).
 */
static __always_inline bool folio_file_on_selected_dev(struct address_space *mapping,
						       struct folio_file *ff)
{
	struct inode *inode = mapping->host;
	struct super_block *sb = inode->i_sb;

	if (!sb)
		return false;
	ff->inode = inode;
	ff->sb = sb;
	ff->dev = sb->s_dev;
	return sb_selected(sb, ff->dev);
}

static __always_inline bool folio_file_selected(struct address_space *mapping,
						struct folio_file *ff)
{
	return folio_file_on_selected_dev(mapping, ff) && task_selected();
}

/* folio->mapping of a page-cache folio; NULL for anonymous ones (their
 * mapping is an anon_vma with the low bit set) and truncated ones. */
static __always_inline struct address_space *folio_file_mapping(struct folio *folio)
{
	struct address_space *mapping = folio->mapping;

	return btf_ptr_addr(mapping) & PAGE_MAPPING_ANON_BIT ? NULL : mapping;
}

/* @folio: its address (a number, not a BTF pointer: fexit has no other). */
static __always_inline void record_violation(struct spt_totals *t, __u64 folio,
					     struct address_space *mapping, struct folio_file *ff,
					     __u32 kind)
{
	struct violation v = {
		.now = bpf_ktime_get_ns(),
		.pid_tgid = bpf_get_current_pid_tgid(),
		.kind = kind,
		.generation = ff->inode->i_generation,
	};

	count_violation(t, &v, ff, mapping);
	track_violation(t, &v, folio, ff->dev);
	if (stream_events)
		stream_violation(t, &v, ff, (struct folio *)folio);
}

/*
 * enforce (BPF): hold a writer by stopping it. BPF cannot sleep, so the
 * thread is sent SIGSTOP (the whole thread group stops, as with Ctrl-Z) and
 * user space sends SIGCONT when a SPT_HOLD_RELEASE event says the folio's
 * writeback ended, or when the hold reaches --max-delay. A guardian process
 * resumes every thread in the holds table if the tool dies.
 */
#define SIGKILL_X86 9
#define SIGSTOP_X86 19

/* @task: the held thread; NULL for a release. */
static __always_inline void emit_hold_event(__u32 type, __u64 folio, __u64 ts, __u64 first_ts,
					    __u32 kind, struct task_struct *task)
{
	struct spt_hold_event *e = bpf_ringbuf_reserve(&hold_events, sizeof(*e), 0);

	/* A lost start leaves the entry in holds: the guardian resumes the
	 * thread at --max-delay + 0.5 s. A lost release: the tool at --max-delay. */
	if (!e)
		return;
	e->ts_ns = ts;
	e->first_ts_ns = first_ts;
	e->folio = folio;
	e->type = type;
	e->kind = kind;
	e->pid = task ? task->tgid : 0;
	e->tid = task ? task->pid : 0;
	if (task)
		bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), task->comm);
	else
		e->comm[0] = 0;
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/*
 * Stop the current thread until the folio's writeback ends. False when it
 * cannot be (holds table full, signal not sent): the write goes on and is
 * a violation. User space hears of the hold only once the SIGSTOP is
 * generated (tp_signal_generate), never before: see there.
 */
static __always_inline bool start_hold(struct spt_totals *t, __u64 folio, __u32 kind, __u64 now)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = id;
	struct spt_hold *old = bpf_map_lookup_elem(&holds, &tid);
	struct spt_hold h = {
		.first_ts_ns = now,
		.hold_ts_ns = now,
		.folio = folio,
		.pid = id >> 32,
		.kind = kind,
		.announce = SPT_HOLD_SIGNAL_PENDING,
	};
	__u8 one = 1;

	if (old) {
		h.first_ts_ns = old->first_ts_ns;
		*old = h;
	} else if (bpf_map_update_elem(&holds, &tid, &h, BPF_NOEXIST)) {
		return false;
	}
	if (!bpf_map_update_elem(&held_folios, &folio, &one, BPF_NOEXIST))
		__sync_fetch_and_add(&n_held_folios, 1);
	/*
	 * To this thread, not the group (the stop is group-wide either way): a
	 * SIGSTOP already pending for the group would make a group-directed
	 * one a no-op that flags no thread, and a held write() could then
	 * leave its syscall with no signal pending, handing -ERESTARTNOINTR
	 * (errno 513) to the application instead of being restarted. Seen in
	 * the 6.1 guest with 4 writer threads; a thread's own queue has room.
	 * It fails (-EBUSY) when an IRQs-off send from this CPU is still
	 * queued: then nothing stops the thread. The folio stays in
	 * held_folios; its release finds no holder.
	 */
	if (bpf_send_signal_thread(SIGSTOP_X86)) {
		if (old)
			old->announce = 0;
		else
			bpf_map_delete_elem(&holds, &tid);
		return false;
	}
	if (!old)
		t->holds[kind]++;
	return true;
}

/* The time of a completion, read at its first use: *now is 0 until then. */
static __always_inline __u64 completion_time(__u64 *now)
{
	if (!*now)
		*now = bpf_ktime_get_ns();
	return *now;
}

/* The folio's writeback ended (at *now, read if 0): its holders may go on. */
static __always_inline void release_holders(__u64 folio, __u64 *now)
{
	if (!n_held_folios || bpf_map_delete_elem(&held_folios, &folio))
		return;
	__sync_fetch_and_add(&n_held_folios, -1);
	completion_time(now);
	emit_hold_event(SPT_HOLD_RELEASE, folio, *now, *now, 0, NULL);
}

/*
 * A release can be missed: the request walk (or folio_end_writeback) may
 * pass the folio just before its hold is recorded. While holds are
 * outstanding, sched_switch looks at the held folios at most once a
 * millisecond (the tool polls every 2 ms then, so switches happen even on
 * an idle machine) and releases those no longer under writeback.
 */
#define HELD_SWEEP_NS 1000000ULL
__u64 last_held_sweep_ns SPT_OWN_CACHE_LINE;

static long check_held_folio(struct bpf_map *map, __u64 *folio, __u8 *unused, __u64 *now)
{
	if (!folio_ptr_under_writeback(*folio))
		release_holders(*folio, now);
	return 0;
}

static __always_inline void sweep_held_folios(void)
{
	__u64 now = bpf_ktime_get_ns();

	if (now - last_held_sweep_ns < HELD_SWEEP_NS)
		return;
	last_held_sweep_ns = now;
	bpf_for_each_map_elem(&held_folios, check_held_folio, &now, 0);
}

/*
 * A writer in scope is about to modify a folio under writeback: a write
 * fault about to make it writable (the signal is delivered on the way back
 * to user space, before the store), or a write() before its copy. True when
 * its data is kept out (held, killed).
 */
static __always_inline bool act_on_writer(struct spt_totals *t, __u64 folio, __u32 kind, __u64 now)
{
	switch (hold_action) {
	case SPT_ACTION_DELAY:
		return start_hold(t, folio, kind, now);
	case SPT_ACTION_KILL:
		bpf_send_signal(SIGKILL_X86);
		t->kills++;
		return true;
	case SPT_ACTION_LOG:
		t->would_hold++;
		return false;
	}
	return false;
}

static __always_inline bool hold_mmap_writer(struct spt_totals *t, __u64 folio)
{
	return hold_action != SPT_ACTION_NONE &&
	       act_on_writer(t, folio, SPT_KIND_MMAP, bpf_ktime_get_ns());
}

/* The folio under writeback that holds file page @index, if any: folios
 * are naturally aligned, so its first page is @index with some low bits
 * cleared (orders 0 to 9: up to a PMD). */
static __always_inline __u64 writeback_folio_at(__u64 mapping, __u64 index)
{
	for (int order = 0; order < 10; order++) {
		struct wb_head_key key = { .mapping = mapping, .index = index & ~((1ULL << order) - 1) };
		struct wb_head *h = bpf_map_lookup_elem(&wb_heads, &key);

		if (h && index - key.index < h->nr_pages)
			return h->folio;
	}
	return 0;
}

/* include/linux/fs.h, include/uapi/asm-generic/fcntl.h, include/linux/errno.h */
#define MAY_WRITE 0x00000002
#define O_APPEND_X86 00002000
#define ERESTARTNOINTR 513

/*
 * The byte range of the current write-family syscall, from its registers
 * (x86-64: di, si, dx, r10 carry arguments 1-4). Vector writes: the first
 * 8 iovecs.
 */
static __always_inline bool write_range(struct file *file, __u64 *pos, __u64 *count)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	long nr = regs->orig_ax;
	bool positional = nr == 18 || nr == 296 || nr == 328;

	if (nr == 1 || nr == 18) {
		*count = regs->dx;
	} else {
		struct iovec iov[8];
		__u64 n = regs->dx;

		*count = 0;
		if (bpf_probe_read_user(iov, sizeof(iov), (void *)regs->si))
			return false;
		for (int i = 0; i < 8; i++)
			if (i < n)
				*count += iov[i].iov_len;
	}
	*pos = positional && (long)regs->r10 != -1 ? regs->r10 : BPF_CORE_READ(file, f_pos);
	if (BPF_CORE_READ(file, f_flags) & O_APPEND_X86)
		*pos = BPF_CORE_READ(file, f_inode, i_size);
	return *count > 0;
}

/*
 * security_file_permission(file, MAY_WRITE) runs in rw_verify_area(),
 * before the copy. A writer in scope whose range touches a folio under
 * writeback is stopped and its syscall fails with -ERESTARTNOINTR: with a
 * signal pending, the kernel never returns that to user space but restarts
 * the syscall once the thread runs again, so the application sees a slower
 * write and nothing else. The restarted write is checked again.
 */
static __always_inline int hold_write(struct file *file, int mask)
{
	__u64 pos, count, first, last, folio = 0, now, mapping;
	struct spt_hold *held;
	struct spt_totals *t;
	__u32 tid;

	if (hold_action == SPT_ACTION_NONE || !(mask & MAY_WRITE))
		return 0;
	/* Only a write-family syscall from user space can be restarted. */
	if (current_kind() != SPT_KIND_WRITE || !task_selected())
		return 0;
	mapping = (__u64)BPF_CORE_READ(file, f_mapping);
	if (!mapping || !write_range(file, &pos, &count))
		return 0;
	t = get_totals();
	if (!t)
		return 0;
	first = pos >> PAGE_SHIFT_X86;
	last = (pos + count - 1) >> PAGE_SHIFT_X86;
	if (last - first >= SPT_HOLD_MAX_PAGES) {
		t->hold_range_capped++;
		last = first + SPT_HOLD_MAX_PAGES - 1;
	}
	for (int i = 0; i < SPT_HOLD_MAX_PAGES && !folio; i++)
		if (first + i <= last)
			folio = writeback_folio_at(mapping, first + i);
	tid = bpf_get_current_pid_tgid();
	held = bpf_map_lookup_elem(&holds, &tid);
	if (!folio) {
		/* Held before, and its folios are written back now. */
		if (held)
			bpf_map_delete_elem(&holds, &tid);
		return 0;
	}
	now = bpf_ktime_get_ns();
	if (held && now - held->first_ts_ns >= max_delay_ns) {
		/* Bounded: it goes on; the tracepoint counts the violation. */
		bpf_map_delete_elem(&holds, &tid);
		t->holds_expired++;
		return 0;
	}
	return act_on_writer(t, folio, SPT_KIND_WRITE, now) ? -ERESTARTNOINTR : 0;
}

/*
 * fentry mode: was the folio violated already in its current writeback
 * cycle? A violation recorded while its folio's writeback was ending (on
 * another CPU, which did not find it yet) stays behind: it is older than the
 * cycle's start, and the new violation replaces it (would_stall_untimed).
 */
static __always_inline bool violated_this_cycle(__u64 folio)
{
	struct inflight_violation *v = inflight_slot(folio);
	struct writeback_start *ws;

	if (!v || v->folio != folio || v->epoch != pause_epoch)
		return false;
	ws = bpf_map_lookup_elem(&writeback_started, &folio);
	/* No start seen: the cycle began before tracing, as did no entry. */
	return !ws || v->ts_ns >= ws->ts_ns;
}

/* A folio goes clean -> dirty (mapping->i_pages xa_lock held, IRQs off). */
static __always_inline int handle_folio_dirtied(struct folio *folio, struct address_space *mapping)
{
	struct folio_file ff;
	struct spt_totals *t;
	__u64 addr;
	__u32 kind;

	if (!mapping || !folio_under_writeback(folio) || !folio_file_selected(mapping, &ff))
		return 0;
	t = get_totals();
	if (!t)
		return 0;

	if (mapping_stable_writes(mapping, ff.sb)) {
		/* page_mkwrite dirties first and waits right after: not a violation. */
		struct spt_dev_stats *ds = dev_stats_of(ff.dev, ff.sb, mapping);

		t->stable_dirtied++;
		if (ds)
			__sync_fetch_and_add(&ds->stable_dirtied, 1);
		return 0;
	}

	kind = current_kind();
	addr = btf_ptr_addr(folio);
	if (hook_mkwrite && kind == SPT_KIND_MMAP) {
		__u32 tid = bpf_get_current_pid_tgid();
		struct mkwrite_call *call = bpf_map_lookup_elem(&mkwrite_calls, &tid);

		/* Inside a page_mkwrite handler: its return decides. */
		if (call) {
			call->dirtied = 1;
			return 0;
		}
		/* ext4's mapped-buffers path dirties after page_mkwrite
		 * returned, and that return counted it already. */
		if (violated_this_cycle(addr))
			return 0;
	}
	if (kind == SPT_KIND_MMAP && hold_mmap_writer(t, addr))
		return 0;
	record_violation(t, addr, mapping, &ff, kind);
	return 0;
}

/* The task's wait entry is over: it is free for its next wait. */
static __always_inline void clear_wait(struct writeback_wait *w)
{
	w->folio = 0;
	__sync_fetch_and_add(&n_waiting, -1);
}

/* A wait entry, emptied first if it was begun before a pause: untimed. */
static __always_inline struct writeback_wait *drop_if_stale(struct writeback_wait *w)
{
	struct spt_totals *t;

	if (w && w->folio && w->epoch != pause_epoch) {
		clear_wait(w);
		t = get_totals();
		if (t)
			t->wait_untimed++;
	}
	return w;
}

static __always_inline struct writeback_wait *wait_of(struct task_struct *task)
{
	/*
	 * sched_switch asks for both tasks on every switch, and most tasks
	 * never waited: with no local storage at all (task->bpf_storage is
	 * NULL) there is nothing to find, so skip the helper call.
	 */
	if (bpf_core_field_exists(task->bpf_storage) && !task->bpf_storage)
		return NULL;
	return drop_if_stale(bpf_task_storage_get(&waiting, task, NULL, 0));
}

/* The current task's wait entry, created on its first wait. */
static __always_inline struct writeback_wait *own_wait_entry(void)
{
	return drop_if_stale(bpf_task_storage_get(&waiting, bpf_get_current_task_btf(), NULL,
						  BPF_LOCAL_STORAGE_GET_F_CREATE));
}

static __always_inline void begin_wait(struct writeback_wait *w, struct folio *folio, __u32 dev,
				       __u32 kind)
{
	w->folio = (__u64)folio;
	w->ts_ns = bpf_ktime_get_ns();
	w->dev = dev;
	w->kind = kind;
	w->tgid = bpf_get_current_pid_tgid() >> 32;
	w->slept = 0;
	w->epoch = pause_epoch;
}

static __always_inline void track_wait(struct spt_totals *t, struct folio *folio, __u32 dev,
				       __u32 kind)
{
	struct writeback_wait *w = own_wait_entry();

	if (!w) {
		/* No memory, or storage busy on this CPU (recursion). */
		t->wait_untimed++;
		return;
	}
	if (w->folio)
		/* An older wait of this task that never slept. */
		t->wait_untimed++;
	else
		__sync_fetch_and_add(&n_waiting, 1);
	begin_wait(w, folio, dev, kind);
}

/* A task sleeps until a folio's writeback ends. */
static __always_inline int handle_writeback_wait(struct folio *folio, struct address_space *mapping)
{
	struct spt_dev_stats *ds;
	struct spt_proc_stats *ps;
	struct folio_file ff;
	struct spt_totals *t;
	__u32 kind;

	if (!mapping || !folio_file_selected(mapping, &ff))
		return 0;
	t = get_totals();
	if (!t)
		return 0;
	kind = current_kind();
	t->waits[kind]++;
	ds = dev_stats_of(ff.dev, ff.sb, mapping);
	if (ds)
		__sync_fetch_and_add(&ds->waits[kind], 1);
	if (time_wait_calls) {
		/* fentry mode: timed from the wait function's entry to its
		 * return. A second sleep in one call is inside that time. */
		struct writeback_wait *w = wait_of(bpf_get_current_task_btf());

		if (w && w->folio == (__u64)folio && !w->slept)
			w->slept = 1;
		else
			t->wait_untimed++;
	} else if (switch_attached) {
		track_wait(t, folio, ff.dev, kind);
	} else {
		t->wait_untimed++;
		if (kind != SPT_KIND_OTHER)
			switch_wanted = 1;
	}
	if (kind == SPT_KIND_OTHER)
		return 0;
	ps = proc_stats_of_current();
	if (ps)
		__sync_fetch_and_add(&ps->waits[kind], 1);
	return 0;
}

/* A timed wait is over: the waiter runs again, or the wait call returned. */
static __always_inline void end_wait(struct writeback_wait *done, __u64 now)
{
	__u64 ns = now - done->ts_ns;

	hist_add(done->dev, SPT_HIST_WAIT, done->kind, ns);
	if (done->kind != SPT_KIND_OTHER) {
		struct spt_proc_stats *ps = bpf_map_lookup_elem(&proc_stats, &done->tgid);

		if (ps)
			__sync_fetch_and_add(&ps->stable_wait_ns, ns);
	}
}

/*
 * The waiter leaves the CPU or comes back. A voluntary switch-out while the
 * folio is still under writeback is the sleep; running again ends it. A
 * waiter that finds the folio already written back does not sleep: untimed.
 */
static __always_inline void handle_switch(bool preempt, struct task_struct *prev,
					  struct task_struct *next)
{
	struct writeback_wait *w, done;
	struct spt_totals *t;

	if (!preempt) {
		w = wait_of(prev);
		if (w && w->folio && !w->slept) {
			if (folio_ptr_under_writeback(w->folio)) {
				w->slept = 1;
			} else {
				clear_wait(w);
				t = get_totals();
				if (t)
					t->wait_untimed++;
			}
		}
	}
	w = wait_of(next);
	if (!w || !w->folio || !w->slept)
		return;
	done = *w;
	clear_wait(w);
	end_wait(&done, bpf_ktime_get_ns());
}

/*
 * fentry mode: a call of folio_wait_writeback() begins (folio_wait_stable()
 * makes it on a stable mapping). Only a folio under writeback can make it
 * sleep.
 */
static __always_inline int handle_wait_call(struct folio *folio)
{
	struct address_space *mapping;
	struct writeback_wait *w;
	struct folio_file ff;

	if (!folio_under_writeback(folio))
		return 0;
	mapping = folio_file_mapping(folio);
	if (!mapping || !folio_file_selected(mapping, &ff))
		return 0;
	w = own_wait_entry();
	if (!w || w->folio)
		return 0;
	__sync_fetch_and_add(&n_waiting, 1);
	begin_wait(w, folio, ff.dev, current_kind());
	return 0;
}

static __always_inline int handle_wait_return(struct folio *folio)
{
	struct writeback_wait *w = wait_of(bpf_get_current_task_btf());
	struct writeback_wait done;

	if (!w || w->folio != (__u64)folio)
		return 0;
	done = *w;
	clear_wait(w);
	/* Entered under writeback but never slept: no wait was counted. */
	if (done.slept)
		end_wait(&done, bpf_ktime_get_ns());
	return 0;
}

/*
 * fentry mode: page_mkwrite. The user's store lands only after the fault
 * returns, so a folio still under writeback when the outermost hooked
 * handler returns successfully is the exact mmap violation; the dirtying
 * the tracepoint sees can come before the handler's wait, or after it
 * returned (ext4's mapped-buffers path).
 */
static __always_inline int handle_mkwrite_entry(void)
{
	__u32 tid = bpf_get_current_pid_tgid();
	struct mkwrite_call *call = bpf_map_lookup_elem(&mkwrite_calls, &tid);
	struct mkwrite_call first = { .depth = 1, .epoch = pause_epoch };

	if (call && call->epoch == pause_epoch)
		call->depth++;
	else
		bpf_map_update_elem(&mkwrite_calls, &tid, &first, BPF_ANY);
	return 0;
}

/* The fault goes on to make the page writable: no error, no retry. */
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

static __always_inline int handle_mkwrite_return(struct vm_fault *vmf, bool ok)
{
	__u32 tid = bpf_get_current_pid_tgid();
	struct mkwrite_call *call = bpf_map_lookup_elem(&mkwrite_calls, &tid);
	struct address_space *mapping;
	struct spt_totals *t;
	struct folio_file ff;
	__u64 folio;
	bool dirtied;

	if (!call)
		return 0;
	if (call->epoch != pause_epoch) {
		/* Entered before a pause: nothing inside it was seen. */
		bpf_map_delete_elem(&mkwrite_calls, &tid);
		return 0;
	}
	if (call->depth > 1) {
		call->depth--;
		return 0;
	}
	dirtied = call->dirtied;
	bpf_map_delete_elem(&mkwrite_calls, &tid);
	if (!ok)
		return 0;
	folio = page_folio_addr((__u64)BPF_CORE_READ(vmf, page));
	if (!folio_ptr_under_writeback(folio)) {
		/* Dirtied under writeback, but the I/O ended before the
		 * store could land: the tracepoint mode counts it. */
		if (dirtied && (t = get_totals()))
			t->mkwrite_io_ended++;
		return 0;
	}
	/* Once per folio per writeback cycle, as in tracepoint mode. */
	if (violated_this_cycle(folio))
		return 0;
	/* The shared file mapping being written, as a BTF pointer; the
	 * handler returned success, so the folio is still in it. */
	mapping = vmf->vma->vm_file->f_mapping;
	if (!mapping || !folio_file_selected(mapping, &ff))
		return 0;
	t = get_totals();
	if (t && !hold_mmap_writer(t, folio))
		record_violation(t, folio, mapping, &ff, SPT_KIND_MMAP);
	return 0;
}

/* fentry mode: the folio's I/O begins (also a redirtied folio's next cycle). */
static __always_inline int handle_writeback_start(struct folio *folio)
{
	__u64 key = (__u64)folio;
	struct address_space *mapping = folio_file_mapping(folio);
	struct writeback_start ws = {};
	struct folio_file ff;
	struct spt_totals *t;

	if (!mapping || !folio_file_on_selected_dev(mapping, &ff))
		return 0;
	ws.dev = ff.dev;
	ws.ts_ns = bpf_ktime_get_ns();
	ws.epoch = pause_epoch;
	if (bpf_map_update_elem(&writeback_started, &key, &ws, BPF_ANY) && (t = get_totals()))
		t->writeback_untimed++;
	if (index_writeback) {
		struct wb_head_key hk = { .mapping = (__u64)mapping, .index = folio->index };
		struct wb_head h = { .folio = key, .nr_pages = folio_nr_pages_of(folio) };

		bpf_map_update_elem(&wb_heads, &hk, &h, BPF_ANY);
	}
	return 0;
}

/*
 * Walk the pages of a completed write request: bios, their bio_vecs (a
 * bio_vec may span several pages, and so several folios), pages. One page,
 * bio_vec or bio per bpf_loop() step.
 *
 * A bio that owns its bio_vec table (what filesystems submit) has bi_vcnt
 * entries in it; by completion its iterator may already be consumed (6.1:
 * bi_iter.bi_size is 0 at block_rq_complete on loop devices). A clone (a
 * split, dm) shares its parent's table and has bi_vcnt 0: only its
 * iterator says which part is its own.
 */
#define WALK_MAX_STEPS 4096

/*
 * The walk's state lives in a map value, not on the stack: the verifier
 * tracks no values in map memory, so it checks walk_step() once for any
 * state. With the state on the stack it followed every value: since 6.7
 * ("bpf: verify callbacks as if they are called unknown number of times")
 * 120k instructions and 160 ms at every start; before 6.7 it checked one
 * step with the values as they were at the call and dropped the code dead
 * for them (6.1: with the fields 0, no folio was ever found).
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

/* The thread's way in its set of stall_horizons; a way it did not have is
 * taken from the thread that ended longer ago, with no horizon yet. */
static __always_inline struct stall_horizon *stall_horizon_of(__u32 tid)
{
	__u32 set = fib_hash(tid, STALL_HORIZON_SETS_LOG2);
	struct stall_horizon_set *s = bpf_map_lookup_elem(&stall_horizons, &set);
	struct stall_horizon *h;

	if (!s) {
		/* A table cut short for tests (SPT_STALL_HORIZON_SETS=1): the
		 * threads share set 0. */
		set = 0;
		s = bpf_map_lookup_elem(&stall_horizons, &set);
		if (!s)
			return NULL;
	}
	if (s->way[0].tid == tid)
		return &s->way[0];
	if (s->way[1].tid == tid)
		return &s->way[1];
	h = s->way[0].end_ns <= s->way[1].end_ns ? &s->way[0] : &s->way[1];
	h->tid = tid;
	h->end_ns = 0;
	return h;
}

/*
 * The histogram gets each violation's own would-stall. The process is
 * charged the union, per thread, of [violation, end of its I/O]: a thread
 * held on one folio is not held again by another whose I/O overlaps, and
 * summing would predict more stall than there is time (4 threads of pwrite
 * on ext4: 146% of their time). Completions come in end order, so each
 * interval adds what it extends past the thread's last end; two CPUs
 * completing for one thread at once may count an overlap twice.
 */
static __always_inline void end_violation(__u64 folio, __u64 *completed)
{
	struct inflight_violation done;
	struct stall_horizon *horizon;
	struct spt_proc_stats *ps;
	__u64 from, now;

	if (!take_violation(folio, &done))
		return;
	now = completion_time(completed);
	from = done.ts_ns;
	done.ts_ns = now > done.ts_ns ? now - done.ts_ns : 0;
	hist_add(done.dev, SPT_HIST_WOULD_STALL, done.kind, done.ts_ns);
	horizon = stall_horizon_of(done.tid);
	if (horizon) {
		if (horizon->end_ns > from)
			from = horizon->end_ns;
		if (now > horizon->end_ns)
			horizon->end_ns = now;
	}
	ps = bpf_map_lookup_elem(&proc_stats, &done.tgid);
	if (ps && now > from)
		__sync_fetch_and_add(&ps->would_stall_ns, now - from);
}

/* A folio of a completed write request: its writeback ends now. */
static __always_inline void folio_io_ended(__u64 folio, __u64 *now)
{
	end_violation(folio, now);
	release_holders(folio, now);
}

static long walk_step(__u64 i, struct walk_ctx *ctx)
{
	struct walk_state *c = ctx->s;

	if (!c->have_vec) {
		struct bio_vec bv;
		__u32 len;

		if (!c->vecs_left && !c->bytes_left) {
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
	__u64 folio = page_folio_addr(c->vec_page + c->page_idx * bpf_core_type_size(struct page));

	if (++c->page_idx > c->page_end)
		c->have_vec = 0;
	if (folio != c->last_folio) {
		c->last_folio = folio;
		folio_io_ended(folio, &c->now);
	}
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

/* include/linux/blk_types.h: REQ_OP_WRITE is 1 in the low 8 bits since 4.10. */
#define REQ_OP_MASK_4_10 0xff
#define REQ_OP_WRITE_4_10 1

/*
 * A block request completed. blk_update_request() fires the tracepoint
 * before it ends any bio, so the request's bios are intact, and the
 * folios' writeback ends right after.
 */
static __always_inline int handle_rq_complete(struct request *rq)
{
	__u64 now = 0;

	if ((rq->cmd_flags & REQ_OP_MASK_4_10) != REQ_OP_WRITE_4_10)
		return 0;
	if (time_requests) {
		struct block_device *part = rq->part;
		__u32 dev = part ? part->bd_dev : 0;
		__u64 start = rq->start_time_ns;

		now = bpf_ktime_get_ns();
		if (dev && start && now > start && dev_selected(dev))
			hist_add(dev, SPT_HIST_WRITEBACK, 0, now - start);
	}
	if (walk_requests && (n_inflight_violations || n_held_folios)) {
		__u64 folio = single_page_folio(rq);
		__u32 zero = 0;
		struct walk_state *ws;
		struct walk_ctx c;

		if (folio) {
			folio_io_ended(folio, &now);
			return 0;
		}
		ws = bpf_map_lookup_elem(&walk_states, &zero);
		c.s = ws;

		/* A completion nested in another on this CPU (an interrupt)
		 * leaves its folios in flight: untimed later, still counted. */
		if (!ws || ws->busy)
			return 0;
		__builtin_memset(ws, 0, sizeof(*ws));
		ws->busy = 1;
		ws->now = now;
		ws->bio = (__u64)rq->bio;
		bpf_loop(WALK_MAX_STEPS, walk_step, &c, 0);
		ws->busy = 0;
	}
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

SEC("tp_btf/sched_switch")
int BPF_PROG(tp_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	/*
	 * fentry mode times waits at the wait functions; this program then
	 * runs only for the holds' sweep. No n_waiting gate: every wait's
	 * start and end writes it from either CPU, and reading it here missed
	 * the cache on most switches while waits were common (B: 150 ns/run
	 * with it, 100 without); for tasks that never waited the two lookups
	 * find no storage (A: 48 ns with the gate, 65 without).
	 */
	if (!time_wait_calls)
		handle_switch(preempt, prev, next);
	if (n_held_folios)
		sweep_held_folios();
	return 0;
}

/*
 * enforce (BPF): a hold is announced to user space when its SIGSTOP is
 * generated. Announced earlier, user space could SIGCONT (the writeback
 * ended) before the SIGSTOP was queued: that SIGCONT does nothing, and the
 * SIGSTOP then stops the writer with no hold left to end it (a possible
 * cause of an mmap writer stopped for good in one 6.1 guest run, when
 * start_hold() announced before sending; see docs/enforce.md). With IRQs on (page_mkwrite's
 * fexit, file_permission) the signal is generated inside
 * bpf_send_signal_thread(); from an IRQs-off tracepoint
 * (writeback_dirty_folio runs under the xarray lock) through irq_work
 * once IRQs are back on, after start_hold() returned.
 */
SEC("tp_btf/signal_generate")
int BPF_PROG(tp_signal_generate, int sig, struct kernel_siginfo *info, struct task_struct *task)
{
	__u32 tid;
	struct spt_hold *h;

	if (sig != SIGSTOP_X86)
		return 0;
	tid = task->pid;
	h = bpf_map_lookup_elem(&holds, &tid);
	if (!h || h->announce != SPT_HOLD_SIGNAL_PENDING)
		return 0;
	h->announce = 0;
	emit_hold_event(SPT_HOLD_START, h->folio, h->hold_ts_ns, h->first_ts_ns, h->kind, task);
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(tp_block_rq_complete, struct request *rq)
{
	return handle_rq_complete(rq);
}

/*
 * fentry mode: the end of a folio's writeback itself, the moment a stable
 * writer would be woken, also where the filesystem ends it after the I/O
 * (ext4 unwritten extents, xfs size updates: a workqueue). PG_writeback is
 * still set here. Each fentry/fexit program below is loaded only where
 * trampolines work and its function is in the kernel's BTF; the loader
 * disables the others.
 */
SEC("fentry/folio_end_writeback")
int BPF_PROG(fentry_folio_end_writeback, struct folio *folio)
{
	__u64 key = (__u64)folio, now;
	struct writeback_start *ws;

	if (tracing_paused)
		return 0;
	now = bpf_ktime_get_ns();
	ws = bpf_map_lookup_elem(&writeback_started, &key);
	if (ws) {
		struct writeback_start done = *ws;
		struct spt_totals *t;

		if (!bpf_map_delete_elem(&writeback_started, &key)) {
			if (done.epoch == pause_epoch && now > done.ts_ns)
				hist_add(done.dev, SPT_HIST_FOLIO_WRITEBACK, 0, now - done.ts_ns);
			else if (done.epoch != pause_epoch && (t = get_totals()))
				/* Started before a pause: a later start may have passed unseen. */
				t->writeback_untimed++;
		}
	}
	if (index_writeback) {
		struct wb_head_key hk = { .mapping = (__u64)folio->mapping, .index = folio->index };

		bpf_map_delete_elem(&wb_heads, &hk);
	}
	if (n_inflight_violations)
		end_violation(btf_ptr_addr(folio), &now);
	release_holders(key, &now);
	return 0;
}

/* bool (up to 6.7) or void (6.8+) __folio_start_writeback(folio, keep_write) */
SEC("fentry/__folio_start_writeback")
int BPF_PROG(fentry_folio_start_writeback, struct folio *folio)
{
	return tracing_paused ? 0 : handle_writeback_start(folio);
}

/*
 * Not folio_wait_stable(), which calls folio_wait_writeback() when it
 * waits: every buffered write() calls it, and attaching or detaching an
 * fexit trampoline there while writers ran hung the 6.1 test guest (QEMU's
 * multi-threaded TCG; two empty fentry+fexit programs did too, fentry alone
 * did not; docs/semantics.md).
 * It also cost every write two program runs to time no more waits.
 */
SEC("fentry/folio_wait_writeback")
int BPF_PROG(fentry_folio_wait_writeback, struct folio *folio)
{
	return tracing_paused ? 0 : handle_wait_call(folio);
}

SEC("fexit/folio_wait_writeback")
int BPF_PROG(fexit_folio_wait_writeback, struct folio *folio)
{
	return tracing_paused ? 0 : handle_wait_return(folio);
}

/* enforce (BPF): write() held before its copy. The loader loads one of the
 * two, or neither where neither loads (the 6.18 host here). */
SEC("lsm/file_permission")
int BPF_PROG(lsm_file_permission, struct file *file, int mask, int ret)
{
	return ret ? ret : hold_write(file, mask);
}

SEC("fmod_ret/security_file_permission")
int BPF_PROG(fmod_file_permission, struct file *file, int mask, int ret)
{
	return ret ? ret : hold_write(file, mask);
}

/*
 * page_mkwrite handlers and the helpers filesystems build them from. The
 * return value comes from bpf_get_func_ret(): iomap_page_mkwrite() has two
 * arguments on 6.1 and three on 6.18. vmf_arg: which argument is the
 * struct vm_fault *; errno_ret: returns 0 / -errno instead of vm_fault_t.
 */
#define MKWRITE_HOOKS(fn, vmf_arg, errno_ret)                                          \
	SEC("fentry/" #fn)                                                             \
	int fentry_##fn(void *ctx)                                                     \
	{                                                                              \
		return tracing_paused ? 0 : handle_mkwrite_entry();                    \
	}                                                                              \
	SEC("fexit/" #fn)                                                              \
	int fexit_##fn(__u64 *ctx)                                                     \
	{                                                                              \
		__u64 ret = 0;                                                         \
                                                                                       \
		if (tracing_paused)                                                    \
			return 0;                                                      \
		bpf_get_func_ret(ctx, &ret);                                           \
		return handle_mkwrite_return((struct vm_fault *)ctx[vmf_arg],          \
					     errno_ret ? (int)ret == 0 : vm_fault_ok(ret)); \
	}

MKWRITE_HOOKS(filemap_page_mkwrite, 0, false)
MKWRITE_HOOKS(block_page_mkwrite, 1, true)
MKWRITE_HOOKS(iomap_page_mkwrite, 0, false)
MKWRITE_HOOKS(ext4_page_mkwrite, 0, false)
MKWRITE_HOOKS(xfs_filemap_page_mkwrite, 0, false)
MKWRITE_HOOKS(btrfs_page_mkwrite, 0, false)

char LICENSE[] SEC("license") = "GPL";
