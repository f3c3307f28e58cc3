/* SPDX-License-Identifier: GPL-2.0 */
/* Types shared by bpf/stablepage.bpf.c and user space: __u32-style types only. */
#ifndef STABLEPAGE_H
#define STABLEPAGE_H

#define SPT_COMM_LEN 16
/* --dev: this many devices are compared from .rodata (filter_devs), more
 * are looked up in the dev_filter hash map. */
#define SPT_FILTER_DEVS_INLINE 4
#define SPT_FSTYPE_LEN 16
#define SPT_DEVNAME_LEN 32

/* How the violating write reached the page cache. */
enum spt_kind {
	SPT_KIND_MMAP = 0,  /* store through a shared mapping: write fault / page_mkwrite */
	SPT_KIND_WRITE = 1, /* write(2), pwrite64(2), writev(2), pwritev(2), pwritev2(2) */
	SPT_KIND_OTHER = 2, /* any other syscall, kernel threads, io_uring workers */
	/* a block device's own page cache (buffer heads) dirtied under
	 * writeback while a filesystem is mounted on the device: the
	 * filesystem's metadata, whatever the task was doing */
	SPT_KIND_METADATA = 3,
	SPT_KIND_MAX = 4,
};

/*
 * The inode number that rows and events give a block device's own page
 * cache (the bdev pseudo-filesystem's inode of the device): no file of a
 * filesystem, its path is /dev/NAME of the device (dev).
 */
#define SPT_INO_BDEV (~0ULL)

/* One violation: a folio became dirty while PG_writeback was set, on a
 * mapping whose kernel does not wait for writeback before letting it change. */
struct spt_event {
	__u64 ts_ns;     /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u64 cgroup_id;
	__u64 ino;
	__u64 index;     /* folio index in the file, in pages */
	__u32 pid;       /* thread group id */
	__u32 tid;
	__u32 dev;       /* superblock s_dev, kernel encoding (major << 20 | minor) */
	__u32 bdev;      /* sb->s_bdev->bd_dev, 0 when the superblock has no bdev */
	__u32 generation; /* inode i_generation, for open_by_handle_at() path lookup */
	__u32 kind;      /* enum spt_kind */
	/* log2 of the block size of the mapping's inode: the block number in
	 * a device's own cache (ino SPT_INO_BDEV) is index << (12 - blkbits) */
	__u32 blkbits;
	__u32 pad;
	char comm[SPT_COMM_LEN];
};

/* Global totals; a per-CPU array entry, summed by user space. Exact. */
struct spt_totals {
	__u64 violations[SPT_KIND_MAX];
	/* Dirtied under writeback on a stable-writes mapping: the kernel waits
	 * for writeback right after marking the folio dirty (page_mkwrite) so
	 * this is not a violation. */
	__u64 stable_dirtied;
	/* Sleeps in folio_wait_writeback(), by the kind of the sleeping context.
	 * mmap + write are "stable waits": a writer held until the I/O ended. */
	__u64 waits[SPT_KIND_MAX];
	__u64 events_lost;   /* ring buffer full: the event was counted, not streamed */
	__u64 agg_dropped;   /* a per-device/process/file table was full */
	/* Violations whose end of writeback was not seen (the folio was
	 * violated again in a later cycle first, or another violated folio
	 * took its slot in the in-flight table). Timed + untimed + still in
	 * flight == violations. */
	__u64 would_stall_untimed;
	/* Waits not timed: the task returned without sleeping, or the table
	 * was full. Timed + untimed + still waiting == waits. */
	__u64 wait_untimed;
	/* fentry mode: dirtied under writeback inside page_mkwrite, but the
	 * I/O ended before the handler returned, so the store landed after
	 * it (tracepoint mode counts these as mmap violations). */
	__u64 mkwrite_io_ended;
	/* fentry mode: folios whose writeback start was not recorded (the
	 * table was full) or was before a pause: missing from the
	 * folio-writeback histogram. */
	__u64 writeback_untimed;
	/* enforce (BPF): writers stopped until writeback ended, per kind;
	 * writes let through because their hold reached --max-delay; writers
	 * killed (--action kill); holds not made (--action log). */
	__u64 holds[SPT_KIND_MAX];
	__u64 holds_expired;
	__u64 kills;
	__u64 would_hold;
	/* writes checked against the folios under writeback: pages beyond
	 * the check's cap (SPT_HOLD_MAX_PAGES) were not looked at */
	__u64 hold_range_capped;
	/* enforce (BPF): holds refused because the tool's heartbeat was
	 * stale (it is dead, stopped or starved: nobody would resume), and
	 * first writes of a thread group let through until the tool has
	 * recorded the group for `enforce --restore` (holds.bpf.h). */
	__u64 holds_refused_stale;
	__u64 holds_unrecorded;
	/* Violations whose folio's write request completed with an error
	 * (block_rq_complete's status): the data the writer saw accepted
	 * was not written, e.g. an integrity device refusing a page that
	 * changed in flight. Once per violation. */
	__u64 failed_after_violation;
};

/* enforce (BPF): what is done to a writer in scope that would violate. */
enum spt_hold_action {
	SPT_ACTION_NONE = 0,  /* plain tracing */
	SPT_ACTION_DELAY = 1, /* stop it until the folio's writeback ends (or --max-delay) */
	SPT_ACTION_KILL = 2,  /* SIGKILL before its data lands */
	SPT_ACTION_LOG = 3,   /* count what would be held, hold nothing */
};

/* A write() checks at most this many pages of its range. */
#define SPT_HOLD_MAX_PAGES 16

enum spt_hold_event_type {
	SPT_HOLD_START = 0,   /* the thread's SIGSTOP was generated; folio under writeback */
	SPT_HOLD_RELEASE = 1, /* the folio's writeback ended: resume its holders */
	SPT_HOLD_RECORD = 2,  /* a thread group BPF would hold: record it, then allow holds */
};

/*
 * enforce (BPF): the tool writes its CLOCK_MONOTONIC time to the .bss
 * tool_heartbeat_ns at least every 100 ms (its poll loop); BPF starts no
 * hold when it is older than this, so a dead, stopped or starved tool
 * stops holding within this long, whether or not its programs are still
 * attached. The guardian waits this long after the tool's death before
 * its last sweep.
 */
#define SPT_HEARTBEAT_STALE_NS 500000000ULL

/* enforce (BPF): from the hold_events ring buffer. */
struct spt_hold_event {
	__u64 ts_ns;   /* CLOCK_MONOTONIC: when the thread was stopped / the I/O ended */
	__u64 first_ts_ns; /* start: when this write was first held (--max-delay counts from it) */
	__u64 folio;   /* kernel address, an identity only */
	__u32 type;    /* enum spt_hold_event_type */
	__u32 kind;    /* enum spt_kind */
	__u32 pid;
	__u32 tid;
	char comm[SPT_COMM_LEN];
};

/* enforce (BPF): a thread being held, keyed by thread id. Also what the
 * guardian process reads to resume every holder if the tool dies. */
struct spt_hold {
	__u64 first_ts_ns; /* first hold of this write; --max-delay counts from it */
	__u64 hold_ts_ns;  /* this hold */
	__u64 folio;
	__u32 pid;
	__u32 kind;
	__u32 announce;    /* SPT_HOLD_SIGNAL_PENDING until its SIGSTOP is generated */
	__u32 pad;
};

#define SPT_HOLD_SIGNAL_PENDING 1

/*
 * One CPU's waits and stable dirtyings on one device (dev_counts, a
 * per-CPU table by device; dev 0: a free slot). User space adds them to
 * the device's row.
 */
struct spt_dev_counts {
	__u32 dev;
	__u32 pad;
	__u64 waits[SPT_KIND_MAX];
	__u64 stable_dirtied;
};

#define SPT_DEV_COUNT_SLOTS_LOG2 5

/*
 * Per device and per process: violations[] holds only those no writer row
 * could hold (the table was full); user space adds the writer rows' counts.
 * A device's waits[] and stable_dirtied hold only those no dev_counts slot
 * could (user space adds the slots).
 */
struct spt_dev_stats {
	__u64 violations[SPT_KIND_MAX];
	__u64 waits[SPT_KIND_MAX];
	__u64 stable_dirtied;
	__u64 failed_after_violation; /* only those no writer row held */
	__u32 bdev;
	__u32 stable;   /* last seen stable-writes state of a mapping on this sb */
	char fstype[SPT_FSTYPE_LEN];
	char devname[SPT_DEVNAME_LEN]; /* sb->s_id */
};

struct spt_proc_stats {
	__u64 violations[SPT_KIND_MAX];
	__u64 waits[SPT_KIND_MAX];
	__u64 would_stall_ns; /* per thread, the union of its timed would-stalls; summed */
	__u64 stable_wait_ns; /* time its writers slept in stable waits, summed over threads */
	__u64 failed_after_violation; /* only those no writer row held */
	char comm[SPT_COMM_LEN];
};

/*
 * Violations by one process, in one cgroup, on one file: one lookup and one
 * atomic per violation, where a row per process, per file, per cgroup and
 * per device takes four of each; user space folds the rows into the
 * per-process, per-file, per-cgroup and per-device counts.
 */
struct spt_writer_key {
	__u32 dev;  /* superblock s_dev; a device's own cache: the device */
	__u32 tgid;
	__u64 ino;  /* SPT_INO_BDEV: the device's own page cache */
	__u64 cgroup; /* the writer's cgroup v2 id (bpf_get_current_cgroup_id) */
};

struct spt_writer_stats {
	__u64 violations[SPT_KIND_MAX];
	__u64 last_ns;    /* the latest violation (bpf_ktime_get_ns) */
	__u32 generation; /* inode i_generation */
	__u32 pad;
	__u64 failed_after_violation; /* of these violations, whose write failed */
};

/*
 * Latency histograms, aggregated in the kernel. Slot i counts durations d
 * with floor(log2(d in microseconds)) == i (slot 0 also holds d < 1 us), so
 * every value in slots 0..i is < 2^(i+1) us. The last slot holds the rest.
 */
#define SPT_HIST_SLOTS 28 /* 2^28 us: about 4.5 minutes */

enum spt_hist_type {
	/* Tracepoint mode: a write request on a block device, from its
	 * allocation (rq->start_time_ns) to its completion. */
	SPT_HIST_WRITEBACK = 0,
	/* A sleep in folio_wait_writeback(), from the tracepoint to the task
	 * running again; kind mmap/write = stable wait, other = fsync etc. */
	SPT_HIST_WAIT = 1,
	/* A violation to the completion of the I/O carrying that folio: what
	 * the writer would have waited had stable pages been enforced. */
	SPT_HIST_WOULD_STALL = 2,
	/* fentry mode: one folio's writeback, __folio_start_writeback() to
	 * folio_end_writeback(): the longest a stable writer can wait on it. */
	SPT_HIST_FOLIO_WRITEBACK = 3,
	SPT_HIST_MAX = 4,
};

struct spt_hist_key {
	__u32 dev;  /* block device (writeback) or superblock s_dev */
	__u16 type; /* enum spt_hist_type */
	__u16 kind; /* enum spt_kind; 0 for SPT_HIST_WRITEBACK */
};

struct spt_hist {
	__u64 slots[SPT_HIST_SLOTS];
	/* Not written by BPF: user space sets it to the slots' sum when it
	 * reads the map (hist_set_count), one atomic less per sample, and a
	 * count that always matches the slots read with it. */
	__u64 count;
	__u64 sum_ns;
};

/*
 * A row of the histograms' direct-mapped table (hist_table): claimed for
 * good by the first key hashed to it. A key is in hist_table or in the
 * hists hash map, never in both.
 */
#define SPT_HIST_TABLE_LOG2 7

struct spt_hist_entry {
	union {
		struct spt_hist_key key;
		__u64 key_word; /* 0: the row is free */
	};
	struct spt_hist h;
};

/*
 * The tracer's attach points: one list each, expanded by the BPF programs
 * (bpf/stablepage.bpf.c), the loader (user/) and the tests (the build
 * writes them out as attach-points.txt). Each row goes through the
 * caller's X.
 *
 * SPT_TRACEPOINTS(X): X(prog, category, event, since): the tp_btf programs
 * every run needs; since: the Linux release that gave the tracepoint BTF
 * (a btf_trace_<event> typedef).
 */
#define SPT_TRACEPOINTS(X)                                                 \
	X(tp_writeback_dirty_folio, writeback, writeback_dirty_folio, "5.16") \
	X(tp_folio_wait_writeback, writeback, folio_wait_writeback, "5.16")   \
	X(tp_sched_switch, sched, sched_switch, "5.5")                        \
	X(tp_block_rq_complete, block, block_rq_complete, "5.5")

/*
 * Enforcement's programs (enforce in BPF mode): X(prog, kind, target).
 * kind: the section prefix; target: the tracepoint, LSM hook or function.
 */
#define SPT_HOLD_POINTS(X)                                       \
	X(tp_signal_generate, tp_btf, signal_generate)            \
	X(lsm_file_permission, lsm, file_permission)              \
	X(fmod_file_permission, fmod_ret, security_file_permission)

/*
 * --verify's programs (loaded only with it): X(prog, category, event).
 * bpf/verify_*.bpf.h.
 */
#define SPT_VERIFY_POINTS(X)                                  \
	X(tp_verify_rq_complete, block, block_rq_complete)    \
	X(tp_verify_rq_issue, block, block_rq_issue)          \
	X(tp_verify_bio_queue, block, block_bio_queue)       \
	X(tp_verify_rq_requeue, block, block_rq_requeue)

/* What a fentry-mode attach point is for. */
enum spt_fentry_role {
	SPT_FENTRY_MKWRITE,  /* fentry + fexit of a page_mkwrite handler or helper */
	SPT_FENTRY_WAIT,     /* fentry + fexit of a writeback wait function */
	SPT_FENTRY_WB_START, /* a folio's writeback starts */
	SPT_FENTRY_WB_END,   /* a folio's writeback ends */
};

/*
 * Fentry mode's fixed attach points: X(prog, func, role). The first two
 * keep their places: other parts look them up by index
 * (SPT_FENTRY_END_WRITEBACK, SPT_FENTRY_START_WRITEBACK).
 */
#define SPT_FENTRY_FIXED_POINTS(X)                                                 \
	X(fentry_folio_end_writeback, folio_end_writeback, SPT_FENTRY_WB_END)       \
	X(fentry_folio_start_writeback, __folio_start_writeback, SPT_FENTRY_WB_START) \
	X(fentry_folio_wait_writeback, folio_wait_writeback, SPT_FENTRY_WAIT)       \
	X(fexit_folio_wait_writeback, folio_wait_writeback, SPT_FENTRY_WAIT)

/*
 * page_mkwrite handlers and the helpers filesystems build them from, each
 * traced by a fentry_<fn> and a fexit_<fn> program: X(fn, vmf_arg, errno_ret).
 * vmf_arg: which argument is the struct vm_fault *; errno_ret: returns
 * 0 / -errno instead of vm_fault_t.
 */
#define SPT_MKWRITE_FUNCS(X)                  \
	X(filemap_page_mkwrite, 0, false)     \
	X(block_page_mkwrite, 1, true)        \
	X(iomap_page_mkwrite, 0, false)       \
	X(ext4_page_mkwrite, 0, false)        \
	X(xfs_filemap_page_mkwrite, 0, false) \
	X(btrfs_page_mkwrite, 0, false)

#endif /* STABLEPAGE_H */
