#!/bin/bash
# make test: the suite on the running kernel, then inside QEMU guests
# (lab/vmtest.sh) on Debian's 6.1 kernel, every suite, where trampolines and
# the BPF LSM load, so the tests that skip here run there; then on Debian's
# 6.12 the suites whose outcome depends on the kernel (SPT_KERNEL_SUITES;
# docs/lab.md says which and why). Ends with one combined "N passed, N failed"
# line. SPT_NO_VM=1 runs the host part only; SPT_VM_KERNELS="6.1" one guest.
set -u
build=${1:-build}
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
passed=0 failed=0
# Attach modes, enforcement, the integrity lab's cases, the block devices'
# own cache and what features says: what changes from one kernel to the next.
kernel_suites=${SPT_KERNEL_SUITES:-tests/features.bats tests/modes.bats tests/enforce.bats \
tests/enforce-bpf.bats tests/enforce-safety.bats tests/integrity.bats tests/bdev.bats}

# tally NAME: adds the last "N passed, N failed" line of $log; none is a failure.
tally() {
	local line
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n1)
	if [ -z "$line" ]; then
		echo "# $1: no result line (it did not finish)"
		failed=$((failed + 1))
		return
	fi
	echo "# $1: $line"
	passed=$((passed + ${line%% *}))
	line=${line#*, }
	failed=$((failed + ${line%% *}))
}

# guest KERNEL [SUITES]: the suites (default all) in a guest on that kernel.
guest() {
	local start=$SECONDS
	VMTEST_KERNEL=$1 VMTEST_BUILD=$build SPT_SUITES=${2:-} lab/vmtest.sh 2>&1 |
		sed "s/^/guest $1: /" | tee "$log"
	sed -i "s/^guest $1: //" "$log"
	summaries+=("# guest $1 ($((SECONDS - start)) s): $(tail -n1 "$log")")
	tally "guest $1 (QEMU TCG, Debian's $1 kernel)"
}

summaries=()
tests/run.sh "$build" 2>&1 | tee "$log"
tally "host $(uname -r)"
summaries+=("# host: $(tail -n1 "$log")")
if [ "${SPT_NO_VM:-0}" != 1 ]; then
	for k in ${SPT_VM_KERNELS:-6.1 6.12}; do
		case $k in
		6.1) guest 6.1 ;;
		*) guest "$k" "$kernel_suites" ;;
		esac
	done
	printf '%s\n' "${summaries[@]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
