// SPDX-License-Identifier: GPL-2.0
/* The number and duration parsers (parse.c), the enforce state line, and
 * mount(2)'s arguments from mountinfo's options: each result within the
 * range its parser promises. The first byte picks the parser. */
#include <math.h>
#include "fuzz.h"
#include "mountspec.h"
#include "parse.h"

static void numbers(int which, char *s)
{
	unsigned long v, max = 1000;
	unsigned int n;
	uint32_t u;
	double d;

	switch (which) {
	case 0:
		if (parse_duration(s, &d))
			FUZZ_ASSERT(isfinite(d) && d >= SPT_MIN_DURATION && d <= SPT_MAX_DURATION);
		break;
	case 1:
		if (parse_pid(s, &u))
			FUZZ_ASSERT(u >= 1 && u <= 4194304);
		break;
	case 2:
		if (parse_uint(s, max, &v))
			FUZZ_ASSERT(v <= max);
		break;
	case 3:
		if (parse_verify_rate(s, 16, &n))
			FUZZ_ASSERT(n >= 1 && n <= 1000000);
		break;
	case 4:
		if (parse_majmin(s, &u))
			FUZZ_ASSERT(spt_kdev(spt_kdev_major(u), spt_kdev_minor(u)) == u);
		break;
	}
}

static void state_line(char *s)
{
	const char *name;
	uint32_t kdev;
	int value;

	if (parse_state_line(s, &name, &kdev, &value))
		FUZZ_ASSERT(name && *name && *name != '#' && (value == 0 || value == 1));
}

/* Superblock options as enforce --remount reads them: every key and value
 * NUL-terminated within its buffer, and the walk always moves on. */
static void mount_options(const char *s, size_t vlen)
{
	char key[64], val[64];
	const char *p = s, *before;
	bool has_val;

	vlen = vlen % sizeof(val) + 1;
	for (before = p; mount_opt_next(&p, key, sizeof(key), val, vlen, &has_val); before = p) {
		FUZZ_ASSERT(p > before && memchr(key, '\0', sizeof(key)) && memchr(val, '\0', vlen));
		FUZZ_ASSERT(has_val || !*val);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (!size)
		return 0;
	s = fuzz_cstr(data + 1, size - 1);
	if (data[0] % 8 < 5)
		numbers(data[0] % 8, s);
	else if (data[0] % 8 < 7)
		state_line(s);
	else
		mount_options(s, data[0] / 8 % 65);
	free(s);
	return 0;
}
