// SPDX-License-Identifier: GPL-2.0
/* The summary and the events as JSON, one object a line: the rows of the
 * text (report.c) in its order, and the histograms. */
#include <math.h>
#include <string.h>
#include <time.h>
#include "json.h"
#include "report.h"

/* {"mmap":N,"write":N,"other":N,"metadata":N}: one key per enum spt_kind */
static void json_kinds(FILE *f, const __u64 v[SPT_KIND_MAX])
{
	for (int k = 0; k < SPT_KIND_MAX; k++)
		fprintf(f, "%s\"%s\":%llu", k ? "," : "{", spt_kind_names[k],
			(unsigned long long)v[k]);
	fputc('}', f);
}

static void json_dev(FILE *f, __u32 dev)
{
	char majmin[16];

	format_majmin(majmin, dev);
	fprintf(f, "\"%s\"", majmin);
}

void print_event_json(FILE *f, const struct event_view *v)
{
	const struct spt_event *e = v->e;
	/* The microseconds as integers: printf's %.6f of a double computes
	 * its digits in multi-precision arithmetic, once per event. */
	unsigned long long us = v->ts > 0 ? llround(v->ts * 1e6) : 0;

	fprintf(f, "{\"type\":\"violation\",\"ts\":%llu.%06llu,\"kind\":\"%s\",\"pid\":%u,"
		   "\"tid\":%u,\"comm\":",
		us / 1000000, us % 1000000, spt_kind_names[e->kind % SPT_KIND_MAX], e->pid, e->tid);
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
	if (s->maps_bytes)
		fprintf(f, "\"bpf_maps_bytes\":%llu,", (unsigned long long)s->maps_bytes);
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
