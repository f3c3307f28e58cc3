# shellcheck shell=bash
# The shell library of the tests (tests/helpers.bash sources it) and of the
# scripts (bench/, lab/, scripts/demo.sh): scratch filesystems on loop
# devices, waiting for a tracer to attach, naming our BPF programs, and the
# cleanup that undoes what was made.
#
# on_cleanup CMD...: records CMD (one line, run with eval); run_cleanup runs
#   every recorded command, the last recorded first, and forgets them.
#   Commands are kept in the file $CLEANUP_FILE (set it before the first
#   on_cleanup; a file, so that they outlive subshells).
# scratch_fs DIR SIZE FSTYPE [stable]: an image of SIZE in DIR, a loop device
#   on it, FSTYPE on that, mounted on a new directory in DIR; sets LOOP
#   (/dev/loopN), MNT and DEV (MAJ:MIN of the filesystem). stable: the loop
#   device asks for stable pages (queue/stable_writes 1) first, else it
#   does not (0). Each step is
#   undone by run_cleanup, so a half-made one is undone as far as it got.
#   FSTYPE ext4-nojournal: ext4 made without a journal (-O ^has_journal).
# mkfs_on DEVICE FSTYPE, mount_on DEVICE DIR: scratch_fs's last steps, for
#   devices made otherwise: mkfs; a mount on a new directory in DIR that sets
#   MNT and DEV and is undone by run_cleanup.
# full_backing_fs DIR FSTYPE [stable]: scratch_fs on a loop device whose
#   image (sparse, 256M) lies in a 48M tmpfs that is then filled: writes to
#   blocks mkfs did not touch fail (the loop device passes on the backing
#   file's ENOSPC as an I/O error) after write() succeeded. A failing-write
#   path on any kernel, without dm or scsi_debug.
# dix_disk SIZE_MB: a scsi_debug disk with T10 protection information (DIF
#   type 1, CRC guard) and DIX, made here (modprobe; in the lab guest from
#   its kernel's modules, $VM_ROOT): the emulation checks every written
#   sector's guard tag, computed when the write was prepared, against the
#   data it receives, and fails the write ("GUARD check failed" in the
#   kernel log) when the page changed in flight. Sets DIX_DISK (sdX). 1
#   where scsi_debug cannot be loaded (this host) or is loaded already (not
#   ours to remove). run_cleanup unloads it: each call gets a fresh disk (a
#   disk that saw guard failures can fail a later mkfs with EIO).
# dix_fs DIR SIZE_MB FSTYPE STABLE: FSTYPE on a new dix_disk, made with the
#   disk's stable_writes at 1 (mkfs writes through the block device's own
#   page cache, which could fail guard checks) and mounted after setting it
#   to STABLE (0 or 1; a new mount takes it). Sets DIX_DISK, MNT, DEV.
# guard_failures: the "GUARD check failed" lines in the kernel log since the
#   last dix_disk.
# lab_modules MODULE...: loads each (in the lab guest from $VM_ROOT) unless
#   loaded; run_cleanup unloads those loaded here, last first. 1 when one
#   does not load (not built, or no module tree: the host's container).
# integrity_dev DIR SIZE: dm-integrity with crc32c tags and no journal
#   (integritysetup --integrity-no-journal: the tag is computed from the
#   bio's pages beside the data write, so a page changed in flight is
#   stored with a tag of other content) on a loop device over an image of
#   SIZE in DIR. Sets INT_NAME (the dm name), INT_DISK (dm-N) and LOOP (the
#   loop device under it, where the write requests are: --verify's device).
# integrity_mismatches: the mismatches dm-integrity counted on INT_NAME
#   (`dmsetup status`, found when a read's data and tag disagree: read the
#   device back first, lab/blocks.py bad; the kernel log's "Checksum failed"
#   lines are rate-limited, the count is not).
# md_raid1 DIR SIZE: an md raid1 (mdadm, no bitmap, --assume-clean) of two
#   loop devices over images of SIZE in DIR. Sets MD_DISK (mdN), LOOP and
#   LOOP2 (the mirrors).
# md_mismatches: `check` on MD_DISK, waited for; prints mismatch_cnt (512-byte
#   sectors found different between the mirrors).
# wait_for_lines PID N REGEX FILE...: polls until N lines of the FILEs
#   together match REGEX (grep -E), e.g. a tracer's Nth acknowledgement: 0;
#   1 once PID has exited, 2 after $WAIT_TRIES polls (default 0: no
#   limit), one every $WAIT_POLL s (default 0.1). A FILE not there yet
#   has no lines.
# interrupt_and_wait PID: SIGINT, then PID's exit status; a PID still
#   running 60 s later is hung: its kernel stack is printed, it is killed
#   and 124 returned.
# attach_points BUILD: our programs' names, one a line, from
#   BUILD/attach-points.txt (make writes it from bpf/stablepage.h).
# attach_points_regex BUILD: an ERE (grep -E, jq test) matching the name
#   bpftool shows for any program of attach_points. The kernel keeps 15
#   characters of a name (BPF_OBJ_NAME_LEN - 1); bpftool shows the full
#   name where it finds it in the program's BTF, else those 15: a longer
#   name is matched by its first 15 characters.
# our_programs_regex BUILD: the same, and the feature probe's probe_*
#   programs (bpf/probe.bpf.c).
# progcost_during OUT PROGCOST_ARG... -- WAC_ARG...: $build/progcost
#   attached while one $build/wac run goes (or $PROGCOST_LOAD's: gridload),
#   its report in OUT.

CLEANUP_FILE=${CLEANUP_FILE:-}

on_cleanup() {
	echo "$*" >> "$CLEANUP_FILE"
}

# rotation OFFSET WORD...: the words, one a line, starting at the
# OFFSET-th (modulo their count): successive runs rotate the configurations
# so that none always runs first or last (the benchmarks).
rotation() {
	local offset=$1 k
	shift
	for k in $(seq 0 $(($# - 1))); do
		local idx=$(((k + offset) % $# + 1))
		echo "${!idx}"
	done
}

# kill_wait PID: SIGTERM, then at most 5 s until it has exited (gone, or a
# zombie: its cwd and files are released by then), so that a filesystem it
# was in can be unmounted next. `wait` cannot: the cleanups run in a subshell.
kill_wait() {
	kill "$1" 2> /dev/null || return 0
	for _ in $(seq 50); do
		[ -e "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2> /dev/null || return 0
		sleep 0.1
	done
}

run_cleanup() {
	[ -n "$CLEANUP_FILE" ] && [ -f "$CLEANUP_FILE" ] || return 0
	tac "$CLEANUP_FILE" | while read -r cmd; do eval "$cmd" || true; done
	rm -f "$CLEANUP_FILE"
}

scratch_fs() {
	local dir=$1 size=$2 fstype=$3 stable=${4:-} img name
	img=$(mktemp -p "$dir" "$fstype.XXXX.img")
	# bats keeps test directories until the run ends: the guest's /tmp is
	# a tmpfs of half its memory, and a run's images together overfill it.
	on_cleanup "rm -f $img"
	truncate -s "$size" "$img"
	LOOP=$(losetup -f --show "$img")
	on_cleanup "losetup -d $LOOP"
	name=${LOOP#/dev/}
	# Set either way: a loop device keeps its queue flags across detach, so
	# one left at 1 by an interrupted run would make a plain fs stable.
	local old want=0
	[ -n "$stable" ] && want=1
	old=$(cat /sys/block/"$name"/queue/stable_writes)
	if [ "$old" != "$want" ]; then
		echo "$want" > /sys/block/"$name"/queue/stable_writes
		on_cleanup "echo $old > /sys/block/$name/queue/stable_writes"
	fi
	mkfs_on "$LOOP" "$fstype"
	mount_on "$LOOP" "$dir" "$fstype"
}

mkfs_on() {
	local dev=$1 fstype=$2
	case $fstype in
	ext4) mkfs.ext4 -q -F "$dev" ;;
	ext4-nojournal) mkfs.ext4 -q -F -O ^has_journal "$dev" ;;
	xfs) mkfs.xfs -q -f "$dev" ;;
	btrfs) mkfs.btrfs -q -f "$dev" > /dev/null ;;
	ext2 | ext3) mkfs -t "$fstype" -q -F "$dev" ;;
	*) mkfs -t "$fstype" "$dev" > /dev/null ;;
	esac
}

# (a third argument names the directory after the filesystem)
mount_on() {
	MNT=$(mktemp -d -p "$2" "mnt-${3:-fs}.XXXX")
	mount "$1" "$MNT" || return 1
	on_cleanup "umount $MNT"
	# shellcheck disable=SC2034 # for the caller
	DEV=$(mountpoint -d "$MNT")
}

full_backing_fs() {
	local dir=$1 fstype=$2 stable=${3:-} backing
	backing=$(mktemp -d -p "$dir" backing.XXXX)
	mount -t tmpfs -o size=48m tmpfs "$backing"
	on_cleanup "umount $backing"
	scratch_fs "$backing" 256M "$fstype" "$stable" || return 1
	# ENOSPC ends it: the point
	dd if=/dev/zero of="$backing/fill" bs=1M status=none 2> /dev/null || true
}

dix_disk() {
	local size=$1 host
	[ -d /sys/module/scsi_debug ] && return 1
	if ! [ -d /sys/module/sd_mod ]; then
		modprobe -q ${VM_ROOT:+-d "$VM_ROOT"} sd_mod 2> /dev/null || return 1
		on_cleanup "rmmod sd_mod"
	fi
	modprobe -q ${VM_ROOT:+-d "$VM_ROOT"} scsi_debug dif=1 dix=1 guard=0 \
		dev_size_mb="$size" 2> /dev/null || return 1
	on_cleanup "rmmod scsi_debug"
	DIX_DISK=
	for _ in $(seq 100); do
		for host in /sys/bus/pseudo/drivers/scsi_debug/adapter*/host*/target*/*/block/*; do
			[ -e "$host" ] && [ -b "/dev/${host##*/}" ] && DIX_DISK=${host##*/}
		done
		[ -n "$DIX_DISK" ] && break
		sleep 0.1
	done
	[ -n "$DIX_DISK" ] || return 1
	echo "spt-lab: dix_disk $DIX_DISK" > /dev/kmsg
}

dix_fs() {
	local dir=$1 size=$2 fstype=$3 stable=$4
	dix_disk "$size" || return 1
	echo 1 > "/sys/block/$DIX_DISK/queue/stable_writes"
	mkfs_on "/dev/$DIX_DISK" "$fstype"
	echo "$stable" > "/sys/block/$DIX_DISK/queue/stable_writes"
	mount_on "/dev/$DIX_DISK" "$dir" "$fstype"
}

guard_failures() {
	dmesg | awk '/spt-lab: dix_disk / { n = 0 } /GUARD check failed/ { n++ } END { print n + 0 }'
}

lab_modules() {
	local m
	for m in "$@"; do
		[ -d "/sys/module/${m//-/_}" ] && continue
		modprobe -q ${VM_ROOT:+-d "$VM_ROOT"} "$m" 2> /dev/null || return 1
		# with the dependencies it loaded (dm-bufio holds dm-mod)
		on_cleanup "modprobe -r ${VM_ROOT:+-d $VM_ROOT} $m"
	done
}

integrity_dev() {
	local dir=$1 size=$2 img
	command -v integritysetup > /dev/null || return 1
	# crc32c as a crypto algorithm: the guest's request_module cannot find
	# it in the host's module tree.
	lab_modules dm-mod dm-integrity crc32c-intel || lab_modules dm-mod dm-integrity || return 1
	img=$(mktemp -p "$dir" integrity.XXXX.img)
	on_cleanup "rm -f $img"
	truncate -s "$size" "$img"
	LOOP=$(losetup -f --show "$img")
	on_cleanup "losetup -d $LOOP"
	INT_NAME=spt-int-${LOOP#/dev/loop}
	integritysetup format -q --batch-mode --integrity crc32c "$LOOP" || return 1
	integritysetup open --integrity crc32c --integrity-no-journal "$LOOP" "$INT_NAME" || return 1
	on_cleanup "integritysetup close $INT_NAME"
	# /dev/mapper/NAME is a node, not a link, without udev (the guest)
	INT_DISK=$(grep -lx "$INT_NAME" /sys/block/dm-*/dm/name | cut -d/ -f4)
	echo "spt-lab: integrity_dev $INT_DISK" > /dev/kmsg
}

integrity_mismatches() {
	dmsetup status "$INT_NAME" | awk '{ print $4 }'
}

md_raid1() {
	local dir=$1 size=$2 img i loops=()
	command -v mdadm > /dev/null || return 1
	lab_modules md-mod raid1 || return 1
	for i in 1 2; do
		img=$(mktemp -p "$dir" raid1.XXXX.img)
		on_cleanup "rm -f $img"
		truncate -s "$size" "$img"
		loops+=("$(losetup -f --show "$img")")
		on_cleanup "losetup -d ${loops[-1]}"
	done
	LOOP=${loops[0]} LOOP2=${loops[1]}
	# a free md minor; mdadm makes the node (no udev in the guest)
	for i in $(seq 100 127); do [ -e "/sys/block/md$i" ] || break; done
	MD_DISK=md$i
	mdadm --create "/dev/$MD_DISK" --run --quiet --level=1 --raid-devices=2 --metadata=1.2 \
		--bitmap=none --assume-clean --homehost=any "$LOOP" "$LOOP2" || return 1
	on_cleanup "mdadm --stop --quiet /dev/$MD_DISK"
}

md_mismatches() {
	local md=/sys/block/$MD_DISK/md
	echo check > "$md/sync_action"
	sleep 0.2
	while [ "$(cat "$md/sync_action")" != idle ]; do sleep 0.2; done
	cat "$md/mismatch_cnt"
}

wait_for_lines() {
	local pid=$1 count=$2 regex=$3 tries=${WAIT_TRIES:-0} n=0
	shift 3
	until [ "$(cat "$@" 2> /dev/null | grep -cE "$regex")" -ge "$count" ]; do
		kill -0 "$pid" 2> /dev/null || return 1
		n=$((n + 1))
		[ "$tries" = 0 ] || [ "$n" -lt "$tries" ] || return 2
		sleep "${WAIT_POLL:-0.1}"
	done
}

interrupt_and_wait() {
	local pid=$1
	kill -INT "$pid"
	for _ in $(seq 600); do
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2> /dev/null; then
		echo "pid $pid did not exit within 60 s of SIGINT; state $(awk '{ print $3 }' "/proc/$pid/stat")," \
			"kernel stack:" >&2
		cat "/proc/$pid/stack" >&2 2> /dev/null
		for t in /proc/"$pid"/task/*; do
			echo "thread ${t##*/}: $(cat "$t/wchan" 2> /dev/null)" >&2
		done
		kill -KILL "$pid"
		wait "$pid" 2> /dev/null
		return 124
	fi
	wait "$pid"
}

attach_points() {
	local list=$1/attach-points.txt
	if ! [ -s "$list" ]; then
		echo "$list: missing or empty (make writes it)" >&2
		return 1
	fi
	cat "$list"
}

attach_points_regex() {
	local names
	names=$(attach_points "$1") || return 1
	awk '{ print length($0) < 15 ? $0 "$" : substr($0, 1, 15) }' <<< "$names" |
		paste -sd'|' | sed 's/.*/^(&)/'
}

our_programs_regex() {
	local names
	names=$(attach_points_regex "$1") || return 1
	echo "^(${names#^}|probe_)"
}

progcost_during() {
	local out=$1 args=() fifo pid fd
	shift
	while [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	# progcost reports when its stdin closes: a FIFO held open meanwhile.
	fifo=$(mktemp -u "${TMPDIR:-/tmp}/progcost.XXXXXX")
	mkfifo "$fifo"
	# shellcheck disable=SC2154 # $build: the caller's build directory
	"$build/progcost" "${args[@]}" < "$fifo" > "$out" &
	pid=$!
	exec {fd}> "$fifo"
	rm -f "$fifo"
	if ! WAIT_POLL=0.05 wait_for_lines "$pid" 1 '^attached$' "$out"; then
		echo "$(basename "$0" .sh): progcost failed" >&2
		exec {fd}>&-
		return 1
	fi
	"${PROGCOST_LOAD:-$build/wac}" "$@" > /dev/null
	exec {fd}>&-
	wait "$pid"
}
