# Shared helpers for the bats suites: real loop devices, real filesystems,
# the real tracer. Everything created is recorded and undone in teardown.
ROOT=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
BUILD=${SPT_BUILD:-$ROOT/build}
SPT=$BUILD/stablepage-trace
WAC=$BUILD/wac

load /usr/lib/bats/bats-support/load.bash
load /usr/lib/bats/bats-assert/load.bash

CLEANUP_FILE=""

spt_setup() {
	CLEANUP_FILE=$BATS_TEST_TMPDIR/cleanup
	: > "$CLEANUP_FILE"
}

# Runs in reverse order of creation.
spt_teardown() {
	[ -n "${TRACER_PID:-}" ] && kill -INT "$TRACER_PID" 2>/dev/null && wait "$TRACER_PID" 2>/dev/null
	[ -f "$CLEANUP_FILE" ] || return 0
	tac "$CLEANUP_FILE" | while read -r cmd; do eval "$cmd" || true; done
	rm -f "$CLEANUP_FILE"
}

on_cleanup() {
	echo "$*" >> "$CLEANUP_FILE"
}

# make_fs FSTYPE [stable] -> sets MNT, LOOP (/dev/loopN), DEV (MAJ:MIN of the fs)
make_fs() {
	local fstype=$1 stable=${2:-} img name
	img=$(mktemp -p "$BATS_TEST_TMPDIR" "$fstype.XXXX.img")
	# bats keeps test directories until the run ends: the guest's /tmp is
	# a tmpfs of half its memory, and a run's images together overfill it.
	on_cleanup "rm -f $img"
	truncate -s 512M "$img"
	LOOP=$(losetup -f --show "$img")
	on_cleanup "losetup -d $LOOP"
	name=${LOOP#/dev/}
	if [ -n "$stable" ]; then
		local old
		old=$(cat /sys/block/"$name"/queue/stable_writes)
		echo 1 > /sys/block/"$name"/queue/stable_writes
		on_cleanup "echo $old > /sys/block/$name/queue/stable_writes"
	fi
	case $fstype in
	ext4) mkfs.ext4 -q -F "$LOOP" ;;
	xfs) mkfs.xfs -q -f "$LOOP" ;;
	btrfs) mkfs.btrfs -q -f "$LOOP" >/dev/null ;;
	ext2 | ext3) mkfs -t "$fstype" -q -F "$LOOP" ;;
	*) mkfs -t "$fstype" "$LOOP" >/dev/null ;;
	esac
	MNT=$(mktemp -d -p "$BATS_TEST_TMPDIR" "mnt-$fstype.XXXX")
	mount "$LOOP" "$MNT"
	on_cleanup "umount $MNT"
	DEV=$(mountpoint -d "$MNT")
}

# start_tracer ARGS... : starts the tracer in the background, waits until attached.
# Its stdout goes to TRACE_OUT, or to TRACE_STDOUT when set (e.g. a FIFO).
start_tracer() {
	TRACE_OUT=$BATS_TEST_TMPDIR/trace.out
	TRACE_ERR=$BATS_TEST_TMPDIR/trace.err
	"$SPT" "$@" > "${TRACE_STDOUT:-$TRACE_OUT}" 2> "$TRACE_ERR" &
	TRACER_PID=$!
	for _ in $(seq 200); do
		grep -q '^Tracing' "$TRACE_ERR" && return 0
		kill -0 "$TRACER_PID" 2>/dev/null || break
		sleep 0.1
	done
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

# interrupt_and_wait PID: SIGINT, then its exit status. One that has not
# exited within 60 s is hung: say where it is in the kernel, kill it, fail.
interrupt_and_wait() {
	local pid=$1
	kill -INT "$pid"
	for _ in $(seq 600); do
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2> /dev/null; then
		echo "pid $pid did not exit within 60 s of SIGINT; state $(awk '{ print $3 }' "/proc/$pid/stat")," \
			"kernel stack:" >&2
		cat "/proc/$pid/stack" >&2 2> /dev/null
		for t in /proc/"$pid"/task/*; do
			echo "thread ${t##*/}: $(cat "$t/wchan" 2> /dev/null)" >&2
		done
		kill -KILL "$pid"
		wait "$pid" 2> /dev/null
		return 124
	fi
	wait "$pid"
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
	local ids
	ids=$(bpftool link show -j | jq -c '[.[].prog_id]')
	bpftool prog show -j | jq -r --argjson ids "$ids" \
		'.[] | select(.id as $id | $ids | index($id)) | select(.name | test("^(tp|fentry|fexit|lsm|fmod)_")) | .name' |
		sort
}

# events JQ-FILTER: the violation events, filtered by jq.
events() {
	grep '"type":"violation"' "$TRACE_OUT" | jq -c "$@"
}

# No program of ours may stay loaded once the tracer is gone. The kernel frees
# a program after an RCU grace period, so allow it a moment.
assert_detached() {
	for _ in $(seq 50); do
		bpftool prog show | grep -qE 'tp_writeback_di|tp_folio_wait_w|tp_sched_switch|tp_block_rq_com|fentry_|fexit_|probe_' || return 0
		sleep 0.1
	done
	echo "programs still loaded:" >&2
	bpftool prog show | grep -E 'tp_writeback_di|tp_folio_wait_w|tp_sched_switch|tp_block_rq_com|fentry_|fexit_|probe_' >&2
	return 1
}
