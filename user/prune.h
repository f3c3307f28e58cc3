/* SPDX-License-Identifier: GPL-2.0 */
/* --row-age: idle per-process and per-writer rows removed from the maps. */
#ifndef SPT_PRUNE_H
#define SPT_PRUNE_H

#include "retire.h"

struct stablepage_bpf;

/*
 * Removes the writer rows idle for age seconds, then the process rows idle
 * as long with no writer row left (retire.h), their counts kept in r. 0 or
 * -errno (what was removed before an error is kept in r).
 */
int prune_rows(struct stablepage_bpf *skel, struct spt_retired *r, double age);

#endif
