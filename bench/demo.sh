#!/bin/sh
# SPDX-License-Identifier: MIT
#
# make demo: uiwarp against raw TCP on 127.0.0.1, with uiw-perf.
#
# Runs uiw-perf servers (-p 0: the kernel picks the port, read from the
# server's "uiw-perf: listening on ADDR port N" line; -B 127.0.0.1) and clients, and
# prints one table: Write/Read/Send bandwidth with 64 KiB messages and
# 8-byte latency in event and poll mode, each beside the raw TCP figure of
# the same run (uiw-perf tcp_bw / tcp_lat: same sizes, TCP_NODELAY, one
# send() per message) and the ratio uiwarp/TCP. Raw TCP bandwidth is
# measured twice, with 64 KiB writes and with writes of the MSS that
# uiw-perf reports (65483 on loopback: 64 KiB writes that are not segment
# multiples slow TCP down); the stronger is every bandwidth ratio's
# baseline, and the demo says which.
#
# Environment: UIW_BIN  directory of uiw-perf (default build/bin)
#              UIW_DEMO_SECS  seconds per bandwidth run (default 2; latency
#                             runs take 3/4 of it)
# Every process is started under timeout(1) and reaped on exit; the whole
# demo takes about 25 s.

BIN=${UIW_BIN:-build/bin}
PERF=$BIN/uiw-perf
SECS=${UIW_DEMO_SECS:-2}
LSECS=$(awk -v s="$SECS" 'BEGIN { printf "%.2f", s * 0.75 }')
LIMIT=$(awk -v s="$SECS" 'BEGIN { printf "%d", s * 3 + 15 }')

if [ ! -x "$PERF" ]; then
	echo "demo: $PERF not found (build first: make _build)" >&2
	exit 1
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/uiw-demo.XXXXXX") || exit 1
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

FAILED=0

# json_field FILE KEY: the number KEY in the first JSON object of FILE
json_field() {
	sed -n "s/^{.*\"$2\":\([-0-9.e+]*\).*/\1/p" "$1" | head -n 1
}

json_str() {
	sed -n "s/^{.*\"$2\":\"\([^\"]*\)\".*/\1/p" "$1" | head -n 1
}

# run NAME TEST ARGS...: server and client of TEST with ARGS on both sides;
# the client's JSON line ends in $TMP/NAME.json.  Returns non-zero on failure.
run() {
	name=$1
	shift
	test=$1
	shift
	out=$TMP/$name
	timeout "$LIMIT" "$PERF" "$test" "$@" -B 127.0.0.1 -p 0 >"$out.srv" 2>"$out.srv.err" &
	SPID=$!
	port=""
	i=0
	while [ $i -lt 100 ]; do
		port=$(sed -n 's/^uiw-perf: listening on .* port \([0-9][0-9]*\)$/\1/p' \
			"$out.srv" 2>/dev/null)
		[ -n "$port" ] && break
		kill -0 "$SPID" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	if [ -z "$port" ]; then
		echo "demo: $name: the server did not start:" >&2
		cat "$out.srv.err" >&2
		kill "$SPID" 2>/dev/null
		wait "$SPID"
		SPID=""
		FAILED=1
		return 1
	fi
	timeout "$LIMIT" "$PERF" "$test" "$@" --json -p "$port" 127.0.0.1 \
		>"$out.json" 2>"$out.err" &
	CPID=$!
	wait "$CPID"
	crc=$?
	CPID=""
	wait "$SPID"
	src=$?
	SPID=""
	if [ $crc != 0 ] || [ $src != 0 ]; then
		echo "demo: $name failed (client exit $crc, server exit $src):" >&2
		tail -n 5 "$out.err" "$out.srv.err" >&2
		FAILED=1
		return 1
	fi
	return 0
}

bw() {
	json_field "$TMP/$1.json" bw_avg_MBps
}

lat() {
	json_field "$TMP/$1.json" t_typical_us
}

echo "uiwarp demo: uiw-perf on 127.0.0.1, ${SECS} s per bandwidth run, ${LSECS} s per latency run"

run write write_bw -s 65536 -D "$SECS"
run rd read_bw -s 65536 -D "$SECS"
run send send_bw -s 65536 -D "$SECS"
run tcpbw tcp_bw -s 65536 -D "$SECS"
# segment-size writes: the MSS the first run reported (loopback: 65483)
segsz=$(json_field "$TMP/tcpbw.json" mss)
case "$segsz" in
'' | *[!0-9]* | 0) segsz=65483 ;;
esac
run tcpbw_seg tcp_bw -s "$segsz" -D "$SECS"
run lat_ev send_lat -s 8 -D "$LSECS" --event
run lat_ev_app send_lat -s 8 -D "$LSECS" --event --progress app
run tcplat_ev tcp_lat -s 8 -D "$LSECS" --event
run lat_poll send_lat -s 8 -D "$LSECS" --poll
run wlat_poll write_lat -s 8 -D "$LSECS" --poll
run tcplat_poll tcp_lat -s 8 -D "$LSECS" --poll

cc=$(json_str "$TMP/tcpbw.json" tcp_cc)
mss=$(json_field "$TMP/tcpbw.json" mss)
[ -n "$cc" ] || cc=$(cat /proc/sys/net/ipv4/tcp_congestion_control 2>/dev/null)
echo "TCP congestion control: ${cc:-?}, MSS ${mss:-?} (loopback); CRC on, markers off"
echo "raw TCP: TCP_NODELAY, one send() per message, recv() of the message size (at"
echo "most 256 KiB); event = blocking calls, poll = non-blocking busy-poll; latency"
echo "is the median half round trip (t_typical); event, thread: the context's"
echo "progress thread runs the engine; event, app: the application sleeps in"
echo "uiw_progress() on a polled context"
echo

# row LABEL UNIT UIW TCP: ratio uiwarp/TCP
row() {
	awk -v l="$1" -v u="$2" -v a="$3" -v b="$4" 'BEGIN {
		if (a == "") a = "failed"
		if (b == "") b = "failed"
		r = (a + 0 > 0 && b + 0 > 0) ? sprintf("%.2f", a / b) : "-"
		printf "%-36s %-6s %12s %12s %8s\n", l, u, a, b, r
	}'
}

tb_msg=$(bw tcpbw)
tb_seg=$(bw tcpbw_seg)
# the stronger raw TCP of the two write sizes is the bandwidth baseline
tb_which=$(awk -v m="$tb_msg" -v s="$tb_seg" 'BEGIN { print (s + 0 > m + 0) ? "seg" : "msg" }')
if [ "$tb_which" = seg ]; then
	tb=$tb_seg
	tb_what="$segsz-octet (MSS) writes"
else
	tb=$tb_msg
	tb_what="65536-octet (message-size) writes"
fi
echo "raw TCP bandwidth baseline: the stronger of 65536-octet writes (${tb_msg:-failed} MB/s)"
echo "and $segsz-octet MSS writes (${tb_seg:-failed} MB/s): $tb_what"
echo
printf "%-36s %-6s %12s %12s %8s\n" "test" "unit" "uiwarp" "raw TCP" "ratio"
printf "%-36s %-6s %12s %12s %8s\n" "----" "----" "------" "-------" "-----"
row "RDMA Write bandwidth, 64 KiB" "MB/s" "$(bw write)" "$tb"
row "RDMA Read bandwidth, 64 KiB" "MB/s" "$(bw rd)" "$tb"
row "Send bandwidth, 64 KiB" "MB/s" "$(bw send)" "$tb"
row "Send latency, 8 B, event, thread" "usec" "$(lat lat_ev)" "$(lat tcplat_ev)"
row "Send latency, 8 B, event, app" "usec" "$(lat lat_ev_app)" "$(lat tcplat_ev)"
row "Send latency, 8 B, poll mode" "usec" "$(lat lat_poll)" "$(lat tcplat_poll)"
row "Write latency, 8 B, poll (last byte)" "usec" "$(lat wlat_poll)" "$(lat tcplat_poll)"
echo
echo "bandwidth: higher is better (ratio > 1: uiwarp faster); latency: lower is better"
echo "(ratio > 1: uiwarp slower). MB/s = 2^20 bytes/s. Full runs: uiw-perf --help,"
echo "docs/uiw-perf.md. Figures on a shared VM vary by +-20% between runs."
exit $FAILED
