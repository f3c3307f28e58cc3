/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The command line: the command, the options and their validation. Modes
 * are enums from here on; their names live only at the edges
 * (options_parse reads them, the *_name functions print them).
 */
#ifndef SPT_OPTIONS_H
#define SPT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "stablepage.h"

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2
#define MAX_FILTER_PIDS 1024
#define MAX_FILTER_DEVS 64
/* --verify without =N (docs/performance.md: its cost per rate) */
#define SPT_VERIFY_DEFAULT 16
#define SYSFS_BTF "/sys/kernel/btf/vmlinux"
#define SPT_MAX_COUNT 1000000     /* COUNT: reports before the run ends */
#define SPT_PROM_MAX_CGROUPS 1000 /* --prom-top-cgroup: the label's cardinality */

enum spt_command {
	CMD_TRACE,    /* stablepage-trace [trace] [options] [INTERVAL [COUNT]] */
	CMD_ENFORCE,  /* stablepage-trace enforce ... */
	CMD_FEATURES, /* stablepage-trace features */
	CMD_RESTORE,  /* stablepage-trace restore, or enforce --restore */
	CMD_REPORT,   /* stablepage-trace report RUN.json [-o PAGE.html] */
	CMD_MAX,
};

enum spt_attach_mode {
	ATTACH_AUTO,       /* fentry where it loads, else tracepoint */
	ATTACH_TRACEPOINT,
	ATTACH_FENTRY,
};

/* enforce (BPF mode): how write() is held before its copy. */
enum spt_write_hold {
	WRITE_HOLD_NONE,     /* not at all: mmap writers only, at their write fault */
	WRITE_HOLD_LSM,      /* the BPF LSM's file_permission */
	WRITE_HOLD_FMOD_RET, /* fmod_ret on security_file_permission */
};

struct options {
	enum spt_command cmd;
	double duration;
	uint32_t pids[MAX_FILTER_PIDS];
	int npids;
	uint32_t devs[MAX_FILTER_DEVS];
	int ndevs;
	const char *comm;
	const char *cgroup;
	const char *btf_path;
	bool quiet, json, verbose, hist, time_all_waits;
	double interval;          /* -i or the positional INTERVAL; 0: no interval reports */
	bool interval_given;
	unsigned long count;      /* the positional COUNT: reports, then the end; 0: no end */
	bool delta;               /* interval reports count the interval, not since the start */
	bool timestamps;          /* -T: text interval reports say the wall-clock time */
	unsigned int verify_every; /* --verify[=N]: 1 write request in N; 0: off */
	const char *prom_file;
	unsigned long prom_top_comm;
	unsigned long prom_top_cgroup;
	double row_age;           /* --row-age: seconds idle before a row goes; 0: never */
	bool row_age_given;
	unsigned long top;
	/* enforce */
	bool native, remount, persist, restore;
	enum spt_attach_mode attach_mode;
	enum spt_hold_action action; /* DELAY, KILL or LOG: what BPF mode does to a writer */
	double max_delay;
	/* report: the JSON output read, the page written (NULL: stdout) */
	const char *report_in, *report_out;
	bool action_given, max_delay_given;
	/* Set when options_parse or options_check fails: one line, no prefix. */
	char error[512];
};

/* The defaults, for the command the first argument named. */
void options_init(struct options *o, enum spt_command cmd);

/* argp over argv. --help, --usage and --version print and exit(0). 0, or
 * -1 with the reason in o->error (a usage error). */
int options_parse(struct options *o, int argc, char **argv);

/* The enforce options belong together and to the enforce command only;
 * enforce --restore becomes CMD_RESTORE. 0, or -1 with o->error set. */
int options_check(struct options *o);

/* "stablepage-trace: <fmt> (see --help)" on stderr, exit EXIT_USAGE. */
void die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

const char *attach_mode_name(enum spt_attach_mode mode);
const char *action_name(enum spt_hold_action action);
const char *write_hold_name(enum spt_write_hold wh);

#endif
