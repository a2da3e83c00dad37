# shellcheck shell=bash disable=SC2034,SC2154
# SPDX-License-Identifier: MIT
#
# peer/cell.host.sh - host part of one interop-matrix cell (CELL_SPEC, a
# line of peer/matrix.txt; see peer/cells.sh and README.md).
#
#   init=uiw: siw_peer -r server in the VM (10.0.2.15:CELL_PORT, forwarded);
#             uiw_peer -r client here through the hostfwd port
#   init=siw: uiw_peer -r server here (127.0.0.1, port chosen by the
#             kernel, passed to the guest); siw_peer -r client in the VM
#             connects to 10.0.2.2
#
# Both peers print PASS/FAIL lines; the cell passes when both sides have a
# PASS and no FAIL, and the capture checks (MPA C bits and CRCs with
# mpa_check, the TERMINATE's layer/etype/ecode) agree.
cell_parse "$CELL_SPEC"
desc="$CELL_INIT initiator -> $([ "$CELL_INIT" = uiw ] && echo siw || echo uiw) responder, $CELL_SCEN ${CELL_UARGS[*]} (siw $CELL_SIW)"
ports=""
[ "$CELL_INIT" != uiw ] || ports=$CELL_PORT

needs() {
	if [ ! -x "$PEER_DIR/uiw_peer" ] || [ ! -x "$PEER_DIR/siw_peer" ]; then
		echo "test peers not built: ${PEER_BUILD_ERROR:-see $PEER_DIR}"
		[ -z "${PEER_BUILD_FATAL:-}" ] || return 2 # our code: FAIL, not SKIP
		return 1
	fi
}

# peer_verdict LOG NAME: host_pass/host_fail from a peer's output
peer_verdict() {
	local f
	f=$(grep -m1 '^FAIL: ' "$1" 2>/dev/null) || true
	if [ -n "$f" ]; then
		host_fail "$2: ${f#FAIL: }"
	elif ! grep -q '^PASS: ' "$1" 2>/dev/null; then
		host_fail "$2: no PASS line ($(tail -n 1 "$1" 2>/dev/null))"
	else
		host_pass
	fi
}

host_run() {
	local log=$OUT/uiw_peer.log fwd=VM_FWD_$CELL_PORT rc=0 pid port n
	if [ "$CELL_INIT" = uiw ]; then
		if ! hawait "$CASE.ready" 120 >/dev/null; then
			host_fail "siw_peer in the VM never got ready"
			return
		fi
		hlog "uiw_peer -r client -a 127.0.0.1 -p ${!fwd} -S $CELL_SCEN ${CELL_UARGS[*]}"
		timeout -k 10 120 "$PEER_DIR/uiw_peer" -r client -a 127.0.0.1 -p "${!fwd}" -S "$CELL_SCEN" \
			"${CELL_UARGS[@]}" >"$log" 2>&1 || rc=$?
		hsig "$CASE.hostdone" "$rc"
	else
		timeout -k 10 120 "$PEER_DIR/uiw_peer" -r server -a 127.0.0.1 -p 0 -S "$CELL_SCEN" \
			"${CELL_UARGS[@]}" >"$log" 2>&1 &
		pid=$!
		hbg "$pid"
		port=
		for ((n = 0; n < 100; n++)); do
			port=$(sed -n 's/^peer: listening on .* port \([0-9][0-9]*\).*/\1/p' "$log" | head -n 1) || true
			[ -z "$port" ] || break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if [ -z "$port" ]; then
			hsig "$CASE.ready" 0
			host_fail "uiw_peer -r server did not listen: $(tail -n 1 "$log")"
			return
		fi
		hlog "uiw_peer -r server on port $port -S $CELL_SCEN ${CELL_UARGS[*]}"
		hsig "$CASE.ready" "$port"
		wait "$pid" || rc=$?
	fi
	hlog "uiw_peer exit $rc"
	peer_verdict "$log" uiw_peer
}

# pd_length_check: every MPA Request/Reply's PD_Length matches the octets
# that follow its header in the segment (siw 6.1 wraps PD_Length in a u8:
# 252 octets of private data + 4 of IRD/ORD are announced as 0)
pd_length_check() {
	local f
	f=$(tshark -n -r "$1" -o tcp.try_heuristic_first:TRUE --disable-heuristic rpcrdma_iwarp \
		-Y 'iwarp_mpa.key.req || iwarp_mpa.key.rep' -T fields -e ip.src -e iwarp_mpa.pdlength \
		-e tcp.len 2>/dev/null | awk -F'\t' '$2 + 20 != $3 {print $1 " announces PD_Length " $2 " but sends " $3 - 20 " octets"; exit}') || true
	[ -z "$f" ] || { PD_WHY=$f; return 1; }
}

host_check() {
	local pcap=$OUT/$CASE.pcap f
	if [ "$CELL_SCEN" = pd ] && ! pd_length_check "$pcap"; then
		check_fail "capture: $PD_WHY"
		return
	fi
	if [ "$CELL_MPA" != no ]; then
		# shellcheck disable=SC2086
		if ! mpa_check "$pcap" $CELL_MPA; then
			check_fail "capture: $MPA_WHY"
			return
		fi
	fi
	if [ -n "$CELL_REV" ]; then
		f=$(grep -cE "^(request|reply) .* rev=$CELL_REV " "$OUT/$CASE.mpa.txt" 2>/dev/null) || true
		if [ "$f" != 2 ]; then
			check_fail "capture: Request and Reply should both be MPA revision $CELL_REV: $(head -n 2 "$OUT/$CASE.mpa.txt" | tr '\n' ' ')"
			return
		fi
	fi
	if [ -n "$CELL_RTR" ]; then
		# RFC 6581: the initiator's first FPDU is a zero-length Write or Read
		# Request to STag 1 (the MPA Request/Reply's P2P bits are in the pd)
		f=$(tshark -n -r "$pcap" -o tcp.try_heuristic_first:TRUE --disable-heuristic rpcrdma_iwarp \
			-Y "iwarp_ddp_rdmap && ip.src == $([ "$CELL_INIT" = uiw ] && echo 10.0.2.2 || echo 10.0.2.15)" \
			-T fields -e iwarp_rdma.opcode -e iwarp_ddp.stag -e iwarp_rdma.srcstag 2>/dev/null | head -n 1) || true
		echo "initiator's first FPDU (opcode, DDP STag, Read source STag): $f" >"$OUT/rtr.txt"
		case $CELL_RTR:$(echo "$f" | cut -f1 | cut -d, -f1) in
		write:0x00 | read:0x01) ;;
		*)
			check_fail "capture: the initiator's first FPDU is '$f', expected a $CELL_RTR RTR"
			return
			;;
		esac
	fi
	if [ "$CELL_SCEN" = send-se ]; then
		# the initiator's data Sends: Send (3), then Send with SE (5); a
		# segment may carry several FPDUs ("0x05,0x03"): one per line
		f=$(tshark -n -r "$pcap" -o tcp.try_heuristic_first:TRUE --disable-heuristic rpcrdma_iwarp \
			-Y "iwarp_ddp_rdmap && ip.src == $([ "$CELL_INIT" = uiw ] && echo 10.0.2.2 || echo 10.0.2.15)" \
			-T fields -e iwarp_rdma.opcode 2>/dev/null | tr ',' '\n' | head -n 2 | tr '\n' ' ') || true
		echo "initiator's first RDMAP opcodes: $f" >"$OUT/opcodes.txt"
		if [ "$f" != "0x03 0x05 " ]; then
			check_fail "capture: the initiator's first opcodes are '$f', expected Send (0x03) then Send with SE (0x05)"
			return
		fi
	fi
	if [ -n "$CELL_TERM" ]; then
		f=$(tshark -n -r "$pcap" -o tcp.try_heuristic_first:TRUE --disable-heuristic rpcrdma_iwarp \
			-Y iwarp_rdma.terminate -T fields -e ip.src -e iwarp_rdma.term_layer \
			-e iwarp_rdma.term_etype_rdma -e iwarp_rdma.term_etype_ddp -e iwarp_rdma.term_etype_llp \
			-e iwarp_rdma.term_errcode_rdma -e iwarp_rdma.term_errcode_ddp_tagged \
			-e iwarp_rdma.term_errcode_ddp_untagged -e iwarp_rdma.term_errcode_llp \
			-e iwarp_rdma.term_etype -e iwarp_rdma.term_errcode 2>/dev/null |
			awk -F'\t' 'NR == 1 {e = $3 $4 $5 $10; c = $6 $7 $8 $9 $11; print $1 "\t" $2 "\t" e "\t" c}') || true
		echo "TERMINATE (src layer etype ecode, as tshark reads it in RFC 5040 order): ${f:-none}" >"$OUT/terminate.txt"
		if [ -z "$f" ]; then
			check_fail "capture: no TERMINATE"
			return
		fi
		read -r src l e c <<<"$f"
		if [ "$src" = 10.0.2.15 ]; then
			# siw 6.1 builds the Terminate control from little-endian
			# bitfields: Layer in the low nibble, EType in the high one
			# (the project's notes on siw and its peers); read it as siw meant it
			read -r l e <<<"$e $l"
			echo "from siw: layer/etype/ecode as siw meant them (nibbles swapped): $((l))/$((e))/$((c))" >>"$OUT/terminate.txt"
		fi
		# the responder (the Write's target) must be the one to TERMINATE
		if [ "$src" != "$([ "$CELL_INIT" = uiw ] && echo 10.0.2.15 || echo 10.0.2.2)" ]; then
			check_fail "capture: the TERMINATE came from $src, the initiator"
			return
		fi
		if ! printf '%s\n' "${CELL_TERM//,/ }" | tr ' ' '\n' | grep -qx "$((l))/$((e))/$((c))"; then
			check_fail "capture: TERMINATE $((l))/$((e))/$((c)) from $(echo "$f" | cut -f1), expected ${CELL_TERM}"
			return
		fi
	fi
	check_pass
}
