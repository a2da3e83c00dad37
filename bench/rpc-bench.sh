#!/bin/sh
# SPDX-License-Identifier: MIT
#
# bench/rpc-bench.sh [-r REPS] [-D SECS] [-s SIZE] - the rpcgen example
# service (rpcrdma/examples/bulk.x) over RPC-over-RDMA (uiwarp) beside the
# same program over libtirpc TCP, on 127.0.0.1, in one run: NULL calls per
# second, bulk GET (server -> client: RDMA Write chunks, as an NFS READ) and
# PUT (client -> server: Read chunks, as an NFS WRITE) of SIZE octets, one
# call at a time, and `uiw-perf write_bw` at the same size for the transport
# ceiling.  Repetitions are interleaved (TCP, RDMA, TCP, RDMA, ...); the
# table gives medians with min..max and the ratios RDMA/TCP.
# Defaults: 3 repetitions of 2 s, SIZE 1 MiB.  Needs `make` first.
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
		sed -n '3,15p' "$0" | sed 's/^# \{0,1\}//'
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

# one run: prints calls/s (null) or MB/s
one() { # transport op (transport rdma-sleep: both sides --poll-us -1)
	pa=
	case $1 in
	tcp) p=$TP t=tcp ;;
	rdma) p=$RP t=rdma ;;
	*) p=$RP2 t=rdma pa="--poll-us -1" ;;
	esac
	# shellcheck disable=SC2086
	timeout $((SECS * 3 + 20)) "$EX/bulk_client" --"$t" $pa -p "$p" -o "$2" -s "$SIZE" -D "$SECS" --json -q \
		127.0.0.1 2>>"$TMP/err.log" |
		sed -n 's/.*"calls_per_s":\([0-9.]*\),"MBps":\([0-9.]*\).*/\1 \2/p' |
		awk -v op="$2" '{print (op == "null") ? $1 : $2}'
}
perf() {
	"$BIN/uiw-perf" write_bw -s "$SIZE" -B 127.0.0.1 -p 0 >"$TMP/perf-srv.log" 2>&1 &
	pp=$!
	n=0
	port=
	while [ $n -lt 100 ] && [ -z "$port" ]; do
		port=$(sed -n 's/.*listening on .* port \([0-9]*\).*/\1/p' "$TMP/perf-srv.log")
		sleep 0.1
		n=$((n + 1))
	done
	timeout $((SECS * 3 + 20)) "$BIN/uiw-perf" write_bw -s "$SIZE" -D "$SECS" --json -p "$port" 127.0.0.1 \
		2>>"$TMP/err.log" | sed -n 's/.*"bw_avg_MBps": *\([0-9.]*\).*/\1/p' | head -n 1
	kill "$pp" 2>/dev/null
	wait "$pp" 2>/dev/null
}

echo "rpc-bench: $REPS repetitions x $SECS s, size $SIZE, $(nproc) CPUs, $(uname -r)" >&2
for r in $(seq 1 "$REPS"); do
	for op in null get put; do
		trs="tcp rdma"
		[ "$op" = put ] || trs="tcp rdma rdma-sleep"
		for tr in $trs; do
			v=$(one $tr $op)
			echo "$op $tr ${v:-0}" >>"$TMP/res"
			echo "rep $r: $op $tr ${v:-FAILED}" >&2
		done
	done
	v=$(perf)
	echo "perf rdma ${v:-0}" >>"$TMP/res"
	echo "rep $r: uiw-perf write_bw ${v:-FAILED} MB/s" >&2
done

med() { # op tr: median min max
	awk -v op="$1" -v tr="$2" '$1 == op && $2 == tr {print $3}' "$TMP/res" | sort -g |
		awk '{a[NR] = $1} END {if (!NR) {print "0 0 0"; exit} print a[int((NR + 1) / 2)], a[1], a[NR]}'
}
set -- $(med null tcp); nt=$1 ntl=$2 nth=$3
set -- $(med null rdma); nr=$1 nrl=$2 nrh=$3
set -- $(med get tcp); gt=$1 gtl=$2 gth=$3
set -- $(med get rdma); gr=$1 grl=$2 grh=$3
set -- $(med null rdma-sleep); ns=$1 nsl=$2 nsh=$3
set -- $(med get rdma-sleep); gs=$1 gsl=$2 gsh=$3
set -- $(med put tcp); pt=$1 ptl=$2 pth=$3
set -- $(med put rdma); pr=$1 prl=$2 prh=$3
set -- $(med perf rdma); wb=$1 wbl=$2 wbh=$3
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "n/a"}'; }
cat <<EOF
| bulk example, $SIZE, one call at a time | libtirpc TCP | RPC-over-RDMA | RDMA / TCP |
|---|---|---|---|
| NULL, calls/s | $nt ($ntl..$nth) | $nr ($nrl..$nrh) | $(ratio "$nr" "$nt") |
| NULL, no busy-poll (--poll-us -1), calls/s | | $ns ($nsl..$nsh) | $(ratio "$ns" "$nt") |
| GET (Write chunk), MB/s | $gt ($gtl..$gth) | $gr ($grl..$grh) | $(ratio "$gr" "$gt") |
| GET, no busy-poll, MB/s | | $gs ($gsl..$gsh) | $(ratio "$gs" "$gt") |
| PUT (Read chunk), MB/s | $pt ($ptl..$pth) | $pr ($prl..$prh) | $(ratio "$pr" "$pt") |
| uiw-perf write_bw, MB/s | | $wb ($wbl..$wbh) | GET / write_bw: $(ratio "$gr" "$wb") |
EOF
