/* SPDX-License-Identifier: GPL-2.0 */
/*
 * enforce (BPF): the user-space half of holding writers. The BPF side stops
 * a writer (SIGSTOP) and reports it; this tracker decides when to resume it
 * (SIGCONT): when the folio's writeback has ended, or at --max-delay. Pure
 * logic: resuming goes through callbacks, so it is unit-tested.
 */
#ifndef SPT_HOLD_H
#define SPT_HOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>
#include <linux/types.h>
#include "stablepage.h"

/* CLOCK_MONOTONIC in ns: the clock of bpf_ktime_get_ns(), which stamps the
 * hold events and the BPF holds table. */
static inline __u64 monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

#define HOLD_MAX_HELD 512
#define HOLD_RECENT_RELEASES 64
#define HOLD_MAX_PIDS 64

struct held_thread {
	__u64 folio;
	__u64 first_ts_ns; /* the deadline is first_ts_ns + max_delay_ns */
	__u64 stop_ts_ns;  /* when this stop began */
	__u32 tid, pid, kind;
};

struct hold_pid_stats {
	__u32 pid;
	char comm[SPT_COMM_LEN];
	__u64 holds;    /* stops */
	__u64 delay_ns; /* time stopped, summed over its stops */
	__u64 max_ns;   /* longest stop */
};

struct hold_ops {
	/* SIGCONT the thread group: 0, or -errno (-ESRCH: it is gone, which
	 * is no failure: nothing is left stopped). */
	int (*resume)(__u32 pid, void *ctx);
	void (*forget)(__u32 tid, void *ctx); /* drop the BPF holds entry */
	void *ctx;
};

struct hold_tracker {
	__u64 max_delay_ns;
	struct hold_ops ops;
	struct held_thread held[HOLD_MAX_HELD];
	size_t nheld;
	struct {
		__u64 folio, ts_ns;
	} released[HOLD_RECENT_RELEASES]; /* a release can arrive before its hold */
	size_t next_release;
	struct hold_pid_stats pids[HOLD_MAX_PIDS];
	size_t npids;
	__u64 stops, resumed_at_writeback_end, resumed_at_max_delay, resumed_at_exit;
	__u64 untracked; /* stops not tracked (table full): resumed at once */
	__u64 resume_failed; /* SIGCONTs that failed (not ESRCH): a writer may stay stopped */
	__u64 max_stop_ns, total_stop_ns;
};

void hold_init(struct hold_tracker *h, __u64 max_delay_ns, const struct hold_ops *ops);
void hold_event(struct hold_tracker *h, const struct spt_hold_event *e, __u64 now_ns);
/* Resumes the holds whose deadline passed. Milliseconds until the next
 * deadline, or -1 when nothing is held. */
int hold_tick(struct hold_tracker *h, __u64 now_ns);
void hold_resume_all(struct hold_tracker *h, __u64 now_ns);

/* At exit, after the trace summary. */
void hold_print_text(FILE *f, const struct hold_tracker *h, const struct spt_totals *t,
		     const char *action);
void hold_print_json(FILE *f, const struct hold_tracker *h, const struct spt_totals *t,
		     const char *action, const char *write_hold);

#endif
