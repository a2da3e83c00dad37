#!/bin/sh
# SPDX-License-Identifier: MIT
#
# RFC 7306 on the wire, decoded by someone else: perftest's ib_atomic_lat,
# unmodified, runs FetchAdd and then CmpSwap between two processes on
# uiwarp (uiw-run --rfc7306) over the loopback of a network namespace of
# this test's own; tcpdump captures it, and
#   - tests/progs/mpa_frame frames every stream (CRCs good, nothing left
#     over) and counts Atomic Requests (opcode 10) and Responses (11);
#   - tshark's iWARP dissector decodes each Atomic Request: AOpCode 0 for
#     the FetchAdd run and 2 for the CmpSwap run (RFC 7306 Figure 5), an
#     8-aligned Remote Tagged Offset, the masks a plain operation needs
#     (FetchAdd: Add Mask 0, Compare Mask all ones; CmpSwap: Swap and
#     Compare Mask all ones), one per iteration, and each Atomic Response
#     answers one request: the Original Request Identifiers are exactly the
#     Request Identifiers; the FetchAdd responses' original values go up by
#     the addend;
#   - tshark reports no malformed frame and no iWARP warning beyond the two
#     it raises on every revision-2 MPA Request.
# Exit 0 pass, 78 not applicable to this build, 77 skip (not root, or a tool missing: make deps-test
# installs them; a sanitizer build), anything else fail.  Env: UIW_BIN,
# UIW_TESTBIN, UIW_SAN.

set -u
ME=rfc7306_wire
# shellcheck source=tests/sh/common.inc
. "$(dirname "$0")/common.inc"

BIN=${UIW_BIN:-build/bin}
TESTBIN=${UIW_TESTBIN:-build/tests}
N=40
NS=uiw-7306-$$
T=30

if [ -n "${UIW_SAN:-}" ]; then
	echo "$ME.sh: SKIP: a sanitizer build of the preloaded library needs the sanitizer runtime" \
		"first in the (uninstrumented) perftest; the plain make check runs this test"
	exit 78
fi
[ "$(id -u)" = 0 ] || { echo "$ME.sh: SKIP: needs root (a network namespace)"; exit 77; }
for t in ip tcpdump tshark ib_atomic_lat; do
	command -v "$t" >/dev/null 2>&1 || { echo "$ME.sh: SKIP: $t is not installed (make deps-test)"; exit 77; }
done
[ -x "$TESTBIN/mpa_frame" ] && [ -x "$BIN/uiw-run" ] || { echo "$ME.sh: FAIL: build first (make _build)"; exit 1; }

ip netns add "$NS" || { echo "$ME.sh: FAIL: ip netns add $NS"; exit 1; }
nscleanup() {
	ip netns del "$NS" 2>/dev/null
}
trap 'cleanup; nscleanup' EXIT
ip -n "$NS" link set lo up
nsx() { ip netns exec "$NS" "$@"; }

# listening PORT: a socket of the namespace listens on PORT
listening() {
	_h=$(printf '%04X' "$1")
	nsx cat /proc/net/tcp | awk -v h=":$_h" '$4 == "0A" && substr($2, length($2) - 4) == h { f = 1 } END { exit !f }'
}

# not through nsx: $! must be tcpdump itself (ip netns exec execs it)
ip netns exec "$NS" tcpdump -i lo -U -s 0 -w "$TMP/cap.pcap" tcp 2>"$TMP/tcpdump.err" &
TD=$!
PIDS="$PIDS $TD"
wait_for "$TMP/tcpdump.err" '/listening on/p' 10 >/dev/null || { fail "tcpdump did not start: $(cat "$TMP/tcpdump.err")"; end_checks; }

# the namespace is this test's: fixed ports are free (perftest cannot take
# one the kernel chooses)
run_pair() { # NAME PORT ARGS...
	_n=$1 _p=$2
	shift 2
	nsx timeout "$T" "$BIN/uiw-run" --rfc7306 ib_atomic_lat -R -n "$N" -p "$_p" "$@" >"$TMP/$_n.s" 2>&1 &
	_s=$!
	PIDS="$PIDS $_s"
	_w=0
	while ! listening "$_p" && [ $_w -lt 100 ]; do sleep 0.1; _w=$((_w + 1)); done
	nsx timeout "$T" "$BIN/uiw-run" --rfc7306 ib_atomic_lat -R -n "$N" -p "$_p" "$@" 127.0.0.1 >"$TMP/$_n.c" 2>&1
	_c=$?
	wait "$_s"
	_sr=$?
	if [ "$_c" = 0 ] && [ "$_sr" = 0 ]; then
		pass "$_n: ib_atomic_lat -R -n $N $*: both exit 0"
	else
		fail "$_n: client exit $_c, server exit $_sr: $(tail -n 3 "$TMP/$_n.c" "$TMP/$_n.s")"
	fi
}
run_pair fetchadd 18515
run_pair cmpswap 18516 -A CMP_AND_SWAP
# tcpdump writes what it read when interrupted: give it time to read the
# last packets first (the count it captured must then stop growing)
_last=-1
for _i in 1 2 3 4 5 6 7 8 9 10; do
	sleep 0.5
	_sz=$(wc -c <"$TMP/cap.pcap")
	[ "$_sz" = "$_last" ] && break
	_last=$_sz
done
kill -INT "$TD" 2>/dev/null
wait "$TD" 2>/dev/null
grep -E 'captured|dropped' "$TMP/tcpdump.err" | tr '\n' ' ' | sed 's/^/rfc7306_wire.sh: tcpdump: /; s/$/\n/'

# our own framing: CRCs, coverage, opcode counts
"$TESTBIN/mpa_frame" "$TMP/cap.pcap" >"$TMP/frame" 2>&1
rc=$?
if [ "$rc" = 0 ]; then
	pass "mpa_frame: $(tail -n 1 "$TMP/frame" | cut -d' ' -f2-6)"
else
	fail "mpa_frame: exit $rc: $(tail -n 3 "$TMP/frame")"
fi
nreq=$(sed -n 's/.*opcodes.* 10:\([0-9]*\).*/\1/p' "$TMP/frame" | awk '{ n += $1 } END { print n + 0 }')
nresp=$(sed -n 's/.*opcodes.* 11:\([0-9]*\).*/\1/p' "$TMP/frame" | awk '{ n += $1 } END { print n + 0 }')
[ "$nreq" -ge $((2 * N)) ] && [ "$nreq" = "$nresp" ] &&
	pass "$nreq Atomic Requests (opcode 10), as many Atomic Responses (11)" ||
	fail "Atomic Requests $nreq, Responses $nresp, expected at least $((2 * N)) each, equal"

# tshark's decode, per connection (stream index), requests and responses
TS="tshark -n -r $TMP/cap.pcap -o tcp.try_heuristic_first:TRUE --disable-heuristic rpcrdma_iwarp"
# shellcheck disable=SC2086 # $TS: the command and its options
$TS -Y 'iwarp_rdma.opcode == 0x0a' -T fields -E separator=/t -e tcp.stream -e iwarp_rdma.atomic.opcode \
	-e iwarp_rdma.atomic.request_identifier -e iwarp_rdma.atomic.remote_tagged_offset \
	-e iwarp_rdma.atomic.add_mask -e iwarp_rdma.atomic.swap_mask -e iwarp_rdma.atomic.compare_mask \
	>"$TMP/req" 2>/dev/null
# shellcheck disable=SC2086
$TS -Y 'iwarp_rdma.opcode == 0x0b' -T fields -E separator=/t -e tcp.stream \
	-e iwarp_rdma.atomic.original_request_identifier -e iwarp_rdma.atomic.original_remote_data_value \
	>"$TMP/resp" 2>/dev/null
ones=0xffffffffffffffff
# FetchAdd: AOpCode 0, Add Mask 0, Compare Mask all ones; CmpSwap: AOpCode 2,
# both masks all ones (tshark decodes Add or Swap Mask by the AOpCode)
bad=$(awk -F'\t' -v ones=$ones '
	{ to = $4 + 0; if (to % 8) { print "TO " $4 " not 8-aligned"; exit }
	  if ($2 == "0" && ($5 != "0x0000000000000000" || $7 != ones)) { print "FetchAdd masks " $5 " " $7; exit }
	  if ($2 == "2" && ($6 != ones || $7 != ones)) { print "CmpSwap masks " $6 " " $7; exit }
	  if ($2 != "0" && $2 != "2") { print "AOpCode " $2; exit }
	  n[$2]++ }
	END { if (!bad) printf "fetchadd=%d cmpswap=%d\n", n["0"], n["2"] }' "$TMP/req")
case $bad in
fetchadd=*)
	fa=${bad#fetchadd=}
	fa=${fa%% *}
	cs=${bad##*cmpswap=}
	[ "$fa" -ge "$N" ] && [ "$cs" -ge "$N" ] &&
		pass "tshark: Atomic Requests decoded: $bad, 8-aligned offsets, plain-operation masks" ||
		fail "tshark: $bad, expected at least $N of each"
	;;
*) fail "tshark: an Atomic Request is wrong: ${bad:-none decoded}" ;;
esac
cut -f1,3 "$TMP/req" | sort >"$TMP/req.ids"
cut -f1,2 "$TMP/resp" | sort >"$TMP/resp.ids"
if [ -s "$TMP/req.ids" ] && cmp -s "$TMP/req.ids" "$TMP/resp.ids"; then
	pass "tshark: every Atomic Response's Original Request Identifier is a request's ($(wc -l <"$TMP/resp.ids") pairs)"
else
	fail "tshark: request identifiers and response identifiers differ: $(diff "$TMP/req.ids" "$TMP/resp.ids" | head -n 4)"
fi
# FetchAdd of ib_atomic_lat's addend: each original value is the previous
# one plus the addend, per connection
steps=$(awk -F'\t' 'NR == FNR { if ($2 == "0") fa[$1] = 1; next }
	!($1 in fa) { next }
	{ # the last 12 decimal digits: exact as a double
	  v = (length($3) > 12 ? substr($3, length($3) - 11) : $3) + 0
	  if ($1 in prev) { d = v - prev[$1]; if (d < 0) d += 1e12
	                    if (!($1 in step)) step[$1] = d; else if (d != step[$1] || d == 0) bad++ }
	  prev[$1] = v; n++ }
	END { print n + 0, bad + 0 }' "$TMP/req" "$TMP/resp")
n=${steps% *}
b=${steps#* }
[ "$n" -ge "$N" ] && [ "$b" = 0 ] &&
	pass "tshark: the $n FetchAdd responses' original values go up by the addend" ||
	fail "tshark: FetchAdd original values: $n responses, $b out of step"
# shellcheck disable=SC2086
mal=$($TS -q -z expert,warn 2>/dev/null | awk '$1 ~ /^[0-9]+$/ && $3 != "TCP"' |
	grep -vE 'IWARP_MPA +(Res field is NOT set to zero|Rev field is NOT set to one)')
[ -z "$mal" ] && pass "tshark: no malformed frame, no iWARP warning" || fail "tshark warnings: $(echo "$mal" | head -n 3)"
end_checks
