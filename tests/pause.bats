#!/usr/bin/env bats
# SIGUSR1 pauses tracing (tracepoint programs detached, fentry/fexit ones
# idle), SIGUSR2 goes on: what make bench toggles to measure tracing in
# alternating windows of one run.
load helpers

setup() { spt_setup; }
teardown() { spt_teardown; }

# pause_tracer / resume_tracer: the signal, then its acknowledgement (the
# Nth "paused" or "goes on" line on stderr).
pauses=0
resumes=0
pause_tracer() {
	pauses=$((pauses + 1))
	kill -USR1 "$TRACER_PID"
	wait_for_line "^Tracing paused" "$pauses"
}

resume_tracer() {
	resumes=$((resumes + 1))
	kill -USR2 "$TRACER_PID"
	wait_for_line "^Tracing goes on" "$resumes"
}

# pause_and_go_on N [CMD...]: N pauses of 50 ms, 100 ms traced after each;
# CMD, if given, must succeed during every pause.
pause_and_go_on() {
	local n=$1
	shift
	for _ in $(seq "$n"); do
		pause_tracer
		if [ $# -gt 0 ]; then
			"$@" || return 1
		fi
		sleep 0.05
		resume_tracer
		sleep 0.1
	done
}

# attached_trampolines: our fentry/fexit programs with a link now.
attached_trampolines() {
	attached_programs | grep -E '^(fentry|fexit)_'
}

# trampolines_unchanged: the same as the calling test's $trampolines.
trampolines_unchanged() {
	[ "$(attached_trampolines)" = "$trampolines" ]
}

# wait_for_line REGEX N: until REGEX matches N lines of the tracer's stderr.
wait_for_line() {
	WAIT_TRIES=200 WAIT_POLL=0.05 wait_for_lines "$TRACER_PID" "$2" "$1" "$TRACE_ERR" && return 0
	echo "no acknowledgement '$1' #$2:" >&2
	cat "$TRACE_ERR" >&2
	return 1
}

@test "SIGUSR1 detaches the tracepoint programs, fentry/fexit ones stay idle, nothing is counted; SIGUSR2 attaches them again" {
	make_fs ext4
	start_tracer --json -q --dev "$LOOP"
	local attached
	attached=$(attached_programs)
	[ -n "$attached" ]
	pause_tracer
	[ -z "$(attached_programs | grep -Ev '^(fentry|fexit)_')" ]
	[ "$(attached_trampolines)" = "$(grep -E '^(fentry|fexit)_' <<< "$attached")" ]
	"$WAC" -p C -d 2 "$MNT/f" > /dev/null
	resume_tracer
	[ "$(attached_programs)" = "$attached" ]
	stop_tracer
	echo "$(summary -c '{duration_s, paused_s, violations_total, stable_waits, other_waits}')"
	[ "$(summary .violations_total)" -eq 0 ]
	[ "$(summary '.stable_waits + .other_waits')" -eq 0 ]
	summary -e '.paused_s >= 2 and .paused_s < .duration_s'
	assert_detached
}

# In the QEMU guest the auto mode is fentry: there the page_mkwrite calls,
# writeback starts and waits timed at their functions cross the pauses.
@test "pausing and going on 20 times during a workload keeps every count accounted" {
	make_fs ext4
	start_tracer --json -q --dev "$LOOP" --time-all-waits
	"$WAC" -p C -d 6 "$MNT/f" > /dev/null &
	local wac=$!
	sleep 0.5
	pause_and_go_on 20
	wait "$wac"
	stop_tracer
	echo "$(summary -c '{paused_s, violations_total, would_stall_untimed, would_stall_pending, wait_untimed, waits_pending}')"
	# Violations are counted while tracing, and each one is timed, untimed
	# (its I/O may have ended during a pause) or still in flight.
	summary -e '.violations.mmap > 0 and .violations.write > 0'
	summary -e '([.histograms[] | select(.name == "would-stall") | .count] | add // 0) as $timed |
		$timed > 0 and $timed + .would_stall_untimed + .would_stall_pending == .violations_total'
	[ "$(summary '[.histograms[] | select(.name == "other-wait") | .count] | add // 0')" -gt 0 ]
	assert_waits_accounted
	summary -e '.paused_s > 0.9'
	assert_detached
}

# Pauses keep the trampolines: detaching and attaching them while writers ran
# them hung the 6.1 guest under QEMU's multi-threaded TCG at once
# (ext4_page_mkwrite under this load;
# docs/lab/2026-12-06-tcg-trampoline-lockup.md). Started before the writers,
# ended after them, so that this holds there too.
@test "fentry mode: 20 pauses under four mmap writers keep the trampolines attached and count nothing while paused" {
	fentry_loads || skip "fentry programs do not load on this kernel (see: stablepage-trace features)"
	make_fs ext4
	start_tracer --attach-mode fentry --json -q --dev "$LOOP"
	local trampolines
	trampolines=$(attached_trampolines)
	grep -qx fexit_ext4_page_mkwrite <<< "$trampolines"
	"$WAC" -p B -t 4 -d 10 "$MNT/f" > /dev/null &
	local wac=$!
	sleep 0.5
	pause_and_go_on 20 trampolines_unchanged
	wait "$wac"
	stop_tracer
	summary -e '.violations.mmap > 0 and .paused_s > 0'
	assert_waits_accounted
	assert_detached
}

@test "a sched_switch attached at a writer's first wait is attached again when tracing goes on" {
	make_fs ext4 stable
	start_tracer --attach-mode tracepoint --json -q --dev "$LOOP"
	"$WAC" -p B -d 2 "$MNT/f" > /dev/null
	attached_programs | grep -qx tp_sched_switch
	pause_tracer
	[ -z "$(attached_programs)" ]
	resume_tracer
	attached_programs | grep -qx tp_sched_switch
	"$WAC" -p B -d 1 "$MNT/f" > /dev/null
	stop_tracer
	[ "$(summary '[.histograms[] | select(.name == "stable-wait") | .count] | add // 0')" -gt 0 ]
	assert_waits_accounted
	assert_detached
}

@test "enforce does not pause: SIGUSR1 is ignored with one line, the programs stay attached" {
	make_fs ext4
	start_tracer enforce --native --dev "$LOOP" -q --json
	local attached
	attached=$(attached_programs)
	kill -USR1 "$TRACER_PID"
	wait_for_line "enforce does not pause" 1
	[ "$(attached_programs)" = "$attached" ]
	stop_tracer
	summary -e '.paused_s == 0'
	assert_detached
}
