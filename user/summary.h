/* SPDX-License-Identifier: GPL-2.0 */
/* The BPF maps read into a struct spt_summary (report.c prints it). */
#ifndef SPT_SUMMARY_H
#define SPT_SUMMARY_H

#include <stddef.h>
#include "report.h"

struct stablepage_bpf;

/* Fills s (its interval, attach mode, durations and holds are the
 * caller's): totals, per-device/process/file rows, histograms, sorted and
 * labelled; the paths of the top files resolved. 0 or -errno; free it with
 * summary_free either way. */
int summary_read(struct stablepage_bpf *skel, struct spt_summary *s, size_t top);
void summary_free(struct spt_summary *s);
/* The paths of the top files and of the cgroups, where not resolved yet. */
void summary_resolve(struct spt_summary *s, size_t top);

#endif
