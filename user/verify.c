// SPDX-License-Identifier: GPL-2.0
/*
 * --verify's part of the summary: text, JSON and Prometheus metrics of the
 * pages changed in flight. Pure: unit-tested (tests/unit).
 */
#include <stdlib.h>
#include <string.h>
#include "escape.h"
#include "json.h"
#include "parse.h"
#include "verify_user.h"

const char *const spt_page_kind_names[SPT_PAGE_KIND_MAX] = {
	[SPT_PAGE_FILE] = "file",	  [SPT_PAGE_MMAP] = "mmap",   [SPT_PAGE_DIRECT] = "direct",
	[SPT_PAGE_METADATA] = "metadata", [SPT_PAGE_SWAP] = "swap",   [SPT_PAGE_BDEV] = "bdev",
	[SPT_PAGE_KERNEL] = "kernel",
};

static const char *kind_name(__u32 kind)
{
	return spt_page_kind_names[kind < SPT_PAGE_KIND_MAX ? kind : SPT_PAGE_KERNEL];
}

static int cmp_devs(const void *pa, const void *pb)
{
	const struct verify_dev_row *a = pa, *b = pb;
	int c = strcmp(a->device, b->device);

	if (c)
		return c;
	return a->key.kind < b->key.kind ? -1 : a->key.kind > b->key.kind;
}

static int cmp_changes(const void *pa, const void *pb)
{
	const struct verify_change_row *a = pa, *b = pb;

	if (a->v.pages != b->v.pages)
		return a->v.pages > b->v.pages ? -1 : 1;
	if (a->key.tgid != b->key.tgid)
		return a->key.tgid < b->key.tgid ? -1 : 1;
	return a->key.ino < b->key.ino ? -1 : a->key.ino > b->key.ino;
}

void verify_sort(struct spt_verify_summary *v)
{
	if (v->ndevs)
		qsort(v->devs, v->ndevs, sizeof(v->devs[0]), cmp_devs);
	if (v->nchanges)
		qsort(v->changes, v->nchanges, sizeof(v->changes[0]), cmp_changes);
}

/* Changed pages of one kind, over the devices. */
static __u64 changed_of_kind(const struct spt_verify_summary *v, __u32 kind)
{
	__u64 n = 0;

	for (size_t i = 0; i < v->ndevs; i++)
		if (v->devs[i].key.kind == kind)
			n += v->devs[i].s.changed;
	return n;
}

static void print_totals(FILE *f, const struct spt_verify_summary *v)
{
	const struct spt_verify_totals *t = &v->totals;

	fprintf(f, "Write requests sampled (--verify=%u, 1 in %u): %llu of %llu\n", v->every,
		v->every, (unsigned long long)t->requests_sampled,
		(unsigned long long)t->requests_seen);
	fprintf(f, "Pages verified in flight (hashed at issue and at completion): %llu\n",
		(unsigned long long)t->pages_verified);
	fprintf(f, "Pages changed in flight: %llu (", (unsigned long long)t->pages_changed);
	for (__u32 k = 0; k < SPT_PAGE_KIND_MAX; k++)
		fprintf(f, "%s%s %llu", k ? ", " : "", spt_page_kind_names[k],
			(unsigned long long)changed_of_kind(v, k));
	fputs(")\n", f);
	fprintf(f, "Pages unverified (unreadable from BPF%s, over 64 a request, table full): %llu; "
		   "still in flight: %llu\n",
		v->located ? "" : "; kernel direct map not located yet",
		(unsigned long long)t->pages_unverified, (unsigned long long)v->pending);
}

void print_verify_text(FILE *f, const struct spt_verify_summary *v, size_t top)
{
	print_totals(f, v);
	if (v->ndevs)
		fprintf(f, "\n%-10s %-8s %-9s %10s %10s %10s\n", "DEVICE", "MAJ:MIN", "KIND",
			"VERIFIED", "CHANGED", "UNVERIFIED");
	for (size_t i = 0; i < v->ndevs; i++) {
		const struct verify_dev_row *d = &v->devs[i];

		char device[TEXT_ESC_LEN(sizeof(d->device))];

		fprintf(f, "%-10s %u:%-6u %-9s %10llu %10llu %10llu\n",
			ESC_FIELD(device, d->device),
			spt_kdev_major(d->key.dev), spt_kdev_minor(d->key.dev), kind_name(d->key.kind),
			(unsigned long long)d->s.verified, (unsigned long long)d->s.changed,
			(unsigned long long)d->s.unverified);
	}
	if (!v->nchanges)
		return;
	fprintf(f, "\n%7s %-16s %-9s %-10s %10s %14s  %s\n", "PID", "COMM", "KIND", "DEVICE",
		"CHANGED", "LAST_OFFSET", "FILE");
	for (size_t i = 0; i < v->nchanges && i < top; i++) {
		const struct verify_change_row *c = &v->changes[i];
		char comm[TEXT_ESC_LEN(sizeof(c->v.comm))], device[TEXT_ESC_LEN(sizeof(c->device))];

		fprintf(f, "%7u %-16s %-9s %-10s %10llu %14llu  ", c->key.tgid,
			c->v.comm[0] ? ESC_FIELD(comm, c->v.comm) : "-",
			kind_name(c->key.kind), ESC_FIELD(device, c->device),
			(unsigned long long)c->v.pages, (unsigned long long)c->v.offset);
		if (c->path) {
			text_puts(f, c->path);
			fputc('\n', f);
		} else if (c->key.ino)
			fprintf(f, "(ino %llu on %u:%u)\n", (unsigned long long)c->key.ino,
				spt_kdev_major(c->key.file_dev), spt_kdev_minor(c->key.file_dev));
		else
			fputs("(device offset)\n", f);
	}
}

static void json_dev(FILE *f, const char *key, __u32 dev)
{
	fprintf(f, ",\"%s\":\"%u:%u\"", key, spt_kdev_major(dev), spt_kdev_minor(dev));
}

static void json_verify_rows(FILE *f, const struct spt_verify_summary *v, size_t top)
{
	fputs(",\"devices\":[", f);
	for (size_t i = 0; i < v->ndevs; i++) {
		const struct verify_dev_row *d = &v->devs[i];

		fputs(i ? ",{" : "{", f);
		fprintf(f, "\"kind\":\"%s\"", kind_name(d->key.kind));
		json_dev(f, "dev", d->key.dev);
		fputs(",\"device\":", f);
		json_string(f, d->device);
		fprintf(f, ",\"verified\":%llu,\"changed\":%llu,\"unverified\":%llu}",
			(unsigned long long)d->s.verified, (unsigned long long)d->s.changed,
			(unsigned long long)d->s.unverified);
	}
	fputs("],\"changed\":[", f);
	for (size_t i = 0; i < v->nchanges && i < top; i++) {
		const struct verify_change_row *c = &v->changes[i];

		fprintf(f, "%s{\"kind\":\"%s\",\"pid\":%u,\"comm\":", i ? "," : "",
			kind_name(c->key.kind), c->key.tgid);
		json_string(f, c->v.comm[0] ? c->v.comm : NULL);
		json_dev(f, "dev", c->key.dev);
		fputs(",\"device\":", f);
		json_string(f, c->device);
		json_dev(f, "file_dev", c->key.file_dev);
		fprintf(f, ",\"ino\":%llu,\"path\":", (unsigned long long)c->key.ino);
		json_string(f, c->path);
		fprintf(f, ",\"pages\":%llu,\"last_offset\":%llu}", (unsigned long long)c->v.pages,
			(unsigned long long)c->v.offset);
	}
	fputc(']', f);
}

void print_verify_json(FILE *f, const struct spt_verify_summary *v, size_t top)
{
	const struct spt_verify_totals *t = &v->totals;

	fprintf(f, ",\"verify\":{\"every\":%u,\"located\":%s,\"requests_seen\":%llu,"
		   "\"requests_sampled\":%llu,\"pages_seen\":%llu,\"pages_verified\":%llu,"
		   "\"pages_changed\":%llu,\"pages_unverified\":%llu,\"pages_in_flight\":%llu,"
		   "\"rows_dropped\":%llu,\"direct_untracked\":%llu,\"changed_by_kind\":{",
		v->every, v->located ? "true" : "false", (unsigned long long)t->requests_seen,
		(unsigned long long)t->requests_sampled, (unsigned long long)t->pages_seen,
		(unsigned long long)t->pages_verified, (unsigned long long)t->pages_changed,
		(unsigned long long)t->pages_unverified, (unsigned long long)v->pending,
		(unsigned long long)t->rows_dropped, (unsigned long long)t->direct_untracked);
	for (__u32 k = 0; k < SPT_PAGE_KIND_MAX; k++)
		fprintf(f, "%s\"%s\":%llu", k ? "," : "", spt_page_kind_names[k],
			(unsigned long long)changed_of_kind(v, k));
	fputc('}', f);
	json_verify_rows(f, v, top);
	fputc('}', f);
}

/* One counter family per device and kind, HELP and TYPE even without rows. */
static void prom_family(FILE *f, const struct spt_verify_summary *v, const char *name,
			const char *help, size_t field)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
	for (size_t i = 0; i < v->ndevs; i++) {
		const struct verify_dev_row *d = &v->devs[i];
		__u64 n = *(const __u64 *)((const char *)&d->s + field);

		fprintf(f, "%s{device=", name);
		prom_label_value(f, d->device);
		fprintf(f, ",kind=\"%s\"} %llu\n", kind_name(d->key.kind), (unsigned long long)n);
	}
}

void prom_verify(FILE *f, const struct spt_verify_summary *v)
{
	prom_family(f, v, "stablepage_pages_verified_total",
		    "Written pages hashed at issue and again at completion (--verify, sampled).",
		    offsetof(struct spt_verify_dev_stats, verified));
	prom_family(f, v, "stablepage_pages_changed_in_flight_total",
		    "Written pages whose content changed between issue and completion.",
		    offsetof(struct spt_verify_dev_stats, changed));
	prom_family(f, v, "stablepage_pages_unverified_total",
		    "Written pages of sampled requests that could not be hashed at both ends.",
		    offsetof(struct spt_verify_dev_stats, unverified));
	fprintf(f, "# HELP stablepage_verify_requests_sampled_total Write requests whose pages "
		   "were hashed (1 in --verify=N).\n# TYPE stablepage_verify_requests_sampled_total "
		   "counter\nstablepage_verify_requests_sampled_total %llu\n",
		(unsigned long long)v->totals.requests_sampled);
}

void verify_free(struct spt_verify_summary *v)
{
	for (size_t i = 0; i < v->nchanges; i++)
		free(v->changes[i].path);
	free(v->devs);
	free(v->changes);
	memset(v, 0, sizeof(*v));
}
