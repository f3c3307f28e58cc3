#!/bin/bash
# make test: the suite on the running kernel, then again inside a QEMU guest
# on Debian's 6.1 kernel (lab/vmtest.sh), where trampolines and the BPF LSM
# load, so the tests that skip here run there. Ends with one combined
# "N passed, N failed" line. SPT_NO_VM=1 runs the host part only.
set -u
build=${1:-build}
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
passed=0 failed=0

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

tests/run.sh "$build" 2>&1 | tee "$log"
tally "host $(uname -r)"
host_summary=$(tail -n1 "$log")
if [ "${SPT_NO_VM:-0}" != 1 ]; then
	VMTEST_BUILD=$build lab/vmtest.sh 2>&1 | sed 's/^/guest: /' | tee "$log"
	sed -i 's/^guest: //' "$log"
	echo "# host: $host_summary"
	tally "guest (QEMU TCG, Debian cloud kernel)"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
