/* SPDX-License-Identifier: GPL-2.0 */
/* Pure parsing helpers: no I/O, unit-tested in tests/unit. */
#ifndef SPT_PARSE_H
#define SPT_PARSE_H

#include <stdbool.h>
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

/* "10", "10s", "1.5m", "250ms", "1h" -> seconds (> 0). */
bool parse_duration(const char *s, double *secs);
/* A positive decimal pid that fits in 32 bits. */
bool parse_pid(const char *s, uint32_t *pid);
/* A positive decimal integer. */
bool parse_uint(const char *s, unsigned long max, unsigned long *out);
/* "MAJ:MIN" -> kernel dev. False when s is not of that form. */
bool parse_majmin(const char *s, uint32_t *kdev);

/* One /proc/self/mountinfo line, fields unescaped in place. */
struct mountinfo_entry {
	unsigned int major, minor;
	const char *root;       /* path of the mount's root inside the filesystem */
	const char *mountpoint;
	const char *fstype;
	const char *source;
};
/* Parses line (modified in place). False on a malformed line. */
bool parse_mountinfo_line(char *line, struct mountinfo_entry *e);
/* Decodes mountinfo's octal escapes (\040 etc.) in place. */
void unescape_octal(char *s);

#endif
