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

@test "--help shows USAGE and EXAMPLES and exits 0" {
	run "$SPT" --help
	assert_success
	assert_output --partial USAGE
	assert_output --partial EXAMPLES
}

@test "bad duration: exit 2" {
	expect_error 2 "invalid duration 'soon'" -d soon
	expect_error 2 "invalid duration '0'" -d 0
	expect_error 2 "invalid duration '-3'" --duration=-3
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
	expect_error 2 "unexpected argument 'foo'" foo
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
