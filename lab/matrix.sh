#!/bin/bash
# The seeds' matrix on a modern kernel: the reproducer's profiles A-F on
# ext2, ext3, ext4, xfs, btrfs and vfat, stable writes on and off, each on a
# fresh scsi_debug disk with DIF/DIX (lab/cell.bash) under the tracer with
# --verify=1. Prints docs/matrix.md (Markdown), each line prefixed "md| " (the
# guest's log mixes stdout and stderr; make matrix keeps these), progress on stderr.
#   lab/matrix.sh [BUILD]      inside the lab guest: make matrix
# Environment (a reduced grid): MATRIX_FS, MATRIX_PROFILES, MATRIX_STABLE
# (space-separated), MATRIX_SECS (wac's duration per cell, default 3).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd)
source scripts/lib.bash
source lab/cell.bash
fss=${MATRIX_FS:-ext2 ext3 ext4 xfs btrfs vfat}
profiles=${MATRIX_PROFILES:-A B C D E F}
stables=${MATRIX_STABLE:-0 1}
CELL_SECS=${MATRIX_SECS:-3}
[ "$(id -u)" = 0 ] || { echo "matrix: needs root" >&2; exit 1; }
[ -x "$build/stablepage-trace" ] || { echo "matrix: no $build/stablepage-trace (make)" >&2; exit 1; }

scratch=$(mktemp -d)
CLEANUP_FILE=$scratch/cleanup
trap 'run_cleanup; rm -rf "$scratch"' EXIT

# row FS PROFILE STABLE: one cell as a Markdown row, or a row saying why not.
row() {
	local line f
	CELL_DIR=$(mktemp -d -p "$scratch")
	if line=$(cell dix "$@"); then
		IFS=$'\t' read -ra f <<< "$line"
		# fs profile stable | mmap write other metadata | changed (kinds) |
		# failed | guard failures | ops/s | events lost
		printf '| %s | %s | %s | %s | %s | %s | %s | %s (%s) | %s | %s | %s | %s |\n' \
			"${f[1]}" "${f[2]}" "$([ "${f[3]}" = 1 ] && echo on || echo off)" "${f[4]}" "${f[5]}" \
			"${f[6]}" "${f[7]}" "${f[8]}" "${f[9]}" "${f[10]}" "${f[11]}" "${f[17]}" "${f[16]}"
	else
		printf '| %s | %s | %s | not run: the cell failed (see the run'"'"'s stderr) |||||||||\n' "$@"
	fi
	run_cleanup
	rm -rf "$CELL_DIR"
}

start=$(date +%s)
{
cat <<EOF
# The seeds' matrix on Linux $(uname -r)

Made by \`make matrix\` (lab/matrix.sh in the QEMU guest, lab/vmtest.sh) on $(date -u '+%Y-%m-%d %H:%M UTC').
Each row is a fresh scsi_debug disk with T10 DIF type 1 and DIX (CRC guard, checked by the emulation
on every written sector), the filesystem made on it with stable writes on and mounted with them
\`on\` or \`off\` (the disk's \`queue/stable_writes\`), then \`wac -p PROFILE -t 2 -d $CELL_SECS\` under
\`stablepage-trace --json --verify=1\`. Violations per kind, pages changed in flight (every write
request sampled; by page kind), violations whose write then failed, the disk's guard failures, and
wac's throughput (operations per second, with the tracer and --verify=1 attached: a TCG guest, so
compare within a column, not with a host). Profiles: A write()+sync_file_range, B mmap+msync, C both,
D C+O_DIRECT, E A+O_DIRECT, F B+O_DIRECT ([docs/semantics.md](semantics.md)).

| fs | profile | stable writes | mmap | write | other | metadata | changed in flight | failed after violation | guard failures | wac ops/s | events lost |
|---|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|
EOF
for fs in $fss; do
	for p in $profiles; do
		for st in $stables; do
			echo "matrix: $fs $p stable=$st ($(($(date +%s) - start)) s)" >&2
			row "$fs" "$p" "$st"
		done
	done
done
echo
echo "Grid: fs \`$fss\`, profiles \`$profiles\`, stable writes \`$stables\`; $(($(date +%s) - start)) s in all."
[ -z "${MATRIX_FS:-}${MATRIX_PROFILES:-}${MATRIX_STABLE:-}" ] ||
	echo "A reduced grid (MATRIX_FS, MATRIX_PROFILES or MATRIX_STABLE set), not the whole matrix."
} | sed -u 's/^/md| /'
