// SPDX-License-Identifier: GPL-2.0
/*
 * The plan: per attach point what loads (fentry where trampolines load and
 * the kernel has the function, tracepoints for the rest), what is timed,
 * and how enforcement holds writers. Pure, so it is unit-tested.
 */
#include <stdio.h>
#include <string.h>
#include "plan.h"

#define FENTRY_PROG(i) (SPT_PROG_FENTRY0 + (i))

const char *const spt_map_names[SPT_NMAPS] = {
#define SPT_X_MAP(name) [SPT_MAP_##name] = #name,
	SPT_MAPS(SPT_X_MAP)
#undef SPT_X_MAP
};

static bool holding(const struct options *o)
{
	return o->cmd == CMD_ENFORCE && !o->native;
}

bool plan_wants_fentry(const struct options *o)
{
	return o->attach_mode != ATTACH_TRACEPOINT;
}

bool plan_wants_write_hold(const struct options *o, const struct spt_features *f)
{
	return holding(o) && plan_wants_fentry(o) && f->fentry_loads &&
	       f->fentry_present[SPT_FENTRY_START_WRITEBACK];
}

/* The fentry mode's reason: which page_mkwrite handlers are traced where they return. */
static void fentry_why(struct spt_plan *p)
{
	char handlers[256] = "";
	size_t n = 0;

	for (size_t i = 0; i < SPT_NFENTRY; i++) {
		const struct spt_fentry_point *fp = &spt_fentry_points[i];

		if (p->load[FENTRY_PROG(i)] && fp->role == SPT_FENTRY_MKWRITE && fp->fexit &&
		    n < sizeof(handlers))
			n += snprintf(handlers + n, sizeof(handlers) - n, "%s%s", n ? ", " : "",
				      fp->func);
	}
	snprintf(p->mode_why, sizeof(p->mode_why),
		 "mmap violations where page_mkwrite returns (%s; other handlers: tracepoint), "
		 "write violations and wait counts from tracepoints, waits timed by "
		 "folio_wait_writeback, writeback start/end per folio",
		 n ? handlers : "no handler found");
}

/* Fentry for each function the kernel has, where trampolines load; else
 * tracepoints only. Fails only when fentry was asked for and cannot load. */
static int choose_attach_mode(const struct options *o, const struct spt_features *f,
			      struct spt_plan *p, char *err, size_t len)
{
	p->mode = ATTACH_TRACEPOINT;
	if (!plan_wants_fentry(o)) {
		snprintf(p->mode_why, sizeof(p->mode_why), "as asked");
		return 0;
	}
	if (!f->fentry_loads) {
		if (o->attach_mode == ATTACH_FENTRY) {
			snprintf(err, len, "--attach-mode fentry: fentry programs do not load on this "
					   "kernel (%s); --attach-mode auto uses tracepoints",
				 f->fentry_fail);
			return -1;
		}
		snprintf(p->mode_why, sizeof(p->mode_why), "fentry does not load here: %s",
			 f->fentry_fail);
		return 0;
	}
	p->mode = ATTACH_FENTRY;
	for (size_t i = 0; i < SPT_NFENTRY; i++)
		p->load[FENTRY_PROG(i)] = f->fentry_present[i];
	fentry_why(p);
	return 0;
}

/*
 * enforce (BPF mode): write() is held before its copy by the BPF LSM's
 * file_permission where the BPF LSM is active, else by fmod_ret on
 * security_file_permission; both need the fentry mode's index of folios
 * under writeback (__folio_start_writeback).
 */
static void choose_write_hold(const struct spt_features *f, struct spt_plan *p)
{
	p->write_hold = WRITE_HOLD_NONE;
	if (!p->load[FENTRY_PROG(SPT_FENTRY_START_WRITEBACK)])
		snprintf(p->write_why, sizeof(p->write_why),
			 "checking a write's range needs fentry on __folio_start_writeback, "
			 "and the attach mode is tracepoint");
	else if (f->lsm_active && f->lsm_loads)
		p->write_hold = WRITE_HOLD_LSM;
	else if (f->fmod_ret_loads)
		p->write_hold = WRITE_HOLD_FMOD_RET;
	else
		snprintf(p->write_why, sizeof(p->write_why),
			 "neither BPF LSM nor fmod_ret programs load: %s", f->fmod_ret_fail);
}

static void plan_filters(const struct options *o, struct spt_rodata *r)
{
	r->filter_pid = o->npids > 0;
	r->filter_dev = o->ndevs > 0;
	/* More devices than fit inline are looked up in dev_filter only. */
	if (o->ndevs <= SPT_FILTER_DEVS_INLINE) {
		r->n_filter_devs = o->ndevs;
		memcpy(r->filter_devs, o->devs, o->ndevs * sizeof(o->devs[0]));
	}
	r->filter_cgroup = o->cgroup != NULL;
	if (o->comm) {
		r->filter_comm = true;
		strncpy(r->target_comm, o->comm, SPT_COMM_LEN - 1);
	}
}

/* Which of the always-there programs load and attach, and what they time. */
static void plan_timing(const struct options *o, struct spt_plan *p)
{
	struct spt_rodata *r = &p->rodata;
	bool mkwrite = false;

	for (size_t i = 0; i < SPT_NFENTRY; i++) {
		mkwrite |= p->load[FENTRY_PROG(i)] && spt_fentry_points[i].role == SPT_FENTRY_MKWRITE;
		p->wait_calls |= p->load[FENTRY_PROG(i)] && spt_fentry_points[i].role == SPT_FENTRY_WAIT;
	}
	r->hook_mkwrite = mkwrite;
	r->time_wait_calls = p->wait_calls;
	r->stream_events = !o->quiet;
	/* Timing write requests costs a clock read on every one: only where
	 * histograms are shown. */
	r->time_requests = o->hist || o->json || o->prom_file;
	/* Without fentry on folio_end_writeback (tracepoint mode) the
	 * would-stall ends where the request walk finds the folio; with it,
	 * the request program times requests for the histograms and marks
	 * the violations of failed requests (failed_after_violation), so it
	 * loads in every mode. */
	r->walk_requests = !p->load[FENTRY_PROG(SPT_FENTRY_END_WRITEBACK)];
	p->load[SPT_PROG_tp_block_rq_complete] = true;
	p->load[SPT_PROG_tp_sched_switch] = !p->wait_calls || p->holding;
	/* Tracepoint mode times waits at sched_switch, paid on every context
	 * switch: from the start only when asked to or when writers are
	 * expected to wait (enforce), else from the first writer's wait. */
	p->switch_at_start = p->holding ||
			     (!p->wait_calls && (o->time_all_waits || o->cmd == CMD_ENFORCE));
	p->attach[SPT_PROG_tp_sched_switch] = p->switch_at_start;
}

/* enforce (BPF mode): what is done to writers, and with which programs. */
static void plan_holds(const struct options *o, const struct spt_features *f, struct spt_plan *p)
{
	struct spt_rodata *r = &p->rodata;

	r->hold_action = SPT_ACTION_NONE;
	/* Outside BPF mode --max-delay is refused, so this is the BPF default. */
	r->max_delay_ns = (__u64)(o->max_delay * 1e9);
	p->write_hold = WRITE_HOLD_NONE;
	if (p->holding) {
		choose_write_hold(f, p);
		r->hold_action = o->action;
		r->index_writeback = p->write_hold != WRITE_HOLD_NONE;
	}
	/* Announces each hold once its SIGSTOP is generated. */
	p->load[SPT_PROG_tp_signal_generate] = r->hold_action == SPT_ACTION_DELAY;
	p->load[SPT_PROG_lsm_file_permission] = p->write_hold == WRITE_HOLD_LSM;
	p->load[SPT_PROG_fmod_file_permission] = p->write_hold == WRITE_HOLD_FMOD_RET;
}

/* --verify: its programs load only when asked for (they cost every write
 * request and every write bio). */
static void plan_verify(const struct options *o, struct spt_plan *p)
{
	bool on = o->verify_every > 0;

	p->rodata.verify_every = on ? o->verify_every : 1;
	p->load[SPT_PROG_tp_verify_rq_issue] = p->attach[SPT_PROG_tp_verify_rq_issue] = on;
	p->load[SPT_PROG_tp_verify_rq_complete] = p->attach[SPT_PROG_tp_verify_rq_complete] = on;
	p->load[SPT_PROG_tp_verify_bio_queue] = p->attach[SPT_PROG_tp_verify_bio_queue] = on;
	p->load[SPT_PROG_tp_verify_rq_requeue] = p->attach[SPT_PROG_tp_verify_rq_requeue] = on;
}

/*
 * Which maps the programs planned can reach (the .rodata switches make
 * the verifier drop the other paths; user space follows the same
 * switches). Every other map is in use: the counts, the histograms, the
 * violations in flight.
 */
static void plan_maps(const struct spt_plan *p, bool used[SPT_NMAPS])
{
	const struct spt_rodata *r = &p->rodata;
	bool fentry_writeback = p->load[FENTRY_PROG(SPT_FENTRY_START_WRITEBACK)] ||
				p->load[FENTRY_PROG(SPT_FENTRY_END_WRITEBACK)];
	bool verify = p->load[SPT_PROG_tp_verify_rq_issue];

	for (size_t i = 0; i < SPT_NMAPS; i++)
		used[i] = true;
	used[SPT_MAP_events] = r->stream_events;
	used[SPT_MAP_pid_filter] = r->filter_pid;
	used[SPT_MAP_dev_filter] = r->filter_dev;
	used[SPT_MAP_cgroup_filter] = r->filter_cgroup;
	used[SPT_MAP_mkwrite_calls] = r->hook_mkwrite;
	/* fentry mode's writeback cycles, also read by the mkwrite hooks */
	used[SPT_MAP_writeback_started] = fentry_writeback || r->hook_mkwrite;
	used[SPT_MAP_wb_heads] = r->index_writeback;
	used[SPT_MAP_holds] = used[SPT_MAP_held_folios] = used[SPT_MAP_held_tgids] =
		used[SPT_MAP_hold_events] = p->holding;
	used[SPT_MAP_verify_cpus] = used[SPT_MAP_verify_reqs] = used[SPT_MAP_verify_totals] =
		used[SPT_MAP_verify_devs] = used[SPT_MAP_verify_changes] =
			used[SPT_MAP_verify_direct_pages] = verify;
}

int plan_make(const struct options *o, const struct spt_features *f, struct spt_plan *p,
	      char *err, size_t len)
{
	memset(p, 0, sizeof(*p));
	for (size_t i = 0; i < SPT_NPROGS; i++)
		p->load[i] = p->attach[i] = i < SPT_PROG_FENTRY0;
	for (size_t i = SPT_PROG_FENTRY0; i < SPT_NPROGS; i++)
		p->attach[i] = true;
	if (choose_attach_mode(o, f, p, err, len))
		return -1;
	p->holding = holding(o);
	plan_filters(o, &p->rodata);
	plan_timing(o, p);
	plan_holds(o, f, p);
	plan_verify(o, p);
	plan_maps(p, p->map_used);
	return 0;
}
