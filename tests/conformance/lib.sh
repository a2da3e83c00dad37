# shellcheck shell=bash
# SPDX-License-Identifier: MIT
#
# lib.sh - host-side helpers for the conformance cases (bash; sourced by
# run.sh, so every cases/NAME.host.sh can use them).
#
# In a case's host_run / host_check: CASE is the case's name, OUT its result
# directory (build-vm/results/CASE/, also the guest's /share/CASE),
# UIW_BIN the directory of the uiwarp tools, VM_FWD_<guestport> the host
# port forwarded to that guest port.

SYNC_DIR= # set by run.sh: build-vm/results/_vm/sync
HOST_BG_PIDS=

# hbg PID: a background process of a host part, killed when the part ends
# (run.sh traps EXIT of the host part's subshell with hbg_kill)
hbg() {
	HOST_BG_PIDS="$HOST_BG_PIDS $1"
}
hbg_kill() {
	local p left=""
	for p in $HOST_BG_PIDS; do
		kill "$p" 2>/dev/null && left="$left $p"
	done
	[ -n "$left" ] || return 0
	sleep 1
	for p in $left; do
		kill -KILL "$p" 2>/dev/null || true
	done
}

hlog() {
	echo "[$(date +%H:%M:%S)] $CASE: $*" >>"$OUT/host.log"
}

_host_result() {
	echo "$*" >"$OUT/host.result"
	hlog "$*"
}
host_pass() { _host_result PASS; }
host_fail() { _host_result "FAIL: $*"; }

# hsig NAME [CONTENT]: signal the guest
hsig() {
	echo "${2-}" >"$SYNC_DIR/$1.tmp"
	mv "$SYNC_DIR/$1.tmp" "$SYNC_DIR/$1"
}

# hawait NAME SECS: wait for the guest's signal NAME; prints its content.
# Gives up (1) after SECS, when the VM is gone, or when the guest part of
# the current case (CASE) has ended without the signal.
hawait() {
	local end=$((SECONDS + $2))
	while [ ! -f "$SYNC_DIR/$1" ]; do
		[ "$SECONDS" -lt "$end" ] || return 1
		vm_alive || return 1
		if [ -n "${CASE:-}" ] && [ "$1" != "$CASE.done" ] && [ -f "$SYNC_DIR/$CASE.done" ]; then
			return 1
		fi
		sleep 0.2
	done
	cat "$SYNC_DIR/$1"
}

# count PATTERN FILE: lines matching (grep -E)
hcount() {
	grep -cE "$1" "$2" 2>/dev/null || true
}

# mpa_check PCAP REQ_C REP_C [PRIVDATA]: the capture has an MPA Request
# with C = REQ_C and a Reply with C = REP_C (neither with M or R), FPDUs
# after them, and, framed by tests/progs/mpa_frame (its own reassembly of
# each TCP direction and its own CRC32C): every octet in an MPA frame, no
# ULPDU shorter than a DDP header, no retransmission that differs, and,
# when CRCs were negotiated (either C set), every CRC good; with PRIVDATA,
# both frames carry that private data (hex).  tshark decodes the Request
# and Reply and is a second opinion on the FPDUs: its dissector warnings
# fail the check when its framing agrees with mpa_frame's, and are written
# down but not counted when it does not (tshark frames FPDUs segment by
# segment and has lost a boundary on a clean stream).  When tcpdump missed
# segments, framing stops at the first gap of a direction and the rest is
# not counted.  Writes OUT/<pcap name>.mpa.txt.  Returns 0, or 1 with
# MPA_WHY set.
# leftover_reset_by_receiver PCAP MPA_FRAME_OUTPUT: every direction that
# ends in part of an FPDU ("left over N") was reset by its receiver: the
# receiving application closed its connection while the sender's octets
# were still on their way (perftest's server ends the test on its control
# connection while the last Writes are in the slirp forwarder), and TCP
# dropped the rest.  Not a framing error of the sender.
leftover_reset_by_receiver() {
	local pcap=$1 line s d sa sp da dp n
	while IFS= read -r line; do
		case $line in *" left over 0,"*) continue ;; *" left over "*) ;; *) continue ;; esac
		s=$(printf '%s\n' "$line" | sed -n 's/^ *\([0-9.]*:[0-9]*\) -> .*/\1/p')
		d=$(printf '%s\n' "$line" | sed -n 's/^ *[0-9.]*:[0-9]* -> \([0-9.]*:[0-9]*\):.*/\1/p')
		[ -n "$s" ] && [ -n "$d" ] || return 1
		sa=${s%:*} sp=${s##*:} da=${d%:*} dp=${d##*:}
		n=$(tshark -n -r "$pcap" -Y "tcp.flags.reset == 1 && ip.src == $da && tcp.srcport == $dp && ip.dst == $sa && tcp.dstport == $sp" \
			2>/dev/null | grep -c . || true)
		[ "${n:-0}" -gt 0 ] || return 1
	done <<-LEFTOVER_EOF
		$2
	LEFTOVER_EOF
	return 0
}

mpa_check() {
	local pcap=$1 want_req=$2 want_rep=$3 want_pd=${4-} txt f nreq nrep nfpdu req rep
	local good bad badlen crc_on lost malformed nmal uncovered own sum v k tgood tbad tbadlen tuncovered agree
	txt=$OUT/$(basename "$pcap" .pcap).mpa.txt
	MPA_WHY=
	if [ ! -s "$pcap" ]; then
		MPA_WHY="no capture $(basename "$pcap")"
		return 1
	fi
	own=$("$UIW_TESTBIN/mpa_frame" "$pcap" 2>&1) || true
	sum=$(printf '%s\n' "$own" | sed -n 's/^mpa_frame: //p' | tail -n 1)
	if [ -z "$sum" ]; then
		MPA_WHY="mpa_frame could not read the capture: $(printf '%s\n' "$own" | tail -n 1)"
		return 1
	fi
	# mpa_frame's key=value summary: fpdus crc_good crc_bad short leftover ...
	mf() { printf '%s\n' "$sum" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
	f=$(tshark -n -r "$pcap" -o tcp.try_heuristic_first:TRUE --disable-heuristic rpcrdma_iwarp -Y iwarp_mpa -T fields \
		-E separator=/t -e frame.number -e iwarp_mpa.key.req -e iwarp_mpa.key.rep \
		-e iwarp_mpa.crc_flag -e iwarp_mpa.marker_flag -e iwarp_mpa.rej_flag \
		-e iwarp_mpa.rev -e iwarp_mpa.privatedata -e iwarp_mpa.ulpdulength 2>/dev/null) || true
	req=$(printf '%s\n' "$f" | awk -F'\t' '$2 != "" {print "crc=" $4 " markers=" $5 " reject=" $6 " rev=" $7 " pd=" $8; exit}')
	rep=$(printf '%s\n' "$f" | awk -F'\t' '$3 != "" {print "crc=" $4 " markers=" $5 " reject=" $6 " rev=" $7 " pd=" $8; exit}')
	nreq=$(printf '%s\n' "$f" | awk -F'\t' '$2 != ""' | grep -c . || true)
	nrep=$(printf '%s\n' "$f" | awk -F'\t' '$3 != ""' | grep -c . || true)
	nfpdu=$(mf fpdus)
	good=$(mf crc_good)
	bad=$(mf crc_bad)
	badlen=$(mf short)
	uncovered=
	for k in leftover nonmpa differ markers; do
		v=$(mf $k)
		if [ "$k" = leftover ] && [ "${v:-0}" != 0 ] && leftover_reset_by_receiver "$pcap" "$own"; then
			continue # the rest of an FPDU that the receiver's reset cut off
		fi
		[ "${v:-0}" = 0 ] || uncovered="$uncovered$k=$v "
	done
	lost=$(mf gaps)
	# tshark's own view of the same FPDUs
	f=$(tshark -n -r "$pcap" -o tcp.try_heuristic_first:TRUE --disable-heuristic rpcrdma_iwarp -O iwarp_mpa 2>/dev/null) || true
	tgood=$(printf '%s\n' "$f" | grep -c 'Good CRC32' || true)
	tbad=$(printf '%s\n' "$f" | grep -c 'Bad CRC32' || true)
	tbadlen=$(tshark -n -r "$pcap" -o tcp.try_heuristic_first:TRUE --disable-heuristic rpcrdma_iwarp -Y iwarp_mpa.bad_length 2>/dev/null | grep -c . || true)
	# malformed frames and warnings/errors of tshark's dissectors (the
	# expert statistics: per-frame expert fields are not filterable here),
	# less the two warnings tshark 4.0 raises on every revision-2 Request
	# (it knows only RFC 5044: the 0x10 bit and Rev 2) and TCP's own
	malformed=$(tshark -n -r "$pcap" -o tcp.try_heuristic_first:TRUE --disable-heuristic rpcrdma_iwarp \
		-q -z expert,warn 2>/dev/null | awk '$1 ~ /^[0-9]+$/ && $3 != "TCP"' |
		grep -vE 'IWARP_MPA +(Res field is NOT set to zero|Rev field is NOT set to one)') || true
	nmal=$(printf '%s\n' "$malformed" | awk '$1 ~ /^[0-9]+$/ {n += $1} END {print n + 0}')
	# TCP payload octets (retransmissions aside) that tshark did not put in
	# an MPA frame: a Request/Reply (20 + PD_Length) or an FPDU (2 + ULPDU
	# Length + pad + CRC)
	tuncovered=$(tshark -n -r "$pcap" -o tcp.try_heuristic_first:TRUE --disable-heuristic rpcrdma_iwarp \
		-T fields -E separator=/t -E occurrence=a -E aggregator=, -e ip.src -e tcp.srcport -e tcp.len \
		-e tcp.analysis.retransmission -e iwarp_mpa.ulpdulength -e iwarp_mpa.pdlength \
		-e iwarp_mpa.key.req -e iwarp_mpa.key.rep 2>/dev/null |
		awk -F'\t' '{ d = $1 ":" $2; if ($4 == "") tcp[d] += $3
			if ($7 != "" || $8 != "") { n = split($6, a, ","); for (i = 1; i <= n; i++) mpa[d] += 20 + a[i] }
			if ($5 != "") { n = split($5, a, ","); for (i = 1; i <= n; i++) { u = a[i] + 0; mpa[d] += 2 + u + (4 - (2 + u) % 4) % 4 + 4 } } }
			END { for (d in tcp) if (tcp[d] != mpa[d] + 0) printf "%s sent %d TCP payload octets, %d in MPA frames; ", d, tcp[d], mpa[d] }') || true
	agree=1
	if [ "${lost:-0}" = 0 ] && [ -z "$uncovered" ] && [ "$bad" = 0 ] && [ "$badlen" = 0 ]; then
		[ -z "$tuncovered" ] && [ "$tbad" = 0 ] && [ "$tbadlen" = 0 ] || agree=0
	fi
	{
		echo "request ($nreq): $req"
		echo "reply ($nrep): $rep"
		echo "mpa_frame (own framing of the reassembled streams):"
		printf '%s\n' "$own" | sed 's/^/  /'
		echo "FPDUs: $nfpdu"
		echo "CRC checks: good $good, bad $bad"
		echo "ULPDUs shorter than a DDP header: $badlen"
		echo "octets missing from the capture: ${lost:-0}"
		echo "octets outside MPA frames: ${uncovered:-none}"
		echo "tshark: CRC good $tgood, bad $tbad; bad lengths $tbadlen; octets outside its frames: ${tuncovered:-none}"
		echo "malformed frames or iWARP dissector warnings: $nmal"
		[ "$nmal" = 0 ] || printf '%s\n' "$malformed" | head -n 20
		[ "$agree" = 1 ] || echo "(tshark framed differently from a clean stream: its warnings are not counted)"
	} >"$txt"
	if [ "${lost:-0}" != 0 ] || [ "$agree" = 0 ]; then
		[ "${lost:-0}" = 0 ] || echo "(with segments missing, tshark's warnings are not counted)" >>"$txt"
		nmal=0
	fi
	crc_on=0
	[ "$want_req" = 1 ] || [ "$want_rep" = 1 ] && crc_on=1
	case "$req" in
	"") MPA_WHY="no MPA Request in the capture" ;;
	*"markers=1"* | *"reject=1"*) MPA_WHY="MPA Request with M or R: $req" ;;
	"crc=$want_req "*) ;;
	*) MPA_WHY="MPA Request $req, expected crc=$want_req" ;;
	esac
	[ -n "$MPA_WHY" ] && return 1
	case "$rep" in
	"") MPA_WHY="no MPA Reply in the capture" ;;
	*"markers=1"* | *"reject=1"*) MPA_WHY="MPA Reply with M or R: $rep" ;;
	"crc=$want_rep "*) ;;
	*) MPA_WHY="MPA Reply $rep, expected crc=$want_rep" ;;
	esac
	[ -n "$MPA_WHY" ] && return 1
	if [ -n "$want_pd" ]; then
		case "$req" in *" pd=$want_pd") ;; *) MPA_WHY="MPA Request private data: $req, expected $want_pd" ;; esac
		case "$rep" in *" pd=$want_pd") ;; *) MPA_WHY="MPA Reply private data: $rep, expected $want_pd" ;; esac
		[ -n "$MPA_WHY" ] && return 1
	fi
	if [ "${nfpdu:-0}" = 0 ]; then
		MPA_WHY="no FPDU after the MPA handshake"
	elif [ "$badlen" != 0 ]; then
		MPA_WHY="$badlen FPDUs with a ULPDU shorter than a DDP header"
	elif [ -n "$uncovered" ]; then
		MPA_WHY="octets outside MPA frames: $uncovered(see $(basename "$txt"))"
	elif [ "$nmal" != 0 ]; then
		MPA_WHY="$nmal malformed frames or iWARP dissector warnings (see $(basename "$txt"))"
	elif [ "$bad" != 0 ]; then
		MPA_WHY="$bad FPDUs with a bad CRC32C"
	elif [ "$crc_on" = 1 ] && [ "$good" = 0 ]; then
		MPA_WHY="CRCs negotiated but no CRC checked good"
	elif [ "$crc_on" = 0 ] && [ "$good" != 0 ]; then
		MPA_WHY="CRCs not negotiated but $good CRCs checked"
	fi
	[ -z "$MPA_WHY" ]
}

# rpcordma_check PCAP: tshark's RPC-over-RDMA dissector (rpcordma, over
# iwarp_ddp_rdmap) over a capture of NFS traffic: RPC-over-RDMA headers
# decoded, RDMA_MSG and RDMA_NOMSG both seen, an NFSv3 call of each
# procedure in RPCORDMA_PROCS (e.g. "1 6 17 19") decoded on top, no
# warning or error of the rpcordma dissector, and no malformed frame but
# one kind: a reply whose data went by a Write chunk (an NFS READ: tshark
# 4.0 looks for the data inline and raises an exception; the Linux NFS
# client to server reference capture has 7 such, and passes).  Writes
# OUT/<pcap>.rpcordma.txt.  Returns 0, or 1 with RPCORDMA_WHY set.
rpcordma_check() {
	local pcap=$1 txt f n types procs p mal badmal warn
	txt=$OUT/$(basename "$pcap" .pcap).rpcordma.txt
	RPCORDMA_WHY=
	if [ ! -s "$pcap" ]; then
		RPCORDMA_WHY="no capture $(basename "$pcap")"
		return 1
	fi
	f=$(tshark -n -r "$pcap" -o tcp.try_heuristic_first:TRUE -Y rpcordma -T fields -E separator=/t \
		-E occurrence=a -E aggregator=, -e frame.number -e rpcordma.msg_type -e rpc.msgtyp \
		-e nfs.procedure_v3 -e rpcordma.writes_count -e rpcordma.reply_count 2>/dev/null) || true
	n=$(printf '%s\n' "$f" | grep -c . || true)
	types=$(printf '%s\n' "$f" | awk -F'\t' '{split($2, a, ","); for (i in a) t[a[i]]++} END {for (k in t) printf "%s:%d ", k, t[k]}')
	procs=$(printf '%s\n' "$f" | awk -F'\t' '{split($3, m, ","); split($4, p, ","); for (i in m) if (m[i] == 0 && p[i] != "") c[p[i]]++}
		END {for (k in c) printf "%s:%d ", k, c[k]}')
	# malformed frames: which are READ (6) replies with a Write chunk
	mal=$(tshark -n -r "$pcap" -o tcp.try_heuristic_first:TRUE -Y _ws.malformed -T fields -E separator=/t \
		-E occurrence=a -E aggregator=, -e frame.number -e rpc.msgtyp -e nfs.procedure_v3 \
		-e rpcordma.writes_count 2>/dev/null) || true
	badmal=$(printf '%s\n' "$mal" | awk -F'\t' 'NF && !($2 ~ /1/ && $4 ~ /[1-9]/) {print $1}' | tr '\n' ' ')
	warn=$(tshark -n -r "$pcap" -o tcp.try_heuristic_first:TRUE -q -z expert,note 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ && ($3 == "RPCoRDMA" || $3 == "IWARP_DDP_RDMAP")') || true
	{
		echo "frames with an RPC-over-RDMA header: $n"
		echo "message types (0 RDMA_MSG, 1 RDMA_NOMSG, 4 RDMA_ERROR): $types"
		echo "NFSv3 calls decoded by procedure: $procs"
		echo "malformed frames: $(printf '%s\n' "$mal" | grep -c . || true) (replies with a Write chunk excepted: ${badmal:-none left})"
		echo "rpcordma/DDP expert notes or worse: ${warn:-none}"
	} >"$txt"
	if [ "$n" = 0 ]; then
		RPCORDMA_WHY="tshark decoded no RPC-over-RDMA header"
	elif ! printf '%s' "$types" | grep -q '\(^\| \)0:'; then
		RPCORDMA_WHY="no RDMA_MSG decoded ($types)"
	elif ! printf '%s' "$types" | grep -q '\(^\| \)1:'; then
		RPCORDMA_WHY="no RDMA_NOMSG decoded ($types)"
	elif [ -n "$badmal" ]; then
		RPCORDMA_WHY="malformed frames: $badmal"
	elif [ -n "$warn" ]; then
		RPCORDMA_WHY="rpcordma/DDP dissector expert info: $(printf '%s' "$warn" | tr '\n' ' ')"
	fi
	for p in ${RPCORDMA_PROCS:-}; do
		[ -z "$RPCORDMA_WHY" ] || break
		printf '%s' "$procs" | grep -q "\(^\| \)$p:" || RPCORDMA_WHY="no NFSv3 procedure $p call decoded ($procs)"
	done
	[ -z "$RPCORDMA_WHY" ]
}

# host_end WHY: tell the guest the host side is done ($CASE.hostdone) and
# record PASS (WHY empty) or FAIL: WHY
host_end() {
	hsig "$CASE.hostdone" 0
	if [ -z "$1" ]; then
		host_pass
	else
		host_fail "$1"
	fi
}

# the verdict of host_check (run after the VM powered off)
_check_result() {
	echo "$*" >"$OUT/check.result"
	hlog "check: $*"
}
check_pass() { _check_result PASS; }
check_fail() { _check_result "FAIL: $*"; }

# need_uiw_ping: needs() of the cases that run uiw-ping on the host
need_uiw_ping() {
	if [ ! -x "$UIW_BIN/uiw-ping" ]; then
		echo "no $UIW_BIN/uiw-ping (the tool is not built yet)"
		return 1
	fi
}

# need_uiw_run PROGRAM: needs() of the cases that run an unmodified
# rdma-core PROGRAM (rping, ib_write_bw, ...) on the host under uiw-run
need_uiw_run() {
	if [ ! -x "$UIW_BIN/uiw-run" ] || [ ! -f "$UIW_BIN/../libuiw-rdma.so" ]; then
		echo "no $UIW_BIN/uiw-run or libuiw-rdma.so (not built yet)"
		return 1
	fi
	if ! command -v "$1" >/dev/null 2>&1; then
		echo "no $1 on the host (make deps-test installs rdmacm-utils and perftest)"
		return 1
	fi
}

# free_port: a TCP port of 127.0.0.1 that nothing listens on now (the
# kernel picks it), for a host server that cannot be told to take port 0
# and say which it got (rping -s, perftest's server)
free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# host_server_port0 LOG SECS CMD...: start CMD (a uiwarp tool given -p 0)
# in the background (output to LOG, under timeout SECS); SERVER_PID, and
# SERVER_PORT once it printed "listening on ... port N" (empty: it did not
# within 10 s, or it ended)
host_server_port0() {
	local log=$1 secs=$2 n port=
	shift 2
	hlog "$*"
	timeout -k 10 "$secs" "$@" >"$log" 2>&1 &
	SERVER_PID=$!
	hbg "$SERVER_PID"
	for ((n = 0; n < 100; n++)); do
		port=$(sed -n 's/.*listening on .* port \([0-9][0-9]*\).*/\1/p' "$log" 2>/dev/null | head -n 1) || true
		[ -z "$port" ] || break
		kill -0 "$SERVER_PID" 2>/dev/null || break
		sleep 0.1
	done
	SERVER_PORT=$port
}

# host_server_free_port LOG SECS CMD...: start CMD -p PORT in the background
# (its output to LOG, under timeout SECS) on a port the kernel found free,
# for a server that cannot be told to take port 0 and say which (rping -s,
# perftest's); SERVER_PID, and SERVER_PORT once it listens (empty: it did
# not).  A port taken meanwhile ("in use") is tried again with another.
host_server_free_port() {
	local log=$1 secs=$2 try
	shift 2
	SERVER_PORT=
	for try in 1 2 3; do
		SERVER_PORT=$(free_port) || break
		hlog "$* -p $SERVER_PORT"
		timeout -k 10 "$secs" "$@" -p "$SERVER_PORT" >"$log" 2>&1 &
		SERVER_PID=$!
		hbg "$SERVER_PID"
		if host_wait_listen "$SERVER_PORT" "$SERVER_PID"; then
			return 0
		fi
		wait "$SERVER_PID" 2>/dev/null || true
		grep -qi 'in use' "$log" || break
	done
	SERVER_PORT=
}

# host_wait_listen PORT PID: wait (up to 10 s) until something listens on
# 127.0.0.1:PORT or 0.0.0.0:PORT; 1 when it did not, or PID ended first
host_wait_listen() {
	local n
	for ((n = 0; n < 100; n++)); do
		if ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; then
			return 0
		fi
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
