/* SPDX-License-Identifier: GPL-2.0 */
/* Turning kernel identities (dev, inode, cgroup id) into names users know. */
#ifndef SPT_RESOLVE_H
#define SPT_RESOLVE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <limits.h>

/* "loop0", "/dev/loop0" or "7:0" -> kernel dev. MAJ:MIN may also name a
 * mounted filesystem's anonymous dev (btrfs). False when unknown. */
bool resolve_dev_arg(const char *arg, uint32_t *kdev);

/* Best-effort path of inode (dev, ino, generation), cached. NULL if unknown. */
const char *resolve_path(uint32_t dev, uint64_t ino, uint32_t generation);

/* cgroup v2 path ("/system.slice/foo.service") of a cgroup id, cached. */
const char *resolve_cgroup(uint64_t cgroup_id);

/* Opens a cgroup v2 directory for the cgroup filter. -1 with errno set. */
int open_cgroup_dir(const char *path);

/* Kernel name of a block device ("loop0", "nvme0n1p2"), or "MAJ:MIN" when
 * /sys/dev/block does not know it (an anonymous dev). */
void resolve_blockdev_name(uint32_t kdev, char *buf, size_t len);
/* The block device a mountinfo line's filesystem lives on: the source's
 * rdev when the source is a block device (btrfs shows an anonymous s_dev),
 * else its MAJ:MIN. */
struct mountinfo_entry;
uint32_t resolve_mount_bdev(const struct mountinfo_entry *e);

/* A whole disk: the one whose request queue (and queue/stable_writes)
 * governs a block device, itself or the disk a partition belongs to. */
struct spt_disk {
	uint32_t dev;
	char name[64];	      /* kernel name: "loop0", "sda" */
	char sysfs[PATH_MAX]; /* /sys/devices/.../block/NAME */
};
/* 0, or -errno when kdev is not a block device in /sys/dev/block. */
int resolve_disk(uint32_t kdev, struct spt_disk *d);

/* One integer from a sysfs attribute (queue/stable_writes): 0 or -errno. */
int read_int_file(const char *path, int *value);

void resolve_cleanup(void);

#endif
