/* SPDX-License-Identifier: GPL-2.0 */
/* Prometheus text exposition format, for node_exporter's textfile collector. */
#ifndef SPT_PROM_H
#define SPT_PROM_H

#include <stdio.h>
#include "report.h"

struct prom_known_dev;

struct prom_info {
	const char *version;
	const char *attach_mode;
	const char *kernel;
	size_t top_comms;   /* stablepage_comm_violations_total for at most this many comms */
	size_t top_cgroups; /* --prom-top-cgroup */
	double start_ts;    /* the run's start, seconds since the epoch */
	/* devices traced whose series start at 0 before any activity (promdevs.h) */
	const struct prom_known_dev *known;
	size_t nknown;
};

/* Every metric of the summary; counters are cumulative since the start. */
void prom_format(FILE *f, const struct spt_summary *s, const struct prom_info *info);
/* Is path's directory one to write in (its rule: prom.c, docs/metrics.md)
 * and can files be created there? 0, or -errno and *why. */
int prom_check_path(const char *path, const char **why);
/* Writes a temporary file in path's directory, syncs it and renames it to
 * path, so a reader never sees a partial file, nor an empty one after a
 * crash. 0, or -errno. */
int prom_write_file(const char *path, const struct spt_summary *s, const struct prom_info *info);

#endif
