# shellcheck shell=bash disable=SC2154,SC2153 # build, CELL_DIR, CELL_SECS: the caller's
# One cell of the integrity lab (lab/matrix.sh, lab/agreement.sh): a fresh
# device of one kind, a filesystem on it with stable writes on or off, one
# wac profile under the tracer (--verify=1, events streamed), then the
# device's own count of what it got wrong and the tool's, side by side.
# Runs where the devices can be made: the QEMU guest (lab/vmtest.sh) has
# scsi_debug, dm-integrity and md raid1 in its module tree.
#
# cell KIND FSTYPE PROFILE STABLE: KIND dix | integrity | raid1; STABLE 1
#   or 0 (the device's stable_writes when the filesystem is mounted). Prints
#   one tab-separated line: the CELL_FIELDS. Needs $build (the build
#   directory), $CLEANUP_FILE, $CELL_DIR (scratch) and $CELL_SECS (wac's
#   duration); 1 when the device cannot be made.
# Device errors, per kind: dix the guard failures (writes the disk failed);
# integrity the checksum mismatches found reading every block back (writes
# stored with a tag of other content); raid1 mismatch_cnt after `check`
# (sectors whose mirrors differ) and the 4 KiB blocks that differ.
# bad_blocks: the device's wrong blocks (4 KiB, of the filesystem's device),
# each mapped to the regular file page that holds it (lab/blocks.py owners);
# on_violated: of those, blocks of a page with a violation event;
# on_changed: blocks of a file the tool saw pages of changed in flight;
# residual: blocks of neither (metadata, or nothing mapped).

# shellcheck disable=SC2034 # for the callers
CELL_FIELDS="kind fs profile stable mmap write other metadata changed changed_by_kind failed device_errors bad_blocks on_violated on_changed residual events_lost ops_per_s"
LAB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# cell_device KIND FSTYPE STABLE: the device with FSTYPE mounted; sets
# CELL_DISK (the filesystem's disk) and CELL_RQ (the --dev arguments of the
# devices the write requests go to).
cell_device() {
	local kind=$1 fstype=$2 stable=$3 size=128
	case $fstype in xfs) size=320 ;; esac
	case $kind in
	dix)
		dix_fs "$CELL_DIR" "$size" "$fstype" "$stable" || return 1
		CELL_DISK=$DIX_DISK CELL_RQ=(--dev "$DIX_DISK")
		return 0
		;;
	integrity)
		integrity_dev "$CELL_DIR" "${size}M" || return 1
		CELL_DISK=$INT_DISK CELL_RQ=(--dev "${LOOP#/dev/}")
		;;
	raid1)
		md_raid1 "$CELL_DIR" "${size}M" || return 1
		CELL_DISK=$MD_DISK CELL_RQ=(--dev "${LOOP#/dev/}" --dev "${LOOP2#/dev/}")
		;;
	esac
	# made stable, as dix_fs: mkfs writes through the device's own cache
	echo 1 > "/sys/block/$CELL_DISK/queue/stable_writes"
	mkfs_on "/dev/$CELL_DISK" "$fstype" > /dev/null
	echo "$stable" > "/sys/block/$CELL_DISK/queue/stable_writes"
	mount_on "/dev/$CELL_DISK" "$CELL_DIR" "$fstype"
}

# cell_bad_blocks KIND: the device's wrong 4 KiB blocks into $CELL_DIR/bad,
# one a line; sets CELL_ERRORS (the device's own count).
cell_bad_blocks() {
	local off bad=$CELL_DIR/bad
	case $1 in
	dix)
		# the first bad sector of each failed command: "BLOCK SECTOR",
		# a block's lowest bad sector (blocks.py owners maps it)
		CELL_ERRORS=$(guard_failures)
		dmesg | awk '/spt-lab: dix_disk / { n = 0 }
			/GUARD check failed on sector/ { s[n++] = $0 }
			END { for (i = 0; i < n; i++) print s[i] }' |
			sed -n 's/.*on sector \([0-9]*\).*/\1/p' | awk '{ print int($1 / 8), $1 }' |
			sort -k1,1n -k2,2n | sort -k1,1n -u > "$bad"
		;;
	integrity)
		python3 "$LAB/blocks.py" bad "/dev/$INT_DISK" > "$bad"
		CELL_ERRORS=$(integrity_mismatches)
		;;
	raid1)
		CELL_ERRORS=$(md_mismatches)
		off=$(($(cat "/sys/block/$MD_DISK/md/dev-${LOOP#/dev/}/offset") * 512))
		python3 "$LAB/blocks.py" differ "$LOOP" "$LOOP2" "$off" > "$bad"
		;;
	esac
}

# cell_target PROFILE: wac's file, or its directory for M.
cell_target() {
	if [ "$1" = M ]; then
		mkdir -p "$MNT/m" && echo "$MNT/m"
	else
		echo "$MNT/f"
	fi
}

# cell_size PROFILE: wac's file size option. G and H write random pages once
# each in a while: a file of 4096 pages, so that many a page's last write
# (what the mirrors keep) is one that raced.
cell_size() {
	case $1 in G | H) echo "-s 16m" ;; esac
}

# cell_scrub PID TARGET: reads dm-integrity's device back again and again
# while PID runs, the blocks that failed into $CELL_DIR/scrub: only the
# blocks of wac's file (TARGET), in a tight loop, for the data profiles; the
# whole device for M. A raced cache page is rewritten, with a matching tag,
# by the writeback its change caused: the mismatch is there to be read only
# until then (at rest, after sync, none).
cell_scrub() {
	if [ -d "$2" ]; then
		while kill -0 "$1" 2> /dev/null; do
			python3 "$LAB/blocks.py" bad "/dev/$INT_DISK" >> "$CELL_DIR/scrub"
		done
	else
		python3 "$LAB/blocks.py" scrub "/dev/$INT_DISK" "$1" "$2" >> "$CELL_DIR/scrub"
	fi
}

cell() {
	local kind=$1 fstype=$2 profile=$3 stable=$4 out=$CELL_DIR/trace.json pid target ops wac
	cell_device "$kind" "$fstype" "$stable" || return 1
	target=$(cell_target "$profile")
	"$build/stablepage-trace" --json --verify=1 --top 1000 --dev "$CELL_DISK" "${CELL_RQ[@]}" \
		> "$out" 2> "$CELL_DIR/trace.err" &
	pid=$!
	WAIT_TRIES=1200 wait_for_lines "$pid" 1 '^Tracing' "$CELL_DIR/trace.err" ||
		{ cat "$CELL_DIR/trace.err" >&2; return 1; }
	# shellcheck disable=SC2046 # cell_size: none or two words
	"$build/wac" -p "$profile" -t 2 -d "$CELL_SECS" $(cell_size "$profile") "$target" \
		> "$CELL_DIR/wac.out" &
	wac=$!
	: > "$CELL_DIR/scrub"
	[ "$kind" = integrity ] && cell_scrub "$wac" "$target"
	wait "$wac"
	# before the sync: a page whose last write raced and that its change
	# dirtied again still has that block on disk until it is written back
	[ "$kind" = integrity ] && [ "$profile" != M ] &&
		python3 "$LAB/blocks.py" scrub "/dev/$INT_DISK" 0 "$target" >> "$CELL_DIR/scrub"
	ops=$(sed -n 's/.*ops_per_s=\([0-9]*\).*/\1/p' "$CELL_DIR/wac.out")
	# written back (a failed write's error reported here is the point)
	sync -f "$MNT" 2> /dev/null || true
	interrupt_and_wait "$pid" || return 1
	cell_bad_blocks "$kind"
	sort -un "$CELL_DIR/scrub" "$CELL_DIR/bad" -o "$CELL_DIR/bad"
	python3 "$LAB/blocks.py" owners "$MNT" < "$CELL_DIR/bad" > "$CELL_DIR/owners"
	cell_row "$kind" "$fstype" "$profile" "$stable" "${ops:-0}"
}

# cell_row KIND FSTYPE PROFILE STABLE OPS: the CELL_FIELDS line from the
# trace and the owners of the wrong blocks.
cell_row() {
	local s counts
	s=$(tail -n 1 "$CELL_DIR/trace.json")
	jq -r 'select(.type == "violation") | "\(.ino) \(.index)"' "$CELL_DIR/trace.json" |
		sort -u > "$CELL_DIR/violated"
	jq -r '.verify.changed[] | select(.ino > 0) | .ino' <<< "$s" | sort -u > "$CELL_DIR/changed_inos"
	# "BAD ON_VIOLATED ON_CHANGED RESIDUAL" over the owners' lines
	counts=$(awk -v vf="$CELL_DIR/violated" -v cf="$CELL_DIR/changed_inos" '
		FILENAME == vf { page[$1 " " $2] = 1; next }
		FILENAME == cf { ino[$1] = 1; next }
		{ n++; p = $2 != "-" && page[$2 " " $3]; i = $2 != "-" && ino[$2]
		  v += p; c += i; r += !(p || i) }
		END { print n + 0, v + 0, c + 0, r + 0 }' \
		"$CELL_DIR/violated" "$CELL_DIR/changed_inos" "$CELL_DIR/owners")
	jq -r --arg k "$1" --arg f "$2" --arg p "$3" --arg st "$4" --arg ops "$5" \
		--arg errors "$CELL_ERRORS" --arg counts "$counts" \
		'($counts | split(" ")) as $n |
		[$k, $f, $p, $st, .violations.mmap, .violations.write, .violations.other,
		.violations.metadata, .verify.pages_changed,
		(.verify.changed_by_kind | to_entries | map(select(.value > 0) | "\(.key) \(.value)") |
			join(", ") | if . == "" then "-" else . end),
		.failed_after_violation, $errors, $n[0], $n[1], $n[2], $n[3], .events_lost, $ops] | @tsv' <<< "$s"
}
