/* SPDX-License-Identifier: GPL-2.0 */
/*
 * enforce (BPF): resuming a held writer from BPF where its folio's
 * writeback ends, with no round trip through the tool (a ring-buffer
 * event, a wake-up, a SIGCONT), and timing that round trip either way.
 *
 * bpf_send_signal_task() (6.13+) signals another task. The loader sets
 * resume_in_bpf only where the kernel's BTF has it and bpf_task_from_pid();
 * elsewhere the externs stay unresolved (weak) and the verifier drops the
 * calls as dead code (resume_in_bpf is read-only, known at load).
 *
 * In the contexts a writeback ends in (block_rq_complete: softirq or hard
 * IRQ; folio_end_writeback: also a workqueue; the holds' sweep in
 * sched_switch: IRQs off) the kernel queues the signal as irq_work, one per
 * CPU at a time (-EBUSY while one is queued), and refuses (-EPERM) when the
 * interrupted task is a kernel thread or idle (nmi_uaccess_okay()). Every
 * refusal leaves the hold to the tool, as before: no writer depends on BPF
 * alone.
 */
#ifndef SPT_RESUME_BPF_H
#define SPT_RESUME_BPF_H

/* include/uapi/asm-generic/errno-base.h */
#define EPERM 1
#define ESRCH 3

extern int bpf_send_signal_task(struct task_struct *task, int sig, enum pid_type type,
				__u64 value) __weak __ksym;
extern struct task_struct *bpf_task_from_pid(s32 pid) __weak __ksym;
extern void bpf_task_release(struct task_struct *p) __weak __ksym;

struct group_check {
	__u32 pid, tid;
	__u32 others;
};

static long count_group_holds(struct bpf_map *map, __u32 *tid, struct spt_hold *h,
			      struct group_check *c)
{
	if (h->pid != c->pid || *tid == c->tid)
		return 0;
	/* A constant, not a count: the verifier walks the callback until its
	 * state repeats. */
	c->others = 1;
	return 1;
}

/*
 * @tid's hold on @folio may be ended from
 * BPF: the tool has been told of it (announce: its SIGSTOP was generated,
 * so a SIGCONT comes after it) and no other thread of its group is in the
 * holds table (SIGCONT resumes the whole group; the tool waits for the
 * last one, see user/hold.c end_stop()).
 */
static __always_inline bool resumable(__u32 tid, __u64 folio, struct spt_hold *saved)
{
	struct spt_hold *h = bpf_map_lookup_elem(&holds, &tid);
	struct group_check c = { .tid = tid };

	if (!h || h->folio != folio || h->announce == SPT_HOLD_SIGNAL_PENDING)
		return false;
	*saved = *h;
	c.pid = saved->pid;
	bpf_for_each_map_elem(&holds, count_group_holds, &c, 0);
	return !c.others;
}

/*
 * SIGCONT the group. An mmap hold's entry goes while the thread is still
 * stopped, as the tool does it (a newer hold of the thread cannot exist
 * yet), and comes back if the signal is refused; a write() hold's entry
 * stays for the restarted write's check. 0 or -errno.
 */
static __always_inline int send_resume(__u32 tid, struct spt_hold *saved)
{
	struct task_struct *task = bpf_task_from_pid(tid);
	int err;

	if (!task)
		return -ESRCH;
	if (saved->kind == SPT_KIND_MMAP)
		bpf_map_delete_elem(&holds, &tid);
	err = bpf_send_signal_task(task, SIGCONT_X86,
				   bpf_core_enum_value(enum pid_type, PIDTYPE_TGID), 0);
	bpf_task_release(task);
	if (err && saved->kind == SPT_KIND_MMAP)
		bpf_map_update_elem(&holds, &tid, saved, BPF_NOEXIST);
	return err;
}

/*
 * The kernel signals another task only from a user task's context
 * (nmi_uaccess_okay(): current's mm is the one loaded); not from a kernel
 * thread or idle, which the loop device's completions (a kworker) and many
 * interrupts run in. Tried at a later context switch instead, the resume
 * came later than the tool's (docs/performance.md).
 */
static __always_inline bool may_signal_here(void)
{
	return bpf_get_current_task_btf()->mm != NULL;
}

/*
 * The end of @folio's writeback, whose sole holder is @tid: true if BPF
 * resumed it, false to leave it to the tool. A global function, verified
 * once rather than at each of release_holders()' inlined sites (the
 * request walk's loop among them), and even where nothing calls it (before
 * 6.8): hence the resume_in_bpf test first, known at load, behind which
 * the unresolved kfuncs of older kernels are dead code.
 */
__noinline int resume_holder(__u64 folio, __u32 tid)
{
	struct spt_totals *t;
	struct spt_hold saved;

	if (!resume_in_bpf)
		return false;
	t = get_totals();
	if (!t)
		return false;
	if (!resumable(tid, folio, &saved)) {
		t->resume_bpf_skipped++;
		return false;
	}
	if (!may_signal_here() || send_resume(tid, &saved)) {
		t->resume_bpf_failed++;
		return false;
	}
	return true;
}

/* Round trips of holds: writeback end -> the holder runs again. */
struct resume_wait {
	__u64 ts_ns;
	__u32 by_bpf;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct resume_wait);
} resume_waits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SPT_RTT_SAMPLES);
	__type(key, __u32);
	__type(value, __u64);
} hold_rtt SEC(".maps");

static __always_inline void await_running(__u32 tid, __u64 now, bool by_bpf)
{
	struct resume_wait w = { .ts_ns = now, .by_bpf = by_bpf };

	if (!bpf_map_update_elem(&resume_waits, &tid, &w, BPF_NOEXIST))
		__sync_fetch_and_add(&n_resume_waits, 1);
}

/* sched_switch: @next runs; if it was a released holder, one sample. */
static __always_inline void note_running(struct task_struct *next)
{
	__u32 tid = next->pid, slot;
	struct resume_wait *w = bpf_map_lookup_elem(&resume_waits, &tid);
	__u64 ns, *sample;

	if (!w)
		return;
	ns = bpf_ktime_get_ns() - w->ts_ns;
	ns = ns << 1 | (w->by_bpf & 1);
	if (bpf_map_delete_elem(&resume_waits, &tid))
		return;
	__sync_fetch_and_add(&n_resume_waits, -1);
	slot = __sync_fetch_and_add(&n_rtt_samples, 1) % SPT_RTT_SAMPLES;
	sample = bpf_map_lookup_elem(&hold_rtt, &slot);
	if (sample)
		*sample = ns;
}

#endif /* SPT_RESUME_BPF_H */
