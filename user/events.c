// SPDX-License-Identifier: GPL-2.0
/* The violation events' ring: one line (or JSON object) per event. */
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "events.h"
#include "report.h"
#include "resolve.h"
#include "stablepage.skel.h"

static const struct dev_name *dev_name_of(struct event_stream *t, uint32_t dev)
{
	const size_t cap = sizeof(t->names) / sizeof(t->names[0]);
	struct spt_dev_stats ds;
	struct dev_name *n;

	for (size_t i = 0; i < t->nnames; i++)
		if (t->names[i].dev == dev)
			return &t->names[i];
	if (bpf_map__lookup_elem(t->skel->maps.dev_stats, &dev, sizeof(dev), &ds, sizeof(ds), 0))
		return NULL;
	/* Full: the first slot is reused. */
	n = &t->names[t->nnames < cap ? t->nnames++ : 0];
	n->dev = dev;
	memcpy(n->devname, ds.devname, sizeof(n->devname));
	/* a device's own cache with no filesystem on it (account.bpf.h) */
	if (!n->devname[0] && ds.bdev)
		resolve_blockdev_name(ds.bdev, n->devname, sizeof(n->devname));
	memcpy(n->fstype, ds.fstype, sizeof(n->fstype));
	return n;
}

int events_handle(void *ctx, void *data, size_t size)
{
	struct event_stream *t = ctx;
	const struct spt_event *e = data;
	const struct dev_name *n;
	struct event_view v = { .e = e };

	if (size < sizeof(*e))
		return 0;
	n = dev_name_of(t, e->dev);
	v.ts = e->ts_ns / 1e9 + t->realtime_offset;
	v.devname = n ? n->devname : NULL;
	v.fstype = n ? n->fstype : NULL;
	v.path = resolve_path(e->dev, e->ino, e->generation);
	v.cgroup = resolve_cgroup(e->cgroup_id);
	if (t->json)
		print_event_json(stdout, &v);
	else
		print_event_text(stdout, &v);
	t->streamed++;
	return 0;
}
