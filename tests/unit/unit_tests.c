// SPDX-License-Identifier: GPL-2.0
/* Unit tests for the pure user-space parts: parsing, options, the plan, JSON, sorting,
 * summaries. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include "escape.h"
#include "json.h"
#include "parse.h"
#include "prom.h"
#include "report.h"
#include "hold.h"
#include "options.h"
#include "plan.h"
#include "delta.h"
#include "check.h"
#include <unistd.h>

int unit_checks, unit_failures;

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
	/* 1 ms at least; decimal only */
	CHECK(parse_duration("1ms", &d) && d == 0.001);
	CHECK(parse_duration("0.001", &d) && d == 0.001);
	CHECK(parse_duration(".5", &d) && d == 0.5);
	CHECK(!parse_duration("0.5ms", &d));
	CHECK(!parse_duration("0.0009", &d));
	CHECK(!parse_duration("1e-9", &d));
	CHECK(!parse_duration("0x10", &d));
	CHECK(!parse_duration(" 5", &d));
	CHECK(!parse_duration("+5", &d));
	CHECK(!parse_duration(".", &d));
	CHECK(!parse_duration("1e400", &d));
	CHECK(parse_duration("365d", &d) == false);
	CHECK(parse_duration("8760h", &d) && !parse_duration("8761h", &d));
}

/* text_esc into a buffer of len bytes */
static bool esc_is(const char *in, size_t len, const char *want)
{
	char buf[256];

	return !strcmp(text_esc(buf, len, in), want);
}

static void esc_to(FILE *f, const void *s)
{
	text_puts(f, s);
}

static void test_text_escape(void)
{
	char *out;

	CHECK(esc_is("postgres", 256, "postgres"));
	CHECK(esc_is("\x1b]2;pwned\a\x1b[2J", 256, "\\x1b]2;pwned\\x07\\x1b[2J"));
	CHECK(esc_is("a\x1b[31mb", 256, "a\\x1b[31mb"));
	CHECK(esc_is("\033[31mred\r\n\t\177", 256, "\\x1b[31mred\\x0d\\x0a\\x09\\x7f"));
	/* C1 controls, raw or as UTF-8 (8-bit CSI), and bytes that are not UTF-8 */
	CHECK(esc_is("\x9b" "2J", 256, "\\x9b2J"));
	CHECK(esc_is("\xc2\x9b" "2J", 256, "\\xc2\\x9b2J"));
	CHECK(esc_is("\xff\xc3", 256, "\\xff\\xc3"));
	/* UTF-8 stays, U+00A0 and above */
	CHECK(esc_is("caf\xc3\xa9 \xe2\x82\xac \xc2\xa0", 256,
		     "caf\xc3\xa9 \xe2\x82\xac \xc2\xa0"));
	CHECK(esc_is("a\\b", 256, "a\\\\b"));
	CHECK(esc_is(NULL, 256, ""));
	/* an escape that does not fit whole is left out */
	CHECK(esc_is("ab\x1b", 6, "ab"));
	CHECK(esc_is("ab\x1b", 7, "ab\\x1b"));
	CHECK(esc_is("\xc3\xa9", 2, ""));
	CHECK(esc_is("abc", 1, ""));
	out = capture(esc_to, "\x1b[2J/tmp/x\ny");
	CHECK(out && !strcmp(out, "\\x1b[2J/tmp/x\\x0ay"));
	free(out);
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
	CHECK(!strcmp(e.mount_opts, "rw,noatime") && !strcmp(e.super_opts, "rw,errors=continue"));
	CHECK(parse_mountinfo_line(line2, &e) && !strcmp(e.fstype, "xfs") && e.minor == 1);
	CHECK(!parse_mountinfo_line(bad, &e));
	{
		/* out of range MAJ:MIN; no "-"; fewer than six fields */
		char big[] = "45 27 4096:1 / /x rw - xfs /dev/loop1 rw\n",
		     neg[] = "45 27 -7:1 / /x rw - xfs /dev/loop1 rw\n",
		     nosep[] = "45 27 7:1 / /x rw shared:1 xfs /dev/loop1 rw\n",
		     short6[] = "45 27 7:1 / - xfs /dev/loop1\n",
		     nosuper[] = "45 27 7:1 / /x rw - xfs /dev/loop1\n";

		CHECK(!parse_mountinfo_line(big, &e));
		CHECK(!parse_mountinfo_line(neg, &e));
		CHECK(!parse_mountinfo_line(nosep, &e));
		CHECK(!parse_mountinfo_line(short6, &e));
		CHECK(parse_mountinfo_line(nosuper, &e) && !strcmp(e.super_opts, ""));
	}
	{
		/* 40 optional fields and a 10000-byte mount point: no limit of either */
		size_t len = 40000;
		char *l = malloc(len), *p = l;

		p += sprintf(p, "1 2 7:2 / /");
		for (int i = 0; i < 5000; i++) /* " a", escaped as mountinfo does */
			p += sprintf(p, "\\040a");
		p += sprintf(p, " rw");
		for (int i = 0; i < 40; i++)
			p += sprintf(p, " shared:%d", i);
		sprintf(p, " - ext4 /dev/loop2 rw,nodelalloc\n");
		CHECK(parse_mountinfo_line(l, &e) && e.minor == 2 && !strcmp(e.fstype, "ext4") &&
		      !strcmp(e.super_opts, "rw,nodelalloc") && strlen(e.mountpoint) == 1 + 10000 &&
		      e.mountpoint[1] == ' ' && e.mountpoint[2] == 'a');
		free(l);
	}
}

static void test_state_line(void)
{
	char ok[] = "loop3 7:3 0\n", one[] = "sdb 8:16 1", bad1[] = "loop3 7:3", bad2[] = "loop3 7:3 2",
	     bad3[] = "# stablepage-trace enforce state", bad4[] = "loop3 x 0", bad5[] = "a 7:3 0 extra";
	const char *name;
	uint32_t dev;
	int v;

	CHECK(parse_state_line(ok, &name, &dev, &v) && !strcmp(name, "loop3") && dev == spt_kdev(7, 3) &&
	      v == 0);
	CHECK(parse_state_line(one, &name, &dev, &v) && v == 1 && dev == spt_kdev(8, 16));
	CHECK(!parse_state_line(bad1, &name, &dev, &v));
	CHECK(!parse_state_line(bad2, &name, &dev, &v));
	CHECK(!parse_state_line(bad3, &name, &dev, &v));
	CHECK(!parse_state_line(bad4, &name, &dev, &v));
	CHECK(!parse_state_line(bad5, &name, &dev, &v));
	{
		/* range-checked before narrowing: 2^32 + 1 is no 1 */
		char wrap[] = "loop3 7:3 4294967297", neg[] = "loop3 7:3 -1", sp[] = "loop3 7:3 +1";

		CHECK(!parse_state_line(wrap, &name, &dev, &v));
		CHECK(!parse_state_line(neg, &name, &dev, &v));
		CHECK(!parse_state_line(sp, &name, &dev, &v));
	}
}

static void test_fdinfo_memlock(void)
{
	const char *map = "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\nmap_type:\t1\n"
			  "key_size:\t4\nvalue_size:\t8\nmax_entries:\t1\nmap_flags:\t0x0\n"
			  "map_extra:\t0x0\nmemlock:\t8105744\nmap_id:\t42\nfrozen:\t0\n";
	uint64_t bytes = 0;

	CHECK(parse_fdinfo_memlock(map, &bytes) && bytes == 8105744);
	CHECK(parse_fdinfo_memlock("memlock:\t4096", &bytes) && bytes == 4096);
	CHECK(!parse_fdinfo_memlock("pos:\t0\nflags:\t02\n", &bytes));
	CHECK(!parse_fdinfo_memlock("memlock:\t-1\n", &bytes));
	CHECK(!parse_fdinfo_memlock("memlock:\t12k\n", &bytes));
	CHECK(!parse_fdinfo_memlock("memlock:\t99999999999999999999999\n", &bytes));
	CHECK(!parse_fdinfo_memlock("", &bytes));
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
	/* escapes between and at the ends of plain runs */
	s = capture(json_of, "\t/tmp/a b\x7f\r\"");
	CHECK(!strcmp(s, "\"\\t/tmp/a b\\u007f\\r\\\"\""));
	free(s);
	s = capture(json_of, "");
	CHECK(!strcmp(s, "\"\""));
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
	percpu[0].failed_after_violation = 2;
	percpu[1].failed_after_violation = 3;
	totals_sum(&sum, percpu, 2);
	CHECK(sum.failed_after_violation == 5);
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

/* Per-CPU device counts add to the device rows the kernel counted in; free
 * slots add nothing; a device with no row gets one. */
static void test_fold_dev_counts(void)
{
	struct spt_dev_counts c[4] = {
		{ .dev = 1, .waits = { 1, 2, 0, 3 }, .stable_dirtied = 4 },
		{ 0 },
		{ .dev = 1, .waits = { 0, 5, 0, 0 }, .stable_dirtied = 1 },
		{ .dev = 7, .waits = { 0, 0, 2, 0 } },
	};
	struct spt_summary s = {};

	s.devs = calloc(1, sizeof(*s.devs));
	s.devs[0].dev = 1, s.devs[0].s.waits[SPT_KIND_WRITE] = 10, s.devs[0].s.stable_dirtied = 2;
	strcpy(s.devs[0].s.fstype, "ext4");
	s.ndevs = 1;
	CHECK(fold_dev_counts(&s, c, 4) == 0);
	CHECK(s.ndevs == 2 && s.devs[0].dev == 1 && s.devs[1].dev == 7);
	CHECK(s.devs[0].s.waits[0] == 1 && s.devs[0].s.waits[1] == 17 && s.devs[0].s.waits[3] == 3);
	CHECK(s.devs[0].s.stable_dirtied == 7 && !strcmp(s.devs[0].s.fstype, "ext4"));
	CHECK(s.devs[1].s.waits[2] == 2 && kinds_total(s.devs[1].s.waits) == 2 &&
	      !s.devs[1].s.stable_dirtied && !s.devs[1].s.fstype[0]);
	free(s.devs);
}

/* Writer rows fold into files, devices and processes; a device or process
 * the kernel had no row for gets one; one that overflowed keeps its count. */
static void test_fold_writers(void)
{
	struct writer_row rows[4] = {
		{ .key = { .dev = 1, .tgid = 10, .ino = 5 }, .s = { .violations = { 1, 2, 0 }, .last_ns = 300, .generation = 7 } },
		{ .key = { .dev = 1, .tgid = 20, .ino = 5 }, .s = { .violations = { 0, 4, 0 }, .last_ns = 900, .generation = 7, .failed_after_violation = 2 } },
		{ .key = { .dev = 1, .tgid = 10, .ino = 6 }, .s = { .violations = { 0, 0, 3 }, .last_ns = 100 } },
		{ .key = { .dev = 2, .tgid = 30, .ino = 5 }, .s = { .violations = { 1, 0, 0 }, .last_ns = 50, .failed_after_violation = 1 } },
	};
	struct spt_summary s = {};
	struct proc_row *p10 = NULL, *p20 = NULL, *p30 = NULL;
	struct dev_row *d1 = NULL, *d2 = NULL;

	s.devs = calloc(1, sizeof(*s.devs));
	s.devs[0].dev = 1, s.devs[0].s.violations[SPT_KIND_WRITE] = 5; /* overflowed */
	s.devs[0].s.failed_after_violation = 4;
	s.ndevs = 1;
	s.procs = calloc(2, sizeof(*s.procs));
	s.procs[0].pid = 20, strcpy(s.procs[0].s.comm, "b");
	s.procs[1].pid = 10, strcpy(s.procs[1].s.comm, "a");
	s.nprocs = 2;
	CHECK(fold_writers(&s, rows, 4) == 0);

	CHECK(s.nfiles == 3);
	sort_files(s.files, s.nfiles);
	CHECK(s.files[0].key.dev == 1 && s.files[0].key.ino == 5);
	CHECK(kinds_total(s.files[0].s.violations) == 7 && s.files[0].s.violations[1] == 6);
	CHECK(s.files[0].s.last_pid == 20 && s.files[0].s.generation == 7);
	CHECK(s.files[1].key.ino == 6 && s.files[1].s.violations[2] == 3 && s.files[1].s.last_pid == 10);
	CHECK(s.files[2].key.dev == 2 && s.files[2].s.last_pid == 30);
	CHECK(s.files[0].s.failed_after_violation == 2 && !s.files[1].s.failed_after_violation &&
	      s.files[2].s.failed_after_violation == 1);

	CHECK(s.ndevs == 2 && s.nprocs == 3);
	for (size_t i = 0; i < s.ndevs; i++)
		*(s.devs[i].dev == 1 ? &d1 : &d2) = &s.devs[i];
	for (size_t i = 0; i < s.nprocs; i++)
		*(s.procs[i].pid == 10 ? &p10 : s.procs[i].pid == 20 ? &p20 : &p30) = &s.procs[i];
	CHECK(d1 && d2 && p10 && p20 && p30);
	CHECK(d1->s.violations[0] == 1 && d1->s.violations[1] == 11 && d1->s.violations[2] == 3);
	CHECK(kinds_total(d2->s.violations) == 1);
	CHECK(kinds_total(p10->s.violations) == 6 && !strcmp(p10->s.comm, "a"));
	CHECK(p20->s.violations[1] == 4 && !strcmp(p20->s.comm, "b"));
	CHECK(p30->s.violations[0] == 1 && !p30->s.comm[0]);
	/* Failed writes fold as violations do, onto what the kernel counted. */
	CHECK(d1->s.failed_after_violation == 6 && d2->s.failed_after_violation == 1);
	CHECK(p20->s.failed_after_violation == 2 && p30->s.failed_after_violation == 1 &&
	      !p10->s.failed_after_violation);
	free(s.devs);
	free(s.procs);
	free(s.files);
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
	CHECK(strstr(out, "\"violations\":{\"mmap\":2,\"write\":2,\"other\":0,\"metadata\":0}") != NULL);
	CHECK(strstr(out, "\"comm\":\"a\\\"b\"") != NULL);
	CHECK(strstr(out, "\"pid\":8") == NULL); /* --top 1 */
	CHECK(strstr(out, "\"duration_s\":1.500,\"paused_s\":0.000,") != NULL);
	CHECK(out[strlen(out) - 1] == '\n');
	free(out);
}

static void summary_text(FILE *f, const void *arg)
{
	print_summary_text(f, arg, 5);
}

/* A paused run: the time traced is said, and shares of it are over it. */
static void test_summary_text_paused(void)
{
	struct proc_row proc = { .pid = 7, .s = { .would_stall_ns = 500000000, .comm = "db" } };
	struct spt_summary s = { .duration_s = 10, .paused_s = 8, .procs = &proc, .nprocs = 1 };
	char *out = capture(summary_text, &s);

	CHECK(strstr(out, "\nTraced 2.0 s (8.0 s paused of 10.0 s). Violations: 0 ") != NULL);
	CHECK(strstr(out, "for 0.500 thread-s over 2.0 s: 25.0%\n") != NULL);
	free(out);
	s.paused_s = 0;
	out = capture(summary_text, &s);
	CHECK(strstr(out, "\nTraced 10.0 s. Violations: 0 ") != NULL);
	CHECK(strstr(out, "for 0.500 thread-s over 10.0 s: 5.0%\n") != NULL);
	free(out);
}

/* A summary with a row of every table: two devices, three processes, two
 * files (one path unresolved), a histogram of each type. */
static void summary_with_rows(struct spt_summary *s, struct dev_row devs[2],
			      struct proc_row procs[3], struct file_row files[2],
			      struct hist_row hists[2])
{
	memset(s, 0, sizeof(*s));
	memset(devs, 0, 2 * sizeof(*devs));
	memset(procs, 0, 3 * sizeof(*procs));
	memset(files, 0, 2 * sizeof(*files));
	memset(hists, 0, 2 * sizeof(*hists));
	s->duration_s = 3;
	s->totals.violations[SPT_KIND_MMAP] = 4;
	s->totals.waits[SPT_KIND_WRITE] = 2;
	s->totals.waits[SPT_KIND_OTHER] = 1;
	s->totals.agg_dropped = 6;
	s->totals.mkwrite_io_ended = 7;
	s->totals.writeback_untimed = 8;
	s->totals.failed_after_violation = 9;
	devs[0].dev = 7 << 20 | 3;
	strcpy(devs[0].s.devname, "loop3");
	strcpy(devs[0].s.fstype, "ext4");
	devs[0].s.stable = 1;
	devs[0].s.violations[SPT_KIND_MMAP] = 4;
	devs[0].s.waits[SPT_KIND_WRITE] = 2;
	devs[0].s.waits[SPT_KIND_OTHER] = 1;
	devs[0].s.stable_dirtied = 5;
	devs[0].s.failed_after_violation = 9;
	devs[1].dev = 8 << 20 | 16;
	strcpy(devs[1].s.devname, "sdb");
	strcpy(devs[1].s.fstype, "xfs");
	for (int i = 0; i < 3; i++) {
		procs[i].pid = 100 + i;
		snprintf(procs[i].s.comm, sizeof(procs[i].s.comm), "p%d", i);
		procs[i].s.violations[SPT_KIND_MMAP] = 3 - i;
	}
	procs[0].s.waits[SPT_KIND_MMAP] = 2;
	files[0].key.dev = devs[0].dev, files[0].key.ino = 12;
	files[0].s.violations[SPT_KIND_MMAP] = 3, files[0].s.last_pid = 100;
	files[0].path = "/mnt/a";
	files[1].key.dev = devs[0].dev, files[1].key.ino = 13;
	files[1].s.violations[SPT_KIND_MMAP] = 1, files[1].s.last_pid = 101;
	hists[0].key = (struct spt_hist_key){ .dev = devs[0].dev, .type = SPT_HIST_WRITEBACK };
	strcpy(hists[0].device, "loop3");
	hists[0].h.slots[1] = 2, hists[0].h.count = 2, hists[0].h.sum_ns = 5000;
	hists[1].key = (struct spt_hist_key){ .dev = devs[0].dev, .type = SPT_HIST_WOULD_STALL,
					      .kind = SPT_KIND_MMAP };
	strcpy(hists[1].device, "loop3");
	hists[1].h.slots[0] = 1, hists[1].h.count = 1, hists[1].h.sum_ns = 900;
	s->devs = devs, s->ndevs = 2;
	s->procs = procs, s->nprocs = 3;
	s->files = files, s->nfiles = 2;
	s->hists = hists, s->nhists = 2;
}

static void summary_text_top2(FILE *f, const void *arg)
{
	print_summary_text(f, arg, 2);
}

/* The text summary's tables: every device, the --top processes and files;
 * the lines said only when they count (rows dropped, fentry's counters). */
static void test_summary_text_tables(void)
{
	struct dev_row devs[2];
	struct proc_row procs[3];
	struct file_row files[2];
	struct hist_row hists[2];
	struct spt_summary s;
	char *out;

	summary_with_rows(&s, devs, procs, files, hists);
	out = capture(summary_text_top2, &s);
	CHECK(strstr(out, "\nTraced 3.0 s. Violations: 4 (mmap 4, write 0, other 0, metadata 0)\n"
			  "Stable waits: 2 (writers slept until writeback ended); other writeback waits: 1\n") != NULL);
	CHECK(strstr(out, "\nPer-process/file table full, rows dropped (totals exact): 6\n") != NULL);
	CHECK(strstr(out, "\nViolations whose write then failed (device error after write() "
			  "succeeded): 9\n") != NULL);
	CHECK(strstr(out, "\nWould-stall timed: 1, untimed: 0, I/O still in flight: 0; "
			  "waits timed: 0, untimed: 0, still waiting: 0\n") != NULL);
	CHECK(strstr(out, "page_mkwrite") == NULL); /* attach mode unknown */
	CHECK(strstr(out, "\n\nDEVICE     MAJ:MIN  FSTYPE   STABLE       MMAP      WRITE      OTHER   METADATA STABLE_WAITS\n"
			  "loop3      7:3      ext4     yes             4          0          0          0            2\n"
			  "sdb        8:16     xfs      no              0          0          0          0            0\n"
			  "\n    PID COMM                   MMAP      WRITE      OTHER   METADATA STABLE_WAITS\n"
			  "    100 p0                        3          0          0          0            2\n"
			  "    101 p1                        2          0          0          0            0\n"
			  "\nMAJ:MIN         INO       MMAP      WRITE      OTHER   METADATA  PATH\n"
			  "7:3              12          3          0          0          0  /mnt/a\n"
			  "7:3              13          1          0          0          0  (path unresolved)\n") != NULL);
	CHECK(out[strlen(out) - 1] == '\n' && strstr(out, "p2") == NULL); /* --top 2 */
	free(out);

	s.attach_mode = "fentry";
	s.totals.agg_dropped = 0;
	s.ndevs = s.nprocs = s.nfiles = 0;
	out = capture(summary_text_top2, &s);
	CHECK(strstr(out, "\nDirtied under writeback in page_mkwrite, I/O ended before the store: 7; "
			  "folio writebacks untimed: 8\n") != NULL);
	CHECK(strstr(out, "rows dropped") == NULL);
	CHECK(strstr(out, "DEVICE") == NULL && strstr(out, "PID") == NULL &&
	      strstr(out, "INO") == NULL); /* no rows, no tables */
	free(out);
}

static void summary_json_top1(FILE *f, const void *arg)
{
	print_summary_json(f, arg, 1);
}

/* The JSON summary's arrays, in order: every device, the --top processes and
 * files, every histogram with all its slots. */
static void test_summary_json_rows(void)
{
	struct dev_row devs[2];
	struct proc_row procs[3];
	struct file_row files[2];
	struct hist_row hists[2];
	struct spt_summary s;
	char *out;

	summary_with_rows(&s, devs, procs, files, hists);
	s.interval = true;
	s.attach_mode = "tracepoint";
	out = capture(summary_json_top1, &s);
	CHECK(strstr(out, "{\"type\":\"interval\",\"attach_mode\":\"tracepoint\",\"duration_s\":3.000,") == out);
	CHECK(strstr(out, ",\"violations_total\":4,\"stable_waits\":2,\"other_waits\":1,"
			  "\"stable_dirtied\":0,\"events_lost\":0,\"rows_dropped\":6,"
			  "\"would_stall_untimed\":0,\"would_stall_pending\":0,\"wait_untimed\":0,"
			  "\"waits_pending\":0,\"mkwrite_io_ended\":7,\"writeback_untimed\":8,"
			  "\"failed_after_violation\":9,"
			  "\"devices\":[{\"dev\":\"7:3\",\"devname\":\"loop3\",\"fstype\":\"ext4\","
			  "\"stable_writes\":true,\"violations\":{\"mmap\":4,\"write\":0,\"other\":0,\"metadata\":0},"
			  "\"stable_waits\":2,\"other_waits\":1,\"stable_dirtied\":5,"
			  "\"failed_after_violation\":9},"
			  "{\"dev\":\"8:16\",\"devname\":\"sdb\",\"fstype\":\"xfs\",\"stable_writes\":false,") != NULL);
	CHECK(strstr(out, "],\"top_processes\":[{\"pid\":100,\"comm\":\"p0\",\"violations\":"
			  "{\"mmap\":3,\"write\":0,\"other\":0,\"metadata\":0},\"total\":3,\"stable_waits\":2,"
			  "\"would_stall_ns\":0,\"stable_wait_ns\":0,\"failed_after_violation\":0}],\"top_cgroups\":[],"
			  "\"cgroups_total\":0,\"cgroups_unattributed\":4,\"top_files\":[{\"dev\":\"7:3\","
			  "\"ino\":12,\"path\":\"/mnt/a\",\"violations\":{\"mmap\":3,\"write\":0,\"other\":0,\"metadata\":0},"
			  "\"total\":3,\"last_pid\":100,\"failed_after_violation\":0}],\"histograms\":[{\"name\":\"writeback\","
			  "\"dev\":\"7:3\",\"device\":\"loop3\",\"kind\":\"\",\"count\":2,\"sum_ns\":5000,"
			  "\"usecs_log2\":[0,2,0,") != NULL);
	CHECK(strstr(out, ",0]},{\"name\":\"would-stall\",\"dev\":\"7:3\",\"device\":\"loop3\","
			  "\"kind\":\"mmap\",\"count\":1,\"sum_ns\":900,\"usecs_log2\":[1,0,") != NULL);
	CHECK(strlen(out) > 7 && !strcmp(out + strlen(out) - 7, ",0]}]}\n"));
	free(out);

	s.ndevs = s.nprocs = s.nfiles = s.nhists = 0;
	s.interval = false;
	s.attach_mode = NULL;
	out = capture(summary_json_top1, &s);
	CHECK(strstr(out, "{\"type\":\"summary\",\"duration_s\":") == out);
	CHECK(strstr(out, ",\"devices\":[],\"top_processes\":[],\"top_cgroups\":[],"
			  "\"cgroups_total\":0,\"cgroups_unattributed\":4,\"top_files\":[],"
			  "\"histograms\":[]}\n") != NULL);
	free(out);
}

static void label_of(FILE *f, const void *s)
{
	prom_label_value(f, s);
}

static void test_prom_escape(void)
{
	char *out;

	out = capture(label_of, "a\"b\\c\nd");
	CHECK(!strcmp(out, "\"a\\\"b\\\\c\\nd\""));
	free(out);
	out = capture(label_of, "caf\xc3\xa9");	/* valid UTF-8 kept */
	CHECK(!strcmp(out, "\"caf\xc3\xa9\""));
	free(out);
	out = capture(label_of, "x\xff\xc3y\xed\xa0\x80"); /* invalid, truncated, surrogate */
	CHECK(!strcmp(out, "\"x??y???\""));
	free(out);
}

static void log2_hist_of(FILE *f, const void *slots)
{
	print_log2_hist(f, slots);
}

static void test_log2_hist(void)
{
	__u64 slots[SPT_HIST_SLOTS] = { [0] = 1, [2] = 4, [3] = 2 };
	char *out = capture(log2_hist_of, slots);

	CHECK(strstr(out, "usecs               : count    distribution\n") != NULL);
	CHECK(strstr(out, "         0 -> 1          : 1        |**********                              |\n"));
	CHECK(strstr(out, "         4 -> 7          : 4        |****************************************|\n"));
	CHECK(strstr(out, "         8 -> 15         : 2        |********************                    |\n"));
	CHECK(!strstr(out, "16 -> 31")); /* stops at the last non-empty slot */
	free(out);
	memset(slots, 0, sizeof(slots));
	slots[SPT_HIST_SLOTS - 1] = 1;
	out = capture(log2_hist_of, slots);
	CHECK(strstr(out, "134217728 -> ...        : 1") != NULL);
	free(out);

	struct spt_hist h = { .slots = { [0] = 1, [2] = 4, [SPT_HIST_SLOTS - 1] = 2 }, .count = 99 };

	hist_set_count(&h);
	CHECK(h.count == 7);
}

static void prom_of(FILE *f, const void *s)
{
	const struct prom_info info = { .version = "1.2", .attach_mode = "tracepoint",
					.kernel = "6.1.0", .top_comms = 1 };

	prom_format(f, s, &info);
}

/* The value of the sample line starting with "prefix ". */
static double sample(const char *text, const char *prefix)
{
	const char *p = text;
	size_t n = strlen(prefix);

	while ((p = strstr(p, prefix))) {
		if ((p == text || p[-1] == '\n') && p[n] == ' ')
			return strtod(p + n + 1, NULL);
		p += n;
	}
	return -1;
}

static void test_prom_format(void)
{
	struct dev_row dev = { .dev = 7 << 20, .device = "loop0" };
	struct proc_row procs[3] = {};
	struct hist_row hists[3] = {};
	struct spt_summary s = { .devs = &dev, .ndevs = 1, .procs = procs, .nprocs = 3,
				 .hists = hists, .nhists = 3, .paused_s = 1.5, .maps_bytes = 8105744 };
	char *out;

	strcpy(dev.s.fstype, "ext4");
	dev.s.violations[SPT_KIND_MMAP] = 5;
	dev.s.waits[SPT_KIND_WRITE] = 2;
	dev.s.waits[SPT_KIND_OTHER] = 9;
	strcpy(procs[0].s.comm, "db");
	procs[0].s.violations[SPT_KIND_WRITE] = 3;
	strcpy(procs[1].s.comm, "db");
	procs[1].s.violations[SPT_KIND_MMAP] = 2;
	strcpy(procs[2].s.comm, "other");
	procs[2].s.violations[SPT_KIND_MMAP] = 4;
	/* Two stable-wait rows (mmap, write) on one device make one series. */
	for (int i = 0; i < 2; i++) {
		hists[i].key = (struct spt_hist_key){ .dev = dev.dev, .type = SPT_HIST_WAIT, .kind = i };
		strcpy(hists[i].device, "loop0");
		hists[i].h.slots[3] = 2; /* 8..15 us */
		hists[i].h.slots[SPT_HIST_SLOTS - 1] = 1;
		hists[i].h.count = 3;
		hists[i].h.sum_ns = 1000000000ULL + 20000;
	}
	hists[2].key = (struct spt_hist_key){ .dev = dev.dev, .type = SPT_HIST_WOULD_STALL,
					      .kind = SPT_KIND_MMAP };
	strcpy(hists[2].device, "loop0");
	hists[2].h.slots[0] = 1;
	hists[2].h.count = 1;
	hists[2].h.sum_ns = 500;
	sort_hists(hists, 3);

	out = capture(prom_of, &s);
	CHECK(strstr(out, "# TYPE stablepage_violations_total counter\n") != NULL);
	CHECK(sample(out, "stablepage_violations_total{device=\"loop0\",fstype=\"ext4\",kind=\"mmap\"}") == 5);
	CHECK(sample(out, "stablepage_stable_waits_total{device=\"loop0\"}") == 2);
	CHECK(sample(out, "stablepage_other_waits_total{device=\"loop0\"}") == 9);
	CHECK(sample(out, "stablepage_bpf_maps_bytes") == 8105744);
	CHECK(sample(out, "stablepage_paused_seconds_total") == 1.5);
	CHECK(sample(out, "stablepage_build_info{version=\"1.2\",attach_mode=\"tracepoint\",kernel=\"6.1.0\"}") == 1);
	/* Buckets are cumulative; le=16us ends slot 3; +Inf == _count. */
	CHECK(sample(out, "stablepage_stable_wait_seconds_bucket{device=\"loop0\",le=\"8e-06\"}") == 0);
	CHECK(sample(out, "stablepage_stable_wait_seconds_bucket{device=\"loop0\",le=\"1.6e-05\"}") == 4);
	CHECK(sample(out, "stablepage_stable_wait_seconds_bucket{device=\"loop0\",le=\"134.217728\"}") == 4);
	CHECK(sample(out, "stablepage_stable_wait_seconds_bucket{device=\"loop0\",le=\"+Inf\"}") == 6);
	CHECK(sample(out, "stablepage_stable_wait_seconds_count{device=\"loop0\"}") == 6);
	CHECK(sample(out, "stablepage_stable_wait_seconds_sum{device=\"loop0\"}") == 2.00004);
	CHECK(sample(out, "stablepage_would_stall_seconds_bucket{device=\"loop0\",kind=\"mmap\",le=\"2e-06\"}") == 1);
	CHECK(sample(out, "stablepage_would_stall_seconds_sum{device=\"loop0\",kind=\"mmap\"}") == 5e-7);
	CHECK(!strstr(out, "stablepage_other_wait_seconds_bucket")); /* no such samples */
	/* --prom-top-comm 1: comms summed over processes, the busiest only. */
	CHECK(sample(out, "stablepage_comm_violations_total{comm=\"db\"}") == 5);
	CHECK(!strstr(out, "comm=\"other\""));
	free(out);

	/* The other per-device families and the run's counters; every kind has a
	 * violations series; the families in docs/metrics.md's order. */
	dev.s.stable = 1;
	dev.s.failed_after_violation = 12;
	s.totals.events_lost = 11;
	out = capture(prom_of, &s);
	CHECK(sample(out, "stablepage_failed_after_violation_total{device=\"loop0\",fstype=\"ext4\"}") == 12);
	CHECK(sample(out, "stablepage_violations_total{device=\"loop0\",fstype=\"ext4\",kind=\"other\"}") == 0);
	CHECK(sample(out, "stablepage_stable_writes{device=\"loop0\",fstype=\"ext4\"}") == 1);
	CHECK(sample(out, "stablepage_events_lost_total") == 11);
	CHECK(strstr(out, "# HELP stablepage_build_info ") == out);
	{
		static const char *const order[] = {
			"# TYPE stablepage_build_info gauge\n",
			"# TYPE stablepage_violations_total counter\n",
			"# TYPE stablepage_stable_waits_total counter\n",
			"# TYPE stablepage_other_waits_total counter\n",
			"# TYPE stablepage_failed_after_violation_total counter\n",
			"# TYPE stablepage_stable_writes gauge\n",
			"# TYPE stablepage_events_lost_total counter\n",
			"# TYPE stablepage_paused_seconds_total counter\n",
			"# TYPE stablepage_stable_wait_seconds histogram\n",
			"# TYPE stablepage_would_stall_seconds histogram\n",
			"# TYPE stablepage_comm_violations_total counter\n",
		};
		const char *at = out;

		for (size_t i = 0; i < sizeof(order) / sizeof(order[0]) && at; i++)
			at = strstr(at, order[i]);
		CHECK(at != NULL);
	}
	free(out);
}

static void prom_no_top(FILE *f, const void *s)
{
	const struct prom_info info = { .version = "1.2", .attach_mode = "fentry", .kernel = "6.1.0" };

	prom_format(f, s, &info);
}

/* No device and no histogram: the counters' families are there, without
 * series; histogram families only once they have a row; no comm family
 * without --prom-top-comm. */
static void test_prom_empty(void)
{
	struct spt_summary s = {};
	char *out = capture(prom_no_top, &s);

	CHECK(strstr(out, "# HELP stablepage_violations_total ") != NULL);
	CHECK(strstr(out, "# TYPE stablepage_stable_writes gauge\n# HELP stablepage_events_lost_total ") != NULL);
	CHECK(strstr(out, "stablepage_violations_total{") == NULL);
	CHECK(strstr(out, "_seconds_bucket") == NULL && strstr(out, "histogram") == NULL);
	CHECK(strstr(out, "comm_violations") == NULL);
	CHECK(strstr(out, "\nstablepage_paused_seconds_total 0.000\n") != NULL);
	CHECK(out[strlen(out) - 1] == '\n');
	free(out);
}

/* enforce (BPF): when the hold tracker resumes whom. */
static __u32 resumed[16], forgotten[16];
static int nresumed, nforgotten;

static char hold_calls[64]; /* 'r' per resume, 'f' per forget, in order */

/* pid 66 is gone (ESRCH, no failure), pid 77 another user's (EPERM). */
static int fake_resume(__u32 pid, void *ctx)
{
	(void)ctx;
	resumed[nresumed++ % 16] = pid;
	strncat(hold_calls, "r", sizeof(hold_calls) - strlen(hold_calls) - 1);
	return pid == 66 ? -ESRCH : pid == 77 ? -EPERM : 0;
}

static void fake_forget(__u32 tid, void *ctx)
{
	(void)ctx;
	forgotten[nforgotten++ % 16] = tid;
	strncat(hold_calls, "f", sizeof(hold_calls) - strlen(hold_calls) - 1);
}

static struct spt_hold_event hold_ev(__u32 type, __u64 folio, __u64 ts, __u32 pid, __u32 tid,
				     __u32 kind)
{
	struct spt_hold_event e = { .ts_ns = ts, .first_ts_ns = ts, .folio = folio, .type = type,
				    .kind = kind, .pid = pid, .tid = tid };

	strcpy(e.comm, "w");
	return e;
}

static void test_hold_tracker(void)
{
	static struct hold_tracker h;
	struct hold_ops ops = { .resume = fake_resume, .forget = fake_forget };
	struct spt_hold_event e;
	const __u64 ms = 1000000;

	hold_init(&h, 1000 * ms, &ops);
	CHECK(hold_tick(&h, 0) == -1);
	/* Two threads of pid 10 held on two folios: the group goes on only
	 * when both folios are written back. */
	e = hold_ev(SPT_HOLD_START, 0xa, 1 * ms, 10, 11, SPT_KIND_WRITE);
	hold_event(&h, &e, 1 * ms);
	e = hold_ev(SPT_HOLD_START, 0xb, 2 * ms, 10, 12, SPT_KIND_MMAP);
	hold_event(&h, &e, 2 * ms);
	e = hold_ev(SPT_HOLD_RELEASE, 0xa, 5 * ms, 0, 0, 0);
	hold_event(&h, &e, 5 * ms);
	CHECK(nresumed == 0 && h.nheld == 1);
	e = hold_ev(SPT_HOLD_RELEASE, 0xb, 7 * ms, 0, 0, 0);
	hold_event(&h, &e, 7 * ms);
	CHECK(nresumed == 1 && resumed[0] == 10 && h.nheld == 0);
	/* mmap holds are dropped from the BPF table by user space; write ones
	 * by BPF; the entry before the SIGCONT (no newer hold can exist yet). */
	CHECK(nforgotten == 1 && forgotten[0] == 12);
	CHECK(!strcmp(hold_calls, "fr"));
	CHECK(h.resumed_at_writeback_end == 2 && h.max_stop_ns == 5 * ms);
	/* A release that arrives before its hold: resumed at once. */
	e = hold_ev(SPT_HOLD_RELEASE, 0xc, 20 * ms, 0, 0, 0);
	hold_event(&h, &e, 20 * ms);
	e = hold_ev(SPT_HOLD_START, 0xc, 19 * ms, 30, 30, SPT_KIND_WRITE);
	hold_event(&h, &e, 21 * ms);
	CHECK(nresumed == 2 && resumed[1] == 30 && h.nheld == 0);
	/* An older release of the same folio does not count. */
	e = hold_ev(SPT_HOLD_START, 0xc, 30 * ms, 31, 31, SPT_KIND_WRITE);
	hold_event(&h, &e, 30 * ms);
	CHECK(nresumed == 2 && h.nheld == 1);
	/* --max-delay from the first hold of the write, not from this stop. */
	CHECK(hold_tick(&h, 500 * ms) == 530);
	CHECK(hold_tick(&h, 1030 * ms) == -1);
	CHECK(nresumed == 3 && resumed[2] == 31 && h.resumed_at_max_delay == 1);
	/* At exit everyone goes on. */
	e = hold_ev(SPT_HOLD_START, 0xd, 2000 * ms, 40, 41, SPT_KIND_MMAP);
	hold_event(&h, &e, 2000 * ms);
	hold_resume_all(&h, 2001 * ms);
	CHECK(nresumed == 4 && resumed[3] == 40 && h.resumed_at_exit == 1 && h.stops == 5);
	CHECK(h.npids == 4 && h.pids[0].pid == 10 && h.pids[0].holds == 2);
	/* A resume that fails is counted, one to a group that is gone is not. */
	CHECK(h.resume_failed == 0);
	e = hold_ev(SPT_HOLD_START, 0xe, 3000 * ms, 66, 66, SPT_KIND_WRITE);
	hold_event(&h, &e, 3000 * ms);
	e = hold_ev(SPT_HOLD_START, 0xe, 3000 * ms, 77, 77, SPT_KIND_WRITE);
	hold_event(&h, &e, 3000 * ms);
	e = hold_ev(SPT_HOLD_RELEASE, 0xe, 3001 * ms, 0, 0, 0);
	hold_event(&h, &e, 3001 * ms);
	CHECK(nresumed == 6 && h.nheld == 0 && h.resume_failed == 1);
}

/* Options: argv as the shell would pass it (argp may permute it). The
 * options point into argv: valid until the next call. */
static int parse(struct options *o, enum spt_command cmd, const char *line)
{
	static char buf[512];
	char *argv[32] = { "stablepage-trace" };
	int argc = 1;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *tok = strtok(buf, " "); tok && argc < 31; tok = strtok(NULL, " "))
		argv[argc++] = tok;
	options_init(o, cmd);
	return options_parse(o, argc, argv) || options_check(o);
}

static void test_options(void)
{
	static struct options o;
	char line[64];

	CHECK(!parse(&o, CMD_TRACE, "") && o.cmd == CMD_TRACE && o.top == 10 &&
	      o.attach_mode == ATTACH_AUTO && o.action == SPT_ACTION_DELAY && o.max_delay == 1.0);
	CHECK(!parse(&o, CMD_TRACE, "-d 10 -q --json --hist -i 500ms --top 3") && o.duration == 10 &&
	      o.quiet && o.json && o.hist && o.interval == 0.5 && o.top == 3);
	CHECK(!parse(&o, CMD_TRACE, "--attach-mode fentry") && o.attach_mode == ATTACH_FENTRY);
	CHECK(!parse(&o, CMD_TRACE, "--attach-mode=tracepoint") && o.attach_mode == ATTACH_TRACEPOINT);
	CHECK(parse(&o, CMD_TRACE, "--attach-mode bogus") &&
	      !strcmp(o.error, "invalid --attach-mode 'bogus': auto, tracepoint or fentry"));
	CHECK(parse(&o, CMD_TRACE, "-d soon -q") &&
	      !strcmp(o.error, "invalid duration 'soon': 1ms to 365 days, e.g. 10, 10s, 2m or 500ms"));
	CHECK(parse(&o, CMD_TRACE, "-q --no-such-option") &&
	      !strcmp(o.error, "unknown option or missing value: '--no-such-option'"));
	CHECK(parse(&o, CMD_TRACE, "-d") && !strcmp(o.error, "unknown option or missing value: '-d'"));
	CHECK(parse(&o, CMD_TRACE, "foo") && strstr(o.error, "unexpected word 'foo'"));
	CHECK(parse(&o, CMD_TRACE, "--comm 0123456789abcdef") && strstr(o.error, "invalid comm"));
	snprintf(line, sizeof(line), "-p %d -p %d", getpid(), getpid());
	CHECK(!parse(&o, CMD_TRACE, line) && o.npids == 2 && o.pids[1] == (uint32_t)getpid());
	CHECK(parse(&o, CMD_TRACE, "-p 0") && strstr(o.error, "invalid pid '0'"));
	/* The enforce options: only with enforce, and together. */
	CHECK(parse(&o, CMD_TRACE, "--action kill") && strstr(o.error, "belong to 'stablepage-trace enforce'"));
	CHECK(parse(&o, CMD_FEATURES, "--restore") && strstr(o.error, "belong to"));
	CHECK(!parse(&o, CMD_ENFORCE, "--restore") && o.cmd == CMD_RESTORE);
	CHECK(parse(&o, CMD_ENFORCE, "") && strstr(o.error, "enforce needs --native --dev DEV"));
	CHECK(parse(&o, CMD_ENFORCE, "--native") && strstr(o.error, "needs --dev DEV"));
	CHECK(parse(&o, CMD_ENFORCE, "--comm x --remount") &&
	      !strcmp(o.error, "--remount and --persist belong to enforce --native"));
	CHECK(!parse(&o, CMD_ENFORCE, "--comm pg --action kill --max-delay 200ms") &&
	      o.cmd == CMD_ENFORCE && o.action == SPT_ACTION_KILL && o.max_delay == 0.2);
	CHECK(parse(&o, CMD_ENFORCE, "--comm pg --action stop") &&
	      !strcmp(o.error, "invalid --action 'stop': delay, kill or log"));
	CHECK(parse(&o, CMD_ENFORCE, "--comm pg --max-delay 61") && strstr(o.error, "--max-delay '61'"));
	CHECK(!strcmp(attach_mode_name(ATTACH_FENTRY), "fentry") &&
	      !strcmp(action_name(SPT_ACTION_LOG), "log") &&
	      !strcmp(write_hold_name(WRITE_HOLD_FMOD_RET), "fmod_ret"));
}

/* Kernels as probing would describe them. */
static struct spt_features tracepoint_kernel(void)
{
	struct spt_features f = { .fentry_loads = false };

	snprintf(f.fentry_fail, sizeof(f.fentry_fail), "load: Operation not permitted");
	return f;
}

/* Is name one of the space-separated words of list? */
static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
	return false;
}

/* Trampolines load; every listed function present but those named in
 * absent ("page_mkwrite": none of the page_mkwrite functions). */
static struct spt_features fentry_kernel(const char *absent)
{
	struct spt_features f = { .fentry_loads = true };

	for (size_t i = 0; i < SPT_NFENTRY; i++)
		f.fentry_present[i] = !listed(absent, spt_fentry_points[i].func) &&
				      !(listed(absent, "page_mkwrite") &&
					spt_fentry_points[i].role == SPT_FENTRY_MKWRITE);
	snprintf(f.fmod_ret_fail, sizeof(f.fmod_ret_fail), "load: Invalid argument");
	return f;
}

static int plan_for(struct spt_plan *p, enum spt_command cmd, const char *line,
		    const struct spt_features *f)
{
	static struct options o;
	char err[256];

	if (parse(&o, cmd, line))
		return -2;
	return plan_make(&o, f, p, err, sizeof(err));
}

#define LOADED(p, prog) ((p)->load[SPT_PROG_##prog])
#define FENTRY_LOADED(p, prog) ((p)->load[SPT_PROG_FENTRY0 + SPT_FX_##prog])

static void test_plan_tracepoint(void)
{
	struct spt_features tp = tracepoint_kernel();
	static struct spt_plan p;

	CHECK(!plan_for(&p, CMD_TRACE, "", &tp) && p.mode == ATTACH_TRACEPOINT && !p.holding &&
	      !strcmp(p.mode_why, "fentry does not load here: load: Operation not permitted"));
	CHECK(LOADED(&p, tp_writeback_dirty_folio) && LOADED(&p, tp_folio_wait_writeback) &&
	      p.attach[SPT_PROG_tp_writeback_dirty_folio]);
	/* sched_switch loads, attached at the first writer's wait only. */
	CHECK(LOADED(&p, tp_sched_switch) && !p.attach[SPT_PROG_tp_sched_switch] &&
	      !p.switch_at_start && !p.wait_calls);
	CHECK(LOADED(&p, tp_block_rq_complete) && p.rodata.walk_requests && !p.rodata.time_requests);
	CHECK(!LOADED(&p, tp_signal_generate) && !LOADED(&p, lsm_file_permission) &&
	      !LOADED(&p, fmod_file_permission));
	for (size_t i = 0; i < SPT_NFENTRY; i++)
		CHECK(!p.load[SPT_PROG_FENTRY0 + i]);
	CHECK(p.rodata.stream_events && !p.rodata.hook_mkwrite && !p.rodata.time_wait_calls &&
	      p.rodata.hold_action == SPT_ACTION_NONE && !p.rodata.index_writeback &&
	      p.rodata.max_delay_ns == 1000000000ULL && !p.rodata.filter_pid);
	CHECK(!plan_for(&p, CMD_TRACE, "-q", &tp) && !p.rodata.stream_events &&
	      !p.rodata.time_requests);
	CHECK(!plan_for(&p, CMD_TRACE, "-q --hist", &tp) && p.rodata.time_requests &&
	      p.rodata.walk_requests);
	CHECK(!plan_for(&p, CMD_TRACE, "--json", &tp) && p.rodata.time_requests);
	CHECK(!plan_for(&p, CMD_TRACE, "--time-all-waits", &tp) && p.switch_at_start &&
	      p.attach[SPT_PROG_tp_sched_switch]);
	/* Asked for: no fentry even where it would load. */
	struct spt_features fe = fentry_kernel(NULL);

	CHECK(!plan_for(&p, CMD_TRACE, "--attach-mode tracepoint", &fe) &&
	      p.mode == ATTACH_TRACEPOINT && !strcmp(p.mode_why, "as asked") &&
	      !FENTRY_LOADED(&p, fentry_folio_end_writeback));
}

static void test_plan_forced_fentry(void)
{
	struct spt_features tp = tracepoint_kernel();
	static struct options o;
	static struct spt_plan p;
	char err[256] = "";

	CHECK(!parse(&o, CMD_TRACE, "--attach-mode fentry -q"));
	CHECK(plan_make(&o, &tp, &p, err, sizeof(err)) == -1);
	CHECK(!strcmp(err, "--attach-mode fentry: fentry programs do not load on this kernel "
			   "(load: Operation not permitted); --attach-mode auto uses tracepoints"));
	CHECK(plan_wants_fentry(&o));
	CHECK(!parse(&o, CMD_TRACE, "--attach-mode tracepoint") && !plan_wants_fentry(&o));
}

static void test_plan_fentry(void)
{
	struct spt_features f = fentry_kernel("xfs_filemap_page_mkwrite btrfs_page_mkwrite");
	static struct spt_plan p;

	CHECK(!plan_for(&p, CMD_TRACE, "-q", &f) && p.mode == ATTACH_FENTRY);
	CHECK(strstr(p.mode_why, "mmap violations where page_mkwrite returns (filemap_page_mkwrite, "
				 "block_page_mkwrite, iomap_page_mkwrite, ext4_page_mkwrite; other "
				 "handlers: tracepoint), write violations") == p.mode_why);
	CHECK(FENTRY_LOADED(&p, fentry_folio_end_writeback) &&
	      FENTRY_LOADED(&p, fentry_folio_start_writeback) &&
	      FENTRY_LOADED(&p, fexit_folio_wait_writeback) &&
	      FENTRY_LOADED(&p, fentry_ext4_page_mkwrite) && FENTRY_LOADED(&p, fexit_ext4_page_mkwrite));
	CHECK(!FENTRY_LOADED(&p, fentry_xfs_filemap_page_mkwrite) &&
	      !FENTRY_LOADED(&p, fexit_btrfs_page_mkwrite));
	CHECK(p.rodata.hook_mkwrite && p.rodata.time_wait_calls && p.wait_calls &&
	      !p.rodata.walk_requests);
	/* Waits timed by fexit, writeback ends by fentry: no sched_switch;
	 * block_rq_complete still marks the violations of failed requests. */
	CHECK(!LOADED(&p, tp_sched_switch) && LOADED(&p, tp_block_rq_complete) &&
	      !p.rodata.time_requests);
	CHECK(!plan_for(&p, CMD_TRACE, "-q --hist", &f) && LOADED(&p, tp_block_rq_complete) &&
	      p.rodata.time_requests && !p.rodata.walk_requests);
	f = fentry_kernel("page_mkwrite");
	CHECK(!plan_for(&p, CMD_TRACE, "", &f) && strstr(p.mode_why, "(no handler found;") &&
	      !p.rodata.hook_mkwrite && p.rodata.time_wait_calls);
	/* No folio_end_writeback: the request walk ends the would-stalls. */
	f = fentry_kernel("folio_end_writeback");
	CHECK(!plan_for(&p, CMD_TRACE, "-q", &f) && p.rodata.walk_requests &&
	      LOADED(&p, tp_block_rq_complete));
}

static void test_plan_enforce_bpf(void)
{
	struct spt_features f = fentry_kernel(NULL), tp = tracepoint_kernel();
	static struct options o;
	static struct spt_plan p;

	f.lsm_active = f.lsm_loads = f.fmod_ret_loads = true;
	CHECK(!parse(&o, CMD_ENFORCE, "--comm pg") && plan_wants_write_hold(&o, &f));
	CHECK(!plan_for(&p, CMD_ENFORCE, "--comm pg --max-delay 250ms", &f) && p.holding &&
	      p.write_hold == WRITE_HOLD_LSM && LOADED(&p, lsm_file_permission) &&
	      !LOADED(&p, fmod_file_permission));
	CHECK(p.rodata.hold_action == SPT_ACTION_DELAY && p.rodata.index_writeback &&
	      p.rodata.max_delay_ns == 250000000ULL && LOADED(&p, tp_signal_generate) &&
	      p.rodata.filter_comm && !strcmp(p.rodata.target_comm, "pg"));
	/* Holding: sched_switch loads and attaches from the start, even in fentry mode. */
	CHECK(LOADED(&p, tp_sched_switch) && p.attach[SPT_PROG_tp_sched_switch] && p.switch_at_start);
	f.lsm_active = false;
	CHECK(!plan_for(&p, CMD_ENFORCE, "--comm pg --action kill", &f) &&
	      p.write_hold == WRITE_HOLD_FMOD_RET && LOADED(&p, fmod_file_permission) &&
	      !LOADED(&p, lsm_file_permission) && p.rodata.hold_action == SPT_ACTION_KILL &&
	      !LOADED(&p, tp_signal_generate));
	f.fmod_ret_loads = false;
	CHECK(!plan_for(&p, CMD_ENFORCE, "--comm pg --action log", &f) &&
	      p.write_hold == WRITE_HOLD_NONE && !p.rodata.index_writeback &&
	      p.rodata.hold_action == SPT_ACTION_LOG &&
	      !strcmp(p.write_why, "neither BPF LSM nor fmod_ret programs load: load: Invalid argument"));
	CHECK(!plan_for(&p, CMD_ENFORCE, "--comm pg", &tp) && p.mode == ATTACH_TRACEPOINT &&
	      p.holding && p.write_hold == WRITE_HOLD_NONE && !p.rodata.index_writeback &&
	      strstr(p.write_why, "needs fentry on __folio_start_writeback") &&
	      p.switch_at_start && LOADED(&p, tp_block_rq_complete));
	CHECK(!parse(&o, CMD_ENFORCE, "--comm pg") && !plan_wants_write_hold(&o, &tp));
	f = fentry_kernel("__folio_start_writeback");
	CHECK(!plan_wants_write_hold(&o, &f));
}

static void test_plan_enforce_native(void)
{
	struct spt_features f = fentry_kernel(NULL), tp = tracepoint_kernel();
	static struct options o;
	static struct spt_plan p;

	/* --dev needs a real device: set the filter by hand, as parsing would. */
	options_init(&o, CMD_ENFORCE);
	o.native = true;
	o.ndevs = 2;
	o.devs[0] = 7u << 20;
	o.devs[1] = (7u << 20) | 1;
	CHECK(!options_check(&o) && !plan_wants_write_hold(&o, &f));
	CHECK(!plan_make(&o, &tp, &p, NULL, 0) && !p.holding &&
	      p.rodata.hold_action == SPT_ACTION_NONE && !LOADED(&p, tp_signal_generate) &&
	      !LOADED(&p, lsm_file_permission) && !LOADED(&p, fmod_file_permission));
	/* Writers are expected to wait: timed from the start in tracepoint mode. */
	CHECK(p.switch_at_start && LOADED(&p, tp_sched_switch));
	CHECK(p.rodata.filter_dev && p.rodata.n_filter_devs == 2 &&
	      p.rodata.filter_devs[1] == ((7u << 20) | 1));
	CHECK(!plan_make(&o, &f, &p, NULL, 0) && p.mode == ATTACH_FENTRY && !p.switch_at_start &&
	      !LOADED(&p, tp_sched_switch));
	/* More devices than fit in .rodata: the map alone. */
	o.ndevs = SPT_FILTER_DEVS_INLINE + 1;
	CHECK(!plan_make(&o, &tp, &p, NULL, 0) && p.rodata.filter_dev && !p.rodata.n_filter_devs);
}

/* The maps the plan leaves at full size: exactly those of the mode's programs. */
static bool maps_used_are(const struct spt_plan *p, const char *names)
{
	bool ok = true;

	for (size_t i = 0; i < SPT_NMAPS; i++)
		ok &= p->map_used[i] == listed(names, spt_map_names[i]);
	return ok;
}

#define ALWAYS_USED "totals dev_stats dev_counts proc_stats writer_stats hist_table hists " \
		    "inflight_violations stall_horizons walk_states "
#define VERIFY_MAPS "verify_cpus verify_reqs verify_totals verify_devs verify_changes " \
		    "verify_direct_pages "
#define HOLD_MAPS "holds held_folios held_tgids hold_events "

static void test_plan_maps(void)
{
	struct spt_features tp = tracepoint_kernel(), f = fentry_kernel(NULL);
	static struct options o;
	static struct spt_plan p;

	CHECK(!strcmp(spt_map_names[SPT_MAP_events], "events") &&
	      !strcmp(spt_map_names[SPT_NMAPS - 1], "verify_direct_pages"));
	CHECK(!plan_for(&p, CMD_TRACE, "", &tp) && maps_used_are(&p, ALWAYS_USED "events"));
	CHECK(!plan_for(&p, CMD_TRACE, "-q", &tp) && maps_used_are(&p, ALWAYS_USED));
	CHECK(!plan_for(&p, CMD_TRACE, "--json -p 1 --comm x", &tp) &&
	      maps_used_are(&p, ALWAYS_USED "events pid_filter"));
	CHECK(!plan_for(&p, CMD_TRACE, "-q --verify", &tp) && maps_used_are(&p, ALWAYS_USED VERIFY_MAPS));
	CHECK(!plan_for(&p, CMD_TRACE, "-q", &f) &&
	      maps_used_are(&p, ALWAYS_USED "mkwrite_calls writeback_started"));
	f = fentry_kernel("page_mkwrite");
	CHECK(!plan_for(&p, CMD_TRACE, "-q", &f) && maps_used_are(&p, ALWAYS_USED "writeback_started"));
	CHECK(!plan_for(&p, CMD_ENFORCE, "--comm pg", &tp) &&
	      maps_used_are(&p, ALWAYS_USED "events " HOLD_MAPS));
	f = fentry_kernel(NULL);
	f.lsm_active = f.lsm_loads = true;
	CHECK(!plan_for(&p, CMD_ENFORCE, "-q --comm pg", &f) &&
	      maps_used_are(&p, ALWAYS_USED HOLD_MAPS "mkwrite_calls writeback_started wb_heads"));
	/* --native: no holds; its devices in dev_filter */
	options_init(&o, CMD_ENFORCE);
	o.native = true;
	o.ndevs = 1;
	o.devs[0] = 7u << 20;
	CHECK(!options_check(&o) && !plan_make(&o, &tp, &p, NULL, 0) &&
	      maps_used_are(&p, ALWAYS_USED "events dev_filter"));
}

static void test_points(void)
{
	CHECK(SPT_NTRACEPOINTS == 4 && SPT_NFENTRY == 16);
	CHECK(!strcmp(spt_tracepoints[SPT_TP_tp_sched_switch].name, "sched:sched_switch") &&
	      !strcmp(spt_tracepoints[0].btf_name, "btf_trace_writeback_dirty_folio") &&
	      !strcmp(spt_tracepoints[0].since, "5.16"));
	CHECK(!strcmp(spt_fentry_points[SPT_FENTRY_END_WRITEBACK].prog, "fentry_folio_end_writeback"));
	CHECK(!strcmp(spt_fentry_points[SPT_FENTRY_START_WRITEBACK].func, "__folio_start_writeback"));
	CHECK(spt_fentry_points[SPT_FX_fexit_folio_wait_writeback].fexit &&
	      !spt_fentry_points[SPT_FX_fentry_folio_wait_writeback].fexit &&
	      spt_fentry_points[SPT_FX_fexit_btrfs_page_mkwrite].role == SPT_FENTRY_MKWRITE &&
	      !strcmp(spt_fentry_points[SPT_NFENTRY - 1].prog, "fexit_btrfs_page_mkwrite"));
}

/* bcc's habits: [INTERVAL [COUNT]], -T, -c; --delta; and what makes no sense. */
static void test_options_cli(void)
{
	static struct options o;

	CHECK(!parse(&o, CMD_TRACE, "5 10") && o.interval == 5 && o.count == 10 && !o.duration);
	CHECK(!parse(&o, CMD_TRACE, "-q 0.5") && o.interval == 0.5 && !o.count && o.quiet);
	CHECK(!parse(&o, CMD_TRACE, "-T --delta 2 3 -q") && o.timestamps && o.delta && o.count == 3);
	CHECK(!parse(&o, CMD_TRACE, "-i 500ms -T") && o.interval == 0.5 && o.timestamps);
	CHECK(!parse(&o, CMD_TRACE, "-c /sys/fs/cgroup/x") && !strcmp(o.cgroup, "/sys/fs/cgroup/x"));
	CHECK(!parse(&o, CMD_TRACE, "--prom-top-cgroup 20") && o.prom_top_cgroup == 20);
	CHECK(!parse(&o, CMD_ENFORCE, "--comm pg 1 2") && o.interval == 1 && o.count == 2);
	CHECK(parse(&o, CMD_TRACE, "five") &&
	      !strcmp(o.error, "unexpected word 'five': INTERVAL is a number of seconds, and a "
			       "command comes first (stablepage-trace COMMAND [OPTION...])"));
	CHECK(parse(&o, CMD_TRACE, "5x") &&
	      !strcmp(o.error, "invalid INTERVAL '5x': a number of seconds, at least 0.1 (5, 0.5, "
			       "500ms, 1m)"));
	CHECK(parse(&o, CMD_TRACE, "0") && strstr(o.error, "invalid INTERVAL '0'"));
	/* below the shortest: 1 ms for -d, 0.1 s for intervals (a map walk each) */
	CHECK(parse(&o, CMD_TRACE, "0.05") && strstr(o.error, "invalid INTERVAL '0.05'"));
	CHECK(parse(&o, CMD_TRACE, "-i 99ms") &&
	      strstr(o.error, "invalid interval '99ms': at least 0.1 s"));
	CHECK(!parse(&o, CMD_TRACE, "-i 100ms") && o.interval == 0.1);
	CHECK(parse(&o, CMD_TRACE, "-d 0.5ms") && strstr(o.error, "invalid duration '0.5ms'"));
	CHECK(!parse(&o, CMD_TRACE, "-d 1ms") && o.duration == 0.001);
	CHECK(parse(&o, CMD_ENFORCE, "--max-delay 0.1ms") && strstr(o.error, "invalid --max-delay"));
	CHECK(parse(&o, CMD_TRACE, "--verify=4294967297") && strstr(o.error, "invalid --verify"));
	CHECK(parse(&o, CMD_TRACE, "--top 18446744073709551617") && strstr(o.error, "invalid --top"));
	/* a short option byte 0xff is no -? (argp passes both as '?') */
	CHECK(parse(&o, CMD_TRACE, "-\xff") &&
	      !strcmp(o.error, "unknown option or missing value: '-\xff'"));
	CHECK(parse(&o, CMD_TRACE, "-- -1") && strstr(o.error, "invalid INTERVAL '-1'"));
	CHECK(parse(&o, CMD_TRACE, "5 ten") &&
	      !strcmp(o.error, "invalid COUNT 'ten': a number of reports, 1 to 1000000"));
	CHECK(parse(&o, CMD_TRACE, "5 0") && strstr(o.error, "invalid COUNT '0'"));
	CHECK(parse(&o, CMD_TRACE, "5 1000001") && strstr(o.error, "invalid COUNT '1000001'"));
	CHECK(parse(&o, CMD_TRACE, "5 1 1") && strstr(o.error, "unexpected argument '1': only"));
	CHECK(parse(&o, CMD_TRACE, "-i 5 5") && strstr(o.error, "the interval is given twice"));
	CHECK(parse(&o, CMD_TRACE, "5 -i 5") && strstr(o.error, "the interval is given twice"));
	CHECK(parse(&o, CMD_TRACE, "-T") && !strcmp(o.error, "-T stamps the interval reports: give "
							  "an INTERVAL (or -i SECS)"));
	CHECK(parse(&o, CMD_TRACE, "-T --json 5") && strstr(o.error, "-T is for the text reports"));
	CHECK(parse(&o, CMD_TRACE, "--delta -q") && strstr(o.error, "--delta counts per interval"));
	CHECK(parse(&o, CMD_TRACE, "-d 10 5 2") && strstr(o.error, "COUNT and -d both"));
	CHECK(parse(&o, CMD_TRACE, "--prom-top-cgroup 1001") && strstr(o.error, "up to 1000"));
	CHECK(parse(&o, CMD_FEATURES, "5") &&
	      !strcmp(o.error, "unexpected argument '5': features takes no INTERVAL or COUNT"));
	CHECK(!parse(&o, CMD_FEATURES, "--json") && o.json);
	CHECK(!parse(&o, CMD_RESTORE, "") && o.cmd == CMD_RESTORE && o.restore);
	CHECK(parse(&o, CMD_RESTORE, "--native") && strstr(o.error, "takes no other"));
}

/* Writer rows of two cgroups fold into one row each. */
static void test_fold_cgroups(void)
{
	struct writer_row rows[3] = {
		{ .key = { .dev = 1, .tgid = 10, .ino = 5, .cgroup = 99 }, .s = { .violations = { 1, 2, 0 } } },
		{ .key = { .dev = 1, .tgid = 20, .ino = 6, .cgroup = 7 }, .s = { .violations = { 0, 1, 0 } } },
		{ .key = { .dev = 2, .tgid = 10, .ino = 5, .cgroup = 99 }, .s = { .violations = { 0, 0, 4 } } },
	};
	struct spt_summary s = {};

	s.totals.violations[0] = 1, s.totals.violations[1] = 3, s.totals.violations[2] = 6;
	CHECK(fold_writers(&s, rows, 3) == 0);
	sort_cgroups(s.cgroups, s.ncgroups);
	CHECK(s.ncgroups == 2 && s.cgroups[0].id == 99 && kinds_total(s.cgroups[0].violations) == 7);
	CHECK(s.cgroups[1].id == 7 && s.cgroups[1].violations[SPT_KIND_WRITE] == 1);
	CHECK(cgroups_unattributed(&s) == 2);
	free(s.devs);
	free(s.procs);
	free(s.files);
	free(s.cgroups);
}

/* summary.c's summary_free, without its libbpf: the rows only. */
static void free_rows(struct spt_summary *s)
{
	free(s->devs);
	free(s->procs);
	free(s->files);
	free(s->cgroups);
	free(s->hists);
	if (s->verify_own)
		verify_free(s->verify_own);
	free(s->verify_own);
	memset(s, 0, sizeof(*s));
}

/* Three snapshots of one run: the deltas add up to the last one. */
static void test_delta(void)
{
	struct spt_summary snap[3] = {}, prev = {}, d;
	__u64 sum_v = 0, sum_slot = 0, sum_proc = 0, sum_cg = 0;

	for (int i = 0; i < 3; i++) {
		struct spt_summary *s = &snap[i];

		s->ts = 100 + i, s->duration_s = 1 + i;
		s->totals.violations[SPT_KIND_MMAP] = 10 * (i + 1);
		s->totals.events_lost = i;
		s->would_stall_pending = 5; /* a state: not subtracted */
		s->devs = calloc(1, sizeof(*s->devs)), s->ndevs = 1;
		s->devs[0].dev = 3, s->devs[0].s.violations[0] = 10 * (i + 1);
		/* pid 1 only in the first interval; pid 2 from the second */
		s->procs = calloc(2, sizeof(*s->procs)), s->nprocs = i ? 2 : 1;
		s->procs[0].pid = 1, s->procs[0].s.violations[0] = 10;
		s->procs[1].pid = 2, s->procs[1].s.violations[0] = 10 * i;
		s->cgroups = calloc(1, sizeof(*s->cgroups)), s->ncgroups = 1;
		s->cgroups[0].id = 9, s->cgroups[0].violations[0] = 10 * (i + 1);
		s->hists = calloc(1, sizeof(*s->hists)), s->nhists = 1;
		s->hists[0].key.type = SPT_HIST_WOULD_STALL;
		s->hists[0].h.slots[2] = 4 * (i + 1), s->hists[0].h.count = 4 * (i + 1);
	}
	for (int i = 0; i < 3; i++) {
		CHECK(summary_delta(&d, &snap[i], &prev) == 0 && d.delta);
		CHECK(d.totals.violations[0] == 10 && d.totals.events_lost == (i ? 1u : 0u));
		CHECK(d.would_stall_pending == 5 && d.ndevs == 1 && d.devs[0].s.violations[0] == 10);
		CHECK(d.nprocs == 1 && d.procs[0].pid == (i < 2 ? 1u + i : 2u));
		CHECK(d.since_ts == (i ? 100 + i - 1 : 0) && d.duration_s == (i ? 1 : 1));
		sum_v += d.totals.violations[0];
		sum_slot += d.nhists ? d.hists[0].h.slots[2] : 0;
		for (size_t k = 0; k < d.nprocs; k++)
			sum_proc += d.procs[k].s.violations[0];
		sum_cg += d.ncgroups ? d.cgroups[0].violations[0] : 0;
		free_rows(&d);
		free_rows(&prev);
		prev = snap[i];
		summary_sort_by_key(&prev);
	}
	CHECK(sum_v == 30 && sum_slot == 12 && sum_proc == 30 && sum_cg == 30);
	free_rows(&prev);
}

/* A --verify snapshot: totals, one device row, one change row per pid given. */
static struct spt_verify_summary verify_snap(__u64 n, __u32 pid_a, __u32 pid_b)
{
	struct spt_verify_summary v = { .every = 16, .located = true, .pending = 3 };

	v.totals.requests_seen = 16 * n, v.totals.requests_sampled = n;
	v.totals.pages_verified = 4 * n, v.totals.pages_changed = n;
	v.devs = calloc(1, sizeof(*v.devs)), v.ndevs = 1;
	v.devs[0].key.dev = 7 << 20, v.devs[0].key.kind = SPT_PAGE_MMAP;
	v.devs[0].s.verified = 4 * n, v.devs[0].s.changed = n;
	v.changes = calloc(2, sizeof(*v.changes));
	v.changes[v.nchanges].key.tgid = pid_a, v.changes[v.nchanges++].v.pages = n;
	if (pid_b)
		v.changes[v.nchanges].key.tgid = pid_b, v.changes[v.nchanges++].v.pages = n;
	v.changes[0].path = strdup("/mnt/a"); /* cur's to free, never the delta's */
	return v;
}

/* --delta: verify's counts per interval too; its pages in flight a state. */
static void test_delta_verify(void)
{
	struct spt_verify_summary v[3] = { verify_snap(2, 40, 0), verify_snap(5, 40, 41),
					    verify_snap(5, 40, 41) };
	struct spt_summary prev = {}, cur, d;
	__u64 sum_changed = 0, sum_dev = 0;

	for (int i = 0; i < 3; i++) {
		cur = (struct spt_summary){ .ts = 100 + i, .verify = &v[i] };
		CHECK(summary_delta(&d, &cur, &prev) == 0 && d.verify && d.verify == d.verify_own);
		CHECK(d.verify != cur.verify && d.verify->pending == 3 && d.verify->every == 16);
		CHECK(d.verify->nchanges == 0 || d.verify->changes[0].path == NULL);
		sum_changed += d.verify->totals.pages_changed;
		sum_dev += d.verify->ndevs ? d.verify->devs[0].s.changed : 0;
		if (i == 0)
			CHECK(d.verify->totals.requests_seen == 32 && d.verify->nchanges == 1);
		if (i == 1) /* pid 40: 2 -> 5, pid 41 new: 5, sorted by pages */
			CHECK(d.verify->totals.pages_verified == 12 && d.verify->nchanges == 2 &&
			      d.verify->changes[0].key.tgid == 41 && d.verify->changes[0].v.pages == 5 &&
			      d.verify->changes[1].v.pages == 3);
		if (i == 2) /* nothing new: no rows, zero counts */
			CHECK(d.verify->ndevs == 0 && d.verify->nchanges == 0 &&
			      d.verify->totals.pages_changed == 0);
		free_rows(&d);
		free_rows(&prev);
		prev = cur;
		CHECK(summary_sort_by_key(&prev) == 0 && prev.verify_own &&
		      prev.verify_own->nchanges == v[i].nchanges);
		prev.verify = NULL; /* as the tracer does: its verify summary is freed */
		verify_free(&v[i]);
	}
	CHECK(sum_changed == 5 && sum_dev == 5);
	free_rows(&prev);
}

static void prom_cgroups_of(FILE *f, const void *s)
{
	const struct prom_info info = { .version = "1", .attach_mode = "fentry", .top_cgroups = 2 };

	prom_format(f, s, &info);
}

/* --prom-top-cgroup: one series per path (a restarted service's rows added
 * up), a removed cgroup by its id, at most N. */
static void test_prom_cgroups(void)
{
	struct cgroup_row cg[4] = {
		{ .id = 5, .violations = { 6 }, .path = "/system.slice/db.service" },
		{ .id = 6, .violations = { 3 }, .path = NULL },
		{ .id = 8, .violations = { 2 }, .path = "/system.slice/db.service" },
		{ .id = 9, .violations = { 1 }, .path = "/user.slice" },
	};
	struct spt_summary s = { .cgroups = cg, .ncgroups = 4 };
	char *out = capture(prom_cgroups_of, &s);

	CHECK(sample(out, "stablepage_cgroup_violations_total{cgroup=\"/system.slice/db.service\"}") == 8);
	CHECK(sample(out, "stablepage_cgroup_violations_total{cgroup=\"id:6\"}") == 3);
	CHECK(!strstr(out, "user.slice"));
	free(out);
}

/* Interval and summary objects carry wall-clock time. */
static void test_summary_json_time(void)
{
	struct spt_summary s = { .interval = true, .delta = true, .seq = 3, .ts = 1796628304.5,
				 .since_ts = 1796628303.5 };
	char *out = capture(summary_json, &s);

	CHECK(strstr(out, "{\"type\":\"interval\",\"ts\":1796628304.500000,"
			  "\"time\":\"2026-12-07T07:25:04.500Z\",\"since_ts\":1796628303.500000,"
			  "\"seq\":3,\"delta\":true,") != NULL);
	free(out);
}

/* --verify[=N]: the rate's parser, the option, the plan, the printing. */
static void test_verify_options(void)
{
	static struct options o;
	static struct spt_plan p;
	struct spt_features tp = tracepoint_kernel();
	unsigned int n = 7;

	CHECK(parse_verify_rate(NULL, 16, &n) && n == 16);
	CHECK(parse_verify_rate("1", 16, &n) && n == 1);
	CHECK(parse_verify_rate("256", 16, &n) && n == 256);
	CHECK(!parse_verify_rate("0", 16, &n) && !parse_verify_rate("-1", 16, &n) &&
	      !parse_verify_rate("abc", 16, &n) && !parse_verify_rate("", 16, &n) &&
	      !parse_verify_rate("4x", 16, &n) && !parse_verify_rate("1000001", 16, &n) && n == 256);
	CHECK(!parse(&o, CMD_TRACE, "") && o.verify_every == 0);
	CHECK(!parse(&o, CMD_TRACE, "--verify") && o.verify_every == SPT_VERIFY_DEFAULT);
	CHECK(!parse(&o, CMD_TRACE, "--verify=1") && o.verify_every == 1);
	CHECK(parse(&o, CMD_TRACE, "--verify=0") && strstr(o.error, "invalid --verify '0'"));
	CHECK(parse(&o, CMD_TRACE, "--verify=-3") && strstr(o.error, "invalid --verify '-3'"));
	CHECK(parse(&o, CMD_TRACE, "--verify=x") && strstr(o.error, "invalid --verify 'x'"));
	/* Its programs load only with it. */
	CHECK(!plan_for(&p, CMD_TRACE, "", &tp) && !LOADED(&p, tp_verify_rq_issue) &&
	      !LOADED(&p, tp_verify_rq_complete) && !LOADED(&p, tp_verify_bio_queue) &&
	      !LOADED(&p, tp_verify_rq_requeue) && p.rodata.verify_every == 1);
	CHECK(!plan_for(&p, CMD_TRACE, "--verify=32", &tp) && LOADED(&p, tp_verify_rq_issue) &&
	      LOADED(&p, tp_verify_rq_complete) && LOADED(&p, tp_verify_bio_queue) &&
	      LOADED(&p, tp_verify_rq_requeue) && p.attach[SPT_PROG_tp_verify_rq_issue] && p.rodata.verify_every == 32);
}

static void verify_text_of(FILE *f, const void *v)
{
	print_verify_text(f, v, 10);
}

static void verify_json_of(FILE *f, const void *v)
{
	print_verify_json(f, v, 10);
}

static void verify_prom_of(FILE *f, const void *v)
{
	prom_verify(f, v);
}

static void test_verify_report(void)
{
	struct verify_dev_row devs[2] = {
		{ .key = { 7 << 20, SPT_PAGE_MMAP }, .s = { 10, 4, 1 }, .device = "loop0" },
		{ .key = { 7 << 20, SPT_PAGE_DIRECT }, .s = { 5, 2, 0 }, .device = "loop0" },
	};
	struct verify_change_row ch[2] = {
		{ .key = { 7 << 20, SPT_PAGE_MMAP, 42, 7 << 20, 12 }, .v = { .pages = 1, .offset = 8192 },
		  .device = "loop0" },
		{ .key = { 7 << 20, SPT_PAGE_DIRECT, 43, 7 << 20, 13 }, .v = { .pages = 3, .offset = 4096 },
		  .device = "loop0", .path = "/mnt/f" },
	};
	struct spt_verify_summary v = { .every = 16, .located = true, .devs = devs, .ndevs = 2,
					.changes = ch, .nchanges = 2, .pending = 2 };
	char *out;

	v.totals.pages_verified = 15;
	v.totals.pages_changed = 6;
	strcpy(ch[0].v.comm, "db");
	strcpy(ch[1].v.comm, "wac");
	verify_sort(&v);
	CHECK(ch[0].key.tgid == 43 && devs[0].key.kind == SPT_PAGE_MMAP);
	out = capture(verify_text_of, &v);
	CHECK(strstr(out, "Pages verified in flight (hashed at issue and at completion): 15\n"));
	CHECK(strstr(out, "Pages changed in flight: 6 (file 0, mmap 4, direct 2, metadata 0, swap 0, "
			  "bdev 0, kernel 0)\n"));
	CHECK(strstr(out, "still in flight: 2\n"));
	CHECK(strstr(out, "     43 wac              direct    loop0               3           4096  "
			  "/mnt/f\n"));
	CHECK(strstr(out, "(ino 12 on 7:0)\n"));
	free(out);
	out = capture(verify_json_of, &v);
	CHECK(!strncmp(out, ",\"verify\":{\"every\":16,\"located\":true,", 33));
	CHECK(strstr(out, "\"changed_by_kind\":{\"file\":0,\"mmap\":4,\"direct\":2,"));
	CHECK(strstr(out, "{\"kind\":\"direct\",\"pid\":43,\"comm\":\"wac\",\"dev\":\"7:0\","
			  "\"device\":\"loop0\",\"file_dev\":\"7:0\",\"ino\":13,\"path\":\"/mnt/f\","
			  "\"pages\":3,\"last_offset\":4096}"));
	free(out);
	out = capture(verify_prom_of, &v);
	CHECK(strstr(out, "stablepage_pages_changed_in_flight_total{device=\"loop0\",kind=\"direct\"} 2\n"));
	CHECK(strstr(out, "# TYPE stablepage_pages_verified_total counter\n"));
	free(out);
}

int main(void)
{
	test_duration();
	test_text_escape();
	test_pid_uint();
	test_majmin();
	test_mountinfo();
	test_state_line();
	test_json();
	test_totals_and_sort();
	test_fold_writers();
	test_fold_dev_counts();
	test_summary_json();
	test_prom_escape();
	test_log2_hist();
	test_prom_format();
	test_prom_empty();
	test_summary_text_paused();
	test_summary_text_tables();
	test_summary_json_rows();
	test_hold_tracker();
	test_options();
	test_points();
	test_plan_tracepoint();
	test_plan_forced_fentry();
	test_plan_fentry();
	test_plan_enforce_bpf();
	test_plan_enforce_native();
	test_plan_maps();
	test_fdinfo_memlock();
	test_options_cli();
	test_fold_cgroups();
	test_delta();
	test_delta_verify();
	test_prom_cgroups();
	test_summary_json_time();
	report_tests();
	aging_tests();
	mountspec_tests();
	verify_tests();
	test_verify_options();
	test_verify_report();
	printf("%d checks, %d failed\n", unit_checks, unit_failures);
	return unit_failures ? 1 : 0;
}
