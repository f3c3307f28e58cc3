#!/usr/bin/env bats
# Histograms and the Prometheus textfile export, on the running kernel with
# real filesystems, checked by Debian's promtool and a real node_exporter.
load helpers

setup() { spt_setup; }
teardown() { spt_teardown; }

# trace_mmap_ext4 [stable] ARGS...: ext4 on a loop device, the mmap profile
# for 3 s under the tracer with ARGS; PROM is the metrics file.
trace_mmap_ext4() {
	local stable=
	[ "${1:-}" = stable ] && { stable=stable; shift; }
	make_fs ext4 $stable
	PROM_DIR=$BATS_TEST_TMPDIR/textfile
	mkdir -p "$PROM_DIR"
	PROM=$PROM_DIR/stablepage.prom
	start_tracer --json --dev "$LOOP" --prom-file "$PROM" "$@"
	"$WAC" -p B -d 3 "${WAC_ARGS[@]}" "$MNT/f" > /dev/null
	stop_tracer
	assert_detached
}

# assert_union_charged THREADS OP: the process is charged, per thread, the
# union of its would-stalls: more than nothing, OP (-le, -lt) their sum, no
# more than its THREADS threads' time.
assert_union_charged() {
	local charged sum
	charged=$(summary '.top_processes[0].would_stall_ns')
	sum=$(summary '[.histograms[] | select(.name == "would-stall") | .sum_ns] | add')
	echo "charged $charged ns, histogram sum $sum ns"
	# one test a line: set -e does not stop at the first of an && list
	[ "$charged" -gt 0 ]
	[ "$charged" "$2" "$sum" ]
	[ "$charged" -le "$(summary "(.duration_s * $1e9) | floor")" ]
}

# metric NAME{LABELS}: the value of one sample line in PROM.
metric() {
	awk -v m="$1" 'index($0, m " ") == 1 { print $NF }' "$PROM"
}

# check_histograms: for every histogram series in PROM, buckets are
# cumulative, le ascending, +Inf == _count, and _sum lies within what the
# bucket bounds allow (each sample >= its bucket's lower bound, < its le).
check_histograms() {
	awk '
	/^#/ { next }
	/_bucket\{/ {
		series = $1; sub(/,?le="[^"]*"/, "", series); sub(/_bucket/, "", series)
		match($1, /le="[^"]*"/); le = substr($1, RSTART + 4, RLENGTH - 5)
		v = $NF
		if (series in last && v < last[series]) { print "not cumulative: " $0; bad = 1 }
		if (le != "+Inf") {
			if (series in lastle && le + 0 <= lastle[series]) { print "le not ascending: " $0; bad = 1 }
			n = v - (series in last ? last[series] : 0)
			lo[series] += n * (series in lastle ? lastle[series] : 0)
			hi[series] += n * le
			lastle[series] = le + 0
		} else {
			inf[series] = v
			# Samples above the last finite le have no upper bound.
			if (v > last[series]) hi[series] = "none"
		}
		last[series] = v
		next
	}
	/_count\{/ { s = $1; sub(/_count/, "", s); count[s] = $NF; next }
	/_sum\{/ { s = $1; sub(/_sum/, "", s); sum[s] = $NF; next }
	END {
		for (s in inf) {
			if (!(s in count) || inf[s] != count[s]) { print "+Inf != _count: " s; bad = 1 }
			if (sum[s] + 1e-6 < lo[s]) { print "_sum below bucket bounds: " s; bad = 1 }
			if (hi[s] != "none" && sum[s] > hi[s] + 1e-6) { print "_sum above bounds: " s; bad = 1 }
			n++
		}
		if (!n) { print "no histogram"; bad = 1 }
		exit bad
	}' "$PROM"
}

@test "mmap profile on ext4: promtool accepts the metrics file, violations counted" {
	WAC_ARGS=()
	trace_mmap_ext4
	run promtool check metrics < "$PROM"
	assert_success
	local dev=${LOOP#/dev/}
	[ "$(metric "stablepage_violations_total{device=\"$dev\",fstype=\"ext4\",kind=\"mmap\"}")" -gt 0 ]
	[ "$(metric "stablepage_violations_total{device=\"$dev\",fstype=\"ext4\",kind=\"mmap\"}")" = \
		"$(summary '.devices[0].violations.mmap')" ]
	[ "$(metric "stablepage_stable_writes{device=\"$dev\",fstype=\"ext4\"}")" = 0 ]
	grep -q '^stablepage_build_info{version="[^"]*",attach_mode="'"$(summary -r .attach_mode)"'",kernel="'"$(uname -r)"'"} 1$' "$PROM"
	# Never a partial or temporary file left next to it.
	[ "$(ls "$PROM_DIR")" = stablepage.prom ]
}

@test "histograms: cumulative buckets, +Inf == _count, _sum within bounds" {
	WAC_ARGS=()
	trace_mmap_ext4
	run check_histograms
	assert_success
	# The JSON summary carries the same histograms, slot by slot.
	local dev=${LOOP#/dev/}
	[ "$(summary '[.histograms[] | select(.name == "would-stall") | .count] | add')" = \
		"$(metric "stablepage_would_stall_seconds_count{device=\"$dev\",kind=\"mmap\"}")" ]
	[ "$(summary '[.histograms[] | .count == (.usecs_log2 | add)] | all')" = true ]
}

@test "histogram keys whose table row is taken go to the hash map: the same checks pass" {
	# One row for 128 hash values: most keys land in the hash map.
	SPT_HIST_TABLE_ROWS=1 WAC_ARGS=()
	export SPT_HIST_TABLE_ROWS
	trace_mmap_ext4
	run check_histograms
	assert_success
	[ "$(summary '[.histograms[] | select(.name == "would-stall") | .count] | add')" -eq \
		"$(($(summary .violations_total) - $(summary .would_stall_untimed) - $(summary .would_stall_pending)))" ]
	[ "$(summary '[.histograms[] | select(.name == "writeback") | .count] | add')" -gt 0 ]
}

@test "mmap profile on ext4: would-stall timed every violation whose I/O end was seen" {
	WAC_ARGS=()
	trace_mmap_ext4
	local total timed untimed pending
	total=$(summary .violations_total)
	timed=$(summary '[.histograms[] | select(.name == "would-stall") | .count] | add // 0')
	untimed=$(summary .would_stall_untimed)
	pending=$(summary .would_stall_pending)
	echo "violations $total = timed $timed + untimed $untimed + in flight $pending"
	[ "$timed" -gt 0 ]
	[ "$((timed + untimed + pending))" -eq "$total" ]
	# wac runs 4 threads
	assert_union_charged 4 -le
}

@test "three writers in one stall-horizon set of two ways: still charged less than their sum" {
	# One set for every thread (the eviction path); wac's write() profile
	# (-p A overrides the helper's mmap one), whose would-stalls overlap
	# within each thread: charged 0.2-0.3 of their sum, 0.5 when two
	# threads took one row from each other.
	SPT_STALL_HORIZON_SETS=1 WAC_ARGS=(-p A -t 3)
	export SPT_STALL_HORIZON_SETS
	trace_mmap_ext4
	assert_union_charged 3 -lt
}

@test "ext4 with stable writes enforced: stable-wait histogram non-empty, no violations" {
	WAC_ARGS=()
	trace_mmap_ext4 stable
	local dev=${LOOP#/dev/}
	[ "$(summary .violations_total)" -eq 0 ]
	[ "$(summary '[.histograms[] | select(.name == "stable-wait") | .count] | add')" -gt 0 ]
	[ "$(metric "stablepage_stable_wait_seconds_count{device=\"$dev\"}")" -gt 0 ]
	[ "$(metric "stablepage_stable_writes{device=\"$dev\",fstype=\"ext4\"}")" = 1 ]
	# Timed + untimed + still waiting == the stable waits counted.
	assert_waits_accounted
	run promtool check metrics < "$PROM"
	assert_success
}

@test "a comm with a quote, a backslash and a newline is escaped; promtool accepts it" {
	WAC_ARGS=(-n "$(printf 'a"b\\c\nd')")
	trace_mmap_ext4 --prom-top-comm 3
	run promtool check metrics < "$PROM"
	assert_success
	grep -qF 'stablepage_comm_violations_total{comm="a\"b\\c\nd"} ' "$PROM"
}

@test "node_exporter's textfile collector scrapes the file: our counter > 0, no scrape error" {
	WAC_ARGS=()
	trace_mmap_ext4
	local port=$((20000 + RANDOM % 20000)) body=$BATS_TEST_TMPDIR/metrics
	prometheus-node-exporter --web.listen-address="127.0.0.1:$port" \
		--collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$PROM_DIR" > "$BATS_TEST_TMPDIR/ne.log" 2>&1 &
	on_cleanup "kill_wait $!"
	for _ in $(seq 100); do
		curl -sf "http://127.0.0.1:$port/metrics" > "$body" && break
		sleep 0.1
	done
	grep -q '^node_textfile_scrape_error 0$' "$body" || { cat "$BATS_TEST_TMPDIR/ne.log"; return 1; }
	run awk '/^stablepage_violations_total\{.*kind="mmap"/ { print $NF }' "$body"
	assert_success
	[ "${output:-0}" -gt 0 ]
}

@test "-i: interval reports are cumulative, then the summary" {
	make_fs ext4
	start_tracer --json -q --dev "$LOOP" -i 1
	"$WAC" -p B -d 3 "$MNT/f" > /dev/null
	sleep 1
	stop_tracer
	run jq -rs '[.[] | select(.type == "interval") | .violations_total] as $v |
		($v | length >= 2) and ([range(1; $v | length) | $v[.] >= $v[. - 1]] | all) and
		(.[-1].type == "summary") and (.[-1].violations_total >= $v[-1])' "$TRACE_OUT"
	assert_output true
}

# wait_prom COND: until the awk condition COND holds on PROM's samples (up
# to 30 s: the tracer rewrites it every second here).
wait_prom() {
	for _ in $(seq 300); do
		[ -s "$PROM" ] && awk "$1 { found = 1 } END { exit !found }" "$PROM" && return 0
		sleep 0.1
	done
	echo "never: $1" >&2
	cat "$PROM" >&2
	return 1
}

# no_duplicate_series: every sample line's name and labels are unique.
no_duplicate_series() {
	run sh -c "grep -v '^#' '$PROM' | awk '{ print \$1 }' | sort | uniq -d"
	assert_success
	assert_output ''
}

@test "a device traced has its series at 0 before any violation; start and update times" {
	make_fs ext4
	PROM=$BATS_TEST_TMPDIR/stablepage.prom
	local dev=${LOOP#/dev/} t0 first
	t0=$(date +%s)
	start_tracer --json -q --dev "$LOOP" -i 1 --prom-file "$PROM"
	wait_prom '/^stablepage_last_update_time_seconds /'
	first=$(metric stablepage_last_update_time_seconds)
	for kind in mmap write other metadata; do
		[ "$(metric "stablepage_violations_total{device=\"$dev\",fstype=\"ext4\",kind=\"$kind\"}")" = 0 ]
	done
	[ "$(metric "stablepage_stable_waits_total{device=\"$dev\"}")" = 0 ]
	[ "$(metric "stablepage_failed_after_violation_total{device=\"$dev\",fstype=\"ext4\"}")" = 0 ]
	[ "$(metric stablepage_rows_dropped_total)" = 0 ]
	# --dev: the other mounted devices get no series
	[ "$(grep -c '^stablepage_stable_waits_total{' "$PROM")" = 1 ]
	run promtool check metrics < "$PROM"
	assert_success
	# the start is the tracer's, the update the file's latest
	awk -v t0="$t0" '$1 == "stablepage_start_time_seconds" { exit !($2 >= t0 - 1 && $2 <= t0 + 60) }' "$PROM"
	wait_prom "\$1 == \"stablepage_last_update_time_seconds\" && \$2 > $first"
	stop_tracer
	# the summary's device row is the one the series stood for
	[ "$(summary '.violations_total')" = 0 ]
}

@test "btrfs mounted twice in a run: two superblocks of one device, one series per label set" {
	make_fs btrfs
	PROM=$BATS_TEST_TMPDIR/stablepage.prom
	local dev=${LOOP#/dev/} first_dev hold
	# no --dev: it names btrfs by its superblock's anonymous dev, which changes
	start_tracer --json -q -i 1 --prom-file "$PROM"
	"$WAC" -p C -d 2 "$MNT/f" > /dev/null
	first_dev=$DEV
	umount "$MNT"
	# a tmpfs takes the anonymous dev btrfs freed: the next mount gets another
	hold=$(mktemp -d -p "$BATS_TEST_TMPDIR" hold.XXXX)
	mount -t tmpfs -o size=1m none "$hold"
	on_cleanup "umount $hold"
	mount "$LOOP" "$MNT"
	DEV=$(mountpoint -d "$MNT")
	echo "btrfs superblock devs: $first_dev then $DEV"
	[ "$DEV" != "$first_dev" ]
	"$WAC" -p C -d 2 "$MNT/f" > /dev/null
	stop_tracer # its last file is written at exit
	# the summary has two rows for the device: the duplicates there were
	[ "$(summary "[.devices[] | select(.devname == \"$dev\")] | length")" = 2 ]
	no_duplicate_series
	run promtool check metrics < "$PROM"
	assert_success
	# one series, the two superblocks' counts added up
	local kind want
	for kind in mmap write; do
		want=$(summary "[.devices[] | select(.devname == \"$dev\") | .violations.$kind] | add")
		[ "$(metric "stablepage_violations_total{device=\"$dev\",fstype=\"btrfs\",kind=\"$kind\"}")" = "$want" ]
	done
	want=$(summary "[.devices[] | select(.devname == \"$dev\") | .stable_waits] | add")
	[ "$(metric "stablepage_stable_waits_total{device=\"$dev\"}")" = "$want" ]
}

# start_wac_as_pid PID COMM ARGS...: wac started as pid PID (ns_last_pid
# just before the fork; other forks on the host may take it: tried again).
start_wac_as_pid() {
	local pid=$1 comm=$2
	shift 2
	for _ in $(seq 50); do
		echo $((pid - 1)) > /proc/sys/kernel/ns_last_pid
		"$WAC" -n "$comm" "$@" > /dev/null &
		[ "$!" = "$pid" ] && { wait $!; return; }
		wait $!
	done
	skip "pid $pid kept being taken by other forks"
}

@test "--row-age: idle rows age out, counters stay exact, a reused pid shows its new comm" {
	make_fs ext4
	PROM=$BATS_TEST_TMPDIR/stablepage.prom
	local dev=${LOOP#/dev/} pid before
	start_tracer --json -q --dev "$LOOP" -i 1 --prom-file "$PROM" --prom-top-comm 5 --row-age 2
	"$WAC" -n first-life -p B -d 2 "$MNT/f" > /dev/null &
	pid=$!
	wait $pid
	wait_prom '$1 == "stablepage_rows_aged_out_total" && $2 >= 2'
	before=$(metric "stablepage_violations_total{device=\"$dev\",fstype=\"ext4\",kind=\"mmap\"}")
	[ "$before" -gt 0 ]
	# the process's rows are gone from the reports, its counts are not
	run jq -rs "[.[] | select(.type == \"interval\")][-1] | [.top_processes[] | select(.pid == $pid)] | length" "$TRACE_OUT"
	assert_output 0
	[ "$(metric 'stablepage_comm_violations_total{comm="first-life"}')" -ge "$before" ]
	start_wac_as_pid "$pid" second-life -p B -d 1 "$MNT/g"
	stop_tracer
	# pid reused: its row is the new program's
	[ "$(summary -r ".top_processes[] | select(.pid == $pid) | .comm")" = second-life ]
	# totals: the devices' rows add up to the kernel's never-pruned totals
	[ "$(summary '[.devices[] | .violations | add] | add')" = "$(summary .violations_total)" ]
	[ "$(metric "stablepage_violations_total{device=\"$dev\",fstype=\"ext4\",kind=\"mmap\"}")" -ge "$before" ]
	[ "$(metric 'stablepage_comm_violations_total{comm="first-life"}')" -ge "$before" ]
	no_duplicate_series
	run promtool check metrics < "$PROM"
	assert_success
}

@test "--prom-file: a group-writable or symlinked directory is refused at start" {
	local dir=$BATS_TEST_TMPDIR/open
	mkdir "$dir"
	chmod 0775 "$dir"
	run "$SPT" -q -d 1 --prom-file "$dir/x.prom"
	assert_failure 2
	assert_output --partial "group- or world-writable and not sticky"
	ln -s "$dir" "$BATS_TEST_TMPDIR/link"
	chmod 0755 "$dir"
	run "$SPT" -q -d 1 --prom-file "$BATS_TEST_TMPDIR/link/x.prom"
	assert_failure 2
	assert_output --partial "is a symlink"
}

@test "--row-age without reports: rows still age out, the summary's devices keep their counts" {
	make_fs ext4
	local pid
	start_tracer --json -q --dev "$LOOP" --row-age 1
	"$WAC" -p B -d 1 "$MNT/f" > /dev/null &
	pid=$!
	wait $pid
	sleep 5 # the tick is a quarter of the age, at least 1 s: a few of them
	stop_tracer
	[ "$(summary "[.top_processes[] | select(.pid == $pid)] | length")" = 0 ]
	[ "$(summary .violations_total)" -gt 0 ]
	[ "$(summary '[.devices[] | .violations | add] | add')" = "$(summary .violations_total)" ]
}
