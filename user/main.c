// SPDX-License-Identifier: GPL-2.0
/*
 * stablepage-trace: find writes to page-cache pages while they are under
 * writeback, attributed to process, file and device. The commands, and
 * what they need before they run.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "enforce.h"
#include "htmlreport.h"
#include "msg.h"
#include "options.h"
#include "probe.h"
#include "prom.h"
#include "resolve.h"
#include "tracer.h"

/* libbpf's messages only with -v: failures are reported in one line by the caller. */
static bool libbpf_verbose;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	(void)level;
	return libbpf_verbose ? vfprintf(stderr, fmt, args) : 0;
}

/* CAP_PERFMON (38), CAP_BPF (39) or CAP_SYS_ADMIN (21) in the effective set. */
static bool have_bpf_caps(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	unsigned long long eff = 0;
	char line[256];

	if (!f)
		return geteuid() == 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return (eff & (1ULL << 21)) || ((eff & (1ULL << 38)) && (eff & (1ULL << 39)));
}

/* What the BPF commands check before anything loads: the paths given,
 * then the privileges. The --cgroup directory's fd, or -1. */
static int prepare_bpf_command(const struct options *o)
{
	int cgroup_fd = -1, err;

	if (o->cgroup) {
		cgroup_fd = open_cgroup_dir(o->cgroup);
		if (cgroup_fd < 0)
			die_usage("cgroup '%s': %s; give a cgroup v2 directory under /sys/fs/cgroup",
				  o->cgroup, errno == ENOTDIR ? "not a cgroup v2 directory" :
							       strerror(errno));
	}
	if (o->prom_file) {
		const char *why;

		err = prom_check_path(o->prom_file, &why);
		if (err)
			die_usage("cannot create files next to --prom-file %s: %s", o->prom_file, why);
	}
	if (!have_bpf_caps())
		spt_die("needs root (or CAP_BPF and CAP_PERFMON) to load BPF programs: run it with sudo");
	libbpf_verbose = o->verbose;
	libbpf_set_print(libbpf_print);
	return cgroup_fd;
}

/* Tracing, and enforce (natively or by holding writers), which traces too. */
static int run_tracer(const struct options *o)
{
	return tracer_run(o, prepare_bpf_command(o));
}

static int run_features(const struct options *o)
{
	prepare_bpf_command(o);
	return features_run(o->btf_path, o->json);
}

static int run_restore(const struct options *o)
{
	(void)o;
	if (geteuid())
		spt_die("enforce --restore writes sysfs: run it with sudo");
	return enforce_restore();
}

static const struct command {
	const char *word; /* the first argument that names it; NULL: none does */
	int (*run)(const struct options *o);
} commands[CMD_MAX] = {
	[CMD_TRACE] = { "trace", run_tracer },
	[CMD_ENFORCE] = { "enforce", run_tracer },
	[CMD_FEATURES] = { "features", run_features },
	[CMD_RESTORE] = { "restore", run_restore }, /* also enforce --restore (options_check) */
	[CMD_REPORT] = { "report", report_run },
};

/* A first argument that is a word but no command's: one line, exit 2. */
static void unknown_command(const char *word)
{
	char names[256];
	size_t used = 0;

	for (int c = 0; c < CMD_MAX; c++)
		if (commands[c].word && used < sizeof(names))
			used += snprintf(names + used, sizeof(names) - used, "%s%s", used ? ", " : "",
					 commands[c].word);
	die_usage("unknown command '%s': one of %s", word, names);
}

/* The command the first argument names, which is then taken out of argv;
 * tracing when it names none (options, or [INTERVAL [COUNT]]). */
static enum spt_command command_word(int *argc, char ***argv)
{
	for (int c = 0; c < CMD_MAX; c++) {
		if (*argc < 2 || !commands[c].word || strcmp((*argv)[1], commands[c].word))
			continue;
		(*argv)[1] = (*argv)[0];
		(*argv)++;
		(*argc)--;
		return c;
	}
	if (*argc >= 2 && isalpha((unsigned char)(*argv)[1][0]))
		unknown_command((*argv)[1]);
	return CMD_TRACE;
}

int main(int argc, char **argv)
{
	static struct options o;

	options_init(&o, command_word(&argc, &argv));
	if (options_parse(&o, argc, argv) || options_check(&o))
		die_usage("%s", o.error);
	return commands[o.cmd].run(&o);
}
