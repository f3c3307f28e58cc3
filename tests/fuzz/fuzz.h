/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the libFuzzer harnesses share (make fuzz; README.md): the
 * input as C strings, output captured in memory, and the properties checked
 * on it. A property that fails aborts, which libFuzzer reports as a crash
 * with its input.
 */
#ifndef SPT_FUZZ_H
#define SPT_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json.h"
#include "jsonread.h"

#define FUZZ_ASSERT(cond)                                                               \
	do {                                                                            \
		if (!(cond)) {                                                          \
			fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, \
				#cond);                                                 \
			abort();                                                        \
		}                                                                       \
	} while (0)

/* The input as a NUL-terminated copy (it may hold NULs of its own). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* A FILE writing to memory: *buf holds it after fclose. */
static inline FILE *fuzz_sink(char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);

	if (!f)
		abort();
	return f;
}

/* Text a terminal shows as it is: valid UTF-8 with no C0 control but
 * newline, no DEL, no C1 control (U+0080..U+009F). s is NUL-terminated. */
static inline int fuzz_terminal_safe(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < len;) {
		int n;

		if (p[i] < 0x80) {
			if ((p[i] < 0x20 && p[i] != '\n') || p[i] == 0x7f)
				return 0;
			i++;
			continue;
		}
		n = utf8_seq_len(p + i);
		if (!n || (p[i] == 0xc2 && p[i + 1] < 0xa0))
			return 0;
		i += (size_t)n;
	}
	return 1;
}

/* json_string(s) as the reader takes it back: one JSON string, the whole
 * text. Returns the text written (the caller frees it). */
static inline char *fuzz_json_roundtrip(const char *s)
{
	char *buf = NULL, err[128];
	size_t len = 0, pos = 0;
	FILE *f = fuzz_sink(&buf, &len);
	struct jv v;

	json_string(f, s);
	fclose(f);
	FUZZ_ASSERT(!jv_parse(buf, len, &pos, &v, err, sizeof(err)));
	FUZZ_ASSERT(v.type == JV_STRING && pos == len);
	jv_free(&v);
	return buf;
}

#endif
