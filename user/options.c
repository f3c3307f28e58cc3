// SPDX-License-Identifier: GPL-2.0
/* The command line: argp's options, the help text, and their validation. */
#define _GNU_SOURCE
#include <argp.h>
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
static const char doc[] =
	"Find writes to page-cache pages while they are under writeback.\n"
	"\n"
	"A violation is the first write that makes a folio dirty while PG_writeback is set on it, on a "
	"mapping whose kernel does not wait for writeback first (no stable writes). It is counted once "
	"per folio per writeback cycle.\n"
	"\n"
	"Histograms (--hist, --json, --prom-file) are log2 microseconds, aggregated in the kernel: "
	"writeback (write requests, allocation -> completion; timed only with those options), "
	"stable-wait (writers asleep in "
	"folio_wait_writeback until running again), other-wait (fsync, msync, truncate waits; "
	"in tracepoint mode timed only after a writer's first wait, or with --time-all-waits), "
	"would-stall (a violation -> the end of that folio's I/O: the wait stable pages would "
	"impose), folio-writeback (fentry mode: one folio's writeback, start -> end). Interval "
	"reports (-i) and the Prometheus file are cumulative since the start; "
	"nothing resets.\n"
	"\n"
	"SIGUSR1 pauses tracing: the tracepoint programs are detached (fentry mode's fentry/fexit "
	"programs stay attached and return at once), so nothing is seen and the traced workload "
	"pays (almost) nothing; SIGUSR2 attaches them again. Each is acknowledged on stderr. A "
	"violation or wait that spans a pause is counted, untimed (its end may have passed unseen); "
	"the summary says how long tracing was paused (paused_s). enforce does not pause.\n"
	"\n"
	"USAGE: stablepage-trace [-d SECS] [-p PID]... [--comm COMM] [--cgroup PATH] [--dev DEV]... "
	"[-q] [--json] [--hist] [--time-all-waits] [-i SECS] [--prom-file PATH [--prom-top-comm N]] "
	"[--top N] [-v]\n"
	"       stablepage-trace enforce --native --dev DEV... [--remount] [--persist] [tracing options]\n"
	"       stablepage-trace enforce --restore\n"
	"       stablepage-trace enforce {--pid PID|--comm COMM|--cgroup PATH}... [--action "
	"delay|kill|log] [--max-delay SECS] [tracing options]\n"
	"       stablepage-trace features   # what this kernel offers: programs that load, LSMs, devices\n"
	"\n"
	"enforce --native sets the devices' queue/stable_writes to 1 and traces; filesystems mounted "
	"before that are not enforced until mounted again (--remount unmounts and mounts them with the "
	"same options). The previous values come back at exit; --restore undoes a killed run.\n"
	"enforce with a scope and no --native holds writers in scope (SIGSTOP) until the folio they "
	"would modify is written back, at most --max-delay (1 s); write() only where the BPF LSM or "
	"fmod_ret loads, mmap stores everywhere. A guardian process resumes them if the tool dies.\n"
	"\n"
	"EXAMPLES:\n"
	"    stablepage-trace                  # one line per violation until Ctrl-C, then a summary\n"
	"    stablepage-trace -d 10 -q         # count for 10 s, print only the summary\n"
	"    stablepage-trace -p 4242 -p 4243  # only these processes\n"
	"    stablepage-trace --dev loop0      # only filesystems on /dev/loop0 (or --dev 7:0)\n"
	"    stablepage-trace --cgroup /sys/fs/cgroup/system.slice/postgresql.service\n"
	"    stablepage-trace --json | jq .    # one JSON object per line, summary last\n"
	"    stablepage-trace -q --hist -d 60  # what stable pages would cost, as histograms\n"
	"    stablepage-trace -q -i 5          # a summary every 5 s (cumulative)\n"
	"    stablepage-trace -q --prom-file /var/lib/prometheus/node-exporter/stablepage.prom\n"
	"    stablepage-trace enforce --native --dev sdb --remount -d 60  # stable pages for a minute\n"
	"    stablepage-trace enforce --comm postgres -d 60  # hold only postgres' writers\n"
	"    stablepage-trace enforce --restore   # undo an enforce run that was killed\n";

enum {
	OPT_COMM = 0x100,
	OPT_CGROUP,
	OPT_DEV,
	OPT_JSON,
	OPT_TOP,
	OPT_BTF,
	OPT_USAGE,
	OPT_HIST,
	OPT_PROM_FILE,
	OPT_PROM_TOP_COMM,
	OPT_NATIVE,
	OPT_REMOUNT,
	OPT_PERSIST,
	OPT_RESTORE,
	OPT_ATTACH_MODE,
	OPT_ACTION,
	OPT_MAX_DELAY,
	OPT_TIME_ALL_WAITS,
};

static const struct argp_option opts[] = {
	{ "duration", 'd', "SECS", 0, "Trace for SECS (10, 10s, 2m, 500ms), then print the summary", 0 },
	{ "pid", 'p', "PID", 0, "Only this process (thread group); repeatable", 0 },
	{ "comm", OPT_COMM, "COMM", 0, "Only tasks whose comm is COMM", 0 },
	{ "cgroup", OPT_CGROUP, "PATH", 0, "Only tasks in this cgroup v2 directory or below it", 0 },
	{ "dev", OPT_DEV, "DEV", 0, "Only filesystems on block device NAME, /dev/NAME or MAJ:MIN; repeatable", 0 },
	{ "quiet", 'q', NULL, 0, "No per-event lines: count in the kernel, print the summary", 0 },
	{ "json", OPT_JSON, NULL, 0, "One JSON object per line: events, then the summary", 0 },
	{ "top", OPT_TOP, "N", 0, "Processes and files listed in the summary (default 10)", 0 },
	{ "hist", OPT_HIST, NULL, 0, "Print the latency histograms with the summary", 0 },
	{ "time-all-waits", OPT_TIME_ALL_WAITS, NULL, 0,
	  "Time every writeback wait from the start, not only writers' (fsync, sync_file_range too): "
	  "in tracepoint mode that attaches sched_switch, paid on every context switch", 0 },
	{ "interval", 'i', "SECS", 0, "Print the summary every SECS too (cumulative since the start)", 0 },
	{ "prom-file", OPT_PROM_FILE, "PATH", 0,
	  "Write Prometheus metrics to PATH (atomically) every interval (default 15 s) and at exit", 0 },
	{ "prom-top-comm", OPT_PROM_TOP_COMM, "N", 0,
	  "Add violations per comm for the N busiest comms to the metrics (default 0: none)", 0 },
	{ "native", OPT_NATIVE, NULL, 0, "enforce: the kernel's stable writes on each --dev", 0 },
	{ "remount", OPT_REMOUNT, NULL, 0,
	  "enforce: unmount and mount again the filesystems on --dev so that it takes effect", 0 },
	{ "persist", OPT_PERSIST, NULL, 0, "enforce: keep stable_writes at exit (--restore undoes it)", 0 },
	{ "restore", OPT_RESTORE, NULL, 0, "enforce: undo what a killed or --persist run changed", 0 },
	{ "action", OPT_ACTION, "ACTION", 0,
	  "enforce --pid/--comm/--cgroup: delay (default: stop the writer until writeback ends), "
	  "kill (SIGKILL it before its data lands) or log (count only)", 0 },
	{ "max-delay", OPT_MAX_DELAY, "SECS", 0,
	  "enforce --action delay: longest hold of one write (default 1 s)", 0 },
	{ "attach-mode", OPT_ATTACH_MODE, "MODE", 0,
	  "auto (default): fentry where it loads, else tracepoint; or tracepoint, fentry", 0 },
	{ "btf", OPT_BTF, "FILE", 0, "Kernel BTF to use instead of " SYSFS_BTF, 0 },
	{ "verbose", 'v', NULL, 0, "Print libbpf and loader diagnostics", 0 },
	/* Our own: with ARGP_NO_ERRS (for one-line errors) argp's --help prints nothing and returns. */
	{ "help", '?', NULL, 0, "Give this help list", -1 },
	{ "usage", OPT_USAGE, NULL, 0, "Give a short usage message", -1 },
	{ "version", 'V', NULL, 0, "Print program version", -1 },
	{ NULL, 'h', NULL, OPTION_HIDDEN, "Show this help", 0 },
	{},
};

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

/* The options that take a number or a duration. */
static error_t parse_number_arg(struct options *o, int key, char *arg)
{
	switch (key) {
	case 'd':
		if (!parse_duration(arg, &o->duration))
			return REFUSE("invalid duration '%s': use e.g. 10, 10s, 2m or 500ms", arg);
		return 0;
	case 'i':
		if (!parse_duration(arg, &o->interval))
			return REFUSE("invalid interval '%s': use e.g. 5, 5s, 1m or 500ms", arg);
		return 0;
	case OPT_TOP:
		if (!parse_uint(arg, 100000, &o->top))
			return REFUSE("invalid --top '%s': expected a number", arg);
		return 0;
	case OPT_PROM_TOP_COMM:
		if (!parse_uint(arg, 10000, &o->prom_top_comm))
			return REFUSE("invalid --prom-top-comm '%s': expected a number up to 10000", arg);
		return 0;
	case OPT_MAX_DELAY:
		if (!parse_duration(arg, &o->max_delay) || o->max_delay <= 0 || o->max_delay > 60)
			return REFUSE("invalid --max-delay '%s': a duration up to 60 s, e.g. 1, 200ms",
				      arg);
		o->max_delay_given = true;
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

/* The switches: options without a value. */
static bool *flag_of(struct options *o, int key)
{
	switch (key) {
	case 'q': return &o->quiet;
	case OPT_JSON: return &o->json;
	case OPT_HIST: return &o->hist;
	case OPT_TIME_ALL_WAITS: return &o->time_all_waits;
	case OPT_NATIVE: return &o->native;
	case OPT_REMOUNT: return &o->remount;
	case OPT_PERSIST: return &o->persist;
	case OPT_RESTORE: return &o->restore;
	case 'v': return &o->verbose;
	}
	return NULL;
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
	case OPT_CGROUP:
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
	case 'h':
	case '?':
		argp_help(state->root_argp, stdout, ARGP_HELP_STD_HELP, "stablepage-trace");
		exit(EXIT_SUCCESS);
	case OPT_USAGE:
		argp_help(state->root_argp, stdout, ARGP_HELP_USAGE, "stablepage-trace");
		exit(EXIT_SUCCESS);
	case 'V':
		printf("%s\n", argp_program_version);
		exit(EXIT_SUCCESS);
	case ARGP_KEY_ARG:
		return REFUSE("unexpected argument '%s'", arg);
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
	static const struct argp argp = { .options = opts, .parser = parse_arg, .doc = doc };

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

int options_check(struct options *o)
{
	if (o->cmd == CMD_ENFORCE)
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
