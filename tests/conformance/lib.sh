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
# after them, no FPDU with a bad length, and, when CRCs were negotiated
# (either C set), CRCs that tshark checks as good and none bad; with
# PRIVDATA, both frames carry that private data (hex).  When tcpdump
# missed segments (tshark's tcp.analysis.lost_segment), bad CRCs and
# lengths are not counted: tshark misframes FPDUs after a gap.  Writes
# OUT/<pcap name>.mpa.txt.  Returns 0, or 1 with MPA_WHY set.
mpa_check() {
	local pcap=$1 want_req=$2 want_rep=$3 want_pd=${4-} txt f nreq nrep nfpdu req rep
	local good bad badlen crc_on lost malformed nmal uncovered
	txt=$OUT/$(basename "$pcap" .pcap).mpa.txt
	MPA_WHY=
	if [ ! -s "$pcap" ]; then
		MPA_WHY="no capture $(basename "$pcap")"
		return 1
	fi
	f=$(tshark -n -r "$pcap" -o tcp.try_heuristic_first:TRUE --disable-heuristic rpcrdma_iwarp -Y iwarp_mpa -T fields \
		-E separator=/t -e frame.number -e iwarp_mpa.key.req -e iwarp_mpa.key.rep \
		-e iwarp_mpa.crc_flag -e iwarp_mpa.marker_flag -e iwarp_mpa.rej_flag \
		-e iwarp_mpa.rev -e iwarp_mpa.privatedata -e iwarp_mpa.ulpdulength 2>/dev/null) || true
	req=$(printf '%s\n' "$f" | awk -F'\t' '$2 != "" {print "crc=" $4 " markers=" $5 " reject=" $6 " rev=" $7 " pd=" $8; exit}')
	rep=$(printf '%s\n' "$f" | awk -F'\t' '$3 != "" {print "crc=" $4 " markers=" $5 " reject=" $6 " rev=" $7 " pd=" $8; exit}')
	nreq=$(printf '%s\n' "$f" | awk -F'\t' '$2 != ""' | grep -c . || true)
	nrep=$(printf '%s\n' "$f" | awk -F'\t' '$3 != ""' | grep -c . || true)
	nfpdu=$(printf '%s\n' "$f" | awk -F'\t' '$9 != ""' | grep -c . || true)
	f=$(tshark -n -r "$pcap" -o tcp.try_heuristic_first:TRUE --disable-heuristic rpcrdma_iwarp -O iwarp_mpa 2>/dev/null) || true
	good=$(printf '%s\n' "$f" | grep -c 'Good CRC32' || true)
	bad=$(printf '%s\n' "$f" | grep -c 'Bad CRC32' || true)
	badlen=$(tshark -n -r "$pcap" -o tcp.try_heuristic_first:TRUE --disable-heuristic rpcrdma_iwarp -Y iwarp_mpa.bad_length 2>/dev/null | grep -c . || true)
	# segments missing from the capture (tcpdump drops under emulation) make
	# tshark misframe the FPDUs after them: bad CRCs and lengths then are
	# artefacts, not traffic
	lost=$(tshark -n -r "$pcap" -Y tcp.analysis.lost_segment 2>/dev/null | grep -c . || true)
	# malformed frames and warnings/errors of tshark's dissectors (the
	# expert statistics: per-frame expert fields are not filterable here),
	# less the two warnings tshark 4.0 raises on every revision-2 Request
	# (it knows only RFC 5044: the 0x10 bit and Rev 2) and TCP's own
	malformed=$(tshark -n -r "$pcap" -o tcp.try_heuristic_first:TRUE --disable-heuristic rpcrdma_iwarp \
		-q -z expert,warn 2>/dev/null | awk '$1 ~ /^[0-9]+$/ && $3 != "TCP"' |
		grep -vE 'IWARP_MPA +(Res field is NOT set to zero|Rev field is NOT set to one)') || true
	nmal=$(printf '%s\n' "$malformed" | awk '$1 ~ /^[0-9]+$/ {n += $1} END {print n + 0}')
	# every TCP payload octet (retransmissions aside) belongs to a decoded
	# MPA frame: a Request/Reply (20 + PD_Length) or an FPDU (2 + ULPDU
	# Length + pad + CRC); an FPDU tshark cannot frame leaves octets over
	uncovered=$(tshark -n -r "$pcap" -o tcp.try_heuristic_first:TRUE --disable-heuristic rpcrdma_iwarp \
		-T fields -E separator=/t -E occurrence=a -E aggregator=, -e ip.src -e tcp.srcport -e tcp.len \
		-e tcp.analysis.retransmission -e iwarp_mpa.ulpdulength -e iwarp_mpa.pdlength \
		-e iwarp_mpa.key.req -e iwarp_mpa.key.rep 2>/dev/null |
		awk -F'\t' '{ d = $1 ":" $2; if ($4 == "") tcp[d] += $3
			if ($7 != "" || $8 != "") { n = split($6, a, ","); for (i = 1; i <= n; i++) mpa[d] += 20 + a[i] }
			if ($5 != "") { n = split($5, a, ","); for (i = 1; i <= n; i++) { u = a[i] + 0; mpa[d] += 2 + u + (4 - (2 + u) % 4) % 4 + 4 } } }
			END { for (d in tcp) if (tcp[d] != mpa[d] + 0) printf "%s sent %d TCP payload octets, %d in MPA frames; ", d, tcp[d], mpa[d] }') || true
	{
		echo "request ($nreq): $req"
		echo "reply ($nrep): $rep"
		echo "frames with FPDUs: $nfpdu"
		echo "CRC checks: good $good, bad $bad"
		echo "frames with a bad MPA length: $badlen"
		echo "segments missing from the capture: $lost"
		echo "malformed frames or iWARP dissector warnings: $nmal"
		echo "octets outside MPA frames: ${uncovered:-none}"
		[ "$nmal" = 0 ] || printf '%s\n' "$malformed" | head -n 20
	} >"$txt"
	if [ "$lost" != 0 ]; then
		echo "(with segments missing, bad CRCs and lengths are not counted)" >>"$txt"
		bad=0
		badlen=0
		nmal=0
		uncovered=
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
	if [ "$nfpdu" = 0 ]; then
		MPA_WHY="no FPDU after the MPA handshake"
	elif [ "$badlen" != 0 ]; then
		MPA_WHY="$badlen frames with a bad MPA length"
	elif [ -n "$uncovered" ]; then
		MPA_WHY="octets outside MPA frames: $uncovered"
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
