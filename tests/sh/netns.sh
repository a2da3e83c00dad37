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
#      client fails (its QP in error) within 5 s;
#   7. TCP RSTs on the live connection (iptables REJECT --reject-with
#      tcp-reset in the client's namespace against the server's segments;
#      the client then gets RSTs from the server's kernel): both sides fail
#      within 5 s;
#   8. the server's socket destroyed by its kernel (ss -K), which sends a
#      RST: both sides fail within 5 s (skipped where ss -K is refused);
#   9. the server stopped (SIGSTOP) for 6 s, then continued: the client's
#      memory does not grow while it is blocked (VmHWM), and the transfer
#      completes, every octet verified;
#  10. a silent peer: the server stopped for good, the client with a TCP
#      user timeout of 2 s (--user-timeout 2000) fails within 2 + 5 s;
#  11. a silent link: everything of the connection dropped both ways, both
#      with a user timeout of 2 s: the client fails within 2 + 5 s, and the
#      server, even when idle, within 8 s more by TCP keepalive (1 s).
# In runs 6-8, 10 and 11 every work request a failing side had posted must
# complete with an error status, the last within 5 s of the first sign of
# the loss (uiw_xfer's "connection lost" line).
# Under sanitizer builds (UIW_SAN set) runs 1 and 3 move 256 MiB, run 9 256
# MiB instead of 512.
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
	# shellcheck disable=SC2086 # xfer_srv_opts: words on purpose
	ip netns exec "$ns_s" timeout -k 5 70 "$bin" -s -a "$addr_s" -p 0 ${xfer_srv_opts:-} \
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
	sed -n 's/.* \([0-9][0-9]*\)%.*/\1/p' "$tmp/$1.cli.err" 2>/dev/null | tail -n 1 | grep . ||
		echo 0
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

# ---- faults: lost connections, stopped peers --------------------------------

# alive PID: PID runs (not ended, not a zombie waiting to be reaped)
alive() {
	st=$(sed -n 's/^[0-9]* (.*) \(.\) .*/\1/p' "/proc/$1/stat" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ]
}

# xfer_pid NS: the pid of uiw_xfer itself in namespace NS (not its timeout)
xfer_pid() {
	for p in $(timeout 10 ip netns pids "$1" 2>/dev/null); do
		if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = uiw_xfer ]; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# since T: seconds from date +%s.%N value T to now, 2 decimals
since() {
	awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'
}

# wait_end PID SECS: until PID ended or about SECS seconds passed; sets
# end_secs (seconds since $tf, the time of the fault); 1 when it still runs.
wait_end() {
	i=0
	while alive "$1" && [ $i -lt $(($2 * 10)) ]; do
		sleep 0.1
		i=$((i + 1))
	done
	end_secs=$(since "$tf")
	! alive "$1"
}

# le A B: A <= B (decimals)
le() {
	[ "$(awk -v a="$1" -v b="$2" 'BEGIN { print (a <= b) }')" = 1 ]
}

# lost_parse NAME SIDE: uiw_xfer's "connection lost" line in $tmp/NAME.SIDE.err
# (SIDE cli or srv) into lost_posted, lost_errs, lost_ok, lost_never and
# lost_last (seconds from the first sign of the loss to the last completion).
lost_parse() {
	lost_line=$(grep -h 'connection lost (first sign' "$tmp/$1.$2.err" | tail -n 1)
	lost_f=$(echo "$lost_line" | sed -n 's/.*: \([0-9]*\) work requests were posted, \([0-9]*\) completed with an error status ([0-9]* flushed), \([0-9]*\) successfully, \([0-9]*\) never .* the last \([0-9.]*\) s after .*/\1 \2 \3 \4 \5/p')
	[ -n "$lost_f" ] || return 1
	# shellcheck disable=SC2086 # five numbers
	set -- $lost_f
	lost_posted=$1 lost_errs=$2 lost_ok=$3 lost_never=$4 lost_last=$5
}

# lost_all_failed NAME SIDE LABEL: the side reported the lost connection, and
# every work request it had posted completed with an error status, the last
# within 5 s of the first sign; sets lost_desc.
lost_all_failed() {
	# exit status 1 is expected here, so a sanitizer's report would not show
	if grep -q 'Sanitizer\|runtime error:' "$tmp/$1.$2.err"; then
		show_logs "$1"
		fail "$3: a sanitizer report on the $2 side"
	fi
	if ! lost_parse "$1" "$2"; then
		show_logs "$1"
		fail "$3: the $2 side did not report the lost connection"
	fi
	if [ "$lost_posted" = 0 ] || [ "$lost_errs" != "$lost_posted" ] || ! le "$lost_last" 5; then
		show_logs "$1"
		fail "$3: of the $lost_posted work requests the $2 side had posted, $lost_errs" \
			"completed with an error status, $lost_ok successfully, $lost_never never" \
			"(the last $lost_last s after the loss): want all with an error within 5 s"
	fi
	lost_desc="all $lost_posted posted WRs completed with an error, the last $lost_last s after the first"
}

# stop_server NAME: SIGSTOP the server's uiw_xfer once the client reported 10%;
# sets xs (its pid), at and tf
stop_server() {
	wait_progress "$1" 10
	at=$(progress_of "$1")
	xs=$(xfer_pid "$ns_s") || fail "$1: the server's uiw_xfer is not running"
	tf=$(date +%s.%N)
	kill -STOP "$xs" || fail "$1: cannot stop the server (pid $xs)"
}

# vm PID FIELD: FIELD (VmRSS, VmHWM) of PID in kB
vm() {
	sed -n "s/^$2:[^0-9]*\([0-9]*\) kB/\1/p" "/proc/$1/status" 2>/dev/null
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
lost_all_failed kill cli "server killed at ${at}%"
say "server killed at ${at}%: the client failed in $secs s ($lost_desc):" \
	"$(grep -v '%' "$tmp/kill.cli.err" | tail -n 1)"

# both_fail NAME LABEL BOUND: after the fault at $tf, client and server end
# within BOUND s with exit status 1, each reporting every work request it
# had posted completed with an error status.
both_fail() {
	if ! wait_end "$cpid" "$3"; then
		show_logs "$1"
		fail "$2: the client still runs $end_secs s after the fault (want an error within $3 s)"
	fi
	cli_secs=$end_secs
	if ! wait_end "$spid" "$3"; then
		show_logs "$1"
		fail "$2: the server still runs $end_secs s after the fault (want an error within $3 s)"
	fi
	srv_secs=$end_secs
	xfer_wait
	if [ "$xfer_cli_rc" != 1 ] || [ "$xfer_srv_rc" != 1 ] || ! le "$cli_secs" "$3" ||
		! le "$srv_secs" "$3"; then
		show_logs "$1"
		fail "$2: the client exited $xfer_cli_rc after $cli_secs s, the server" \
			"$xfer_srv_rc after $srv_secs s (want 1 within $3 s)"
	fi
	lost_all_failed "$1" cli "$2"
	cli_desc=$lost_desc
	lost_all_failed "$1" srv "$2"
	say "$2 at ${at}%: the client failed $cli_secs s after the fault ($cli_desc)," \
		"the server $srv_secs s after ($lost_desc)"
}

# 7. TCP RSTs on the live connection: in the client's namespace iptables
# answers the server's segments with a RST (which resets the server's
# socket); the client's next segments reach a kernel without the connection
# and are answered with RSTs.  RSTs themselves pass the rule.
xfer_bg=1 xfer rst 2G --seed $((seed + 6))
wait_progress rst 10
at=$(progress_of rst)
rst_rule="INPUT -p tcp --sport $port ! --tcp-flags RST RST -j REJECT --reject-with tcp-reset"
tf=$(date +%s.%N)
# shellcheck disable=SC2086
timeout 10 ip netns exec "$ns_c" "$ipt" -w 5 -A $rst_rule ||
	fail "$ipt could not add the REJECT rule"
both_fail rst "TCP RST (iptables REJECT --reject-with tcp-reset)" 5
rejected=$(timeout 10 ip netns exec "$ns_c" "$ipt" -w 5 -L INPUT -v -n -x |
	awk '$3 == "REJECT" { print $1; exit }')
# shellcheck disable=SC2086
timeout 10 ip netns exec "$ns_c" "$ipt" -w 5 -D $rst_rule
[ "${rejected:-0}" -ge 1 ] 2>/dev/null ||
	fail "TCP RST: the REJECT rule matched no segment ('$rejected'): what failed the connection?"
say "TCP RST: the rule answered $rejected of the server's segments with a RST"

# 8. the server's socket destroyed by its kernel (ss -K, which sends a RST)
xfer_bg=1 xfer sskill 2G --seed $((seed + 7))
wait_progress sskill 10
at=$(progress_of sskill)
tf=$(date +%s.%N)
out=$(timeout 10 ip netns exec "$ns_s" ss -K -tn state established "( sport = :$port )" 2>&1)
if timeout 10 ip netns exec "$ns_s" ss -Htn state established "( sport = :$port )" | grep -q .; then
	# the kernel refused (no CONFIG_INET_DIAG_DESTROY): nothing was tested
	say "ss -K: skipped, the kernel did not destroy the socket (ss -K: $out)"
	[ "${UIW_REQUIRE_ALL:-0}" != 1 ] || fail "ss -K could not run and UIW_REQUIRE_ALL=1 requires it"
	reap "$cpid"
	reap "$spid"
	pids=
else
	both_fail sskill "server's socket destroyed (ss -K)" 5
fi

# 9. a peer that stops reading: the server stopped (SIGSTOP) for 6 s, then
# continued.  The client is blocked by TCP's flow control: its memory must
# not grow (VmHWM), and after SIGCONT every octet arrives and is verified.
stop_bytes=512M
[ -n "${UIW_SAN:-}" ] && stop_bytes=256M
xfer_bg=1 xfer stop "$stop_bytes" --seed $((seed + 8))
stop_server stop
xc=$(xfer_pid "$ns_c") || fail "server stopped: the client's uiw_xfer is not running"
sleep 1
hwm0=$(vm "$xc" VmHWM)
sleep 5
hwm1=$(vm "$xc" VmHWM)
rss1=$(vm "$xc" VmRSS)
sendq=$(timeout 10 ip netns exec "$ns_c" ss -Htn state established "( dport = :$port )" |
	awk '{ print $2; exit }')
recvq=$(timeout 10 ip netns exec "$ns_s" ss -Htn state established "( sport = :$port )" |
	awk '{ print $1; exit }')
kill -CONT "$xs"
xfer_wait
check_ok stop "$stop_bytes" "server stopped for 6 s at ${at}%"
if [ -z "$hwm0" ] || [ -z "$hwm1" ] || [ $((hwm1 - hwm0)) -gt 4096 ]; then
	fail "server stopped: the client's VmHWM went from '$hwm0' to '$hwm1' kB while blocked" \
		"(bound: 4096 kB of growth)"
fi
say "server stopped for 6 s: the client's VmHWM $hwm0 kB after 1 s, $hwm1 kB after 6 s" \
	"(VmRSS $rss1 kB; bound +4096 kB); its socket's Send-Q ${sendq:-?}," \
	"the server's Recv-Q ${recvq:-?} octets"

# 10. a silent peer: the server stopped for good; the client's TCP user
# timeout (2 s) ends the connection: zero-window probes go unanswered
xfer_bg=1 xfer silent 2G --seed $((seed + 9)) --user-timeout 2000
stop_server silent
if ! wait_end "$cpid" 7; then
	show_logs silent
	fail "silent peer: the client still runs $end_secs s after the server stopped" \
		"(user timeout 2 s: want an error within 7 s)"
fi
cli_secs=$end_secs
kill -KILL "$xs"
wait "$cpid"
xfer_cli_rc=$?
wait "$spid" 2>/dev/null # killed: no "Killed" from the shell
pids=
if [ "$xfer_cli_rc" != 1 ] || ! le "$cli_secs" 7; then
	show_logs silent
	fail "silent peer: the client exited $xfer_cli_rc after $cli_secs s (want 1 within 7 s)"
fi
lost_all_failed silent cli "silent peer"
say "silent peer (server stopped for good at ${at}%), user timeout 2 s: the client" \
	"failed $cli_secs s after the stop ($lost_desc)"

# 11. a silent link: every segment of the connection dropped both ways; both
# sides have a 2 s user timeout.  The client has data unacknowledged and
# fails; the server, often idle with nothing unacknowledged (which
# TCP_USER_TIMEOUT does not time), finds out by TCP keepalive (1 s idle,
# 1 s interval; the user timeout bounds the unanswered probes)
xfer_srv_opts="--user-timeout 2000 --keepalive 1000"
xfer_bg=1 xfer dark 2G --seed $((seed + 10)) --user-timeout 2000
xfer_srv_opts=
wait_progress dark 10
at=$(progress_of dark)
dark_in="INPUT -p tcp --dport $port -j DROP"
dark_out="OUTPUT -p tcp --sport $port -j DROP"
tf=$(date +%s.%N)
# shellcheck disable=SC2086
if ! timeout 10 ip netns exec "$ns_s" "$ipt" -w 5 -A $dark_in ||
	! timeout 10 ip netns exec "$ns_s" "$ipt" -w 5 -A $dark_out; then
	fail "$ipt could not add the DROP rules"
fi
if ! wait_end "$cpid" 7; then
	show_logs dark
	fail "silent link: the client still runs $end_secs s after the drop began" \
		"(user timeout 2 s: want an error within 7 s)"
fi
cli_secs=$end_secs
if wait_end "$spid" 8; then
	srv_note="the server failed too, $end_secs s after"
	srv_ended=1
else
	fail "silent link: the server (keepalive 1 s, user timeout 2 s) still runs $end_secs s after the client ended"
	srv_note="the server still ran after $end_secs s (killed)"
	srv_ended=
	reap "$spid"
fi
xfer_wait
# shellcheck disable=SC2086
timeout 10 ip netns exec "$ns_s" "$ipt" -w 5 -D $dark_in
# shellcheck disable=SC2086
timeout 10 ip netns exec "$ns_s" "$ipt" -w 5 -D $dark_out
if [ "$xfer_cli_rc" != 1 ] || ! le "$cli_secs" 7; then
	show_logs dark
	fail "silent link: the client exited $xfer_cli_rc after $cli_secs s (want 1 within 7 s)"
fi
lost_all_failed dark cli "silent link"
cli_desc=$lost_desc
if [ -n "$srv_ended" ]; then
	lost_all_failed dark srv "silent link"
	srv_note="$srv_note ($lost_desc)"
fi
say "silent link (all dropped both ways at ${at}%), user timeout 2 s: the client failed" \
	"$cli_secs s after the drop began ($cli_desc); $srv_note"
say "PASS"
exit 0
