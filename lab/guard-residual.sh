#!/bin/bash
# Where the DIX disk's guard failures fall, beside the tool's failed writes:
# ext4 on a fresh scsi_debug disk with DIF/DIX, stable writes off, wac -p A
# under the tracer (as lab/matrix.sh's cell, with or without --verify), and
# bpftrace on block_rq_complete recording every write request that failed.
# Prints, each line prefixed for lab/guard-residual.py:
#   rq| NS SECTOR NR_SECTORS ERROR QUEUED_NS   a write request that failed
#   guard| SECTOR TS                 a "GUARD check failed" line of the kernel log
#                                    (TS: its printk time, s since boot)
#   bterr| LINE                      bpftrace's stderr
#   kw| NS INO INDEX KEEP DIRTY      writeback started on a folio kept dirty
#   ev| TS INO INDEX KIND            a violation event of the tracer
#   ext| INO LOGICAL PHYSICAL LEN    the files' extents (512-byte sectors)
#   jnl| FIRST LAST                  the journal's blocks (the fs's block size)
#   sum| JSON                        the tracer's summary
#   bs| BYTES                        the filesystem's block size
#   clk| MONO_NS REAL_S              the clocks side by side (events are in
#                                    wall time, bpftrace in monotonic ns)
#   lab/guard-residual.sh [BUILD [VERIFY [SECS]]]    in the lab guest (root)
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd)
verify=${2:-1}
secs=${3:-3}
source scripts/lib.bash
[ "$(id -u)" = 0 ] || { echo "guard-residual: needs root" >&2; exit 1; }
command -v bpftrace > /dev/null || { echo "guard-residual: no bpftrace" >&2; exit 1; }

scratch=$(mktemp -d)
CLEANUP_FILE=$scratch/cleanup
trap 'run_cleanup; rm -rf "$scratch"' EXIT
dix_fs "$scratch" 128 ext4 0 || { echo "guard-residual: no DIX disk" >&2; exit 1; }
# bpftrace reads the tracepoints' formats there (the guest mounts no tracefs)
if ! mountpoint -q /sys/kernel/tracing; then
	mount -t tracefs tracefs /sys/kernel/tracing
	on_cleanup "umount /sys/kernel/tracing"
fi
devt=$(($(stat -c '0x%t' "/dev/$DIX_DISK") << 20 | $(stat -c '0x%T' "/dev/$DIX_DISK")))

# Every failed write request of the disk (the error is an errno here), with
# when its first bio was queued (the guard is computed then, the data copied
# when the disk gets to the command: the window a change fails it in).
rq_queued="tracepoint:block:block_bio_queue /args->dev == $devt/ { @q[args->sector] = nsecs; }
tracepoint:block:block_rq_complete /args->dev == $devt && args->error != 0/ {
	\$q = @q[args->sector];
	printf(\"rq| %llu %llu %u %d %llu\\n\", nsecs, args->sector, args->nr_sector, args->error, \$q);
}
tracepoint:block:block_rq_complete /args->dev == $devt/ { delete(@q[args->sector]); }
END { clear(@q); }"
# without the queueing time, if that program does not load
rq_only="tracepoint:block:block_rq_complete /args->dev == $devt && args->error != 0/ {
	printf(\"rq| %llu %llu %u %d 0\\n\", nsecs, args->sector, args->nr_sector, args->error);
}"
for prog in "$rq_queued" "$rq_only"; do
	BPFTRACE_MAP_KEYS_MAX=300000 bpftrace -e "$prog" > "$scratch/rq" 2> "$scratch/bpftrace.err" &
	bt=$!
	sleep 1
	WAIT_TRIES=600 wait_for_lines "$bt" 1 '^Attaching' "$scratch/rq" "$scratch/bpftrace.err" || true
	sleep 3
	kill -0 "$bt" 2> /dev/null && break
	sed 's/^/bterr| /' "$scratch/bpftrace.err"
done
# Writeback started on a folio of wac's file (inode 12, the first file of
# a fresh ext4; this bpftrace finds no s_dev in 6.1's super_block) that was
# dirty then (or kept dirty: keep_write): a write to it in flight dirties
# nothing clean, so no writeback_dirty_folio. PG_dirty is 3 on 6.1.
bpftrace -e "kprobe:__folio_start_writeback
	/((struct folio *)arg0)->mapping->host->i_ino == 12 &&
	 (arg1 || (((struct folio *)arg0)->flags & 8))/ {
		printf(\"kw| %llu %llu %llu %d %d\\n\", nsecs, ((struct folio *)arg0)->mapping->host->i_ino,
			((struct folio *)arg0)->index, arg1, (((struct folio *)arg0)->flags & 8) ? 1 : 0);
	}" > "$scratch/kw" 2> "$scratch/kw.err" &
kw=$!
WAIT_TRIES=600 wait_for_lines "$kw" 1 '^Attaching' "$scratch/kw" "$scratch/kw.err" ||
	sed 's/^/bterr| /' "$scratch/kw.err"
vopt=()
[ "$verify" = 1 ] && vopt=(--verify=1)
"$build/stablepage-trace" --json "${vopt[@]}" --top 1000 --dev "$DIX_DISK" \
	> "$scratch/trace.json" 2> "$scratch/trace.err" &
pid=$!
WAIT_TRIES=1200 wait_for_lines "$pid" 1 '^Tracing' "$scratch/trace.err" ||
	{ cat "$scratch/trace.err" >&2; exit 1; }
"$build/wac" -p A -t 2 -d "$secs" "$MNT/f" >&2
sync -f "$MNT" 2> /dev/null || true
interrupt_and_wait "$pid"
kill -INT "$bt" 2> /dev/null || echo "guard-residual: bpftrace had exited" >&2
wait "$bt" || true
kill -INT "$kw" 2> /dev/null && { wait "$kw" || true; }
sed 's/^/bterr| /' "$scratch/bpftrace.err" "$scratch/kw.err"
grep '^kw| ' "$scratch/kw" || true

python3 -c 'import time; print("clk|", time.clock_gettime_ns(time.CLOCK_MONOTONIC), time.time())'
grep '^rq| ' "$scratch/rq" || true
dmesg | awk '/spt-lab: dix_disk / { n = 0 } /GUARD check failed on sector/ { s[n++] = $0 }
	END { for (i = 0; i < n; i++) print s[i] }' |
	sed -n 's/^\[ *\([0-9.]*\)\].*on sector \([0-9]*\).*/guard| \2 \1/p'
jq -r 'select(.type == "violation") | "ev| \(.ts) \(.ino) \(.index) \(.kind)"' "$scratch/trace.json"
find "$MNT" -type f | while read -r f; do
	ino=$(stat -c %i "$f")
	filefrag -v -b512 "$f" | awk -v ino="$ino" '
		/^ *[0-9]+: / { gsub(/[.:]+/, " "); print "ext| " ino, $2, $4, $6 }'
done
echo "bs| $(stat -f -c %S "$MNT")"
dumpe2fs "/dev/$DIX_DISK" 2> /dev/null | sed -n 's/^Journal backup: *//p' | head -n1 >&2 || true
debugfs -R 'blocks <8>' "/dev/$DIX_DISK" 2> /dev/null | tr ' ' '\n' | awk 'NF' |
	awk 'NR == 1 { f = $1 } { l = $1 } END { print "jnl| " f, l }'
echo "sum| $(tail -n 1 "$scratch/trace.json")"
