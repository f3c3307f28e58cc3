/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The new mount API (fsopen, fsconfig, fsmount, move_mount, mount_setattr)
 * and openat2, through syscall(): glibc before 2.36 has no wrappers and
 * none of the constants. The numbers are the kernel's ABI (the same on
 * every architecture for these calls), not a layout.
 */
#ifndef SPT_MOUNTAPI_H
#define SPT_MOUNTAPI_H

#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/syscall.h>

#ifndef __NR_move_mount
#define __NR_move_mount 429
#endif
#ifndef __NR_fsopen
#define __NR_fsopen 430
#endif
#ifndef __NR_fsconfig
#define __NR_fsconfig 431
#endif
#ifndef __NR_fsmount
#define __NR_fsmount 432
#endif
#ifndef __NR_openat2
#define __NR_openat2 437
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif

#ifndef FSOPEN_CLOEXEC
#define FSOPEN_CLOEXEC 0x1
#define FSMOUNT_CLOEXEC 0x1
#define MOVE_MOUNT_F_EMPTY_PATH 0x4
#endif
#ifndef FSCONFIG_SET_FLAG
#define FSCONFIG_SET_FLAG 0
#define FSCONFIG_SET_STRING 1
#define FSCONFIG_CMD_CREATE 6
#endif
/* Linux 6.6: create, never reuse a superblock that is still alive. */
#define SPT_FSCONFIG_CMD_CREATE_EXCL 8
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x1
#define MOUNT_ATTR_NOSUID 0x2
#define MOUNT_ATTR_NODEV 0x4
#define MOUNT_ATTR_NOEXEC 0x8
#define MOUNT_ATTR__ATIME 0x70
#define MOUNT_ATTR_RELATIME 0x0
#define MOUNT_ATTR_NOATIME 0x10
#define MOUNT_ATTR_STRICTATIME 0x20
#define MOUNT_ATTR_NODIRATIME 0x80
#endif
#ifndef MOUNT_ATTR_NOSYMFOLLOW
#define MOUNT_ATTR_NOSYMFOLLOW 0x200000
#endif
#ifndef MS_SHARED
#define MS_UNBINDABLE (1 << 17)
#define MS_PRIVATE (1 << 18)
#define MS_SHARED (1 << 20)
#endif
#ifndef UMOUNT_NOFOLLOW
#define UMOUNT_NOFOLLOW 0x8
#endif
#define SPT_RESOLVE_NO_SYMLINKS 0x04
#define SPT_STATX_MNT_ID 0x1000U
#define SPT_STATX_ATTR_MOUNT_ROOT 0x2000

/* include/uapi/linux/openat2.h, include/uapi/linux/mount.h */
struct spt_open_how {
	uint64_t flags, mode, resolve;
};
struct spt_mount_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

static inline int spt_openat2(int dfd, const char *path, uint64_t flags, uint64_t resolve)
{
	struct spt_open_how how = { .flags = flags, .resolve = resolve };

	return (int)syscall(__NR_openat2, dfd, path, &how, sizeof(how));
}
static inline int spt_fsopen(const char *fstype, unsigned int flags)
{
	return (int)syscall(__NR_fsopen, fstype, flags);
}
static inline int spt_fsconfig(int fd, unsigned int cmd, const char *key, const void *value,
			       int aux)
{
	return (int)syscall(__NR_fsconfig, fd, cmd, key, value, aux);
}
static inline int spt_fsmount(int fd, unsigned int flags, unsigned int attrs)
{
	return (int)syscall(__NR_fsmount, fd, flags, attrs);
}
static inline int spt_move_mount(int from_dfd, const char *from, int to_dfd, const char *to,
				 unsigned int flags)
{
	return (int)syscall(__NR_move_mount, from_dfd, from, to_dfd, to, flags);
}
static inline int spt_mount_setattr(int dfd, const char *path, unsigned int flags,
				    struct spt_mount_attr *attr)
{
	return (int)syscall(__NR_mount_setattr, dfd, path, flags, attr, sizeof(*attr));
}

#endif
