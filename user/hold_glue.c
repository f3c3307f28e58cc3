// SPDX-License-Identifier: GPL-2.0
/* enforce (BPF mode): the hold tracker's callbacks and the guardian. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "hold_glue.h"
#include "stablepage.skel.h"

static void resume_pid(__u32 pid, void *unused)
{
	(void)unused;
	kill(pid, SIGCONT);
}

static void forget_hold(__u32 tid, void *skel)
{
	bpf_map__delete_elem(((struct stablepage_bpf *)skel)->maps.holds, &tid, sizeof(tid), 0);
}

int holds_start(struct bpf_holds *h, struct stablepage_bpf *skel, __u64 max_delay_ns)
{
	struct hold_ops ops = { .resume = resume_pid, .forget = forget_hold, .ctx = skel };
	int err;

	h->skel = skel;
	hold_init(&h->tracker, max_delay_ns, &ops);
	err = guardian_start(&h->guardian, bpf_map__fd(skel->maps.holds), max_delay_ns);
	if (err)
		fprintf(stderr, "stablepage-trace: cannot start the guardian process: %s\n",
			strerror(-err));
	return err;
}

int holds_handle_event(void *ctx, void *data, size_t size)
{
	struct bpf_holds *h = ctx;

	if (size >= sizeof(struct spt_hold_event))
		hold_event(&h->tracker, data, monotonic_ns());
	return 0;
}

int holds_poll_timeout(struct bpf_holds *h, int timeout_ms)
{
	int next = hold_tick(&h->tracker, monotonic_ns());

	/* While someone is held, wake often: see sweep_held_folios() (BPF). */
	if (next >= 0 && next < timeout_ms)
		timeout_ms = next ? next : 1;
	if (next >= 0 && timeout_ms > 2)
		timeout_ms = 2;
	return timeout_ms;
}

void holds_release_everyone(struct bpf_holds *h)
{
	if (!h->on)
		return;
	hold_resume_all(&h->tracker, monotonic_ns());
	guardian_stop(&h->guardian);
}
