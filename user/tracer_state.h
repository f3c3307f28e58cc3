/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A run's state, shared by its three files: the lifecycle (tracer.c), the
 * poll loop with its signals and pauses (tracer_loop.c) and the reports
 * (tracer_report.c). Private to them.
 */
#ifndef SPT_TRACER_STATE_H
#define SPT_TRACER_STATE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include "events.h"
#include "hold_glue.h"
#include "options.h"
#include "plan.h"
#include "prom.h"
#include "retire.h"
#include "report.h"

struct tracer {
	const struct options *o;
	struct spt_features features;
	struct spt_plan plan;
	struct stablepage_bpf *skel;
	struct ring_buffer *rb;
	struct event_stream events;
	struct bpf_holds holds;
	struct prom_info prom;
	int cgroup_fd;
	bool enforcement_held; /* enforce --native: no violation where it took effect */
	bool switch_tried;     /* sched_switch's late attach is tried once */
	struct {
		bool on;
		double since, total;
	} paused; /* since when tracing is paused, and for how long it was before */
	double start, deadline, every, next_report;
	double start_wall;          /* the start, in seconds since the epoch */
	unsigned long nreports;     /* interval reports printed */
	bool deadline_reached;      /* the run ended at -d or at the COUNTth report */
	struct spt_summary prev;    /* --delta: the previous report's counts, by key */
	bool have_prev;
	double row_age;             /* --row-age in effect (seconds); 0: rows never age out */
	__u64 maps_bytes;           /* what the kernel charges for the maps (memlock) */
	struct spt_retired retired; /* the counts of the rows aged out */
};

static inline void verbose(const struct tracer *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void verbose(const struct tracer *t, const char *fmt, ...)
{
	va_list ap;

	if (!t->o->verbose)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static inline double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* tracer_loop.c: SIGINT, SIGTERM, SIGHUP and SIGPIPE end the run; SIGUSR1
 * and SIGUSR2 pause and resume it. */
void tracer_catch_signals(void);
/* A signal asked for the end. */
bool tracer_signalled(void);
/* Until a signal, the deadline or a ring buffer error (-1). A failed
 * resume after a pause ends it too, with *resume_failed set. */
int tracer_poll_loop(struct tracer *t, bool *resume_failed);

/* tracer_report.c: the maps read and reported, at an interval or at the
 * end (final). 0 or -errno, said on stderr. */
int tracer_report(struct tracer *t, bool final);

#endif
