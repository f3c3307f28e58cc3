// SPDX-License-Identifier: GPL-2.0
/*
 * `stablepage-trace features`: every fact asked of the kernel first (probe.c
 * asks), then printed as text or as one JSON object with the same facts, so
 * that the two cannot disagree. Every "yes" is a program that loaded and
 * attached just now, or something found in the running kernel.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "escape.h"
#include "json.h"
#include "options.h"
#include "parse.h"
#include "probe.h"
#include "resolve.h"

#define SECURITYFS "/sys/kernel/security"

/* The programs loaded and attached, in the rows' order. */
enum probe_prog { PROBE_TP_BTF, PROBE_FENTRY, PROBE_FEXIT, PROBE_FMOD_RET, PROBE_LSM, NPROBES };

static const struct {
	const char *prog, *label, *key; /* key: its name in the JSON */
} probe_progs[NPROBES] = {
	[PROBE_TP_BTF] = { "probe_tp_btf", "tp_btf writeback_dirty_folio (load + attach)", "tp_btf" },
	[PROBE_FENTRY] = { "probe_fentry", "fentry folio_end_writeback (trampoline)", "fentry" },
	[PROBE_FEXIT] = { "probe_fexit", "fexit filemap_page_mkwrite (trampoline)", "fexit" },
	[PROBE_FMOD_RET] = { "probe_fmod_ret", "fmod_ret security_file_permission", "fmod_ret" },
	[PROBE_LSM] = { "probe_lsm", "BPF LSM program lsm/file_permission", "lsm" },
};

/* A mounted filesystem and the disk whose queue governs it. */
struct disk_mount {
	uint32_t disk;
	char mountpoint[PATH_MAX];
	char fstype[32];
};

struct block_dev {
	char name[256];
	uint32_t dev;
	int stable; /* queue/stable_writes, -1 when unreadable */
};

/* Everything the report says. */
struct facts {
	struct utsname uts;
	const char *btf_path; /* NULL: SYSFS_BTF */
	bool btf_ok;
	char btf_error[128];
	bool tracepoint[SPT_NTRACEPOINTS], all_tracepoints, send_signal_kfunc;
	bool as_stable_writes; /* enum mapping_flags has AS_STABLE_WRITES */
	/* Layouts that differ between the supported kernels (core_fixes.bpf.h). */
	long pg_writeback; /* its bit in enum pageflags, -1: absent */
	bool pg_error, memdesc_flags, bd_super, bd_holder_ops, limits_features, limits_integrity;
	bool ringbuf;
	bool ok[NPROBES];
	char why[NPROBES][128];
	bool lsm_active;
	char lsms[256];
	bool fentry_present[SPT_NFENTRY]; /* asked when fentry loads */
	struct disk_mount *mounts;
	size_t nmounts;
	struct block_dev *devs;
	size_t ndevs;
};

static size_t read_disk_mounts(struct disk_mount **out)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	struct disk_mount *m = NULL, *grown;
	char *line = NULL;
	size_t n = 0, cap = 0;

	while (f && getline(&line, &cap, f) >= 0) {
		struct mountinfo_entry e;
		struct spt_disk d;

		if (!parse_mountinfo_line(line, &e) || resolve_disk(resolve_mount_bdev(&e), &d))
			continue;
		grown = realloc(m, (n + 1) * sizeof(*m));
		if (!grown)
			break;
		m = grown;
		m[n].disk = d.dev;
		snprintf(m[n].mountpoint, sizeof(m[n].mountpoint), "%s", e.mountpoint);
		snprintf(m[n].fstype, sizeof(m[n].fstype), "%s", e.fstype);
		n++;
	}
	if (f)
		fclose(f);
	free(line);
	*out = m;
	return n;
}

/* The block devices that have a stable_writes or a filesystem mounted. */
static void read_block_devices(struct facts *x)
{
	struct dirent **names = NULL;
	int n = scandir("/sys/block", &names, NULL, alphasort);

	x->nmounts = read_disk_mounts(&x->mounts);
	x->devs = calloc(n > 0 ? n : 1, sizeof(*x->devs));
	for (int i = 0; i < n && x->devs; i++) {
		const struct dirent *de = names[i];
		struct block_dev *b = &x->devs[x->ndevs];
		char path[PATH_MAX + 32];
		unsigned int maj, min;
		bool mounted = false;
		struct spt_disk d;
		FILE *f;

		/* An unbound loop device has no loop/ directory: not a device yet. */
		snprintf(path, sizeof(path), "/sys/block/%s/loop", de->d_name);
		if (de->d_name[0] == '.' || (!strncmp(de->d_name, "loop", 4) && access(path, F_OK)))
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/dev", de->d_name);
		f = fopen(path, "re");
		if (!f || fscanf(f, "%u:%u", &maj, &min) != 2 || resolve_disk(spt_kdev(maj, min), &d)) {
			if (f)
				fclose(f);
			continue;
		}
		fclose(f);
		snprintf(path, sizeof(path), "%s/queue/stable_writes", d.sysfs);
		if (read_int_file(path, &b->stable))
			b->stable = -1;
		for (size_t j = 0; j < x->nmounts; j++)
			mounted |= x->mounts[j].disk == d.dev;
		if (b->stable < 0 && !mounted)
			continue;
		snprintf(b->name, sizeof(b->name), "%s", de->d_name);
		b->dev = d.dev;
		x->ndevs++;
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* The value of enum NAME's MEMBER in the kernel's BTF, -1 when absent. */
static long btf_enum_value(const struct btf *btf, const char *name, const char *member)
{
	int id = btf__find_by_name_kind(btf, name, BTF_KIND_ENUM);
	const struct btf_type *t = id >= 0 ? btf__type_by_id(btf, id) : NULL;
	const struct btf_enum *e = t ? btf_enum(t) : NULL;

	for (int i = 0; e && i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, e[i].name_off), member))
			return e[i].val;
	return -1;
}

/* Does struct NAME have MEMBER? */
static bool btf_has_member(const struct btf *btf, const char *name, const char *member)
{
	int id = btf__find_by_name_kind(btf, name, BTF_KIND_STRUCT);
	const struct btf_type *t = id >= 0 ? btf__type_by_id(btf, id) : NULL;
	const struct btf_member *m = t ? btf_members(t) : NULL;

	for (int i = 0; m && i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, m[i].name_off), member))
			return true;
	return false;
}

/* What the BPF side relocates or chooses between (bpf/core_fixes.bpf.h). */
static void read_layouts(const struct btf *btf, struct facts *x)
{
	/* AS_STABLE_WRITES: 6.7, 6.6.4, 6.1.y */
	x->as_stable_writes = btf_enum_value(btf, "mapping_flags", "AS_STABLE_WRITES") >= 0;
	x->pg_writeback = btf_enum_value(btf, "pageflags", "PG_writeback");
	x->pg_error = btf_enum_value(btf, "pageflags", "PG_error") >= 0;
	x->memdesc_flags = btf__find_by_name_kind(btf, "memdesc_flags_t", BTF_KIND_TYPEDEF) >= 0;
	x->bd_super = btf_has_member(btf, "block_device", "bd_super");
	x->bd_holder_ops = btf_has_member(btf, "block_device", "bd_holder_ops");
	x->limits_features = btf_has_member(btf, "queue_limits", "features");
	x->limits_integrity = btf_has_member(btf, "queue_limits", "integrity");
}

/* The kernel's BTF and what it has. False when it does not parse. */
static bool read_btf(struct facts *x)
{
	const char *path = x->btf_path ? x->btf_path : SYSFS_BTF;
	struct btf *btf = btf__parse(path, NULL);

	x->btf_ok = btf != NULL;
	if (!btf) {
		snprintf(x->btf_error, sizeof(x->btf_error), "%s", strerror(errno));
		return false;
	}
	x->all_tracepoints = true;
	for (size_t i = 0; i < SPT_NTRACEPOINTS; i++) {
		x->tracepoint[i] = probe_tracepoint_in_btf(btf, &spt_tracepoints[i]);
		x->all_tracepoints &= x->tracepoint[i];
	}
	x->send_signal_kfunc = btf__find_by_name_kind(btf, "bpf_send_signal_task", BTF_KIND_FUNC) >= 0;
	read_layouts(btf, x);
	btf__free(btf);
	return true;
}

static void gather(struct facts *x)
{
	uname(&x->uts);
	if (!read_btf(x))
		return;
	x->ringbuf = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1;
	for (size_t i = 0; i < NPROBES; i++)
		x->ok[i] = probe_program(probe_progs[i].prog, x->btf_path, x->why[i], sizeof(x->why[i]));
	probe_active_lsms(x->lsms, sizeof(x->lsms));
	x->lsm_active = probe_lsm_listed(x->lsms, "bpf");
	if (x->ok[PROBE_TP_BTF] && x->all_tracepoints && x->ok[PROBE_FENTRY])
		probe_fentry_functions(x->btf_path, x->fentry_present);
	read_block_devices(x);
}

/* What `trace` would attach with --attach-mode auto. */
static const char *attach_mode(const struct facts *x)
{
	if (!x->ok[PROBE_TP_BTF] || !x->all_tracepoints)
		return NULL;
	return x->ok[PROBE_FENTRY] ? "fentry" : "tracepoint";
}

/* enforce from BPF: the LSM program where the BPF LSM is active and it
 * loads, else fmod_ret where that loads; NULL: neither. */
static const char *bpf_hold(const struct facts *x, const char **why)
{
	*why = x->lsm_active ? "the BPF LSM is active, but neither its programs nor fmod_ret load"
			     : "no BPF LSM, and fmod_ret does not load";
	if (x->lsm_active && x->ok[PROBE_LSM])
		return "BPF LSM";
	return x->ok[PROBE_FMOD_RET] ? "fmod_ret" : NULL;
}

static const char *const fentry_roles[] = {
	[SPT_FENTRY_MKWRITE] = "mmap violations (fentry+fexit page_mkwrite)",
	[SPT_FENTRY_WAIT] = "wait timing (fentry+fexit)",
	[SPT_FENTRY_WB_START] = "writeback start (fentry)",
	[SPT_FENTRY_WB_END] = "writeback end (fentry)",
};


/* Tracepoint mode: what attaches where. */
static const char *const tracepoint_plan[][2] = {
	{ "violations, wait counts", "tracepoints writeback_dirty_folio, folio_wait_writeback" },
	{ "wait timing", "tracepoint sched_switch, attached at the first writer's wait "
			 "(--time-all-waits: from the start)" },
	{ "writeback end", "block_rq_complete (request walk)" },
};

static void row(FILE *f, const char *what, bool ok, const char *detail)
{
	fprintf(f, "  %-46s %s%s%s\n", what, ok ? "yes" : "no", detail && *detail ? ": " : "",
		detail ? detail : "");
}

static void print_attach_text(FILE *f, const struct facts *x)
{
	const char *mode = attach_mode(x);

	if (!mode) {
		fprintf(f, "attach mode: none: the tracepoints this tool needs do not load here\n");
		return;
	}
	if (!strcmp(mode, "tracepoint")) {
		fprintf(f, "attach mode (auto): tracepoint (fentry does not load here)\n");
		for (size_t i = 0; i < sizeof(tracepoint_plan) / sizeof(tracepoint_plan[0]); i++)
			fprintf(f, "  %s: %s\n", tracepoint_plan[i][0], tracepoint_plan[i][1]);
		return;
	}
	fprintf(f, "attach mode (auto): fentry where the function is in the kernel's BTF "
		   "(modules: load them first)\n");
	for (int role = SPT_FENTRY_WB_END; role >= SPT_FENTRY_MKWRITE; role--) {
		fprintf(f, "  %s:", fentry_roles[role]);
		for (size_t i = 0; i < SPT_NFENTRY; i++)
			/* fentry and fexit of one function: list it once */
			if (spt_fentry_points[i].role == (enum spt_fentry_role)role &&
			    !spt_fentry_points[i].fexit)
				fprintf(f, " %s%s", spt_fentry_points[i].func,
					x->fentry_present[i] ? "" : " (absent)");
		fprintf(f, "\n");
	}
	fprintf(f, "  other page_mkwrite handlers, write violations, wait counts: tracepoints\n");
}

static void print_block_devices_text(FILE *f, const struct facts *x)
{
	fprintf(f, "block devices (a filesystem samples stable_writes when it is mounted):\n");
	fprintf(f, "  %-12s %-13s %s\n", "DEVICE", "STABLE_WRITES", "FILESYSTEMS");
	for (size_t i = 0; i < x->ndevs; i++) {
		const struct block_dev *b = &x->devs[i];
		bool any = false;

		fprintf(f, "  %-12s %-13s ", b->name, b->stable < 0 ? "?" : b->stable ? "1" : "0");
		for (size_t j = 0; j < x->nmounts; j++) {
			if (x->mounts[j].disk != b->dev)
				continue;
			/* mount points are named by whoever made the directory */
			fputs(any ? ", " : "", f);
			text_puts(f, x->mounts[j].mountpoint);
			fputs(" (", f);
			text_puts(f, x->mounts[j].fstype);
			fputc(')', f);
			any = true;
		}
		fprintf(f, "%s\n", any ? "" : "-");
	}
}

/*
 * A block device's own page cache: whether the kernel ever waits there
 * (AS_STABLE_WRITES on the bdev inode's mapping, set by bdev_add() only),
 * and that the filesystems' metadata in it is never waited for
 * (docs/semantics.md).
 */
static void print_bdev_cache_text(FILE *f, const struct facts *x)
{
	fprintf(f, "block devices' own page cache (write() or a mapping of /dev/NAME, mkfs, "
		   "metadata):\n");
	if (x->as_stable_writes)
		fprintf(f, "  stable writes: only on devices whose stable_writes was 1 when they "
			   "appeared\n  (AS_STABLE_WRITES, set at bdev_add()); writing "
			   "queue/stable_writes later does\n  not reach this cache: its writes under "
			   "writeback stay violations\n");
	else
		fprintf(f, "  stable writes: never (no AS_STABLE_WRITES; the bdev filesystem has no\n"
			   "  SB_I_STABLE_WRITES): writes under writeback are violations even where\n"
			   "  stable_writes=1\n");
	fprintf(f, "  metadata of a mounted filesystem (buffer heads): never waited for; counted as\n"
		   "  kind metadata whatever stable_writes says; writes without PG_writeback\n"
		   "  (submit_bh: jbd2, sync_dirty_buffer) are not seen\n");
}

/* What differs between kernels (docs/semantics.md: kernels), as the
 * text's label, the JSON's key and one value shared by both. */
enum {
	LAYOUT_FLAGS,
	LAYOUT_PG_ERROR,
	LAYOUT_BDEV_FS,
	LAYOUT_QUEUE,
	LAYOUT_PI,
	LAYOUT_PER,
	NLAYOUTS
};

static const char *const layout_keys[NLAYOUTS][2] = {
	[LAYOUT_FLAGS] = { "folio_flags", "folio->flags" },
	[LAYOUT_PG_ERROR] = { "pg_error", "PG_error page flag" },
	[LAYOUT_BDEV_FS] = { "bdev_filesystem", "a block device's filesystem" },
	[LAYOUT_QUEUE] = { "queue_stable_writes", "a queue's stable writes" },
	[LAYOUT_PI] = { "pi_disk_stable_writes_0", "integrity (PI) disk, stable_writes 0" },
	[LAYOUT_PER] = { "stable_writes_per", "the kernel waits per" },
};

static void layout_values(const struct facts *x, const char *v[NLAYOUTS])
{
	v[LAYOUT_FLAGS] = x->memdesc_flags ? "memdesc_flags_t (6.18+)" : "unsigned long (up to 6.17)";
	v[LAYOUT_PG_ERROR] = x->pg_error ? "present (up to 6.11)" : "absent (removed in 6.12)";
	v[LAYOUT_BDEV_FS] = x->bd_super ? "bd_super (up to 6.5)"
			    : x->bd_holder_ops ? "bd_holder with holder ops (6.6+)"
					       : "unknown (neither bd_super nor bd_holder_ops)";
	v[LAYOUT_QUEUE] = x->limits_features ? "BLK_FEAT_STABLE_WRITES, a queue limit (6.11+)"
					     : "QUEUE_FLAG_STABLE_WRITES (5.10 to 6.10)";
	/* bdev_stable_writes() is true for a checksum whatever the flag says
	 * ("block: bypass the STABLE_WRITES flag for protection information",
	 * 6.11, with the integrity profile moved into the queue limits). */
	v[LAYOUT_PI] = x->limits_integrity ? "stable anyway (6.11+)" : "not stable (up to 6.10)";
	v[LAYOUT_PER] = x->as_stable_writes ? "mapping (AS_STABLE_WRITES)"
					    : "superblock (SB_I_STABLE_WRITES)";
}

static void print_layouts_text(FILE *f, const struct facts *x)
{
	const char *v[NLAYOUTS];

	layout_values(x, v);
	fprintf(f, "what differs between kernels (read from its BTF):\n");
	if (x->pg_writeback >= 0)
		fprintf(f, "  %-46s %ld (15 up to 6.5, 1 from 6.6)\n", "PG_writeback bit",
			x->pg_writeback);
	else
		fprintf(f, "  %-46s absent from enum pageflags\n", "PG_writeback bit");
	for (int i = 0; i < NLAYOUTS; i++)
		fprintf(f, "  %-46s %s\n", layout_keys[i][1], v[i]);
}

static void print_layouts_json(FILE *f, const struct facts *x)
{
	const char *v[NLAYOUTS];

	layout_values(x, v);
	fputs(",\"layouts\":{\"pg_writeback_bit\":", f);
	if (x->pg_writeback >= 0)
		fprintf(f, "%ld", x->pg_writeback);
	else
		fputs("null", f);
	for (int i = 0; i < NLAYOUTS; i++) {
		fprintf(f, ",\"%s\":", layout_keys[i][0]);
		json_string(f, v[i]);
	}
	fputc('}', f);
}

static void print_text(FILE *f, const struct facts *x)
{
	const char *why, *hold = bpf_hold(x, &why);
	char what[128];

	fprintf(f, "kernel %s (%s)\n", x->uts.release, x->uts.machine);
	row(f, x->btf_path ? "kernel BTF (--btf)" : "kernel BTF (" SYSFS_BTF ")", x->btf_ok,
	    x->btf_ok ? NULL : x->btf_error);
	if (!x->btf_ok)
		return;
	for (size_t i = 0; i < SPT_NTRACEPOINTS; i++) {
		snprintf(what, sizeof(what), "tracepoint %s", spt_tracepoints[i].name);
		row(f, what, x->tracepoint[i], NULL);
	}
	row(f, "bpf_send_signal_task() kfunc", x->send_signal_kfunc, NULL);
	row(f, "ring buffer map", x->ringbuf, NULL);
	for (size_t i = 0; i < NPROBES; i++)
		row(f, probe_progs[i].label, x->ok[i], x->why[i]);
	row(f, "BPF LSM active (" SECURITYFS "/lsm)", x->lsm_active, x->lsms);
	print_attach_text(f, x);
	fprintf(f, "enforcement: --native (queue/stable_writes): yes; holding write() from BPF: ");
	if (hold)
		fprintf(f, "possible (%s)\n", hold);
	else
		fprintf(f, "no (%s)\n", why);
	print_layouts_text(f, x);
	print_bdev_cache_text(f, x);
	print_block_devices_text(f, x);
}

static void json_bool(FILE *f, const char *key, bool v)
{
	fprintf(f, ",\"%s\":%s", key, v ? "true" : "false");
}

static void print_attach_json(FILE *f, const struct facts *x)
{
	const char *mode = attach_mode(x);

	fputs(",\"attach_mode\":", f);
	json_string(f, mode);
	fputs(",\"attach_plan\":[", f);
	if (mode && !strcmp(mode, "tracepoint")) {
		for (size_t i = 0; i < sizeof(tracepoint_plan) / sizeof(tracepoint_plan[0]); i++) {
			fputs(i ? ",{\"what\":" : "{\"what\":", f);
			json_string(f, tracepoint_plan[i][0]);
			fputs(",\"how\":", f);
			json_string(f, tracepoint_plan[i][1]);
			fputc('}', f);
		}
	} else if (mode) {
		for (int role = SPT_FENTRY_WB_END; role >= SPT_FENTRY_MKWRITE; role--) {
			bool first = true;

			fprintf(f, "{\"what\":\"%s\",\"functions\":[", fentry_roles[role]);
			for (size_t i = 0; i < SPT_NFENTRY; i++) {
				if (spt_fentry_points[i].role != (enum spt_fentry_role)role ||
				    spt_fentry_points[i].fexit)
					continue;
				fprintf(f, "%s{\"name\":\"%s\",\"present\":%s}", first ? "" : ",",
					spt_fentry_points[i].func,
					x->fentry_present[i] ? "true" : "false");
				first = false;
			}
			fputs("]},", f);
		}
		fputs("{\"what\":\"other page_mkwrite handlers, write violations, wait counts\","
		      "\"how\":\"tracepoints\"}", f);
	}
	fputc(']', f);
}

static void print_block_devices_json(FILE *f, const struct facts *x)
{
	fputs(",\"block_devices\":[", f);
	for (size_t i = 0; i < x->ndevs; i++) {
		const struct block_dev *b = &x->devs[i];
		bool any = false;

		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		json_string(f, b->name);
		fprintf(f, ",\"dev\":\"%u:%u\",\"stable_writes\":", spt_kdev_major(b->dev),
			spt_kdev_minor(b->dev));
		if (b->stable < 0)
			fputs("null", f);
		else
			fprintf(f, "%d", b->stable ? 1 : 0);
		fputs(",\"filesystems\":[", f);
		for (size_t j = 0; j < x->nmounts; j++) {
			if (x->mounts[j].disk != b->dev)
				continue;
			fputs(any ? ",{\"mountpoint\":" : "{\"mountpoint\":", f);
			json_string(f, x->mounts[j].mountpoint);
			fputs(",\"fstype\":", f);
			json_string(f, x->mounts[j].fstype);
			fputc('}', f);
			any = true;
		}
		fputs("]}", f);
	}
	fputc(']', f);
}

/* One object, the text's facts under keys; when the BTF does not parse,
 * only the kernel and the BTF's answer (as the text stops there). */
static void print_json(FILE *f, const struct facts *x)
{
	const char *why, *hold = bpf_hold(x, &why);

	fputs("{\"kernel\":{\"release\":", f);
	json_string(f, x->uts.release);
	fputs(",\"machine\":", f);
	json_string(f, x->uts.machine);
	fputs("},\"btf\":{\"path\":", f);
	json_string(f, x->btf_path ? x->btf_path : SYSFS_BTF);
	json_bool(f, "ok", x->btf_ok);
	fputs(",\"error\":", f);
	json_string(f, x->btf_ok ? NULL : x->btf_error);
	fputc('}', f);
	if (x->btf_ok) {
		fputs(",\"tracepoints\":[", f);
		for (size_t i = 0; i < SPT_NTRACEPOINTS; i++)
			fprintf(f, "%s{\"name\":\"%s\",\"present\":%s,\"since\":\"%s\"}", i ? "," : "",
				spt_tracepoints[i].name, x->tracepoint[i] ? "true" : "false",
				spt_tracepoints[i].since);
		fputc(']', f);
		json_bool(f, "send_signal_task_kfunc", x->send_signal_kfunc);
		json_bool(f, "ringbuf", x->ringbuf);
		fputs(",\"programs\":[", f);
		for (size_t i = 0; i < NPROBES; i++) {
			fprintf(f, "%s{\"name\":\"%s\",\"what\":\"%s\",\"ok\":%s,\"error\":", i ? "," : "",
				probe_progs[i].key, probe_progs[i].label, x->ok[i] ? "true" : "false");
			json_string(f, x->ok[i] ? NULL : x->why[i]);
			fputc('}', f);
		}
		fputs("],\"lsms\":", f);
		json_string(f, x->lsms);
		json_bool(f, "bpf_lsm_active", x->lsm_active);
		print_attach_json(f, x);
		fputs(",\"enforcement\":{\"native\":true,\"bpf_hold\":", f);
		json_string(f, hold);
		fputs(",\"bpf_hold_why_not\":", f);
		json_string(f, hold ? NULL : why);
		fputc('}', f);
		print_layouts_json(f, x);
		print_block_devices_json(f, x);
		fputs(",\"bdev_cache\":{\"stable_writes\":", f);
		json_string(f, x->as_stable_writes ? "if stable when the device appeared" : "never");
		fputs(",\"metadata_waited_for\":false}", f);
	}
	fputs("}\n", f);
}

int features_run(const char *btf_path, bool json)
{
	static struct facts x;

	x.btf_path = btf_path;
	gather(&x);
	if (json)
		print_json(stdout, &x);
	else
		print_text(stdout, &x);
	free(x.mounts);
	free(x.devs);
	return x.btf_ok ? 0 : 1;
}
