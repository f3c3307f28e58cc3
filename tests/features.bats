#!/usr/bin/env bats
# `stablepage-trace features`: answers asked of the running kernel, consistent
# with each other, and nothing left behind.
load helpers

setup() { spt_setup; }
teardown() { spt_teardown; }

# row LABEL: the yes/no answer of the row starting with LABEL.
row() {
	grep -F "  $1" "$BATS_TEST_TMPDIR/features" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^(yes|no):?$/) { sub(":", "", $i); print $i; exit } }'
}

@test "features: every probe answers yes or no (with the kernel's reason), modes follow the answers" {
	local securityfs_before
	securityfs_before=$(grep -c ' /sys/kernel/security ' /proc/self/mountinfo || true)
	run "$SPT" features
	assert_success
	echo "$output" > "$BATS_TEST_TMPDIR/features"
	echo "$output"
	# The tracer runs here, so what it needs must be there.
	[ "$(row 'tp_btf writeback_dirty_folio')" = yes ]
	[ "$(row 'tracepoint writeback:writeback_dirty_folio')" = yes ]
	[ "$(row 'ring buffer map')" = yes ]
	# A "no" always says why.
	! grep -E '^  .* no$' "$BATS_TEST_TMPDIR/features"
	# The attach mode and the enforcement line agree with the rows.
	if [ "$(row 'fentry folio_end_writeback')" = yes ]; then
		assert_output --partial "attach mode (auto): fentry where the function is in the kernel's BTF"
		assert_output --partial "  writeback end (fentry): folio_end_writeback"$'\n'
		assert_output --partial "  writeback start (fentry): __folio_start_writeback"$'\n'
		assert_output --partial "  wait timing (fentry+fexit): folio_wait_writeback"$'\n'
		# The filesystems loaded here have their handlers hooked.
		assert_output --regexp "  mmap violations \(fentry\+fexit page_mkwrite\): filemap_page_mkwrite block_page_mkwrite iomap_page_mkwrite .*ext4_page_mkwrite [^(]"
	else
		assert_output --partial "attach mode (auto): tracepoint (fentry does not load here)"
		assert_output --partial "  wait timing: tracepoint sched_switch, attached at the first writer's wait (--time-all-waits: from the start)"$'\n'
		assert_output --partial "  writeback end: block_rq_complete (request walk)"$'\n'
	fi
	if [ "$(row 'BPF LSM active')" = yes ] && [ "$(row 'BPF LSM program')" = yes ]; then
		assert_output --partial "holding write() from BPF: possible (BPF LSM)"
	elif [ "$(row 'fmod_ret security_file_permission')" = yes ]; then
		assert_output --partial "holding write() from BPF: possible (fmod_ret)"
	else
		assert_output --regexp "holding write\(\) from BPF: no \("
	fi
	# The BPF LSM row matches the kernel's own list.
	grep -q "BPF LSM active.*: .*" "$BATS_TEST_TMPDIR/features"
	# Probes are unloaded, securityfs left as it was.
	for _ in $(seq 50); do bpftool prog show | grep -q 'probe_' || break; sleep 0.1; done
	! bpftool prog show | grep -q 'probe_'
	[ "$(grep -c ' /sys/kernel/security ' /proc/self/mountinfo || true)" = "$securityfs_before" ]
}

@test "features lists a loop device's stable_writes and the filesystem mounted on it" {
	make_fs ext4 stable
	run "$SPT" features
	assert_success
	assert_output --regexp "  ${LOOP#/dev/} +1 +$MNT \(ext4\)"
}
