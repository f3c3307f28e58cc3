// SPDX-License-Identifier: GPL-2.0
/*
 * enforce --remount with the new mount API. A filesystem context is opened
 * and given every superblock option before anything is unmounted, so an
 * option the filesystem would refuse is found while the mount still
 * stands; the per-mount flags go to fsmount(), which takes each one that
 * mountinfo shows (nosymfollow included), and the propagation to
 * mount_setattr(). The mount point is reached through its parent
 * directory, opened with RESOLVE_NO_SYMLINKS, and never by following a
 * symbolic link, for the unmount and for the mount alike.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "hold_record.h"
#include "mountapi.h"
#include "msg.h"
#include "parse.h"
#include "remount.h"

#define LOCK_FILE SPT_RUN_DIR "/enforce.lock"

static const unsigned long prop_flags[] = { MS_PRIVATE, MS_SHARED, MS_UNBINDABLE };

void spt_test_fault(const char *point)
{
	const char *f = getenv("SPT_TEST_FAULT");

	if (!f || strlen(f) < 6 || strcmp(f + 5, point))
		return;
	if (!strncmp(f, "kill:", 5))
		raise(SIGKILL);
	if (!strncmp(f, "stop:", 5))
		raise(SIGSTOP);
}

/* The filesystem context's last message ("e ext4: Unknown parameter 'x'"). */
static const char *fs_log(int fd, char *buf, size_t len)
{
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;

	if (n <= 2)
		return strerror(errno);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf + 2;
}

/* A context for spec with its source and every superblock option set. */
static int fs_context(const struct mount_spec *s, char *why, size_t len)
{
	char key[256], val[1024], log[256];
	const char *p = s->super_opts;
	bool has_val;
	int fd = spt_fsopen(s->fstype, FSOPEN_CLOEXEC);

	if (fd < 0) {
		snprintf(why, len,
			 errno == ENOSYS ? "it needs the new mount API (fsopen, Linux 5.2)"
					 : "fsopen(%s): %s",
			 s->fstype, strerror(errno));
		return -1;
	}
	if (spt_fsconfig(fd, FSCONFIG_SET_STRING, "source", s->source, 0)) {
		snprintf(why, len, "its source %s: %s", s->source, fs_log(fd, log, sizeof(log)));
		goto fail;
	}
	while (p[strspn(p, ",")]) {
		if (!mount_opt_next(&p, key, sizeof(key), val, sizeof(val), &has_val)) {
			snprintf(why, len, "an option of %s is too long", s->fstype);
			goto fail;
		}
		/* Shown by the LSM for filesystems it labels; not an option. */
		if (!strcmp(key, "seclabel"))
			continue;
		if (spt_fsconfig(fd, has_val ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG, key,
				 has_val ? val : NULL, 0)) {
			snprintf(why, len, "%s would not take its option %s%s%s again (%s)",
				 s->fstype, key, has_val ? "=" : "", val,
				 fs_log(fd, log, sizeof(log)));
			goto fail;
		}
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/* The mount point, through its parent opened without symbolic links. */
static int open_target(struct remount *r, struct statx *stx, char *why, size_t len)
{
	const char *t = r->spec.target, *slash = strrchr(t, '/');
	char dir[PATH_MAX];
	int fd;

	if (t[0] != '/' || !slash[1] || strlen(slash + 1) >= sizeof(r->name)) {
		snprintf(why, len, "it is not a mount point enforce can unmount");
		return -1;
	}
	snprintf(dir, sizeof(dir), "%.*s", slash == t ? 1 : (int)(slash - t), t);
	snprintf(r->name, sizeof(r->name), "%s", slash + 1);
	r->parent_fd = spt_openat2(AT_FDCWD, dir, O_PATH | O_DIRECTORY | O_CLOEXEC,
				   SPT_RESOLVE_NO_SYMLINKS);
	fd = r->parent_fd < 0 ? -1
			      : spt_openat2(r->parent_fd, r->name,
					    O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
					    SPT_RESOLVE_NO_SYMLINKS);
	if (fd < 0) {
		snprintf(why, len,
			 errno == ELOOP	   ? "its path has a symbolic link in it, which "
					     "enforce does not follow"
			 : errno == ENOSYS ? "it needs openat2 (Linux 5.6)"
					   : "%s: %s",
			 t, strerror(errno));
		return -1;
	}
	if (statx(fd, "", AT_EMPTY_PATH, SPT_STATX_MNT_ID, stx) ||
	    !(stx->stx_mask & SPT_STATX_MNT_ID)) {
		snprintf(why, len, "statx(%s) gives no mount id (Linux 5.8)", t);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* First mount inside mount id (parent id == id), in why. False if none. */
static bool has_submounts(int id, char *why, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, path[PATH_MAX];
	size_t cap = 0;
	int mid, parent, found = 0;

	/* Only the ids: any number of optional fields, lines of any length. */
	while (f && getline(&line, &cap, f) >= 0) {
		if (sscanf(line, "%d %d", &mid, &parent) != 2 || parent != id || mid == id || found++)
			continue;
		if (sscanf(line, "%*d %*d %*s %*s %4095s", path) != 1)
			snprintf(path, sizeof(path), "a mount");
		unescape_octal(path);
		snprintf(why, len, "%s is mounted inside it; unmount it first", path);
	}
	free(line);
	if (f)
		fclose(f);
	return found;
}

/* The target as it must be: our mount (mnt_id), or no mount at all. */
static int check_target(struct remount *r, int mnt_id, char *why, size_t len)
{
	struct statx stx;
	bool root;

	if (open_target(r, &stx, why, len))
		return -1;
	root = stx.stx_attributes_mask & SPT_STATX_ATTR_MOUNT_ROOT &&
	       stx.stx_attributes & SPT_STATX_ATTR_MOUNT_ROOT;
	if (mnt_id && (stx.stx_mnt_id != (uint64_t)mnt_id || !root)) {
		snprintf(why, len, "another mount covers it, or its path leads elsewhere now");
		return -1;
	}
	if (mnt_id && has_submounts(mnt_id, why, len))
		return -1;
	if (!mnt_id && root) {
		if (spt_kdev(stx.stx_dev_major, stx.stx_dev_minor) == r->spec.dev)
			return 1;
		snprintf(why, len, "another filesystem is mounted there");
		return -1;
	}
	return 0;
}

/* The kernel can set spec's per-mount flags and propagation: their
 * checks come before the file descriptor's, so EBADF says yes. */
static int check_kernel(const struct remount *r, char *why, size_t len)
{
	struct spt_mount_attr a = { .propagation = prop_flags[r->spec.prop] };

	if (spt_fsmount(-1, FSMOUNT_CLOEXEC, r->attrs) >= 0 || errno != EBADF) {
		snprintf(why, len, "this kernel's fsmount() cannot set its mount options %s (%s)",
			 r->spec.mount_opts, strerror(errno));
		return -1;
	}
	if (spt_mount_setattr(-1, "", AT_EMPTY_PATH, &a) >= 0 || errno != EBADF) {
		snprintf(why, len,
			 "this kernel cannot set its propagation with mount_setattr() "
			 "(Linux 5.12): %s",
			 strerror(errno));
		return -1;
	}
	return 0;
}

int remount_prepare(struct remount *r, const struct mount_spec *spec, int mnt_id, char *why,
		    size_t len)
{
	char bad[64];
	struct stat st;
	int ret;

	memset(r, 0, sizeof(*r));
	r->parent_fd = r->fs_fd = -1;
	r->spec = *spec;
	r->mnt_id = mnt_id;
	if (!mount_spec_attrs(spec->mount_opts, &r->attrs, bad, sizeof(bad))) {
		snprintf(why, len, "a fresh mount cannot reproduce its mount option %s", bad);
		return -1;
	}
	ret = check_target(r, mnt_id, why, len);
	if (ret)
		return ret;
	if (stat(spec->source, &st) || !S_ISBLK(st.st_mode) ||
	    spt_kdev(major(st.st_rdev), minor(st.st_rdev)) != spec->dev) {
		snprintf(why, len, "its source %s is not block device %u:%u any more", spec->source,
			 spt_kdev_major(spec->dev), spt_kdev_minor(spec->dev));
		return -2;
	}
	if (check_kernel(r, why, len))
		return -1;
	r->fs_fd = fs_context(spec, why, len);
	return r->fs_fd < 0 ? -1 : 0;
}

int remount_unmount(struct remount *r)
{
	char path[64 + sizeof(r->name)];

	/* The magic link is the parent itself; the last name is not followed. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", r->parent_fd, r->name);
	return umount2(path, UMOUNT_NOFOLLOW) ? -errno : 0;
}

/* FSCONFIG_CMD_CREATE_EXCL where the kernel has it (6.6): a superblock
 * still alive elsewhere is refused, not reused. 0, 1 reused, -1. */
static int create_superblock(struct remount *r, char *why, size_t len)
{
	char log[256];

	if (!spt_fsconfig(r->fs_fd, SPT_FSCONFIG_CMD_CREATE_EXCL, NULL, NULL, 0))
		return 0;
	if (errno == EBUSY) {
		/* The failed context cannot be used again. */
		close(r->fs_fd);
		r->fs_fd = fs_context(&r->spec, why, len);
		if (r->fs_fd < 0)
			return -1;
		if (!spt_fsconfig(r->fs_fd, FSCONFIG_CMD_CREATE, NULL, NULL, 0))
			return 1;
	} else if ((errno == EINVAL || errno == EOPNOTSUPP) &&
		   !spt_fsconfig(r->fs_fd, FSCONFIG_CMD_CREATE, NULL, NULL, 0)) {
		return 0;
	}
	snprintf(why, len, "%s", fs_log(r->fs_fd, log, sizeof(log)));
	return -1;
}

int remount_mount(struct remount *r, char *why, size_t len)
{
	struct spt_mount_attr a = { .propagation = prop_flags[r->spec.prop] };
	int reused = create_superblock(r, why, len), mfd;

	if (reused < 0)
		return -1;
	mfd = spt_fsmount(r->fs_fd, FSMOUNT_CLOEXEC, r->attrs);
	if (mfd < 0 || spt_move_mount(mfd, "", r->parent_fd, r->name, MOVE_MOUNT_F_EMPTY_PATH)) {
		snprintf(why, len, "%s: %s", mfd < 0 ? "fsmount" : "move_mount", strerror(errno));
		if (mfd >= 0)
			close(mfd);
		return -1;
	}
	/* Attached under a shared parent it became shared: set what it was. */
	if (spt_mount_setattr(mfd, "", AT_EMPTY_PATH, &a))
		spt_warn("%s is mounted again but stays with its parent's propagation: %s",
			 r->spec.target, strerror(errno));
	close(mfd);
	return reused;
}

void remount_close(struct remount *r)
{
	if (r->parent_fd >= 0)
		close(r->parent_fd);
	if (r->fs_fd >= 0)
		close(r->fs_fd);
	r->parent_fd = r->fs_fd = -1;
}

int remount_restore(const struct mount_spec *spec)
{
	struct remount r;
	char why[512];
	int ret = remount_prepare(&r, spec, 0, why, sizeof(why));

	if (ret == 1)
		spt_note("%s is mounted already; nothing to mount", spec->target);
	/* Like a device line's: a loop device may have been freed since. */
	if (ret == -2)
		spt_note("not mounting %s again: %s (by hand: mount -t %s -o %s,%s %s %s)",
			 spec->target, why, spec->fstype, spec->mount_opts, spec->super_opts,
			 spec->source, spec->target);
	if (!ret && remount_mount(&r, why, sizeof(why)) < 0)
		ret = -1;
	else if (!ret)
		spt_note("%s mounted again (%s on %s, %s)", spec->target, spec->fstype,
			 spec->source, spec->mount_opts);
	remount_close(&r);
	if (ret >= 0 || ret == -2)
		return 0;
	spt_warn("cannot mount %s again: %s; mount it by hand: mount -t %s -o %s,%s %s %s",
		 spec->target, why, spec->fstype, spec->mount_opts, spec->super_opts, spec->source,
		 spec->target);
	return 1;
}

void busy_users(uint32_t dev, char *buf, size_t len)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	size_t used = 0;
	int found = 0;

	buf[0] = '\0';
	if (!proc)
		return;
	while ((de = readdir(proc)) && found < 5) {
		char path[PATH_MAX], comm[32] = "?";
		bool uses = false;
		struct stat st;
		FILE *f;

		if (de->d_name[0] < '1' || de->d_name[0] > '9' || atoi(de->d_name) == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cwd", de->d_name);
		uses = !stat(path, &st) && spt_kdev(major(st.st_dev), minor(st.st_dev)) == dev;
		snprintf(path, sizeof(path), "/proc/%s/fd", de->d_name);
		DIR *fds = uses ? NULL : opendir(path);
		struct dirent *fe;

		while (fds && (fe = readdir(fds)) && !uses) {
			if (fstatat(dirfd(fds), fe->d_name, &st, 0))
				continue;
			uses = spt_kdev(major(st.st_dev), minor(st.st_dev)) == dev;
		}
		if (fds)
			closedir(fds);
		snprintf(path, sizeof(path), "/proc/%s/maps", de->d_name);
		f = uses ? NULL : fopen(path, "re");
		while (f && !uses && fgets(path, sizeof(path), f)) {
			unsigned int maj, min;

			if (sscanf(path, "%*s %*s %*s %x:%x", &maj, &min) == 2 &&
			    maj < 1U << (32 - SPT_MINORBITS) && min < 1U << SPT_MINORBITS)
				uses = spt_kdev(maj, min) == dev;
		}
		if (f)
			fclose(f);
		if (!uses)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		used += snprintf(buf + used, len - used, "%s%s (%s)", found ? ", " : "pid ",
				 de->d_name, comm);
		if (used >= len)
			break;
		found++;
	}
	closedir(proc);
}

int enforce_lock(void)
{
	static int fd = -1;
	char buf[32] = "";
	int n;

	if (fd >= 0)
		return 0;
	if (mkdir(SPT_RUN_DIR, 0755) && errno != EEXIST)
		goto fail;
	fd = open(LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		goto fail;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		if (errno != EWOULDBLOCK)
			goto fail;
		n = (int)pread(fd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		fprintf(stderr,
			"stablepage-trace: another enforce run (pid %d) holds %s; wait for "
			"it to end\n",
			atoi(buf), LOCK_FILE);
		close(fd);
		fd = -1;
		return -1;
	}
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, buf, n, 0) != n)
		goto fail;
	return 0;
fail:
	fprintf(stderr, "stablepage-trace: cannot lock %s: %s\n", LOCK_FILE, strerror(errno));
	if (fd >= 0)
		close(fd);
	fd = -1;
	return -1;
}
