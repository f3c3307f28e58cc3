// SPDX-License-Identifier: GPL-2.0
/*
 * The plan applied to the opened skeleton, by the skeleton's fields (a
 * renamed program, map or variable fails the build, not the run); and the
 * tests' knobs.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "apply_plan.h"
#include "probe.h"
#include "stablepage.skel.h"

/* The skeleton's programs, indexed like the plan's (enum spt_prog). */
static void skel_progs(struct stablepage_bpf *skel, struct bpf_program *progs[SPT_NPROGS])
{
#define SPT_X_TP(prog, category, event, since) progs[SPT_PROG_##prog] = skel->progs.prog;
#define SPT_X_HOLD(prog, kind, target) progs[SPT_PROG_##prog] = skel->progs.prog;
#define SPT_X_VERIFY(prog, category, event) progs[SPT_PROG_##prog] = skel->progs.prog;
#define SPT_X_FIXED(prog, func, role) progs[SPT_PROG_FENTRY0 + SPT_FX_##prog] = skel->progs.prog;
#define SPT_X_MKWRITE(fn, vmf_arg, errno_ret)                                          \
	progs[SPT_PROG_FENTRY0 + SPT_FX_fentry_##fn] = skel->progs.fentry_##fn; \
	progs[SPT_PROG_FENTRY0 + SPT_FX_fexit_##fn] = skel->progs.fexit_##fn;
	SPT_TRACEPOINTS(SPT_X_TP)
	SPT_HOLD_POINTS(SPT_X_HOLD)
	SPT_VERIFY_POINTS(SPT_X_VERIFY)
	SPT_FENTRY_FIXED_POINTS(SPT_X_FIXED)
	SPT_MKWRITE_FUNCS(SPT_X_MKWRITE)
#undef SPT_X_TP
#undef SPT_X_HOLD
#undef SPT_X_VERIFY
#undef SPT_X_FIXED
#undef SPT_X_MKWRITE
}

/* The maps the run does not use, at their minimum: 1 entry; a ring
 * buffer's is one page. The kernel charges each map by its size (memlock),
 * used or not. */
static void shrink_unused_maps(struct stablepage_bpf *skel, const struct spt_plan *p)
{
	struct bpf_map *maps[SPT_NMAPS] = {
#define SPT_X_MAP(name) [SPT_MAP_##name] = skel->maps.name,
		SPT_MAPS(SPT_X_MAP)
#undef SPT_X_MAP
	};

	for (size_t i = 0; i < SPT_NMAPS; i++) {
		bool ring = bpf_map__type(maps[i]) == BPF_MAP_TYPE_RINGBUF;

		if (!p->map_used[i])
			bpf_map__set_max_entries(maps[i], ring ? sysconf(_SC_PAGESIZE) : 1);
	}
}

static void apply_rodata(struct stablepage_bpf *skel, const struct spt_rodata *r)
{
	skel->rodata->filter_pid = r->filter_pid;
	skel->rodata->filter_dev = r->filter_dev;
	skel->rodata->n_filter_devs = r->n_filter_devs;
	memcpy((void *)skel->rodata->filter_devs, r->filter_devs, sizeof(r->filter_devs));
	skel->rodata->filter_cgroup = r->filter_cgroup;
	skel->rodata->filter_comm = r->filter_comm;
	memcpy((void *)skel->rodata->target_comm, r->target_comm, sizeof(r->target_comm));
	skel->rodata->stream_events = r->stream_events;
	skel->rodata->time_requests = r->time_requests;
	skel->rodata->walk_requests = r->walk_requests;
	skel->rodata->hook_mkwrite = r->hook_mkwrite;
	skel->rodata->time_wait_calls = r->time_wait_calls;
	skel->rodata->hold_action = r->hold_action;
	skel->rodata->max_delay_ns = r->max_delay_ns;
	skel->rodata->index_writeback = r->index_writeback;
	skel->rodata->verify_every = r->verify_every;
}

/*
 * For tests only: every test-only switch of the tool is here, but for the
 * fault points of enforce --remount (spt_test_fault, remount.c). A smaller
 * histogram table (SPT_HIST_TABLE_ROWS) sends the keys whose row is
 * missing to the hash map, the path a taken row leads to; one stall-horizon
 * set (SPT_STALL_HORIZON_SETS=1) is shared by every thread.
 */
void apply_test_knobs(struct stablepage_bpf *skel)
{
	static const char *const names[] = { "SPT_HIST_TABLE_ROWS", "SPT_STALL_HORIZON_SETS" };
	struct bpf_map *maps[] = { skel->maps.hist_table, skel->maps.stall_horizons };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *entries = getenv(names[i]);

		if (entries && atoi(entries) > 0)
			bpf_map__set_max_entries(maps[i], atoi(entries));
	}
}

void apply_plan(struct stablepage_bpf *skel, const struct spt_plan *p)
{
	struct bpf_program *progs[SPT_NPROGS];

	apply_rodata(skel, &p->rodata);
	if (p->load[SPT_PROG_tp_verify_rq_issue]) {
		skel->rodata->ksym_page_offset_base = probe_kallsyms_addr("page_offset_base");
		skel->rodata->ksym_vmemmap_base = probe_kallsyms_addr("vmemmap_base");
	}
	shrink_unused_maps(skel, p);
	skel_progs(skel, progs);
	for (size_t i = 0; i < SPT_NPROGS; i++) {
		bpf_program__set_autoload(progs[i], p->load[i]);
		bpf_program__set_autoattach(progs[i], p->attach[i]);
	}
}
