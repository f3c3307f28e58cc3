// SPDX-License-Identifier: GPL-2.0
/*
 * Least privilege: once the BPF programs are loaded and attached, most of
 * what root may do is no longer needed, and a process that keeps it is a
 * bigger target (it parses /proc, mountinfo and paths given by users).
 * See docs/enforce.md for what each process keeps, and why.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include "privs.h"

static int caps_get(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

	return syscall(SYS_capget, &h, d) ? -errno : 0;
}

bool privs_have(int cap)
{
	struct __user_cap_data_struct d[2] = {};

	if (caps_get(d))
		return geteuid() == 0;
	return d[cap / 32].effective & (1U << (cap % 32));
}

/* The highest capability this kernel knows (cap_last_cap). */
static int last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int n = 40;

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = 40;
		fclose(f);
	}
	return n < 63 ? n : 63;
}

int privs_keep_only(__u64 keep)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};
	int err = caps_get(d);

	if (err)
		return err;
	/* The bounding set first: dropping from it needs CAP_SETPCAP in the
	 * effective set, which goes with the capset below. */
	d[0].effective = d[0].permitted;
	d[1].effective = d[1].permitted;
	if (syscall(SYS_capset, &h, d))
		return -errno;
	for (int cap = 0; cap <= last_cap(); cap++)
		if (!(keep & PRIVS_BIT(cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) &&
		    errno != EINVAL)
			return -errno;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	for (int i = 0; i < 2; i++) {
		__u32 k = keep >> (32 * i);

		d[i].effective &= k;
		d[i].permitted &= k;
		d[i].inheritable = 0;
	}
	if (syscall(SYS_capset, &h, d))
		return -errno;
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ? -errno : 0;
}

int privs_set_effective(__u64 eff)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};
	int err = caps_get(d);

	if (err)
		return err;
	for (int i = 0; i < 2; i++)
		d[i].effective = d[i].permitted & (__u32)(eff >> (32 * i));
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}
