# shellcheck shell=bash
# Sourced by the tools' scripts that need a scratch filesystem.
# scratch_ext4 DIR SIZE: DIR/disk.img of SIZE, a loop device on it ($loop)
# and ext4 on that, mounted on DIR/mnt ($mnt).
# scratch_remove: unmounts and frees what scratch_ext4 made; for the
# script's EXIT trap, so it does what it can of a half-made one.
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
