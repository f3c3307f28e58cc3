/* SPDX-License-Identifier: GPL-2.0 */
/* Capabilities: asking for one, and keeping only some (least privilege). */
#ifndef SPT_PRIVS_H
#define SPT_PRIVS_H

#include <stdbool.h>
#include <linux/types.h>

/* include/uapi/linux/capability.h */
#define CAP_DAC_OVERRIDE_NR 1
#define CAP_DAC_READ_SEARCH_NR 2
#define CAP_KILL_NR 5
#define CAP_SETPCAP_NR 8
#define CAP_SYS_ADMIN_NR 21
#define CAP_SYS_RESOURCE_NR 24
#define CAP_PERFMON_NR 38
#define CAP_BPF_NR 39

#define PRIVS_BIT(cap) (1ULL << (cap))

/* The capability is in our effective set. */
bool privs_have(int cap);

/*
 * Keeps in the effective, permitted and bounding sets only the
 * capabilities in `keep` that we have (the rest cannot come back, not
 * even through execve), clears the inheritable and ambient sets, and sets
 * no_new_privs. 0 or -errno.
 */
int privs_keep_only(__u64 keep);

/* The effective set becomes `eff` (within the permitted set). 0 or -errno. */
int privs_set_effective(__u64 eff);

#endif
