// SPDX-License-Identifier: GPL-2.0
#include <stdbool.h>

#include "json.h"

int utf8_seq_len(const unsigned char *p)
{
	int n;
	unsigned int cp;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* A byte a JSON string holds as it is: printable ASCII but '"' and '\\'. */
static bool json_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

/* Write the escape of the byte (or UTF-8 sequence) at @p; returns how many
 * bytes it took. */
static int json_escape(FILE *f, const unsigned char *p)
{
	int n;

	switch (*p) {
	case '"':
		fputs("\\\"", f);
		return 1;
	case '\\':
		fputs("\\\\", f);
		return 1;
	case '\n':
		fputs("\\n", f);
		return 1;
	case '\t':
		fputs("\\t", f);
		return 1;
	case '\r':
		fputs("\\r", f);
		return 1;
	}
	if (*p < 0x80) { /* the other controls and DEL */
		fprintf(f, "\\u%04x", *p);
		return 1;
	}
	/* File names and comms need not be UTF-8: keep valid sequences,
	 * replace invalid bytes with U+FFFD. */
	n = utf8_seq_len(p);
	if (!n) {
		fputs("\\ufffd", f);
		return 1;
	}
	fwrite(p, 1, n, f);
	return n;
}

/* Runs of plain bytes go out in one write, not a locked fputc() a byte:
 * every streamed event has three strings (comm, cgroup, path). */
void json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *run;

	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	while (*p) {
		for (run = p; json_plain(*p); p++)
			;
		if (p > run)
			fwrite(run, 1, p - run, f);
		if (*p)
			p += json_escape(f, p);
	}
	fputc('"', f);
}
