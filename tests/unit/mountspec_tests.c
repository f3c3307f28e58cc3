// SPDX-License-Identifier: GPL-2.0
/* Unit tests of mountspec.c: what enforce --remount reads from mountinfo,
 * what it refuses, and its state line. Called from unit_tests.c's main. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include "mountapi.h"
#include "mountspec.h"
#include "parse.h"
#include "check.h"

static void test_attrs(void)
{
	unsigned int a;
	char bad[16];

	CHECK(mount_spec_attrs("rw,nosuid,nodev,noexec,relatime", &a, bad, sizeof(bad)));
	CHECK(a ==
	      (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC | MOUNT_ATTR_RELATIME));
	CHECK(mount_spec_attrs("ro,noatime,nosymfollow", &a, bad, sizeof(bad)));
	CHECK(a == (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOATIME | MOUNT_ATTR_NOSYMFOLLOW));
	/* No atime word is strictatime: fsmount's 0 would be relatime. */
	CHECK(mount_spec_attrs("rw,nodiratime", &a, bad, sizeof(bad)));
	CHECK(a == (MOUNT_ATTR_NODIRATIME | MOUNT_ATTR_STRICTATIME));
	CHECK(!mount_spec_attrs("rw,idmapped,relatime", &a, bad, sizeof(bad)) &&
	      !strcmp(bad, "idmapped"));
	/* Whole words: "nosuidx" is not "nosuid". */
	CHECK(!mount_spec_attrs("rw,nosuidx", &a, bad, sizeof(bad)) && !strcmp(bad, "nosuidx"));
}

static void test_prop(void)
{
	char bad[32];
	int p;

	CHECK(mount_spec_prop("", &p, bad, sizeof(bad)) && p == MOUNT_PROP_PRIVATE);
	CHECK(mount_spec_prop("shared:12", &p, bad, sizeof(bad)) && p == MOUNT_PROP_SHARED);
	CHECK(mount_spec_prop("unbindable", &p, bad, sizeof(bad)) && p == MOUNT_PROP_UNBINDABLE);
	CHECK(!mount_spec_prop("master:3", &p, bad, sizeof(bad)) && !strcmp(bad, "master:3"));
	CHECK(!mount_spec_prop("shared:4 master:3", &p, bad, sizeof(bad)));
	CHECK(!mount_spec_prop("shared:", &p, bad, sizeof(bad)));
}

static void test_opt_next(void)
{
	const char *p = "rw,errors=remount-ro,,commit=17,x=a\\054b";
	char k[16], v[16], tiny[4];
	bool has;

	CHECK(mount_opt_next(&p, k, sizeof(k), v, sizeof(v), &has) && !strcmp(k, "rw") && !has &&
	      !v[0]);
	CHECK(mount_opt_next(&p, k, sizeof(k), v, sizeof(v), &has) && !strcmp(k, "errors") && has &&
	      !strcmp(v, "remount-ro"));
	CHECK(mount_opt_next(&p, k, sizeof(k), v, sizeof(v), &has) && !strcmp(k, "commit") &&
	      !strcmp(v, "17"));
	CHECK(mount_opt_next(&p, k, sizeof(k), v, sizeof(v), &has) && !strcmp(v, "a,b"));
	CHECK(!mount_opt_next(&p, k, sizeof(k), v, sizeof(v), &has));
	p = "errors=remount-ro";
	CHECK(!mount_opt_next(&p, k, sizeof(k), tiny, sizeof(tiny), &has));
}

static void test_ids(void)
{
	const char *l1 = "36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 shared:2 - ext3 "
			 "/dev/root rw,errors=continue\n";
	const char *l2 = "45 27 7:1 / /tmp/x rw,relatime - xfs /dev/loop1 rw,inode64\n";
	char opt[64], tiny[4];
	int id, parent;

	CHECK(mountinfo_ids(l1, &id, &parent, opt, sizeof(opt)) && id == 36 && parent == 35 &&
	      !strcmp(opt, "master:1 shared:2"));
	CHECK(mountinfo_ids(l2, &id, &parent, opt, sizeof(opt)) && id == 45 && !opt[0]);
	CHECK(!mountinfo_ids(l1, &id, &parent, tiny, sizeof(tiny)));
	CHECK(!mountinfo_ids("45 27 7:1 / /tmp/x rw", &id, &parent, opt, sizeof(opt)));
}

static void test_state_round_trip(void)
{
	struct mount_spec s = { .dev = spt_kdev(7, 3),
				.prop = MOUNT_PROP_SHARED,
				.source = "/dev/loop3",
				.target = "/srv/with space\\and\ttab",
				.fstype = "ext4",
				.mount_opts = "rw,nosymfollow",
				.super_opts = "rw,commit=17" },
			  back;
	char line[512], tiny[32], bad[] = "unmounted 7:3 slave /dev/loop3 /srv ext4 rw rw",
				  rel[] = "unmounted 7:3 private /dev/loop3 srv ext4 rw rw";

	CHECK(mount_spec_format(&s, line, sizeof(line)));
	CHECK(!strcmp(line, "unmounted 7:3 shared /dev/loop3 /srv/with\\040space\\134and\\011tab "
			    "ext4 rw,nosymfollow rw,commit=17\n"));
	CHECK(mount_spec_parse(line, &back));
	CHECK(back.dev == s.dev && back.prop == s.prop && !strcmp(back.target, s.target) &&
	      !strcmp(back.source, s.source) && !strcmp(back.super_opts, s.super_opts) &&
	      !strcmp(back.mount_opts, s.mount_opts) && !strcmp(back.fstype, "ext4"));
	CHECK(!mount_spec_format(&s, tiny, sizeof(tiny)));
	CHECK(!mount_spec_parse(bad, &back));
	CHECK(!mount_spec_parse(rel, &back));
}

void mountspec_tests(void)
{
	test_attrs();
	test_prop();
	test_opt_next();
	test_ids();
	test_state_round_trip();
}
