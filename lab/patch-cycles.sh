#!/bin/bash
# patch-cycles.sh: kernel text patched under running writers, over and over.
# Starts `wac -p PROFILE -t 4` on a scratch ext4, then the tracer with
# --attach-mode MODE, pauses it and lets it go on PAUSES times (tracepoint
# programs detached and attached: static calls and keys patched where the
# writers run), ends it (trampolines detached in fentry mode), and does that
# STARTS times. With OBJ, `progcost -a -p OBJ` (every program of a BPF
# object, trampolines included) takes the tracer's place: each pause then
# detaches them. Prints one line per start and "done" at the end.
#
# Made to tell a guest's lockups apart
# (docs/lab/2026-12-06-tcg-trampoline-lockup.md): under QEMU's
# multi-threaded TCG the 6.1 guest hung within two cycles of
#   VMTEST_ACCEL=tcg,thread=multi lab/vmtest.sh \
#     env OBJ=build/waitstable-tramp.bpf.o STARTS=1 PAUSES=60 lab/patch-cycles.sh
# Environment: PROFILE (A), MODE (auto), OBJ (none), STARTS (10), PAUSES (20).
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "patch-cycles: needs root" >&2; exit 1; }
profile=${PROFILE:-A} mode=${MODE:-auto} starts=${STARTS:-10} pauses=${PAUSES:-20}

. scripts/lib.bash
work=$(mktemp -d /tmp/patch-cycles.XXXX)
CLEANUP_FILE=$work/cleanup wac='' tracer=''
cleanup() {
	for pid in $tracer $wac; do
		if kill -INT "$pid" 2> /dev/null; then wait "$pid" || true; fi
	done
	run_cleanup
	rm -rf "$work"
}
trap cleanup EXIT
scratch_fs "$work" 512M ext4
loop=$LOOP mnt=$MNT
if [ -n "${OBJ:-}" ]; then
	tracer_cmd=("$build/progcost" -a -p "$OBJ")
else
	tracer_cmd=("$build/stablepage-trace" --attach-mode "$mode" -q --dev "$loop")
fi
"$build/wac" -p "$profile" -t 4 -d 100000 "$mnt/f" > /dev/null &
wac=$!
sleep 1

# ack LINE N: until the tracer said LINE N times (60 s at most).
ack() {
	WAIT_TRIES=1200 WAIT_POLL=0.05 wait_for_lines "$tracer" "$2" "^$1" "$work/err" && return 0
	echo "patch-cycles: no '$1' #$2 from the tracer" >&2
	cat "$work/err" >&2
	exit 1
}

for s in $(seq "$starts"); do
	"${tracer_cmd[@]}" > /dev/null 2> "$work/err" &
	tracer=$!
	ack "Tracing " 1
	for p in $(seq "$pauses"); do
		kill -USR1 "$tracer"
		ack "Tracing paused" "$p"
		sleep 0.05
		kill -USR2 "$tracer"
		ack "Tracing goes on" "$p"
		sleep 0.05
	done
	kill -INT "$tracer"
	wait "$tracer"
	tracer=
	echo "start $s ($(awk '/^Attach mode:/ { print $3 " mode"; exit }
		/^Tracing with/ { print $3 " programs of " obj; exit }' obj="${OBJ:-}" "$work/err")):" \
		"$pauses pauses, ended"
done
echo "done: $starts starts, $((starts * pauses)) pauses under wac -p $profile -t 4"
