// SPDX-License-Identifier: GPL-2.0
/*
 * Prometheus text format 0.0.4 (what node_exporter's textfile collector
 * reads): base units (seconds), _total counters, histograms with cumulative
 * le buckets, +Inf, _sum and _count. No pid or path labels: cardinality is
 * bounded by devices x kinds, plus --prom-top-comm comms.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "escape.h"
#include "json.h"
#include "prom.h"
#include "promdevs.h"
#include "retire.h"

static void header(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void label(FILE *f, bool first, const char *key, const char *value)
{
	fprintf(f, "%s%s=", first ? "" : ",", key);
	prom_label_value(f, value);
}

/* "NAME_SUFFIX{device="..."[,kind="..."]": a series' name and its labels, left open. */
static void series(FILE *f, const char *name, const char *suffix, const char *device,
		   const char *kind)
{
	fprintf(f, "%s%s{", name, suffix);
	label(f, true, "device", device);
	if (kind)
		label(f, false, "kind", kind);
}

/* Slot i holds durations < 2^(i+1) us (report.h), so it ends bucket le=2^(i+1) us. */
static void histogram(FILE *f, const char *name, const char *device, const char *kind,
		      const struct spt_hist *h)
{
	__u64 cum = 0;

	for (int i = 0; i < SPT_HIST_SLOTS - 1; i++) {
		cum += h->slots[i];
		series(f, name, "_bucket", device, kind);
		fprintf(f, ",le=\"%.9g\"} %llu\n", (double)(1ULL << (i + 1)) / 1e6,
			(unsigned long long)cum);
	}
	series(f, name, "_bucket", device, kind);
	fprintf(f, ",le=\"+Inf\"} %llu\n", (unsigned long long)h->count);
	series(f, name, "_sum", device, kind);
	fprintf(f, "} %.9f\n", h->sum_ns / 1e9);
	series(f, name, "_count", device, kind);
	fprintf(f, "} %llu\n", (unsigned long long)h->count);
}

static void hist_add_into(struct spt_hist *sum, const struct spt_hist *h)
{
	for (int i = 0; i < SPT_HIST_SLOTS; i++)
		sum->slots[i] += h->slots[i];
	sum->count += h->count;
	sum->sum_ns += h->sum_ns;
}

static bool hist_matches(const struct hist_row *r, int type, int kind_lo, int kind_hi)
{
	return r->key.type == type && r->key.kind >= kind_lo && r->key.kind <= kind_hi;
}

/*
 * One series per device (and per kind when by_kind), kinds kind_lo..kind_hi
 * added up. Rows are sorted by type, device, kind (sort_hists), so the rows
 * of one series are adjacent.
 */
static void histograms(FILE *f, const struct spt_summary *s, int type, int kind_lo, int kind_hi,
		       bool by_kind, const char *name, const char *help)
{
	bool any = false;

	for (size_t i = 0; i < s->nhists;) {
		const struct hist_row *r = &s->hists[i];
		struct spt_hist sum = {};
		size_t j;

		if (!hist_matches(r, type, kind_lo, kind_hi)) {
			i++;
			continue;
		}
		for (j = i; j < s->nhists && hist_matches(&s->hists[j], type, kind_lo, kind_hi) &&
			    !strcmp(s->hists[j].device, r->device) &&
			    (!by_kind || s->hists[j].key.kind == r->key.kind);
		     j++)
			hist_add_into(&sum, &s->hists[j].h);
		if (!any)
			header(f, name, "histogram", help);
		any = true;
		histogram(f, name, r->device,
			  by_kind ? spt_kind_names[r->key.kind % SPT_KIND_MAX] : NULL, &sum);
		i = j;
	}
}

struct comm_count {
	const char *comm;
	__u64 n;
};

static int cmp_comm_count(const void *pa, const void *pb)
{
	const struct comm_count *a = pa, *b = pb;

	if (a->n != b->n)
		return a->n > b->n ? -1 : 1;
	return strcmp(a->comm, b->comm);
}

static void add_comm(struct comm_count *c, size_t *n, const char *comm, __u64 v)
{
	size_t k;

	if (!v)
		return;
	for (k = 0; k < *n && strcmp(c[k].comm, comm); k++)
		;
	if (k == *n)
		c[(*n)++].comm = comm;
	c[k].n += v;
}

/* By comm: the processes' rows and those aged out (retire.h), so that a
 * comm's counter never goes down when its rows do. */
static void top_comms(FILE *f, const struct spt_summary *s, size_t top)
{
	size_t nretired = s->retired ? s->retired->ncomms : 0;
	struct comm_count *c = calloc(s->nprocs + nretired + 1, sizeof(*c));
	size_t n = 0;

	if (!c)
		return;
	for (size_t i = 0; i < s->nprocs; i++)
		add_comm(c, &n, s->procs[i].s.comm, kinds_total(s->procs[i].s.violations));
	for (size_t i = 0; i < nretired; i++)
		add_comm(c, &n, s->retired->comms[i].comm,
			 kinds_total(s->retired->comms[i].violations));
	qsort(c, n, sizeof(*c), cmp_comm_count);
	header(f, "stablepage_comm_violations_total", "counter",
	       "Violations by the processes with this comm (the --prom-top-comm busiest comms).");
	for (size_t i = 0; i < n && i < top; i++) {
		fputs("stablepage_comm_violations_total{", f);
		label(f, true, "comm", c[i].comm);
		fprintf(f, "} %llu\n", (unsigned long long)c[i].n);
	}
	free(c);
}

/*
 * The busiest cgroups, labelled by cgroup v2 path: a container's or pod's id
 * is part of its path. Rows of one path are added up (a service restarted
 * gets a new cgroup, with a new id, at the same path); a cgroup removed
 * before its path was read is labelled by its id, so labels stay unique.
 */
static void top_cgroups(FILE *f, const struct spt_summary *s, size_t top)
{
	struct comm_count *c = calloc(s->ncgroups ? s->ncgroups : 1, sizeof(*c));
	char (*ids)[32] = calloc(s->ncgroups ? s->ncgroups : 1, sizeof(*ids));
	size_t n = 0;

	header(f, "stablepage_cgroup_violations_total", "counter",
	       "Violations by the tasks of this cgroup v2 path (the --prom-top-cgroup busiest).");
	for (size_t i = 0; c && ids && i < s->ncgroups; i++) {
		const struct cgroup_row *r = &s->cgroups[i];
		const char *path = r->path;
		size_t k;

		if (!kinds_total(r->violations))
			continue;
		if (!path) {
			snprintf(ids[i], sizeof(ids[i]), "id:%llu", (unsigned long long)r->id);
			path = ids[i];
		}
		for (k = 0; k < n && strcmp(c[k].comm, path); k++)
			;
		if (k == n)
			c[n++].comm = path;
		c[k].n += kinds_total(r->violations);
	}
	if (c)
		qsort(c, n, sizeof(*c), cmp_comm_count);
	for (size_t i = 0; i < n && i < top; i++) {
		fputs("stablepage_cgroup_violations_total{", f);
		label(f, true, "cgroup", c[i].comm);
		fprintf(f, "} %llu\n", (unsigned long long)c[i].n);
	}
	free(ids);
	free(c);
}

static void build_info(FILE *f, const struct prom_info *info)
{
	header(f, "stablepage_build_info", "gauge",
	       "stablepage-trace version, attach mode and kernel release; always 1.");
	fputs("stablepage_build_info{", f);
	label(f, true, "version", info->version);
	label(f, false, "attach_mode", info->attach_mode);
	label(f, false, "kernel", info->kernel);
	fputs("} 1\n", f);
}

/* The family's series of one label set, a line each; value from d. */
static void dev_sample(FILE *f, const char *name, const struct prom_dev *d, bool fstype,
		       const char *kind, unsigned long long v)
{
	series(f, name, "", d->device, NULL);
	if (fstype)
		label(f, false, "fstype", d->fstype);
	if (kind)
		label(f, false, "kind", kind);
	fprintf(f, "} %llu\n", v);
}

/* The families labelled by device only: the device's fstypes added up
 * (m is sorted by device). */
static void per_device(FILE *f, const struct prom_dev *m, size_t n, const char *name,
		       __u64 (*value)(const struct prom_dev *))
{
	for (size_t i = 0; i < n;) {
		__u64 v = 0;
		size_t j;

		for (j = i; j < n && !strcmp(m[j].device, m[i].device); j++)
			v += value(&m[j]);
		dev_sample(f, name, &m[i], false, NULL, v);
		i = j;
	}
}

static __u64 dev_stable_waits(const struct prom_dev *d)
{
	return stable_waits(d->waits);
}

static __u64 dev_other_waits(const struct prom_dev *d)
{
	return d->waits[SPT_KIND_OTHER];
}

/*
 * The per-device families (docs/metrics.md), one series per label set
 * (promdevs.h): known devices without activity at 0. HELP and TYPE are
 * written even when there is no device; violations get a series for
 * every kind, zeros included.
 */
static void device_series(FILE *f, const struct prom_dev *m, size_t n)
{
	header(f, "stablepage_violations_total", "counter",
	       "Writes that dirtied a folio under writeback, once per folio per writeback cycle.");
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < SPT_KIND_MAX; k++)
			dev_sample(f, "stablepage_violations_total", &m[i], true, spt_kind_names[k],
				   m[i].violations[k]);
	header(f, "stablepage_stable_waits_total", "counter",
	       "Writers (write syscalls, write faults) that slept until a folio's writeback ended.");
	per_device(f, m, n, "stablepage_stable_waits_total", dev_stable_waits);
	header(f, "stablepage_other_waits_total", "counter",
	       "Other sleeps until writeback ended (fsync, msync, truncate, kernel threads).");
	per_device(f, m, n, "stablepage_other_waits_total", dev_other_waits);
	header(f, "stablepage_failed_after_violation_total", "counter",
	       "Violations whose folio's write request then completed with an error.");
	for (size_t i = 0; i < n; i++)
		dev_sample(f, "stablepage_failed_after_violation_total", &m[i], true, NULL,
			   m[i].failed_after_violation);
	header(f, "stablepage_stable_writes", "gauge",
	       "1 where the kernel waits for writeback before letting the filesystem's folios change.");
	for (size_t i = 0; i < n; i++)
		dev_sample(f, "stablepage_stable_writes", &m[i], true, NULL, m[i].stable);
}

static void counter(FILE *f, const char *name, const char *help, __u64 v)
{
	header(f, name, "counter", help);
	fprintf(f, "%s %llu\n", name, (unsigned long long)v);
}

/* The run's own counters and times: no labels. */
static void run_counters(FILE *f, const struct spt_summary *s, const struct prom_info *info)
{
	const struct spt_totals *t = &s->totals;

	counter(f, "stablepage_events_lost_total",
		"Violations counted but not streamed because the ring buffer was full.", t->events_lost);
	header(f, "stablepage_paused_seconds_total", "counter",
	       "Seconds tracing was paused (SIGUSR1): nothing was seen or counted then.");
	fprintf(f, "stablepage_paused_seconds_total %.3f\n", s->paused_s);
	counter(f, "stablepage_rows_dropped_total",
		"Violations a full per-process or per-writer table had no row for (device and totals only).",
		t->agg_dropped);
	counter(f, "stablepage_rows_aged_out_total",
		"Per-process and per-writer rows removed after --row-age idle, counts kept in totals.",
		s->retired ? s->retired->writers_pruned + s->retired->procs_pruned : 0);
	counter(f, "stablepage_would_stall_untimed_total",
		"Violations whose end of writeback was not seen, so not timed as would-stalls.",
		t->would_stall_untimed);
	counter(f, "stablepage_wait_untimed_total",
		"Waits counted but not timed (the writer did not sleep, or a table was full).",
		t->wait_untimed);
	counter(f, "stablepage_writeback_untimed_total",
		"fentry mode: folio writebacks not timed (their start was not recorded).",
		t->writeback_untimed);
	header(f, "stablepage_start_time_seconds", "gauge",
	       "When this tracer started counting, in seconds since the epoch.");
	fprintf(f, "stablepage_start_time_seconds %.3f\n", info->start_ts);
	header(f, "stablepage_last_update_time_seconds", "gauge",
	       "When the counters of this file were read, in seconds since the epoch.");
	fprintf(f, "stablepage_last_update_time_seconds %.3f\n", s->ts);
	if (!s->maps_bytes)
		return;
	header(f, "stablepage_bpf_maps_bytes", "gauge",
	       "Memory the kernel charges for this tracer's BPF maps (memlock, as bpftool shows).");
	fprintf(f, "stablepage_bpf_maps_bytes %llu\n", (unsigned long long)s->maps_bytes);
}

/* A family only once it has a row (histograms()). SPT_HIST_WAIT rows make two
 * families: stable waits (mmap and write kinds added up) and other waits. */
static void all_histograms(FILE *f, const struct spt_summary *s)
{
	histograms(f, s, SPT_HIST_WRITEBACK, 0, SPT_KIND_MAX - 1, false,
		   "stablepage_writeback_duration_seconds",
		   "Write requests on the device, allocation to completion.");
	histograms(f, s, SPT_HIST_FOLIO_WRITEBACK, 0, SPT_KIND_MAX - 1, false,
		   "stablepage_folio_writeback_duration_seconds",
		   "One folio's writeback, start to end (fentry mode only).");
	histograms(f, s, SPT_HIST_WAIT, SPT_KIND_MMAP, SPT_KIND_WRITE, false,
		   "stablepage_stable_wait_seconds",
		   "Time writers slept waiting for writeback before their write could proceed.");
	histograms(f, s, SPT_HIST_WAIT, SPT_KIND_OTHER, SPT_KIND_OTHER, false,
		   "stablepage_other_wait_seconds",
		   "Time other waiters (fsync, msync, truncate) slept until writeback ended.");
	histograms(f, s, SPT_HIST_WOULD_STALL, 0, SPT_KIND_MAX - 1, true,
		   "stablepage_would_stall_seconds",
		   "Violation to the end of that folio's I/O: the wait stable pages would impose.");
}

void prom_format(FILE *f, const struct spt_summary *s, const struct prom_info *info)
{
	struct prom_dev *m;
	size_t n;

	build_info(f, info);
	if (prom_merge_devs(s->devs, s->ndevs, info->known, info->nknown, &m, &n))
		n = 0; /* out of memory: the families without series */
	device_series(f, m, n);
	free(m);
	run_counters(f, s, info);
	all_histograms(f, s);
	if (info->top_comms)
		top_comms(f, s, info->top_comms);
	if (info->top_cgroups)
		top_cgroups(f, s, info->top_cgroups);
	if (s->verify)
		prom_verify(f, s->verify);
}

static char *tmp_template(const char *path)
{
	char *t;

	/* Not ending in .prom: the textfile collector ignores it until renamed. */
	if (asprintf(&t, "%s.tmp.XXXXXX", path) < 0)
		return NULL;
	return t;
}

/* The directory of path, as given ("." when none). NULL without memory. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	return slash == path ? strdup("/") : strndup(path, slash - path);
}

/*
 * The rule for the directory (docs/metrics.md): itself not a symlink, a
 * directory, owned by root or by us, and writable by no one else unless
 * sticky (/tmp), so that nobody but its owner can replace the file a
 * scrape reads or plant one of its own there.
 */
static int check_dir(const char *dir, const char **why)
{
	struct stat st;

	if (lstat(dir, &st))
		return *why = strerror(errno), -errno;
	if (S_ISLNK(st.st_mode))
		return *why = "the directory is a symlink (give the path it points to)", -ELOOP;
	if (!S_ISDIR(st.st_mode))
		return *why = "not a directory", -ENOTDIR;
	if (st.st_uid != 0 && st.st_uid != geteuid())
		return *why = "the directory is owned by another user", -EPERM;
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
		return *why = "the directory is group- or world-writable and not sticky", -EPERM;
	return 0;
}

int prom_check_path(const char *path, const char **why)
{
	char *dir = dir_of(path), *t = tmp_template(path);
	int fd, err = dir && t ? check_dir(dir, why) : (*why = strerror(ENOMEM), -ENOMEM);

	if (!err) {
		fd = mkostemp(t, O_CLOEXEC);
		if (fd < 0)
			err = -errno, *why = strerror(errno);
		else
			close(fd), unlink(t);
	}
	free(dir);
	free(t);
	return err;
}

/* The new name is on disk once rename() returns: its directory synced. */
static int sync_dir(const char *path)
{
	char *dir = dir_of(path);
	int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1, err = 0;

	if (fd < 0 || fsync(fd))
		err = -(errno ? errno : ENOMEM);
	if (fd >= 0)
		close(fd);
	free(dir);
	return err;
}

/*
 * The file's data is synced before the rename, so that after a crash the
 * name holds the old file or the new one, never an empty one (ext4 and xfs
 * do not order a rename after the data it points to).
 */
int prom_write_file(const char *path, const struct spt_summary *s, const struct prom_info *info)
{
	char *t = tmp_template(path);
	int fd, err = 0;
	FILE *f;

	if (!t)
		return -ENOMEM;
	fd = mkostemp(t, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(t);
		return err;
	}
	fchmod(fd, 0644);
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		goto out;
	}
	prom_format(f, s, info);
	if (fflush(f) || ferror(f) || fsync(fileno(f)))
		err = -(errno ? errno : EIO);
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(t, path))
		err = -errno;
	if (!err)
		err = sync_dir(path);
out:
	if (err)
		unlink(t);
	free(t);
	return err;
}
