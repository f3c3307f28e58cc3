// SPDX-License-Identifier: GPL-2.0
/* Unit tests of `report`: the JSON reader, reading a run back, HTML escaping
 * and the page made from a fixture. Called from unit_tests.c's main. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "html.h"
#include "htmlreport.h"
#include "jsonread.h"
#include "runfile.h"
#include "check.h"

/* Parses all of text as one value; 0 on success. */
static int parse1(const char *text, struct jv *v, char *err)
{
	size_t pos = 0, len = strlen(text);

	if (jv_parse(text, len, &pos, v, err, 128))
		return -1;
	if (jv_more(text, len, &pos)) {
		jv_free(v);
		strcpy(err, "trailing");
		return -1;
	}
	return 0;
}

static void test_jv_values(void)
{
	struct jv v;
	char err[128];

	CHECK(!parse1(" {\"a\":[1,-2.5e3,true,false,null],\"b\":{\"c\":\"x\"},\"a\":7} ", &v, err));
	CHECK(v.type == JV_OBJECT && v.n == 3);
	CHECK(jv_getnum(&v, "a", 0) == 7); /* the last of a repeated key */
	CHECK(v.items[0].n == 5 && v.items[0].items[1].num == -2500 &&
	      v.items[0].items[2].type == JV_TRUE && v.items[0].items[4].type == JV_NULL);
	CHECK(!strcmp(jv_str(jv_get(jv_get(&v, "b"), "c")), "x"));
	CHECK(!jv_get(&v, "zz") && jv_getnum(&v, "b", 42) == 42 && !jv_str(jv_get(&v, "a")));
	jv_free(&v);
	CHECK(!parse1("\"q\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u20ac\\ud83d\\ude00\"", &v, err));
	CHECK(!strcmp(v.str, "q\"\\/\b\f\n\r\t\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));
	jv_free(&v);
	/* U+0000 and lone surrogates: U+FFFD, so strings stay C strings. */
	CHECK(!parse1("\"a\\u0000b\\ud800c\"", &v, err));
	CHECK(!strcmp(v.str, "a\xef\xbf\xbd" "b\xef\xbf\xbd" "c"));
	jv_free(&v);
	CHECK(!parse1("[]", &v, err) && v.type == JV_ARRAY && !v.n);
	jv_free(&v);
	CHECK(!parse1("0", &v, err) && v.num == 0);
	jv_free(&v);
}

static void test_jv_errors(void)
{
	static const char *const bad[] = {
		"", "{", "[1,]", "{\"a\" 1}", "{\"a\":1,}", "01", "1.", "-", "1e", ".5", "tru",
		"\"abc", "\"a\\x\"", "\"\\u12g4\"", "\"a\x01\"", "{1:2}", "[1 2]", "NaN", "'a'",
		"{\"a\":1}}",
	};
	char deep[2 * JV_MAX_DEPTH + 8], err[128];
	struct jv v;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = parse1(bad[i], &v, err);

		CHECK(r == -1 && err[0]);
		if (r != -1)
			fprintf(stderr, "accepted: %s\n", bad[i]);
	}
	memset(deep, '[', JV_MAX_DEPTH + 1);
	memset(deep + JV_MAX_DEPTH + 1, ']', JV_MAX_DEPTH + 1);
	deep[2 * JV_MAX_DEPTH + 2] = '\0';
	CHECK(parse1(deep, &v, err) == -1 && strstr(err, "deep"));
	deep[0] = ' ';
	deep[2 * JV_MAX_DEPTH + 1] = '\0';
	CHECK(!parse1(deep, &v, err));
	jv_free(&v);
}

/* A run as the tool writes it with --json -i: events, an interval, the
 * summary; a hostile comm, path and cgroup; an unknown type. */
static const char fixture[] =
	"{\"type\":\"violation\",\"ts\":1000.25,\"kind\":\"mmap\",\"pid\":7,\"tid\":7,"
	"\"comm\":\"<b>wac\",\"cgroup\":\"/sys.slice/a&b\",\"cgroup_id\":1,\"dev\":\"7:0\","
	"\"devname\":\"loop0\",\"fstype\":\"ext4\",\"ino\":12,\"index\":0,\"offset\":0,"
	"\"path\":\"/mnt/f\",\"path_resolved\":true}\n"
	"{\"type\":\"violation\",\"ts\":1003.5,\"kind\":\"write\",\"comm\":\"dd\",\"cgroup\":null}\n"
	"{\"type\":\"violation\",\"ts\":1003.75,\"kind\":\"write\",\"comm\":\"dd\","
	"\"cgroup\":\"/sys.slice/a&b\"}\n"
	"{\"type\":\"metadata\",\"whatever\":[1,2]}\n"
	"{\"type\":\"interval\",\"attach_mode\":\"tracepoint\",\"duration_s\":2.0,"
	"\"violations\":{\"mmap\":1,\"write\":0,\"other\":0},\"violations_total\":1}\n"
	"{\"type\":\"summary\",\"attach_mode\":\"tracepoint\",\"kernel\":\"6.18.0-<x>\","
	"\"duration_s\":4.5,\"paused_s\":0,\"violations\":{\"mmap\":1,\"write\":2,\"other\":0},"
	"\"violations_total\":3,\"stable_waits\":5,\"other_waits\":0,\"events_lost\":0,"
	"\"devices\":[{\"dev\":\"7:0\",\"devname\":\"loop0\",\"fstype\":\"ext4\","
	"\"stable_writes\":false,\"violations\":{\"mmap\":1,\"write\":2,\"other\":0},"
	"\"stable_waits\":5,\"other_waits\":0}],"
	"\"top_processes\":[{\"pid\":7,\"comm\":\"<b>wac\",\"violations\":{\"mmap\":1,\"write\":0,"
	"\"other\":0},\"total\":1,\"stable_waits\":0,\"would_stall_ns\":1500000,"
	"\"stable_wait_ns\":0}],"
	"\"top_files\":[{\"dev\":\"7:0\",\"ino\":12,\"path\":\"/mnt/\\\"x\\\" <y>\","
	"\"violations\":{\"mmap\":1,\"write\":2,\"other\":0},\"total\":3,\"last_pid\":7}],"
	"\"histograms\":[{\"name\":\"would-stall\",\"dev\":\"7:0\",\"device\":\"loop0\","
	"\"kind\":\"mmap\",\"count\":3,\"sum_ns\":300000,\"usecs_log2\":[0,0,0,0,0,0,1,2,0]},"
	"{\"name\":\"writeback\",\"dev\":\"7:0\",\"device\":\"loop0\",\"kind\":\"\",\"count\":1,"
	"\"sum_ns\":5000,\"usecs_log2\":[0,0,1]}]}\n";

static void test_run_load(void)
{
	struct run run;
	char err[256];

	CHECK(!run_load(&run, fixture, strlen(fixture), err, sizeof(err)));
	CHECK(run.final && run.nevents == 3 && run.npoints == 2 && run.nskipped == 1);
	CHECK(!strcmp(run.kernel, "6.18.0-<x>") && !strcmp(run.attach_mode, "tracepoint"));
	CHECK(run.ev_kind[0] == 0 && run.ev_kind[1] == 1 && run.ev_ts[2] == 1003.75);
	CHECK(run.points[0].t == 2 && run.points[1].v[1] == 2);
	/* Sorted by violations: the named cgroup (2) before the unresolved one (1). */
	CHECK(run.ncgroups == 2 && !strcmp(run.cgroups[0].path, "/sys.slice/a&b") &&
	      run.cgroups[0].v[0] == 1 && run.cgroups[0].v[1] == 1 && !run.cgroups[1].path);
	CHECK(jv_getnum(&run.last, "violations_total", 0) == 3);
	run_free(&run);
	/* jq -s: one array of the same objects. */
	{
		const char *slurped = "[{\"type\":\"summary\",\"duration_s\":1,\"violations\":{}}]";

		CHECK(!run_load(&run, slurped, strlen(slurped), err, sizeof(err)) && run.final);
	}
	run_free(&run);
}

static void test_run_refused(void)
{
	static const struct { const char *text, *why; } bad[] = {
		{ "", "no summary, interval or violation object (empty)" },
		{ "hello\n", "not JSON (unexpected character, line 1, column 1)" },
		{ "{\"type\":\"summary\",\"duration_s\":1,\"violations\":{}}\n{\"a\":1,}",
		  "not JSON (expected a string key, line 2, column 8)" },
		{ "{\"foo\":1}", "not stablepage-trace JSON: an object without a \"type\" at line 1, "
			       "column 1" },
		{ "[1,2]", "not stablepage-trace JSON: an array of non-objects at line 1, column 1" },
		{ "42", "not stablepage-trace JSON: a value that is not an object at line 1, column 1" },
		{ "{\"type\":\"other\"}", "no summary, interval or violation object (other objects "
					  "only)" },
		{ "{\"type\":\"summary\"}", "a summary object without duration_s and violations" },
	};
	struct run run;
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = run_load(&run, bad[i].text, strlen(bad[i].text), err, sizeof(err));

		CHECK(r == -1 && strstr(err, bad[i].why) && !strchr(err, '\n'));
		if (r != -1 || !strstr(err, bad[i].why))
			fprintf(stderr, "input %zu: %s\n", i, r ? err : "accepted");
	}
}

/* The summary the tool prints reads back: its kernel key included. */
static void test_round_trip(void)
{
	struct spt_summary s = { .attach_mode = "tracepoint", .kernel = "6.1.0-\"x\"", .duration_s = 2 };
	char *buf = NULL, err[256];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct run run;

	s.totals.violations[SPT_KIND_WRITE] = 4;
	print_summary_json(f, &s, 10);
	fclose(f);
	CHECK(strstr(buf, "\"attach_mode\":\"tracepoint\",\"kernel\":\"6.1.0-\\\"x\\\"\","));
	CHECK(!run_load(&run, buf, len, err, sizeof(err)) && run.final && run.npoints == 1);
	CHECK(run.kernel && !strcmp(run.kernel, "6.1.0-\"x\"") && run.points[0].v[1] == 4);
	run_free(&run);
	free(buf);
}

static char *render_escape(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	html_escape(f, s);
	fclose(f);
	return buf;
}

static void test_html_escape(void)
{
	char *out = render_escape("<a href=\"x\">'&'</a>\x01\t\xff\xc3\xa9");
	char us[32];

	CHECK(!strcmp(out, "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
			   "\xef\xbf\xbd \xef\xbf\xbd\xc3\xa9"));
	free(out);
	out = render_escape(NULL);
	CHECK(!strcmp(out, ""));
	free(out);
	html_usecs(us, sizeof(us), 1536);
	CHECK(!strcmp(us, "1.5 ms"));
	html_usecs(us, sizeof(us), 128);
	CHECK(!strcmp(us, "128 µs"));
	html_usecs(us, sizeof(us), 4e6);
	CHECK(!strcmp(us, "4 s"));
}

static size_t occurrences(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, what)); p++)
		n++;
	return n;
}

static void test_html_page(void)
{
	char *page = NULL, err[256];
	size_t len = 0;
	struct run run;
	FILE *f = open_memstream(&page, &len);

	CHECK(!run_load(&run, fixture, strlen(fixture), err, sizeof(err)));
	html_report(f, &run, "run<1>.json");
	fclose(f);
	run_free(&run);
	CHECK(!strncmp(page, "<!DOCTYPE html>", 15) && strstr(page, "</html>\n"));
	/* two histograms, the timeline; the empty stable-wait noted */
	CHECK(occurrences(page, "<svg ") == 3 && occurrences(page, "</svg>") == 3);
	CHECK(strstr(page, "data-hist-empty=\"stable-wait\""));
	CHECK(strstr(page, "<table id=\"processes\">") && strstr(page, "<table id=\"files\">") &&
	      strstr(page, "<table id=\"cgroups\">") && strstr(page, "<table id=\"devices\">"));
	CHECK(strstr(page, "<dd id=\"kernel\">6.18.0-&lt;x&gt;</dd>"));
	CHECK(strstr(page, "<dd id=\"attach-mode\">tracepoint</dd>"));
	CHECK(strstr(page, "run&lt;1&gt;.json") && strstr(page, "&lt;b&gt;wac") &&
	      strstr(page, "/mnt/&quot;x&quot; &lt;y&gt;") && strstr(page, "/sys.slice/a&amp;b"));
	CHECK(!strstr(page, "<b>wac") && !strstr(page, "<y>") && !strstr(page, "<script"));
	CHECK(!strstr(page, "http://") || occurrences(page, "http://") ==
						  occurrences(page, "xmlns=\"http://www.w3.org/2000/svg\""));
	CHECK(strstr(page, "0.25 ms") || strstr(page, "100 µs")); /* the would-stall average */
	CHECK(strstr(page, "the summary at exit"));
	free(page);
}

/* The timeline's bars hold all four kinds: a metadata event, and interval
 * counts with metadata, were written past a bar of three (the report
 * fuzzer; tests/fuzz/corpus/report). */
static void test_html_timeline_metadata(void)
{
	static const char events[] =
		"{\"type\":\"violation\",\"ts\":10,\"kind\":\"metadata\"}\n"
		"{\"type\":\"violation\",\"ts\":12,\"kind\":\"write\"}\n"
		"{\"type\":\"summary\",\"duration_s\":3,\"violations\":{\"write\":1,"
		"\"metadata\":1}}\n";
	static const char intervals[] =
		"{\"type\":\"interval\",\"duration_s\":1,\"violations\":{\"metadata\":2}}\n"
		"{\"type\":\"summary\",\"duration_s\":2,\"violations\":{\"metadata\":5}}\n";
	const char *inputs[] = { events, intervals };

	for (int i = 0; i < 2; i++) {
		char *page = NULL, err[256];
		size_t len = 0;
		struct run run;
		FILE *f = open_memstream(&page, &len);

		CHECK(!run_load(&run, inputs[i], strlen(inputs[i]), err, sizeof(err)));
		html_report(f, &run, "run.json");
		fclose(f);
		run_free(&run);
		CHECK(strstr(page, i ? "s, metadata: 3</title>" : "s, metadata: 1</title>"));
		free(page);
	}
}

void report_tests(void)
{
	test_jv_values();
	test_jv_errors();
	test_run_load();
	test_run_refused();
	test_round_trip();
	test_html_escape();
	test_html_page();
	test_html_timeline_metadata();
}
