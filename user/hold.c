// SPDX-License-Identifier: GPL-2.0
/* enforce (BPF): when to resume a held writer. See hold.h. */
#include <errno.h>
#include <string.h>
#include "escape.h"
#include "hold.h"
#include "json.h"

void hold_init(struct hold_tracker *h, __u64 max_delay_ns, const struct hold_ops *ops)
{
	memset(h, 0, sizeof(*h));
	h->max_delay_ns = max_delay_ns;
	h->ops = *ops;
}

static struct hold_pid_stats *pid_stats(struct hold_tracker *h, __u32 pid, const char *comm)
{
	for (size_t i = 0; i < h->npids; i++)
		if (h->pids[i].pid == pid)
			return &h->pids[i];
	if (h->npids == HOLD_MAX_PIDS)
		return NULL;
	h->pids[h->npids].pid = pid;
	if (comm)
		memcpy(h->pids[h->npids].comm, comm, SPT_COMM_LEN - 1);
	return &h->pids[h->npids++];
}

static bool pid_still_held(const struct hold_tracker *h, __u32 pid)
{
	for (size_t i = 0; i < h->nheld; i++)
		if (h->held[i].pid == pid)
			return true;
	return false;
}

static void resume(struct hold_tracker *h, __u32 pid)
{
	int err = h->ops.resume(pid, h->ops.ctx);

	if (err && err != -ESRCH)
		h->resume_failed++;
}

/*
 * Ends held[i]'s stop. SIGSTOP stops the whole thread group, so the group
 * goes on only when none of its threads is held any more. mmap holds are
 * over once resumed (the store lands); a held write() is restarted and
 * checked again by BPF, which also drops its entry.
 */
static void end_stop(struct hold_tracker *h, size_t i, __u64 now_ns, __u64 *reason)
{
	struct held_thread t = h->held[i];
	__u64 ns = now_ns > t.stop_ts_ns ? now_ns - t.stop_ts_ns : 0;
	struct hold_pid_stats *ps = pid_stats(h, t.pid, NULL);

	h->held[i] = h->held[--h->nheld];
	(*reason)++;
	h->total_stop_ns += ns;
	if (ns > h->max_stop_ns)
		h->max_stop_ns = ns;
	if (ps) {
		ps->delay_ns += ns;
		if (ns > ps->max_ns)
			ps->max_ns = ns;
	}
	/*
	 * The entry goes while the thread is still stopped: then no newer
	 * hold of it can exist, whose entry (start_hold() reuses the tid's)
	 * the delete would take, leaving a stop nobody knows of. That order
	 * was reversed once and a writer stayed stopped (docs/enforce.md). Our
	 * death in between is covered by the guardian, which resumes every
	 * recorded group too when the tool dies; a failed SIGCONT is counted
	 * and the record kept for enforce --restore.
	 */
	if (t.kind == SPT_KIND_MMAP && h->ops.forget)
		h->ops.forget(t.tid, h->ops.ctx);
	if (!pid_still_held(h, t.pid))
		resume(h, t.pid);
}

static bool released_since(const struct hold_tracker *h, __u64 folio, __u64 ts_ns)
{
	for (size_t i = 0; i < HOLD_RECENT_RELEASES; i++)
		if (h->released[i].folio == folio && h->released[i].ts_ns >= ts_ns)
			return true;
	return false;
}

void hold_event(struct hold_tracker *h, const struct spt_hold_event *e, __u64 now_ns)
{
	if (e->type == SPT_HOLD_RELEASE) {
		h->released[h->next_release].folio = e->folio;
		h->released[h->next_release].ts_ns = e->ts_ns;
		h->next_release = (h->next_release + 1) % HOLD_RECENT_RELEASES;
		for (size_t i = h->nheld; i-- > 0;)
			if (h->held[i].folio == e->folio)
				end_stop(h, i, now_ns, &h->resumed_at_writeback_end);
		return;
	}
	struct hold_pid_stats *ps = pid_stats(h, e->pid, e->comm);
	size_t i;

	h->stops++;
	if (ps)
		ps->holds++;
	for (i = 0; i < h->nheld; i++)
		if (h->held[i].tid == e->tid)
			break;
	if (i == h->nheld) {
		if (h->nheld == HOLD_MAX_HELD) {
			/* Never leave a thread stopped that nothing tracks. */
			h->untracked++;
			resume(h, e->pid);
			return;
		}
		h->nheld++;
		h->held[i].stop_ts_ns = e->ts_ns;
	}
	h->held[i].tid = e->tid;
	h->held[i].pid = e->pid;
	h->held[i].kind = e->kind;
	h->held[i].folio = e->folio;
	h->held[i].first_ts_ns = e->first_ts_ns;
	if (released_since(h, e->folio, e->ts_ns))
		end_stop(h, i, now_ns, &h->resumed_at_writeback_end);
}

int hold_tick(struct hold_tracker *h, __u64 now_ns)
{
	__u64 next = 0;

	for (size_t i = h->nheld; i-- > 0;) {
		__u64 deadline = h->held[i].first_ts_ns + h->max_delay_ns;

		if (deadline <= now_ns)
			end_stop(h, i, now_ns, &h->resumed_at_max_delay);
		else if (!next || deadline < next)
			next = deadline;
	}
	if (!next)
		return -1;
	return (int)((next - now_ns + 999999) / 1000000);
}

void hold_resume_all(struct hold_tracker *h, __u64 now_ns)
{
	while (h->nheld)
		end_stop(h, h->nheld - 1, now_ns, &h->resumed_at_exit);
}

void hold_print_text(FILE *f, const struct hold_tracker *h, const struct spt_totals *t,
		     const char *action)
{
	fprintf(f, "enforce (--action %s, --max-delay %.3f s): held %llu writers' writes "
		   "(mmap %llu, write %llu), %llu stops, %.1f ms stopped in all, longest %.1f ms; "
		   "resumed at writeback end %llu, at --max-delay %llu, at exit %llu; writes let "
		   "through at --max-delay %llu; killed %llu; would hold (log) %llu; not held: "
		   "tool's heartbeat stale %llu, group not yet recorded %llu; resumes failed %llu\n",
		action, h->max_delay_ns / 1e9,
		(unsigned long long)(t->holds[SPT_KIND_MMAP] + t->holds[SPT_KIND_WRITE]),
		(unsigned long long)t->holds[SPT_KIND_MMAP], (unsigned long long)t->holds[SPT_KIND_WRITE],
		(unsigned long long)h->stops, h->total_stop_ns / 1e6, h->max_stop_ns / 1e6,
		(unsigned long long)h->resumed_at_writeback_end,
		(unsigned long long)h->resumed_at_max_delay, (unsigned long long)h->resumed_at_exit,
		(unsigned long long)t->holds_expired, (unsigned long long)t->kills,
		(unsigned long long)t->would_hold, (unsigned long long)t->holds_refused_stale,
		(unsigned long long)t->holds_unrecorded, (unsigned long long)h->resume_failed);
	for (size_t i = 0; i < h->npids; i++) {
		char comm[TEXT_ESC_LEN(SPT_COMM_LEN)];

		fprintf(f, "enforce: held pid %u (%s) %llu times, %.1f ms in all, longest %.1f ms\n",
			h->pids[i].pid, ESC_FIELD(comm, h->pids[i].comm),
			(unsigned long long)h->pids[i].holds, h->pids[i].delay_ns / 1e6,
			h->pids[i].max_ns / 1e6);
	}
}

void hold_print_json(FILE *f, const struct hold_tracker *h, const struct spt_totals *t,
		     const char *action, const char *write_hold)
{
	fprintf(f, ",\"enforce\":{\"action\":\"%s\",\"write_hold\":\"%s\",\"max_delay_s\":%.3f,"
		   "\"holds\":{\"mmap\":%llu,\"write\":%llu},\"stops\":%llu,\"stopped_ms\":%.3f,"
		   "\"longest_stop_ms\":%.3f,\"resumed_at_writeback_end\":%llu,"
		   "\"resumed_at_max_delay\":%llu,\"resumed_at_exit\":%llu,\"untracked\":%llu,"
		   "\"resume_failed\":%llu,\"refused_stale\":%llu,\"unrecorded\":%llu,"
		   "\"writes_let_through\":%llu,\"kills\":%llu,\"would_hold\":%llu,"
		   "\"range_capped\":%llu,\"held\":[",
		action, write_hold, h->max_delay_ns / 1e9, (unsigned long long)t->holds[SPT_KIND_MMAP],
		(unsigned long long)t->holds[SPT_KIND_WRITE], (unsigned long long)h->stops,
		h->total_stop_ns / 1e6, h->max_stop_ns / 1e6,
		(unsigned long long)h->resumed_at_writeback_end,
		(unsigned long long)h->resumed_at_max_delay, (unsigned long long)h->resumed_at_exit,
		(unsigned long long)h->untracked, (unsigned long long)h->resume_failed,
		(unsigned long long)t->holds_refused_stale, (unsigned long long)t->holds_unrecorded,
		(unsigned long long)t->holds_expired,
		(unsigned long long)t->kills, (unsigned long long)t->would_hold,
		(unsigned long long)t->hold_range_capped);
	for (size_t i = 0; i < h->npids; i++) {
		fprintf(f, "%s{\"pid\":%u,\"comm\":", i ? "," : "", h->pids[i].pid);
		json_string(f, h->pids[i].comm);
		fprintf(f, ",\"stops\":%llu,\"stopped_ms\":%.3f,\"longest_stop_ms\":%.3f}",
			(unsigned long long)h->pids[i].holds, h->pids[i].delay_ns / 1e6,
			h->pids[i].max_ns / 1e6);
	}
	fputs("]}", f);
}
