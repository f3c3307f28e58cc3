// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include "msg.h"

void spt_vmsg(const char *suffix, const char *fmt, va_list ap)
{
	fputs("stablepage-trace: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs(suffix, stderr);
	fputc('\n', stderr);
}

void spt_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	spt_vmsg("", fmt, ap);
	va_end(ap);
	exit(1);
}
