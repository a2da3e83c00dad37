# SPDX-License-Identifier: MIT
#
# guest/lib.sh - helpers for the guest side of a conformance case (busybox
# sh in the VM).  run.sh copies it to /share/_vm/guest-lib.sh; each
# cases/NAME.guest.sh is run as `sh` with CASE=NAME and OUT=/share/NAME and
# sources it.  A case ends with pass, fail REASON or skip REASON, which write
# $OUT/guest.result; background processes started with bg_start and the
# capture are stopped on exit.
#
# busybox sh runs its own applets before PATH: real programs by full path.
# shellcheck shell=sh disable=SC2034,SC1091

IP=/usr/sbin/ip
RDMA=/usr/bin/rdma
MODPROBE=/usr/sbin/modprobe
INSMOD=/usr/sbin/insmod
RMMOD=/usr/sbin/rmmod
TCPDUMP=/usr/bin/tcpdump
RPING=/usr/bin/rping
GUEST_IP=10.0.2.15
HOST_IP=10.0.2.2
SYNC=/share/_vm/sync
: "${CASE:?}" "${OUT:?}"
BG_PIDS=
CAP_PID=
CAP_NAME=

log() {
	echo "[$(date +%H:%M:%S)] $CASE: $*"
}

_result() {
	echo "$*" >"$OUT/guest.result.tmp"
	mv "$OUT/guest.result.tmp" "$OUT/guest.result"
	log "$*"
}
pass() {
	_result PASS
	exit 0
}
fail() {
	_result "FAIL: $*"
	exit 1
}
skip() {
	_result "SKIP: $*"
	exit 0
}

# sig NAME [CONTENT]: tell the host (a file in /share/_vm/sync)
sig() {
	echo "${2-}" >"$SYNC/$1.tmp"
	mv "$SYNC/$1.tmp" "$SYNC/$1"
}

# await NAME SECS: wait for the host's signal NAME; prints its content
await() {
	_n=0
	_lim=$(($2 * 5))
	while [ ! -f "$SYNC/$1" ]; do
		_n=$((_n + 1))
		[ "$_n" -le "$_lim" ] || return 1
		sleep 0.2
	done
	cat "$SYNC/$1"
}

# listening PORT: a TCP socket listens on PORT (IPv4 or IPv6).  Read from
# /proc: never probe a siw listener with a connect (siw then drops it).
listening() {
	_hex=$(printf '%04X' "$1")
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
		awk -v p=":$_hex" '$4 == "0A" && substr($2, length($2) - 4) == p {f = 1} END {exit !f}'
}

# wait_listen PORT SECS
wait_listen() {
	_n=0
	while ! listening "$1"; do
		_n=$((_n + 1))
		[ "$_n" -le $(($2 * 10)) ] || return 1
		sleep 0.1
	done
}

# bg_start LOGFILE CMD...: run CMD in the background (stdout+stderr to
# LOGFILE); BG_PID is its PID; killed on exit if still running
bg_start() {
	_log=$1
	shift
	"$@" >"$_log" 2>&1 &
	BG_PID=$!
	BG_PIDS="$BG_PIDS $BG_PID"
}

# bg_wait PID SECS: wait for it to end; its exit status (124 after SECS: killed)
bg_wait() {
	_n=0
	while kill -0 "$1" 2>/dev/null; do
		_n=$((_n + 1))
		if [ "$_n" -gt $(($2 * 5)) ]; then
			kill "$1" 2>/dev/null
			wait "$1" 2>/dev/null
			return 124
		fi
		sleep 0.2
	done
	wait "$1"
}

# cap_start NAME IFACE FILTER...: tcpdump to $OUT/NAME.pcap (written in /tmp,
# copied by cap_stop); a 64 MiB buffer (-B): with the default 2 MiB, tcpdump
# under emulation dropped hundreds of packets of MiB-sized transfers
cap_start() {
	CAP_NAME=$1
	_if=$2
	shift 2
	$TCPDUMP -i "$_if" -n -U --immediate-mode -B 65536 -Z root -s 0 -w "/tmp/$CAP_NAME.pcap" "$@" \
		>"/tmp/$CAP_NAME.tcpdump.log" 2>&1 &
	CAP_PID=$!
	_n=0
	until grep -q 'listening on' "/tmp/$CAP_NAME.tcpdump.log" 2>/dev/null; do
		_n=$((_n + 1))
		if [ "$_n" -gt 100 ] || ! kill -0 "$CAP_PID" 2>/dev/null; then
			cat "/tmp/$CAP_NAME.tcpdump.log"
			log "tcpdump did not start"
			return 1
		fi
		sleep 0.1
	done
}

cap_stop() {
	[ -n "$CAP_PID" ] || return 0
	sleep 0.5 # the last segments (FIN, ACK)
	kill -INT "$CAP_PID" 2>/dev/null
	wait "$CAP_PID" 2>/dev/null
	CAP_PID=
	cp "/tmp/$CAP_NAME.pcap" "$OUT/$CAP_NAME.pcap" 2>/dev/null
	cp "/tmp/$CAP_NAME.tcpdump.log" "$OUT/$CAP_NAME.tcpdump.log" 2>/dev/null
}

_cleanup() {
	for _p in $BG_PIDS; do
		kill "$_p" 2>/dev/null
	done
	cap_stop
}
trap _cleanup EXIT
trap "exit 143" TERM INT

# use_siw stock|param [PARAM=VALUE...]: make that siw.ko loaded (with those
# parameters) with link siw0 on eth0; reloads only when something differs
use_siw() {
	. /etc/uiw/build.env
	_want="$*"
	_flavor=$1
	shift
	if [ "$(cat /run/uiw-siw 2>/dev/null)" = "$_want" ] && [ -d /sys/module/siw ] &&
		$RDMA link show siw0/1 >/dev/null 2>&1; then
		return 0
	fi
	log "loading siw: $_want"
	$RDMA link delete siw0 >/dev/null 2>&1
	_n=0
	while [ -d /sys/module/siw ]; do
		$RMMOD siw 2>/dev/null && break
		_n=$((_n + 1))
		[ "$_n" -lt 50 ] || { log "rmmod siw failed"; return 1; }
		sleep 0.2
	done
	case $_flavor in
	stock) $INSMOD "$UIW_VM_SIW_STOCK" "$@" || return 1 ;;
	param) $INSMOD "$UIW_VM_SIW_PARAM" "$@" || return 1 ;;
	*) log "use_siw: unknown flavor $_flavor"; return 1 ;;
	esac
	echo "$_want" >/run/uiw-siw
	$RDMA link add siw0 type siw netdev eth0 || return 1
}

# count PATTERN FILE: lines of FILE matching PATTERN (grep -E)
count() {
	grep -cE "$1" "$2" 2>/dev/null || true
}

# siw_rping NAME PORT COUNT: rping server and client over siw0 in the VM
# (siw to siw on 10.0.2.15, captured on lo); checks both sides; returns 0 or
# sets WHY
siw_rping() {
	_name=$1
	_port=$2
	_cnt=$3
	WHY=
	cap_start "$_name" lo tcp port "$_port" || { WHY="tcpdump did not start"; return 1; }
	bg_start "$OUT/rping-server.log" timeout 90 "$RPING" -s -a "$GUEST_IP" -p "$_port" -v -V
	_spid=$BG_PID
	if ! wait_listen "$_port" 20; then
		WHY="rping -s did not listen on $_port within 20 s"
		return 1
	fi
	log "rping -c -a $GUEST_IP -p $_port -C $_cnt -v -V"
	timeout 90 "$RPING" -c -a "$GUEST_IP" -p "$_port" -C "$_cnt" -v -V >"$OUT/rping-client.log" 2>&1
	_crc=$?
	bg_wait "$_spid" 30
	_src=$?
	cap_stop
	_cl=$(count '^ping data: ' "$OUT/rping-client.log")
	_sl=$(count '^server ping data: ' "$OUT/rping-server.log")
	log "client exit $_crc, $_cl pings; server exit $_src, $_sl pings"
	echo "client_exit=$_crc client_pings=$_cl server_exit=$_src server_pings=$_sl" >"$OUT/summary.txt"
	if [ "$_crc" != 0 ]; then
		WHY="rping client exit $_crc: $(tail -n 1 "$OUT/rping-client.log")"
	elif [ "$_cl" != "$_cnt" ]; then
		WHY="rping client printed $_cl of $_cnt pings"
	elif [ "$_sl" != "$_cnt" ]; then
		WHY="rping server printed $_sl of $_cnt pings"
	elif [ "$_src" = 124 ]; then
		WHY="rping server did not end after the client left"
	fi
	[ -z "$WHY" ]
}
