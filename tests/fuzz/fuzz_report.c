// SPDX-License-Identifier: GPL-2.0
/* `report`: a run's JSON output read back (runfile.c) and its HTML page
 * (htmlreport.c, htmltables.c, html.c), on any input: no crash, no
 * undefined behaviour, and no control byte of the input reaches the page. */
#include "fuzz.h"
#include "htmlreport.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512], *page = NULL;
	size_t len = 0;
	struct run run;
	FILE *f;

	if (run_load(&run, (const char *)data, size, err, sizeof(err))) {
		FUZZ_ASSERT(err[0] && !strchr(err, '\n'));
		return 0;
	}
	f = fuzz_sink(&page, &len);
	html_report(f, &run, "run\x1b[2J.json");
	fclose(f);
	FUZZ_ASSERT(fuzz_terminal_safe(page, len) && strstr(page, "</html>"));
	run_free(&run);
	free(page);
	return 0;
}
