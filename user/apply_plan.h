/* SPDX-License-Identifier: GPL-2.0 */
/* The plan (plan.h) applied to the BPF skeleton, before it is loaded. */
#ifndef SPT_APPLY_PLAN_H
#define SPT_APPLY_PLAN_H

#include "plan.h"

struct stablepage_bpf;

/* .rodata, each program's autoload and autoattach, the unused maps' sizes. */
void apply_plan(struct stablepage_bpf *skel, const struct spt_plan *p);

/* For tests only: the environment variables that shrink maps. */
void apply_test_knobs(struct stablepage_bpf *skel);

#endif
