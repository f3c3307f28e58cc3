// SPDX-License-Identifier: GPL-2.0
/*
 * The report page's tables: top processes, files, cgroups and devices, as
 * the run's last summary (or interval) lists them, cgroups from the event
 * stream when the summary has no cgroup table. Each row's total carries a
 * bar, its length relative to the table's largest.
 */
#include <string.h>
#include "html.h"
#include "htmlreport.h"

#define MAX_CGROUP_ROWS 20

static void kind_headers(FILE *f)
{
	for (int k = 0; k < RUN_KINDS; k++)
		fprintf(f, "<th class=\"num\"><i class=\"dot\" style=\"background:%s\"></i>%s</th>",
			html_kind_colors[k], spt_kind_names[k]);
	fputs("<th class=\"num\">total</th>", f);
}

/* The kinds' cells of a row, then its total with a bar (max: the table's). */
static void kind_cells(FILE *f, const double v[RUN_KINDS], double max)
{
	double total = 0;

	for (int k = 0; k < RUN_KINDS; k++) {
		fprintf(f, "<td class=\"num\">%.0f</td>", v[k]);
		total += v[k];
	}
	fprintf(f, "<td class=\"num tot\"><span class=\"tb\" style=\"width:%.1f%%\"></span>"
		   "<span class=\"tv\">%.0f</span></td>",
		max > 0 ? 100 * total / max : 0, total);
}

static void kinds_of(const struct jv *row, double v[RUN_KINDS])
{
	for (int k = 0; k < RUN_KINDS; k++)
		v[k] = run_kinds(jv_get(row, "violations"), k);
}

/* The largest total among an array's rows. */
static double max_total(const struct jv *rows)
{
	double max = 0;

	for (size_t i = 0; rows && i < rows->n; i++) {
		double t = run_kinds(jv_get(&rows->items[i], "violations"), -1);

		max = t > max ? t : max;
	}
	return max;
}

/* The table's heading and opening, or a note when there are no rows. */
static bool table_open(FILE *f, const char *id, const char *title, size_t nrows,
		       const char *none)
{
	fprintf(f, "<h2>%s</h2>\n", title);
	if (!nrows) {
		fprintf(f, "<p class=\"note\" id=\"%s-none\">%s</p>\n", id, none);
		return false;
	}
	fprintf(f, "<table id=\"%s\">\n<thead><tr>", id);
	return true;
}

static void processes(FILE *f, const struct run *run)
{
	const struct jv *rows = jv_array(jv_get(&run->last, "top_processes"));
	double max = max_total(rows), v[RUN_KINDS];

	if (!table_open(f, "processes", "Top processes", rows ? rows->n : 0,
			"No process violated or waited."))
		return;
	fputs("<th class=\"num\">PID</th><th>command</th>", f);
	kind_headers(f);
	fputs("<th class=\"num\">stable waits</th><th class=\"num\" title=\"thread-seconds stable "
	      "pages would have held it\">would-stall (thread-s)</th><th class=\"num\">stable "
	      "wait (thread-s)</th></tr></thead>\n<tbody>\n", f);
	for (size_t i = 0; i < rows->n; i++) {
		const struct jv *p = &rows->items[i];

		fprintf(f, "<tr><td class=\"num\">%.0f</td><td>", jv_getnum(p, "pid", 0));
		html_escape(f, jv_str(jv_get(p, "comm")));
		fputs("</td>", f);
		kinds_of(p, v);
		kind_cells(f, v, max);
		fprintf(f, "<td class=\"num\">%.0f</td><td class=\"num\">%.3f</td>"
			   "<td class=\"num\">%.3f</td></tr>\n",
			jv_getnum(p, "stable_waits", 0), jv_getnum(p, "would_stall_ns", 0) / 1e9,
			jv_getnum(p, "stable_wait_ns", 0) / 1e9);
	}
	fputs("</tbody></table>\n", f);
}

/* "loop0 (7:0)": the device's name from the devices table, if listed. */
static void device_cell(FILE *f, const struct run *run, const char *majmin)
{
	const struct jv *devs = jv_array(jv_get(&run->last, "devices"));
	const char *name = NULL;

	for (size_t i = 0; majmin && devs && i < devs->n; i++)
		if (!strcmp(jv_str(jv_get(&devs->items[i], "dev")) ?: "", majmin))
			name = jv_str(jv_get(&devs->items[i], "devname"));
	fputs("<td>", f);
	if (name) {
		html_escape(f, name);
		fputs(" <span class=\"s\">(", f);
		html_escape(f, majmin);
		fputs(")</span>", f);
	} else {
		html_escape(f, majmin ? majmin : "?");
	}
	fputs("</td>", f);
}

static void files(FILE *f, const struct run *run)
{
	const struct jv *rows = jv_array(jv_get(&run->last, "top_files"));
	double max = max_total(rows), v[RUN_KINDS];

	if (!table_open(f, "files", "Top files", rows ? rows->n : 0, "No file was violated."))
		return;
	fputs("<th>path</th><th>device</th><th class=\"num\">inode</th>", f);
	kind_headers(f);
	fputs("<th class=\"num\">last pid</th></tr></thead>\n<tbody>\n", f);
	for (size_t i = 0; i < rows->n; i++) {
		const struct jv *r = &rows->items[i];
		const char *path = jv_str(jv_get(r, "path"));

		fputs("<tr><td class=\"path\">", f);
		if (path)
			html_escape(f, path);
		else
			fputs("<span class=\"s\">(path unresolved)</span>", f);
		fputs("</td>", f);
		device_cell(f, run, jv_str(jv_get(r, "dev")));
		fprintf(f, "<td class=\"num\">%.0f</td>", jv_getnum(r, "ino", 0));
		kinds_of(r, v);
		kind_cells(f, v, max);
		fprintf(f, "<td class=\"num\">%.0f</td></tr>\n", jv_getnum(r, "last_pid", 0));
	}
	fputs("</tbody></table>\n", f);
}

/* A cgroup table in the summary, if a newer tool writes one ("top_cgroups":
 * rows with "cgroup" and "violations"); else the event stream's counts. */
static void cgroups(FILE *f, const struct run *run)
{
	const struct jv *rows = jv_array(jv_get(&run->last, "top_cgroups"));
	size_t n = rows ? rows->n : run->ncgroups;
	double max = rows ? max_total(rows) : 0, v[RUN_KINDS];

	for (int k = 0; !rows && n && k < RUN_KINDS; k++)
		max += run->cgroups[0].v[k];
	if (!table_open(f, "cgroups", "Top cgroups", n,
			"No cgroup data: the input has no violation events (traced with -q?) and "
			"no cgroup table."))
		return;
	fputs("<th>cgroup</th>", f);
	kind_headers(f);
	fputs("</tr></thead>\n<tbody>\n", f);
	for (size_t i = 0; i < n && i < MAX_CGROUP_ROWS; i++) {
		const char *path = rows ? jv_str(jv_get(&rows->items[i], "cgroup")) :
					  run->cgroups[i].path;

		fputs("<tr><td class=\"path\">", f);
		if (path)
			html_escape(f, path);
		else
			fputs("<span class=\"s\">(unresolved)</span>", f);
		fputs("</td>", f);
		if (rows)
			kinds_of(&rows->items[i], v);
		else
			memcpy(v, run->cgroups[i].v, sizeof(v));
		kind_cells(f, v, max);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	if (n > MAX_CGROUP_ROWS)
		fprintf(f, "<p class=\"s\">and %zu more.</p>\n", n - MAX_CGROUP_ROWS);
	if (!rows)
		fputs("<p class=\"s\">Counted from the violation events.</p>\n", f);
}

static void devices(FILE *f, const struct run *run)
{
	const struct jv *rows = jv_array(jv_get(&run->last, "devices"));
	double max = max_total(rows), v[RUN_KINDS];

	if (!table_open(f, "devices", "Devices", rows ? rows->n : 0, "No device had activity."))
		return;
	fputs("<th>device</th><th>MAJ:MIN</th><th>filesystem</th><th>stable writes</th>", f);
	kind_headers(f);
	fputs("<th class=\"num\">stable waits</th><th class=\"num\">other waits</th></tr></thead>\n"
	      "<tbody>\n", f);
	for (size_t i = 0; i < rows->n; i++) {
		const struct jv *d = &rows->items[i];
		const struct jv *stable = jv_get(d, "stable_writes");

		fputs("<tr><td>", f);
		html_escape(f, jv_str(jv_get(d, "devname")));
		fputs("</td><td>", f);
		html_escape(f, jv_str(jv_get(d, "dev")));
		fputs("</td><td>", f);
		html_escape(f, jv_str(jv_get(d, "fstype")));
		fprintf(f, "</td><td>%s</td>", stable && stable->type == JV_TRUE ? "yes" : "no");
		kinds_of(d, v);
		kind_cells(f, v, max);
		fprintf(f, "<td class=\"num\">%.0f</td><td class=\"num\">%.0f</td></tr>\n",
			jv_getnum(d, "stable_waits", 0), jv_getnum(d, "other_waits", 0));
	}
	fputs("</tbody></table>\n", f);
}

void html_tables(FILE *f, const struct run *run)
{
	processes(f, run);
	files(f, run);
	cgroups(f, run);
	devices(f, run);
}
