/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a run loads and attaches, and the BPF object's settings (.rodata),
 * from the options and what the kernel offers. Pure: no libbpf, no I/O;
 * the probing fills struct spt_features first, the tracer applies the
 * plan to the skeleton after.
 */
#ifndef SPT_PLAN_H
#define SPT_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "options.h"
#include "points.h"

/*
 * What was probed. Only what the options need is probed: nothing for
 * --attach-mode tracepoint; the write-hold programs only for enforce in BPF
 * mode once fentry loads and __folio_start_writeback is present.
 */
struct spt_features {
	bool fentry_loads;        /* a fentry program loads and attaches (trampolines) */
	char fentry_fail[128];    /* why not */
	bool fentry_present[SPT_NFENTRY]; /* the function is in the kernel's BTF */
	bool lsm_active;          /* "bpf" among the active LSMs */
	bool lsm_loads;           /* an lsm/file_permission program loads and attaches */
	bool fmod_ret_loads;      /* a fmod_ret program on security_file_permission does */
	char fmod_ret_fail[128];  /* why not */
};

/* The BPF object's .rodata, as the plan sets it (same names). */
struct spt_rodata {
	bool filter_pid, filter_dev, filter_comm, filter_cgroup;
	__u32 n_filter_devs;
	__u32 filter_devs[SPT_FILTER_DEVS_INLINE];
	char target_comm[SPT_COMM_LEN];
	bool stream_events;
	bool walk_requests, time_requests;
	bool hook_mkwrite, time_wait_calls;
	__u32 hold_action; /* enum spt_hold_action; SPT_ACTION_NONE unless holding */
	__u64 max_delay_ns;
	bool index_writeback;
	__u32 verify_every; /* --verify=N: 1 write request in N hashed; its programs load only then */
};

/*
 * The BPF object's maps with a size (task storage has none), in the
 * skeleton's names. A map the run does not use is created with 1 entry (a
 * ring buffer: one page) instead of its size: most of the maps' memory
 * belongs to one mode each (holding, --verify, fentry, streaming).
 */
#define SPT_MAPS(X)                                                                             \
	X(events) X(totals) X(dev_stats) X(dev_counts) X(proc_stats) X(writer_stats)            \
	X(hist_table) X(hists) X(inflight_violations) X(stall_horizons) X(walk_states)          \
	X(pid_filter) X(dev_filter) X(cgroup_filter) X(mkwrite_calls) X(writeback_started)      \
	X(wb_heads) X(holds) X(held_folios) X(held_tgids) X(hold_events) X(verify_cpus)         \
	X(verify_reqs) X(verify_totals) X(verify_devs) X(verify_changes) X(verify_direct_pages)

enum spt_map {
#define SPT_X_MAP(name) SPT_MAP_##name,
	SPT_MAPS(SPT_X_MAP)
#undef SPT_X_MAP
	SPT_NMAPS
};

extern const char *const spt_map_names[SPT_NMAPS];

struct spt_plan {
	enum spt_attach_mode mode; /* ATTACH_TRACEPOINT or ATTACH_FENTRY */
	char mode_why[512];        /* "Attach mode: <mode> (<mode_why>)" */
	bool holding;              /* enforce in BPF mode */
	enum spt_write_hold write_hold;
	char write_why[256];       /* why WRITE_HOLD_NONE, when holding */
	/* Per program: loaded; attached by the skeleton's attach. */
	bool load[SPT_NPROGS], attach[SPT_NPROGS];
	/* Waits are timed by fentry/fexit on folio_wait_writeback, not by
	 * sched_switch (attached later, at a writer's first wait, otherwise). */
	bool wait_calls;
	/* sched_switch is attached from the start (else at the first wait). */
	bool switch_at_start;
	/* Per map: used by this run (else shrunk to its minimum). */
	bool map_used[SPT_NMAPS];
	struct spt_rodata rodata;
};

/* What to probe: whether fentry matters at all, and whether to ask about
 * holding write() (only once the fentry probe said where fentry loads). */
bool plan_wants_fentry(const struct options *o);
bool plan_wants_write_hold(const struct options *o, const struct spt_features *f);

/* 0, or -1 with the reason in err (a runtime error: --attach-mode fentry
 * where fentry does not load). */
int plan_make(const struct options *o, const struct spt_features *f, struct spt_plan *p,
	      char *err, size_t len);

#endif
