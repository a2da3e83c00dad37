#!/bin/sh
# SPDX-License-Identifier: MIT
#
# bench/rpc-bench.sh [-r REPS] [-D SECS] [-s SIZE] - the rpcgen example
# service (rpcrdma/examples/bulk.x) over RPC-over-RDMA (uiwarp) beside the
# same program over libtirpc TCP, on 127.0.0.1, in one run: NULL calls per
# second, bulk GET (server -> client: RDMA Write chunks, as an NFS READ) and
# PUT (client -> server: Read chunks, as an NFS WRITE) of SIZE octets, one
# call at a time, and `uiw-perf write_bw` at the same size for the transport
# ceiling.  RPC-over-RDMA twice: busy-polling 50 us for each reply (the
# default) and blocking (--poll-us -1 on both sides, like for like with
# libtirpc TCP).  Beside each figure the CPU time (user + system) of client
# and server per call.  Repetitions are interleaved (TCP, RDMA, RDMA
# blocking, ...); the table gives medians with min..max and the ratios
# RDMA/TCP of speed and of CPU.  Exit status 1 when a run failed.
# Defaults: 3 repetitions of 2 s, SIZE 1 MiB.  Needs `make` first, and GNU
# time (/usr/bin/time, Debian package time).
# Env: UIW_BIN (build/bin).

set -u
REPS=3
SECS=2
SIZE=1M
while getopts r:D:s:h o; do
	case $o in
	r) REPS=$OPTARG ;;
	D) SECS=$OPTARG ;;
	s) SIZE=$OPTARG ;;
	*)
		sed -n '3,18p' "$0" | sed 's/^# \{0,1\}//'
		[ "$o" = h ] && exit 0
		exit 2
		;;
	esac
done
BIN=${UIW_BIN:-build/bin}
EX=$(dirname "$BIN")/examples
for b in "$EX/bulk_server" "$EX/bulk_client" "$BIN/uiw-perf"; do
	[ -x "$b" ] || { echo "rpc-bench: $b not built (make)"; exit 1; }
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/uiw-rpc-bench.XXXXXX") || exit 1
SPID=
SPID2=
cleanup() {
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
	[ -n "$SPID2" ] && kill "$SPID2" 2>/dev/null && wait "$SPID2" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

"$EX/bulk_server" --tcp 0 --rdma 0 -a 127.0.0.1 -q >"$TMP/srv.log" 2>&1 &
SPID=$!
n=0
while [ $n -lt 100 ]; do
	TP=$(sed -n 's/^bulk_server: tcp port \([0-9]*\)$/\1/p' "$TMP/srv.log")
	RP=$(sed -n 's/^bulk_server: rdma port \([0-9]*\)$/\1/p' "$TMP/srv.log")
	[ -n "$TP" ] && [ -n "$RP" ] && break
	sleep 0.1
	n=$((n + 1))
done
[ -n "$TP" ] && [ -n "$RP" ] || { echo "rpc-bench: bulk_server did not start"; exit 1; }
# a second RDMA server that never busy-polls (--poll-us -1), for the rows
# that show what the 50 us busy-poll of both sides is worth
"$EX/bulk_server" --rdma 0 --poll-us -1 -a 127.0.0.1 -q >"$TMP/srv2.log" 2>&1 &
SPID2=$!
n=0
while [ $n -lt 100 ]; do
	RP2=$(sed -n 's/^bulk_server: rdma port \([0-9]*\)$/\1/p' "$TMP/srv2.log")
	[ -n "$RP2" ] && break
	sleep 0.1
	n=$((n + 1))
done
[ -n "$RP2" ] || { echo "rpc-bench: the second bulk_server did not start"; exit 1; }


# CPU time (user + system) of process $1 so far, in clock ticks
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
HZ=$(getconf CLK_TCK)

# one run: prints "VALUE CPU_US_PER_CALL" (VALUE: calls/s for null, else
# MB/s; CPU: client and server, user + system, per call) or nothing
one() { # transport op (transport rdma-sleep: both sides --poll-us -1)
	pa=
	case $1 in
	tcp) p=$TP t=tcp sp=$SPID ;;
	rdma) p=$RP t=rdma sp=$SPID ;;
	*) p=$RP2 t=rdma pa="--poll-us -1" sp=$SPID2 ;;
	esac
	s0=$(ticks "$sp")
	# shellcheck disable=SC2086
	timeout $((SECS * 3 + 20)) /usr/bin/time -f '%U %S' -o "$TMP/ctime" "$EX/bulk_client" --"$t" $pa \
		-p "$p" -o "$2" -s "$SIZE" -D "$SECS" --json -q 127.0.0.1 >"$TMP/one.json" 2>>"$TMP/err.log"
	s1=$(ticks "$sp")
	sed -n 's/.*"calls":\([0-9]*\),.*"calls_per_s":\([0-9.]*\),"MBps":\([0-9.]*\).*/\1 \2 \3/p' "$TMP/one.json" |
		awk -v op="$2" -v ct="$(tail -n 1 "$TMP/ctime" 2>/dev/null)" -v st=$((s1 - s0)) -v hz="$HZ" '
			$1 > 0 {split(ct, c, " "); cpu = c[1] + c[2] + st / hz
				printf "%s %.1f\n", (op == "null") ? $2 : $3, cpu * 1e6 / $1}'
}
perf() {
	rm -f "$TMP/perf-srv.log" # never an earlier server's port
	"$BIN/uiw-perf" write_bw -s "$SIZE" -B 127.0.0.1 -p 0 >"$TMP/perf-srv.log" 2>&1 &
	pp=$!
	n=0
	port=
	while [ $n -lt 100 ] && [ -z "$port" ]; do
		port=$(sed -n 's/.*listening on .* port \([0-9]*\).*/\1/p' "$TMP/perf-srv.log" 2>/dev/null)
		sleep 0.1
		n=$((n + 1))
	done
	timeout $((SECS * 3 + 20)) "$BIN/uiw-perf" write_bw -s "$SIZE" -D "$SECS" --json -p "$port" 127.0.0.1 \
		2>>"$TMP/err.log" | sed -n 's/.*"bw_avg_MBps": *\([0-9.]*\).*/\1/p' | head -n 1
	kill "$pp" 2>/dev/null
	wait "$pp" 2>/dev/null
}

echo "rpc-bench: $REPS repetitions x $SECS s, size $SIZE, $(nproc) CPUs, $(uname -r)" >&2
failed=0
for r in $(seq 1 "$REPS"); do
	for op in null get put; do
		for tr in tcp rdma rdma-sleep; do
			# shellcheck disable=SC2046
			set -- $(one $tr $op)
			if [ -n "${1:-}" ]; then
				echo "$op $tr $1 $2" >>"$TMP/res"
				echo "rep $r: $op $tr $1 (CPU $2 us/call)" >&2
			else
				failed=$((failed + 1))
				echo "rep $r: $op $tr FAILED: $(tail -n 2 "$TMP/err.log" | tr '\n' ' ')" >&2
			fi
		done
	done
	v=$(perf)
	if [ -n "$v" ]; then
		echo "perf rdma $v 0" >>"$TMP/res"
		echo "rep $r: uiw-perf write_bw $v MB/s" >&2
	else
		failed=$((failed + 1))
		echo "rep $r: uiw-perf write_bw FAILED" >&2
	fi
done

med() { # op tr [column: 3 value, 4 CPU]: median min max
	awk -v op="$1" -v tr="$2" -v k="${3:-3}" '$1 == op && $2 == tr {print $k}' "$TMP/res" 2>/dev/null |
		sort -g | awk '{a[NR] = $1} END {if (!NR) {print "- - -"; exit} print a[int((NR + 1) / 2)], a[1], a[NR]}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0 && a != "-") printf "%.2f", a / b; else print "n/a"}'; }
# one table row: LABEL OP
row() {
	# shellcheck disable=SC2046
	set -- "$1" $(med "$2" tcp) $(med "$2" tcp 4) $(med "$2" rdma) $(med "$2" rdma 4) \
		$(med "$2" rdma-sleep) $(med "$2" rdma-sleep 4)
	# $2..$4 TCP, $5 its CPU; $8..$10 busy-poll, $11 CPU; $14..$16 blocking, $17 CPU
	printf '| %s | %s (%s..%s) | %s | %s (%s..%s) | %s | %s / %s | %s (%s..%s) | %s | %s / %s |\n' \
		"$1" "$2" "$3" "$4" "$5" "$8" "$9" "${10}" "${11}" "$(ratio "$8" "$2")" \
		"$(ratio "${11}" "$5")" "${14}" "${15}" "${16}" "${17}" "$(ratio "${14}" "$2")" \
		"$(ratio "${17}" "$5")"
}
cat <<TABLE
CPU: user + system time of the client and the server per call, in us
(/usr/bin/time and /proc/PID/stat; medians).  busy-poll: both
RPC-over-RDMA sides poll 50 us for each reply before they sleep (the
default); blocking: --poll-us -1 on both, as libtirpc TCP blocks, the
like-for-like column.

| bulk example, $SIZE, one call at a time | libtirpc TCP | CPU | RPC-over-RDMA, busy-poll | CPU | RDMA/TCP speed / CPU | RPC-over-RDMA, blocking | CPU | RDMA/TCP speed / CPU |
|---|---|---|---|---|---|---|---|---|
$(row "NULL, calls/s" null)
$(row "GET (Write chunk), MB/s" get)
$(row "PUT (Read chunk), MB/s" put)
TABLE
# shellcheck disable=SC2046
set -- $(med perf rdma) $(med get rdma)
printf '\nuiw-perf write_bw %s: %s MB/s (same run); RPC GET (busy-poll) / write_bw: %s\n' \
	"$SIZE" "$1" "$(ratio "$4" "$1")"
if [ "$failed" -gt 0 ]; then
	echo "rpc-bench: $failed runs failed (above)" >&2
	exit 1
fi
