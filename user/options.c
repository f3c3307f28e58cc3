// SPDX-License-Identifier: GPL-2.0
/* The command line parsed (the options' table and help text: help.c) and
 * validated; the modes' names. */
#define _GNU_SOURCE
#include <argp.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "help.h"
#include "msg.h"
#include "parse.h"
#include "resolve.h"

const char *argp_program_version = "stablepage-trace " SPT_VERSION;
const char *argp_program_bug_address = "https://github.com/stablepage-trace/stablepage-trace/issues";

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
			      command_name(o->cmd));
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

/* The options that print and exit 0: help, usage, version. '?' that is
 * not -? is refused. */
static error_t parse_help_arg(struct options *o, int key, const struct argp_state *state)
{
	switch (key) {
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
	}
	printf("%s\n", argp_program_version);
	exit(EXIT_SUCCESS);
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
	case 'h':
	case OPT_HELP:
	case OPT_USAGE:
	case 'V':
		return parse_help_arg(o, key, state);
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
	struct argp argp = { .options = options_for_parsing(), .parser = parse_arg };

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
