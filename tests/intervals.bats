#!/usr/bin/env bats
# bcc's habits on the real tool: [INTERVAL [COUNT]], -T, --delta, wall-clock
# time in JSON, and per-cgroup attribution (a workload in its own cgroup v2).
load helpers

setup() { spt_setup; }
teardown() { spt_teardown; }

# own_cgroup: a new cgroup v2 child (CG, its path in the hierarchy CG_PATH),
# on the cgroup2 mount, or on one mounted for the test; removed after.
own_cgroup() {
	local root
	root=$(findmnt -n -t cgroup2 -o TARGET | head -1)
	if [ -z "$root" ]; then
		root=$BATS_TEST_TMPDIR/cgroup2
		mkdir "$root"
		mount -t cgroup2 none "$root"
		on_cleanup "umount $root"
	fi
	CG=$(mktemp -d -p "$root" spt-test.XXXX)
	CG_PATH=${CG#"$root"}
	# The group empties once its last task is reaped: allow it a moment.
	on_cleanup "for _ in \$(seq 50); do rmdir $CG 2> /dev/null && break; sleep 0.1; done"
}

# wac_in_cgroup PROFILE SECS FILE: the reproducer, moved into CG first; sets WAC_PID.
wac_in_cgroup() {
	bash -c 'echo $$ > "$1/cgroup.procs" && exec "$2" -p "$3" -d "$4" "$5"' _ \
		"$CG" "$WAC" "$1" "$2" "$3" > "$BATS_TEST_TMPDIR/wac.out" &
	WAC_PID=$!
	wait "$WAC_PID"
}

@test "INTERVAL COUNT: exactly COUNT interval reports, then the summary, exit 0" {
	run bash -c "'$SPT' -q --json 0.3 4 2> /dev/null"
	assert_success
	[ "$(jq -s '[.[] | select(.type == "interval")] | length' <<< "$output")" -eq 4 ]
	[ "$(jq -s -c '[.[] | select(.type == "interval") | .seq]' <<< "$output")" = "[1,2,3,4]" ]
	[ "$(jq -s -r '.[-1].type' <<< "$output")" = summary ]
	[ "$(jq -s 'length' <<< "$output")" -eq 5 ]
	# Wall-clock time on every report, in order; the last interval is the summary's snapshot.
	jq -s -e 'all(.[]; (.ts | type) == "number" and (.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$")))' <<< "$output"
	jq -s -e '[.[].ts] as $t | $t == ($t | sort)' <<< "$output"
	jq -s -e '.[3].ts == .[4].ts and .[3].delta == false' <<< "$output"
	assert_detached
}

@test "INTERVAL COUNT in text with -T: COUNT reports stamped with the time" {
	run "$SPT" -q -T 0.3 3
	assert_success
	[ "$(grep -cE '^--- [0-9]{2}:[0-9]{2}:[0-9]{2} after [0-9.]+ s \(counts since the start\) ---$' <<< "$output")" -eq 3 ]
	[ "$(grep -c '^Traced ' <<< "$output")" -eq 4 ] # three reports and the summary
	run "$SPT" -q 0.3 1
	assert_success
	[ "$(grep -c '^--- after' <<< "$output")" -eq 1 ]
}

@test "--delta on a real workload: the intervals add up to the summary exactly" {
	make_fs ext4
	start_tracer -q --json --dev "$LOOP" --delta 0.5
	"$WAC" -p C -d 3 "$MNT/f" > /dev/null
	stop_tracer
	assert_detached
	local out=$TRACE_OUT
	[ "$(summary .violations_total)" -gt 0 ]
	[ "$(jq -s '[.[] | select(.type == "interval")] | length' "$out")" -ge 2 ]
	jq -s -e '[.[] | select(.type == "interval")] | all(.delta) and
		([.[].seq] == [range(1; length + 1)])' "$out"
	# Each interval starts where the previous one ended; the first at the start.
	jq -s -e '[.[] | select(.type == "interval")] as $i | .[-1] as $s |
		$i[0].since_ts == $s.since_ts and $i[-1].ts == $s.ts and
		all(range(1; $i | length); $i[.].since_ts == $i[. - 1].ts)' "$out"
	# Totals, per device and kind, and histogram samples: sums of the deltas.
	local key
	for key in violations.mmap violations.write violations.other violations_total stable_waits \
		other_waits stable_dirtied events_lost wait_untimed would_stall_untimed; do
		run jq -s ". as \$all | ([.[] | select(.type == \"interval\") | .$key] | add) == \$all[-1].$key" "$out"
		[ "$output" = true ] || { echo "$key: deltas do not add up"; return 1; }
	done
	run jq -s '([.[] | select(.type == "interval") | .devices[] | .violations[]] | add) ==
		([.[-1].devices[] | .violations[]] | add)' "$out"
	assert_output true
	run jq -s '[.[] | select(.type == "interval") | .histograms[] |
		select(.name == "would-stall") | .count] | add // 0' "$out"
	assert_output "$(summary '[.histograms[] | select(.name == "would-stall") | .count] | add // 0')"
	# A state is not a delta: the last interval's pending counts are the summary's.
	jq -s -e '[.[] | select(.type == "interval")][-1].would_stall_pending == .[-1].would_stall_pending' "$out"
}

@test "cgroups: a workload in its own cgroup is attributed to it (JSON, Prometheus)" {
	make_fs ext4
	own_cgroup
	PROM=$BATS_TEST_TMPDIR/s.prom
	start_tracer -q --json --dev "$LOOP" --prom-file "$PROM" --prom-top-cgroup 3
	wac_in_cgroup B 3 "$MNT/f"
	stop_tracer
	assert_detached
	local total mine
	total=$(summary .violations_total)
	mine=$(summary "[.top_processes[] | select(.pid == $WAC_PID) | .total] | add")
	echo "violations $total, by the workload $mine, cgroups: $(summary -c .top_cgroups)"
	[ "$mine" -gt 0 ]
	[ "$(summary -r '.top_cgroups[0].cgroup')" = "$CG_PATH" ]
	[ "$(summary '.top_cgroups[0].total')" -eq "$mine" ]
	[ "$(summary '([.top_cgroups[].total] | add) + .cgroups_unattributed')" -eq "$total" ]
	run promtool check metrics < "$PROM"
	assert_success
	run awk -v m="stablepage_cgroup_violations_total{cgroup=\"$CG_PATH\"}" 'index($0, m " ") == 1 { print $NF }' "$PROM"
	assert_output "$mine"
	[ "$(grep -c '^stablepage_cgroup_violations_total{' "$PROM")" -le 3 ]
}

@test "cgroups: the text summary has a CGROUP table with the workload's path" {
	make_fs ext4
	own_cgroup
	start_tracer -q --dev "$LOOP"
	wac_in_cgroup B 2 "$MNT/f"
	stop_tracer
	assert_detached
	cat "$TRACE_OUT"
	grep -Eq '^ +MMAP +WRITE +OTHER +METADATA  CGROUP$' "$TRACE_OUT"
	grep -Eq "^ +[1-9][0-9]* +0 +[0-9]+ +[0-9]+  $CG_PATH\$" "$TRACE_OUT"
}
