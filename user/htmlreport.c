// SPDX-License-Identifier: GPL-2.0
/*
 * `report`: a run's JSON output (runfile.c) as one HTML page. Self-contained:
 * inline CSS and SVG, no script, nothing fetched; every string from the
 * input escaped (html_escape). The tables are in htmltables.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "html.h"
#include "htmlreport.h"
#include "msg.h"

static const char css[] =
	":root{--fg:#1d2430;--muted:#5c6675;--line:#d9dee5;--bg:#f5f7fa;--card:#fff;"
	"--accent:#3b6fb6}\n"
	"*{box-sizing:border-box}\n"
	"body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.45 system-ui,-apple-system,"
	"'Segoe UI',Roboto,'DejaVu Sans',sans-serif}\n"
	"main{max-width:1120px;margin:0 auto;padding:24px 28px 48px}\n"
	"h1{font-size:26px;margin:0 0 4px}h2{font-size:19px;margin:32px 0 10px;padding-bottom:6px;"
	"border-bottom:2px solid var(--line)}\nh3{font-size:15px;margin:18px 0 8px}\n"
	".s{color:var(--muted);font-weight:400}.fine{font-size:13px;margin:6px 0 0}\n"
	".sub{color:var(--muted);margin:0 0 18px}\n"
	".meta{display:grid;grid-template-columns:max-content 1fr;gap:4px 18px;background:var(--card);"
	"border:1px solid var(--line);border-radius:8px;padding:14px 18px;margin:0}\n"
	".meta dt{color:var(--muted)}.meta dd{margin:0;font-weight:600}\n"
	".cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(190px,1fr));gap:12px;"
	"margin:18px 0}\n"
	".card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 16px}"
	"\n.card .n{font-size:28px;font-weight:700;font-variant-numeric:tabular-nums}\n"
	".card .l{color:var(--muted);font-size:13px}.card .d{font-size:13px;margin-top:4px}\n"
	".note{background:#fff8e6;border:1px solid #f0d48a;border-radius:6px;padding:8px 12px;"
	"margin:8px 0;font-size:14px}\n"
	".charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(440px,1fr));gap:14px}\n"
	"figure{margin:0;background:var(--card);border:1px solid var(--line);border-radius:8px;"
	"padding:10px 12px}\nfigcaption{font-size:14px;margin-bottom:4px}\n"
	"svg{width:100%;height:auto;display:block}\n"
	"svg text{font:11px system-ui,'DejaVu Sans',sans-serif;fill:var(--muted)}\n"
	"svg .ylab{text-anchor:end}svg .xlab,svg .val,svg .axis{text-anchor:middle}\n"
	"svg .val{fill:var(--fg);font-size:10px}svg .grid{stroke:#e6e9ee}\n"
	"svg .bar{fill:var(--accent)}svg .bar:hover,svg rect:hover{opacity:.75}\n"
	".legend span{display:inline-block;margin-right:14px;font-size:13px}\n"
	".dot{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px;"
	"vertical-align:-1px}\n"
	"table{border-collapse:collapse;width:100%;background:var(--card);border:1px solid var(--line);"
	"border-radius:8px;overflow:hidden;font-size:14px}\n"
	"th,td{padding:6px 10px;text-align:left;border-bottom:1px solid #edf0f3}\n"
	"th{background:#eef1f5;font-weight:600;font-size:13px}tr:last-child td{border-bottom:0}\n"
	"td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}\n"
	"td.path{font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:13px;"
	"word-break:break-all}\n"
	"td.tot{position:relative;min-width:110px}\n"
	".tb{position:absolute;left:0;top:4px;bottom:4px;background:#dbe6f5;z-index:0}\n"
	".tv{position:relative;z-index:1}\n"
	"footer{color:var(--muted);font-size:13px;margin-top:36px}\n";

/* A number as the page shows counts: whole. */
static void count(FILE *f, double v)
{
	fprintf(f, "%.0f", v);
}

static void page_head(FILE *f, const char *input)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"stablepage-trace " SPT_VERSION "\">\n"
	      "<title>stablepage-trace report: ", f);
	html_escape(f, input);
	fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<main>\n", css);
	fputs("<h1>Writes to pages under writeback</h1>\n<p class=\"sub\">stablepage-trace report of "
	      "<code>", f);
	html_escape(f, input);
	fputs("</code></p>\n", f);
}

static void meta_row(FILE *f, const char *id, const char *label, const char *value,
		     const char *missing)
{
	fprintf(f, "<dt>%s</dt><dd id=\"%s\">", label, id);
	if (value)
		html_escape(f, value);
	else
		fprintf(f, "<span class=\"s\">%s</span>", missing);
	fputs("</dd>\n", f);
}

/* What the run was: where, how, how long, and whether it finished. */
static void page_meta(FILE *f, const struct run *run)
{
	const struct jv *last = &run->last;
	double dur = jv_getnum(last, "duration_s", 0), paused = jv_getnum(last, "paused_s", 0);

	fputs("<dl class=\"meta\" id=\"run-meta\">\n", f);
	meta_row(f, "attach-mode", "Attach mode", run->attach_mode, "not in the input");
	meta_row(f, "kernel", "Kernel", run->kernel,
		 "not in the input (written by a stablepage-trace before 0.1.0's kernel key)");
	fputs("<dt>Traced</dt><dd id=\"duration\">", f);
	if (last->type == JV_OBJECT)
		fprintf(f, "%.1f s", dur - paused);
	else
		fputs("unknown (no summary or interval object)", f);
	if (paused > 0)
		fprintf(f, " (%.1f s paused of %.1f s)", paused, dur);
	fputs("</dd>\n<dt>Counts from</dt><dd id=\"source\">", f);
	if (run->final)
		fputs("the summary at exit", f);
	else if (last->type == JV_OBJECT)
		fprintf(f, "the last interval report, at %.1f s: the run did not finish", dur);
	else
		fputs("the violation events only: the run did not finish", f);
	fprintf(f, "</dd>\n<dt>Events streamed</dt><dd id=\"events\">%zu violation events, "
		   "%zu interval/summary objects</dd>\n</dl>\n", run->nevents, run->npoints);
}

static void card(FILE *f, const char *id, double n, const char *label, const char *detail)
{
	fprintf(f, "<div class=\"card\" id=\"%s\"><div class=\"n\">", id);
	count(f, n);
	fprintf(f, "</div><div class=\"l\">%s</div>", label);
	if (detail)
		fprintf(f, "<div class=\"d\">%s</div>", detail);
	fputs("</div>\n", f);
}

/* The kinds' legend: a coloured square and the name of each. */
static void legend(FILE *f, const double *v)
{
	fputs("<div class=\"legend\">", f);
	for (int k = 0; k < RUN_KINDS; k++) {
		fprintf(f, "<span><i class=\"dot\" style=\"background:%s\"></i>%s", html_kind_colors[k],
			spt_kind_names[k]);
		if (v)
			fprintf(f, " %.0f", v[k]);
		fputs("</span>", f);
	}
	fputs("</div>", f);
}

static void page_cards(FILE *f, const struct run *run)
{
	const struct jv *s = &run->last;
	double v[RUN_KINDS], timed = 0;
	char d[160];
	char *leg = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&leg, &len);

	for (int k = 0; k < RUN_KINDS; k++)
		v[k] = run_kinds(jv_get(s, "violations"), k);
	if (m) {
		legend(m, v);
		fclose(m);
	}
	for (size_t i = 0; i < (jv_array(jv_get(s, "histograms")) ? jv_get(s, "histograms")->n : 0);
	     i++) {
		const struct jv *h = &jv_get(s, "histograms")->items[i];

		if (jv_str(jv_get(h, "name")) && !strcmp(jv_str(jv_get(h, "name")), "would-stall"))
			timed += jv_getnum(h, "count", 0);
	}
	fputs("<section class=\"cards\">\n", f);
	card(f, "violations", s->type == JV_OBJECT ? jv_getnum(s, "violations_total", 0) :
						    (double)run->nevents,
	     "violations (writes to pages under writeback)", leg);
	card(f, "stable-waits", jv_getnum(s, "stable_waits", 0),
	     "stable waits (writers slept until writeback ended)", NULL);
	card(f, "other-waits", jv_getnum(s, "other_waits", 0),
	     "other writeback waits (fsync, msync, truncate)", NULL);
	snprintf(d, sizeof(d), "untimed %.0f, I/O in flight %.0f",
		 jv_getnum(s, "would_stall_untimed", 0), jv_getnum(s, "would_stall_pending", 0));
	card(f, "would-stall-timed", timed, "would-stalls timed", d);
	card(f, "events-lost", jv_getnum(s, "events_lost", 0),
	     "events lost (counted, not streamed)", NULL);
	fputs("</section>\n", f);
	free(leg);
}

struct hist_kind {
	const char *name, *what, *empty; /* empty: NULL to leave it out when absent */
};

static const struct hist_kind hist_kinds[] = {
	{ "would-stall", "a violation → the end of that folio's I/O: what the writer would have "
	  "waited had stable pages been enforced", "no violation was timed" },
	{ "writeback", "write requests on the device, allocation → completion",
	  "no write request completed while traced (or the queue keeps no I/O statistics)" },
	{ "stable-wait", "writers asleep in folio_wait_writeback() until running again: the "
	  "measured cost of stable pages", "no writer waited for writeback (no device here "
	  "requires stable writes)" },
	{ "other-wait", "fsync, msync, truncate and kernel-thread waits", NULL },
	{ "folio-writeback", "fentry mode: one folio's writeback, start → end", NULL },
};

/* The slot holding the q-quantile of the samples: "64 µs – 128 µs". */
static void quantile_slot(char *buf, size_t len, const double *slots, int n, double q)
{
	double total = 0, acc = 0;
	char lo[24], hi[24];
	int i;

	for (i = 0; i < n; i++)
		total += slots[i];
	for (i = 0; i < n - 1; i++)
		if ((acc += slots[i]) >= q * total)
			break;
	html_usecs(lo, sizeof(lo), i ? ldexp(1, i) : 0);
	html_usecs(hi, sizeof(hi), ldexp(1, i + 1));
	snprintf(buf, len, "%s–%s", lo, i == n - 1 ? "" : hi);
}

static void hist_figure(FILE *f, const struct jv *h, const char *name)
{
	const struct jv *u = jv_array(jv_get(h, "usecs_log2"));
	const char *kind = jv_str(jv_get(h, "kind")), *dev = jv_str(jv_get(h, "device"));
	double slots[64] = { 0 }, n = jv_getnum(h, "count", 0), sum = jv_getnum(h, "sum_ns", 0);
	int nslots = u ? (int)(u->n < 64 ? u->n : 64) : 0;
	char label[256], avg[32], p50[64], p99[64];

	for (int i = 0; i < nslots; i++)
		slots[i] = jv_num(&u->items[i], 0);
	html_usecs(avg, sizeof(avg), n > 0 ? sum / 1e3 / n : 0);
	quantile_slot(p50, sizeof(p50), slots, nslots, 0.5);
	quantile_slot(p99, sizeof(p99), slots, nslots, 0.99);
	snprintf(label, sizeof(label), "%s histogram on %s%s%s", name, dev ? dev : "?",
		 kind && *kind ? ", " : "", kind ? kind : "");
	fputs("<figure class=\"chart\" data-hist=\"", f);
	html_escape(f, name);
	fputs("\"><figcaption><b>", f);
	html_escape(f, dev ? dev : "?");
	if (kind && *kind) {
		fputs("</b> · <b>", f);
		html_escape(f, kind);
	}
	fprintf(f, "</b> <span class=\"s\">— %.0f samples, average %s, median in %s, "
		   "99th percentile in %s</span></figcaption>\n", n, avg, p50, p99);
	svg_histogram(f, slots, nslots ? nslots : 28, label);
	fputs("</figure>\n", f);
}

static void page_histograms(FILE *f, const struct run *run)
{
	const struct jv *hs = jv_array(jv_get(&run->last, "histograms"));

	fputs("<h2 id=\"histograms\">Latency histograms</h2>\n", f);
	for (size_t k = 0; k < sizeof(hist_kinds) / sizeof(hist_kinds[0]); k++) {
		const struct hist_kind *hk = &hist_kinds[k];
		size_t found = 0;

		for (size_t i = 0; hs && i < hs->n; i++)
			found += jv_str(jv_get(&hs->items[i], "name")) &&
				 !strcmp(jv_str(jv_get(&hs->items[i], "name")), hk->name);
		if (!found && !hk->empty)
			continue;
		fprintf(f, "<h3>%s <span class=\"s\">— %s</span></h3>\n", hk->name, hk->what);
		if (!found) {
			fprintf(f, "<p class=\"note\" data-hist-empty=\"%s\">No samples: %s.</p>\n",
				hk->name, hk->empty);
			continue;
		}
		fputs("<div class=\"charts\">\n", f);
		for (size_t i = 0; i < hs->n; i++)
			if (!strcmp(jv_str(jv_get(&hs->items[i], "name")) ?: "", hk->name))
				hist_figure(f, &hs->items[i], hk->name);
		fputs("</div>\n", f);
	}
}

/* A bin width of 1, 2 or 5 times a power of ten giving at most 80 bins
 * (span >= 1 s). */
static double bin_width(double span)
{
	static const double m[] = { 1, 2, 5 };

	for (double base = pow(10, floor(log10(span / 80)));; base *= 10)
		for (int i = 0; i < 3; i++)
			if (span / (m[i] * base) <= 80)
				return m[i] * base;
}

/* Violations over time from the event stream: bins from the first event. */
static void timeline_events(FILE *f, const struct run *run)
{
	double t0 = INFINITY, t1 = -INFINITY, w;
	struct svg_bin *bins;
	char xlabel[96];
	int n;

	for (size_t i = 0; i < run->nevents; i++) {
		t0 = fmin(t0, run->ev_ts[i]);
		t1 = fmax(t1, run->ev_ts[i]);
	}
	/* Times are the input's: a span past 30 years is not a run's. */
	w = bin_width(fmin(fmax(t1 - t0, 1), 1e9));
	n = (int)fmin(floor((t1 - t0) / w), 80) + 1;
	bins = calloc(n, sizeof(*bins));
	if (!bins)
		return;
	for (int i = 0; i < n; i++) {
		bins[i].t0 = i * w;
		bins[i].t1 = (i + 1) * w;
	}
	for (size_t i = 0; i < run->nevents; i++)
		bins[(int)fmin(floor((run->ev_ts[i] - t0) / w), n - 1)].v[run->ev_kind[i]]++;
	snprintf(xlabel, sizeof(xlabel), "seconds since the first violation event (bars of %g s)", w);
	svg_timeline(f, bins, n, "violations over time, from the first violation event", xlabel);
	fprintf(f, "<p class=\"s fine\">From the %zu violation events, time 0 at the first.</p>\n",
		run->nevents);
	free(bins);
}

/* From the interval (and summary) objects: the counts added between two. */
static void timeline_points(FILE *f, const struct run *run)
{
	struct svg_bin *bins = calloc(run->npoints, sizeof(*bins));

	if (!bins)
		return;
	for (size_t i = 0; i < run->npoints; i++) {
		bins[i].t0 = i ? run->points[i - 1].t : 0;
		bins[i].t1 = run->points[i].t;
		for (int k = 0; k < RUN_KINDS; k++)
			bins[i].v[k] = run->points[i].v[k] - (i ? run->points[i - 1].v[k] : 0);
	}
	svg_timeline(f, bins, (int)run->npoints, "violations per interval report",
		     "seconds since the start (a bar per interval report)");
	fprintf(f, "<p class=\"s fine\">From %zu interval/summary objects (cumulative counts, "
		   "shown as what each added).%s</p>\n", run->npoints,
		run->npoints == 1 ? " One object only: run with --json without -q for the events, "
				    "or -i SECS for interval reports." : "");
	free(bins);
}

static void page_timeline(FILE *f, const struct run *run)
{
	double lost = jv_getnum(&run->last, "events_lost", 0);

	fputs("<h2 id=\"timeline\">Violations over time</h2>\n<figure class=\"chart\">", f);
	legend(f, NULL);
	if (run->nevents)
		timeline_events(f, run);
	else
		timeline_points(f, run);
	fputs("</figure>\n", f);
	if (run->nevents && lost > 0)
		fprintf(f, "<p class=\"note\">The event stream lost %.0f violations (its ring buffer "
			   "was full): the chart shows the %zu streamed; the counts above are "
			   "exact.</p>\n", lost, run->nevents);
}

void html_report(FILE *f, const struct run *run, const char *input)
{
	page_head(f, input);
	page_meta(f, run);
	page_cards(f, run);
	page_histograms(f, run);
	page_timeline(f, run);
	html_tables(f, run);
	fputs("<footer>Made by stablepage-trace " SPT_VERSION " from its JSON output. A violation is "
	      "a write that dirties a page-cache folio while the device writes it (PG_writeback) "
	      "on a mapping that does not wait for writeback first; the histograms are log2 "
	      "buckets of microseconds (docs/metrics.md, docs/report.md).</footer>\n"
	      "</main>\n</body>\n</html>\n", f);
}

static void __attribute__((noreturn, format(printf, 2, 3))) report_fail(int code, const char *fmt,
									 ...)
{
	va_list ap;

	va_start(ap, fmt);
	spt_vmsg("", fmt, ap);
	va_end(ap);
	exit(code);
}

int report_run(const struct options *o)
{
	struct run run;
	char err[512];
	FILE *f = stdout;

	if (run_load_file(&run, o->report_in, err, sizeof(err)))
		report_fail(EXIT_USAGE, "report: %s: %s", o->report_in, err);
	if (o->report_out && !(f = fopen(o->report_out, "we")))
		report_fail(EXIT_RUNTIME, "report: cannot write %s: %s", o->report_out,
			    strerror(errno));
	html_report(f, &run, o->report_in);
	run_free(&run);
	if (fflush(f) || ferror(f) || (f != stdout && fclose(f)))
		report_fail(EXIT_RUNTIME, "report: writing %s: %s",
			    o->report_out ? o->report_out : "stdout", strerror(errno));
	return 0;
}
