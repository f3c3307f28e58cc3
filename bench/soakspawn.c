// SPDX-License-Identifier: GPL-2.0
/*
 * soakspawn: the soak benchmark's workload (bench/soak.sh). Long-lived
 * writer processes and a stream of short-lived ones, all rewriting pages
 * they have just sent to writeback, so that the tracer keeps meeting
 * violations from processes it has never seen.
 *
 *   -w WRITERS  processes ("soak-writer"), each on its own file DIR/writer.N,
 *               a round every -p PERIOD_MS until the end (default 64, 20 ms)
 *   -n SPAWNS   processes ("soak-child") forked at an even pace over the
 *               run, each doing -r ROUNDS rounds on one of -f FILES files
 *               DIR/child.N and exiting (default 50000, 3 rounds, 256 files)
 *   -d SECS     how long (default 600)
 *
 * A round: pwrite() four pages, sync_file_range(SYNC_FILE_RANGE_WRITE) to
 * start their writeback, pwrite() them again (the violation, if the I/O is
 * still in flight), then the next four pages of the 64 KiB file. Writers
 * are paced: the point is many processes over a long time, not load.
 *
 * Prints "t=S spawned=N writer_rounds=N" every 10 s and at the end one
 * line of key=value totals; exits 1 if a process failed or a call did.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define CHUNK (4 * PAGE)
#define FILE_SIZE (16 * PAGE)
#define PROGRESS_S 10
#define MAX_WRITERS 4096

static struct {
	long writers, spawns, period_ms, rounds, files;
	double duration;
	const char *dir;
} opt = { 64, 50000, 20, 3, 256, 600, NULL };

/* Shared with every process (MAP_SHARED): the totals of the last line. */
struct totals {
	unsigned long long writer_rounds, child_rounds, errors;
};
static struct totals *tot;
static pid_t writer_pids[MAX_WRITERS];
static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	if (s > 0)
		nanosleep(&ts, NULL);
}

/* One round on @fd at @off; 0, or -1 after counting the error. */
static int round_at(int fd, off_t off, const char *buf)
{
	if (pwrite(fd, buf, CHUNK, off) != CHUNK ||
	    sync_file_range(fd, off, CHUNK, SYNC_FILE_RANGE_WRITE) ||
	    pwrite(fd, buf, CHUNK, off) != CHUNK) {
		__atomic_fetch_add(&tot->errors, 1, __ATOMIC_RELAXED);
		return -1;
	}
	return 0;
}

static int open_file(const char *kind, long n)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s.%ld", opt.dir, kind, n);
	return open(path, O_RDWR | O_CREAT, 0644);
}

/* A long-lived writer: paced rounds until the end of the run. */
static void __attribute__((noreturn)) writer(long n, double end)
{
	char buf[CHUNK];
	off_t off = 0;
	int fd;

	prctl(PR_SET_NAME, "soak-writer", 0, 0, 0);
	memset(buf, 'w', sizeof(buf));
	fd = open_file("writer", n);
	if (fd < 0)
		_exit(1);
	while (!stop && now_s() < end) {
		if (round_at(fd, off, buf))
			_exit(1);
		__atomic_fetch_add(&tot->writer_rounds, 1, __ATOMIC_RELAXED);
		off = (off + CHUNK) % FILE_SIZE;
		sleep_s(opt.period_ms / 1e3);
	}
	_exit(0);
}

/* A short-lived writer: a few rounds, then gone. */
static void __attribute__((noreturn)) child(long n)
{
	char buf[CHUNK];
	int fd;

	prctl(PR_SET_NAME, "soak-child", 0, 0, 0);
	memset(buf, 'c', sizeof(buf));
	fd = open_file("child", n % opt.files);
	if (fd < 0)
		_exit(1);
	for (long r = 0; r < opt.rounds; r++) {
		if (round_at(fd, (off_t)(r * CHUNK) % FILE_SIZE, buf))
			_exit(1);
		__atomic_fetch_add(&tot->child_rounds, 1, __ATOMIC_RELAXED);
	}
	_exit(0);
}

/* Reaps what has exited (all with @block); returns how many failed. */
static long reap(int block)
{
	long failed = 0;
	int status;

	while (waitpid(-1, &status, block ? 0 : WNOHANG) > 0)
		failed += !WIFEXITED(status) || WEXITSTATUS(status);
	return failed;
}

static long parse_long(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "soakspawn: %s: not a number in [%ld, %ld]\n", s, min, max);
		exit(2);
	}
	return v;
}

static void parse_options(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "w:n:d:p:r:f:")) != -1) {
		switch (c) {
		case 'w':
			opt.writers = parse_long(optarg, 0, MAX_WRITERS);
			break;
		case 'n':
			opt.spawns = parse_long(optarg, 0, 100000000);
			break;
		case 'd':
			opt.duration = parse_long(optarg, 1, 86400);
			break;
		case 'p':
			opt.period_ms = parse_long(optarg, 0, 60000);
			break;
		case 'r':
			opt.rounds = parse_long(optarg, 1, 1000);
			break;
		case 'f':
			opt.files = parse_long(optarg, 1, 100000);
			break;
		default:
			fprintf(stderr, "usage: soakspawn [-w WRITERS] [-n SPAWNS] [-d SECS] "
					"[-p PERIOD_MS] [-r ROUNDS] [-f FILES] DIR\n");
			exit(2);
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "soakspawn: one directory expected\n");
		exit(2);
	}
	opt.dir = argv[optind];
}

/* Forks the children at an even pace until @end; returns how many failed. */
static long spawn_all(double start, double end, long *spawned)
{
	double next_progress = start + PROGRESS_S;
	long failed = 0;

	for (long i = 0; i < opt.spawns && !stop; i++) {
		sleep_s(start + i * opt.duration / opt.spawns - now_s());
		pid_t pid = fork();

		if (pid == 0)
			child(i);
		if (pid < 0)
			__atomic_fetch_add(&tot->errors, 1, __ATOMIC_RELAXED);
		else
			(*spawned)++;
		failed += reap(0);
		if (now_s() >= next_progress) {
			printf("t=%.0f spawned=%ld writer_rounds=%llu\n", now_s() - start, *spawned,
			       __atomic_load_n(&tot->writer_rounds, __ATOMIC_RELAXED));
			fflush(stdout);
			next_progress += PROGRESS_S;
		}
	}
	while (!stop && now_s() < end) {
		sleep_s(0.1);
		failed += reap(0);
	}
	return failed;
}

int main(int argc, char **argv)
{
	long spawned = 0, failed;
	double start, end;

	parse_options(argc, argv);
	tot = mmap(NULL, sizeof(*tot), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (tot == MAP_FAILED) {
		fprintf(stderr, "soakspawn: mmap: %s\n", strerror(errno));
		return 1;
	}
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	start = now_s();
	end = start + opt.duration;
	for (long n = 0; n < opt.writers; n++) {
		pid_t pid = fork();

		if (pid == 0)
			writer(n, end);
		if (pid < 0) {
			fprintf(stderr, "soakspawn: fork: %s\n", strerror(errno));
			stop = 1;
			break;
		}
		writer_pids[n] = pid;
	}
	failed = spawn_all(start, end, &spawned);
	/* Stopped early (a signal, a failed fork): the writers too. */
	for (long n = 0; stop && n < opt.writers; n++)
		if (writer_pids[n] > 0)
			kill(writer_pids[n], SIGTERM);
	failed += reap(1);
	printf("soakspawn writers=%ld spawned=%ld failed=%ld writer_rounds=%llu child_rounds=%llu "
	       "errors=%llu seconds=%.1f\n",
	       opt.writers, spawned, failed, tot->writer_rounds, tot->child_rounds, tot->errors,
	       now_s() - start);
	return failed || tot->errors ? 1 : 0;
}
