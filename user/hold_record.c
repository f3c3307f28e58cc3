// SPDX-License-Identifier: GPL-2.0
/*
 * enforce (BPF): the thread groups a run may hold, recorded in
 * /run/stablepage-trace/held.TOOLPID before BPF may stop any of them (the
 * held_tgids map), so that `enforce --restore` can resume them when both
 * the tool and its guardian were killed. One line per group: "PID
 * STARTTIME COMM", the start time (/proc/PID/stat field 22) telling a
 * reused pid apart. The tool removes the file when it ends cleanly, the
 * guardian when it has resumed everyone after the tool died.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "hold_record.h"

static int record_fd = -1;

static void record_path(pid_t tool, char *buf, size_t len)
{
	snprintf(buf, len, SPT_RUN_DIR "/held.%d", (int)tool);
}

/* Field 22 of /proc/PID/stat (clock ticks since boot), 0 if unreadable. */
static unsigned long long start_time(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	/* After the comm: state is field 3, starttime field 22. */
	if (!p || sscanf(p + 2, "%*c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
				 "%*s %*s %*s %*s %llu", &t) != 1)
		return 0;
	return t;
}

int hold_record_open(pid_t tool, pid_t guardian)
{
	char path[PATH_MAX], head[128];
	int n;

	if (mkdir(SPT_RUN_DIR, 0755) && errno != EEXIST)
		return -errno;
	record_path(tool, path, sizeof(path));
	record_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
			 0644);
	if (record_fd < 0)
		return -errno;
	n = snprintf(head, sizeof(head), "# stablepage-trace enforce pid=%d guardian=%d\n",
		     (int)tool, (int)guardian);
	if (write(record_fd, head, n) != n)
		return errno ? -errno : -EIO;
	return 0;
}

int hold_record_add(__u32 pid, const char *comm)
{
	unsigned long long st = start_time(pid);
	char line[128], name[17];
	int n, i;

	if (record_fd < 0)
		return -EBADF;
	if (!st)
		return -ESRCH;
	/* One word: the file is parsed by spaces and printed to terminals. */
	for (i = 0; comm[i] && i < 16; i++)
		name[i] = comm[i] > ' ' && comm[i] < 127 ? comm[i] : '?';
	name[i] = 0;
	n = snprintf(line, sizeof(line), "%u %llu %s\n", pid, st, i ? name : "?");
	/* One write with O_APPEND: a line is whole or absent. */
	if (write(record_fd, line, n) != n)
		return errno ? -errno : -EIO;
	return 0;
}

void hold_record_remove(pid_t tool)
{
	char path[PATH_MAX];

	record_path(tool, path, sizeof(path));
	unlink(path);
	if (record_fd >= 0 && tool == getpid()) {
		close(record_fd);
		record_fd = -1;
	}
}

/* pid runs a program whose comm is `comm`: the run that wrote a record.
 * A zombie is dead (a killed guardian is reparented, and may stay one). */
static bool alive_as(int pid, const char *comm)
{
	char path[64], buf[64] = "", *p;
	FILE *f;

	if (pid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	/* "PID (COMM) STATE ...": comm is at most 15 characters. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return false;
	*p = 0;
	p = strchr(buf, '(');
	return p && !strcmp(p + 1, comm);
}

/* SIGCONT to the groups of an open record, past its first line. The
 * number that could not be resumed; each said when `say`. */
static int resume_groups(FILE *f, int tool, bool say)
{
	char line[256], comm[32];
	unsigned long long st;
	int failed = 0;
	unsigned pid;

	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %llu %31s", &pid, &st, comm) != 3 || !pid || pid > INT_MAX)
			continue;
		if (start_time(pid) != st)
			continue; /* gone, or the pid is another process's now */
		if (kill(pid, SIGCONT)) {
			fprintf(stderr, "stablepage-trace: cannot resume pid %u (%s): %s\n", pid,
				comm, strerror(errno));
			failed++;
			continue;
		}
		if (say)
			fprintf(stderr, "enforce: resumed pid %u (%s), held by run %d\n", pid, comm,
				tool);
	}
	return failed;
}

int hold_record_resume(pid_t tool)
{
	char path[PATH_MAX], line[256];
	FILE *f;
	int failed;

	record_path(tool, path, sizeof(path));
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : 1;
	failed = fgets(line, sizeof(line), f) ? resume_groups(f, tool, false) : 0;
	fclose(f);
	return failed;
}

/* One record: resumes its groups. 0, 1 when one could not be resumed or
 * the run is still active (the file is then kept). */
static int restore_file(const char *path)
{
	FILE *f = fopen(path, "re");
	int tool = 0, guardian = 0, failed;
	char line[256];

	if (!f) {
		fprintf(stderr, "stablepage-trace: cannot read %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (fgets(line, sizeof(line), f))
		sscanf(line, "# stablepage-trace enforce pid=%d guardian=%d", &tool, &guardian);
	if (alive_as(tool, "stablepage-trac") || alive_as(guardian, "spt-guardian")) {
		fclose(f);
		fprintf(stderr, "stablepage-trace: enforce run %d is still active: stop it (Ctrl-C, "
				"kill) and it resumes its writers by itself\n", tool);
		return 1;
	}
	failed = resume_groups(f, tool, true);
	fclose(f);
	if (!failed)
		unlink(path);
	return failed ? 1 : 0;
}

int hold_record_restore(bool *found)
{
	DIR *d = opendir(SPT_RUN_DIR);
	struct dirent *e;
	char path[PATH_MAX];
	int ret = 0;

	*found = false;
	if (!d)
		return errno == ENOENT ? 0 : 1;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "held.", 5))
			continue;
		*found = true;
		snprintf(path, sizeof(path), SPT_RUN_DIR "/%s", e->d_name);
		ret |= restore_file(path);
	}
	closedir(d);
	return ret;
}
