// SPDX-License-Identifier: GPL-2.0
/* The command line: argp's options, the help text, and their validation. */
#define _GNU_SOURCE
#include <argp.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "msg.h"
#include "options.h"
#include "parse.h"
#include "resolve.h"

const char *argp_program_version = "stablepage-trace " SPT_VERSION;
const char *argp_program_bug_address = "https://github.com/stablepage-trace/stablepage-trace/issues";

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

enum {
	OPT_COMM = 0x100,
	OPT_DEV,
	OPT_JSON,
	OPT_TOP,
	OPT_BTF,
	OPT_USAGE,
	OPT_HIST,
	OPT_PROM_FILE,
	OPT_PROM_TOP_COMM,
	OPT_PROM_TOP_CGROUP,
	OPT_ROW_AGE,
	OPT_DELTA,
	OPT_NATIVE,
	OPT_REMOUNT,
	OPT_PERSIST,
	OPT_RESTORE,
	OPT_ATTACH_MODE,
	OPT_ACTION,
	OPT_MAX_DELAY,
	OPT_TIME_ALL_WAITS,
	OPT_VERIFY,
	OPT_HELP, /* --help; -? is key '?', checked by help_asked() */
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

/* The help of the command being parsed: usage, its options, examples. */
static void print_help(FILE *f, enum spt_command cmd, unsigned int flags)
{
	struct argp_option opts[NOPTS + 1];
	const struct command_help *h = &helps[cmd];
	struct argp argp = { .options = opts, .args_doc = h->args, .doc = h->doc };

	select_opts(opts, true, cmd);
	argp_help(&argp, f, flags, (char *)h->name);
}

void die_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	spt_vmsg(" (see --help)", fmt, ap);
	va_end(ap);
	exit(EXIT_USAGE);
}

/* Records why the command line is refused; the caller prints it. -1. */
static int fail(struct options *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct options *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(o->error, sizeof(o->error), fmt, ap);
	va_end(ap);
	return -1;
}

/* argp stops at a parser's first error: EINVAL after fail() said why. */
#define REFUSE(...) (fail(o, __VA_ARGS__), EINVAL)

static error_t parse_pid_arg(struct options *o, char *arg)
{
	char proc[32];

	if (o->npids == MAX_FILTER_PIDS)
		return REFUSE("at most %d --pid options", MAX_FILTER_PIDS);
	if (!parse_pid(arg, &o->pids[o->npids]))
		return REFUSE("invalid pid '%s': expected a positive number", arg);
	snprintf(proc, sizeof(proc), "/proc/%u", o->pids[o->npids]);
	if (access(proc, F_OK))
		return REFUSE("no such process: %s", arg);
	o->npids++;
	return 0;
}

static error_t parse_dev_arg(struct options *o, char *arg)
{
	if (o->ndevs == MAX_FILTER_DEVS)
		return REFUSE("at most %d --dev options", MAX_FILTER_DEVS);
	if (!resolve_dev_arg(arg, &o->devs[o->ndevs]))
		return REFUSE("unknown device '%s': give a block device name (loop0), its /dev path "
			      "or MAJ:MIN (see lsblk)", arg);
	o->ndevs++;
	return 0;
}

/* The modes' names: what the options accept and what reports print. */
static const char *const attach_mode_names[] = {
	[ATTACH_AUTO] = "auto",
	[ATTACH_TRACEPOINT] = "tracepoint",
	[ATTACH_FENTRY] = "fentry",
};

static const char *const action_names[] = {
	[SPT_ACTION_NONE] = "none", /* plain tracing: printed, never given */
	[SPT_ACTION_DELAY] = "delay",
	[SPT_ACTION_KILL] = "kill",
	[SPT_ACTION_LOG] = "log",
};

static const char *const write_hold_names[] = {
	[WRITE_HOLD_NONE] = "none",
	[WRITE_HOLD_LSM] = "lsm",
	[WRITE_HOLD_FMOD_RET] = "fmod_ret",
};

/* The index of arg among names[first..n-1], or -1. */
static int name_index(const char *const names[], int first, int n, const char *arg)
{
	for (int i = first; i < n; i++)
		if (!strcmp(arg, names[i]))
			return i;
	return -1;
}

#define NNAMES(names) ((int)(sizeof(names) / sizeof(names[0])))

/* The options that take a mode by name. */
static error_t parse_mode_arg(struct options *o, int key, char *arg)
{
	int i;

	if (key == OPT_ATTACH_MODE) {
		i = name_index(attach_mode_names, 0, NNAMES(attach_mode_names), arg);
		if (i < 0)
			return REFUSE("invalid --attach-mode '%s': auto, tracepoint or fentry", arg);
		o->attach_mode = i;
		return 0;
	}
	i = name_index(action_names, SPT_ACTION_DELAY, NNAMES(action_names), arg);
	if (i < 0)
		return REFUSE("invalid --action '%s': delay, kill or log", arg);
	o->action = i;
	o->action_given = true;
	return 0;
}

/* An interval report takes a map walk of every table: ten a second at most. */
#define SPT_MIN_INTERVAL 0.1

/* -i or INTERVAL: a duration of at least SPT_MIN_INTERVAL. */
static bool parse_interval(const char *arg, double *secs)
{
	return parse_duration(arg, secs) && *secs >= SPT_MIN_INTERVAL;
}

/* The options that take a number or a duration. */
static error_t parse_number_arg(struct options *o, int key, char *arg)
{
	switch (key) {
	case 'd':
		if (!parse_duration(arg, &o->duration))
			return REFUSE("invalid duration '%s': 1ms to 365 days, e.g. 10, 10s, 2m or "
				      "500ms", arg);
		return 0;
	case 'i':
		if (o->interval_given)
			return REFUSE("the interval is given twice: -i %s and a positional INTERVAL",
				      arg);
		if (!parse_interval(arg, &o->interval))
			return REFUSE("invalid interval '%s': at least 0.1 s, e.g. 5, 5s, 1m or 500ms",
				      arg);
		o->interval_given = true;
		return 0;
	case OPT_TOP:
		if (!parse_uint(arg, 100000, &o->top))
			return REFUSE("invalid --top '%s': expected a number", arg);
		return 0;
	case OPT_PROM_TOP_COMM:
		if (!parse_uint(arg, 10000, &o->prom_top_comm))
			return REFUSE("invalid --prom-top-comm '%s': expected a number up to 10000", arg);
		return 0;
	case OPT_PROM_TOP_CGROUP:
		if (!parse_uint(arg, SPT_PROM_MAX_CGROUPS, &o->prom_top_cgroup))
			return REFUSE("invalid --prom-top-cgroup '%s': expected a number up to %d", arg,
				      SPT_PROM_MAX_CGROUPS);
		return 0;
	case OPT_ROW_AGE:
		o->row_age = 0;
		if (strcmp(arg, "0") && !parse_duration(arg, &o->row_age))
			return REFUSE("invalid --row-age '%s': use e.g. 600, 10m or 0 (never)", arg);
		o->row_age_given = true;
		return 0;
	case OPT_VERIFY:
		if (!parse_verify_rate(arg, SPT_VERIFY_DEFAULT, &o->verify_every))
			return REFUSE("invalid --verify '%s': expected --verify or --verify=N, N a whole "
				      "number >= 1 (1 write request in N)", arg);
		return 0;
	case OPT_MAX_DELAY:
		if (!parse_duration(arg, &o->max_delay) || o->max_delay <= 0 || o->max_delay > 60)
			return REFUSE("invalid --max-delay '%s': a duration from 1ms to 60 s, e.g. 1, "
				      "200ms",
				      arg);
		o->max_delay_given = true;
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

/*
 * bcc's [INTERVAL [COUNT]]: INTERVAL as -i takes it, COUNT a number of
 * reports. A word where INTERVAL goes is most likely a command misplaced
 * or misspelt (main() already took a known one from argv[1]).
 */
static error_t parse_positional(struct options *o, unsigned int nth, char *arg)
{
	if (o->cmd == CMD_FEATURES || o->cmd == CMD_RESTORE)
		return REFUSE("unexpected argument '%s': %s takes no INTERVAL or COUNT", arg,
			      helps[o->cmd].name + strlen("stablepage-trace "));
	if (nth == 0) {
		if (isalpha((unsigned char)arg[0]))
			return REFUSE("unexpected word '%s': INTERVAL is a number of seconds, and "
				      "a command comes first (stablepage-trace COMMAND [OPTION...])",
				      arg);
		if (o->interval_given)
			return REFUSE("the interval is given twice: -i and a positional INTERVAL '%s'",
				      arg);
		if (!parse_interval(arg, &o->interval))
			return REFUSE("invalid INTERVAL '%s': a number of seconds, at least 0.1 (5, 0.5, "
				      "500ms, 1m)", arg);
		o->interval_given = true;
		return 0;
	}
	if (nth == 1) {
		if (!parse_uint(arg, SPT_MAX_COUNT, &o->count) || !o->count)
			return REFUSE("invalid COUNT '%s': a number of reports, 1 to %d", arg,
				      SPT_MAX_COUNT);
		return 0;
	}
	return REFUSE("unexpected argument '%s': only [INTERVAL [COUNT]] follow the options", arg);
}

/* The switches: options without a value. */
static bool *flag_of(struct options *o, int key)
{
	switch (key) {
	case 'q': return &o->quiet;
	case OPT_JSON: return &o->json;
	case OPT_HIST: return &o->hist;
	case OPT_DELTA: return &o->delta;
	case 'T': return &o->timestamps;
	case OPT_TIME_ALL_WAITS: return &o->time_all_waits;
	case OPT_NATIVE: return &o->native;
	case OPT_REMOUNT: return &o->remount;
	case OPT_PERSIST: return &o->persist;
	case OPT_RESTORE: return &o->restore;
	case 'v': return &o->verbose;
	}
	return NULL;
}

/*
 * Whether key '?' is -?: argp also passes '?' for a short option byte 0xff
 * (getopt's optopt -1 is argp's KEY_END), which printed the help and exited
 * 0 (tests/fuzz/corpus/options). The cluster being read holds a '?'.
 */
static bool help_asked(const struct argp_state *state)
{
	for (int i = state->next - 1; i <= state->next && i < state->argc; i++)
		if (i > 0 && state->argv[i][0] == '-' && state->argv[i][1] != '-' &&
		    strchr(state->argv[i], '?'))
			return true;
	return false;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	struct options *o = state->input;
	bool *flag = flag_of(o, key);

	if (flag) {
		*flag = true;
		return 0;
	}
	switch (key) {
	case 'p':
		return parse_pid_arg(o, arg);
	case OPT_DEV:
		return parse_dev_arg(o, arg);
	case OPT_COMM:
		if (!*arg || strlen(arg) >= SPT_COMM_LEN)
			return REFUSE("invalid comm '%s': 1 to %d characters", arg, SPT_COMM_LEN - 1);
		o->comm = arg;
		return 0;
	case 'c':
		o->cgroup = arg;
		return 0;
	case OPT_BTF:
		o->btf_path = arg;
		return 0;
	case OPT_PROM_FILE:
		if (!*arg)
			return REFUSE("empty --prom-file path");
		o->prom_file = arg;
		return 0;
	case OPT_ATTACH_MODE:
	case OPT_ACTION:
		return parse_mode_arg(o, key, arg);
	case '?':
		if (!help_asked(state))
			return REFUSE("unknown option or missing value: '%s'",
				      state->argv[state->next > 1 ? state->next - 1 : 0]);
		/* fall through */
	case 'h':
	case OPT_HELP:
		print_help(stdout, o->cmd, ARGP_HELP_STD_HELP);
		exit(EXIT_SUCCESS);
	case OPT_USAGE:
		print_help(stdout, o->cmd, ARGP_HELP_USAGE);
		exit(EXIT_SUCCESS);
	case 'V':
		printf("%s\n", argp_program_version);
		exit(EXIT_SUCCESS);
	case 'o':
		if (!*arg)
			return REFUSE("empty -o path");
		o->report_out = arg;
		return 0;
	case ARGP_KEY_ARG:
		if (o->cmd == CMD_REPORT) {
			if (o->report_in)
				return REFUSE("unexpected argument '%s'", arg);
			o->report_in = arg;
			return 0;
		}
		return parse_positional(o, state->arg_num, arg);
	case ARGP_KEY_ERROR:
		/* ARGP_NO_ERRS: argp's own message takes three lines; ours takes
		 * one. argp also ends here after our own refusals: keep theirs. */
		if (!o->error[0])
			fail(o, "unknown option or missing value: '%s'",
			     state->argv[state->next > 1 ? state->next - 1 : 0]);
		return 0;
	}
	return parse_number_arg(o, key, arg);
}

void options_init(struct options *o, enum spt_command cmd)
{
	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	o->top = 10;
	o->attach_mode = ATTACH_AUTO;
	o->action = SPT_ACTION_DELAY;
	o->max_delay = 1.0;
}

int options_parse(struct options *o, int argc, char **argv)
{
	static struct argp_option opts[NOPTS + 1];
	static const struct argp argp = { .options = opts, .parser = parse_arg };

	select_opts(opts, false, o->cmd);
	o->error[0] = '\0';
	if (!argp_parse(&argp, argc, argv, ARGP_NO_ERRS | ARGP_NO_HELP, NULL, o))
		return 0;
	if (!o->error[0])
		fail(o, "invalid command line");
	return -1;
}

static int check_enforce(struct options *o)
{
	if (o->restore) {
		if (o->native || o->remount || o->persist || o->ndevs)
			return fail(o, "enforce --restore takes no other enforce options");
		o->cmd = CMD_RESTORE;
		return 0;
	}
	if (o->native) {
		if (!o->ndevs)
			return fail(o, "enforce --native needs --dev DEV: the block devices to "
				       "enforce on");
		if (o->action_given || o->max_delay_given)
			return fail(o, "--action and --max-delay belong to the BPF mode (enforce "
				       "with --pid, --comm or --cgroup, without --native)");
		return 0;
	}
	if (o->remount || o->persist)
		return fail(o, "--remount and --persist belong to enforce --native");
	if (!o->npids && !o->comm && !o->cgroup)
		return fail(o, "enforce needs --native --dev DEV (the kernel's stable writes per "
			       "device), or a scope for the BPF mode: --pid, --comm or --cgroup");
	return 0;
}

/* The reports' options: each one only where it changes something. */
static int check_reports(struct options *o)
{
	if (o->timestamps && !o->interval)
		return fail(o, "-T stamps the interval reports: give an INTERVAL (or -i SECS)");
	if (o->timestamps && o->json)
		return fail(o, "-T is for the text reports: JSON reports always carry ts and time");
	if (o->delta && !o->interval)
		return fail(o, "--delta counts per interval: give an INTERVAL (or -i SECS)");
	if (o->count && o->duration)
		return fail(o, "COUNT and -d both say when to stop: give one of them");
	return 0;
}

int options_check(struct options *o)
{
	if (o->cmd == CMD_REPORT && !o->report_in)
		return fail(o, "report needs the tool's JSON output: stablepage-trace report "
			       "RUN.json [-o PAGE.html]");
	if (o->cmd != CMD_REPORT && o->report_out)
		return fail(o, "-o belongs to 'stablepage-trace report'");
	if (check_reports(o))
		return -1;
	if (o->cmd == CMD_RESTORE) /* the restore command: enforce --restore */
		o->restore = true;
	if (o->cmd == CMD_ENFORCE || o->cmd == CMD_RESTORE)
		return check_enforce(o);
	if (o->native || o->remount || o->persist || o->restore || o->action_given ||
	    o->max_delay_given)
		return fail(o, "--native, --remount, --persist, --restore, --action and "
			       "--max-delay belong to 'stablepage-trace enforce'");
	return 0;
}

const char *attach_mode_name(enum spt_attach_mode mode)
{
	return attach_mode_names[mode];
}

const char *action_name(enum spt_hold_action action)
{
	return action_names[action];
}

const char *write_hold_name(enum spt_write_hold wh)
{
	return write_hold_names[wh];
}
