// SPDX-License-Identifier: GPL-2.0
/*
 * Every "yes" here is a program that loaded and attached just now, or a
 * map type / kfunc / tracepoint found in the running kernel: no version
 * tables, since distributions backport and hosts lock features down.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/utsname.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "probe.h"
#include "parse.h"
#include "resolve.h"
#include "probe.skel.h"

#define SYSFS_BTF "/sys/kernel/btf/vmlinux"
#define SECURITYFS "/sys/kernel/security"

static void find_functions(const struct btf *btf, bool present[SPT_NFENTRY])
{
	for (size_t i = 0; i < SPT_NFENTRY; i++)
		if (!present[i])
			present[i] = btf__find_by_name_kind(btf, spt_fentry_points[i].func,
							    BTF_KIND_FUNC) >= 0;
}

void probe_fentry_functions(const char *btf_path, bool present[SPT_NFENTRY])
{
	struct btf *vmlinux = btf_path ? btf__parse(btf_path, NULL) : btf__load_vmlinux_btf();
	struct dirent *de;
	DIR *dir;

	memset(present, 0, SPT_NFENTRY * sizeof(present[0]));
	if (!vmlinux)
		return;
	find_functions(vmlinux, present);
	/* ext4, xfs and btrfs are modules on distribution kernels. */
	dir = btf_path || !memchr(present, false, SPT_NFENTRY) ? NULL : opendir("/sys/kernel/btf");
	while (dir && (de = readdir(dir))) {
		struct btf *mod;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "vmlinux"))
			continue;
		mod = btf__load_module_btf(de->d_name, vmlinux);
		if (mod)
			find_functions(mod, present);
		btf__free(mod);
	}
	if (dir)
		closedir(dir);
	btf__free(vmlinux);
}

static bool tracepoint_in_btf(const struct btf *btf, const struct spt_tracepoint *tp)
{
	return btf__find_by_name_kind(btf, tp->btf_name, BTF_KIND_TYPEDEF) >= 0;
}

const struct spt_tracepoint *probe_missing_tracepoint(const struct btf *btf)
{
	for (size_t i = 0; i < SPT_NTRACEPOINTS; i++)
		if (!tracepoint_in_btf(btf, &spt_tracepoints[i]))
			return &spt_tracepoints[i];
	return NULL;
}

static void row(const char *what, bool ok, const char *detail)
{
	printf("  %-46s %s%s%s\n", what, ok ? "yes" : "no", detail && *detail ? ": " : "",
	       detail ? detail : "");
}

bool probe_program(const char *name, const char *btf_path, char *why, size_t len)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = btf_path);
	struct probe_bpf *skel = probe_bpf__open_opts(&opts);
	struct bpf_program *prog, *target = NULL;
	struct bpf_link *link;
	int err;

	if (!skel) {
		snprintf(why, len, "open: %s", strerror(errno));
		return false;
	}
	bpf_object__for_each_program(prog, skel->obj)
	{
		bool me = !strcmp(bpf_program__name(prog), name);

		bpf_program__set_autoload(prog, me);
		if (me)
			target = prog;
	}
	err = target ? probe_bpf__load(skel) : -ENOENT;
	if (err) {
		/* libbpf: -ESRCH when the attach target is not in the kernel's BTF. */
		snprintf(why, len, "%s",
			 err == -ESRCH ? "its attach point is not in this kernel"
			 : err == -EPERM
				 ? "load: Operation not permitted (trampolines locked down?)"
				 : strerror(-err));
		probe_bpf__destroy(skel);
		return false;
	}
	link = bpf_program__attach(target);
	err = libbpf_get_error(link);
	if (err) {
		snprintf(why, len, "attach: %s", strerror(-err));
		probe_bpf__destroy(skel);
		return false;
	}
	bpf_link__destroy(link);
	probe_bpf__destroy(skel);
	why[0] = '\0';
	return true;
}

/* The active LSMs, from securityfs (mounted for the read if it was not). */
static bool active_lsms(char *buf, size_t len)
{
	bool mounted = false, ok = false;
	FILE *f;

	if (access(SECURITYFS "/lsm", R_OK) &&
	    !mount("securityfs", SECURITYFS, "securityfs", 0, NULL))
		mounted = true;
	f = fopen(SECURITYFS "/lsm", "re");
	if (f) {
		ok = fgets(buf, len, f) != NULL;
		fclose(f);
	}
	if (mounted)
		umount(SECURITYFS);
	if (!ok)
		snprintf(buf, len, "unknown (no %s/lsm)", SECURITYFS);
	buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

static bool lsm_listed(const char *lsms, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = lsms; (p = strstr(p, name)); p += n)
		if ((p == lsms || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

/* A mounted filesystem and the disk whose queue governs it. */
struct disk_mount {
	uint32_t disk;
	char label[PATH_MAX + 40]; /* "/srv (xfs)" */
};

static size_t read_disk_mounts(struct disk_mount **out)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	struct disk_mount *m = NULL, *grown;
	char line[4096];
	size_t n = 0;

	while (f && fgets(line, sizeof(line), f)) {
		struct mountinfo_entry e;
		struct spt_disk d;

		if (!parse_mountinfo_line(line, &e) || resolve_disk(resolve_mount_bdev(&e), &d))
			continue;
		grown = realloc(m, (n + 1) * sizeof(*m));
		if (!grown)
			break;
		m = grown;
		m[n].disk = d.dev;
		snprintf(m[n].label, sizeof(m[n].label), "%s (%s)", e.mountpoint, e.fstype);
		n++;
	}
	if (f)
		fclose(f);
	*out = m;
	return n;
}

/* Block devices with their stable_writes and the filesystems mounted on them. */
static void block_devices(void)
{
	struct dirent **names = NULL;
	int n = scandir("/sys/block", &names, NULL, alphasort);
	struct disk_mount *mounts;
	size_t nmounts = read_disk_mounts(&mounts);

	printf("block devices (a filesystem samples stable_writes when it is mounted):\n");
	printf("  %-12s %-13s %s\n", "DEVICE", "STABLE_WRITES", "FILESYSTEMS");
	for (int i = 0; i < n; i++) {
		const struct dirent *de = names[i];
		char path[PATH_MAX + 32], list[1024] = "";
		unsigned int maj, min;
		struct spt_disk d;
		size_t used = 0;
		int stable = -1;
		FILE *f;

		/* An unbound loop device has no loop/ directory: not a device yet. */
		snprintf(path, sizeof(path), "/sys/block/%s/loop", de->d_name);
		if (de->d_name[0] == '.' || (!strncmp(de->d_name, "loop", 4) && access(path, F_OK)))
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/dev", de->d_name);
		f = fopen(path, "re");
		if (!f || fscanf(f, "%u:%u", &maj, &min) != 2 ||
		    resolve_disk(spt_kdev(maj, min), &d)) {
			if (f)
				fclose(f);
			continue;
		}
		fclose(f);
		snprintf(path, sizeof(path), "%s/queue/stable_writes", d.sysfs);
		if (read_int_file(path, &stable))
			stable = -1;
		for (size_t j = 0; j < nmounts && used < sizeof(list); j++)
			if (mounts[j].disk == d.dev)
				used += snprintf(list + used, sizeof(list) - used, "%s%s",
						 used ? ", " : "", mounts[j].label);
		if (stable < 0 && !list[0])
			continue;
		printf("  %-12s %-13s %s\n", de->d_name,
		       stable < 0 ? "?"
		       : stable	  ? "1"
				  : "0",
		       list[0] ? list : "-");
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(mounts);
}

/* Which part of the tracing uses which attach point, in fentry mode. */
static void print_fentry_plan(const char *btf_path)
{
	static const char *const what[] = {
		[SPT_FENTRY_MKWRITE] = "mmap violations (fentry+fexit page_mkwrite)",
		[SPT_FENTRY_WAIT] = "wait timing (fentry+fexit)",
		[SPT_FENTRY_WB_START] = "writeback start (fentry)",
		[SPT_FENTRY_WB_END] = "writeback end (fentry)",
	};
	bool present[SPT_NFENTRY];

	probe_fentry_functions(btf_path, present);
	printf("attach mode (auto): fentry where the function is in the kernel's BTF "
	       "(modules: load them first)\n");
	for (int role = SPT_FENTRY_WB_END; role >= SPT_FENTRY_MKWRITE; role--) {
		printf("  %s:", what[role]);
		for (size_t i = 0; i < SPT_NFENTRY; i++)
			/* fentry and fexit of one function: list it once */
			if (spt_fentry_points[i].role == (enum spt_fentry_role)role &&
			    !spt_fentry_points[i].fexit)
				printf(" %s%s", spt_fentry_points[i].func, present[i] ? "" : " (absent)");
		printf("\n");
	}
	printf("  other page_mkwrite handlers, write violations, wait counts: tracepoints\n");
}

bool probe_bpf_lsm_active(void)
{
	char lsms[256];

	active_lsms(lsms, sizeof(lsms));
	return lsm_listed(lsms, "bpf");
}

/* The programs features_run loads and attaches, in its rows' order; ok[] is
 * indexed the same way, and the attach mode and enforcement lines read it. */
enum probe_prog { PROBE_TP_BTF, PROBE_FENTRY, PROBE_FEXIT, PROBE_FMOD_RET, PROBE_LSM, NPROBES };

static const struct {
	const char *prog, *label;
} probe_progs[NPROBES] = {
	[PROBE_TP_BTF] = { "probe_tp_btf", "tp_btf writeback_dirty_folio (load + attach)" },
	[PROBE_FENTRY] = { "probe_fentry", "fentry folio_end_writeback (trampoline)" },
	[PROBE_FEXIT] = { "probe_fexit", "fexit filemap_page_mkwrite (trampoline)" },
	[PROBE_FMOD_RET] = { "probe_fmod_ret", "fmod_ret security_file_permission" },
	[PROBE_LSM] = { "probe_lsm", "BPF LSM program lsm/file_permission" },
};

/* Does enum mapping_flags have AS_STABLE_WRITES (6.7, 6.6.4, 6.1.y)? */
static bool btf_has_as_stable_writes(const struct btf *btf)
{
	int id = btf__find_by_name_kind(btf, "mapping_flags", BTF_KIND_ENUM);
	const struct btf_type *t = id >= 0 ? btf__type_by_id(btf, id) : NULL;
	const struct btf_enum *e = t ? btf_enum(t) : NULL;

	for (int i = 0; e && i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, e[i].name_off), "AS_STABLE_WRITES"))
			return true;
	return false;
}

/*
 * A block device's own page cache: whether the kernel ever waits there
 * (AS_STABLE_WRITES on the bdev inode's mapping, set by bdev_add() only),
 * and that the filesystems' metadata in it is never waited for. Measured
 * on 6.1.192 and 6.18 (docs/semantics.md).
 */
static void print_bdev_cache(bool as_stable_writes)
{
	printf("block devices' own page cache (write() or a mapping of /dev/NAME, mkfs, "
	       "metadata):\n");
	if (as_stable_writes)
		printf("  stable writes: only on devices whose stable_writes was 1 when they "
		       "appeared\n  (AS_STABLE_WRITES, set at bdev_add()); writing "
		       "queue/stable_writes later does\n  not reach this cache: its writes under "
		       "writeback stay violations\n");
	else
		printf("  stable writes: never (no AS_STABLE_WRITES; the bdev filesystem has no\n"
		       "  SB_I_STABLE_WRITES): writes under writeback are violations even where\n"
		       "  stable_writes=1\n");
	printf("  metadata of a mounted filesystem (buffer heads): never waited for; counted as\n"
	       "  kind metadata whatever stable_writes says; writes without PG_writeback\n"
	       "  (submit_bh: jbd2, sync_dirty_buffer) are not seen\n");
}

/*
 * The kernel, its BTF, and what the BTF has: each tracepoint the tool needs
 * (*all_tp: all of them), the bpf_send_signal_task kfunc and
 * AS_STABLE_WRITES (*as_stable). False, after the BTF's "no" row, when the
 * BTF does not parse: features stops there.
 */
static bool btf_features(const char *btf_path, bool *all_tp, bool *as_stable)
{
	const char *path = btf_path ? btf_path : SYSFS_BTF;
	struct utsname uts;
	struct btf *btf;
	char what[128];

	uname(&uts);
	btf = btf__parse(path, NULL);
	printf("kernel %s (%s)\n", uts.release, uts.machine);
	row(btf_path ? "kernel BTF (--btf)" : "kernel BTF (" SYSFS_BTF ")", btf != NULL,
	    btf ? NULL : strerror(errno));
	if (!btf)
		return false;
	*all_tp = true;
	for (size_t i = 0; i < SPT_NTRACEPOINTS; i++) {
		bool have = tracepoint_in_btf(btf, &spt_tracepoints[i]);

		*all_tp &= have;
		snprintf(what, sizeof(what), "tracepoint %s", spt_tracepoints[i].name);
		row(what, have, NULL);
	}
	row("bpf_send_signal_task() kfunc",
	    btf__find_by_name_kind(btf, "bpf_send_signal_task", BTF_KIND_FUNC) >= 0, NULL);
	*as_stable = btf_has_as_stable_writes(btf);
	btf__free(btf);
	return true;
}

/* Loads and attaches each of probe_progs, a row each (why it failed, if it did). */
static void probe_all_programs(const char *btf_path, bool ok[NPROBES])
{
	char why[128];

	for (size_t i = 0; i < NPROBES; i++) {
		ok[i] = probe_program(probe_progs[i].prog, btf_path, why, sizeof(why));
		row(probe_progs[i].label, ok[i], why);
	}
}

/* What `trace` would attach with --attach-mode auto, from what just loaded. */
static void print_attach_mode(const char *btf_path, const bool ok[NPROBES], bool all_tp)
{
	if (!ok[PROBE_TP_BTF] || !all_tp)
		printf("attach mode: none: the tracepoints this tool needs do not load here\n");
	else if (ok[PROBE_FENTRY])
		print_fentry_plan(btf_path);
	else
		printf("attach mode (auto): tracepoint (fentry does not load here)\n"
		       "  violations, wait counts: tracepoints writeback_dirty_folio, folio_wait_writeback\n"
		       "  wait timing: tracepoint sched_switch, attached at the first writer's wait "
		       "(--time-all-waits: from the start)\n"
		       "  writeback end: block_rq_complete (request walk)\n");
}

/* enforce's ways to hold a write: --native always; from BPF, the LSM program
 * where the BPF LSM is active and it loads, else fmod_ret where that loads. */
static void print_enforcement(const bool ok[NPROBES], bool lsm_active)
{
	const char *bpf_hold;

	if (lsm_active && ok[PROBE_LSM])
		bpf_hold = "possible (BPF LSM)";
	else if (ok[PROBE_FMOD_RET])
		bpf_hold = "possible (fmod_ret)";
	else if (lsm_active)
		bpf_hold = "no (the BPF LSM is active, but neither its programs nor fmod_ret load)";
	else
		bpf_hold = "no (no BPF LSM, and fmod_ret does not load)";
	printf("enforcement: --native (queue/stable_writes): yes; holding write() from BPF: %s\n",
	       bpf_hold);
}

/* The features command: 1 when the kernel's BTF cannot be read, else 0, whatever
 * is missing (the report says it). */
int features_run(const char *btf_path)
{
	bool ok[NPROBES], lsm_active, all_tp, as_stable;
	char lsms[256];

	if (!btf_features(btf_path, &all_tp, &as_stable))
		return 1;
	row("ring buffer map", libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1, NULL);
	probe_all_programs(btf_path, ok);
	active_lsms(lsms, sizeof(lsms));
	lsm_active = lsm_listed(lsms, "bpf");
	row("BPF LSM active (" SECURITYFS "/lsm)", lsm_active, lsms);

	print_attach_mode(btf_path, ok, all_tp);
	print_enforcement(ok, lsm_active);
	block_devices();
	print_bdev_cache(as_stable);
	return 0;
}
