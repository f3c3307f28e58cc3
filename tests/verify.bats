#!/usr/bin/env bats
# --verify: pages changed between the issue and the completion of their
# write request, on real filesystems on loop devices.
load helpers

setup() { spt_setup; }
teardown() { spt_teardown; }

# expect_usage REGEX ARGS...: one stderr line matching REGEX, exit 2, nothing on stdout.
expect_usage() {
	local regex=$1 rc
	shift
	"$SPT" "$@" > "$BATS_TEST_TMPDIR/out" 2> "$BATS_TEST_TMPDIR/err" && rc=0 || rc=$?
	[ "$rc" -eq 2 ] || { echo "exit $rc"; cat "$BATS_TEST_TMPDIR/err"; return 1; }
	[ "$(wc -l < "$BATS_TEST_TMPDIR/err")" -eq 1 ] || { cat "$BATS_TEST_TMPDIR/err"; return 1; }
	grep -Eq -- "$regex" "$BATS_TEST_TMPDIR/err" || { cat "$BATS_TEST_TMPDIR/err"; return 1; }
	[ ! -s "$BATS_TEST_TMPDIR/out" ]
}

# verified PROFILE STABLE ARGS...: ext4 (with stable writes when STABLE is
# "stable"), the tracer with --verify ARGS, wac PROFILE for 3 s; sets
# WAC_PID and FILE, the summary in TRACE_OUT.
verified() {
	local profile=$1 stable=$2
	shift 2
	make_fs ext4 $stable
	FILE=$MNT/f
	start_tracer --json -q --dev "$LOOP" "$@"
	"$WAC" -p "$profile" -t 2 -d 3 "$FILE" > "$BATS_TEST_TMPDIR/wac.out" &
	WAC_PID=$!
	wait "$WAC_PID"
	stop_tracer
	summary '.verify | del(.devices, .changed)'
	summary '.verify.changed[:5]'
}

# The totals add up: every page of a sampled request is verified,
# unverified or still in flight.
assert_pages_accounted() {
	run summary '.verify | .pages_seen == .pages_verified + .pages_unverified + .pages_in_flight'
	assert_output true
	[ "$(summary .verify.located)" = true ]
}

@test "--verify=0, negative or not a number: one line, exit 2" {
	expect_usage "invalid --verify '0'" --verify=0
	expect_usage "invalid --verify '-1'" --verify=-1
	expect_usage "invalid --verify 'often'" --verify=often
	expect_usage "invalid --verify '1.5'" --verify=1.5
}

@test "without --verify its programs are not loaded, and the summary has no verify key" {
	make_fs ext4
	start_tracer --json -q --dev "$LOOP"
	run attached_programs
	refute_output --partial tp_verify_
	stop_tracer
	[ "$(summary 'has("verify")')" = false ]
	assert_detached
}

@test "O_DIRECT buffer changed in flight (wac -p G): direct pages on the writer and its file" {
	verified G "" --verify=1
	assert_pages_accounted
	[ "$(summary .verify.changed_by_kind.direct)" -gt 0 ]
	# The busiest direct row is the writer's, on its file, at a page offset
	# inside it (64 KiB: wac's default size).
	run summary -r --argjson pid "$WAC_PID" '[.verify.changed[] | select(.kind == "direct")][0] |
		[.pid == $pid, .comm, .path, .last_offset < 65536, .last_offset % 4096] | @tsv'
	assert_output "true	wac	$FILE	true	0"
	assert_detached
}

@test "the same O_DIRECT writes without the racing thread (wac -p H): none changed" {
	verified H "" --verify=1
	assert_pages_accounted
	[ "$(summary '.verify.devices | map(select(.kind == "direct") | .verified) | add')" -gt 0 ]
	[ "$(summary .verify.pages_changed)" -eq 0 ]
	assert_detached
}

@test "ext4, mmap profile, --verify=1: mmap pages changed in flight; with stable writes none" {
	verified B "" --verify=1
	assert_pages_accounted
	[ "$(summary .verify.changed_by_kind.mmap)" -gt 0 ]
	run summary -r --argjson pid "$WAC_PID" '[.verify.changed[] | select(.kind == "mmap")][0] |
		[.pid == $pid, .path] | @tsv'
	assert_output "true	$FILE"
	run_cleanup
	verified B stable --verify=1
	assert_pages_accounted
	[ "$(summary .verify.pages_verified)" -gt 0 ]
	[ "$(summary '.verify.changed_by_kind | .mmap + .file + .direct')" -eq 0 ]
	assert_detached
}

@test "ext4, write() profile, --verify=1: file pages changed in flight; with stable writes none" {
	verified A "" --verify=1
	assert_pages_accounted
	[ "$(summary .verify.changed_by_kind.file)" -gt 0 ]
	run_cleanup
	verified A stable --verify=1
	assert_pages_accounted
	[ "$(summary .verify.pages_verified)" -gt 0 ]
	[ "$(summary '.verify.changed_by_kind | .mmap + .file + .direct')" -eq 0 ]
	assert_detached
}

@test "--delta --verify: each interval's verify counts, adding up to the summary's" {
	verified G "" --verify=1 --delta 0.5
	run jq -s -e '[.[] | select(.type == "interval")] | length >= 2 and all(.delta)' "$TRACE_OUT"
	assert_output true
	# The counters and the rows are sums of the deltas; pages in flight a state.
	for key in requests_seen requests_sampled pages_seen pages_verified pages_changed \
		pages_unverified; do
		run jq -s -e --arg k "$key" '([.[] | select(.type == "interval") | .verify[$k]] | add)
			== (.[-1].verify[$k])' "$TRACE_OUT"
		[ "$output" = true ] || { echo "$key: deltas do not add up"; return 1; }
	done
	run jq -s -e '([.[] | select(.type == "interval") | .verify.devices[] |
			select(.kind == "direct") | .changed] | add) ==
		(.[-1].verify.devices | map(select(.kind == "direct") | .changed) | add)' "$TRACE_OUT"
	assert_output true
	run jq -s -e '.[-2].verify.pages_in_flight == .[-1].verify.pages_in_flight' "$TRACE_OUT"
	assert_output true
	assert_pages_accounted
	assert_detached
}

@test "--verify (1 in 16): requests sampled, pages counted; promtool accepts the metrics" {
	local prom=$BATS_TEST_TMPDIR/spt.prom
	verified B "" --verify --prom-file "$prom"
	[ "$(summary .verify.every)" -eq 16 ]
	run summary '.verify | .requests_sampled > 0 and .requests_sampled <= .requests_seen'
	assert_output true
	assert_pages_accounted
	run promtool check metrics < "$prom"
	assert_success
	# Which kind a sampled page gets depends on whether it was violated in
	# flight (mmap, file) or not (file): any kind, as long as it is known.
	grep -Eq '^stablepage_pages_verified_total\{device="loop[0-9]+",kind="(file|mmap|metadata)"\} [1-9]' "$prom"
	grep -q '^# TYPE stablepage_pages_changed_in_flight_total counter' "$prom"
	assert_detached
}
