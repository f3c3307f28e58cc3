# Shared helpers for the bats suites: real loop devices, real filesystems,
# the real tracer. Everything created is recorded (on_cleanup) and undone in
# teardown. What the benchmarks share with the tests is in scripts/lib.bash.
ROOT=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
BUILD=${SPT_BUILD:-$ROOT/build}
SPT=$BUILD/stablepage-trace
WAC=$BUILD/wac

load /usr/lib/bats/bats-support/load.bash
load /usr/lib/bats/bats-assert/load.bash
source "$ROOT/scripts/lib.bash"

spt_setup() {
	CLEANUP_FILE=$BATS_TEST_TMPDIR/cleanup
	: > "$CLEANUP_FILE"
}

# Stops the tracer, then undoes everything in reverse order of creation.
spt_teardown() {
	[ -n "${TRACER_PID:-}" ] && kill -INT "$TRACER_PID" 2>/dev/null && wait "$TRACER_PID" 2>/dev/null
	run_cleanup
}

# make_fs FSTYPE [stable] -> sets MNT, LOOP (/dev/loopN), DEV (MAJ:MIN of the fs)
make_fs() {
	scratch_fs "$BATS_TEST_TMPDIR" 512M "$@"
}

# start_tracer ARGS... : starts the tracer in the background, waits until attached.
# Its stdout goes to TRACE_OUT, or to TRACE_STDOUT when set (e.g. a FIFO).
start_tracer() {
	TRACE_OUT=$BATS_TEST_TMPDIR/trace.out
	TRACE_ERR=$BATS_TEST_TMPDIR/trace.err
	"$SPT" "$@" > "${TRACE_STDOUT:-$TRACE_OUT}" 2> "$TRACE_ERR" &
	TRACER_PID=$!
	WAIT_TRIES=200 wait_for_lines "$TRACER_PID" 1 '^Tracing' "$TRACE_ERR" && return 0
	echo "tracer did not attach:" >&2
	cat "$TRACE_ERR" >&2
	return 1
}

# stop_tracer: SIGINT, then the tracer must print its summary and exit 0.
stop_tracer() {
	local rc=0
	interrupt_and_wait "$TRACER_PID" || rc=$?
	TRACER_PID=
	[ "$rc" -eq 0 ] || { echo "tracer exited $rc" >&2; cat "$TRACE_ERR" >&2; return 1; }
}

summary() {
	tail -n 1 "$TRACE_OUT" | jq -c "$@"
}

# assert_waits_accounted: every wait the summary counts is timed (in the
# stable-wait or other-wait histograms), untimed or still waiting.
assert_waits_accounted() {
	local waits timed untimed pending
	waits=$(summary '.stable_waits + .other_waits')
	timed=$(summary '[.histograms[] | select(.name == "stable-wait" or .name == "other-wait") | .count] | add // 0')
	untimed=$(summary .wait_untimed)
	pending=$(summary .waits_pending)
	echo "waits $waits = timed $timed + untimed $untimed + waiting $pending"
	[ "$((timed + untimed + pending))" -eq "$waits" ]
}

# fentry_loads: trampolines load here (the 6.1 guest; not this host).
fentry_loads() {
	"$SPT" features | grep -q '^  fentry folio_end_writeback .* yes$'
}

# attached_programs: the names of our programs that have a link now, sorted.
attached_programs() {
	local ids ours
	ours=$(our_programs_regex "$BUILD") || return 1
	ids=$(bpftool link show -j | jq -c '[.[].prog_id]')
	bpftool prog show -j | jq -r --argjson ids "$ids" --arg ours "$ours" \
		'.[] | select(.id as $id | $ids | index($id)) | select(.name | test($ours)) | .name' |
		sort
}

# events JQ-FILTER: the violation events, filtered by jq.
events() {
	grep '"type":"violation"' "$TRACE_OUT" | jq -c "$@"
}

# No program of ours may stay loaded once the tracer is gone. The kernel frees
# a program after an RCU grace period, so allow it a moment.
assert_detached() {
	local ours
	ours=$(our_programs_regex "$BUILD") || return 1
	for _ in $(seq 50); do
		bpftool prog show -j | jq -e --arg ours "$ours" 'any(.[]; .name // "" | test($ours))' > /dev/null ||
			return 0
		sleep 0.1
	done
	echo "programs still loaded:" >&2
	bpftool prog show -j | jq -r --arg ours "$ours" '.[] | select(.name // "" | test($ours)) |
		"\(.id): \(.type) name \(.name)"' >&2
	return 1
}

# state PID: the process state letter (T: stopped).
state() {
	awk '{ sub(/.*\) /, ""); print substr($0, 1, 1) }' "/proc/$1/stat" 2>/dev/null
}

# freeze_until_held TOOL WRITER (enforce, BPF mode): stops the tool, so that
# nobody resumes holders, and waits up to 10 s for the writer to be stopped
# by a hold; fails if it is not, three times. A hold can begin only in the
# SPT_HEARTBEAT_STALE_NS after the freeze, and a writer starved of CPU may
# dirty nothing under writeback in that time: the tool is thawed to try again.
freeze_until_held() {
	local s try
	for try in 1 2 3; do
		sleep 1
		kill -STOP "$1"
		for _ in $(seq 100); do s=$(state "$2"); [ "$s" = T ] && break; sleep 0.1; done
		echo "writer state with the tool frozen (try $try): $s"
		[ "$s" = T ] && return 0
		kill -CONT "$1"
	done
	return 1
}
