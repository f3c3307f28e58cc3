/* SPDX-License-Identifier: GPL-2.0 */
/* The summary read from the maps, its rows (rows.c) and its printing (text:
 * report.c, JSON: report_json.c): pure functions, unit-tested in tests/unit. */
#ifndef SPT_REPORT_H
#define SPT_REPORT_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "stablepage.h"
#include "hold.h"
#include "verify_user.h"

extern const char *const spt_kind_names[SPT_KIND_MAX];

struct spt_retired;

struct dev_row {
	__u32 dev;
	struct spt_dev_stats s;
	char device[SPT_DEVNAME_LEN]; /* block device name, for labels; set by the caller */
};

struct hist_row {
	struct spt_hist_key key;
	struct spt_hist h;
	char device[SPT_DEVNAME_LEN]; /* set by the caller */
};

struct proc_row {
	__u32 pid;
	struct spt_proc_stats s;
};

/* A file's writer rows folded together. */
struct spt_file_key {
	__u32 dev;
	__u32 pad;
	__u64 ino;
};

struct spt_file_stats {
	__u64 violations[SPT_KIND_MAX];
	__u64 failed_after_violation;
	__u32 generation;
	__u32 last_pid; /* the process of the latest violation */
};

struct file_row {
	struct spt_file_key key;
	struct spt_file_stats s;
	char *path; /* resolved by the caller; NULL when unknown */
};

/* A cgroup's writer rows folded together. */
struct cgroup_row {
	__u64 id;     /* cgroup v2 id */
	__u64 violations[SPT_KIND_MAX];
	char *path;   /* cgroup v2 path, resolved by the caller; NULL when unknown */
};

struct spt_summary {
	bool interval;     /* an -i report ("interval"), not the one at exit ("summary") */
	bool delta;        /* an interval report of the interval's counts (--delta) */
	unsigned long seq; /* an interval report's number, from 1 */
	double ts;         /* wall-clock time of the counts (seconds since the epoch); 0: none */
	double since_ts;   /* and of the start of what they count: the run's or the interval's */
	const char *attach_mode; /* "tracepoint" or "fentry"; NULL: not printed */
	const char *kernel;      /* uname's release; NULL: not printed */
	double duration_s; /* since the start: all counts are cumulative */
	double paused_s;   /* of which tracing was paused (SIGUSR1): nothing was seen */
	struct spt_totals totals;
	struct dev_row *devs;
	size_t ndevs;
	struct proc_row *procs;
	size_t nprocs;
	struct file_row *files;
	size_t nfiles;
	struct cgroup_row *cgroups; /* from the writer rows: violations only */
	size_t ncgroups;
	struct hist_row *hists;
	size_t nhists;
	__u64 would_stall_pending; /* violated folios whose I/O has not ended yet */
	__u64 waits_pending;       /* waits being timed */
	/* enforce (BPF mode) only, else NULL */
	const struct hold_tracker *hold;
	const char *hold_action, *write_hold;
	/* --verify only, else NULL (verify_user.h) */
	const struct spt_verify_summary *verify;
	/* Owned (summary_free): a --delta's own verify counts (summary_delta), or
	 * those a delta's previous snapshot keeps, by key (summary_sort_by_key). */
	struct spt_verify_summary *verify_own;
	/* What the kernel charges for the BPF maps (memlock), bytes; 0: not printed */
	__u64 maps_bytes;
	/* --row-age: the counts of rows aged out (retire.h), else NULL */
	const struct spt_retired *retired;
};

/* A resolved violation, ready to print. */
struct event_view {
	double ts;             /* seconds since the epoch */
	const struct spt_event *e;
	const char *devname;   /* NULL when unknown */
	const char *fstype;
	const char *path;      /* NULL when it could not be resolved */
	const char *cgroup;    /* cgroup v2 path, NULL when unknown */
};

__u64 kinds_total(const __u64 v[SPT_KIND_MAX]);
__u64 stable_waits(const __u64 waits[SPT_KIND_MAX]);
/* Adds the per-CPU copies of the totals. */
void totals_sum(struct spt_totals *sum, const struct spt_totals *percpu, int ncpus);
/* Sorts rows by total violations, then stable waits, descending; ties by key. */
void sort_procs(struct proc_row *rows, size_t n);
void sort_files(struct file_row *rows, size_t n);
void sort_devs(struct dev_row *rows, size_t n);
void sort_cgroups(struct cgroup_row *rows, size_t n);
/* Violations no cgroup row holds (the writer table was full). */
__u64 cgroups_unattributed(const struct spt_summary *s);
/* A row of the writer_stats map: one process's violations on one file. */
struct writer_row {
	struct spt_writer_key key;
	struct spt_writer_stats s;
};

/*
 * Folds the writer rows (reordered in place) into the summary: adds their
 * violations to their devices' and processes' rows, appending a row with no
 * description for one the kernel's tables had no room for, and makes the
 * per-file and per-cgroup rows (replacing s->files, s->cgroups). 0, or -ENOMEM.
 */
int fold_writers(struct spt_summary *s, struct writer_row *rows, size_t n);
/*
 * Adds the per-CPU device counts (the dev_counts map's values, any order,
 * free slots with dev 0) to their devices' rows, appending a row with no
 * description for a device the kernel's table had no room for. 0, or -ENOMEM.
 */
int fold_dev_counts(struct spt_summary *s, const struct spt_dev_counts *c, size_t n);
/* By type, device name, kind. */
void sort_hists(struct hist_row *rows, size_t n);
/* What a histogram row measures, e.g. "would-stall" or "stable-wait". */
const char *hist_name(const struct spt_hist_key *k);
bool hist_per_device(__u16 type);
/* h->count from its slots (BPF counts the slots only). */
void hist_set_count(struct spt_hist *h);
/* Samples in the histograms of this type (and kind, unless kind < 0). */
__u64 hists_count(const struct spt_summary *s, int type, int kind);

/* Shared by report.c and report_json.c: "MAJ:MIN" of a kernel dev_t, as
 * every report spells a device; an inode as shown (a device's own page
 * cache has no inode of a filesystem: 0). */
void format_majmin(char buf[16], __u32 dev);
__u64 shown_ino(__u64 ino);

/* The rows a report lists: --top of n. */
static inline size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* biolatency-style log2 histogram of microseconds. */
void print_log2_hist(FILE *f, const __u64 slots[SPT_HIST_SLOTS]);
void print_hists_text(FILE *f, const struct spt_summary *s);

void print_event_header(FILE *f);
void print_event_text(FILE *f, const struct event_view *v);
void print_event_json(FILE *f, const struct event_view *v);
void print_summary_text(FILE *f, const struct spt_summary *s, size_t top);
void print_summary_json(FILE *f, const struct spt_summary *s, size_t top);

#endif
