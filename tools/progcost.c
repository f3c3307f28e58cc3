// SPDX-License-Identifier: GPL-2.0
/*
 * progcost: what each tracepoint program of one build of
 * bpf/stablepage.bpf.c costs next to another build's, on the very same
 * events. It loads every given BPF object, aggregation only (stream_events
 * off, as with -q), attaches their tracepoint programs in the order given
 * (not sched_switch: the tracer attaches it only once a writer waits),
 * prints "attached", and once its stdin closes prints a line per program:
 * "OBJECT PROGRAM RUNS NS_PER_RUN" (kernel.bpf_stats_enabled must be on).
 *
 * The builds run one after the other on each event, and the first takes the
 * cache misses on the event's data: tools/bench-progs.sh runs every order.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#define MAX_OBJS 8

static int print_warnings(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, args) : 0;
}

/* Sets a one-byte .rodata variable before the object is loaded. */
static int set_rodata_byte(struct bpf_object *obj, const char *var, char value)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec;
	struct bpf_map *map;
	const char *initial;
	size_t size;
	int id;

	id = btf ? btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC) : -ENOENT;
	if (id < 0)
		return id;
	bpf_object__for_each_map(map, obj)
		if (bpf_map__is_internal(map) && strstr(bpf_map__name(map), ".rodata"))
			break;
	initial = map ? bpf_map__initial_value(map, &size) : NULL;
	if (!initial)
		return -ENOENT;
	sec = btf__type_by_id(btf, id);
	vs = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *t = btf__type_by_id(btf, vs->type);

		if (!strcmp(btf__name_by_offset(btf, t->name_off), var) && vs->offset < size) {
			char data[size];

			memcpy(data, initial, size);
			data[vs->offset] = value;
			return bpf_map__set_initial_value(map, data, size);
		}
	}
	return -ENOENT;
}

static bool measured(const struct bpf_program *prog)
{
	return !strncmp(bpf_program__section_name(prog), "tp_btf/", 7) &&
	       strcmp(bpf_program__name(prog), "tp_sched_switch");
}

int main(int argc, char **argv)
{
	struct bpf_object *objs[MAX_OBJS];
	struct bpf_program *prog;
	int n = argc - 1, err;
	char buf[64];

	if (n < 1 || n > MAX_OBJS) {
		fprintf(stderr, "usage: progcost OBJECT.bpf.o... (at most %d)\n", MAX_OBJS);
		return 2;
	}
	libbpf_set_print(print_warnings);
	for (int i = 0; i < n; i++) {
		objs[i] = bpf_object__open_file(argv[i + 1], NULL);
		if (!objs[i]) {
			fprintf(stderr, "progcost: %s: %s\n", argv[i + 1], strerror(errno));
			return 1;
		}
		err = set_rodata_byte(objs[i], "stream_events", 0);
		if (err) {
			fprintf(stderr, "progcost: %s: no .rodata stream_events: %s\n", argv[i + 1],
				strerror(-err));
			return 1;
		}
		bpf_object__for_each_program(prog, objs[i])
			bpf_program__set_autoload(prog, measured(prog));
		err = bpf_object__load(objs[i]);
		if (err) {
			fprintf(stderr, "progcost: %s: load: %s\n", argv[i + 1], strerror(-err));
			return 1;
		}
	}
	for (int i = 0; i < n; i++)
		bpf_object__for_each_program(prog, objs[i])
			if (bpf_program__autoload(prog) && !bpf_program__attach(prog)) {
				fprintf(stderr, "progcost: %s: attach %s: %s\n", argv[i + 1],
					bpf_program__name(prog), strerror(errno));
				return 1;
			}
	printf("attached\n");
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	for (int i = 0; i < n; i++)
		bpf_object__for_each_program(prog, objs[i]) {
			struct bpf_prog_info info = {};
			__u32 len = sizeof(info);

			if (!bpf_program__autoload(prog) ||
			    bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
				continue;
			printf("%s %s %llu %.1f\n", argv[i + 1], bpf_program__name(prog),
			       (unsigned long long)info.run_cnt,
			       info.run_cnt ? (double)info.run_time_ns / info.run_cnt : 0.0);
		}
	return 0;
}
