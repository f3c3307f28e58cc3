/* SPDX-License-Identifier: GPL-2.0 */
/* --delta: an interval's counts from two cumulative summaries (pure). */
#ifndef SPT_DELTA_H
#define SPT_DELTA_H

#include "report.h"

/* Sorts the rows by their keys: what summary_delta's prev must be. */
void summary_sort_by_key(struct spt_summary *s);

/*
 * d = cur - prev (prev sorted by key, both from the same run, prev older):
 * counters subtracted, states as in cur, rows with nothing new left out but
 * the devices; d->delta set, d->since_ts = prev->ts. d's rows are its own
 * (summary_free), its file and cgroup paths NULL. 0 or -ENOMEM.
 */
int summary_delta(struct spt_summary *d, const struct spt_summary *cur,
		  const struct spt_summary *prev);

#endif
