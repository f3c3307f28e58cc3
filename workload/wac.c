// SPDX-License-Identifier: GPL-2.0
/*
 * wac: "write after checksum" workload, modelled on the reproducer of the
 * stable-pages patch set: threads madly rewriting the same pages of one file
 * while writeback of those pages is started underneath them.
 *
 *   A  write() threads + sync_file_range(SYNC_FILE_RANGE_WRITE)
 *   B  mmap store threads + msync(MS_SYNC)
 *   C  half A, half B
 *   D  C with O_DIRECT writers
 *   E  A with O_DIRECT
 *   F  B on a file opened O_DIRECT
 *   M  metadata: threads creating, appending to and deleting files in the
 *      directory FILE, with syncfs() every N operations (the filesystem's
 *      bitmaps, inode tables and directory blocks written under them)
 *   G  O_DIRECT pwrite() threads, each with a racing thread that keeps
 *      changing the writer's buffer while the write is in flight (fstests
 *      generic/761, dio-writeback-race): no page-cache hook sees those stores
 *   H  G without the racing threads: the buffers do not change in flight
 *
 * Prints one line of key=value results: operations done per type and ops/s.
 * With -c FILE the counters live in FILE, mapped shared, so that another
 * process can read them at any moment (struct wac_counters; make bench reads
 * the ops done in windows of one run).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sys/prctl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "counters.h"

#define PAGE 4096

static struct {
	char profile;
	int threads;
	size_t size;
	double duration;
	unsigned sync_every;
	const char *path;
	const char *counters;
} opt = { .profile = 'A', .threads = 4, .size = 64 * 1024, .duration = 5, .sync_every = 4 };

static atomic_bool stop;
static struct wac_counters own_counters, *ctr = &own_counters;
static atomic_int last_errno; /* of the last failed call, for the report */
static int fd_buffered, fd_direct;
static char *map;

static void __attribute__((noreturn)) usage(int code)
{
	fprintf(code ? stderr : stdout,
		"usage: wac [-p A-H|M] [-t THREADS] [-s SIZE[k|m]] [-d SECS] [-S N] [-n COMM]\n"
		"           [-c FILE] FILE\n"
		"  -p  profile: A write()+sync_file_range, B mmap+msync, C both, D C+O_DIRECT,\n"
		"      E A+O_DIRECT, F B+O_DIRECT, G O_DIRECT writes of buffers another thread\n"
		"      keeps changing, H G without the racing threads (default A); M: FILE is a\n"
		"      directory, files created, appended to, deleted, syncfs() every N ops\n"
		"  -t  threads (default 4)   -s  file size (default 64k)\n"
		"  -d  duration in seconds (default 5)   -S  start writeback every N ops (default 4)\n"
		"  -n  set the process name (comm) first, e.g. to test how tools escape it\n"
		"  -c  keep the counters in this file, mapped shared: four 64-bit counters\n"
		"      (write, mmap, sync ops, errors) that another process can read\n");
	exit(code);
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* G: each writer's page-aligned buffer, changed by its racer (no sync:
 * racing is the point). */
static char *race_bufs[256];

static void *racer(void *arg)
{
	volatile char *buf = race_bufs[(uintptr_t)arg - 1];
	unsigned char v = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		v++;
		for (size_t i = 0; i < PAGE; i += 64)
			buf[i] = (char)v;
	}
	return NULL;
}

/* G and H: O_DIRECT page writes from one buffer per writer, filled once
 * before each write (H) or changed all along by a racer (G). */
static void *direct_writer(void *arg)
{
	char *buf = race_bufs[(uintptr_t)arg - 1];
	uint64_t seed = (uintptr_t)arg * 2654435761u + 3;
	size_t npages = opt.size / PAGE;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		off_t off = (off_t)(xorshift(&seed) % npages) * PAGE;

		if (opt.profile == 'H')
			memset(buf, (int)(seed & 0xff), PAGE);
		if (pwrite(fd_direct, buf, PAGE, off) != PAGE) {
			last_errno = errno;
			ctr->errors++;
			continue;
		}
		ctr->write_ops++;
	}
	return NULL;
}

static void *writer(void *arg)
{
	bool direct = (opt.profile == 'D' || opt.profile == 'E');
	int fd = direct ? fd_direct : fd_buffered;
	uint64_t seed = (uintptr_t)arg * 2654435761u + 1;
	size_t npages = opt.size / PAGE;
	void *buf;
	unsigned n = 0;

	if (posix_memalign(&buf, PAGE, PAGE))
		return NULL;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		off_t off = (off_t)(xorshift(&seed) % npages) * PAGE;

		memset(buf, (int)(seed & 0xff), PAGE);
		if (pwrite(fd, buf, PAGE, off) != PAGE) {
			last_errno = errno;
			ctr->errors++;
			continue;
		}
		ctr->write_ops++;
		if (++n % opt.sync_every == 0) {
			sync_file_range(fd, off, PAGE, SYNC_FILE_RANGE_WRITE);
			ctr->sync_ops++;
		}
	}
	free(buf);
	return NULL;
}

static void *mapper(void *arg)
{
	uint64_t seed = (uintptr_t)arg * 2654435761u + 7;
	size_t npages = opt.size / PAGE;
	unsigned n = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		char *page = map + (xorshift(&seed) % npages) * PAGE;

		memset(page, (int)(seed & 0xff), PAGE);
		ctr->mmap_ops++;
		if (++n % opt.sync_every == 0) {
			msync(page, PAGE, MS_SYNC);
			ctr->sync_ops++;
		}
	}
	return NULL;
}

/*
 * Profile M: each thread cycles through 64 files of its own in the
 * directory: a 4 KiB append to each (creating it), every third operation
 * a deletion instead; syncfs() every opt.sync_every operations starts the
 * writeback of the device's own cache (bitmaps, group descriptors, inode
 * tables, directory blocks) while the other threads keep changing them.
 */
static void *metadata_worker(void *arg)
{
	int dir = open(opt.path, O_RDONLY | O_DIRECTORY);
	unsigned long id = (uintptr_t)arg;
	char name[64], page[PAGE];
	unsigned n = 0;

	if (dir < 0) {
		last_errno = errno;
		ctr->errors++;
		return NULL;
	}
	memset(page, 0x6d, sizeof(page));
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		int fd, ok;

		snprintf(name, sizeof(name), "wac-m.%lu.%u", id, n % 64);
		if (n % 3 == 2) {
			ok = !unlinkat(dir, name, 0) || errno == ENOENT;
		} else {
			fd = openat(dir, name, O_WRONLY | O_CREAT | O_APPEND, 0644);
			ok = fd >= 0 && write(fd, page, PAGE) == PAGE;
			if (fd >= 0)
				close(fd);
		}
		if (!ok) {
			last_errno = errno;
			ctr->errors++;
		}
		ctr->write_ops++;
		if (++n % opt.sync_every == 0) {
			syncfs(dir);
			ctr->sync_ops++;
		}
	}
	close(dir);
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = true;
}

static size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (end == s)
		return 0;
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	else if (*end == 'g' || *end == 'G')
		v <<= 30, end++;
	return *end ? 0 : (size_t)v;
}

/* Fills opt from the command line; usage() (exit 2) on anything invalid. */
static void parse_options(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "p:t:s:d:S:n:c:h")) != -1) {
		switch (c) {
		case 'p':
			opt.profile = optarg[0] & ~0x20;
			if (optarg[1] ||
			    ((opt.profile < 'A' || opt.profile > 'H') && opt.profile != 'M'))
				usage(2);
			break;
		case 't':
			opt.threads = atoi(optarg);
			break;
		case 's':
			opt.size = parse_size(optarg);
			break;
		case 'd':
			opt.duration = atof(optarg);
			break;
		case 'S':
			opt.sync_every = (unsigned)atoi(optarg);
			break;
		case 'n':
			/* Threads created later inherit it. */
			if (prctl(PR_SET_NAME, optarg, 0, 0, 0)) {
				perror("wac: prctl(PR_SET_NAME)");
				exit(1);
			}
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
	if (optind != argc - 1 || opt.threads < 1 || opt.threads > 256 || opt.size < PAGE || opt.duration <= 0 ||
	    !opt.sync_every)
		usage(2);
	/* Whole pages: the threads write page-aligned pages, O_DIRECT ones too. */
	opt.size -= opt.size % PAGE;
	opt.path = argv[optind];
}

/*
 * Opens (creates) the file at opt.size, written through once so every page is
 * allocated and in the page cache; then the O_DIRECT descriptor (D, E, F) and
 * the shared mapping (B, C, D, F) the profile needs. -1 after a message
 * (none when filling it fails).
 */
static int setup_file(void)
{
	char page[PAGE];
	struct stat st;

	if (opt.profile == 'M') {
		fd_buffered = open(opt.path, O_RDONLY | O_DIRECTORY);
		if (fd_buffered < 0)
			fprintf(stderr, "wac: %s: %s\n", opt.path, strerror(errno));
		return fd_buffered < 0 ? -1 : 0;
	}
	fd_buffered = open(opt.path, O_RDWR | O_CREAT, 0644);
	/* A block device (write() to /dev/loopN: its own page cache) has
	 * its size: only its first opt.size bytes are written. */
	if (fd_buffered < 0 || fstat(fd_buffered, &st) ||
	    (!S_ISBLK(st.st_mode) && ftruncate(fd_buffered, opt.size))) {
		fprintf(stderr, "wac: %s: %s\n", opt.path, strerror(errno));
		return -1;
	}
	memset(page, 0x5a, sizeof(page));
	for (size_t off = 0; off < opt.size; off += PAGE)
		if (pwrite(fd_buffered, page, PAGE, off) != PAGE)
			return -1;
	fsync(fd_buffered);
	if (strchr("DEFGH", opt.profile)) {
		fd_direct = open(opt.path, O_RDWR | O_DIRECT);
		if (fd_direct < 0) {
			fprintf(stderr, "wac: %s: O_DIRECT: %s\n", opt.path, strerror(errno));
			return -1;
		}
	}
	if (strchr("BCDF", opt.profile)) {
		map = mmap(NULL, opt.size, PROT_READ | PROT_WRITE, MAP_SHARED,
			   opt.profile == 'F' ? fd_direct : fd_buffered, 0);
		if (map == MAP_FAILED) {
			fprintf(stderr, "wac: mmap: %s\n", strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* G, H: a direct writer per thread, and in G its racer (tids after the writers). */
static void start_direct_pairs(pthread_t *tids, int *nwrite)
{
	for (long i = 0; i < opt.threads; i++) {
		if (posix_memalign((void **)&race_bufs[i], PAGE, PAGE))
			exit(1);
		memset(race_bufs[i], 0x5a, PAGE);
	}
	for (long i = 0; i < opt.threads; i++) {
		(*nwrite)++;
		pthread_create(&tids[i], NULL, direct_writer, (void *)(i + 1));
		if (opt.profile == 'G')
			pthread_create(&tids[opt.threads + i], NULL, racer, (void *)(i + 1));
	}
}

/*
 * Runs the profile's threads for opt.duration seconds, or until SIGINT or
 * SIGTERM: B and F map only, C and D alternate (odd threads map), A and E
 * write only. Counts them in *nwrite and *nmap; returns the seconds they ran,
 * from before the first started to after the last ended.
 */
static double run_threads(int *nwrite, int *nmap)
{
	pthread_t *tids = calloc(opt.threads * 2, sizeof(*tids));
	struct timespec t0, t1, nap;

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < opt.threads && !strchr("GH", opt.profile); i++) {
		bool use_map = opt.profile == 'B' || opt.profile == 'F' ||
			       (strchr("CD", opt.profile) && i % 2);

		void *(*fn)(void *) = use_map ? mapper : writer;

		if (opt.profile == 'M')
			fn = metadata_worker;
		use_map ? (*nmap)++ : (*nwrite)++;
		pthread_create(&tids[i], NULL, fn, (void *)(i + 1));
	}
	if (strchr("GH", opt.profile))
		start_direct_pairs(tids, nwrite);
	nap.tv_sec = (time_t)opt.duration;
	nap.tv_nsec = (long)((opt.duration - (double)nap.tv_sec) * 1e9);
	while (nanosleep(&nap, &nap) && !stop)
		;
	stop = true;
	for (int i = 0; i < opt.threads * (opt.profile == 'G' ? 2 : 1); i++)
		pthread_join(tids[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
}

/* The one key=value line (bench/bench.sh reads ops_per_s), and the last
 * error on stderr if writes failed. */
static void report(int nwrite, int nmap, double secs)
{
	printf("wac profile=%c threads=%d writers=%d mappers=%d size=%zu duration_s=%.3f "
	       "write_ops=%llu mmap_ops=%llu sync_ops=%llu errors=%llu ops_per_s=%.0f\n",
	       opt.profile, opt.threads, nwrite, nmap, opt.size, secs,
	       (unsigned long long)ctr->write_ops, (unsigned long long)ctr->mmap_ops,
	       (unsigned long long)ctr->sync_ops, (unsigned long long)ctr->errors,
	       (ctr->write_ops + ctr->mmap_ops) / secs);
	if (ctr->errors)
		fprintf(stderr, "wac: %llu failed writes, the last with errno %d (%s)\n",
			(unsigned long long)ctr->errors, last_errno, strerror(last_errno));
}

/* 0, or 1 when setting up failed or a write did. */
int main(int argc, char **argv)
{
	int nmap = 0, nwrite = 0;
	double secs;

	parse_options(argc, argv);
	if (opt.counters)
		ctr = wac_counters_create("wac", opt.counters);
	if (setup_file())
		return 1;
	secs = run_threads(&nwrite, &nmap);
	report(nwrite, nmap, secs);
	if (map)
		munmap(map, opt.size);
	close(fd_buffered);
	if (fd_direct > 0)
		close(fd_direct);
	return ctr->errors ? 1 : 0;
}
