#!/usr/bin/env bats
# enforce, BPF mode: no writer is left stopped, whatever happens to the tool
# or its guardian, on a machine kept busy by CPU and I/O hogs; and the
# privileges each process keeps. The bound these tests check (generously):
# docs/enforce.md, "No writer is left stopped".
load helpers

# A cycle of the kill -9 test took 50-65 s in the TCG guest under the hogs
# (each start loads and attaches the BPF object; 20 cycles: 1270 s on
# 2026-12-07), far more than run.sh's 300 s per test. Read when bats
# sources this file, before each test's countdown starts.
BATS_TEST_TIMEOUT=2400
# 20 cycles on the host (mmap holds, about 35 s); in the guest (VM_ROOT is set
# there), where write() holds load, 4 by default so that CI stays within its
# hour; the full 20 there: lab/vmtest.sh env SPT_KILL_CYCLES=20
# SPT_SUITES=tests/enforce-safety.bats tests/run.sh build (1270 s, docs/lab).
KILL_CYCLES=${SPT_KILL_CYCLES:-$([ -n "${VM_ROOT:-}" ] && echo 4 || echo 20)}

setup() { spt_setup; }
teardown() {
	[ -n "${WAC_BG:-}" ] && kill -CONT "$WAC_BG" 2>/dev/null && kill "$WAC_BG" 2>/dev/null && wait "$WAC_BG" 2>/dev/null
	[ -n "${GUARDIAN:-}" ] && kill -9 "$GUARDIAN" 2>/dev/null
	[ -n "${TRACER_PID:-}" ] && kill -CONT "$TRACER_PID" 2>/dev/null
	spt_teardown
	"$SPT" enforce --restore > /dev/null 2>&1 || true
}

# Generous: a multiple of the bound stated in docs/enforce.md (the
# heartbeat's 0.5 s and the guardian's 0.2 s settle after the kernel has
# detached the programs), for a machine under load. Not a timing test.
BOUND_TRIES=300 # x 0.1 s

write_hold() {
	"$SPT" features | grep -qE 'holding write\(\) from BPF: possible'
}

# The profile a writer can be held in here: write() where the BPF LSM or
# fmod_ret loads (the guest), else stores to a mapping (tracepoint mode).
held_profile() {
	if write_hold; then echo A; else echo B; fi
}

# hogs: CPU and I/O load until the test ends, in their own process group
# (stress-ng's workers are its children), off the scratch filesystem.
hogs() {
	mkdir -p "$BATS_TEST_TMPDIR/hogs"
	setsid stress-ng --cpu 2 --io 1 --hdd 1 --hdd-bytes 16m --temp-path "$BATS_TEST_TMPDIR/hogs" \
		--timeout 3600 > /dev/null 2>&1 &
	on_cleanup "kill -- -$! 2>/dev/null; while pgrep -g $! > /dev/null; do sleep 0.1; done"
}

# writer: a held writer in the background, long enough for the whole test.
writer() {
	"$WAC" -p "$(held_profile)" -d 3600 -n spt-held "$MNT/f" > /dev/null &
	WAC_BG=$!
}

guardian_of() {
	# The guardian names itself right after the fork, which can come after
	# the tool says it traces: under the hogs, give it a few seconds.
	for _ in $(seq 50); do
		pgrep -P "$1" -x spt-guardian && return 0
		sleep 0.1
	done
	return 1
}

# gone PID: exits within the bound (a zombie waiting for its new parent counts).
gone() {
	for _ in $(seq "$BOUND_TRIES"); do
		kill -0 "$1" 2>/dev/null && [ "$(state "$1")" != Z ] || return 0
		sleep 0.1
	done
	echo "pid $1 ($(cat "/proc/$1/comm")) still there" >&2
	return 1
}

# running PID: not stopped (a few looks, 50 ms apart).
running() {
	for _ in 1 2 3 4 5; do
		[ "$(state "$1")" != T ] || { echo "pid $1 is stopped" >&2; return 1; }
		sleep 0.05
	done
}

@test "enforce refuses without CAP_KILL, and outside the initial pid namespace, in one line" {
	run setpriv --inh-caps=-kill --bounding-set=-kill "$SPT" enforce --comm x -d 1
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" =~ ^stablepage-trace:\ enforce\ resumes\ held\ writers\ with\ SIGCONT,\ which\ needs\ CAP_KILL ]]
	run unshare --pid --fork --mount-proc "$SPT" enforce --comm x -d 1
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" =~ ^stablepage-trace:\ enforce\ must\ run\ in\ the\ initial\ pid\ namespace ]]
	# --action log signals nobody: allowed without CAP_KILL.
	run setpriv --inh-caps=-kill --bounding-set=-kill "$SPT" enforce --comm x --action log -d 0.1 -q
	echo "$output"
	[ "$status" -eq 0 ]
	assert_detached
}

@test "kill -9 of the tool while it holds, 20 times (guest: 4) under CPU and I/O load: no writer stays stopped" {
	local held_at_kill=0 g tool
	make_fs ext4
	hogs
	writer
	for _ in $(seq "$KILL_CYCLES"); do
		start_tracer enforce --comm spt-held --max-delay 30 -q --dev "$LOOP"
		tool=$TRACER_PID
		g=$(guardian_of "$tool")
		[ -n "$g" ]
		# Kill it while the writer is stopped by a hold if that is seen
		# within 3 s (a hold lasts milliseconds), else anyway.
		for _ in $(seq 300); do [ "$(state "$WAC_BG")" = T ] && break; sleep 0.01; done
		[ "$(state "$WAC_BG")" = T ] && held_at_kill=$((held_at_kill + 1))
		kill -9 "$TRACER_PID"; wait "$TRACER_PID" 2>/dev/null || true; TRACER_PID=
		gone "$g"
		running "$WAC_BG"
		[ ! -e "/run/stablepage-trace/held.$tool" ]
		assert_detached
	done
	echo "cycles killed while the writer was seen stopped: $held_at_kill of $KILL_CYCLES"
	kill -0 "$WAC_BG"
}

@test "kill -9 of the tool and its guardian together: enforce --restore resumes the held writer" {
	local g tool
	make_fs ext4
	hogs
	writer
	start_tracer enforce --comm spt-held --max-delay 30 -q --dev "$LOOP"
	tool=$TRACER_PID
	g=$(guardian_of "$tool")
	GUARDIAN=$g
	[ -f "/run/stablepage-trace/held.$tool" ]
	# Freeze the tool: nobody resumes holders now, so the writer ends up
	# stopped by a hold (begun before the heartbeat went stale).
	freeze_until_held "$tool" "$WAC_BG"
	grep -q "^$WAC_BG [0-9]* spt-held$" "/run/stablepage-trace/held.$tool"
	# The guardian first: killed second, it could see the tool die and
	# resume the writer in between (the frozen tool reacts to nothing).
	kill -9 "$g" "$tool"; wait "$tool" || true; TRACER_PID=
	gone "$g"; GUARDIAN=
	# Nobody is left to resume it.
	sleep 1
	[ "$(state "$WAC_BG")" = T ]
	run "$SPT" enforce --restore
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"enforce: resumed pid $WAC_BG (spt-held), held by run $tool"* ]]
	running "$WAC_BG"
	[ ! -e "/run/stablepage-trace/held.$tool" ]
	assert_detached
}

@test "the guardian dies: the tool resumes everyone and holds no more" {
	local g
	make_fs ext4
	writer
	start_tracer enforce --comm spt-held --max-delay 30 --json -q --dev "$LOOP"
	g=$(guardian_of "$TRACER_PID")
	sleep 1
	kill -9 "$g"
	wait_for_lines "$TRACER_PID" 1 'the guardian process died' "$TRACE_ERR"
	grep -x "stablepage-trace: the guardian process died: every held writer resumed, holding no more (tracing goes on)" "$TRACE_ERR"
	running "$WAC_BG"
	sleep 1
	running "$WAC_BG"
	stop_tracer
	summary '.enforce | del(.held)'
	[ "$(summary .enforce.refused_stale)" -gt 0 ]
	[ "$(summary .enforce.resume_failed)" -eq 0 ]
	assert_detached
}

# cap_of PID SET: the capability set (CapEff, CapBnd, ...) as a number.
cap_of() {
	printf '%d' "0x$(awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status")"
}

@test "least privilege: the guardian keeps CAP_KILL, the tool what it still needs; no new privileges" {
	make_fs ext4
	start_tracer enforce --comm spt-held -q --dev "$LOOP"
	local g
	g=$(guardian_of "$TRACER_PID")
	[ "$(cat "/proc/$g/comm")" = spt-guardian ]
	grep . "/proc/$g/status" | grep -E '^(Cap|NoNewPrivs)'
	if grep -q "without CAP_SYS_RESOURCE" "$TRACE_ERR"; then
		[ "$(cat "/proc/$g/oom_score_adj")" -le 0 ]
	else
		[ "$(cat "/proc/$g/oom_score_adj")" -eq -1000 ]
	fi
	# CAP_KILL; and CAP_BPF where the kernel wants it for every bpf() call
	# on a map (kernel.unprivileged_bpf_disabled before 6.5: the guest).
	local kill=$((1 << 5)) bpf=$((1 << 39)) eff
	eff=$(cap_of "$g" CapEff)
	[ "$eff" -eq "$kill" ] || [ "$eff" -eq $((kill | bpf)) ]
	[ "$(cap_of "$g" CapPrm)" -eq "$eff" ]
	[ "$(cap_of "$g" CapBnd)" -eq "$eff" ]
	[ "$(awk '$1 == "NoNewPrivs:" { print $2 }' "/proc/$g/status")" = 1 ]
	# The tool, once attached: CAP_KILL, CAP_BPF, CAP_PERFMON and
	# CAP_DAC_READ_SEARCH at most (docs/enforce.md says why each).
	grep -E '^(Cap|NoNewPrivs)' "/proc/$TRACER_PID/status"
	local allowed=$((kill | bpf | (1 << 38) | (1 << 2)))
	eff=$(cap_of "$TRACER_PID" CapEff)
	[ $((eff & ~allowed)) -eq 0 ]
	[ $((eff & kill)) -ne 0 ]
	[ "$(cap_of "$TRACER_PID" CapBnd)" -eq "$(cap_of "$TRACER_PID" CapPrm)" ]
	[ "$(awk '$1 == "NoNewPrivs:" { print $2 }' "/proc/$TRACER_PID/status")" = 1 ]
	stop_tracer
	assert_detached
}
