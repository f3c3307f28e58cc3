// SPDX-License-Identifier: GPL-2.0
/* enforce (BPF mode): the hold tracker's callbacks, the guardian, the
 * heartbeat and the record of held groups. See hold_glue.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "hold_glue.h"
#include "hold_record.h"
#include "msg.h"
#include "privs.h"
#include "stablepage.skel.h"

/* include/linux/proc_ns.h: PROC_PID_INIT_INO, the initial pid namespace's
 * inode number, fixed since 3.8. */
#define PID_NS_INIT_INO 0xEFFFFFFCU

void holds_check_privileges(void)
{
	struct stat st;

	if (!privs_have(CAP_KILL_NR))
		spt_die("enforce resumes held writers with SIGCONT, which needs CAP_KILL: run it "
			"as root (or use --action log, or --native)");
	if (!stat("/proc/self/ns/pid", &st) && st.st_ino != PID_NS_INIT_INO)
		spt_die("enforce must run in the initial pid namespace: BPF names writers by "
			"their pids there (or use --action log, or --native)");
}

static int resume_pid(__u32 pid, void *ctx)
{
	struct bpf_holds *h = ctx;

	if (!kill(pid, SIGCONT))
		return 0;
	if (errno != ESRCH && !h->said_resume_failed) {
		h->said_resume_failed = true;
		fprintf(stderr, "stablepage-trace: cannot resume held pid %u: %s; the guardian "
				"tries again\n", pid, strerror(errno));
	}
	return -errno;
}

static void forget_hold(__u32 tid, void *ctx)
{
	struct bpf_holds *h = ctx;

	bpf_map__delete_elem(h->skel->maps.holds, &tid, sizeof(tid), 0);
}

/* The ids of the loaded programs, for the guardian. */
static int collect_prog_ids(struct bpf_holds *h)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, h->skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || h->nprogs == HOLDS_MAX_PROGS)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			return -errno;
		h->prog_ids[h->nprogs++] = info.id;
	}
	return 0;
}

static void heartbeat(struct bpf_holds *h)
{
	h->skel->bss->tool_heartbeat_ns = h->guardian_lost ? 0 : monotonic_ns();
}

int holds_start(struct bpf_holds *h, struct stablepage_bpf *skel, __u64 max_delay_ns)
{
	struct hold_ops ops = { .resume = resume_pid, .forget = forget_hold, .ctx = h };
	const char *what = "read the programs' ids";
	int err;

	h->skel = skel;
	hold_init(&h->tracker, max_delay_ns, &ops);
	err = collect_prog_ids(h);
	if (!err) {
		what = "start the guardian process";
		err = guardian_start(&h->guardian, bpf_map__fd(skel->maps.holds), max_delay_ns,
				     h->prog_ids, h->nprogs);
	}
	if (!err) {
		what = "create the record of held writers in " SPT_RUN_DIR;
		err = hold_record_open(getpid(), h->guardian.pid);
	}
	if (err) {
		fprintf(stderr, "stablepage-trace: cannot %s: %s\n", what, strerror(-err));
		return err;
	}
	if (!privs_have(CAP_SYS_RESOURCE_NR))
		fprintf(stderr, "stablepage-trace: without CAP_SYS_RESOURCE the guardian stays "
				"within the OOM killer's reach\n");
	heartbeat(h);
	return 0;
}

int holds_drop_privileges(struct bpf_holds *h, bool writes_prom_file)
{
	__u64 keep = PRIVS_BIT(CAP_KILL_NR) | PRIVS_BIT(CAP_BPF_NR) | PRIVS_BIT(CAP_PERFMON_NR) |
		     PRIVS_BIT(CAP_DAC_READ_SEARCH_NR);
	int err;

	if (!h->on)
		return 0;
	if (writes_prom_file)
		keep |= PRIVS_BIT(CAP_DAC_OVERRIDE_NR);
	err = privs_keep_only(keep);
	if (err)
		fprintf(stderr, "stablepage-trace: cannot drop the capabilities no longer needed: "
				"%s\n", strerror(-err));
	return err;
}

/* BPF asks to record a group before it holds it: written, then allowed. */
static void record_group(struct bpf_holds *h, const struct spt_hold_event *e)
{
	__u8 recorded = 1;
	int err = hold_record_add(e->pid, e->comm);

	if (err) {
		if (err != -ESRCH && !h->said_record_failed) {
			h->said_record_failed = true;
			fprintf(stderr, "stablepage-trace: cannot record pid %u for enforce "
					"--restore (%s): it is not held\n", e->pid, strerror(-err));
		}
		return;
	}
	bpf_map__update_elem(h->skel->maps.held_tgids, &e->pid, sizeof(e->pid), &recorded,
			     sizeof(recorded), BPF_ANY);
}

int holds_handle_event(void *ctx, void *data, size_t size)
{
	struct bpf_holds *h = ctx;
	const struct spt_hold_event *e = data;

	if (size < sizeof(*e))
		return 0;
	if (e->type == SPT_HOLD_RECORD)
		record_group(h, e);
	else
		hold_event(&h->tracker, e, monotonic_ns());
	return 0;
}

/* Without the guardian nobody would resume a writer if we died: resume
 * everyone now and hold no more (a stale heartbeat makes BPF refuse). */
static void watch_guardian(struct bpf_holds *h)
{
	if (h->guardian_lost || !guardian_died(&h->guardian))
		return;
	h->guardian_lost = true;
	heartbeat(h);
	hold_resume_all(&h->tracker, monotonic_ns());
	fprintf(stderr, "stablepage-trace: the guardian process died: every held writer "
			"resumed, holding no more (tracing goes on)\n");
}

int holds_poll_timeout(struct bpf_holds *h, int timeout_ms)
{
	int next;

	watch_guardian(h);
	heartbeat(h);
	next = hold_tick(&h->tracker, monotonic_ns());
	/* While someone is held, wake often: see sweep_held_folios() (BPF). */
	if (next >= 0 && next < timeout_ms)
		timeout_ms = next ? next : 1;
	if (next >= 0 && timeout_ms > 2)
		timeout_ms = 2;
	return timeout_ms;
}

void holds_release_everyone(struct bpf_holds *h)
{
	if (!h->on || h->released)
		return;
	h->released = true;
	hold_resume_all(&h->tracker, monotonic_ns());
	guardian_stop(&h->guardian);
	/* Kept when a writer could not be resumed: enforce --restore tries. */
	if (!h->tracker.resume_failed)
		hold_record_remove(getpid());
}
