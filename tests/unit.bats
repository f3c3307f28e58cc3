#!/usr/bin/env bats
# Pure user-space logic: parsing, JSON, sorting, summary formatting.
load helpers

@test "unit tests of the user-space parts pass" {
	run "$BUILD/unit_tests"
	assert_success
	assert_output --regexp '^[0-9]+ checks, 0 failed$'
}
