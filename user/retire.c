// SPDX-License-Identifier: GPL-2.0
/*
 * The retired counts of aged-out rows and the idle rule (retire.h). Pure:
 * no I/O, unit-tested in tests/unit. The tables grow with the devices, the
 * cgroups and the comms that ever had a row pruned; the rows themselves
 * (pids, files) are not kept.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "retire.h"

/* find_or_add's matchers read the key of a retired row and of a summary
 * row alike. */
_Static_assert(offsetof(struct dev_row, dev) == offsetof(struct retired_dev, dev), "dev key");
_Static_assert(offsetof(struct cgroup_row, id) == offsetof(struct retired_cgroup, id), "cgroup key");

bool writer_idle(const struct writer_row *w, __u64 now_ns, __u64 age_ns)
{
	return w->s.last_ns && now_ns >= w->s.last_ns && now_ns - w->s.last_ns >= age_ns;
}

/* Every counter of the row added up: any change changes it (they only grow). */
static __u64 proc_sig(const struct proc_row *p)
{
	return kinds_total(p->s.violations) + kinds_total(p->s.waits) + p->s.would_stall_ns +
	       p->s.stable_wait_ns + p->s.failed_after_violation;
}

static int cmp_seen(const void *pa, const void *pb)
{
	const struct proc_seen *a = pa, *b = pb;

	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static int cmp_u32(const void *pa, const void *pb)
{
	__u32 a = *(const __u32 *)pa, b = *(const __u32 *)pb;

	return a < b ? -1 : a > b;
}

/* The writer rows' processes, sorted: looked up once per process row. */
static __u32 *writer_tgids(const struct writer_row *w, size_t n)
{
	__u32 *t = calloc(n ? n : 1, sizeof(*t));

	if (!t)
		return NULL;
	for (size_t i = 0; i < n; i++)
		t[i] = w[i].key.tgid;
	qsort(t, n, sizeof(*t), cmp_u32);
	return t;
}

int procs_idle(struct spt_retired *r, const struct proc_row *rows, size_t n, double now,
	       double *idle_for)
{
	struct proc_seen *seen = calloc(n ? n : 1, sizeof(*seen));

	if (!seen)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct proc_seen *s = &seen[i], key = { .pid = rows[i].pid }, *was;

		s->pid = rows[i].pid;
		memcpy(s->comm, rows[i].s.comm, sizeof(s->comm));
		s->sig = proc_sig(&rows[i]);
		s->since = now;
		was = r->nseen ? bsearch(&key, r->seen, r->nseen, sizeof(key), cmp_seen) : NULL;
		if (was && was->sig == s->sig && !memcmp(was->comm, s->comm, sizeof(s->comm)))
			s->since = was->since;
		idle_for[i] = now - s->since;
	}
	qsort(seen, n, sizeof(*seen), cmp_seen);
	free(r->seen);
	r->seen = seen;
	r->nseen = n;
	return 0;
}

int procs_keep_writers(const struct proc_row *rows, size_t n, const struct writer_row *writers,
		       size_t nwriters, double *idle_for)
{
	__u32 *tgids = writer_tgids(writers, nwriters);

	if (!tgids)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (bsearch(&rows[i].pid, tgids, nwriters, sizeof(*tgids), cmp_u32))
			idle_for[i] = -1;
	free(tgids);
	return 0;
}

static int cmp_longest_first(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return a > b ? -1 : a < b;
}

double pressure_age(double *idle_for, size_t n, size_t max_rows, double age)
{
	size_t excess;
	double at;

	if (!max_rows || n <= max_rows - max_rows / 4)
		return age;
	excess = n - max_rows / 2;
	qsort(idle_for, n, sizeof(*idle_for), cmp_longest_first);
	at = idle_for[excess - 1];
	if (at < SPT_ROW_AGE_MIN_S)
		at = SPT_ROW_AGE_MIN_S;
	return at < age ? at : age;
}

/* The element of *arr (n of them, each size bytes) that match() finds, or
 * a new zeroed one appended. */
static void *find_or_add(void **arr, size_t *n, size_t size,
			 bool (*match)(const void *elem, const void *key), const void *key)
{
	char *a = *arr;

	for (size_t i = 0; i < *n; i++)
		if (match(a + i * size, key))
			return a + i * size;
	a = realloc(a, (*n + 1) * size);
	if (!a)
		return NULL;
	*arr = a;
	memset(a + *n * size, 0, size);
	return a + (*n)++ * size;
}

static bool dev_match(const void *e, const void *key)
{
	return ((const struct retired_dev *)e)->dev == *(const __u32 *)key;
}

static bool cgroup_match(const void *e, const void *key)
{
	return ((const struct retired_cgroup *)e)->id == *(const __u64 *)key;
}

static bool comm_match(const void *e, const void *key)
{
	return !strncmp(((const struct retired_comm *)e)->comm, key, SPT_COMM_LEN);
}

static void add_kinds(__u64 to[SPT_KIND_MAX], const __u64 from[SPT_KIND_MAX])
{
	for (int k = 0; k < SPT_KIND_MAX; k++)
		to[k] += from[k];
}

static struct retired_comm *comm_of(struct spt_retired *r, const char *comm)
{
	char key[SPT_COMM_LEN] = "";
	struct retired_comm *c;

	strncpy(key, comm, sizeof(key) - 1);
	c = find_or_add((void **)&r->comms, &r->ncomms, sizeof(*c), comm_match, key);
	if (c && !c->comm[0])
		memcpy(c->comm, key, sizeof(key));
	return c;
}

int retire_writer(struct spt_retired *r, const struct writer_row *w, const char *comm)
{
	struct retired_dev *d = find_or_add((void **)&r->devs, &r->ndevs, sizeof(*d), dev_match,
					    &w->key.dev);
	struct retired_cgroup *cg;
	struct retired_comm *c;

	if (!d)
		return -ENOMEM;
	d->dev = w->key.dev;
	add_kinds(d->violations, w->s.violations);
	d->failed_after_violation += w->s.failed_after_violation;
	cg = find_or_add((void **)&r->cgroups, &r->ncgroups, sizeof(*cg), cgroup_match,
			 &w->key.cgroup);
	if (!cg)
		return -ENOMEM;
	cg->id = w->key.cgroup;
	add_kinds(cg->violations, w->s.violations);
	c = comm_of(r, comm ? comm : "");
	if (!c)
		return -ENOMEM;
	add_kinds(c->violations, w->s.violations);
	r->writers_pruned++;
	return 0;
}

int retire_proc(struct spt_retired *r, const struct proc_row *p)
{
	struct retired_comm *c = comm_of(r, p->s.comm);

	if (!c)
		return -ENOMEM;
	add_kinds(c->violations, p->s.violations);
	r->procs_pruned++;
	return 0;
}

int retired_apply(const struct spt_retired *r, struct spt_summary *s)
{
	for (size_t i = 0; i < r->ndevs; i++) {
		struct dev_row *d = find_or_add((void **)&s->devs, &s->ndevs, sizeof(*d),
						dev_match, &r->devs[i].dev);

		if (!d)
			return -ENOMEM;
		d->dev = r->devs[i].dev;
		add_kinds(d->s.violations, r->devs[i].violations);
		d->s.failed_after_violation += r->devs[i].failed_after_violation;
	}
	for (size_t i = 0; i < r->ncgroups; i++) {
		struct cgroup_row *c = find_or_add((void **)&s->cgroups, &s->ncgroups, sizeof(*c),
						   cgroup_match, &r->cgroups[i].id);

		if (!c)
			return -ENOMEM;
		c->id = r->cgroups[i].id;
		add_kinds(c->violations, r->cgroups[i].violations);
	}
	return 0;
}

void retired_free(struct spt_retired *r)
{
	free(r->devs);
	free(r->cgroups);
	free(r->comms);
	free(r->seen);
	memset(r, 0, sizeof(*r));
}
