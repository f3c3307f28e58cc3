#!/bin/bash
# The integrity lab's agreement table: for each device that checks what it
# stored (a scsi_debug DIF/DIX disk, dm-integrity without a journal, md
# raid1 of two loop devices) and each filesystem, the device's own count of
# errors beside the tool's, with stable writes on and off (lab/cell.bash).
# Prints Markdown rows, each prefixed "md| " (as lab/matrix.sh), progress
# on stderr. Runs in the lab guest:
#   lab/vmtest.sh lab/agreement.sh BUILD
# Environment (a reduced grid): AGREE_KINDS, AGREE_FS (space-separated),
# AGREE_SECS (wac's duration per run, default 3).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd)
source scripts/lib.bash
source lab/cell.bash
kinds=${AGREE_KINDS:-dix integrity raid1}
fss=${AGREE_FS:-ext4 xfs ext2 vfat}
CELL_SECS=${AGREE_SECS:-3}
[ "$(id -u)" = 0 ] || { echo "agreement: needs root" >&2; exit 1; }

scratch=$(mktemp -d)
CLEANUP_FILE=$scratch/cleanup
trap 'run_cleanup; rm -rf "$scratch"' EXIT

# profiles KIND FS: data profiles on ext4 and xfs (buffered write(), mmap;
# O_DIRECT with and without the racing thread on dm-integrity and raid1,
# whose wrong blocks stay until read), file creates and deletes (metadata)
# on ext2 and vfat.
profiles() {
	case $2 in
	ext2 | vfat) echo M ;;
	*) if [ "$1" = dix ]; then echo A B; else echo A B G H; fi ;;
	esac
}

run() {
	local line
	CELL_DIR=$(mktemp -d -p "$scratch")
	if line=$(cell "$@"); then
		echo "| ${line//$'\t'/ | } |"
		# wrong blocks that are in no file: metadata, or free space
		awk '$2 == "-" { print "agreement: " $1 " not in a file page" }' "$CELL_DIR/owners" |
			head -n 5 >&2
	else
		echo "| $1 | $2 | $3 | $4 | not run: the cell failed |"
	fi
	run_cleanup
	rm -rf "$CELL_DIR"
}

start=$(date +%s)
{
	echo "| ${CELL_FIELDS// / | } |"
	# shellcheck disable=SC2086 # one --- per field
	echo "|$(printf -- '---|%.0s' $CELL_FIELDS)"
	for kind in $kinds; do
		for fs in $fss; do
			for p in $(profiles "$kind" "$fs"); do
				for st in 1 0; do
					# O_DIRECT does not use the page cache: stable writes do not apply
					case $p in G | H) [ "$st" = 0 ] && continue ;; esac
					echo "agreement: $kind $fs $p stable=$st ($(($(date +%s) - start)) s)" >&2
					run "$kind" "$fs" "$p" "$st"
				done
			done
		done
	done
	echo
	echo "Linux $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC'), wac -t 2 -d $CELL_SECS per run," \
		"$(($(date +%s) - start)) s in all."
} | sed -u 's/^/md| /'
