// SPDX-License-Identifier: GPL-2.0
/*
 * soakcount: the soak benchmark's (bench/soak.sh) two looks at the tracer
 * from outside it.
 *
 * soakcount count MAJ:MIN
 *   The independent count: loads bench/soakcount.bpf.c (its own skeleton,
 *   no code of bpf/ or user/), attaches it to writeback_dirty_folio, says
 *   "attached" on stdout and, at SIGINT or SIGTERM, detaches and prints
 *     files=N bdev_cache=N total=N dirtied=N
 *   (folios of the device dirtied under writeback: in files, in the device's
 *   own cache, both; and every clean -> dirty of the device), then one line
 *   "comm NAME N" per comm that dirtied them.
 *
 * soakcount maps PID
 *   The BPF maps PID holds open, one line each:
 *     map name=NAME id=N type=N max_entries=N entries=N|- memlock=BYTES
 *   from /proc/PID/fdinfo (memlock: what the kernel charges for the map)
 *   and the map itself; entries are counted by walking the keys of hash
 *   maps ("-" for arrays, ring buffers and the like, whose size is fixed).
 *
 * Errors: one line on stderr, exit 2 for usage and 1 at run time.
 */
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "soakcount.skel.h"

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

static int quiet_libbpf(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, args) : 0;
}

static void __attribute__((noreturn)) usage(void)
{
	fprintf(stderr, "usage: soakcount count MAJ:MIN | soakcount maps PID\n");
	exit(2);
}

static __u64 percpu_sum(int fd, __u32 idx)
{
	int ncpus = libbpf_num_possible_cpus();
	__u64 vals[ncpus > 0 ? ncpus : 1], sum = 0;

	if (ncpus <= 0 || bpf_map_lookup_elem(fd, &idx, vals))
		return 0;
	for (int i = 0; i < ncpus; i++)
		sum += vals[i];
	return sum;
}

static void print_counts(struct soakcount_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.counts), cfd = bpf_map__fd(skel->maps.by_comm);
	__u64 files = percpu_sum(fd, 0), bdev = percpu_sum(fd, 1), dirtied = percpu_sum(fd, 2);
	char key[16], next[16];
	void *prev = NULL;
	__u64 n;

	printf("files=%llu bdev_cache=%llu total=%llu dirtied=%llu\n", (unsigned long long)files,
	       (unsigned long long)bdev, (unsigned long long)(files + bdev),
	       (unsigned long long)dirtied);
	while (!bpf_map_get_next_key(cfd, prev, next)) {
		memcpy(key, next, sizeof(key));
		prev = key;
		if (!bpf_map_lookup_elem(cfd, key, &n))
			printf("comm %.16s %llu\n", key, (unsigned long long)n);
	}
}

static int count(const char *devarg)
{
	unsigned int major, minor;
	struct soakcount_bpf *skel;
	char extra;
	int err;

	if (sscanf(devarg, "%u:%u%c", &major, &minor, &extra) != 2)
		usage();
	skel = soakcount_bpf__open();
	if (!skel) {
		fprintf(stderr, "soakcount: open: %s\n", strerror(errno));
		return 1;
	}
	/* the kernel's dev_t: the major above a 20-bit minor (MINORBITS) */
	skel->rodata->target_dev = major << 20 | minor;
	err = soakcount_bpf__load(skel);
	if (!err)
		err = soakcount_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "soakcount: load and attach: %s\n", strerror(-err));
		soakcount_bpf__destroy(skel);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("attached\n");
	fflush(stdout);
	while (!exiting)
		pause();
	soakcount_bpf__detach(skel);
	print_counts(skel);
	soakcount_bpf__destroy(skel);
	return 0;
}

/* Keys of a hash map, walked; -1 if the walk failed. */
static long count_keys(int fd, __u32 key_size)
{
	char a[key_size], b[key_size];
	void *prev = NULL, *next = a;
	long n = 0;

	while (!bpf_map_get_next_key(fd, prev, next)) {
		n++;
		prev = next;
		next = next == a ? b : a;
	}
	return errno == ENOENT ? n : -1;
}

static bool keyed(__u32 type)
{
	return type == BPF_MAP_TYPE_HASH || type == BPF_MAP_TYPE_LRU_HASH ||
	       type == BPF_MAP_TYPE_PERCPU_HASH || type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

/* One fd of PID: a line if it is a BPF map. */
static void show_map_fd(const char *pid, const char *fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	unsigned long long memlock = 0;
	unsigned int id = 0;
	char path[PATH_MAX], line[256];
	FILE *f;
	int mfd;

	snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s", pid, fd);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "memlock: %llu", &memlock);
		sscanf(line, "map_id: %u", &id);
	}
	fclose(f);
	if (!id)
		return;
	mfd = bpf_map_get_fd_by_id(id);
	if (mfd < 0 || bpf_obj_get_info_by_fd(mfd, &info, &len)) {
		if (mfd >= 0)
			close(mfd);
		return;
	}
	printf("map name=%s id=%u type=%u max_entries=%u ", info.name, id, info.type,
	       info.max_entries);
	if (keyed(info.type))
		printf("entries=%ld", count_keys(mfd, info.key_size));
	else
		printf("entries=-");
	printf(" memlock=%llu\n", memlock);
	close(mfd);
}

static int maps(const char *pid)
{
	char path[64];
	struct dirent *d;
	DIR *dir;

	if (strspn(pid, "0123456789") != strlen(pid) || strlen(pid) > 10)
		usage();
	snprintf(path, sizeof(path), "/proc/%s/fd", pid);
	dir = opendir(path);
	if (!dir) {
		fprintf(stderr, "soakcount: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.')
			show_map_fd(pid, d->d_name);
	closedir(dir);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		usage();
	libbpf_set_print(quiet_libbpf);
	if (!strcmp(argv[1], "count"))
		return count(argv[2]);
	if (!strcmp(argv[1], "maps"))
		return maps(argv[2]);
	usage();
}
