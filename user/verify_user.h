/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --verify: pages changed while their write request was in flight
 * (bpf/verify_*.bpf.h). The counts read from the maps (verify_read.c) and
 * their printing as text, JSON and Prometheus metrics (verify.c, pure,
 * unit-tested); report.c, prom.c call these when the run verifies.
 */
#ifndef SPT_VERIFY_USER_H
#define SPT_VERIFY_USER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "verify.h"

extern const char *const spt_page_kind_names[SPT_PAGE_KIND_MAX];

struct verify_dev_row {
	struct spt_verify_dev_key key;
	struct spt_verify_dev_stats s;
	char device[32]; /* the block device's name; set by the reader */
};

struct verify_change_row {
	struct spt_verify_change_key key;
	struct spt_verify_change v;
	char device[32];
	char *path; /* NULL: not a file, or unresolved */
};

struct spt_verify_summary {
	unsigned int every;   /* 1 write request in every */
	bool located;         /* the kernel's direct map was located: pages can be read */
	struct spt_verify_totals totals;
	__u64 pending;        /* hashed pages whose request has not completed */
	struct verify_dev_row *devs;
	size_t ndevs;
	struct verify_change_row *changes;
	size_t nchanges;
};

/* Sorts devices by name then kind, changes by pages (descending). */
void verify_sort(struct spt_verify_summary *v);
void print_verify_text(FILE *f, const struct spt_verify_summary *v, size_t top);
/* ",\"verify\":{...}", its leading comma included. */
void print_verify_json(FILE *f, const struct spt_verify_summary *v, size_t top);
void prom_verify(FILE *f, const struct spt_verify_summary *v);

/* The rows and their paths (not v itself). */
void verify_free(struct spt_verify_summary *v);

/* verify_read.c: the maps into *v (and the paths of the first top rows). */
struct stablepage_bpf;
int verify_read(struct stablepage_bpf *skel, unsigned int every, struct spt_verify_summary *v,
		size_t top);

#endif
