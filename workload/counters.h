/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The counters file of a workload (wac, bench/gridload): its operation
 * counts, mapped shared, so that another process can read them at any
 * moment (bench/pausebench maps the same four 64-bit counters read-only).
 */
#ifndef SPT_WORKLOAD_COUNTERS_H
#define SPT_WORKLOAD_COUNTERS_H

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct wac_counters {
	atomic_ullong write_ops, mmap_ops, sync_ops, errors;
};

/* A new counters file at @path, mapped shared, zeroed (a new file's
 * contents); on failure "@prog: ..." on stderr and exit 1. */
static inline struct wac_counters *wac_counters_create(const char *prog, const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	struct wac_counters *c;

	if (fd < 0 || ftruncate(fd, sizeof(*c))) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		exit(1);
	}
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (c == MAP_FAILED) {
		fprintf(stderr, "%s: mmap %s: %s\n", prog, path, strerror(errno));
		exit(1);
	}
	close(fd);
	return c;
}

#endif
