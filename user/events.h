/* SPDX-License-Identifier: GPL-2.0 */
/* The violation events' ring buffer, printed as they come (unless -q). */
#ifndef SPT_EVENTS_H
#define SPT_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "options.h"

/* Device names for the event lines, cached from the dev_stats map. */
struct dev_name {
	uint32_t dev;
	char devname[SPT_DEVNAME_LEN];
	char fstype[SPT_FSTYPE_LEN];
};

struct event_stream {
	struct stablepage_bpf *skel; /* set once loaded */
	bool json;
	double realtime_offset; /* CLOCK_REALTIME - CLOCK_MONOTONIC, seconds */
	struct dev_name names[MAX_FILTER_DEVS * 4]; /* full: the first slot is reused */
	size_t nnames;
	unsigned long long streamed;
};

/* ring_buffer_sample_fn for the events ring; ctx: the struct event_stream. */
int events_handle(void *ctx, void *data, size_t size);

#endif
