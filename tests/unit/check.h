/* SPDX-License-Identifier: GPL-2.0 */
/* The unit tests' one CHECK, shared by every file of tests/unit/: counts the
 * checks and the failures (in unit_tests.c) and names each failed condition. */
#ifndef SPT_UNIT_CHECK_H
#define SPT_UNIT_CHECK_H

#include <stdio.h>

extern int unit_checks, unit_failures;

#define CHECK(cond)                                                                        \
	do {                                                                               \
		unit_checks++;                                                             \
		if (!(cond)) {                                                             \
			unit_failures++;                                                   \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
		}                                                                          \
	} while (0)

/* The suites of the other files, run by unit_tests.c's main. */
void report_tests(void);    /* the JSON reader, the run read back, the HTML page */
void aging_tests(void);     /* the Prometheus file's label sets, rows that age out */
void mountspec_tests(void); /* what enforce --remount reads, refuses and records */
void verify_tests(void);    /* --verify: is a kept request the one the kernel passes */

#endif
