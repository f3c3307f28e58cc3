// SPDX-License-Identifier: GPL-2.0
/*
 * enforce (BPF): the guardian. A child process in its own session that
 * keeps only the holds map and a pipe from the tool. It resumes (SIGCONT)
 * every thread group in the map:
 * - when the pipe ends without the tool's "done" byte (the tool died, even
 *   by SIGKILL): sweeps for GUARDIAN_LAST_SWEEP_MS, since the tool's
 *   programs detach only as the kernel closes its files, and a stop sent
 *   from an IRQs-off tracepoint arrives a little later than the map entry;
 * - while the tool lives, any hold older than --max-delay + 0.5 s (the tool
 *   may be stopped itself, or stuck).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include "guardian.h"
#include "hold.h"
#include "stablepage.h"

#define GUARDIAN_SWEEP_MS 50
#define GUARDIAN_LAST_SWEEP_MS 2000
#define GUARDIAN_SLACK_NS 500000000ULL

/* SIGCONT the holders whose hold began before `before` (all: ~0). */
static void sweep(int holds_fd, __u64 before)
{
	__u32 key, next, *prev = NULL;
	struct spt_hold h;

	while (!bpf_map_get_next_key(holds_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(holds_fd, &key, &h) && h.first_ts_ns < before)
			kill(h.pid, SIGCONT);
	}
}

static void guardian_main(int holds_fd, int pipe_fd, __u64 max_delay_ns)
{
	struct pollfd p = { .fd = pipe_fd, .events = POLLIN };
	char byte;

	setsid();
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	for (;;) {
		int n = poll(&p, 1, GUARDIAN_SWEEP_MS);

		if (n < 0 && errno != EINTR)
			break;
		if (n > 0) {
			ssize_t r = read(pipe_fd, &byte, 1);

			if (r == 1 && byte == 'd') {
				sweep(holds_fd, ~0ULL);
				_exit(0);
			}
			if (r == 0 || (r < 0 && errno != EINTR))
				break;
		}
		__u64 now = monotonic_ns();

		if (now > max_delay_ns + GUARDIAN_SLACK_NS)
			sweep(holds_fd, now - max_delay_ns - GUARDIAN_SLACK_NS);
	}
	for (int waited = 0; waited <= GUARDIAN_LAST_SWEEP_MS; waited += GUARDIAN_SWEEP_MS) {
		sweep(holds_fd, ~0ULL);
		usleep(GUARDIAN_SWEEP_MS * 1000);
	}
	_exit(0);
}

int guardian_start(struct guardian *g, int holds_fd, __u64 max_delay_ns)
{
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
		guardian_main(holds_fd, fds[0], max_delay_ns);
	}
	close(fds[0]);
	g->pipe_fd = fds[1];
	return 0;
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
	g->pid = 0;
}
