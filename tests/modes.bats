#!/usr/bin/env bats
# Attach modes: auto picks per attach point what loads; both modes see the
# same violations of the same workload.
load helpers

setup() { spt_setup; }
teardown() {
	[ -n "${SECOND_PID:-}" ] && kill -INT "$SECOND_PID" 2>/dev/null && wait "$SECOND_PID" 2>/dev/null
	spt_teardown
}

fentry_loads() {
	"$SPT" features | grep -q '^  fentry folio_end_writeback .* yes$'
}

@test "--attach-mode auto says which mode and why; fentry where it loads, else forcing it fails in one line" {
	run "$SPT" -q -d 0.3
	assert_success
	if fentry_loads; then
		assert_output --partial "Attach mode: fentry (would-stall ends at fentry/folio_end_writeback)"
		run "$SPT" --attach-mode fentry -q -d 0.3
		assert_success
	else
		assert_output --regexp "Attach mode: tracepoint \(fentry does not load here: .+\)"
		run "$SPT" --attach-mode fentry -q -d 0.3
		[ "$status" -eq 1 ]
		[ "${#lines[@]}" -eq 1 ]
		assert_output --regexp "^stablepage-trace: --attach-mode fentry: fentry programs do not load on this kernel \(.+\); --attach-mode auto uses tracepoints$"
	fi
	run "$SPT" --attach-mode tracepoint -q -d 0.3
	assert_success
	assert_output --partial "Attach mode: tracepoint (as asked)"
	run "$SPT" --attach-mode kprobe -q
	[ "$status" -eq 2 ]
	assert_detached
}

# Both tracers at once on one workload: violations come from the same
# tracepoint in both modes, so they must agree exactly, per kind; only where
# the would-stall ends differs.
@test "tracepoint and fentry mode at once on one workload: the same violations per kind; both account every one" {
	fentry_loads || skip "fentry programs do not load on this kernel (see: stablepage-trace features)"
	make_fs ext4
	start_tracer --attach-mode tracepoint --json -q --dev "$LOOP"
	local tp_out=$TRACE_OUT tp_pid=$TRACER_PID
	"$SPT" --attach-mode fentry --json -q --dev "$LOOP" > "$BATS_TEST_TMPDIR/fentry.out" 2> "$BATS_TEST_TMPDIR/fentry.err" &
	SECOND_PID=$!
	for _ in $(seq 200); do grep -q '^Tracing' "$BATS_TEST_TMPDIR/fentry.err" && break; sleep 0.1; done
	grep -q '^Attach mode: fentry' "$BATS_TEST_TMPDIR/fentry.err"
	"$WAC" -p B -d 3 "$MNT/f" > /dev/null
	"$WAC" -p A -d 2 "$MNT/g" > /dev/null
	sync
	kill -INT "$SECOND_PID"; wait "$SECOND_PID"; SECOND_PID=
	stop_tracer
	local tp fe
	for f in "$tp_out" "$BATS_TEST_TMPDIR/fentry.out"; do
		tail -n1 "$f" | jq -c '{mode: .attach_mode, v: .violations, untimed: .would_stall_untimed,
			pending: .would_stall_pending, timed: ([.histograms[] | select(.name == "would-stall") | .count] | add // 0)}'
	done
	[ "$(tail -n1 "$tp_out" | jq -r .attach_mode)" = tracepoint ]
	[ "$(tail -n1 "$BATS_TEST_TMPDIR/fentry.out" | jq -r .attach_mode)" = fentry ]
	tp=$(tail -n1 "$tp_out" | jq -c .violations)
	fe=$(tail -n1 "$BATS_TEST_TMPDIR/fentry.out" | jq -c .violations)
	[ "$tp" = "$fe" ]
	[ "$(tail -n1 "$tp_out" | jq '.violations.mmap > 0 and .violations.write > 0')" = true ]
	for f in "$tp_out" "$BATS_TEST_TMPDIR/fentry.out"; do
		tail -n1 "$f" | jq -e '([.histograms[] | select(.name == "would-stall") | .count] | add // 0) as $timed |
			$timed > 0 and $timed + .would_stall_untimed + .would_stall_pending == .violations_total'
	done
	assert_detached
}
