#!/bin/sh
# Regenerates the vendored vmlinux.h from a kernel's BTF (default: the running
# kernel). The BPF programs are CO-RE: any recent BTF works as a base, older
# layouts are handled in bpf/core_fixes.bpf.h.
#   scripts/gen-vmlinux.sh vmlinux/x86/vmlinux.h [/sys/kernel/btf/vmlinux]
set -eu
out=${1:?usage: gen-vmlinux.sh OUTPUT [BTF]}
btf=${2:-/sys/kernel/btf/vmlinux}
bpftool btf dump file "$btf" format c > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out from $btf ($(uname -r))"
