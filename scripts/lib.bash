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
#   attached while one $build/wac run goes, its report in OUT.

CLEANUP_FILE=${CLEANUP_FILE:-}

on_cleanup() {
	echo "$*" >> "$CLEANUP_FILE"
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
	case $fstype in
	ext4) mkfs.ext4 -q -F "$LOOP" ;;
	ext4-nojournal) mkfs.ext4 -q -F -O ^has_journal "$LOOP" ;;
	xfs) mkfs.xfs -q -f "$LOOP" ;;
	btrfs) mkfs.btrfs -q -f "$LOOP" > /dev/null ;;
	ext2 | ext3) mkfs -t "$fstype" -q -F "$LOOP" ;;
	*) mkfs -t "$fstype" "$LOOP" > /dev/null ;;
	esac
	MNT=$(mktemp -d -p "$dir" "mnt-$fstype.XXXX")
	mount "$LOOP" "$MNT"
	on_cleanup "umount $MNT"
	# shellcheck disable=SC2034 # for the caller
	DEV=$(mountpoint -d "$MNT")
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
	"$build/wac" "$@" > /dev/null
	exec {fd}>&-
	wait "$pid"
}
