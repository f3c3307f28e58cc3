#!/bin/bash
# make bench: what tracing costs the traced workload. Profiles A (write) and B
# (mmap) of the wac reproducer on a scratch loop-backed ext4, each under four
# configurations measured side by side, interleaved (the order rotates every
# repetition) and repeated:
#   none     no tracer
#   quiet    stablepage-trace -q          (aggregate in the kernel only; its
#                                          text summary read back)
#   json     stablepage-trace --json      (every event streamed; to a tmpfs file
#                                          so the summary can be read back)
#   bpftrace the peer a user would reach for, where bpftrace is installed
#   enforce  stablepage-trace enforce --native --remount (stable pages on):
#            what enforcement costs, next to the would-stall prediction that
#            plain tracing (quiet) made in the same run
# Prints medians and ratios to "none" from this one run. Asserts no timing.
# Then, per profile, quiet and json again in alternating windows of short
# workload runs: the tracer paused (SIGUSR1, tracepoint programs detached) and let
# go on (SIGUSR2) by bench/pausebench.c, a traced and an untraced window side
# by side in each pair, which resolves a small cost far sooner than whole
# runs; "none" there is the control, no tracer and both windows untraced.
# BENCH_CONFIGS=empty adds windows with BENCH_EMPTY_COPIES (8) copies of
# empty programs on the tracer's tracepoints (bench/emptyprogs.bpf.c, by
# progcost -p): the floor, what attaching costs before any program body.
# Environment: BENCH_REPS (default 5), BENCH_SECS (default 3), BENCH_THREADS (4),
# BENCH_CONFIGS (default: all; "none" is always run), BENCH_PROFILES ("A B"),
# BENCH_STATS_EVERY (2: every 2nd repetition runs with bpf_stats for the BPF
# columns; larger leaves more repetitions for the ratios); BENCH_WINDOW_RUNS
# (10 runs of alternating windows per profile and configuration; 0 skips
# them), BENCH_PAIRS (20 pairs of windows a run), BENCH_WINDOW_MS (200),
# BENCH_SETTLE_MS (30: after each pause or resume, before the window),
# BENCH_CONTROL_EVERY (1: the control "none" in every run; k: in every k-th
# run only, which leaves more of a long batch to the configurations);
# BENCH_ATTACH_MODE (auto: the tracer's --attach-mode; where fentry loads,
# tracepoint compares the two modes).
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "bench: needs root: sudo make bench" >&2; exit 1; }
reps=${BENCH_REPS:-5} secs=${BENCH_SECS:-3} threads=${BENCH_THREADS:-4}
profiles=${BENCH_PROFILES:-A B} stats_every=${BENCH_STATS_EVERY:-2}
spt=$build/stablepage-trace wac=$build/wac
attach_mode=${BENCH_ATTACH_MODE:-auto}
control_every=${BENCH_CONTROL_EVERY:-1}
[[ $control_every =~ ^[1-9][0-9]*$ ]] || { echo "bench: BENCH_CONTROL_EVERY: a positive number, not '$control_every'" >&2; exit 2; }
mode=(--attach-mode "$attach_mode")

. scripts/lib.bash
work=$(mktemp -d /tmp/stablepage-bench.XXXX)
shm=$(mktemp -d /dev/shm/stablepage-bench.XXXX)
CLEANUP_FILE=$work/cleanup tracer='' wac_pid='' tracefs_mounted='' stats_old=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
	[ -n "$tracer" ] && { stop_tracer || true; }
	[ -n "$wac_pid" ] && { kill -INT "$wac_pid"; wait "$wac_pid" || true; }
	sysctl -qw kernel.bpf_stats_enabled="$stats_old"
	[ -n "$tracefs_mounted" ] && umount /sys/kernel/tracing
	run_cleanup
	rm -rf "$work" "$shm"
}
trap cleanup EXIT
trap 'echo "bench: failed at line $LINENO (exit $?)" >&2' ERR

scratch_fs "$work" 1G ext4
loop=$LOOP mnt=$MNT
# Our programs, for their run time (bpf_run_stats).
ours_regex=$(attach_points_regex "$build")

configs="none ${BENCH_CONFIGS:-quiet json enforce bpftrace}"
configs=${configs/ bpftrace/}
configs=${configs/ empty/} # windows only
if command -v bpftrace > /dev/null; then
	# bpftrace's tracepoint probes need tracefs for the event formats.
	if ! [ -d /sys/kernel/tracing/events ]; then
		mount -t tracefs nodev /sys/kernel/tracing && tracefs_mounted=1
	fi
	[[ " ${BENCH_CONFIGS:-bpftrace} " == *" bpftrace "* ]] && configs="$configs bpftrace"
fi

# Classic tracepoint args carry only (name, ino, index): bpftrace 0.17 cannot
# reach the folio to test PG_writeback, and has no raw tracepoints. So the
# peer counts every clean->dirty transition per comm and inode (a superset of
# our events, with less work per event), plus the writeback waits.
bpftrace_prog='
tracepoint:writeback:writeback_dirty_folio { @dirtied[comm, args->ino] = count(); }
tracepoint:writeback:folio_wait_writeback { @waits[comm] = count(); }'

# start_tracer CONFIG: sets tracer; records start-to-attached in ms.
start_tracer() {
	local cfg=$1 t0 t1 marker
	case $cfg in
	quiet) /usr/bin/time -f '%U %S %M' -o "$shm/time" "$spt" "${mode[@]}" -q --dev "$loop" \
		> "$shm/out" 2> "$shm/err" & marker='^Tracing' ;;
	json) /usr/bin/time -f '%U %S %M' -o "$shm/time" "$spt" "${mode[@]}" --json --dev "$loop" \
		> "$shm/out" 2> "$shm/err" & marker='^Tracing' ;;
	enforce) /usr/bin/time -f '%U %S %M' -o "$shm/time" "$spt" enforce "${mode[@]}" --native \
		--remount -q --json --dev "$loop" > "$shm/out" 2> "$shm/err" & marker='^Tracing' ;;
	bpftrace) /usr/bin/time -f '%U %S %M' -o "$shm/time" bpftrace -e "$bpftrace_prog" \
		> "$shm/out" 2> "$shm/err" & marker='^Attaching' ;;
	esac
	tracer=$!
	t0=$(date +%s%N)
	WAIT_POLL=0.005 wait_for_lines "$tracer" 1 "$marker" "$shm/err" "$shm/out" || { cat "$shm/err" >&2; exit 1; }
	t1=$(date +%s%N)
	[ "$marker" = '^Attaching' ] && sleep 0.5 # bpftrace: "Attaching" precedes the attach
	attach_ms=$(((t1 - t0) / 1000000))
}

# stop_tracer: SIGINT to the tracer itself (GNU time does not forward
# signals), then its exit. bpftrace 0.17 once sat through a SIGINT here for
# 10 minutes (a second one ended it): the signal is repeated every 2 s, and a
# tracer still running after 30 s is killed and the bench fails.
stop_tracer() {
	local i
	for i in $(seq 0 299); do
		pgrep -P "$tracer" > /dev/null || break
		[ $((i % 20)) -ne 0 ] || pkill -INT -P "$tracer" || true
		sleep 0.1
	done
	if pgrep -P "$tracer" > /dev/null; then
		pkill -KILL -P "$tracer" || true
		wait "$tracer" 2> /dev/null || true
		tracer=
		echo "bench: the tracer (${cfg:-}) did not exit on SIGINT within 30 s: killed" >&2
		return 1
	fi
	wait "$tracer" || true
	tracer=
}

# The tracer's programs' run time (kernel.bpf_stats_enabled), read before detaching:
# "ns_per_run runs" of the most frequently run one, all of them in ms, and
# that less the accounting's own cost ($floor_ns per run) in ms;
# one "PROFILE CONFIG name ns_per_run runs" line per program to $progs.
bpf_run_stats() {
	local ours names=$ours_regex
	# bpftrace names its programs after the tracepoints (15 characters).
	[ "$cfg" = bpftrace ] && names='^(writeback_dirty|folio_wait_writ)$'
	# One snapshot for both outputs.
	ours=$(bpftool prog show -j | jq -c --arg names "$names" '[.[] | select(.name | test($names))]')
	jq -r --arg p "$profile" --arg c "$cfg" '.[] |
		"\($p) \($c) \(.name) \(if .run_cnt > 0 then (.run_time_ns / .run_cnt | floor) else "-" end) \(.run_cnt // 0)"' \
		<<< "$ours" >> "$progs"
	jq -r --argjson floor "$floor_ns" '[.[] | select(.run_cnt > 0)] |
		(map(.run_time_ns) | add // 0) as $total | (map(.run_cnt) | add // 0) as $runs |
		sort_by(-.run_cnt) | (first // {run_time_ns: 0, run_cnt: 0}) |
		"\(if .run_cnt > 0 then (.run_time_ns / .run_cnt | floor) else 0 end) \(.run_cnt)" +
		" \($total / 1e6 | floor) \(($total - $floor * $runs) / 1e6 | floor)"' <<< "$ours"
}

# Thread-time the writers lost to stable pages, in percent: predicted by
# tracing (would_stall_ns) or measured under enforcement (stable_wait_ns).
stall_pct() {
	tail -n1 "$shm/out" | jq --argjson t "$((threads * secs))" \
		'[.top_processes[].'"$1"'] | add // 0 | . / 1e7 / $t | . * 10 | round / 10'
}

# quiet is plain -q (what aggregate mode is; --json would also time every
# write request for the histograms it shows): its text summary gives
# "VIOLATIONS LOST STALL%P".
quiet_summary() {
	awk -v t="$((threads * secs))" '
		/Violations: / { for (i = 1; i < NF; i++) if ($i == "Violations:") v = $(i + 1) }
		/^Events lost/ { l = $NF }
		/^Stable pages would have held pid/ { for (i = 2; i <= NF; i++) if ($i == "thread-s") s += $(i - 1) }
		END { if (v == "") exit 1; printf "%d %d %.1f\n", v, l, 100 * s / t }' "$shm/out"
}

# What run-time accounting itself adds to every run (two clock reads and
# the counters): the run time of an empty program, of the tracer's own kind
# (tp_btf) on its tracepoints (bench/emptyprogs.bpf.c, by progcost), under
# profile A; bpftrace's on a classic tracepoint once stood in for it, and
# without bpftrace the floor was 0. NET%CPU subtracts it from each of our runs.
floor_ns=0
if [ "$reps" -ge "$stats_every" ]; then
	sysctl -qw kernel.bpf_stats_enabled=1
	progcost_during "$shm/out" "$build/emptyprogs.bpf.o" -- -p A -t "$threads" -d 1 "$mnt/f"
	# "OBJECT PROGRAM RUNS NS_PER_RUN": the mean over all runs
	floor_ns=$(awk 'NR > 1 { runs += $3; ns += $3 * $4 } END { print runs ? int(ns / runs) : 0 }' \
		"$shm/out")
	rm -f "$mnt/f"
fi

results=$work/results progs=$work/progs
: > "$results"
: > "$progs"
i=0
for rep in $(seq "$reps"); do
	# Run-time accounting costs two clock reads per program run, a cost the
	# tracer does not have in production: it is on only in every
	# $stats_every-th repetition, which give the BPF columns; the others
	# give the ratios.
	stats_on=$((rep % stats_every == 0))
	sysctl -qw kernel.bpf_stats_enabled=$stats_on
	for profile in $profiles; do
		# shellcheck disable=SC2086
		for cfg in $(rotation "$i" $configs); do
			rm -f "$mnt/f"
			sync
			attach_ms=- tracer=
			[ "$cfg" != none ] && start_tracer "$cfg"
			ops=$("$wac" -p "$profile" -t "$threads" -d "$secs" "$mnt/f" |
				sed -n 's/.*ops_per_s=\([0-9]*\).*/\1/p')
			stats="- - - -" events=- lost=- cpu=- rss=- pred=- waited=-
			if [ -n "$tracer" ]; then
				[ "$stats_on" = 1 ] && stats=$(bpf_run_stats)
				stop_tracer
				read -r ut st rss_kb < "$shm/time"
				cpu=$(awk -v u="$ut" -v s="$st" 'BEGIN { print u + s }')
				rss=$((rss_kb / 1024))
				if [ "$cfg" = quiet ]; then
					summary=$(quiet_summary)
					read -r events lost pred <<< "$summary"
				elif [ "$cfg" != bpftrace ]; then
					events=$(tail -n1 "$shm/out" | jq .violations_total)
					lost=$(tail -n1 "$shm/out" | jq .events_lost)
					[ "$cfg" = json ] && [ "$(($(wc -l < "$shm/out") - 1))" -ne "$((events - lost))" ] &&
						echo "bench: streamed events != violations - lost" >&2
					[ "$cfg" = enforce ] && waited=$(stall_pct stable_wait_ns)
				else
					events=$(sed -n 's/^@dirtied\[.*\]: \([0-9]*\)$/\1/p' "$shm/out" |
						awk '{ s += $1 } END { print s + 0 }')
					lost=-
				fi
			fi
			# enforce --remount left the filesystem mounted with stable
			# writes: mount it afresh for the next configuration.
			[ "$cfg" = enforce ] && umount "$mnt" && mount "$loop" "$mnt"
			echo "$profile $cfg $ops $events $lost $stats $cpu $rss $attach_ms $pred $waited $rep $stats_on" >> "$results"
			printf '  rep %d profile %s %-8s ops/s %8s events %7s lost %s ns/run %s\n' \
				"$rep" "$profile" "$cfg" "$ops" "$events" "$lost" "${stats%% *}" >&2
		done
		i=$((i + 1))
	done
done

median() { sort -n | awk '{ a[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
col() { awk -v p="$1" -v c="$2" -v f="$3" '$1 == p && $2 == c && $f != "-" { print $f }' "$results"; }
# Throughput of the repetitions without run-time accounting.
ops_col() { awk -v p="$1" -v c="$2" '$1 == p && $2 == c && $16 == 0 { print $3 }' "$results"; }
# Paired ratios: each repetition's ops/s over the untraced run of the same
# repetition (minutes apart at most, so slow drift of the shared machine
# cancels); printed as "median q1-q3 lo-hi", lo-hi a 95% confidence interval
# of the median (bench/median-ci.awk).
paired() {
	awk -v p="$1" -v c="$2" '$16 == 0 && $1 == p && $2 == "none" { base[$15] = $3 }
		$16 == 0 && $1 == p && $2 == c { ops[$15] = $3 }
		END { for (r in ops) if (base[r] > 0) printf "%.4f\n", ops[r] / base[r] }' "$results" |
		sort -n | awk -f bench/median-ci.awk |
		awk '{ printf "%.3f %.3f-%.3f %.3f-%.3f\n", $1, $2, $3, $4, $5 } END { if (NR == 0) print "- - -" }'
}

echo
echo "stablepage-trace $("$spt" -V | awk '{ print $2 }') bench: kernel $(uname -r), $(nproc) CPUs," \
	"--attach-mode $attach_mode, ext4 on $loop, wac -t $threads -d $secs, $reps repetitions, medians;" \
	"OPS/S and ratios from those with bpf_stats off, BPF columns from every ${stats_every}th;" \
	"an empty program's run time: $floor_ns ns"
fmt='%-7s %-9s %9s %6s %13s %13s %6s %7s %9s %5s %6s %9s %6s %5s %7s %9s %7s %7s\n'
# shellcheck disable=SC2059
printf "$fmt" PROFILE CONFIG OPS/S RATIO RATIO_IQR RATIO_CI95 NET%CPU NET_NS/OP EVENTS LOST NS/RUN BPF_RUNS BPF_MS \
	CPU_S RSS_MIB ATTACH_MS STALL%P STALL%M
for profile in $profiles; do
	for cfg in $configs; do
		ops=$(ops_col "$profile" "$cfg" | median)
		bpf_ms=$(col "$profile" "$cfg" 9 | median)
		# Our programs' net run time over the CPU time the run had.
		share=$(awk -v m="$bpf_ms" -v s="$secs" -v n="$(nproc)" \
			'BEGIN { if (m == "-") print "-"; else printf "%.2f", m / 10 / s / n }')
		# The same per workload operation, each repetition's against its own
		# ops/s: throughput differs between runs and tracers, CPU share hides it.
		per_op=$(awk -v p="$profile" -v c="$cfg" -v s="$secs" '$1 == p && $2 == c && $9 != "-" &&
			$3 > 0 { printf "%.1f\n", $9 * 1e6 / ($3 * s) }' "$results" | median)
		# shellcheck disable=SC2059,SC2046
		printf "$fmt" "$profile" "$cfg" "$ops" $(paired "$profile" "$cfg") "$share" "$per_op" \
			$(for c in 4 5 6 7 8 10 11 12 13 14; do col "$profile" "$cfg" $c | median; done)
	done
done
echo "RATIO: median over repetitions of ops/s / the same repetition's untraced ops/s; RATIO_IQR"
echo "its quartiles, RATIO_CI95 a 95% confidence interval of the median (binomial order"
echo "statistics: holds for any noise distribution; min-max below 6 pairs). NET%CPU: the"
echo "tracer's programs' run time less the empty program's per run, over the run's CPU time"
echo "(duration x CPUs); NET_NS/OP: the same per operation of the workload in that run (a fair"
echo "comparison where throughput differs); BPF_MS is the run time as the kernel counts it."
echo "STALL%P: thread-time stable pages would cost (would_stall_ns / threads / duration, from quiet);"
echo "STALL%M: thread-time writers slept in stable waits under enforce (stable_wait_ns, same units)."
# The accounting's floor is in every ns/run the kernel counts and in none of
# the production runs: NET is the median less it.
echo "Per program, medians: ns/run as the kernel counts it; NET: less the $floor_ns ns it counts" \
	"for an empty program; runs"
for profile in $profiles; do
	for cfg in ${configs#none }; do
		for prog in $(awk -v p="$profile" -v c="$cfg" '$1 == p && $2 == c { print $3 }' "$progs" | sort -u); do
			ns=$(awk -v p="$profile" -v c="$cfg" -v n="$prog" '$1 == p && $2 == c && $3 == n && $4 != "-" { print $4 }' "$progs" | median)
			net=-
			[ "$ns" = - ] || net=$(awk -v ns="$ns" -v f="$floor_ns" 'BEGIN { print ns - f }')
			printf '  %s %-8s %-28s %6s ns/run %6s NET %9s runs\n' "$profile" "$cfg" "$prog" \
				"$ns" "$net" \
				"$(awk -v p="$profile" -v c="$cfg" -v n="$prog" '$1 == p && $2 == c && $3 == n { print $5 }' "$progs" | median)"
		done
	done
done
echo "Per-repetition ops/s (every ${stats_every}th with bpf_stats on):"
for profile in $profiles; do
	for cfg in $configs; do
		printf '  %s %-9s %s\n' "$profile" "$cfg:" "$(col "$profile" "$cfg" 3 | tr '\n' ' ')"
	done
done

# Alternating windows. The unit is a run: a fresh file, wac and tracer, and
# $pairs pairs of windows, whose ratios' geometric mean is the run's ratio.
# On profile A the effect of tracing differs from run to run by more than a
# run's own noise (its contended dynamics shift either way), so the result
# is the mean over many short runs, its interval from their spread.
window_runs=${BENCH_WINDOW_RUNS:-10} pairs=${BENCH_PAIRS:-20}
window_ms=${BENCH_WINDOW_MS:-200} settle_ms=${BENCH_SETTLE_MS:-30}
[ "$window_runs" -gt 0 ] || exit 0
sysctl -qw kernel.bpf_stats_enabled=0
windows=$work/windows
: > "$windows"
window_configs="none ${BENCH_CONFIGS:-quiet json}"
window_configs=$(for c in $window_configs; do [[ $c =~ ^(none|quiet|json|empty)$ ]] && echo "$c"; done)
empty_progs=()
for _ in $(seq "${BENCH_EMPTY_COPIES:-8}"); do empty_progs+=("$build/emptyprogs.bpf.o"); done
i=0
for run in $(seq "$window_runs"); do
	for profile in $profiles; do
		# shellcheck disable=SC2086
		for cfg in $(rotation "$i" $window_configs); do
			[ "$cfg" = none ] && (((run - 1) % control_every)) && continue
			case $cfg in
			none) args=(-D) ;;
			quiet) args=(-o "$shm/out" -- "$spt" "${mode[@]}" -q --dev "$loop") ;;
			json) args=(-o "$shm/out" -- "$spt" "${mode[@]}" --json --dev "$loop") ;;
			empty) args=(-o "$shm/out" -- "$build/progcost" -p "${empty_progs[@]}") ;;
			esac
			rm -f "$mnt/f" "$shm/counters" "$shm/out"
			sync
			"$wac" -p "$profile" -t "$threads" -d 100000 -c "$shm/counters" "$mnt/f" > /dev/null &
			wac_pid=$!
			until [ -e "$shm/counters" ]; do sleep 0.01; done
			# "traced untraced ack_ms" per pair -> one line per run:
			# "PROFILE CONFIG RUN RATIO TRACED UNTRACED ACK_MS LOST"
			"$build/pausebench" -c "$shm/counters" -n "$pairs" -w "$window_ms" -s "$settle_ms" \
				-W 500 "${args[@]}" > "$shm/pairs"
			kill -INT "$wac_pid"
			wait "$wac_pid"
			wac_pid=
			lost=-
			[ "$cfg" = json ] && lost=$(tail -n1 "$shm/out" | jq .events_lost)
			[ "$cfg" = quiet ] && lost=$(quiet_summary | cut -d' ' -f2)
			ack=$(awk '{ print $3 }' "$shm/pairs" | median)
			awk -v p="$profile" -v c="$cfg" -v r="$run" -v ack="$ack" -v lost="$lost" '
				$1 > 0 && $2 > 0 { l += log($1 / $2); t += $1; u += $2; n++ } END {
				printf "%s %s %d %.5f %.0f %.0f %s %s\n", p, c, r, exp(l / n), t / n, u / n,
				ack, lost }' "$shm/pairs" >> "$windows"
			printf '  window run %d profile %s %-6s ratio %s\n' "$run" "$profile" "$cfg" \
				"$(tail -n1 "$windows" | cut -d' ' -f4)" >&2
		done
		i=$((i + 1))
	done
done

echo
echo "Alternating windows: $window_runs runs per profile and configuration, each $pairs pairs of"
echo "$window_ms ms windows (+$settle_ms ms settling after each pause or resume) in one wac run,"
echo "the tracer paused and let go on:"
fmt='%-7s %-7s %5s %6s %13s %7s %13s %12s %12s %7s %5s\n'
# shellcheck disable=SC2059
printf "$fmt" PROFILE CONFIG RUNS RATIO RATIO_CI95 RUN_SD% RUN_MIN-MAX TRACED_OPS/S UNTRACED_OPS/S \
	ACK_MS LOST
for profile in $profiles; do
	for cfg in $window_configs; do
		sel() { awk -v p="$profile" -v c="$cfg" -v f="$1" '$1 == p && $2 == c { print $f }' "$windows"; }
		# shellcheck disable=SC2059,SC2046
		printf "$fmt" "$profile" "$cfg" "$(sel 4 | wc -l)" \
			$(sel 4 | sort -n | awk '{ l = log($1); s += l; ss += l * l; v[++n] = $1 } END {
				m = s / n; sd = n > 1 ? sqrt((ss - n * m * m) / (n - 1)) : 0
				# Student t quantile (97.5%, n - 1 degrees of freedom), Cornish-Fisher
				z = 1.96; d = n > 1 ? n - 1 : 1
				t = z + (z^3 + z) / (4 * d) + (5 * z^5 + 16 * z^3 + 3 * z) / (96 * d^2)
				h = t * sd / sqrt(n)
				printf "%.4f %.4f-%.4f %.2f %.4f-%.4f\n", exp(m), exp(m - h), exp(m + h),
					100 * sd, v[1], v[n] }') \
			"$(sel 5 | median)" "$(sel 6 | median)" "$(sel 7 | median)" \
			"$(sel 8 | awk '$1 != "-" { s += $1; n++ } END { print n ? s : "-" }')"
	done
done
echo "RATIO: geometric mean over runs of each run's ratio (the geometric mean of its pairs' traced"
echo "ops/s over untraced ops/s); RATIO_CI95 from the runs' spread (Student t); RUN_SD% that spread,"
echo "RUN_MIN-MAX the lowest and highest run. none: no tracer, both windows untraced (what the method"
echo "itself does: its spread is the runs' own noise). OPS/S and ACK_MS (signal to the tracer's"
echo "acknowledgement): medians over runs; LOST: events lost, all runs."
if grep -qx empty <<< "$window_configs"; then
	copies=${#empty_progs[@]}
	echo "empty: $copies copies of an empty program on each of the tracer's tracepoints; per copy:"
	for profile in $profiles; do
		awk -v p="$profile" -v k="$copies" '$1 == p && $2 == "empty" { s += log($4); n++ } END {
			if (n) printf "  %s ratio %.4f (the geometric mean to the power 1/%d)\n", p,
				exp(s / n / k), k }' "$windows"
	done
fi
