/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The options' table and each command's help text (help.c), shared with
 * their parsing (options.c): the keys of the options without a short form.
 */
#ifndef SPT_HELP_H
#define SPT_HELP_H

#include <argp.h>
#include <stdio.h>
#include "options.h"


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

/* Every option once, as argp parses them (a null entry last). */
const struct argp_option *options_for_parsing(void);

/* The help of cmd: usage, its options, examples (argp_help's flags). */
void print_help(FILE *f, enum spt_command cmd, unsigned int flags);

/* "features", "restore"...: the command as its help names it. */
const char *command_name(enum spt_command cmd);

#endif
