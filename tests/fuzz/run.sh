#!/bin/bash
# tests/fuzz/run.sh DIR SECONDS NAME...: runs each harness DIR/fuzz_NAME for
# SECONDS (make fuzz; tests/fuzz.bats for a short run). First the inputs of
# tests/fuzz/corpus/NAME (those that once failed, and seeds), then new ones
# from WORK/corpus/NAME, which grows across runs (WORK: $FUZZ_WORK, else
# DIR). A failure leaves its input in WORK/artifacts/ and ends the run with
# 1; the log says which property or sanitizer failed.
set -u
bins=$1 secs=$2
dir=${FUZZ_WORK:-$1}
shift 2
case $bins in /*) ;; *) bins=$PWD/$bins ;; esac
case $dir in /*) ;; *) dir=$PWD/$dir ;; esac
cd "$(dirname "$0")/../.." || exit 1
failed=0
for name in "$@"; do
	bin=$bins/fuzz_$name seeds=tests/fuzz/corpus/$name work=$dir/corpus/$name
	mkdir -p "$work" "$dir/artifacts" "$seeds"
	start=$(date +%s)
	# -timeout: an input slower than 10 s is a hang; -rss_limit_mb: a leak.
	if "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 -print_final_stats=1 \
		-artifact_prefix="$dir/artifacts/$name-" "$work" "$seeds" > "$dir/$name.log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/$name.log")
		echo "fuzz $name: ok, ${runs:-?} inputs in $(($(date +%s) - start)) s," \
			"corpus $(find "$work" -type f | wc -l)"
	else
		echo "fuzz $name: FAILED after $(($(date +%s) - start)) s (log: $dir/$name.log):"
		grep -E 'ERROR|runtime error|property failed|Test unit written' "$dir/$name.log" | head -n 5
		failed=1
	fi
done
exit $failed
