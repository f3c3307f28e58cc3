#!/usr/bin/env bats
# The real programs on the running kernel, real filesystems on loop devices.
load helpers

setup() { spt_setup; }
teardown() { spt_teardown; }

# run_wac PROFILE FILE [SECS]: runs the reproducer, sets WAC_PID.
run_wac() {
	"$WAC" -p "$1" -d "${3:-3}" "$2" > "$BATS_TEST_TMPDIR/wac.out" &
	WAC_PID=$!
	wait "$WAC_PID"
}

# check_attributed KIND FILE: the violations of KIND are the reproducer's,
# on our device, inode and path, and the summary agrees.
check_attributed() {
	local kind=$1 file=$2 ino
	ino=$(stat -c %i "$file")
	[ "$(summary ".violations.$kind")" -gt 0 ]
	[ "$(events "select(.kind == \"$kind\" and .pid == $WAC_PID)" | wc -l)" -gt 0 ]
	# Every event on our device is attributed to the reproducer and its file
	# (one jq pass: a shell loop over thousands of lines takes a minute in TCG).
	# Metadata the filesystem changed meanwhile (vfat's directory entries,
	# ext2's inode table) is a kind and a row of its own: tests/metadata.bats.
	run events -r --arg dev "$DEV" --arg kind "$kind" --argjson pid "$WAC_PID" --argjson ino "$ino" \
		--arg path "$file" --arg devname "${LOOP#/dev/}" 'select(.dev == $dev and .kind != "metadata") |
		select(.kind != $kind or .pid != $pid or .comm != "wac" or .ino != $ino or
		       .path != $path or .devname != $devname) |
		"misattributed: \(.kind) \(.pid) \(.comm) \(.ino) \(.path) \(.devname)"'
	assert_success
	assert_output ""
	[ "$(summary ".top_processes[0].pid")" = "$WAC_PID" ]
	[ "$(summary -r ".top_files[0].path")" = "$file" ]
	[ "$(summary -r ".devices[] | select(.dev == \"$DEV\") | .violations.$kind")" -gt 0 ]
	# One writer, one file, one device traced (--dev): each of the three
	# views, folded from the kernel's per-writer rows, holds every violation.
	local data
	data=$(summary '.violations_total - .violations.metadata')
	run summary -r '[.violations_total - .violations.metadata,
		(.devices | map(.violations | add - .metadata) | add),
		(.top_processes[0] | .total - .violations.metadata), .top_files[0].total,
		.top_files[0].last_pid] | @tsv'
	assert_output "$data	$data	$data	$data	$WAC_PID"
}

# trace_profile FSTYPE PROFILE KIND: one filesystem, one profile, checks attribution.
trace_profile() {
	make_fs "$1"
	start_tracer --json --dev "$LOOP"
	run_wac "$2" "$MNT/f"
	stop_tracer
	check_attributed "$3" "$MNT/f"
	assert_detached
}

@test "ext4: the mmap profile yields mmap violations, attributed" {
	trace_profile ext4 B mmap
}

@test "ext4: the write() profile yields write violations, attributed" {
	trace_profile ext4 A write
}

@test "xfs: the mmap profile yields mmap violations, attributed" {
	trace_profile xfs B mmap
}

@test "xfs: the write() profile yields write violations, attributed" {
	trace_profile xfs A write
}

# The rest of the patch set's matrix (ext2/ext3/ext4, xfs, btrfs, vfat).
# need_fs FSTYPE: skips, with the reason, where the kernel cannot mount it.
need_fs() {
	grep -qw "$1" /proc/filesystems || modprobe -q "$1" 2>/dev/null || true
	grep -qw "$1" /proc/filesystems || skip "$1 is not in this kernel (the 6.1 guest has it: make vmtest)"
	command -v "mkfs.$1" > /dev/null || skip "no mkfs.$1"
}

@test "ext2: the mmap profile yields mmap violations, attributed" {
	need_fs ext2
	trace_profile ext2 B mmap
}

@test "ext3: the write() profile yields write violations, attributed" {
	need_fs ext3
	trace_profile ext3 A write
}

@test "vfat: the mmap profile yields mmap violations, attributed" {
	need_fs vfat
	trace_profile vfat B mmap
}

@test "vfat: the write() profile yields write violations, attributed" {
	need_fs vfat
	trace_profile vfat A write
}

@test "btrfs: mmap and write() profiles yield 0 violations (btrfs keeps pages stable)" {
	make_fs btrfs
	start_tracer --json -q --dev "$DEV"
	run_wac B "$MNT/f"
	run_wac A "$MNT/g"
	stop_tracer
	[ "$(summary .violations_total)" -eq 0 ]
	# The workload did run into writeback: the writers waited.
	[ "$(summary .stable_waits)" -gt 0 ]
}

@test "ext4 with queue/stable_writes=1 before mount: 0 violations, stable waits > 0" {
	make_fs ext4 stable
	start_tracer --json -q --dev "$LOOP"
	run_wac B "$MNT/f"
	run_wac A "$MNT/g"
	stop_tracer
	[ "$(summary .violations_total)" -eq 0 ]
	[ "$(summary .stable_waits)" -gt 0 ]
	[ "$(summary -r ".devices[] | select(.dev == \"$DEV\") | .stable_writes")" = true ]
	# page_mkwrite dirtied folios under writeback, then waited: seen, not counted.
	[ "$(summary .stable_dirtied)" -gt 0 ]
}

# sched_switch_attached: whether the tracer's sched_switch program runs
# (has a link), not only loaded.
sched_switch_attached() {
	attached_programs | grep -qx tp_sched_switch
}

# Tracepoint mode pays for sched_switch on every context switch: it is
# attached when a writer first waits (as above), or from the start with
# --time-all-waits. Until then waits are counted, untimed.
@test "tracepoint mode: sched_switch attached at the first writer's wait or with --time-all-waits; untimed waits counted" {
	make_fs ext4
	# fsync waits for the writeback it starts: other waits, not a writer's.
	start_tracer --attach-mode tracepoint --json -q --dev "$LOOP"
	dd if=/dev/zero of="$MNT/g" bs=1M count=64 conv=fsync status=none
	! sched_switch_attached
	stop_tracer
	echo "without: $(summary -c '{stable_waits, other_waits, wait_untimed, waits_pending}')"
	[ "$(summary .stable_waits)" -eq 0 ]
	[ "$(summary .other_waits)" -gt 0 ]
	[ "$(summary .wait_untimed)" -eq "$(summary .other_waits)" ]
	[ "$(summary '[.histograms[] | select(.name == "other-wait") | .count] | add // 0')" -eq 0 ]

	# Timed from the start: the fsync's waits are in the histogram. Whether
	# one fsync sleeps at all depends on how soon the loop device completes
	# (once in a 6.1 guest none did): at most 3 runs, until one does.
	local try
	for try in 1 2 3; do
		start_tracer --attach-mode tracepoint --json -q --dev "$LOOP" --time-all-waits
		sched_switch_attached
		dd if=/dev/zero of="$MNT/g" bs=1M count=64 conv=fsync status=none
		stop_tracer
		echo "with, run $try: $(summary -c '{other_waits, wait_untimed,
			timed: ([.histograms[] | select(.name == "other-wait") | .count] | add // 0)}')"
		[ "$(summary '[.histograms[] | select(.name == "other-wait") | .count] | add // 0')" -gt 0 ] &&
			break
	done
	[ "$(summary '[.histograms[] | select(.name == "other-wait") | .count] | add // 0')" -gt 0 ]
	assert_waits_accounted

	# A writer's wait: stable writes, which the filesystem samples at mount.
	local name=${LOOP#/dev/} old
	old=$(cat "/sys/block/$name/queue/stable_writes")
	umount "$MNT"
	echo 1 > "/sys/block/$name/queue/stable_writes"
	on_cleanup "echo $old > /sys/block/$name/queue/stable_writes"
	mount "$LOOP" "$MNT"
	start_tracer --attach-mode tracepoint --json -q --dev "$LOOP"
	! sched_switch_attached
	run_wac B "$MNT/f"
	sched_switch_attached
	stop_tracer
	[ "$(summary '[.histograms[] | select(.name == "stable-wait") | .count] | add // 0')" -gt 0 ]
	assert_waits_accounted
	assert_detached
}

# The benchmark asserts no timing; this only keeps its harness working.
@test "make bench-switch's harness completes: one short repetition of each configuration" {
	run env BENCH_REPS=1 BENCH_TRIPS=2000 "$ROOT/bench/bench-switch.sh" "$BUILD"
	assert_success
	assert_output --regexp $'\nnone +[0-9.]+ +0\.0 '
	assert_output --regexp $'\nquiet +[0-9.]+ +-?[0-9.]+ '
	assert_output --regexp $'\nallwaits +[0-9.]+ +-?[0-9.]+ '
	run "$BUILD/switchcost" 0
	[ "$status" -eq 2 ]
	assert_detached
}

# Tracepoint mode: the harness starts tracers under running writers, and
# patching trampolines under them hangs the 6.1 guest under QEMU's
# multi-threaded TCG (docs/semantics.md; lab/vmtest.sh runs single-threaded
# TCG, VMTEST_ACCEL may not); on the host auto is tracepoint mode anyway.
@test "make bench's harness completes: whole runs and alternating windows, a few of each" {
	run env BENCH_REPS=1 BENCH_STATS_EVERY=1 BENCH_SECS=1 BENCH_WINDOW_RUNS=2 BENCH_PAIRS=2 \
		BENCH_CONTROL_EVERY=2 BENCH_ATTACH_MODE=tracepoint BENCH_CONFIGS="quiet json empty" BENCH_EMPTY_COPIES=2 \
		BENCH_PROFILES=A "$ROOT/bench/bench.sh" "$BUILD"
	assert_success
	# calibrated by our own empty programs, with or without bpftrace
	assert_output --regexp "an empty program's run time: [1-9][0-9]* ns"
	assert_output --regexp $'\n  A quiet +tp_block_rq_complete +[0-9.]+ ns/run +-?[0-9.]+ NET +[0-9]+ runs\n'
	assert_output --regexp $'\nA +quiet +[0-9]+ '
	assert_output --regexp $'\nPROFILE +CONFIG +OPS/S .* NET%CPU NET_NS/OP '
	assert_output --partial "--attach-mode tracepoint, ext4 on"
	# the control in every 2nd run only
	assert_output --regexp $'\nA +none +1 +[0-9.]+ '
	assert_output --regexp $'\nA +quiet +2 +[0-9.]+ .* 0\n'
	assert_output --regexp $'\nA +json +2 +[0-9.]+ .* 0\n'
	assert_output --regexp $'\nA +empty +2 +[0-9.]+ .* -\n'
	assert_output --regexp $'\n  A ratio [0-9.]+ \\(the geometric mean to the power 1/2\\)'
	run "$BUILD/pausebench" -c /nonexistent -n 1 -- true
	[ "$status" -eq 1 ]
	assert_output "pausebench: /nonexistent: No such file or directory"
	run "$BUILD/pausebench" -n 1
	[ "$status" -eq 2 ]
	assert_detached
}

@test "make bench-progs' harness completes: two builds on the same events, both attach orders" {
	run env BENCH_REPS=1 BENCH_SECS=1 BENCH_PROFILES=A "$ROOT/bench/bench-progs.sh" "$BUILD" \
		"$BUILD/stablepage.bpf.o"
	assert_success
	assert_output --regexp $'\nA +tp_writeback_dirty_folio +[1-9][0-9]* +[0-9.]+ +[0-9.]+ +[0-9.]+\n'
	assert_output --regexp $'\nA +tp_block_rq_complete +[1-9][0-9]* '
	run "$BUILD/progcost"
	[ "$status" -eq 2 ]
	assert_detached
}

# A soak of seconds, tables never full: the counts must agree exactly with
# the independent count and the fresh writer must be named.
@test "make bench-soak's harness completes: counts exact, the fresh writer named" {
	run env SOAK_SECONDS=10 SOAK_WRITERS=4 SOAK_SPAWNS=200 SOAK_SAMPLE=2 "$ROOT/bench/soak.sh" "$BUILD"
	assert_success
	assert_output --regexp $'\ncounts: EXACT\n'
	local tool other
	tool=$(sed -n "s/^comm soak-writer: tracer's rows \([0-9]*\), .*/\1/p" <<< "$output")
	other=$(sed -n "s/^comm soak-writer: .*, independent \([0-9]*\)$/\1/p" <<< "$output")
	[ "$tool" -gt 0 ]
	[ "$tool" = "$other" ]
	# (a slow guest may take too few samples for thirds)
	assert_output --regexp $'\nRSS KiB +(thirds [0-9]+, [0-9]+, [0-9]+:|too few samples)'
	assert_output --regexp $'\nattribution: fresh writer pid [0-9]+ \\(soak-final\\) .* OK$'
	run "$BUILD/soakcount" maps x
	[ "$status" -eq 2 ]
	run "$BUILD/soakspawn" -w -1 /tmp
	[ "$status" -eq 2 ]
	run env SOAK_SECONDS=5 "$ROOT/bench/soak.sh" "$BUILD"
	[ "$status" -eq 2 ]
	assert_detached
}

@test "--pid keeps only the chosen process" {
	make_fs ext4
	# The chosen process exists before the tracer starts, and writes only
	# once it is attached (attaching takes seconds under TCG).
	mkfifo "$BATS_TEST_TMPDIR/go"
	(read -r _ < "$BATS_TEST_TMPDIR/go" && exec "$WAC" -p A -d 3 "$MNT/mine" > /dev/null) &
	local mine=$!
	start_tracer --json --pid "$mine"
	"$WAC" -p A -d 3 "$MNT/other" > /dev/null &
	local other=$!
	echo go > "$BATS_TEST_TMPDIR/go"
	wait "$mine" "$other"
	stop_tracer
	[ "$(summary .violations.write)" -gt 0 ]
	[ "$(events "select(.pid != $mine)" | wc -l)" -eq 0 ]
	[ "$(summary "[.top_processes[].pid] == [$mine]")" = true ]
}

@test "--dev keeps only the chosen device, with one --dev and with more than fit inline" {
	make_fs ext4
	local dev1=$DEV loop1=$LOOP mnt1=$MNT
	make_fs ext4
	# Up to 4 devices are compared from .rodata, more are looked up in a
	# hash map: 5 idle loop devices beside the chosen one (not the root
	# disk: the tracer's own output is written there).
	local others=() d
	for d in /sys/dev/block/7:*; do
		d=${d##*/}
		[ "$d" = "$dev1" ] || [ "$d" = "$DEV" ] || others+=(--dev "$d")
		[ ${#others[@]} -lt 10 ] || break
	done
	[ ${#others[@]} -eq 10 ]
	local args
	for args in "--dev $loop1" "${others[*]} --dev $loop1"; do
		echo "$args"
		# shellcheck disable=SC2086
		start_tracer --json $args
		"$WAC" -p A -d 3 "$mnt1/f" > /dev/null &
		local w1=$!
		"$WAC" -p A -d 3 "$MNT/f" > /dev/null &
		wait "$w1" $!
		stop_tracer
		assert_detached
		[ "$(summary .violations.write)" -gt 0 ]
		[ "$(events "select(.dev != \"$dev1\")" | wc -l)" -eq 0 ]
		[ "$(summary "[.devices[].dev] == [\"$dev1\"]")" = true ]
	done
}

@test "--comm keeps only tasks with that comm" {
	make_fs ext4
	cp "$WAC" "$BATS_TEST_TMPDIR/otherwac"
	start_tracer --json --comm wac --dev "$LOOP"
	# Started once attached, so both really write while traced.
	"$BATS_TEST_TMPDIR/otherwac" -p A -d 3 "$MNT/g" > /dev/null &
	local other=$!
	run_wac A "$MNT/f"
	wait "$other"
	stop_tracer
	[ "$(summary .violations.write)" -gt 0 ]
	[ "$(events 'select(.comm != "wac")' | wc -l)" -eq 0 ]
}

@test "--json: every line is one JSON object, events then one summary with the stable keys" {
	make_fs ext4
	start_tracer --json --dev "$LOOP"
	run_wac C "$MNT/f" 2
	stop_tracer
	run jq -e -s 'length > 1' "$TRACE_OUT"
	assert_success
	# Every line parses on its own as one object (-R: each raw line, parsed alone).
	run jq -R -e 'fromjson | type == "object"' "$TRACE_OUT"
	assert_success
	refute_output --partial false
	[ "$(jq -r .type "$TRACE_OUT" | sort -u | tr '\n' ' ')" = "summary violation " ]
	[ "$(tail -n1 "$TRACE_OUT" | jq -r .type)" = summary ]
	run events -e 'has("ts") and has("kind") and has("pid") and has("tid") and has("comm") and
		has("cgroup") and has("dev") and has("devname") and has("fstype") and has("ino") and
		has("index") and has("path")'
	assert_success
	refute_output --partial false
	summary -e 'has("duration_s") and (.violations | has("mmap") and has("write") and has("other"))
		and has("stable_waits") and has("events_lost") and has("top_processes") and has("top_files")'
	# Nothing lost at this rate, so the stream holds exactly what was counted.
	[ "$(summary .events_lost)" -eq 0 ]
	[ "$(events . | wc -l)" -eq "$(summary .violations_total)" ]
}

@test "a throttled consumer loses events, counts them exactly, and loses no count" {
	make_fs ext4
	# The tracer's stdout is a FIFO that nobody reads while the workload runs:
	# the pipe fills, the consumer blocks, the ring buffer overflows.
	mkfifo "$BATS_TEST_TMPDIR/fifo"
	local hold
	exec {hold}<> "$BATS_TEST_TMPDIR/fifo"
	TRACE_STDOUT=$BATS_TEST_TMPDIR/fifo start_tracer --json --dev "$LOOP"
	# Write until the kernel has counted far more violations than the ring
	# (256 KiB, ~3k events) and the pipe can hold; slow kernels (TCG) need longer.
	local counted=0
	for _ in $(seq 15); do
		run_wac A "$MNT/f" 2
		counted=$(bpftool map dump name totals -j | jq '[.[0].formatted.values[].value.violations[]] | add')
		[ "$counted" -ge 8192 ] && break
	done
	kill -INT "$TRACER_PID"
	cat "$BATS_TEST_TMPDIR/fifo" > "$TRACE_OUT" {hold}<&- &
	local reader=$!
	exec {hold}<&-
	wait "$TRACER_PID"
	TRACER_PID=
	wait "$reader"
	[ "$(summary .events_lost)" -gt 0 ]
	[ "$(events . | wc -l)" -eq "$(summary '.violations_total - .events_lost')" ]
	[ "$(summary .violations.write)" -eq "$(summary '[.devices[].violations.write] | add')" ]
}

@test "-q prints the summary only, would-stalls timed; SIGTERM also ends with a summary and detaches" {
	make_fs ext4
	start_tracer -q --dev "$LOOP"
	run_wac A "$MNT/f" 2
	kill -TERM "$TRACER_PID"
	wait "$TRACER_PID"
	TRACER_PID=
	run cat "$TRACE_OUT"
	assert_output --regexp 'Violations: [1-9][0-9]* \(mmap 0, write [1-9]'
	refute_output --partial 'KIND'
	assert_output --regexp 'Stable pages would have held pid [0-9]+ \(wac\) for [0-9.]+ thread-s'
	# -q shows no histogram, so write requests are not timed (no clock
	# read for them), but every violation's end still is: timed + untimed
	# + in flight == violations.
	local total timed untimed pending
	total=$(sed -n 's/.*Violations: \([0-9]*\) .*/\1/p' "$TRACE_OUT")
	read -r timed untimed pending < <(sed -n \
		's/^Would-stall timed: \([0-9]*\), untimed: \([0-9]*\), I\/O still in flight: \([0-9]*\);.*/\1 \2 \3/p' \
		"$TRACE_OUT")
	echo "violations $total = timed $timed + untimed $untimed + in flight $pending"
	[ "$timed" -gt 0 ]
	[ "$((timed + untimed + pending))" -eq "$total" ]
	assert_detached
}

@test "the BPF maps' memory, as bpftool counts it, is reported (-v, JSON, metrics) and at most 64 MiB" {
	local reported bpftool_sum ids
	PROM=$BATS_TEST_TMPDIR/stablepage.prom
	start_tracer -v --json -q --prom-file "$PROM"
	# The kernel's charge for each map the tracer holds (its fds' map ids).
	ids=$(awk '/^map_id:/ { print $2 }' /proc/"$TRACER_PID"/fdinfo/* 2>/dev/null | sort -u | paste -sd,)
	bpftool_sum=$(bpftool map show -j | jq --argjson ids "[$ids]" \
		'[.[] | select(.id as $id | $ids | index($id)) | .bytes_memlock] | add')
	stop_tracer
	reported=$(sed -n 's/^BPF maps: \([0-9]*\) bytes .* charged (memlock) for [0-9]* maps.*/\1/p' "$TRACE_ERR")
	echo "reported $reported bytes, bpftool $bpftool_sum bytes"
	[ "$reported" -eq "$bpftool_sum" ]
	[ "$reported" -le $((64 << 20)) ]
	grep -qx "stablepage_bpf_maps_bytes $reported" "$PROM"
	[ "$(summary .bpf_maps_bytes)" -eq "$reported" ]
}

@test "-d ends the trace by itself" {
	run "$SPT" -d 1 -q
	assert_success
	# Never before the second is up; how long after it is the machine's business.
	[ "$(echo "$output" | sed -n 's/^Traced \([0-9.]*\) s\..*/\1/p' | awk '{ print ($1 >= 1.0) }')" = 1 ]
}
