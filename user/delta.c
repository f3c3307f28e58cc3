// SPDX-License-Identifier: GPL-2.0
/*
 * --delta: an interval's counts, as the difference of two cumulative
 * summaries read from the maps. Nothing in the kernel is reset (the
 * Prometheus file stays cumulative, and a reset would race with the
 * counting), so the deltas of a run add up to its final summary exactly:
 * each is the next snapshot minus the previous one, and the last one is
 * taken from the final summary's snapshot.
 *
 * Counters become differences; what is a state stays as it is now (the
 * violations still in flight, the waits going on, a device's stable
 * writes, names). A histogram's delta is its slots', count's and sum's
 * differences: the samples that ended in the interval. Rows with nothing
 * new drop out, except the devices, which every report lists. --verify's
 * counts are subtracted the same way (its pages in flight are a state).
 * Pure: no I/O, unit-tested in tests/unit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "delta.h"

/* struct spt_totals is __u64 counters only: subtracted member by member. */
_Static_assert(sizeof(struct spt_totals) % sizeof(__u64) == 0, "spt_totals: __u64 counters only");
_Static_assert(sizeof(struct spt_verify_totals) % sizeof(__u64) == 0,
	       "spt_verify_totals: __u64 counters only");

static void sub_u64s(__u64 *to, const __u64 *from, size_t n)
{
	for (size_t i = 0; i < n; i++)
		to[i] -= from[i];
}

#define SUB(to, from) sub_u64s((to), (from), sizeof(to) / sizeof((to)[0]))

static bool any_u64(const __u64 *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i])
			return true;
	return false;
}

#define ANY(v) any_u64((v), sizeof(v) / sizeof((v)[0]))

static int cmp_dev_key(const void *pa, const void *pb)
{
	const struct dev_row *a = pa, *b = pb;

	return a->dev < b->dev ? -1 : a->dev > b->dev;
}

static int cmp_proc_key(const void *pa, const void *pb)
{
	const struct proc_row *a = pa, *b = pb;

	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static int cmp_file_key(const void *pa, const void *pb)
{
	const struct file_row *a = pa, *b = pb;

	if (a->key.dev != b->key.dev)
		return a->key.dev < b->key.dev ? -1 : 1;
	return a->key.ino < b->key.ino ? -1 : a->key.ino > b->key.ino;
}

static int cmp_cgroup_key(const void *pa, const void *pb)
{
	const struct cgroup_row *a = pa, *b = pb;

	return a->id < b->id ? -1 : a->id > b->id;
}

static int cmp_hist_key(const void *pa, const void *pb)
{
	const struct hist_row *a = pa, *b = pb;

	if (a->key.dev != b->key.dev)
		return a->key.dev < b->key.dev ? -1 : 1;
	if (a->key.type != b->key.type)
		return a->key.type < b->key.type ? -1 : 1;
	return a->key.kind < b->key.kind ? -1 : a->key.kind > b->key.kind;
}

/* The rows of cur minus their rows in prev (sorted by key), in cur's order,
 * without those left with nothing. */
#define DELTA_ROWS(d, cur, prev, field, n, cmp, sub, nonzero)                     \
	do {                                                                                 \
		(d)->field = calloc((cur)->n ? (cur)->n : 1, sizeof(*(cur)->field));         \
		if (!(d)->field)                                                             \
			return -ENOMEM;                                                      \
		for (size_t i = 0; i < (cur)->n; i++) {                                      \
			__typeof__((d)->field) r = &(d)->field[(d)->n], p;                   \
                                                                                             \
			*r = (cur)->field[i];                                                \
			p = (prev)->n ? bsearch(r, (prev)->field, (prev)->n, sizeof(*r), cmp) \
				      : NULL;                                                \
			if (p)                                                               \
				sub(r, p);                                                   \
			if (nonzero(r))                                                      \
				(d)->n++;                                                    \
		}                                                                            \
	} while (0)

static void sub_dev(struct dev_row *r, const struct dev_row *p)
{
	SUB(r->s.violations, p->s.violations);
	SUB(r->s.waits, p->s.waits);
	r->s.stable_dirtied -= p->s.stable_dirtied;
	r->s.failed_after_violation -= p->s.failed_after_violation;
}

static bool dev_keep(const struct dev_row *r)
{
	(void)r;
	return true; /* every device, as in every report */
}

/* Any of a's n counters below b's: a row of a new life (aged out and made
 * again, --row-age), whose counts are all new. */
static bool any_below(const __u64 *a, const __u64 *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] < b[i])
			return true;
	return false;
}

#define BELOW(a, b) any_below((a), (b), sizeof(a) / sizeof((a)[0]))

static void sub_proc(struct proc_row *r, const struct proc_row *p)
{
	if (BELOW(r->s.violations, p->s.violations) || BELOW(r->s.waits, p->s.waits) ||
	    r->s.would_stall_ns < p->s.would_stall_ns || r->s.stable_wait_ns < p->s.stable_wait_ns ||
	    r->s.failed_after_violation < p->s.failed_after_violation)
		return;
	SUB(r->s.violations, p->s.violations);
	SUB(r->s.waits, p->s.waits);
	r->s.would_stall_ns -= p->s.would_stall_ns;
	r->s.stable_wait_ns -= p->s.stable_wait_ns;
	r->s.failed_after_violation -= p->s.failed_after_violation;
}

static bool proc_nonzero(const struct proc_row *r)
{
	return ANY(r->s.violations) || ANY(r->s.waits) || r->s.would_stall_ns ||
	       r->s.stable_wait_ns || r->s.failed_after_violation;
}

static void sub_file(struct file_row *r, const struct file_row *p)
{
	if (BELOW(r->s.violations, p->s.violations) ||
	    r->s.failed_after_violation < p->s.failed_after_violation)
		return;
	SUB(r->s.violations, p->s.violations);
	r->s.failed_after_violation -= p->s.failed_after_violation;
}

static bool file_nonzero(const struct file_row *r)
{
	return ANY(r->s.violations) || r->s.failed_after_violation;
}

static void sub_cgroup(struct cgroup_row *r, const struct cgroup_row *p)
{
	SUB(r->violations, p->violations);
}

static bool cgroup_nonzero(const struct cgroup_row *r)
{
	return ANY(r->violations);
}

static void sub_hist(struct hist_row *r, const struct hist_row *p)
{
	SUB(r->h.slots, p->h.slots);
	r->h.count -= p->h.count;
	r->h.sum_ns -= p->h.sum_ns;
}

static bool hist_nonzero(const struct hist_row *r)
{
	return r->h.count != 0;
}

static int delta_rows(struct spt_summary *d, const struct spt_summary *cur,
		      const struct spt_summary *prev)
{
	DELTA_ROWS(d, cur, prev, devs, ndevs, cmp_dev_key, sub_dev, dev_keep);
	DELTA_ROWS(d, cur, prev, procs, nprocs, cmp_proc_key, sub_proc, proc_nonzero);
	DELTA_ROWS(d, cur, prev, files, nfiles, cmp_file_key, sub_file, file_nonzero);
	DELTA_ROWS(d, cur, prev, cgroups, ncgroups, cmp_cgroup_key, sub_cgroup, cgroup_nonzero);
	DELTA_ROWS(d, cur, prev, hists, nhists, cmp_hist_key, sub_hist, hist_nonzero);
	return 0;
}

static int cmp_verify_dev_key(const void *pa, const void *pb)
{
	const struct verify_dev_row *a = pa, *b = pb;

	if (a->key.dev != b->key.dev)
		return a->key.dev < b->key.dev ? -1 : 1;
	return a->key.kind < b->key.kind ? -1 : a->key.kind > b->key.kind;
}

static int cmp_verify_change_key(const void *pa, const void *pb)
{
	const struct spt_verify_change_key *a = &((const struct verify_change_row *)pa)->key,
					   *b = &((const struct verify_change_row *)pb)->key;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->tgid != b->tgid)
		return a->tgid < b->tgid ? -1 : 1;
	if (a->file_dev != b->file_dev)
		return a->file_dev < b->file_dev ? -1 : 1;
	return a->ino < b->ino ? -1 : a->ino > b->ino;
}

static void sub_verify_dev(struct verify_dev_row *r, const struct verify_dev_row *p)
{
	r->s.verified -= p->s.verified;
	r->s.changed -= p->s.changed;
	r->s.unverified -= p->s.unverified;
}

static bool verify_dev_nonzero(const struct verify_dev_row *r)
{
	return r->s.verified || r->s.changed || r->s.unverified;
}

/* The latest offset, the comm: states, as now. */
static void sub_verify_change(struct verify_change_row *r, const struct verify_change_row *p)
{
	r->v.pages -= p->v.pages;
}

static bool verify_change_nonzero(const struct verify_change_row *r)
{
	return r->v.pages != 0;
}

static int verify_delta_rows(struct spt_verify_summary *d, const struct spt_verify_summary *cur,
			     const struct spt_verify_summary *prev)
{
	DELTA_ROWS(d, cur, prev, devs, ndevs, cmp_verify_dev_key, sub_verify_dev,
		   verify_dev_nonzero);
	DELTA_ROWS(d, cur, prev, changes, nchanges, cmp_verify_change_key, sub_verify_change,
		   verify_change_nonzero);
	return 0;
}

/* d->verify_own = cur - prev (NULL: nothing before), d->verify pointing to it. */
static int delta_verify(struct spt_summary *d, const struct spt_verify_summary *cur,
			const struct spt_verify_summary *prev)
{
	static const struct spt_verify_summary none;
	struct spt_verify_summary *v = calloc(1, sizeof(*v));
	int err;

	if (!v)
		return -ENOMEM;
	d->verify_own = v;
	*v = *cur;
	v->devs = NULL, v->ndevs = 0;
	v->changes = NULL, v->nchanges = 0;
	prev = prev ? prev : &none;
	sub_u64s((__u64 *)&v->totals, (const __u64 *)&prev->totals,
		 sizeof(v->totals) / sizeof(__u64));
	err = verify_delta_rows(v, cur, prev);
	/* cur's paths, as the files': resolved again for the delta's top rows */
	for (size_t i = 0; i < v->nchanges; i++)
		v->changes[i].path = NULL;
	if (err)
		return err;
	verify_sort(v);
	d->verify = v;
	return 0;
}

static void *dup_rows(const void *rows, size_t n, size_t size)
{
	void *to = calloc(n ? n : 1, size);

	if (to && n)
		memcpy(to, rows, n * size);
	return to;
}

/* s->verify's counts, kept by s itself (no paths: a prev's are not printed). */
static int keep_verify(struct spt_summary *s)
{
	const struct spt_verify_summary *from = s->verify;
	struct spt_verify_summary *v = calloc(1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	*v = *from;
	v->devs = dup_rows(from->devs, from->ndevs, sizeof(*from->devs));
	v->changes = dup_rows(from->changes, from->nchanges, sizeof(*from->changes));
	if (!v->devs || !v->changes) {
		free(v->devs), free(v->changes), free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < v->nchanges; i++)
		v->changes[i].path = NULL;
	s->verify_own = v;
	return 0;
}

int summary_sort_by_key(struct spt_summary *s)
{
	qsort(s->devs, s->ndevs, sizeof(*s->devs), cmp_dev_key);
	qsort(s->procs, s->nprocs, sizeof(*s->procs), cmp_proc_key);
	qsort(s->files, s->nfiles, sizeof(*s->files), cmp_file_key);
	qsort(s->cgroups, s->ncgroups, sizeof(*s->cgroups), cmp_cgroup_key);
	qsort(s->hists, s->nhists, sizeof(*s->hists), cmp_hist_key);
	if (!s->verify_own && s->verify && keep_verify(s))
		return -ENOMEM;
	if (s->verify_own) {
		struct spt_verify_summary *v = s->verify_own;

		qsort(v->devs, v->ndevs, sizeof(*v->devs), cmp_verify_dev_key);
		qsort(v->changes, v->nchanges, sizeof(*v->changes), cmp_verify_change_key);
	}
	return 0;
}

int summary_delta(struct spt_summary *d, const struct spt_summary *cur,
		  const struct spt_summary *prev)
{
	int err;

	*d = *cur;
	d->devs = NULL, d->ndevs = 0;
	d->procs = NULL, d->nprocs = 0;
	d->files = NULL, d->nfiles = 0;
	d->cgroups = NULL, d->ncgroups = 0;
	d->hists = NULL, d->nhists = 0;
	d->verify = NULL, d->verify_own = NULL;
	d->delta = true;
	d->duration_s = cur->duration_s - prev->duration_s;
	d->paused_s = cur->paused_s - prev->paused_s;
	d->since_ts = prev->ts;
	sub_u64s((__u64 *)&d->totals, (const __u64 *)&prev->totals,
		 sizeof(d->totals) / sizeof(__u64));
	err = delta_rows(d, cur, prev);
	/* The paths are cur's to free (also when delta_rows failed midway): the
	 * caller resolves the delta's top ones. */
	for (size_t i = 0; i < d->nfiles; i++)
		d->files[i].path = NULL;
	for (size_t i = 0; i < d->ncgroups; i++)
		d->cgroups[i].path = NULL;
	if (err)
		return err;
	/* cur's order, but by the interval's counts now. */
	sort_procs(d->procs, d->nprocs);
	sort_files(d->files, d->nfiles);
	sort_cgroups(d->cgroups, d->ncgroups);
	return cur->verify ? delta_verify(d, cur->verify, prev->verify_own) : 0;
}
