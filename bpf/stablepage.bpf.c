// SPDX-License-Identifier: GPL-2.0
/*
 * stablepage-trace: writes that land in page-cache folios under writeback.
 *
 * Tracepoint attach mode (works without trampolines):
 *   writeback:writeback_dirty_folio  fires when a folio goes clean -> dirty.
 *       A folio under writeback was cleaned for the I/O, so the first write
 *       after writeback started fires it exactly once per writeback cycle:
 *       that is the unit of counting.
 *   writeback:folio_wait_writeback   fires once per sleep waiting for
 *       writeback; counted by the kind of the sleeping context.
 *   sched:sched_switch               times those sleeps: the waiter going
 *       to sleep while the folio is still under writeback, and running
 *       again (a look at the two tasks' own wait entries).
 *   block:block_rq_complete          ends the would-stall time of violated
 *       folios carried by a completed write request (only while some are
 *       in flight), counts those whose request failed, and times write
 *       requests for the writeback histogram where the tool shows
 *       histograms.
 * fentry attach mode (where trampolines load) keeps the first tracepoint
 * and adds fentry/fexit programs: mmap violations are decided where the
 * page_mkwrite handlers return, waits timed from entry to return of
 * folio_wait_writeback(), and each folio's writeback from
 * __folio_start_writeback() to folio_end_writeback(), which also ends the
 * would-stalls (block_rq_complete then only marks the violations of failed
 * requests). enforce (BPF) adds the hold points. Every attach point is
 * listed once in stablepage.h (SPT_TRACEPOINTS, SPT_HOLD_POINTS,
 * SPT_FENTRY_FIXED_POINTS, SPT_MKWRITE_FUNCS).
 *
 * This file holds the settings, then the handlers that tie the concerns
 * together and the thin SEC() wrappers; each concern is a header, included
 * below in dependency order. One object, one skeleton: every function is
 * static __always_inline (no global subprograms, so the verifier keeps the
 * trusted kernel pointers) but the two callbacks of bpf_loop() and
 * bpf_for_each_map_elem().
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "stablepage.h"
#include "core_fixes.bpf.h"

/*
 * Settings and shared state: every global of the skeleton's .rodata and
 * .bss structs, in their order (user/ reads and writes them by name). The
 * headers below use them. (hist.bpf.h's zero_hist is static: not in the
 * skeleton.)
 */

/* Set by the loader before load (.rodata). */
const volatile bool filter_pid = false;
const volatile bool filter_dev = false;
const volatile bool filter_comm = false;
const volatile bool filter_cgroup = false;
const volatile bool stream_events = true;
/* Tracepoint mode: would-stall ends where a completed request's pages are
 * found (block_rq_complete walk). fentry mode: at folio_end_writeback. */
const volatile bool walk_requests = true;
/*
 * The write requests' latency histogram (SPT_HIST_WRITEBACK), which the
 * tool asks for only where it shows histograms (--hist, --json,
 * --prom-file). Without it a write request reads the clock only when it
 * ends a violation's would-stall, and most write requests carry no
 * violated folio.
 */
const volatile bool time_requests = true;
/* fentry mode: mmap violations are decided where page_mkwrite returns, and
 * waits are timed from entry to return of folio_wait_writeback(). */
const volatile bool hook_mkwrite = false;
const volatile bool time_wait_calls = false;
/* enforce (BPF): enum spt_hold_action for writers in scope (the task
 * filters); the folios under writeback are indexed by file offset for the
 * write() check (fentry mode: __folio_start_writeback). */
const volatile __u32 hold_action = SPT_ACTION_NONE;
const volatile __u64 max_delay_ns = 1000000000ULL;
const volatile bool index_writeback = false;
const volatile char target_comm[SPT_COMM_LEN] = {};
/* --dev: up to SPT_FILTER_DEVS_INLINE devices compared inline
 * (dev_selected()); n_filter_devs is 0 when more are selected than fit,
 * and the dev_filter map holds them all. */
const volatile __u32 n_filter_devs = 0;
const volatile __u32 filter_devs[SPT_FILTER_DEVS_INLINE] = {};
/* --verify=N: the pages of 1 write request in N hashed at issue and at
 * completion (verify_*.bpf.h); its programs load only then. */
const volatile __u32 verify_every = 1;
/*
 * --verify: where /proc/kallsyms names page_offset_base and vmemmap_base
 * (CONFIG_KALLSYMS_ALL), their addresses as the loader read them; 0:
 * unknown. Not libbpf __ksym externs: those make every load read
 * /proc/kallsyms, which the systemd unit's ProcSubset=pid hides.
 */
const volatile __u64 ksym_page_offset_base = 0;
const volatile __u64 ksym_vmemmap_base = 0;

/* Run-time state (.bss). */
/*
 * Tracepoint mode: waits are timed by sched_switch, which runs on every
 * context switch of the machine. Unless asked to time every wait, the tool
 * attaches it only once a writer has waited (a stable wait): the first
 * such wait sets switch_wanted, the tool attaches sched_switch and sets
 * switch_attached; until then waits are counted and untimed.
 */
bool switch_attached = false;
__u32 switch_wanted = 0;
/*
 * Pausing (SIGUSR1) detaches the tracepoint programs and sets
 * tracing_paused, which the fentry/fexit programs (fentry mode) return at:
 * their trampolines stay, as attaching them again on a function writers
 * are running hung the 6.1 test guest (see docs/semantics.md). The tool
 * increments pause_epoch while paused. What spans the pause (a violation
 * waiting for its I/O, a wait being timed, a page_mkwrite call, a
 * writeback start) may have had its end pass unseen, so each such entry
 * records the epoch it began in, and whoever meets one from an earlier
 * epoch drops it, untimed.
 */
__u32 pause_epoch = 0;
bool tracing_paused = false;

/*
 * Counters on their own cache lines: sched_switch reads n_held_folios on
 * every context switch and block_rq_complete reads it and
 * n_inflight_violations on every write request, while the violation, wait
 * and I/O-end paths of the other CPUs write the others; sharing a line made
 * each switch a cache miss.
 */
#define SPT_OWN_CACHE_LINE __attribute__((aligned(64)))

/* Folios with held writers (holds.bpf.h). */
__u64 n_held_folios SPT_OWN_CACHE_LINE;
/* enforce (BPF): the tool's last sign of life (SPT_HEARTBEAT_STALE_NS). */
__u64 tool_heartbeat_ns SPT_OWN_CACHE_LINE;
/*
 * Occupied slots of inflight_violations (inflight.bpf.h), and waits being
 * timed in waiting (wait.bpf.h). Incremented only by the insert (or the
 * wait's start) that created one and decremented only by the take or
 * eviction (or the wait's end) that removed it, so they are exact.
 * block_rq_complete walks requests only while the first is not 0;
 * sched_switch does not read the second (see tp_sched_switch).
 */
__u64 n_inflight_violations SPT_OWN_CACHE_LINE;
/* Those of them on large folios: while there are none (and no holds), a
 * request's pages are looked up as folios without reading them (walk.bpf.h). */
__u64 n_large_inflight SPT_OWN_CACHE_LINE;
__u64 n_waiting SPT_OWN_CACHE_LINE;
/* The programs' own (.bss): btf_ptr_addr()'s base (bits.bpf.h), and the
 * last sweep of the held folios (holds.bpf.h). */
__u64 ptr_base_addr;
__u64 last_held_sweep_ns SPT_OWN_CACHE_LINE;
/* --verify (verify_*.bpf.h): hashed pages whose request has not completed;
 * the direct map's (struct page, address) pair and its state. */
__u64 n_verify_pending SPT_OWN_CACHE_LINE;
__u64 dm_page0, dm_virt0;
__u64 dm_state;

#include "bits.bpf.h"     /* log2, hashing, BTF pointer addresses */
#include "x86.bpf.h"      /* the syscall frame: kind of a write, its range */
#include "select.bpf.h"   /* task, device, cgroup and comm filters */
#include "account.bpf.h"  /* totals, device/process/writer rows, events */
#include "hist.bpf.h"     /* latency histograms */
#include "inflight.bpf.h" /* violations until their I/O ends, stall horizons */
#include "wait.bpf.h"     /* timing writeback waits */
#include "mkwrite.bpf.h"  /* fentry mode: page_mkwrite, writeback cycles */
#include "holds.bpf.h"    /* enforce (BPF): holding writers */
#include "walk.bpf.h"     /* the folios of a completed write request */
#include "verify_state.bpf.h"  /* --verify: requests sampled, counts, direct writes' pages */
#include "verify_pages.bpf.h"  /* --verify: the direct map, a page hashed, its kind */
#include "verify_check.bpf.h"  /* --verify: a request's pages compared at completion */
#include "verify_issue.bpf.h"  /* --verify: a request's pages hashed at issue */

/* A folio goes clean -> dirty (mapping->i_pages xa_lock held, IRQs off). */
static __always_inline int handle_folio_dirtied(struct folio *folio, struct address_space *mapping)
{
	struct folio_file ff;
	struct spt_totals *t;
	__u64 addr;
	__u32 kind;

	if (!mapping || !folio_under_writeback(folio) || !folio_file_selected(mapping, &ff))
		return 0;
	t = get_totals();
	if (!t)
		return 0;
	addr = btf_ptr_addr(folio);
	/*
	 * A mounted filesystem's metadata (buffer heads in its device's own
	 * cache): whoever dirties it, nothing waits for writeback first
	 * (mark_buffer_dirty() does not), stable writes or not.
	 */
	if (ff.owner) {
		record_violation(t, addr, mapping, &ff, SPT_KIND_METADATA, folio_is_large(folio));
		return 0;
	}
	/* Also a device's own cache: AS_STABLE_WRITES of the bdev inode's
	 * mapping, or the bdev superblock, which never has
	 * SB_I_STABLE_WRITES (core_fixes.bpf.h) */
	if (mapping_stable_writes(mapping, ff.sb)) {
		count_stable_dirtied(t, &ff, mapping);
		return 0;
	}
	kind = current_kind();
	if (hook_mkwrite && kind == SPT_KIND_MMAP) {
		__u32 tid = bpf_get_current_pid_tgid();
		struct mkwrite_call *call = bpf_map_lookup_elem(&mkwrite_calls, &tid);

		/* Inside a page_mkwrite handler: its return decides. */
		if (call) {
			call->dirtied = 1;
			return 0;
		}
		/* ext4's mapped-buffers path dirties after page_mkwrite
		 * returned, and that return counted it already. */
		if (violated_this_cycle(addr))
			return 0;
	}
	if (kind == SPT_KIND_MMAP && hold_mmap_writer(t, addr))
		return 0;
	record_violation(t, addr, mapping, &ff, kind, folio_is_large(folio));
	return 0;
}

/* A task sleeps until a folio's writeback ends. */
static __always_inline int handle_writeback_wait(struct folio *folio, struct address_space *mapping)
{
	struct spt_proc_stats *ps;
	struct folio_file ff;
	struct spt_totals *t;
	__u32 kind;

	if (!mapping || !folio_file_selected(mapping, &ff))
		return 0;
	t = get_totals();
	if (!t)
		return 0;
	kind = current_kind();
	t->waits[kind]++;
	count_dev_wait(&ff, mapping, kind);
	time_wait(t, folio, ff.dev, kind);
	if (kind == SPT_KIND_OTHER)
		return 0;
	ps = proc_stats_of_current();
	if (ps)
		__sync_fetch_and_add(&ps->waits[kind], 1);
	return 0;
}

/* fentry mode: a hooked page_mkwrite handler returns (@ok: successfully). */
static __always_inline int handle_mkwrite_return(struct vm_fault *vmf, bool ok)
{
	__u32 tid = bpf_get_current_pid_tgid();
	struct mkwrite_call *call = bpf_map_lookup_elem(&mkwrite_calls, &tid);
	struct address_space *mapping;
	struct spt_totals *t;
	struct folio_file ff;
	__u64 folio;
	bool dirtied;

	if (!call)
		return 0;
	if (call->epoch != pause_epoch) {
		/* Entered before a pause: nothing inside it was seen. */
		bpf_map_delete_elem(&mkwrite_calls, &tid);
		return 0;
	}
	if (call->depth > 1) {
		call->depth--;
		return 0;
	}
	dirtied = call->dirtied;
	bpf_map_delete_elem(&mkwrite_calls, &tid);
	if (!ok)
		return 0;
	folio = page_folio_addr((__u64)BPF_CORE_READ(vmf, page));
	if (!folio_ptr_under_writeback(folio)) {
		/* Dirtied under writeback, but the I/O ended before the
		 * store could land: the tracepoint mode counts it. */
		if (dirtied && (t = get_totals()))
			t->mkwrite_io_ended++;
		return 0;
	}
	/* Once per folio per writeback cycle, as in tracepoint mode. */
	if (violated_this_cycle(folio))
		return 0;
	/* The shared file mapping being written, as a BTF pointer; the
	 * handler returned success, so the folio is still in it. */
	mapping = vmf->vma->vm_file->f_mapping;
	if (!mapping || !folio_file_selected(mapping, &ff))
		return 0;
	t = get_totals();
	if (t && !hold_mmap_writer(t, folio))
		record_violation(t, folio, mapping, &ff, SPT_KIND_MMAP, folio_ptr_is_large(folio));
	return 0;
}

/* fentry mode: the folio's I/O begins (also a redirtied folio's next cycle). */
static __always_inline int handle_writeback_start(struct folio *folio)
{
	__u64 key = (__u64)folio;
	struct address_space *mapping = folio_file_mapping(folio);
	struct writeback_start ws = {};
	struct folio_file ff;
	struct spt_totals *t;

	if (!mapping || !folio_file_on_selected_dev(mapping, &ff))
		return 0;
	ws.dev = ff.dev;
	ws.ts_ns = bpf_ktime_get_ns();
	ws.epoch = pause_epoch;
	if (bpf_map_update_elem(&writeback_started, &key, &ws, BPF_ANY) && (t = get_totals()))
		t->writeback_untimed++;
	if (index_writeback) {
		struct wb_head_key hk = { .mapping = (__u64)mapping, .index = folio->index };
		struct wb_head h = { .folio = key, .nr_pages = folio_nr_pages_of(folio) };

		bpf_map_update_elem(&wb_heads, &hk, &h, BPF_ANY);
	}
	return 0;
}

/*
 * A block request completed, its next @nr_bytes at least, with status
 * @error (0: success). blk_update_request() fires the tracepoint before it
 * ends any bio, so the request's bios are intact, and the folios'
 * writeback ends right after. fentry mode walks only failed requests, to
 * mark their violations (folio_end_writeback() has no status).
 */
static __always_inline int handle_rq_complete(struct request *rq, __u32 error, __u32 nr_bytes)
{
	__u64 now = 0;

	if (!rq_is_write(rq))
		return 0;
	if (time_requests) {
		struct block_device *part = rq->part;
		__u32 dev = part ? part->bd_dev : 0;
		__u64 start = rq->start_time_ns;

		now = bpf_ktime_get_ns();
		if (dev && start && now > start && dev_selected(dev))
			hist_add(dev, SPT_HIST_WRITEBACK, 0, now - start);
	}
	if (walk_requests && (n_inflight_violations || n_held_folios))
		walk_request(rq, &now, nr_bytes, error, false);
	else if (!walk_requests && error && n_inflight_violations)
		walk_request(rq, &now, nr_bytes, true, true);
	return 0;
}

/* SPT_TRACEPOINTS, and SPT_HOLD_POINTS' tracepoint */

SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(tp_writeback_dirty_folio, struct folio *folio, struct address_space *mapping)
{
	return handle_folio_dirtied(folio, mapping);
}

SEC("tp_btf/folio_wait_writeback")
int BPF_PROG(tp_folio_wait_writeback, struct folio *folio, struct address_space *mapping)
{
	return handle_writeback_wait(folio, mapping);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(tp_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	/*
	 * fentry mode times waits at the wait functions; this program then
	 * runs only for the holds' sweep. No n_waiting gate: every wait's
	 * start and end writes it from either CPU, so reading it here would
	 * miss the cache on most switches while waits are common; for tasks
	 * that never waited the two lookups find no storage (wait_of()).
	 */
	if (!time_wait_calls)
		handle_switch(preempt, prev, next);
	if (n_held_folios)
		sweep_held_folios();
	return 0;
}

SEC("tp_btf/signal_generate")
int BPF_PROG(tp_signal_generate, int sig, struct kernel_siginfo *info, struct task_struct *task)
{
	return announce_hold(sig, task);
}

/*
 * SPT_VERIFY_POINTS (--verify only). The completion program comes before
 * tp_block_rq_complete: attached first, it runs first on the tracepoint and
 * finds the violations that program then ends (verify_file_kind()).
 */
SEC("tp_btf/block_rq_complete")
int BPF_PROG(tp_verify_rq_complete, struct request *rq, int error, unsigned int nr_bytes)
{
	return handle_verify_complete(rq, nr_bytes);
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(tp_verify_rq_issue, struct request *rq)
{
	return handle_verify_issue(rq);
}

SEC("tp_btf/block_bio_queue")
int BPF_PROG(tp_verify_bio_queue, struct bio *bio)
{
	return handle_verify_bio_queue(bio);
}

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(tp_verify_rq_requeue, struct request *rq)
{
	return handle_verify_requeue(rq);
}

/* The status is read as a number, an int errno or a blk_status_t by kernel
 * version (rq_complete_error()). */
SEC("tp_btf/block_rq_complete")
int BPF_PROG(tp_block_rq_complete, struct request *rq, __u64 error, __u64 nr_bytes)
{
	return handle_rq_complete(rq, rq_complete_error(error), nr_bytes);
}

/*
 * SPT_FENTRY_FIXED_POINTS. Each fentry/fexit program is loaded only where
 * trampolines work and its function is in the kernel's BTF; the loader
 * disables the others. While paused they return at once (tracing_paused).
 *
 * The end of a folio's writeback itself, the moment a stable writer would
 * be woken, also where the filesystem ends it after the I/O (ext4
 * unwritten extents, xfs size updates: a workqueue). PG_writeback is still
 * set here.
 */
SEC("fentry/folio_end_writeback")
int BPF_PROG(fentry_folio_end_writeback, struct folio *folio)
{
	__u64 key = (__u64)folio, now;
	struct writeback_start *ws;

	if (tracing_paused)
		return 0;
	now = bpf_ktime_get_ns();
	ws = bpf_map_lookup_elem(&writeback_started, &key);
	if (ws) {
		struct writeback_start done = *ws;
		struct spt_totals *t;

		if (!bpf_map_delete_elem(&writeback_started, &key)) {
			if (done.epoch == pause_epoch && now > done.ts_ns)
				hist_add(done.dev, SPT_HIST_FOLIO_WRITEBACK, 0, now - done.ts_ns);
			else if (done.epoch != pause_epoch && (t = get_totals()))
				/* Started before a pause: a later start may have passed unseen. */
				t->writeback_untimed++;
		}
	}
	if (index_writeback) {
		struct wb_head_key hk = { .mapping = (__u64)folio->mapping, .index = folio->index };

		bpf_map_delete_elem(&wb_heads, &hk);
	}
	if (n_inflight_violations)
		end_violation(btf_ptr_addr(folio), &now, false, NULL);
	release_holders(key, &now);
	return 0;
}

/* Its return type changed in 6.8 (core_fixes.bpf.h): only the folio is read. */
SEC("fentry/__folio_start_writeback")
int BPF_PROG(fentry_folio_start_writeback, struct folio *folio)
{
	return tracing_paused ? 0 : handle_writeback_start(folio);
}

/*
 * Not folio_wait_stable(), which calls folio_wait_writeback() when it
 * waits: every buffered write() calls it, and attaching or detaching an
 * fexit trampoline there while writers ran hung the 6.1 test guest
 * (docs/semantics.md); it would also cost every write two program runs to
 * time no more waits.
 */
SEC("fentry/folio_wait_writeback")
int BPF_PROG(fentry_folio_wait_writeback, struct folio *folio)
{
	return tracing_paused ? 0 : handle_wait_call(folio);
}

SEC("fexit/folio_wait_writeback")
int BPF_PROG(fexit_folio_wait_writeback, struct folio *folio)
{
	return tracing_paused ? 0 : handle_wait_return(folio);
}

/* SPT_HOLD_POINTS: write() held before its copy. The loader loads one of
 * the two, or neither where neither loads (the 6.18 host here). */
SEC("lsm/file_permission")
int BPF_PROG(lsm_file_permission, struct file *file, int mask, int ret)
{
	return ret ? ret : hold_write(file, mask);
}

SEC("fmod_ret/security_file_permission")
int BPF_PROG(fmod_file_permission, struct file *file, int mask, int ret)
{
	return ret ? ret : hold_write(file, mask);
}

/*
 * SPT_MKWRITE_FUNCS: page_mkwrite handlers and the helpers filesystems
 * build them from. The return value comes from bpf_get_func_ret(), as the
 * argument count differs between kernels (core_fixes.bpf.h). vmf_arg:
 * which argument is the struct vm_fault *; errno_ret: returns 0 / -errno
 * instead of vm_fault_t (mkwrite_ret_ok()).
 */
#define MKWRITE_HOOKS(fn, vmf_arg, errno_ret)                                 \
	SEC("fentry/" #fn)                                                    \
	int fentry_##fn(void *ctx)                                            \
	{                                                                     \
		return tracing_paused ? 0 : handle_mkwrite_entry();           \
	}                                                                     \
	SEC("fexit/" #fn)                                                     \
	int fexit_##fn(__u64 *ctx)                                            \
	{                                                                     \
		__u64 ret = 0;                                                \
                                                                              \
		if (tracing_paused)                                           \
			return 0;                                             \
		bpf_get_func_ret(ctx, &ret);                                  \
		return handle_mkwrite_return((struct vm_fault *)ctx[vmf_arg], \
					     mkwrite_ret_ok(ret, errno_ret)); \
	}

SPT_MKWRITE_FUNCS(MKWRITE_HOOKS)

char LICENSE[] SEC("license") = "GPL";
