// SPDX-License-Identifier: GPL-2.0
/*
 * The summary's rows, before any printing: per-CPU totals summed, the
 * writer rows (process x file) folded into the per-process, per-file and
 * per-device rows, the orders every report lists them in, and the
 * histograms' names and counts. Pure: no I/O, unit-tested in tests/unit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

const char *const spt_kind_names[SPT_KIND_MAX] = { "mmap", "write", "other", "metadata" };

__u64 kinds_total(const __u64 v[SPT_KIND_MAX])
{
	__u64 sum = 0;

	for (int k = 0; k < SPT_KIND_MAX; k++)
		sum += v[k];
	return sum;
}

/* A stable wait is a writer (write syscall or write fault) sleeping until
 * writeback ends; waits from fsync, msync(MS_SYNC), truncate or kernel
 * threads are "other waits". */
__u64 stable_waits(const __u64 waits[SPT_KIND_MAX])
{
	return waits[SPT_KIND_MMAP] + waits[SPT_KIND_WRITE];
}

void totals_sum(struct spt_totals *sum, const struct spt_totals *percpu, int ncpus)
{
	memset(sum, 0, sizeof(*sum));
	for (int c = 0; c < ncpus; c++) {
		const struct spt_totals *t = &percpu[c];

		for (int k = 0; k < SPT_KIND_MAX; k++) {
			sum->violations[k] += t->violations[k];
			sum->waits[k] += t->waits[k];
			sum->holds[k] += t->holds[k];
		}
		sum->holds_expired += t->holds_expired;
		sum->kills += t->kills;
		sum->would_hold += t->would_hold;
		sum->hold_range_capped += t->hold_range_capped;
		sum->holds_refused_stale += t->holds_refused_stale;
		sum->holds_unrecorded += t->holds_unrecorded;

		sum->stable_dirtied += t->stable_dirtied;
		sum->events_lost += t->events_lost;
		sum->agg_dropped += t->agg_dropped;
		sum->would_stall_untimed += t->would_stall_untimed;
		sum->wait_untimed += t->wait_untimed;
		sum->mkwrite_io_ended += t->mkwrite_io_ended;
		sum->writeback_untimed += t->writeback_untimed;
		sum->failed_after_violation += t->failed_after_violation;
	}
}

static int cmp_u64_desc(__u64 a, __u64 b)
{
	return a < b ? 1 : a > b ? -1 : 0;
}

static int cmp_proc(const void *pa, const void *pb)
{
	const struct proc_row *a = pa, *b = pb;
	int c = cmp_u64_desc(kinds_total(a->s.violations), kinds_total(b->s.violations));

	if (!c)
		c = cmp_u64_desc(stable_waits(a->s.waits), stable_waits(b->s.waits));
	if (!c)
		c = a->pid < b->pid ? -1 : a->pid > b->pid;
	return c;
}

static int cmp_file(const void *pa, const void *pb)
{
	const struct file_row *a = pa, *b = pb;
	int c = cmp_u64_desc(kinds_total(a->s.violations), kinds_total(b->s.violations));

	if (!c)
		c = a->key.dev < b->key.dev ? -1 : a->key.dev > b->key.dev;
	if (!c)
		c = a->key.ino < b->key.ino ? -1 : a->key.ino > b->key.ino;
	return c;
}

static int cmp_dev(const void *pa, const void *pb)
{
	const struct dev_row *a = pa, *b = pb;

	return a->dev < b->dev ? -1 : a->dev > b->dev;
}

void sort_procs(struct proc_row *rows, size_t n)
{
	qsort(rows, n, sizeof(*rows), cmp_proc);
}

void sort_files(struct file_row *rows, size_t n)
{
	qsort(rows, n, sizeof(*rows), cmp_file);
}

void sort_devs(struct dev_row *rows, size_t n)
{
	qsort(rows, n, sizeof(*rows), cmp_dev);
}

static int cmp_writer_file(const void *pa, const void *pb)
{
	const struct writer_row *a = pa, *b = pb;

	if (a->key.dev != b->key.dev)
		return a->key.dev < b->key.dev ? -1 : 1;
	return a->key.ino < b->key.ino ? -1 : a->key.ino > b->key.ino;
}

static int cmp_writer_tgid(const void *pa, const void *pb)
{
	const struct writer_row *a = pa, *b = pb;

	return a->key.tgid < b->key.tgid ? -1 : a->key.tgid > b->key.tgid;
}

static int cmp_proc_pid(const void *pa, const void *pb)
{
	const struct proc_row *a = pa, *b = pb;

	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static void add_kinds(__u64 to[SPT_KIND_MAX], const __u64 from[SPT_KIND_MAX])
{
	for (int k = 0; k < SPT_KIND_MAX; k++)
		to[k] += from[k];
}

static int fold_files(struct spt_summary *s, struct writer_row *rows, size_t n)
{
	struct file_row *files = calloc(n ? n : 1, sizeof(*files)), *f = NULL;
	size_t nfiles = 0;
	__u64 last_ns = 0;

	if (!files)
		return -ENOMEM;
	qsort(rows, n, sizeof(*rows), cmp_writer_file);
	for (size_t i = 0; i < n; i++) {
		const struct writer_row *w = &rows[i];

		if (!i || cmp_writer_file(&rows[i - 1], w)) {
			f = &files[nfiles++];
			f->key.dev = w->key.dev;
			f->key.ino = w->key.ino;
			f->s.generation = w->s.generation;
			last_ns = 0;
		}
		add_kinds(f->s.violations, w->s.violations);
		f->s.failed_after_violation += w->s.failed_after_violation;
		if (w->s.last_ns >= last_ns) {
			last_ns = w->s.last_ns;
			f->s.last_pid = w->key.tgid;
		}
	}
	free(s->files);
	s->files = files;
	s->nfiles = nfiles;
	return 0;
}

static struct dev_row *dev_row_of(struct spt_summary *s, __u32 dev)
{
	struct dev_row *devs;

	for (size_t i = 0; i < s->ndevs; i++)
		if (s->devs[i].dev == dev)
			return &s->devs[i];
	devs = realloc(s->devs, (s->ndevs + 1) * sizeof(*devs));
	if (!devs)
		return NULL;
	s->devs = devs;
	memset(&devs[s->ndevs], 0, sizeof(*devs));
	devs[s->ndevs].dev = dev;
	return &devs[s->ndevs++];
}

/* Among the first n rows, sorted by pid, or appended. */
static struct proc_row *proc_row_of(struct spt_summary *s, size_t n, __u32 pid)
{
	struct proc_row key = { .pid = pid }, *p, *procs;

	p = bsearch(&key, s->procs, n, sizeof(key), cmp_proc_pid);
	if (p)
		return p;
	procs = realloc(s->procs, (s->nprocs + 1) * sizeof(*procs));
	if (!procs)
		return NULL;
	s->procs = procs;
	memset(&procs[s->nprocs], 0, sizeof(*procs));
	procs[s->nprocs].pid = pid;
	return &procs[s->nprocs++];
}

static int cmp_writer_cgroup(const void *pa, const void *pb)
{
	const struct writer_row *a = pa, *b = pb;

	return a->key.cgroup < b->key.cgroup ? -1 : a->key.cgroup > b->key.cgroup;
}

static int fold_cgroups(struct spt_summary *s, struct writer_row *rows, size_t n)
{
	struct cgroup_row *cgs = calloc(n ? n : 1, sizeof(*cgs));
	size_t ncgs = 0;

	if (!cgs)
		return -ENOMEM;
	qsort(rows, n, sizeof(*rows), cmp_writer_cgroup);
	for (size_t i = 0; i < n; i++) {
		if (!i || rows[i - 1].key.cgroup != rows[i].key.cgroup)
			cgs[ncgs++].id = rows[i].key.cgroup;
		add_kinds(cgs[ncgs - 1].violations, rows[i].s.violations);
	}
	free(s->cgroups);
	s->cgroups = cgs;
	s->ncgroups = ncgs;
	return 0;
}

static int cmp_cgroup(const void *pa, const void *pb)
{
	const struct cgroup_row *a = pa, *b = pb;
	int c = cmp_u64_desc(kinds_total(a->violations), kinds_total(b->violations));

	return c ? c : a->id < b->id ? -1 : a->id > b->id;
}

void sort_cgroups(struct cgroup_row *rows, size_t n)
{
	qsort(rows, n, sizeof(*rows), cmp_cgroup);
}

__u64 cgroups_unattributed(const struct spt_summary *s)
{
	__u64 sum = 0, total = kinds_total(s->totals.violations);

	for (size_t i = 0; i < s->ncgroups; i++)
		sum += kinds_total(s->cgroups[i].violations);
	/* The maps are read one after the other while tracing goes on. */
	return total > sum ? total - sum : 0;
}

int fold_writers(struct spt_summary *s, struct writer_row *rows, size_t n)
{
	size_t nprocs = s->nprocs;
	int err = fold_files(s, rows, n);

	if (!err)
		err = fold_cgroups(s, rows, n);
	if (err)
		return err;
	qsort(s->procs, nprocs, sizeof(*s->procs), cmp_proc_pid);
	qsort(rows, n, sizeof(*rows), cmp_writer_tgid);
	for (size_t i = 0; i < n; i++) {
		struct dev_row *d = dev_row_of(s, rows[i].key.dev);
		struct proc_row *p = proc_row_of(s, nprocs, rows[i].key.tgid);

		if (!d || !p)
			return -ENOMEM;
		add_kinds(d->s.violations, rows[i].s.violations);
		add_kinds(p->s.violations, rows[i].s.violations);
		d->s.failed_after_violation += rows[i].s.failed_after_violation;
		p->s.failed_after_violation += rows[i].s.failed_after_violation;
	}
	return 0;
}

int fold_dev_counts(struct spt_summary *s, const struct spt_dev_counts *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct dev_row *d;

		if (!c[i].dev)
			continue;
		d = dev_row_of(s, c[i].dev);
		if (!d)
			return -ENOMEM;
		add_kinds(d->s.waits, c[i].waits);
		d->s.stable_dirtied += c[i].stable_dirtied;
	}
	return 0;
}

void hist_set_count(struct spt_hist *h)
{
	h->count = 0;
	for (int i = 0; i < SPT_HIST_SLOTS; i++)
		h->count += h->slots[i];
}

/* Samples in the histograms of this type (and kind, unless kind < 0). */
__u64 hists_count(const struct spt_summary *s, int type, int kind)
{
	__u64 n = 0;

	for (size_t i = 0; i < s->nhists; i++)
		if (s->hists[i].key.type == type && (kind < 0 || s->hists[i].key.kind == kind))
			n += s->hists[i].h.count;
	return n;
}

static int cmp_hist(const void *pa, const void *pb)
{
	const struct hist_row *a = pa, *b = pb;
	int c;

	if (a->key.type != b->key.type)
		return a->key.type < b->key.type ? -1 : 1;
	c = strcmp(a->device, b->device);
	if (c)
		return c;
	if (a->key.kind != b->key.kind)
		return a->key.kind < b->key.kind ? -1 : 1;
	return a->key.dev < b->key.dev ? -1 : a->key.dev > b->key.dev;
}

void sort_hists(struct hist_row *rows, size_t n)
{
	qsort(rows, n, sizeof(*rows), cmp_hist);
}

/* Histograms of I/O, keyed by device only (kind is 0). */
bool hist_per_device(__u16 type)
{
	return type == SPT_HIST_WRITEBACK || type == SPT_HIST_FOLIO_WRITEBACK;
}

const char *hist_name(const struct spt_hist_key *k)
{
	switch (k->type) {
	case SPT_HIST_WRITEBACK:
		return "writeback";
	case SPT_HIST_WAIT:
		return k->kind == SPT_KIND_OTHER ? "other-wait" : "stable-wait";
	case SPT_HIST_WOULD_STALL:
		return "would-stall";
	case SPT_HIST_FOLIO_WRITEBACK:
		return "folio-writeback";
	}
	return "unknown";
}

