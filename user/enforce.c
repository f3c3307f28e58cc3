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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "enforce.h"
#include "escape.h"
#include "hold_record.h"
#include "msg.h"
#include "parse.h"
#include "remount.h"
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
	bool unmounted; /* by us, not yet mounted again: the state file says how */
	struct mount_spec spec;
};

/* What parse_mountinfo_line() leaves out of a line. */
struct mount_ids {
	int id, parent;
	char optional[256];
};

static struct {
	struct enforced_dev devs[MAX_DEVS];
	int ndevs;
	struct enforced_fs fs[MAX_FS];
	int nfs;
	bool persist;
	bool active; /* the state file is ours */
} enf;

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
	for (int i = 0; i < enf.nfs; i++) {
		static char line[sizeof(struct mount_spec) * 4 + 64];

		/* Checked to fit before the unmount. */
		if (enf.fs[i].unmounted && mount_spec_format(&enf.fs[i].spec, line, sizeof(line)))
			fputs(line, f);
	}
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
		spt_warn("another enforce run (pid %d) is active; stop it first", pid);
	else
		spt_warn("an earlier enforce run (killed, or --persist) left stable_writes changed "
		     "or a filesystem unmounted: "
		     "`stablepage-trace enforce --restore` undoes it (%s)",
		     SPT_ENFORCE_STATE);
	return -1;
}

/* fs->spec from mountinfo; false after one line when a fresh mount at the
 * same place would not be the same mount. */
static bool fill_spec(struct enforced_fs *fs, const struct mountinfo_entry *e,
		      const struct mount_ids *ids)
{
	static char line[sizeof(struct mount_spec) * 4 + 64];
	struct mount_spec *s = &fs->spec;
	char bad[64];

	if (strcmp(e->root, "/")) {
		spt_warn("cannot remount %s: it shows %s of its filesystem, and a fresh mount would "
		     "show all of it", fs->mountpoint, e->root);
		return false;
	}
	if (!mount_spec_prop(ids->optional, &s->prop, bad, sizeof(bad))) {
		spt_warn("cannot remount %s: a fresh mount cannot be put back in its place in the "
		     "propagation tree (%s)", fs->mountpoint, bad);
		return false;
	}
	s->dev = spt_kdev(e->major, e->minor);
	if ((size_t)snprintf(s->source, sizeof(s->source), "%s", e->source) >= sizeof(s->source) ||
	    (size_t)snprintf(s->target, sizeof(s->target), "%s", e->mountpoint) >= sizeof(s->target) ||
	    (size_t)snprintf(s->fstype, sizeof(s->fstype), "%s", e->fstype) >= sizeof(s->fstype) ||
	    (size_t)snprintf(s->mount_opts, sizeof(s->mount_opts), "%s", e->mount_opts) >=
		    sizeof(s->mount_opts) ||
	    (size_t)snprintf(s->super_opts, sizeof(s->super_opts), "%s", e->super_opts) >=
		    sizeof(s->super_opts) ||
	    !mount_spec_format(s, line, sizeof(line))) {
		spt_warn("cannot remount %s: its options are too long to record", fs->mountpoint);
		return false;
	}
	return true;
}

/* The unmount failed: the state file forgets it; say why. */
static void unmount_failed(struct enforced_fs *fs, int err)
{
	char users[256];

	fs->unmounted = false;
	if (write_state())
		spt_warn("cannot rewrite %s", SPT_ENFORCE_STATE);
	if (err == -EBUSY) {
		busy_users(fs->dev, users, sizeof(users));
		spt_warn("cannot remount %s: busy%s%s; stop its users or enforce without "
		     "--remount and mount it again later",
		     fs->mountpoint, users[0] ? ", used by " : "", users);
	} else {
		spt_warn("cannot unmount %s: %s", fs->mountpoint, strerror(-err));
	}
}

/*
 * Unmounts fs and mounts it again as mountinfo described it. Everything is
 * checked first; the state file records the unmount before it happens, so
 * that `enforce --restore` can mount it again after a crash in between.
 */
static int remount(struct enforced_fs *fs, const struct mountinfo_entry *e,
		   const struct mount_ids *ids)
{
	struct remount r;
	char why[512];
	int err;

	spt_test_fault("found");
	if (!fill_spec(fs, e, ids))
		return 0;
	if (remount_prepare(&r, &fs->spec, ids->id, why, sizeof(why))) {
		spt_warn("cannot remount %s: %s", fs->mountpoint, why);
		remount_close(&r);
		return 0;
	}
	fs->unmounted = true;
	err = write_state();
	if (err) {
		fs->unmounted = false;
		remount_close(&r);
		spt_warn("cannot write %s: %s", SPT_ENFORCE_STATE, strerror(-err));
		return -1;
	}
	/* umount writes the filesystem's dirty data back first: say what we wait for. */
	spt_note("unmounting %s to mount it again (waits for its dirty data to be written)...",
	     fs->mountpoint);
	err = remount_unmount(&r);
	if (err) {
		remount_close(&r);
		unmount_failed(fs, err);
		return 0;
	}
	spt_test_fault("unmounted");
	err = remount_mount(&r, why, sizeof(why));
	remount_close(&r);
	if (err < 0) {
		spt_warn("unmounted %s but cannot mount it again: %s; `stablepage-trace enforce "
		     "--restore` tries again", fs->mountpoint, why);
		return -1;
	}
	fs->unmounted = false;
	if (write_state())
		spt_warn("cannot rewrite %s", SPT_ENFORCE_STATE);
	fs->in_effect = fs->remounted = !err;
	if (err)
		spt_note("mounted %s again, but its filesystem was still mounted in another mount "
		     "namespace: stable writes not in effect", fs->mountpoint);
	else
		spt_note("mounted %s again: stable writes in effect there", fs->mountpoint);
	return 0;
}

/* Mounts of disk i: record each superblock once; remount it if asked. */
static int find_mounts(int disk, bool do_remount)
{
	/* entries[i] points into lines[i]: mountinfo lines of any length. */
	static char *lines[MAX_FS];
	static struct mountinfo_entry entries[MAX_FS];
	static struct mount_ids ids[MAX_FS];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	size_t cap = 0;
	int n = 0, err = 0;

	if (!f)
		return -1;
	while (n < MAX_FS && getline(&lines[n], &cap, f) >= 0) {
		struct spt_disk d;
		uint32_t bdev;

		if (!mountinfo_ids(lines[n], &ids[n].id, &ids[n].parent, ids[n].optional,
				   sizeof(ids[n].optional)) ||
		    !parse_mountinfo_line(lines[n], &entries[n]))
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
			spt_note("%s (%s on %s) was mounted before stable_writes was set: not in "
			     "effect until it is mounted again (--remount does it)",
			     fs->mountpoint, fs->fstype, enf.devs[disk].disk.name);
		else if (mounts > 1)
			spt_warn("cannot remount %s: the filesystem is mounted %d times (bind mounts); "
			     "unmount the others first",
			     fs->mountpoint, mounts);
		else if (remount(fs, &entries[i], &ids[i]))
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
	if (enforce_lock())
		return -1;
	spt_test_fault("locked");
	if (check_no_state())
		return -1;
	for (int i = 0; i < opts->ndevs; i++) {
		struct enforced_dev *d = &enf.devs[enf.ndevs];
		bool dup = false;

		err = resolve_disk(opts->devs[i], &d->disk);
		if (err) {
			spt_warn("--dev %u:%u is not a block device in /sys/dev/block: native "
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
			spt_warn("cannot read %s: %s", path, strerror(-err));
			return -1;
		}
		enf.ndevs++;
	}
	err = write_state();
	if (err) {
		spt_warn("cannot write %s: %s", SPT_ENFORCE_STATE, strerror(-err));
		return -1;
	}
	enf.active = true;
	for (int i = 0; i < enf.ndevs; i++) {
		struct enforced_dev *d = &enf.devs[i];

		queue_file(d, path, sizeof(path));
		err = write_int_file(path, 1);
		if (err) {
			spt_warn("cannot set %s: %s", path, strerror(-err));
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
			spt_warn("%s: violations although stable writes are in effect", fs->mountpoint);
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
			spt_warn("cannot restore %s to %d: %s", path, d->old, strerror(-err));
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
	for (int j = 0; j < enf.nfs; j++)
		if (enf.fs[j].unmounted) {
			spt_warn("%s stays unmounted: `stablepage-trace enforce --restore` mounts it "
			     "again (%s keeps how)", enf.fs[j].mountpoint, SPT_ENFORCE_STATE);
			all = false;
		}
	if (all)
		unlink(SPT_ENFORCE_STATE);
	enf.active = false;
}

/* One line of the state file written back: a device's value, or a
 * filesystem mounted again. 0, or 1 when it could not be. */
static int restore_line(char *line)
{
	static struct mount_spec spec;
	char path[PATH_MAX + 32];
	struct enforced_dev d;
	const char *name;
	uint32_t kdev;
	int value, err;

	if (!strncmp(line, "unmounted ", 10)) {
		if (mount_spec_parse(line, &spec))
			return remount_restore(&spec);
	} else if (parse_state_line(line, &name, &kdev, &value)) {
		/* A loop device may have been freed and reused since. */
		if (resolve_disk(kdev, &d.disk) || strcmp(d.disk.name, name)) {
			fprintf(stderr, "enforce: %s (%u:%u) is gone; nothing to restore there\n",
				name, spt_kdev_major(kdev), spt_kdev_minor(kdev));
			return 0;
		}
		queue_file(&d, path, sizeof(path));
		err = write_int_file(path, value);
		if (err) {
			spt_warn("cannot restore %s to %d: %s", path, value, strerror(-err));
			return 1;
		}
		fprintf(stderr, "enforce: %s: stable_writes restored to %d\n", name, value);
		return 0;
	}
	spt_warn("ignoring a malformed line in %s", SPT_ENFORCE_STATE);
	return 1;
}

/*
 * Held writers first (BPF mode: a record per run), then the devices, then
 * the filesystems left unmounted (the state file lists them last: they are
 * mounted with the device's value back, as they were before the run).
 */
int enforce_restore(void)
{
	bool held_found;
	int held_failed = hold_record_restore(&held_found);
	char line[sizeof(struct mount_spec) * 4 + 64];
	int pid = 0, failed = 0;
	FILE *f;

	if (enforce_lock())
		return 1;
	f = fopen(SPT_ENFORCE_STATE, "re");
	if (!f) {
		if (errno == ENOENT) {
			if (!held_found)
				fprintf(stderr, "enforce: nothing to restore (no %s)\n",
					SPT_ENFORCE_STATE);
			return held_failed;
		}
		spt_warn("cannot read %s: %s", SPT_ENFORCE_STATE, strerror(errno));
		return 1;
	}
	if (fgets(line, sizeof(line), f))
		sscanf(line, "# stablepage-trace enforce pid=%d", &pid);
	if (pid > 0 && !kill(pid, 0)) {
		fclose(f);
		spt_warn("enforce run %d is still active: stop it (Ctrl-C, kill) and it restores by "
		     "itself",
		     pid);
		return 1;
	}
	while (fgets(line, sizeof(line), f))
		if (line[0] != '#')
			failed += restore_line(line);
	fclose(f);
	if (failed)
		return 1;
	unlink(SPT_ENFORCE_STATE);
	return held_failed;
}
