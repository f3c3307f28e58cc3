#!/usr/bin/env bats
# The libFuzzer harnesses of tests/fuzz/ (make fuzz runs them for minutes):
# here each replays its corpus (the inputs that once failed) and fuzzes a
# few seconds more, under ASan and UBSan.
load helpers

@test "fuzz harnesses: their corpus and a few seconds of new inputs each, no failure" {
	[ -z "${VM_ROOT:-}" ] || skip "user-space code: fuzzed on the host, not again in the guest"
	local rt names=() n
	rt=$(clang -print-runtime-dir 2>/dev/null)/libclang_rt.fuzzer-x86_64.a
	[ -e "$rt" ] || skip "clang's libFuzzer runtime is missing ($rt): install libclang-rt-N-dev (make fuzz-build does)"
	for n in "$ROOT"/tests/fuzz/fuzz_*.c; do
		n=${n##*/fuzz_}
		names+=("${n%.c}")
		[ -x "$BUILD/fuzz/fuzz_${n%.c}" ] ||
			skip "harness fuzz_${n%.c} not built: make fuzz-build (make test builds them)"
	done
	run env FUZZ_WORK="$BATS_TEST_TMPDIR" "$ROOT/tests/fuzz/run.sh" "$BUILD/fuzz" 3 "${names[@]}"
	assert_success
	[ "$(grep -c '^fuzz .*: ok,' <<< "$output")" -eq "${#names[@]}" ]
}
