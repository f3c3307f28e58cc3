#!/bin/bash
# make bench-progs BASE=REV: what each tracepoint program of this tree costs
# next to BASE's (a git revision, built here from its own Makefile, or a
# built .bpf.o), on the very same events. Both builds are attached together
# (bench/progcost.c) while the reproducer runs on a scratch loop-backed ext4,
# with kernel.bpf_stats_enabled on (restored after); every repetition runs
# both attach orders, since the first build on an event takes its cache
# misses. Both trace the loop device only (progcost -d), as make bench's
# tracer does (--dev). Prints the mean ns/run per program of each build and
# their ratio.
# Asserts no timing. Environment: BENCH_REPS (3), BENCH_SECS (3),
# BENCH_THREADS (4), BENCH_PROFILES ("A B": wac profiles, or grid points
# such as dense-write-16, load_args()).
set -euo pipefail
build=${1:-build} base=${2:-HEAD}
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "bench-progs: needs root: sudo make bench-progs" >&2; exit 1; }
reps=${BENCH_REPS:-3} secs=${BENCH_SECS:-3} threads=${BENCH_THREADS:-4}
profiles=${BENCH_PROFILES:-A B}
this=$build/stablepage.bpf.o

. scripts/lib.bash
work=$(mktemp -d /tmp/stablepage-bench-progs.XXXX)
CLEANUP_FILE=$work/cleanup stats_old=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
	sysctl -qw kernel.bpf_stats_enabled="$stats_old"
	run_cleanup
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

if [[ $base == *.o ]]; then
	cp "$base" "$work/base.bpf.o"
else
	rev=$(git rev-parse --short "$base")
	mkdir "$work/src"
	git archive "$rev" | tar -x -C "$work/src"
	make -s -C "$work/src" OUTPUT=build build/stablepage.bpf.o > /dev/null
	cp "$work/src/build/stablepage.bpf.o" "$work/base.bpf.o"
	base=$rev
fi

scratch_fs "$work" 1G ext4
loop=$LOOP mnt=$MNT
# Both builds trace the loop device only, as make bench's tracer (--dev).
majmin=$(lsblk -dno MAJ:MIN "$loop" | tr -d ' ')
sysctl -qw kernel.bpf_stats_enabled=1

# load_args PROFILE: sets load and args. A letter is a wac profile; a
# gridload point is DENSITY-PATH-PAGES (dense-write-16: rounds of 16 pages
# rewritten by pwrite while their writeback runs; bench/gridload.c).
load_args() {
	local IFS=-
	# shellcheck disable=SC2086 # split on '-' by design
	set -- $1
	if [ $# = 3 ]; then
		load=$build/gridload args=(-D "$1" -m "$2" -r "$3")
	else
		load=$build/wac args=(-p "$1")
	fi
}

results=$work/results
: > "$results"
for rep in $(seq "$reps"); do
	for profile in $profiles; do
		for order in "base this" "this base"; do
			set -- $order
			objs=()
			for label in "$@"; do
				[ "$label" = base ] && objs+=("$work/base.bpf.o") || objs+=("$this")
			done
			rm -f "$mnt/f"
			sync
			load_args "$profile"
			PROGCOST_LOAD=$load progcost_during "$work/out" -d "$majmin" "${objs[@]}" -- \
				"${args[@]}" -t "$threads" -d "$secs" "$mnt/f"
			# "OBJECT PROGRAM RUNS NS_PER_RUN" -> "PROFILE LABEL PROGRAM RUNS NS"
			awk -v p="$profile" -v this="$this" 'NR > 1 {
				print p, ($1 == this ? "this" : "base"), $2, $3, $4 }' "$work/out" >> "$results"
			echo "  rep $rep profile $profile order $order" >&2
		done
	done
done

echo
echo "stablepage-trace bench-progs: kernel $(uname -r), $(nproc) CPUs, ext4 on $loop, loads ($profiles) -t $threads" \
	"-d $secs, $reps repetitions x 2 attach orders; this tree ($this) against $base, both attached"
echo "to the same tracepoints in each run (aggregation only, --dev $majmin); mean ns/run over runs, with bpf_stats"
printf '%-16s %-26s %10s %10s %10s %7s\n' PROFILE PROGRAM RUNS BASE_NS THIS_NS RATIO
awk '$4 > 0 { k = $1 " " $3; n[k]++; runs[k] += $4; ns[k, $2] += $5 }
	END { for (k in n) { split(k, a, " "); b = ns[k, "base"] / (n[k] / 2); t = ns[k, "this"] / (n[k] / 2)
		printf "%-16s %-26s %10.0f %10.1f %10.1f %7.3f\n", a[1], a[2], runs[k] / n[k], b, t, (b > 0 ? t / b : 0) } }' \
	"$results" | sort
echo "RUNS: runs per repetition of each program; RATIO: this / base (below 1: this build is cheaper)."
