/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small JSON reader for `report`: RFC 8259 values into a tree. Pure (no
 * I/O), unit-tested. Numbers are doubles (counts above 2^53 lose their last
 * digits, which a page does not show); strings are decoded to UTF-8 with
 * \u0000 replaced by U+FFFD, so every string is a C string.
 */
#ifndef SPT_JSONREAD_H
#define SPT_JSONREAD_H

#include <stdbool.h>
#include <stddef.h>

enum jv_type { JV_NULL, JV_FALSE, JV_TRUE, JV_NUMBER, JV_STRING, JV_ARRAY, JV_OBJECT };

struct jv {
	enum jv_type type;
	double num;       /* JV_NUMBER */
	char *str;        /* JV_STRING */
	struct jv *items; /* JV_ARRAY, JV_OBJECT: n values */
	char **keys;      /* JV_OBJECT: n keys, items[i] is keys[i]'s value */
	size_t n;
};

/* Nesting deeper than this is refused (the tool writes 3 levels). */
#define JV_MAX_DEPTH 64

/*
 * Parses one value at text[*pos] (leading white space skipped) and leaves
 * *pos after it. 0, or -1 with err set ("expected ':'") and *pos where the
 * reader stopped; *out is then empty (nothing to free).
 */
int jv_parse(const char *text, size_t len, size_t *pos, struct jv *out, char *err, size_t errlen);
void jv_free(struct jv *v);

/* *pos past white space; false at the end of the text. */
bool jv_more(const char *text, size_t len, size_t *pos);

/* The value of key in an object (the last one if repeated), or NULL. */
const struct jv *jv_get(const struct jv *obj, const char *key);
/* The number, or dflt when v is NULL or no number. */
double jv_num(const struct jv *v, double dflt);
/* The string, or NULL when v is NULL or no string. */
const char *jv_str(const struct jv *v);
/* The number at obj.key, or dflt. */
double jv_getnum(const struct jv *obj, const char *key, double dflt);
/* v when it is an array, else NULL. */
const struct jv *jv_array(const struct jv *v);

#endif
