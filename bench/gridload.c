// SPDX-License-Identifier: GPL-2.0
/*
 * gridload: the benchmark grid's workload (bench/grid.sh, issue 30), for the
 * points wac's profiles do not cover: a chosen violation density and a
 * chosen write request size. Each thread owns R pages of the file (its own,
 * so threads do not share folios) and loops:
 *
 *   sync_file_range() over the R pages, then rewrite them (pwrite, or a
 *   store to every cache line through a shared mapping):
 *     dense  WAIT_BEFORE | WRITE: the last round's writeback is waited
 *            for, the pages (all dirty) go to writeback again and the call
 *            returns, so every page the round rewrites is a clean folio
 *            under writeback: each write a dirtying, each dirtying a
 *            violation (unless the request completes first);
 *     none   WAIT_BEFORE | WRITE | WAIT_AFTER: the writeback ends before
 *            the rewrite, so every page the round rewrites is a clean folio
 *            not under writeback: the same dirtyings and requests, no
 *            violation (the floor).
 *
 * (Starting writeback and rewriting while it goes on without waiting, as
 * wac's profile A does, gives only a few violations per write: a folio
 * re-dirtied under writeback stays dirty, later writes to it are no
 * dirtying, and the next sync_file_range skips it while its writeback runs.)
 *
 * One sync_file_range over R contiguous dirty pages is one write request
 * of R pages (up to the queue's max_sectors_kb). Counts each page written
 * as one operation in the counters of -c FILE, wac's (workload/counters.h),
 * so bench/pausebench reads them the same way.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../workload/counters.h"

#define PAGE 4096
#define MAX_THREADS 64

static struct {
	bool mmap, dense;
	int threads;
	unsigned pages;
	double duration;
	const char *path, *counters;
} opt = { .threads = 1, .pages = 16, .duration = 5, .dense = true };

static atomic_bool stop;
static struct wac_counters own, *ctr = &own;
static int fd;
static char *map;

static void __attribute__((noreturn)) usage(int code)
{
	fprintf(code ? stderr : stdout,
		"usage: gridload [-m write|mmap] [-D dense|none] [-r PAGES] [-t THREADS] [-d SECS]\n"
		"                [-c COUNTERS] FILE\n"
		"  -m  write(): pwrite each page; mmap: store to each page (default write)\n"
		"  -D  dense: rewrite while the writeback goes on (default); none: after it\n"
		"  -r  pages per round and per sync_file_range request (default 16)\n"
		"  -t  threads, each on its own pages (default 1, at most %d)\n"
		"  -d  duration in seconds (default 5; SIGINT ends it sooner)\n"
		"  -c  keep the counters in this file, mapped shared (wac -c's layout)\n",
		MAX_THREADS);
	exit(code);
}

static void fail(const char *what)
{
	fprintf(stderr, "gridload: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* One round: the thread's pages to writeback (none: and back), then
 * rewritten. */
static void round_once(char *buf, off_t base, unsigned seq)
{
	size_t len = (size_t)opt.pages * PAGE;
	unsigned flags = SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
			 (opt.dense ? 0 : SYNC_FILE_RANGE_WAIT_AFTER);

	if (sync_file_range(fd, base, (off_t)len, flags))
		ctr->errors++;
	ctr->sync_ops++;
	for (unsigned p = 0; p < opt.pages; p++) {
		off_t off = base + (off_t)p * PAGE;

		if (opt.mmap) {
			/* One store a cache line: the page is rewritten, as a
			 * pwrite would, without memset's size in the cost. */
			for (size_t i = 0; i < PAGE; i += 64)
				map[off + i] = (char)seq;
			ctr->mmap_ops++;
		} else if (pwrite(fd, buf, PAGE, off) != PAGE) {
			ctr->errors++;
		} else {
			ctr->write_ops++;
		}
	}
}

static void *worker(void *arg)
{
	off_t base = (off_t)(uintptr_t)arg * opt.pages * PAGE;
	char *buf;
	unsigned seq = 0;

	if (posix_memalign((void **)&buf, PAGE, PAGE))
		return NULL;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		memset(buf, (int)(++seq & 0xff), PAGE);
		round_once(buf, base, seq);
	}
	free(buf);
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = true;
}

static void parse_options(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "m:D:r:t:d:c:h")) != -1) {
		switch (c) {
		case 'm':
			if (strcmp(optarg, "write") && strcmp(optarg, "mmap"))
				usage(2);
			opt.mmap = !strcmp(optarg, "mmap");
			break;
		case 'D':
			if (strcmp(optarg, "dense") && strcmp(optarg, "none"))
				usage(2);
			opt.dense = !strcmp(optarg, "dense");
			break;
		case 'r':
			opt.pages = (unsigned)atoi(optarg);
			break;
		case 't':
			opt.threads = atoi(optarg);
			break;
		case 'd':
			opt.duration = atof(optarg);
			break;
		case 'c':
			opt.counters = optarg;
			break;
		case 'h':
			usage(0);
		default:
			usage(2);
		}
	}
	if (optind != argc - 1 || opt.pages < 1 || opt.pages > 65536 || opt.threads < 1 ||
	    opt.threads > MAX_THREADS || opt.duration <= 0)
		usage(2);
	opt.path = argv[optind];
}

/* The file at threads x pages, written through once (allocated, cached). */
static void setup_file(void)
{
	size_t size = (size_t)opt.threads * opt.pages * PAGE;
	char page[PAGE];

	fd = open(opt.path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)size))
		fail(opt.path);
	memset(page, 0x5a, sizeof(page));
	for (size_t off = 0; off < size; off += PAGE)
		if (pwrite(fd, page, PAGE, (off_t)off) != PAGE)
			fail("fill");
	if (fsync(fd))
		fail("fsync");
	if (opt.mmap) {
		map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED)
			fail("mmap");
	}
}

int main(int argc, char **argv)
{
	pthread_t tids[MAX_THREADS];
	struct timespec t0, t1, nap;
	double secs;

	parse_options(argc, argv);
	if (opt.counters)
		ctr = wac_counters_create("gridload", opt.counters);
	setup_file();
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < opt.threads; i++)
		pthread_create(&tids[i], NULL, worker, (void *)i);
	nap.tv_sec = (time_t)opt.duration;
	nap.tv_nsec = (long)((opt.duration - (double)nap.tv_sec) * 1e9);
	while (nanosleep(&nap, &nap) && !stop)
		;
	stop = true;
	for (int i = 0; i < opt.threads; i++)
		pthread_join(tids[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("gridload mode=%s density=%s threads=%d pages=%u duration_s=%.3f write_ops=%llu "
	       "mmap_ops=%llu sync_ops=%llu errors=%llu ops_per_s=%.0f\n",
	       opt.mmap ? "mmap" : "write", opt.dense ? "dense" : "none", opt.threads, opt.pages,
	       secs, (unsigned long long)ctr->write_ops, (unsigned long long)ctr->mmap_ops,
	       (unsigned long long)ctr->sync_ops, (unsigned long long)ctr->errors,
	       (ctr->write_ops + ctr->mmap_ops) / secs);
	return ctr->errors ? 1 : 0;
}
