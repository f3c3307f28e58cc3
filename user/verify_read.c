// SPDX-License-Identifier: GPL-2.0
/* --verify: its maps read into a struct spt_verify_summary. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "resolve.h"
#include "verify_user.h"
#include "stablepage.skel.h"

/* Every entry of a hash map: keys at key_off, values at val_off of rows
 * row_size apart. A walk cut by a concurrent delete keeps what it read. */
static int dump(const struct bpf_map *map, size_t row_size, size_t key_off, size_t val_off,
		void **rows, size_t *n)
{
	size_t cap = bpf_map__max_entries(map), ks = bpf_map__key_size(map);
	size_t vs = bpf_map__value_size(map);
	char *base = calloc(cap ? cap : 1, row_size);
	void *prev = NULL;

	*rows = base;
	*n = 0;
	if (!base)
		return -ENOMEM;
	while (*n < cap) {
		char *row = base + *n * row_size;

		if (bpf_map__get_next_key(map, prev, row + key_off, ks) ||
		    bpf_map__lookup_elem(map, row + key_off, ks, row + val_off, vs, 0))
			break;
		prev = row + key_off;
		(*n)++;
	}
	return 0;
}

static int read_totals(struct stablepage_bpf *skel, struct spt_verify_totals *sum)
{
	int ncpus = libbpf_num_possible_cpus();
	struct spt_verify_totals *percpu;
	__u32 zero = 0;
	int err;

	if (ncpus <= 0)
		return -EINVAL;
	percpu = calloc(ncpus, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	err = bpf_map__lookup_elem(skel->maps.verify_totals, &zero, sizeof(zero), percpu,
				   sizeof(*percpu) * ncpus, 0);
	memset(sum, 0, sizeof(*sum));
	for (int c = 0; !err && c < ncpus; c++) {
		const __u64 *from = (const __u64 *)&percpu[c];
		__u64 *to = (__u64 *)sum;

		for (size_t i = 0; i < sizeof(*sum) / sizeof(__u64); i++)
			to[i] += from[i];
	}
	free(percpu);
	return err;
}

int verify_read(struct stablepage_bpf *skel, unsigned int every, struct spt_verify_summary *v,
		size_t top)
{
	int err;

	memset(v, 0, sizeof(*v));
	v->every = every;
	v->located = skel->bss->dm_state == 2;
	v->pending = skel->bss->n_verify_pending;
	err = read_totals(skel, &v->totals);
	if (!err)
		err = dump(skel->maps.verify_devs, sizeof(struct verify_dev_row),
			   offsetof(struct verify_dev_row, key), offsetof(struct verify_dev_row, s),
			   (void **)&v->devs, &v->ndevs);
	if (!err)
		err = dump(skel->maps.verify_changes, sizeof(struct verify_change_row),
			   offsetof(struct verify_change_row, key),
			   offsetof(struct verify_change_row, v), (void **)&v->changes, &v->nchanges);
	if (err)
		return err;
	for (size_t i = 0; i < v->ndevs; i++)
		resolve_blockdev_name(v->devs[i].key.dev, v->devs[i].device,
				      sizeof(v->devs[i].device));
	for (size_t i = 0; i < v->nchanges; i++)
		resolve_blockdev_name(v->changes[i].key.dev, v->changes[i].device,
				      sizeof(v->changes[i].device));
	verify_sort(v);
	for (size_t i = 0; i < v->nchanges && i < top; i++) {
		const struct verify_change_row *c = &v->changes[i];
		const char *p = c->key.ino ? resolve_path(c->key.file_dev, c->key.ino,
							  c->v.generation) : NULL;

		v->changes[i].path = p ? strdup(p) : NULL;
	}
	return 0;
}

void verify_free(struct spt_verify_summary *v)
{
	for (size_t i = 0; i < v->nchanges; i++)
		free(v->changes[i].path);
	free(v->devs);
	free(v->changes);
	memset(v, 0, sizeof(*v));
}
