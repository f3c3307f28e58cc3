// SPDX-License-Identifier: GPL-2.0
/* Printing the summary, the histograms and the events as text (as JSON:
 * report_json.c); rows.c prepares what is printed. */
#include <ctype.h>
#include <string.h>
#include <time.h>
#include "escape.h"
#include "parse.h"
#include "report.h"

void format_majmin(char buf[16], __u32 dev)
{
	snprintf(buf, 16, "%u:%u", spt_kdev_major(dev), spt_kdev_minor(dev));
}

__u64 shown_ino(__u64 ino)
{
	return ino == SPT_INO_BDEV ? 0 : ino;
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

