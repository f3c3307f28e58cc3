/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Aging of the per-process and per-writer rows (--row-age): a row idle for
 * the age is removed from its BPF map, and its counts are kept here, by
 * device, cgroup and comm, so that the device, cgroup and comm counters
 * (and the kernel's totals, never pruned) do not go down. The pure part:
 * which rows are idle, and the retired counts; prune.c deletes the rows.
 */
#ifndef SPT_RETIRE_H
#define SPT_RETIRE_H

#include <stdbool.h>
#include <stddef.h>
#include "report.h"

/* --row-age when --prom-file is given and --row-age is not (seconds). */
#define SPT_ROW_AGE_DEFAULT_S 600.0
/* The shortest age a full map prunes at: rows that saw a violation in the
 * last second stay, so that a busy writer keeps its row. */
#define SPT_ROW_AGE_MIN_S 1.0

struct retired_dev {
	__u32 dev;
	__u64 violations[SPT_KIND_MAX];
	__u64 failed_after_violation;
};

struct retired_cgroup {
	__u64 id;
	__u64 violations[SPT_KIND_MAX];
};

struct retired_comm {
	char comm[SPT_COMM_LEN];
	__u64 violations[SPT_KIND_MAX];
};

/* A process row as last seen: the sum of its counters and since when. */
struct proc_seen {
	__u32 pid;
	char comm[SPT_COMM_LEN];
	__u64 sig;
	double since; /* CLOCK_MONOTONIC seconds */
};

struct spt_retired {
	struct retired_dev *devs;
	size_t ndevs;
	struct retired_cgroup *cgroups;
	size_t ncgroups;
	struct retired_comm *comms;
	size_t ncomms;
	struct proc_seen *seen; /* sorted by pid: the process rows of the last pass */
	size_t nseen;
	__u64 writers_pruned, procs_pruned;
};

/* A writer row is idle when its last violation is age_ns old; one whose
 * first violation is being counted (last_ns 0) is not. */
bool writer_idle(const struct writer_row *w, __u64 now_ns, __u64 age_ns);

/*
 * How long each process row has been idle: unchanged (counters and comm)
 * since the pass that first saw it so, in idle_for[i] (seconds) for rows[i].
 * Remembers the rows for the next pass: once per pass. 0 or -ENOMEM.
 */
int procs_idle(struct spt_retired *r, const struct proc_row *rows, size_t n, double now,
	       double *idle_for);

/* idle_for[i] = -1 (kept) for each of rows with a writer row left in
 * writers (of nwriters). 0 or -ENOMEM. */
int procs_keep_writers(const struct proc_row *rows, size_t n, const struct writer_row *writers,
		       size_t nwriters, double *idle_for);

/*
 * The age rows are pruned at in this pass: age, or less when the map is
 * under pressure (more than 3/4 of its max_rows used), so that the rows
 * idle longest go first (least recently used) and about half of the map is
 * left free; never below SPT_ROW_AGE_MIN_S. idle_for (n rows, seconds,
 * negative: never pruned) is reordered.
 */
double pressure_age(double *idle_for, size_t n, size_t max_rows, double age);

/* A writer row removed: its counts kept for its device, cgroup and the
 * comm of its process. 0 or -ENOMEM. */
int retire_writer(struct spt_retired *r, const struct writer_row *w, const char *comm);
/* A process row removed: the violations it held itself (no writer row had
 * room) kept for its comm; its device has them already. 0 or -ENOMEM. */
int retire_proc(struct spt_retired *r, const struct proc_row *p);

/* Adds the retired counts to s's device and cgroup rows (after
 * fold_writers, before sorting). 0 or -ENOMEM. */
int retired_apply(const struct spt_retired *r, struct spt_summary *s);
void retired_free(struct spt_retired *r);

#endif
