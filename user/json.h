/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SPT_JSON_H
#define SPT_JSON_H

#include <stdio.h>

/* Writes s as a JSON string literal (with quotes); NULL becomes null. */
void json_string(FILE *f, const char *s);

/* Length of the valid multi-byte UTF-8 sequence at p; 0 if invalid or ASCII. */
int utf8_seq_len(const unsigned char *p);

#endif
