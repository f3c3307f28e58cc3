/* SPDX-License-Identifier: GPL-2.0 */
/*
 * enforce (BPF mode): hold.c's tracker wired to the BPF object: hold
 * events from the ring buffer, SIGCONT to resume, the holds map entry
 * dropped (after the SIGCONT), the heartbeat without which BPF starts no
 * hold, the record of the groups it may hold (hold_record.h), and the
 * guardian process that resumes everyone if we die (and whose death makes
 * us resume everyone and hold no more).
 */
#ifndef SPT_HOLD_GLUE_H
#define SPT_HOLD_GLUE_H

#include <stdbool.h>
#include <stddef.h>
#include "guardian.h"
#include "hold.h"

struct stablepage_bpf;

#define HOLDS_MAX_PROGS 128

struct bpf_holds {
	bool on; /* enforce in BPF mode: everything below is in use */
	bool released, guardian_lost, said_resume_failed, said_record_failed;
	struct stablepage_bpf *skel;
	struct hold_tracker tracker;
	struct guardian guardian;
	__u32 prog_ids[HOLDS_MAX_PROGS];
	int nprogs;
};

/* enforce --action delay: CAP_KILL (SIGCONT to other users' processes)
 * and the initial pid namespace (BPF's pids), or one line and exit 1. */
void holds_check_privileges(void);

/* After the load, before the attach (the guardian must inherit no link).
 * 0, or -errno after printing one line. */
int holds_start(struct bpf_holds *h, struct stablepage_bpf *skel, __u64 max_delay_ns);

/*
 * Once attached: keeps only CAP_KILL (SIGCONT), CAP_BPF and CAP_PERFMON
 * (the maps, sched_switch attached late), CAP_DAC_READ_SEARCH (file and
 * cgroup names: open_by_handle_at), CAP_DAC_OVERRIDE with --prom-file
 * (its directory may be another user's); sets no_new_privs. Nothing when
 * !h->on. 0, or -errno after printing one line.
 */
int holds_drop_privileges(struct bpf_holds *h, bool writes_prom_file);

/* ring_buffer_sample_fn for the hold_events ring; ctx: the struct bpf_holds. */
int holds_handle_event(void *ctx, void *data, size_t size);

/* Every turn of the main loop: the heartbeat, the guardian watched, and
 * the loop's bound on its sleep lowered so that holds end on time. */
int holds_poll_timeout(struct bpf_holds *h, int timeout_ms);

/* Nobody stays stopped: call once the programs are detached. The
 * guardian's last sweep resumes whoever the holds map still names.
 * Idempotent; nothing when !h->on. */
void holds_release_everyone(struct bpf_holds *h);

#endif
