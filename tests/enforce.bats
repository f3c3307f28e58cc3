#!/usr/bin/env bats
# enforce --native: the kernel's stable writes on real loop devices, checked
# by the tracer itself; the sysfs values always come back.
load helpers

STATE=/run/stablepage-trace/enforce.state

setup() {
	spt_setup
	[ ! -e "$STATE" ] || { echo "a stale $STATE would make every run refuse"; return 1; }
}
teardown() {
	"$SPT" enforce --restore 2>/dev/null || true
	spt_teardown
}

# stable_writes_of /dev/loopN
stable_writes_of() {
	cat /sys/block/"${1#/dev/}"/queue/stable_writes
}

# enforce_profile FSTYPE PROFILE: --remount makes the fs stable: no violation, stable waits.
enforce_profile() {
	make_fs "$1"
	[ "$(stable_writes_of "$LOOP")" = 0 ]
	start_tracer enforce --native --dev "$LOOP" --remount --json -q
	[ "$(stable_writes_of "$LOOP")" = 1 ]
	grep -q "mounted $MNT again" "$TRACE_ERR"
	"$WAC" -p "$2" -d 3 "$MNT/f" > /dev/null
	stop_tracer
	cat "$TRACE_ERR"
	[ "$(summary .violations_total)" -eq 0 ]
	[ "$(summary ".devices[] | select(.dev == \"$DEV\") | .stable_writes")" = true ]
	[ "$(summary ".devices[] | select(.dev == \"$DEV\") | .stable_waits")" -gt 0 ]
	grep -Eq "^enforce: $MNT \($1 on ${LOOP#/dev/}\): stable writes in effect; 0 violations, [1-9][0-9]* stable waits" "$TRACE_ERR"
	[ "$(stable_writes_of "$LOOP")" = 0 ]
	[ ! -e "$STATE" ]
	assert_detached
}

@test "enforce --native --remount, ext4, write(): 0 violations, stable waits, value restored" {
	enforce_profile ext4 A
}

@test "enforce --native --remount, ext4, mmap: 0 violations, stable waits, value restored" {
	enforce_profile ext4 B
}

@test "enforce --native --remount, xfs, write(): 0 violations, stable waits, value restored" {
	enforce_profile xfs A
}

@test "enforce --native --remount, xfs, mmap: 0 violations, stable waits, value restored" {
	enforce_profile xfs B
}

@test "enforce without --remount: the mounted filesystem is reported not in effect, violations go on" {
	make_fs ext4
	start_tracer enforce --native --dev "$LOOP" --json -q
	grep -q "^enforce: $MNT (ext4 on ${LOOP#/dev/}) was mounted before stable_writes was set" "$TRACE_ERR"
	"$WAC" -p B -d 3 "$MNT/f" > /dev/null
	stop_tracer
	[ "$(summary .violations.mmap)" -gt 0 ]
	grep -q "^enforce: $MNT (ext4 on ${LOOP#/dev/}): stable writes NOT in effect" "$TRACE_ERR"
	[ "$(stable_writes_of "$LOOP")" = 0 ]
}

@test "enforce --remount refuses a busy filesystem and names who holds it" {
	make_fs ext4
	(cd "$MNT" && exec sleep 60) &
	local holder=$!
	on_cleanup "kill $holder"
	sleep 0.2
	run "$SPT" enforce --native --dev "$LOOP" --remount -q -d 0.5
	assert_success
	assert_output --regexp "cannot remount $MNT: busy, used by pid [0-9 ,()a-z]*$holder \\(sleep\\)"
	assert_output --partial "stable writes NOT in effect"
	[ "$(stable_writes_of "$LOOP")" = 0 ]
	mountpoint -q "$MNT"
}

@test "kill -9 leaves the state file; a new run refuses; enforce --restore restores the value" {
	make_fs ext4
	start_tracer enforce --native --dev "$LOOP" -q
	[ "$(stable_writes_of "$LOOP")" = 1 ]
	kill -KILL "$TRACER_PID"
	wait "$TRACER_PID" || true
	TRACER_PID=
	[ "$(stable_writes_of "$LOOP")" = 1 ]
	[ -s "$STATE" ]
	run "$SPT" enforce --native --dev "$LOOP" -q -d 1
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	assert_output --partial "stablepage-trace enforce --restore"
	run "$SPT" enforce --restore
	assert_success
	assert_output "enforce: ${LOOP#/dev/}: stable_writes restored to 0"
	[ "$(stable_writes_of "$LOOP")" = 0 ]
	[ ! -e "$STATE" ]
	run "$SPT" enforce --restore
	assert_success
	assert_output --partial "nothing to restore"
	assert_detached
}

@test "enforce --persist keeps the value at exit until enforce --restore" {
	make_fs ext4
	run "$SPT" enforce --native --dev "$LOOP" --persist -q -d 0.5
	assert_success
	[ "$(stable_writes_of "$LOOP")" = 1 ]
	[ -s "$STATE" ]
	run "$SPT" enforce --restore
	assert_success
	[ "$(stable_writes_of "$LOOP")" = 0 ]
}
