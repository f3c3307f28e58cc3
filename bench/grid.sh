#!/bin/bash
# make bench-grid: issue 30's grid of what tracing costs, on a scratch
# loop-backed ext4. A grid point is a workload:
#   density  sparse: wac's profiles A (write) and B (mmap), ~1-page requests,
#                    a few violations per hundred writes (as make bench);
#            dense:  bench/gridload -D dense: each round starts the writeback
#                    of a thread's R pages and rewrites them while it goes on;
#            none:   gridload -D none: the same rounds, the writeback waited
#                    for before the rewrite: the same dirtyings and requests,
#                    no violation (the floor);
#   pages    R, pages per round and per write request: 1, 16, 256 (4 KiB,
#            64 KiB, 1 MiB; sparse points are wac's own, 1 page);
#   writers  1 and 4 threads; path write() or stores through mmap.
# Under each point, in alternating windows (bench/pausebench.c, as make
# bench: the tracer paused with SIGUSR1 and let go on with SIGUSR2, a
# traced and an untraced window side by side in each pair), the
# configurations quiet (-q), json (--json streamed to /dev/shm) and, on the
# dense points, quiet with --verify=N for each rate; none is the control
# (no tracer, both windows untraced). Prints per point and configuration the
# geometric mean of the pairs' traced/untraced ops/s with a 95% interval.
# Then, with kernel.bpf_stats_enabled, one whole run a point under quiet
# (and the verify rates on dense write, one writer): each program's ns/run,
# violations per page written, and the completed-request walk's ns per page.
# Asserts no timing.
# Environment: GRID_RUNS (2: window runs per point and configuration),
# GRID_PAIRS (8 pairs a run), GRID_WINDOW_MS (200), GRID_SETTLE_MS (30),
# GRID_WARMUP_MS (500), GRID_CONTROL (1: the control at every point in
# the first run; all: in every run; 0: none), GRID_DENSITIES ("sparse dense
# none"), GRID_PAGES ("1 16 256"),
# GRID_WRITERS ("1 4"), GRID_PATHS ("write mmap"), GRID_CONFIGS ("quiet
# json"), GRID_VERIFY_RATES ("1 16 256"; "" for none), GRID_STATS_SECS (2;
# 0 skips the bpf_stats runs), GRID_ATTACH_MODE (auto), GRID_RAW (a directory
# to keep the raw files in, for bench/grid-report.sh and lab logs).
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "bench-grid: needs root: sudo make bench-grid" >&2; exit 1; }
runs=${GRID_RUNS:-2} pairs=${GRID_PAIRS:-8} window_ms=${GRID_WINDOW_MS:-200}
settle_ms=${GRID_SETTLE_MS:-30} warmup_ms=${GRID_WARMUP_MS:-500} control=${GRID_CONTROL:-1}
densities=${GRID_DENSITIES:-sparse dense none} page_counts=${GRID_PAGES:-1 16 256}
writer_counts=${GRID_WRITERS:-1 4} paths=${GRID_PATHS:-write mmap}
configs=${GRID_CONFIGS:-quiet json} rates=${GRID_VERIFY_RATES-1 16 256}
stats_secs=${GRID_STATS_SECS:-2} attach_mode=${GRID_ATTACH_MODE:-auto}
for n in "$runs" "$pairs" "$window_ms" "$stats_secs"; do
	[[ $n =~ ^[0-9]+$ ]] || { echo "bench-grid: not a number: '$n'" >&2; exit 2; }
done
spt=$build/stablepage-trace
mode=(--attach-mode "$attach_mode")

. scripts/lib.bash
work=$(mktemp -d /tmp/stablepage-grid.XXXX)
shm=$(mktemp -d /dev/shm/stablepage-grid.XXXX)
CLEANUP_FILE=$work/cleanup load_pid='' tracer='' load_argv=() tracer_argv=() stats_old=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
	[ -n "$tracer" ] && { kill -INT "$tracer"; wait "$tracer" || true; }
	[ -n "$load_pid" ] && { kill -INT "$load_pid"; wait "$load_pid" || true; }
	sysctl -qw kernel.bpf_stats_enabled="$stats_old"
	run_cleanup
	rm -rf "$work" "$shm"
}
trap cleanup EXIT
trap 'echo "bench-grid: failed at line $LINENO (exit $?)" >&2' ERR
scratch_fs "$work" 1G ext4
loop=$LOOP mnt=$MNT

# The grid's points, one a line: "DENSITY PATH WRITERS PAGES".
points() {
	local d p w r
	for d in $densities; do
		for p in $paths; do
			for w in $writer_counts; do
				if [ "$d" = sparse ]; then
					echo "$d $p $w 1"
					continue
				fi
				for r in $page_counts; do echo "$d $p $w $r"; done
			done
		done
	done
}

# set_load DENSITY PATH WRITERS PAGES COUNTERS: the workload's command line
# in load_argv.
set_load() {
	if [ "$1" = sparse ]; then
		local profile=A
		[ "$2" = mmap ] && profile=B
		load_argv=("$build/wac" -p "$profile" -t "$3" -d 100000 -c "$5" "$mnt/f")
	else
		load_argv=("$build/gridload" -m "$2" -D "$1" -r "$4" -t "$3" -d 100000 -c "$5" "$mnt/f")
	fi
}

# point_configs RUN DENSITY: the configurations of a point in that run.
point_configs() {
	if [ "$control" = all ] || { [ "$control" = 1 ] && [ "$1" = 1 ]; }; then
		echo none
	fi
	shift
	echo "$configs" | tr ' ' '\n' | grep .
	if [ "$1" = dense ]; then
		for v in $rates; do echo "v$v"; done
	fi
}

# set_tracer CONFIG: the tracer's command line in tracer_argv.
set_tracer() {
	case $1 in
	quiet) tracer_argv=("$spt" "${mode[@]}" -q --dev "$loop") ;;
	json) tracer_argv=("$spt" "${mode[@]}" --json --dev "$loop") ;;
	v*) tracer_argv=("$spt" "${mode[@]}" -q "--verify=${1#v}" --dev "$loop") ;;
	esac
}

# Events lost, from the tracer's output of the last run.
events_lost() {
	case $1 in
	json) tail -n1 "$shm/out" | jq .events_lost ;;
	none) echo - ;;
	*) awk '/^Events lost/ { print $NF }' "$shm/out" ;;
	esac
}

# window_run POINT CONFIG RUN: one wac/gridload run and one pausebench run;
# appends "POINT... CONFIG RUN TRACED UNTRACED" per pair to $pairs_file and
# "POINT... CONFIG RUN LOST" to $lost_file.
window_run() {
	local point=$1 cfg=$2 run=$3 args
	rm -f "$mnt/f" "$shm/counters" "$shm/out"
	sync
	# shellcheck disable=SC2086 # the point's words are the arguments
	set_load $point "$shm/counters"
	"${load_argv[@]}" > /dev/null &
	load_pid=$!
	until [ -e "$shm/counters" ]; do sleep 0.01; done
	if [ "$cfg" = none ]; then
		args=(-D)
	else
		set_tracer "$cfg"
		args=(-o "$shm/out" -- "${tracer_argv[@]}")
	fi
	"$build/pausebench" -c "$shm/counters" -n "$pairs" -w "$window_ms" -s "$settle_ms" \
		-W "$warmup_ms" "${args[@]}" > "$shm/pairs"
	kill -INT "$load_pid"
	wait "$load_pid"
	load_pid=
	awk -v k="$point $cfg $run" '{ print k, $1, $2 }' "$shm/pairs" >> "$pairs_file"
	echo "$point $cfg $run $(events_lost "$cfg")" >> "$lost_file"
	printf '  run %d %-24s %-5s %s\n' "$run" "$point" "$cfg" "$(awk '$1 > 0 && $2 > 0 {
		l += log($1 / $2); n++ } END { printf "%.4f", n ? exp(l / n) : 0 }' "$shm/pairs")" >&2
}

pairs_file=$work/pairs lost_file=$work/lost stats_file=$work/stats
: > "$pairs_file"
: > "$lost_file"
: > "$stats_file"
mapfile -t grid < <(points)
start=$(date +%s)
sysctl -qw kernel.bpf_stats_enabled=0
i=0
for run in $(seq "$runs"); do
	for point in "${grid[@]}"; do
		# shellcheck disable=SC2086,SC2046
		for cfg in $(rotation "$i" $(point_configs "$run" $point)); do
			window_run "$point" "$cfg" "$run"
		done
		i=$((i + 1))
	done
done
windows_s=$(($(date +%s) - start))

# stats_run POINT CONFIG: one whole run of $stats_secs under the tracer with
# bpf_stats on; appends "POINT... CONFIG OPS_PER_S VIOLATIONS PROG:NS:RUNS..."
stats_run() {
	local point=$1 cfg=$2 ops progs violations
	set_tracer "$cfg"
	rm -f "$mnt/f" "$shm/out" "$shm/err"
	sync
	"${tracer_argv[@]}" > "$shm/out" 2> "$shm/err" &
	tracer=$!
	WAIT_POLL=0.02 wait_for_lines "$tracer" 1 '^Tracing' "$shm/err" || { cat "$shm/err" >&2; exit 1; }
	# shellcheck disable=SC2086
	set_load $point "$shm/counters"
	"${load_argv[@]}" > "$shm/load" &
	load_pid=$!
	sleep "$stats_secs"
	kill -INT "$load_pid"
	wait "$load_pid"
	load_pid=
	ops=$(sed -n 's/.*ops_per_s=\([0-9]*\).*/\1/p' "$shm/load")
	progs=$(bpftool prog show -j | jq -r --arg names "$ours_regex" '[.[] |
		select((.name | test($names)) and .run_cnt > 0) |
		"\(.name):\(.run_time_ns / .run_cnt | floor):\(.run_cnt)"] | join(" ")')
	interrupt_and_wait "$tracer"
	tracer=
	violations=$(sed -n 's/.*Violations: \([0-9]*\).*/\1/p' "$shm/out")
	echo "$point $cfg $ops ${violations:-0} $progs" >> "$stats_file"
	echo "  stats $point $cfg ops/s $ops violations ${violations:-0}" >&2
}

ours_regex=$(attach_points_regex "$build")
start=$(date +%s)
if [ "$stats_secs" -gt 0 ]; then
	sysctl -qw kernel.bpf_stats_enabled=1
	for point in "${grid[@]}"; do
		stats_run "$point" quiet
	done
	for r in $page_counts; do
		[[ " $densities " == *" dense "* ]] || break
		for v in $rates; do stats_run "dense write 1 $r" "v$v"; done
	done
	sysctl -qw kernel.bpf_stats_enabled=0
fi
stats_s=$(($(date +%s) - start))

if [ -n "${GRID_RAW:-}" ]; then
	mkdir -p "$GRID_RAW"
	cp "$pairs_file" "$lost_file" "$stats_file" "$GRID_RAW/"
fi
bench/grid-report.sh "$pairs_file" "$lost_file" "$stats_file" "$stats_secs" <<EOF
stablepage-trace $("$spt" -V | awk '{ print $2 }') bench-grid: kernel $(uname -r), $(nproc) CPUs, --attach-mode $attach_mode, ext4 on $loop;
$runs run(s) a point and configuration of $pairs pairs of $window_ms ms windows (+$settle_ms ms settling, $warmup_ms ms warm-up); windows ${windows_s} s, bpf_stats runs of ${stats_secs} s: ${stats_s} s
EOF
