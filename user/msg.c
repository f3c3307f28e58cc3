// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include "escape.h"
#include "msg.h"

/* The line goes through the text escaper: messages quote what users and
 * other processes named (paths, comms, arguments), and stay one line. */
static void vline(const char *prefix, const char *suffix, const char *fmt, va_list ap)
{
	char *line = NULL;

	fputs(prefix, stderr);
	if (vasprintf(&line, fmt, ap) >= 0)
		text_puts(stderr, line);
	free(line);
	fputs(suffix, stderr);
	fputc('\n', stderr);
}

void spt_vmsg(const char *suffix, const char *fmt, va_list ap)
{
	vline("stablepage-trace: ", suffix, fmt, ap);
}

void spt_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline("stablepage-trace: ", "", fmt, ap);
	va_end(ap);
}

void spt_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline("enforce: ", "", fmt, ap);
	va_end(ap);
}

void spt_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	spt_vmsg("", fmt, ap);
	va_end(ap);
	exit(1);
}
