// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the Prometheus file's label sets (promdevs.c) and of the
 * rows that age out (retire.c): merging, zero series, the idle rule, the
 * retired counts, a reused pid. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "delta.h"
#include "options.h"
#include "prom.h"
#include "promdevs.h"
#include "retire.h"
#include "check.h"

static char *prom_text(const struct spt_summary *s, const struct prom_info *info)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	prom_format(f, s, info);
	fclose(f);
	return buf;
}

/* How many sample lines start with "prefix "; the last one's value in *v. */
static int samples(const char *text, const char *prefix, double *v)
{
	size_t n = strlen(prefix);
	int count = 0;

	for (const char *p = text; (p = strstr(p, prefix)); p += n)
		if ((p == text || p[-1] == '\n') && p[n] == ' ') {
			count++;
			*v = strtod(p + n + 1, NULL);
		}
	return count;
}

static struct dev_row dev_row(__u32 dev, const char *device, const char *fstype)
{
	struct dev_row r = { .dev = dev };

	snprintf(r.device, sizeof(r.device), "%s", device);
	snprintf(r.s.fstype, sizeof(r.s.fstype), "%s", fstype);
	return r;
}

/* A btrfs mounted twice in one run (two anonymous devs) and the device's
 * own cache: one series per label set, counts added up. */
static void test_merge_label_sets(void)
{
	struct dev_row rows[3] = { dev_row(40, "loop0", "btrfs"), dev_row(7 << 20, "loop0", "bdev"),
				   dev_row(41, "loop0", "btrfs") };
	struct spt_summary s = { .devs = rows, .ndevs = 3 };
	struct prom_info info = { .version = "1", .attach_mode = "fentry", .kernel = "6.1" };
	double v = -1;
	char *out;

	rows[0].s.violations[SPT_KIND_MMAP] = 3;
	rows[2].s.violations[SPT_KIND_MMAP] = 4;
	rows[1].s.violations[SPT_KIND_WRITE] = 5;
	rows[0].s.waits[SPT_KIND_WRITE] = 1;
	rows[1].s.waits[SPT_KIND_MMAP] = 2;
	rows[2].s.waits[SPT_KIND_OTHER] = 6;
	rows[2].s.stable = 1;
	rows[0].s.failed_after_violation = 2;
	rows[2].s.failed_after_violation = 1;
	out = prom_text(&s, &info);
	CHECK(samples(out, "stablepage_violations_total{device=\"loop0\",fstype=\"btrfs\",kind=\"mmap\"}", &v) == 1 && v == 7);
	CHECK(samples(out, "stablepage_violations_total{device=\"loop0\",fstype=\"bdev\",kind=\"write\"}", &v) == 1 && v == 5);
	CHECK(samples(out, "stablepage_stable_waits_total{device=\"loop0\"}", &v) == 1 && v == 3);
	CHECK(samples(out, "stablepage_other_waits_total{device=\"loop0\"}", &v) == 1 && v == 6);
	CHECK(samples(out, "stablepage_failed_after_violation_total{device=\"loop0\",fstype=\"btrfs\"}", &v) == 1 && v == 3);
	CHECK(samples(out, "stablepage_stable_writes{device=\"loop0\",fstype=\"btrfs\"}", &v) == 1 && v == 1);
	CHECK(samples(out, "stablepage_stable_writes{device=\"loop0\",fstype=\"bdev\"}", &v) == 1 && v == 0);
	free(out);
}

/* A device traced has its series at 0 before its first violation; one
 * known and active is not doubled. */
static void test_zero_series(void)
{
	struct dev_row row = dev_row(7 << 20, "loop0", "ext4");
	struct prom_known_dev known[3] = { { "loop1", "xfs" }, { "loop0", "ext4" }, { "loop1", "xfs" } };
	struct spt_summary s = { .devs = &row, .ndevs = 1, .ts = 1700000100.5 };
	struct prom_info info = { .version = "1", .attach_mode = "fentry", .kernel = "6.1",
				  .known = known, .nknown = 3, .start_ts = 1700000000.25 };
	double v = -1;
	char *out;

	row.s.violations[SPT_KIND_MMAP] = 2;
	s.totals.agg_dropped = 9;
	s.totals.would_stall_untimed = 4;
	s.totals.wait_untimed = 3;
	out = prom_text(&s, &info);
	for (int k = 0; k < SPT_KIND_MAX; k++) {
		char name[160];

		snprintf(name, sizeof(name),
			 "stablepage_violations_total{device=\"loop1\",fstype=\"xfs\",kind=\"%s\"}",
			 spt_kind_names[k]);
		CHECK(samples(out, name, &v) == 1 && v == 0);
	}
	CHECK(samples(out, "stablepage_stable_waits_total{device=\"loop1\"}", &v) == 1 && v == 0);
	CHECK(samples(out, "stablepage_violations_total{device=\"loop0\",fstype=\"ext4\",kind=\"mmap\"}", &v) == 1 && v == 2);
	CHECK(samples(out, "stablepage_rows_dropped_total", &v) == 1 && v == 9);
	CHECK(samples(out, "stablepage_would_stall_untimed_total", &v) == 1 && v == 4);
	CHECK(samples(out, "stablepage_wait_untimed_total", &v) == 1 && v == 3);
	CHECK(samples(out, "stablepage_start_time_seconds", &v) == 1 && v == 1700000000.25);
	CHECK(samples(out, "stablepage_last_update_time_seconds", &v) == 1 && v == 1700000100.5);
	CHECK(samples(out, "stablepage_rows_aged_out_total", &v) == 1 && v == 0);
	free(out);
}

static struct writer_row writer(__u32 dev, __u32 tgid, __u64 ino, __u64 cgroup, __u64 mmap,
				__u64 last_ns)
{
	struct writer_row w = { .key = { .dev = dev, .tgid = tgid, .ino = ino, .cgroup = cgroup } };

	w.s.violations[SPT_KIND_MMAP] = mmap;
	w.s.last_ns = last_ns;
	return w;
}

static void test_writer_idle(void)
{
	struct writer_row w = writer(1, 2, 3, 4, 1, 5000000000ULL);

	CHECK(!writer_idle(&w, 5000000000ULL + 999, 1000));
	CHECK(writer_idle(&w, 5000000000ULL + 1000, 1000));
	w.s.last_ns = 0; /* being made: never idle */
	CHECK(!writer_idle(&w, ~0ULL, 1));
	w.s.last_ns = 10; /* a clock behind the row's: not idle */
	CHECK(!writer_idle(&w, 5, 1));
}

static struct proc_row proc(__u32 pid, const char *comm, __u64 write_waits)
{
	struct proc_row p = { .pid = pid };

	snprintf(p.s.comm, sizeof(p.s.comm), "%s", comm);
	p.s.waits[SPT_KIND_WRITE] = write_waits;
	return p;
}

/* idle for as long as unchanged */
static bool idle_at(struct spt_retired *r, struct proc_row *p, double now, double *idle)
{
	return !procs_idle(r, p, 2, now, idle);
}

/* Idle: unchanged for the age and no writer row left. */
static void test_procs_idle(void)
{
	struct spt_retired r = {};
	struct proc_row p[2] = { proc(100, "db", 1), proc(200, "web", 1) };
	struct writer_row w = writer(7, 200, 12, 1, 1, 1);
	double idle[2];

	CHECK(idle_at(&r, p, 10.0, idle) && idle[0] == 0 && idle[1] == 0);
	CHECK(!procs_keep_writers(p, 2, &w, 1, idle) && idle[0] == 0 && idle[1] < 0);
	CHECK(idle_at(&r, p, 14.9, idle) && idle[0] < 5.0 && idle[1] < 5.0);
	CHECK(idle_at(&r, p, 15.0, idle) && idle[0] >= 5.0 && idle[1] >= 5.0);
	CHECK(!procs_keep_writers(p, 2, &w, 1, idle) && idle[0] >= 5.0 && idle[1] < 0);
	/* a counter moved: the age counts again from now */
	p[0].s.waits[SPT_KIND_WRITE] = 2;
	CHECK(idle_at(&r, p, 16.0, idle) && idle[0] == 0 && idle[1] >= 6.0);
	CHECK(idle_at(&r, p, 21.0, idle) && idle[0] >= 5.0 && idle[1] >= 5.0);
	CHECK(!procs_keep_writers(p, 2, NULL, 0, idle) && idle[0] >= 5.0 && idle[1] >= 5.0);
	retired_free(&r);
}

/* Under pressure the rows idle longest go first, down to about half the
 * map; never those idle less than the minimum, never those kept (< 0). */
static void test_pressure_age(void)
{
	double idle[8] = { 30, 1, 20, -1, 10, 5, 0.5, 2 };
	double few[2] = { 30, 1 };
	double busy[8] = { 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, -1 };

	CHECK(pressure_age(few, 2, 8, 600) == 600);       /* 2 of 8: no pressure */
	CHECK(pressure_age(idle, 6, 8, 600) == 600);      /* 6 of 8: 3/4, not more */
	CHECK(pressure_age(idle, 8, 8, 600) == 5);        /* 8 of 8: the 4 idle longest */
	CHECK(pressure_age(idle, 8, 8, 7) == 5);
	CHECK(pressure_age(idle, 8, 8, 3) == 3);          /* the age is shorter still */
	CHECK(pressure_age(busy, 8, 8, 600) == SPT_ROW_AGE_MIN_S);
	CHECK(pressure_age(idle, 8, 0, 600) == 600);
}

/*
 * Rows age out without the device, cgroup or comm counters going down; pid
 * 100 reused by another program after its row aged out shows the new comm.
 */
static void test_retire_and_reuse(void)
{
	struct spt_retired r = {};
	struct proc_row old = proc(100, "olddb", 0);
	struct writer_row w = writer(7 << 20, 100, 12, 55, 6, 1);
	struct spt_summary s = {};
	struct dev_row *dev;
	struct prom_info info = { .version = "1", .attach_mode = "fentry", .kernel = "6.1",
				  .top_comms = 5 };
	double v = -1;
	char *out;

	old.s.violations[SPT_KIND_WRITE] = 2; /* its own: no writer row had room */
	w.s.failed_after_violation = 1;
	CHECK(!retire_writer(&r, &w, old.s.comm));
	CHECK(!retire_proc(&r, &old));
	CHECK(r.writers_pruned == 1 && r.procs_pruned == 1);
	/* The maps now: the device's own row (its overflow count of 2), and
	 * pid 100 again, another program, one violation of its own. */
	s.devs = calloc(1, sizeof(*s.devs));
	s.ndevs = 1;
	*s.devs = dev_row(7 << 20, "loop0", "ext4");
	s.devs[0].s.violations[SPT_KIND_WRITE] = 2;
	s.procs = calloc(1, sizeof(*s.procs));
	s.nprocs = 1;
	s.procs[0] = proc(100, "newapp", 0);
	s.procs[0].s.violations[SPT_KIND_MMAP] = 1;
	s.retired = &r;
	CHECK(!retired_apply(&r, &s));
	dev = &s.devs[0];
	CHECK(s.ndevs == 1 && dev->s.violations[SPT_KIND_MMAP] == 6 &&
	      dev->s.violations[SPT_KIND_WRITE] == 2 && dev->s.failed_after_violation == 1);
	CHECK(s.ncgroups == 1 && s.cgroups[0].id == 55 && s.cgroups[0].violations[SPT_KIND_MMAP] == 6);
	out = prom_text(&s, &info);
	CHECK(samples(out, "stablepage_comm_violations_total{comm=\"olddb\"}", &v) == 1 && v == 8);
	CHECK(samples(out, "stablepage_comm_violations_total{comm=\"newapp\"}", &v) == 1 && v == 1);
	CHECK(samples(out, "stablepage_rows_aged_out_total", &v) == 1 && v == 2);
	CHECK(samples(out, "stablepage_violations_total{device=\"loop0\",fstype=\"ext4\",kind=\"mmap\"}", &v) == 1 && v == 6);
	CHECK(!strcmp(s.procs[0].s.comm, "newapp"));
	free(out);
	free(s.devs), free(s.procs), free(s.cgroups);
	retired_free(&r);
}

/* --delta: a process row aged out and made again has all new counts. */
static void test_delta_reborn(void)
{
	struct proc_row was = proc(100, "a", 9), now = proc(100, "b", 2);
	struct dev_row d = dev_row(1, "loop0", "ext4");
	struct spt_summary prev = { .procs = &was, .nprocs = 1, .devs = &d, .ndevs = 1 };
	struct spt_summary cur = { .procs = &now, .nprocs = 1, .devs = &d, .ndevs = 1 }, out;

	CHECK(!summary_delta(&out, &cur, &prev));
	CHECK(out.nprocs == 1 && out.procs[0].s.waits[SPT_KIND_WRITE] == 2);
	free(out.devs), free(out.procs), free(out.files), free(out.cgroups), free(out.hists);
}

static void test_row_age_option(void)
{
	char *argv[] = { "stablepage-trace", "--row-age", "2", NULL };
	char *zero[] = { "stablepage-trace", "--row-age", "5m", "--row-age", "0", NULL };
	char *bad[] = { "stablepage-trace", "--row-age", "x", NULL };
	struct options o;

	options_init(&o, CMD_TRACE);
	CHECK(!options_parse(&o, 3, argv) && o.row_age == 2 && o.row_age_given);
	options_init(&o, CMD_TRACE);
	CHECK(!options_parse(&o, 5, zero) && o.row_age == 0 && o.row_age_given);
	options_init(&o, CMD_TRACE);
	CHECK(options_parse(&o, 3, bad) && strstr(o.error, "invalid --row-age 'x'"));
}

void aging_tests(void)
{
	test_merge_label_sets();
	test_zero_series();
	test_writer_idle();
	test_procs_idle();
	test_pressure_age();
	test_retire_and_reuse();
	test_delta_reborn();
	test_row_age_option();
}
