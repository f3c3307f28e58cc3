#!/usr/bin/env bats
# Bad input: one line on stderr, exit 2 for usage errors, 1 for runtime errors.
load helpers

setup() { spt_setup; }
teardown() { spt_teardown; }

# expect_error CODE REGEX ARGS...: exactly one stderr line matching REGEX, nothing on stdout.
expect_error() {
	local code=$1 regex=$2
	shift 2
	"$SPT" "$@" > "$BATS_TEST_TMPDIR/out" 2> "$BATS_TEST_TMPDIR/err" && rc=0 || rc=$?
	[ "$rc" -eq "$code" ] || { echo "exit $rc, expected $code"; cat "$BATS_TEST_TMPDIR/err"; return 1; }
	[ "$(wc -l < "$BATS_TEST_TMPDIR/err")" -eq 1 ] || { echo "stderr:"; cat "$BATS_TEST_TMPDIR/err"; return 1; }
	grep -Eq -- "$regex" "$BATS_TEST_TMPDIR/err" || { echo "stderr:"; cat "$BATS_TEST_TMPDIR/err"; return 1; }
	[ ! -s "$BATS_TEST_TMPDIR/out" ]
}

@test "--help: short, usage first, examples not wrapped mid-line; exit 0" {
	run "$SPT" --help
	assert_success
	[ "${lines[0]}" = "Usage: stablepage-trace [OPTION...] [INTERVAL [COUNT]]" ]
	assert_output --partial "Examples:"
	[ "${#lines[@]}" -le 70 ]
	# Every line fits in 79 columns, so argp wrapped nothing it did not have to,
	# and every example is one line starting with the command.
	! printf '%s\n' "${lines[@]}" | awk 'length($0) > 79' | grep .
	run bash -c "'$SPT' --help | sed -n '/^Examples:/,/^$/p' | sed '1d;\$d'"
	[ "${#lines[@]}" -ge 3 ]
	for l in "${lines[@]}"; do [[ $l == "  stablepage-trace"* ]]; done
}

@test "each command has its own help" {
	run "$SPT" enforce --help
	assert_success
	assert_line --index 0 --partial "Usage: stablepage-trace enforce"
	assert_output --partial "--max-delay"
	refute_output --partial "--prom-top-comm" # the tracing options: in stablepage-trace --help
	run "$SPT" features --help
	assert_success
	assert_line --index 0 --partial "Usage: stablepage-trace features"
	assert_output --partial "--json"
	refute_output --partial "--native"
	run "$SPT" restore --help
	assert_success
	assert_line --index 0 --partial "Usage: stablepage-trace restore"
	refute_output --partial "--dev"
	run "$SPT" trace --help
	assert_success
	assert_line --index 0 "Usage: stablepage-trace [OPTION...] [INTERVAL [COUNT]]"
}

@test "bad duration: exit 2" {
	expect_error 2 "invalid duration 'soon'" -d soon
	expect_error 2 "invalid duration '0'" -d 0
	expect_error 2 "invalid duration '-3'" --duration=-3
}

@test "durations below 1 ms, intervals below 0.1 s, numbers out of range: one line, exit 2" {
	expect_error 2 "invalid duration '0.5ms': 1ms to 365 days" -d 0.5ms
	expect_error 2 "invalid duration '0x10'" -d 0x10
	expect_error 2 "invalid duration '1e-9'" -d 1e-9
	expect_error 2 "invalid interval '50ms': at least 0.1 s" -i 50ms
	expect_error 2 "invalid INTERVAL '0.09': a number of seconds, at least 0.1" 0.09
	expect_error 2 "invalid --max-delay '0.1ms'" enforce --comm x --max-delay 0.1ms
	expect_error 2 "invalid pid '4294967297'" -p 4294967297
	expect_error 2 "invalid --verify '4294967297'" --verify=4294967297
	expect_error 2 "invalid --top '18446744073709551617'" --top 18446744073709551617
	expect_error 2 "unknown device '4096:0'" --dev 4096:0
	expect_error 2 "unknown device '7:-1'" --dev 7:-1
}

@test "control bytes in arguments are escaped in the error line; a byte 0xff is no -?" {
	expect_error 2 "unknown device 'a\\\\x1b\\[2J\\\\x0ab'" --dev $'a\e[2J\nb'
	! grep -q $'\e' "$BATS_TEST_TMPDIR/err"
	expect_error 2 "unknown option or missing value: '-\\\\xff'" -$'\xff'
}

@test "bad pid: exit 2" {
	expect_error 2 "invalid pid 'abc'" -p abc
	expect_error 2 "invalid pid '0'" -p 0
}

@test "pid of no process: exit 2" {
	# pid_max caps real pids; 4194304 is the largest pid_max, so this one is free or invalid.
	expect_error 2 "no such process: 4194304" -p 4194304
}

@test "unknown device: exit 2" {
	expect_error 2 "unknown device 'nosuchdisk'" --dev nosuchdisk
	expect_error 2 "unknown device '4095:1048575'" --dev 4095:1048575
	expect_error 2 "unknown device '/etc/passwd'" --dev /etc/passwd
}

@test "missing cgroup path: exit 2" {
	expect_error 2 "cgroup '/sys/fs/cgroup/no/such/group'" --cgroup /sys/fs/cgroup/no/such/group
}

@test "a directory that is not a cgroup v2 directory: exit 2" {
	expect_error 2 "not a cgroup v2 directory" --cgroup /tmp
}

@test "unknown option and stray argument: exit 2" {
	expect_error 2 "unknown option or missing value: '--no-such-option'" --no-such-option
	expect_error 2 "unknown option or missing value: '-d'" -d
	expect_error 2 "unknown command 'foo': one of trace, enforce, features, restore" foo
}

@test "bad input: commands, INTERVAL and COUNT, -T and --delta: one line, exit 2" {
	expect_error 2 "unknown command 'enforec': one of trace, enforce" enforec
	expect_error 2 "unexpected word 'features': INTERVAL is a number of seconds, and a command comes first" -q features
	expect_error 2 "unexpected word 'now'" trace now
	expect_error 2 "invalid INTERVAL '5x': a number of seconds" 5x
	expect_error 2 "invalid INTERVAL '0'" 0
	expect_error 2 "invalid COUNT 'ten': a number of reports, 1 to 1000000" 5 ten
	expect_error 2 "invalid COUNT '0'" 5 0
	expect_error 2 "invalid COUNT '-1'" 5 -- -1
	expect_error 2 "invalid COUNT '99999999999999999999'" 5 99999999999999999999
	expect_error 2 "unexpected argument '3': only \[INTERVAL \[COUNT\]\] follow the options" 1 2 3
	expect_error 2 "the interval is given twice" -i 5 5
	expect_error 2 "unexpected argument '5': features takes no INTERVAL or COUNT" features 5
	expect_error 2 "-T stamps the interval reports: give an INTERVAL" -T -q
	expect_error 2 "-T is for the text reports: JSON reports always carry ts and time" -T --json 5
	expect_error 2 "--delta counts per interval: give an INTERVAL" --delta -d 5
	expect_error 2 "COUNT and -d both say when to stop" -d 10 5 2
	expect_error 2 "invalid --prom-top-cgroup 'all'" --prom-top-cgroup all
	expect_error 2 "invalid --prom-top-cgroup '1001': expected a number up to 1000" --prom-top-cgroup 1001
}

@test "features --json: one valid JSON object with every fact of the text" {
	run "$SPT" features --json
	assert_success
	[ "${#lines[@]}" -eq 1 ]
	echo "$output" > "$BATS_TEST_TMPDIR/f.json"
	"$SPT" features > "$BATS_TEST_TMPDIR/f.txt"
	local j=$BATS_TEST_TMPDIR/f.json t=$BATS_TEST_TMPDIR/f.txt
	jq -e . "$j" > /dev/null
	# The text's facts, one by one, from the JSON.
	grep -qF "kernel $(jq -r .kernel.release "$j") ($(jq -r .kernel.machine "$j"))" "$t"
	# row WHAT OK DETAIL: the text's line for one probe, as the tool formats it.
	row() { printf '  %-46s %s%s\n' "$1" "$([ "$2" = true ] && echo yes || echo no)" "${3:+: $3}"; }
	while IFS=$'\t' read -r name present; do
		grep -Fxq "$(row "tracepoint $name" "$present")" "$t"
	done < <(jq -r '.tracepoints[] | [.name, .present] | @tsv' "$j")
	while IFS=$'\t' read -r what ok err; do
		grep -Fxq "$(row "$what" "$ok" "$err")" "$t"
	done < <(jq -r '.programs[] | [.what, .ok, .error // ""] | @tsv' "$j")
	grep -Fq "$(jq -r .lsms "$j")" "$t"
	case $(jq -r .attach_mode "$j") in
	fentry) grep -q "^attach mode (auto): fentry" "$t" ;;
	tracepoint) grep -q "^attach mode (auto): tracepoint" "$t" ;;
	*) grep -q "^attach mode: none" "$t" ;;
	esac
	[ "$(jq '.attach_plan | length' "$j")" -eq "$(sed -n '/^attach mode/,/^enforcement/p' "$t" | grep -c '^  ')" ]
	local hold
	hold=$(jq -r '.enforcement.bpf_hold // "no"' "$j")
	grep -q "holding write() from BPF: $( [ "$hold" = no ] && echo no || echo "possible ($hold)")" "$t"
	# What differs between kernels: one row each, with the JSON's value.
	[ "$(jq '.layouts | length' "$j")" -eq "$(sed -n '/^what differs between kernels/,/^block devices/p' "$t" | grep -c '^  ')" ]
	grep -Eq "^  PG_writeback bit +$(jq -r '.layouts.pg_writeback_bit // "absent"' "$j") " "$t"
	while read -r v; do
		cut -c50- "$t" | grep -Fxq "$v" || { echo "no layout row: $v"; return 1; }
	done < <(jq -r '.layouts | del(.pg_writeback_bit)[]' "$j")
	# Every block device row, with its stable_writes and filesystems.
	[ "$(jq '.block_devices | length' "$j")" -eq "$(sed -n '/^  DEVICE /,$p' "$t" | tail -n +2 | wc -l)" ]
	while IFS=$'\t' read -r name stable fs; do
		grep -Fxq "$(printf '  %-12s %-13s %s' "$name" "$stable" "${fs:--}")" "$t" ||
			{ echo "no row: $name $stable $fs"; return 1; }
	done < <(jq -r '.block_devices[] | [.name, (.stable_writes // "?" | tostring),
		([.filesystems[] | "\(.mountpoint) (\(.fstype))"] | join(", "))] | @tsv' "$j")
}

@test "features --json with an unreadable BTF: still JSON, exit 1" {
	run "$SPT" features --json --btf /nonexistent/vmlinux
	assert_failure 1
	[ "$(jq -r '.btf.ok' <<< "$output")" = false ]
	[ "$(jq -r '.btf.path' <<< "$output")" = /nonexistent/vmlinux ]
}

@test "comm too long: exit 2" {
	expect_error 2 "invalid comm" --comm 0123456789abcdefXYZ
}

@test "not root: one line, exit 1" {
	cd /
	run setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$SPT" -d 1
	assert_failure 1
	assert_output "stablepage-trace: needs root (or CAP_BPF and CAP_PERFMON) to load BPF programs: run it with sudo"
}

@test "no BTF: exit 1" {
	expect_error 1 "no kernel BTF at /nonexistent/vmlinux" --btf /nonexistent/vmlinux -d 1
}

@test "a required tracepoint absent from the kernel's BTF: exit 1" {
	# A real BTF blob that describes a 'kernel' without the writeback tracepoints.
	printf 'struct task_struct { int pid; }; struct task_struct t;\n' > "$BATS_TEST_TMPDIR/k.c"
	clang -g -target bpf -c "$BATS_TEST_TMPDIR/k.c" -o "$BATS_TEST_TMPDIR/k.o"
	expect_error 1 "lacks tracepoint writeback:writeback_dirty_folio \(added in Linux 5.16\)" \
		--btf "$BATS_TEST_TMPDIR/k.o" -d 1
}

@test "--prom-file in a missing or read-only directory: exit 2 at start" {
	expect_error 2 "cannot create files next to --prom-file $BATS_TEST_TMPDIR/nodir/x.prom: No such file or directory" \
		--prom-file "$BATS_TEST_TMPDIR/nodir/x.prom"
	local ro=$BATS_TEST_TMPDIR/ro
	mkdir "$ro"
	mount -t tmpfs -o ro,size=1m none "$ro"
	on_cleanup "umount $ro"
	expect_error 2 "cannot create files next to --prom-file $ro/x.prom: Read-only file system" \
		--prom-file "$ro/x.prom"
}

@test "bad --interval and --prom-top-comm: exit 2" {
	expect_error 2 "invalid interval 'x'" -i x
	expect_error 2 "invalid --prom-top-comm 'many'" --prom-top-comm many
}

@test "enforce options: misuse is a usage error" {
	expect_error 2 "belong to 'stablepage-trace enforce'" --native --dev loop0
	expect_error 2 "enforce needs --native --dev DEV .*or a scope for the BPF mode: --pid, --comm or --cgroup" enforce -q
	expect_error 2 "invalid --action 'stop': delay, kill or log" enforce --comm x --action stop
	expect_error 2 "invalid --max-delay 'forever'" enforce --comm x --max-delay forever
	expect_error 2 "--action and --max-delay belong to the BPF mode" enforce --native --dev loop0 --max-delay 2
	expect_error 2 "--remount and --persist belong to enforce --native" enforce --comm x --remount
	expect_error 2 "belong to 'stablepage-trace enforce'" --action kill
	expect_error 2 "enforce --native needs --dev" enforce --native
	expect_error 2 "enforce --restore takes no other" enforce --restore --dev "$(ls /sys/block | head -1)"
}

# A writer whose comm and file name hold terminal escapes (ESC, BEL): the
# text output (event lines, tables, file paths) holds them escaped, as
# \x1b...; the JSON output holds them as JSON escapes and reads back whole.
@test "a comm and a path with escape sequences: escaped in text, JSON escapes in --json" {
	local name=$'\e[2J\e]0;x\a' ctl='[\x01-\x09\x0b-\x1f\x7f]'
	make_fs ext4
	# comm is the name exec'd: a link to the reproducer named so.
	ln -s "$WAC" "$BATS_TEST_TMPDIR/$name"
	start_tracer --dev "$LOOP"
	"$BATS_TEST_TMPDIR/$name" -p A -d 2 "$MNT/f$name" > /dev/null
	stop_tracer
	run grep -c -F '\x1b[2J\x1b]0;x\x07' "$TRACE_OUT"
	[ "$output" -ge 3 ] # an event line, the process table, the file table
	grep -qF "$MNT/f\\x1b[2J" "$TRACE_OUT"
	! LC_ALL=C grep -qP "$ctl" "$TRACE_OUT" "$TRACE_ERR"
	start_tracer --json --dev "$LOOP"
	"$BATS_TEST_TMPDIR/$name" -p A -d 2 "$MNT/g$name" > /dev/null
	stop_tracer
	! LC_ALL=C grep -qP "$ctl" "$TRACE_OUT"
	[ "$(summary -r '.top_processes[0].comm')" = "$name" ]
	[ "$(summary -r '.top_files[0].path')" = "$MNT/g$name" ]
	[ "$(jq -r 'select(.type == "violation" and .kind != "metadata") | .comm' "$TRACE_OUT" |
		sort -u)" = "$name" ]
}
