/* SPDX-License-Identifier: GPL-2.0 */
/* enforce (BPF): a process that resumes held writers if the tool dies. */
#ifndef SPT_GUARDIAN_H
#define SPT_GUARDIAN_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

struct guardian {
	pid_t pid;
	int pipe_fd;
	int pidfd; /* the guardian's, for the tool to watch; -1 if none */
};

/* Forks it; call after the BPF object is loaded and before it is attached,
 * so that the child holds no link. prog_ids: the tool's loaded programs
 * (the guardian sweeps until none resolves), kept alive by the caller.
 * 0 or -errno. */
int guardian_start(struct guardian *g, int holds_fd, __u64 max_delay_ns, const __u32 *prog_ids,
		   int nprogs);
/* True once the guardian has exited (it never should while we run). */
bool guardian_died(const struct guardian *g);
/* After the programs are detached and every holder resumed. */
void guardian_stop(struct guardian *g);

#endif
