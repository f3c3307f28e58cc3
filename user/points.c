// SPDX-License-Identifier: GPL-2.0
/* The attach-point tables, expanded from bpf/stablepage.h in list order. */
#include "points.h"

const struct spt_tracepoint spt_tracepoints[SPT_NTRACEPOINTS] = {
#define SPT_X_TP(prog, category, event, since) \
	[SPT_TP_##prog] = { "btf_trace_" #event, #category ":" #event, since },
	SPT_TRACEPOINTS(SPT_X_TP)
#undef SPT_X_TP
};

const struct spt_fentry_point spt_fentry_points[SPT_NFENTRY] = {
#define SPT_X_FIXED(prog, func, role) \
	[SPT_FX_##prog] = { #prog, #func, role, __builtin_strncmp(#prog, "fexit_", 6) == 0 },
#define SPT_X_MKWRITE(fn, vmf_arg, errno_ret)                               \
	[SPT_FX_fentry_##fn] = { "fentry_" #fn, #fn, SPT_FENTRY_MKWRITE, false }, \
	[SPT_FX_fexit_##fn] = { "fexit_" #fn, #fn, SPT_FENTRY_MKWRITE, true },
	SPT_FENTRY_FIXED_POINTS(SPT_X_FIXED) SPT_MKWRITE_FUNCS(SPT_X_MKWRITE)
#undef SPT_X_FIXED
#undef SPT_X_MKWRITE
};
