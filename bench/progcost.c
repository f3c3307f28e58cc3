// SPDX-License-Identifier: GPL-2.0
/*
 * progcost: what each tracepoint program of one build of
 * bpf/stablepage.bpf.c costs next to another build's, on the very same
 * events. It loads every given BPF object, aggregation only (stream_events
 * and time_requests off, as with -q), attaches their tracepoint programs in
 * the order given (not sched_switch: the tracer attaches it only once a
 * writer waits), prints "attached", and once its stdin closes prints a line
 * per program: "OBJECT PROGRAM RUNS NS_PER_RUN" (kernel.bpf_stats_enabled
 * must be on).
 *
 * The builds run one after the other on each event, and the first takes the
 * cache misses on the event's data: bench/bench-progs.sh runs every order.
 *
 * -p: pausable, for bench/pausebench.c (make bench's "empty" windows): says
 * "Tracing ..." on stderr once attached, detaches every program on SIGUSR1
 * ("Tracing paused") and attaches them again on SIGUSR2 ("Tracing goes
 * on"), and reports on SIGINT or SIGTERM instead of at the end of stdin.
 * An object may be given several times: each copy is one more program on
 * each event.
 *
 * -a: every program of the objects, fentry/fexit ones included, not only
 * the tracepoint programs (lab/patch-cycles.sh with OBJ).
 *
 * -d MAJ:MIN: the tracer's objects trace that block device only, as with
 * one --dev (bench/bench-progs.sh: the scratch loop device).
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#define MAX_OBJS 8
#define MAX_LINKS (MAX_OBJS * 8)

static struct bpf_object *objs[MAX_OBJS];
static const char *paths[MAX_OBJS];
static struct bpf_link *links[MAX_LINKS];
static int nobjs, nlinks;
static volatile sig_atomic_t pause_wanted, exiting;
static bool all_programs;

static void on_signal(int sig)
{
	if (sig == SIGUSR1 || sig == SIGUSR2)
		pause_wanted = sig == SIGUSR1;
	else
		exiting = 1;
}

static int print_warnings(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, args) : 0;
}

/* The tracer's .rodata switches that -q turns off. */
static const char *const quiet_off[] = { "stream_events", "time_requests" };

/*
 * Sets @len bytes at @off into a .rodata variable before the object is
 * loaded. -ENOENT: the object has no such variable (another build's).
 */
static int set_rodata(struct bpf_object *obj, const char *var, size_t off, const void *val,
		      size_t len)
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

		if (!strcmp(btf__name_by_offset(btf, t->name_off), var) &&
		    off + len <= vs->size && vs->offset + vs->size <= size) {
			char data[size];

			memcpy(data, initial, size);
			memcpy(data + vs->offset + off, val, len);
			return bpf_map__set_initial_value(map, data, size);
		}
	}
	return -ENOENT;
}

/*
 * -d: trace one device, as the tracer does with one --dev (make bench's
 * tracer, on the loop device bench-progs also gives here). Each build is
 * told the way it knows:
 * filter_dev and the dev_filter map, and since the device list in .rodata
 * (n_filter_devs, filter_devs) that too.
 */
static __u32 filter_kdev;

static int set_dev_filter(struct bpf_object *obj)
{
	__u32 one = 1;
	char on = 1;
	int err = set_rodata(obj, "filter_dev", 0, &on, 1);

	if (err) /* -ENOENT: not the tracer's object (emptyprogs) */
		return err == -ENOENT ? 0 : err;
	err = set_rodata(obj, "n_filter_devs", 0, &one, sizeof(one));
	if (!err)
		err = set_rodata(obj, "filter_devs", 0, &filter_kdev, sizeof(filter_kdev));
	return err == -ENOENT ? 0 : err;
}

static int fill_dev_filter(struct bpf_object *obj)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, "dev_filter");
	__u8 one = 1;

	if (!map)
		return 0;
	return bpf_map__update_elem(map, &filter_kdev, sizeof(filter_kdev), &one, sizeof(one), 0);
}

static bool measured(const struct bpf_program *prog)
{
	if (all_programs)
		return true;
	return !strncmp(bpf_program__section_name(prog), "tp_btf/", 7) &&
	       strcmp(bpf_program__name(prog), "tp_sched_switch");
}

/* In the order given; false (and a message) if one fails. */
static bool attach_all(void)
{
	struct bpf_program *prog;

	for (int i = 0; i < nobjs; i++)
		bpf_object__for_each_program(prog, objs[i]) {
			if (!bpf_program__autoload(prog))
				continue;
			if (nlinks == MAX_LINKS) {
				fprintf(stderr, "progcost: more than %d programs\n", MAX_LINKS);
				return false;
			}
			links[nlinks] = bpf_program__attach(prog);
			if (!links[nlinks]) {
				fprintf(stderr, "progcost: %s: attach %s: %s\n", paths[i],
					bpf_program__name(prog), strerror(errno));
				return false;
			}
			nlinks++;
		}
	return true;
}

static void detach_all(void)
{
	while (nlinks)
		bpf_link__destroy(links[--nlinks]);
}

/* -p: attached or not as the signals last asked, until SIGINT or SIGTERM. */
static int serve_pauses(void)
{
	bool paused = false;
	sigset_t mask, old;

	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGUSR2);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, &old);
	fprintf(stderr, "Tracing with %d programs (progcost).\n", nlinks);
	while (!exiting) {
		if (pause_wanted != paused) {
			paused = pause_wanted;
			if (paused) {
				detach_all();
			} else if (!attach_all()) {
				detach_all();
				return 1;
			}
			fprintf(stderr, paused ? "Tracing paused.\n" : "Tracing goes on.\n");
			continue;
		}
		sigsuspend(&old);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return 0;
}

/* Options into the globals and *pausable; paths[] from the operands. False
 * on anything invalid (main prints the usage). */
static bool parse_args(int argc, char **argv, bool *pausable)
{
	int ch;

	while ((ch = getopt(argc, argv, "pad:")) != -1) {
		unsigned int major, minor;

		if (ch == 'p')
			*pausable = true;
		else if (ch == 'a')
			all_programs = true;
		else if (ch == 'd' && sscanf(optarg, "%u:%u", &major, &minor) == 2)
			filter_kdev = major << 20 | minor; /* the kernel's dev_t */
		else
			return false;
	}
	nobjs = argc - optind;
	if (nobjs < 1 || nobjs > MAX_OBJS)
		return false;
	for (int i = 0; i < nobjs; i++)
		paths[i] = argv[optind + i];
	return true;
}

/*
 * Opens and loads object i, set up before the load as the tracer would be with
 * -q (and -d's device): its measured programs only. False after a message.
 */
static bool load_object(int i)
{
	struct bpf_program *prog;
	int err;

	objs[i] = bpf_object__open_file(paths[i], NULL);
	if (!objs[i]) {
		fprintf(stderr, "progcost: %s: %s\n", paths[i], strerror(errno));
		return false;
	}
	/* The tracer's objects: aggregation only, no histogram of the write
	 * requests, as with -q. -ENOENT: another object, without these switches. */
	for (size_t v = 0; v < sizeof(quiet_off) / sizeof(quiet_off[0]); v++) {
		err = set_rodata(objs[i], quiet_off[v], 0, &(char){ 0 }, 1);
		if (err && err != -ENOENT) {
			fprintf(stderr, "progcost: %s: %s: %s\n", paths[i], quiet_off[v],
				strerror(-err));
			return false;
		}
	}
	err = filter_kdev ? set_dev_filter(objs[i]) : 0;
	if (err) {
		fprintf(stderr, "progcost: %s: -d: %s\n", paths[i], strerror(-err));
		return false;
	}
	bpf_object__for_each_program(prog, objs[i])
		bpf_program__set_autoload(prog, measured(prog));
	err = bpf_object__load(objs[i]);
	if (err) {
		fprintf(stderr, "progcost: %s: load: %s\n", paths[i], strerror(-err));
		return false;
	}
	/* The dev_filter map exists only once loaded. */
	err = filter_kdev ? fill_dev_filter(objs[i]) : 0;
	if (err) {
		fprintf(stderr, "progcost: %s: dev_filter: %s\n", paths[i], strerror(-err));
		return false;
	}
	return true;
}

/* Until the end of the measurement: stdin closed, or with -p SIGINT or SIGTERM
 * (pausing and going on meanwhile). Nonzero when attaching again failed. */
static int measure(bool pausable)
{
	struct sigaction sa = { .sa_handler = on_signal };
	char buf[64];

	if (pausable) {
		sigaction(SIGUSR1, &sa, NULL);
		sigaction(SIGUSR2, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		return serve_pauses();
	}
	printf("attached\n");
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	return 0;
}

/* "OBJECT PROGRAM RUNS NS_PER_RUN" for each loaded program, from the kernel's
 * bpf_stats (run_cnt 0 where kernel.bpf_stats_enabled was off). */
static void print_costs(void)
{
	struct bpf_program *prog;

	for (int i = 0; i < nobjs; i++)
		bpf_object__for_each_program(prog, objs[i]) {
			struct bpf_prog_info info = {};
			__u32 len = sizeof(info);

			if (!bpf_program__autoload(prog) ||
			    bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
				continue;
			printf("%s %s %llu %.1f\n", paths[i], bpf_program__name(prog),
			       (unsigned long long)info.run_cnt,
			       info.run_cnt ? (double)info.run_time_ns / info.run_cnt : 0.0);
		}
}

int main(int argc, char **argv)
{
	bool pausable = false;

	if (!parse_args(argc, argv, &pausable)) {
		fprintf(stderr,
			"usage: progcost [-p] [-a] [-d MAJ:MIN] OBJECT.bpf.o... (at most %d)\n",
			MAX_OBJS);
		return 2;
	}
	libbpf_set_print(print_warnings);
	for (int i = 0; i < nobjs; i++)
		if (!load_object(i))
			return 1;
	if (!attach_all() || measure(pausable))
		return 1;
	print_costs();
	return 0;
}
