#!/usr/bin/env bats
# Violations whose write then failed (failed_after_violation), judged by
# devices that reject the write after write() returned success: a loop
# device whose backing filesystem is full (every kernel, this host too) and,
# where scsi_debug loads (the lab guest), a disk with T10 DIF/DIX whose guard
# check fails when a page changed in flight. The first cases of the
# integrity lab (scripts/lib.bash: dix_disk, dix_fs, full_backing_fs).
load helpers

setup() { spt_setup; }
teardown() { spt_teardown; }

# trace_profile_a DISK [TRACER ARG...]: the write() profile on $MNT for 4 s
# under the tracer (JSON summary, Prometheus file PROM); FSYNC_FAILED is
# true when fsync() on the file then reported the failed writeback.
trace_profile_a() {
	local disk=$1
	shift
	PROM=$BATS_TEST_TMPDIR/stablepage.prom
	start_tracer --json -q --dev "$disk" --prom-file "$PROM" "$@"
	"$WAC" -p A -d 4 "$MNT/f"
	FSYNC_FAILED=false
	sync "$MNT/f" 2> /dev/null || FSYNC_FAILED=true
	stop_tracer
	assert_detached
	summary -c '{attach_mode, violations_total, failed_after_violation, would_stall_untimed,
		would_stall_pending}'
}

# metric NAME{LABELS}: the value of one sample line in PROM.
metric() {
	awk -v m="$1" 'index($0, m " ") == 1 { print $NF }' "$PROM"
}

# assert_failed_rows DISK: the total is > 0 and at most the violations;
# the device, process and file rows add up to it (one device, a few
# writers: all within --top), wac's own and the disk's are > 0, and the
# Prometheus samples add up to it too, which promtool accepts.
assert_failed_rows() {
	local n
	n=$(summary .failed_after_violation)
	[ "$n" -gt 0 ]
	[ "$n" -le "$(summary .violations_total)" ]
	[ "$(summary '[.devices[].failed_after_violation] | add')" = "$n" ]
	[ "$(summary '[.top_processes[].failed_after_violation] | add')" = "$n" ]
	[ "$(summary '[.top_files[].failed_after_violation] | add')" = "$n" ]
	[ "$(summary '[.top_processes[] | select(.comm == "wac") | .failed_after_violation] | add')" -gt 0 ]
	run promtool check metrics < "$PROM"
	assert_success
	[ "$(metric "stablepage_failed_after_violation_total{device=\"$1\",fstype=\"ext4\"}")" -gt 0 ]
	[ "$(awk '/^stablepage_failed_after_violation_total\{/ { n += $NF } END { print n + 0 }' "$PROM")" = "$n" ]
}

# assert_would_stall_accounted: each violation timed, untimed or in flight,
# failed or not.
assert_would_stall_accounted() {
	summary -e '([.histograms[] | select(.name == "would-stall") | .count] | add // 0) +
		.would_stall_untimed + .would_stall_pending == .violations_total'
}

@test "loop over a full filesystem, stable writes off: violations whose write failed, per device, process and file" {
	full_backing_fs "$BATS_TEST_TMPDIR" ext4
	trace_profile_a "$LOOP"
	# the device failed writes; write() had returned success
	[ "$FSYNC_FAILED" = true ]
	[ "$(summary '.violations.write')" -gt 0 ]
	assert_failed_rows "${LOOP#/dev/}"
	assert_would_stall_accounted
}

@test "loop over a full filesystem, stable writes on: writes fail, none after a violation" {
	full_backing_fs "$BATS_TEST_TMPDIR" ext4 stable
	trace_profile_a "$LOOP"
	[ "$FSYNC_FAILED" = true ]
	[ "$(summary .violations_total)" = 0 ]
	[ "$(summary .failed_after_violation)" = 0 ]
	[ "$(metric "stablepage_failed_after_violation_total{device=\"${LOOP#/dev/}\",fstype=\"ext4\"}")" = 0 ]
}

# dix_ext4 STABLE: ext4 on a fresh DIX disk, skipped where there is none.
dix_ext4() {
	dix_fs "$BATS_TEST_TMPDIR" 128 ext4 "$1" ||
		skip "no scsi_debug here (the lab guest has it: make vmtest)"
}

# pi_stable_anyway: the kernel keeps a disk with integrity checksums stable
# whatever its stable_writes says (6.11+; `features`, docs/semantics.md).
pi_stable_anyway() {
	"$SPT" features --json | jq -e '.layouts.pi_disk_stable_writes_0 | startswith("stable")' > /dev/null
}

# assert_dix_clean: nothing changed under writeback, nothing failed.
assert_dix_clean() {
	[ "$(guard_failures)" = 0 ]
	[ "$FSYNC_FAILED" = false ]
	[ "$(summary .violations_total)" = 0 ]
	[ "$(summary .failed_after_violation)" = 0 ]
}

@test "DIX disk, stable writes off, tracepoint mode: guard failures, and as many violations counted failed (6.11+: none, stable anyway)" {
	dix_ext4 0
	trace_profile_a "$DIX_DISK" --attach-mode tracepoint
	# 6.11+: stable_writes reads 0, yet the mount is stable: none, as when on.
	if pi_stable_anyway; then
		[ "$(cat "/sys/block/$DIX_DISK/queue/stable_writes")" = 0 ]
		assert_dix_clean
		return
	fi
	echo "guard failures: $(guard_failures)"
	[ "$(guard_failures)" -gt 0 ]
	[ "$FSYNC_FAILED" = true ]
	assert_failed_rows "$DIX_DISK"
	assert_would_stall_accounted
	# A failed request fails at its first bad sector: at least one violated
	# folio per guard failure.
	[ "$(summary .failed_after_violation)" -ge "$(guard_failures)" ]
}

@test "DIX disk, stable writes off, fentry mode: failures seen at block_rq_complete, counted at folio_end_writeback (6.11+: none)" {
	fentry_loads || skip "fentry does not load here (the lab guest: make vmtest)"
	dix_ext4 0
	trace_profile_a "$DIX_DISK" --attach-mode fentry
	if pi_stable_anyway; then
		assert_dix_clean
		return
	fi
	echo "guard failures: $(guard_failures)"
	[ "$(guard_failures)" -gt 0 ]
	assert_failed_rows "$DIX_DISK"
	assert_would_stall_accounted
	[ "$(summary .failed_after_violation)" -ge "$(guard_failures)" ]
}

@test "DIX disk, stable writes on: no violation, no guard failure, none failed" {
	dix_ext4 1
	trace_profile_a "$DIX_DISK"
	assert_dix_clean
}

# The integrity lab's other devices (lab/cell.bash): dm-integrity without a
# journal and md raid1, each on loop devices, where their modules load (the
# lab guest). A cell prints its CELL_FIELDS; lab_cell sets F to them.
lab_cell() {
	local line name i=0
	source "$ROOT/lab/cell.bash"
	# shellcheck disable=SC2034 # cell's inputs
	build=$BUILD CELL_DIR=$BATS_TEST_TMPDIR CELL_SECS=${CELL_SECS:-3}
	line=$(cell "$@")
	IFS=$'\t' read -ra F <<< "$line"
	for name in $CELL_FIELDS; do
		echo "$name=${F[$i]}"
		i=$((i + 1))
	done
	# the wrong blocks: BLOCK INO PAGE
	head -n 20 "$BATS_TEST_TMPDIR/owners"
}

# field NAME: the value of one of the CELL_FIELDS in F.
field() {
	local i=0 name
	for name in $CELL_FIELDS; do
		[ "$name" = "$1" ] && echo "${F[$i]}" && return
		i=$((i + 1))
	done
	return 1
}

# lab_cell_until_errors TRIES KIND FSTYPE PROFILE STABLE: lab_cell on a fresh
# device again, at most TRIES runs, until the device counted errors (a raced
# write the device kept); RUNS says how many it took. Whether one run's
# raced writes leave a wrong block depends on the guest's scheduling
# (docs/integrity.md, "When nothing is found"), not on the tool.
lab_cell_until_errors() {
	local tries=$1
	shift
	for RUNS in $(seq "$tries"); do
		lab_cell "$@"
		echo "run $RUNS of at most $tries: device errors $(field device_errors)"
		[ "$(field device_errors)" -gt 0 ] && return 0
		run_cleanup
	done
}

# assert_device_errors_seen: the device counted errors, and the tool saw
# the writes that made them: violations whose write failed, or pages changed
# in flight, on the same device.
assert_device_errors_seen() {
	[ "$(field device_errors)" -gt 0 ]
	[ "$(field failed)" -gt 0 ] || [ "$(field changed)" -gt 0 ]
}

need_integrity() {
	command -v integritysetup > /dev/null || skip "no integritysetup (cryptsetup-bin: make deps)"
	lab_modules dm-mod dm-integrity ||
		skip "dm-integrity does not load here (the lab guest has it: make vmtest)"
}

need_raid1() {
	command -v mdadm > /dev/null || skip "no mdadm (make deps)"
	lab_modules md-mod raid1 || skip "md raid1 does not load here (the lab guest has it: make vmtest)"
}

@test "dm-integrity, stable writes on: no violation, none changed in flight, no checksum mismatch" {
	need_integrity
	lab_cell integrity ext4 A 1
	[ "$(field write)" = 0 ]
	[ "$(field mmap)" = 0 ]
	[ "$(field changed)" = 0 ]
	[ "$(field device_errors)" = 0 ]
	[ "$(field bad_blocks)" = 0 ]
}

# assert_wrong_blocks_explained: every wrong block the device kept is in a
# file the tool saw pages of changed in flight, or, when it is in none
# (metadata), the tool saw metadata or kernel pages changed.
assert_wrong_blocks_explained() {
	[ "$(field on_changed)" -le "$(field bad_blocks)" ]
	[ "$(field residual)" = 0 ] || [[ "$(field changed_by_kind)" =~ metadata|kernel ]]
	[ "$(field device_errors)" = 0 ] || [ "$(field changed)" -gt 0 ]
}

# How often one run's raced writes leave a wrong block to find is a matter of
# the guest's scheduling (docs/integrity.md: some runs none): these cases run
# the cell again on a fresh device, a bounded number of times, until the
# device counted errors, then assert that the tool saw the writes that made
# them and that every wrong block is explained by it. dm-integrity's
# mismatches are counted (dmsetup status) from the reads while wac runs and
# at rest, before the final sync's rewrites are read; raid1's by `check`
# (mismatch_cnt) before anything repairs.
@test "dm-integrity, stable writes off: mismatches, pages changed in flight; mismatches read back are on them" {
	need_integrity
	lab_cell_until_errors 5 integrity ext4 A 0
	[ "$(field write)" -gt 0 ]
	[ "$(field changed)" -gt 0 ]
	echo "mismatches: $(field device_errors), blocks: $(field bad_blocks), runs: $RUNS"
	assert_device_errors_seen
	assert_wrong_blocks_explained
}

@test "dm-integrity, O_DIRECT buffers changed in flight (wac -p G): mismatches; direct pages; in wac's file" {
	need_integrity
	lab_cell_until_errors 4 integrity ext4 G 1
	[[ "$(field changed_by_kind)" == *direct* ]]
	echo "mismatches: $(field device_errors), blocks: $(field bad_blocks), runs: $RUNS"
	assert_device_errors_seen
	# no metadata changes here: every wrong block is in wac's file
	[ "$(field on_changed)" = "$(field bad_blocks)" ]
	assert_wrong_blocks_explained
}

@test "md raid1, O_DIRECT buffers changed in flight (wac -p G): mismatch_cnt; direct pages; in wac's file" {
	need_raid1
	lab_cell_until_errors 4 raid1 ext4 G 1
	[[ "$(field changed_by_kind)" == *direct* ]]
	echo "mismatch_cnt: $(field device_errors), blocks: $(field bad_blocks), runs: $RUNS"
	assert_device_errors_seen
	[ "$(field bad_blocks)" -gt 0 ]
	[ "$(field on_changed)" = "$(field bad_blocks)" ]
	assert_wrong_blocks_explained
}

@test "md raid1, the same O_DIRECT writes without the racing thread (wac -p H): mirrors agree, none changed" {
	need_raid1
	lab_cell raid1 ext4 H 1
	[ "$(field device_errors)" = 0 ]
	[ "$(field changed)" = 0 ]
	[ "$(field bad_blocks)" = 0 ]
}
