// SPDX-License-Identifier: GPL-2.0
/* One /proc/self/mountinfo line of any length (parse_mountinfo_line) and
 * the octal escapes it undoes: every field a string inside the line, and
 * mount(2)'s arguments made from its options. */
#include "fuzz.h"
#include "parse.h"

static int inside(const char *p, const char *line, size_t len)
{
	return p >= line && p <= line + len && memchr(p, '\0', len - (size_t)(p - line) + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = fuzz_cstr(data, size), *copy = fuzz_cstr(data, size), opts[256];
	struct mountinfo_entry e;
	unsigned long flags;

	if (parse_mountinfo_line(line, &e)) {
		FUZZ_ASSERT(inside(e.root, line, size) && inside(e.mountpoint, line, size) &&
			    inside(e.fstype, line, size) && inside(e.source, line, size) &&
			    inside(e.mount_opts, line, size));
		FUZZ_ASSERT(*e.super_opts == '\0' || inside(e.super_opts, line, size));
		FUZZ_ASSERT(e.major < 1U << (32 - SPT_MINORBITS) && e.minor < 1U << SPT_MINORBITS);
		mount_args(e.mount_opts, e.super_opts, &flags, opts, sizeof(opts));
	}
	/* Unescaping only shortens. */
	unescape_octal(copy);
	FUZZ_ASSERT(strlen(copy) <= strnlen((const char *)data, size));
	free(line);
	free(copy);
	return 0;
}
