#!/bin/sh
# Installs exactly the Debian packages stablepage-trace needs to build, demo and
# test, plus any named as arguments (make test adds promtool's and
# node_exporter's packages, make bench bpftrace and time).
# Idempotent: does nothing (not even apt-get update) when all are present.
set -eu

PACKAGES="make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config
e2fsprogs xfsprogs btrfs-progs util-linux mount bats bats-assert bats-support jq
$*"

missing=""
for p in $PACKAGES; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$status" in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing packages:$missing; run as root (sudo make deps)" >&2
	exit 1
fi
echo "install-deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
# Another apt run (a parallel make target) holds dpkg's lock: wait for it.
lock="-o DPkg::Lock::Timeout=600"
# shellcheck disable=SC2086
apt-get $lock update -q >/dev/null
# Packages with daemons (prometheus, the node exporter) must not start them:
# the tests run their own node_exporter on 127.0.0.1. policy-rc.d is
# Debian's switch for that; ours is removed afterwards.
policy=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
	policy=/usr/sbin/policy-rc.d
	printf '#!/bin/sh\nexit 101\n' > "$policy"
	chmod 0755 "$policy"
	trap 'rm -f "$policy"' EXIT
fi
# mdadm (the integrity lab's md raid1, driven in the QEMU guest only): no
# monitor daemon, no monthly check or scan of the host's arrays.
case " $missing " in *" mdadm "*)
	printf 'mdadm mdadm/%s boolean false\n' start_daemon autocheck autoscan | debconf-set-selections ;;
esac
# shellcheck disable=SC2086
apt-get $lock install -y -q --no-install-recommends $missing >/dev/null
