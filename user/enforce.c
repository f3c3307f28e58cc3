// SPDX-License-Identifier: GPL-2.0
/*
 * `stablepage-trace enforce --native`: the kernel's own stable writes.
 *
 * A filesystem samples its device's stable-writes flag when it is mounted
 * (SB_I_STABLE_WRITES, from the bdev's queue at fill_super time), so
 * setting queue/stable_writes changes nothing for filesystems already
 * mounted, and `mount -o remount` does not sample it again: only a fresh
 * mount does. Hence --remount: unmount and mount with the same options.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "enforce.h"
#include "escape.h"
#include "hold_record.h"
#include "msg.h"
#include "parse.h"
#include "resolve.h"

#define MAX_DEVS 64
#define MAX_FS 64
#define STATE_DIR "/run/stablepage-trace"

/* A whole disk whose request queue carries the flag (partitions share it). */
struct enforced_dev {
	struct spt_disk disk;
	int old; /* stable_writes before we changed it */
	bool changed;
};

struct enforced_fs {
	uint32_t dev; /* superblock s_dev, as the tracer's devices are keyed */
	int disk;     /* index into devs */
	char mountpoint[PATH_MAX];
	char fstype[32];
	bool in_effect; /* mounted (again) after stable_writes became 1 */
	bool remounted; /* by us: it keeps stable writes after the restore */
};

static struct {
	struct enforced_dev devs[MAX_DEVS];
	int ndevs;
	struct enforced_fs fs[MAX_FS];
	int nfs;
	bool persist;
	bool active; /* the state file is ours */
} enf;

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	spt_vmsg("", fmt, ap);
	va_end(ap);
}

/* "enforce: ..." on stderr, escaped: it names mount points and devices. */
static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	char *line = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&line, fmt, ap) >= 0) {
		fputs("enforce: ", stderr);
		text_puts(stderr, line);
		fputc('\n', stderr);
	}
	va_end(ap);
	free(line);
}

static int write_int_file(const char *path, int value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;
	char buf[16];
	int n = snprintf(buf, sizeof(buf), "%d\n", value);

	if (fd < 0)
		return -errno;
	if (write(fd, buf, n) != n)
		err = -errno;
	close(fd);
	return err;
}

static void queue_file(const struct enforced_dev *d, char *buf, size_t len)
{
	snprintf(buf, len, "%s/queue/stable_writes", d->disk.sysfs);
}

/* The state file: written whole, then renamed, before any value changes. */
static int write_state(void)
{
	char tmp[] = STATE_DIR "/enforce.state.XXXXXX";
	FILE *f;
	int fd;

	if (mkdir(STATE_DIR, 0755) && errno != EEXIST)
		return -errno;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		return -errno;
	}
	fprintf(f, "# stablepage-trace enforce pid=%d: device, MAJ:MIN, previous stable_writes\n",
		(int)getpid());
	for (int i = 0; i < enf.ndevs; i++)
		fprintf(f, "%s %u:%u %d\n", enf.devs[i].disk.name,
			spt_kdev_major(enf.devs[i].disk.dev), spt_kdev_minor(enf.devs[i].disk.dev),
			enf.devs[i].old);
	if (fflush(f) || fsync(fd) || fclose(f)) {
		unlink(tmp);
		return -EIO;
	}
	if (rename(tmp, SPT_ENFORCE_STATE)) {
		unlink(tmp);
		return -errno;
	}
	return 0;
}

/* 0 when no state file is left; otherwise one line saying why we refuse. */
static int check_no_state(void)
{
	FILE *f = fopen(SPT_ENFORCE_STATE, "re");
	char line[256];
	int pid = 0;

	if (!f)
		return 0;
	if (fgets(line, sizeof(line), f))
		sscanf(line, "# stablepage-trace enforce pid=%d", &pid);
	fclose(f);
	if (pid > 0 && pid != getpid() && !kill(pid, 0))
		warn("another enforce run (pid %d) is active; stop it first", pid);
	else
		warn("an earlier enforce run (killed, or --persist) left stable_writes changed: "
		     "`stablepage-trace enforce --restore` undoes it (%s)",
		     SPT_ENFORCE_STATE);
	return -1;
}

/* Up to a few processes keeping fs busy: cwd, root, open files, mappings. */
static void busy_users(uint32_t dev, char *buf, size_t len)
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

/* Unmounts fs and mounts it again as mountinfo described it. */
static int remount(struct enforced_fs *fs, const struct mountinfo_entry *e)
{
	unsigned long flags;
	char data[4096], users[256];

	if (!mount_args(e->mount_opts, e->super_opts, &flags, data, sizeof(data))) {
		warn("cannot remount %s: its options are too long", fs->mountpoint);
		return 0;
	}
	/* umount writes the filesystem's dirty data back first: say what we wait for. */
	note("unmounting %s to mount it again (waits for its dirty data to be written)...",
	     fs->mountpoint);
	if (umount2(fs->mountpoint, 0)) {
		if (errno == EBUSY) {
			busy_users(fs->dev, users, sizeof(users));
			warn("cannot remount %s: busy%s%s; stop its users or enforce without "
			     "--remount and mount it again later",
			     fs->mountpoint, users[0] ? ", used by " : "", users);
		} else {
			warn("cannot unmount %s: %s", fs->mountpoint, strerror(errno));
		}
		return 0;
	}
	if (mount(e->source, fs->mountpoint, e->fstype, flags, data[0] ? data : NULL)) {
		warn("unmounted %s but cannot mount it again: %s; mount it by hand: mount -t %s -o "
		     "%s%s%s "
		     "%s %s",
		     fs->mountpoint, strerror(errno), e->fstype, e->mount_opts, data[0] ? "," : "",
		     data, e->source, fs->mountpoint);
		return -1;
	}
	fs->in_effect = true;
	fs->remounted = true;
	note("mounted %s again: stable writes in effect there", fs->mountpoint);
	return 0;
}

/* Mounts of disk i: record each superblock once; remount it if asked. */
static int find_mounts(int disk, bool do_remount)
{
	/* entries[i] points into lines[i]: mountinfo lines of any length. */
	static char *lines[MAX_FS];
	static struct mountinfo_entry entries[MAX_FS];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	size_t cap = 0;
	int n = 0, err = 0;

	if (!f)
		return -1;
	while (n < MAX_FS && getline(&lines[n], &cap, f) >= 0) {
		struct spt_disk d;
		uint32_t bdev;

		if (!parse_mountinfo_line(lines[n], &entries[n]))
			continue;
		bdev = resolve_mount_bdev(&entries[n]);
		if (resolve_disk(bdev, &d) || d.dev != enf.devs[disk].disk.dev)
			continue;
		n++;
		cap = 0; /* the next line in a buffer of its own */
	}
	fclose(f);
	for (int i = 0; i < n && enf.nfs < MAX_FS; i++) {
		uint32_t dev = spt_kdev(entries[i].major, entries[i].minor);
		struct enforced_fs *fs = &enf.fs[enf.nfs];
		int mounts = 0;
		bool seen = false;

		for (int j = 0; j < n; j++) {
			if (spt_kdev(entries[j].major, entries[j].minor) != dev)
				continue;
			seen |= j < i;
			mounts++;
		}
		if (seen)
			continue;
		enf.nfs++;
		fs->dev = dev;
		fs->disk = disk;
		fs->in_effect = enf.devs[disk].old == 1;
		snprintf(fs->mountpoint, sizeof(fs->mountpoint), "%s", entries[i].mountpoint);
		snprintf(fs->fstype, sizeof(fs->fstype), "%s", entries[i].fstype);
		if (fs->in_effect)
			continue;
		if (!do_remount)
			note("%s (%s on %s) was mounted before stable_writes was set: not in "
			     "effect until it is mounted again (--remount does it)",
			     fs->mountpoint, fs->fstype, enf.devs[disk].disk.name);
		else if (mounts > 1)
			warn("cannot remount %s: the filesystem is mounted %d times (bind mounts); "
			     "unmount the others first",
			     fs->mountpoint, mounts);
		else if (remount(fs, &entries[i]))
			err = -1;
	}
	for (int i = 0; i <= n && i < MAX_FS; i++) {
		free(lines[i]);
		lines[i] = NULL;
	}
	return err;
}

/* Devices stacked on d (dm, md): they keep the flag they had when built. */
static void report_holders(const struct enforced_dev *d)
{
	char path[PATH_MAX + 64];
	struct dirent *de;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/holders", d->disk.sysfs);
	dir = opendir(path);
	while (dir && (de = readdir(dir))) {
		int v = -1;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/holders/%s/queue/stable_writes", d->disk.sysfs,
			 de->d_name);
		read_int_file(path, &v);
		fprintf(stderr,
			"enforce: %s is stacked on %s (its stable_writes: %d); filesystems on it "
			"need --dev %s too\n",
			de->d_name, d->disk.name, v, de->d_name);
	}
	if (dir)
		closedir(dir);
}

int enforce_apply(const struct enforce_opts *opts)
{
	char path[PATH_MAX + 32];
	int err;

	enf.persist = opts->persist;
	if (check_no_state())
		return -1;
	for (int i = 0; i < opts->ndevs; i++) {
		struct enforced_dev *d = &enf.devs[enf.ndevs];
		bool dup = false;

		err = resolve_disk(opts->devs[i], &d->disk);
		if (err) {
			warn("--dev %u:%u is not a block device in /sys/dev/block: native "
			     "enforcement "
			     "needs the filesystem's block device",
			     spt_kdev_major(opts->devs[i]), spt_kdev_minor(opts->devs[i]));
			return -1;
		}
		for (int j = 0; j < enf.ndevs; j++)
			dup |= enf.devs[j].disk.dev == d->disk.dev;
		if (dup)
			continue;
		queue_file(d, path, sizeof(path));
		err = read_int_file(path, &d->old);
		if (err) {
			warn("cannot read %s: %s", path, strerror(-err));
			return -1;
		}
		enf.ndevs++;
	}
	err = write_state();
	if (err) {
		warn("cannot write %s: %s", SPT_ENFORCE_STATE, strerror(-err));
		return -1;
	}
	enf.active = true;
	for (int i = 0; i < enf.ndevs; i++) {
		struct enforced_dev *d = &enf.devs[i];

		queue_file(d, path, sizeof(path));
		err = write_int_file(path, 1);
		if (err) {
			warn("cannot set %s: %s", path, strerror(-err));
			return -1;
		}
		d->changed = true;
		fprintf(stderr, "enforce: %s: stable_writes %d -> 1%s\n", d->disk.name, d->old,
			enf.persist ? " (kept at exit: --persist)" : "");
		report_holders(d);
		if (find_mounts(i, opts->remount))
			return -1;
	}
	return 0;
}

bool enforce_report(const struct spt_summary *s)
{
	bool ok = true;

	for (int i = 0; i < enf.nfs; i++) {
		const struct enforced_fs *fs = &enf.fs[i];
		const struct spt_dev_stats *ds = NULL;
		__u64 violations = 0;
		bool in_effect;

		for (size_t j = 0; j < s->ndevs; j++)
			if (s->devs[j].dev == fs->dev)
				ds = &s->devs[j].s;
		if (ds)
			for (int k = 0; k < SPT_KIND_MAX; k++)
				violations += ds->violations[k];
		/* What the kernel said about the filesystem's mappings beats
		 * what we believe about its mount. */
		in_effect = ds ? ds->stable : fs->in_effect;
		fprintf(stderr,
			"enforce: %s (%s on %s): stable writes %s; %llu violations, %llu stable "
			"waits\n",
			fs->mountpoint, fs->fstype, enf.devs[fs->disk].disk.name,
			in_effect ? "in effect" : "NOT in effect", (unsigned long long)violations,
			(unsigned long long)(ds ? stable_waits(ds->waits) : 0));
		if (in_effect && violations) {
			warn("%s: violations although stable writes are in effect", fs->mountpoint);
			ok = false;
		}
	}
	return ok;
}

void enforce_finish(void)
{
	char path[PATH_MAX + 32];
	bool all = true;

	if (!enf.active || enf.persist)
		return;
	for (int i = 0; i < enf.ndevs; i++) {
		struct enforced_dev *d = &enf.devs[i];
		int err;

		if (!d->changed)
			continue;
		queue_file(d, path, sizeof(path));
		err = write_int_file(path, d->old);
		if (err) {
			warn("cannot restore %s to %d: %s", path, d->old, strerror(-err));
			all = false;
			continue;
		}
		d->changed = false;
		fprintf(stderr, "enforce: %s: stable_writes restored to %d\n", d->disk.name,
			d->old);
		for (int j = 0; j < enf.nfs; j++)
			if (enf.fs[j].disk == i && enf.fs[j].remounted)
				fprintf(stderr,
					"enforce: %s keeps stable writes until it is mounted "
					"again\n",
					enf.fs[j].mountpoint);
	}
	if (all)
		unlink(SPT_ENFORCE_STATE);
	enf.active = false;
}

/* Held writers first (BPF mode: a record per run), then the devices. */
int enforce_restore(void)
{
	bool held_found;
	int held_failed = hold_record_restore(&held_found);
	FILE *f = fopen(SPT_ENFORCE_STATE, "re");
	char line[512], path[PATH_MAX + 32];
	int pid = 0, failed = 0, err;

	if (!f) {
		if (errno == ENOENT) {
			if (!held_found)
				fprintf(stderr, "enforce: nothing to restore (no %s)\n",
					SPT_ENFORCE_STATE);
			return held_failed;
		}
		warn("cannot read %s: %s", SPT_ENFORCE_STATE, strerror(errno));
		return 1;
	}
	if (fgets(line, sizeof(line), f))
		sscanf(line, "# stablepage-trace enforce pid=%d", &pid);
	if (pid > 0 && !kill(pid, 0)) {
		fclose(f);
		warn("enforce run %d is still active: stop it (Ctrl-C, kill) and it restores by "
		     "itself",
		     pid);
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct enforced_dev d;
		const char *name;
		uint32_t kdev;
		int value;

		if (line[0] == '#')
			continue;
		if (!parse_state_line(line, &name, &kdev, &value)) {
			warn("ignoring a malformed line in %s", SPT_ENFORCE_STATE);
			failed++;
			continue;
		}
		/* A loop device may have been freed and reused since. */
		if (resolve_disk(kdev, &d.disk) || strcmp(d.disk.name, name)) {
			fprintf(stderr, "enforce: %s (%u:%u) is gone; nothing to restore there\n",
				name, spt_kdev_major(kdev), spt_kdev_minor(kdev));
			continue;
		}
		queue_file(&d, path, sizeof(path));
		err = write_int_file(path, value);
		if (err) {
			warn("cannot restore %s to %d: %s", path, value, strerror(-err));
			failed++;
			continue;
		}
		fprintf(stderr, "enforce: %s: stable_writes restored to %d\n", name, value);
	}
	fclose(f);
	if (failed)
		return 1;
	unlink(SPT_ENFORCE_STATE);
	return held_failed;
}
