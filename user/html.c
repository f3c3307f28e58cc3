// SPDX-License-Identifier: GPL-2.0
/*
 * HTML escaping and the report's SVG charts: plain markup, no script, so the
 * page shows the same with JavaScript off and prints. Every string from the
 * input goes through html_escape; the charts print numbers only, and their
 * labels escaped.
 */
#include <math.h>
#include <string.h>
#include "html.h"
#include "json.h"
#include "report.h"

const char *const html_kind_colors[SPT_KIND_MAX] = { "#3b6fb6", "#e8833a", "#5aa89a", "#9b6bb3" };

void html_escape(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		int n;

		switch (*p) {
		case '&': fputs("&amp;", f); continue;
		case '<': fputs("&lt;", f); continue;
		case '>': fputs("&gt;", f); continue;
		case '"': fputs("&quot;", f); continue;
		case '\'': fputs("&#39;", f); continue;
		}
		if (*p == '\t' || *p == '\n') {
			fputc(' ', f);
		} else if (*p < 0x20 || *p == 0x7f) {
			fputs("\xef\xbf\xbd", f);
		} else if (*p < 0x80) {
			fputc(*p, f);
		} else if ((n = utf8_seq_len(p)) && !(p[0] == 0xc2 && p[1] < 0xa0)) {
			fwrite(p, 1, n, f);
			p += n - 1;
		} else if (n) { /* C1 controls: HTML's parse errors */
			fputs("\xef\xbf\xbd", f);
			p += n - 1;
		} else {
			fputs("\xef\xbf\xbd", f);
		}
	}
}

void html_usecs(char *buf, size_t len, double us)
{
	static const struct { double div; const char *unit; } units[] = {
		{ 1e6, "s" }, { 1e3, "ms" }, { 1, "µs" },
	};
	int u = us >= 1e6 ? 0 : us >= 1e3 ? 1 : 2;
	double v = us / units[u].div;

	snprintf(buf, len, v > 0 && v < 10 && v != floor(v) ? "%.1f %s" : "%.0f %s", v,
		 units[u].unit);
}

/* 950, 12.3k, 4.5M: counts on axes and bars. */
static void short_count(char *buf, size_t len, double v)
{
	if (v >= 1e6)
		snprintf(buf, len, "%.3gM", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, len, "%.3gk", v / 1e3);
	else
		snprintf(buf, len, "%.3g", v);
}

/* The axis' top: max rounded up to 1, 2 or 5 times a power of ten. */
static double nice_max(double max)
{
	double p;

	if (max <= 5) /* whole counts on the axis */
		return 5;
	p = pow(10, floor(log10(max)));
	return max <= p ? p : max <= 2 * p ? 2 * p : max <= 5 * p ? 5 * p : 10 * p;
}

/* The chart's frame: the svg element, the y axis' grid lines and labels. */
struct frame {
	double w, h, left, right, top, bottom, ymax;
};

/* Grid lines on round numbers: a top of 2·10^k in steps of 0.5·10^k, 1 or 5·10^k in
 * steps of 0.2 or 1·10^k. */
static int frame_ticks(const struct frame *fr)
{
	double lead = fr->ymax / pow(10, floor(log10(fr->ymax)));

	return lead > 1.5 && lead < 2.5 ? 4 : 5;
}

static void frame_open(FILE *f, const struct frame *fr, const char *cls, const char *label)
{
	char num[32];

	fprintf(f, "<svg class=\"%s\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"", cls,
		fr->w, fr->h);
	html_escape(f, label);
	fputs("\" xmlns=\"http://www.w3.org/2000/svg\">\n", f);
	int ticks = frame_ticks(fr);

	for (int i = 0; i <= ticks; i++) {
		double y = fr->top + (fr->h - fr->top - fr->bottom) * (1 - (double)i / ticks);

		short_count(num, sizeof(num), fr->ymax * i / ticks);
		fprintf(f, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
			   "<text class=\"ylab\" x=\"%.1f\" y=\"%.1f\">%s</text>\n",
			fr->left, fr->w - fr->right, y, y, fr->left - 6, y + 4, num);
	}
}

static double frame_y(const struct frame *fr, double v)
{
	return fr->top + (fr->h - fr->top - fr->bottom) * (1 - v / fr->ymax);
}

/* The non-empty slots, widened to at least 8 for a readable shape. */
static void slot_range(const double *slots, int n, int *lo, int *hi)
{
	*lo = n;
	*hi = -1;
	for (int i = 0; i < n; i++)
		if (slots[i] > 0) {
			*lo = *lo < i ? *lo : i;
			*hi = i;
		}
	if (*hi < 0)
		*lo = 0, *hi = 7;
	while (*hi - *lo < 7 && (*lo > 0 || *hi < n - 1)) {
		if (*hi < n - 1)
			(*hi)++;
		if (*hi - *lo < 7 && *lo > 0)
			(*lo)--;
	}
}

/* The x axis: slot boundaries 2^i µs, every step-th labelled. */
static void histogram_xaxis(FILE *f, const struct frame *fr, int lo, int hi, int nslots)
{
	double bw = (fr->w - fr->left - fr->right) / (hi - lo + 1);
	int step = (hi - lo + 1 + 9) / 10;
	char lab[32];

	for (int i = lo; i <= hi + 1; i += step) {
		double x = fr->left + (i - lo) * bw;

		if (i == nslots)
			snprintf(lab, sizeof(lab), "∞");
		else
			html_usecs(lab, sizeof(lab), i ? ldexp(1, i) : 0);
		fprintf(f, "<text class=\"xlab\" x=\"%.1f\" y=\"%.1f\">%s</text>\n", x,
			fr->h - fr->bottom + 16, lab);
	}
	fprintf(f, "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\">duration (log2 buckets)</text>\n",
		fr->left + (fr->w - fr->left - fr->right) / 2, fr->h - 4);
}

void svg_histogram(FILE *f, const double *slots, int nslots, const char *label)
{
	struct frame fr = { .w = 560, .h = 220, .left = 46, .right = 24, .top = 14, .bottom = 42 };
	double max = 0, bw;
	int lo, hi;
	char lab[32], from[32], to[32];

	slot_range(slots, nslots, &lo, &hi);
	for (int i = lo; i <= hi; i++)
		max = slots[i] > max ? slots[i] : max;
	fr.ymax = nice_max(max);
	bw = (fr.w - fr.left - fr.right) / (hi - lo + 1);
	frame_open(f, &fr, "hist", label);
	for (int i = lo; i <= hi; i++) {
		double y = frame_y(&fr, slots[i]), x = fr.left + (i - lo) * bw;

		html_usecs(from, sizeof(from), i ? ldexp(1, i) : 0);
		html_usecs(to, sizeof(to), ldexp(1, i + 1));
		fprintf(f, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">"
			   "<title>%s – %s%s: %.0f</title></rect>\n",
			x + 1, y, bw - 2, fr.h - fr.bottom - y, from, i == nslots - 1 ? "" : to,
			i == nslots - 1 ? " and over" : "", slots[i]);
		if (slots[i] > 0) {
			short_count(lab, sizeof(lab), slots[i]);
			fprintf(f, "<text class=\"val\" x=\"%.1f\" y=\"%.1f\">%s</text>\n",
				x + bw / 2, y - 3, lab);
		}
	}
	histogram_xaxis(f, &fr, lo, hi, nslots);
	fputs("</svg>\n", f);
}

/* Time labels under the bins: about 8, on whole multiples of a round step. */
static void timeline_xaxis(FILE *f, const struct frame *fr, double span, const char *xlabel)
{
	double step = nice_max(span / 8), pw = fr->w - fr->left - fr->right;

	for (double t = 0; t <= span + 1e-9; t += step)
		fprintf(f, "<text class=\"xlab\" x=\"%.1f\" y=\"%.1f\">%g s</text>\n",
			fr->left + pw * t / span, fr->h - fr->bottom + 16, t);
	fprintf(f, "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\">", fr->left + pw / 2, fr->h - 4);
	html_escape(f, xlabel);
	fputs("</text>\n", f);
}

/* One bin's stacked rectangles, kinds from the bottom up. */
static void timeline_bar(FILE *f, const struct frame *fr, const struct svg_bin *b, double span)
{
	double pw = fr->w - fr->left - fr->right, base = 0;
	double x = fr->left + pw * b->t0 / span, bw = pw * (b->t1 - b->t0) / span;

	if (!(bw > 0))
		return;
	for (int k = 0; k < SPT_KIND_MAX; k++) {
		double y0 = frame_y(fr, base), y1 = frame_y(fr, base + b->v[k]);

		base += b->v[k];
		if (b->v[k] <= 0)
			continue;
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			   "fill=\"%s\"><title>%g–%g s, %s: %.0f</title></rect>\n",
			x + (bw > 4 ? 0.5 : 0), y1, bw > 4 ? bw - 1 : bw, y0 - y1, html_kind_colors[k],
			b->t0, b->t1, spt_kind_names[k], b->v[k]);
	}
}

void svg_timeline(FILE *f, const struct svg_bin *bins, int nbins, const char *label,
		  const char *xlabel)
{
	struct frame fr = { .w = 1000, .h = 240, .left = 50, .right = 24, .top = 14, .bottom = 42 };
	double max = 0, span = 0;

	for (int i = 0; i < nbins; i++) {
		double sum = 0;

		for (int k = 0; k < SPT_KIND_MAX; k++)
			sum += bins[i].v[k];
		max = fmax(max, sum);
		span = fmax(span, bins[i].t1);
	}
	fr.ymax = nice_max(max);
	frame_open(f, &fr, "timeline", label);
	if (span > 0 && span <= 1e9) {
		for (int i = 0; i < nbins; i++)
			timeline_bar(f, &fr, &bins[i], span);
		timeline_xaxis(f, &fr, span, xlabel);
	}
	fputs("</svg>\n", f);
}
