#!/bin/bash
# make deb: builds the Debian package with Debian's tools (dpkg-buildpackage,
# debhelper: debian/) from a copy of the tree, so that the tree gets no
# debian/.debhelper, staging directories or ../*.deb; then runs lintian.
#   scripts/build-deb.sh OUTDIR
# Leaves OUTDIR/stablepage-trace_VERSION_ARCH.deb, the .changes and
# .buildinfo files, and OUTDIR/lintian.txt (empty when lintian-clean).
set -euo pipefail
out=$1
cd "$(dirname "$0")/.."
version=$(dpkg-parsechangelog -S Version)
make_version=$(sed -n 's/^VERSION := //p' Makefile)
if [ "$version" != "$make_version" ]; then
	echo "build-deb: debian/changelog says $version, the Makefile $make_version: make them agree" >&2
	exit 1
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$out/stablepage-trace-$version
rm -rf "$src"
mkdir -p "$src"
# The tree's files (tracked, and new ones not ignored), without build output.
if git rev-parse --git-dir > /dev/null 2>&1; then
	git ls-files -co --exclude-standard | while read -r f; do [ -e "$f" ] && printf "%s\0" "$f"; done |
		xargs -0 cp --parents -t "$src" --
else
	tar -C . --exclude-vcs --exclude='./build*' --exclude=./.cache -cf - . | tar -C "$src" -xf -
fi
echo "build-deb: dpkg-buildpackage in $src (log: $out/build.log)"
if ! (cd "$src" && dpkg-buildpackage -b -us -uc) > "$out/build.log" 2>&1; then
	tail -n 30 "$out/build.log" >&2
	echo "build-deb: dpkg-buildpackage failed (whole log: $out/build.log)" >&2
	exit 1
fi
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
changes=$out/stablepage-trace_${version}_$arch.changes
# Every tag lintian shows (errors, warnings and info; overrides applied) is
# printed; errors and warnings fail the build.
rc=0
lintian --info --display-info --fail-on error,warning "$changes" > "$out/lintian.txt" 2>&1 || rc=$?
cat "$out/lintian.txt"
rm -rf "$src"
[ "$rc" -eq 0 ] || { echo "build-deb: lintian found errors or warnings (above)" >&2; exit 1; }
echo "build-deb: $out/stablepage-trace_${version}_$arch.deb"
