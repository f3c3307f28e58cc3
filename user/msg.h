/* SPDX-License-Identifier: GPL-2.0 */
/* The one shape of every error line: "stablepage-trace: WHAT[SUFFIX]\n". */
#ifndef SPT_MSG_H
#define SPT_MSG_H

#include <stdarg.h>

void spt_vmsg(const char *suffix, const char *fmt, va_list ap);

/* An error line that does not end the run. */
void spt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "enforce: WHAT\n": what enforcement did, escaped like an error line. */
void spt_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A runtime error: the line, then exit(1). */
void spt_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
