/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A traced run read back from the tool's JSON output (`--json`: violation
 * events, interval objects, the summary; docs/report.md) for `report`. Pure
 * apart from run_load_file, unit-tested.
 */
#ifndef SPT_RUNFILE_H
#define SPT_RUNFILE_H

#include <stdbool.h>
#include <stddef.h>
#include "jsonread.h"
#include "report.h"

/* mmap, write, other, metadata: the JSON's "violations" members, spt_kind_names. */
#define RUN_KINDS SPT_KIND_MAX
#define RUN_MAX_CGROUPS 4096 /* distinct cgroups counted; the rest under "(others)" */

/* An interval or summary object: cumulative counts at duration_s. */
struct run_point {
	double t;
	double v[RUN_KINDS];
};

/* Violation events per cgroup (from the event stream). */
struct run_cgroup {
	char *path; /* NULL: events without a resolved cgroup */
	double v[RUN_KINDS];
};

struct run {
	struct jv last;   /* the summary, else the last interval; JV_NULL when neither */
	bool final;       /* last is the "summary" object */
	char *attach_mode, *kernel; /* NULL when the input does not say */
	struct run_point *points;   /* every interval and summary object, in order */
	size_t npoints;
	double *ev_ts;              /* violation events: time (s since the epoch) and kind */
	unsigned char *ev_kind;
	size_t nevents, ev_cap;
	struct run_cgroup *cgroups; /* sorted by violations, descending, by run_finish */
	size_t ncgroups;
	size_t nobjects, nskipped;  /* objects read; of which of a type not used here */
};

/*
 * Reads the whole text: JSON values one after the other (JSON lines as the
 * tool writes them, or pretty-printed), or one array of them (jq -s). 0, or
 * -1 with err set to one line saying why it is not the tool's JSON; run is
 * then freed.
 */
int run_load(struct run *run, const char *text, size_t len, char *err, size_t errlen);
/* run_load on a file's contents; the error names no file (the caller does). */
int run_load_file(struct run *run, const char *path, char *err, size_t errlen);
void run_free(struct run *run);

/* Violations of one kind (or all, kind < 0) in a kinds object {"mmap":..}. */
double run_kinds(const struct jv *kinds, int kind);

#endif
