// SPDX-License-Identifier: GPL-2.0
/* One /proc/self/mountinfo line of any length (parse_mountinfo_line) and
 * the octal escapes it undoes: every field a string inside the line; the
 * ids, propagation and per-mount options enforce --remount reads from it. */
#include "fuzz.h"
#include "mountspec.h"
#include "parse.h"

static int inside(const char *p, const char *line, size_t len)
{
	return p >= line && p <= line + len && memchr(p, '\0', len - (size_t)(p - line) + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = fuzz_cstr(data, size), *copy = fuzz_cstr(data, size), optional[256], bad[64];
	struct mountinfo_entry e;
	unsigned int attrs;
	int id, parent, prop;

	if (mountinfo_ids(line, &id, &parent, optional, sizeof(optional))) {
		FUZZ_ASSERT(memchr(optional, '\0', sizeof(optional)));
		if (!mount_spec_prop(optional, &prop, bad, sizeof(bad)))
			FUZZ_ASSERT(memchr(bad, '\0', sizeof(bad)));
	}
	if (parse_mountinfo_line(line, &e)) {
		FUZZ_ASSERT(inside(e.root, line, size) && inside(e.mountpoint, line, size) &&
			    inside(e.fstype, line, size) && inside(e.source, line, size) &&
			    inside(e.mount_opts, line, size));
		FUZZ_ASSERT(*e.super_opts == '\0' || inside(e.super_opts, line, size));
		FUZZ_ASSERT(e.major < 1U << (32 - SPT_MINORBITS) && e.minor < 1U << SPT_MINORBITS);
		if (!mount_spec_attrs(e.mount_opts, &attrs, bad, sizeof(bad)))
			FUZZ_ASSERT(memchr(bad, '\0', sizeof(bad)));
	}
	/* Unescaping only shortens. */
	unescape_octal(copy);
	FUZZ_ASSERT(strlen(copy) <= strnlen((const char *)data, size));
	free(line);
	free(copy);
	return 0;
}
