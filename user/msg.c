// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include "msg.h"

void spt_vmsg(const char *suffix, const char *fmt, va_list ap)
{
	fputs("stablepage-trace: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs(suffix, stderr);
	fputc('\n', stderr);
}
