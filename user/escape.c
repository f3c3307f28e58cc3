// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "escape.h"
#include "json.h"

/* The escaped form of the character at p into buf; *used: the bytes of p it
 * stands for. Returns the length of buf's text (at most TEXT_ESC_MAX). */
static size_t esc_char(const unsigned char *p, char buf[TEXT_ESC_MAX + 1], size_t *used)
{
	int n = *p < 0x80 ? 1 : utf8_seq_len(p);

	if (*p == '\\') {
		*used = 1;
		return (size_t)snprintf(buf, TEXT_ESC_MAX + 1, "\\\\");
	}
	if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) { /* U+0080..U+009F */
		*used = 2;
		return (size_t)snprintf(buf, TEXT_ESC_MAX + 1, "\\x%02x\\x%02x", p[0], p[1]);
	}
	if (!n || *p < 0x20 || *p == 0x7f) {
		*used = 1;
		return (size_t)snprintf(buf, TEXT_ESC_MAX + 1, "\\x%02x", *p);
	}
	*used = (size_t)n;
	memcpy(buf, p, (size_t)n);
	buf[n] = '\0';
	return (size_t)n;
}

const char *text_esc(char *out, size_t len, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t w = 0;

	while (*p) {
		char buf[TEXT_ESC_MAX + 1];
		size_t used, n = esc_char(p, buf, &used);

		if (w + n >= len)
			break;
		memcpy(out + w, buf, n);
		w += n;
		p += used;
	}
	out[w] = '\0';
	return out;
}

const char *text_esc_field(char *out, size_t len, const char *field, size_t size)
{
	char copy[TEXT_ESC_FIELD_MAX];

	if (size >= sizeof(copy))
		size = sizeof(copy) - 1;
	memcpy(copy, field, size);
	copy[size] = '\0';
	return text_esc(out, len, copy);
}

void text_puts(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	while (*p) {
		char buf[TEXT_ESC_MAX + 1];
		size_t used, n = esc_char(p, buf, &used);

		fwrite(buf, 1, n, f);
		p += used;
	}
}

void prom_label_value(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");

	fputc('"', f);
	while (*s) {
		int n = *s < 0x80 ? 1 : utf8_seq_len(s);

		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '"')
			fputs("\\\"", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else if (!n)
			fputc('?', f);
		else
			fwrite(s, 1, n, f);
		s += n ? n : 1;
	}
	fputc('"', f);
}
