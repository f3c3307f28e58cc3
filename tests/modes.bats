#!/usr/bin/env bats
# Attach modes: auto picks per attach point what loads; both modes see the
# same violations of the same workload.
load helpers

setup() { spt_setup; }
teardown() {
	[ -n "${SECOND_PID:-}" ] && kill -INT "$SECOND_PID" 2>/dev/null && wait "$SECOND_PID" 2>/dev/null
	spt_teardown
}

@test "--attach-mode auto says which mode and why; fentry where it loads, else forcing it fails in one line" {
	run "$SPT" -q -d 0.3
	assert_success
	if fentry_loads; then
		assert_output --regexp "Attach mode: fentry \(mmap violations where page_mkwrite returns \(filemap_page_mkwrite, block_page_mkwrite, iomap_page_mkwrite, [^)]*ext4_page_mkwrite[^)]*; other handlers: tracepoint\), write violations and wait counts from tracepoints, waits timed by folio_wait_writeback, writeback start/end per folio\)"
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

# Both tracers at once on one workload. write(): both count the same
# tracepoint, so they agree exactly. mmap: fentry mode decides where
# page_mkwrite returns, so a folio dirtied under writeback whose I/O ended
# before the handler returned is no violation there but is counted as
# mkwrite_io_ended; tracepoint mode counts it. So tracepoint mmap ==
# fentry mmap + mkwrite_io_ended, up to folios whose writeback ends while
# one of the two records them (a race each mode resolves on its own):
# measured 0-1 in ~1100, tolerance 1% + 2.
@test "tracepoint and fentry mode at once on one workload: same write violations, mmap ones explained, every one accounted" {
	fentry_loads || skip "fentry programs do not load on this kernel (see: stablepage-trace features)"
	local fs
	for fs in ext4 xfs; do
		make_fs "$fs"
		start_tracer --attach-mode tracepoint --time-all-waits --json -q --dev "$LOOP"
		local tp_out=$TRACE_OUT fe_out=$BATS_TEST_TMPDIR/fentry-$fs.out
		"$SPT" --attach-mode fentry --json -q --dev "$LOOP" > "$fe_out" 2> "$BATS_TEST_TMPDIR/fentry.err" &
		SECOND_PID=$!
		for _ in $(seq 200); do grep -q '^Tracing' "$BATS_TEST_TMPDIR/fentry.err" && break; sleep 0.1; done
		grep -q '^Attach mode: fentry' "$BATS_TEST_TMPDIR/fentry.err"
		"$WAC" -p B -d 3 "$MNT/f" > /dev/null
		"$WAC" -p A -d 2 "$MNT/g" > /dev/null
		sync
		interrupt_and_wait "$SECOND_PID"; SECOND_PID=
		stop_tracer
		local tp fe
		tp=$(tail -n1 "$tp_out")
		fe=$(tail -n1 "$fe_out")
		echo "$fs tracepoint: $(jq -c '{mode: .attach_mode, v: .violations}' <<< "$tp")"
		echo "$fs fentry:     $(jq -c '{mode: .attach_mode, v: .violations, io_ended: .mkwrite_io_ended}' <<< "$fe")"
		[ "$(jq -r .attach_mode <<< "$tp")" = tracepoint ]
		[ "$(jq -r .attach_mode <<< "$fe")" = fentry ]
		[ "$(jq '.violations.mmap > 0 and .violations.write > 0' <<< "$tp")" = true ]
		[ "$(jq .violations.write <<< "$tp")" = "$(jq .violations.write <<< "$fe")" ]
		[ "$(jq .violations.other <<< "$tp")" = "$(jq .violations.other <<< "$fe")" ]
		jq -e --argjson tp "$(jq .violations.mmap <<< "$tp")" '.violations.mmap > 0 and
			(($tp - .violations.mmap - .mkwrite_io_ended) | fabs) <= $tp / 100 + 2' <<< "$fe"
		# Every violation timed, untimed or in flight; every wait timed
		# or untimed (fentry: waits timed by the wait functions; the
		# tracepoint tracer times them all with --time-all-waits).
		local f
		for f in "$tp_out" "$fe_out"; do
			tail -n1 "$f" | jq -e '([.histograms[] | select(.name == "would-stall") | .count] | add // 0) as $timed |
				$timed > 0 and $timed + .would_stall_untimed + .would_stall_pending == .violations_total'
			tail -n1 "$f" | jq -e '([.histograms[] | select(.name == "stable-wait" or .name == "other-wait") | .count] | add // 0) as $timed |
				$timed > 0 and $timed + .wait_untimed + .waits_pending == .stable_waits + .other_waits'
		done
		# Per-folio writeback time, fentry mode only.
		jq -e '[.histograms[] | select(.name == "folio-writeback") | .count] | add > 0' <<< "$fe"
		jq -e '[.histograms[] | select(.name == "folio-writeback")] | length == 0' <<< "$tp"
		umount "$MNT"; losetup -d "$LOOP"; LOOP=
	done
	assert_detached
}

# The precise part of the fentry mode: a handler returning with the folio
# still under writeback. With stable writes every handler waits first.
@test "fentry mode: mmap violations on ext4 and xfs come from the page_mkwrite return; none with stable writes; btrfs none" {
	fentry_loads || skip "fentry programs do not load on this kernel (see: stablepage-trace features)"
	local fs
	for fs in ext4 xfs "ext4 stable" btrfs; do
		make_fs $fs
		start_tracer --attach-mode fentry --json -q --dev "$LOOP"
		"$WAC" -p B -d 2 "$MNT/f" > /dev/null
		sync
		stop_tracer
		tail -n1 "$TRACE_OUT" | jq -c '{fs: "'"$fs"'", v: .violations, io_ended: .mkwrite_io_ended, stable_waits, stable_dirtied}'
		case $fs in
		ext4 | xfs)
			[ "$(summary .violations.mmap)" -gt 0 ]
			# Attributed to wac, on its file (trace.bats checks every
			# event; in the guest it runs in this mode too).
			[ "$(summary -r '.top_processes[0].comm')" = wac ]
			[ "$(summary '.top_processes[0].violations.mmap')" = "$(summary .violations.mmap)" ]
			[ "$(summary -r '.top_files[0].path')" = "$MNT/f" ] ;;
		"ext4 stable")
			[ "$(summary .violations_total)" -eq 0 ]
			[ "$(summary .stable_waits)" -gt 0 ]
			jq -e '[.histograms[] | select(.name == "stable-wait") | .count] | add > 0' < <(tail -n1 "$TRACE_OUT") ;;
		btrfs)
			[ "$(summary .violations_total)" -eq 0 ] ;;
		esac
		umount "$MNT"; losetup -d "$LOOP"; LOOP=
	done
	assert_detached
}
