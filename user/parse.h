/* SPDX-License-Identifier: GPL-2.0 */
/* Pure parsing helpers: no I/O, unit-tested in tests/unit. */
#ifndef SPT_PARSE_H
#define SPT_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Kernel-internal dev_t (include/linux/kdev_t.h): 12-bit major, 20-bit minor. */
#define SPT_MINORBITS 20
static inline uint32_t spt_kdev(unsigned int major, unsigned int minor)
{
	return ((uint32_t)major << SPT_MINORBITS) | minor;
}
static inline unsigned int spt_kdev_major(uint32_t dev)
{
	return dev >> SPT_MINORBITS;
}
static inline unsigned int spt_kdev_minor(uint32_t dev)
{
	return dev & ((1U << SPT_MINORBITS) - 1);
}

/* Durations: 1 ms (the shortest a timer of the tool honours) to a year. */
#define SPT_MIN_DURATION 0.001
#define SPT_MAX_DURATION (365 * 24 * 3600.0)
/* "10", "10s", "1.5m", "250ms", "1h" -> seconds, SPT_MIN_DURATION to
 * SPT_MAX_DURATION; anything else (hex, "inf", signs, white space) false. */
bool parse_duration(const char *s, double *secs);
/* A positive decimal pid that fits in 32 bits. */
bool parse_pid(const char *s, uint32_t *pid);
/* A positive decimal integer. */
bool parse_uint(const char *s, unsigned long max, unsigned long *out);
/* --verify[=N]: NULL (no =N) gives def; else a whole number 1..1000000. */
bool parse_verify_rate(const char *s, unsigned int def, unsigned int *n);
/* "MAJ:MIN" -> kernel dev. False when s is not of that form. */
bool parse_majmin(const char *s, uint32_t *kdev);

/* One /proc/self/mountinfo line, fields unescaped in place. */
struct mountinfo_entry {
	unsigned int major, minor;
	const char *root;       /* path of the mount's root inside the filesystem */
	const char *mountpoint;
	const char *fstype;
	const char *source;
	const char *mount_opts; /* per mount point: "rw,nosuid,relatime" */
	const char *super_opts; /* per superblock: "rw,attr2,inode64,noquota" */
};
/* Parses line (modified in place). False on a malformed line. */
bool parse_mountinfo_line(char *line, struct mountinfo_entry *e);

/* One enforce state line: "loop0 7:0 0" (device, MAJ:MIN, previous
 * stable_writes). Modified in place; name points into line. */
bool parse_state_line(char *line, const char **name, uint32_t *kdev, int *value);

/* A BPF map's /proc/PID/fdinfo text -> its "memlock:" line's bytes, what
 * the kernel charges for the map (bpftool's bytes_memlock). False without one. */
bool parse_fdinfo_memlock(const char *text, uint64_t *bytes);

/* Decodes mountinfo's octal escapes (\040 etc.) in place. */
void unescape_octal(char *s);

#endif
