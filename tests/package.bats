#!/usr/bin/env bats
# The package and the service: make install/uninstall, the man page against
# the tool's --help, bash completion, the systemd unit (its exposure score,
# the exporter under its capabilities, the unit started by a real systemd),
# and the Debian package built by Debian's tools, installed and purged.
load helpers

UNIT=$ROOT/deploy/systemd/stablepage-trace.service

# The guest shares the host's root read-only: nothing can be installed there.
root_writable() { [ -w /usr/sbin ] && [ -w /var/lib ]; }

# make deb once for the whole file (it is rebuilt only when the tree changed).
setup_file() {
	root_writable || return 0
	DEB_LOG=$BATS_FILE_TMPDIR/deb.log
	make -C "$ROOT" --no-print-directory OUTPUT="$BUILD" deb > "$DEB_LOG" 2>&1 ||
		echo failed >> "$BATS_FILE_TMPDIR/deb.failed"
}

setup() { spt_setup; }
teardown() { spt_teardown; }

# long_options HELP-TEXT: the --options it names, one a line.
long_options() {
	grep -oE -- '--[a-z][a-z0-9-]+' | sort -u
}

# subcommands: those the main --help's usage lines name (the completion's
# parser, which must find them too).
subcommands() {
	bash -c 'source "$1"; _stablepage_trace_subcommands "$2"' sh \
		"$ROOT/completion/stablepage-trace" "$SPT"
}

@test "man page: every subcommand and every long option of each --help is described; groff is silent" {
	local man opts missing="" sub
	# The roff source with its escaped hyphens as plain text.
	man=$(sed 's/\\-/-/g' "$ROOT/man/stablepage-trace.8")
	opts=$("$SPT" --help | long_options)
	for sub in $(subcommands); do
		grep -qE "^\.(B|TP|SS|SY).*\b$sub\b|^\.B $sub$" <<< "$man" || missing="$missing $sub"
		opts="$opts"$'\n'"$("$SPT" "$sub" --help | long_options)"
	done
	[ -n "$(subcommands)" ]
	for o in $(sort -u <<< "$opts"); do
		grep -qE -- "$o([^a-z0-9-]|$)" <<< "$man" || missing="$missing $o"
	done
	[ -z "$missing" ] || { echo "not in man/stablepage-trace.8:$missing"; return 1; }
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" FILES EXAMPLES; do
		grep -q "^\.SH \"\?$s\"\?$" "$ROOT/man/stablepage-trace.8" || { echo "no section $s"; return 1; }
	done
	run groff -man -ww -z "$ROOT/man/stablepage-trace.8"
	assert_success
	assert_output ""
}

@test "make install: DESTDIR, PREFIX and sbindir respected, only the tool built; make uninstall removes it all" {
	local d=$BATS_TEST_TMPDIR/dest
	# What install would build from nothing: the tool, no benchmark helper.
	run make -C "$ROOT" -n OUTPUT="$BATS_TEST_TMPDIR/fresh" install
	assert_success
	refute_output --regexp 'progcost|switchcost|pausebench|emptyprogs|/wac'
	run make -C "$ROOT" --no-print-directory OUTPUT="$BUILD" DESTDIR="$d" PREFIX=/opt/spt \
		sbindir=/opt/spt/bin install
	assert_success
	[ -x "$d/opt/spt/bin/stablepage-trace" ]
	[ -f "$d/opt/spt/share/man/man8/stablepage-trace.8" ]
	[ -f "$d/opt/spt/share/bash-completion/completions/stablepage-trace" ]
	[ -f "$d/etc/default/stablepage-trace" ]
	# The unit runs the binary where it was installed.
	grep -q '^ExecStart=/opt/spt/bin/stablepage-trace .*--prom-file ' \
		"$d/opt/spt/lib/systemd/system/stablepage-trace.service"
	for f in "$ROOT"/deploy/prometheus/* "$ROOT"/deploy/grafana/*; do
		[ -e "$f" ] || continue
		cmp "$f" "$d/opt/spt/share/stablepage-trace/${f#"$ROOT"/deploy/}"
	done
	"$d/opt/spt/bin/stablepage-trace" --version
	# An administrator's edit of the settings survives uninstall; the rest goes.
	run make -C "$ROOT" --no-print-directory OUTPUT="$BUILD" DESTDIR="$d" PREFIX=/opt/spt \
		sbindir=/opt/spt/bin uninstall
	assert_success
	[ -z "$(find "$d" -type f)" ]
	make -C "$ROOT" --no-print-directory OUTPUT="$BUILD" DESTDIR="$d" install > /dev/null
	echo 'STABLEPAGE_TRACE_OPTS="--dev sdb"' >> "$d/etc/default/stablepage-trace"
	run make -C "$ROOT" --no-print-directory OUTPUT="$BUILD" DESTDIR="$d" uninstall
	assert_output --partial "was edited: kept"
	[ "$(find "$d" -type f)" = "$d/etc/default/stablepage-trace" ]
}

@test "bash completion: options from the tool's --help, per subcommand, and the values of fixed choices" {
	# completions WORDS...: what the completion offers for the last word.
	cat > "$BATS_TEST_TMPDIR/complete.sh" <<-'EOF'
	source "$1"; shift
	COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
	_stablepage_trace
	printf '%s\n' "${COMPREPLY[@]}"
	EOF
	completions() { PATH=$BUILD:$PATH bash "$BATS_TEST_TMPDIR/complete.sh" "$ROOT/completion/stablepage-trace" "$@"; }
	run completions stablepage-trace --prom-f
	assert_output "--prom-file="
	run completions stablepage-trace enforce --max
	assert_output "--max-delay="
	run completions stablepage-trace --attach-mode ""
	assert_output $'auto\ntracepoint\nfentry'
	run completions stablepage-trace enforce --action = k
	assert_output "kill"
	run completions stablepage-trace ""
	assert_line enforce
	assert_line features
	# Every long option of --help is offered.
	run completions stablepage-trace --
	for o in $("$SPT" --help | sed -n 's/^ \{1,\}\(-[^-], \)\{0,1\}\(--[a-z][a-z0-9-]*\).*/\2/p'); do
		assert_line --regexp "^$o=?$"
	done
}

@test "systemd unit: systemd-analyze security --offline rates its exposure 4.0 or less" {
	run systemd-analyze security --offline=true --no-pager "$UNIT"
	echo "$output" | grep -v '✓'
	assert_success
	local score
	score=$(sed -n 's/^→ Overall exposure level for .*: \([0-9.]*\) .*/\1/p' <<< "$output")
	[ -n "$score" ]
	awk -v s="$score" 'BEGIN { exit !(s <= 4.0) }'
	# The settings the exporter is run with in the tests below.
	grep -qx 'ProtectSystem=strict' "$UNIT"
	grep -qx 'ReadWritePaths=-/var/lib/prometheus/node-exporter' "$UNIT"
	[ "$(grep -c '^ReadWritePaths=' "$UNIT")" = 1 ]
}

# unit_caps: the unit's CapabilityBoundingSet as setpriv's --bounding-set.
unit_caps() {
	sed -n 's/^CapabilityBoundingSet=//p' "$UNIT" | tr 'A-Z ' 'a-z\n' |
		sed -n 's/^cap_\(.*\)/+\1/p' | paste -sd, | sed 's/^/-all,/'
}

# unit_args: the options the unit's ExecStart gives before --prom-file.
unit_args() {
	sed -n 's/^ExecStart=[^ ]* \(.*\) --prom-file .*/\1/p' "$UNIT"
}

# as_unit_caps [EXTRA-SETPRIV-ARGS]: SPT becomes a wrapper that runs the tool
# as root with only the unit's capabilities (bounding set; no_new_privs).
as_unit_caps() {
	local real=$BUILD/stablepage-trace
	SPT=$BATS_TEST_TMPDIR/spt-caps-${1//[^a-z]/_}
	printf '#!/bin/sh\nexec setpriv --bounding-set %s --inh-caps=-all --no-new-privs -- %q "$@"\n' \
		"$1" "$real" > "$SPT"
	chmod +x "$SPT"
}

@test "the exporter under the unit's capabilities only: it loads, counts and resolves paths" {
	local caps
	caps=$(unit_caps)
	echo "bounding set: $caps"
	[[ $caps == *+bpf* ]]
	as_unit_caps "$caps"
	make_fs ext4
	PROM=$BATS_TEST_TMPDIR/stablepage.prom
	# shellcheck disable=SC2046
	start_tracer $(unit_args) --json --dev "$LOOP" --prom-file "$PROM"
	grep CapEff "/proc/$TRACER_PID/status"
	"$WAC" -p B -d 3 "$MNT/f" > /dev/null
	stop_tracer
	assert_detached
	cat "$TRACE_ERR"
	[ "$(summary '.violations.mmap')" -gt 0 ]
	# CAP_DAC_READ_SEARCH: open_by_handle_at() turns the inode into its path.
	[ "$(summary -r '.top_files[0].path')" = "$MNT/f" ]
	grep -q '^stablepage_violations_total{.*kind="mmap"} [1-9]' "$PROM"
}

@test "without CAP_DAC_READ_SEARCH the exporter still counts, paths unresolved; without CAP_PERFMON it refuses" {
	as_unit_caps -all,+bpf,+perfmon
	make_fs ext4
	# shellcheck disable=SC2046
	start_tracer $(unit_args) --json --dev "$LOOP"
	"$WAC" -p B -d 2 "$MNT/f" > /dev/null
	stop_tracer
	assert_detached
	[ "$(summary '.violations.mmap')" -gt 0 ]
	[ "$(summary -r '.top_files[0].path')" != "$MNT/f" ]
	as_unit_caps -all,+bpf,+dac_read_search
	run "$SPT" -q -d 1
	assert_failure 1
	assert_output --partial "needs root (or CAP_BPF and CAP_PERFMON)"
}

@test "where modules have BTF: without --btf, CAP_SYS_ADMIN is needed; with it fentry mode loads" {
	ls /sys/kernel/btf | grep -qvx vmlinux || skip "no kernel module has BTF here (the 6.1 guest's do)"
	make_fs ext4
	# Measured on Debian's 6.1 (the guest): libbpf's CO-RE search goes
	# through the modules' BTF, which it may list only with CAP_SYS_ADMIN.
	as_unit_caps "$(unit_caps)"
	run "$SPT" -q --attach-mode tracepoint -d 1
	assert_failure 1
	fentry_loads || skip "fentry programs do not load on this kernel (see: stablepage-trace features)"
	as_unit_caps "$(unit_caps),+sys_admin"
	start_tracer -q --json --attach-mode auto --dev "$LOOP"
	"$WAC" -p B -d 2 "$MNT/f" > /dev/null
	stop_tracer
	assert_detached
	grep -q 'Attach mode: fentry' "$TRACE_ERR"
	[ "$(summary '.violations.mmap')" -gt 0 ]
}

# A systemd of its own: PID 1 of new PID, mount, cgroup and UTS namespaces,
# in a cgroup made for it under the cgroup2 root, with only UNITS_DIR's units.
# Sets SD_PID (systemd, as the host sees it).
start_private_systemd() {
	local cg2 cg
	cg2=$(findmnt -n -t cgroup2 -o TARGET | head -n1)
	[ -n "$cg2" ] || skip "no cgroup2 hierarchy mounted"
	cg=$(mktemp -d -p "$cg2" spt-package-test.XXXXXX)
	on_cleanup "find $cg -depth -type d -exec rmdir {} +"
	cat > "$BATS_TEST_TMPDIR/pid1.sh" <<-EOF
	#!/bin/sh
	set -e
	mount --make-rprivate /
	mount -t tmpfs tmpfs /run
	umount -l /sys/fs/cgroup
	mount -t cgroup2 cgroup2 /sys/fs/cgroup
	export SYSTEMD_UNIT_PATH=$UNITS_DIR container=spt-test
	exec /lib/systemd/systemd --system --unit=spt-test.target
	EOF
	chmod +x "$BATS_TEST_TMPDIR/pid1.sh"
	sh -c 'echo $$ > "$1/cgroup.procs" && exec unshare -m -p -f -C -u --mount-proc "$2"' \
		sh "$cg" "$BATS_TEST_TMPDIR/pid1.sh" > "$BATS_TEST_TMPDIR/systemd.log" 2>&1 &
	local unshare_pid=$!
	on_cleanup "stop_private_systemd $unshare_pid"
	for _ in $(seq 100); do
		SD_PID=$(cat "/proc/$unshare_pid/task/$unshare_pid/children" 2> /dev/null | awk '{ print $1 }')
		[ -n "$SD_PID" ] && [ -S "/proc/$SD_PID/root/run/systemd/private" ] && return 0
		sleep 0.1
	done
	cat "$BATS_TEST_TMPDIR/systemd.log"
	return 1
}

in_systemd() { nsenter -t "$SD_PID" -m -p "$@"; }

# stop_private_systemd UNSHARE-PID: poweroff (a container's systemd exits),
# else SIGKILL, which ends every process of its PID namespace. (Teardown is
# not the test's shell: bats runs the test in a subshell, so no wait.)
stop_private_systemd() {
	local pid1
	pid1=$(awk '{ print $1 }' "/proc/$1/task/$1/children" 2> /dev/null)
	[ -n "$pid1" ] && nsenter -t "$pid1" -m -p systemctl --force poweroff 2> /dev/null
	for _ in $(seq 100); do
		kill -0 "$1" 2> /dev/null || break
		sleep 0.1
	done
	kill -0 "$1" 2> /dev/null || return 0
	[ -n "$pid1" ] && kill -KILL "$pid1"
	for _ in $(seq 50); do
		kill -0 "$1" 2> /dev/null || return 0
		sleep 0.1
	done
	return 1
}

@test "the unit, started by systemd, runs the exporter sandboxed and writes the textfile" {
	root_writable || skip "the root file system is read-only here (the QEMU guest)"
	# Writable for the service: outside /tmp and /var/tmp (PrivateTmp=yes).
	local dir
	dir=$(mktemp -d /var/lib/spt-package-test.XXXXXX)
	on_cleanup "rm -rf $dir"
	# The binary too: a tree under /tmp (a CI clone) is hidden by PrivateTmp.
	local bindir
	bindir=$(mktemp -d /var/lib/spt-package-bin.XXXXXX)
	on_cleanup "rm -rf $bindir"
	install -m 0755 "$SPT" "$bindir/stablepage-trace"
	UNITS_DIR=$BATS_TEST_TMPDIR/units
	mkdir -p "$UNITS_DIR/stablepage-trace.service.d"
	cp "$UNIT" "$UNITS_DIR/"
	# The unit as shipped; the drop-in changes only where the binary, the
	# file and the log are, and leaves out the dependencies on boot targets
	# (this systemd has no other unit).
	cat > "$UNITS_DIR/stablepage-trace.service.d/test.conf" <<-EOF
	[Unit]
	DefaultDependencies=no
	[Service]
	ExecStart=
	ExecStart=$bindir/stablepage-trace $(unit_args) --prom-file \${PROM_FILE} \$STABLEPAGE_TRACE_OPTS
	EnvironmentFile=
	Environment=PROM_FILE=$dir/stablepage.prom
	ReadWritePaths=$dir
	StandardOutput=append:$BATS_TEST_TMPDIR/service.log
	StandardError=append:$BATS_TEST_TMPDIR/service.log
	EOF
	printf '[Unit]\nAllowIsolate=yes\nDefaultDependencies=no\nWants=stablepage-trace.service\n' \
		> "$UNITS_DIR/spt-test.target"
	# A device of its own to count on, named as /etc/default/stablepage-trace
	# suggests (the service has a private /dev: names resolve through /sys).
	make_fs ext4
	echo "Environment=STABLEPAGE_TRACE_OPTS=\"--dev ${LOOP#/dev/}\"" \
		>> "$UNITS_DIR/stablepage-trace.service.d/test.conf"
	start_private_systemd
	local pid=""
	for _ in $(seq 300); do
		grep -q '^Tracing' "$BATS_TEST_TMPDIR/service.log" 2> /dev/null && break
		sleep 0.1
	done
	cat "$BATS_TEST_TMPDIR/service.log"
	pid=$(in_systemd systemctl show -P MainPID stablepage-trace)
	[ "$pid" -gt 0 ]
	# The sandbox, as the kernel sees the running exporter (pid in the namespace).
	local status
	status=$(in_systemd cat "/proc/$pid/status")
	grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' <<< "$status"
	grep -qx $'CapBnd:\t000000c000000004' <<< "$status" # CAP_DAC_READ_SEARCH (2), CAP_PERFMON (38), CAP_BPF (39)
	grep -qx $'NoNewPrivs:\t1' <<< "$status"
	grep -qx $'Seccomp:\t2' <<< "$status"
	# ProtectSystem=strict: / read-only, the textfile directory writable.
	in_systemd cat "/proc/$pid/mountinfo" > "$BATS_TEST_TMPDIR/mountinfo"
	awk '$5 == "/" { print $6 }' "$BATS_TEST_TMPDIR/mountinfo" | grep -q '^ro'
	awk -v d="$dir" '$5 == d { print $6 }' "$BATS_TEST_TMPDIR/mountinfo" | grep -q '^rw'
	"$WAC" -p B -d 2 "$MNT/f" > /dev/null
	# SIGTERM (systemctl stop): the file written a last time, a clean exit.
	in_systemd systemctl stop stablepage-trace
	run in_systemd systemctl show -P ExecMainStatus stablepage-trace
	assert_output 0
	cat "$BATS_TEST_TMPDIR/service.log"
	grep -q '^Traced ' "$BATS_TEST_TMPDIR/service.log"
	[ "$(ls "$dir")" = stablepage.prom ]
	grep -q '^stablepage_build_info{' "$dir/stablepage.prom"
	grep -q "^stablepage_violations_total{device=\"${LOOP#/dev/}\",fstype=\"ext4\",kind=\"mmap\"} [1-9]" \
		"$dir/stablepage.prom"
	promtool check metrics < "$dir/stablepage.prom"
	assert_detached
}

@test "the .deb: lintian-clean, installs, features runs from /usr/sbin, purge leaves the system as it was" {
	root_writable || skip "the root file system is read-only here (the QEMU guest)"
	if [ -e "$BATS_FILE_TMPDIR/deb.failed" ]; then
		tail -n 40 "$BATS_FILE_TMPDIR/deb.log"
		return 1
	fi
	dpkg-query -W -f='${Status}' stablepage-trace 2> /dev/null | grep -q 'installed' &&
		skip "stablepage-trace is installed on this machine: not touching it"
	local deb
	deb=$(ls "$BUILD"/deb/stablepage-trace_*_amd64.deb)
	# No tag: the lintian run shows errors, warnings and info (one info tag
	# is overridden, with its reason, in debian/stablepage-trace.lintian-overrides).
	! grep -E '^[EWIXP]: ' "$BUILD/deb/lintian.txt"
	# Where the package and its maintainer scripts write (not all of /etc:
	# other engineers' apt runs may change it meanwhile).
	snapshot() {
		find /etc/default /etc/systemd /lib/systemd/system /usr/sbin /usr/share/man/man8 \
			/usr/share/bash-completion/completions /usr/share/doc/stablepage-trace \
			/usr/share/lintian/overrides /usr/share/stablepage-trace /var/lib/systemd \
			/var/lib/dpkg/info/stablepage-trace.* 2> /dev/null | sort
	}
	snapshot > "$BATS_TEST_TMPDIR/before"
	on_cleanup "dpkg --purge stablepage-trace > /dev/null 2>&1"
	run dpkg -i "$deb"
	assert_success
	[ "$(dpkg-query -W -f='${Status}' stablepage-trace)" = "install ok installed" ]
	run /usr/sbin/stablepage-trace features
	assert_success
	assert_output --partial "tp_btf"
	man -w stablepage-trace | grep -q '^/usr/share/man/man8/stablepage-trace.8.gz$'
	[ -f /etc/default/stablepage-trace ]
	systemd-analyze verify /lib/systemd/system/stablepage-trace.service
	run dpkg --purge stablepage-trace
	assert_success
	snapshot > "$BATS_TEST_TMPDIR/after"
	diff "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
	! dpkg-query -W stablepage-trace 2> /dev/null
}
