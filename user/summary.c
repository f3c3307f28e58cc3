// SPDX-License-Identifier: GPL-2.0
/*
 * Reading the maps into a summary. A map can change while it is walked;
 * each read is one snapshot per entry, and the caller detaches first for
 * the final one so that it is consistent.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "options.h"
#include "parse.h"
#include "resolve.h"
#include "retire.h"
#include "summary.h"
#include "stablepage.skel.h"

int map_dump(const struct bpf_map *map, struct row_layout l, void **rows, size_t *n)
{
	size_t cap = bpf_map__max_entries(map);
	char *base = calloc(cap, l.size);
	void *prev = NULL;

	*rows = base;
	*n = 0;
	if (!base)
		return -ENOMEM;
	while (*n < cap) {
		char *row = base + *n * l.size;

		if (bpf_map__get_next_key(map, prev, row + l.key_off, l.key_size) ||
		    bpf_map__lookup_elem(map, row + l.key_off, l.key_size, row + l.val_off,
					 l.val_size, 0))
			break;
		prev = row + l.key_off;
		(*n)++;
	}
	return 0;
}

/*
 * The label users know a device by: the block device's kernel name
 * ("loop0"), also for a filesystem with an anonymous dev (btrfs) through
 * its s_bdev; the superblock's s_id when there is no block device.
 */
static void device_label(const struct spt_summary *s, __u32 dev, char out[SPT_DEVNAME_LEN])
{
	for (size_t i = 0; i < s->ndevs; i++) {
		const struct spt_dev_stats *ds = &s->devs[i].s;

		if (s->devs[i].dev != dev)
			continue;
		if (ds->bdev) {
			resolve_blockdev_name(ds->bdev, out, SPT_DEVNAME_LEN);
			return;
		}
		if (ds->devname[0]) {
			snprintf(out, SPT_DEVNAME_LEN, "%s", ds->devname);
			return;
		}
	}
	resolve_blockdev_name(dev, out, SPT_DEVNAME_LEN);
}

/* Appends hist_table's claimed rows to the hash map's (a key is in one). */
static int read_hist_table(struct stablepage_bpf *skel, struct spt_summary *s)
{
	__u32 nrows = bpf_map__max_entries(skel->maps.hist_table);
	struct hist_row *rows = realloc(s->hists, (s->nhists + nrows) * sizeof(*rows));

	if (!rows)
		return -ENOMEM;
	s->hists = rows;
	for (__u32 i = 0; i < nrows; i++) {
		struct spt_hist_entry e;
		int err = bpf_map__lookup_elem(skel->maps.hist_table, &i, sizeof(i), &e, sizeof(e), 0);

		if (err)
			return err;
		if (!e.key_word)
			continue;
		memset(&rows[s->nhists], 0, sizeof(rows[0]));
		rows[s->nhists].key = e.key;
		rows[s->nhists++].h = e.h;
	}
	return 0;
}

int percpu_sum_u64(const struct bpf_map *map, void *sum, size_t size)
{
	int ncpus = libbpf_num_possible_cpus();
	__u64 *percpu, *to = sum;
	__u32 zero = 0;
	int err;

	if (ncpus <= 0)
		return -EINVAL;
	percpu = calloc(ncpus, size);
	if (!percpu)
		return -ENOMEM;
	err = bpf_map__lookup_elem(map, &zero, sizeof(zero), percpu, size * ncpus, 0);
	memset(sum, 0, size);
	for (int c = 0; !err && c < ncpus; c++)
		for (size_t i = 0; i < size / sizeof(__u64); i++)
			to[i] += percpu[c * (size / sizeof(__u64)) + i];
	free(percpu);
	return err;
}

/* The per-CPU totals, summed. */
static int read_totals(struct stablepage_bpf *skel, struct spt_totals *sum)
{
	int ncpus = libbpf_num_possible_cpus();
	struct spt_totals *percpu;
	__u32 zero = 0;
	int err;

	if (ncpus <= 0)
		return -EINVAL;
	percpu = calloc(ncpus, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	err = bpf_map__lookup_elem(skel->maps.totals, &zero, sizeof(zero), percpu,
				   sizeof(*percpu) * ncpus, 0);
	if (!err)
		totals_sum(sum, percpu, ncpus);
	free(percpu);
	return err;
}

/* The per-CPU device counts (dev_counts), added to the device rows. */
static int read_dev_counts(struct stablepage_bpf *skel, struct spt_summary *s)
{
	int ncpus = libbpf_num_possible_cpus(), err = 0;
	struct spt_dev_counts *percpu;

	if (ncpus <= 0)
		return -EINVAL;
	percpu = calloc(ncpus, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	for (__u32 slot = 0; !err && slot < 1U << SPT_DEV_COUNT_SLOTS_LOG2; slot++) {
		err = bpf_map__lookup_elem(skel->maps.dev_counts, &slot, sizeof(slot), percpu,
					   sizeof(*percpu) * ncpus, 0);
		if (!err)
			err = fold_dev_counts(s, percpu, ncpus);
	}
	free(percpu);
	return err;
}

/* The rows of the hash maps; the writer rows folded into devices,
 * processes and files; the per-CPU device counts into devices. */
static int read_rows(struct stablepage_bpf *skel, struct spt_summary *s)
{
	struct writer_row *writers = NULL;
	size_t nwriters = 0;
	int err;

	err = map_dump(skel->maps.dev_stats, ROW_LAYOUT(struct dev_row, dev, s),
		       (void **)&s->devs, &s->ndevs);
	if (!err)
		err = map_dump(skel->maps.proc_stats, ROW_LAYOUT(struct proc_row, pid, s),
			       (void **)&s->procs, &s->nprocs);
	if (!err)
		err = map_dump(skel->maps.writer_stats, ROW_LAYOUT(struct writer_row, key, s),
			       (void **)&writers, &nwriters);
	if (!err)
		err = map_dump(skel->maps.hists, ROW_LAYOUT(struct hist_row, key, h),
			       (void **)&s->hists, &s->nhists);
	if (!err)
		err = fold_writers(s, writers, nwriters);
	free(writers);
	if (!err)
		err = read_dev_counts(skel, s);
	if (!err)
		err = read_hist_table(skel, s);
	return err;
}

int summary_read(struct stablepage_bpf *skel, struct spt_summary *s, size_t top)
{
	int err = read_totals(skel, &s->totals);

	if (!err)
		err = read_rows(skel, s);
	if (!err && s->retired)
		err = retired_apply(s->retired, s);
	if (err)
		return err;
	s->would_stall_pending = skel->bss->n_inflight_violations;
	s->waits_pending = skel->bss->n_waiting;
	for (size_t i = 0; i < s->ndevs; i++) {
		device_label(s, s->devs[i].dev, s->devs[i].device);
		/* a device's own cache with no filesystem on it: BPF leaves
		 * the bdev superblock's "bdev" out; its name is the device's */
		if (!s->devs[i].s.devname[0])
			memcpy(s->devs[i].s.devname, s->devs[i].device, SPT_DEVNAME_LEN);
	}
	for (size_t i = 0; i < s->nhists; i++) {
		hist_set_count(&s->hists[i].h);
		device_label(s, s->hists[i].key.dev, s->hists[i].device);
	}
	sort_hists(s->hists, s->nhists);
	sort_devs(s->devs, s->ndevs);
	sort_procs(s->procs, s->nprocs);
	sort_files(s->files, s->nfiles);
	sort_cgroups(s->cgroups, s->ncgroups);
	summary_resolve(s, top);
	return 0;
}

/* A --delta's own verify rows: the paths of its top changes. */
static void resolve_verify_own(struct spt_verify_summary *v, size_t top)
{
	for (size_t i = 0; i < v->nchanges && i < top; i++) {
		struct verify_change_row *c = &v->changes[i];
		const char *p;

		if (c->path || !c->key.ino)
			continue;
		p = resolve_path(c->key.file_dev, c->key.ino, c->v.generation);
		c->path = p ? strdup(p) : NULL;
	}
}

void summary_resolve(struct spt_summary *s, size_t top)
{
	for (size_t i = 0; i < s->nfiles && i < top; i++) {
		const char *p;

		if (s->files[i].path)
			continue;
		p = resolve_path(s->files[i].key.dev, s->files[i].key.ino, s->files[i].s.generation);
		s->files[i].path = p ? strdup(p) : NULL;
	}
	/* Every cgroup, up to the most that any report lists (resolve_cgroup caches). */
	for (size_t i = 0; i < s->ncgroups && i < SPT_PROM_MAX_CGROUPS; i++) {
		const char *p;

		if (s->cgroups[i].path)
			continue;
		p = resolve_cgroup(s->cgroups[i].id);
		s->cgroups[i].path = p ? strdup(p) : NULL;
	}
	if (s->verify_own)
		resolve_verify_own(s->verify_own, top);
}

void summary_free(struct spt_summary *s)
{
	for (size_t i = 0; i < s->nfiles; i++)
		free(s->files[i].path);
	for (size_t i = 0; i < s->ncgroups; i++)
		free(s->cgroups[i].path);
	free(s->cgroups);
	free(s->devs);
	free(s->procs);
	free(s->files);
	free(s->hists);
	if (s->verify_own)
		verify_free(s->verify_own);
	free(s->verify_own);
	memset(s, 0, sizeof(*s));
}

__u64 maps_memlock(const struct stablepage_bpf *skel, int *nmaps)
{
	struct bpf_map *map;
	__u64 sum = 0;

	*nmaps = 0;
	bpf_object__for_each_map(map, skel->obj) {
		char path[64], text[1024];
		uint64_t bytes;
		size_t len;
		FILE *f;

		if (bpf_map__fd(map) < 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", bpf_map__fd(map));
		f = fopen(path, "re");
		if (!f)
			return 0;
		len = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
		text[len] = '\0';
		if (!parse_fdinfo_memlock(text, &bytes))
			return 0;
		sum += bytes;
		(*nmaps)++;
	}
	return sum;
}
