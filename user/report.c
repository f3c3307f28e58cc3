// SPDX-License-Identifier: GPL-2.0
/* Printing the summary (text, JSON), the histograms and the events; rows.c
 * prepares what is printed. */
#include <ctype.h>
#include <string.h>
#include <time.h>
#include "escape.h"
#include "json.h"
#include "parse.h"
#include "report.h"

/* "MAJ:MIN" of a kernel dev_t, as every report spells a device. */
static void format_majmin(char buf[16], __u32 dev)
{
	snprintf(buf, 16, "%u:%u", spt_kdev_major(dev), spt_kdev_minor(dev));
}

/* {"mmap":N,"write":N,"other":N,"metadata":N}: one key per enum spt_kind */
static void json_kinds(FILE *f, const __u64 v[SPT_KIND_MAX])
{
	for (int k = 0; k < SPT_KIND_MAX; k++)
		fprintf(f, "%s\"%s\":%llu", k ? "," : "{", spt_kind_names[k],
			(unsigned long long)v[k]);
	fputc('}', f);
}

/* A device's own page cache has no inode of a filesystem: 0 */
static __u64 shown_ino(__u64 ino)
{
	return ino == SPT_INO_BDEV ? 0 : ino;
}

static void json_dev(FILE *f, __u32 dev)
{
	char majmin[16];

	format_majmin(majmin, dev);
	fprintf(f, "\"%s\"", majmin);
}

void print_event_header(FILE *f)
{
	fprintf(f, "%-15s %-5s %-16s %7s %7s %-8s %-7s %-6s %9s %8s %s\n", "TIME", "KIND", "COMM",
		"PID", "TID", "DEVICE", "MAJ:MIN", "FS", "INO", "INDEX", "PATH");
}

void print_event_text(FILE *f, const struct event_view *v)
{
	const struct spt_event *e = v->e;
	time_t secs = (time_t)v->ts;
	struct tm tm;
	char when[16], majmin[16], comm[TEXT_ESC_LEN(SPT_COMM_LEN)];
	char devname[TEXT_ESC_LEN(SPT_DEVNAME_LEN)], fstype[TEXT_ESC_LEN(SPT_FSTYPE_LEN)];

	localtime_r(&secs, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	format_majmin(majmin, e->dev);
	fprintf(f, "%s.%06ld %-5s %-16s %7u %7u %-8s %-7s %-6s %9llu %8llu ", when,
		(long)((v->ts - (double)secs) * 1e6), spt_kind_names[e->kind % SPT_KIND_MAX],
		ESC_FIELD(comm, e->comm), e->pid, e->tid,
		v->devname ? text_esc(devname, sizeof(devname), v->devname) : "?", majmin,
		v->fstype ? text_esc(fstype, sizeof(fstype), v->fstype) : "?",
		(unsigned long long)shown_ino(e->ino), (unsigned long long)e->index);
	if (v->path)
		text_puts(f, v->path);
	else
		fputs("(path unresolved)", f);
	fputc('\n', f);
}

void print_event_json(FILE *f, const struct event_view *v)
{
	const struct spt_event *e = v->e;

	fprintf(f, "{\"type\":\"violation\",\"ts\":%.6f,\"kind\":\"%s\",\"pid\":%u,\"tid\":%u,\"comm\":",
		v->ts, spt_kind_names[e->kind % SPT_KIND_MAX], e->pid, e->tid);
	json_string(f, e->comm);
	fputs(",\"cgroup\":", f);
	json_string(f, v->cgroup);
	fprintf(f, ",\"cgroup_id\":%llu,\"dev\":", (unsigned long long)e->cgroup_id);
	json_dev(f, e->dev);
	fputs(",\"devname\":", f);
	json_string(f, v->devname);
	fputs(",\"fstype\":", f);
	json_string(f, v->fstype);
	fprintf(f, ",\"ino\":%llu,\"index\":%llu,\"offset\":%llu,\"block\":",
		(unsigned long long)shown_ino(e->ino), (unsigned long long)e->index,
		(unsigned long long)e->index * 4096);
	/* the device's block (of the filesystem's block size) where the folio
	 * starts, for a device's own cache; null for a file's page */
	if (e->ino == SPT_INO_BDEV && e->blkbits >= 9 && e->blkbits <= 12)
		fprintf(f, "%llu", (unsigned long long)e->index << (12 - e->blkbits));
	else
		fputs("null", f);
	fputs(",\"path\":", f);
	json_string(f, v->path);
	fprintf(f, ",\"path_resolved\":%s}\n", v->path ? "true" : "false");
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* "Stable pages would have held pid 4242 (postgres) for 1.8 thread-s over 60.0 s: 3.0%",
 * over the time traced: paused time saw nothing. */
static void print_proc_costs(FILE *f, const struct spt_summary *s, size_t top)
{
	double traced = s->duration_s - s->paused_s;
	bool header = false;

	for (size_t i = 0; i < min_size(top, s->nprocs); i++) {
		const struct proc_row *p = &s->procs[i];
		char comm[TEXT_ESC_LEN(SPT_COMM_LEN)];
		double stall = p->s.would_stall_ns / 1e9, waited = p->s.stable_wait_ns / 1e9;

		if (!p->s.would_stall_ns && !p->s.stable_wait_ns)
			continue;
		if (!header)
			fputc('\n', f);
		header = true;
		ESC_FIELD(comm, p->s.comm);
		if (p->s.would_stall_ns)
			fprintf(f, "Stable pages would have held pid %u (%s) for %.3f thread-s over %.1f s: "
				   "%.1f%%\n", p->pid, comm, stall, traced,
				traced > 0 ? 100 * stall / traced : 0.0);
		if (p->s.stable_wait_ns)
			fprintf(f, "Stable waits held pid %u (%s) for %.3f thread-s over %.1f s: %.1f%%\n",
				p->pid, comm, waited, traced,
				traced > 0 ? 100 * waited / traced : 0.0);
	}
}

/* The totals: the lines a summary always has, then those it has only when they
 * say something (rows dropped; the fentry-only counters). */
static void print_totals_text(FILE *f, const struct spt_summary *s)
{
	const struct spt_totals *t = &s->totals;

	if (s->paused_s > 0)
		fprintf(f, "\nTraced %.1f s (%.1f s paused of %.1f s).", s->duration_s - s->paused_s,
			s->paused_s, s->duration_s);
	else
		fprintf(f, "\nTraced %.1f s.", s->duration_s);
	fprintf(f, " Violations: %llu (", (unsigned long long)kinds_total(t->violations));
	for (int k = 0; k < SPT_KIND_MAX; k++)
		fprintf(f, "%s%s %llu", k ? ", " : "", spt_kind_names[k],
			(unsigned long long)t->violations[k]);
	fputs(")\n", f);
	fprintf(f, "Stable waits: %llu (writers slept until writeback ended); other writeback "
		   "waits: %llu\n",
		(unsigned long long)stable_waits(t->waits), (unsigned long long)t->waits[2]);
	fprintf(f, "Dirtied under writeback where the kernel then waits (stable writes): %llu\n",
		(unsigned long long)t->stable_dirtied);
	fprintf(f, "Events lost (counted, not streamed): %llu\n", (unsigned long long)t->events_lost);
	fprintf(f, "Violations whose write then failed (device error after write() succeeded): %llu\n",
		(unsigned long long)t->failed_after_violation);
	if (t->agg_dropped)
		fprintf(f, "Per-process/file table full, rows dropped (totals exact): %llu\n",
			(unsigned long long)t->agg_dropped);
	fprintf(f, "Would-stall timed: %llu, untimed: %llu, I/O still in flight: %llu; "
		   "waits timed: %llu, untimed: %llu, still waiting: %llu\n",
		(unsigned long long)hists_count(s, SPT_HIST_WOULD_STALL, -1),
		(unsigned long long)t->would_stall_untimed,
		(unsigned long long)s->would_stall_pending,
		(unsigned long long)hists_count(s, SPT_HIST_WAIT, -1),
		(unsigned long long)t->wait_untimed, (unsigned long long)s->waits_pending);
	/* Counted in fentry mode only. */
	if (s->attach_mode && !strcmp(s->attach_mode, "fentry"))
		fprintf(f, "Dirtied under writeback in page_mkwrite, I/O ended before the store: %llu; "
			   "folio writebacks untimed: %llu\n",
			(unsigned long long)t->mkwrite_io_ended,
			(unsigned long long)t->writeback_untimed);
}

/* The tables' kind columns (MMAP WRITE OTHER METADATA), in enum spt_kind
 * order, each 10 wide and preceded by a space but the first. */
static void print_kind_columns(FILE *f, const __u64 v[SPT_KIND_MAX])
{
	for (int k = 0; k < SPT_KIND_MAX; k++)
		fprintf(f, "%s%10llu", k ? " " : "", (unsigned long long)v[k]);
}

static void print_kind_headers(FILE *f)
{
	for (int k = 0; k < SPT_KIND_MAX; k++) {
		char name[16];
		int i = 0;

		for (; spt_kind_names[k][i] && i < 15; i++)
			name[i] = (char)toupper((unsigned char)spt_kind_names[k][i]);
		name[i] = 0;
		fprintf(f, "%s%10s", k ? " " : "", name);
	}
}

/* Every device: --top limits processes and files only. */
static void print_devs_text(FILE *f, const struct spt_summary *s)
{
	if (!s->ndevs)
		return;
	fprintf(f, "\n%-10s %-8s %-8s %-6s ", "DEVICE", "MAJ:MIN", "FSTYPE", "STABLE");
	print_kind_headers(f);
	fprintf(f, " %12s\n", "STABLE_WAITS");
	for (size_t i = 0; i < s->ndevs; i++) {
		const struct dev_row *d = &s->devs[i];
		char majmin[16], devname[TEXT_ESC_LEN(sizeof(d->s.devname))],
			fstype[TEXT_ESC_LEN(sizeof(d->s.fstype))];

		format_majmin(majmin, d->dev);
		fprintf(f, "%-10s %-8s %-8s %-6s ", ESC_FIELD(devname, d->s.devname),
			majmin, ESC_FIELD(fstype, d->s.fstype),
			d->s.stable ? "yes" : "no");
		print_kind_columns(f, d->s.violations);
		fprintf(f, " %12llu\n", (unsigned long long)stable_waits(d->s.waits));
	}
}

/* The --top processes; the header even when --top is 0, as long as there are rows. */
static void print_procs_text(FILE *f, const struct spt_summary *s, size_t top)
{
	if (!s->nprocs)
		return;
	fprintf(f, "\n%7s %-16s ", "PID", "COMM");
	print_kind_headers(f);
	fprintf(f, " %12s\n", "STABLE_WAITS");
	for (size_t i = 0; i < min_size(top, s->nprocs); i++) {
		const struct proc_row *p = &s->procs[i];
		char comm[TEXT_ESC_LEN(SPT_COMM_LEN)];

		fprintf(f, "%7u %-16s ", p->pid, ESC_FIELD(comm, p->s.comm));
		print_kind_columns(f, p->s.violations);
		fprintf(f, " %12llu\n", (unsigned long long)stable_waits(p->s.waits));
	}
}

/* The --top cgroups (by cgroup v2 path), and what no row holds when the
 * writer table was full; the header even when --top is 0, as long as there
 * are rows. */
static void print_cgroups_text(FILE *f, const struct spt_summary *s, size_t top)
{
	__u64 lost = s->totals.agg_dropped ? cgroups_unattributed(s) : 0;

	if (!s->ncgroups)
		return;
	fputc('\n', f);
	print_kind_headers(f);
	fprintf(f, "  CGROUP\n");
	for (size_t i = 0; i < min_size(top, s->ncgroups); i++) {
		const struct cgroup_row *r = &s->cgroups[i];

		print_kind_columns(f, r->violations);
		if (r->path) {
			fputs("  ", f);
			text_puts(f, r->path);
			fputc('\n', f);
		} else {
			fprintf(f, "  (cgroup id %llu, gone)\n", (unsigned long long)r->id);
		}
	}
	if (lost)
		fprintf(f, "%32llu  (no row: table full)\n", (unsigned long long)lost);
}

/* The --top files; the header even when --top is 0, as long as there are rows. */
static void print_files_text(FILE *f, const struct spt_summary *s, size_t top)
{
	if (!s->nfiles)
		return;
	fprintf(f, "\n%-8s %10s ", "MAJ:MIN", "INO");
	print_kind_headers(f);
	fprintf(f, "  %s\n", "PATH");
	for (size_t i = 0; i < min_size(top, s->nfiles); i++) {
		const struct file_row *r = &s->files[i];
		char majmin[16];

		format_majmin(majmin, r->key.dev);
		fprintf(f, "%-8s %10llu ", majmin, (unsigned long long)shown_ino(r->key.ino));
		print_kind_columns(f, r->s.violations);
		fputs("  ", f);
		text_puts(f, r->path ? r->path : "(path unresolved)");
		fputc('\n', f);
	}
}

/* The caller sorted the rows (summary.c: sort_devs, sort_procs, sort_files);
 * print_summary_json writes the same rows in the same order. */
void print_summary_text(FILE *f, const struct spt_summary *s, size_t top)
{
	print_totals_text(f, s);
	print_proc_costs(f, s, top);
	if (s->hold)
		hold_print_text(f, s->hold, &s->totals, s->hold_action);
	print_devs_text(f, s);
	print_cgroups_text(f, s, top);
	print_procs_text(f, s, top);
	print_files_text(f, s, top);
	if (s->verify)
		fputc('\n', f), print_verify_text(f, s->verify, top);
}

/* The totals' members, after "type" and "attach_mode": the same keys in every
 * attach mode, 0 where a mode does not count. */
static void json_totals(FILE *f, const struct spt_summary *s)
{
	const struct spt_totals *t = &s->totals;

	fprintf(f, "\"duration_s\":%.3f,\"paused_s\":%.3f,\"violations\":", s->duration_s,
		s->paused_s);
	json_kinds(f, t->violations);
	fprintf(f, ",\"violations_total\":%llu,\"stable_waits\":%llu,\"other_waits\":%llu,"
		   "\"stable_dirtied\":%llu,\"events_lost\":%llu,\"rows_dropped\":%llu",
		(unsigned long long)kinds_total(t->violations),
		(unsigned long long)stable_waits(t->waits), (unsigned long long)t->waits[2],
		(unsigned long long)t->stable_dirtied, (unsigned long long)t->events_lost,
		(unsigned long long)t->agg_dropped);
	fprintf(f, ",\"would_stall_untimed\":%llu,\"would_stall_pending\":%llu,"
		   "\"wait_untimed\":%llu,\"waits_pending\":%llu",
		(unsigned long long)t->would_stall_untimed,
		(unsigned long long)s->would_stall_pending, (unsigned long long)t->wait_untimed,
		(unsigned long long)s->waits_pending);
	fprintf(f, ",\"mkwrite_io_ended\":%llu,\"writeback_untimed\":%llu",
		(unsigned long long)t->mkwrite_io_ended, (unsigned long long)t->writeback_untimed);
	fprintf(f, ",\"failed_after_violation\":%llu", (unsigned long long)t->failed_after_violation);
}

/* Each json_* array printer writes ",\"NAME\":[...]", its leading comma
 * included: print_summary_json calls them one after the other. */
static void json_devices(FILE *f, const struct spt_summary *s)
{
	fputs(",\"devices\":[", f);
	for (size_t i = 0; i < s->ndevs; i++) {
		const struct dev_row *d = &s->devs[i];

		fputs(i ? ",{\"dev\":" : "{\"dev\":", f);
		json_dev(f, d->dev);
		fputs(",\"devname\":", f);
		json_string(f, d->s.devname);
		fputs(",\"fstype\":", f);
		json_string(f, d->s.fstype);
		fprintf(f, ",\"stable_writes\":%s,\"violations\":", d->s.stable ? "true" : "false");
		json_kinds(f, d->s.violations);
		fprintf(f, ",\"stable_waits\":%llu,\"other_waits\":%llu,\"stable_dirtied\":%llu,"
			   "\"failed_after_violation\":%llu}",
			(unsigned long long)stable_waits(d->s.waits),
			(unsigned long long)d->s.waits[2], (unsigned long long)d->s.stable_dirtied,
			(unsigned long long)d->s.failed_after_violation);
	}
	fputc(']', f);
}

static void json_top_processes(FILE *f, const struct spt_summary *s, size_t top)
{
	fputs(",\"top_processes\":[", f);
	for (size_t i = 0; i < min_size(top, s->nprocs); i++) {
		const struct proc_row *p = &s->procs[i];

		fprintf(f, "%s{\"pid\":%u,\"comm\":", i ? "," : "", p->pid);
		json_string(f, p->s.comm);
		fputs(",\"violations\":", f);
		json_kinds(f, p->s.violations);
		fprintf(f, ",\"total\":%llu,\"stable_waits\":%llu,\"would_stall_ns\":%llu,"
			   "\"stable_wait_ns\":%llu,\"failed_after_violation\":%llu}",
			(unsigned long long)kinds_total(p->s.violations),
			(unsigned long long)stable_waits(p->s.waits),
			(unsigned long long)p->s.would_stall_ns,
			(unsigned long long)p->s.stable_wait_ns,
			(unsigned long long)p->s.failed_after_violation);
	}
	fputc(']', f);
}

static void json_top_cgroups(FILE *f, const struct spt_summary *s, size_t top)
{
	fputs(",\"top_cgroups\":[", f);
	for (size_t i = 0; i < min_size(top, s->ncgroups); i++) {
		const struct cgroup_row *r = &s->cgroups[i];

		fprintf(f, "%s{\"cgroup_id\":%llu,\"cgroup\":", i ? "," : "",
			(unsigned long long)r->id);
		json_string(f, r->path);
		fputs(",\"violations\":", f);
		json_kinds(f, r->violations);
		fprintf(f, ",\"total\":%llu}", (unsigned long long)kinds_total(r->violations));
	}
	fprintf(f, "],\"cgroups_total\":%zu,\"cgroups_unattributed\":%llu", s->ncgroups,
		(unsigned long long)(s->totals.agg_dropped ? cgroups_unattributed(s) : 0));
}

static void json_top_files(FILE *f, const struct spt_summary *s, size_t top)
{
	fputs(",\"top_files\":[", f);
	for (size_t i = 0; i < min_size(top, s->nfiles); i++) {
		const struct file_row *r = &s->files[i];

		fputs(i ? ",{\"dev\":" : "{\"dev\":", f);
		json_dev(f, r->key.dev);
		fprintf(f, ",\"ino\":%llu,\"path\":", (unsigned long long)shown_ino(r->key.ino));
		json_string(f, r->path);
		fputs(",\"violations\":", f);
		json_kinds(f, r->s.violations);
		fprintf(f, ",\"total\":%llu,\"last_pid\":%u,\"failed_after_violation\":%llu}",
			(unsigned long long)kinds_total(r->s.violations), r->s.last_pid,
			(unsigned long long)r->s.failed_after_violation);
	}
	fputc(']', f);
}

/* Every histogram row with all SPT_HIST_SLOTS slots, trailing empty ones too
 * (print_log2_hist stops at the last non-empty one): index i is slot i. */
static void json_histograms(FILE *f, const struct spt_summary *s)
{
	fputs(",\"histograms\":[", f);
	for (size_t i = 0; i < s->nhists; i++) {
		const struct hist_row *r = &s->hists[i];

		fprintf(f, "%s{\"name\":\"%s\",\"dev\":", i ? "," : "", hist_name(&r->key));
		json_dev(f, r->key.dev);
		fputs(",\"device\":", f);
		json_string(f, r->device);
		fprintf(f, ",\"kind\":\"%s\",\"count\":%llu,\"sum_ns\":%llu,\"usecs_log2\":[",
			hist_per_device(r->key.type) ? "" : spt_kind_names[r->key.kind % SPT_KIND_MAX],
			(unsigned long long)r->h.count, (unsigned long long)r->h.sum_ns);
		for (int k = 0; k < SPT_HIST_SLOTS; k++)
			fprintf(f, "%s%llu", k ? "," : "", (unsigned long long)r->h.slots[k]);
		fputs("]}", f);
	}
	fputc(']', f);
}

/* "ts" and "time" (ISO 8601, UTC) of the counts, "since_ts" of their start,
 * and for an interval its number and whether it is a delta. */
static void json_wall_clock(FILE *f, const struct spt_summary *s)
{
	time_t secs = (time_t)s->ts;
	char when[32];
	struct tm tm;

	gmtime_r(&secs, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(f, "\"ts\":%.6f,\"time\":\"%s.%03dZ\",\"since_ts\":%.6f,", s->ts, when,
		(int)((s->ts - (double)secs) * 1000), s->since_ts);
	if (s->interval)
		fprintf(f, "\"seq\":%lu,\"delta\":%s,", s->seq, s->delta ? "true" : "false");
}

/* One line, one object: the rows of print_summary_text, in its order, and the
 * histograms (which the text prints apart, print_hists_text). */
void print_summary_json(FILE *f, const struct spt_summary *s, size_t top)
{
	fprintf(f, "{\"type\":\"%s\",", s->interval ? "interval" : "summary");
	if (s->ts)
		json_wall_clock(f, s);
	if (s->attach_mode)
		fprintf(f, "\"attach_mode\":\"%s\",", s->attach_mode);
	if (s->kernel) {
		fputs("\"kernel\":", f);
		json_string(f, s->kernel);
		fputc(',', f);
	}
	json_totals(f, s);
	if (s->hold)
		hold_print_json(f, s->hold, &s->totals, s->hold_action, s->write_hold);
	json_devices(f, s);
	json_top_processes(f, s, top);
	json_top_cgroups(f, s, top);
	json_top_files(f, s, top);
	json_histograms(f, s);
	if (s->verify)
		print_verify_json(f, s->verify, top);
	fputs("}\n", f);
}

static const char *const hist_what[SPT_HIST_MAX] = {
	[SPT_HIST_WRITEBACK] = "write requests, allocation -> completion",
	[SPT_HIST_WAIT] = "sleeps in folio_wait_writeback until running again",
	[SPT_HIST_WOULD_STALL] = "violation -> end of the folio's I/O",
	[SPT_HIST_FOLIO_WRITEBACK] = "one folio, writeback start -> end",
};

void print_log2_hist(FILE *f, const __u64 slots[SPT_HIST_SLOTS])
{
	int last = -1, stars_max = 40;
	__u64 max = 0;

	for (int i = 0; i < SPT_HIST_SLOTS; i++) {
		if (slots[i])
			last = i;
		if (slots[i] > max)
			max = slots[i];
	}
	if (last < 0)
		return;
	fprintf(f, "%*s%-*s : count    distribution\n", 5, "", 19, "usecs");
	for (int i = 0; i <= last; i++) {
		unsigned long long low = i ? 1ULL << i : 0, high = (1ULL << (i + 1)) - 1;
		int stars = (int)(slots[i] * stars_max / max);

		/* The last slot has no upper bound. */
		if (i == SPT_HIST_SLOTS - 1)
			fprintf(f, "%10llu -> %-10s", low, "...");
		else
			fprintf(f, "%10llu -> %-10llu", low, high);
		fprintf(f, " : %-8llu |%-*.*s|\n", (unsigned long long)slots[i], stars_max, stars,
			"****************************************");
	}
}

void print_hists_text(FILE *f, const struct spt_summary *s)
{
	for (size_t i = 0; i < s->nhists; i++) {
		const struct hist_row *r = &s->hists[i];

		fprintf(f, "\n%s on ", hist_name(&r->key));
		text_puts(f, r->device);
		if (!hist_per_device(r->key.type))
			fprintf(f, ", %s", spt_kind_names[r->key.kind]);
		fprintf(f, " (%s): %llu, avg %.1f us\n", hist_what[r->key.type],
			(unsigned long long)r->h.count,
			r->h.count ? r->h.sum_ns / 1e3 / r->h.count : 0.0);
		print_log2_hist(f, r->h.slots);
	}
}

