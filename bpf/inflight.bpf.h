/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Violations in flight: each violated folio waits in inflight_violations
 * for the end of its I/O, which times its would-stall (what the writer
 * would have waited under stable pages); stall_horizons keeps each
 * thread's charged stall a union of intervals.
 */
#ifndef SPT_INFLIGHT_BPF_H
#define SPT_INFLIGHT_BPF_H

/*
 * A direct-mapped table, one slot per hash of the folio's address, not a
 * hash map. Every violation inserts and every page of a completed write
 * request looks up; a hash map insert takes a bucket lock and pops a free
 * list shared across CPUs, where a slot is claimed with one compare-and-swap
 * and an array lookup is a few instructions. A violated folio whose slot
 * another one takes is evicted, untimed; folio is 0 in a free slot and
 * INFLIGHT_BUSY while one CPU fills or empties it, so no entry is lost or
 * counted twice. n_inflight_violations counts the occupied slots,
 * n_large_inflight those of large folios.
 */
struct inflight_violation {
	__u64 folio;
	__u64 ts_ns;
	__u32 tgid;
	__u32 tid;
	__u32 dev;
	__u32 kind;
	__u32 epoch;
	__u16 failed;  /* fentry mode: its write request completed with an error */
	__u16 large;   /* a large folio: counted in n_large_inflight */
	__u64 ino;     /* the file and cgroup, for its writer row (count_failed_write) */
	__u64 cgroup;
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
 * violation's end looks its thread up, and a set is a few instructions
 * where a hash lookup hashes and walks a bucket. A thread that finds
 * neither way its own takes the one that ended longer ago; the thread that
 * had it loses its horizon and is charged its next interval whole: that
 * only forgets an overlap, and it takes three threads live in one of the
 * sets, where a direct-mapped row is lost to any two. Two threads of one
 * set ending violations on two CPUs at the same moment may leave one's
 * horizon under the other's id, which charges the next end of that one
 * less by at most their overlap (docs/metrics.md).
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

/* The folio's slot in inflight_violations. Fibonacci hashing of its struct
 * page index: large folios are aligned to their size, so the low bits
 * alone would put them all on a few slots. */
static __always_inline struct inflight_violation *inflight_slot(__u64 folio)
{
	__u32 i = fib_hash(folio >> 6, INFLIGHT_SLOTS_LOG2);

	return bpf_map_lookup_elem(&inflight_violations, &i);
}

/*
 * Remember when the folio was violated, to time it at the end of its I/O.
 * The slot's occupant is evicted, untimed: the folio itself from an earlier
 * cycle whose end was not seen (a folio is violated at most once a cycle),
 * or another folio. A slot another CPU holds at this moment leaves this
 * violation untimed.
 */
static __always_inline void track_violation(struct spt_totals *t, const struct violation *v,
					    __u64 key, __u32 dev, __u64 ino, bool large)
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
	if (cur && s->large)
		__sync_fetch_and_add(&n_large_inflight, -1);
	if (large)
		__sync_fetch_and_add(&n_large_inflight, 1);
	s->large = large;
	s->ts_ns = v->now;
	s->tgid = v->pid_tgid >> 32;
	s->tid = (__u32)v->pid_tgid;
	s->dev = dev;
	s->kind = v->kind;
	s->epoch = pause_epoch;
	s->failed = 0;
	s->ino = ino;
	s->cgroup = v->cgroup;
	/* Publish: an atomic exchange orders the stores above before it. */
	__sync_lock_test_and_set(&s->folio, key);
}

/* Take the folio's entry out of inflight_violations, if it is there; a
 * failed write (@failed, or the entry marked so) is counted here, once per
 * violation, as only one take finds the entry. False also for an entry from
 * before a pause: it leaves, untimed (its failure still counts). */
static __always_inline bool take_violation(__u64 folio, bool failed,
					   struct inflight_violation *out)
{
	struct inflight_violation *s = inflight_slot(folio);
	struct spt_totals *t;

	if (!s || s->folio != folio ||
	    __sync_val_compare_and_swap(&s->folio, folio, INFLIGHT_BUSY) != folio)
		return false;
	*out = *s;
	__sync_lock_test_and_set(&s->folio, 0);
	__sync_fetch_and_add(&n_inflight_violations, -1);
	if (out->large)
		__sync_fetch_and_add(&n_large_inflight, -1);
	if (failed || out->failed)
		count_failed_write(out->dev, out->tgid, out->ino, out->cgroup);
	if (out->epoch == pause_epoch)
		return true;
	t = get_totals();
	if (t)
		t->would_stall_untimed++;
	return false;
}

/* A violation: counted, tracked until its I/O ends, streamed.
 * @folio: its address (a number, not a BTF pointer: fexit has no other);
 * @large: it has more than one page. */
static __always_inline void record_violation(struct spt_totals *t, __u64 folio,
					     struct address_space *mapping, struct folio_file *ff,
					     __u32 kind, bool large)
{
	struct violation v = {
		.now = bpf_ktime_get_ns(),
		.pid_tgid = bpf_get_current_pid_tgid(),
		.cgroup = bpf_get_current_cgroup_id(),
		.kind = kind,
		.generation = ff->inode->i_generation,
	};

	count_violation(t, &v, ff, mapping);
	track_violation(t, &v, folio, ff->dev, folio_file_ino(ff), large);
	if (stream_events)
		stream_violation(t, &v, ff, (struct folio *)folio);
}

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
 * fentry mode: the folio's write request completed with an error; its
 * writeback ends later, at folio_end_writeback(), which has no status, and
 * counts it there (take_violation). The slot is held (INFLIGHT_BUSY) while
 * marked, so the mark cannot land on another folio's entry. That end
 * follows the completions of every request carrying the folio, so it does
 * not find the slot busy with this mark.
 */
static __always_inline void mark_violation_failed(__u64 folio)
{
	struct inflight_violation *s = inflight_slot(folio);

	if (!s || s->folio != folio ||
	    __sync_val_compare_and_swap(&s->folio, folio, INFLIGHT_BUSY) != folio)
		return;
	s->failed = 1;
	__sync_lock_test_and_set(&s->folio, folio);
}

/*
 * What ending violations adds to rows that all CPUs share, gathered over a
 * request walk and added once at its end: the pages of a request are
 * mostly one process's, their would-stalls of one device and kind, and a
 * proc_stats lookup with its atomic and the histogram's atomics are a
 * large part of what a violation's end costs. The batch takes the first violation's
 * histogram and process; one of another goes to its rows at once. Nothing
 * is flushed inside the walk, where its branches would multiply the
 * verifier's states (hist_add_ns()). A reader of the rows meanwhile sees
 * the walk's ends taken from the in-flight count but not yet timed: a
 * request's walk later, as it would see a walk still running.
 */
struct end_batch {
	__u64 hist_word;  /* union hist_key of the gathered samples; 0: none yet */
	__u64 hist_ns;    /* their sum */
	__u64 stall_ns;   /* would_stall_ns for stall_tgid */
	__u32 stall_tgid; /* 0: none yet (tgid 0, the idle task, writes nothing) */
	__u32 hist_counts[SPT_HIST_SLOTS];
};

static __always_inline void charge_would_stall(__u32 tgid, __u64 ns)
{
	struct spt_proc_stats *ps;

	if (!ns)
		return;
	ps = bpf_map_lookup_elem(&proc_stats, &tgid);
	if (ps)
		__sync_fetch_and_add(&ps->would_stall_ns, ns);
}

/*
 * At the walk's end: add what it gathered. A global function, verified
 * once on its own: inlined, the verifier went through it again for every
 * state the walk's callers reach it in.
 */
__noinline int flush_end_batch(struct end_batch *b)
{
	if (!b)
		return 0;
	if (b->stall_tgid)
		charge_would_stall(b->stall_tgid, b->stall_ns);
	if (b->hist_word)
		hist_add_counts(b->hist_word, b->hist_counts, b->hist_ns);
	return 0;
}

/* A violation's would-stall @ns, for the histogram of @word: gathered in
 * @b if it is the batch's, else added now. */
static __always_inline void add_ended_hist(struct end_batch *b, __u64 word, __u64 ns)
{
	if (b && !b->hist_word)
		b->hist_word = word;
	if (b && b->hist_word == word) {
		b->hist_counts[hist_slot(ns)]++;
		b->hist_ns += ns;
	} else {
		hist_add_ns(word, ns);
	}
}

/* What @tgid's would-stall grows by: gathered in @b if it is the batch's
 * process, else added now. */
static __always_inline void add_ended_stall(struct end_batch *b, __u32 tgid, __u64 ns)
{
	if (b && !b->stall_tgid)
		b->stall_tgid = tgid;
	if (b && b->stall_tgid == tgid)
		b->stall_ns += ns;
	else
		charge_would_stall(tgid, ns);
}

/*
 * The folio's I/O ended (at *completed, read if 0), @failed: with an
 * error. The histogram gets each violation's own would-stall. The process
 * is charged the union, per thread, of [violation, end of its I/O]: a
 * thread held on one folio is not held again by another whose I/O
 * overlaps, and summing would predict more stall than there is time.
 * Completions come in end order, so each interval adds what it extends
 * past the thread's last end; two CPUs completing for one thread at once
 * may count an overlap twice. @b: a request walk's batch, or NULL.
 */
static __always_inline void end_violation(__u64 folio, __u64 *completed, bool failed,
					  struct end_batch *b)
{
	struct inflight_violation done;
	struct stall_horizon *horizon;
	__u64 from, now;

	if (!take_violation(folio, failed, &done))
		return;
	now = completion_time(completed);
	from = done.ts_ns;
	add_ended_hist(b, hist_key_word(done.dev, SPT_HIST_WOULD_STALL, done.kind),
		       now > from ? now - from : 0);
	horizon = stall_horizon_of(done.tid);
	if (horizon) {
		if (horizon->end_ns > from)
			from = horizon->end_ns;
		if (now > horizon->end_ns)
			horizon->end_ns = now;
	}
	add_ended_stall(b, done.tgid, now > from ? now - from : 0);
}

#endif /* SPT_INFLIGHT_BPF_H */
