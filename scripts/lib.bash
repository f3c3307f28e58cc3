# shellcheck shell=bash
# Sourced by the tools' scripts that need a scratch filesystem.
# scratch_ext4 DIR SIZE: DIR/disk.img of SIZE, a loop device on it ($loop)
# and ext4 on that, mounted on DIR/mnt ($mnt).
# scratch_remove: unmounts and frees what scratch_ext4 made; for the
# script's EXIT trap, so it does what it can of a half-made one.
# progcost_during OUT PROGCOST_ARG... -- WAC_ARG...: $build/progcost attached
# while one $build/wac run goes, its report in OUT.
scratch_ext4() {
	truncate -s "$2" "$1/disk.img"
	loop=$(losetup -f --show "$1/disk.img")
	mkfs.ext4 -q -F "$loop"
	mnt=$1/mnt
	mkdir -p "$mnt"
	mount "$loop" "$mnt"
}

scratch_remove() {
	if [ -n "${mnt:-}" ] && mountpoint -q "$mnt"; then
		umount "$mnt"
	fi
	if [ -n "${loop:-}" ]; then
		losetup -d "$loop"
	fi
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
	"$build/progcost" "${args[@]}" < "$fifo" > "$out" &
	pid=$!
	exec {fd}> "$fifo"
	rm -f "$fifo"
	until grep -qx attached "$out"; do
		if ! kill -0 "$pid" 2> /dev/null; then
			echo "$(basename "$0" .sh): progcost failed" >&2
			exec {fd}>&-
			return 1
		fi
		sleep 0.05
	done
	"$build/wac" "$@" > /dev/null
	exec {fd}>&-
	wait "$pid"
}
