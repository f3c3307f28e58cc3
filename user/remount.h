/* SPDX-License-Identifier: GPL-2.0 */
/*
 * enforce --remount: a filesystem unmounted and mounted again exactly as it
 * was (new mount API), every check made before the unmount; the lock that
 * keeps two enforce runs apart; the tests' fault points.
 */
#ifndef SPT_REMOUNT_H
#define SPT_REMOUNT_H

#include <stddef.h>
#include <stdint.h>
#include "mountspec.h"

struct remount {
	struct mount_spec spec;
	int mnt_id;	    /* mountinfo's mount id; 0 when restoring */
	unsigned int attrs; /* MOUNT_ATTR_* */
	int parent_fd;	    /* the mount point's directory, opened without symlinks */
	char name[256];	    /* the mount point in it */
	int fs_fd;	    /* a filesystem context with every option set, not created */
};

/*
 * Checks everything a remount needs and changes nothing: options a fresh
 * mount reproduces, the path free of symbolic links and leading to the
 * mount (mnt_id) or, restoring, to no mount at all, no mount inside it, the
 * source still the device, the filesystem accepting every option. 0; 1 when
 * restoring and spec is mounted already; -1 with the reason in why (-2:
 * the source is not the device any more).
 */
int remount_prepare(struct remount *r, const struct mount_spec *spec, int mnt_id, char *why,
		    size_t len);
/* umount(2) of the mount point, symbolic links not followed. 0 or -errno. */
int remount_unmount(struct remount *r);
/* A new superblock mounted at the mount point with the same flags and
 * propagation. 0; 1 when mounted but on the old superblock (alive in
 * another mount namespace); -1 with the reason in why. */
int remount_mount(struct remount *r, char *why, size_t len);
void remount_close(struct remount *r);

/* Up to five processes keeping the filesystem dev (kernel dev) busy, for
 * the line that refuses: "pid 12 (sleep), ...". Their cwd, open files,
 * mappings. */
void busy_users(uint32_t dev, char *buf, size_t len);

/* `enforce --restore` of an "unmounted" state line: mounts it again. 0 when
 * done or nothing is left to do, 1 (the line stays); one line said. */
int remount_restore(const struct mount_spec *spec);

/* The lock file that keeps enforce --native runs and --restore apart, held
 * until exit. 0, or -1 after one line (another run holds it). */
int enforce_lock(void);

/* For tests only: SPT_TEST_FAULT=kill:POINT or stop:POINT sends the tool
 * SIGKILL or SIGSTOP there (points: locked, found, unmounted). */
void spt_test_fault(const char *point);

#endif
