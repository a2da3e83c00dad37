#!/bin/sh
# SPDX-License-Identifier: MIT
#
# bench/scale.sh [-r REPS] [-D SECS] [-s SIZE] [-q "1 16 256 1024"] [-E N] -
# many QPs on one engine thread (issue 7): `uiw-perf write_bw -q N` on
# 127.0.0.1 for each N, one server and one client process (each context has
# one engine thread; -E N: N engine threads each, uiw-perf --engines),
# repetitions interleaved (1, 16, 256, 1024, 1, 16, ...).
# The send queue depth per QP is max(1, 128 / N), so that about 128 Writes
# are in flight in all (at least one per QP).  Reports per N the median
# aggregate bandwidth with min..max, its ratio to one QP and to raw TCP
# (uiw-perf tcp_bw, one connection, in each repetition: the better of
# SIZE-octet and MSS-size (MSS octets) writes, as bench/compare) and to raw
# TCP over N connections (MSS writes, same repetition), and the client's
# peak RSS; then the memory of an idle QP: the client's peak RSS with N QPs
# that each move one 8-octet Write, (RSS(N) - RSS(1)) / (N - 1).
# Defaults: 3 repetitions of 3 s, 64 KiB Writes.  Needs `make` first.
# Needs GNU time (/usr/bin/time, Debian package time) for the peak RSS.
# Exit status 1 when any run failed.
# Env: UIW_BIN (build/bin), MSS (65483: loopback's segment size).

set -u
REPS=3
SECS=3
SIZE=64K
QS="1 16 256 1024"
ENG=1
while getopts r:D:s:q:E:h o; do
	case $o in
	r) REPS=$OPTARG ;;
	D) SECS=$OPTARG ;;
	s) SIZE=$OPTARG ;;
	q) QS=$OPTARG ;;
	E) ENG=$OPTARG ;;
	*)
		sed -n '3,20p' "$0" | sed 's/^# \{0,1\}//'
		[ "$o" = h ] && exit 0
		exit 2
		;;
	esac
done
BIN=${UIW_BIN:-build/bin}
PERF=$BIN/uiw-perf
[ -x "$PERF" ] || { echo "scale: $PERF not built (make)"; exit 1; }
[ -x /usr/bin/time ] || { echo "scale: /usr/bin/time (Debian package time) is needed"; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/uiw-scale.XXXXXX") || exit 1
SPID=
cleanup() {
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# run TEST Q DEPTH SIZE ARGS...: one client run against a fresh server;
# prints "MBPS HWM_KB" or "fail"
run() {
	test=$1
	q=$2
	t=$3
	s=$4
	shift 4
	eng=
	[ "$ENG" != 1 ] && [ "$test" != tcp_bw ] && eng="--engines $ENG"
	# shellcheck disable=SC2086 # $eng: an option and its value, or nothing
	# the last run's server wrote the same file: gone before this one
	# starts, or a slow start leaves its port to be read (seen once)
	rm -f "$TMP/srv"
	"$PERF" "$test" $eng -B 127.0.0.1 -p 0 >"$TMP/srv" 2>&1 &
	SPID=$!
	port=
	n=0
	while [ -z "$port" ] && [ $n -lt 100 ]; do
		port=$(sed -n 's/.*listening on .* port \([0-9][0-9]*\).*/\1/p' "$TMP/srv" 2>/dev/null | head -n 1)
		[ -z "$port" ] && sleep 0.1
		n=$((n + 1))
	done
	out=fail
	# shellcheck disable=SC2086
	if [ -n "$port" ] && /usr/bin/time -f %M -o "$TMP/rss" timeout 120 "$PERF" "$test" -s "$s" \
		-q "$q" -t "$t" $eng "$@" -p "$port" 127.0.0.1 >"$TMP/cli" 2>"$TMP/cli.err"; then
		mb=$(awk '$1 ~ /^[0-9]+$/ && NF >= 5 && $4 ~ /^[0-9.]+$/ {v = $4} END {print v}' "$TMP/cli")
		[ -n "$mb" ] && out="$mb $(tail -n 1 "$TMP/rss")"
	else
		echo "scale: $q QPs: $(tail -n 2 "$TMP/cli.err" | tr '\n' ' ') server: $(tail -n 2 "$TMP/srv" | tr '\n' ' ')" >&2
	fi
	kill "$SPID" 2>/dev/null
	wait "$SPID" 2>/dev/null
	SPID=
	[ "$out" = fail ] && : >"$TMP/failed"
	echo "$out"
}

# A / B with two decimals, "-" without a figure
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0 && a != "-") printf "%.2f", a / b; else print "-"}'; }
median() { sort -n | awk '{a[NR] = $1} END {if (NR) printf "%s %s %s", a[int((NR + 1) / 2)], a[1], a[NR]; else print "- - -"}'; }

echo "uiwarp scale: write_bw $SIZE, $REPS x $SECS s per QP count, $ENG engine thread(s) per context, $(nproc) CPUs, $(uname -r)"
for r in $(seq 1 "$REPS"); do
	# the baseline is the stronger of message-size and segment-size
	# writes (under bbr, writes that are not segment multiples slow TCP)
	res=$(run tcp_bw 1 128 "$SIZE" -D "$SECS")
	res2=$(run tcp_bw 1 128 "${MSS:-65483}" -D "$SECS")
	echo "  rep $r: raw TCP, one connection: $res ($SIZE writes), $res2 (${MSS:-65483}-octet writes)"
	best=$(printf '%s\n%s\n' "$res" "$res2" | grep -v fail | sort -n | tail -n 1)
	echo "${best:-fail}" >>"$TMP/bw.tcp"
	for q in $QS; do
		t=$((128 / q))
		[ $t -lt 1 ] && t=1
		res=$(run write_bw "$q" "$t" "$SIZE" -D "$SECS")
		echo "  rep $r: $q QPs (depth $t): $res"
		echo "$res" >>"$TMP/bw.$q"
		# raw TCP over as many connections (segment-size writes): what
		# the kernel itself keeps of one connection's rate with N
		if [ "$q" -gt 1 ]; then
			res=$(run tcp_bw "$q" "$t" "${MSS:-65483}" -D "$SECS")
			echo "  rep $r: raw TCP, $q connections: $res"
			echo "$res" >>"$TMP/tcp.$q"
		fi
	done
done
base=
set -- $(grep -v fail "$TMP/bw.tcp" | awk '{print $1}' | median)
tcp=$1
printf '\nraw TCP (uiw-perf tcp_bw, one connection, the better of %s and %s-octet writes), same run: %s MB/s median (%s..%s)\n' "$SIZE" "${MSS:-65483}" "$1" "$2" "$3"
printf '\n| QPs | depth per QP | MB/s median (min..max) | ratio to 1 QP | ratio to raw TCP | raw TCP, as many connections, MB/s | ratio to it | client peak RSS |\n|---|---|---|---|---|---|---|---|\n'
for q in $QS; do
	t=$((128 / q))
	[ $t -lt 1 ] && t=1
	set -- $(grep -v fail "$TMP/bw.$q" | awk '{print $1}' | median)
	med=$1
	lo=$2
	hi=$3
	rss=$(grep -v fail "$TMP/bw.$q" | awk '{print $2}' | sort -n | tail -n 1)
	[ -z "$base" ] && base=$med
	ratio=$(ratio "$med" "$base")
	rtcp=$(ratio "$med" "$tcp")
	if [ "$q" -gt 1 ]; then
		tq=$(grep -v fail "$TMP/tcp.$q" 2>/dev/null | awk '{print $1}' | median | awk '{print $1}')
	else
		tq=$tcp
	fi
	rtq=$(ratio "$med" "${tq:-0}")
	printf '| %s | %s | %s (%s..%s) | %s | %s | %s | %s | %s MB |\n' "$q" "$t" "$med" "$lo" "$hi" "$ratio" "$rtcp" \
		"${tq:--}" "$rtq" "$(awk -v k="${rss:-0}" 'BEGIN {printf "%.1f", k / 1024}')"
	fails=$(grep -c fail "$TMP/bw.$q")
	[ "$fails" -gt 0 ] && echo "  ($fails of $REPS runs with $q QPs failed)"
done

# memory of an idle QP: one 8-octet Write per QP
r1=
printf '\n| QPs (one 8-octet Write each) | client peak RSS | per QP beyond the first |\n|---|---|---|\n'
for q in $QS; do
	set -- $(run write_bw "$q" 1 8 -n 1)
	rss=${2:-0}
	[ -z "$r1" ] && r1=$rss
	per=$(awk -v a="$rss" -v b="$r1" -v q="$q" 'BEGIN {if (q > 1) printf "%.1f KiB", (a - b) / (q - 1); else print "-"}')
	printf '| %s | %s MB | %s |\n' "$q" "$(awk -v k="$rss" 'BEGIN {printf "%.1f", k / 1024}')" "$per"
done
if [ -e "$TMP/failed" ]; then
	echo "scale: some runs failed (above)" >&2
	exit 1
fi
