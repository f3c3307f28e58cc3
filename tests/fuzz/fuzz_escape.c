// SPDX-License-Identifier: GPL-2.0
/* The escapers: text (escape.c), JSON (json.c), HTML (html.c), Prometheus
 * label values (prom.c), each on any bytes, with the property its format
 * needs checked on the output. */
#include "escape.h"
#include "fuzz.h"
#include "html.h"
#include "prom.h"

static void check_text(const char *s, size_t outlen)
{
	char small[256], *buf = NULL;
	size_t len = 0;
	FILE *f = fuzz_sink(&buf, &len);

	text_puts(f, s);
	fclose(f);
	FUZZ_ASSERT(fuzz_terminal_safe(buf, len) && !strchr(buf, '\n'));
	/* A bounded copy is a prefix of the whole, made of whole escapes. */
	text_esc(small, outlen, s);
	FUZZ_ASSERT(strlen(small) < outlen && !strncmp(small, buf, strlen(small)));
	FUZZ_ASSERT(strlen(small) == len || strlen(small) + TEXT_ESC_MAX >= outlen);
	free(buf);
}

/* A fixed-size field without a NUL (a comm of 16 bytes): its 16 bytes only. */
static void check_field(const char *s)
{
	char comm[16], field[TEXT_ESC_LEN(sizeof(comm))], whole[TEXT_ESC_LEN(sizeof(comm))];
	char *prefix = strndup(s, sizeof(comm));

	strncpy(comm, s, sizeof(comm));
	ESC_FIELD(field, comm);
	text_esc(whole, sizeof(whole), prefix);
	FUZZ_ASSERT(!strcmp(field, whole));
	free(prefix);
}

/* json_string's output reads back as one JSON string, with no raw control byte. */
static void check_json(const char *s)
{
	char *buf = fuzz_json_roundtrip(s);

	for (const unsigned char *p = (const unsigned char *)buf; *p; p++)
		FUZZ_ASSERT(*p >= 0x20 && *p != 0x7f);
	free(buf);
}

static void check_html(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fuzz_sink(&buf, &len);

	html_escape(f, s);
	fclose(f);
	FUZZ_ASSERT(fuzz_terminal_safe(buf, len) && !strpbrk(buf, "<>\"'\n"));
	for (char *amp = strchr(buf, '&'); amp; amp = strchr(amp + 1, '&'))
		FUZZ_ASSERT(!strncmp(amp, "&amp;", 5) || !strncmp(amp, "&lt;", 4) ||
			    !strncmp(amp, "&gt;", 4) || !strncmp(amp, "&quot;", 6) ||
			    !strncmp(amp, "&#39;", 5));
	free(buf);
}

/* A label value: quoted; inside, \ only before \, " or n; no newline, no
 * bare quote (the exposition format). */
static void check_prom(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fuzz_sink(&buf, &len);

	prom_label_value(f, s);
	fclose(f);
	FUZZ_ASSERT(len >= 2 && buf[0] == '"' && buf[len - 1] == '"');
	for (size_t i = 1; i < len - 1; i++) {
		FUZZ_ASSERT(buf[i] != '\n' && buf[i] != '"');
		if (buf[i] == '\\') {
			FUZZ_ASSERT(i + 1 < len - 1 && strchr("\\\"n", buf[i + 1]));
			i++;
		}
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (!size)
		return 0;
	s = fuzz_cstr(data + 1, size - 1);
	check_text(s, 1 + data[0] % 255);
	check_field(s);
	check_json(s);
	check_html(s);
	check_prom(s);
	free(s);
	return 0;
}
