// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/types.h>
#include "parse.h"
#include "resolve.h"
#include "stablepage.h"

/* include/linux/exportfs.h */
#define FILEID_INO32_GEN 1
#define FILEID_KERNFS 0xfe

struct mount_info {
	uint32_t dev;
	char *mountpoint;
	char *root;
	bool cgroup2;
};

static struct mount_info *mounts;
static size_t nmounts;
static bool mounts_loaded;
static time_t mounts_loaded_at;

static void free_mounts(void)
{
	for (size_t i = 0; i < nmounts; i++) {
		free(mounts[i].mountpoint);
		free(mounts[i].root);
	}
	free(mounts);
	mounts = NULL;
	nmounts = 0;
	mounts_loaded = false;
}

static void load_mounts(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;

	free_mounts();
	mounts_loaded = true;
	mounts_loaded_at = time(NULL);
	if (!f)
		return;
	while (getline(&line, &cap, f) >= 0) {
		struct mountinfo_entry e;
		struct mount_info *m;

		if (!parse_mountinfo_line(line, &e))
			continue;
		m = realloc(mounts, (nmounts + 1) * sizeof(*mounts));
		if (!m)
			break;
		mounts = m;
		mounts[nmounts].dev = spt_kdev(e.major, e.minor);
		mounts[nmounts].mountpoint = strdup(e.mountpoint);
		mounts[nmounts].root = strdup(e.root);
		mounts[nmounts].cgroup2 = !strcmp(e.fstype, "cgroup2");
		nmounts++;
	}
	free(line);
	fclose(f);
}

/* The mount of dev that exposes the most of it: root "/" preferred.
 * Filesystems mounted after start are found by reloading, at most once a second. */
static const struct mount_info *mount_of(uint32_t dev)
{
	const struct mount_info *best = NULL;
	bool reloaded = false;

	if (!mounts_loaded)
		load_mounts(), reloaded = true;
again:
	for (size_t i = 0; i < nmounts; i++) {
		if (mounts[i].dev != dev)
			continue;
		if (!best || (strcmp(best->root, "/") && !strcmp(mounts[i].root, "/")))
			best = &mounts[i];
	}
	if (!best && !reloaded && time(NULL) != mounts_loaded_at) {
		load_mounts();
		reloaded = true;
		goto again;
	}
	return best;
}

uint32_t resolve_mount_bdev(const struct mountinfo_entry *e)
{
	struct stat st;

	if (e->source[0] == '/' && !stat(e->source, &st) && S_ISBLK(st.st_mode))
		return spt_kdev(major(st.st_rdev), minor(st.st_rdev));
	return spt_kdev(e->major, e->minor);
}

int read_int_file(const char *path, int *value)
{
	FILE *f = fopen(path, "re");
	char buf[32], *end;
	long v;
	bool ok;

	if (!f)
		return -errno;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	if (!ok)
		return -EINVAL;
	/* Checked before narrowing to int. */
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n') || v < INT_MIN || v > INT_MAX)
		return -EINVAL;
	*value = (int)v;
	return 0;
}

int resolve_disk(uint32_t kdev, struct spt_disk *d)
{
	char link[64], path[PATH_MAX + 16], majmin[32];
	bool ok;
	FILE *f;

	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", spt_kdev_major(kdev),
		 spt_kdev_minor(kdev));
	if (!realpath(link, d->sysfs))
		return -errno;
	snprintf(path, sizeof(path), "%s/partition", d->sysfs);
	if (!access(path, F_OK))
		*strrchr(d->sysfs, '/') = '\0';
	snprintf(d->name, sizeof(d->name), "%s", strrchr(d->sysfs, '/') + 1);
	snprintf(path, sizeof(path), "%s/dev", d->sysfs);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	ok = fgets(majmin, sizeof(majmin), f) != NULL;
	fclose(f);
	if (!ok)
		return -EINVAL;
	majmin[strcspn(majmin, "\n")] = '\0';
	return parse_majmin(majmin, &d->dev) ? 0 : -EINVAL;
}

/* /sys/class/block/NAME/dev holds "MAJ:MIN\n". */
static bool sysfs_block_dev(const char *name, uint32_t *kdev)
{
	char path[PATH_MAX], line[32];
	bool ok;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/block/%s/dev", name);
	f = fopen(path, "re");
	if (!f)
		return false;
	ok = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	if (!ok)
		return false;
	line[strcspn(line, "\n")] = '\0';
	return parse_majmin(line, kdev);
}

bool resolve_dev_arg(const char *arg, uint32_t *kdev)
{
	char path[PATH_MAX];
	struct stat st;

	if (parse_majmin(arg, kdev)) {
		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", spt_kdev_major(*kdev),
			 spt_kdev_minor(*kdev));
		return access(path, F_OK) == 0 || mount_of(*kdev);
	}
	if (!*arg || strchr(arg, ':'))
		return false;
	if (arg[0] == '/')
		snprintf(path, sizeof(path), "%s", arg);
	else
		snprintf(path, sizeof(path), "/dev/%s", arg);
	if (!stat(path, &st) && S_ISBLK(st.st_mode)) {
		*kdev = spt_kdev(major(st.st_rdev), minor(st.st_rdev));
		return true;
	}
	/* A NAME without its /dev node (a service with PrivateDevices=yes):
	 * the kernel's name in sysfs says its MAJ:MIN. */
	return arg[0] != '/' && !strchr(arg, '/') && sysfs_block_dev(arg, kdev);
}

/* Small direct-mapped caches: names are looked up for every printed event. */
#define CACHE_SLOTS 1024

struct path_slot {
	bool used;
	uint32_t dev, generation;
	uint64_t ino;
	char *path;
};
static struct path_slot path_cache[CACHE_SLOTS];

void resolve_blockdev_name(uint32_t kdev, char *buf, size_t len)
{
	char link[64], target[256];
	const char *base;
	ssize_t n;

	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", spt_kdev_major(kdev),
		 spt_kdev_minor(kdev));
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0) {
		snprintf(buf, len, "%u:%u", spt_kdev_major(kdev), spt_kdev_minor(kdev));
		return;
	}
	target[n] = 0;
	base = strrchr(target, '/');
	snprintf(buf, len, "%s", base ? base + 1 : target);
}

static char *fd_path(int fd)
{
	char link[64], buf[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return strdup(buf);
}

static char *lookup_path(uint32_t dev, uint64_t ino, uint32_t generation)
{
	const struct mount_info *m = mount_of(dev);
	struct {
		struct file_handle fh;
		uint32_t ino32_gen[2];
	} h;
	int mfd, fd;
	char *path = NULL;

	if (!m || ino > UINT32_MAX)
		return NULL;
	mfd = open(m->mountpoint, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return NULL;
	/* FILEID_INO32_GEN is the generic export handle: ext2/3/4, xfs, vfat... */
	h.fh.handle_bytes = sizeof(h.ino32_gen);
	h.fh.handle_type = FILEID_INO32_GEN;
	h.ino32_gen[0] = (uint32_t)ino;
	h.ino32_gen[1] = generation;
	fd = open_by_handle_at(mfd, &h.fh, O_PATH | O_CLOEXEC);
	if (fd >= 0) {
		path = fd_path(fd);
		close(fd);
	}
	close(mfd);
	return path;
}

/* A device's own page cache: the file is the device, /dev/NAME by its
 * kernel name (what devtmpfs creates); NULL when /sys/dev/block does not
 * know it any more. */
static char *bdev_path(uint32_t dev)
{
	char name[64], *path;

	resolve_blockdev_name(dev, name, sizeof(name));
	if (strchr(name, ':') || asprintf(&path, "/dev/%s", name) < 0)
		return NULL;
	return path;
}

const char *resolve_path(uint32_t dev, uint64_t ino, uint32_t generation)
{
	struct path_slot *s = &path_cache[(ino * 31 + dev) % CACHE_SLOTS];

	if (s->used && s->dev == dev && s->ino == ino && s->generation == generation)
		return s->path;
	free(s->path);
	s->used = true;
	s->dev = dev;
	s->ino = ino;
	s->generation = generation;
	s->path = ino == SPT_INO_BDEV ? bdev_path(dev) : lookup_path(dev, ino, generation);
	return s->path;
}

struct cgroup_slot {
	bool used;
	uint64_t id;
	char *path;
};
static struct cgroup_slot cgroup_cache[CACHE_SLOTS];
static int cgroup_root_fd = -2;
static char *cgroup_root;

/* bpf_get_current_cgroup_id() is the cgroup v2 id: a kernfs node id, which
 * open_by_handle_at() on any cgroup2 mount turns back into a directory. */
static char *lookup_cgroup(uint64_t id)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h;
	char *path = NULL, *rel;
	size_t rootlen;
	int fd;

	if (id == 1) /* the cgroup v2 root, also when cgroup2 is not mounted */
		return strdup("/");
	if (cgroup_root_fd == -2) {
		if (!mounts_loaded)
			load_mounts();
		for (size_t i = 0; i < nmounts && !cgroup_root; i++)
			if (mounts[i].cgroup2 && !strcmp(mounts[i].root, "/"))
				cgroup_root = strdup(mounts[i].mountpoint);
		cgroup_root_fd = cgroup_root ? open(cgroup_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
					     : -1;
	}
	if (cgroup_root_fd < 0)
		return NULL;
	h.fh.handle_bytes = sizeof(h.id);
	h.fh.handle_type = FILEID_KERNFS;
	h.id = id;
	fd = open_by_handle_at(cgroup_root_fd, &h.fh, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	path = fd_path(fd);
	close(fd);
	rootlen = strlen(cgroup_root);
	if (path && !strncmp(path, cgroup_root, rootlen)) {
		rel = strdup(path[rootlen] ? path + rootlen : "/");
		free(path);
		path = rel;
	}
	return path;
}

const char *resolve_cgroup(uint64_t id)
{
	struct cgroup_slot *s = &cgroup_cache[id % CACHE_SLOTS];

	if (s->used && s->id == id)
		return s->path;
	free(s->path);
	s->used = true;
	s->id = id;
	s->path = lookup_cgroup(id);
	return s->path;
}

int open_cgroup_dir(const char *path)
{
	struct statfs sfs;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstatfs(fd, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		close(fd);
		errno = ENOTDIR;
		return -1;
	}
	return fd;
}

void resolve_cleanup(void)
{
	for (size_t i = 0; i < CACHE_SLOTS; i++) {
		free(path_cache[i].path);
		free(cgroup_cache[i].path);
		path_cache[i] = (struct path_slot){ 0 };
		cgroup_cache[i] = (struct cgroup_slot){ 0 };
	}
	free_mounts();
	if (cgroup_root_fd >= 0)
		close(cgroup_root_fd);
	cgroup_root_fd = -2;
	free(cgroup_root);
	cgroup_root = NULL;
}
