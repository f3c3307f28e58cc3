/* SPDX-License-Identifier: GPL-2.0 */
/*
 * enforce (BPF mode): hold.c's tracker wired to the BPF object: hold
 * events from the ring buffer, SIGCONT to resume, the holds map entry
 * dropped, and the guardian process that resumes everyone if we die.
 */
#ifndef SPT_HOLD_GLUE_H
#define SPT_HOLD_GLUE_H

#include <stdbool.h>
#include <stddef.h>
#include "guardian.h"
#include "hold.h"

struct stablepage_bpf;

struct bpf_holds {
	bool on; /* enforce in BPF mode: everything below is in use */
	struct stablepage_bpf *skel;
	struct hold_tracker tracker;
	struct guardian guardian;
};

/* After the load, before the attach (the guardian must inherit no link).
 * 0, or -errno after printing one line. */
int holds_start(struct bpf_holds *h, struct stablepage_bpf *skel, __u64 max_delay_ns);

/* ring_buffer_sample_fn for the hold_events ring; ctx: the struct bpf_holds. */
int holds_handle_event(void *ctx, void *data, size_t size);

/* The main loop's bound on its sleep while someone is held: timeout_ms
 * lowered so that holds end on time. */
int holds_poll_timeout(struct bpf_holds *h, int timeout_ms);

/* Nobody stays stopped: call once the programs are detached. The
 * guardian's last sweep resumes whoever the holds map still names.
 * Idempotent; nothing when !h->on. */
void holds_release_everyone(struct bpf_holds *h);

#endif
