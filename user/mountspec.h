/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What `enforce --remount` needs to mount a filesystem again exactly as it
 * was: mountinfo's fields turned into the new mount API's arguments, and
 * the state line that keeps them across a crash. Pure: unit-tested.
 */
#ifndef SPT_MOUNTSPEC_H
#define SPT_MOUNTSPEC_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum mount_prop { MOUNT_PROP_PRIVATE, MOUNT_PROP_SHARED, MOUNT_PROP_UNBINDABLE };

struct mount_spec {
	uint32_t dev; /* kernel dev of the block device (the superblock's s_dev) */
	int prop;     /* enum mount_prop */
	char source[256];
	char target[PATH_MAX];
	char fstype[32];
	char mount_opts[256];  /* per mount: "rw,nosuid,relatime" */
	char super_opts[1024]; /* per superblock: "rw,errors=remount-ro" */
};

/* mountinfo's per-mount options -> MOUNT_ATTR_* for fsmount(). False, with
 * the option in bad, for one a fresh mount cannot reproduce (idmapped, or
 * one this program does not know). */
bool mount_spec_attrs(const char *mount_opts, unsigned int *attrs, char *bad, size_t badlen);

/* mountinfo's optional fields ("shared:5 unbindable") -> *prop. False, with
 * the field in bad, when a fresh mount cannot be put back in that place:
 * a slave of another peer group (master:N, propagate_from:N). */
bool mount_spec_prop(const char *optional, int *prop, char *bad, size_t badlen);

/* The next option of a comma list (mountinfo's superblock options), key
 * and value unescaped (\054 is a comma inside a value). *val is "" and
 * *has_val false for a flag. False at the end or when one does not fit. */
bool mount_opt_next(const char **p, char *key, size_t klen, char *val, size_t vlen, bool *has_val);

/* The fields of a mountinfo line that parse_mountinfo_line() leaves out:
 * mount id, parent id, and the optional fields, space-separated. */
bool mountinfo_ids(const char *line, int *id, int *parent, char *optional, size_t len);

/* The state line of a filesystem enforce has unmounted and not yet mounted
 * again: "unmounted MAJ:MIN PROP SOURCE TARGET FSTYPE MOUNT_OPTS SUPER_OPTS",
 * each field escaped as mountinfo does (\040 for a space). With newline. */
bool mount_spec_format(const struct mount_spec *s, char *buf, size_t len);
/* Parses one (modified in place). */
bool mount_spec_parse(char *line, struct mount_spec *s);

#endif
