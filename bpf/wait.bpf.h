/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Timing the sleeps in folio_wait_writeback(). Tracepoint mode: from the
 * waiter's voluntary switch-out while the folio is still under writeback to
 * its running again (sched_switch). fentry mode: from the wait function's
 * entry to its return, if it slept.
 */
#ifndef SPT_WAIT_BPF_H
#define SPT_WAIT_BPF_H

/* A task in folio_wait_writeback(): a task waits for at most one folio at a
 * time. Task-local storage, not a hash by thread id: sched_switch looks up
 * both tasks on every switch, and a task's own storage is a pointer away
 * where a hash costs a jhash and a bucket walk. The entry stays with the
 * task (freed when it exits); folio == 0 is "not waiting". Only the task's
 * own context and the switch to or from it touch an entry, never two CPUs
 * at once. n_waiting counts the entries being timed. */
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
	 * never waited: with no local storage at all there is nothing to find,
	 * so skip the helper call.
	 */
	if (task_has_no_storage(task))
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

/*
 * The wait tracepoint fired: the task sleeps on @folio. Timed by the wait
 * call around it (fentry mode: a second sleep in one call is inside that
 * time) or from here by sched_switch, once attached. Until then a writer's
 * wait (a stable wait) asks for sched_switch: switch_wanted.
 */
static __always_inline void time_wait(struct spt_totals *t, struct folio *folio, __u32 dev,
				      __u32 kind)
{
	if (time_wait_calls) {
		struct writeback_wait *w = wait_of(bpf_get_current_task_btf());

		if (w && w->folio == (__u64)folio && !w->slept)
			w->slept = 1;
		else
			t->wait_untimed++;
	} else if (switch_attached) {
		track_wait(t, folio, dev, kind);
	} else {
		t->wait_untimed++;
		if (kind != SPT_KIND_OTHER)
			switch_wanted = 1;
	}
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

#endif /* SPT_WAIT_BPF_H */
