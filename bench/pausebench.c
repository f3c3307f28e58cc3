// SPDX-License-Identifier: GPL-2.0
/*
 * pausebench: what tracing costs a running workload, from alternating
 * windows of one run. It starts the tracer, pauses it (SIGUSR1: every
 * program detached) and lets it go on (SIGUSR2), each time waiting for its
 * acknowledgement on stderr, and counts the operations the workload (wac -c
 * FILE) does in a window of each state. Odd pairs measure the traced window
 * first, even pairs the untraced one, so that a steady drift cancels.
 *
 * Windows of a fraction of a second, side by side, cancel what moves slowly
 * on a shared machine; what is left is the workload's own burstiness, and
 * many short pairs resolve a small difference sooner than a few long runs
 * (docs/performance.md).
 *
 * Prints one line per pair: "traced_ops_per_s untraced_ops_per_s ack_ms",
 * ack_ms the longer of the two signal-to-acknowledgement times. -D (a
 * control) runs no tracer and sends no signal: both windows are untraced,
 * and their ratio says what the alternation itself does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * How long the tracer may take to start (load, verify, attach) and to
 * acknowledge a pause or going on. Starting is the slow one: under QEMU TCG,
 * with four writers on two vCPUs, the 6.1 guest once took over 10 s.
 */
#define START_TIMEOUT_MS 60000
#define ACK_TIMEOUT_MS 10000

static struct {
	const char *counters, *out;
	int pairs, window_ms, settle_ms, warmup_ms;
	bool dry;
} opt = { .pairs = 100, .window_ms = 200, .settle_ms = 30, .warmup_ms = 1000 };

static pid_t tracer = -1;
static int tracer_err = -1;
/* The tracer's last lines on stderr that were no acknowledgement: shown if
 * something fails. */
static char said[4][256];
static unsigned nsaid;

static void __attribute__((noreturn)) usage(int code)
{
	fprintf(code ? stderr : stdout,
		"usage: pausebench -c COUNTERS [-n PAIRS] [-w MS] [-s MS] [-W MS] [-o OUT]\n"
		"                  -- TRACER ARGS...\n"
		"       pausebench -D -c COUNTERS [-n PAIRS] [-w MS] [-s MS] [-W MS]\n"
		"  -c  the workload's counters (wac -c FILE)\n"
		"  -n  pairs of windows (default 100)   -w  window (default 200 ms)\n"
		"  -s  settling time after each acknowledgement, not counted (default 30 ms)\n"
		"  -W  warm-up after the tracer attached (default 1000 ms)\n"
		"  -o  the tracer's stdout (default /dev/null)\n"
		"  -D  control: no tracer, no signal\n");
	exit(code);
}

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	va_list ap;

	fputs("pausebench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	for (unsigned i = nsaid > 4 ? nsaid - 4 : 0; i < nsaid; i++)
		fprintf(stderr, "  the tracer said: %s\n", said[i % 4]);
	if (tracer > 0)
		kill(tracer, SIGKILL);
	exit(1);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

/* Reads the tracer's stderr until a line starts with @prefix. */
static void wait_line(const char *prefix, int timeout_ms)
{
	static char buf[8192];
	static size_t len;
	double deadline = now_s() + timeout_ms / 1000.0;

	for (;;) {
		char *nl;

		while ((nl = memchr(buf, '\n', len))) {
			size_t n = nl - buf + 1;
			bool match = !strncmp(buf, prefix, strlen(prefix));

			if (!match)
				snprintf(said[nsaid++ % 4], sizeof(said[0]), "%.*s", (int)n - 1,
					 buf);
			memmove(buf, buf + n, len - n);
			len -= n;
			if (match)
				return;
		}
		struct pollfd p = { .fd = tracer_err, .events = POLLIN };
		int left = (int)((deadline - now_s()) * 1000);
		ssize_t got;

		if (left <= 0 || poll(&p, 1, left) <= 0)
			die("no '%s' from the tracer within %d ms", prefix, timeout_ms);
		if (len == sizeof(buf))
			len = 0; /* a line longer than the buffer: not ours */
		got = read(tracer_err, buf + len, sizeof(buf) - len);
		if (got <= 0)
			die("the tracer exited before '%s'", prefix);
		len += got;
	}
}

static void start_tracer(char **argv)
{
	int fds[2];

	if (pipe(fds))
		die("pipe: %s", strerror(errno));
	tracer = fork();
	if (tracer < 0)
		die("fork: %s", strerror(errno));
	if (!tracer) {
		int out = open(opt.out ? opt.out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (out < 0 || dup2(out, 1) < 0 || dup2(fds[1], 2) < 0)
			_exit(127);
		close(fds[0]);
		execvp(argv[0], argv);
		fprintf(stderr, "pausebench: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	tracer_err = fds[0];
	wait_line("Tracing ", START_TIMEOUT_MS);
}

/* Traced or not, as asked; returns how long the acknowledgement took (ms). */
static double set_traced(bool traced)
{
	static bool is_traced = true; /* once attached */
	double t0 = now_s();

	if (opt.dry || traced == is_traced)
		return 0;
	kill(tracer, traced ? SIGUSR2 : SIGUSR1);
	wait_line(traced ? "Tracing goes on" : "Tracing paused", ACK_TIMEOUT_MS);
	is_traced = traced;
	return (now_s() - t0) * 1000;
}

static uint64_t ops_done(const volatile uint64_t *c)
{
	/* struct wac_counters (workload/counters.h): write, mmap, sync ops, errors */
	return __atomic_load_n(&c[0], __ATOMIC_RELAXED) + __atomic_load_n(&c[1], __ATOMIC_RELAXED);
}

/* Ops per second in one window, after the state settled. */
static double window_rate(const volatile uint64_t *c)
{
	uint64_t o0, o1;
	double t0, t1;

	sleep_ms(opt.settle_ms);
	t0 = now_s();
	o0 = ops_done(c);
	sleep_ms(opt.window_ms);
	o1 = ops_done(c);
	t1 = now_s();
	return (o1 - o0) / (t1 - t0);
}

/* Fills opt; usage() (exit 2) on anything invalid. The tracer's command is
 * what follows the options, and -D (no tracer) takes none. */
static void parse_options(int argc, char **argv)
{
	int ch;

	while ((ch = getopt(argc, argv, "c:n:w:s:W:o:Dh")) != -1) {
		switch (ch) {
		case 'c':
			opt.counters = optarg;
			break;
		case 'n':
			opt.pairs = atoi(optarg);
			break;
		case 'w':
			opt.window_ms = atoi(optarg);
			break;
		case 's':
			opt.settle_ms = atoi(optarg);
			break;
		case 'W':
			opt.warmup_ms = atoi(optarg);
			break;
		case 'o':
			opt.out = optarg;
			break;
		case 'D':
			opt.dry = true;
			break;
		case 'h':
			usage(0);
		default:
			usage(2);
		}
	}
	if (!opt.counters || opt.pairs < 1 || opt.window_ms < 1 || opt.settle_ms < 0 ||
	    opt.warmup_ms < 0 || opt.dry != (optind == argc))
		usage(2);
}

/* The workload's struct wac_counters (workload/counters.h), read-only: it
 * keeps writing them. */
static const volatile uint64_t *map_counters(const char *path)
{
	const volatile uint64_t *c;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		die("%s: %s", path, strerror(errno));
	c = mmap(NULL, 4 * sizeof(uint64_t), PROT_READ, MAP_SHARED, fd, 0);
	if (c == MAP_FAILED)
		die("mmap %s: %s", path, strerror(errno));
	return c;
}

/* opt.pairs lines "traced untraced ack_ms". Pair i measures the traced
 * window first when i is even, the untraced one first when it is odd. */
static void run_pairs(const volatile uint64_t *c)
{
	for (int i = 0; i < opt.pairs; i++) {
		double rate[2], ack = 0;

		for (int k = 0; k < 2; k++) {
			bool traced = (i % 2 == 0) == (k == 0);
			double ms = set_traced(traced);

			if (ms > ack)
				ack = ms;
			rate[traced] = window_rate(c);
		}
		printf("%.0f %.0f %.1f\n", rate[1], rate[0], ack);
		fflush(stdout);
	}
}

/* Traced again, then SIGINT: the tracer must report and exit 0. */
static void stop_tracer(void)
{
	int status;

	set_traced(true);
	kill(tracer, SIGINT);
	if (waitpid(tracer, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		die("the tracer did not exit cleanly (status %#x)", status);
}

int main(int argc, char **argv)
{
	const volatile uint64_t *c;

	parse_options(argc, argv);
	c = map_counters(opt.counters);
	if (!opt.dry)
		start_tracer(argv + optind);
	sleep_ms(opt.warmup_ms);
	run_pairs(c);
	if (!opt.dry)
		stop_tracer();
	return 0;
}
