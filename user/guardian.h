/* SPDX-License-Identifier: GPL-2.0 */
/* enforce (BPF): a process that resumes held writers if the tool dies. */
#ifndef SPT_GUARDIAN_H
#define SPT_GUARDIAN_H

#include <sys/types.h>
#include <linux/types.h>

struct guardian {
	pid_t pid;
	int pipe_fd;
};

/* Forks it; call after the BPF object is loaded and before it is attached,
 * so that the child holds no link. 0 or -errno. */
int guardian_start(struct guardian *g, int holds_fd, __u64 max_delay_ns);
/* After the programs are detached and every holder resumed. */
void guardian_stop(struct guardian *g);

#endif
