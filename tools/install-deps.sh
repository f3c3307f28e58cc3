#!/bin/sh
# Installs exactly the Debian packages stablepage-trace needs to build, demo and
# test, plus any named as arguments (make bench adds bpftrace and time).
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
apt-get update -q >/dev/null
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >/dev/null
