// SPDX-License-Identifier: GPL-2.0
/*
 * The run's reports: the maps read into a summary, then printed on stdout
 * (every interval, and at the end) and written to the Prometheus file;
 * --delta's intervals from the previous snapshot; --row-age's idle rows
 * out of the maps before each read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "delta.h"
#include "enforce.h"
#include "promdevs.h"
#include "prune.h"
#include "summary.h"
#include "tracer_state.h"

/* An interval report on stdout: the counts since the start, or with --delta
 * those of the interval; -T stamps the text's header with the time. */
static void print_interval(const struct tracer *t, const struct spt_summary *s)
{
	const struct options *o = t->o;
	char when[16] = "";

	if (o->json) {
		print_summary_json(stdout, s, o->top);
		return;
	}
	if (o->timestamps) {
		time_t secs = (time_t)s->ts;
		struct tm tm;

		localtime_r(&secs, &tm);
		strftime(when, sizeof(when), "%H:%M:%S ", &tm);
	}
	if (s->delta)
		printf("\n--- %s%.1f s to %.1f s (counts of this interval) ---\n", when,
		       s->since_ts - t->start_wall, s->ts - t->start_wall);
	else
		printf("\n--- %safter %.1f s (counts since the start) ---\n", when, s->duration_s);
	print_summary_text(stdout, s, o->top);
	if (o->hist)
		print_hists_text(stdout, s);
}

/* --delta: the interval's counts, from this snapshot and the previous one
 * (none before the first: zeros at the start). */
static void print_delta(struct tracer *t, const struct spt_summary *s)
{
	struct spt_summary d, zero = { .ts = t->start_wall };
	int err = summary_delta(&d, s, t->have_prev ? &t->prev : &zero);

	if (!err) {
		summary_resolve(&d, t->o->top);
		print_interval(t, &d);
	} else {
		fprintf(stderr, "stablepage-trace: cannot count the interval: %s\n", strerror(-err));
	}
	summary_free(&d);
}

/*
 * At exit, an interval report too when it says something the summary does
 * not: with --delta the counts since the last report (so the deltas add up
 * to the summary), and the COUNTth report when the run ended at it.
 */
static bool final_interval(const struct tracer *t)
{
	return t->o->interval && (t->o->delta || (t->o->count && t->deadline_reached));
}

/* The Prometheus file, its devices' series from the mounts of now. */
static int write_prom(struct tracer *t, const struct spt_summary *s)
{
	const struct options *o = t->o;
	struct prom_known_dev *known = NULL;
	size_t nknown = 0;
	int err;

	if (prom_known_devs(o->devs, o->ndevs, &known, &nknown))
		nknown = 0; /* out of memory: only the devices with activity */
	t->prom.known = known;
	t->prom.nknown = nknown;
	err = prom_write_file(o->prom_file, s, &t->prom);
	if (err)
		fprintf(stderr, "stablepage-trace: cannot write %s: %s\n", o->prom_file,
			strerror(-err));
	t->prom.known = NULL;
	free(known);
	return err;
}

/* --row-age: idle rows out of the maps, before a report reads them. */
static void age_rows(struct tracer *t)
{
	int err;

	if (!t->row_age)
		return;
	err = prune_rows(t->skel, &t->retired, t->row_age);
	if (err)
		fprintf(stderr, "stablepage-trace: cannot age out rows: %s\n", strerror(-err));
}

/* What the summary says of the run itself, at now: times, holds. */
static void run_facts(const struct tracer *t, struct spt_summary *s, double now)
{
	if (t->holds.on) {
		s->hold = &t->holds.tracker;
		s->hold_action = action_name(t->o->action);
		s->write_hold = write_hold_name(t->plan.write_hold);
	}
	s->ts = now + t->events.realtime_offset;
	s->duration_s = now - t->start;
	s->paused_s = t->paused.total + (t->paused.on ? now - t->paused.since : 0);
}

/* The counts, and --verify's. 0, or -errno after one line (both freed). */
static int read_counts(struct tracer *t, struct spt_summary *s, struct spt_verify_summary *verify)
{
	const struct options *o = t->o;
	int err = summary_read(t->skel, s, o->top);

	if (!err && o->verify_every) {
		err = verify_read(t->skel, o->verify_every, verify, o->top);
		s->verify = verify;
	}
	if (err) {
		fprintf(stderr, "stablepage-trace: cannot read the counters: %s\n", strerror(-err));
		summary_free(s), verify_free(verify);
	}
	return err;
}

/* On stdout: the interval report when one is due, the summary at the end. */
static void print_reports(struct tracer *t, struct spt_summary *s, bool final)
{
	const struct options *o = t->o;

	if (o->interval && (!final || final_interval(t))) {
		s->interval = true;
		s->seq = ++t->nreports;
		if (o->delta)
			print_delta(t, s);
		else
			print_interval(t, s);
		s->interval = false;
	}
	if (final) {
		if (o->json)
			print_summary_json(stdout, s, o->top);
		else
			print_summary_text(stdout, s, o->top);
		if (!o->json && o->hist)
			print_hists_text(stdout, s);
	}
	fflush(stdout);
}

/* --delta: this snapshot, sorted by key, is the next interval's start;
 * summary_sort_by_key keeps its own copy of verify's counts (verify_own),
 * so the verify summary read for this report is freed here. */
static void keep_for_delta(struct tracer *t, struct spt_summary *s,
			   struct spt_verify_summary *verify)
{
	summary_free(&t->prev);
	summary_sort_by_key(s);
	s->verify = NULL;
	verify_free(verify);
	t->prev = *s;
	t->have_prev = true;
}

/*
 * Reads the maps and reports: on stdout at exit and every interval, to the
 * Prometheus file every interval and at exit. The maps count since the
 * start; --delta subtracts the previous snapshot, kept for that.
 */
int tracer_report(struct tracer *t, bool final)
{
	const struct options *o = t->o;
	struct spt_summary s = { .attach_mode = t->prom.attach_mode, .since_ts = t->start_wall,
				 .kernel = t->prom.kernel, .retired = &t->retired,
				 .maps_bytes = t->maps_bytes };
	struct spt_verify_summary verify = {};
	int err;

	run_facts(t, &s, clock_s(CLOCK_MONOTONIC));
	if (!final)
		age_rows(t);
	if (!final && !o->interval && !o->prom_file)
		return 0; /* a tick for --row-age only */
	err = read_counts(t, &s, &verify);
	if (err)
		return err;
	print_reports(t, &s, final);
	if (final && o->cmd == CMD_ENFORCE && o->native)
		t->enforcement_held = enforce_report(&s);
	if (o->prom_file)
		err = write_prom(t, &s);
	if (o->delta && !final) {
		keep_for_delta(t, &s, &verify);
		return err;
	}
	summary_free(&s), verify_free(&verify);
	return err;
}
