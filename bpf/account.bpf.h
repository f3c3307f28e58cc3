/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where violations and waits are counted: the global totals, the rows per
 * device, per process and per writer (process x file), and the violation
 * event stream. Counts are exact; only the stream may drop (events_lost).
 */
#ifndef SPT_ACCOUNT_BPF_H
#define SPT_ACCOUNT_BPF_H

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
 * Waits and stable dirtyings per device, per CPU: one comes with every
 * stable wait and every dirtying of a stable mapping, where a lookup in
 * dev_stats (a hash) cost more than the rest of the wait program. Direct-
 * mapped by device: a slot is the CPU's for the first device hashed to it
 * that has a dev_stats row; the counts of another device on it go to that
 * device's row. Per CPU, so a plain increment: no other CPU writes it, the
 * tracepoints that count here (writeback_dirty_folio, folio_wait_writeback)
 * call their programs with preemption disabled, and no program that runs
 * in an interrupt counts here.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1 << SPT_DEV_COUNT_SLOTS_LOG2);
	__type(key, __u32);
	__type(value, struct spt_dev_counts);
} dev_counts SEC(".maps");

static __always_inline struct spt_totals *get_totals(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&totals, &zero);
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
 * The row of a device. A device's own page cache is described by the
 * filesystem mounted on it (its metadata) or as "bdev" (write() to the
 * device, mkfs): its bdev is the device itself, which names it.
 */
static __always_inline struct spt_dev_stats *dev_stats_of(struct folio_file *ff,
							  struct address_space *mapping)
{
	struct spt_dev_stats *ds = bpf_map_lookup_elem(&dev_stats, &ff->dev);
	struct spt_dev_stats init = {};
	struct super_block *sb = ff->owner ?: ff->sb;
	struct block_device *bdev;

	if (ds)
		return ds;
	if (ff->bdev_cache) {
		init.bdev = ff->dev;
	} else {
		bdev = BPF_CORE_READ(sb, s_bdev);
		if (bdev)
			init.bdev = BPF_CORE_READ(bdev, bd_dev);
	}
	init.stable = mapping_stable_writes(mapping, ff->sb);
	bpf_probe_read_kernel_str(init.fstype, sizeof(init.fstype),
				  BPF_CORE_READ(sb, s_type, name));
	/* "bdev" names no device: user space names it by init.bdev */
	if (!ff->bdev_cache || ff->owner)
		bpf_probe_read_kernel_str(init.devname, sizeof(init.devname),
					  BPF_CORE_READ(sb, s_id));
	bpf_map_update_elem(&dev_stats, &ff->dev, &init, BPF_NOEXIST);
	return bpf_map_lookup_elem(&dev_stats, &ff->dev);
}

/*
 * This CPU's counts for the folio's device, or NULL: then count on the
 * device's row (*row, NULL if the table of devices is full).
 */
static __always_inline struct spt_dev_counts *dev_counts_of(struct folio_file *ff,
							   struct address_space *mapping,
							   struct spt_dev_stats **row)
{
	__u32 slot = fib_hash(ff->dev, SPT_DEV_COUNT_SLOTS_LOG2);
	struct spt_dev_counts *c = bpf_map_lookup_elem(&dev_counts, &slot);

	*row = NULL;
	if (c && c->dev == ff->dev)
		return c;
	*row = dev_stats_of(ff, mapping);
	if (!c || c->dev || !*row)
		return NULL;
	c->dev = ff->dev;
	return c;
}

/* A task waits for writeback on the folio's device. */
static __always_inline void count_dev_wait(struct folio_file *ff, struct address_space *mapping,
					   __u32 kind)
{
	struct spt_dev_stats *ds;
	struct spt_dev_counts *c = dev_counts_of(ff, mapping, &ds);

	if (kind >= SPT_KIND_MAX)
		return;
	if (c)
		c->waits[kind]++;
	else if (ds)
		__sync_fetch_and_add(&ds->waits[kind], 1);
}

/* The inode number rows and events show: SPT_INO_BDEV for a device's cache. */
static __always_inline __u64 folio_file_ino(struct folio_file *ff)
{
	return ff->bdev_cache ? SPT_INO_BDEV : ff->inode->i_ino;
}

/* Dirtied under writeback on a stable-writes mapping: page_mkwrite dirties
 * first and waits right after, so it is not a violation. */
static __always_inline void count_stable_dirtied(struct spt_totals *t, struct folio_file *ff,
						 struct address_space *mapping)
{
	struct spt_dev_stats *ds;
	struct spt_dev_counts *c = dev_counts_of(ff, mapping, &ds);

	t->stable_dirtied++;
	if (c)
		c->stable_dirtied++;
	else if (ds)
		__sync_fetch_and_add(&ds->stable_dirtied, 1);
}

/* A violation, as its counters and streams see it. */
struct violation {
	__u64 now;      /* bpf_ktime_get_ns() */
	__u64 pid_tgid;
	__u64 cgroup;   /* bpf_get_current_cgroup_id(): its writer row's and event's */
	__u32 kind;
	__u32 generation;
};

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
				      .ino = folio_file_ino(ff),
				      .cgroup = v->cgroup };
	struct spt_writer_stats *w = bpf_map_lookup_elem(&writer_stats, &key);
	struct spt_writer_stats init = { .generation = v->generation };
	struct spt_dev_stats *ds;
	struct spt_proc_stats *ps;

	if (w)
		return w;
	ds = dev_stats_of(ff, mapping);
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

/*
 * A violation whose write failed, counted on its writer row (dev, tgid,
 * ino) as the violation was; at completion the writer is not the current
 * task, so a row that is missing (the table was full at the violation) is
 * counted on its device's and process's rows only if they exist.
 */
static __always_inline void count_failed_write(__u32 dev, __u32 tgid, __u64 ino, __u64 cgroup)
{
	struct spt_writer_key key = { .dev = dev, .tgid = tgid, .ino = ino, .cgroup = cgroup };
	struct spt_writer_stats *w = bpf_map_lookup_elem(&writer_stats, &key);
	struct spt_totals *t = get_totals();
	struct spt_dev_stats *ds;
	struct spt_proc_stats *ps;

	if (!t)
		return;
	t->failed_after_violation++;
	if (w) {
		__sync_fetch_and_add(&w->failed_after_violation, 1);
		return;
	}
	ds = bpf_map_lookup_elem(&dev_stats, &dev);
	ps = bpf_map_lookup_elem(&proc_stats, &tgid);
	if (ds)
		__sync_fetch_and_add(&ds->failed_after_violation, 1);
	if (ps)
		__sync_fetch_and_add(&ps->failed_after_violation, 1);
	if (!ds || !ps)
		t->agg_dropped++;
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
	e->cgroup_id = v->cgroup;
	e->ino = folio_file_ino(ff);
	e->blkbits = ff->inode->i_blkbits;
	/* fentry mode's page_mkwrite return has the folio as a number */
	e->index = BPF_CORE_READ(folio, index);
	e->pid = v->pid_tgid >> 32;
	e->tid = (__u32)v->pid_tgid;
	e->dev = ff->dev;
	if (ff->bdev_cache) {
		e->bdev = ff->dev;
	} else {
		bdev = ff->sb->s_bdev;
		e->bdev = bdev ? bdev->bd_dev : 0;
	}
	e->generation = v->generation;
	e->kind = v->kind;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	/*
	 * A wakeup per event costs an irq_work and a consumer wakeup each.
	 * Wake the consumer only when a quarter of the ring is filled; it also
	 * drains the ring every 100 ms by itself.
	 */
	bpf_ringbuf_submit(e, bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= RINGBUF_WAKEUP_BYTES ?
				      BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

#endif /* SPT_ACCOUNT_BPF_H */
