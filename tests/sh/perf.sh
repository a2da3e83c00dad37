#!/bin/sh
# SPDX-License-Identifier: MIT
#
# uiw-perf smoke test (make check): every test name with --verify and a small
# -n in event and poll mode, tcp_bw/tcp_lat, -q, -a, -D, --json output that
# parses, a settings mismatch and a detected corruption (--inject-error); the
# RFC 7306 tests (atomic_lat, atomic_bw, write_imm_bw) with their checks.
# Environment: UIW_BIN (directory of uiw-perf), UIW_SAN (non-empty under
# sanitizers: smaller counts).  Exit 0 pass, 77 skip, else fail.

BIN=${UIW_BIN:-build/bin}
PERF=$BIN/uiw-perf

if [ ! -x "$PERF" ]; then
	echo "skip: $PERF not built"
	exit 77
fi
if ! command -v timeout >/dev/null 2>&1; then
	echo "skip: timeout(1) not available"
	exit 77
fi

if [ -n "$UIW_SAN" ]; then
	N=20
	NL=50
else
	N=200
	NL=300
fi
LIMIT=20

TMP=$(mktemp -d "${TMPDIR:-/tmp}/uiw-perf-test.XXXXXX") || exit 1
# the processes running now (reaped ones are removed: their ids may be reused)
SPID=""
CPID=""
cleanup() {
	for p in $CPID $SPID; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

FAIL=0
NRUN=0
fail() {
	echo "FAIL: $*"
	for f in "$TMP"/last.*; do
		[ -s "$f" ] && { echo "--- $f"; tail -n 15 "$f"; }
	done
	FAIL=1
}

# pair "SERVER ARGS" "CLIENT ARGS": sets CRC and SRC (exit statuses); the
# outputs are in $TMP/last.{srv,srv.err,cli,cli.err}
pair() {
	NRUN=$((NRUN + 1))
	rm -f "$TMP"/last.*
	# shellcheck disable=SC2086
	timeout "$LIMIT" "$PERF" $1 -B 127.0.0.1 -p 0 >"$TMP/last.srv" 2>"$TMP/last.srv.err" &
	SPID=$!
	port=""
	i=0
	while [ $i -lt 100 ]; do
		# text: "uiw-perf: listening on ADDR port N"; --json: {"event":"listening",...}
		port=$(sed -n -e 's/^uiw-perf: listening on .* port \([0-9][0-9]*\)$/\1/p' \
			-e 's/^{"event":"listening".*"port":\([0-9][0-9]*\)}$/\1/p' \
			"$TMP/last.srv" 2>/dev/null)
		[ -n "$port" ] && break
		kill -0 "$SPID" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	if [ -z "$port" ]; then
		CRC=99
		kill "$SPID" 2>/dev/null
		wait "$SPID"
		SRC=$?
		SPID=""
		return
	fi
	# shellcheck disable=SC2086
	timeout "$LIMIT" "$PERF" $2 -p "$port" 127.0.0.1 >"$TMP/last.cli" \
		2>"$TMP/last.cli.err" &
	CPID=$!
	wait "$CPID"
	CRC=$?
	CPID=""
	wait "$SPID"
	SRC=$?
	SPID=""
}

# ok "SERVER ARGS" "CLIENT ARGS": both must succeed and print a result row
ok() {
	pair "$1" "$2"
	if [ "$CRC" != 0 ] || [ "$SRC" != 0 ]; then
		fail "'$2' (client exit $CRC, server exit $SRC)"
		return 1
	fi
	if ! grep -q '#bytes' "$TMP/last.cli" && ! grep -q '^{' "$TMP/last.cli"; then
		fail "'$2': no result table"
		return 1
	fi
	return 0
}

# every test, both modes, with verification
for t in write_bw read_bw send_bw write_lat read_lat send_lat; do
	for m in --event --poll; do
		case $t in *_lat) n=$NL ;; *) n=$N ;; esac
		ok "$t $m --verify" "$t $m --verify -n $n"
	done
done
ok "tcp_bw --verify" "tcp_bw --verify -n $N"
ok "tcp_lat -e --verify" "tcp_lat -e --verify -n $NL"
ok "tcp_lat --poll --verify" "tcp_lat --poll --verify -n $NL"

# several QPs / connections, all sizes, a timed run, MPA options
ok "write_bw" "write_bw -q 3 --verify -n $N"
ok "send_bw --poll" "send_bw --poll -q 2 --verify -n $N -s 4096"
ok "tcp_bw" "tcp_bw -q 2 --verify -n $N"
ok "send_lat" "send_lat -a -n 3 --verify"
ok "read_bw --crc off --markers on" "read_bw --crc off --markers on --verify -n $N -s 10000"
ok "write_bw" "write_bw -D 0.5"

# RFC 7306: atomics on the server's one counter word and Write with Immediate.
# atomic_lat: one QP, so every operation (cmp_swap too) must succeed and
# return the value the one before left; the server's word must hold exactly
# the sum of the additions
for a in fetch_add cmp_swap; do
	ok "atomic_lat --verify" "atomic_lat --verify --atomic $a -n $N" || continue
	grep -q "Atomic results  : $N $a on 1 QP, $N succeeded; each returned .*(verified)" \
		"$TMP/last.cli" || fail "atomic_lat $a: no verified results line"
	grep -q "Counter check   : .*: exact ($N of $N $a succeeded" "$TMP/last.srv" ||
		fail "atomic_lat $a: the server's counter is not exact"
done
# atomic_bw: two QPs racing on one word; fetch_add: the counter is exactly
# 2N additions, the returned values 0 .. 2N-1 times the addend, each once;
# cmp_swap: some fail (the other QP moved the word), the successes add up
ok "atomic_bw --verify" "atomic_bw -q 2 --verify -n $N" && {
	grep -q "Counter check   : .*: exact ($((2 * N)) of $((2 * N)) fetch_add succeeded" \
		"$TMP/last.srv" || fail "atomic_bw -q 2: the server's counter is not exact"
	grep -q "Atomic results  : $((2 * N)) fetch_add on 2 QPs, .*each once (verified)" \
		"$TMP/last.cli" || fail "atomic_bw -q 2: no verified results line"
}
ok "atomic_bw --poll --verify" "atomic_bw --poll -q 2 --verify --atomic cmp_swap -n $N -o 4" &&
	{ grep -q "Counter check   : .*: exact ([0-9]* of $((2 * N)) cmp_swap succeeded" \
		"$TMP/last.srv" || fail "atomic_bw cmp_swap -q 2: the server's counter is not exact"; }
ok "atomic_bw --json" "atomic_bw --json -n $N" &&
	{ grep -q '"event":"atomic_results".*"operations":'"$N" "$TMP/last.cli" ||
		fail "atomic_bw --json: no atomic_results object"; }
# write_imm_bw: length, immediate and payload checked by the server, at a
# size that is not a multiple of the segment size too, and on few receives
ok "write_imm_bw --verify" "write_imm_bw --verify -n $N -s 4096"
ok "write_imm_bw --verify" "write_imm_bw --verify -n $N -s 70000"
ok "write_imm_bw --poll --verify" "write_imm_bw --poll --verify -q 2 -n $N -s 1000 -r 8"

# --json: one parsable object per result line, also for TCP and the server
if command -v python3 >/dev/null 2>&1; then
	for t in write_bw send_lat tcp_bw tcp_lat; do
		if ok "$t --json" "$t --json -n $N -s 64"; then
			for f in "$TMP/last.cli" "$TMP/last.srv"; do
				if ! python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
res = [r for r in rows if "bytes" in r]
assert res, "no result object"
for r in res:
    assert r["test"] == sys.argv[2] and r["bytes"] == 64, r
    assert ("bw_avg_MBps" in r) != ("t_typical_us" in r), r
' "$f" "$t" >"$TMP/last.py" 2>&1; then
					fail "$t --json: $f: $(tail -n 1 "$TMP/last.py")"
				fi
			done
		fi
	done
else
	echo "note: python3 missing, --json not checked"
fi

# a settings mismatch is refused clearly on both sides
pair "write_bw --crc off" "write_bw -n 10"
if [ "$CRC" != 1 ] || [ "$SRC" != 1 ] ||
	! grep -q 'settings differ: --crc' "$TMP/last.cli.err" ||
	! grep -q 'settings differ: --crc' "$TMP/last.srv.err"; then
	fail "--crc mismatch not reported (client exit $CRC, server exit $SRC)"
fi
pair "read_bw -s 4096" "read_bw -s 8192 -n 10"
if [ "$CRC" != 1 ] || [ "$SRC" != 1 ] || ! grep -q 'settings differ: size' "$TMP/last.cli.err"
then
	fail "size mismatch not reported (client exit $CRC, server exit $SRC)"
fi
pair "send_lat" "write_lat -n 10"
if [ "$CRC" != 1 ] || ! grep -q 'settings differ: test' "$TMP/last.cli.err"; then
	fail "test-name mismatch not reported (client exit $CRC, server exit $SRC)"
fi
pair "atomic_lat --atomic cmp_swap" "atomic_lat -n 10 --atomic fetch_add"
if [ "$CRC" != 1 ] || [ "$SRC" != 1 ] || ! grep -q 'settings differ: --atomic' "$TMP/last.cli.err"
then
	fail "--atomic mismatch not reported (client exit $CRC, server exit $SRC)"
fi

# --verify catches a corrupted payload (exit status 3 on both sides); the
# atomic tests: operation 5 adds one too many (both sides find it: the
# values returned after it, the server's counter)
for t in send_bw write_bw read_bw tcp_bw write_imm_bw atomic_bw atomic_lat; do
	pair "$t --verify" "$t --verify -n 20 --inject-error 5"
	if [ "$CRC" != 3 ] || [ "$SRC" != 3 ] || ! grep -q 'VERIFY FAILED' "$TMP/last.cli.err" ||
		! grep -q 'VERIFY FAILED' "$TMP/last.srv.err"; then
		fail "$t: corruption not detected (client exit $CRC, server exit $SRC)"
	fi
done

# the completion mode: latency tests poll by default (as perftest), bandwidth
# tests use events; -e/--use_event and --poll choose; the banner and --json
# say which mode ran, on both sides
mode_is() { # FILE MODE: the banner or the JSON objects of FILE name MODE
	grep -q "Completion    : $2 \|TCP_NODELAY, .*($2 mode)\|\"mode\":\"$2\"" "$1"
}
for c in "send_lat:poll" "write_lat:poll" "read_lat:poll" "tcp_lat:poll" "send_bw:event" \
	"tcp_bw:event" "send_lat -e:event" "write_lat --use_event:event" "tcp_lat -e:event" \
	"write_bw --poll:poll"; do
	args=${c%%:*}
	want=${c##*:}
	for j in "" "--json"; do
		if ok "$args $j" "$args $j -n 20"; then
			mode_is "$TMP/last.cli" "$want" && mode_is "$TMP/last.srv" "$want" ||
				fail "$args $j: the output does not say mode $want"
		fi
	done
done
# the banner says the mode was the default one
pair "send_lat" "send_lat -n 20"
grep -q 'Completion    : poll (polled context, busy-poll), the default' "$TMP/last.cli" ||
	fail "send_lat: the banner does not say poll mode is the default"
# --progress is an event-mode option: it implies -e, and --poll refuses it
pair "send_lat --progress app" "send_lat --progress app -n 20"
mode_is "$TMP/last.cli" event || fail "send_lat --progress app did not run in event mode"
timeout "$LIMIT" "$PERF" send_lat --poll --progress app -B 127.0.0.1 -p 0 >/dev/null 2>&1
[ $? = 2 ] || fail "--poll --progress app: exit status not 2"
# --poll --progress thread: busy-polls a progress-thread context (the model of
# a libibverbs program on libuiw-rdma), write_lat polling the last byte.
# Under ThreadSanitizer send_lat instead: write_lat's application reads the
# buffer the progress thread places a Write into while it does (as a program
# reads what an RNIC's DMA writes), a race by design that TSan reports
PT=write_lat
case $UIW_SAN in *thread*) PT=send_lat ;; esac
for j in "" "--json"; do
	ok "$PT --poll --progress thread $j" "$PT --poll --progress thread $j -n 200" ||
		continue
	mode_is "$TMP/last.cli" poll || fail "$PT --poll --progress thread $j: not poll mode"
	grep -q 'Completion    : poll (progress thread, busy-poll)\|"engine":"thread"' "$TMP/last.cli" ||
		fail "$PT --poll --progress thread $j: the output does not name the progress thread"
done

# usage errors
"$PERF" nosuch_test >/dev/null 2>&1
[ $? = 2 ] || fail "unknown test: exit status not 2"
"$PERF" --help | grep -q -- '--inject-error' || fail "--help incomplete"
for w in atomic_lat atomic_bw write_imm_bw '--atomic fetch_add|cmp_swap'; do
	"$PERF" --help | grep -q -- "$w" || fail "--help does not mention $w"
done
"$PERF" atomic_bw --perftest 127.0.0.1 >/dev/null 2>"$TMP/usage.err"
[ $? = 2 ] && grep -q 'perftest.*not supported' "$TMP/usage.err" ||
	fail "--perftest atomic_bw: not refused clearly with exit status 2"
"$PERF" atomic_lat -s 16 127.0.0.1 >/dev/null 2>&1
[ $? = 2 ] || fail "atomic_lat -s 16: exit status not 2"
"$PERF" write_bw --atomic cmp_swap 127.0.0.1 >/dev/null 2>&1
[ $? = 2 ] || fail "write_bw --atomic: exit status not 2"

if [ $FAIL = 0 ]; then
	echo "uiw-perf: $NRUN runs passed"
fi
exit $FAIL
