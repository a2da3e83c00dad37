#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The benchmark scripts still run and still measure (make check): each one
# in a short mode, on 127.0.0.1.  A benchmark nobody runs rots quietly:
# bench/scale.sh printed "fail" for every run after uiw-perf's result line
# grew a column, and bench/compare reported 0.000 MB/s for small
# progress-thread Sends (a 10 s stall per run) as a figure.  Now both exit
# non-zero on such runs, and this test runs them:
#   - bench/compare: raw TCP, Write, Read, Send (progress thread and
#     application progress) at 8 octets and 64 KiB, and three latencies,
#     one repetition (a run that moved nothing fails it);
#   - bench/scale.sh with 1 and 4 QPs;
#   - bench/rpc-bench.sh with 64 KiB calls.
# Not under sanitizers (UIW_SAN): timings there mean nothing and the
# scripts start the plain build's tools.  Environment: UIW_BIN.
# Exit 0 pass, 78 not applicable to this build, 77 skip, else fail.

BIN=${UIW_BIN:-build/bin}

if [ -n "$UIW_SAN" ]; then
	echo "bench.sh: not applicable: benchmarks under sanitizers measure nothing"
	exit 78
fi
if [ ! -x "$BIN/uiw-perf" ]; then
	echo "skip: $BIN/uiw-perf not built"
	exit 77
fi
for t in python3 timeout /usr/bin/time; do
	if ! command -v "$t" >/dev/null 2>&1; then
		echo "skip: $t not available (make deps-test)"
		exit 77
	fi
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/uiw-bench-test.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
trap 'exit 1' INT TERM HUP
fails=0
pass() { echo "ok: $*"; }
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# bench/compare: the uiwarp rows that once read 0, beside raw TCP
ONLY='^(tcp_bw_best|write_bw_c1|read_bw_c0|send_bw_c0|send_bw_app|tcp_lat|send_lat_ev|write_lat_poll)$'
if UIW_BIN=$BIN timeout 300 python3 bench/compare --no-install --reps 1 --sizes 8,64K \
	--secs 0.3 --lat-secs 0.2 --only "$ONLY" --out "$TMP/compare" >"$TMP/compare.log" 2>&1; then
	n=$(grep -c '^\[[0-9]*/[0-9]*\]' "$TMP/compare.log")
	if [ "$n" -ge 12 ] && ! grep -q FAILED "$TMP/compare.log"; then
		pass "bench/compare: $n runs, every one measured"
	else
		fail "bench/compare: $n runs: $(grep FAILED "$TMP/compare.log" | head -n 3)"
	fi
else
	fail "bench/compare exit $?: $(grep -E 'FAILED|error|compare:' "$TMP/compare.log" | tail -n 4)"
fi

# bench/scale.sh: every run measured (it exits 1 otherwise)
if UIW_BIN=$BIN timeout 120 sh bench/scale.sh -r 1 -D 1 -q "1 4" >"$TMP/scale.log" 2>&1; then
	if grep -q "^| 4 | 32 | [0-9]" "$TMP/scale.log"; then
		pass "bench/scale.sh: 1 and 4 QPs measured"
	else
		fail "bench/scale.sh: no figure for 4 QPs: $(tail -n 5 "$TMP/scale.log")"
	fi
else
	fail "bench/scale.sh: exit $?: $(tail -n 5 "$TMP/scale.log")"
fi

# bench/rpc-bench.sh: a table with figures
if UIW_BIN=$BIN timeout 180 sh bench/rpc-bench.sh -r 1 -D 1 -s 64K >"$TMP/rpc.log" 2>&1 &&
	grep -q '[0-9]' "$TMP/rpc.log" && ! grep -qi 'fail' "$TMP/rpc.log"; then
	pass "bench/rpc-bench.sh: measured"
else
	fail "bench/rpc-bench.sh: $(tail -n 5 "$TMP/rpc.log")"
fi

[ "$fails" -eq 0 ] || exit 1
echo "bench.sh: all passed"
