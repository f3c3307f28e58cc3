/* SPDX-License-Identifier: GPL-2.0 */
/* The BPF maps read into a struct spt_summary (report.c prints it). */
#ifndef SPT_SUMMARY_H
#define SPT_SUMMARY_H

#include <stddef.h>
#include "report.h"

struct stablepage_bpf;
struct bpf_map;

/* Where a map entry's key and value go in a row of the caller's array. */
struct row_layout {
	size_t size;
	size_t key_off, key_size;
	size_t val_off, val_size;
};

#define ROW_LAYOUT(type, keyfield, valfield)                                       \
	((struct row_layout){ sizeof(type), offsetof(type, keyfield),              \
			      sizeof(((type *)0)->keyfield), offsetof(type, valfield), \
			      sizeof(((type *)0)->valfield) })

/*
 * Copies the entries of a hash map into a new array of rows (*rows, *n),
 * at most max_entries of them. An entry deleted between finding its key
 * and reading it ends the walk: what was read is kept. 0 or -ENOMEM.
 */
int map_dump(const struct bpf_map *map, struct row_layout l, void **rows, size_t *n);
/* Entry 0 of a per-CPU array whose value is size bytes of __u64 counters,
 * summed over the CPUs into sum. 0 or -errno. */
int percpu_sum_u64(const struct bpf_map *map, void *sum, size_t size);

/* Fills s (its interval, attach mode, durations and holds are the
 * caller's): totals, per-device/process/file rows, histograms, sorted and
 * labelled; the paths of the top files resolved. 0 or -errno; free it with
 * summary_free either way. */
int summary_read(struct stablepage_bpf *skel, struct spt_summary *s, size_t top);
void summary_free(struct spt_summary *s);
/* What the kernel charges for the object's maps (memlock in each map's
 * /proc/self/fdinfo, as bpftool shows it), in bytes, and how many maps
 * (*nmaps). 0 when it cannot be read. */
__u64 maps_memlock(const struct stablepage_bpf *skel, int *nmaps);
/* The paths of the top files and of the cgroups, and of a delta's own top
 * verify changes (verify_own), where not resolved yet. */
void summary_resolve(struct spt_summary *s, size_t top);

#endif
