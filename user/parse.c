// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "parse.h"

bool parse_duration(const char *s, double *secs)
{
	char *end;
	double v, scale = 1;

	/* A decimal number: strtod would take hex, "inf" and white space too. */
	if (!s || !(isdigit((unsigned char)*s) || (*s == '.' && isdigit((unsigned char)s[1]))))
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || strspn(s, "0123456789.eE+-") < (size_t)(end - s))
		return false;
	if (!strcmp(end, "") || !strcmp(end, "s"))
		scale = 1;
	else if (!strcmp(end, "ms"))
		scale = 0.001;
	else if (!strcmp(end, "m"))
		scale = 60;
	else if (!strcmp(end, "h"))
		scale = 3600;
	else
		return false;
	v *= scale;
	if (v < SPT_MIN_DURATION || v > SPT_MAX_DURATION)
		return false;
	*secs = v;
	return true;
}

bool parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

bool parse_verify_rate(const char *s, unsigned int def, unsigned int *n)
{
	unsigned long v;

	if (!s) {
		*n = def;
		return true;
	}
	if (!parse_uint(s, 1000000, &v) || v == 0)
		return false;
	*n = v;
	return true;
}

bool parse_pid(const char *s, uint32_t *pid)
{
	unsigned long v;

	/* pid_max can be at most 2^22 (PID_MAX_LIMIT on 64-bit). */
	if (!parse_uint(s, 4194304, &v) || v == 0)
		return false;
	*pid = v;
	return true;
}

bool parse_majmin(const char *s, uint32_t *kdev)
{
	unsigned long maj, min;
	const char *colon = strchr(s, ':');
	char buf[16];
	size_t n;

	if (!colon)
		return false;
	n = colon - s;
	if (n == 0 || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (!parse_uint(buf, (1UL << (32 - SPT_MINORBITS)) - 1, &maj) ||
	    !parse_uint(colon + 1, (1UL << SPT_MINORBITS) - 1, &min))
		return false;
	*kdev = spt_kdev(maj, min);
	return true;
}

void unescape_octal(char *s)
{
	char *w = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 4;
		} else {
			*w++ = *s++;
		}
	}
	*w = '\0';
}

/* 36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw,errors=continue */
/* Six fields, optional fields up to "-", then three: any number of optional
 * fields, of any length (the caller reads whole lines). */
bool parse_mountinfo_line(char *line, struct mountinfo_entry *e)
{
	char *fields[6], *after[3] = { NULL, NULL, NULL };
	int n = 0, nafter = -1;
	char *save = NULL, *tok;
	uint32_t kdev;

	line[strcspn(line, "\n")] = '\0';
	for (tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (n < 6)
			fields[n++] = tok;
		else if (nafter < 0 && !strcmp(tok, "-"))
			nafter = 0;
		else if (nafter >= 0 && nafter < 3)
			after[nafter++] = tok;
	}
	if (n < 6 || nafter < 2 || !parse_majmin(fields[2], &kdev))
		return false;
	e->major = spt_kdev_major(kdev);
	e->minor = spt_kdev_minor(kdev);
	unescape_octal(fields[3]);
	unescape_octal(fields[4]);
	unescape_octal(after[1]);
	e->root = fields[3];
	e->mountpoint = fields[4];
	e->fstype = after[0];
	e->source = after[1];
	e->mount_opts = fields[5];
	e->super_opts = after[2] ? after[2] : "";
	return true;
}

bool parse_state_line(char *line, const char **name, uint32_t *kdev, int *value)
{
	char *save = NULL, *dev, *val, *extra;
	unsigned long v;

	line[strcspn(line, "\n")] = '\0';
	*name = strtok_r(line, " ", &save);
	dev = strtok_r(NULL, " ", &save);
	val = strtok_r(NULL, " ", &save);
	extra = strtok_r(NULL, " ", &save);
	if (!*name || !dev || !val || extra || **name == '#' || !parse_majmin(dev, kdev))
		return false;
	/* Checked before narrowing: "4294967297" is no 1. */
	if (!parse_uint(val, 1, &v))
		return false;
	*value = (int)v;
	return true;
}

bool parse_fdinfo_memlock(const char *text, uint64_t *bytes)
{
	static const char key[] = "memlock:";

	for (const char *line = text; line && *line; line = strchr(line, '\n'), line += !!line) {
		const char *num = line + sizeof(key) - 1;
		char *end;

		if (strncmp(line, key, sizeof(key) - 1))
			continue;
		num += strspn(num, " \t");
		if (!isdigit((unsigned char)*num))
			return false;
		errno = 0;
		*bytes = strtoull(num, &end, 10);
		return !errno && (*end == '\n' || !*end);
	}
	return false;
}
