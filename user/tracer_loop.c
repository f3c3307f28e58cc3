// SPDX-License-Identifier: GPL-2.0
/*
 * The run's poll loop: ring buffers drained, reports at their time, the
 * signals that end, pause or resume the run, sched_switch attached at a
 * writer's first wait (tracepoint mode).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "tracer_state.h"
#include "stablepage.skel.h"

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

void tracer_catch_signals(void)
{
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, on_signal);
	signal(SIGUSR1, on_pause_signal);
	signal(SIGUSR2, on_pause_signal);
}

bool tracer_signalled(void)
{
	return exiting;
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

/* The summary still comes after a failed resume; the exit code says it. */
int tracer_poll_loop(struct tracer *t, bool *resume_failed)
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
			tracer_report(t, false);
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
