// SPDX-License-Identifier: GPL-2.0
/*
 * Aging out the per-process and per-writer rows of the BPF maps
 * (docs/metrics.md, "Rows that age out"). A row is read and deleted in one
 * step (BPF_MAP_LOOKUP_AND_DELETE_ELEM), so the counts kept are the row's
 * last ones; a BPF program that found the row just before and adds to it
 * just after the deletion adds to a row that is gone. Only rows idle for
 * the whole age are removed, so that takes a write landing in the
 * microseconds of the deletion after minutes of nothing; the kernel's
 * totals count it either way.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "prune.h"
#include "summary.h"
#include "stablepage.skel.h"

#ifndef ENOTSUPP
#define ENOTSUPP 524 /* the kernel's, not in the uapi headers */
#endif

/* Reads and deletes a row. 0, -ENOENT when it went meanwhile, or -errno.
 * Kernels without the command for hash maps (before 5.14): read, then delete. */
static int take_row(const struct bpf_map *map, const void *key, void *value)
{
	int fd = bpf_map__fd(map);

	if (!bpf_map_lookup_and_delete_elem(fd, key, value))
		return 0;
	if (errno != EINVAL && errno != ENOTSUPP && errno != EOPNOTSUPP)
		return -errno;
	if (bpf_map_lookup_elem(fd, key, value) || bpf_map_delete_elem(fd, key))
		return -errno;
	return 0;
}

static int cmp_proc_pid(const void *pa, const void *pb)
{
	const struct proc_row *a = pa, *b = pb;

	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static const char *comm_of(const struct proc_row *procs, size_t n, __u32 tgid)
{
	struct proc_row key = { .pid = tgid };
	const struct proc_row *p = bsearch(&key, procs, n, sizeof(key), cmp_proc_pid);

	return p ? p->s.comm : "";
}

/* The age of this pass: shorter when the writer map is filling up. */
static __u64 writers_age_ns(struct stablepage_bpf *skel, const struct writer_row *w, size_t n,
			    __u64 now_ns, __u64 age_ns)
{
	double *idle_for = calloc(n ? n : 1, sizeof(*idle_for)), age;

	if (!idle_for)
		return age_ns;
	for (size_t i = 0; i < n; i++)
		idle_for[i] = w[i].s.last_ns && now_ns >= w[i].s.last_ns
				      ? (now_ns - w[i].s.last_ns) / 1e9
				      : -1;
	age = pressure_age(idle_for, n, bpf_map__max_entries(skel->maps.writer_stats),
			   age_ns / 1e9);
	free(idle_for);
	return (__u64)(age * 1e9);
}

/* The idle writer rows go; those left are moved to the front (*n of them). */
static int prune_writers(struct stablepage_bpf *skel, struct spt_retired *r,
			 struct writer_row *w, size_t *n, const struct proc_row *procs,
			 size_t nprocs, __u64 age_ns)
{
	struct timespec ts;
	size_t kept = 0;
	__u64 now_ns;
	int err = 0;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* bpf_ktime_get_ns()'s clock */
	now_ns = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	age_ns = writers_age_ns(skel, w, *n, now_ns, age_ns);
	for (size_t i = 0; i < *n; i++) {
		struct writer_row taken = { .key = w[i].key };
		int e;

		if (err || !writer_idle(&w[i], now_ns, age_ns)) {
			w[kept++] = w[i];
			continue;
		}
		e = take_row(skel->maps.writer_stats, &taken.key, &taken.s);
		if (!e)
			err = retire_writer(r, &taken, comm_of(procs, nprocs, taken.key.tgid));
		else if (e != -ENOENT)
			err = e;
	}
	*n = kept;
	return err;
}

/* The process rows idle for the age go, but those with a writer row left:
 * idle_for (from procs_idle(), this pass) is marked and reordered. */
static int prune_procs(struct stablepage_bpf *skel, struct spt_retired *r,
		       const struct proc_row *procs, size_t nprocs, const struct writer_row *w,
		       size_t nw, double *idle_for, double age)
{
	double *sorted = calloc(nprocs ? nprocs : 1, sizeof(*sorted));
	int err = -ENOMEM;

	if (!sorted)
		return err;
	err = procs_keep_writers(procs, nprocs, w, nw, idle_for);
	memcpy(sorted, idle_for, nprocs * sizeof(*sorted));
	age = pressure_age(sorted, nprocs, bpf_map__max_entries(skel->maps.proc_stats), age);
	for (size_t i = 0; !err && i < nprocs; i++) {
		struct proc_row taken = { .pid = procs[i].pid };

		if (idle_for[i] < 0 || idle_for[i] < age)
			continue;
		err = take_row(skel->maps.proc_stats, &taken.pid, &taken.s);
		if (!err)
			err = retire_proc(r, &taken);
		else if (err == -ENOENT)
			err = 0;
	}
	free(sorted);
	return err;
}

/*
 * How long each process row has been idle, once per pass (procs_idle()
 * remembers the rows it saw). A process row goes only with its writer rows,
 * so a full process map must also shorten the writers' age: the age its
 * pressure asks for, counted on every process row as if none had a writer
 * row left.
 */
static int procs_pressure_age(struct stablepage_bpf *skel, struct spt_retired *r,
			      const struct proc_row *procs, size_t nprocs, double *idle_for,
			      double *age)
{
	double *sorted = calloc(nprocs ? nprocs : 1, sizeof(*sorted));
	struct timespec ts;
	int err;

	if (!sorted)
		return -ENOMEM;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	err = procs_idle(r, procs, nprocs, ts.tv_sec + ts.tv_nsec / 1e9, idle_for);
	if (!err) {
		memcpy(sorted, idle_for, nprocs * sizeof(*sorted));
		*age = pressure_age(sorted, nprocs, bpf_map__max_entries(skel->maps.proc_stats),
				    *age);
	}
	free(sorted);
	return err;
}

int prune_rows(struct stablepage_bpf *skel, struct spt_retired *r, double age)
{
	struct writer_row *w = NULL;
	struct proc_row *procs = NULL;
	double *idle_for = NULL;
	size_t nw = 0, nprocs = 0;
	int err;

	err = map_dump(skel->maps.proc_stats, ROW_LAYOUT(struct proc_row, pid, s),
		       (void **)&procs, &nprocs);
	if (!err)
		err = map_dump(skel->maps.writer_stats, ROW_LAYOUT(struct writer_row, key, s),
			       (void **)&w, &nw);
	if (!err) {
		qsort(procs, nprocs, sizeof(*procs), cmp_proc_pid);
		idle_for = calloc(nprocs ? nprocs : 1, sizeof(*idle_for));
		err = idle_for ? procs_pressure_age(skel, r, procs, nprocs, idle_for, &age) : -ENOMEM;
	}
	if (!err)
		err = prune_writers(skel, r, w, &nw, procs, nprocs, (__u64)(age * 1e9));
	if (!err)
		err = prune_procs(skel, r, procs, nprocs, w, nw, idle_for, age);
	free(idle_for);
	free(w);
	free(procs);
	return err;
}
