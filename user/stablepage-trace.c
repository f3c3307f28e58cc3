// SPDX-License-Identifier: GPL-2.0
/*
 * stablepage-trace: find writes to page-cache pages while they are under
 * writeback, attributed to process, file and device.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "enforce.h"
#include "guardian.h"
#include "hold.h"
#include "msg.h"
#include "probe.h"
#include "parse.h"
#include "prom.h"
#include "report.h"
#include "resolve.h"
#include "stablepage.skel.h"

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2
#define MAX_FILTER_PIDS 1024
#define MAX_FILTER_DEVS 64
#define SYSFS_BTF "/sys/kernel/btf/vmlinux"

static struct env {
	double duration;
	uint32_t pids[MAX_FILTER_PIDS];
	int npids;
	uint32_t devs[MAX_FILTER_DEVS];
	int ndevs;
	const char *comm;
	const char *cgroup;
	const char *btf_path;
	bool quiet;
	bool json;
	bool verbose;
	bool hist;
	bool time_all_waits;
	double interval;
	const char *prom_file;
	unsigned long prom_top_comm;
	unsigned long top;
	bool features; /* `stablepage-trace features` */
	bool enforce;  /* `stablepage-trace enforce ...` */
	bool native;
	bool remount;
	bool persist;
	bool restore;
	const char *attach_mode;
	const char *action; /* enforce without --native: enum spt_hold_action by name */
	double max_delay;
	bool action_given, max_delay_given;
} env = { .top = 10, .attach_mode = "auto", .action = "delay", .max_delay = 1.0 };

/* --prom-file without -i: how often node_exporter's file is refreshed. */
#define PROM_DEFAULT_INTERVAL_S 15.0

const char *argp_program_version = "stablepage-trace " SPT_VERSION;
const char *argp_program_bug_address = "https://github.com/stablepage-trace/stablepage-trace/issues";
static const char doc[] =
	"Find writes to page-cache pages while they are under writeback.\n"
	"\n"
	"A violation is the first write that makes a folio dirty while PG_writeback is set on it, on a "
	"mapping whose kernel does not wait for writeback first (no stable writes). It is counted once "
	"per folio per writeback cycle.\n"
	"\n"
	"Histograms (--hist, --json, --prom-file) are log2 microseconds, aggregated in the kernel: "
	"writeback (write requests, allocation -> completion; timed only with those options), "
	"stable-wait (writers asleep in "
	"folio_wait_writeback until running again), other-wait (fsync, msync, truncate waits; "
	"in tracepoint mode timed only after a writer's first wait, or with --time-all-waits), "
	"would-stall (a violation -> the end of that folio's I/O: the wait stable pages would "
	"impose), folio-writeback (fentry mode: one folio's writeback, start -> end). Interval "
	"reports (-i) and the Prometheus file are cumulative since the start; "
	"nothing resets.\n"
	"\n"
	"SIGUSR1 pauses tracing: the tracepoint programs are detached (fentry mode's fentry/fexit "
	"programs stay attached and return at once), so nothing is seen and the traced workload "
	"pays (almost) nothing; SIGUSR2 attaches them again. Each is acknowledged on stderr. A "
	"violation or wait that spans a pause is counted, untimed (its end may have passed unseen); "
	"the summary says how long tracing was paused (paused_s). enforce does not pause.\n"
	"\n"
	"USAGE: stablepage-trace [-d SECS] [-p PID]... [--comm COMM] [--cgroup PATH] [--dev DEV]... "
	"[-q] [--json] [--hist] [--time-all-waits] [-i SECS] [--prom-file PATH [--prom-top-comm N]] "
	"[--top N] [-v]\n"
	"       stablepage-trace enforce --native --dev DEV... [--remount] [--persist] [tracing options]\n"
	"       stablepage-trace enforce --restore\n"
	"       stablepage-trace enforce {--pid PID|--comm COMM|--cgroup PATH}... [--action "
	"delay|kill|log] [--max-delay SECS] [tracing options]\n"
	"       stablepage-trace features   # what this kernel offers: programs that load, LSMs, devices\n"
	"\n"
	"enforce --native sets the devices' queue/stable_writes to 1 and traces; filesystems mounted "
	"before that are not enforced until mounted again (--remount unmounts and mounts them with the "
	"same options). The previous values come back at exit; --restore undoes a killed run.\n"
	"enforce with a scope and no --native holds writers in scope (SIGSTOP) until the folio they "
	"would modify is written back, at most --max-delay (1 s); write() only where the BPF LSM or "
	"fmod_ret loads, mmap stores everywhere. A guardian process resumes them if the tool dies.\n"
	"\n"
	"EXAMPLES:\n"
	"    stablepage-trace                  # one line per violation until Ctrl-C, then a summary\n"
	"    stablepage-trace -d 10 -q         # count for 10 s, print only the summary\n"
	"    stablepage-trace -p 4242 -p 4243  # only these processes\n"
	"    stablepage-trace --dev loop0      # only filesystems on /dev/loop0 (or --dev 7:0)\n"
	"    stablepage-trace --cgroup /sys/fs/cgroup/system.slice/postgresql.service\n"
	"    stablepage-trace --json | jq .    # one JSON object per line, summary last\n"
	"    stablepage-trace -q --hist -d 60  # what stable pages would cost, as histograms\n"
	"    stablepage-trace -q -i 5          # a summary every 5 s (cumulative)\n"
	"    stablepage-trace -q --prom-file /var/lib/prometheus/node-exporter/stablepage.prom\n"
	"    stablepage-trace enforce --native --dev sdb --remount -d 60  # stable pages for a minute\n"
	"    stablepage-trace enforce --comm postgres -d 60  # hold only postgres' writers\n"
	"    stablepage-trace enforce --restore   # undo an enforce run that was killed\n";

enum {
	OPT_COMM = 0x100,
	OPT_CGROUP,
	OPT_DEV,
	OPT_JSON,
	OPT_TOP,
	OPT_BTF,
	OPT_USAGE,
	OPT_HIST,
	OPT_PROM_FILE,
	OPT_PROM_TOP_COMM,
	OPT_NATIVE,
	OPT_REMOUNT,
	OPT_PERSIST,
	OPT_RESTORE,
	OPT_ATTACH_MODE,
	OPT_ACTION,
	OPT_MAX_DELAY,
	OPT_TIME_ALL_WAITS,
};

static const struct argp_option opts[] = {
	{ "duration", 'd', "SECS", 0, "Trace for SECS (10, 10s, 2m, 500ms), then print the summary", 0 },
	{ "pid", 'p', "PID", 0, "Only this process (thread group); repeatable", 0 },
	{ "comm", OPT_COMM, "COMM", 0, "Only tasks whose comm is COMM", 0 },
	{ "cgroup", OPT_CGROUP, "PATH", 0, "Only tasks in this cgroup v2 directory or below it", 0 },
	{ "dev", OPT_DEV, "DEV", 0, "Only filesystems on block device NAME, /dev/NAME or MAJ:MIN; repeatable", 0 },
	{ "quiet", 'q', NULL, 0, "No per-event lines: count in the kernel, print the summary", 0 },
	{ "json", OPT_JSON, NULL, 0, "One JSON object per line: events, then the summary", 0 },
	{ "top", OPT_TOP, "N", 0, "Processes and files listed in the summary (default 10)", 0 },
	{ "hist", OPT_HIST, NULL, 0, "Print the latency histograms with the summary", 0 },
	{ "time-all-waits", OPT_TIME_ALL_WAITS, NULL, 0,
	  "Time every writeback wait from the start, not only writers' (fsync, sync_file_range too): "
	  "in tracepoint mode that attaches sched_switch, paid on every context switch", 0 },
	{ "interval", 'i', "SECS", 0, "Print the summary every SECS too (cumulative since the start)", 0 },
	{ "prom-file", OPT_PROM_FILE, "PATH", 0,
	  "Write Prometheus metrics to PATH (atomically) every interval (default 15 s) and at exit", 0 },
	{ "prom-top-comm", OPT_PROM_TOP_COMM, "N", 0,
	  "Add violations per comm for the N busiest comms to the metrics (default 0: none)", 0 },
	{ "native", OPT_NATIVE, NULL, 0, "enforce: the kernel's stable writes on each --dev", 0 },
	{ "remount", OPT_REMOUNT, NULL, 0,
	  "enforce: unmount and mount again the filesystems on --dev so that it takes effect", 0 },
	{ "persist", OPT_PERSIST, NULL, 0, "enforce: keep stable_writes at exit (--restore undoes it)", 0 },
	{ "restore", OPT_RESTORE, NULL, 0, "enforce: undo what a killed or --persist run changed", 0 },
	{ "action", OPT_ACTION, "ACTION", 0,
	  "enforce --pid/--comm/--cgroup: delay (default: stop the writer until writeback ends), "
	  "kill (SIGKILL it before its data lands) or log (count only)", 0 },
	{ "max-delay", OPT_MAX_DELAY, "SECS", 0,
	  "enforce --action delay: longest hold of one write (default 1 s)", 0 },
	{ "attach-mode", OPT_ATTACH_MODE, "MODE", 0,
	  "auto (default): fentry where it loads, else tracepoint; or tracepoint, fentry", 0 },
	{ "btf", OPT_BTF, "FILE", 0, "Kernel BTF to use instead of " SYSFS_BTF, 0 },
	{ "verbose", 'v', NULL, 0, "Print libbpf and loader diagnostics", 0 },
	/* Our own: with ARGP_NO_ERRS (for one-line errors) argp's --help prints nothing and returns. */
	{ "help", '?', NULL, 0, "Give this help list", -1 },
	{ "usage", OPT_USAGE, NULL, 0, "Give a short usage message", -1 },
	{ "version", 'V', NULL, 0, "Print program version", -1 },
	{ NULL, 'h', NULL, OPTION_HIDDEN, "Show this help", 0 },
	{},
};

static void die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	spt_vmsg(" (see --help)", fmt, ap);
	va_end(ap);
	exit(EXIT_USAGE);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	spt_vmsg("", fmt, ap);
	va_end(ap);
	exit(EXIT_RUNTIME);
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	char proc[32];

	switch (key) {
	case 'd':
		if (!parse_duration(arg, &env.duration))
			die_usage("invalid duration '%s': use e.g. 10, 10s, 2m or 500ms", arg);
		break;
	case 'p':
		if (env.npids == MAX_FILTER_PIDS)
			die_usage("at most %d --pid options", MAX_FILTER_PIDS);
		if (!parse_pid(arg, &env.pids[env.npids]))
			die_usage("invalid pid '%s': expected a positive number", arg);
		snprintf(proc, sizeof(proc), "/proc/%u", env.pids[env.npids]);
		if (access(proc, F_OK))
			die_usage("no such process: %s", arg);
		env.npids++;
		break;
	case OPT_COMM:
		if (!*arg || strlen(arg) >= SPT_COMM_LEN)
			die_usage("invalid comm '%s': 1 to %d characters", arg, SPT_COMM_LEN - 1);
		env.comm = arg;
		break;
	case OPT_CGROUP:
		env.cgroup = arg;
		break;
	case OPT_DEV:
		if (env.ndevs == MAX_FILTER_DEVS)
			die_usage("at most %d --dev options", MAX_FILTER_DEVS);
		if (!resolve_dev_arg(arg, &env.devs[env.ndevs]))
			die_usage("unknown device '%s': give a block device name (loop0), its /dev path "
				  "or MAJ:MIN (see lsblk)", arg);
		env.ndevs++;
		break;
	case 'q':
		env.quiet = true;
		break;
	case OPT_JSON:
		env.json = true;
		break;
	case OPT_TOP:
		if (!parse_uint(arg, 100000, &env.top))
			die_usage("invalid --top '%s': expected a number", arg);
		break;
	case OPT_BTF:
		env.btf_path = arg;
		break;
	case OPT_HIST:
		env.hist = true;
		break;
	case OPT_TIME_ALL_WAITS:
		env.time_all_waits = true;
		break;
	case 'i':
		if (!parse_duration(arg, &env.interval))
			die_usage("invalid interval '%s': use e.g. 5, 5s, 1m or 500ms", arg);
		break;
	case OPT_PROM_FILE:
		if (!*arg)
			die_usage("empty --prom-file path");
		env.prom_file = arg;
		break;
	case OPT_PROM_TOP_COMM:
		if (!parse_uint(arg, 10000, &env.prom_top_comm))
			die_usage("invalid --prom-top-comm '%s': expected a number up to 10000", arg);
		break;
	case OPT_ATTACH_MODE:
		if (strcmp(arg, "auto") && strcmp(arg, "tracepoint") && strcmp(arg, "fentry"))
			die_usage("invalid --attach-mode '%s': auto, tracepoint or fentry", arg);
		env.attach_mode = arg;
		break;
	case OPT_ACTION:
		if (strcmp(arg, "delay") && strcmp(arg, "kill") && strcmp(arg, "log"))
			die_usage("invalid --action '%s': delay, kill or log", arg);
		env.action = arg;
		env.action_given = true;
		break;
	case OPT_MAX_DELAY:
		if (!parse_duration(arg, &env.max_delay) || env.max_delay <= 0 || env.max_delay > 60)
			die_usage("invalid --max-delay '%s': a duration up to 60 s, e.g. 1, 200ms", arg);
		env.max_delay_given = true;
		break;
	case OPT_NATIVE:
		env.native = true;
		break;
	case OPT_REMOUNT:
		env.remount = true;
		break;
	case OPT_PERSIST:
		env.persist = true;
		break;
	case OPT_RESTORE:
		env.restore = true;
		break;
	case 'v':
		env.verbose = true;
		break;
	case 'h':
	case '?':
		argp_help(state->root_argp, stdout, ARGP_HELP_STD_HELP, "stablepage-trace");
		exit(EXIT_SUCCESS);
	case OPT_USAGE:
		argp_help(state->root_argp, stdout, ARGP_HELP_USAGE, "stablepage-trace");
		exit(EXIT_SUCCESS);
	case 'V':
		printf("%s\n", argp_program_version);
		exit(EXIT_SUCCESS);
	case ARGP_KEY_ARG:
		die_usage("unexpected argument '%s'", arg);
	case ARGP_KEY_ERROR:
		/* ARGP_NO_ERRS: argp's own message takes three lines; ours takes one. */
		die_usage("unknown option or missing value: '%s'",
			  state->argv[state->next > 1 ? state->next - 1 : 0]);
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (!env.verbose && level != LIBBPF_WARN)
		return 0;
	if (!env.verbose)
		return 0; /* failures are reported in one line by the caller */
	return vfprintf(stderr, fmt, args);
}

static void verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void verbose(const char *fmt, ...)
{
	va_list ap;

	if (!env.verbose)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* CAP_PERFMON (38), CAP_BPF (39) or CAP_SYS_ADMIN (21) in the effective set. */
static bool have_bpf_caps(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	unsigned long long eff = 0;
	char line[256];

	if (!f)
		return geteuid() == 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return (eff & (1ULL << 21)) || ((eff & (1ULL << 38)) && (eff & (1ULL << 39)));
}

static const char *btf_file(void)
{
	return env.btf_path ? env.btf_path : SYSFS_BTF;
}

static void check_kernel_btf(void)
{
	if (access(btf_file(), R_OK))
		die("no kernel BTF at %s: needs a kernel built with CONFIG_DEBUG_INFO_BTF=y, or "
		    "--btf FILE", btf_file());
}

/*
 * After a failed load: a missing tracepoint, or the verifier. The kernel's
 * BTF is searched only now, to name a missing tracepoint instead of a
 * libbpf error: parsing vmlinux BTF a second time costs 30-60 ms of start-up.
 */
static void explain_load_failure(int err)
{
	struct btf *btf = btf__parse(btf_file(), NULL);
	const struct spt_tracepoint *missing;

	if (!btf)
		die("cannot parse BTF in %s: %s", btf_file(), strerror(errno));
	missing = probe_missing_tracepoint(btf);
	btf__free(btf);
	if (missing)
		die("the kernel lacks tracepoint %s (added in Linux %s)", missing->name, missing->since);
	fprintf(stderr, "stablepage-trace: the kernel rejected the BPF programs: %s "
			"(-v shows the verifier log)\n", strerror(-err));
}

static volatile sig_atomic_t exiting;
/* SIGUSR1 asks for tracing to pause, SIGUSR2 for it to go on: the state
 * last asked for, which the main loop brings about. */
static volatile sig_atomic_t pause_wanted;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

static void on_pause_signal(int sig)
{
	pause_wanted = sig == SIGUSR1;
}

/* Since when tracing is paused, and for how long it was before. */
static struct {
	bool on;
	double since, total;
} paused;

struct dev_name {
	uint32_t dev;
	bool known;
	char devname[SPT_DEVNAME_LEN];
	char fstype[SPT_FSTYPE_LEN];
};

static struct ctx {
	struct stablepage_bpf *skel;
	double realtime_offset; /* CLOCK_REALTIME - CLOCK_MONOTONIC, seconds */
	struct dev_name names[MAX_FILTER_DEVS * 4];
	size_t nnames;
	unsigned long long streamed;
} ctx;

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const struct dev_name *dev_name_of(uint32_t dev)
{
	struct spt_dev_stats ds;
	struct dev_name *n;

	for (size_t i = 0; i < ctx.nnames; i++)
		if (ctx.names[i].dev == dev)
			return &ctx.names[i];
	if (bpf_map__lookup_elem(ctx.skel->maps.dev_stats, &dev, sizeof(dev), &ds, sizeof(ds), 0))
		return NULL;
	n = &ctx.names[ctx.nnames < sizeof(ctx.names) / sizeof(ctx.names[0]) ? ctx.nnames++ : 0];
	n->dev = dev;
	n->known = true;
	memcpy(n->devname, ds.devname, sizeof(n->devname));
	memcpy(n->fstype, ds.fstype, sizeof(n->fstype));
	return n;
}

static int handle_event(void *unused, void *data, size_t size)
{
	const struct spt_event *e = data;
	const struct dev_name *n;
	struct event_view v = { .e = e };

	(void)unused;
	if (size < sizeof(*e))
		return 0;
	n = dev_name_of(e->dev);
	v.ts = e->ts_ns / 1e9 + ctx.realtime_offset;
	v.devname = n ? n->devname : NULL;
	v.fstype = n ? n->fstype : NULL;
	v.path = resolve_path(e->dev, e->ino, e->generation);
	v.cgroup = resolve_cgroup(e->cgroup_id);
	if (env.json)
		print_event_json(stdout, &v);
	else
		print_event_text(stdout, &v);
	ctx.streamed++;
	return 0;
}

/*
 * The label users know a device by: the block device's kernel name
 * ("loop0"), also for a filesystem with an anonymous dev (btrfs) through
 * its s_bdev; the superblock's s_id when there is no block device.
 */
static void device_label(const struct spt_summary *s, __u32 dev, char out[SPT_DEVNAME_LEN])
{
	for (size_t i = 0; i < s->ndevs; i++) {
		const struct spt_dev_stats *ds = &s->devs[i].s;

		if (s->devs[i].dev != dev)
			continue;
		if (ds->bdev) {
			resolve_blockdev_name(ds->bdev, out, SPT_DEVNAME_LEN);
			return;
		}
		if (ds->devname[0]) {
			snprintf(out, SPT_DEVNAME_LEN, "%s", ds->devname);
			return;
		}
	}
	resolve_blockdev_name(dev, out, SPT_DEVNAME_LEN);
}

/* Appends hist_table's claimed rows to the hash map's (a key is in one). */
static int read_hist_table(struct stablepage_bpf *skel, struct spt_summary *s)
{
	__u32 nrows = bpf_map__max_entries(skel->maps.hist_table);
	struct hist_row *rows = realloc(s->hists, (s->nhists + nrows) * sizeof(*rows));

	if (!rows)
		return -ENOMEM;
	s->hists = rows;
	for (__u32 i = 0; i < nrows; i++) {
		struct spt_hist_entry e;
		int err = bpf_map__lookup_elem(skel->maps.hist_table, &i, sizeof(i), &e, sizeof(e), 0);

		if (err)
			return err;
		if (!e.key_word)
			continue;
		memset(&rows[s->nhists], 0, sizeof(rows[0]));
		rows[s->nhists].key = e.key;
		rows[s->nhists++].h = e.h;
	}
	return 0;
}

static int read_summary(struct stablepage_bpf *skel, struct spt_summary *s)
{
	int ncpus = libbpf_num_possible_cpus();
	struct writer_row *writers = NULL;
	struct spt_totals *percpu;
	size_t nwriters = 0;
	__u32 zero = 0;
	int err;

	if (ncpus <= 0)
		return -EINVAL;
	percpu = calloc(ncpus, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	err = bpf_map__lookup_elem(skel->maps.totals, &zero, sizeof(zero), percpu,
				   sizeof(*percpu) * ncpus, 0);
	if (!err)
		totals_sum(&s->totals, percpu, ncpus);
	free(percpu);
	if (err)
		return err;

#define READ_ROWS(map, rows, n, keyfield, valfield)                                               \
	do {                                                                                       \
		size_t cap = bpf_map__max_entries(map);                                            \
		void *prev = NULL;                                                                 \
		rows = calloc(cap, sizeof(*rows));                                                 \
		if (!rows)                                                                         \
			return -ENOMEM;                                                            \
		while (n < cap && !bpf_map__get_next_key(map, prev, &rows[n].keyfield,             \
							 sizeof(rows[n].keyfield))) {              \
			if (!bpf_map__lookup_elem(map, &rows[n].keyfield, sizeof(rows[n].keyfield), \
						  &rows[n].valfield, sizeof(rows[n].valfield), 0))   \
				prev = &rows[n++].keyfield;                                        \
			else                                                                       \
				break;                                                             \
		}                                                                                  \
	} while (0)

	READ_ROWS(skel->maps.dev_stats, s->devs, s->ndevs, dev, s);
	READ_ROWS(skel->maps.proc_stats, s->procs, s->nprocs, pid, s);
	READ_ROWS(skel->maps.writer_stats, writers, nwriters, key, s);
	READ_ROWS(skel->maps.hists, s->hists, s->nhists, key, h);
#undef READ_ROWS
	err = fold_writers(s, writers, nwriters);
	free(writers);
	if (!err)
		err = read_hist_table(skel, s);
	if (err)
		return err;
	s->would_stall_pending = skel->bss->n_inflight_violations;
	s->waits_pending = skel->bss->n_waiting;
	for (size_t i = 0; i < s->ndevs; i++)
		device_label(s, s->devs[i].dev, s->devs[i].device);
	for (size_t i = 0; i < s->nhists; i++) {
		hist_set_count(&s->hists[i].h);
		device_label(s, s->hists[i].key.dev, s->hists[i].device);
	}
	sort_hists(s->hists, s->nhists);
	sort_devs(s->devs, s->ndevs);
	sort_procs(s->procs, s->nprocs);
	sort_files(s->files, s->nfiles);
	for (size_t i = 0; i < s->nfiles && i < env.top; i++) {
		const char *p = resolve_path(s->files[i].key.dev, s->files[i].key.ino,
					     s->files[i].s.generation);

		s->files[i].path = p ? strdup(p) : NULL;
	}
	return 0;
}

static void free_summary(struct spt_summary *s);

static bool enforcement_held = true;

static struct prom_info prom_info = { .version = SPT_VERSION, .attach_mode = "tracepoint" };

/*
 * Per attach point, what loads here: where trampolines load, each fentry
 * program whose function the kernel has (fentry mode); tracepoints for the
 * rest, and for everything where they do not. Returns the mode and the
 * reason in why; fentry_use[i] says which of spt_fentry_points to load.
 */
static const char *choose_attach_mode(char *why, size_t len, bool fentry_use[SPT_NFENTRY])
{
	char fail[128], handlers[256] = "";
	size_t n = 0;

	memset(fentry_use, 0, SPT_NFENTRY * sizeof(fentry_use[0]));
	if (!strcmp(env.attach_mode, "tracepoint")) {
		snprintf(why, len, "as asked");
		return "tracepoint";
	}
	if (!probe_program("probe_fentry", env.btf_path, fail, sizeof(fail))) {
		if (!strcmp(env.attach_mode, "fentry"))
			die("--attach-mode fentry: fentry programs do not load on this kernel (%s); "
			    "--attach-mode auto uses tracepoints", fail);
		snprintf(why, len, "fentry does not load here: %s", fail);
		return "tracepoint";
	}
	probe_fentry_functions(env.btf_path, fentry_use);
	for (size_t i = 0; i < SPT_NFENTRY; i++)
		if (fentry_use[i] && spt_fentry_points[i].role == SPT_FENTRY_MKWRITE &&
		    !strncmp(spt_fentry_points[i].prog, "fexit_", 6) && n < sizeof(handlers))
			n += snprintf(handlers + n, sizeof(handlers) - n, "%s%s", n ? ", " : "",
				      spt_fentry_points[i].func);
	snprintf(why, len,
		 "mmap violations where page_mkwrite returns (%s; other handlers: tracepoint), "
		 "write violations and wait counts from tracepoints, waits timed by "
		 "folio_wait_writeback, writeback start/end per folio",
		 n ? handlers : "no handler found");
	return "fentry";
}

/*
 * enforce (BPF mode): how write() is held before its copy, if at all: the
 * BPF LSM's file_permission where the BPF LSM is active, else fmod_ret on
 * security_file_permission; both need the fentry mode's index of folios
 * under writeback. "none" with the reason in why.
 */
static const char *choose_write_hold(const bool fentry_use[SPT_NFENTRY], char *why, size_t len)
{
	char fail[128];

	if (!fentry_use[SPT_FENTRY_START_WRITEBACK]) {
		snprintf(why, len, "checking a write's range needs fentry on __folio_start_writeback, "
				   "and the attach mode is tracepoint");
		return "none";
	}
	if (probe_bpf_lsm_active() && probe_program("probe_lsm", env.btf_path, fail, sizeof(fail)))
		return "lsm";
	if (probe_program("probe_fmod_ret", env.btf_path, fail, sizeof(fail)))
		return "fmod_ret";
	snprintf(why, len, "neither BPF LSM nor fmod_ret programs load: %s", fail);
	return "none";
}

static __u32 hold_action_value(const char *name)
{
	return !strcmp(name, "kill") ? SPT_ACTION_KILL :
	       !strcmp(name, "log")  ? SPT_ACTION_LOG :
				       SPT_ACTION_DELAY;
}

static struct hold_tracker hold_tracker;
static struct guardian guardian;
static bool holding; /* enforce (BPF mode) is on */
static const char *write_hold = "none";

static void resume_pid(__u32 pid, void *unused)
{
	(void)unused;
	kill(pid, SIGCONT);
}

static void forget_hold(__u32 tid, void *skel)
{
	bpf_map__delete_elem(((struct stablepage_bpf *)skel)->maps.holds, &tid, sizeof(tid), 0);
}

static int handle_hold_event(void *unused, void *data, size_t size)
{
	(void)unused;
	if (size >= sizeof(struct spt_hold_event))
		hold_event(&hold_tracker, data, monotonic_ns());
	return 0;
}

/* A writer waited (tracepoint mode): time the waits from now on, tried
 * once. The link is the skeleton's, so detach and destroy end it like the
 * others. Without it tracing goes on, the waits counted and untimed. */
static void attach_switch(struct stablepage_bpf *skel)
{
	static bool tried;

	if (tried)
		return;
	tried = true;
	skel->links.tp_sched_switch = bpf_program__attach(skel->progs.tp_sched_switch);
	if (!skel->links.tp_sched_switch) {
		fprintf(stderr, "stablepage-trace: cannot attach sched_switch, waits stay untimed: %s\n",
			strerror(errno));
		return;
	}
	skel->bss->switch_attached = true;
	verbose("a writer waited on writeback: sched_switch attached to time the waits\n");
}

/*
 * Pausing detaches the tracepoint programs, so the traced workload pays
 * nothing (make bench compares alternating windows this way), and going on
 * attaches them again; what spanned the pause is dropped, untimed (see
 * pause_epoch). fentry/fexit programs stay attached and return at once
 * (tracing_paused): attaching a trampoline again on a function writers run
 * hung the 6.1 test guest. Each is acknowledged by a line on stderr.
 */
static bool is_trampoline(const struct bpf_program *prog)
{
	enum bpf_attach_type type = bpf_program__expected_attach_type(prog);

	return type == BPF_TRACE_FENTRY || type == BPF_TRACE_FEXIT;
}

static int set_paused(struct stablepage_bpf *skel, bool pause)
{
	const struct bpf_object_skeleton *s = skel->skeleton;
	double now = clock_s(CLOCK_MONOTONIC);
	int i, err = 0;

	if (pause) {
		skel->bss->tracing_paused = true;
		for (i = 0; i < s->prog_cnt; i++) {
			struct bpf_link **link = s->progs[i].link;

			if (*link && !is_trampoline(*s->progs[i].prog)) {
				bpf_link__destroy(*link);
				*link = NULL;
			}
		}
		skel->bss->pause_epoch++;
		paused.since = now;
		fprintf(stderr, "Tracing paused (SIGUSR2 goes on).\n");
	} else {
		/* What was attached at the start, and sched_switch if a
		 * writer's wait attached it after the start. */
		for (i = 0; i < s->prog_cnt && !err; i++) {
			struct bpf_program *prog = *s->progs[i].prog;
			struct bpf_link **link = s->progs[i].link;
			bool wanted = bpf_program__autoattach(prog) ||
				      (prog == skel->progs.tp_sched_switch && skel->bss->switch_attached);

			if (*link || !bpf_program__autoload(prog) || !wanted)
				continue;
			*link = bpf_program__attach(prog);
			err = *link ? 0 : -errno;
		}
		if (err) {
			fprintf(stderr, "stablepage-trace: cannot attach the programs again after the "
					"pause: %s\n", strerror(-err));
			return err;
		}
		skel->bss->tracing_paused = false;
		paused.total += now - paused.since;
		fprintf(stderr, "Tracing goes on.\n");
	}
	paused.on = pause;
	return 0;
}

/* Nobody stays stopped: called once the programs are detached. The
 * guardian's last sweep resumes whoever the holds table still names. */
static void release_everyone(void)
{
	if (!holding)
		return;
	hold_resume_all(&hold_tracker, monotonic_ns());
	guardian_stop(&guardian);
}

/*
 * Reads the maps and reports: on stdout at exit and every -i interval, to
 * the Prometheus file every interval and at exit. Counts are cumulative.
 */
static int report(struct stablepage_bpf *skel, double start, bool final)
{
	struct spt_summary s = { .interval = !final, .attach_mode = prom_info.attach_mode };

	if (holding) {
		s.hold = &hold_tracker;
		s.hold_action = env.action;
		s.write_hold = write_hold;
	}
	int err;

	double now = clock_s(CLOCK_MONOTONIC);

	s.duration_s = now - start;
	s.paused_s = paused.total + (paused.on ? now - paused.since : 0);
	err = read_summary(skel, &s);
	if (err) {
		fprintf(stderr, "stablepage-trace: cannot read the counters: %s\n", strerror(-err));
		free_summary(&s);
		return err;
	}
	if (final || env.interval) {
		if (env.json) {
			print_summary_json(stdout, &s, env.top);
		} else {
			if (!final)
				printf("\n--- after %.1f s (counts since the start) ---\n", s.duration_s);
			print_summary_text(stdout, &s, env.top);
			if (env.hist)
				print_hists_text(stdout, &s);
		}
		fflush(stdout);
	}
	if (final && env.enforce && env.native)
		enforcement_held = enforce_report(&s);
	if (env.prom_file) {
		err = prom_write_file(env.prom_file, &s, &prom_info);
		if (err)
			fprintf(stderr, "stablepage-trace: cannot write %s: %s\n", env.prom_file,
				strerror(-err));
	}
	free_summary(&s);
	return err;
}

static void free_summary(struct spt_summary *s)
{
	for (size_t i = 0; i < s->nfiles; i++)
		free(s->files[i].path);
	free(s->devs);
	free(s->procs);
	free(s->files);
	free(s->hists);
	memset(s, 0, sizeof(*s));
}

static int setup_filters(struct stablepage_bpf *skel, int cgroup_fd)
{
	__u8 one = 1;
	__u32 zero = 0;
	int err;

	for (int i = 0; i < env.npids; i++) {
		err = bpf_map__update_elem(skel->maps.pid_filter, &env.pids[i], sizeof(__u32), &one,
					   sizeof(one), BPF_ANY);
		if (err)
			return err;
	}
	for (int i = 0; i < env.ndevs; i++) {
		err = bpf_map__update_elem(skel->maps.dev_filter, &env.devs[i], sizeof(__u32), &one,
					   sizeof(one), BPF_ANY);
		if (err)
			return err;
	}
	if (cgroup_fd >= 0)
		return bpf_map__update_elem(skel->maps.cgroup_filter, &zero, sizeof(zero),
					    &cgroup_fd, sizeof(cgroup_fd), BPF_ANY);
	return 0;
}

/* A test's smaller table: max_entries from the environment variable @name. */
static void shrink_map_for_tests(struct bpf_map *map, const char *name)
{
	const char *entries = getenv(name);

	if (entries && atoi(entries) > 0)
		bpf_map__set_max_entries(map, atoi(entries));
}

/* The enforce options belong together and to the enforce command only. */
static void check_enforce_args(void)
{
	if (!env.enforce) {
		if (env.native || env.remount || env.persist || env.restore || env.action_given ||
		    env.max_delay_given)
			die_usage("--native, --remount, --persist, --restore, --action and --max-delay "
				  "belong to 'stablepage-trace enforce'");
		return;
	}
	if (env.restore) {
		if (env.native || env.remount || env.persist || env.ndevs)
			die_usage("enforce --restore takes no other enforce options");
		return;
	}
	if (env.native) {
		if (!env.ndevs)
			die_usage("enforce --native needs --dev DEV: the block devices to enforce on");
		if (env.action_given || env.max_delay_given)
			die_usage("--action and --max-delay belong to the BPF mode (enforce with "
				  "--pid, --comm or --cgroup, without --native)");
		return;
	}
	if (env.remount || env.persist)
		die_usage("--remount and --persist belong to enforce --native");
	if (!env.npids && !env.comm && !env.cgroup)
		die_usage("enforce needs --native --dev DEV (the kernel's stable writes per device), "
			  "or a scope for the BPF mode: --pid, --comm or --cgroup");
}

int main(int argc, char **argv)
{
	static const struct argp argp = { .options = opts, .parser = parse_arg, .doc = doc };
	LIBBPF_OPTS(bpf_object_open_opts, open_opts);
	struct stablepage_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	double start, deadline, next_report = 0, every;
	int cgroup_fd = -1, err, ret = EXIT_RUNTIME;
	bool fentry_use[SPT_NFENTRY], mkwrite = false, wait_calls = false, switch_at_start;
	bool resume_failed = false;
	char mode_why[512], write_why[256] = "";

	if (argc > 1 && (!strcmp(argv[1], "enforce") || !strcmp(argv[1], "features"))) {
		env.enforce = argv[1][0] == 'e';
		env.features = !env.enforce;
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	err = argp_parse(&argp, argc, argv, ARGP_NO_ERRS | ARGP_NO_HELP, NULL, NULL);
	if (err)
		return EXIT_USAGE;
	check_enforce_args();
	if (env.restore) {
		if (geteuid())
			die("enforce --restore writes sysfs: run it with sudo");
		return enforce_restore();
	}
	if (env.cgroup) {
		cgroup_fd = open_cgroup_dir(env.cgroup);
		if (cgroup_fd < 0)
			die_usage("cgroup '%s': %s; give a cgroup v2 directory under /sys/fs/cgroup",
				  env.cgroup, errno == ENOTDIR ? "not a cgroup v2 directory" :
								 strerror(errno));
	}
	if (env.prom_file) {
		static struct utsname uts;

		err = prom_check_path(env.prom_file);
		if (err)
			die_usage("cannot create files next to --prom-file %s: %s", env.prom_file,
				  strerror(-err));
		if (!uname(&uts))
			prom_info.kernel = uts.release;
		prom_info.top_comms = env.prom_top_comm;
	}
	if (!have_bpf_caps())
		die("needs root (or CAP_BPF and CAP_PERFMON) to load BPF programs: run it with sudo");
	libbpf_set_print(libbpf_print);
	if (env.features)
		return features_run(env.btf_path);
	check_kernel_btf();

	prom_info.attach_mode = choose_attach_mode(mode_why, sizeof(mode_why), fentry_use);
	open_opts.btf_custom_path = env.btf_path;
	skel = stablepage_bpf__open_opts(&open_opts);
	if (!skel) {
		fprintf(stderr, "stablepage-trace: cannot open the BPF object: %s (-v for details)\n",
			strerror(errno));
		goto cleanup;
	}
	skel->rodata->filter_pid = env.npids > 0;
	skel->rodata->filter_dev = env.ndevs > 0;
	if (env.ndevs <= SPT_FILTER_DEVS_INLINE) {
		skel->rodata->n_filter_devs = env.ndevs;
		memcpy((void *)skel->rodata->filter_devs, env.devs, env.ndevs * sizeof(env.devs[0]));
	}
	skel->rodata->filter_cgroup = cgroup_fd >= 0;
	skel->rodata->stream_events = !env.quiet;
	/* The write requests' latency histogram costs a clock read on every
	 * write request: only where histograms are shown. */
	skel->rodata->time_requests = env.hist || env.json || env.prom_file;
	/* For tests: a smaller histogram table sends the keys whose row is
	 * missing to the hash map, the path a taken row leads to; one
	 * stall-horizon set is shared by every thread. */
	shrink_map_for_tests(skel->maps.hist_table, "SPT_HIST_TABLE_ROWS");
	shrink_map_for_tests(skel->maps.stall_horizons, "SPT_STALL_HORIZON_SETS");
	for (size_t i = 0; i < SPT_NFENTRY; i++) {
		const struct spt_fentry_point *p = &spt_fentry_points[i];

		bpf_program__set_autoload(bpf_object__find_program_by_name(skel->obj, p->prog),
					  fentry_use[i]);
		mkwrite |= fentry_use[i] && p->role == SPT_FENTRY_MKWRITE;
		wait_calls |= fentry_use[i] && !strcmp(p->func, "folio_wait_writeback");
	}
	/* Without fentry on folio_end_writeback (a tracepoint-mode run) the
	 * would-stall ends where the request walk finds the folio. */
	skel->rodata->walk_requests = !fentry_use[SPT_FENTRY_END_WRITEBACK];
	/* With it, the request program only times requests for the
	 * histograms: not loaded where none is shown. */
	bpf_program__set_autoload(skel->progs.tp_block_rq_complete,
				  skel->rodata->walk_requests || skel->rodata->time_requests);
	holding = env.enforce && !env.native;
	if (holding) {
		write_hold = choose_write_hold(fentry_use, write_why, sizeof(write_why));
		skel->rodata->hold_action = hold_action_value(env.action);
		skel->rodata->max_delay_ns = (__u64)(env.max_delay * 1e9);
		skel->rodata->index_writeback = strcmp(write_hold, "none") != 0;
	}
	bpf_program__set_autoload(skel->progs.tp_sched_switch, !wait_calls || holding);
	/* Tracepoint mode times waits at sched_switch: from the start only
	 * when asked to or when writers are expected to wait (enforce), else
	 * attached at the first writer's wait (see switch_attached). */
	switch_at_start = holding || (!wait_calls && (env.time_all_waits || env.enforce));
	bpf_program__set_autoattach(skel->progs.tp_sched_switch, switch_at_start);
	/* Announces each hold once its SIGSTOP is generated (--action delay;
	 * hold_action stays SPT_ACTION_NONE unless holding). */
	bpf_program__set_autoload(skel->progs.tp_signal_generate,
				  skel->rodata->hold_action == SPT_ACTION_DELAY);
	bpf_program__set_autoload(skel->progs.lsm_file_permission, !strcmp(write_hold, "lsm"));
	bpf_program__set_autoload(skel->progs.fmod_file_permission, !strcmp(write_hold, "fmod_ret"));
	skel->rodata->hook_mkwrite = mkwrite;
	skel->rodata->time_wait_calls = wait_calls;

	if (env.comm) {
		skel->rodata->filter_comm = true;
		strncpy((char *)skel->rodata->target_comm, env.comm, SPT_COMM_LEN - 1);
	}

	err = stablepage_bpf__load(skel);
	if (err) {
		explain_load_failure(err);
		goto cleanup;
	}
	err = setup_filters(skel, cgroup_fd);
	if (err) {
		fprintf(stderr, "stablepage-trace: cannot set filters: %s\n", strerror(-err));
		goto cleanup;
	}
	if (holding) {
		struct hold_ops ops = { .resume = resume_pid, .forget = forget_hold, .ctx = skel };

		hold_init(&hold_tracker, skel->rodata->max_delay_ns, &ops);
		/* Loaded, not attached: the guardian inherits no link. */
		err = guardian_start(&guardian, bpf_map__fd(skel->maps.holds),
				     skel->rodata->max_delay_ns);
		if (err) {
			fprintf(stderr, "stablepage-trace: cannot start the guardian process: %s\n",
				strerror(-err));
			goto cleanup;
		}
	}
	/* Before attaching: the first mapping seen on a remounted filesystem
	 * must already be the new mount's. Signals end the run through the
	 * cleanup path from here on, so nothing stays changed. */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, on_signal);
	signal(SIGUSR1, on_pause_signal);
	signal(SIGUSR2, on_pause_signal);
	if (env.enforce && env.native) {
		struct enforce_opts eo = { .devs = env.devs, .ndevs = env.ndevs,
					   .remount = env.remount, .persist = env.persist };

		if (enforce_apply(&eo) || exiting)
			goto cleanup;
	}
	err = stablepage_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "stablepage-trace: cannot attach to the writeback tracepoints: %s "
				"(-v for details)\n", strerror(-err));
		goto cleanup;
	}
	skel->bss->switch_attached = switch_at_start;
	ctx.skel = skel;
	if (!env.quiet)
		rb = ring_buffer__new(bpf_map__fd(skel->maps.events), handle_event, NULL, NULL);
	if (holding && (env.quiet || rb)) {
		if (rb)
			err = ring_buffer__add(rb, bpf_map__fd(skel->maps.hold_events),
					       handle_hold_event, NULL);
		else
			rb = ring_buffer__new(bpf_map__fd(skel->maps.hold_events),
					      handle_hold_event, NULL, NULL);
		if (rb && err)
			errno = -err, ring_buffer__free(rb), rb = NULL;
	}
	if ((!env.quiet || holding) && !rb) {
		fprintf(stderr, "stablepage-trace: cannot open the ring buffer: %s\n",
			strerror(errno));
		goto cleanup;
	}

	ctx.realtime_offset = clock_s(CLOCK_REALTIME) - clock_s(CLOCK_MONOTONIC);
	start = clock_s(CLOCK_MONOTONIC);
	deadline = env.duration > 0 ? start + env.duration : 0;
	every = env.interval ? env.interval : env.prom_file ? PROM_DEFAULT_INTERVAL_S : 0;
	if (every)
		next_report = start + every;
	fprintf(stderr, "Attach mode: %s (%s)\n", prom_info.attach_mode, mode_why);
	if (holding && !strcmp(write_hold, "none"))
		fprintf(stderr, "enforce: write() cannot be held before its copy here (%s): holding "
				"mmap writers at their write fault only; enforce --native makes the "
				"kernel hold both\n", write_why);
	fprintf(stderr, "Tracing writes to pages under writeback%s%s. %s\n",
		env.quiet ? " (summary only)" : "",
		env.enforce ? (env.native ? ", enforcing stable writes" : ", holding writers in scope") : "",
		deadline ? "Ctrl-C ends early." : "Hit Ctrl-C to end.");
	if (!env.quiet && !env.json)
		print_event_header(stdout);
	fflush(stdout);

	while (!exiting) {
		double now = clock_s(CLOCK_MONOTONIC);
		int timeout_ms = 100;

		if (pause_wanted != paused.on) {
			if (env.enforce) {
				fprintf(stderr, "stablepage-trace: enforce does not pause: signal "
						"ignored\n");
				pause_wanted = paused.on;
			} else if (set_paused(skel, pause_wanted)) {
				resume_failed = true;
				break;
			}
		}
		if (!paused.on && !wait_calls && !skel->bss->switch_attached &&
		    skel->bss->switch_wanted)
			attach_switch(skel);

		if (deadline) {
			if (now >= deadline)
				break;
			if ((deadline - now) * 1000 < timeout_ms)
				timeout_ms = (int)((deadline - now) * 1000) + 1;
		}
		if (next_report) {
			if (now >= next_report) {
				report(skel, start, false);
				next_report += every;
				continue;
			}
			if ((next_report - now) * 1000 < timeout_ms)
				timeout_ms = (int)((next_report - now) * 1000) + 1;
		}
		if (holding) {
			int next = hold_tick(&hold_tracker, monotonic_ns());

			/* While someone is held, wake often: see sweep_held_folios(). */
			if (next >= 0 && next < timeout_ms)
				timeout_ms = next ? next : 1;
			if (next >= 0 && timeout_ms > 2)
				timeout_ms = 2;
		}
		if (rb) {
			/* The BPF side wakes us only when the ring fills up (no
			 * wakeup per event): drain it after every timeout too. */
			err = ring_buffer__poll(rb, timeout_ms);
			if (err >= 0)
				err = ring_buffer__consume(rb);
			if (err < 0 && err != -EINTR) {
				fprintf(stderr, "stablepage-trace: ring buffer poll: %s\n",
					strerror(-err));
				goto cleanup;
			}
			fflush(stdout);
		} else {
			usleep(timeout_ms * 1000);
		}
	}
	/* Detach first so the summary is one consistent snapshot. */
	stablepage_bpf__detach(skel);
	if (rb)
		ring_buffer__consume(rb);
	release_everyone();
	if (report(skel, start, true))
		goto cleanup;
	verbose("events streamed: %llu\n", ctx.streamed);
	ret = enforcement_held && !resume_failed ? 0 : EXIT_RUNTIME;

cleanup:
	if (skel)
		stablepage_bpf__detach(skel);
	release_everyone();
	enforce_finish();
	ring_buffer__free(rb);
	stablepage_bpf__destroy(skel);
	if (cgroup_fd >= 0)
		close(cgroup_fd);
	resolve_cleanup();
	return ret;
}
