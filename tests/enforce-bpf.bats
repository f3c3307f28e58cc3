#!/usr/bin/env bats
# enforce, BPF mode: writers in scope are held (SIGSTOP) until their folio's
# writeback ends, bounded by --max-delay; writers outside it are left alone;
# the tool dying never leaves a writer stopped.
load helpers

setup() { spt_setup; }
teardown() {
	[ -n "${WAC_BG:-}" ] && kill -CONT "$WAC_BG" 2>/dev/null && wait "$WAC_BG" 2>/dev/null
	[ -n "${FREE_PID:-}" ] && kill -INT "$FREE_PID" 2>/dev/null && wait "$FREE_PID" 2>/dev/null
	spt_teardown
}

# write() can be held before its copy only with the BPF LSM or fmod_ret.
write_hold() {
	"$SPT" features | grep -qE 'holding write\(\) from BPF: possible'
}

@test "bpf mode: the writer in scope is held, its violations gone; a writer outside the scope is not held" {
	write_hold || skip "write() cannot be held here (no BPF LSM or fmod_ret: see stablepage-trace features)"
	local fs p
	for fs in ext4 xfs; do
		for p in A B; do
			make_fs "$fs"
			start_tracer enforce --comm spt-held --json -q --dev "$LOOP"
			"$SPT" --comm spt-free --json -q --dev "$LOOP" > "$BATS_TEST_TMPDIR/free.out" 2> "$BATS_TEST_TMPDIR/free.err" &
			FREE_PID=$!
			for _ in $(seq 200); do grep -q '^Tracing' "$BATS_TEST_TMPDIR/free.err" && break; sleep 0.1; done
			"$WAC" -p "$p" -d 3 -n spt-held "$MNT/f" > "$BATS_TEST_TMPDIR/held.wac" &
			local held=$!
			"$WAC" -p "$p" -d 3 -n spt-free "$MNT/g" > /dev/null
			wait "$held" # exit 0: no write failed (a held write is restarted, never fails)
			sync
			interrupt_and_wait "$FREE_PID"; FREE_PID=
			stop_tracer
			local kind=write free
			[ "$p" = B ] && kind=mmap
			free=$(tail -n1 "$BATS_TEST_TMPDIR/free.out" | jq ".violations.$kind")
			echo "$fs $p: free writer $free $kind violations; held: $(summary "{v: .violations, e: (.enforce | del(.held))}")"
			[ "$free" -gt 0 ]
			[ "$(summary -r .enforce.write_hold)" != none ]
			[ "$(summary ".enforce.holds.$kind")" -gt 0 ]
			# Every mmap hold announced once its SIGSTOP was generated. A
			# thread can be stopped again before its entry is gone (the
			# group's SIGCONT for another thread's release woke it): one
			# hold, two stops; so stops may exceed holds, never fall short.
			[ "$p" = A ] || [ "$(summary .enforce.stops)" -ge "$(summary .enforce.holds.mmap)" ]
			# Residual: writeback can begin between the check and the copy
			# (write) or the check and the store (mmap): at most 10% of
			# what the same writer outside the scope does.
			[ "$(summary ".violations.$kind")" -le $((free / 10)) ]
			# Every stop bounded by --max-delay (1 s) and the tool's 2 ms poll.
			[ "$(summary '.enforce.longest_stop_ms < 1100')" = true ]
			# Only the writer in scope was held.
			[ "$(summary '[.enforce.held[].comm] | unique')" = '["spt-held"]' ]
			umount "$MNT"; losetup -d "$LOOP"; LOOP=
		done
	done
	assert_detached
}

@test "bpf mode: kill -9 of the tool while it holds a writer: the guardian resumes it" {
	# write() where it can be held (the guest), else stores to a mapping.
	local p=B
	write_hold && p=A
	make_fs ext4
	start_tracer enforce --comm spt-held --max-delay 30 -q --dev "$LOOP"
	"$WAC" -p "$p" -d 6 -n spt-held "$MNT/f" > /dev/null &
	WAC_BG=$!
	# Freeze the tool: nobody resumes holders now, so the writer ends up
	# stopped by a hold (the guardian itself waits for --max-delay + 0.5 s).
	freeze_until_held "$TRACER_PID" "$WAC_BG"
	kill -9 "$TRACER_PID"; wait "$TRACER_PID" || true; TRACER_PID=
	for _ in $(seq 30); do s=$(state "$WAC_BG"); [ "$s" != T ] && break; sleep 0.1; done
	echo "writer state after kill -9 of the tool: $s"
	[ "$s" != T ]
	wait "$WAC_BG"; WAC_BG=
	# The guardian is gone too, and no program stays attached.
	for _ in $(seq 50); do pgrep -x 'stablepage-trac|spt-guardian' > /dev/null || break; sleep 0.1; done
	! pgrep -x 'stablepage-trac|spt-guardian'
	assert_detached
}

@test "bpf mode: --action kill kills the writer before its data lands; --action log holds nothing" {
	write_hold || skip "write() cannot be held here (no BPF LSM or fmod_ret: see stablepage-trace features)"
	make_fs ext4
	start_tracer enforce --comm spt-held --action kill --json -q --dev "$LOOP"
	run "$WAC" -p A -d 3 -n spt-held "$MNT/f"
	[ "$status" -eq 137 ]
	stop_tracer
	[ "$(summary .enforce.kills)" -ge 1 ]
	start_tracer enforce --comm spt-held --action log --json -q --dev "$LOOP"
	"$WAC" -p A -d 2 -n spt-held "$MNT/g" > /dev/null
	stop_tracer
	summary '{v: .violations, e: (.enforce | del(.held))}'
	[ "$(summary .enforce.would_hold)" -gt 0 ]
	[ "$(summary '.enforce.holds.write + .enforce.holds.mmap')" -eq 0 ]
	[ "$(summary .violations.write)" -gt 0 ]
	assert_detached
}

@test "bpf mode where write() cannot be held: one line says so, mmap writers are held" {
	write_hold && skip "write() can be held on this kernel (the guest's case is tested above)"
	make_fs ext4
	start_tracer enforce --comm spt-held --json -q --dev "$LOOP"
	grep -E "^enforce: write\(\) cannot be held before its copy here \(.+\): holding mmap writers at their write fault only; enforce --native makes the kernel hold both$" "$TRACE_ERR"
	[ "$(grep -c '^enforce:' "$TRACE_ERR")" -eq 1 ]
	"$WAC" -p B -d 3 -n spt-held "$MNT/f" > /dev/null
	sync
	stop_tracer
	summary '{v: .violations, e: (.enforce | del(.held))}'
	[ "$(summary .enforce.write_hold)" = '"none"' ]
	[ "$(summary .enforce.holds.mmap)" -gt 0 ]
	# Every hold announced once its SIGSTOP was generated (here through
	# irq_work: the tracepoint runs with IRQs off).
	[ "$(summary .enforce.stops)" -eq "$(summary .enforce.holds.mmap)" ]
	[ "$(summary '.enforce.resumed_at_writeback_end > 0')" = true ]
	[ "$(summary '.enforce.longest_stop_ms < 1100')" = true ]
	assert_detached
}
