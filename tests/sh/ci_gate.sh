#!/bin/sh
# SPDX-License-Identifier: MIT
#
# CI must not pass by skipping (.ci/run sets UIW_REQUIRE_ALL=1):
#   1. a shell test that skips (exit 77) fails make's test loop under
#      UIW_REQUIRE_ALL=1 and is only reported without it; one that is not
#      applicable to the build (exit 78) passes either way;
#   2. a conformance run whose VM cannot be built (UIW_VM_BUILD_CMD=false:
#      every case SKIP) exits 1 under UIW_REQUIRE_ALL=1 and 0 without it;
#      so does one that runs fewer cases than exist.
# Nothing here needs qemu: the VM is never built.  Exit 0 pass, else fail.
# Env: UIW_BIN, UIW_SAN (the build's, passed on to make).

set -u
ME=ci_gate
# shellcheck source=tests/sh/common.inc
. "$(dirname "$0")/common.inc"
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${UIW_BIN:-build/bin}
O=$(cd "$(dirname "$BIN")" && pwd)

# 1. make's loop over shell tests: SH_TESTS and CHECK_BIN replaced, so only
# the two scripts below run.  CHECK_BIN is a make target too (the Check
# binary, linked from the test objects): it must name a file of this test's
# own, newer than those objects, never a program of the system, which make
# would relink over
printf '#!/bin/sh\necho "skip.sh: skipped: nothing"\nexit 77\n' >"$TMP/skip.sh"
printf '#!/bin/sh\necho "na.sh: not applicable"\nexit 78\n' >"$TMP/na.sh"
printf '#!/bin/sh\nexit 0\n' >"$TMP/nocheck"
chmod +x "$TMP/nocheck"
loop() { # REQUIRE SCRIPT: make's verdict (0 or not)
	UIW_REQUIRE_ALL=$1 make -s -C "$TOP" O="$O" SAN="${UIW_SAN:-}" _check SH_TESTS="$2" CHECK_BIN="$TMP/nocheck" \
		>"$TMP/loop.out" 2>&1
}
if loop 1 "$TMP/skip.sh"; then
	fail "a skipping shell test passed make check under UIW_REQUIRE_ALL=1: $(tail -n 3 "$TMP/loop.out")"
elif ! grep -q 'FAILED .*skip.sh (skipped, and UIW_REQUIRE_ALL=1' "$TMP/loop.out"; then
	fail "UIW_REQUIRE_ALL=1, skipping test: make failed without saying why: $(tail -n 3 "$TMP/loop.out")"
else
	pass "a shell test that skips fails make check under UIW_REQUIRE_ALL=1"
fi
if loop 0 "$TMP/skip.sh" && grep -q 'SKIPPED .*skip.sh' "$TMP/loop.out"; then
	pass "without it the skip is reported (SKIPPED) and make check passes"
else
	fail "UIW_REQUIRE_ALL=0, skipping test: $(tail -n 3 "$TMP/loop.out")"
fi
if loop 1 "$TMP/na.sh" && grep -q 'n/a .*na.sh' "$TMP/loop.out"; then
	pass "a test not applicable to the build (exit 78) passes, reported n/a"
else
	fail "exit 78 under UIW_REQUIRE_ALL=1: $(tail -n 3 "$TMP/loop.out")"
fi

# 2. conformance: the VM build fails, every case skips
conf() { # REQUIRE CASES...: run.sh's exit status
	_r=$1
	shift
	UIW_REQUIRE_ALL=$_r UIW_VM_BUILD_CMD=false UIW_VM_DIR="$TMP/vm" UIW_CONFORMANCE_CASES="$*" \
		timeout 120 sh "$TOP/tests/conformance/run.sh" >"$TMP/conf.out" 2>&1
}
mkdir -p "$TMP/vm"
conf 1 ""
rc=$?
if [ "$rc" = 1 ] && grep -q 'skipped, and UIW_REQUIRE_ALL=1 requires every case to run' "$TMP/conf.out"; then
	pass "conformance with the VM unbuildable: exit 1 under UIW_REQUIRE_ALL=1 ($(grep '^conformance: [0-9]' "$TMP/conf.out"))"
else
	fail "conformance, VM unbuildable, UIW_REQUIRE_ALL=1: exit $rc: $(tail -n 3 "$TMP/conf.out")"
fi
conf 0 ""
rc=$?
if [ "$rc" = 0 ] && grep -q '^conformance: 0 passed, 0 failed, [1-9][0-9]* skipped' "$TMP/conf.out"; then
	pass "without it: every case SKIP with the reason, exit 0"
else
	fail "conformance, VM unbuildable, UIW_REQUIRE_ALL=0: exit $rc: $(tail -n 3 "$TMP/conf.out")"
fi
conf 1 siw-smoke
rc=$?
if [ "$rc" = 1 ]; then
	pass "one case of many under UIW_REQUIRE_ALL=1: exit 1"
else
	fail "conformance of one case under UIW_REQUIRE_ALL=1: exit $rc: $(tail -n 3 "$TMP/conf.out")"
fi
end_checks
