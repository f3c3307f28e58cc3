#!/bin/bash
# make bench-switch: what the tracer adds to every context switch. switchcost
# (two processes on one CPU bouncing a byte over pipes) under three
# configurations, interleaved (the order rotates) and repeated:
#   none      no tracer
#   quiet     stablepage-trace -q: sched_switch attached only once a writer
#             waits on writeback, so not here
#   allwaits  stablepage-trace -q --time-all-waits: sched_switch attached
# Prints each configuration's median ns per switch and the median of its
# paired differences to "none", with a distribution-free 95% confidence
# interval (bench/median-ci.awk, as bench/bench.sh). Asserts no timing.
# Environment: BENCH_REPS (default 12), BENCH_TRIPS (100000 round trips).
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
. scripts/lib.bash
[ "$(id -u)" = 0 ] || { echo "bench-switch: needs root: sudo make bench-switch" >&2; exit 1; }
reps=${BENCH_REPS:-12} trips=${BENCH_TRIPS:-100000}
spt=$build/stablepage-trace
results=$(mktemp /tmp/stablepage-bench-switch.XXXX) tracer=
cleanup() {
	[ -n "$tracer" ] && kill -INT "$tracer" && wait "$tracer" 2> /dev/null || true
	rm -f "$results" "$results.err"
}
trap cleanup EXIT

run() {
	local cfg=$1 ns
	case $cfg in
	quiet) "$spt" -q > /dev/null 2> "$results.err" & tracer=$! ;;
	allwaits) "$spt" -q --time-all-waits > /dev/null 2> "$results.err" & tracer=$! ;;
	esac
	if [ -n "$tracer" ]; then
		WAIT_POLL=0.01 wait_for_lines "$tracer" 1 '^Tracing' "$results.err" || { cat "$results.err" >&2; exit 1; }
	fi
	ns=$("$build/switchcost" "$trips")
	if [ -n "$tracer" ]; then
		kill -INT "$tracer"
		wait "$tracer"
		tracer=
	fi
	echo "$rep $cfg $ns" >> "$results"
	echo "  rep $rep $cfg $ns ns/switch" >&2
}

configs=(none quiet allwaits)
for rep in $(seq "$reps"); do
	for k in 0 1 2; do
		run "${configs[(k + rep) % 3]}"
	done
done

echo
echo "stablepage-trace bench-switch: kernel $(uname -r), $(nproc) CPUs, switchcost $trips round" \
	"trips on CPU 1, $reps repetitions"
printf '%-9s %12s %14s %19s\n' CONFIG NS/SWITCH ADDED_NS ADDED_CI95
for cfg in "${configs[@]}"; do
	med=$(awk -v c="$cfg" '$2 == c { print $3 }' "$results" | sort -n |
		awk -f bench/median-ci.awk | awk '{ print $1 }')
	# Paired: each repetition's ns/switch less the same repetition's untraced.
	added=$(awk -v c="$cfg" '$2 == "none" { base[$1] = $3 } $2 == c { v[$1] = $3 }
		END { for (r in v) printf "%.1f\n", v[r] - base[r] }' "$results" | sort -n |
		awk -f bench/median-ci.awk | awk '{ printf "%.1f %.1f..%.1f\n", $1, $4, $5 }')
	# shellcheck disable=SC2086
	printf '%-9s %12s %14s %19s\n' "$cfg" "$med" $added
done
echo "ADDED_NS: median over repetitions of ns/switch less the same repetition's untraced;"
echo "ADDED_CI95: a 95% confidence interval of that median (binomial order statistics)."
