// SPDX-License-Identifier: GPL-2.0
/*
 * mountinfo (fs/proc_namespace.c: show_mountinfo) read back into what
 * fsopen/fsconfig/fsmount/mount_setattr take, refusing whatever a fresh
 * mount would not reproduce; and the state line for `enforce --restore`.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include "mountapi.h"
#include "mountspec.h"
#include "parse.h"

/* Every per-mount option show_mountinfo() prints (show_mnt_opts()). */
static const struct {
	const char *name;
	unsigned int attr;
} mnt_attrs[] = {
	{ "rw", 0 },
	{ "ro", MOUNT_ATTR_RDONLY },
	{ "nosuid", MOUNT_ATTR_NOSUID },
	{ "nodev", MOUNT_ATTR_NODEV },
	{ "noexec", MOUNT_ATTR_NOEXEC },
	{ "noatime", MOUNT_ATTR_NOATIME },
	{ "relatime", MOUNT_ATTR_RELATIME },
	{ "nodiratime", MOUNT_ATTR_NODIRATIME },
	{ "nosymfollow", MOUNT_ATTR_NOSYMFOLLOW },
};

/* Calls fn for each whole word of a list separated by sep; stops at false. */
static bool each_word(const char *list, char sep, bool (*fn)(const char *w, size_t n, void *arg),
		      void *arg)
{
	for (const char *p = list, *end; *p; p = *end ? end + 1 : end) {
		end = strchr(p, sep);
		if (!end)
			end = p + strlen(p);
		if (end > p && !fn(p, end - p, arg))
			return false;
	}
	return true;
}

struct attr_walk {
	unsigned int attrs;
	bool atime_given;
	char *bad;
	size_t badlen;
};

static bool one_attr(const char *w, size_t n, void *arg)
{
	struct attr_walk *a = arg;

	for (size_t i = 0; i < sizeof(mnt_attrs) / sizeof(mnt_attrs[0]); i++) {
		if (strlen(mnt_attrs[i].name) != n || strncmp(w, mnt_attrs[i].name, n))
			continue;
		a->attrs |= mnt_attrs[i].attr;
		a->atime_given |= !strcmp(mnt_attrs[i].name, "noatime") ||
				  !strcmp(mnt_attrs[i].name, "relatime");
		return true;
	}
	snprintf(a->bad, a->badlen, "%.*s", (int)n, w);
	return false;
}

bool mount_spec_attrs(const char *mount_opts, unsigned int *attrs, char *bad, size_t badlen)
{
	struct attr_walk a = { .bad = bad, .badlen = badlen };

	if (!each_word(mount_opts, ',', one_attr, &a))
		return false;
	/* Neither shown means strictatime; fsmount's 0 would mean relatime. */
	*attrs = a.atime_given ? a.attrs : a.attrs | MOUNT_ATTR_STRICTATIME;
	return true;
}

struct prop_walk {
	int prop;
	char *bad;
	size_t badlen;
};

static bool one_field(const char *w, size_t n, void *arg)
{
	struct prop_walk *pw = arg;

	if (n > 7 && !strncmp(w, "shared:", 7)) {
		if (pw->prop != MOUNT_PROP_UNBINDABLE)
			pw->prop = MOUNT_PROP_SHARED;
		return true;
	}
	if (n == 10 && !strncmp(w, "unbindable", 10)) {
		pw->prop = MOUNT_PROP_UNBINDABLE;
		return true;
	}
	snprintf(pw->bad, pw->badlen, "%.*s", (int)n, w);
	return false;
}

bool mount_spec_prop(const char *optional, int *prop, char *bad, size_t badlen)
{
	struct prop_walk pw = { .prop = MOUNT_PROP_PRIVATE, .bad = bad, .badlen = badlen };

	if (!each_word(optional, ' ', one_field, &pw))
		return false;
	*prop = pw.prop;
	return true;
}

/* Copies n bytes of s into buf and decodes its octal escapes. */
static bool copy_unescaped(const char *s, size_t n, char *buf, size_t len)
{
	if (n >= len)
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	unescape_octal(buf);
	return true;
}

bool mount_opt_next(const char **p, char *key, size_t klen, char *val, size_t vlen, bool *has_val)
{
	const char *w = *p, *end, *eq;

	while (*w == ',')
		w++;
	if (!*w)
		return false;
	end = w + strcspn(w, ",");
	eq = memchr(w, '=', end - w);
	*p = end;
	*has_val = eq != NULL;
	if (!eq)
		return copy_unescaped(w, end - w, key, klen) && copy_unescaped("", 0, val, vlen);
	return copy_unescaped(w, eq - w, key, klen) &&
	       copy_unescaped(eq + 1, end - eq - 1, val, vlen);
}

bool mountinfo_ids(const char *line, int *id, int *parent, char *optional, size_t len)
{
	const char *p = line;
	size_t used = 0;
	int n = -1;

	/* sscanf returns 2 on a line that ends before the last field: n then stays -1. */
	if (sscanf(line, "%d %d %*s %*s %*s %*s%n", id, parent, &n) != 2 || n < 0 || !len)
		return false;
	optional[0] = '\0';
	for (p += n;; p += n) {
		p += strspn(p, " ");
		n = (int)strcspn(p, " \n");
		if (!n)
			return false;
		if (n == 1 && *p == '-')
			return true;
		if (used + n + 2 > len)
			return false;
		used += snprintf(optional + used, len - used, "%s%.*s", used ? " " : "", n, p);
	}
}

/* s escaped as mountinfo does (mangle(): space, tab, newline, backslash). */
static size_t put_escaped(char *buf, size_t len, const char *s)
{
	size_t used = 0;

	for (; *s; s++) {
		bool esc = *s == ' ' || *s == '\t' || *s == '\n' || *s == '\\';

		used += snprintf(buf + used, used < len ? len - used : 0, esc ? "\\%03o" : "%c",
				 (unsigned char)*s);
	}
	return used;
}

static const char *const prop_names[] = { "private", "shared", "unbindable" };

bool mount_spec_format(const struct mount_spec *s, char *buf, size_t len)
{
	const char *fields[] = { s->source, s->target, s->fstype, s->mount_opts, s->super_opts };
	size_t used;

	if (s->prop < 0 || s->prop > MOUNT_PROP_UNBINDABLE)
		return false;
	used = snprintf(buf, len, "unmounted %u:%u %s", spt_kdev_major(s->dev),
			spt_kdev_minor(s->dev), prop_names[s->prop]);
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (!fields[i][0])
			return false;
		used += snprintf(buf + used, used < len ? len - used : 0, " ");
		used += put_escaped(buf + used, used < len ? len - used : 0, fields[i]);
	}
	used += snprintf(buf + used, used < len ? len - used : 0, "\n");
	return used < len;
}

bool mount_spec_parse(char *line, struct mount_spec *s)
{
	char *save = NULL, *tok[8];
	struct {
		char *buf;
		size_t len;
	} out[] = { { s->source, sizeof(s->source) },
		    { s->target, sizeof(s->target) },
		    { s->fstype, sizeof(s->fstype) },
		    { s->mount_opts, sizeof(s->mount_opts) },
		    { s->super_opts, sizeof(s->super_opts) } };
	int n = 0;

	line[strcspn(line, "\n")] = '\0';
	for (char *t = strtok_r(line, " ", &save); t; t = strtok_r(NULL, " ", &save))
		if (n++ < 8)
			tok[n - 1] = t;
	if (n != 8 || strcmp(tok[0], "unmounted") || !parse_majmin(tok[1], &s->dev))
		return false;
	for (s->prop = 0; s->prop <= MOUNT_PROP_UNBINDABLE; s->prop++)
		if (!strcmp(tok[2], prop_names[s->prop]))
			break;
	if (s->prop > MOUNT_PROP_UNBINDABLE)
		return false;
	for (int i = 0; i < 5; i++)
		if (!copy_unescaped(tok[3 + i], strlen(tok[3 + i]), out[i].buf, out[i].len))
			return false;
	return s->target[0] == '/';
}
