/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tracer's attach points as user space sees them: bpf/stablepage.h's
 * lists (SPT_TRACEPOINTS, SPT_HOLD_POINTS, SPT_FENTRY_FIXED_POINTS,
 * SPT_MKWRITE_FUNCS) expanded into tables and indices. Pure data, no
 * libbpf: the plan and the unit tests use it too.
 */
#ifndef SPT_POINTS_H
#define SPT_POINTS_H

#include <stdbool.h>
#include <linux/types.h>
#include "stablepage.h"

/* The tracepoints every run attaches to (as tp_btf), and the Linux
 * release that gave them BTF (btf_trace_* typedefs). */
struct spt_tracepoint {
	const char *btf_name, *name, *since;
};

enum spt_tracepoint_index {
#define SPT_X_TP(prog, category, event, since) SPT_TP_##prog,
	SPT_TRACEPOINTS(SPT_X_TP)
#undef SPT_X_TP
	SPT_NTRACEPOINTS
};
extern const struct spt_tracepoint spt_tracepoints[SPT_NTRACEPOINTS];

/*
 * The fentry mode's attach points, in list order: the fixed ones, then a
 * fentry and a fexit program per page_mkwrite function. SPT_FX_<prog> is a
 * program's index in spt_fentry_points and in every bool[SPT_NFENTRY].
 */
enum spt_fentry_index {
#define SPT_X_FIXED(prog, func, role) SPT_FX_##prog,
#define SPT_X_MKWRITE(fn, vmf_arg, errno_ret) SPT_FX_fentry_##fn, SPT_FX_fexit_##fn,
	SPT_FENTRY_FIXED_POINTS(SPT_X_FIXED) SPT_MKWRITE_FUNCS(SPT_X_MKWRITE)
#undef SPT_X_FIXED
#undef SPT_X_MKWRITE
	SPT_NFENTRY
};
/* The two that other parts depend on. */
#define SPT_FENTRY_END_WRITEBACK SPT_FX_fentry_folio_end_writeback
#define SPT_FENTRY_START_WRITEBACK SPT_FX_fentry_folio_start_writeback

struct spt_fentry_point {
	const char *prog, *func; /* program in bpf/stablepage.bpf.c, kernel function */
	enum spt_fentry_role role;
	bool fexit; /* the fexit of a fentry/fexit pair on func */
};
extern const struct spt_fentry_point spt_fentry_points[SPT_NFENTRY];

/*
 * Every program of bpf/stablepage.bpf.c, as an index: the tracepoints,
 * enforcement's programs, --verify's, then the fentry points (SPT_PROG_FENTRY0 + an
 * SPT_FX_ index). The loader maps them to the skeleton's programs.
 */
enum spt_prog {
#define SPT_X_TP(prog, category, event, since) SPT_PROG_##prog,
#define SPT_X_HOLD(prog, kind, target) SPT_PROG_##prog,
#define SPT_X_VERIFY(prog, category, event) SPT_PROG_##prog,
	SPT_TRACEPOINTS(SPT_X_TP) SPT_HOLD_POINTS(SPT_X_HOLD) SPT_VERIFY_POINTS(SPT_X_VERIFY)
#undef SPT_X_TP
#undef SPT_X_HOLD
#undef SPT_X_VERIFY
	SPT_PROG_FENTRY0,
	SPT_NPROGS = SPT_PROG_FENTRY0 + SPT_NFENTRY
};

#endif
