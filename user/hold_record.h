/* SPDX-License-Identifier: GPL-2.0 */
/*
 * enforce (BPF): the thread groups a run may hold, recorded under
 * /run/stablepage-trace/ before any is stopped, for `enforce --restore`.
 */
#ifndef SPT_HOLD_RECORD_H
#define SPT_HOLD_RECORD_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

#define SPT_RUN_DIR "/run/stablepage-trace"

/* Creates held.TOOL. 0 or -errno. */
int hold_record_open(pid_t tool, pid_t guardian);
/* Appends a thread group; only then may BPF hold it. 0 or -errno (-ESRCH:
 * it is gone). */
int hold_record_add(__u32 pid, const char *comm);
/* The guardian, once the tool died: SIGCONT to every group the tool
 * recorded (its start time unchanged). The number that failed. */
int hold_record_resume(pid_t tool);
/* The run's record: everyone in it was resumed. */
void hold_record_remove(pid_t tool);
/* `enforce --restore`: SIGCONT to the groups of every record whose tool
 * and guardian are both gone. *found: a record existed. Exit code. */
int hold_record_restore(bool *found);

#endif
