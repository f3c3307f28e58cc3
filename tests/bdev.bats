#!/usr/bin/env bats
# A block device's own page cache: write() to /dev/loopN and stores through a
# mapping of it, counted on the device itself (not the bdev pseudo-filesystem),
# with /dev/loopN as the file, and selected by --dev.
load helpers

setup() { spt_setup; }
teardown() { spt_teardown; }

# raw_loop: a loop device on a 64 MiB image, no filesystem; sets RAW
# (/dev/loopN) and RAW_DEV (MAJ:MIN).
raw_loop() {
	local img
	img=$(mktemp -p "$BATS_TEST_TMPDIR" raw.XXXX.img)
	on_cleanup "rm -f $img"
	truncate -s 64M "$img"
	RAW=$(losetup -f --show "$img")
	on_cleanup "losetup -d $RAW"
	RAW_DEV=$(lsblk -dno MAJ:MIN "$RAW" | tr -d ' ')
}

# trace_raw PROFILE KIND: the reproducer on the raw device, traced with
# --dev on it; every event and row is the device's, under its own name.
# Two pages, not wac's 16: a store is an mmap violation only if it is the
# first to its page after msync write-protected it and before the I/O ends,
# so over 16 pages a 3 s run can see none.
trace_raw() {
	raw_loop
	start_tracer --json --dev "${RAW#/dev/}"
	"$WAC" -p "$1" -t 2 -d 3 -s 8K "$RAW" > "$BATS_TEST_TMPDIR/wac.out"
	stop_tracer
	[ "$(summary ".violations.$2")" -gt 0 ]
	[ "$(summary .violations_total)" = "$(summary ".violations.$2")" ]
	run events -r --arg dev "$RAW_DEV" --arg path "$RAW" --arg name "${RAW#/dev/}" --arg kind "$2" '
		select(.dev != $dev or .path != $path or .devname != $name or .fstype != "bdev" or
		       .kind != $kind or .comm != "wac" or .ino != 0 or .block != .index) |
		"misattributed: \(.dev) \(.path) \(.devname) \(.fstype) \(.kind) \(.comm) \(.block)"'
	assert_success
	assert_output ""
	[ "$(events -r .dev | sort -u)" = "$RAW_DEV" ]
	run summary -r '.devices[] | [.dev, .devname, .fstype, (.violations | add)] | @tsv'
	assert_output "$RAW_DEV	${RAW#/dev/}	bdev	$(summary .violations_total)"
	run summary -r '.top_files[] | [.dev, .ino, .path, .total] | @tsv'
	assert_output "$RAW_DEV	0	$RAW	$(summary .violations_total)"
	assert_detached
}

@test "write() to /dev/loopN: write violations on that device, path /dev/loopN" {
	trace_raw A write
}

@test "stores through a mapping of /dev/loopN: mmap violations on that device, path /dev/loopN" {
	trace_raw B mmap
}

@test "--dev of another device selects none of /dev/loopN's violations" {
	raw_loop
	local traced=$RAW
	raw_loop
	start_tracer --json --dev "$RAW"
	"$WAC" -p A -t 2 -d 2 "$traced" > "$BATS_TEST_TMPDIR/wac.out"
	stop_tracer
	[ "$(summary .violations_total)" = 0 ]
	[ "$(summary '.devices | length')" = 0 ]
}

# The kernel's decision for a device's own cache is AS_STABLE_WRITES of its
# mapping, set when the device appears (bdev_add): a later write to
# queue/stable_writes does not reach it, so nothing waits and the writes
# stay violations (6.1.192 and 6.18 measured: docs/semantics.md).
@test "stable_writes=1 written after the device appeared: still violations, no stable wait" {
	raw_loop
	local name=${RAW#/dev/}
	echo 1 > "/sys/block/$name/queue/stable_writes"
	on_cleanup "echo 0 > /sys/block/$name/queue/stable_writes"
	start_tracer --json --dev "$name"
	"$WAC" -p A -t 2 -d 2 "$RAW" > "$BATS_TEST_TMPDIR/wac.out"
	stop_tracer
	[ "$(summary .violations.write)" -gt 0 ]
	[ "$(summary .stable_waits)" = 0 ]
	[ "$(summary .stable_dirtied)" = 0 ]
	"$SPT" features | grep -q '^  stable writes: '
}
