/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Text output's one escaper: names that come from other users (comm,
 * paths, cgroup names, mount points) reach a terminal or a log only
 * through it, so none can move the cursor, change colours or rewrite
 * lines. Control bytes (C0, DEL), C1 controls even as valid UTF-8 (U+0080
 * to U+009F: 8-bit CSI) and bytes that are not UTF-8 become \xHH;
 * backslash becomes \\ so every escape reads back unambiguously. Valid
 * UTF-8 otherwise stays as it is. JSON (json.c), HTML (html.c) and
 * Prometheus labels (prom.c) have their own, format-mandated escapes.
 */
#ifndef SPT_ESCAPE_H
#define SPT_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* The longest escape of one character: a 2-byte C1 control, \xC2\x9B. */
#define TEXT_ESC_MAX 8
/* A buffer for the whole escaped form of a string of n bytes. */
#define TEXT_ESC_LEN(n) (4 * (n) + 1)

/*
 * s escaped into out (len > 0), NUL-terminated; an escape that does not
 * fit whole is left out with everything after it. NULL s gives "".
 * Returns out, for use as a printf argument.
 */
const char *text_esc(char *out, size_t len, const char *s);

/* text_esc of a fixed-size field (a comm, a device name) that need not end
 * in a NUL: at most size bytes of it (size < TEXT_ESC_FIELD_MAX). */
#define TEXT_ESC_FIELD_MAX 64
const char *text_esc_field(char *out, size_t len, const char *field, size_t size);
/* The same for two arrays: ESC_FIELD(buf, row->comm) */
#define ESC_FIELD(buf, field) text_esc_field(buf, sizeof(buf), field, sizeof(field))

/* s escaped to f, whatever its length. */
void text_puts(FILE *f, const char *s);

/* A Prometheus label value, quoted: \\ " and newline escaped, bytes that are
 * not UTF-8 as '?'. */
void prom_label_value(FILE *f, const char *s);

#endif
