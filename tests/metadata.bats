#!/usr/bin/env bats
# Metadata: a filesystem's buffers in its device's own page cache, dirtied
# while their folio is under writeback (kind metadata). Measured per
# filesystem in docs/lab/2026-12-07-metadata-and-bdev.md; wac -p M creates,
# appends to and deletes files with a syncfs() every 16 operations.
load helpers

setup() { spt_setup; }
teardown() { spt_teardown; }

# need_fs FSTYPE: skips where the kernel cannot mount it (vfat on this host).
need_fs() {
	grep -qw "$1" /proc/filesystems || modprobe "$1" 2> /dev/null ||
		skip "$1 is not in this kernel (the 6.1 guest has it: make vmtest)"
	command -v "mkfs.$1" > /dev/null || skip "no mkfs.$1"
}

# trace_metadata FSTYPE: the metadata profile on a fresh FSTYPE, traced with
# --dev; sets FS (the filesystem type the kernel mounted it as).
trace_metadata() {
	make_fs "$1"
	FS=$(findmnt -no FSTYPE "$MNT")
	start_tracer --json --dev "$LOOP"
	"$WAC" -p M -t 4 -d 3 -S 16 "$MNT" > "$BATS_TEST_TMPDIR/wac.out" &
	WAC_PID=$!
	wait "$WAC_PID"
	stop_tracer
}

# Every metadata event is the device's: its number, name, /dev path, the
# filesystem mounted on it, a block number; some were dirtied by the
# workload's own syscalls (others by the filesystem's kernel threads).
check_metadata() {
	[ "$(summary .violations.metadata)" -gt 0 ]
	run events -r --arg dev "$DEV" --arg path "$LOOP" --arg name "${LOOP#/dev/}" --arg fs "$FS" '
		select(.kind == "metadata") |
		select(.dev != $dev or .path != $path or .devname != $name or .fstype != $fs or
		       .ino != 0 or (.block | type) != "number") |
		"misattributed: \(.dev) \(.path) \(.devname) \(.fstype) \(.ino) \(.block)"'
	assert_success
	assert_output ""
	[ "$(events "select(.kind == \"metadata\" and .pid == $WAC_PID)" | wc -l)" -gt 0 ]
	[ "$(summary -r ".devices[] | select(.dev == \"$DEV\") | .violations.metadata")" -gt 0 ]
	[ "$(summary -r ".top_files[] | select(.path == \"$LOOP\") | .violations.metadata")" -gt 0 ]
	assert_detached
}

@test "ext2: bitmaps, descriptors, inode tables and directories changed under I/O" {
	trace_metadata ext2
	check_metadata
}

@test "ext4 without a journal: metadata changed under I/O" {
	trace_metadata ext4-nojournal
	check_metadata
}

@test "vfat: FAT and directory blocks changed under I/O" {
	need_fs vfat
	trace_metadata vfat
	check_metadata
}

# xfs keeps its metadata in its own buffer cache (xfs_buf), not in the
# device's page cache: nothing there is dirtied under writeback.
@test "xfs: no metadata violation (its buffers are not in the device's cache)" {
	trace_metadata xfs
	[ "$(summary .violations.metadata)" = 0 ]
	assert_detached
}

# btrfs' metadata is in its btree inode's mapping, not in the device's own
# page cache.
@test "btrfs: no metadata violation" {
	trace_metadata btrfs
	[ "$(summary .violations.metadata)" = 0 ]
	assert_detached
}

@test "the metadata kind in the text summary and the Prometheus file (promtool)" {
	make_fs ext2
	start_tracer -q --dev "$LOOP" --prom-file "$BATS_TEST_TMPDIR/m.prom"
	"$WAC" -p M -t 4 -d 2 -S 16 "$MNT" > "$BATS_TEST_TMPDIR/wac.out"
	stop_tracer
	grep -q '^Traced .* Violations: [0-9]* (mmap [0-9]*, write [0-9]*, other [0-9]*, metadata [1-9][0-9]*)$' "$TRACE_OUT"
	grep -q '^DEVICE .* OTHER   METADATA STABLE_WAITS$' "$TRACE_OUT"
	run promtool check metrics < "$BATS_TEST_TMPDIR/m.prom"
	assert_success
	grep -q '^stablepage_violations_total{.*kind="metadata"} [1-9]' "$BATS_TEST_TMPDIR/m.prom"
}
