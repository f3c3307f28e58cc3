/* SPDX-License-Identifier: GPL-2.0 */
/*
 * enforce (BPF): hold a writer in scope (the task filters) that is about to
 * modify a folio under writeback. BPF cannot sleep, so the thread is sent
 * SIGSTOP (the whole thread group stops, as with Ctrl-Z) and user space
 * sends SIGCONT when a SPT_HOLD_RELEASE event says the folio's writeback
 * ended, or when the hold reaches --max-delay. A guardian process resumes
 * every thread in the holds table if the tool dies. hold_action chooses
 * delay, kill or log; index_writeback indexes the folios under writeback by
 * file offset for the write() check.
 */
#ifndef SPT_HOLDS_BPF_H
#define SPT_HOLDS_BPF_H

/* include/linux/fs.h, include/linux/errno.h */
#define MAY_WRITE 0x00000002
#define ERESTARTNOINTR 513

/* Folios under writeback by (mapping, index of their first page), so that
 * a write() can be checked before its copy. */
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

/* Held threads (see struct spt_hold), and the folios they wait for, whose
 * end of writeback resumes them; n_held_folios counts the latter. */
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

/*
 * Thread groups that may be held: HELD_TGID_RECORDED once the tool has
 * written them to its record under /run/stablepage-trace/ (so that
 * `enforce --restore` can resume them if both the tool and the guardian
 * die), HELD_TGID_ASKED while that is pending. A group is never stopped
 * before it is recorded: its first write in scope goes on (a violation,
 * counted in holds_unrecorded) and asks for the record.
 */
#define HELD_TGID_ASKED 0
#define HELD_TGID_RECORDED 1

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} held_tgids SEC(".maps");

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
 * Whether anyone would resume a hold begun now: the tool's heartbeat is
 * fresh (SPT_HEARTBEAT_STALE_NS) and the thread group is recorded for
 * `enforce --restore` (held_tgids; the first time, asks for the record).
 * This is what makes "no writer left stopped" independent of how long the
 * kernel takes to detach the programs of a tool that died.
 */
static __always_inline bool may_hold(struct spt_totals *t, __u64 now, __u32 tgid)
{
	__u8 asked = HELD_TGID_ASKED, *rec;

	if (now > tool_heartbeat_ns + SPT_HEARTBEAT_STALE_NS) {
		t->holds_refused_stale++;
		return false;
	}
	rec = bpf_map_lookup_elem(&held_tgids, &tgid);
	if (rec && *rec == HELD_TGID_RECORDED)
		return true;
	t->holds_unrecorded++;
	if (!rec && !bpf_map_update_elem(&held_tgids, &tgid, &asked, BPF_NOEXIST))
		emit_hold_event(SPT_HOLD_RECORD, 0, now, now, 0, bpf_get_current_task_btf());
	return false;
}

/*
 * Stop the current thread until the folio's writeback ends. False when it
 * cannot be (nobody would resume it: may_hold(); holds table full, signal
 * not sent): the write goes on and is a violation. The holds entry is
 * written before the signal is sent, so whoever sweeps the table (the
 * guardian) finds every stop. User space hears of the hold only once the
 * SIGSTOP is generated (announce_hold()), never before: see there.
 */
static __always_inline bool start_hold(struct spt_totals *t, __u64 folio, __u32 kind, __u64 now)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = id;
	struct spt_hold *old;

	if (!may_hold(t, now, id >> 32))
		return false;
	old = bpf_map_lookup_elem(&holds, &tid);
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
	 * (errno 513) to the application instead of being restarted; a
	 * thread's own queue has room. It fails (-EBUSY) when an IRQs-off send
	 * from this CPU is still queued: then nothing stops the thread. The
	 * folio stays in held_folios; its release finds no holder.
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
 * millisecond (last_held_sweep_ns; the tool polls every 2 ms then, so
 * switches happen even on an idle machine) and releases those no longer
 * under writeback.
 */
#define HELD_SWEEP_NS 1000000ULL

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
 * A hold is announced to user space when its SIGSTOP is generated.
 * Announced earlier, user space could SIGCONT (the writeback ended) before
 * the SIGSTOP was queued: that SIGCONT does nothing, and the SIGSTOP then
 * stops the writer with no hold left to end it (docs/enforce.md). With IRQs
 * on (page_mkwrite's fexit, file_permission) the signal is generated inside
 * bpf_send_signal_thread(); from an IRQs-off tracepoint
 * (writeback_dirty_folio runs under the xarray lock) through irq_work once
 * IRQs are back on, after start_hold() returned.
 */
static __always_inline int announce_hold(int sig, struct task_struct *task)
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

#endif /* SPT_HOLDS_BPF_H */
