// SPDX-License-Identifier: GPL-2.0
/*
 * The tool's JSON output read back for `report`. What makes a file the
 * tool's: every value an object with a string "type"; interval and summary
 * objects with a number "duration_s" and a "violations" object; at least one
 * summary, interval or violation. Types it does not know (newer ones) are
 * skipped, so a newer tool's output still reads.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runfile.h"

double run_kinds(const struct jv *kinds, int kind)
{
	double sum = 0;

	for (int k = 0; k < RUN_KINDS; k++)
		if (kind < 0 || kind == k)
			sum += jv_getnum(kinds, spt_kind_names[k], 0);
	return sum;
}

/* "line 3, column 17" of byte pos. */
static void where(const char *text, size_t pos, char *buf, size_t len)
{
	size_t line = 1, col = 1;

	for (size_t i = 0; i < pos; i++, col++)
		if (text[i] == '\n')
			line++, col = 0;
	snprintf(buf, len, "line %zu, column %zu", line, col);
}

static int keep_string(char **dst, const struct jv *obj, const char *key)
{
	const char *s = jv_str(jv_get(obj, key));

	if (!s)
		return 0;
	free(*dst);
	*dst = strdup(s);
	return *dst ? 0 : -ENOMEM;
}

static int add_event(struct run *run, const struct jv *e)
{
	const char *kind = jv_str(jv_get(e, "kind"));
	int k = RUN_KINDS - 1;

	for (int i = 0; kind && i < RUN_KINDS; i++)
		if (!strcmp(kind, spt_kind_names[i]))
			k = i;
	if (run->nevents == run->ev_cap) {
		size_t cap = run->ev_cap ? run->ev_cap * 2 : 1024;
		double *ts = realloc(run->ev_ts, cap * sizeof(*ts));
		unsigned char *kinds;

		if (!ts)
			return -ENOMEM;
		run->ev_ts = ts;
		kinds = realloc(run->ev_kind, cap);
		if (!kinds)
			return -ENOMEM;
		run->ev_kind = kinds;
		run->ev_cap = cap;
	}
	run->ev_ts[run->nevents] = jv_getnum(e, "ts", 0);
	run->ev_kind[run->nevents++] = (unsigned char)k;
	return 0;
}

/* The event's cgroup row: found, or appended (the last row collects the
 * rest once RUN_MAX_CGROUPS are taken). */
static struct run_cgroup *cgroup_row(struct run *run, const char *path)
{
	struct run_cgroup *rows;

	for (size_t i = 0; i < run->ncgroups; i++) {
		const char *p = run->cgroups[i].path;

		if (p == path || (p && path && !strcmp(p, path)))
			return &run->cgroups[i];
	}
	if (run->ncgroups == RUN_MAX_CGROUPS)
		return &run->cgroups[run->ncgroups - 1];
	rows = realloc(run->cgroups, (run->ncgroups + 1) * sizeof(*rows));
	if (!rows)
		return NULL;
	run->cgroups = rows;
	rows += run->ncgroups;
	memset(rows, 0, sizeof(*rows));
	if (run->ncgroups == RUN_MAX_CGROUPS - 1)
		path = "(others)";
	if (path && !(rows->path = strdup(path)))
		return NULL;
	run->ncgroups++;
	return rows;
}

static int add_violation(struct run *run, const struct jv *e)
{
	struct run_cgroup *row = cgroup_row(run, jv_str(jv_get(e, "cgroup")));

	if (!row)
		return -ENOMEM;
	row->v[run->ev_kind[run->nevents - 1]]++;
	return 0;
}

/* An interval or summary: a point of the timeline, and the latest state. */
static int add_report(struct run *run, struct jv *obj, bool final, char *err, size_t errlen)
{
	const struct jv *kinds = jv_get(obj, "violations");
	struct run_point *pts;

	if (jv_num(jv_get(obj, "duration_s"), -1) < 0 || !kinds || kinds->type != JV_OBJECT) {
		snprintf(err, errlen, "a %s object without duration_s and violations",
			 final ? "summary" : "interval");
		return -EINVAL;
	}
	pts = realloc(run->points, (run->npoints + 1) * sizeof(*pts));
	if (!pts)
		return -ENOMEM;
	run->points = pts;
	pts[run->npoints].t = jv_getnum(obj, "duration_s", 0);
	for (int k = 0; k < RUN_KINDS; k++)
		pts[run->npoints].v[k] = run_kinds(kinds, k);
	run->npoints++;
	/* A summary stays the latest state; an interval replaces only intervals. */
	if (!final && run->final)
		return 0;
	jv_free(&run->last);
	run->last = *obj;
	memset(obj, 0, sizeof(*obj));
	run->final = final;
	return 0;
}

/* One top-level object; obj may be taken (moved into run). */
static int add_object(struct run *run, struct jv *obj, char *err, size_t errlen)
{
	const char *type = jv_str(jv_get(obj, "type"));
	int ret = 0;

	if (!type) {
		snprintf(err, errlen, "an object without a \"type\"");
		return -EINVAL;
	}
	run->nobjects++;
	if (keep_string(&run->attach_mode, obj, "attach_mode") ||
	    keep_string(&run->kernel, obj, "kernel"))
		return -ENOMEM;
	if (!strcmp(type, "violation")) {
		ret = add_event(run, obj);
		return ret ? ret : add_violation(run, obj);
	}
	if (!strcmp(type, "summary") || !strcmp(type, "interval"))
		return add_report(run, obj, !strcmp(type, "summary"), err, errlen);
	run->nskipped++;
	return 0;
}

/* A value read at the top level: an object, or an array of them (jq -s). */
static int add_value(struct run *run, struct jv *v, char *err, size_t errlen)
{
	int ret = 0;

	if (v->type == JV_OBJECT)
		return add_object(run, v, err, errlen);
	if (v->type != JV_ARRAY) {
		snprintf(err, errlen, "a value that is not an object");
		return -EINVAL;
	}
	for (size_t i = 0; !ret && i < v->n; i++)
		ret = v->items[i].type == JV_OBJECT ? add_object(run, &v->items[i], err, errlen) :
						      (snprintf(err, errlen, "an array of non-objects"),
						       -EINVAL);
	return ret;
}

static int cmp_cgroups(const void *a, const void *b)
{
	const struct run_cgroup *x = a, *y = b;
	double vx = x->v[0] + x->v[1] + x->v[2], vy = y->v[0] + y->v[1] + y->v[2];

	if (vx != vy)
		return vx < vy ? 1 : -1;
	return strcmp(x->path ? x->path : "", y->path ? y->path : "");
}

int run_load(struct run *run, const char *text, size_t len, char *err, size_t errlen)
{
	char what[160] = "", at[48];
	size_t pos = 0, start;
	int ret = 0;

	memset(run, 0, sizeof(*run));
	while (!ret && jv_more(text, len, &pos)) {
		struct jv v;

		start = pos;
		if (jv_parse(text, len, &pos, &v, what, sizeof(what))) {
			where(text, pos, at, sizeof(at));
			snprintf(err, errlen, "not JSON (%s, %s)", what, at);
			run_free(run);
			return -1;
		}
		ret = add_value(run, &v, what, sizeof(what));
		jv_free(&v);
	}
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	else if (ret) {
		where(text, start, at, sizeof(at));
		snprintf(err, errlen, "not stablepage-trace JSON: %s at %s", what, at);
	} else if (!run->npoints && !run->nevents) {
		snprintf(err, errlen, "not stablepage-trace JSON: no summary, interval or violation "
				      "object (%s)", run->nobjects ? "other objects only" : "empty");
		ret = -1;
	}
	if (ret) {
		run_free(run);
		return -1;
	}
	if (run->ncgroups)
		qsort(run->cgroups, run->ncgroups, sizeof(*run->cgroups), cmp_cgroups);
	return 0;
}

int run_load_file(struct run *run, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *text = NULL;
	size_t len = 0;
	int ret = -1;

	memset(run, 0, sizeof(*run));
	if (!f) {
		snprintf(err, errlen, "%s", strerror(errno));
		return -1;
	}
	/* A memstream grows as it is written: no size to trust (a FIFO, /dev/stdin). */
	FILE *m = open_memstream(&text, &len);
	char buf[65536];
	size_t n;

	while (m && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, m);
	if (ferror(f) || !m)
		snprintf(err, errlen, "%s", strerror(errno ? errno : EIO));
	else if (fclose(m), m = NULL, !text)
		snprintf(err, errlen, "out of memory");
	else
		ret = run_load(run, text, len, err, errlen);
	if (m)
		fclose(m);
	fclose(f);
	free(text);
	return ret;
}

void run_free(struct run *run)
{
	jv_free(&run->last);
	free(run->attach_mode);
	free(run->kernel);
	free(run->points);
	free(run->ev_ts);
	free(run->ev_kind);
	for (size_t i = 0; i < run->ncgroups; i++)
		free(run->cgroups[i].path);
	free(run->cgroups);
	memset(run, 0, sizeof(*run));
}
