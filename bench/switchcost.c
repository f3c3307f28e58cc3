// SPDX-License-Identifier: GPL-2.0
/*
 * switchcost: what one context switch costs, for bench/bench-switch.sh.
 * Two processes pinned to one CPU bounce a byte over two pipes: each round
 * trip is two voluntary switches (and four pipe syscalls). Prints the mean
 * nanoseconds per switch.
 *
 * USAGE: switchcost [ROUND_TRIPS (default 100000)] [CPU (default 1)]
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("switchcost: sched_setaffinity");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	long trips = argc > 1 ? atol(argv[1]) : 100000;
	int cpu = argc > 2 ? atoi(argv[2]) : 1;
	int to_child[2], to_parent[2], status;
	struct timespec t0, t1;
	char byte = 0;
	pid_t child;

	if (trips <= 0 || pipe(to_child) || pipe(to_parent)) {
		fprintf(stderr, "switchcost: usage: switchcost [ROUND_TRIPS] [CPU]\n");
		return 2;
	}
	/* Both ends on one CPU: every hand-over is a context switch there. */
	pin_to(cpu);
	child = fork();
	if (child < 0) {
		perror("switchcost: fork");
		return 1;
	}
	if (child == 0) {
		for (long i = 0; i < trips; i++)
			if (read(to_child[0], &byte, 1) != 1 || write(to_parent[1], &byte, 1) != 1)
				_exit(1);
		_exit(0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < trips; i++)
		if (write(to_child[1], &byte, 1) != 1 || read(to_parent[0], &byte, 1) != 1) {
			fprintf(stderr, "switchcost: the pipe broke\n");
			return 1;
		}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "switchcost: the child failed\n");
		return 1;
	}
	printf("%.1f\n",
	       ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (2.0 * trips));
	return 0;
}
