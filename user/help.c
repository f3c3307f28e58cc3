// SPDX-License-Identifier: GPL-2.0
/*
 * The options' table (each option with the commands whose help lists it) and
 * each command's help: usage lines, the text around the options, examples.
 * options.c parses what this table lists.
 */
#define _GNU_SOURCE
#include <string.h>
#include "help.h"


/* Which commands an option belongs to: its help lists it there. */
enum {
	FOR_TRACE = 1 << CMD_TRACE,
	FOR_ENFORCE = 1 << CMD_ENFORCE,
	FOR_FEATURES = 1 << CMD_FEATURES,
	FOR_RESTORE = 1 << CMD_RESTORE,
	FOR_REPORT = 1 << CMD_REPORT,
	/* The tracing options apply to enforce too; its help points to them. */
	TRACING = FOR_TRACE,
	EVERY = FOR_TRACE | FOR_ENFORCE | FOR_FEATURES | FOR_RESTORE | FOR_REPORT,
};

/*
 * Every option once, with the commands whose help lists it (help_only: a
 * second description of an option parsed by its first entry). Parsing
 * accepts every option everywhere: options_check says where one belongs,
 * in a sentence rather than "unknown option". The theory behind them is
 * in the man page, stablepage-trace(8).
 */
static const struct spt_option {
	unsigned int cmds;
	bool help_only;
	struct argp_option o;
} all_opts[] = {
	{ TRACING, 0, { NULL, 0, NULL, 0, "What is traced:", 1 } },
	{ TRACING, 0, { "pid", 'p', "PID", 0, "Only this process (thread group); repeatable", 1 } },
	{ TRACING, 0, { "cgroup", 'c', "PATH", 0, "Only tasks in this cgroup v2 directory or below", 1 } },
	{ TRACING, 0, { "comm", OPT_COMM, "COMM", 0, "Only tasks whose comm is COMM", 1 } },
	{ TRACING, 0, { "dev", OPT_DEV, "DEV", 0,
			"Only filesystems on block device NAME, /dev/NAME or MAJ:MIN; repeatable", 1 } },
	{ TRACING, 0, { NULL, 0, NULL, 0, "How long, and what is printed:", 2 } },
	{ TRACING, 0, { "duration", 'd', "SECS", 0, "Stop after SECS (10, 10s, 2m, 500ms)", 2 } },
	{ TRACING, 0, { "interval", 'i', "SECS", 0,
			"A report every SECS too, like the positional INTERVAL", 2 } },
	{ TRACING, 0, { "delta", OPT_DELTA, NULL, 0,
			"Interval reports count what happened in the interval (default: since "
			"the start)", 2 } },
	{ TRACING, 0, { "timestamp", 'T', NULL, 0, "Print the wall-clock time with each "
			"interval report", 2 } },
	{ TRACING, 0, { "quiet", 'q', NULL, 0, "No line per violation: the reports only", 2 } },
	{ TRACING, 0, { "json", OPT_JSON, NULL, 0, "One JSON object per line: events, intervals, "
			"summary", 2 } },
	{ TRACING, 0, { "hist", OPT_HIST, NULL, 0, "Print the latency histograms too", 2 } },
	{ TRACING, 0, { "top", OPT_TOP, "N", 0, "Processes, files and cgroups listed (default 10)", 2 } },
	{ TRACING, 0, { "prom-file", OPT_PROM_FILE, "PATH", 0,
			"Write Prometheus metrics to PATH every interval (default 15 s) and at exit",
			2 } },
	{ TRACING, 0, { "prom-top-comm", OPT_PROM_TOP_COMM, "N", 0,
			"Label violations by comm for the N busiest comms (default 0)", 2 } },
	{ TRACING, 0, { "prom-top-cgroup", OPT_PROM_TOP_CGROUP, "N", 0,
			"Label violations by cgroup v2 path for the N busiest cgroups (default 0)",
			2 } },
	{ TRACING, 0, { "row-age", OPT_ROW_AGE, "SECS", 0,
			"Remove per-process and per-writer rows idle this long, their counts kept "
			"in the totals (default 10m with --prom-file, else never; 0: never)", 2 } },
	{ TRACING, 0, { "verify", OPT_VERIFY, "N", OPTION_ARG_OPTIONAL,
			"Hash 1 write request in N (default 16) at issue and at completion: "
			"pages changed in flight", 2 } },
	{ TRACING, 0, { NULL, 0, NULL, 0, "How it traces:", 3 } },
	{ TRACING, 0, { "attach-mode", OPT_ATTACH_MODE, "MODE", 0,
			"auto (default: fentry where it loads), tracepoint or fentry", 3 } },
	{ TRACING, 0, { "time-all-waits", OPT_TIME_ALL_WAITS, NULL, 0,
			"Time every writeback wait from the start (fsync too), not only writers'", 3 } },
	{ FOR_ENFORCE, 0, { NULL, 0, NULL, 0, "Stable pages for devices (--native):", 4 } },
	{ FOR_ENFORCE, 0, { "native", OPT_NATIVE, NULL, 0,
			    "Set queue/stable_writes to 1 on each --dev, restored at exit", 4 } },
	{ FOR_ENFORCE, 0, { "remount", OPT_REMOUNT, NULL, 0,
			    "Mount the filesystems on --dev again so that it takes effect", 4 } },
	{ FOR_ENFORCE, 0, { "persist", OPT_PERSIST, NULL, 0,
			    "Keep stable_writes at exit (restore undoes it)", 4 } },
	{ FOR_ENFORCE, 0, { "restore", OPT_RESTORE, NULL, 0,
			    "Undo what a killed or --persist run changed (as 'restore')", 4 } },
	{ FOR_ENFORCE, 0, { NULL, 0, NULL, 0, "Holding writers (--pid, --comm, --cgroup):", 5 } },
	{ FOR_ENFORCE, 0, { "action", OPT_ACTION, "ACTION", 0,
			    "delay (default: stop the writer until writeback ends), kill or log", 5 } },
	{ FOR_ENFORCE, 0, { "max-delay", OPT_MAX_DELAY, "SECS", 0,
			    "Longest hold of one write (default 1 s)", 5 } },
	{ FOR_FEATURES, 1, { "json", OPT_JSON, NULL, 0, "One JSON object: every fact of the text", 6 } },
	{ FOR_REPORT, 0, { "output", 'o', "FILE", 0, "Write the HTML page to FILE (default: stdout)",
			   6 } },
	{ EVERY & ~(FOR_RESTORE | FOR_REPORT), 0, { "btf", OPT_BTF, "FILE", 0,
				       "Kernel BTF to use instead of " SYSFS_BTF, 7 } },
	{ EVERY, 0, { "verbose", 'v', NULL, 0, "Print libbpf and loader diagnostics", 7 } },
	/* Our own: with ARGP_NO_ERRS (for one-line errors) argp's --help prints nothing and returns. */
	{ EVERY, 0, { "help", OPT_HELP, NULL, 0, "Give this help list", -1 } },
	{ EVERY, 0, { "usage", OPT_USAGE, NULL, 0, "Give a short usage message", -1 } },
	{ EVERY, 0, { "version", 'V', NULL, 0, "Print program version", -1 } },
	{ EVERY, 0, { NULL, 'h', NULL, OPTION_HIDDEN, "Show this help", 0 } },
	{ EVERY, 0, { NULL, '?', NULL, OPTION_HIDDEN, "Show this help", 0 } },
};

#define NOPTS (sizeof(all_opts) / sizeof(all_opts[0]))

/* Each command's help: its usage lines (argp's args_doc) and text before and
 * after the options ("\v" between). Example lines stay under 79 columns:
 * argp wraps what is longer. */
static const struct command_help {
	const char *name, *args, *doc;
} helps[CMD_MAX] = {
	[CMD_TRACE] = { "stablepage-trace",
		"[INTERVAL [COUNT]]\nenforce|features|restore [OPTION...]\nreport RUN.json [-o PAGE.html]",
		"Find writes to page-cache pages while the device writes them (under writeback), "
		"count them in the kernel, and report them by process, cgroup, file and device. "
		"INTERVAL: a report every INTERVAL seconds; COUNT: stop after COUNT of them.\n"
		"Commands: trace (the default), enforce, features, restore, report; COMMAND --help shows "
		"each one's options. What it all means: man stablepage-trace."
		"\v"
		"Examples:\n"
		"  stablepage-trace                # a line per violation; summary at Ctrl-C\n"
		"  stablepage-trace -q 5 10        # a report every 5 s, 10 of them\n"
		"  stablepage-trace -qT --delta 5  # per-interval counts, with the time\n"
		"  stablepage-trace -p 4242 --dev sdb -d 60 --hist\n"
		"  stablepage-trace -c /sys/fs/cgroup/system.slice/postgresql.service\n"
		"  stablepage-trace --json | jq .  # one JSON object per line, summary last\n"
		"  stablepage-trace -q --prom-file /var/lib/prometheus/node-exporter/spt.prom" },
	[CMD_ENFORCE] = { "stablepage-trace enforce",
		"--native --dev DEV... [--remount] [--persist]\n"
		"{--pid PID|--comm COMM|--cgroup PATH}... [--action ACTION] [--max-delay SECS]\n"
		"--restore",
		"Stable pages where the kernel does not impose them, while tracing: natively per "
		"device (--native), or by holding the writers in scope from BPF until their "
		"folio's writeback ends. It traces as stablepage-trace does: every option of "
		"stablepage-trace --help applies too."
		"\v"
		"Examples:\n"
		"  stablepage-trace enforce --native --dev sdb --remount -d 60\n"
		"  stablepage-trace enforce --comm postgres -d 60   # hold postgres' writers\n"
		"  stablepage-trace restore                         # undo a killed run" },
	[CMD_FEATURES] = { "stablepage-trace features", NULL,
		"What this kernel offers the tool, asked of the kernel: its BTF and tracepoints, "
		"the programs that load and attach, the active LSMs, the attach mode a run would "
		"use, the ways to enforce, and the block devices' stable_writes."
		"\v"
		"Examples:\n"
		"  stablepage-trace features\n"
		"  stablepage-trace features --json | jq .attach_mode" },
	[CMD_RESTORE] = { "stablepage-trace restore", NULL,
		"Undo what a killed or --persist enforce --native run changed: each device's "
		"queue/stable_writes goes back to its value before the run. The same as "
		"stablepage-trace enforce --restore." },
	[CMD_REPORT] = { "stablepage-trace report", "RUN.json [-o PAGE.html]",
		"A run's JSON output (--json) as one self-contained HTML page: histograms, "
		"violations over time, top processes, files, cgroups and devices. Without -o "
		"the page goes to standard output."
		"\v"
		"Examples:\n"
		"  stablepage-trace --json -i 1 -d 60 > run.json\n"
		"  stablepage-trace report run.json -o run.html" },
};

/* all_opts as argp reads it: for parsing (every option once), or for the
 * help of cmd. out holds NOPTS + 1 entries. */
static void select_opts(struct argp_option *out, bool for_help, enum spt_command cmd)
{
	size_t n = 0;

	for (size_t i = 0; i < NOPTS; i++) {
		const struct spt_option *so = &all_opts[i];

		if (for_help ? !(so->cmds & (1u << cmd)) : so->help_only || (!so->o.name && !so->o.key))
			continue;
		out[n++] = so->o;
	}
	memset(&out[n], 0, sizeof(out[n]));
}

void print_help(FILE *f, enum spt_command cmd, unsigned int flags)
{
	struct argp_option opts[NOPTS + 1];
	const struct command_help *h = &helps[cmd];
	struct argp argp = { .options = opts, .args_doc = h->args, .doc = h->doc };

	select_opts(opts, true, cmd);
	argp_help(&argp, f, flags, (char *)h->name);
}

const struct argp_option *options_for_parsing(void)
{
	static struct argp_option opts[NOPTS + 1];

	if (!opts[0].name)
		select_opts(opts, false, CMD_TRACE);
	return opts;
}

const char *command_name(enum spt_command cmd)
{
	return helps[cmd].name + strlen("stablepage-trace ");
}
