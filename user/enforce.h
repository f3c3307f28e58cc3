/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Native enforcement: the kernel's own stable writes, per block device
 * (queue/stable_writes), with the previous values remembered in a state
 * file so that a killed run can be undone by `enforce --restore`.
 */
#ifndef SPT_ENFORCE_H
#define SPT_ENFORCE_H

#include <stdbool.h>
#include <stdint.h>
#include "report.h"

#define SPT_ENFORCE_STATE "/run/stablepage-trace/enforce.state"

struct enforce_opts {
	const uint32_t *devs; /* kernel devs, as --dev resolved them */
	int ndevs;
	bool remount;
	bool persist;
};

/* Sets stable_writes=1 on each device, reports stacked devices and
 * filesystems not yet enforced, remounts them when asked. 0, or -1 after
 * printing one line (what was changed is undone by enforce_finish). */
int enforce_apply(const struct enforce_opts *opts);

/* One line per enforced filesystem: in effect or not, its violations and
 * stable waits. False when a filesystem in effect still saw violations. */
bool enforce_report(const struct spt_summary *s);

/* Restores the previous values unless --persist; idempotent. */
void enforce_finish(void);

/* `enforce --restore`: undoes what the state file records. Exit code. */
int enforce_restore(void);

#endif
