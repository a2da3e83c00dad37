#!/bin/sh
# SPDX-License-Identifier: MIT
#
# apps.sh - real applications, unmodified, with both ends under uiw-run:
#   - rping (rdmacm-utils): 20 pings of 1000 octets, verified (-V), one namespace;
#   - ucmatose (rdmacm-utils): 2 connections x 10 messages, one namespace;
#     100 connections x 2 messages between two namespaces;
#   - cmtime (rdmacm-utils): 100 connections between two namespaces;
#   - qperf -cm1: rc_bw, rc_bi_bw, rc_lat, rc_rdma_read_bw/lat; with
#     uiw-run --rfc7306 rc_rdma_write_bw/lat, rc_compare_swap_mr,
#     rc_fetch_add_mr; between two namespaces (figures: qperf checks no data);
#   - fio --ioengine=rdma, verbs write and read: 8 MiB of 64 KiB blocks at
#     depth 16 with verify (md5), one namespace;
#   - fio verb send: fio relies on InfiniBand's RNR retry, which iWARP lacks:
#     the receiver's TERMINATE "no buffer" ends the connection and both jobs
#     block, as over Linux siw (docs/RDMA-CORE.md, "Applications"): checked
#     to end that way, or to complete;
#   - fi_pingpong (libfabric-bin): -p verbs -e msg and -p "verbs;ofi_rxm"
#     -e rdm, -c (data checked), in one namespace and between two;
#   - Open MPI (pml cm, mtl ofi, provider verbs;ofi_rxm; TCP and shared
#     memory transports off): tests/progs/mpi/mpi_apps.c, built here with
#     mpicc, 2 and 4 ranks across two namespaces: ping-pong and all-to-all,
#     every octet checked;
#   - iSER: tgtd (tgt) the target in the first namespace, libiscsi's tools
#     the initiator in the second (iser://): iscsi-inq, iscsi-readcapacity16,
#     iscsi-test-cu Verify10.Simple (1-256 blocks of random data read, sent
#     back and compared by the target) and Write10.Simple (768 blocks
#     written, then checked in the LUN's backing file against its copy).
# Two network namespaces of the test's own joined by a veth pair
# (192.0.2.1/24 and 192.0.2.2/24), deleted on exit.  Every program runs
# under timeout(1) and is reaped.  "Over uiwarp" is checked from the
# library's trace (UIW_RDMA_TRACE=1): the connection was established by
# libuiw-rdma and completions were polled from it (the programs' own
# sockets, fi_pingpong's and mpirun's control connections, carry no data).
# Prints "apps: NAME: PASS (figure)" or "apps: NAME: FAIL (reason)" per
# application.
# Exit 0 pass, 77 a program is missing (make deps-test installs them), 78
# not applicable (sanitizer build), anything else fail.
# Env: UIW_BIN, UIW_TESTBIN, UIW_SAN; UIW_RDMA_LIB (the library uiw-run preloads).

set -u
ME=apps
. "$(dirname "$0")/common.inc"

BIN=${UIW_BIN:-build/bin}
O=$(cd "$(dirname "$BIN")" && pwd)
RUN=$(cd "$BIN" && pwd)/uiw-run
SRC=$(cd "$(dirname "$0")/../.." && pwd)
T=30

if [ -n "${UIW_SAN:-}" ]; then
	echo "apps.sh: skipped: a sanitizer build of a preloaded library needs the sanitizer" \
		"runtime first in the (uninstrumented) programs"
	exit 78
fi
for c in rping ucmatose cmtime qperf fio fi_pingpong mpirun mpicc tgtd tgtadm iscsi-inq iscsi-readcapacity16 \
	iscsi-test-cu ip timeout python3; do
	if ! command -v "$c" >/dev/null 2>&1; then
		echo "apps.sh: skipped: $c is not installed (make deps-test installs rdmacm-utils, fio," \
			"libfabric-bin, openmpi-bin, libopenmpi-dev, tgt, libiscsi-bin)"
		exit 77
	fi
done
[ -x "$RUN" ] && [ -e "$O/libuiw-rdma.so" ] || { echo "apps.sh: $O/libuiw-rdma.so or $RUN missing (make)"; exit 1; }

NA=uiwappa$$
NB=uiwappb$$
AA=192.0.2.1
AB=192.0.2.2
# ns_reap NS...: kill what still runs in the namespaces (a program that
# outlived its timeout(1), killed with SIGKILL, which it cannot pass on)
ns_reap() {
	for _ns in "$@"; do
		# shellcheck disable=SC2046
		kill -KILL $(ip netns pids "$_ns" 2>/dev/null) 2>/dev/null
	done
}
trap 'cleanup; ns_reap "$NA" "$NB"; ip netns del "$NA" 2>/dev/null; ip netns del "$NB" 2>/dev/null' EXIT
if ! ip netns add "$NA" 2>/dev/null || ! ip netns add "$NB" 2>/dev/null; then
	echo "apps.sh: cannot create network namespaces (needs root)"
	exit 1
fi
ip -n "$NA" link set lo up && ip -n "$NB" link set lo up &&
	ip link add "a$$" netns "$NA" type veth peer name "b$$" netns "$NB" &&
	ip -n "$NA" addr add "$AA/24" dev "a$$" && ip -n "$NB" addr add "$AB/24" dev "b$$" &&
	ip -n "$NA" link set "a$$" up && ip -n "$NB" link set "b$$" up ||
	{ echo "apps.sh: namespace setup failed"; exit 1; }

# the programs leave files in their working directory (fio's verify state,
# libfabric's backtrace dumps): the test's own directory, not the checkout
cd "$TMP" || exit 1

ok() { echo "apps: $1: PASS ($2)"; }
ko() {
	echo "apps: $1: FAIL ($2)"
	FAILS=$((FAILS + 1))
}
oneline() { cat "$@" 2>/dev/null | grep -v '^$' | grep -v '^uiw-rdma: ' | head -n 3 | tr '\n' ' ' | cut -c 1-300; }

# free_port NS: a port the kernel chose in namespace NS, free now (the
# programs below take a port number and cannot let the kernel choose)
free_port() {
	ip netns exec "$1" python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])'
}
# listening NS PORT PID: wait (10 s at most) until PORT listens in NS
listening() {
	_h=$(printf '%04X' "$2")
	_w=0
	while [ $_w -lt 100 ] && kill -0 "$3" 2>/dev/null; do
		ip netns exec "$1" cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
			awk -v h=":$_h" '$4 == "0A" && substr($2, length($2) - 4) == h { f = 1 } END { exit !f }' && return 0
		sleep 0.1
		_w=$((_w + 1))
	done
	return 1
}
# over_uiwarp FILE...: the trace shows a connection of libuiw-rdma's and
# completions polled from it
over_uiwarp() {
	cat "$@" | grep -q '^uiw-rdma: cm event ESTABLISHED status 0' &&
		[ "$(cat "$@" | grep -c '^uiw-rdma: poll_cq .* status 0 ')" -gt 0 ]
}
# pair NAME SRV_NS CLI_NS -- SERVER ARGS -- CLIENT ARGS: the server in the
# background (traced), the client in the foreground; $TMP/NAME.{s,c}.{out,err};
# sets src, crc.  @PORT@ in the arguments is replaced by a free port.
pair() {
	_n=$1 _sn=$2 _cn=$3
	shift 4
	_p=$(free_port "$_sn")
	_s="" _c=""
	while [ "$1" != -- ]; do _s="$_s $(echo "$1" | sed "s/@PORT@/$_p/g")"; shift; done
	shift
	for a in "$@"; do _c="$_c $(echo "$a" | sed "s/@PORT@/$_p/g")"; done
	# shellcheck disable=SC2086 # word splitting of the argument lists is meant
	UIW_RDMA_TRACE=1 timeout -k 2 "$T" ip netns exec "$_sn" "$RUN" $_s >"$TMP/$_n.s.out" 2>"$TMP/$_n.s.err" &
	_pid=$!
	PIDS="$PIDS $_pid"
	listening "$_sn" "$_p" "$_pid"
	# shellcheck disable=SC2086
	UIW_RDMA_TRACE=1 timeout -k 2 "$T" ip netns exec "$_cn" "$RUN" $_c >"$TMP/$_n.c.out" 2>"$TMP/$_n.c.err"
	crc=$?
	wait "$_pid"
	src=$?
}

# ---- rping: -V verifies every ping's payload
pair rping "$NA" "$NA" -- rping -s -a "$AA" -p @PORT@ -C 20 -S 1000 -V -- rping -c -a "$AA" -p @PORT@ -C 20 -S 1000 -V -v
n=$(grep -c '^ping data: rdma-ping-' "$TMP/rping.c.out")
if [ "$crc" = 0 ] && [ "$src" = 0 ] && [ "$n" = 20 ] && over_uiwarp "$TMP"/rping.?.err; then
	ok rping "20 pings of 1000 octets verified"
else
	ko rping "client $crc, server $src, $n pings: $(oneline "$TMP"/rping.?.out "$TMP"/rping.?.err)"
fi

# ---- ucmatose: 2 connections, 10 messages each way
pair ucmatose "$NA" "$NA" -- ucmatose -b "$AA" -p @PORT@ -c 2 -C 10 -- ucmatose -s "$AA" -p @PORT@ -c 2 -C 10
if [ "$crc" = 0 ] && [ "$src" = 0 ] && grep -q 'test complete' "$TMP/ucmatose.c.out" && over_uiwarp "$TMP"/ucmatose.?.err; then
	ok ucmatose "2 connections x 10 messages"
else
	ko ucmatose "client $crc, server $src: $(oneline "$TMP"/ucmatose.?.out "$TMP"/ucmatose.?.err)"
fi

# ---- servers that serve until stopped (cmtime, qperf): bg_server NAME NS
# PORT ARGS... starts one traced in NS (@PORT@ replaced) and waits until it
# listens (BG_PID); bg_stop kills and reaps it
bg_server() {
	_n=$1 _ns=$2 _p=$3
	shift 3
	_a=""
	for a in "$@"; do _a="$_a $(echo "$a" | sed "s/@PORT@/$_p/g")"; done
	# shellcheck disable=SC2086
	UIW_RDMA_TRACE=1 timeout -k 2 "$T" ip netns exec "$_ns" "$RUN" $_a >"$TMP/$_n.s.out" 2>"$TMP/$_n.s.err" &
	BG_PID=$!
	PIDS="$PIDS $BG_PID"
	listening "$_ns" "$_p" "$BG_PID"
}
# timeout(1) runs in a process group of its own with its program: the
# group is killed, not timeout alone (its program, reparented to init,
# went on listening in a namespace already deleted)
bg_stop() {
	kill -KILL "-$BG_PID" 2>/dev/null || kill -KILL "$BG_PID" 2>/dev/null
	wait "$BG_PID" 2>/dev/null
}

# ---- 100 connections at once between the namespaces (rdma_listen(id, 0)
# must take the maximum backlog): ucmatose, messages both ways on each, and
# cmtime, which times each step of connection set-up and teardown
pair ucmatose100 "$NA" "$NB" -- ucmatose -b "$AA" -p @PORT@ -c 100 -C 2 -- ucmatose -s "$AA" -p @PORT@ -c 100 -C 2
if [ "$crc" = 0 ] && [ "$src" = 0 ] && grep -q '^return status 0' "$TMP/ucmatose100.c.out" &&
	grep -q '^return status 0' "$TMP/ucmatose100.s.out" && over_uiwarp "$TMP"/ucmatose100.?.err; then
	ok "ucmatose -c 100" "100 connections x 2 messages each way, between two namespaces"
else
	ko "ucmatose -c 100" "client $crc, server $src: $(oneline "$TMP"/ucmatose100.?.out "$TMP"/ucmatose100.?.err)"
fi
p=$(free_port "$NA")
if bg_server cmtime "$NA" "$p" cmtime -b "$AA" -p @PORT@; then
	UIW_RDMA_TRACE=1 timeout -k 2 "$T" ip netns exec "$NB" "$RUN" cmtime -s "$AA" -p "$p" -c 100 \
		>"$TMP/cmtime.c.out" 2>"$TMP/cmtime.c.err"
	crc=$?
	bg_stop
	# cmtime moves no data: over uiwarp means 100 connections the library
	# established
	nest=$(grep -c '^uiw-rdma: cm event ESTABLISHED status 0' "$TMP/cmtime.c.err")
	if [ "$crc" = 0 ] && ! grep -qi 'error' "$TMP/cmtime.c.out" && grep -q '^connect *:' "$TMP/cmtime.c.out" &&
		[ "$nest" = 100 ]; then
		ok "cmtime -c 100" "every connection made between two namespaces; $(awk '$1 == "connect" {
			printf "connect: %s ms in all, %s us each on average", $3, $6 }' "$TMP/cmtime.c.out")"
	else
		ko "cmtime -c 100" "client $crc, $nest connections established: $(oneline "$TMP"/cmtime.c.out)"
	fi
else
	bg_stop
	ko "cmtime -c 100" "the server never listened: $(oneline "$TMP"/cmtime.s.err)"
fi

# ---- qperf -cm1 between the namespaces: its server binds an RDMA CM id to
# port 0 and tells the client rdma_get_src_port() over its TCP control
# connection (-lp) before it listens; one test after another.  Writes with
# immediate data and the atomics need RFC 7306 (uiw-run --rfc7306, both
# sides).  qperf moves no data it could check: figures only.
for rfc in "" --rfc7306; do
	case $rfc in
	"") tests="rc_bw rc_bi_bw rc_lat rc_rdma_read_bw rc_rdma_read_lat" ;;
	*) tests="rc_rdma_write_bw rc_rdma_write_lat rc_compare_swap_mr rc_fetch_add_mr" ;;
	esac
	p=$(free_port "$NA")
	if ! bg_server "qperf$rfc" "$NA" "$p" $rfc qperf -lp @PORT@; then
		bg_stop
		ko "qperf $rfc" "the server never listened: $(oneline "$TMP/qperf$rfc.s.err")"
		continue
	fi
	for t in $tests; do
		first=""
		for try in 1 2 3 4; do
			# shellcheck disable=SC2086
			UIW_RDMA_TRACE=1 timeout -k 2 30 ip netns exec "$NB" "$RUN" $rfc qperf "$AA" -lp "$p" -cm1 -t 1 "$t" \
				>"$TMP/qperf.$t.out" 2>"$TMP/qperf.$t.err"
			crc=$?
			# rc_bw and rc_bi_bw stream Sends with no flow control of
			# their own (InfiniBand's receiver-not-ready retry stands in
			# for it; iWARP has none): a receiver that falls behind, or
			# whose timer stopped its reposts while the peer still sends,
			# gets Sends with no receive posted and TERMINATEs "no
			# buffer" (DDP 1/2/2).  Nearly every rc_bw run ends so, after
			# the results; on a loaded 2-vCPU host it came before them
			# in 1-4 runs of 10 with the engine of before and of now
			# alike (docs/RDMA-CORE.md).  Tried again, up to 4 times in
			# all, on that TERMINATE only, and said so
			[ "$crc" != 0 ] && [ "$try" != 4 ] && { [ "$t" = rc_bw ] || [ "$t" = rc_bi_bw ]; } &&
				grep -q 'DISCONNECTED .* term [12] 1/2/2' "$TMP/qperf.$t.err" || break
			first="$first(try $try: $(oneline "$TMP/qperf.$t.out"), a TERMINATE 1/2/2 no buffer) "
		done
		fig=$(grep -E '^ +(bw|latency|msg_rate) += ' "$TMP/qperf.$t.out" | tr -s ' ' | tr '\n' ',' | sed 's/,$//')
		if [ "$crc" = 0 ] && [ -n "$fig" ] && over_uiwarp "$TMP/qperf.$t.err"; then
			ok "qperf -cm1 $t${rfc:+ ($rfc)}" "$first$fig, between two namespaces"
		else
			ko "qperf -cm1 $t${rfc:+ ($rfc)}" "exit $crc: $(oneline "$TMP/qperf.$t.out" "$TMP/qperf.$t.err")"
		fi
	done
	bg_stop
done

# ---- fio: the server is the reading job, the client the writing one
FIO="fio --ioengine=rdma --bs=64k --size=8m --iodepth=16 --output-format=terse --terse-version=3"
for v in write read; do
	pair "fio-$v" "$NA" "$NB" -- $FIO --name=srv --rw=read --port=@PORT@ -- \
		$FIO --name=cli --rw=write --hostname="$AA" --port=@PORT@ --verb=$v --verify=md5
	# terse v3: field 5 the error, 48 the write bandwidth (KiB/s)
	bw=$(awk -F';' '$3 == "cli" && $5 == 0 { printf "%.0f MiB/s", $48 / 1024 }' "$TMP/fio-$v.c.out")
	if [ "$crc" = 0 ] && [ "$src" = 0 ] && [ -n "$bw" ] && over_uiwarp "$TMP"/fio-$v.?.err; then
		ok "fio verb $v" "8 MiB in 64 KiB blocks, depth 16, md5 verified, $bw, across namespaces"
	else
		ko "fio verb $v" "client $crc, server $src: $(oneline "$TMP"/fio-$v.?.out "$TMP"/fio-$v.?.err)"
	fi
done
# verb send: fio relies on InfiniBand's RNR retry, which iWARP lacks
T0=$T
T=10
APPS_FIO_MARK=apps$$
export APPS_FIO_MARK
pair fio-send "$NA" "$NB" -- $FIO --name=srv --rw=read --port=@PORT@ -- \
	$FIO --name=cli --rw=write --hostname="$AA" --port=@PORT@ --verb=send
T=$T0
unset APPS_FIO_MARK
# fio's jobs run in sessions of their own (setsid) and wait in read(2)
# through SIGTERM: timeout(1)'s signals to its process group miss them.  They
# carry APPS_FIO_MARK in their environment: killed by that, by PID.
for e in /proc/[0-9]*/environ; do
	if { tr '\0' '\n' <"$e"; } 2>/dev/null | grep -qx "APPS_FIO_MARK=apps$$"; then
		p=${e#/proc/}
		kill -KILL "${p%/environ}" 2>/dev/null
	fi
done
# Either the receives kept up (both exit 0), or, as over Linux siw
# (conformance fio-siw-send), the server's TERMINATE "no buffer" (1/2/0x02,
# "term 1 1/2/2" in its trace) ended the connection and a job that had not
# finished stayed blocked in ibv_get_cq_event() until timeout(1) ended it
# (124/137): fio leaves its wait only on a successful completion (a client
# whose last Sends had completed may end first, exit 0).  Anything else (a
# crash, another error) fails.
if [ "$crc" = 0 ] && [ "$src" = 0 ] && over_uiwarp "$TMP"/fio-send.?.err; then
	ok "fio verb send" "completed: the receives kept up"
elif grep -q 'cm event DISCONNECTED .*term 1 1/2/2' "$TMP/fio-send.s.err" &&
	case $crc in 0 | 124 | 137) true ;; *) false ;; esac &&
	case $src in 0 | 124 | 137) true ;; *) false ;; esac; then
	ok "fio verb send" "as over Linux siw: TERMINATE 'no buffer' (iWARP has no RNR retry), both jobs then blocked in ibv_get_cq_event() until ended ($(grep -h '^fio: cq completion' \
		"$TMP"/fio-send.c.err "$TMP"/fio-send.s.err | head -n 2 | tr '\n' ' '))"
else
	ko "fio verb send" "client $crc, server $src: $(oneline "$TMP"/fio-send.?.out "$TMP"/fio-send.?.err)"
fi

# ---- fi_pingpong: -c checks the data; one namespace, then between two
for ep in "verbs msg" "verbs;ofi_rxm rdm"; do
	prov=${ep% *}
	e=${ep#* }
	for where in one two; do
		cn=$NA
		[ $where = two ] && cn=$NB
		again=""
		for try in 1 2; do
			pair fi "$NA" "$cn" -- fi_pingpong -p "$prov" -e "$e" -B @PORT@ -S 4096 -I 100 -c -- \
				fi_pingpong -p "$prov" -e "$e" -P @PORT@ -S 4096 -I 100 -c "$AA"
			# libfabric 1.17's ofi_rxm, when the peer's last message and
			# its disconnect arrive between two of its progress reads,
			# closes the verbs endpoint and then reposts a receive on it:
			# a use after free (fixed upstream by "prov/rxm: fix the msg_ep
			# use-after-free at connection teardown", not in Debian 12).
			# Once the run's data was checked and printed, that crash,
			# recognised by its first frame in Debian's libfabric.so.1,
			# is libfabric's and is said so; any other failure is tried
			# once more, then fails.
			rxm_uaf=""
			if [ "$crc" = 0 ] && [ "$src" != 0 ] && grep -q '^bytes' "$TMP/fi.s.out" &&
				grep -q 'terminated with signal 11' "$TMP/fi.s.out" "$TMP/fi.s.err" &&
				grep -A1 'terminated with signal 11' "$TMP/fi.s.out" "$TMP/fi.s.err" |
				grep -q 'libfabric.so.1(+0xb7882)'; then
				rxm_uaf=", then the server hit libfabric 1.17's rxm teardown use after free"
				src=0
			fi
			[ "$crc" = 0 ] && [ "$src" = 0 ] && break
			[ $try = 1 ] && again=", second try: first client $crc, server $src"
		done
		res=$(awk '/^bytes/ { getline; print $7 " us/xfer"; exit }' "$TMP/fi.c.out")
		name="fi_pingpong -p $prov -e $e ($where namespace$([ $where = two ] && echo s))"
		if [ "$crc" = 0 ] && [ "$src" = 0 ] && [ -n "$res" ] && over_uiwarp "$TMP"/fi.?.err; then
			ok "$name" "100 x 4096 octets checked, $res$again$rxm_uaf"
		else
			ko "$name" "client $crc, server $src: $(oneline "$TMP"/fi.?.out "$TMP"/fi.?.err)"
		fi
	done
done

# ---- Open MPI across the two namespaces: mpirun runs in the first; its
# "rsh" runs a command in the namespace named as the host.  TCP and
# shared-memory BTLs are off and pml cm with mtl ofi takes libfabric's
# verbs;ofi_rxm only, so data moves over uiwarp or not at all.
if mpicc -std=c11 -O2 -o "$TMP/mpi_apps" "$SRC/tests/progs/mpi/mpi_apps.c" 2>"$TMP/mpicc.err"; then
	printf '#!/bin/sh\nh=$1\nshift\nexec ip netns exec "$h" sh -c "$*"\n' >"$TMP/nsrsh"
	chmod +x "$TMP/nsrsh"
	printf '%s slots=2\n%s slots=2\n' "$NA" "$NB" >"$TMP/hosts"
	for np in 2 4; do
		# each run its own session directory: both namespaces share /tmp and
		# the host name, and the last run's daemon, removing its
		# /tmp/ompi.HOST.UID on the way out, made this run's mkdir under it
		# fail (run 2 of issue 29's loaded CI runs)
		again=""
		for try in 1 2; do
		rm -rf "$TMP/ompi$np"
		mkdir -p "$TMP/ompi$np"
		# shellcheck disable=SC2086
		UIW_RDMA_TRACE=1 timeout -k 2 40 ip netns exec "$NA" mpirun --allow-run-as-root \
			--oversubscribe -np $np --map-by node --hostfile "$TMP/hosts" \
			--mca orte_tmpdir_base "$TMP/ompi$np" \
			--mca plm_rsh_agent "$TMP/nsrsh" --mca routed direct --mca oob_tcp_if_include 192.0.2.0/24 \
			--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include "verbs;ofi_rxm" \
			--mca btl ^tcp,openib,vader,uct -x UIW_RDMA_TRACE -x FI_PROVIDER="verbs;ofi_rxm" \
			${UIW_RDMA_LIB:+-x UIW_RDMA_LIB} \
			"$RUN" "$TMP/mpi_apps" 50 65536 4096 >"$TMP/mpi.out" 2>&1
		rc=$?
		line=$(grep '^mpi_apps: ranks' "$TMP/mpi.out")
		# the data checked, then a rank killed by libfabric 1.17's rxm
		# teardown use after free (see fi_pingpong above: the same first
		# frame in Debian's libfabric.so.1) is libfabric's and said so
		uaf=""
		if [ "$rc" != 0 ] && [ -n "$line" ] && grep -q 'Segmentation fault' "$TMP/mpi.out" &&
			grep -q 'libfabric.so.1(+0xb7882)' "$TMP/mpi.out"; then
			uaf=", then a rank hit libfabric 1.17's rxm teardown use after free"
			rc=0
		fi
		[ "$rc" = 0 ] && [ -n "$line" ] && break
		# any other failure: its frames said, then one more try
		first="mpirun $rc: $(oneline "$TMP/mpi.out") $(grep -m8 '\] \[ *[0-9]*\]' "$TMP/mpi.out" | tr '\n' ' ' | cut -c 1-600)"
		[ $try = 1 ] && again=", second try; first: $first"
		done
		if [ "$rc" = 0 ] && [ -n "$line" ] && over_uiwarp "$TMP/mpi.out"; then
			ok "Open MPI $np ranks" "$(echo "$line" | sed 's/^mpi_apps: //'), 2 namespaces$uaf$again"
		else
			ko "Open MPI $np ranks" "$first"
		fi
	done
else
	ko "Open MPI" "mpicc: $(oneline "$TMP/mpicc.err")"
fi

# ---- iSER: tgtd in the first namespace, libiscsi's tools in the second.
# tgt 1.0.85's iSER portal is [::]:3260 and 0.0.0.0:3260 (its "--iser
# port=N" is refused: the parser reads a stale errno, ENOENT from libnl's
# start-up); the namespace is the test's own.  Its iSCSI/TCP portal goes
# elsewhere, for uiwarp's listener holds TCP port 3260.  -C: a management
# socket of our own beside any system tgtd.  tgtd ignores SIGTERM: timeout's
# -k ends it.
CP=$(($$ % 20000 + 2000))
IQN=iqn.2024-01.org.uiwarp:apps$$
INI=iqn.2024-01.org.uiwarp:ini$$
TGTADM="tgtadm -C $CP --lld iser"
head -c 8388608 /dev/urandom >"$TMP/lun.ref" && cp "$TMP/lun.ref" "$TMP/lun.img"
UIW_RDMA_TRACE=1 timeout -k 1 40 ip netns exec "$NA" "$RUN" tgtd -f -C "$CP" \
	--iscsi portal=127.0.0.1:"$(free_port "$NA")" >"$TMP/tgtd.out" 2>&1 &
tpid=$!
PIDS="$PIDS $tpid"
why=""
if ! listening "$NA" 3260 "$tpid"; then
	why="tgtd does not listen on 3260"
# tgt 1.0.85 lets an iSER login in only when both an address and an
# initiator name rule match (fixed upstream after 1.0.85): both are set
elif ! { $TGTADM --mode target --op new --tid 1 --targetname "$IQN" &&
	$TGTADM --mode logicalunit --op new --tid 1 --lun 1 -b "$TMP/lun.img" &&
	$TGTADM --mode target --op bind --tid 1 -I ALL &&
	$TGTADM --mode target --op bind --tid 1 -Q "$INI"; } >"$TMP/tgtadm.out" 2>&1; then
	why="tgtadm: $(oneline "$TMP/tgtadm.out"); $(grep -h '^tgtd: iser' "$TMP/tgtd.out" | oneline)"
else
	URL="iser://$AA:3260/$IQN/1"
	ini() {
		_o=$1
		shift
		UIW_RDMA_TRACE=1 timeout -k 2 20 ip netns exec "$NB" "$RUN" "$@" -i "$INI" "$URL" \
			>"$TMP/$_o.out" 2>"$TMP/$_o.err"
	}
	# Verify10 before Write10: it reads the random data; the target
	# compares what comes back (BYTCHK) with its file
	if ! ini inq iscsi-inq || ! grep -q '^Product:VIRTUAL-DISK' "$TMP/inq.out"; then
		why="iscsi-inq: $(oneline "$TMP"/inq.out "$TMP"/inq.err)"
	elif ! ini cap iscsi-readcapacity16 || ! grep -q '^Total size:8388608$' "$TMP/cap.out"; then
		why="iscsi-readcapacity16: $(oneline "$TMP"/cap.out "$TMP"/cap.err)"
	elif ! ini ver iscsi-test-cu --dataloss --test=ALL.Verify10.Simple ||
		! grep -Eq 'asserts +1024 +1024 +1024 +0' "$TMP/ver.out"; then
		why="Verify10: $(grep -h FAILED "$TMP/ver.out" | oneline) $(oneline "$TMP/ver.err")"
	elif ! ini wr iscsi-test-cu --dataloss --test=ALL.Write10.Simple ||
		! grep -Eq 'asserts +768 +768 +768 +0' "$TMP/wr.out"; then
		why="Write10: $(grep -h FAILED "$TMP/wr.out" | oneline) $(oneline "$TMP/wr.err")"
	fi
fi
kill -TERM "$tpid" 2>/dev/null
wait "$tpid" 2>/dev/null
# Write10.Simple wrote 0xa6 to 1-256 blocks at the start, at the end, and
# from the block 3 before 4 MiB: those blocks are 0xa6, the others as before
bad=$(python3 -c '
import sys
ref, img = (open(f, "rb").read() for f in sys.argv[1:3])
bs = 512
n = len(ref) // bs
w = set(range(256)) | set(range(n - 256, n)) | set(range(8192 - 3, 8192 + 253))
print(sum(img[i * bs:(i + 1) * bs] != (b"\xa6" * bs if i in w else ref[i * bs:(i + 1) * bs]) for i in range(n)))
' "$TMP/lun.ref" "$TMP/lun.img")
if [ -z "$why" ] && [ "$bad" != 0 ]; then
	why="$bad blocks of the LUN's file differ from what Write10.Simple wrote"
fi
if [ -z "$why" ] && ! over_uiwarp "$TMP/tgtd.out" "$TMP/wr.err"; then
	why="not over uiwarp: $(oneline "$TMP/tgtd.out")"
fi
if [ -z "$why" ]; then
	ok "tgt iSER + libiscsi" "inquiry, read capacity, Verify10 1-256 blocks read and compared, Write10 768 blocks checked in the LUN's file, across namespaces"
else
	ko "tgt iSER + libiscsi" "$why"
fi

# every program started above has ended or was stopped: nothing of them
# may be left running in the namespaces
sleep 0.2
left=$(for ns in "$NA" "$NB"; do for p in $(ip netns pids "$ns" 2>/dev/null); do
	tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c 1-60; echo; done; done | grep -v '^$')
if [ -n "$left" ]; then
	ko "every process reaped" "still running: $(echo "$left" | tr '\n' ';')"
	ns_reap "$NA" "$NB"
else
	ok "every process reaped" "nothing left in the two namespaces"
fi

end_checks
