#!/usr/bin/env bats
# `stablepage-trace report`: the JSON output of a real traced run (ext4 on a
# loop device) made into a page, rendered by Debian's headless Chromium.
load helpers

setup() { spt_setup; }
teardown() { spt_teardown; }

# traced_run ARGS...: ext4 on a loop device, mmap and write() writers (wac B
# and A) at once for 3 s under the tracer with ARGS; RUN is its output.
traced_run() {
	make_fs ext4
	start_tracer --json --dev "$LOOP" "$@"
	"$WAC" -p B -t 2 -d 3 "$MNT/mapped" > /dev/null &
	local mapper=$!
	"$WAC" -p A -t 2 -d 3 "$MNT/written" > /dev/null
	wait "$mapper"
	stop_tracer
	assert_detached
	RUN=$TRACE_OUT
	PAGE=$BATS_TEST_TMPDIR/report.html
}

# chromium_headless ARGS... FILE: the page rendered in a throw-away profile,
# no network (a proxy that does not exist catches any fetch the page made).
chromium_headless() {
	local file=${!#}
	set -- "${@:1:$#-1}"
	timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$BATS_TEST_TMPDIR/chromium" --proxy-server=127.0.0.1:9 \
		--window-size=1200,2600 "$@" "file://$file" 2> "$BATS_TEST_TMPDIR/chromium.err"
}

@test "report: a traced run's page renders in headless Chromium" {
	[ -n "${VM_ROOT:-}" ] && skip "Chromium under TCG takes minutes: rendered on the host"
	command -v chromium > /dev/null || skip "no chromium (make test installs it)"
	traced_run -i 1
	run "$SPT" report "$RUN" -o "$PAGE"
	assert_success
	assert_output ""
	# The DOM as Chromium built it: the SVGs, the tables, what the run was.
	chromium_headless --dump-dom "$PAGE" > "$BATS_TEST_TMPDIR/dom.html"
	dom=$BATS_TEST_TMPDIR/dom.html
	kernel=$(uname -r)
	grep -q "<dd id=\"kernel\">$kernel</dd>" "$dom"
	grep -q '<dd id="attach-mode">tracepoint</dd>' "$dom"
	for id in processes files cgroups devices; do
		grep -q "<table id=\"$id\">" "$dom"
	done
	# would-stall and writeback histograms per device; the timeline
	[ "$(grep -c '<figure class="chart" data-hist="would-stall">' "$dom")" -ge 1 ]
	[ "$(grep -c '<figure class="chart" data-hist="writeback">' "$dom")" -ge 1 ]
	[ "$(grep -c '<svg class="timeline"' "$dom")" -eq 1 ]
	grep -q "<td class=\"path\">$MNT/mapped</td>" "$dom"
	grep -q "<td>${LOOP#/dev/}</td>" "$dom"
	# A screenshot with ink on it: text, bars in colour.
	chromium_headless --screenshot="$BATS_TEST_TMPDIR/page.png" "$PAGE"
	run "$ROOT/tests/png-ink.py" "$BATS_TEST_TMPDIR/page.png"
	assert_success
	echo "screenshot: $output (size, dark pixels, coloured pixels)"
	read -r size ink coloured <<< "$output"
	[ "$size" = 1200x2600 ]
	[ "$ink" -gt 20000 ]
	[ "$coloured" -gt 5000 ]
	[ -n "${SPT_KEEP_REPORT:-}" ] && cp "$PAGE" "$BATS_TEST_TMPDIR/page.png" "$SPT_KEEP_REPORT/"
	true
}

@test "report: a -q run with intervals only: the timeline from the intervals" {
	traced_run -q -i 1
	run "$SPT" report "$RUN"
	assert_success
	echo "$output" > "$PAGE"
	kernel=$(uname -r)
	grep -q "<dd id=\"kernel\">$kernel</dd>" "$PAGE"
	grep -q 'From [0-9]* interval/summary objects' "$PAGE"
	# -q: no events, the summary's own cgroup table (kernel-side counts)
	grep -q '<table id="cgroups">' "$PAGE"
	grep -q '<table id="processes">' "$PAGE"
	[ "$(grep -c '<svg ' "$PAGE")" -ge 3 ]
	# The summary's violations, as the JSON says.
	total=$(tail -n1 "$RUN" | jq .violations_total)
	[ "$total" -gt 0 ]
	grep -q "<div class=\"card\" id=\"violations\"><div class=\"n\">$total</div>" "$PAGE"
}

@test "report: input that is not the tool's JSON is one line, exit 2" {
	cd "$BATS_TEST_TMPDIR"
	printf 'hello\n' > text
	printf '{"a":1}\n' > other.json
	printf '[1,2]\n' > array.json
	: > empty.json
	for input in missing.json text other.json array.json empty.json /; do
		run "$SPT" report "$input" -o page.html
		echo "$input: $output"
		[ "$status" -eq 2 ]
		[ "${#lines[@]}" -eq 1 ]
		assert_output --regexp "^stablepage-trace: report: $input: "
		[ ! -e page.html ]
	done
	run "$SPT" report
	[ "$status" -eq 2 ]
	assert_output --partial "report needs the tool's JSON output"
	run "$SPT" -o page.html
	[ "$status" -eq 2 ]
	assert_output --partial "-o belongs to 'stablepage-trace report'"
	printf '{"type":"summary","duration_s":1,"violations":{}}\n' > min.json
	run "$SPT" report min.json -o /nonexistent/page.html
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
}
