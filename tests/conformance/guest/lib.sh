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

# nfs_up: the Linux NFS server over siw, once per boot (writing "rdma 20049"
# to the portlist twice oopses 6.1): stock siw, a 320 MiB tmpfs on /export
# exported rw to everyone, rpcbind, rpc.mountd on TCP 20048, nfsd with 8
# threads on TCP 2049 and RDMA 20049, NFSv4 lease and grace 10 s
# (the project's siw VM notes).  Returns 0, or 1 with WHY set.
NFS_MOUNTD_PORT=20048
NFS_RDMA_PORT=20049
nfs_up() {
	WHY=
	[ -f /run/uiw-nfs ] && return 0
	use_siw stock || { WHY="cannot load the stock siw.ko"; return 1; }
	for _m in sunrpc rpcrdma nfsd; do
		$MODPROBE "$_m" 2>/dev/null
	done
	[ -d /proc/fs/nfsd ] || { WHY="no /proc/fs/nfsd (nfsd module missing?)"; return 1; }
	grep -q ' /proc/fs/nfsd ' /proc/mounts || mount -t nfsd nfsd /proc/fs/nfsd ||
		{ WHY="cannot mount the nfsd filesystem"; return 1; }
	mkdir -p /var/lib/nfs/rpc_pipefs /var/lib/nfs/v4recovery /export /run/rpcbind
	grep -q rpc_pipefs /proc/mounts || mount -t rpc_pipefs sunrpc /var/lib/nfs/rpc_pipefs 2>/dev/null
	grep -q ' /export ' /proc/mounts || mount -t tmpfs -o size=320m export /export ||
		{ WHY="cannot mount a tmpfs on /export"; return 1; }
	echo '/export *(rw,no_root_squash,insecure,no_subtree_check,fsid=0)' >/etc/exports
	: >/var/lib/nfs/etab
	: >/var/lib/nfs/rmtab
	echo 10 >/proc/fs/nfsd/nfsv4leasetime 2>/dev/null
	echo 10 >/proc/fs/nfsd/nfsv4gracetime 2>/dev/null
	# libtirpc takes its transports from /etc/netconfig (the initramfs has
	# none: rpcbind would then serve nothing); Debian's rpcbind drops
	# privileges to _rpc, statd to statd
	[ -s /etc/netconfig ] || printf '%s\n' \
		'udp        tpi_clts      v     inet     udp     -       -' \
		'tcp        tpi_cots_ord  v     inet     tcp     -       -' \
		'udp6       tpi_clts      v     inet6    udp     -       -' \
		'tcp6       tpi_cots_ord  v     inet6    tcp     -       -' \
		'rawip      tpi_raw       -     inet      -      -       -' \
		'local      tpi_cots_ord  -     loopback  -      -       -' \
		'unix       tpi_cots_ord  -     loopback  -      -       -' >/etc/netconfig
	# mount.nfs looks protocols up by name
	grep -q '^tcp' /etc/protocols 2>/dev/null || printf '%s\n' 'ip 0 IP' 'icmp 1 ICMP' 'tcp 6 TCP' \
		'udp 17 UDP' 'ipv6 41 IPv6' 'ipv6-icmp 58 IPv6-ICMP' >>/etc/protocols
	# rpcbind resolves its port by the service name "sunrpc"
	grep -q '^sunrpc' /etc/services 2>/dev/null || printf '%s\n' 'sunrpc 111/tcp portmapper' \
		'sunrpc 111/udp portmapper' 'nfs 2049/tcp' 'nfs 2049/udp' 'mountd 20048/tcp' \
		'mountd 20048/udp' >>/etc/services
	grep -q '^_rpc:' /etc/passwd || echo '_rpc:x:101:65534::/run/rpcbind:/bin/false' >>/etc/passwd
	grep -q '^statd:' /etc/passwd || echo 'statd:x:102:65534::/var/lib/nfs:/bin/false' >>/etc/passwd
	/usr/sbin/rpcbind -w >"$OUT/rpcbind.log" 2>&1 || { WHY="rpcbind failed: $(cat "$OUT/rpcbind.log")"; return 1; }
	if ! wait_listen 111 10; then
		{ cat /proc/net/tcp /proc/net/tcp6 /proc/net/unix; ps; } >"$OUT/rpcbind-state.log" 2>&1
		killall rpcbind 2>/dev/null
		sleep 1
		timeout 5 /usr/sbin/rpcbind -f -d -w >"$OUT/rpcbind-debug.log" 2>&1
		WHY="rpcbind does not listen on 111: $(tail -n 3 "$OUT/rpcbind-debug.log" | tr '\n' ' ')"
		return 1
	fi
	/usr/sbin/exportfs -ra >"$OUT/exportfs.log" 2>&1 || { WHY="exportfs failed: $(cat "$OUT/exportfs.log")"; return 1; }
	/usr/sbin/rpc.mountd -p "$NFS_MOUNTD_PORT" >"$OUT/mountd.log" 2>&1 ||
		{ WHY="rpc.mountd failed: $(cat "$OUT/mountd.log")"; return 1; }
	/usr/sbin/rpc.nfsd -p 2049 8 >"$OUT/nfsd.log" 2>&1 || { WHY="rpc.nfsd failed: $(cat "$OUT/nfsd.log")"; return 1; }
	echo "rdma $NFS_RDMA_PORT" >/proc/fs/nfsd/portlist || { WHY="nfsd refused the rdma listener"; return 1; }
	touch /run/uiw-nfs
	log "nfsd up: $(tr '\n' ' ' </proc/fs/nfsd/portlist); versions $(cat /proc/fs/nfsd/versions)"
}
