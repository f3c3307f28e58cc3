#!/usr/bin/env bats
# The fleet view (deploy/): the alert rules under promtool, and the Grafana
# dashboard's every query against a real Prometheus (Debian's package, on
# 127.0.0.1) scraping a real node_exporter that reads the tool's textfile
# while the tool traces a workload on two loop devices, one of them
# requiring stable writes. One such run serves every test (setup_file); the
# queries are asked at the instant the workload ended.
load helpers

RULES=$ROOT/deploy/prometheus/stablepage-trace.rules.yml
RULES_TEST=$ROOT/deploy/prometheus/stablepage-trace.rules.test.yml
DASHBOARD=$ROOT/deploy/grafana/stablepage-trace.json


# free_port: a TCP port nobody listens on now.
free_port() {
	local port
	while :; do
		port=$((20000 + RANDOM % 20000))
		ss -Htln "sport = :$port" | grep -q . || break
	done
	echo "$port"
}

# wait_http URL PID: polls URL until it answers (up to 30 s) while PID lives.
wait_http() {
	for _ in $(seq 300); do
		curl -sf -o /dev/null "$1" && return 0
		kill -0 "$2" 2> /dev/null || return 1
		sleep 0.1
	done
	return 1
}

# query PROMQL [TIME]: the JSON result vector of an instant query, asked at
# TIME (default: when the workload ended); fails on an API error.
query() {
	local out
	out=$(curl -sf --get "$PROM_URL/api/v1/query" --data-urlencode "query=$1" \
		--data-urlencode "time=${2:-$QUERY_TIME}") || { echo "query failed: $1" >&2; return 1; }
	jq -e '.status == "success"' <<< "$out" > /dev/null || { echo "$out" >&2; return 1; }
	jq -c '.data.result' <<< "$out"
}

# start_daemon NAME URL CMD...: starts CMD in the background (its output in
# NAME.log), stopped by teardown_file, and waits until URL answers.
start_daemon() {
	local name=$1 url=$2 pid
	shift 2
	"$@" > "$FLEET_DIR/$name.log" 2>&1 &
	pid=$!
	on_cleanup "kill_wait $pid"
	wait_http "$url" "$pid" || { echo "$name did not start:" >&2; cat "$FLEET_DIR/$name.log" >&2; return 1; }
}

start_exporters() {
	local ne_port prom_port
	ne_port=$(free_port)
	start_daemon node_exporter "http://127.0.0.1:$ne_port/metrics" \
		prometheus-node-exporter --web.listen-address="127.0.0.1:$ne_port" \
		--collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$PROM_DIR"
	# Scrapes and rule evaluations every second, so that a few seconds
	# of workload make rates.
	cat > "$FLEET_DIR/prometheus.yml" <<-EOF
	global:
	  scrape_interval: 1s
	  evaluation_interval: 1s
	rule_files:
	  - $RULES
	scrape_configs:
	  - job_name: node
	    static_configs:
	      - targets: ["127.0.0.1:$ne_port"]
	EOF
	prom_port=$(free_port)
	PROM_URL=http://127.0.0.1:$prom_port
	export PROM_URL
	# The TSDB is removed at once: bats keeps its directories until the
	# run ends, and the guest's /tmp is a small tmpfs.
	local tsdb
	tsdb=$(mktemp -d "${TMPDIR:-/tmp}/spt-fleet-tsdb.XXXXXX")
	on_cleanup "rm -rf $tsdb"
	start_daemon prometheus "$PROM_URL/-/ready" \
		prometheus --config.file="$FLEET_DIR/prometheus.yml" --storage.tsdb.path="$tsdb" \
		--web.listen-address="127.0.0.1:$prom_port" --log.level=warn
}

# until_query PROMQL: waits (up to 30 s) until PROMQL returns a series now.
until_query() {
	for _ in $(seq 300); do
		[ "$(query "$1" "$(date +%s.%N)" | jq length)" -gt 0 ] && return 0
		sleep 0.1
	done
	echo "no result for $1 in 30 s" >&2
	return 1
}

setup_file() {
	export FLEET_DIR=$BATS_FILE_TMPDIR CLEANUP_FILE=$BATS_FILE_TMPDIR/cleanup
	: > "$CLEANUP_FILE"
	export PROM_DIR=$FLEET_DIR/textfile
	mkdir -p "$PROM_DIR"
	# Two filesystems: on PLAIN the mmap profile makes violations and
	# would-stalls, on STABLE (stable writes required) stable waits.
	# shellcheck disable=SC2034 # make_fs and start_tracer put their files there
	local BATS_TEST_TMPDIR=$FLEET_DIR plain stable args
	make_fs ext4
	plain=$LOOP PLAIN_MNT=$MNT
	make_fs ext4 stable
	stable=$LOOP
	export PLAIN_DEV=${plain#/dev/} STABLE_DEV=${stable#/dev/}
	start_exporters
	args=(-q -i 1 --dev "$plain" --dev "$stable" --prom-file "$PROM_DIR/stablepage.prom"
		--prom-top-comm 5)
	"$SPT" --help | grep -q -- --prom-top-cgroup && args+=(--prom-top-cgroup 5)
	start_tracer "${args[@]}"
	until_query 'stablepage_build_info'
	"$WAC" -p B -d 6 -n fleet-plain "$PLAIN_MNT/f" > /dev/null &
	local wac_pid=$!
	"$WAC" -p B -d 6 -n fleet-stable "$MNT/f" > /dev/null
	wait "$wac_pid"
	export QUERY_TIME
	QUERY_TIME=$(date +%s.%N)
	# Scraped past the end of the workload before the tracer goes.
	sleep 2
	stop_tracer
	assert_detached
	cp "$PROM_DIR/stablepage.prom" "$FLEET_DIR/final.prom"
}

# The tracer (if setup_file stopped half-way), then the rest, newest first.
teardown_file() {
	spt_teardown
}

@test "alert rules: promtool check rules, and their unit tests pass" {
	run promtool check rules "$RULES"
	assert_success
	assert_output --partial 'SUCCESS: 4 rules found'
	run promtool test rules "$RULES_TEST"
	assert_success
}

@test "alert rules load into the real Prometheus and evaluate without error; none fires" {
	local rules
	rules=$(curl -sf "$PROM_URL/api/v1/rules?type=alert")
	[ "$(jq '[.data.groups[].rules[]] | length' <<< "$rules")" = 4 ]
	run jq -r '.data.groups[].rules[] | select(.health != "ok" or
		(.lastEvaluation | startswith("0001"))) | "\(.name): \(.health) \(.lastError // "")"' <<< "$rules"
	assert_output ''
	# Violations on the plain device only, the stable one waited; -q
	# streams nothing to lose; the file was fresh.
	run query 'ALERTS{alertname=~"Stablepage.*"}'
	assert_output '[]'
}

@test "the rules' joins and selectors match the series the tool really exports" {
	# The violation and the stable-writes series of each device pair up as
	# StablepageViolationOnStableDevice joins them (per device).
	run query 'count by (device) (stablepage_violations_total and ignoring (kind, fstype)
		max without (fstype) (stablepage_stable_writes))'
	assert_success
	[ "$(jq length <<< "$output")" = 2 ]
	run query "stablepage_stable_writes{device=\"$STABLE_DEV\"} == 1"
	[ "$(jq length <<< "$output")" = 1 ]
	run query "stablepage_stable_writes{device=\"$PLAIN_DEV\"} == 0"
	[ "$(jq length <<< "$output")" = 1 ]
	# The stale-file rule's selector, as written in the rules, finds the file.
	local selector
	selector=$(grep -o 'node_textfile_mtime_seconds{[^}]*}' "$RULES")
	run query "$selector"
	[ "$(jq length <<< "$output")" = 1 ]
	# The metrics the rules name are in the tool's file.
	local m
	while read -r m; do
		grep -q "^${m}[{ ]" "$FLEET_DIR/final.prom" ||
			{ echo "$m: not exported"; return 1; }
	done < <(grep -oE 'stablepage_[a-z_]*[a-z]' "$RULES" | sort -u)
}

@test "dashboard JSON: panels, targets, variables and data source are well formed" {
	run jq -e . "$DASHBOARD"
	assert_success
	# Every panel, rows' own included: an id of its own, a type Grafana
	# ships, a place on the 24-column grid.
	run jq -r '[.panels[] | ., (.panels[]?)] as $p |
		($p | map(.id) | (length != (unique | length))) as $dup |
		($p[] | select((.type | IN("row", "stat", "timeseries", "heatmap", "bargauge", "table") | not)
			or (.gridPos | (.x + .w > 24 or .w < 1 or .h < 1)))
		| "bad panel: \(.title)"), (if $dup then "duplicate panel ids" else empty end)' "$DASHBOARD"
	assert_output ''
	# No two panels on the same cells.
	run jq -r '[.panels[] | .gridPos + {t: .title}] as $g | range($g | length) as $i |
		range($i + 1; $g | length) as $j | $g[$i] as $a | $g[$j] as $b |
		select($a.x < $b.x + $b.w and $b.x < $a.x + $a.w and $a.y < $b.y + $b.h and $b.y < $a.y + $a.h) |
		"overlap: \($a.t) / \($b.t)"' "$DASHBOARD"
	assert_output ''
	# Each non-row panel queries the chosen Prometheus data source with
	# targets of distinct refIds, each an expression.
	run jq -r '.panels[] | select(.type != "row") |
		select(.datasource.uid != "${datasource}" or (.targets | length) == 0 or
			(.targets | map(.refId) | length != (unique | length)) or
			any(.targets[]; (.expr // "") == "" or .datasource.uid != "${datasource}"))
		| "bad targets: \(.title)"' "$DASHBOARD"
	assert_output ''
	# Heatmaps read histogram buckets per le, de-accumulated by Grafana.
	run jq -r '.panels[] | select(.type == "heatmap") | .targets[] |
		select(.format != "heatmap" or (.expr | test("sum by \\(le\\) \\(increase\\([a-z_]+_bucket\\{") | not))
		| .expr' "$DASHBOARD"
	assert_output ''
	[ "$(jq '[.panels[] | select(.type == "heatmap") | .targets[].expr |
		select(contains("stablepage_would_stall_seconds_bucket"))] | length' "$DASHBOARD")" = 1 ]
	# Every $variable used is defined (or one of Grafana's own).
	local defined used
	defined=$(jq -r '.templating.list[].name' "$DASHBOARD")
	used=$(jq -r '.. | objects | (.expr?, .definition?) // empty' "$DASHBOARD" |
		grep -o '\$[a-z_]*' | sort -u | sed 's/^\$//')
	for v in $used; do
		grep -qx "$v" <<< "$defined" || [[ $v =~ ^__(rate_interval|range|interval)$ ]] ||
			{ echo "undefined variable \$$v"; return 1; }
	done
	[ "$(jq -r '.templating.list[] | select(.name == "datasource") | .query' "$DASHBOARD")" = prometheus ]
}

# dashboard_exprs: one line per target: its panel's title, a tab, its expr
# with the variables substituted as Grafana would: the ones Grafana computes
# by fixed values fitting 1 s scrapes; instance and device by the values
# their own queries return (label_values, asked of the series API), as a
# regex of alternatives.
dashboard_exprs() {
	local name def metric label values
	# shellcheck disable=SC2016 # sed expressions matching a literal $
	local script='s/\$__rate_interval/10s/g; s/\$__interval/2s/g; s/\$__range/1m/g'
	while IFS=$'\t' read -r name def; do
		[ "$name" = datasource ] && continue
		def=$(sed "$script" <<< "$def")
		[[ $def =~ ^label_values\((.*),\ *([a-z_]+)\)$ ]] ||
			{ echo "variable $name: not label_values(): $def" >&2; return 1; }
		metric=${BASH_REMATCH[1]} label=${BASH_REMATCH[2]}
		values=$(curl -sf --get "$PROM_URL/api/v1/series" --data-urlencode "match[]=$metric" \
			--data-urlencode "start=$QUERY_TIME" --data-urlencode "end=$QUERY_TIME" |
			jq -r --arg l "$label" '[.data[][$l] // empty] | unique | join("|")')
		[ -n "$values" ] || { echo "variable $name: no values for $def" >&2; return 1; }
		script+="; s/\\\$$name\\b/$values/g"
	done < <(jq -r '.templating.list[] | "\(.name)\t\(.definition // .query.query? // .query)"' "$DASHBOARD")
	# Not @tsv: it would double the backslashes of regexes.
	jq -r '.panels[] | select(.type != "row") | .title as $t | .targets[] | "\($t)\t\(.expr)"' \
		"$DASHBOARD" | sed "$script"
}

# check_panels INCLUDE [EXCLUDE]: asks the query of each target whose expr
# matches the ERE INCLUDE and not EXCLUDE; each must return series, and each
# panel some value above 0 unless 0 is its healthy value (lost events,
# pauses, scrape errors, violations on stable-write devices). Prints them.
check_panels() {
	local title expr result series positive bad=0 n=0
	local -A got
	while IFS=$'\t' read -r title expr; do
		[[ $expr =~ $1 ]] || continue
		[ -n "${2:-}" ] && [[ $expr =~ $2 ]] && continue
		n=$((n + 1))
		result=$(query "$expr") || { bad=1; continue; }
		series=$(jq length <<< "$result")
		positive=$(jq '[.[].value[1] | tonumber? | select(. == . and . > 0)] | length' <<< "$result")
		echo "$title: $series series, $positive > 0: $expr"
		[ "$series" -gt 0 ] || { echo "  no data"; bad=1; }
		got[$title]=$((${got[$title]:-0} + positive))
	done < <(dashboard_exprs)
	[ "$n" -gt 0 ] || { echo "no panel queried"; return 1; }
	for title in "${!got[@]}"; do
		case $title in
		# Healthy by design: a plain loop device fails no write, so its
		# failed-after-violation series exist (zero from the start) and stay 0.
		"Events lost"* | "Textfile scrape errors" | "Violations on stable-write devices" | \
			"Failed after violation"*) continue ;;
		esac
		[ "${got[$title]}" -gt 0 ] || { echo "$title: every value is 0"; bad=1; }
	done
	return "$bad"
}

@test "every dashboard query returns data from Prometheus, node_exporter and the tool" {
	run check_panels .
	echo "$output"
	assert_success
	# The workload shows where it ran: violations on the plain device,
	# stable waits on the stable one, its comm among the top ones.
	run query "sum(increase(stablepage_violations_total{device=\"$PLAIN_DEV\"}[10s])) > 0"
	[ "$(jq length <<< "$output")" = 1 ]
	run query "sum(increase(stablepage_stable_wait_seconds_count{device=\"$STABLE_DEV\"}[10s])) > 0"
	[ "$(jq length <<< "$output")" = 1 ]
	run query 'stablepage_comm_violations_total{comm="fleet-plain"} > 0'
	[ "$(jq length <<< "$output")" = 1 ]
}
