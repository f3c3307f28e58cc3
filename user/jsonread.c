// SPDX-License-Identifier: GPL-2.0
/* A recursive-descent JSON reader (RFC 8259): what `report` reads the tool's
 * JSON lines with. Strict: no comments, no trailing commas, no NaN. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jsonread.h"

struct reader {
	const char *s;
	size_t len, pos;
	int depth;
	char *err;
	size_t errlen;
};

static int fail(struct reader *r, const char *what)
{
	if (r->errlen)
		snprintf(r->err, r->errlen, "%s", what);
	return -1;
}

static void skip_ws(struct reader *r)
{
	while (r->pos < r->len && strchr(" \t\r\n", r->s[r->pos]) && r->s[r->pos])
		r->pos++;
}

static int peek(struct reader *r)
{
	return r->pos < r->len ? (unsigned char)r->s[r->pos] : -1;
}

/* Appends code point cp to buf as UTF-8; buf has room (4 bytes per escape). */
static size_t put_utf8(char *buf, unsigned int cp)
{
	if (cp < 0x80)
		return buf[0] = (char)cp, 1;
	if (cp < 0x800) {
		buf[0] = (char)(0xc0 | cp >> 6);
		buf[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		buf[0] = (char)(0xe0 | cp >> 12);
		buf[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		buf[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	buf[0] = (char)(0xf0 | cp >> 18);
	buf[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	buf[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	buf[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

static int hex4(struct reader *r, unsigned int *cp)
{
	*cp = 0;
	for (int i = 0; i < 4; i++) {
		int c = peek(r);

		if (c < 0 || !strchr("0123456789abcdefABCDEF", c) || !c)
			return fail(r, "bad \\u escape");
		*cp = *cp << 4 | (unsigned int)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
		r->pos++;
	}
	return 0;
}

/* After "\u": one code point, a surrogate pair joined; lone surrogates and
 * U+0000 become U+FFFD. */
static int unicode_escape(struct reader *r, unsigned int *cp)
{
	unsigned int lo;

	if (hex4(r, cp))
		return -1;
	if (*cp >= 0xd800 && *cp <= 0xdbff && r->pos + 1 < r->len && r->s[r->pos] == '\\' &&
	    r->s[r->pos + 1] == 'u') {
		size_t back = r->pos;

		r->pos += 2;
		if (hex4(r, &lo))
			return -1;
		if (lo >= 0xdc00 && lo <= 0xdfff) {
			*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
			return 0;
		}
		r->pos = back;
	}
	if (!*cp || (*cp >= 0xd800 && *cp <= 0xdfff))
		*cp = 0xfffd;
	return 0;
}

static int escape(struct reader *r, char *out, size_t *n)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	int c = peek(r);
	const char *p = c > 0 ? strchr(from, c) : NULL;
	unsigned int cp;

	r->pos++;
	if (p) {
		out[(*n)++] = to[p - from];
		return 0;
	}
	if (c != 'u')
		return r->pos--, fail(r, "bad escape");
	if (unicode_escape(r, &cp))
		return -1;
	*n += put_utf8(out + *n, cp);
	return 0;
}

/* At the opening quote. The decoded string is never longer than its source
 * (an escape of 6 bytes yields at most 4, 12 at most 4), so one buffer of the
 * remaining length is enough. */
static int parse_string(struct reader *r, char **out)
{
	size_t n = 0, end;
	char *buf;

	r->pos++;
	end = r->pos;
	while (end < r->len && r->s[end] != '"')
		end += r->s[end] == '\\' ? 2 : 1;
	buf = malloc(end - r->pos + 1);
	if (!buf)
		return fail(r, "out of memory");
	for (;;) {
		int c = peek(r);

		if (c == '"')
			break;
		if (c < 0x20) {
			free(buf);
			return fail(r, c < 0 ? "unterminated string" : "control character in string");
		}
		r->pos++;
		if (c != '\\')
			buf[n++] = (char)c;
		else if (escape(r, buf, &n))
			return free(buf), -1;
	}
	r->pos++;
	buf[n] = '\0';
	*out = buf;
	return 0;
}

static int parse_number(struct reader *r, struct jv *v)
{
	size_t start = r->pos;
	char tmp[64], *end;

	/* The grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
	if (peek(r) == '-')
		r->pos++;
	if (peek(r) == '0')
		r->pos++;
	else if (peek(r) >= '1' && peek(r) <= '9')
		while (peek(r) >= '0' && peek(r) <= '9')
			r->pos++;
	else
		return fail(r, "bad number");
	if (peek(r) == '.') {
		r->pos++;
		if (peek(r) < '0' || peek(r) > '9')
			return fail(r, "bad number");
		while (peek(r) >= '0' && peek(r) <= '9')
			r->pos++;
	}
	if (peek(r) == 'e' || peek(r) == 'E') {
		r->pos++;
		if (peek(r) == '+' || peek(r) == '-')
			r->pos++;
		if (peek(r) < '0' || peek(r) > '9')
			return fail(r, "bad number");
		while (peek(r) >= '0' && peek(r) <= '9')
			r->pos++;
	}
	if (r->pos - start >= sizeof(tmp))
		return fail(r, "number too long");
	memcpy(tmp, r->s + start, r->pos - start);
	tmp[r->pos - start] = '\0';
	v->type = JV_NUMBER;
	v->num = strtod(tmp, &end);
	return 0;
}

static int parse_value(struct reader *r, struct jv *v);

/* Grows the item (and key) arrays of v by one; the new item is zeroed. */
static int push(struct reader *r, struct jv *v, char *key)
{
	struct jv *items = realloc(v->items, (v->n + 1) * sizeof(*items));

	if (!items)
		return fail(r, "out of memory");
	v->items = items;
	memset(&items[v->n], 0, sizeof(*items));
	if (v->type == JV_OBJECT) {
		char **keys = realloc(v->keys, (v->n + 1) * sizeof(*keys));

		if (!keys)
			return fail(r, "out of memory");
		v->keys = keys;
		keys[v->n] = key;
	}
	v->n++;
	return 0;
}

/* One member of an object: "key": value. */
static int parse_member(struct reader *r, struct jv *v)
{
	char *key;

	skip_ws(r);
	if (peek(r) != '"')
		return fail(r, "expected a string key");
	if (parse_string(r, &key))
		return -1;
	if (push(r, v, key))
		return free(key), -1;
	skip_ws(r);
	if (peek(r) != ':')
		return fail(r, "expected ':'");
	r->pos++;
	return parse_value(r, &v->items[v->n - 1]);
}

/* An array or an object, at its opening bracket. */
static int parse_container(struct reader *r, struct jv *v)
{
	int close = peek(r) == '[' ? ']' : '}';

	v->type = close == ']' ? JV_ARRAY : JV_OBJECT;
	if (++r->depth > JV_MAX_DEPTH)
		return fail(r, "nested too deeply");
	r->pos++;
	skip_ws(r);
	if (peek(r) == close) {
		r->pos++;
		r->depth--;
		return 0;
	}
	for (;;) {
		if (v->type == JV_OBJECT ? parse_member(r, v) :
					   push(r, v, NULL) || parse_value(r, &v->items[v->n - 1]))
			return -1;
		skip_ws(r);
		if (peek(r) == close)
			break;
		if (peek(r) != ',')
			return fail(r, close == ']' ? "expected ',' or ']'" : "expected ',' or '}'");
		r->pos++;
	}
	r->pos++;
	r->depth--;
	return 0;
}

static int parse_word(struct reader *r, struct jv *v, const char *word, enum jv_type type)
{
	size_t n = strlen(word);

	if (r->len - r->pos < n || memcmp(r->s + r->pos, word, n))
		return fail(r, "unexpected character");
	r->pos += n;
	v->type = type;
	return 0;
}

static int parse_value(struct reader *r, struct jv *v)
{
	int c;

	skip_ws(r);
	c = peek(r);
	switch (c) {
	case '{':
	case '[':
		return parse_container(r, v);
	case '"':
		v->type = JV_STRING;
		return parse_string(r, &v->str);
	case 't':
		return parse_word(r, v, "true", JV_TRUE);
	case 'f':
		return parse_word(r, v, "false", JV_FALSE);
	case 'n':
		return parse_word(r, v, "null", JV_NULL);
	case -1:
		return fail(r, "unexpected end");
	}
	if (c == '-' || (c >= '0' && c <= '9'))
		return parse_number(r, v);
	return fail(r, "unexpected character");
}

int jv_parse(const char *text, size_t len, size_t *pos, struct jv *out, char *err, size_t errlen)
{
	struct reader r = { .s = text, .len = len, .pos = *pos, .err = err, .errlen = errlen };

	memset(out, 0, sizeof(*out));
	if (parse_value(&r, out)) {
		jv_free(out);
		*pos = r.pos;
		return -1;
	}
	*pos = r.pos;
	return 0;
}

void jv_free(struct jv *v)
{
	for (size_t i = 0; i < v->n; i++) {
		jv_free(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
	memset(v, 0, sizeof(*v));
}

bool jv_more(const char *text, size_t len, size_t *pos)
{
	struct reader r = { .s = text, .len = len, .pos = *pos };

	skip_ws(&r);
	*pos = r.pos;
	return r.pos < len;
}

const struct jv *jv_get(const struct jv *obj, const char *key)
{
	if (!obj || obj->type != JV_OBJECT)
		return NULL;
	for (size_t i = obj->n; i-- > 0;)
		if (!strcmp(obj->keys[i], key))
			return &obj->items[i];
	return NULL;
}

double jv_num(const struct jv *v, double dflt)
{
	return v && v->type == JV_NUMBER && isfinite(v->num) ? v->num : dflt;
}

const char *jv_str(const struct jv *v)
{
	return v && v->type == JV_STRING ? v->str : NULL;
}

double jv_getnum(const struct jv *obj, const char *key, double dflt)
{
	return jv_num(jv_get(obj, key), dflt);
}

const struct jv *jv_array(const struct jv *v)
{
	return v && v->type == JV_ARRAY ? v : NULL;
}
