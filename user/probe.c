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

bool probe_tracepoint_in_btf(const struct btf *btf, const struct spt_tracepoint *tp)
{
	return btf__find_by_name_kind(btf, tp->btf_name, BTF_KIND_TYPEDEF) >= 0;
}

const struct spt_tracepoint *probe_missing_tracepoint(const struct btf *btf)
{
	for (size_t i = 0; i < SPT_NTRACEPOINTS; i++)
		if (!probe_tracepoint_in_btf(btf, &spt_tracepoints[i]))
			return &spt_tracepoints[i];
	return NULL;
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
bool probe_active_lsms(char *buf, size_t len)
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

bool probe_lsm_listed(const char *lsms, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = lsms; (p = strstr(p, name)); p += n)
		if ((p == lsms || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

unsigned long long probe_kallsyms_addr(const char *name)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	unsigned long long addr = 0, a;
	char line[512], type, sym[256];

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 && !strcmp(sym, name)) {
			addr = a;
			break;
		}
	if (f)
		fclose(f);
	return addr;
}

bool probe_bpf_lsm_active(void)
{
	char lsms[256];

	probe_active_lsms(lsms, sizeof(lsms));
	return probe_lsm_listed(lsms, "bpf");
}

