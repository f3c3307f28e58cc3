// SPDX-License-Identifier: GPL-2.0
/*
 * The tracer's lifecycle. Every way out once the BPF object is opened
 * goes through tracer_cleanup(), which detaches first, then resumes held
 * writers and restores what enforce --native changed: nothing stays
 * attached, stopped or changed, whatever failed. (A failed load that names
 * a missing tracepoint exits at once: nothing is attached or changed yet.)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
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
#include "delta.h"
#include "enforce.h"
#include "events.h"
#include "hold_glue.h"
#include "msg.h"
#include "plan.h"
#include "probe.h"
#include "prom.h"
#include "promdevs.h"
#include "prune.h"
#include "report.h"
#include "resolve.h"
#include "summary.h"
#include "tracer.h"
#include "stablepage.skel.h"

/* --prom-file without -i: how often node_exporter's file is refreshed. */
#define PROM_DEFAULT_INTERVAL_S 15.0

struct tracer {
	const struct options *o;
	struct spt_features features;
	struct spt_plan plan;
	struct stablepage_bpf *skel;
	struct ring_buffer *rb;
	struct event_stream events;
	struct bpf_holds holds;
	struct prom_info prom;
	int cgroup_fd;
	bool enforcement_held; /* enforce --native: no violation where it took effect */
	bool switch_tried;     /* sched_switch's late attach is tried once */
	struct {
		bool on;
		double since, total;
	} paused; /* since when tracing is paused, and for how long it was before */
	double start, deadline, every, next_report;
	double start_wall;          /* the start, in seconds since the epoch */
	unsigned long nreports;     /* interval reports printed */
	bool deadline_reached;      /* the run ended at -d or at the COUNTth report */
	struct spt_summary prev;    /* --delta: the previous report's counts, by key */
	bool have_prev;
	double row_age;             /* --row-age in effect (seconds); 0: rows never age out */
	__u64 maps_bytes;           /* what the kernel charges for the maps (memlock) */
	struct spt_retired retired; /* the counts of the rows aged out */
};

/* Set by signal handlers, hence file-level. SIGUSR1 asks for tracing to
 * pause, SIGUSR2 for it to go on: the state last asked for, which the main
 * loop brings about. */
static volatile sig_atomic_t exiting;
static volatile sig_atomic_t pause_wanted;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

static void on_pause_signal(int sig)
{
	pause_wanted = sig == SIGUSR1;
}

static void verbose(const struct tracer *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void verbose(const struct tracer *t, const char *fmt, ...)
{
	va_list ap;

	if (!t->o->verbose)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

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
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, on_signal);
	signal(SIGUSR1, on_pause_signal);
	signal(SIGUSR2, on_pause_signal);
	if (o->cmd == CMD_ENFORCE && o->native) {
		struct enforce_opts eo = { .devs = o->devs, .ndevs = o->ndevs,
					   .remount = o->remount, .persist = o->persist };

		if (enforce_apply(&eo) || exiting)
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

/* A writer waited (tracepoint mode): time the waits from now on, tried
 * once. The link is the skeleton's, so detach and destroy end it like the
 * others. Without it tracing goes on, the waits counted and untimed. */
static void attach_switch(struct tracer *t)
{
	struct stablepage_bpf *skel = t->skel;

	if (t->switch_tried)
		return;
	t->switch_tried = true;
	skel->links.tp_sched_switch = bpf_program__attach(skel->progs.tp_sched_switch);
	if (!skel->links.tp_sched_switch) {
		fprintf(stderr, "stablepage-trace: cannot attach sched_switch, waits stay untimed: %s\n",
			strerror(errno));
		return;
	}
	skel->bss->switch_attached = true;
	verbose(t, "a writer waited on writeback: sched_switch attached to time the waits\n");
}

/*
 * Pausing detaches the tracepoint programs, so the traced workload pays
 * nothing, and going on attaches them again; what spanned the pause is
 * dropped, untimed (see pause_epoch). fentry/fexit programs stay attached
 * and return at once (tracing_paused): attaching a trampoline again on a
 * function writers are running can hang the kernel (it did on 6.1). Each
 * is acknowledged by a line on stderr.
 */
static bool is_trampoline(const struct bpf_program *prog)
{
	enum bpf_attach_type type = bpf_program__expected_attach_type(prog);

	return type == BPF_TRACE_FENTRY || type == BPF_TRACE_FEXIT;
}

static void pause_tracing(struct tracer *t, double now)
{
	const struct bpf_object_skeleton *s = t->skel->skeleton;

	t->skel->bss->tracing_paused = true;
	for (int i = 0; i < s->prog_cnt; i++) {
		struct bpf_link **link = s->progs[i].link;

		if (*link && !is_trampoline(*s->progs[i].prog)) {
			bpf_link__destroy(*link);
			*link = NULL;
		}
	}
	t->skel->bss->pause_epoch++;
	t->paused.since = now;
	fprintf(stderr, "Tracing paused (SIGUSR2 goes on).\n");
}

/* Attaches again what was attached at the start, and sched_switch if a
 * writer's wait attached it after the start. 0 or -errno. */
static int resume_tracing(struct tracer *t, double now)
{
	const struct bpf_object_skeleton *s = t->skel->skeleton;
	int err = 0;

	for (int i = 0; i < s->prog_cnt && !err; i++) {
		struct bpf_program *prog = *s->progs[i].prog;
		struct bpf_link **link = s->progs[i].link;
		bool wanted = bpf_program__autoattach(prog) ||
			      (prog == t->skel->progs.tp_sched_switch && t->skel->bss->switch_attached);

		if (*link || !bpf_program__autoload(prog) || !wanted)
			continue;
		*link = bpf_program__attach(prog);
		err = *link ? 0 : -errno;
	}
	if (err) {
		fprintf(stderr, "stablepage-trace: cannot attach the programs again after the "
				"pause: %s\n", strerror(-err));
		return err;
	}
	t->skel->bss->tracing_paused = false;
	t->paused.total += now - t->paused.since;
	fprintf(stderr, "Tracing goes on.\n");
	return 0;
}

static int set_paused(struct tracer *t, bool pause)
{
	double now = clock_s(CLOCK_MONOTONIC);

	if (pause)
		pause_tracing(t, now);
	else if (resume_tracing(t, now))
		return -1;
	t->paused.on = pause;
	return 0;
}

/* An interval report on stdout: the counts since the start, or with --delta
 * those of the interval; -T stamps the text's header with the time. */
static void print_interval(const struct tracer *t, const struct spt_summary *s)
{
	const struct options *o = t->o;
	char when[16] = "";

	if (o->json) {
		print_summary_json(stdout, s, o->top);
		return;
	}
	if (o->timestamps) {
		time_t secs = (time_t)s->ts;
		struct tm tm;

		localtime_r(&secs, &tm);
		strftime(when, sizeof(when), "%H:%M:%S ", &tm);
	}
	if (s->delta)
		printf("\n--- %s%.1f s to %.1f s (counts of this interval) ---\n", when,
		       s->since_ts - t->start_wall, s->ts - t->start_wall);
	else
		printf("\n--- %safter %.1f s (counts since the start) ---\n", when, s->duration_s);
	print_summary_text(stdout, s, o->top);
	if (o->hist)
		print_hists_text(stdout, s);
}

/* --delta: the interval's counts, from this snapshot and the previous one
 * (none before the first: zeros at the start). */
static void print_delta(struct tracer *t, const struct spt_summary *s)
{
	struct spt_summary d, zero = { .ts = t->start_wall };
	int err = summary_delta(&d, s, t->have_prev ? &t->prev : &zero);

	if (!err) {
		summary_resolve(&d, t->o->top);
		print_interval(t, &d);
	} else {
		fprintf(stderr, "stablepage-trace: cannot count the interval: %s\n", strerror(-err));
	}
	summary_free(&d);
}

/*
 * At exit, an interval report too when it says something the summary does
 * not: with --delta the counts since the last report (so the deltas add up
 * to the summary), and the COUNTth report when the run ended at it.
 */
static bool final_interval(const struct tracer *t)
{
	return t->o->interval && (t->o->delta || (t->o->count && t->deadline_reached));
}

/* The Prometheus file, its devices' series from the mounts of now. */
static int write_prom(struct tracer *t, const struct spt_summary *s)
{
	const struct options *o = t->o;
	struct prom_known_dev *known = NULL;
	size_t nknown = 0;
	int err;

	if (prom_known_devs(o->devs, o->ndevs, &known, &nknown))
		nknown = 0; /* out of memory: only the devices with activity */
	t->prom.known = known;
	t->prom.nknown = nknown;
	err = prom_write_file(o->prom_file, s, &t->prom);
	if (err)
		fprintf(stderr, "stablepage-trace: cannot write %s: %s\n", o->prom_file,
			strerror(-err));
	t->prom.known = NULL;
	free(known);
	return err;
}

/* --row-age: idle rows out of the maps, before a report reads them. */
static void age_rows(struct tracer *t)
{
	int err;

	if (!t->row_age)
		return;
	err = prune_rows(t->skel, &t->retired, t->row_age);
	if (err)
		fprintf(stderr, "stablepage-trace: cannot age out rows: %s\n", strerror(-err));
}

/*
 * Reads the maps and reports: on stdout at exit and every interval, to the
 * Prometheus file every interval and at exit. The maps count since the
 * start; --delta subtracts the previous snapshot, kept for that.
 */
static int report(struct tracer *t, bool final)
{
	const struct options *o = t->o;
	struct spt_summary s = { .attach_mode = t->prom.attach_mode, .since_ts = t->start_wall,
				 .kernel = t->prom.kernel, .retired = &t->retired,
				 .maps_bytes = t->maps_bytes };
	struct spt_verify_summary verify = {};
	double now = clock_s(CLOCK_MONOTONIC);
	int err;

	if (t->holds.on) {
		s.hold = &t->holds.tracker;
		s.hold_action = action_name(o->action);
		s.write_hold = write_hold_name(t->plan.write_hold);
	}
	s.ts = now + t->events.realtime_offset;
	s.duration_s = now - t->start;
	s.paused_s = t->paused.total + (t->paused.on ? now - t->paused.since : 0);
	if (!final)
		age_rows(t);
	if (!final && !o->interval && !o->prom_file)
		return 0; /* a tick for --row-age only */
	err = summary_read(t->skel, &s, o->top);
	if (!err && o->verify_every) {
		err = verify_read(t->skel, o->verify_every, &verify, o->top);
		s.verify = &verify;
	}
	if (err) {
		fprintf(stderr, "stablepage-trace: cannot read the counters: %s\n", strerror(-err));
		summary_free(&s), verify_free(&verify);
		return err;
	}
	if (o->interval && (!final || final_interval(t))) {
		s.interval = true;
		s.seq = ++t->nreports;
		if (o->delta)
			print_delta(t, &s);
		else
			print_interval(t, &s);
		s.interval = false;
	}
	if (final) {
		if (o->json)
			print_summary_json(stdout, &s, o->top);
		else
			print_summary_text(stdout, &s, o->top);
		if (!o->json && o->hist)
			print_hists_text(stdout, &s);
	}
	fflush(stdout);
	if (final && o->cmd == CMD_ENFORCE && o->native)
		t->enforcement_held = enforce_report(&s);
	if (o->prom_file)
		err = write_prom(t, &s);
	if (o->delta && !final) {
		summary_free(&t->prev);
		summary_sort_by_key(&s);
		/* verify's counts stay cumulative in delta reports */
		s.verify = NULL;
		verify_free(&verify);
		t->prev = s;
		t->have_prev = true;
		return err;
	}
	summary_free(&s), verify_free(&verify);
	return err;
}

/* A pause or resume asked for by a signal. -1 when tracing could not go on. */
static int follow_pause_signal(struct tracer *t)
{
	if (pause_wanted == t->paused.on)
		return 0;
	if (t->o->cmd == CMD_ENFORCE) {
		fprintf(stderr, "stablepage-trace: enforce does not pause: signal ignored\n");
		pause_wanted = t->paused.on;
		return 0;
	}
	return set_paused(t, pause_wanted);
}

/* How long the next poll may sleep: until the deadline, the next report
 * or a hold's end. -1 when the deadline passed; 0 to report now. */
static int poll_timeout(struct tracer *t, double now)
{
	int timeout_ms = 100;

	if (t->deadline) {
		if (now >= t->deadline)
			return -1;
		if ((t->deadline - now) * 1000 < timeout_ms)
			timeout_ms = (int)((t->deadline - now) * 1000) + 1;
	}
	if (t->next_report) {
		if (now >= t->next_report)
			return 0;
		if ((t->next_report - now) * 1000 < timeout_ms)
			timeout_ms = (int)((t->next_report - now) * 1000) + 1;
	}
	if (t->holds.on)
		timeout_ms = holds_poll_timeout(&t->holds, timeout_ms);
	return timeout_ms;
}

/*
 * Until a signal, the deadline or a ring buffer error (-1). A failed
 * resume after a pause ends it too, with *resume_failed set: the summary
 * still comes, the exit code says it.
 */
static int poll_loop(struct tracer *t, bool *resume_failed)
{
	while (!exiting) {
		double now = clock_s(CLOCK_MONOTONIC);
		int timeout_ms, err;

		if (follow_pause_signal(t)) {
			*resume_failed = true;
			break;
		}
		if (!t->paused.on && !t->plan.wait_calls && !t->skel->bss->switch_attached &&
		    t->skel->bss->switch_wanted)
			attach_switch(t);
		timeout_ms = poll_timeout(t, now);
		if (timeout_ms < 0) {
			t->deadline_reached = true;
			break;
		}
		if (timeout_ms == 0) {
			report(t, false);
			t->next_report += t->every;
			/* The COUNTth report is the final one, at the deadline. */
			if (t->o->count && t->nreports + 1 >= t->o->count)
				t->next_report = 0;
			continue;
		}
		if (!t->rb) {
			usleep(timeout_ms * 1000);
			continue;
		}
		/* The BPF side wakes us only when the ring fills up (no wakeup
		 * per event): drain it after every timeout too. */
		err = ring_buffer__poll(t->rb, timeout_ms);
		if (err >= 0)
			err = ring_buffer__consume(t->rb);
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "stablepage-trace: ring buffer poll: %s\n", strerror(-err));
			return -1;
		}
		fflush(stdout);
	}
	return 0;
}

/* The end of a run that went well: the final report. The exit code. */
static int tracer_finish(struct tracer *t, bool resume_failed)
{
	/* Detach first so the summary is one consistent snapshot. */
	stablepage_bpf__detach(t->skel);
	if (t->rb)
		ring_buffer__consume(t->rb);
	holds_release_everyone(&t->holds);
	if (report(t, true))
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
		if (!poll_loop(&t, &resume_failed))
			ret = tracer_finish(&t, resume_failed);
	}
	tracer_cleanup(&t);
	return ret;
}
