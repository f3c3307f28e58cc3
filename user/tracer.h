/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tracing (or enforcing) run, start to end: probe the kernel, plan, open
 * the BPF object and apply the plan, load, set the filters, attach, poll
 * the ring buffers until the end, detach, report, clean up.
 */
#ifndef SPT_TRACER_H
#define SPT_TRACER_H

#include "options.h"

/* o->cmd is CMD_TRACE or CMD_ENFORCE. cgroup_fd: the --cgroup directory,
 * or -1; closed here. The exit code. */
int tracer_run(const struct options *o, int cgroup_fd);

#endif
