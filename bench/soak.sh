#!/bin/bash
# make bench-soak: the exporter left running while many processes come and
# go (issue 31). Not a test: it prints figures and verdicts.
#
# On a scratch loop-backed ext4: bench/soakspawn runs SOAK_WRITERS paced
# long-lived writers and forks SOAK_SPAWNS short-lived ones at an even pace
# over SOAK_SECONDS, each rewriting pages it has just sent to writeback. The
# tracer runs as the exporter does (-q --attach-mode tracepoint --prom-file,
# a report every SOAK_SAMPLE s), plus --dev (this device only), --json
# --delta (the reports are read back: each counts its interval) and
# --prom-top-comm. In the last seconds a fresh writer (wac, comm
# "soak-final") runs for 3 s.
#
# Every SOAK_SAMPLE s a row: the tracer's RSS, the memory the kernel charges
# for its BPF maps (fdinfo memlock) and the rows of its per-process and
# per-writer maps (bench/soakcount maps), the series in the metrics file,
# violations and rows dropped as of the tracer's latest report (one that
# lands just after a sample shows a sample later), children forked. Then:
# - counts: bench/soakcount count, a second BPF program written apart from
#   the tracer's, counts the same tracepoint's dirtyings under writeback on
#   the device; violations + stable_dirtied must equal it (exit 1 if not);
# - flat: the mean of the last third of the samples against the first
#   third, within SOAK_FLAT_PCT (5) percent (RSS also within 1 MiB);
# - attribution: the fresh writer's pid and comm in the reports, and its
#   count against the independent count of its comm.
# Environment: SOAK_SECONDS (600), SOAK_WRITERS (64), SOAK_SPAWNS (50000),
# SOAK_SAMPLE (10), SOAK_PERIOD_MS (20: the writers' pace), SOAK_FLAT_PCT
# (5), SOAK_ROW_AGE (--row-age, where the tracer has it: rows idle this long
# are removed; its default is longer than a short soak), SOAK_TRACE_OPTS
# (more tracer options), SOAK_KEEP (a directory: the raw files are copied
# there).
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "bench-soak: needs root: sudo make bench-soak" >&2; exit 1; }
secs=${SOAK_SECONDS:-600} writers=${SOAK_WRITERS:-64} spawns=${SOAK_SPAWNS:-50000}
sample=${SOAK_SAMPLE:-10} top=20 period=${SOAK_PERIOD_MS:-20} flat_pct=${SOAK_FLAT_PCT:-5}
for v in secs writers spawns sample period flat_pct; do
	[[ ${!v} =~ ^[0-9]+$ ]] || { echo "bench-soak: $v: a number, not '${!v}'" >&2; exit 2; }
done
if [ "$secs" -lt 10 ] || [ "$sample" -lt 1 ]; then
	echo "bench-soak: SOAK_SECONDS must be at least 10, SOAK_SAMPLE at least 1" >&2
	exit 2
fi
spt=$build/stablepage-trace wac=$build/wac
for f in "$spt" "$wac" "$build/soakcount" "$build/soakspawn"; do
	[ -x "$f" ] || { echo "bench-soak: $f missing (make all bench-tools)" >&2; exit 1; }
done
# shellcheck disable=SC2206 # options, split on purpose
extra=(${SOAK_TRACE_OPTS:-})
# Row aging (--row-age): the tracer's default unless SOAK_ROW_AGE is given.
if "$spt" --help | grep -q -- '--row-age'; then
	aging="rows age out (--row-age ${SOAK_ROW_AGE:-default})"
	[ -n "${SOAK_ROW_AGE:-}" ] && extra+=(--row-age "$SOAK_ROW_AGE")
elif [ -n "${SOAK_ROW_AGE:-}" ]; then
	echo "bench-soak: SOAK_ROW_AGE: this build has no --row-age" >&2
	exit 2
else
	aging="no row aging in this build"
fi

. scripts/lib.bash
work=$(mktemp -d /tmp/stablepage-soak.XXXX)
CLEANUP_FILE=$work/cleanup tracer='' counter='' spawner='' final=''
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	for p in $final $spawner; do kill -TERM "$p" 2> /dev/null || true; done
	[ -n "$tracer" ] && { interrupt_and_wait "$tracer" > /dev/null 2>&1 || true; }
	[ -n "$counter" ] && { interrupt_and_wait "$counter" > /dev/null 2>&1 || true; }
	wait 2> /dev/null || true
	[ -n "${SOAK_KEEP:-}" ] && mkdir -p "$SOAK_KEEP" &&
		cp "$work"/*.out "$work"/*.err "$work"/*.json "$work"/*.prom "$work"/samples "$SOAK_KEEP"/ 2> /dev/null
	run_cleanup
	rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "bench-soak: failed at line $LINENO (exit $?)" >&2' ERR

scratch_fs "$work" 256M ext4
mkdir "$MNT/w"

# The independent count first and the tracer second, detached in the other
# order after the workload: both see all of it.
"$build/soakcount" count "$DEV" > "$work/count.out" 2> "$work/count.err" &
counter=$!
wait_for_lines "$counter" 1 '^attached$' "$work/count.out" ||
	{ echo "bench-soak: soakcount: $(cat "$work/count.err")" >&2; exit 1; }
"$spt" -q --attach-mode tracepoint --prom-file "$work/spt.prom" -i "$sample" --delta --json \
	--dev "$LOOP" --prom-top-comm 10 --top "$top" "${extra[@]}" > "$work/trace.json" 2> "$work/trace.err" &
tracer=$!
wait_for_lines "$tracer" 1 '^Tracing' "$work/trace.err" ||
	{ echo "bench-soak: tracer: $(cat "$work/trace.err")" >&2; exit 1; }
echo "bench-soak: $(uname -r), $(head -1 "$work/trace.err" | cut -c1-60)..."
echo "bench-soak: ${secs}s, $writers writers (a round every ${period} ms), $spawns short-lived" \
	"writers, ext4 on $LOOP, a sample every ${sample}s; $aging; tracer pid $tracer"

# sample T: one row of the table, in $work/samples.
sample_row() {
	local rss maps series cum cpu
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$tracer/status")
	# utime + stime (fields 14 and 15 of stat; comm has no space here)
	cpu=$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$tracer/stat")
	maps=$("$build/soakcount" maps "$tracer" | awk '
		{ for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } }
		{ mem += f["memlock"] }
		f["name"] == "proc_stats" { p = f["entries"]; pmax = f["max_entries"] }
		f["name"] == "writer_stats" { w = f["entries"]; wmax = f["max_entries"] }
		END { printf "%d %s %s %s %s", mem / 1024, p, w, pmax, wmax }')
	# (grep -c prints 0 and fails when nothing matches; no file yet: nothing)
	series=$(grep -vc '^#' "$work/spt.prom" 2> /dev/null) || true
	# the reports are deltas: summed, they are the counts so far
	cum=$(jq -s '[.[] | select(.type == "interval")] |
		"\(map(.violations_total) | add // 0) \(map(.rows_dropped) | add // 0)"' -r \
		"$work/trace.json" 2> /dev/null || echo "0 0")
	echo "$1 $rss $maps ${series:-0} $cum $cpu $(tail -n1 "$work/spawn.out" | sed -n 's/.*spawned=\([0-9]*\).*/\1/p')" \
		>> "$work/samples"
}

"$build/soakspawn" -w "$writers" -n "$spawns" -d "$secs" -p "$period" "$MNT/w" \
	> "$work/spawn.out" 2> "$work/spawn.err" &
spawner=$!
start=$(date +%s)
# the fresh writer: 3 s, ending 5 s before the others (short runs: halfway)
final_at=$((secs >= 16 ? secs - 8 : secs / 2)) next=$sample
while kill -0 "$spawner" 2> /dev/null; do
	elapsed=$(($(date +%s) - start))
	if [ -z "$final" ] && [ "$elapsed" -ge "$final_at" ]; then
		"$wac" -p A -t 1 -d 3 -n soak-final "$MNT/final" > "$work/final.out" 2>&1 &
		final=$!
	fi
	if [ "$elapsed" -ge "$next" ]; then
		sample_row "$next"
		next=$((next + sample))
	fi
	sleep 0.5
done
spawn_rc=0
wait "$spawner" || spawn_rc=$?
spawner=''
final_pid=$final
[ -n "$final" ] && wait "$final"
final=''
# Nothing dirty left on the device, then one more report to read.
sync -f "$MNT"
sleep $((sample + 1))
sample_row $(($(date +%s) - start))
interrupt_and_wait "$tracer"
tracer=''
interrupt_and_wait "$counter"
counter=''
tail -n1 "$work/spawn.out"
[ "$spawn_rc" = 0 ] || echo "bench-soak: soakspawn exited $spawn_rc: $(head -3 "$work/spawn.err")"

# The table and the verdicts.
echo
awk 'BEGIN {
	printf "%6s %8s %8s %9s %11s %6s %11s %12s %7s %8s\n", "T_S", "RSS_KIB", "MAPS_KIB",
		"PROC_ROWS", "WRITER_ROWS", "SERIES", "VIOLATIONS", "ROWS_DROPPED", "CPU_S", "SPAWNED" }
	{ printf "%6d %8d %8d %9d %11d %6d %11d %12d %7.2f %8s\n", $1, $2, $3, $4, $5, $8, $9,
		$10, $11, $12 }' \
	"$work/samples"
read -r _ _ _ _ _ pmax wmax _ < "$work/samples"
echo "(per-process map: $pmax rows at most, per-writer map: $wmax)"
# flat NAME COLUMN SLACK: the last third's mean against the first third's
# (the verdict), and against the middle third's (a plateau after a ramp).
flat() {
	awk -v name="$1" -v col="$2" -v slack="$3" -v pct="$flat_pct" -v secs="$secs" '
		function ok(a, b) {
			return (b - a <= a * pct / 100 || b - a <= slack) &&
				(a - b <= a * pct / 100 || a - b <= slack)
		}
		$1 <= secs / 3 { a += $col; na++ }
		$1 > secs / 3 && $1 < 2 * secs / 3 { m += $col; nm++ }
		$1 >= 2 * secs / 3 { b += $col; nb++ }
		END {
			if (!na || !nm || !nb) { printf "%-12s too few samples\n", name; exit }
			a /= na; m /= nm; b /= nb
			printf "%-12s thirds %.0f, %.0f, %.0f: last/first %+.1f%% %s, last/middle %+.1f%% %s\n",
				name, a, m, b, a ? 100 * (b - a) / a : 0, ok(a, b) ? "flat" : "NOT FLAT",
				m ? 100 * (b - m) / m : 0, ok(m, b) ? "flat" : "NOT FLAT"
		}' "$work/samples"
}
echo
flat "RSS KiB" 2 1024
flat "maps KiB" 3 0
flat "prom series" 8 0
flat "proc rows" 4 0
flat "writer rows" 5 0

summary=$(grep '"type":"summary"' "$work/trace.json" | tail -n1)
read -r viol stable dropped < <(jq -r '"\(.violations_total) \(.stable_dirtied) \(.rows_dropped)"' <<< "$summary")
read -r indep indep_dirtied < <(sed -n 's/^files=.* total=\([0-9]*\) dirtied=\([0-9]*\)$/\1 \2/p' "$work/count.out")
echo
echo "counts: tracer violations $viol + stable_dirtied $stable = $((viol + stable));" \
	"independent (soakcount) $indep of $indep_dirtied dirtyings; rows_dropped $dropped"
rc=0
if [ "$((viol + stable))" = "$indep" ]; then
	echo "counts: EXACT"
else
	echo "counts: DIFFER by $((viol + stable - indep))"
	rc=1
fi
# Per comm: the tracer's per-process rows (the metrics file's comm series)
# against the independent count of the same comm.
for comm in soak-writer soak-child soak-final; do
	tool=$(sed -n "s/^stablepage_comm_violations_total{comm=\"$comm\"} //p" "$work/spt.prom")
	other=$(awk -v c="$comm" '$1 == "comm" && $2 == c { print $3 }' "$work/count.out")
	echo "comm $comm: tracer's rows ${tool:-0}, independent ${other:-0}"
done
seen=$(jq -s --argjson pid "${final_pid:-0}" '[.[] | select(.type == "interval") | .top_processes[] |
	select(.pid == $pid and .comm == "soak-final") | .total] | "\(length) \(add // 0)"' -r "$work/trace.json")
echo "attribution: fresh writer pid $final_pid (soak-final) in the top $top of ${seen% *} interval" \
	"reports, ${seen#* } violations there; $([ "${seen% *}" -gt 0 ] && echo OK || echo "NOT SEEN")"
exit "$rc"
