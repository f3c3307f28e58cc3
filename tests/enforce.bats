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
	# Each wait and stable dirtying is on its device's row too (per-CPU
	# counts added in user space), exactly.
	[ "$(summary '[(.devices | map(.stable_waits, .other_waits, .stable_dirtied) | add)]')" = \
	  "$(summary '[.stable_waits + .other_waits + .stable_dirtied]')" ]
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
	on_cleanup "kill_wait $holder"
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

# mount_line DIR: DIR's mountinfo line without the mount's and its parent's
# ids (a new mount has new ones); peer group numbers as "shared".
mount_line() {
	awk -v m="$1" '$5 == m { $1 = $2 = ""; gsub(/shared:[0-9]+/, "shared"); print }' \
		/proc/self/mountinfo
}
mount_id() {
	awk -v m="$1" '$5 == m { print $1 }' /proc/self/mountinfo
}

# remount_keeps FSTYPE OPTIONS [PROPAGATION]: mounted with OPTIONS, --remount
# mounts it again with exactly the same mountinfo line.
remount_keeps() {
	make_fs "$1"
	umount "$MNT"
	mount -o "$2" "$LOOP" "$MNT"
	[ -z "${3:-}" ] || mount --make-"$3" "$MNT"
	local before
	before=$(mount_line "$MNT")
	echo "before: $before"
	run "$SPT" enforce --native --dev "$LOOP" --remount -q -d 0.5
	assert_success
	assert_output --partial "mounted $MNT again: stable writes in effect there"
	echo "after:  $(mount_line "$MNT")"
	[ "$(mount_line "$MNT")" = "$before" ]
	[ "$(stable_writes_of "$LOOP")" = 0 ]
	[ ! -e "$STATE" ]
}

@test "enforce --remount, ext4: nosymfollow, noexec, lazytime, shared and the superblock's options are kept exactly" {
	remount_keeps ext4 nosuid,nodev,noexec,noatime,nosymfollow,lazytime,commit=17,errors=remount-ro shared
}

@test "enforce --remount, xfs: ro, strictatime, nodiratime, unbindable and logbufs are kept exactly" {
	remount_keeps xfs ro,strictatime,nodiratime,nosymfollow,logbufs=4 unbindable
}

@test "enforce --remount refuses a mount of a subdirectory and one with a mount inside, unmounting nothing" {
	make_fs ext4
	mkdir "$MNT/sub" "$BATS_TEST_TMPDIR/part"
	mount --bind "$MNT/sub" "$BATS_TEST_TMPDIR/part"
	on_cleanup "umount $BATS_TEST_TMPDIR/part"
	umount "$MNT"
	local id
	id=$(mount_id "$BATS_TEST_TMPDIR/part")
	run "$SPT" enforce --native --dev "$LOOP" --remount -q -d 0.5
	assert_success
	assert_output --partial "cannot remount $BATS_TEST_TMPDIR/part: it shows /sub of its filesystem"
	refute_output --partial "unmounting"
	[ "$(mount_id "$BATS_TEST_TMPDIR/part")" = "$id" ]
	umount "$BATS_TEST_TMPDIR/part"
	mount "$LOOP" "$MNT"
	mount -t tmpfs none "$MNT/sub"
	on_cleanup "umount $MNT/sub"
	id=$(mount_id "$MNT")
	run "$SPT" enforce --native --dev "$LOOP" --remount -q -d 0.5
	assert_success
	assert_output --partial "cannot remount $MNT: $MNT/sub is mounted inside it; unmount it first"
	refute_output --partial "unmounting"
	[ "$(mount_id "$MNT")" = "$id" ]
	[ "$(stable_writes_of "$LOOP")" = 0 ]
}

@test "enforce --remount refuses a slave mount: a fresh mount would not be one" {
	make_fs ext4
	mount --make-shared "$MNT"
	# In a new mount namespace, the copy of MNT is a slave of ours (master:N).
	run unshare --mount --propagation slave "$SPT" enforce --native --dev "$LOOP" --remount -q -d 0.5
	assert_success
	assert_output --regexp "cannot remount $MNT: a fresh mount cannot be put back in its place in the propagation tree \\(master:[0-9]+\\)"
	refute_output --partial "unmounting"
	mountpoint -q "$MNT"
	[ "$(stable_writes_of "$LOOP")" = 0 ]
}

# run_stopped_at POINT ARGS...: the tool started with ARGS, stopped by its
# fault point POINT; sets STOPPED (its pid) and STOPPED_ERR (its stderr).
run_stopped_at() {
	local point=$1 s
	shift
	STOPPED_ERR=$BATS_TEST_TMPDIR/stopped.err
	SPT_TEST_FAULT=stop:$point "$SPT" "$@" 2> "$STOPPED_ERR" &
	STOPPED=$!
	on_cleanup "kill -KILL $STOPPED 2>/dev/null"
	for _ in $(seq 600); do
		s=$(state "$STOPPED")
		[ "$s" = T ] && return 0
		[ -n "$s" ] || break
		sleep 0.1
	done
	echo "the tool did not stop at $point:"
	cat "$STOPPED_ERR"
	return 1
}

@test "enforce --remount refuses a mount point whose path became a symbolic link" {
	make_fs ext4
	umount "$MNT"
	mkdir -p "$BATS_TEST_TMPDIR/a/mnt"
	mount "$LOOP" "$BATS_TEST_TMPDIR/a/mnt"
	on_cleanup "umount $BATS_TEST_TMPDIR/b/mnt"
	local id
	id=$(mount_id "$BATS_TEST_TMPDIR/a/mnt")
	# Stopped with mountinfo read: the path is swapped for a symlink to
	# the same directory, under the tool's feet.
	run_stopped_at found enforce --native --dev "$LOOP" --remount -q -d 0.5
	mv "$BATS_TEST_TMPDIR/a" "$BATS_TEST_TMPDIR/b"
	ln -s b "$BATS_TEST_TMPDIR/a"
	kill -CONT "$STOPPED"
	wait "$STOPPED"
	cat "$STOPPED_ERR"
	grep -q "^stablepage-trace: cannot remount $BATS_TEST_TMPDIR/a/mnt: its path has a symbolic link in it" "$STOPPED_ERR"
	! grep -q unmounting "$STOPPED_ERR"
	[ "$(mount_id "$BATS_TEST_TMPDIR/b/mnt")" = "$id" ]
	[ "$(stable_writes_of "$LOOP")" = 0 ]
}

@test "killed between unmount and mount: the state file says so, enforce --restore mounts it back" {
	make_fs ext4
	umount "$MNT"
	mount -o nosymfollow,noexec,commit=17 "$LOOP" "$MNT"
	local before
	before=$(mount_line "$MNT")
	run env SPT_TEST_FAULT=kill:unmounted "$SPT" enforce --native --dev "$LOOP" --remount -q -d 5
	[ "$status" -eq 137 ]
	! mountpoint -q "$MNT"
	grep -Eq "^unmounted $DEV (private|shared) $LOOP $MNT ext4 " "$STATE"
	run "$SPT" enforce --native --dev "$LOOP" --remount -q -d 1
	[ "$status" -eq 1 ]
	assert_output --partial "stablepage-trace enforce --restore"
	! mountpoint -q "$MNT"
	run "$SPT" enforce --restore
	assert_success
	assert_line "enforce: ${LOOP#/dev/}: stable_writes restored to 0"
	assert_line --partial "enforce: $MNT mounted again (ext4 on $LOOP"
	[ "$(mount_line "$MNT")" = "$before" ]
	[ "$(stable_writes_of "$LOOP")" = 0 ]
	[ ! -e "$STATE" ]
	assert_detached
}

@test "two enforce runs do not interleave: the second refuses while the first holds the lock" {
	make_fs ext4
	local id
	id=$(mount_id "$MNT")
	# The first run has the lock and has changed nothing yet: without the
	# lock, nothing would stop the second.
	run_stopped_at locked enforce --native --dev "$LOOP" --remount -q -d 1
	[ ! -e "$STATE" ]
	run "$SPT" enforce --native --dev "$LOOP" --remount -q -d 1
	[ "$status" -eq 1 ]
	assert_output "stablepage-trace: another enforce run (pid $STOPPED) holds /run/stablepage-trace/enforce.lock; wait for it to end"
	run "$SPT" enforce --restore
	[ "$status" -eq 1 ]
	assert_output --partial "another enforce run (pid $STOPPED)"
	[ "$(stable_writes_of "$LOOP")" = 0 ]
	[ "$(mount_id "$MNT")" = "$id" ]
	kill -CONT "$STOPPED"
	wait "$STOPPED"
	grep -q "mounted $MNT again: stable writes in effect there" "$STOPPED_ERR"
	[ ! -e "$STATE" ]
}
