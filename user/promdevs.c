// SPDX-License-Identifier: GPL-2.0
/*
 * The Prometheus file's device label sets: merged rows (pure, unit-tested
 * in tests/unit) and the devices known before any activity (mountinfo).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "parse.h"
#include "promdevs.h"
#include "resolve.h"

static int cmp_prom_dev(const void *pa, const void *pb)
{
	const struct prom_dev *a = pa, *b = pb;
	int c = strcmp(a->device, b->device);

	return c ? c : strcmp(a->fstype, b->fstype);
}

/* The row of (device, fstype) among the first n of out, or a new one. */
static struct prom_dev *label_set(struct prom_dev *out, size_t *n, const char *device,
				  const char *fstype)
{
	struct prom_dev *d;

	for (size_t i = 0; i < *n; i++)
		if (!strcmp(out[i].device, device) && !strcmp(out[i].fstype, fstype))
			return &out[i];
	d = &out[(*n)++];
	memset(d, 0, sizeof(*d));
	snprintf(d->device, sizeof(d->device), "%s", device);
	snprintf(d->fstype, sizeof(d->fstype), "%s", fstype);
	return d;
}

int prom_merge_devs(const struct dev_row *rows, size_t n, const struct prom_known_dev *known,
		    size_t nknown, struct prom_dev **out, size_t *nout)
{
	struct prom_dev *m = calloc(n + nknown ? n + nknown : 1, sizeof(*m));
	size_t nm = 0;

	*out = m;
	*nout = 0;
	if (!m)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct spt_dev_stats *s = &rows[i].s;
		struct prom_dev *d = label_set(m, &nm, rows[i].device, s->fstype);

		for (int k = 0; k < SPT_KIND_MAX; k++) {
			d->violations[k] += s->violations[k];
			d->waits[k] += s->waits[k];
		}
		d->failed_after_violation += s->failed_after_violation;
		d->stable |= !!s->stable;
	}
	for (size_t i = 0; i < nknown; i++)
		label_set(m, &nm, known[i].device, known[i].fstype);
	qsort(m, nm, sizeof(*m), cmp_prom_dev);
	*nout = nm;
	return 0;
}

static bool dev_wanted(const __u32 *devs, size_t ndevs, __u32 sdev, __u32 bdev)
{
	if (!ndevs)
		return true;
	for (size_t i = 0; i < ndevs; i++)
		if (devs[i] == sdev || devs[i] == bdev)
			return true;
	return false;
}

static int add_known(struct prom_known_dev **out, size_t *n, __u32 bdev, const char *fstype)
{
	struct prom_known_dev *grown = realloc(*out, (*n + 1) * sizeof(**out));

	if (!grown)
		return -ENOMEM;
	*out = grown;
	resolve_blockdev_name(bdev, grown[*n].device, sizeof(grown[*n].device));
	/* the kernel's s_type name: mountinfo's "fuseblk.ntfs" is "fuseblk" */
	snprintf(grown[*n].fstype, sizeof(grown[*n].fstype), "%.*s", (int)strcspn(fstype, "."),
		 fstype);
	(*n)++;
	return 0;
}

/* A --dev device with no filesystem mounted: its own cache is traced. */
static int add_unmounted(const __u32 *devs, size_t ndevs, const bool *mounted,
			 struct prom_known_dev **out, size_t *n)
{
	struct spt_disk d;
	int err = 0;

	for (size_t i = 0; i < ndevs && !err; i++)
		if (!mounted[i] && !resolve_disk(devs[i], &d))
			err = add_known(out, n, devs[i], "bdev");
	return err;
}

int prom_known_devs(const __u32 *devs, size_t ndevs, struct prom_known_dev **out, size_t *nout)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	bool *mounted = calloc(ndevs ? ndevs : 1, sizeof(*mounted));
	char line[4096];
	int err = mounted ? 0 : -ENOMEM;

	*out = NULL;
	*nout = 0;
	while (f && !err && fgets(line, sizeof(line), f)) {
		struct mountinfo_entry e;
		struct spt_disk d;
		__u32 sdev, bdev;

		if (!parse_mountinfo_line(line, &e))
			continue;
		sdev = spt_kdev(e.major, e.minor);
		bdev = resolve_mount_bdev(&e);
		/* only filesystems on block devices (not tmpfs, proc, nfs) */
		if (!dev_wanted(devs, ndevs, sdev, bdev) || resolve_disk(bdev, &d))
			continue;
		for (size_t i = 0; i < ndevs; i++)
			mounted[i] |= devs[i] == sdev || devs[i] == bdev;
		err = add_known(out, nout, bdev, e.fstype);
	}
	if (f)
		fclose(f);
	if (!err)
		err = add_unmounted(devs, ndevs, mounted, out, nout);
	free(mounted);
	return err;
}
