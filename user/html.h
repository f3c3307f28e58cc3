/* SPDX-License-Identifier: GPL-2.0 */
/* The pieces of `report`'s page: HTML escaping and the inline SVG charts.
 * Pure: they write to a FILE, unit-tested through open_memstream. */
#ifndef SPT_HTML_H
#define SPT_HTML_H

#include <stdio.h>
#include <linux/types.h>
#include "stablepage.h"

/* The kinds' colours (mmap, write, other, metadata), for charts and legends alike. */
extern const char *const html_kind_colors[SPT_KIND_MAX];

/*
 * s as HTML text or attribute value: & < > " ' as references; control
 * characters (C0, DEL, C1: U+0080..U+009F) and bytes that are not UTF-8 as
 * U+FFFD; tab and newline as a space. NULL prints nothing.
 */
void html_escape(FILE *f, const char *s);

/* "1.5 ms", "250 µs", "3.2 s": a duration in microseconds, 2 digits. */
void html_usecs(char *buf, size_t len, double us);

/*
 * A log2 histogram of microseconds (slot i: [2^i, 2^(i+1)) µs, slot 0 from
 * 0) as an SVG bar chart over its non-empty range. label: the chart's
 * accessible name (escaped here).
 */
void svg_histogram(FILE *f, const double *slots, int nslots, const char *label);

/* One bar of a timeline: violations per kind in [t0, t1) seconds. */
struct svg_bin {
	double t0, t1;
	double v[SPT_KIND_MAX];
};

/*
 * Stacked bars over time, the axis from 0 to the last bin's t1 (at most
 * 1e9 s); xlabel names time 0 (escaped). label as above.
 */
void svg_timeline(FILE *f, const struct svg_bin *bins, int nbins, const char *label,
		  const char *xlabel);

#endif
