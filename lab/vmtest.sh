#!/bin/bash
# Runs a command inside a QEMU guest booted on a Debian kernel (6.1 or 6.12), with the
# host's root filesystem shared read-only over 9p (no rootfs to build), and
# returns the command's output and exit status.
#   lab/vmtest.sh [CMD...]     default: tests/run.sh in the guest, on the
#                              build in $VMTEST_BUILD (default build), the
#                              suites in $SPT_SUITES (default all)
# (any command runs with loop, ext4, xfs, btrfs and vfat loaded from the guest
# kernel's modules)
# Software emulation only (-accel tcg): KVM guests hang on these machines.
# Environment: VMTEST_BUILD, VMTEST_ACCEL, VMTEST_TIMEOUT (4200 s), VMTEST_CONSOLE,
# VMTEST_KERNEL (a series: 6.1, the default, or 6.12), VMTEST_KPKG (one package).
# The kernel package is fetched with apt-get download and cached in .cache/vm,
# one vmlinuz, module tree and initramfs per kernel version.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
build=${VMTEST_BUILD:-build}
[ "$(id -u)" = 0 ] || { echo "vmtest: needs root" >&2; exit 1; }
scripts/install-deps.sh qemu-system-x86 busybox-static cpio kmod xz-utils

cache=$top/.cache/vm
# newest_kpkg SERIES: the newest generic amd64 image of a series that apt knows
# (6.1: linux-image-6.1.0-N-amd64, 6.12: linux-image-6.12.N+debM-amd64),
# without -unsigned. The -cloud flavour has no 9p modules.
newest_kpkg() {
	apt-cache search --names-only "^linux-image-${1//./\\.}\\.[0-9]+(-[0-9]+|\\+deb[0-9]+)-amd64-unsigned\$" |
		cut -d' ' -f1 | sort -V | tail -n1 | sed 's/-unsigned$//'
}
# VMTEST_KPKG: one package (without -unsigned), e.g. linux-image-6.1.0-47-amd64;
# it wins over VMTEST_KERNEL.
kpkg=${VMTEST_KPKG:-$(newest_kpkg "${VMTEST_KERNEL:-6.1}")}
[ -n "$kpkg" ] || { echo "vmtest: no linux-image-${VMTEST_KERNEL:-6.1}.*-amd64-unsigned in apt's lists" >&2; exit 1; }
kver=${kpkg#linux-image-}
mkdir -p "$cache"
# One preparation at a time: two guests started together on a fresh cache
# would both fetch and extract the kernel.
exec 9> "$cache/.prepare.lock"
flock 9
if [ ! -f "$cache/root/boot/vmlinuz-$kver" ]; then
	echo "vmtest: fetching $kpkg-unsigned with apt-get download into $cache" \
		"(once; tens of MB, a minute or more)..." >&2
	(cd "$cache" && apt-get download -q "$kpkg-unsigned" > /dev/null)
	echo "vmtest: extracting it and writing modules.dep..." >&2
	dpkg-deb -x "$cache/$kpkg-unsigned"_*.deb "$cache/root"
	# The package ships no modules.dep: the guest's modprobe -d needs one.
	depmod -b "$cache/root" "$kver"
fi
mods=$cache/root/lib/modules/$kver

# initramfs: busybox and the modules needed to mount the host root over 9p.
# Everything else is loaded from the extracted tree once the host root is up.
# Named after this script too, so a changed init is rebuilt.
initrd=$cache/initrd-$kver-$(sha1sum "$0" | cut -c1-8).cpio.gz
if [ ! -f "$initrd" ]; then
	staging=$(mktemp -d)
	mkdir -p "$staging"/{bin,mods,proc,sys,dev,newroot}
	cp /bin/busybox "$staging/bin/"
	# In dependency order (modules.dep); init loads them as listed.
	# 6.12 builds virtio in (its modules are then absent) and ships the
	# others as .ko.xz, which busybox insmod does not read: decompressed here.
	for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci \
		netfs fscache 9pnet 9pnet_virtio 9p; do
		ko=$(find "$mods" \( -name "$m.ko" -o -name "$m.ko.xz" \) | head -n1)
		case $ko in
		*.xz) xz -dc "$ko" > "$staging/mods/$m.ko" ;;
		?*) cp "$ko" "$staging/mods/" ;;
		esac
		echo "$m" >> "$staging/mods/order"
	done
	cat > "$staging/init" <<-'EOF'
	#!/bin/busybox sh
	/bin/busybox --install -s /bin
	mount -t proc proc /proc
	mount -t sysfs sys /sys
	mount -t devtmpfs dev /dev
	# Loopback only: the metrics tests run node_exporter on 127.0.0.1.
	ip link set lo up
	for m in $(cat /mods/order); do
		[ -f /mods/$m.ko ] && insmod /mods/$m.ko
	done
	mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000 hostroot /newroot
	mount -t tmpfs run /newroot/run
	# The guest's /tmp is a fresh tmpfs; a checkout under the host's /tmp
	# (a CI clone) is carried over it with a bind mount.
	case $TOP in /tmp/*)
		mkdir /newroot/run/top && mount -o bind /newroot$TOP /newroot/run/top ;;
	esac
	mount -t tmpfs tmp /newroot/tmp
	case $TOP in /tmp/*)
		mkdir -p /newroot$TOP && mount -o bind /newroot/run/top /newroot$TOP ;;
	esac
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 results /newroot/$RESULTS
	mount -t proc proc /newroot/proc
	mount -t sysfs sys /newroot/sys
	mount -t devtmpfs dev /newroot/dev
	ln -s /proc/self/fd /newroot/dev/fd
	mkdir -p /newroot/dev/shm && mount -t tmpfs shm /newroot/dev/shm
	chroot /newroot /bin/bash -c "cd $TOP && bash $RESULTS/cmd > $RESULTS/log 2>&1; echo \$? > $RESULTS/rc"
	poweroff -f
	EOF
	chmod +x "$staging/init"
	(cd "$staging" && find . | cpio -o -H newc --quiet | gzip) > "$initrd"
	rm -rf "$staging"
fi
exec 9>&-

# console_tail FILE: 80 lines from the first oops (or else the first warning,
# lockup or hung task: its registers alone say nothing, its cause and stack
# come first), then the console's last 10 lines.
console_tail() {
	local first
	first=$(grep -n -m1 -E 'BUG:|Oops|general protection|Kernel panic' "$1" | cut -d: -f1)
	[ -n "$first" ] || first=$(grep -n -m1 -E 'WARNING:|watchdog:|INFO: task' "$1" | cut -d: -f1)
	[ -n "$first" ] && sed -n "${first},$((first + 79))p" "$1" && echo "..."
	tail -n 10 "$1"
}

results=$(mktemp -d "$cache/run.XXXX")
trap 'rm -rf "$results"' EXIT
# Every command gets the modules the tests and tools use, from the extracted
# tree; vfat mounts need its default codepage and iocharsets (cp437, ascii, utf8).
cat > "$results/cmd" <<-EOF
export VM_ROOT=$cache/root
for m in loop ext4 xfs btrfs vfat nls_cp437 nls_ascii nls_utf8; do modprobe -d "\$VM_ROOT" "\$m" || exit 1; done
EOF
if [ $# -gt 0 ]; then
	printf '%q ' "$@" >> "$results/cmd"
else
	# Default: the project's own suites (SPT_SUITES: some) against the guest kernel.
	cat >> "$results/cmd" <<-EOF
	echo "# guest kernel \$(uname -r)"
	${SPT_SUITES:+export SPT_SUITES=$(printf %q "$SPT_SUITES")}
	tests/run.sh $(printf %q "$build")
	EOF
fi

# Single-threaded TCG (both vCPUs on one host thread): under multi-threaded
# TCG (QEMU 7.2) a vCPU stayed stuck at the first byte of a function whose
# trampoline had just been detached under running writers, though memory
# held the NOP again: lab/patch-cycles.sh reproduces it within two cycles,
# single-threaded it ran every cycle, and CI's lockups looked the same
# (docs/semantics.md, docs/lab/2026-12-06-tcg-trampoline-lockup.md).
# VMTEST_ACCEL=tcg,thread=multi brings it back.
# loglevel=5 (not quiet) and softlockup_all_cpu_backtrace=1: a soft lockup's
# stacks are printed at the default level (4), which quiet hides;
# VMTEST_CONSOLE=FILE keeps the console.
# The whole suite on 6.1 takes 2,450-2,700 s (docs/semantics.md), so the
# bound leaves room for a loaded machine; a hung test is ended sooner by bats.
echo "vmtest: booting Linux $kver under QEMU (TCG: slow; the whole suite takes about" \
	"45 minutes, at most ${VMTEST_TIMEOUT:-4200} s); console: $results/console" >&2
timeout "${VMTEST_TIMEOUT:-4200}" qemu-system-x86_64 -accel "${VMTEST_ACCEL:-tcg,thread=single}" \
	-cpu max -smp 2 -m 2048 -nographic \
	-no-reboot -kernel "$cache/root/boot/vmlinuz-$kver" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 loglevel=5 softlockup_all_cpu_backtrace=1 RESULTS=$results TOP=$top" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs local,path="$results",mount_tag=results,security_model=none,multidevs=remap \
	> "$results/console" 2>&1 || true
# For debugging a guest that hangs: keep its whole console.
[ -n "${VMTEST_CONSOLE:-}" ] && cp "$results/console" "$VMTEST_CONSOLE"
if [ ! -f "$results/rc" ]; then
	[ -f "$results/log" ] && cat "$results/log"
	echo "vmtest: the guest did not finish; the end of its console:" >&2
	console_tail "$results/console" >&2
	exit 1
fi
cat "$results/log"
exit "$(cat "$results/rc")"
