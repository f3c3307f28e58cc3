// SPDX-License-Identifier: GPL-2.0
/* --verify: its maps read into a struct spt_verify_summary. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "resolve.h"
#include "summary.h"
#include "verify_user.h"
#include "stablepage.skel.h"

int verify_read(struct stablepage_bpf *skel, unsigned int every, struct spt_verify_summary *v,
		size_t top)
{
	int err;

	memset(v, 0, sizeof(*v));
	v->every = every;
	v->located = skel->bss->dm_state == 2;
	v->pending = skel->bss->n_verify_pending;
	err = percpu_sum_u64(skel->maps.verify_totals, &v->totals, sizeof(v->totals));
	if (!err)
		err = map_dump(skel->maps.verify_devs, ROW_LAYOUT(struct verify_dev_row, key, s),
			       (void **)&v->devs, &v->ndevs);
	if (!err)
		err = map_dump(skel->maps.verify_changes, ROW_LAYOUT(struct verify_change_row, key, v),
			       (void **)&v->changes, &v->nchanges);
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
