#!/bin/bash
# Runs every bats suite and ends with "N passed, N failed" (bats prints no such line).
set -u
build=${1:-build}
cd "$(dirname "$0")/.."
case $build in
/*) export SPT_BUILD=$build ;;
*) export SPT_BUILD=$PWD/$build ;;
esac
log=$(mktemp)
suites=${SPT_SUITES:-tests/*.bats}
# A hung test fails (and its teardown cleans up) instead of hanging the run;
# the slowest took 113-125 s in the TCG guest (2026-12-06).
export BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-300}
# shellcheck disable=SC2086
bats --tap --timing $suites | tee "$log"
passed=$(grep -cE '^ok [0-9]+' "$log" | head -1)
skipped=$(grep -cE '^ok [0-9]+ .*# skip' "$log")
failed=$(grep -cE '^not ok [0-9]+' "$log")
planned=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$log" | head -1)
rm -f "$log"
passed=$((passed - skipped))
ran=$((passed + skipped + failed))
if [ -n "$planned" ] && [ "$ran" -ne "$planned" ]; then
	echo "# bats planned $planned tests but $ran reported"
	failed=$((failed + planned - ran))
fi
[ "$ran" -eq 0 ] && echo "# no test ran" && failed=1
[ "$skipped" -gt 0 ] && echo "# $skipped skipped (see the reasons above)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
