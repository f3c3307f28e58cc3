// SPDX-License-Identifier: GPL-2.0
/* The command line (options.c): argv from the input's NUL-separated words,
 * the command from its first byte; options_parse then options_check. Every
 * refusal is one line; what is accepted is in range. --help, --usage and
 * --version print and exit: inputs that could ask for them are skipped. */
#include "fuzz.h"
#include "options.h"

#define MAX_ARGS 16

/* Whether argument a could reach argp's help, usage or version (exit). */
static int asks_to_exit(const char *a)
{
	static const char *const longs[] = { "--help", "--usage", "--version" };
	size_t n = strcspn(a, "=");

	if (a[0] != '-')
		return 0;
	if (a[1] != '-')
		return strpbrk(a + 1, "h?V") != NULL;
	for (size_t i = 0; i < sizeof(longs) / sizeof(longs[0]); i++)
		if (n > 2 && n <= strlen(longs[i]) && !strncmp(a, longs[i], n))
			return 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *words, *argv[MAX_ARGS + 2];
	struct options o;
	int argc = 1;

	if (!size)
		return 0;
	words = fuzz_cstr(data + 1, size - 1);
	argv[0] = "stablepage-trace";
	for (char *w = words; w < words + size - 1 && argc <= MAX_ARGS; w += strlen(w) + 1) {
		if (!strcmp(w, "--"))
			break; /* argp: the rest are arguments; none of ours exit */
		if (asks_to_exit(w))
			goto out;
		argv[argc++] = w;
	}
	argv[argc] = NULL;
	options_init(&o, data[0] % CMD_MAX);
	if (options_parse(&o, argc, argv) || options_check(&o)) {
		/* main prints it through spt_vmsg: escaped, one line */
		FUZZ_ASSERT(o.error[0]);
		goto out;
	}
	FUZZ_ASSERT(o.npids <= MAX_FILTER_PIDS && o.ndevs <= MAX_FILTER_DEVS);
	FUZZ_ASSERT(!o.duration || o.duration >= 0.001);
	FUZZ_ASSERT(!o.interval || o.interval >= 0.1);
	FUZZ_ASSERT(o.max_delay > 0 && o.max_delay <= 60);
	FUZZ_ASSERT(o.count <= SPT_MAX_COUNT && o.prom_top_cgroup <= SPT_PROM_MAX_CGROUPS);
	FUZZ_ASSERT(!o.comm || (o.comm[0] && strlen(o.comm) < SPT_COMM_LEN));
out:
	free(words);
	return 0;
}
