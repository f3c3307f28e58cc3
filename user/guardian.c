// SPDX-License-Identifier: GPL-2.0
/*
 * enforce (BPF): the guardian. A child process in its own session, named
 * spt-guardian (so that a kill by the tool's name spares it), exempt from
 * the OOM killer, that keeps only the holds map, a pipe from the tool and
 * a pidfd of the tool. It resumes (SIGCONT) every thread group in the map:
 * - while the tool lives, any hold older than --max-delay + 0.5 s (the tool
 *   may be stopped itself, or stuck);
 * - once the tool is dying (the pipe ends without its "done" byte, or its
 *   pidfd says it exited), every GUARDIAN_DYING_SWEEP_MS, for as long as
 *   the tool's programs may still start a hold: until the tool has exited
 *   (its files, hence its links, are released before exit_notify() makes
 *   the pidfd readable), its program ids no longer resolve, no hold in the
 *   map is younger than GUARDIAN_SETTLE_NS, and the tool's heartbeat is
 *   stale for sure (SPT_HEARTBEAT_STALE_NS after the death was seen: BPF
 *   starts no hold after that, attached or not). Then one more sweep.
 * Nothing here is timed against the kernel's detach: the loop ends on what
 * the kernel says, however long that takes under load.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include "guardian.h"
#include "hold.h"
#include "hold_record.h"
#include "privs.h"
#include "stablepage.h"

#define GUARDIAN_SWEEP_MS 50
#define GUARDIAN_DYING_SWEEP_MS 10
#define GUARDIAN_SETTLE_NS 200000000ULL
#define GUARDIAN_SLACK_NS 500000000ULL

struct guardian_state {
	int holds_fd, pipe_fd, tool_pidfd;
	pid_t tool_pid;
	const __u32 *prog_ids;
	int nprogs;
	__u64 max_delay_ns;
	__u64 newest_hold_ns; /* of the last sweep */
	unsigned long failures;
};

/*
 * SIGCONT the holders whose hold began before `before` (all: ~0). A
 * failure other than ESRCH (the group is gone) is said once per sweep: a
 * writer this cannot resume stays stopped, and the user must know.
 */
static void sweep(struct guardian_state *g, __u64 before)
{
	__u32 key, next, *prev = NULL;
	struct spt_hold h;
	int failed = 0, err = 0;
	__u32 failed_pid = 0;

	g->newest_hold_ns = 0;
	while (!bpf_map_get_next_key(g->holds_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(g->holds_fd, &key, &h))
			continue;
		if (h.hold_ts_ns > g->newest_hold_ns)
			g->newest_hold_ns = h.hold_ts_ns;
		if (h.first_ts_ns >= before || !kill(h.pid, SIGCONT) || errno == ESRCH)
			continue;
		failed++;
		err = errno;
		failed_pid = h.pid;
	}
	if (failed) {
		g->failures += failed;
		fprintf(stderr, "stablepage-trace: guardian: cannot resume pid %u: %s (%d failed)\n",
			failed_pid, strerror(err), failed);
	}
}

static bool pollin(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return fd >= 0 && poll(&p, 1, 0) > 0;
}

/* No program of the tool can be found any more. Without CAP_SYS_ADMIN
 * (EPERM) the ids cannot be looked up: the tool's exit says it then. */
static bool programs_gone(const struct guardian_state *g)
{
	for (int i = 0; i < g->nprogs; i++) {
		int fd = bpf_prog_get_fd_by_id(g->prog_ids[i]);

		if (fd >= 0) {
			close(fd);
			return false;
		}
		if (errno != ENOENT && errno != EPERM)
			return false;
	}
	return true;
}

/* The tool died (or is dying): see the top of the file. */
static void __attribute__((noreturn)) after_tool(struct guardian_state *g)
{
	__u64 seen = monotonic_ns();

	for (;;) {
		bool exited = g->tool_pidfd < 0 || pollin(g->tool_pidfd);
		__u64 now;

		sweep(g, ~0ULL);
		/* Every group it recorded, too: the tool drops a hold's entry
		 * just before its SIGCONT, and may have died in between. */
		g->failures += hold_record_resume(g->tool_pid);
		now = monotonic_ns();
		if (exited && now > seen + SPT_HEARTBEAT_STALE_NS + GUARDIAN_SETTLE_NS &&
		    now > g->newest_hold_ns + GUARDIAN_SETTLE_NS && programs_gone(g))
			break;
		usleep(GUARDIAN_DYING_SWEEP_MS * 1000);
	}
	usleep(GUARDIAN_DYING_SWEEP_MS * 1000);
	sweep(g, ~0ULL);
	g->failures += hold_record_resume(g->tool_pid);
	/* Everyone it recorded is resumed: enforce --restore has nothing to do. */
	if (!g->failures)
		hold_record_remove(g->tool_pid);
	_exit(g->failures ? 1 : 0);
}

/*
 * The tool detached its programs, resumed whom it knew of and waits for
 * us. A program that was running as they were detached may still start a
 * hold, and from an IRQs-off tracepoint its SIGSTOP comes after its entry
 * (irq_work), unannounced (signal_generate is detached): sweep until no
 * hold in the table is younger than GUARDIAN_SETTLE_NS, then once more.
 */
static void __attribute__((noreturn)) settle(struct guardian_state *g)
{
	__u64 start = monotonic_ns(), now;

	do {
		sweep(g, ~0ULL);
		usleep(GUARDIAN_DYING_SWEEP_MS * 1000);
		now = monotonic_ns();
	} while (now < start + GUARDIAN_SETTLE_NS || now < g->newest_hold_ns + GUARDIAN_SETTLE_NS);
	sweep(g, ~0ULL);
	_exit(g->failures ? 1 : 0);
}

static void __attribute__((noreturn)) guardian_main(struct guardian_state *g)
{
	struct pollfd p[2] = { { .fd = g->pipe_fd, .events = POLLIN },
			       { .fd = g->tool_pidfd, .events = POLLIN } };
	char byte;

	for (;;) {
		int n = poll(p, g->tool_pidfd >= 0 ? 2 : 1, GUARDIAN_SWEEP_MS);

		if (n < 0 && errno != EINTR)
			break;
		if (n > 0 && p[1].revents)
			break;
		if (n > 0 && p[0].revents) {
			ssize_t r = read(g->pipe_fd, &byte, 1);

			if (r == 1 && byte == 'd')
				settle(g);
			if (r == 0 || (r < 0 && errno != EINTR))
				break;
		}
		__u64 now = monotonic_ns();

		if (now > g->max_delay_ns + GUARDIAN_SLACK_NS)
			sweep(g, now - g->max_delay_ns - GUARDIAN_SLACK_NS);
	}
	after_tool(g);
}

/* Its own name, out of the OOM killer's reach, deaf to the signals that
 * end the tool: what takes the tool down must not take the guardian. */
static void become_guardian(void)
{
	int fd;

	setsid();
	prctl(PR_SET_NAME, "spt-guardian");
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "-1000", 5) != 5) {
			/* Not fatal: it only loses the OOM exemption. */
		}
		close(fd);
	}
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGUSR1, SIG_IGN);
	signal(SIGUSR2, SIG_IGN);
}

/*
 * Least privilege: CAP_KILL, to resume other users' writers, and nothing
 * else, unless the kernel refuses bpf() on the holds map without CAP_BPF
 * (kernel.unprivileged_bpf_disabled was checked on every bpf() command
 * before 6.5, so on the 6.1 guest): then CAP_BPF too, which the map read
 * is tried without first. Program ids cannot be looked up without
 * CAP_SYS_ADMIN: programs_gone() relies on the tool's exit then.
 */
static void drop_privileges(struct guardian_state *g)
{
	const __u64 kill_bit = PRIVS_BIT(CAP_KILL_NR), bpf_bit = PRIVS_BIT(CAP_BPF_NR);
	__u64 keep = kill_bit;
	__u32 key;
	/* CAP_SETPCAP until the end: the last drop from the bounding set needs it. */
	int err = privs_keep_only(kill_bit | bpf_bit | PRIVS_BIT(CAP_SETPCAP_NR));

	if (!err)
		err = privs_set_effective(kill_bit);
	if (!err && bpf_map_get_next_key(g->holds_fd, NULL, &key) && errno == EPERM)
		keep |= bpf_bit;
	if (!err)
		err = privs_keep_only(keep);
	if (err)
		fprintf(stderr, "stablepage-trace: guardian: cannot drop its capabilities: %s\n",
			strerror(-err));
}

int guardian_start(struct guardian *g, int holds_fd, __u64 max_delay_ns, const __u32 *prog_ids,
		   int nprogs)
{
	static struct guardian_state gs;
	pid_t tool = getpid();
	int fds[2];

	if (pipe(fds))
		return -errno;
	g->pid = fork();
	if (g->pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (!g->pid) {
		/* Keep the map and the pipe: no program, link or ring of the
		 * tool may stay open here, or it would outlive the tool. */
		for (int fd = 3; fd < 4096; fd++)
			if (fd != holds_fd && fd != fds[0])
				close(fd);
		gs = (struct guardian_state){ .holds_fd = holds_fd, .pipe_fd = fds[0],
					      .tool_pid = tool, .prog_ids = prog_ids,
					      .nprogs = nprogs, .max_delay_ns = max_delay_ns };
		/* Opened before checking the parent: then it is the tool's. */
		gs.tool_pidfd = syscall(SYS_pidfd_open, tool, 0);
		become_guardian();
		drop_privileges(&gs);
		if (getppid() != tool)
			after_tool(&gs);
		guardian_main(&gs);
	}
	close(fds[0]);
	g->pipe_fd = fds[1];
	g->pidfd = syscall(SYS_pidfd_open, g->pid, 0);
	return 0;
}

bool guardian_died(const struct guardian *g)
{
	return g->pid > 0 && g->pidfd >= 0 && pollin(g->pidfd);
}

void guardian_stop(struct guardian *g)
{
	if (g->pid <= 0)
		return;
	if (write(g->pipe_fd, "d", 1) != 1) {
		/* The guardian falls back to its last sweeps on EOF. */
	}
	close(g->pipe_fd);
	waitpid(g->pid, NULL, 0);
	if (g->pidfd >= 0)
		close(g->pidfd);
	g->pid = 0;
}
