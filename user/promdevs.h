/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-device series of the Prometheus file: one per label set. Rows of
 * the maps are keyed by superblock dev, labels by block device name, and
 * two superblocks of one block device (a btrfs mounted, unmounted and
 * mounted again gets a new anonymous dev; a device written raw, then
 * mounted) would make two series with the same labels, which
 * node_exporter's textfile collector refuses or drops.
 */
#ifndef SPT_PROMDEVS_H
#define SPT_PROMDEVS_H

#include <stdbool.h>
#include <stddef.h>
#include "report.h"

/* A device traced, with or without activity yet: its series start at 0. */
struct prom_known_dev {
	char device[SPT_DEVNAME_LEN];
	char fstype[SPT_FSTYPE_LEN];
};

/* The counters of one (device, fstype) label set. */
struct prom_dev {
	char device[SPT_DEVNAME_LEN];
	char fstype[SPT_FSTYPE_LEN];
	__u64 violations[SPT_KIND_MAX];
	__u64 waits[SPT_KIND_MAX];
	__u64 failed_after_violation;
	bool stable; /* any of its superblocks */
};

/*
 * The rows and the known devices merged by (device, fstype), counters
 * added up, sorted by device then fstype: the series of one device are
 * adjacent, for the families labelled by device only. *out is the
 * caller's to free. 0 or -ENOMEM.
 */
int prom_merge_devs(const struct dev_row *rows, size_t n, const struct prom_known_dev *known,
		    size_t nknown, struct prom_dev **out, size_t *nout);

/*
 * The block devices with a filesystem mounted (from /proc/self/mountinfo),
 * those of devs only when ndevs > 0, and the devs with no filesystem as
 * their own cache ("bdev"). *out is the caller's to free. 0 or -ENOMEM.
 */
int prom_known_devs(const __u32 *devs, size_t ndevs, struct prom_known_dev **out, size_t *nout);

#endif
