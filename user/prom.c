// SPDX-License-Identifier: GPL-2.0
/*
 * Prometheus text format 0.0.4 (what node_exporter's textfile collector
 * reads): base units (seconds), _total counters, histograms with cumulative
 * le buckets, +Inf, _sum and _count. No pid or path labels: cardinality is
 * bounded by devices x kinds, plus --prom-top-comm comms.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "json.h"
#include "prom.h"

void prom_label_value(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");

	fputc('"', f);
	while (*s) {
		int n = *s < 0x80 ? 1 : utf8_seq_len(s);

		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '"')
			fputs("\\\"", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else if (!n)
			fputc('?', f);
		else
			fwrite(s, 1, n, f);
		s += n ? n : 1;
	}
	fputc('"', f);
}

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

static void top_comms(FILE *f, const struct spt_summary *s, size_t top)
{
	struct comm_count *c = calloc(s->nprocs ? s->nprocs : 1, sizeof(*c));
	size_t n = 0;

	if (!c)
		return;
	for (size_t i = 0; i < s->nprocs; i++) {
		__u64 v = kinds_total(s->procs[i].s.violations);
		size_t k;

		if (!v)
			continue;
		for (k = 0; k < n && strcmp(c[k].comm, s->procs[i].s.comm); k++)
			;
		if (k == n)
			c[n++].comm = s->procs[i].s.comm;
		c[k].n += v;
	}
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

/*
 * The per-device families (docs/metrics.md). HELP and TYPE are written even
 * when there is no device; violations get a series for every kind, zeros
 * included.
 */
static void device_series(FILE *f, const struct spt_summary *s)
{
	header(f, "stablepage_violations_total", "counter",
	       "Writes that dirtied a folio under writeback, once per folio per writeback cycle.");
	for (size_t i = 0; i < s->ndevs; i++)
		for (int k = 0; k < SPT_KIND_MAX; k++) {
			series(f, "stablepage_violations_total", "", s->devs[i].device, NULL);
			label(f, false, "fstype", s->devs[i].s.fstype);
			label(f, false, "kind", spt_kind_names[k]);
			fprintf(f, "} %llu\n", (unsigned long long)s->devs[i].s.violations[k]);
		}
	header(f, "stablepage_stable_waits_total", "counter",
	       "Writers (write syscalls, write faults) that slept until a folio's writeback ended.");
	for (size_t i = 0; i < s->ndevs; i++) {
		series(f, "stablepage_stable_waits_total", "", s->devs[i].device, NULL);
		fprintf(f, "} %llu\n", (unsigned long long)stable_waits(s->devs[i].s.waits));
	}
	header(f, "stablepage_other_waits_total", "counter",
	       "Other sleeps until writeback ended (fsync, msync, truncate, kernel threads).");
	for (size_t i = 0; i < s->ndevs; i++) {
		series(f, "stablepage_other_waits_total", "", s->devs[i].device, NULL);
		fprintf(f, "} %llu\n", (unsigned long long)s->devs[i].s.waits[SPT_KIND_OTHER]);
	}
	header(f, "stablepage_failed_after_violation_total", "counter",
	       "Violations whose folio's write request then completed with an error.");
	for (size_t i = 0; i < s->ndevs; i++) {
		series(f, "stablepage_failed_after_violation_total", "", s->devs[i].device, NULL);
		label(f, false, "fstype", s->devs[i].s.fstype);
		fprintf(f, "} %llu\n", (unsigned long long)s->devs[i].s.failed_after_violation);
	}
	header(f, "stablepage_stable_writes", "gauge",
	       "1 where the kernel waits for writeback before letting the filesystem's folios change.");
	for (size_t i = 0; i < s->ndevs; i++) {
		series(f, "stablepage_stable_writes", "", s->devs[i].device, NULL);
		label(f, false, "fstype", s->devs[i].s.fstype);
		fprintf(f, "} %u\n", s->devs[i].s.stable ? 1 : 0);
	}
}

/* The run's own counters: no labels. */
static void run_counters(FILE *f, const struct spt_summary *s)
{
	header(f, "stablepage_events_lost_total", "counter",
	       "Violations counted but not streamed because the ring buffer was full.");
	fprintf(f, "stablepage_events_lost_total %llu\n",
		(unsigned long long)s->totals.events_lost);
	header(f, "stablepage_paused_seconds_total", "counter",
	       "Seconds tracing was paused (SIGUSR1): nothing was seen or counted then.");
	fprintf(f, "stablepage_paused_seconds_total %.3f\n", s->paused_s);
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
	build_info(f, info);
	device_series(f, s);
	run_counters(f, s);
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

int prom_check_path(const char *path)
{
	char *t = tmp_template(path);
	int fd, err = 0;

	if (!t)
		return -ENOMEM;
	fd = mkstemp(t);
	if (fd < 0)
		err = -errno;
	else
		close(fd), unlink(t);
	free(t);
	return err;
}

int prom_write_file(const char *path, const struct spt_summary *s, const struct prom_info *info)
{
	char *t = tmp_template(path);
	int fd, err = 0;
	FILE *f;

	if (!t)
		return -ENOMEM;
	fd = mkstemp(t);
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
	if (fflush(f) || ferror(f))
		err = -(errno ? errno : EIO);
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(t, path))
		err = -errno;
out:
	if (err)
		unlink(t);
	free(t);
	return err;
}
