/* SPDX-License-Identifier: GPL-2.0 */
/* `stablepage-trace report RUN.json -o PAGE.html`: a run's JSON output as one
 * self-contained HTML page (docs/report.md). */
#ifndef SPT_HTMLREPORT_H
#define SPT_HTMLREPORT_H

#include <stdio.h>
#include "options.h"
#include "runfile.h"

/* The page for run, read from the file named input (shown, escaped). Pure. */
void html_report(FILE *f, const struct run *run, const char *input);

/* The tables (htmltables.c): processes, files, cgroups, devices. */
void html_tables(FILE *f, const struct run *run);

/* The command: o->report_in to o->report_out (stdout when NULL). Input that
 * is not the tool's JSON: one line, exit 2; a page it cannot write: exit 1. */
int report_run(const struct options *o);

#endif
