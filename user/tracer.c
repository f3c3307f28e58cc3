// SPDX-License-Identifier: GPL-2.0
/*
 * The tracer's lifecycle. Every way out once the BPF object is opened
 * goes through tracer_cleanup(), which detaches first, then resumes held
 * writers and restores what enforce --native changed: nothing stays
 * attached, stopped or changed, whatever failed. (A failed load that names
 * a missing tracepoint exits at once: nothing is attached or changed yet.)
 * The poll loop is in tracer_loop.c, the reports in tracer_report.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "apply_plan.h"
#include "enforce.h"
#include "msg.h"
#include "probe.h"
#include "resolve.h"
#include "summary.h"
#include "tracer.h"
#include "tracer_state.h"
#include "stablepage.skel.h"

/* --prom-file without -i: how often node_exporter's file is refreshed. */
#define PROM_DEFAULT_INTERVAL_S 15.0

static const char *btf_file(const struct options *o)
{
	return o->btf_path ? o->btf_path : SYSFS_BTF;
}

/*
 * What the plan needs to know of the kernel, and only that: no fentry
 * probe for --attach-mode tracepoint, the write-hold programs only for
 * enforce in BPF mode where fentry loads.
 */
static void probe_kernel(const struct options *o, struct spt_features *f)
{
	char fail[128];

	memset(f, 0, sizeof(*f));
	if (!plan_wants_fentry(o))
		return;
	f->fentry_loads = probe_program("probe_fentry", o->btf_path, f->fentry_fail,
					sizeof(f->fentry_fail));
	if (!f->fentry_loads)
		return;
	probe_fentry_functions(o->btf_path, f->fentry_present);
	if (!plan_wants_write_hold(o, f))
		return;
	f->lsm_active = probe_bpf_lsm_active();
	f->lsm_loads = f->lsm_active && probe_program("probe_lsm", o->btf_path, fail, sizeof(fail));
	if (!f->lsm_loads)
		f->fmod_ret_loads = probe_program("probe_fmod_ret", o->btf_path, f->fmod_ret_fail,
						  sizeof(f->fmod_ret_fail));
}

/* Opens the BPF object and sets it up as planned, not loaded yet. */
static int tracer_open(struct tracer *t)
{
	LIBBPF_OPTS(bpf_object_open_opts, open_opts, .btf_custom_path = t->o->btf_path);
	t->skel = stablepage_bpf__open_opts(&open_opts);
	if (!t->skel) {
		fprintf(stderr, "stablepage-trace: cannot open the BPF object: %s (-v for details)\n",
			strerror(errno));
		return -1;
	}
	apply_plan(t->skel, &t->plan);
	apply_test_knobs(t->skel);
	return 0;
}

/*
 * After a failed load: a missing tracepoint, or the verifier. The kernel's
 * BTF is parsed only now, to name a missing tracepoint instead of a libbpf
 * error, because parsing it costs start-up time on every run.
 */
static void explain_load_failure(const struct options *o, int err)
{
	struct btf *btf = btf__parse(btf_file(o), NULL);
	const struct spt_tracepoint *missing;

	if (!btf)
		spt_die("cannot parse BTF in %s: %s", btf_file(o), strerror(errno));
	missing = probe_missing_tracepoint(btf);
	btf__free(btf);
	if (missing)
		spt_die("the kernel lacks tracepoint %s (added in Linux %s)", missing->name,
			missing->since);
	fprintf(stderr, "stablepage-trace: the kernel rejected the BPF programs: %s "
			"(-v shows the verifier log)\n", strerror(-err));
}

static int setup_filters(struct tracer *t)
{
	const struct options *o = t->o;
	__u8 one = 1;
	__u32 zero = 0;
	int err;

	for (int i = 0; i < o->npids; i++) {
		err = bpf_map__update_elem(t->skel->maps.pid_filter, &o->pids[i], sizeof(__u32),
					   &one, sizeof(one), BPF_ANY);
		if (err)
			return err;
	}
	for (int i = 0; i < o->ndevs; i++) {
		err = bpf_map__update_elem(t->skel->maps.dev_filter, &o->devs[i], sizeof(__u32),
					   &one, sizeof(one), BPF_ANY);
		if (err)
			return err;
	}
	if (t->cgroup_fd >= 0)
		return bpf_map__update_elem(t->skel->maps.cgroup_filter, &zero, sizeof(zero),
					    &t->cgroup_fd, sizeof(t->cgroup_fd), BPF_ANY);
	return 0;
}

/* The events ring unless -q, and the hold events' when holding: one
 * ring_buffer polls both. 0, or -1 after printing one line. */
static int open_rings(struct tracer *t)
{
	bool holding = t->plan.holding;
	int err = 0;

	if (!t->o->quiet)
		t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.events), events_handle,
					 &t->events, NULL);
	if (holding && (t->o->quiet || t->rb)) {
		if (t->rb)
			err = ring_buffer__add(t->rb, bpf_map__fd(t->skel->maps.hold_events),
					       holds_handle_event, &t->holds);
		else
			t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.hold_events),
						 holds_handle_event, &t->holds, NULL);
		if (t->rb && err) {
			errno = -err;
			ring_buffer__free(t->rb);
			t->rb = NULL;
		}
	}
	if ((!t->o->quiet || holding) && !t->rb) {
		fprintf(stderr, "stablepage-trace: cannot open the ring buffer: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

/* The maps' memory, fixed once they are created: -v says it, the reports
 * carry it. */
static void report_maps_memory(struct tracer *t)
{
	int nmaps;

	t->maps_bytes = maps_memlock(t->skel, &nmaps);
	verbose(t, "BPF maps: %llu bytes (%.1f MiB) charged (memlock) for %d maps; bpftool map "
		   "show lists each\n", (unsigned long long)t->maps_bytes, t->maps_bytes / 1048576.0,
		nmaps);
}

/*
 * Load, filters, guardian, signals, enforce --native, attach, rings. 0, or
 * -1 after printing one line (or when a signal came during enforce_apply).
 */
static int tracer_start(struct tracer *t)
{
	const struct options *o = t->o;
	int err = stablepage_bpf__load(t->skel);

	if (err) {
		explain_load_failure(o, err);
		return -1;
	}
	report_maps_memory(t);
	err = setup_filters(t);
	if (err) {
		fprintf(stderr, "stablepage-trace: cannot set filters: %s\n", strerror(-err));
		return -1;
	}
	t->holds.on = t->plan.holding;
	/* Loaded, not attached: the guardian inherits no link. */
	if (t->holds.on && holds_start(&t->holds, t->skel, t->plan.rodata.max_delay_ns))
		return -1;
	/* Before attaching: the first mapping seen on a remounted filesystem
	 * must already be the new mount's. Signals end the run through the
	 * cleanup path from here on, so nothing stays changed. */
	tracer_catch_signals();
	if (o->cmd == CMD_ENFORCE && o->native) {
		struct enforce_opts eo = { .devs = o->devs, .ndevs = o->ndevs,
					   .remount = o->remount, .persist = o->persist };

		if (enforce_apply(&eo) || tracer_signalled())
			return -1;
	}
	err = stablepage_bpf__attach(t->skel);
	if (err) {
		fprintf(stderr, "stablepage-trace: cannot attach to the writeback tracepoints: %s "
				"(-v for details)\n", strerror(-err));
		return -1;
	}
	t->skel->bss->switch_attached = t->plan.switch_at_start;
	t->events.skel = t->skel;
	return open_rings(t);
}

/* The lines on stderr (and the header on stdout) that say what runs. */
static void announce(const struct tracer *t)
{
	const struct options *o = t->o;

	fprintf(stderr, "Attach mode: %s (%s)\n", t->prom.attach_mode, t->plan.mode_why);
	if (t->plan.holding && t->plan.write_hold == WRITE_HOLD_NONE)
		fprintf(stderr, "enforce: write() cannot be held before its copy here (%s): holding "
				"mmap writers at their write fault only; enforce --native makes the "
				"kernel hold both\n", t->plan.write_why);
	fprintf(stderr, "Tracing writes to pages under writeback%s%s. %s\n",
		o->quiet ? " (summary only)" : "",
		o->cmd == CMD_ENFORCE ? (o->native ? ", enforcing stable writes" :
						     ", holding writers in scope") : "",
		t->deadline ? "Ctrl-C ends early." : "Hit Ctrl-C to end.");
	if (!o->quiet && !o->json)
		print_event_header(stdout);
	fflush(stdout);
}

/* The end of a run that went well: the final report. The exit code. */
static int tracer_finish(struct tracer *t, bool resume_failed)
{
	/* Detach first so the summary is one consistent snapshot. */
	stablepage_bpf__detach(t->skel);
	if (t->rb)
		ring_buffer__consume(t->rb);
	holds_release_everyone(&t->holds);
	if (tracer_report(t, true))
		return EXIT_RUNTIME;
	verbose(t, "events streamed: %llu\n", t->events.streamed);
	return t->enforcement_held && !resume_failed ? 0 : EXIT_RUNTIME;
}

/* The one way out once the object may be open; safe at any stage. */
static void tracer_cleanup(struct tracer *t)
{
	if (t->skel)
		stablepage_bpf__detach(t->skel);
	holds_release_everyone(&t->holds);
	enforce_finish();
	ring_buffer__free(t->rb);
	stablepage_bpf__destroy(t->skel);
	summary_free(&t->prev);
	retired_free(&t->retired);
	if (t->cgroup_fd >= 0)
		close(t->cgroup_fd);
	resolve_cleanup();
}

static void check_kernel_btf(const struct options *o)
{
	if (access(btf_file(o), R_OK))
		spt_die("no kernel BTF at %s: needs a kernel built with CONFIG_DEBUG_INFO_BTF=y, or "
			"--btf FILE", btf_file(o));
}

static void init_prom(struct tracer *t)
{
	static struct utsname uts;

	t->prom.version = SPT_VERSION;
	t->prom.top_comms = t->o->prom_top_comm;
	t->prom.top_cgroups = t->o->prom_top_cgroup;
	if (!uname(&uts))
		t->prom.kernel = uts.release;
}

static void start_clocks(struct tracer *t)
{
	const struct options *o = t->o;

	t->events.realtime_offset = clock_s(CLOCK_REALTIME) - clock_s(CLOCK_MONOTONIC);
	t->start = clock_s(CLOCK_MONOTONIC);
	t->start_wall = t->start + t->events.realtime_offset;
	t->deadline = o->duration > 0 ? t->start + o->duration : 0;
	if (o->count) /* bcc's [INTERVAL [COUNT]]: COUNT reports, then the end */
		t->deadline = t->start + o->interval * (double)o->count;
	t->every = o->interval ? o->interval : o->prom_file ? PROM_DEFAULT_INTERVAL_S : 0;
	t->prom.start_ts = t->start_wall;
	/* the exporter, which runs for months, ages rows out unless told not to */
	t->row_age = o->row_age_given ? o->row_age : o->prom_file ? SPT_ROW_AGE_DEFAULT_S : 0;
	/* --row-age alone: a tick to age rows out at, a quarter of the age */
	if (!t->every && t->row_age)
		t->every = t->row_age / 4 < 1 ? 1 : t->row_age / 4 > 60 ? 60 : t->row_age / 4;
	/* COUNT 1: the one report is the final one. */
	if (t->every && o->count != 1)
		t->next_report = t->start + t->every;
}

int tracer_run(const struct options *o, int cgroup_fd)
{
	static struct tracer t; /* the hold tracker's tables: not on the stack */
	bool resume_failed = false;
	int ret = EXIT_RUNTIME;
	char err[512];

	t.o = o;
	t.cgroup_fd = cgroup_fd;
	t.enforcement_held = true;
	t.events.json = o->json;
	init_prom(&t);
	check_kernel_btf(o);
	/* Before anything loads: holding needs SIGCONT to work on its pids. */
	if (o->cmd == CMD_ENFORCE && !o->native && o->action == SPT_ACTION_DELAY)
		holds_check_privileges();
	/* The kernel's features first, then the plan: plan_make is pure. */
	probe_kernel(o, &t.features);
	if (plan_make(o, &t.features, &t.plan, err, sizeof(err)))
		spt_die("%s", err);
	t.prom.attach_mode = attach_mode_name(t.plan.mode);
	if (!tracer_open(&t) && !tracer_start(&t) &&
	    !holds_drop_privileges(&t.holds, o->prom_file != NULL)) {
		start_clocks(&t);
		announce(&t);
		if (!tracer_poll_loop(&t, &resume_failed))
			ret = tracer_finish(&t, resume_failed);
	}
	tracer_cleanup(&t);
	return ret;
}
