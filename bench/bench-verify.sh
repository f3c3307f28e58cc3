#!/bin/bash
# make bench-verify: what --verify costs, per sampling rate. wac profiles
# (BENCH_PROFILES, "A G": pwrite + sync_file_range; O_DIRECT writes) on a
# scratch loop-backed ext4 under: no tracer, the tracer without --verify
# (quiet), and quiet with --verify=256, =16, =1. Each repetition runs every
# configuration once, in an order that rotates; ratios are each
# configuration's ops/s over the same repetition's untraced ops/s, and the
# median over repetitions is printed side by side. Asserts no timing.
# Environment: BENCH_REPS (5), BENCH_SECS (3), BENCH_THREADS (4), BENCH_PROFILES.
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "bench-verify: needs root" >&2; exit 1; }
reps=${BENCH_REPS:-5} secs=${BENCH_SECS:-3} threads=${BENCH_THREADS:-4}
profiles=${BENCH_PROFILES:-A G}
spt=$build/stablepage-trace wac=$build/wac
. scripts/lib.bash
work=$(mktemp -d /tmp/stablepage-bench-verify.XXXX)
CLEANUP_FILE=$work/cleanup tracer=''
cleanup() {
	[ -n "$tracer" ] && { kill -INT "$tracer"; wait "$tracer" || true; }
	run_cleanup
	rm -rf "$work"
}
trap cleanup EXIT
scratch_fs "$work" 512M ext4
configs=(none quiet v256 v16 v1)

# run CONFIG PROFILE: one traced (or not) wac run; prints its ops/s.
run() {
	local args=()
	case $1 in
	none) ;;
	quiet) args=(-q) ;;
	v*) args=(-q "--verify=${1#v}") ;;
	esac
	if [ "$1" != none ]; then
		# The last run's "Tracing" line must not satisfy the wait: the
		# child truncates the file only once it runs, and a SIGINT sent
		# before its handler is set is ignored (a background job).
		rm -f "$work/trace.err"
		"$spt" "${args[@]}" --dev "$LOOP" > "$work/trace.out" 2> "$work/trace.err" &
		tracer=$!
		wait_for_lines "$tracer" 1 '^Tracing' "$work/trace.err"
	fi
	"$wac" -p "$2" -t "$threads" -d "$secs" "$MNT/f" | sed -n 's/.*ops_per_s=\([0-9]*\).*/\1/p'
	if [ -n "$tracer" ]; then
		interrupt_and_wait "$tracer"
		tracer=''
	fi
}

echo "bench-verify: $(uname -r), $reps repetitions of ${secs}s, wac -t $threads, ext4 on $LOOP"
for p in $profiles; do
	for r in $(seq "$reps"); do
		for i in "${!configs[@]}"; do
			c=${configs[$(((i + r) % ${#configs[@]}))]}
			echo "$p $r $c $(run "$c" "$p")" >> "$work/raw"
		done
	done
	printf '%-8s' "profile"; printf ' %10s' "${configs[@]}"; echo
	printf '%-8s' "$p ops/s"
	for c in "${configs[@]}"; do
		awk -v p="$p" -v c="$c" '$1 == p && $3 == c { print $4 }' "$work/raw" | sort -n |
			awk '{ v[NR] = $1 } END { printf " %10d", v[int((NR + 1) / 2)] }'
	done
	echo
	printf '%-8s' "$p ratio"
	for c in "${configs[@]}"; do
		awk -v p="$p" -v c="$c" '$1 == p && $3 == "none" { n[$2] = $4 }
			$1 == p && $3 == c { x[$2] = $4 }
			END { for (r in x) print x[r] / n[r] }' "$work/raw" | sort -g |
			awk '{ v[NR] = $1 } END { printf " %10.3f", v[int((NR + 1) / 2)] }'
	done
	echo
done
