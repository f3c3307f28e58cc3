#!/bin/bash
# sudo make demo: a scratch loop-backed ext4, the wac reproducer's profiles B
# (mmap) and A (write) under the tracer, then the summary. Removes everything.
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "demo: needs root: sudo make demo" >&2; exit 1; }

. scripts/lib.bash
work=$(mktemp -d /tmp/stablepage-demo.XXXX)
CLEANUP_FILE=$work/cleanup tracer=''
cleanup() {
	if [ -n "$tracer" ] && kill -INT "$tracer" 2>/dev/null; then wait "$tracer" 2>/dev/null || true; fi
	run_cleanup
	rm -rf "$work"
}
trap cleanup EXIT

scratch_fs "$work" 512M ext4
loop=$LOOP mnt=$MNT
echo "== scratch ext4 on $loop ($(mountpoint -d "$mnt")) mounted at $mnt, stable_writes=$(cat /sys/block/"${loop#/dev/}"/queue/stable_writes)"

"$build"/stablepage-trace --dev "$loop" > "$work/trace.out" 2> "$work/trace.err" &
tracer=$!
wait_for_lines "$tracer" 1 '^Tracing' "$work/trace.err" || { cat "$work/trace.err" >&2; exit 1; }
echo "== profile B: 4 threads storing through a shared mapping + msync, 3 s"
"$build"/wac -p B -t 4 -d 3 "$mnt/mmap.dat"
echo "== profile A: 4 threads of pwrite() + sync_file_range, 3 s"
"$build"/wac -p A -t 4 -d 3 "$mnt/write.dat"
kill -INT "$tracer"
wait "$tracer"
tracer=
events=$(grep -cE '^[0-9]{2}:[0-9]{2}:[0-9]{2}\.' "$work/trace.out" || true)
echo "== the tracer printed $events violation lines; the first and last few:"
head -n 6 "$work/trace.out"
echo "   ..."
grep -B3 -m1 '^$' "$work/trace.out" | head -n 3 | grep -v '^$' || true
sed -n '/^Traced/,$p' "$work/trace.out"
