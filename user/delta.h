/* SPDX-License-Identifier: GPL-2.0 */
/* --delta: an interval's counts from two cumulative summaries (pure). */
#ifndef SPT_DELTA_H
#define SPT_DELTA_H

#include "report.h"

/*
 * Makes s what summary_delta's prev must be: its rows sorted by their keys,
 * and a copy of its verify counts (s->verify, which the caller may then
 * free) kept by key in s->verify_own. 0, or -ENOMEM: no verify copy (the
 * next delta's verify counts are then since the start).
 */
int summary_sort_by_key(struct spt_summary *s);

/*
 * d = cur - prev (prev sorted by key, both from the same run, prev older):
 * counters subtracted, states as in cur, rows with nothing new left out but
 * the devices; d->delta set, d->since_ts = prev->ts. With cur->verify, the
 * verify counts too (against prev->verify_own; none: since the start), in
 * d->verify_own. d's rows are its own (summary_free), its file, cgroup and
 * verify change paths NULL. 0 or -ENOMEM.
 */
int summary_delta(struct spt_summary *d, const struct spt_summary *cur,
		  const struct spt_summary *prev);

#endif
