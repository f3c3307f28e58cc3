// SPDX-License-Identifier: GPL-2.0
/*
 * The text and JSON reports (report.c): a summary and an event made of the
 * input, names (comm, paths, cgroups, devices) of any bytes. The text must
 * be terminal-safe (escape.c) and the JSON one valid JSON value per line.
 * What BPF guarantees is kept: its strings end in a NUL, kinds and
 * histogram types are in range, times are finite.
 */
#include "fuzz.h"
#include "jsonread.h"
#include "report.h"

struct in {
	const uint8_t *d;
	size_t n;
};

static void take(struct in *in, void *buf, size_t len)
{
	size_t k = len < in->n ? len : in->n;

	memcpy(buf, in->d, k);
	memset((char *)buf + k, 0, len - k);
	in->d += k;
	in->n -= k;
}

static unsigned int take_u8(struct in *in)
{
	uint8_t v;

	take(in, &v, 1);
	return v;
}

/* A string of up to 63 bytes, NULL for length 255. */
static char *take_str(struct in *in)
{
	unsigned int len = take_u8(in);
	char *s;

	if (len == 255)
		return NULL;
	len %= 64;
	s = calloc(1, len + 1);
	take(in, s, len);
	return s;
}

#define TERMINATE(a) ((a)[sizeof(a) - 1] = '\0')

static void fill(struct in *in, struct spt_summary *s)
{
	s->ndevs = take_u8(in) % 4;
	s->devs = calloc(s->ndevs + 1, sizeof(*s->devs));
	for (size_t i = 0; i < s->ndevs; i++) {
		take(in, &s->devs[i], sizeof(s->devs[i]));
		TERMINATE(s->devs[i].s.fstype), TERMINATE(s->devs[i].s.devname);
		TERMINATE(s->devs[i].device);
	}
	s->nprocs = take_u8(in) % 4;
	s->procs = calloc(s->nprocs + 1, sizeof(*s->procs));
	for (size_t i = 0; i < s->nprocs; i++) {
		take(in, &s->procs[i], sizeof(s->procs[i]));
		TERMINATE(s->procs[i].s.comm);
	}
	s->nfiles = take_u8(in) % 4;
	s->files = calloc(s->nfiles + 1, sizeof(*s->files));
	for (size_t i = 0; i < s->nfiles; i++) {
		take(in, &s->files[i].key, sizeof(s->files[i].key));
		take(in, &s->files[i].s, sizeof(s->files[i].s));
		s->files[i].path = take_str(in);
	}
	s->ncgroups = take_u8(in) % 4;
	s->cgroups = calloc(s->ncgroups + 1, sizeof(*s->cgroups));
	for (size_t i = 0; i < s->ncgroups; i++) {
		take(in, s->cgroups[i].violations, sizeof(s->cgroups[i].violations));
		s->cgroups[i].id = take_u8(in);
		s->cgroups[i].path = take_str(in);
	}
	s->nhists = take_u8(in) % 3;
	s->hists = calloc(s->nhists + 1, sizeof(*s->hists));
	for (size_t i = 0; i < s->nhists; i++) {
		struct hist_row *r = &s->hists[i];

		take(in, r, sizeof(*r));
		r->key.type %= SPT_HIST_MAX;
		r->key.kind %= SPT_KIND_MAX;
		TERMINATE(r->device);
	}
	take(in, &s->totals, sizeof(s->totals));
	s->duration_s = take_u8(in) * 1.5;
	s->paused_s = take_u8(in) / 4.0;
	s->interval = take_u8(in) & 1;
	s->ts = s->interval ? 1.7e9 + take_u8(in) : 0;
	s->attach_mode = take_u8(in) & 1 ? "fentry" : "tracepoint";
	s->kernel = take_str(in);
}

static void unfill(struct spt_summary *s)
{
	for (size_t i = 0; i < s->nfiles; i++)
		free(s->files[i].path);
	for (size_t i = 0; i < s->ncgroups; i++)
		free(s->cgroups[i].path);
	free(s->devs), free(s->procs), free(s->files), free(s->cgroups), free(s->hists);
	free((char *)s->kernel);
}

/* Every line of buf one JSON value. */
static void check_json_lines(char *buf)
{
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		size_t pos = 0, len = strlen(line);
		char err[128];
		struct jv v;

		FUZZ_ASSERT(!jv_parse(line, len, &pos, &v, err, sizeof(err)));
		FUZZ_ASSERT(!jv_more(line, len, &pos));
		jv_free(&v);
	}
}

static void check_event(struct in *in)
{
	char *text = NULL, *json = NULL, *dev = take_str(in), *fs = take_str(in);
	char *path = take_str(in), *cg = take_str(in);
	size_t tlen = 0, jlen = 0;
	struct spt_event e;
	struct event_view v = { .ts = 1.7e9 + take_u8(in) / 7.0, .e = &e, .devname = dev,
				.fstype = fs, .path = path, .cgroup = cg };
	FILE *t = fuzz_sink(&text, &tlen), *j = fuzz_sink(&json, &jlen);

	take(in, &e, sizeof(e));
	TERMINATE(e.comm);
	print_event_header(t);
	print_event_text(t, &v);
	print_event_json(j, &v);
	fclose(t);
	fclose(j);
	FUZZ_ASSERT(fuzz_terminal_safe(text, tlen));
	check_json_lines(json);
	free(text), free(json), free(dev), free(fs), free(path), free(cg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct spt_summary s = { 0 };
	char *text = NULL, *json = NULL;
	size_t tlen = 0, jlen = 0, top = take_u8(&in) % 5;
	FILE *t, *j;

	check_event(&in);
	fill(&in, &s);
	t = fuzz_sink(&text, &tlen);
	j = fuzz_sink(&json, &jlen);
	print_summary_text(t, &s, top);
	print_hists_text(t, &s);
	print_summary_json(j, &s, top);
	fclose(t);
	fclose(j);
	FUZZ_ASSERT(fuzz_terminal_safe(text, tlen));
	check_json_lines(json);
	free(text), free(json);
	unfill(&s);
	return 0;
}
