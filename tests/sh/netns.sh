#!/bin/sh
# SPDX-License-Identifier: MIT
#
# netns.sh - RDMA Writes over a real link with packet loss.
#
# Two network namespaces joined by a veth pair (192.0.2.1/24 server,
# 192.0.2.2/24 client); uiw_xfer's server runs in one, its client in the
# other.  Runs:
#   1. 1 GiB of RDMA Writes, every octet verified by the server;
#   2. a short run with one octet corrupted on purpose (--inject-error): the
#      checker must catch it, or the other runs prove nothing;
#   3. 1 GiB again while iptables drops 1% of the packets the server's
#      namespace receives: TCP recovers, nothing is corrupted;
#   4. 64 MiB with 10% dropped: slow, nothing lost or corrupted;
#   5. 2 GiB with the client's link down for 10 s once 10% is written:
#      TCP waits it out, every octet verified;
#   6. the server killed with SIGKILL once 10% of 4 GiB is written: the
#      client fails (its QP in error) within 5 s.
# Under sanitizer builds (UIW_SAN set) runs 1 and 3 move 256 MiB.
#
# Environment: UIW_TESTBIN (directory of uiw_xfer, default build/tests),
# UIW_SAN, UIW_NETNS_BYTES (override the size of runs 1 and 3).
# Exit status: 0 pass, 77 skip (the reason on stdout), anything else fail.
# Needs root, ip (iproute2), timeout (coreutils) and iptables.

set -u

me=netns.sh
say() {
	echo "$me: $*"
}
skip() {
	say "SKIP: $*"
	exit 77
}
fail() {
	say "FAIL: $*" >&2
	exit 1
}

bin=${UIW_TESTBIN:-build/tests}/uiw_xfer
ns_s=uiw-netns-s-$$
ns_c=uiw-netns-c-$$
if_s=uiws$$
if_c=uiwc$$
addr_s=192.0.2.1
addr_c=192.0.2.2
tmp=
pids=
made_s=
made_c=

# ---- cleanup: every process killed and reaped, namespaces deleted ------------

# shellcheck disable=SC2317 # reap and cleanup run from the trap
# reap PID: TERM, up to 3 s for it to go, then KILL; wait for it.
reap() {
	kill -TERM "$1" 2>/dev/null || {
		wait "$1" 2>/dev/null
		return 0
	}
	i=0
	while kill -0 "$1" 2>/dev/null && [ "$i" -lt 30 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

# shellcheck disable=SC2317
cleanup() {
	rc=$?
	trap - EXIT INT TERM
	for p in $pids; do
		reap "$p"
	done
	for ns in ${made_s:+"$ns_s"} ${made_c:+"$ns_c"}; do
		# anything still running in the namespace (should be nothing)
		for p in $(timeout 10 ip netns pids "$ns" 2>/dev/null); do
			kill -KILL "$p" 2>/dev/null
		done
		# deleting the namespace destroys the veth end in it, and its peer
		timeout 10 ip netns del "$ns" 2>/dev/null ||
			echo "$me: warning: could not delete namespace $ns" >&2
	done
	[ -n "$tmp" ] && rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT
trap 'say "terminated"; exit 143' TERM

# ---- prerequisites: anything missing is a skip, never a pass -------------------

[ -x "$bin" ] || fail "$bin not found or not executable (build first: make _build)"
[ "$(id -u)" = 0 ] || skip "network namespaces need root (uid $(id -u))"
command -v ip >/dev/null 2>&1 || skip "ip (iproute2) not installed"
command -v timeout >/dev/null 2>&1 || skip "timeout (coreutils) not installed"
ipts=
for c in iptables iptables-legacy iptables-nft; do
	command -v "$c" >/dev/null 2>&1 && ipts="$ipts $c"
done
[ -n "$ipts" ] || skip "iptables not installed (apt-get install iptables)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/uiw-netns.XXXXXX") || fail "mktemp failed"

if ! out=$(timeout 10 ip netns add "$ns_s" 2>&1); then
	skip "cannot create a network namespace (ip netns add: $out)"
fi
made_s=1
if ! out=$(timeout 10 ip netns add "$ns_c" 2>&1); then
	skip "cannot create a second network namespace (ip netns add: $out)"
fi
made_c=1
if ! out=$(timeout 10 ip netns exec "$ns_s" true 2>&1); then
	skip "cannot enter a network namespace (ip netns exec: $out)"
fi

# veth pair, one end in each namespace
if ! out=$(timeout 10 ip link add "$if_s" type veth peer name "$if_c" 2>&1); then
	skip "cannot create a veth pair (ip link add: $out)"
fi
if ! timeout 10 ip link set "$if_s" netns "$ns_s" ||
	! timeout 10 ip link set "$if_c" netns "$ns_c"; then
	timeout 10 ip link del "$if_s" 2>/dev/null
	fail "cannot move the veth ends into the namespaces"
fi
if ! timeout 10 ip -n "$ns_s" addr add "$addr_s/24" dev "$if_s" ||
	! timeout 10 ip -n "$ns_c" addr add "$addr_c/24" dev "$if_c" ||
	! timeout 10 ip -n "$ns_s" link set lo up ||
	! timeout 10 ip -n "$ns_c" link set lo up ||
	! timeout 10 ip -n "$ns_s" link set "$if_s" up ||
	! timeout 10 ip -n "$ns_c" link set "$if_c" up; then
	fail "cannot configure the veth pair"
fi

# iptables that can add the statistic DROP rule in a namespace: the nft
# backend (Debian 12's default) or legacy, whichever works here
drop_rule="INPUT -m statistic --mode random --probability 0.01 -j DROP"
ipt=
ipt_err=
for c in $ipts; do
	# shellcheck disable=SC2086 # the rule is words on purpose
	if out=$(timeout 10 ip netns exec "$ns_s" "$c" -w 5 -A $drop_rule 2>&1) &&
		timeout 10 ip netns exec "$ns_s" "$c" -w 5 -D $drop_rule 2>/dev/null; then
		ipt=$c
		break
	fi
	ipt_err="$ipt_err $c: $out;"
done
[ -n "$ipt" ] || skip "iptables cannot add a statistic DROP rule in a namespace:$ipt_err"

say "namespaces $ns_s ($addr_s, $if_s) and $ns_c ($addr_c, $if_c);" \
	"$($ipt -V 2>/dev/null || echo "$ipt")"

total=1G
total_desc="1 GiB"
if [ -n "${UIW_SAN:-}" ]; then
	total=256M
	total_desc="256 MiB (sanitizer build, UIW_SAN=$UIW_SAN: smaller than the usual 1 GiB)"
fi
if [ -n "${UIW_NETNS_BYTES:-}" ]; then
	total=$UIW_NETNS_BYTES
	total_desc="$total (UIW_NETNS_BYTES)"
fi
say "runs of $total_desc"

# ---- one transfer -----------------------------------------------------------

# Retransmitted TCP segments of a namespace (/proc/net/snmp is per namespace).
retrans() {
	timeout 10 ip netns exec "$1" cat /proc/net/snmp 2>/dev/null | awk '
		/^Tcp:/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == "RetransSegs") c = i; h = 1 }
			  else print $c }'
}

# xfer NAME BYTES [client options...]: server in $ns_s, client in $ns_c.
# Sets xfer_cli_rc, xfer_srv_rc and xfer_secs; logs in $tmp/NAME.*.
xfer() {
	name=$1
	bytes=$2
	shift 2
	srv_out=$tmp/$name.srv.out
	srv_err=$tmp/$name.srv.err
	cli_out=$tmp/$name.cli.out
	cli_err=$tmp/$name.cli.err
	: >"$srv_out"
	t0=$(date +%s.%N)
	ip netns exec "$ns_s" timeout -k 5 70 "$bin" -s -a "$addr_s" -p 0 \
		>"$srv_out" 2>"$srv_err" &
	spid=$!
	pids="$pids $spid"
	port=
	i=0
	while [ $i -lt 100 ]; do
		port=$(sed -n 's/^uiw_xfer: listening on .* port \([0-9][0-9]*\)$/\1/p' "$srv_out")
		[ -n "$port" ] && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	if [ -z "$port" ]; then
		cat "$srv_err" >&2
		fail "$name: the server did not report its port within 10 s"
	fi
	ip netns exec "$ns_c" timeout -k 5 90 "$bin" -c "$addr_s" -p "$port" -b "$bytes" "$@" \
		>"$cli_out" 2>"$cli_err" &
	cpid=$!
	pids="$pids $cpid"
	[ -n "${xfer_bg:-}" ] && return 0
	xfer_wait
}

# xfer_wait: the end of a transfer started with xfer_bg=1 xfer ...
xfer_wait() {
	wait "$cpid"
	xfer_cli_rc=$?
	wait "$spid"
	xfer_srv_rc=$?
	pids=
	t1=$(date +%s.%N)
	xfer_secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
}

# wait_progress NAME PCT: until the client reported PCT% (or ended; at most 30 s)
wait_progress() {
	i=0
	while [ "$(progress_of "$1")" -lt "$2" ] && kill -0 "$cpid" 2>/dev/null && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

# progress_of NAME: the percentage the client last reported (0 before any)
progress_of() {
	sed -n 's/.* \([0-9][0-9]*\)%.*/\1/p' "$tmp/$1.cli.err" | tail -n 1 | grep . || echo 0
}

show_logs() {
	for f in "$tmp/$1.srv.err" "$tmp/$1.cli.err"; do
		echo "---- $(basename "$f") (last 25 lines)" >&2
		tail -n 25 "$f" >&2
	done
}

# to_bytes SIZE: uiw_xfer's sizes (suffixes K, M, G: powers of 2) in octets.
to_bytes() {
	case "$1" in
	*[kK]) echo $((${1%?} * 1024)) ;;
	*[mM]) echo $((${1%?} * 1048576)) ;;
	*[gG]) echo $((${1%?} * 1073741824)) ;;
	*) echo $(($1)) ;;
	esac
}

# check_ok NAME BYTES LABEL: both exited 0, the client wrote and the server
# verified BYTES.
check_ok() {
	if [ "$xfer_cli_rc" != 0 ] || [ "$xfer_srv_rc" != 0 ]; then
		show_logs "$1"
		fail "$3: client exit $xfer_cli_rc, server exit $xfer_srv_rc (124: timed out)"
	fi
	want=$(to_bytes "$2")
	got=$(sed -n 's/^uiw_xfer: client: wrote: \([0-9]*\) bytes .*/\1/p' "$tmp/$1.cli.out")
	ver=$(sed -n 's/^uiw_xfer: server: verified: \([0-9]*\) bytes .*/\1/p' "$tmp/$1.srv.out")
	if [ "$got" != "$want" ] || [ "$ver" != "$want" ]; then
		show_logs "$1"
		fail "$3: the client wrote '$got' bytes, the server verified '$ver', expected $want"
	fi
	rate=$(sed -n 's/.* bytes in \([0-9.]*\) s: \([0-9.]*\) GB\/s.*/\1 s, \2 GB\/s/p' \
		"$tmp/$1.cli.out")
	say "$3: $got bytes written and verified in $rate (run $xfer_secs s in all)"
}

seed=$(($$ * 16))

# 1. clean link
xfer plain "$total" --seed "$seed"
check_ok plain "$total" "no loss"

# 2. the checker catches a corrupted octet (round 1 of a short run)
xfer inject 48M --seed $((seed + 1)) --inject-error 1
if [ "$xfer_cli_rc" != 1 ] || [ "$xfer_srv_rc" != 1 ] ||
	! grep -q 'MISMATCH in round 1 ' "$tmp/inject.srv.err" ||
	! grep -q 'server found a MISMATCH in round 1 ' "$tmp/inject.cli.err"; then
	show_logs inject
	fail "corruption check: a corrupted octet was not reported as expected" \
		"(client exit $xfer_cli_rc, server exit $xfer_srv_rc, both should be 1)"
fi
say "corruption check: an octet corrupted on purpose was caught ($(grep -o 'MISMATCH.*' \
	"$tmp/inject.srv.err" | head -n 1))"

# 3. 1% of the packets entering the server's namespace dropped
# shellcheck disable=SC2086
timeout 10 ip netns exec "$ns_s" "$ipt" -w 5 -A $drop_rule ||
	fail "$ipt could not add the DROP rule"
r0=$(retrans "$ns_c")
xfer drop "$total" --seed $((seed + 2))
r1=$(retrans "$ns_c")
dropped=$(timeout 10 ip netns exec "$ns_s" "$ipt" -w 5 -L INPUT -v -n -x |
	awk '$3 == "DROP" && /statistic/ { print $1 " packets (" $2 " octets)"; exit }')
check_ok drop "$total" "1% drop"
case "$dropped" in
"" | "0 "*)
	fail "the DROP rule matched no packet ('$dropped'): the loss run tested nothing"
	;;
esac
say "1% drop: iptables dropped $dropped; the client's TCP retransmitted" \
	"$((${r1:-0} - ${r0:-0})) segments"
# shellcheck disable=SC2086
timeout 10 ip netns exec "$ns_s" "$ipt" -w 5 -D $drop_rule

# 4. 10% of the packets dropped: slow, but nothing lost or corrupted
drop10="INPUT -m statistic --mode random --probability 0.10 -j DROP"
# shellcheck disable=SC2086
timeout 10 ip netns exec "$ns_s" "$ipt" -w 5 -A $drop10 || fail "$ipt could not add the 10% rule"
xfer drop10 64M --seed $((seed + 3)) -m 256K
# shellcheck disable=SC2086
timeout 10 ip netns exec "$ns_s" "$ipt" -w 5 -D $drop10
check_ok drop10 64M "10% drop"

# 5. the link down for 10 s in the middle of a transfer, then up again:
# TCP waits it out; the transfer completes, every octet verified
xfer_bg=1 xfer linkdown 2G --seed $((seed + 4)) -t 40
wait_progress linkdown 10
at=$(progress_of linkdown)
timeout 10 ip -n "$ns_c" link set "$if_c" down || fail "cannot take the link down"
sleep 10
timeout 10 ip -n "$ns_c" link set "$if_c" up || fail "cannot bring the link up"
xfer_wait
check_ok linkdown 2G "link down for 10 s at ${at}%"

# 6. the server killed (SIGKILL) in the middle of a transfer: the client's
# connection is lost, its QP goes to error and it gives up within 5 s
xfer_bg=1 xfer kill 4G --seed $((seed + 5))
wait_progress kill 10
at=$(progress_of kill)
for p in $(timeout 10 ip netns pids "$ns_s"); do
	kill -KILL "$p" 2>/dev/null
done
tk=$(date +%s.%N)
wait "$cpid"
xfer_cli_rc=$?
tc=$(date +%s.%N)
wait "$spid" 2>/dev/null
pids=
secs=$(awk -v a="$tk" -v b="$tc" 'BEGIN { printf "%.1f", b - a }')
if [ "$xfer_cli_rc" = 0 ] || [ "$xfer_cli_rc" = 124 ] ||
	[ "$(awk -v s="$secs" 'BEGIN { print (s <= 5.0) }')" != 1 ]; then
	show_logs kill
	fail "server killed at ${at}%: the client exited $xfer_cli_rc after $secs s (want an error within 5 s)"
fi
say "server killed at ${at}%: the client failed in $secs s: $(grep -v '%' "$tmp/kill.cli.err" | tail -n 1)"
say "PASS"
exit 0
