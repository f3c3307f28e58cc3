// SPDX-License-Identifier: GPL-2.0
/* Unit tests for the pure user-space parts: parsing, JSON, sorting, summaries. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json.h"
#include "parse.h"
#include "report.h"

static int failures, checks;

#define CHECK(cond)                                                                \
	do {                                                                       \
		checks++;                                                          \
		if (!(cond)) {                                                     \
			failures++;                                                \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
		}                                                                  \
	} while (0)

static char *capture(void (*fn)(FILE *, const void *), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(f, arg);
	fclose(f);
	return buf;
}

static void json_of(FILE *f, const void *s)
{
	json_string(f, s);
}

static void test_duration(void)
{
	double d;

	CHECK(parse_duration("10", &d) && d == 10);
	CHECK(parse_duration("10s", &d) && d == 10);
	CHECK(parse_duration("2m", &d) && d == 120);
	CHECK(parse_duration("1h", &d) && d == 3600);
	CHECK(parse_duration("250ms", &d) && d == 0.25);
	CHECK(parse_duration("1.5", &d) && d == 1.5);
	CHECK(!parse_duration("0", &d));
	CHECK(!parse_duration("-1", &d));
	CHECK(!parse_duration("abc", &d));
	CHECK(!parse_duration("5x", &d));
	CHECK(!parse_duration("", &d));
	CHECK(!parse_duration("nan", &d));
	CHECK(!parse_duration("inf", &d));
}

static void test_pid_uint(void)
{
	uint32_t pid;
	unsigned long v;

	CHECK(parse_pid("1", &pid) && pid == 1);
	CHECK(parse_pid("4194304", &pid));
	CHECK(!parse_pid("0", &pid));
	CHECK(!parse_pid("-5", &pid));
	CHECK(!parse_pid("12a", &pid));
	CHECK(!parse_pid("99999999999", &pid));
	CHECK(!parse_pid(" 5", &pid));
	CHECK(parse_uint("0", 10, &v) && v == 0);
	CHECK(!parse_uint("11", 10, &v));
}

static void test_majmin(void)
{
	uint32_t d;

	CHECK(parse_majmin("7:0", &d) && d == (7u << 20));
	CHECK(parse_majmin("259:65537", &d) && spt_kdev_major(d) == 259 &&
	      spt_kdev_minor(d) == 65537);
	CHECK(!parse_majmin("7:", &d));
	CHECK(!parse_majmin(":1", &d));
	CHECK(!parse_majmin("loop0", &d));
	CHECK(!parse_majmin("4096:0", &d)); /* 12-bit major */
	CHECK(!parse_majmin("1:1048576", &d)); /* 20-bit minor */
}

static void test_mountinfo(void)
{
	char line[] = "36 35 98:0 /mnt1 /mnt/with\\040space rw,noatime master:1 - ext4 /dev/root "
		      "rw,errors=continue\n";
	char line2[] = "45 27 7:1 / /tmp/x rw,relatime - xfs /dev/loop1 rw,inode64\n";
	char bad[] = "garbage line\n";
	struct mountinfo_entry e;

	CHECK(parse_mountinfo_line(line, &e));
	CHECK(e.major == 98 && e.minor == 0);
	CHECK(!strcmp(e.root, "/mnt1"));
	CHECK(!strcmp(e.mountpoint, "/mnt/with space"));
	CHECK(!strcmp(e.fstype, "ext4"));
	CHECK(!strcmp(e.source, "/dev/root"));
	CHECK(parse_mountinfo_line(line2, &e) && !strcmp(e.fstype, "xfs") && e.minor == 1);
	CHECK(!parse_mountinfo_line(bad, &e));
}

static void test_json(void)
{
	char *s;

	s = capture(json_of, "a\"b\\c\nd\x01");
	CHECK(!strcmp(s, "\"a\\\"b\\\\c\\nd\\u0001\""));
	free(s);
	s = capture(json_of, "caf\xc3\xa9");
	CHECK(!strcmp(s, "\"caf\xc3\xa9\""));
	free(s);
	s = capture(json_of, "bad\xff\xc3");
	CHECK(!strcmp(s, "\"bad\\ufffd\\ufffd\""));
	free(s);
	s = capture(json_of, NULL);
	CHECK(!strcmp(s, "null"));
	free(s);
}

static void test_totals_and_sort(void)
{
	struct spt_totals percpu[2] = {};
	struct spt_totals sum;
	struct proc_row procs[3] = {};
	struct file_row files[2] = {};

	percpu[0].violations[SPT_KIND_MMAP] = 3;
	percpu[1].violations[SPT_KIND_MMAP] = 4;
	percpu[1].waits[SPT_KIND_WRITE] = 2;
	percpu[0].waits[SPT_KIND_OTHER] = 5;
	percpu[1].events_lost = 1;
	totals_sum(&sum, percpu, 2);
	CHECK(sum.violations[SPT_KIND_MMAP] == 7);
	CHECK(stable_waits(sum.waits) == 2);
	CHECK(sum.waits[SPT_KIND_OTHER] == 5);
	CHECK(sum.events_lost == 1);
	CHECK(kinds_total(sum.violations) == 7);

	procs[0].pid = 10, procs[0].s.violations[SPT_KIND_WRITE] = 1;
	procs[1].pid = 20, procs[1].s.violations[SPT_KIND_MMAP] = 5;
	procs[2].pid = 5, procs[2].s.violations[SPT_KIND_WRITE] = 1;
	sort_procs(procs, 3);
	CHECK(procs[0].pid == 20 && procs[1].pid == 5 && procs[2].pid == 10);

	files[0].key.ino = 1, files[0].s.violations[0] = 1;
	files[1].key.ino = 2, files[1].s.violations[1] = 9;
	sort_files(files, 2);
	CHECK(files[0].key.ino == 2);
}

static void summary_json(FILE *f, const void *arg)
{
	print_summary_json(f, arg, 1);
}

static void test_summary_json(void)
{
	struct proc_row procs[2] = { { .pid = 7, .s = { .violations = { 1, 2, 0 }, .comm = "a\"b" } },
				     { .pid = 8, .s = { .violations = { 1, 0, 0 } } } };
	struct spt_summary s = { .duration_s = 1.5, .procs = procs, .nprocs = 2 };
	char *out;

	s.totals.violations[0] = 2, s.totals.violations[1] = 2;
	out = capture(summary_json, &s);
	CHECK(strstr(out, "\"type\":\"summary\"") != NULL);
	CHECK(strstr(out, "\"violations\":{\"mmap\":2,\"write\":2,\"other\":0}") != NULL);
	CHECK(strstr(out, "\"comm\":\"a\\\"b\"") != NULL);
	CHECK(strstr(out, "\"pid\":8") == NULL); /* --top 1 */
	CHECK(out[strlen(out) - 1] == '\n');
	free(out);
}

int main(void)
{
	test_duration();
	test_pid_uint();
	test_majmin();
	test_mountinfo();
	test_json();
	test_totals_and_sort();
	test_summary_json();
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
